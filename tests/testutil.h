/* testutil.h - what the unit and GPU tests share: fresh random images (the seed is printed on a
 * failure so it can be replayed with TESSERA_SEED), comparisons that say where images differ,
 * and runs of one variant on the GPU with a poisoned output. */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include "tessera.h"
#include "tst.h"

#include <stdint.h>

/* The odd sizes every GPU test covers (w, h); the last rows are large. */
extern const int tu_odd_sizes[][2];
extern const int tu_n_small_sizes;     /* without the large ones (the first entries) */
/* All of them, or only the small ones when TESSERA_SMALL_ONLY=1 (compute-sanitizer runs). */
int tu_odd_size_count(void);
#define tu_n_odd_sizes (tu_odd_size_count())

/* Whether the GPU tests run variant `name`: all of them, or those TESSERA_TEST_VARIANTS lists
 * (comma-separated, e.g. "pipe,mma": one compute-sanitizer process per variant). */
int tu_variant_selected(const char *name);

/* A fresh seed per process (TESSERA_SEED=N replays one); printed once. */
uint64_t tu_seed(void);
uint64_t tu_rand(uint64_t *state); /* splitmix64 */
/* Host image of random samples (uniform over the depth's range). Aborts the process on OOM. */
ts_image tu_random_image(int w, int h, int channels, int bytes, uint64_t *state);
/* Host image whose samples lie in [lo, hi] (skewed data for histograms). */
ts_image tu_band_image(int w, int h, int channels, int bytes, unsigned lo, unsigned hi,
                       uint64_t *state);
/* Largest |a - b| over all samples; -1 if the shapes differ. Where it occurs in *x, *y, *c. */
long tu_max_diff(const ts_image *a, const ts_image *b, int *x, int *y, int *c);

/* The independent PNG oracle (tests/stb_png.c, a private stb_image): the pixels of a PNG in
 * memory, rows packed, 8-bit or (sixteen) 16-bit samples, NULL and *why on failure. */
void *tu_stb_png(const void *png, size_t len, int sixteen, int *w, int *h, int *channels,
                 const char **why);
void tu_stb_free(void *pixels);

/* GPU: the device if one is usable, else NULL. With TESSERA_REQUIRE_GPU=1 a missing GPU fails the
 * test instead of skipping it. */
const ts_device *tu_gpu(void);
#define TU_GPU_OR_SKIP(dev)                                                                        \
    const ts_device *dev = tu_gpu();                                                               \
    do {                                                                                           \
        if (!dev) {                                                                                \
            CHECKF(!getenv("TESSERA_REQUIRE_GPU"), "TESSERA_REQUIRE_GPU set but no usable GPU: %s", \
                   ts_error_detail());                                                             \
            SKIP("no usable GPU");                                                                 \
        }                                                                                          \
    } while (0)

/* Runs `op` with GPU variant `v` on a host image: upload, poison the output (0xA5 bytes),
 * run, download into a new host image `out`. `param` goes to job.param. */
ts_status tu_gpu_run(const ts_variant *v, const ts_op *op, const ts_image *in, ts_image *out,
                     int param);
/* The same for a histogram op (op->kind == TS_OP_HIST); hist has ts_hist_count*bins entries,
 * poisoned before the run. */
ts_status tu_gpu_hist(const ts_variant *v, const ts_op *op, const ts_image *in, uint32_t *hist,
                      int param);
/* Finishes a job whose images (and histogram) are set: allocates its scratch poisoned with 0x5A
 * bytes (freed by the caller), refuses it if the variant's `supports` says no, then runs it. */
ts_status tu_job_run(const ts_variant *v, ts_job *job);
/* A parsed op (aborts on a parse error: tests pass literal, valid text). */
ts_op tu_op(const char *text);
/* Whether /usr/bin/python3 can import cv2 (an independent decoder for the codec tests); asked
 * once per process. */
int tu_have_cv2(void);

/* A minimal ICC profile (512 bytes at p) whose description tag, v2 "desc" or v4 "mluc", reads
 * `desc`; its length. */
size_t tu_make_icc(unsigned char *p, const char *desc, int v4);

#endif
