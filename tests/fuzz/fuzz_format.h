/* fuzz_format.h - the body of the per-format libFuzzer targets: the input, after a fixed
 * signature for the format so that every run reaches that decoder, goes through tessera's loader
 * (guards, pixel limit, decoder). FUZZ_PREFIX is the signature ("" for TGA, which has none);
 * FUZZ_EXTRA, when defined, names a function defined after this header that also gets the
 * same bytes (another entry point of that decoder; fuzz_check judges its outcome too). */
#include "image_io.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A decoder's outcome: an image claimed must be delivered (every row touched), a refusal must
 * have a one-line reason. */
static void fuzz_check(ts_status st, ts_image *im, const char *err)
{
    if (st == TS_OK) {
        volatile unsigned sum = 0;
        for (int y = 0; y < im->height; y++)
            sum += ((const unsigned char *)im->data)[(size_t)y * im->pitch + ts_row_bytes(im) - 1];
        (void)sum;
        ts_image_free(im);
    } else if (!err[0] || strchr(err, '\n')) {
        abort();
    }
}

#ifdef FUZZ_EXTRA
static void FUZZ_EXTRA(const unsigned char *buf, size_t n);
#endif

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
    fuzz_check(tsio_load_memory(buf, n, &o, &im, err, sizeof err), &im, err);
#ifdef FUZZ_EXTRA
    FUZZ_EXTRA(buf, n);
#endif
    free(buf);
    return 0;
}
