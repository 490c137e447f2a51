/* registry.c - the single table of variants. The viewer's variant keys, --variant, --list, the
 * tests and the benchmark all iterate this table; nothing else lists variants.
 * Order within a family is the speedup ladder (cpu, naive, shared, ..., fastest); rows use
 * designated initializers, so a new ts_variant field never shifts them.
 */
#include "tessera.h"
#include "variants.h"
#include "cpu_common.h"

#include <string.h>

static ts_status cpu_run(const ts_job *job)
{
    if (job->op->kind == TS_OP_HIST)
        return ts_ref_hist(&job->in, job->op->hist_mode, job->hist);
    ts_image out = job->out;
    return ts_ref_op_into(job->op, &job->in, &out);
}

#define CPU_VARIANT(fam)                                                                           \
    {.family = (fam), .name = "cpu", .min_cc = 0, .auto_rank = 1,                                  \
     .why = "the reference on the host: the oracle (never auto while a fast CPU row takes the job)", \
     .run = cpu_run}

/* Table order is the speedup ladder of each family (the order in which --list, the viewer's
 * variant key and the benchmark show the tricks, each building on the rows above); auto_rank is
 * which variant `auto` prefers among those that take a job, by measured speed, so the two
 * orders differ where a later rung is not faster everywhere: pipe outranks mma because mma's
 * tensor-core path is slow on alpha images (H200, 8K RGBA8 gauss:3: pipe 0.135 ms, mma 0.414;
 * tools/results/nvidia-h200.md), runsum sits below roll, pipe and mmapipe: at K = 3 all three
 * are faster (H100, 8K gray8 box:3: mmapipe 0.0322 ms, pipe 0.0385, roll 0.0534, runsum 0.0602)
 * and mmapipe at K = 5, 7 on 8-bit (box:7: 0.0444 against 0.0667), while above K = 7 only tiled,
 * sep and runsum take a box (tools/results/nvidia-h100-box-2026-11-26.md); gemm (rank 0) is
 * never taken, nor is mmasep2 (rank 0: mmasep2b takes its jobs faster); mmasep2b (rank 1: never
 * by rank, mmapipe outranks it on every job it takes) is auto's pick where it prefers: every
 * gauss:5 and gauss:7 on gray and RGB it takes (H100: tools/results/nvidia-h100-final-2026-11-27b.md,
 * gray gauss:5 since nvidia-h100-headroom-2026-11-27g.md); mmabox (rank 2) is auto's pick for
 * every 8-bit gray or RGB box it takes, faster there than mmapipe and runsum (from K 5:
 * nvidia-h100-box-2026-11-27c.md; at K 3 too since nvidia-h100-headroom-2026-11-27g.md). */
static const ts_variant table[] = {
    /* ---- conv (conv.cu) */
    CPU_VARIANT(TS_FAM_CONV),
    {.family = TS_FAM_CONV, .name = "simd", .min_cc = 0, .auto_rank = 2,
     .why = "auto on the CPU: row bands on -j threads, padded rows in a ring of K, vector loops "
            "(AVX-512/AVX2/SSE2 picked at run time): separable float (gauss) and int32 (box) "
            "passes, exact int32 taps",
     .supports = cpu_conv_supports, .run = cpu_conv_run},
#ifdef TS_HAVE_CUDA
    {.family = TS_FAM_CONV, .name = "naive", .min_cc = 75, .auto_rank = 1,
     .why = "one thread per output sample, every tap read from global memory",
     .run = conv_naive},
    {.family = TS_FAM_CONV, .name = "gemm", .min_cc = 75, .auto_rank = 0,
     .why = "textbook: explicit im2col in <= 256 MiB bands, then the Programming Guide's 16x16 "
            "shared-memory tiled GEMM (never auto: im2col costs K*K times the image in traffic)",
     .scratch = conv_gemm_scratch, .run = conv_gemm},
    {.family = TS_FAM_CONV, .name = "tiled", .min_cc = 75, .auto_rank = 3,
     .why = "implicit GEMM: input tile + halo staged once in shared memory, 8 x 4 (K > 7: 8 x 8) "
            "outputs per thread in registers, no im2col",
     .supports = conv_tiled_supports, .run = conv_tiled},
    {.family = TS_FAM_CONV, .name = "sep", .min_cc = 75, .auto_rank = 4,
     .why = "separable filters (gauss, box): row pass then column pass fused through shared memory, "
            "2K FMAs per output instead of K*K",
     .supports = conv_sep_supports, .run = conv_sep},
    {.family = TS_FAM_CONV, .name = "roll", .min_cc = 75, .auto_rank = 6,
     .why = "K=1/3/5/7 at memory speed: compile-time K, 16-byte loads/stores, halo by warp shuffles, "
            "rolling register rows, no shared memory or barrier",
     .supports = conv_roll_supports, .run = conv_roll},
    {.family = TS_FAM_CONV, .name = "pipe", .min_cc = 80, .auto_rank = 8,
     .why = "roll fed by a cp.async ring of 8 input rows per warp in shared memory: 7 rows in flight "
            "without holding registers, all 32 lanes writing",
     .supports = conv_pipe_supports, .run = conv_pipe},
    {.family = TS_FAM_CONV, .name = "mma", .min_cc = 80, .auto_rank = 7,
     .why = "tensor cores: each filter row a banded Toeplitz matrix, mma.sync m16n8k16 (FP16 in, FP32 "
            "accumulate) on 16 row segments at a time, K=3/5/7 on 8-bit, exact filters bit-exact",
     .supports = conv_mma_supports, .run = conv_mma},
    {.family = TS_FAM_CONV, .name = "mmapipe", .min_cc = 80, .auto_rank = 9,
     .why = "mma fed by pipe's cp.async ring: 7 input rows in flight per warp in shared memory "
            "instead of registers, the border replicated into the ring",
     .supports = conv_mmapipe_supports, .run = conv_mmapipe},
    {.family = TS_FAM_CONV, .name = "mmasep", .min_cc = 80, .auto_rank = 10,
     .why = "mmapipe for separable float filters (gauss) at K=5/7: one Toeplitz mma of the row "
            "factors per input row, the K column factors applied as FP32 FMAs",
     .supports = conv_mmasep_supports, .run = conv_mmasep},
    {.family = TS_FAM_CONV, .name = "mmasep2", .min_cc = 80, .auto_rank = 0,
     .why = "mmasep with the column factors on the tensor cores too: the row pass's accumulators "
            "are the column pass's A fragments, no FMAs an output; output blocks staged in shared "
            "memory and stored as whole sectors (a rung: mmasep2b takes the same jobs faster)",
     .supports = conv_mmasep2_supports, .run = conv_mmasep2},
    {.family = TS_FAM_CONV, .name = "mmasep2b", .min_cc = 80, .auto_rank = 1,
     .why = "mmasep2 with one input ring a block: its 4 warps' strips side by side share each row "
            "and its halos (a block barrier a step), 18 sectors read a row of 512 outputs instead "
            "of 24 (param: strip rows; 64 on RGB, 32 on gray by default)",
     .supports = conv_mmasep2_supports, .run = conv_mmasep2b,
     /* auto's pick on every job it takes (gray and RGB gauss:5, gauss:7), measured fastest there:
      * tools/results/nvidia-h100-final-2026-11-27b.md; gray gauss:5 since the border strips stage
      * their stores (H100, median of 20: 8K 0.0326 ms against mmapipe's 0.0339, 4K 0.0156
      * against 0.0201, 1080p 0.0107 against 0.0178: nvidia-h100-headroom-2026-11-27g.md) */
     .prefers = conv_mmasep2_supports},
    {.family = TS_FAM_CONV, .name = "mmabox", .min_cc = 80, .auto_rank = 2,
     .why = "box filters (K 3-31, 8-bit gray and RGB) on mmasep2b's strips, bit-exact: row sums "
            "as int8 products (k32 and k16 steps over the samples as loaded, the window shifted 8 "
            "samples where that saves the k16), less 128 K into the FP16 column pass (from K 17 "
            "their two bytes into int8 ones), the division one rounded FMA (param: strip rows)",
     .supports = conv_mmabox_supports, .run = conv_mmabox,
     /* auto's pick on every box it takes, measured fastest there: from K 5
      * tools/results/nvidia-h100-box-2026-11-27c.md; at K 3 since the border strips stage their
      * stores (H100, median of 20, 8K / 4K / 1080p: gray8 0.0304 / 0.0147 / 0.0100 ms against
      * mmapipe's 0.0318 / 0.0167 / 0.0139, rgb8 0.0766 / 0.0246 / 0.0148 against 0.0790 /
      * 0.0279 / 0.0173: nvidia-h100-headroom-2026-11-27g.md) */
     .prefers = conv_mmabox_supports},
    {.family = TS_FAM_CONV, .name = "runsum", .min_cc = 75, .auto_rank = 5,
     .why = "box filters by running sums: column sums slid down a strip in registers, row sums slid "
            "along shared memory, a constant cost per output whatever K (param: segment rows; "
            "512 + rows: RGB8 at K <= 25 single-buffered, the default before the double buffer)",
     .supports = conv_runsum_supports, .run = conv_runsum},
#endif
    /* ---- geom (geom.cu) */
    CPU_VARIANT(TS_FAM_GEOM),
    {.family = TS_FAM_GEOM, .name = "blocked", .min_cc = 0, .auto_rank = 2,
     .why = "auto on the CPU: 64x64-pixel tiles staged in L1, pixels moved as one word (3-byte "
            "pixels as overlapping 4-byte moves), flips as row copies, row bands on -j threads",
     .run = cpu_geom_run},
#ifdef TS_HAVE_CUDA
    {.family = TS_FAM_GEOM, .name = "naive", .min_cc = 75, .auto_rank = 1,
     .why = "one thread per pixel: reads coalesced, a swapping op's writes strided",
     .run = geom_naive},
    {.family = TS_FAM_GEOM, .name = "shared", .min_cc = 75, .auto_rank = 2,
     .why = "32x32 tile in shared memory: both sides coalesced, but bank conflicts",
     .run = geom_shared},
    {.family = TS_FAM_GEOM, .name = "padded", .min_cc = 75, .auto_rank = 3,
     .why = "[32][33] tile: a pixel of padding per row, conflict-free column reads",
     .run = geom_padded},
    {.family = TS_FAM_GEOM, .name = "opt", .min_cc = 75, .auto_rank = 4,
     .why = "K x K pixel blocks transposed in registers: 8-16 byte accesses, no tile for flips",
     .run = geom_opt},
#endif
    /* ---- hist (hist.cu) */
    CPU_VARIANT(TS_FAM_HIST),
    {.family = TS_FAM_HIST, .name = "simd", .min_cc = 0, .auto_rank = 2,
     .why = "auto on the CPU: private sub-histograms per thread (4 interleaved for 8-bit), luma "
            "in vector chunks, a table of luma corrections, fused into the ops around it",
     .run = cpu_hist_run},
#ifdef TS_HAVE_CUDA
    {.family = TS_FAM_HIST, .name = "naive", .min_cc = 75, .auto_rank = 2,
     .why = "one global atomicAdd per value: L2 atomics, serialized on hot bins",
     .supports = hist_supports, .scratch = hist_scratch, .run = hist_naive},
    {.family = TS_FAM_HIST, .name = "shared", .min_cc = 75, .auto_rank = 3,
     .why = "a u32 histogram per block in shared memory, merged once; 65536 bins are cut into slices "
            "that fit, each re-reading the image",
     .supports = hist_shared_supports, .scratch = hist_scratch, .run = hist_shared},
    {.family = TS_FAM_HIST, .name = "cluster", .min_cc = 90, .auto_rank = 4,
     .why = "the guide's DSMEM histogram: bins split over a thread-block cluster, remote shared "
            "atomics, one pass (param = cluster size); 65536 bins of one histogram: opt's packed "
            "counters a block, summed through DSMEM; RGB16 equalize:rgb: a block a channel, its "
            "LUT in shared memory, units put back together through DSMEM (auto's pick there)",
     .supports = hist_cluster_supports, .scratch = hist_cluster_scratch, .run = hist_cluster,
     /* measured fastest there: tools/results/nvidia-h100-eq16-2026-11-27.md */
     .prefers = hist_eq16_cluster_takes},
    {.family = TS_FAM_HIST, .name = "opt", .min_cc = 75, .auto_rank = 5,
     .why = "all adds local: packed 16-bit counters (65536 bins in 128 KB; sm_90: a cluster's "
            "blocks summed through DSMEM) or 32 lane copies (8-bit, conflict-free), vector loads; "
            "8-bit equalize of one histogram in one cooperative kernel, RGB8's output staged "
            "through shared memory (param: 1-64 slices of bins, the three kernels)",
     .supports = hist_opt_supports, .scratch = hist_opt_scratch, .run = hist_opt},
#endif
    /* ---- resize (ref_resize.c, resize.cu, resize_opt.cu, resize_mma.cu, resize_mmai.cu,
     * resize_direct.cu):
     * resize, thumbnail, crop */
    CPU_VARIANT(TS_FAM_RESIZE),
    {.family = TS_FAM_RESIZE, .name = "simd", .min_cc = 0, .auto_rank = 2,
     .why = "auto on the CPU: the banded products per band of 32 output rows (intermediate in "
            "cache), 4 channels in one int32 vector per tap, whole rows per weight vertically",
     .run = cpu_resize_run},
#ifdef TS_HAVE_CUDA
    {.family = TS_FAM_RESIZE, .name = "naive", .min_cc = 75, .auto_rank = 1,
     .why = "horizontal then vertical pass, one thread per sample, every tap and weight read from "
            "global memory",
     .scratch = resize_scratch, .run = resize_naive},
    {.family = TS_FAM_RESIZE, .name = "tiled", .min_cc = 75, .auto_rank = 2,
     .why = "each block stages its band of the weight matrix and the input span it touches in "
            "shared memory (the guide's tiled product), both passes",
     .supports = resize_tiled_supports, .scratch = resize_scratch, .run = resize_tiled},
    /* the kernels opt plans among (auto_rank 0: auto takes them through opt's plan) */
    {.family = TS_FAM_RESIZE, .name = "fused", .min_cc = 75, .auto_rank = 0,
     .why = "both passes fused per output tile: the horizontal result of the rows a tile needs "
            "stays in shared memory, no intermediate image in global memory",
     .supports = resize_fused_supports, .scratch = resize_scratch, .run = resize_fused},
    {.family = TS_FAM_RESIZE, .name = "mma", .min_cc = 80, .auto_rank = 0,
     .why = "the fused tile on the tensor cores (8-bit): both passes as int8 mma products of "
            "channel planes, the weights split in three bytes, exact (param: tile shape)",
     .supports = resize_mma_supports, .scratch = resize_scratch, .run = resize_mma},
    {.family = TS_FAM_RESIZE, .name = "mmai", .min_cc = 80, .auto_rank = 0,
     .why = "the samples left interleaved: rows by cp.async straight into the A fragments, "
            "weight fragments cached per geometry, runs of tiles down a column",
     .supports = resize_mmai_supports, .scratch = resize_scratch, .run = resize_mmai},
    {.family = TS_FAM_RESIZE, .name = "direct", .min_cc = 75, .auto_rank = 0,
     .why = "the interp filter alone: two taps an axis computed in the kernel, no tables, only "
            "the rows sampled are read; whole factors straight into registers by 16-byte loads, "
            "else staged (param: 1-4 rows a tile, 5 gather, 6-8 rows a thread, 9-10 loop)",
     .supports = resize_direct_supports, .scratch = NULL, .run = resize_direct},
    {.family = TS_FAM_RESIZE, .name = "opt", .min_cc = 75, .auto_rank = 3,
     .why = "a plan per job: direct for interp at whole factors or reductions of 3x and more, "
            "else mmai where its geometry applies (8-bit, sm_80+), else mma, else fused",
     .supports = resize_opt_supports, .scratch = resize_scratch, .run = resize_opt},
#endif
    /* ---- clahe (ref_clahe.c, clahe.cu, clahe_cluster.cu) */
    CPU_VARIANT(TS_FAM_CLAHE),
#ifdef TS_HAVE_CUDA
    {.family = TS_FAM_CLAHE, .name = "naive", .min_cc = 75, .auto_rank = 1,
     .why = "a global atomicAdd per padded pixel into its tile's histogram, a block a tile for "
            "the LUT, four LUT reads from global memory per pixel",
     .supports = clahe_supports, .scratch = clahe_scratch, .run = clahe_naive},
    {.family = TS_FAM_CLAHE, .name = "shared", .min_cc = 75, .auto_rank = 2,
     .why = "a block a tile: histogram, clip, redistribution and scan in shared memory (16-bit in "
            "two slices), one LUT write; the blend as naive",
     .supports = clahe_supports, .scratch = clahe_scratch, .run = clahe_shared},
    {.family = TS_FAM_CLAHE, .name = "cluster", .min_cc = 90, .auto_rank = 3,
     .why = "a thread-block cluster a tile: K SMs read it, the histogram (16-bit: packed counters "
            "merged through DSMEM) and the LUT's clip and scan in distributed shared memory, "
            "the LUT straight into the blend's cells (param = K)",
     .supports = clahe_cluster_supports, .scratch = clahe_cluster_scratch, .run = clahe_cluster},
    {.family = TS_FAM_CLAHE, .name = "opt", .min_cc = 75, .auto_rank = 4,
     .why = "8-bit: a tile counted by one wave of bands into lane copies (conflict-free), the last "
            "block builds the LUT into packed cells; gray blends strips by bands of rows, one "
            "shared-memory load and four permute+FFMA products a pixel; the launches overlapped "
            "(a zeroing kernel, the count and the blend each the one before's dependent, the "
            "blend's set-up before its wait) (param: F * 100 + pixels a thread, 8 or 16; F 1, a "
            "candidate: the pipelined count)",
     .supports = clahe_opt_supports, .scratch = clahe_scratch, .run = clahe_opt},
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
    int best_pref = 0;
    ts_family f = ts_op_family(job->op->kind);
    for (size_t i = 0; i < ts_variant_count(); i++) {
        const ts_variant *v = &table[i];
        if (v->family != f || v->auto_rank <= 0 || ts_variant_is_gpu(v) != (dev != NULL))
            continue;
        if (!ts_variant_runnable(v, dev) || (v->supports && !v->supports(job)))
            continue;
        int pref = v->prefers && v->prefers(job); /* a rung's own jobs outrank the ranks */
        if (!best || pref > best_pref || (pref == best_pref && v->auto_rank > best->auto_rank))
            best = v, best_pref = pref;
    }
    return best;
}
