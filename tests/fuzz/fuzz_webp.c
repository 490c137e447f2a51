/* fuzz_webp.c - libFuzzer target: the WEBP decoder (app/codec/codec_webp.c) on any bytes, with
 * metadata kept, as the loader calls it. */
#include "photo_io.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tsio_meta meta = {0};
    ts_image im;
    char err[256], notice[256] = "";
    uint64_t limit = (uint64_t)4096 * 4096; /* a tighter limit keeps each run fast */
    ts_status st =
        tsio_webp_decode(data, size, limit, &meta, &im, notice, sizeof notice, err, sizeof err);
    if (st == TS_OK) {
        /* touch every row: an image claimed must be an image delivered */
        volatile unsigned sum = 0;
        for (int y = 0; y < im.height; y++)
            sum += ((const unsigned char *)im.data)[(size_t)y * im.pitch + ts_row_bytes(&im) - 1];
        ts_image_free(&im);
    }
    (void)notice;
    tsio_meta_free(&meta);
    return 0;
}
