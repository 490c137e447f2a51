/* clahe_common.cuh - what the CLAHE variants (clahe.cu, clahe_cluster.cu) share: the pixel shape
 * as template parameters and the switch that picks an instantiation, the value a pixel is
 * equalized by (gray, or the luma of colour), the block-wide LUT builder (clip, redistribute, scan,
 * exactly as clahe.h) that also writes the blend's cells, the blend kernels (four LUT entries
 * from global memory; one cell entry from global memory; gray8 in strips by bands of rows with
 * their cells in shared memory, launched as a dependent of the histogram kernel on sm_90) and the
 * scratch layout. Internal to kernels/.
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
 * counter a tile, for the variants that count in global memory, then the blend's cells (see
 * clahe_put_cells) for the variants that blend from them. */
struct clahe_bufs {
    uint16_t *lut;
    uint32_t *hist;
    uint32_t *count;
    void *cells; /* NULL: the blend reads the four LUTs */
};

/* 16-bit cells are 8 bytes a value, 512 KB a cell (42 MB for 8 x 8 tiles): past this the blend
 * reads the four LUTs instead. */
#define CLAHE_CELLS16_MAX ((size_t)64 << 20)

static inline size_t clahe_lut_bytes(const clahe_geom &g)
{
    return (size_t)g.tx * g.ty * g.bins * sizeof(uint16_t);
}
static inline size_t clahe_hist_bytes(const clahe_geom &g)
{
    return (size_t)g.tx * g.ty * (g.bins + 1) * sizeof(uint32_t);
}
static inline size_t clahe_cells_bytes(const clahe_geom &g)
{
    size_t n = (size_t)(g.tx + 1) * (g.ty + 1) * g.bins * 4 * (g.bins == 256 ? 1 : 2);
    return g.bins == 256 || n <= CLAHE_CELLS16_MAX ? n : 0;
}
static inline size_t clahe_align256(size_t n) { return (n + 255) & ~(size_t)255; }

static inline clahe_bufs clahe_bufs_of(const ts_job *job, const clahe_geom &g, int with_hist,
                                       int with_cells)
{
    clahe_bufs s;
    char *p = (char *)job->scratch;
    s.lut = (uint16_t *)p;
    p += clahe_align256(clahe_lut_bytes(g));
    s.hist = with_hist ? (uint32_t *)p : NULL;
    s.count = with_hist ? s.hist + (size_t)g.tx * g.ty * g.bins : NULL;
    p += with_hist ? clahe_align256(clahe_hist_bytes(g)) : 0;
    s.cells = with_cells && clahe_cells_bytes(g) ? (void *)p : NULL;
    return s;
}

static inline size_t clahe_scratch_bytes(const clahe_geom &g, int with_hist, int with_cells)
{
    return clahe_align256(clahe_lut_bytes(g)) + (with_hist ? clahe_align256(clahe_hist_bytes(g)) : 0) +
           (with_cells ? clahe_cells_bytes(g) : 0);
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

/* The blend's cells: cell (cx, cy), cx in 0..tx and cy in 0..ty, is the region between two tile
 * centres across and two down; a pixel there blends the LUTs of tiles x1 = max(cx - 1, 0),
 * x2 = min(cx, tx - 1) (likewise y1, y2). For each value v a cell keeps the four entries packed
 * together, at positions 0: (x1, y1), 1: (x2, y1), 2: (x1, y2), 3: (x2, y2): 8-bit bytes of a u32,
 * 16-bit u16s of 8 bytes. So the blend reads one entry a pixel, not four. Tile (i, j) feeds the
 * cells cx in {i, i + 1}, cy in {j, j + 1} (the edge ones at two positions): it writes its own
 * entries there once its LUT is known, and every position has one writer. */
__device__ __forceinline__ void clahe_put_cells(void *cells, const clahe_geom &g, int ti, int tj,
                                                int v, unsigned val)
{
    const int cw = g.tx + 1;
#pragma unroll
    for (int dy = 0; dy < 2; dy++) {
        const int cy = tj + dy, y1 = cy > 0 ? cy - 1 : 0, y2 = cy < g.ty ? cy : g.ty - 1;
#pragma unroll
        for (int dx = 0; dx < 2; dx++) {
            const int cx = ti + dx, x1 = cx > 0 ? cx - 1 : 0, x2 = cx < g.tx ? cx : g.tx - 1;
            const size_t e = ((size_t)(cy * cw + cx) * g.bins + v) * 4;
            const bool at[4] = {y1 == tj && x1 == ti, y1 == tj && x2 == ti, y2 == tj && x1 == ti,
                                y2 == tj && x2 == ti};
#pragma unroll
            for (int k = 0; k < 4; k++) {
                if (!at[k])
                    continue;
                if (g.bins == 256)
                    ((uint8_t *)cells)[e + k] = (uint8_t)val;
                else
                    ((uint16_t *)cells)[e + k] = (uint16_t)val;
            }
        }
    }
}

/* The LUT entries [first, first + n) of tile (ti, tj) from the slice hist[0, n), the cdf before
 * the slice being `carry`: in rounds of blockDim.x bins, coalesced and free of bank conflicts.
 * Written to `lut` and, when not NULL, to the blend's `cells`. */
__device__ __forceinline__ void clahe_block_lut_slice(const uint32_t *hist, int n, int first,
                                                      unsigned carry, const clahe_geom &g,
                                                      const clahe_spread &s, uint16_t *lut,
                                                      void *cells, int ti, int tj, unsigned *sh)
{
    for (int base = 0; base < n; base += blockDim.x) {
        int i = base + threadIdx.x;
        unsigned a = i < n ? clahe_adjusted(hist[i], first + i, g.clip, s) : 0u, total;
        unsigned incl = clahe_block_scan(a, sh, &total);
        if (i < n) {
            unsigned v = clahe_lut_value((long long)(carry + incl), g.scale, g.maxv);
            if (lut)
                lut[first + i] = (uint16_t)v;
            if (cells)
                clahe_put_cells(cells, g, ti, tj, first + i, v);
        }
        carry += total;
    }
}

/* The 8-bit LUT of tile (ti, tj) from its 256-bin histogram `gh` in global memory (read past L1)
 * by one warp, 8 bins a lane, clahe_block_lut's arithmetic with warp shuffles for its two block
 * scans; the values go to `lut` and to `lv` (shared memory), for the block to spread into the
 * cells (clahe_put_cells) after a barrier. */
__device__ __forceinline__ void clahe_warp_lut8(const uint32_t *gh, const clahe_geom &g, uint16_t *lut,
                                                unsigned *lv, unsigned lane)
{
    const int base = (int)lane * 8;
    const uint4 p = __ldcg(reinterpret_cast<const uint4 *>(gh + base));
    const uint4 q = __ldcg(reinterpret_cast<const uint4 *>(gh + base) + 1);
    const unsigned h[8] = {p.x, p.y, p.z, p.w, q.x, q.y, q.z, q.w};
    unsigned c = 0;
    if (g.clip > 0)
#pragma unroll
        for (int k = 0; k < 8; k++)
            c += h[k] > (unsigned)g.clip ? h[k] - (unsigned)g.clip : 0u;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        c += __shfl_xor_sync(0xFFFFFFFFu, c, o);
    const clahe_spread s = clahe_spread_of((long long)c, 256);
    unsigned a[8], sum = 0;
#pragma unroll
    for (int k = 0; k < 8; k++)
        sum += a[k] = clahe_adjusted(h[k], base + k, g.clip, s);
    unsigned incl = sum;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const unsigned v = __shfl_up_sync(0xFFFFFFFFu, incl, o);
        incl += lane >= (unsigned)o ? v : 0u;
    }
    unsigned cdf = incl - sum;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        cdf += a[k];
        const unsigned v = clahe_lut_value((long long)cdf, g.scale, g.maxv);
        lut[base + k] = (uint16_t)v;
        lv[base + k] = v;
    }
}

/* The whole LUT of a tile from its histogram (global or shared), by one block. */
__device__ __forceinline__ void clahe_block_lut(const uint32_t *hist, const clahe_geom &g, uint16_t *lut,
                                                unsigned *sh)
{
    unsigned clipped = clahe_block_clipped(hist, g.bins, g.clip, sh);
    clahe_spread s = clahe_spread_of((long long)clipped, g.bins);
    clahe_block_lut_slice(hist, g.bins, 0, 0u, g, s, lut, NULL, 0, 0, sh);
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

/* Any shape: one thread a pixel, its cell entry read from global memory (L2); the rows of a
 * grid stride, so the blocks in flight share the cells of a few tile rows. */
template <class T, int CH>
__global__ void __launch_bounds__(128)
    clahe_apply_cells_kernel(ts_image in, ts_image out, clahe_geom g, const void *cells)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, cw = g.tx + 1;
    if (x >= g.w)
        return;
    clahe_axis ax = clahe_axis_of(x, g.inv_tw, g.tx);
    for (int y = blockIdx.y; y < g.h; y += gridDim.y) {
        clahe_axis ay = clahe_axis_of(y, g.inv_th, g.ty);
        const T *row = clahe_row<T>(in, y);
        unsigned v = clahe_value<T, CH>(row, x), l[4];
        size_t e = (size_t)(ay.cell * cw + ax.cell) * g.bins + v;
        if (sizeof(T) == 1) {
            uint32_t q = __ldg((const uint32_t *)cells + e);
#pragma unroll
            for (int k = 0; k < 4; k++)
                l[k] = (q >> (8 * k)) & 0xffu;
        } else {
            uint2 q = __ldg((const uint2 *)cells + e);
            l[0] = q.x & 0xffffu, l[1] = q.x >> 16, l[2] = q.y & 0xffffu, l[3] = q.y >> 16;
        }
        unsigned r = clahe_blend(l[0], l[1], l[2], l[3], ax.a, ay.a, g.maxv);
        clahe_store<T, CH>(row, (T *)((unsigned char *)out.data + (size_t)y * out.pitch), x, r, g.maxv);
    }
}

#include "clahe_blend8.cuh" /* the gray8 strip blend (needs the helpers above) */

/* The blend of a job: from the cells where the variant built them (gray8: the strip kernel at
 * `px` pixels a thread, 8 or 16, 0: 16 where a strip of 256 threads fills the width, else 8),
 * else from the four LUTs in global memory. */
struct ClaheApply {
    const ts_job *job;
    clahe_geom g;
    const uint16_t *lut;
    const void *cells;
    int px;
    bool pdl; /* launch the strip blend as a dependent of the kernel before it (sm_90) */
    bool early; /* the strip blend's E: its row table before its wait (clahe_blend_fma_kernel) */
    template <class T, int CH> ts_status run()
    {
        if (cells && sizeof(T) == 1 && CH == 1) {
            if (px == 16 || (px == 0 && g.w >= 16 * CLAHE_BAND_THREADS))
                return band(early ? (const void *)clahe_blend_fma_kernel<16, 2, 2, 1>
                                  : (const void *)clahe_blend_fma_kernel<16, 2, 2, 0>,
                            16);
            return band(early ? (const void *)clahe_blend_fma_kernel<8, 4, 3, 1>
                              : (const void *)clahe_blend_fma_kernel<8, 4, 3, 0>,
                        8);
        }
        return generic<T, CH>();
    }

    /* One thread a pixel: from the cells, else the four LUTs. */
    template <class T, int CH> ts_status generic()
    {
        cudaStream_t st = (cudaStream_t)job->stream;
        unsigned gy = (unsigned)(g.h > 65535 ? 65535 : g.h);
        dim3 grid(gpu_div_up((size_t)g.w, 128), gy);
        if (cells) {
            clahe_apply_cells_kernel<T, CH><<<grid, 128, 0, st>>>(job->in, job->out, g, cells);
            LAUNCH_CHECK("clahe_apply_cells_kernel");
            return TS_OK;
        }
        clahe_apply_kernel<T, CH><<<grid, 128, 0, st>>>(job->in, job->out, g, lut);
        LAUNCH_CHECK("clahe_apply_kernel");
        return TS_OK;
    }

    /* Strips of columns (one column group of px pixels a thread, at most CLAHE_BAND_THREADS a
     * strip) by bands of rows, one wave of blocks. A band spans at most rows / (th - 1) + 2 cell
     * rows (the float axis may move a tile centre by a row), a strip of n pixels n / (tw - 1) + 2
     * cell columns: the window a block stages; then a row table, 16 bytes a row. */
    ts_status band(const void *k, int px)
    {
        const int nc = (g.w + px - 1) / px;
        const int iters = (nc + CLAHE_BAND_THREADS - 1) / CLAHE_BAND_THREADS;
        const int threads = (nc + iters - 1) / iters;
        const int cpb = threads, nbx = (nc + cpb - 1) / cpb;
        const int sms = job->dev && job->dev->sms > 0 ? job->dev->sms : 132;
        const int cw = g.tx + 1, th1 = g.th > 1 ? g.th - 1 : 1, tw1 = g.tw > 1 ? g.tw - 1 : 1;
        const int wcols = cpb * px / tw1 + 2 < cw ? cpb * px / tw1 + 2 : cw;
        const size_t row_bytes = (size_t)wcols * 256 * sizeof(uint32_t);
        const size_t optin = job->dev ? job->dev->smem_per_block_optin : 48 * 1024;
        /* occupancy for a band within a tile row (a window of up to 3 cell rows), then the rows
         * that fill one wave and their window */
        int wrows = g.ty + 1 < 3 ? g.ty + 1 : 3, per_sm = 1;
        if ((size_t)wrows * row_bytes > optin)
            return generic<uint8_t, 1>();
        ts_status s = gpu_allow_smem(k, (size_t)wrows * row_bytes);
        if (s == TS_OK)
            s = gpu_blocks_per_sm(k, threads, (size_t)wrows * row_bytes, "clahe blend", &per_sm);
        if (s != TS_OK)
            return s;
        long long want = ((long long)sms * per_sm + nbx - 1) / nbx;
        int rows = (int)((g.h + want - 1) / want);
        rows = rows < 1 ? 1 : rows;
        int nby = (g.h + rows - 1) / rows;
        wrows = rows / th1 + 2 < g.ty + 1 ? rows / th1 + 2 : g.ty + 1;
        size_t smem = (size_t)wrows * row_bytes + (size_t)rows * 16;
        if (smem > optin)
            return generic<uint8_t, 1>();
        s = gpu_allow_smem(k, smem);
        if (s != TS_OK)
            return s;
        const uint32_t *c = (const uint32_t *)cells;
        void *args[] = {(void *)&job->in, (void *)&job->out, (void *)&g, (void *)&c, (void *)&rows,
                        (void *)&wrows, (void *)&cpb, (void *)&wcols};
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute attr[1];
        cfg.gridDim = dim3((unsigned)nbx, (unsigned)nby);
        cfg.blockDim = dim3((unsigned)threads);
        cfg.dynamicSmemBytes = smem;
        cfg.stream = (cudaStream_t)job->stream;
        if (pdl && clahe_pdl_ok(k, job->dev)) {
            attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
            attr[0].val.programmaticStreamSerializationAllowed = 1;
            cfg.attrs = attr;
            cfg.numAttrs = 1;
        }
        CUDA_TRY(cudaLaunchKernelExC(&cfg, k, args));
        LAUNCH_CHECK("clahe_blend_fma_kernel");
        return TS_OK;
    }
};

#endif /* CLAHE_COMMON_CUH */
