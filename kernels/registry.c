/* registry.c - the single table of variants. The viewer's variant keys, --variant, --list, the
 * tests and the benchmark all iterate this table; nothing else lists variants.
 * Order within a family is the speedup ladder (cpu, naive, shared, ..., fastest).
 */
#include "tessera.h"
#include "variants.h"

#include <string.h>

static ts_status cpu_run(const ts_job *job)
{
    if (job->op->kind == TS_OP_HIST)
        return ts_ref_hist(&job->in, job->op->hist_mode, job->hist);
    ts_image out = job->out;
    return ts_ref_op_into(job->op, &job->in, &out);
}

#define CPU_VARIANT(fam)                                                                           \
    {fam, "cpu", "the reference on the host: the oracle and the no-GPU fallback", 0, 1, NULL,     \
     NULL, cpu_run}

static const ts_variant table[] = {
    /* ---- conv (conv.cu) */
    CPU_VARIANT(TS_FAM_CONV),
#ifdef TS_HAVE_CUDA
    {TS_FAM_CONV, "naive", "one thread per output sample, every tap read from global memory", 75,
     1, NULL, NULL, conv_naive},
    {TS_FAM_CONV, "gemm",
     "textbook: explicit im2col in <= 256 MiB bands, then the Programming Guide's 16x16 "
     "shared-memory tiled GEMM (never auto: im2col costs K*K times the image in traffic)",
     75, 0, NULL, conv_gemm_scratch, conv_gemm},
    {TS_FAM_CONV, "tiled",
     "implicit GEMM: input tile + halo staged once in shared memory, 8 x 4 (K > 7: 8 x 8) "
     "outputs per thread in registers, no im2col",
     75, 3, conv_tiled_supports, NULL, conv_tiled},
    {TS_FAM_CONV, "sep",
     "separable filters (gauss, box): row pass then column pass fused through shared memory, "
     "2K FMAs per output instead of K*K",
     75, 4, conv_sep_supports, NULL, conv_sep},
    {TS_FAM_CONV, "roll",
     "K=1/3/5/7 at memory speed: compile-time K, 16-byte loads/stores, halo by warp shuffles, "
     "rolling register rows, no shared memory or barrier",
     75, 5, conv_roll_supports, NULL, conv_roll},
    {TS_FAM_CONV, "pipe",
     "roll fed by a cp.async ring of 8 input rows per warp in shared memory: 7 rows in flight "
     "without holding registers, all 32 lanes writing",
     80, 7, conv_pipe_supports, NULL, conv_pipe},
    {TS_FAM_CONV, "mma",
     "tensor cores: each filter row a banded Toeplitz matrix, mma.sync m16n8k16 (FP16 in, FP32 "
     "accumulate) on 16 row segments at a time, K=3/5/7 on 8-bit, exact filters bit-exact",
     80, 6, conv_mma_supports, NULL, conv_mma},
    {TS_FAM_CONV, "mmapipe",
     "mma fed by pipe's cp.async ring: 7 input rows in flight per warp in shared memory instead of "
     "registers, the border replicated into the ring",
     80, 8, conv_mmapipe_supports, NULL, conv_mmapipe},
#endif
    /* ---- geom (geom.cu) */
    CPU_VARIANT(TS_FAM_GEOM),
#ifdef TS_HAVE_CUDA
    {TS_FAM_GEOM, "naive", "one thread per pixel: reads coalesced, a swapping op's writes strided",
     75, 1, NULL, NULL, geom_naive},
    {TS_FAM_GEOM, "shared", "32x32 tile in shared memory: both sides coalesced, but bank conflicts",
     75, 2, NULL, NULL, geom_shared},
    {TS_FAM_GEOM, "padded", "[32][33] tile: a pixel of padding per row, conflict-free column reads",
     75, 3, NULL, NULL, geom_padded},
    {TS_FAM_GEOM, "opt", "K x K pixel blocks transposed in registers: 8-16 byte accesses, no tile "
     "for flips", 75, 4, NULL, NULL, geom_opt},
#endif
    /* ---- hist (hist.cu) */
    CPU_VARIANT(TS_FAM_HIST),
#ifdef TS_HAVE_CUDA
    {TS_FAM_HIST, "naive", "one global atomicAdd per value: L2 atomics, serialized on hot bins",
     75, 2, ts_hist_supports, ts_hist_scratch, ts_hist_naive_run},
    {TS_FAM_HIST, "shared", "a u32 histogram per block in shared memory, merged once; 65536 bins "
     "are cut into slices that fit, each re-reading the image", 75, 3, ts_hist_shared_supports,
     ts_hist_scratch, ts_hist_shared_run},
    {TS_FAM_HIST, "cluster", "the guide's DSMEM histogram: bins split over a thread-block "
     "cluster, remote shared atomics, one pass (param = cluster size)", 90, 4,
     ts_hist_cluster_supports, ts_hist_scratch, ts_hist_cluster_run},
    {TS_FAM_HIST, "opt", "all adds local: packed 16-bit counters (65536 bins in 128 KB) or 32 "
     "lane copies (8-bit, conflict-free), vector loads, runs merged", 75, 5,
     ts_hist_opt_supports, ts_hist_opt_scratch, ts_hist_opt_run},
#endif
    /* ---- resize (ref_resize.c, resize.cu, resize_opt.cu): resize, thumbnail, crop */
    CPU_VARIANT(TS_FAM_RESIZE),
#ifdef TS_HAVE_CUDA
    {TS_FAM_RESIZE, "naive", "horizontal then vertical pass, one thread per sample, every tap "
     "and weight read from global memory", 75, 1, NULL, resize_scratch, resize_naive},
    {TS_FAM_RESIZE, "tiled", "each block stages its band of the weight matrix and the input "
     "span it touches in shared memory (the guide's tiled product), both passes", 75, 2,
     resize_tiled_supports, resize_scratch, resize_tiled},
    {TS_FAM_RESIZE, "opt", "both passes fused per output tile: the horizontal result of the rows "
     "a tile needs stays in shared memory: no intermediate image in global memory", 75, 3,
     resize_opt_supports, resize_scratch, resize_opt},
#endif
};

size_t ts_variant_count(void) { return sizeof table / sizeof table[0]; }

const ts_variant *ts_variant_at(size_t i) { return i < ts_variant_count() ? &table[i] : NULL; }

const ts_variant *ts_variant_find(ts_family f, const char *name)
{
    for (size_t i = 0; i < ts_variant_count(); i++)
        if (table[i].family == f && strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

int ts_variant_runnable(const ts_variant *v, const ts_device *dev)
{
    if (!ts_variant_is_gpu(v))
        return 1;
    return dev != NULL && dev->cc >= v->min_cc;
}

const ts_variant *ts_variant_auto(const ts_job *job, const ts_device *dev)
{
    const ts_variant *best = NULL;
    ts_family f = ts_op_family(job->op->kind);
    for (size_t i = 0; i < ts_variant_count(); i++) {
        const ts_variant *v = &table[i];
        if (v->family != f || v->auto_rank <= 0 || ts_variant_is_gpu(v) != (dev != NULL))
            continue;
        if (!ts_variant_runnable(v, dev) || (v->supports && !v->supports(job)))
            continue;
        if (!best || v->auto_rank > best->auto_rank)
            best = v;
    }
    return best;
}
