/* resize_direct.cu - the `direct` row of the resize ladder: the interp filter (OpenCV's
 * INTER_LINEAR: two taps an axis whatever the scale, no antialiasing) with no weight tables at
 * all, opt's choice for that filter at whole factors (the even kernel below) and at other
 * reductions of 3x and more (below 3x its staged tile is slower than mmai's pipeline on the
 * tables: tools/results/nvidia-h100-resize-2026-11-26.md).
 *
 * The other rows read their weights from tables the host builds and uploads into the job's
 * scratch; for two taps an axis that upload (a pageable copy the host waits on) and the table
 * reads cost more than the arithmetic. Here the taps are computed in the kernel
 * (rs_interp_tap: exact integers, the reference's). Only the input rows the outputs sample are
 * read: at a 4x reduction half the rows, so the kernel moves less than a copy of the image.
 *   staged (the default elsewhere): a block makes a tile of TX columns x RY rows; it stages the 2 RY input
 *     rows its rows sample, over the span of bytes its columns read, in shared memory with
 *     16-byte loads (whole sectors, coalesced), then each thread makes its column's outputs
 *     from there: 8-bit taps by two aligned 64-bit shared loads shifted into place;
 *   gather (param 5, and where the span does not fit or the image is not 16-byte aligned): a
 *     thread per output column loads its taps from global memory itself, DI_RU rows at a time.
 *   even (resize_direct_even.cu; the default where it applies): whole factors on both axes.
 * Both passes round as the reference does (horizontal per input row, then vertical), alpha
 * premultiplied per tap and unpremultiplied at the store: bit-identical to ref_resize.c.
 * job->param 1..4 picks the output rows of a staged tile (4, 8, 16, 2; default 8), 5 gather;
 * 6..10 the even kernel's forms (resize_direct_even.cu); where even does not apply, 0 and 6..10
 * take the staged tile.
 */
#include "resize_gpu.cuh"
#include "variants.h"

#include <string.h>

/* ---------------------------------------------------------------- gather */

#define DI_TX 128   /* output columns a block: a thread each */
#define DI_RU 4     /* output rows a thread loads at once (16 loads in flight, 8-bit) */
#define DI_RY 8     /* output rows a block */

/* The two 8-bit taps' C bytes each from the aligned 64-bit words lo, hi, starting o bytes in. */
template <int C>
__device__ __forceinline__ void di_unpack8(unsigned long long lo, unsigned long long hi, int o,
                                           unsigned (&s)[2][C])
{
    const unsigned long long v = o ? (lo >> (8 * o)) | (hi << (64 - 8 * o)) : lo;
#pragma unroll
    for (int t = 0; t < 2; t++)
#pragma unroll
        for (int c = 0; c < C; c++)
            s[t][c] = (unsigned)(v >> (8 * (C * t + c))) & 255u;
}

/* The two taps (sx, sx + 1) of row `row`, channel c of tap t in s[t][c], premultiplied where the
 * image has alpha. wide: the 16 bytes from sx's aligned 8-byte word lie inside the row. */
template <typename T, int C>
__device__ __forceinline__ void di_taps(const unsigned char *row, int sx, int iw, bool wide,
                                        unsigned (&s)[2][C])
{
    if (sizeof(T) == 1 && wide) {
        const int b = C * sx, base = b & ~7;
        const unsigned long long *p = (const unsigned long long *)(row + base);
        di_unpack8<C>(__ldg(p), __ldg(p + 1), b - base, s);
    } else {
        const T *p = (const T *)row;
        const int x1 = min(sx + 1, iw - 1);
#pragma unroll
        for (int c = 0; c < C; c++) {
            s[0][c] = __ldg(p + (size_t)sx * C + c);
            s[1][c] = __ldg(p + (size_t)x1 * C + c);
        }
    }
    di_premul<T, C>(s);
}

template <typename T, int C>
__global__ void __launch_bounds__(DI_TX) resize_direct_kernel(rs_args a, int ry, int al8)
{
    const int prec = sizeof(T) == 2 ? RS_PREC16 : RS_PREC8;
    const int32_t one = (int32_t)1 << prec;
    __shared__ int ys[DI_RY];
    __shared__ int32_t yw[DI_RY];
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

/* ---------------------------------------------------------------- staged */

#define DS_THREADS 256
#define DS_RYMAX 16          /* output rows a tile, at most */
#define DS_SMEM (48 * 1024 - 256) /* the default per-block limit (no opt-in needed), less the
                                    kernel's static arrays: 49,088 + 136 bytes failed to launch */

/* The taps of the staged row at `row` (shared memory, 16-byte aligned), sx's bytes at off:
 * 8-bit by the two aligned 64-bit words around them, 16-bit by element; premultiplied. */
template <typename T, int C>
__device__ __forceinline__ void ds_taps(const unsigned char *row, int off, int off1,
                                        unsigned (&s)[2][C])
{
    if (sizeof(T) == 1) {
        const int base = off & ~7;
        di_unpack8<C>(*(const unsigned long long *)(row + base),
                      *(const unsigned long long *)(row + base + 8), off - base, s);
    } else {
        const T *p0 = (const T *)(row + off), *p1 = (const T *)(row + off1);
#pragma unroll
        for (int c = 0; c < C; c++) {
            s[0][c] = p0[c];
            s[1][c] = p1[c];
        }
    }
    di_premul<T, C>(s);
}

template <typename T, int C>
__global__ void __launch_bounds__(DS_THREADS)
    resize_direct_staged_kernel(rs_args a, int tx, int ry, int rstride)
{
    constexpr int PB = C * (int)sizeof(T); /* bytes a pixel */
    const int prec = sizeof(T) == 2 ? RS_PREC16 : RS_PREC8;
    const int32_t one = (int32_t)1 << prec;
    extern __shared__ __align__(16) unsigned char sm[]; /* [2 ry][rstride]: rows sy, sy + 1 */
    __shared__ int ys[DS_RYMAX], xs[2];
    __shared__ int32_t yw[DS_RYMAX];
    const int tid = threadIdx.x;
    const int x0 = blockIdx.x * tx, nx = min(tx, a.ow - x0);
    const int y0 = blockIdx.y * ry, ny = min(ry, a.oh - y0);
    int32_t w;
    if (tid < ny) {
        ys[tid] = rs_interp_tap(y0 + tid, a.ih, a.oh, prec, &w);
        yw[tid] = w;
    }
    if (tid == DS_THREADS - 1)
        xs[0] = rs_interp_tap(x0, a.iw, a.ow, prec, &w);
    if (tid == DS_THREADS - 33)
        xs[1] = rs_interp_tap(x0 + nx - 1, a.iw, a.ow, prec, &w);
    const int xl = tid % tx;
    int32_t wx1 = 0;
    const int sx = xl < nx ? rs_interp_tap(x0 + xl, a.iw, a.ow, prec, &wx1) : 0;
    __syncthreads();
    /* the span of bytes the tile's columns read, from a 16-byte boundary, in every staged row */
    const int rowbytes = PB * a.iw, lo = (PB * xs[0]) & ~15, hi = PB * min(xs[1] + 2, a.iw);
    const int nch = (hi - lo + 15) >> 4;
    for (int i = tid; i < 2 * ny * nch; i += DS_THREADS) {
        const int r = i / nch, j = i - r * nch, b0 = lo + 16 * j;
        const int iy = min(ys[r >> 1] + (r & 1), a.ih - 1);
        const unsigned char *src = a.in + (size_t)iy * a.in_pitch + b0;
        unsigned char *dst = sm + (size_t)r * rstride + 16 * j;
        if (b0 + 16 <= rowbytes) {
            *(uint4 *)dst = __ldg((const uint4 *)src);
        } else {
            for (int b = 0; b < 16 && b0 + b < rowbytes; b++)
                dst[b] = __ldg(src + b);
        }
    }
    __syncthreads();
    if (xl >= nx)
        return;
    const int off = PB * sx - lo, off1 = PB * min(sx + 1, a.iw - 1) - lo;
    const int32_t wx0 = one - wx1;
    for (int yl = tid / tx; yl < ny; yl += DS_THREADS / tx) {
        unsigned s[2][2][C];
#pragma unroll
        for (int r = 0; r < 2; r++)
            ds_taps<T, C>(sm + (size_t)(2 * yl + r) * rstride, off, off1, s[r]);
        const int32_t wy1 = yw[yl], wy0 = one - wy1;
        unsigned v[C];
#pragma unroll
        for (int c = 0; c < C; c++) {
            const unsigned h0 = di_lerp<T>(s[0][0][c], s[0][1][c], wx0, wx1);
            const unsigned h1 = di_lerp<T>(s[1][0][c], s[1][1][c], wx0, wx1);
            v[c] = di_lerp<T>(h0, h1, wy0, wy1);
        }
        rs_store<T, C>(a.out + (size_t)(y0 + yl) * a.out_pitch, x0 + xl, v);
    }
}

/* The staged tile for the job: columns (256 for pixels of 1-2 bytes, else 128), rows (param),
 * the stride of a staged row (from a bound on the span any tile's columns read); 0 where it
 * does not apply (param 5, unaligned input, a span too wide for shared memory). */
static int ds_plan(const rs_args &a, int pb, int param, int *tx, int *ry, int *rstride)
{
    static const int rys[] = {8, 4, 8, 16, 2};
    if (param == 5 || (((uintptr_t)a.in | a.in_pitch) & 15) != 0)
        return 0;
    *tx = pb <= 2 ? 256 : 128;
    *ry = param >= 1 && param <= 4 ? rys[param] : rys[0];
    double px = ceil((*tx - 1) * (double)a.iw / a.ow) + 3; /* pixels from sx of the first */
    *rstride = 16 * ((int)ceil((pb * px + 15) / 16.0) + 2);
    while (*ry > 1 && 2 * (size_t)*ry * *rstride > DS_SMEM)
        *ry /= 2;
    return 2 * (size_t)*ry * *rstride <= DS_SMEM;
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
    if ((job->param == 0 || job->param >= 6) && rs_direct_even(a, (int)sizeof(T)))
        return rs_direct_even_launch(a, (int)sizeof(T), C, job->param, job->dev, job->stream);
    int tx, ry, rstride;
    if (ds_plan(a, C * (int)sizeof(T), job->param, &tx, &ry, &rstride)) {
        dim3 grid(gpu_div_up((size_t)a.ow, (unsigned)tx), gpu_div_up((size_t)a.oh, (unsigned)ry));
        if (grid.y > 65535)
            return ts_fail(TS_ERR_UNSUPPORTED, "resize direct: %d output rows", a.oh);
        resize_direct_staged_kernel<T, C>
            <<<grid, DS_THREADS, 2 * (size_t)ry * rstride, job->stream>>>(a, tx, ry, rstride);
        LAUNCH_CHECK("resize_direct_staged_kernel");
        return TS_OK;
    }
    ry = DI_RY;
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
