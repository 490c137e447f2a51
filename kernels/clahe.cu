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
 *   opt     8-bit: each tile counted by as many bands of rows as fill one wave of blocks, into 32
 *           lane copies of each bin (conflict-free increments), a band inside the image read
 *           row-wise in 16-byte chunks (4 in flight a thread, a byte's counter one permute and one
 *           shift-add away), else as one list of chunks; one global add a bin a block; the block
 *           that finishes a tile last builds its LUT and writes it into the blend's cells (the
 *           four LUT bytes a pixel blends, packed in one u32 per value). The gray blend then takes
 *           a strip of columns by a band of rows a block (clahe_blend_fma_kernel: the strip's
 *           cells in shared memory, one load a pixel, each byte-weight product one permute and one
 *           FFMA); colour reads the cell entry from L2, one pixel a thread. The launches overlap
 *           (sm_90, programmatic dependents): the histograms are zeroed by clahe_zero_kernel, of
 *           which the histogram kernel is a dependent (it waits before its first global write, so
 *           the zeroing and the launch between them overlap its count), and the gray blend is a
 *           dependent of the histogram kernel that builds its row table before its wait (its start
 *           overlaps that kernel's tail; clahe_blend_fma_kernel's E = 1). 8K gray8 0.0532 ms
 *           against 0.0561 with a memset and the blend's set-up after its wait (H100, 2026-11-27).
 *           job->param: F * 100 + the blend's pixels a thread (8 or 16; 0: by width); F 1 (a
 *           candidate, off by default): the pipelined count (clahe_tile_opt_kernel's F & 1; gray).
 */
#include "clahe_common.cuh"
#include "variants.h"

#define CLAHE_LUT_THREADS 1024
#define CLAHE_OPT_THREADS 512
#define CLAHE_OPT_SMEM (256 * 32 * sizeof(uint32_t)) /* the lane copies, 32 KB */
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

/* opt (8-bit): block (tile, band) counts the rows [th * band / bands, th * (band + 1) / bands) of
 * the tile into 32 lane copies of each bin (lane l adds only to word bin * 32 + l: an atomic never
 * meets a bank conflict whatever the data, and every add is the increment ATOMS.POPC.INC), adds
 * their sum into the tile's global histogram; the last block of a tile (a ticket per tile) builds
 * its LUT and its share of the blend's cells. A tile whose columns lie inside 16-byte aligned rows
 * is read in 16-byte chunks, 4 loads in flight a thread: row-wise where the band's rows are all
 * inside the image (a pointer stepping down, no reflection), else as one list of chunks. It
 * releases the blend (launched as its dependent) at once: the blend waits for it to finish.
 * F bit 1, the pipelined count (gray, read row-wise; clahe_count_piped): a thread's rows in a
 * rolling ring of 4 registers, the first 4 loads issued before the counters are zeroed, each
 * chunk's slot refilled with the row 4 ahead as soon as it is counted: 3-4 loads in flight a
 * thread all along (no count phase with none, no remainder read one at a time). The histograms
 * are zeroed by clahe_zero_kernel, launched before this kernel, which is its dependent: it waits
 * for that kernel before its first global write (the adds after the count), so the zeroing and
 * the launch between the two overlap the count. At most 40 registers (3 blocks an SM),
 * the wave opt_bands sizes the bands for. */
#define CLAHE_OPT_UNROLL 4

/* Counts the 16 bytes of q into the lane copies whose word 0 of bin 0 is at shared address
 * mbase (bin v at mbase + v * 128). */
__device__ __forceinline__ void clahe_count16(uint4 q, unsigned mbase)
{
    const unsigned w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int k = 0; k < 16; k++) {
        const unsigned v = __byte_perm(w[k >> 2], 0u, 0x4440u | (unsigned)(k & 3));
        asm volatile("atom.shared.add.u32 _, [%0], 1;" ::"r"(mbase + v * 128u) : "memory");
    }
}

/* The pipelined count (F bit 1) of a band inside the image (gray, 16-byte aligned rows, tw a
 * multiple of 16): thread t reads chunk t % n16 of rows rr = t / n16, rr + per, ... (m of them),
 * the row k in slot k % 4 of a ring of 4 registers; the first four are on their way while the
 * counters are zeroed, and a slot is refilled with the row 4 ahead as soon as its chunk is
 * counted, so 3-4 loads stay in flight a thread from the first row to the last (no count phase
 * with none in flight, no remainder read one row at a time). Zeroes the counters and syncs, as the
 * kernel's other paths. */
__device__ __forceinline__ void clahe_count_piped(const ts_image &in, const clahe_geom &g, int j,
                                                  int r0, int r1, int x0, int n16, int per,
                                                  uint32_t *cnt)
{
    uint4 q[CLAHE_OPT_UNROLL] = {};
    const int rr = threadIdx.x / n16;
    const int m = rr < per && r1 - r0 > rr ? (r1 - r0 - rr + per - 1) / per : 0;
    const size_t step = (size_t)per * in.pitch;
    const unsigned char *p = (const unsigned char *)in.data +
                             (size_t)(j * g.th + r0 + (rr < per ? rr : 0)) * in.pitch + x0 +
                             16 * (threadIdx.x % n16);
#pragma unroll
    for (int u = 0; u < CLAHE_OPT_UNROLL; u++)
        if (u < m) {
            q[u] = __ldg((const uint4 *)p);
            p += step;
        }
    for (int b = threadIdx.x; b < 256 * 32 / 4; b += blockDim.x)
        ((uint4 *)cnt)[b] = make_uint4(0, 0, 0, 0);
    __syncthreads();
    const unsigned mbase = (unsigned)__cvta_generic_to_shared(cnt + (threadIdx.x & 31));
    for (int k = 0; k < m; k += CLAHE_OPT_UNROLL) {
#pragma unroll
        for (int u = 0; u < CLAHE_OPT_UNROLL; u++) {
            if (k + u >= m)
                break;
            clahe_count16(q[u], mbase); /* q[u] is consumed before its slot is refilled */
            if (k + u + CLAHE_OPT_UNROLL < m) {
                q[u] = __ldg((const uint4 *)p);
                p += step;
            }
        }
    }
}

/* The zeroing of the tiles' histograms and tickets: releases its dependent at once. */
__global__ void __launch_bounds__(256) clahe_zero_kernel(uint32_t *p, unsigned n)
{
    clahe_release_dependents();
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        p[i] = 0;
}

template <int CH, int F>
__global__ void __launch_bounds__(CLAHE_OPT_THREADS, 3)
    clahe_tile_opt_kernel(ts_image in, clahe_geom g, int bands, uint32_t *hist, uint32_t *count,
                          uint16_t *lut, void *cells)
{
    uint32_t *cnt = clahe_smem<uint32_t>(); /* [256][32] */
    __shared__ unsigned ticket;
    clahe_release_dependents();
    const int tile = blockIdx.x / bands, band = blockIdx.x % bands;
    const int i = tile % g.tx, j = tile / g.tx, lane = threadIdx.x & 31;
    const int r0 = (int)((long long)g.th * band / bands), r1 = (int)((long long)g.th * (band + 1) / bands);
    bool piped = false;
    if (F & 1) {
        const int px0 = i * g.tw, pn16 = g.tw / 16, pper = pn16 ? (int)blockDim.x / pn16 : 0;
        piped = CH == 1 && g.tw % 16 == 0 && px0 + g.tw <= g.w &&
                (((size_t)in.data | in.pitch) & 15) == 0 && pper > 0 && j * g.th + r1 <= g.h;
        if (piped)
            clahe_count_piped(in, g, j, r0, r1, px0, pn16, pper, cnt);
    }
    if (!piped) {
        for (int b = threadIdx.x; b < 256 * 32 / 4; b += blockDim.x)
            ((uint4 *)cnt)[b] = make_uint4(0, 0, 0, 0);
        __syncthreads();
        uint32_t *mine = cnt + lane;
        const int x0 = i * g.tw;
        const bool chunks = CH == 1 && g.tw % 16 == 0 && x0 + g.tw <= g.w &&
                            (((size_t)in.data | in.pitch) & 15) == 0;
        const int n16 = g.tw / 16, per = n16 ? (int)blockDim.x / n16 : 0;
        if (chunks && per > 0 && j * g.th + r1 <= g.h) {
            /* the band inside the image: thread t reads chunk t % n16 of rows t / n16, + per, ...,
             * one pointer stepping down; a byte's counter address is one permute and one shift-add */
            const int rr = threadIdx.x / n16;
            const unsigned mbase = (unsigned)__cvta_generic_to_shared(mine);
            if (rr < per) {
                const size_t step = (size_t)per * in.pitch;
                const unsigned char *p = (const unsigned char *)in.data +
                                         (size_t)(j * g.th + r0 + rr) * in.pitch + x0 +
                                         16 * (threadIdx.x % n16);
                int r = r0 + rr;
                for (; r + (CLAHE_OPT_UNROLL - 1) * per < r1; r += CLAHE_OPT_UNROLL * per) {
                    uint4 q[CLAHE_OPT_UNROLL];
#pragma unroll
                    for (int u = 0; u < CLAHE_OPT_UNROLL; u++) {
                        q[u] = __ldg((const uint4 *)p);
                        p += step;
                    }
#pragma unroll
                    for (int u = 0; u < CLAHE_OPT_UNROLL; u++)
                        clahe_count16(q[u], mbase);
                }
                for (; r < r1; r += per) {
                    clahe_count16(__ldg((const uint4 *)p), mbase);
                    p += step;
                }
            }
        } else if (chunks) {
            const int n16 = g.tw / 16;
            const unsigned total = (unsigned)(r1 - r0) * (unsigned)n16;
            const int dq = blockDim.x / n16, dr = blockDim.x % n16;
            int r = threadIdx.x / n16, c = threadIdx.x % n16; /* of item threadIdx.x */
            for (unsigned it = threadIdx.x; it < total; it += CLAHE_OPT_UNROLL * blockDim.x) {
                uint4 q[CLAHE_OPT_UNROLL];
#pragma unroll
                for (int u = 0; u < CLAHE_OPT_UNROLL; u++) {
                    if (it + u * blockDim.x < total) {
                        const uint8_t *row = clahe_row<uint8_t>(in, clahe_reflect(j * g.th + r0 + r, g.h));
                        q[u] = __ldg((const uint4 *)(row + x0) + c);
                    }
                    c += dr;
                    r += dq;
                    if (c >= n16) {
                        c -= n16;
                        r++;
                    }
                }
#pragma unroll
                for (int u = 0; u < CLAHE_OPT_UNROLL; u++) {
                    if (it + u * blockDim.x >= total)
                        break;
                    const unsigned w[4] = {q[u].x, q[u].y, q[u].z, q[u].w};
#pragma unroll
                    for (int k = 0; k < 16; k++)
                        atomicAdd(&mine[((w[k >> 2] >> (8 * (k & 3))) & 0xffu) * 32], 1u);
                }
            }
        } else {
            const int warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
            for (int r = r0 + warp; r < r1; r += nw)
                clahe_walk_row<uint8_t, CH>(clahe_row<uint8_t>(in, clahe_reflect(j * g.th + r, g.h)), g,
                                            x0, [&](unsigned v) { atomicAdd(&mine[v * 32], 1u); });
        }
    }
    clahe_wait_primary(); /* the zeroing of hist and count is done and visible */
    __syncthreads();
    uint32_t *gh = hist + (size_t)tile * 256;
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        unsigned s = 0;
#pragma unroll 8
        for (int k = 0; k < 32; k++) /* thread b reads bank (b + k) % 32 */
            s += cnt[b * 32 + ((k + b) & 31)];
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
     * their ticket); warp 0 reads them from L2 past this SM's L1 and builds the LUT (shuffles, no
     * block scans: 8K gray8 -0.5 us, 4K and 1080p -4 to -6%, H100), the block spreads it into the
     * cells */
    unsigned *lv = cnt;
    if (threadIdx.x < 32)
        clahe_warp_lut8(gh, g, lut + (size_t)tile * 256, lv, lane);
    __syncthreads();
    if (cells)
        for (int b = threadIdx.x; b < 256; b += blockDim.x)
            clahe_put_cells(cells, g, i, j, b, lv[b]);
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
        ClaheApply a = {job, g, s.lut, NULL, 0, false, false};
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
        ClaheApply a = {job, g, s.lut, NULL, 0, false, false};
        return a.run<T, CH>();
    }
};

/* Bands a tile is counted in by opt: as many as fill one wave of resident blocks (a second,
 * partial wave would cost a whole block's time), at most one a row. */
static ts_status opt_bands(const clahe_geom &g, const ts_device *dev, const void *k, int *bands)
{
    int per_sm = 1, tiles = g.tx * g.ty, sms = dev && dev->sms > 0 ? dev->sms : 132;
    ts_status st = gpu_allow_smem(k, CLAHE_OPT_SMEM);
    if (st == TS_OK)
        st = gpu_blocks_per_sm(k, CLAHE_OPT_THREADS, CLAHE_OPT_SMEM, "clahe opt", &per_sm);
    if (st != TS_OK)
        return st;
    int b = sms * per_sm / tiles;
    *bands = b < 1 ? 1 : b > g.th ? g.th : b;
    return TS_OK;
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
        void (*k)(ts_image, clahe_geom, int, uint32_t *, uint32_t *, uint16_t *, void *) =
            job->param / 100 == 1 ? clahe_tile_opt_kernel<CH, CH == 1 ? 1 : 0>
                                  : clahe_tile_opt_kernel<CH, 0>;
        int tiles = g.tx * g.ty, bands = 1;
        ts_status r = opt_bands(g, job->dev, (const void *)k, &bands);
        if (r != TS_OK)
            return r;
        /* the zeroing as a kernel this one is a dependent of */
        const unsigned n = (unsigned)(clahe_hist_bytes(g) / sizeof(uint32_t));
        clahe_zero_kernel<<<gpu_div_up(n, 256), 256, 0, st>>>(s.hist, n);
        LAUNCH_CHECK("clahe_zero_kernel");
        void *args[] = {(void *)&job->in, (void *)&g,       (void *)&bands, (void *)&s.hist,
                        (void *)&s.count, (void *)&s.lut, (void *)&s.cells};
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute attr[1];
        cfg.gridDim = dim3((unsigned)(tiles * bands));
        cfg.blockDim = dim3(CLAHE_OPT_THREADS);
        cfg.dynamicSmemBytes = CLAHE_OPT_SMEM;
        cfg.stream = st;
        if (clahe_pdl_ok((const void *)k, job->dev)) {
            attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
            attr[0].val.programmaticStreamSerializationAllowed = 1;
            cfg.attrs = attr;
            cfg.numAttrs = 1;
        }
        CUDA_TRY(cudaLaunchKernelExC(&cfg, (const void *)k, args));
        LAUNCH_CHECK("clahe_tile_opt_kernel");
        ClaheApply a = {job, g, s.lut, s.cells, job->param % 100, true, true};
        return a.run<T, CH>();
    }
};

/* ---------------------------------------------------------------- the table's entries */

extern "C" int clahe_supports(const ts_job *job) { return clahe_shape_ok(job); }

extern "C" size_t clahe_scratch(const ts_job *job)
{
    if (!clahe_shape_ok(job))
        return 0;
    clahe_geom g = clahe_geom_of(job);
    return clahe_scratch_bytes(g, 1, g.bins == 256);
}

extern "C" ts_status clahe_naive(const ts_job *job)
{
    if (!clahe_shape_ok(job))
        return ts_fail(TS_ERR_UNSUPPORTED, "clahe naive: not a clahe job");
    clahe_geom g = clahe_geom_of(job);
    NaiveRun r = {job, g, clahe_bufs_of(job, g, 1, 0)};
    return clahe_dispatch(job->in, r);
}

extern "C" ts_status clahe_shared(const ts_job *job)
{
    if (!clahe_shape_ok(job))
        return ts_fail(TS_ERR_UNSUPPORTED, "clahe shared: not a clahe job");
    clahe_geom g = clahe_geom_of(job);
    SharedRun r = {job, g, clahe_bufs_of(job, g, 1, 0)};
    return clahe_dispatch(job->in, r);
}

extern "C" int clahe_opt_supports(const ts_job *job)
{
    return clahe_shape_ok(job) && job->in.bytes == 1;
}

extern "C" ts_status clahe_opt(const ts_job *job)
{
    if (!clahe_opt_supports(job))
        return ts_fail(TS_ERR_UNSUPPORTED, "clahe opt: 8-bit images only");
    const int px = job->param % 100, flags = job->param / 100;
    if (job->param < 0 || (px != 0 && px != 8 && px != 16) || flags > 1)
        return ts_fail(TS_ERR_UNSUPPORTED, "clahe opt: the parameter is F * 100 + the blend's pixels "
                       "a thread (8 or 16; 0: by width), F 1: the pipelined count; not %d",
                       job->param);
    clahe_geom g = clahe_geom_of(job);
    OptRun r = {job, g, clahe_bufs_of(job, g, 1, 1)};
    return clahe_dispatch(job->in, r);
}
