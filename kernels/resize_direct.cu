/* resize_direct.cu - the `direct` row of the resize ladder: the interp filter (OpenCV's
 * INTER_LINEAR, NPP's linear resize: two taps an axis whatever the scale, no antialiasing) with
 * no weight tables at all, opt's choice for that filter.
 *
 * The other rows read their weights from tables the host builds and uploads into the job's
 * scratch; for two taps an axis that upload (a pageable copy the host waits on) and the table
 * reads cost more than the arithmetic. Here each thread computes its column's taps, and each
 * block its rows' (rs_interp_tap: exact integers, the reference's), in the kernel. A thread makes
 * one output column for the block's rows, DI_RU rows at a time: the 2 x 2 taps of each, 8-bit
 * samples by two aligned 64-bit loads per input row (the window holding both taps, shifted into
 * place: 4 loads an output pixel whatever the channels), else one load per sample (16-bit, the
 * ends of rows, unaligned images). Only the input rows and columns the outputs sample are read:
 * at a 4x reduction half the rows, so the kernel moves less than a copy of the image would.
 * Both passes round as the reference does (horizontal per input row, then vertical), alpha
 * premultiplied per tap and unpremultiplied at the store: bit-identical to ref_resize.c.
 * job->param 1..4 picks the output rows a block takes (4, 8, 16, 32; default 8).
 */
#include "resize_gpu.cuh"
#include "variants.h"

#include <string.h>

#define DI_TX 128   /* output columns a block: a thread each */
#define DI_RU 4     /* output rows a thread loads at once (16 loads in flight, 8-bit) */
#define DI_RYMAX 32 /* output rows a block, at most */

static int di_rows(int param)
{
    static const int ry[] = {8, 4, 8, 16, 32};
    return param >= 1 && param <= 4 ? ry[param] : ry[0];
}

/* The two taps (sx, sx + 1) of row `row`, channel c of tap t in s[t][c], premultiplied where the
 * image has alpha. wide: the 16 bytes from sx's aligned 8-byte word lie inside the row. */
template <typename T, int C>
__device__ __forceinline__ void di_taps(const unsigned char *row, int sx, int iw, bool wide,
                                        unsigned (&s)[2][C])
{
    if (sizeof(T) == 1 && wide) {
        const int b = C * sx, base = b & ~7, o = b - base;
        const unsigned long long *p = (const unsigned long long *)(row + base);
        const unsigned long long lo = __ldg(p), hi = __ldg(p + 1);
        const unsigned long long v = o ? (lo >> (8 * o)) | (hi << (64 - 8 * o)) : lo;
#pragma unroll
        for (int t = 0; t < 2; t++)
#pragma unroll
            for (int c = 0; c < C; c++)
                s[t][c] = (unsigned)(v >> (8 * (C * t + c))) & 255u;
    } else {
        const T *p = (const T *)row;
        const int x1 = min(sx + 1, iw - 1);
#pragma unroll
        for (int c = 0; c < C; c++) {
            s[0][c] = __ldg(p + (size_t)sx * C + c);
            s[1][c] = __ldg(p + (size_t)x1 * C + c);
        }
    }
    if (C == 2 || C == 4) {
#pragma unroll
        for (int t = 0; t < 2; t++)
#pragma unroll
            for (int c = 0; c < C - 1; c++)
                s[t][c] = rs_premul(s[t][c], s[t][C - 1], (int)sizeof(T));
    }
}

/* One sample of a pass: (w0 a + w1 b + half) >> prec, clamped, as the reference rounds. */
template <typename T>
__device__ __forceinline__ unsigned di_lerp(unsigned a, unsigned b, int32_t w0, int32_t w1)
{
    typedef typename rs_acc<T>::type acc_t;
    return rs_round<T>(rs_half<T>() + (acc_t)a * w0 + (acc_t)b * w1);
}

template <typename T, int C>
__global__ void __launch_bounds__(DI_TX) resize_direct_kernel(rs_args a, int ry, int al8)
{
    const int prec = sizeof(T) == 2 ? RS_PREC16 : RS_PREC8;
    const int32_t one = (int32_t)1 << prec;
    __shared__ int ys[DI_RYMAX];
    __shared__ int32_t yw[DI_RYMAX];
    const int oy0 = blockIdx.y * ry, ny = min(ry, a.oh - oy0);
    if ((int)threadIdx.x < ny) {
        int32_t w;
        ys[threadIdx.x] = rs_interp_tap(oy0 + threadIdx.x, a.ih, a.oh, prec, &w);
        yw[threadIdx.x] = w;
    }
    __syncthreads();
    const int x = blockIdx.x * DI_TX + threadIdx.x;
    if (x >= a.ow)
        return;
    int32_t wx1;
    const int sx = rs_interp_tap(x, a.iw, a.ow, prec, &wx1), wx0 = one - wx1;
    const bool wide = al8 && (C * sx & ~7) + 16 <= C * a.iw;
    for (int y0 = 0; y0 < ny; y0 += DI_RU) {
        /* the loads of DI_RU output rows first, then their sums: all in flight at once */
        unsigned s[DI_RU][2][2][C];
#pragma unroll
        for (int u = 0; u < DI_RU; u++) {
            if (y0 + u < ny) {
                const int sy = ys[y0 + u];
#pragma unroll
                for (int r = 0; r < 2; r++) {
                    const int iy = min(sy + r, a.ih - 1);
                    di_taps<T, C>(a.in + (size_t)iy * a.in_pitch, sx, a.iw, wide, s[u][r]);
                }
            }
        }
#pragma unroll
        for (int u = 0; u < DI_RU; u++) {
            if (y0 + u < ny) {
                const int32_t wy1 = yw[y0 + u], wy0 = one - wy1;
                unsigned v[C];
#pragma unroll
                for (int c = 0; c < C; c++) {
                    const unsigned h0 = di_lerp<T>(s[u][0][0][c], s[u][0][1][c], wx0, wx1);
                    const unsigned h1 = di_lerp<T>(s[u][1][0][c], s[u][1][1][c], wx0, wx1);
                    v[c] = di_lerp<T>(h0, h1, wy0, wy1);
                }
                rs_store<T, C>(a.out + (size_t)(oy0 + y0 + u) * a.out_pitch, x, v);
            }
        }
    }
}

extern "C" int resize_direct_supports(const ts_job *job)
{
    return job->op->resize.mode == TS_RESIZE_CROP ||
           (job->out.width == job->in.width && job->out.height == job->in.height) ||
           job->op->resize.filter == TS_FILTER_INTERP;
}

template <typename T, int C>
static ts_status direct_launch(rs_plan *p, const ts_job *job)
{
    if (job->op->resize.filter != TS_FILTER_INTERP)
        return ts_fail(TS_ERR_UNSUPPORTED, "resize direct: the interp filter only");
    const rs_args &a = p->a;
    const int ry = di_rows(job->param);
    const int al8 = (((uintptr_t)a.in | a.in_pitch) & 7) == 0;
    dim3 grid(gpu_div_up((size_t)a.ow, DI_TX), gpu_div_up((size_t)a.oh, (unsigned)ry));
    if (grid.y > 65535)
        return ts_fail(TS_ERR_UNSUPPORTED, "resize direct: %d output rows", a.oh);
    resize_direct_kernel<T, C><<<grid, DI_TX, 0, job->stream>>>(a, ry, al8);
    LAUNCH_CHECK("resize_direct_kernel");
    return TS_OK;
}

/* opt's path for the interp filter (resize_opt.cu): the same launch on its plan. */
ts_status rs_direct_launch(rs_plan *p, const ts_job *job)
{
    return RS_PICK(direct_launch, job)(p, job);
}

/* The row needs no scratch and no tables: the plan is the images alone (a crop or an unchanged
 * size goes through rs_run, whose plan copies it). */
extern "C" ts_status resize_direct(const ts_job *job)
{
    const ts_image *in = &job->in, *out = &job->out;
    if (job->op->resize.mode == TS_RESIZE_CROP ||
        (out->width == in->width && out->height == in->height))
        return rs_run(job, RS_PICK(direct_launch, job));
    if (out->channels != in->channels || out->bytes != in->bytes)
        return ts_fail(TS_ERR_INVALID, "resize: output format differs from the input's");
    rs_plan p;
    memset(&p, 0, sizeof p);
    p.a.in = (const unsigned char *)in->data;
    p.a.in_pitch = in->pitch;
    p.a.out = (unsigned char *)out->data;
    p.a.out_pitch = out->pitch;
    p.a.iw = in->width, p.a.ih = in->height, p.a.ow = out->width, p.a.oh = out->height;
    return RS_PICK(direct_launch, job)(&p, job);
}
