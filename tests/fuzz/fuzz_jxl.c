/* fuzz_jxl.c - libFuzzer target: the JPEG XL decoder (app/codec/codec_jxl.c, libjxl) on any bytes, with metadata kept, as the loader calls
 * it. libheif and libjxl are not instrumented: the target checks tessera's use of them (the
 * pixel limit before decoding, the copy of the decoded rows, the EXIF and ICC boxes). */
#include "photo_io.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tsio_meta meta = {0};
    ts_image im;
    char err[256] = "", notice[256] = "";
    uint64_t limit = (uint64_t)2048 * 2048; /* a tighter limit keeps each run fast */
    ts_status st = tsio_jxl_decode(data, size, limit, &meta, &im, notice, sizeof notice, err, sizeof err);
    if (st == TS_OK) {
        /* touch every row: an image claimed must be an image delivered */
        volatile unsigned sum = 0;
        for (int y = 0; y < im.height; y++)
            sum += ((const unsigned char *)im.data)[(size_t)y * im.pitch + ts_row_bytes(&im) - 1];
        ts_image_free(&im);
    } else if (!err[0] || strchr(err, '\n')) {
        abort(); /* a refusal has a one-line reason */
    }
    (void)notice;
    tsio_meta_free(&meta);
    return 0;
}
