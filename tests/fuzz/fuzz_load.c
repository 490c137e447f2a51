/* fuzz_load.c - libFuzzer target: the image-loading path as tessera calls it (its pixel limit and
 * decoder guards included). Built by `make fuzz` with clang -fsanitize=fuzzer,address,undefined. */
#include "image_io.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tsio_load_opts o = {.max_pixels = (uint64_t)4096 * 4096}; /* a tighter limit keeps runs fast */
    ts_image im;
    char err[256];
    if (tsio_load_memory(data, size, &o, &im, err, sizeof err) == TS_OK) {
        /* touch every row: an image claimed must be an image delivered */
        volatile unsigned sum = 0;
        for (int y = 0; y < im.height; y++)
            sum += ((const unsigned char *)im.data)[(size_t)y * im.pitch + ts_row_bytes(&im) - 1];
        ts_image_free(&im);
    }
    return 0;
}
