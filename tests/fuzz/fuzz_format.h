/* fuzz_format.h - the body of the per-format libFuzzer targets: the input, after a fixed
 * signature for the format so that every run reaches that decoder, goes through tessera's loader
 * (guards, pixel limit, decoder). FUZZ_PREFIX is the signature ("" for TGA, which has none);
 * FUZZ_EXTRA, when defined, names a function that also gets the same bytes (another entry point
 * of that decoder). */
#include "image_io.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char prefix[] = FUZZ_PREFIX;
    size_t np = sizeof prefix - 1, n = size;
    /* inputs that already start with the signature (the seeds) are taken as they are */
    int has = size >= np && memcmp(data, prefix, np) == 0;
    unsigned char *buf = malloc(size + np + 1);
    if (!buf)
        return 0;
    if (!has) {
        memcpy(buf, prefix, np);
        n += np;
    }
    memcpy(buf + (has ? 0 : np), data, size);
    tsio_load_opts o = {.max_pixels = (uint64_t)4096 * 4096}; /* a tighter limit keeps runs fast */
    ts_image im;
    char err[256];
    if (tsio_load_memory(buf, n, &o, &im, err, sizeof err) == TS_OK) {
        volatile unsigned sum = 0; /* touch every row: an image claimed must be delivered */
        for (int y = 0; y < im.height; y++)
            sum += ((const unsigned char *)im.data)[(size_t)y * im.pitch + ts_row_bytes(&im) - 1];
        ts_image_free(&im);
    } else if (!err[0] || strchr(err, '\n')) {
        abort(); /* every refusal has a one-line reason */
    }
#ifdef FUZZ_EXTRA
    FUZZ_EXTRA(buf, n);
#endif
    free(buf);
    return 0;
}
