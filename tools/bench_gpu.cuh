/* bench_gpu.cuh - the benchmark's CUDA-side interfaces (tools/bench*.cu only):
 *   - bench_gpu.cu: the timing harness (L2 flush by reading 3x L2 before each timed run, CUDA
 *     events, median), the D2D copy floor, random inputs made on the device, device compares;
 *   - bench_check.cu: the once-per-op/format check of a variant against the CPU reference;
 *   - bench_vendor.cu: cuDNN, CUB and NPP baselines as extra rows;
 *   - bench.cu: the plan, the groups (op x format x size) and the rows of the table's variants.
 */
#ifndef TS_BENCH_GPU_CUH
#define TS_BENCH_GPU_CUH

#include "bench.h"
#include "tessera.h"

#include <stddef.h>
#include <stdint.h>

/* The size every variant is checked at against the CPU reference (once per op and format). */
#define BENCH_CHECK_W 1920
#define BENCH_CHECK_H 1080

/* ---------------------------------------------------------------- harness (bench_gpu.cu) */

typedef struct bench_gpu bench_gpu;

/* One run of the thing being timed, enqueued on the benchmark's stream. */
typedef ts_status (*bg_run_fn)(void *arg);

typedef struct bg_timing {
    double median_ms, min_ms;
    int runs;                /* timed runs taken (fewer than asked for very slow rows) */
    char note[BENCH_TEXT];   /* why fewer, or "" */
} bg_timing;

ts_status bg_open(bench_gpu **g, const ts_device *dev, int max_runs);
void bg_close(bench_gpu *g);
ts_stream bg_stream(const bench_gpu *g);
/* One untimed warm-up run, then `runs` runs, each after an L2 flush, each between two events. */
ts_status bg_time(bench_gpu *g, bg_run_fn fn, void *arg, int runs, bg_timing *t);
/* Median time of a device-to-device cudaMemcpyAsync of `bytes` (memoized per byte count). */
ts_status bg_copy_floor(bench_gpu *g, size_t bytes, int runs, double *ms);
/* Waits for the stream; TS_ERR_CUDA (with the detail) when something on it failed. */
ts_status bg_sync(bench_gpu *g);
/* 1 once a CUDA error has poisoned the context (an illegal address...): nothing more can run. */
int bg_context_lost(void);

/* Grows a device buffer or a pitched device image to at least the size asked for. */
ts_status bg_reserve(void **d_ptr, size_t *cap, size_t bytes);
ts_status bg_image_reserve(ts_image *d_im, size_t *cap, int width, int height, int channels,
                           int bytes);
void bg_image_release(ts_image *d_im, size_t *cap);
/* The benchmark's input for (format, data, size): random samples made on the device from the
 * process seed, so the same call gives the same image within a run and a fresh one per run. */
ts_status bg_make_input(bench_gpu *g, uint64_t seed, int fmt, bench_data data, int width,
                        int height, ts_image *d_im, size_t *cap);
/* Largest |a - b| over the first `channels` channels of every pixel of two device images. */
ts_status bg_max_diff(bench_gpu *g, const ts_image *a, const ts_image *b, int channels,
                      unsigned *max_diff);
/* Shared device scratch for the variants (grown on demand). */
ts_status bg_scratch(bench_gpu *g, size_t bytes, void **d_scratch);

/* ---------------------------------------------------------------- one run's context */

typedef struct bench_env {
    const ts_device *dev;
    bench_gpu *g;
    ts_stream stream;
    uint64_t seed;
    int runs;
    bench_meta *meta;
    /* 1 when --variant lets `name` (with `param`, 0 for none) run */
    int (*wanted)(const char *name, int param);
} bench_env;

/* ---------------------------------------------------------------- groups (bench.cu) */

/* One op on one format at one size: what the vendor rows need to know. */
typedef struct bench_group {
    const bench_env *env;
    const bench_opdef *def;
    const ts_op *op;
    int fmt, width, height;
    ts_image d_in;               /* the input every row of the group reads */
    const ts_image *d_gold;      /* a checked variant's output at this size, or NULL */
    const uint32_t *d_gold_hist; /* the same for histogram ops */
    size_t hist_n;               /* counts of a histogram op */
    const char *gold_name;       /* the variant that made d_gold */
    double bytes, flops, floor_ms;
} bench_group;

/* A new row of the group with its common fields filled in; NULL when out of memory. */
bench_row *bench_group_row(const bench_group *grp, bench_rows *rows, const char *variant);

/* ---------------------------------------------------------------- CPU check (bench_check.cu) */

typedef struct bench_ref bench_ref;

bench_ref *bref_new(void);
void bref_free(bench_ref *r);
/* Checks variant v (with param) on (def, op, fmt) at BENCH_CHECK_W x BENCH_CHECK_H against the CPU
 * reference, once: later calls return the cached verdict. 1: within tolerance; 0: wrong; -1: could
 * not check. `text` says what was found. The reference is kept until the op or format changes. */
int bref_check(bench_ref *r, const bench_env *env, const bench_opdef *def, const ts_op *op, int fmt,
               const ts_variant *v, int param, char *text, size_t len);
/* Times the table's CPU variant on the check-size input (host clock, median of `runs`). */
ts_status bref_time_cpu(bench_ref *r, const bench_env *env, const bench_opdef *def, const ts_op *op,
                        int fmt, const ts_variant *v, int runs, double *ms);

/* ---------------------------------------------------------------- vendors (bench_vendor.cu) */

typedef struct bench_vendor bench_vendor;

/* Never fails: a library that cannot start gives its rows an "error: ..." instead. */
bench_vendor *bv_open(const bench_env *env);
void bv_close(bench_vendor *v);
/* What was built in and what is missing, for the report's header. */
void bv_describe(char *out, size_t len);
/* Appends the group's vendor rows (none where no vendor computes the op). */
void bv_rows(bench_vendor *v, const bench_group *grp, bench_rows *rows);

#endif /* TS_BENCH_GPU_CUH */
