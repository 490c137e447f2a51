/* clahe.cu - CLAHE (clahe[:CLIP[:TXxTY]]) on the GPU: the naive, shared and opt rungs; the cluster
 * rung is clahe_cluster.cu. Every rung builds the tile LUTs and blends them with the arithmetic of
 * kernels/clahe.h (OpenCV's, float steps without fused multiply-adds), so each is exact against
 * the CPU reference. Tiles are the padded image's (BORDER_REFLECT_101, clahe.h).
 *   naive   one thread per padded pixel, a global atomicAdd into its tile's histogram; a block a
 *           tile clips, redistributes and scans it into the LUT; one thread a pixel blends the
 *           four LUT entries it needs from global memory.
 *   shared  a block a tile: its histogram in shared memory (16-bit: two slices of 32768 bins, the
 *           tile read once per slice), then clip, redistribution and scan in the block; the blend
 *           as naive. One block a tile leaves SMs idle when there are fewer tiles than SMs.
 *   opt     8-bit: each tile counted by several blocks (bands of rows, a histogram per warp in
 *           shared memory: hot bins do not serialize, one global add a bin a block); the block
 *           that finishes a tile last builds its LUT. The gray blend packs the four LUT bytes a
 *           pixel needs into one u32 per value in shared memory (clahe_apply_packed_kernel: one
 *           load a pixel, no int-float conversions); colour blends as naive, coalesced.
 */
#include "clahe_common.cuh"
#include "variants.h"

#define CLAHE_LUT_THREADS 1024
#define CLAHE_OPT_THREADS 512
#define CLAHE_SLICE 32768 /* 16-bit bins a block of `shared` counts at once (128 KB) */

/* ---------------------------------------------------------------- kernels */

/* naive: every padded pixel, one global atomic. */
template <class T, int CH>
__global__ void clahe_hist_naive_kernel(ts_image in, clahe_geom g, uint32_t *hist)
{
    const size_t pw = (size_t)g.tw * g.tx, n = pw * (size_t)g.th * g.ty;
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x) {
        int py = (int)(p / pw), px = (int)(p - (size_t)py * pw);
        unsigned v = clahe_value<T, CH>(clahe_row<T>(in, clahe_reflect(py, g.h)), clahe_reflect(px, g.w));
        int tile = (py / g.th) * g.tx + px / g.tw;
        atomicAdd(&hist[(size_t)tile * g.bins + v], 1u);
    }
}

/* A block a tile: the LUT from the tile's histogram in global memory. */
__global__ void __launch_bounds__(CLAHE_LUT_THREADS)
    clahe_lut_kernel(clahe_geom g, const uint32_t *hist, uint16_t *lut)
{
    __shared__ unsigned sh[33];
    size_t t = blockIdx.x;
    clahe_block_lut(hist + t * g.bins, g, lut + t * g.bins, sh);
}

/* shared: a block a tile, the histogram in shared memory, in slices of `slice` bins. */
template <class T, int CH>
__global__ void __launch_bounds__(CLAHE_LUT_THREADS)
    clahe_tile_shared_kernel(ts_image in, clahe_geom g, int slice, uint32_t *hist, uint16_t *lut)
{
    __shared__ unsigned sh[33];
    uint32_t *bins = clahe_smem<uint32_t>();
    const int i = blockIdx.x % g.tx, j = blockIdx.x / g.tx, nw = blockDim.x >> 5;
    const int warp = threadIdx.x >> 5;
    uint32_t *gh = hist + (size_t)blockIdx.x * g.bins;
    for (int lo = 0; lo < g.bins; lo += slice) {
        for (int b = threadIdx.x; b < slice; b += blockDim.x)
            bins[b] = 0;
        __syncthreads();
        clahe_walk_tile<T, CH>(in, g, i, j, warp, nw, [&](unsigned v) {
            if (v - (unsigned)lo < (unsigned)slice)
                atomicAdd(&bins[v - lo], 1u);
        });
        __syncthreads();
        if (slice == g.bins) { /* the whole histogram is here: no trip through global memory */
            clahe_block_lut(bins, g, lut + (size_t)blockIdx.x * g.bins, sh);
            return;
        }
        for (int b = threadIdx.x; b < slice; b += blockDim.x)
            gh[lo + b] = bins[b];
        __syncthreads();
    }
    clahe_block_lut(gh, g, lut + (size_t)blockIdx.x * g.bins, sh);
}

/* opt (8-bit): block (tile, band) counts rows band, band + bands, ... of the tile into a
 * histogram per warp, adds their sum into the tile's global histogram; the last block of a tile
 * (a ticket per tile) builds its LUT. */
template <int CH>
__global__ void __launch_bounds__(CLAHE_OPT_THREADS)
    clahe_tile_opt_kernel(ts_image in, clahe_geom g, int bands, uint32_t *hist, uint32_t *count,
                          uint16_t *lut)
{
    __shared__ uint32_t warp_bins[CLAHE_OPT_THREADS / 32][256];
    __shared__ unsigned sh[33];
    __shared__ unsigned ticket;
    const int tile = blockIdx.x / bands, band = blockIdx.x % bands;
    const int i = tile % g.tx, j = tile / g.tx, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    for (int b = threadIdx.x; b < nw * 256; b += blockDim.x)
        (&warp_bins[0][0])[b] = 0;
    __syncthreads();
    uint32_t *mine = warp_bins[warp];
    clahe_walk_tile<uint8_t, CH>(in, g, i, j, band * nw + warp, bands * nw,
                                 [&](unsigned v) { atomicAdd(&mine[v], 1u); });
    __syncthreads();
    uint32_t *gh = hist + (size_t)tile * 256;
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        unsigned s = 0;
        for (int w = 0; w < nw; w++)
            s += warp_bins[w][b];
        if (s)
            atomicAdd(&gh[b], s);
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        ticket = atomicAdd(&count[tile], 1u);
    __syncthreads();
    if (ticket != (unsigned)bands - 1)
        return;
    /* the last block of the tile: every other block's adds are visible (their fence came before
     * their ticket); read them from L2 past this SM's L1 */
    uint32_t *full = warp_bins[0];
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        full[b] = __ldcg(&gh[b]);
    __syncthreads();
    clahe_block_lut(full, g, lut + (size_t)tile * 256, sh);
}

/* ---------------------------------------------------------------- launchers */

struct NaiveRun {
    const ts_job *job;
    clahe_geom g;
    clahe_bufs s;
    template <class T, int CH> ts_status run()
    {
        cudaStream_t st = (cudaStream_t)job->stream;
        int tiles = g.tx * g.ty;
        CUDA_TRY(cudaMemsetAsync(s.hist, 0, (size_t)tiles * g.bins * sizeof(uint32_t), st));
        size_t n = (size_t)g.tw * g.tx * (size_t)g.th * g.ty;
        clahe_hist_naive_kernel<T, CH><<<gpu_grid_for(n, 256), 256, 0, st>>>(job->in, g, s.hist);
        LAUNCH_CHECK("clahe_hist_naive_kernel");
        clahe_lut_kernel<<<tiles, CLAHE_LUT_THREADS, 0, st>>>(g, s.hist, s.lut);
        LAUNCH_CHECK("clahe_lut_kernel");
        ClaheApply a = {job, g, s.lut, 0};
        return a.run<T, CH>();
    }
};

struct SharedRun {
    const ts_job *job;
    clahe_geom g;
    clahe_bufs s;
    template <class T, int CH> ts_status run()
    {
        cudaStream_t st = (cudaStream_t)job->stream;
        int slice = g.bins < CLAHE_SLICE ? g.bins : CLAHE_SLICE;
        size_t smem = (size_t)slice * sizeof(uint32_t);
        void (*k)(ts_image, clahe_geom, int, uint32_t *, uint16_t *) = clahe_tile_shared_kernel<T, CH>;
        ts_status r = gpu_allow_smem((const void *)k, smem);
        if (r != TS_OK)
            return r;
        k<<<g.tx * g.ty, CLAHE_LUT_THREADS, smem, st>>>(job->in, g, slice, s.hist, s.lut);
        LAUNCH_CHECK("clahe_tile_shared_kernel");
        ClaheApply a = {job, g, s.lut, 0};
        return a.run<T, CH>();
    }
};

/* Bands a tile is counted in by opt: about 4 blocks an SM in all, no band without a row. */
static int opt_bands(const clahe_geom &g, const ts_device *dev)
{
    int tiles = g.tx * g.ty, sms = dev && dev->sms > 0 ? dev->sms : 132;
    int b = (4 * sms + tiles - 1) / tiles, rows = (g.th + CLAHE_OPT_THREADS / 32 - 1) / (CLAHE_OPT_THREADS / 32);
    return b < 1 ? 1 : b > rows ? (rows < 1 ? 1 : rows) : b;
}

struct OptRun {
    const ts_job *job;
    clahe_geom g;
    clahe_bufs s;
    template <class T, int CH> ts_status run()
    {
        if (sizeof(T) != 1)
            return ts_fail(TS_ERR_UNSUPPORTED, "clahe opt: 8-bit only");
        cudaStream_t st = (cudaStream_t)job->stream;
        int tiles = g.tx * g.ty, bands = opt_bands(g, job->dev);
        CUDA_TRY(cudaMemsetAsync(s.hist, 0, clahe_hist_bytes(g), st));
        clahe_tile_opt_kernel<CH><<<tiles * bands, CLAHE_OPT_THREADS, 0, st>>>(
            job->in, g, bands, s.hist, s.count, s.lut);
        LAUNCH_CHECK("clahe_tile_opt_kernel");
        ClaheApply a = {job, g, s.lut, 1};
        return a.run<T, CH>();
    }
};

/* ---------------------------------------------------------------- the table's entries */

extern "C" int clahe_supports(const ts_job *job) { return clahe_shape_ok(job); }

extern "C" size_t clahe_scratch(const ts_job *job)
{
    if (!clahe_shape_ok(job))
        return 0;
    return clahe_scratch_bytes(clahe_geom_of(job), 1);
}

extern "C" ts_status clahe_naive(const ts_job *job)
{
    if (!clahe_shape_ok(job))
        return ts_fail(TS_ERR_UNSUPPORTED, "clahe naive: not a clahe job");
    clahe_geom g = clahe_geom_of(job);
    NaiveRun r = {job, g, clahe_bufs_of(job, g)};
    return clahe_dispatch(job->in, r);
}

extern "C" ts_status clahe_shared(const ts_job *job)
{
    if (!clahe_shape_ok(job))
        return ts_fail(TS_ERR_UNSUPPORTED, "clahe shared: not a clahe job");
    clahe_geom g = clahe_geom_of(job);
    SharedRun r = {job, g, clahe_bufs_of(job, g)};
    return clahe_dispatch(job->in, r);
}

extern "C" int clahe_opt_supports(const ts_job *job)
{
    if (!clahe_shape_ok(job) || job->in.bytes != 1)
        return 0;
    clahe_geom g = clahe_geom_of(job);
    return !job->dev || clahe_apply_smem_bytes(g, job->dev) != 0;
}

extern "C" ts_status clahe_opt(const ts_job *job)
{
    if (!clahe_opt_supports(job))
        return ts_fail(TS_ERR_UNSUPPORTED, "clahe opt: 8-bit images with at most %zu tiles",
                       job->dev ? job->dev->smem_per_block_optin / 256 : (size_t)0);
    clahe_geom g = clahe_geom_of(job);
    OptRun r = {job, g, clahe_bufs_of(job, g)};
    return clahe_dispatch(job->in, r);
}
