/* resize_opt.cu - the `fused` row of the resize ladder, and `opt`, which plans which kernel takes
 * a job (the plan of the images and the first rungs: resize.cu).
 *
 * fused: one block per output tile of OX x TY pixels does both passes. It stages the two bands of
 * weights its tile uses in shared memory, runs the horizontal pass over only the input rows its
 * output rows read (the result, rounded to the depth as the reference's intermediate, stays in
 * shared memory), then the vertical pass from there, and writes its outputs. The intermediate
 * image never goes through global memory (naive and tiled write and re-read ow x rows samples),
 * so traffic is the input (read about once: tiles overlap by the filter's support rows) plus the
 * output, the floor for a resample. Input taps come through the read-only cache: neighbouring
 * outputs share most of their taps, so a warp's loads hit lines that it or its neighbours just
 * brought in. TY shrinks until the tile fits 48 KB; a reduction so strong that the tiles' row
 * overlap would cost more than 1.5x the horizontal work is left to tiled (supports says no).
 * Sums are the reference's, term for term: bit-identical output.
 *
 * opt: the plan (opt_plan), made once per job from its filter, format, device and weight tables:
 * the interp filter takes the direct kernel (resize_direct.cu: no tables) where it reads fewer
 * rows than the image has (3x reductions and more), else the tables' kernels as the other
 * filters; 8-bit images on sm_80 and newer the interleaved tensor-core kernel where its geometry
 * applies (resize_mmai.cu), else
 * the planar one where its bands fit (resize_mma.cu); the rest (16-bit samples, older GPUs,
 * reductions too strong for the tensor-core bands) the fused kernel above. Each is also a row
 * of its own (direct, mmai, mma, fused) for --variant, the tests and the benchmark.
 */
#include "resize_gpu.cuh"
#include "variants.h"

#include <math.h>

#define OPT_THREADS 256
#define OPT_OX 64 /* output columns per tile: a pixel per thread, 4 rows of them at a time */

static size_t opt_smem(int rows, int ty, int ksh, int ksv, int C, int bytes)
{
    size_t h = (size_t)rows * OPT_OX * C * bytes;
    h = (h + 3) & ~(size_t)3; /* the weights after it are 32-bit */
    return h + (size_t)OPT_OX * ksh * 4 + (size_t)ty * ksv * 4;
}

/* The tallest tile whose intermediate fits; 0 when none. span(n): input rows of n output rows. */
template <typename Span>
static int opt_choose(int ksh, int ksv, int C, int bytes, Span span)
{
    static const int tys[] = {64, 32, 16, 8, 4, 2, 1};
    for (int i = 0; i < 7; i++)
        if (opt_smem(span(tys[i]), tys[i], ksh, ksv, C, bytes) <= RS_SMEM_BUDGET)
            return tys[i];
    return 0;
}

static int opt_span_bound(int in, int out, int ksize, int n)
{
    double s = ceil((double)(n - 1) * in / out) + ksize + 2;
    return s > in ? in : (int)s;
}

/* Whether the fused kernel's tile fits (fits) and whether opt would plan it (worth): a strong
 * reduction leaves room for short tiles only, and each re-runs the horizontal pass over the
 * rows its neighbours read too (thumbnail:256 of 12 MP: 2 output rows from 113 input rows, 3.6x
 * the work); past 1.5x, tiled's two passes do less. */
static int fused_check(const ts_job *job, int worth)
{
    if (job->op->resize.mode == TS_RESIZE_CROP ||
        (job->out.width == job->in.width && job->out.height == job->in.height))
        return 1;
    int ih = job->in.height, oh = job->out.height;
    ts_resize_filter f = job->op->resize.filter;
    int ksh = rs_coeffs_ksize(job->in.width, job->out.width, f), ksv = rs_coeffs_ksize(ih, oh, f);
    if (!ksh || !ksv || oh > 65535)
        return 0;
    int ty = opt_choose(ksh, ksv, job->in.channels, job->in.bytes,
                        [&](int n) { return opt_span_bound(ih, oh, ksv, n); });
    double sy = (double)ih / oh;
    return ty > 0 && (!worth || sy <= 1 || opt_span_bound(ih, oh, ksv, ty) <= 1.5 * ty * sy);
}

extern "C" int resize_fused_supports(const ts_job *job) { return fused_check(job, 0); }

extern "C" int resize_opt_supports(const ts_job *job)
{
    return job->op->resize.filter == TS_FILTER_INTERP || rs_mma_fits(job) || fused_check(job, 1);
}

template <typename T, int C>
__global__ void __launch_bounds__(OPT_THREADS)
    resize_fused_kernel(rs_args a, int ty, int rows_cap)
{
    typedef typename rs_acc<T>::type acc_t;
    extern __shared__ __align__(16) unsigned char sm[];
    T *mid = (T *)sm; /* [rows][OPT_OX][C]: the tile's horizontal result */
    size_t mid_bytes = ((size_t)rows_cap * OPT_OX * C * sizeof(T) + 3) & ~(size_t)3;
    int32_t *wh = (int32_t *)(sm + mid_bytes); /* [OPT_OX][ksh] */
    int32_t *wv = wh + OPT_OX * a.ksh;         /* [ty][ksv] */

    int ox0 = blockIdx.x * OPT_OX, nx = min(OPT_OX, a.ow - ox0);
    int oy0 = blockIdx.y * ty, ny = min(ty, a.oh - oy0);
    int r0 = a.bv[2 * oy0];
    int r1 = a.bv[2 * (oy0 + ny - 1)] + a.bv[2 * (oy0 + ny - 1) + 1];
    int nr = r1 - r0;

    for (int i = threadIdx.x; i < nx * a.ksh; i += OPT_THREADS)
        wh[i] = a.kh[(size_t)a.rh[ox0 + i / a.ksh] * a.ksh + i % a.ksh];
    for (int i = threadIdx.x; i < ny * a.ksv; i += OPT_THREADS)
        wv[i] = a.kv[(size_t)a.rv[oy0 + i / a.ksv] * a.ksv + i % a.ksv];
    __syncthreads();

    /* horizontal: thread (r, x) sums one pixel of intermediate row r0 + r */
    for (int i = threadIdx.x; i < nr * OPT_OX; i += OPT_THREADS) {
        int r = i / OPT_OX, x = i % OPT_OX;
        if (x >= nx)
            continue;
        const unsigned char *row = a.in + (size_t)(r0 + r) * a.in_pitch;
        int x0 = a.bh[2 * (ox0 + x)], n = a.bh[2 * (ox0 + x) + 1];
        const int32_t *k = wh + x * a.ksh;
        acc_t acc[C];
#pragma unroll
        for (int c = 0; c < C; c++)
            acc[c] = rs_half<T>();
        for (int t = 0; t < n; t++) {
            unsigned v[C];
            rs_load<T, C>(row, x0 + t, v);
            acc_t w = k[t];
#pragma unroll
            for (int c = 0; c < C; c++)
                acc[c] += (acc_t)v[c] * w;
        }
        T *m = mid + ((size_t)r * OPT_OX + x) * C;
#pragma unroll
        for (int c = 0; c < C; c++)
            m[c] = (T)rs_round<T>(acc[c]);
    }
    __syncthreads();

    /* vertical: thread (y, x) sums one output pixel from the shared intermediate */
    for (int i = threadIdx.x; i < ny * OPT_OX; i += OPT_THREADS) {
        int y = i / OPT_OX, x = i % OPT_OX;
        if (x >= nx)
            continue;
        int y0 = a.bv[2 * (oy0 + y)] - r0, n = a.bv[2 * (oy0 + y) + 1];
        const int32_t *k = wv + y * a.ksv;
        acc_t acc[C];
#pragma unroll
        for (int c = 0; c < C; c++)
            acc[c] = rs_half<T>();
        for (int t = 0; t < n; t++) {
            const T *m = mid + ((size_t)(y0 + t) * OPT_OX + x) * C;
            acc_t w = k[t];
#pragma unroll
            for (int c = 0; c < C; c++)
                acc[c] += (acc_t)m[c] * w;
        }
        unsigned v[C];
#pragma unroll
        for (int c = 0; c < C; c++)
            v[c] = rs_round<T>(acc[c]);
        rs_store<T, C>(a.out + (size_t)(oy0 + y) * a.out_pitch, ox0 + x, v);
    }
}

template <typename T, int C>
static ts_status fused_launch(rs_plan *p, const ts_job *job)
{
    ts_status st = rs_plan_upload(p, job);
    if (st != TS_OK)
        return st;
    const rs_args &a = p->a;
    int ty = opt_choose(a.ksh, a.ksv, C, (int)sizeof(T),
                        [&](int n) { return rs_coeffs_span(p->cv, n); });
    if (!ty)
        return ts_fail(TS_ERR_UNSUPPORTED, "resize fused: the tile does not fit shared memory");
    int rows_cap = rs_coeffs_span(p->cv, ty);
    dim3 grid(gpu_div_up((size_t)a.ow, OPT_OX), gpu_div_up((size_t)a.oh, (unsigned)ty));
    if (grid.y > 65535)
        return ts_fail(TS_ERR_UNSUPPORTED, "resize fused: %d output rows", a.oh);
    resize_fused_kernel<T, C>
        <<<grid, OPT_THREADS, opt_smem(rows_cap, ty, a.ksh, a.ksv, C, (int)sizeof(T)),
           job->stream>>>(a, ty, rows_cap);
    LAUNCH_CHECK("resize_fused_kernel");
    return TS_OK;
}

extern "C" ts_status resize_fused(const ts_job *job)
{
    return rs_run(job, RS_PICK(fused_launch, job));
}

/* ---------------------------------------------------------------- opt: the plan */

enum opt_path { OPT_DIRECT, OPT_MMAI, OPT_MMA, OPT_FUSED };

/* Which kernel takes the planned job: the first that applies, in the order of their speed.
 * interp: direct where its whole-factor kernel applies (registers only: 8K -> 4K and -> 1080p)
 * or where it reads fewer input rows than there are (a vertical reduction of 3x and more), else
 * mmai on the tables where it applies (at 2x both read every row, and mmai's pipelined staging
 * measured faster than direct's staged tile: tools/results/nvidia-h100-resize-2026-11-26.md). */
static opt_path opt_plan(rs_plan *p, const ts_job *job)
{
    if (job->op->resize.filter == TS_FILTER_INTERP)
        return rs_direct_even(p->a, job->in.bytes) || p->a.ih >= 3 * (long)p->a.oh ||
                       !rs_mmai_applies(p, job)
                   ? OPT_DIRECT
                   : OPT_MMAI;
    if (rs_mmai_applies(p, job))
        return OPT_MMAI;
    if (rs_mma_applies(p, job))
        return OPT_MMA;
    return OPT_FUSED;
}

template <typename T, int C>
static ts_status opt_launch(rs_plan *p, const ts_job *job)
{
    int done = 0;
    ts_status st;
    switch (opt_plan(p, job)) {
    case OPT_DIRECT:
        return rs_direct_launch(p, job);
    case OPT_MMAI:
        return rs_mmai_launch(p, job); /* uploads the tables only where it needs them */
    case OPT_MMA:
        if ((st = rs_plan_upload(p, job)) == TS_OK && (st = rs_mma_run(p, job, &done)) == TS_OK &&
            !done)
            st = ts_fail(TS_ERR_UNSUPPORTED, "resize opt: the planar tile does not fit");
        return st;
    case OPT_FUSED:
        break;
    }
    return fused_launch<T, C>(p, job);
}

extern "C" ts_status resize_opt(const ts_job *job)
{
    return rs_run(job, RS_PICK(opt_launch, job));
}
