/* cpu_common.h - what the fast CPU variants (kernels/cpu_*.c) share, internal to kernels/.
 *
 * The variants split an image into row bands run on up to ts_ref_threads() threads (the CLI sets
 * it from -j, the batch from -j / workers), so one large image uses every core, and write their
 * hot loops as plain C that GCC and Clang vectorize, compiled three times (AVX-512, AVX2, SSE2)
 * with the ifunc resolver picking one at load time (CPU_CLONES). The reference (ref.c) stays the
 * oracle: every variant here is tested against it (tests/test_cpu.c).
 */
#ifndef TS_CPU_COMMON_H
#define TS_CPU_COMMON_H

#include "tessera.h"

#include <stdint.h>

/* Run-time dispatch: one clone per ISA level, the best one the CPU has picked once by glibc's
 * ifunc resolver. x86-64 with GCC or Clang only; elsewhere one portable build. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(TS_CPU_NO_CLONES)
#define CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CPU_CLONES
#endif

/* Calls fn(ctx, task, thread) for task = 0..ntasks-1 on up to ts_ref_threads() threads (the
 * caller's among them); `thread` < cpu_threads(ntasks) indexes per-thread scratch. Tasks are taken
 * in turn from a shared counter, so the result never depends on the count. */
typedef void (*cpu_task_fn)(void *ctx, int task, int thread);
void cpu_for(int ntasks, cpu_task_fn fn, void *ctx);
int cpu_threads(int ntasks); /* threads cpu_for would use */
/* Bands of rows for an image of `rows` rows: enough for every thread to get several, none
 * shorter than `min_rows`. */
int cpu_band_rows(int rows, int min_rows);

/* ---- the fast variants (registry.c rows) */
ts_status cpu_conv_run(const ts_job *job);
int cpu_conv_supports(const ts_job *job);
ts_status cpu_geom_run(const ts_job *job);
ts_status cpu_hist_run(const ts_job *job);
ts_status cpu_resize_run(const ts_job *job);

/* A transform of n pixels from src to dst (same pixel format), applied on the way through a
 * geometry op (fusion). */
typedef void (*cpu_row_fn)(const void *ctx, const void *src, void *dst, int n);
/* out = g(fn(in)) (fn NULL: g(in)); out has g's output shape. */
ts_status cpu_geom_apply(ts_geom g, const ts_image *in, const ts_image *out, cpu_row_fn fn,
                         const void *fctx);

/* ---- fusion (pipeline.c): ops whose passes merge into one */
/* The conv job, also counting the histograms of its output (mode, ts_hist_count*bins counts,
 * zeroed by the call) while each band is still in cache. */
ts_status cpu_conv_run_hist(const ts_job *job, ts_hist_mode mode, uint32_t *hist);
/* Adds the histograms of rows [y0, y1) of `im` to `hist` (no zeroing). */
void cpu_hist_rows(const ts_image *im, int y0, int y1, ts_hist_mode mode, uint32_t *hist);
/* Histograms of an image (ts_ref_hist's result), threaded with private sub-histograms. */
ts_status cpu_hist_count(const ts_image *in, ts_hist_mode mode, uint32_t *hist);
/* Equalization of `in` given its histograms (NULL: counted here), written into `out` through the
 * geometry `geom` (< 0: none): out = geom(equalize(in)) in one pass over the pixels. */
ts_status cpu_equalize_geom(ts_hist_mode mode, const uint32_t *hist, int geom, const ts_image *in,
                            ts_image *out);

#endif /* TS_CPU_COMMON_H */
