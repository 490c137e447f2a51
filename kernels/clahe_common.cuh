/* clahe_common.cuh - what the CLAHE variants (clahe.cu, clahe_cluster.cu) share: the pixel shape
 * as template parameters and the switch that picks an instantiation, the value a pixel is
 * equalized by (gray, or the luma of colour), the block-wide LUT builder (clip, redistribute, scan,
 * exactly as clahe.h), the two blend kernels (LUTs from global memory or staged in shared memory)
 * and the scratch layout. Internal to kernels/.
 */
#ifndef CLAHE_COMMON_CUH
#define CLAHE_COMMON_CUH

#include "clahe.h"
#include "gpu_util.cuh"

#include <stdint.h>

extern __shared__ __align__(16) unsigned char clahe_dyn_smem[];
template <class T> __device__ __forceinline__ T *clahe_smem() { return reinterpret_cast<T *>(clahe_dyn_smem); }

/* ---------------------------------------------------------------- pixels */

/* The sample type and channel count of an image, as a switch over the four formats of each
 * depth calls f.template run<T, CH>(). */
template <class F> static ts_status clahe_dispatch(const ts_image &im, F &f)
{
    if (im.bytes == 1) {
        switch (im.channels) {
        case 1: return f.template run<uint8_t, 1>();
        case 2: return f.template run<uint8_t, 2>();
        case 3: return f.template run<uint8_t, 3>();
        default: return f.template run<uint8_t, 4>();
        }
    }
    switch (im.channels) {
    case 1: return f.template run<uint16_t, 1>();
    case 2: return f.template run<uint16_t, 2>();
    case 3: return f.template run<uint16_t, 3>();
    default: return f.template run<uint16_t, 4>();
    }
}

template <class T> __device__ __forceinline__ const T *clahe_row(const ts_image &im, int y)
{
    return (const T *)((const unsigned char *)im.data + (size_t)y * im.pitch);
}

/* The value CLAHE equalizes at pixel x of a row: the gray sample, or the luma of colour. */
template <class T, int CH> __device__ __forceinline__ unsigned clahe_value(const T *row, int x)
{
    if (CH < 3)
        return row[(size_t)x * CH];
    const T *p = row + (size_t)x * CH;
    return km_luma_of_sum(km_luma_sum(p[0], p[1], p[2]));
}

/* Writes pixel x of the output row: the equalized value v of the input pixel. */
template <class T, int CH>
__device__ __forceinline__ void clahe_store(const T *in_row, T *out_row, int x, unsigned v, int maxv)
{
    const T *p = in_row + (size_t)x * CH;
    T *q = out_row + (size_t)x * CH;
    if (CH < 3) {
        q[0] = (T)v;
    } else {
        int32_t s = km_luma_sum(p[0], p[1], p[2]);
#pragma unroll
        for (int c = 0; c < 3; c++)
            q[c] = (T)km_luma_apply(p[c], s, v, maxv);
    }
    if (CH == 2 || CH == 4)
        q[CH - 1] = p[CH - 1];
}

/* Calls f(value) for every pixel of padded row segment [x0, x0 + tw) of image row `row`, the
 * lanes of a warp along it: gray rows inside the image in 16-byte loads (16 or 8 values a lane),
 * colour and the reflected columns past the right edge one pixel a lane. */
template <class T, int CH, class F>
__device__ __forceinline__ void clahe_walk_row(const T *row, const clahe_geom &g, int x0, F &&f)
{
    const int lane = threadIdx.x & 31, xe = x0 + g.tw < g.w ? x0 + g.tw : g.w;
    if (CH == 1 && x0 < xe) {
        const size_t b = (size_t)(row + x0), e = (size_t)(row + xe);
        size_t a = (b + 15) & ~(size_t)15, z = e & ~(size_t)15;
        if (a > e)
            a = e;
        if (z < a)
            z = a;
        const int nh = (int)((a - b) / sizeof(T)), t0 = (int)((z - (size_t)row) / sizeof(T));
        for (int c = lane; c < nh; c += 32)
            f((unsigned)row[x0 + c]);
        for (const uint4 *p = (const uint4 *)a + lane; (size_t)p < z; p += 32) {
            uint4 q = *p;
            const unsigned w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
            for (int k = 0; k < 4; k++) {
                if (sizeof(T) == 1) {
                    f(w[k] & 0xffu);
                    f((w[k] >> 8) & 0xffu);
                    f((w[k] >> 16) & 0xffu);
                    f(w[k] >> 24);
                } else {
                    f(w[k] & 0xffffu);
                    f(w[k] >> 16);
                }
            }
        }
        for (int c = t0 + lane; c < xe; c += 32)
            f((unsigned)row[c]);
    } else {
        for (int c = x0 + lane; c < xe; c += 32)
            f(clahe_value<T, CH>(row, c));
    }
    for (int c = (x0 > g.w ? x0 : g.w) + lane; c < x0 + g.tw; c += 32)
        f(clahe_value<T, CH>(row, clahe_reflect(c, g.w)));
}

/* Calls f(value) for every padded pixel of tile (i, j) whose rows are r0, r0 + step, ... (< th):
 * a warp a row. */
template <class T, int CH, class F>
__device__ __forceinline__ void clahe_walk_tile(const ts_image &in, const clahe_geom &g, int i,
                                                int j, int r0, int step, F &&f)
{
    for (int r = r0; r < g.th; r += step)
        clahe_walk_row<T, CH>(clahe_row<T>(in, clahe_reflect(j * g.th + r, g.h)), g, i * g.tw, f);
}

/* ---------------------------------------------------------------- scratch */

/* Device scratch of a job: LUTs (u16, tiles x bins), then histograms (u32, tiles x bins) and one
 * counter a tile, for the variants that count in global memory. */
struct clahe_bufs {
    uint16_t *lut;
    uint32_t *hist;
    uint32_t *count;
};

static inline size_t clahe_lut_bytes(const clahe_geom &g)
{
    return (size_t)g.tx * g.ty * g.bins * sizeof(uint16_t);
}
static inline size_t clahe_hist_bytes(const clahe_geom &g)
{
    return (size_t)g.tx * g.ty * (g.bins + 1) * sizeof(uint32_t);
}

static inline clahe_bufs clahe_bufs_of(const ts_job *job, const clahe_geom &g)
{
    clahe_bufs s;
    s.lut = (uint16_t *)job->scratch;
    s.hist = (uint32_t *)((char *)job->scratch + ((clahe_lut_bytes(g) + 255) & ~(size_t)255));
    s.count = s.hist + (size_t)g.tx * g.ty * g.bins;
    return s;
}

static inline size_t clahe_scratch_bytes(const clahe_geom &g, int with_hist)
{
    return ((clahe_lut_bytes(g) + 255) & ~(size_t)255) + (with_hist ? clahe_hist_bytes(g) : 0);
}

static inline clahe_geom clahe_geom_of(const ts_job *job)
{
    clahe_geom g;
    clahe_geom_init(&g, &job->op->clahe, job->in.width, job->in.height, job->in.bytes);
    return g;
}

static inline int clahe_shape_ok(const ts_job *job)
{
    return job->op && job->op->kind == TS_OP_CLAHE && job->in.channels >= 1 &&
           job->in.channels <= 4 && (job->in.bytes == 1 || job->in.bytes == 2) &&
           job->op->clahe.tiles_x >= 1 && job->op->clahe.tiles_y >= 1 &&
           job->op->clahe.tiles_x <= TS_CLAHE_MAX_TILES && job->op->clahe.tiles_y <= TS_CLAHE_MAX_TILES;
}

/* ---------------------------------------------------------------- the LUT of one tile */

/* Inclusive sum over the block of v (blockDim.x a multiple of 32, <= 1024); `sh` holds 33
 * words of shared memory; *total gets the block's sum. Every thread must call it. */
__device__ __forceinline__ unsigned clahe_block_scan(unsigned v, unsigned *sh, unsigned *total)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        unsigned o = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d)
            v += o;
    }
    if (lane == 31)
        sh[warp] = v;
    __syncthreads();
    if (warp == 0) {
        unsigned t = lane < nw ? sh[lane] : 0;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            unsigned o = __shfl_up_sync(0xffffffffu, t, d);
            if (lane >= d)
                t += o;
        }
        if (lane < nw)
            sh[lane] = t;
        if (lane == 31)
            sh[32] = t;
    }
    __syncthreads();
    unsigned r = v + (warp ? sh[warp - 1] : 0);
    *total = sh[32];
    __syncthreads(); /* sh is reused by the next call */
    return r;
}

/* The clipped count of bins [0, n) of a histogram slice (the block's sum). */
__device__ __forceinline__ unsigned clahe_block_clipped(const uint32_t *hist, int n, int clip,
                                                        unsigned *sh)
{
    unsigned c = 0, total;
    if (clip > 0)
        for (int i = threadIdx.x; i < n; i += blockDim.x)
            c += hist[i] > (unsigned)clip ? hist[i] - (unsigned)clip : 0u;
    clahe_block_scan(c, sh, &total);
    return total;
}

/* The count of bin `bin` (global index `gi`) after the clip and the redistribution. */
__device__ __forceinline__ unsigned clahe_adjusted(unsigned h, int gi, int clip, const clahe_spread &s)
{
    if (clip <= 0)
        return h;
    return (h > (unsigned)clip ? (unsigned)clip : h) + (unsigned)clahe_extra(&s, gi);
}

/* The sum of the adjusted counts of a slice (block-wide). */
__device__ __forceinline__ unsigned clahe_block_slice_sum(const uint32_t *hist, int n, int first,
                                                          int clip, const clahe_spread &s, unsigned *sh)
{
    unsigned c = 0, total;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        c += clahe_adjusted(hist[i], first + i, clip, s);
    clahe_block_scan(c, sh, &total);
    return total;
}

/* The LUT entries [first, first + n) from the slice hist[0, n), the cdf before the slice being
 * `carry`: in rounds of blockDim.x bins, coalesced and free of bank conflicts. */
__device__ __forceinline__ void clahe_block_lut_slice(const uint32_t *hist, int n, int first,
                                                      unsigned carry, const clahe_geom &g,
                                                      const clahe_spread &s, uint16_t *lut,
                                                      unsigned *sh)
{
    for (int base = 0; base < n; base += blockDim.x) {
        int i = base + threadIdx.x;
        unsigned a = i < n ? clahe_adjusted(hist[i], first + i, g.clip, s) : 0u, total;
        unsigned incl = clahe_block_scan(a, sh, &total);
        if (i < n)
            lut[first + i] = (uint16_t)clahe_lut_value((long long)(carry + incl), g.scale, g.maxv);
        carry += total;
    }
}

/* The whole LUT of one tile from its histogram (global or shared), by one block. */
__device__ __forceinline__ void clahe_block_lut(const uint32_t *hist, const clahe_geom &g,
                                                uint16_t *lut, unsigned *sh)
{
    unsigned clipped = clahe_block_clipped(hist, g.bins, g.clip, sh);
    clahe_spread s = clahe_spread_of((long long)clipped, g.bins);
    clahe_block_lut_slice(hist, g.bins, 0, 0u, g, s, lut, sh);
}

/* ---------------------------------------------------------------- the blend */

/* One thread a pixel, the four LUT entries read from global memory (L2). */
template <class T, int CH>
__global__ void clahe_apply_kernel(ts_image in, ts_image out, clahe_geom g, const uint16_t *lut)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= g.w)
        return;
    clahe_axis ax = clahe_axis_of(x, g.inv_tw, g.tx);
    for (int y = blockIdx.y; y < g.h; y += gridDim.y) {
        clahe_axis ay = clahe_axis_of(y, g.inv_th, g.ty);
        const T *row = clahe_row<T>(in, y);
        unsigned v = clahe_value<T, CH>(row, x);
        const uint16_t *l1 = lut + (size_t)ay.t1 * g.tx * g.bins, *l2 = lut + (size_t)ay.t2 * g.tx * g.bins;
        size_t a = (size_t)ax.t1 * g.bins + v, b = (size_t)ax.t2 * g.bins + v;
        unsigned r = clahe_blend(l1[a], l1[b], l2[a], l2[b], ax.a, ay.a, g.maxv);
        clahe_store<T, CH>(row, (T *)((unsigned char *)out.data + (size_t)y * out.pitch), x, r, g.maxv);
    }
}

/* 8-bit: every tile's LUT staged once a block as bytes in shared memory; a block walks rows with
 * a grid stride, each thread 16 neighbouring pixels whose horizontal weights stay in registers
 * (gray: one 16-byte load and store). */
#define CLAHE_APPLY_PX 16
template <int CH>
__global__ void __launch_bounds__(256)
    clahe_apply_smem_kernel(ts_image in, ts_image out, clahe_geom g, const uint16_t *lut)
{
    uint8_t *sl = clahe_smem<uint8_t>();
    const int n = g.tx * g.ty * 256;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        sl[i] = (uint8_t)lut[i];
    __syncthreads();
    const int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * CLAHE_APPLY_PX;
    if (x0 >= g.w)
        return;
    int o1[CLAHE_APPLY_PX], o2[CLAHE_APPLY_PX];
    float xa[CLAHE_APPLY_PX];
#pragma unroll
    for (int k = 0; k < CLAHE_APPLY_PX; k++) {
        clahe_axis ax = clahe_axis_of(x0 + k, g.inv_tw, g.tx);
        o1[k] = ax.t1 * 256;
        o2[k] = ax.t2 * 256;
        xa[k] = ax.a;
    }
    const bool full = x0 + CLAHE_APPLY_PX <= g.w;
    for (int y = blockIdx.y; y < g.h; y += gridDim.y) {
        clahe_axis ay = clahe_axis_of(y, g.inv_th, g.ty);
        const uint8_t *l1 = sl + ay.t1 * g.tx * 256, *l2 = sl + ay.t2 * g.tx * 256;
        const uint8_t *row = clahe_row<uint8_t>(in, y);
        uint8_t *orow = (uint8_t *)out.data + (size_t)y * out.pitch;
        if (CH == 1 && full && (((size_t)(row + x0) | (size_t)(orow + x0)) & 15) == 0) {
            uint4 p = *(const uint4 *)(row + x0), q;
            const unsigned *pw = &p.x;
            unsigned *qw = &q.x;
#pragma unroll
            for (int w = 0; w < 4; w++) {
                unsigned r = 0;
#pragma unroll
                for (int s = 0; s < 4; s++) {
                    const int k = w * 4 + s, v = (int)((pw[w] >> (8 * s)) & 0xffu);
                    unsigned b = clahe_blend(l1[o1[k] + v], l1[o2[k] + v], l2[o1[k] + v],
                                             l2[o2[k] + v], xa[k], ay.a, 255);
                    r |= b << (8 * s);
                }
                qw[w] = r;
            }
            *(uint4 *)(orow + x0) = q;
            continue;
        }
#pragma unroll
        for (int k = 0; k < CLAHE_APPLY_PX; k++) {
            if (x0 + k >= g.w)
                break;
            int v = (int)clahe_value<uint8_t, CH>(row, x0 + k);
            unsigned r = clahe_blend(l1[o1[k] + v], l1[o2[k] + v], l2[o1[k] + v], l2[o2[k] + v],
                                     xa[k], ay.a, 255);
            clahe_store<uint8_t, CH>(row, orow, x0 + k, r, 255);
        }
    }
}

/* 8-bit, the fast blend: a "cell" (cx, cy), 0..tx x 0..ty, is the pair of tile columns and the
 * pair of tile rows between two tile centres; for each value v it holds the four LUT bytes a
 * pixel there blends, packed in one u32, so a pixel costs one shared-memory load instead of four.
 * The bytes become floats exactly by the 2^23 trick (0x4B000000 | b is 2^23 + b) and the result
 * rounds half to even by adding 1.5 * 2^23, the rounding rintf does: the same value as
 * clahe_blend, with no integer-float conversion instructions (quarter rate). A thread does 8
 * neighbouring pixels of 4 rows (gray: 8-byte loads, the 4 loads in flight together). */
#define CLAHE_PK_PX 8
#define CLAHE_PK_ROWS 4
#define CLAHE_PK_THREADS 512

__device__ __forceinline__ float clahe_byte_f(unsigned p, int k)
{
    return __fsub_rn(__uint_as_float(0x4B000000u | ((p >> (8 * k)) & 0xffu)), 8388608.0f);
}

__device__ __forceinline__ unsigned clahe_blend_packed(unsigned p, float xa, float xa1, float ya,
                                                       float ya1)
{
    float top = __fadd_rn(__fmul_rn(clahe_byte_f(p, 0), xa1), __fmul_rn(clahe_byte_f(p, 1), xa));
    float bot = __fadd_rn(__fmul_rn(clahe_byte_f(p, 2), xa1), __fmul_rn(clahe_byte_f(p, 3), xa));
    float r = __fadd_rn(__fmul_rn(top, ya1), __fmul_rn(bot, ya));
    unsigned q = __float_as_uint(__fadd_rn(r, 12582912.0f)) - 0x4B400000u;
    return q > 255u ? 255u : q;
}

template <int CH>
__global__ void __launch_bounds__(CLAHE_PK_THREADS)
    clahe_apply_packed_kernel(ts_image in, ts_image out, clahe_geom g, const uint16_t *lut)
{
    uint32_t *cells = clahe_smem<uint32_t>();
    const int cw = g.tx + 1, n = cw * (g.ty + 1) * 256;
    for (int e = threadIdx.x; e < n; e += blockDim.x) {
        int c = e >> 8, v = e & 255, cx = c % cw, cy = c / cw;
        int x1 = cx > 0 ? cx - 1 : 0, x2 = cx < g.tx ? cx : g.tx - 1;
        int y1 = cy > 0 ? cy - 1 : 0, y2 = cy < g.ty ? cy : g.ty - 1;
        const uint16_t *r1 = lut + (size_t)y1 * g.tx * 256, *r2 = lut + (size_t)y2 * g.tx * 256;
        cells[e] = (uint32_t)r1[x1 * 256 + v] | (uint32_t)r1[x2 * 256 + v] << 8 |
                   (uint32_t)r2[x1 * 256 + v] << 16 | (uint32_t)r2[x2 * 256 + v] << 24;
    }
    __syncthreads();
    const int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * CLAHE_PK_PX;
    if (x0 >= g.w)
        return;
    int co[CLAHE_PK_PX];
    float xa[CLAHE_PK_PX], xa1[CLAHE_PK_PX];
#pragma unroll
    for (int k = 0; k < CLAHE_PK_PX; k++) {
        clahe_axis ax = clahe_axis_of(x0 + k < g.w ? x0 + k : g.w - 1, g.inv_tw, g.tx);
        co[k] = ax.cell * 256;
        xa[k] = ax.a;
        xa1[k] = __fsub_rn(1.0f, ax.a);
    }
    const bool vec = CH == 1 && x0 + CLAHE_PK_PX <= g.w && ((in.pitch | out.pitch) & 7) == 0 &&
                     (((size_t)in.data | (size_t)out.data) & 7) == 0;
    for (int y0 = blockIdx.y * CLAHE_PK_ROWS; y0 < g.h; y0 += gridDim.y * CLAHE_PK_ROWS) {
        if (vec) {
            uint2 p[CLAHE_PK_ROWS];
#pragma unroll
            for (int r = 0; r < CLAHE_PK_ROWS; r++)
                if (y0 + r < g.h)
                    p[r] = *(const uint2 *)(clahe_row<uint8_t>(in, y0 + r) + x0);
#pragma unroll
            for (int r = 0; r < CLAHE_PK_ROWS; r++) {
                const int y = y0 + r;
                if (y >= g.h)
                    break;
                clahe_axis ay = clahe_axis_of(y, g.inv_th, g.ty);
                const float ya1 = __fsub_rn(1.0f, ay.a);
                const uint32_t *cr = cells + ay.cell * cw * 256;
                const unsigned pw[2] = {p[r].x, p[r].y};
                unsigned q[2];
#pragma unroll
                for (int w = 0; w < 2; w++) {
                    unsigned o = 0;
#pragma unroll
                    for (int s2 = 0; s2 < 4; s2++) {
                        const int k = w * 4 + s2;
                        unsigned b = clahe_blend_packed(cr[co[k] + ((pw[w] >> (8 * s2)) & 0xffu)],
                                                        xa[k], xa1[k], ay.a, ya1);
                        o |= b << (8 * s2);
                    }
                    q[w] = o;
                }
                *(uint2 *)((uint8_t *)out.data + (size_t)y * out.pitch + x0) = make_uint2(q[0], q[1]);
            }
            continue;
        }
        for (int r = 0; r < CLAHE_PK_ROWS && y0 + r < g.h; r++) {
            const int y = y0 + r;
            clahe_axis ay = clahe_axis_of(y, g.inv_th, g.ty);
            const float ya1 = __fsub_rn(1.0f, ay.a);
            const uint32_t *cr = cells + ay.cell * cw * 256;
            const uint8_t *row = clahe_row<uint8_t>(in, y);
            uint8_t *orow = (uint8_t *)out.data + (size_t)y * out.pitch;
#pragma unroll
            for (int k = 0; k < CLAHE_PK_PX; k++) {
                if (x0 + k >= g.w)
                    break;
                unsigned v = clahe_value<uint8_t, CH>(row, x0 + k);
                unsigned b = clahe_blend_packed(cr[co[k] + v], xa[k], xa1[k], ay.a, ya1);
                clahe_store<uint8_t, CH>(row, orow, x0 + k, b, 255);
            }
        }
    }
}

static inline size_t clahe_packed_bytes(const clahe_geom &g, const ts_device *dev)
{
    size_t n = (size_t)(g.tx + 1) * (g.ty + 1) * 256 * sizeof(uint32_t);
    if (g.bins != 256 || !dev || n > dev->smem_per_block_optin)
        return 0;
    return n;
}

/* Bytes of shared memory the staged blend needs, 0 when it cannot run (16-bit, too many tiles). */
static inline size_t clahe_apply_smem_bytes(const clahe_geom &g, const ts_device *dev)
{
    size_t n = (size_t)g.tx * g.ty * 256;
    if (g.bins != 256 || !dev || n > dev->smem_per_block_optin)
        return 0;
    return n;
}

/* The blend of a job whose LUTs are in `lut`: staged in shared memory where `staged` and it
 * fits, else from global memory. */
struct ClaheApply {
    const ts_job *job;
    clahe_geom g;
    const uint16_t *lut;
    int staged;
    template <class T, int CH> ts_status run()
    {
        cudaStream_t st = (cudaStream_t)job->stream;
        /* staged LUTs pay for gray only: a colour pixel's samples are 3-4 bytes apart, and the
         * one-pixel-a-thread kernel reads them coalesced (H100, 8K RGB8: 0.32 ms against 0.97) */
        size_t pk = staged && CH == 1 ? clahe_packed_bytes(g, job->dev) : 0;
        if (sizeof(T) == 1 && pk) {
            void (*k)(ts_image, ts_image, clahe_geom, const uint16_t *) = clahe_apply_packed_kernel<CH>;
            ts_status s = gpu_allow_smem((const void *)k, pk);
            int per_sm = 1;
            if (s == TS_OK)
                s = gpu_blocks_per_sm((const void *)k, CLAHE_PK_THREADS, pk, "clahe blend", &per_sm);
            if (s != TS_OK)
                return s;
            unsigned gx = gpu_div_up((size_t)g.w, CLAHE_PK_THREADS * CLAHE_PK_PX);
            long long rows = (g.h + CLAHE_PK_ROWS - 1) / CLAHE_PK_ROWS;
            long long want = (long long)(job->dev->sms > 0 ? job->dev->sms : 132) * per_sm / gx;
            unsigned gy = (unsigned)(want < 1 ? 1 : want > rows ? rows : want > 65535 ? 65535 : want);
            k<<<dim3(gx, gy), CLAHE_PK_THREADS, pk, st>>>(job->in, job->out, g, lut);
            LAUNCH_CHECK("clahe_apply_packed_kernel");
            return TS_OK;
        }
        size_t smem = staged && CH == 1 ? clahe_apply_smem_bytes(g, job->dev) : 0;
        if (sizeof(T) == 1 && smem) {
            void (*k)(ts_image, ts_image, clahe_geom, const uint16_t *) = clahe_apply_smem_kernel<CH>;
            ts_status s = gpu_allow_smem((const void *)k, smem);
            if (s != TS_OK)
                return s;
            unsigned gx = gpu_div_up((size_t)g.w, 256 * CLAHE_APPLY_PX);
            long long want = (long long)(job->dev->sms > 0 ? job->dev->sms : 132) * 8 / gx;
            unsigned gy = (unsigned)(want < 1 ? 1 : want > g.h ? g.h : want > 65535 ? 65535 : want);
            k<<<dim3(gx, gy), 256, smem, st>>>(job->in, job->out, g, lut);
            LAUNCH_CHECK("clahe_apply_smem_kernel");
            return TS_OK;
        }
        unsigned gy = (unsigned)(g.h > 65535 ? 65535 : g.h);
        clahe_apply_kernel<T, CH><<<dim3(gpu_div_up((size_t)g.w, 128), gy), 128, 0, st>>>(
            job->in, job->out, g, lut);
        LAUNCH_CHECK("clahe_apply_kernel");
        return TS_OK;
    }
};

#endif /* CLAHE_COMMON_CUH */
