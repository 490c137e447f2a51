/* mkimage.c - writes a test fixture: mkimage W H CHANNELS BITS SEED FILE [PATTERN]
 * PATTERN: random (default), band (values 100..119: low contrast), const (all 77). */
#include "image_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: mkimage W H CHANNELS BITS SEED FILE [random|band|const]\n");
        return 2;
    }
    int w = atoi(argv[1]), h = atoi(argv[2]), ch = atoi(argv[3]), bytes = atoi(argv[4]) / 8;
    uint64_t s = strtoull(argv[5], NULL, 10);
    const char *pat = argc > 7 ? argv[7] : "random";
    ts_image im;
    if (ts_image_alloc(&im, w, h, ch, bytes) != TS_OK) {
        fprintf(stderr, "mkimage: %s\n", ts_error_detail());
        return 1;
    }
    unsigned maxv = (unsigned)ts_max_value(bytes);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < ch; c++) {
                unsigned v = strcmp(pat, "band") == 0    ? 100 + (unsigned)(next(&s) % 20)
                             : strcmp(pat, "const") == 0 ? 77
                                                         : (unsigned)(next(&s) % (maxv + 1));
                ts_put(&im, x, y, c, v);
            }
    tsio_save_opts o = {.quality = 95};
    char notice[256], err[256];
    if (tsio_save(argv[6], &im, &o, notice, sizeof notice, err, sizeof err) != TS_OK) {
        fprintf(stderr, "mkimage: %s: %s\n", argv[6], err);
        return 1;
    }
    ts_image_free(&im);
    return 0;
}
