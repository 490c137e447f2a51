/* fuzz_jpeg.c - libFuzzer target: JPEG via libjpeg-turbo, behind tessera's guards: the full
 * decode (tsio_load_memory) and the viewer's reduced-size decode (tsio_jpeg_decode_reduced), with
 * a window size taken from the input's length so that every scale (1/1 to 1/8) is reached. */
#include "codec.h"

#define FUZZ_PREFIX "\xFF\xD8"
#define FUZZ_EXTRA fuzz_reduced
#include "fuzz_format.h"

static void fuzz_reduced(const unsigned char *buf, size_t n)
{
    static const int box[4][2] = {{4096, 4096}, {640, 480}, {160, 120}, {8, 8}};
    const int *b = box[n % 4];
    tsio_meta meta;
    memset(&meta, 0, sizeof meta);
    tsio_reduced info = {0, 0, 0};
    ts_image im;
    char err[256];
    ts_status st = tsio_jpeg_decode_reduced(buf, n, (uint64_t)4096 * 4096, b[0], b[1], &meta,
                                            &info, &im, err, sizeof err);
    if (st == TS_OK && info.denom != 1 && info.denom != 2 && info.denom != 4 && info.denom != 8)
        abort();
    fuzz_check(st, &im, err);
    tsio_meta_free(&meta);
}
