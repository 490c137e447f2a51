/* clahe_cluster.cu - the cluster rung of CLAHE (sm_90): a thread-block cluster a tile.
 *
 * The K blocks of a cluster count one tile together, so a tile is read by K SMs instead of one,
 * and its histogram lives in the cluster's distributed shared memory, never in global memory:
 *   8-bit    each block counts its rows into a whole 256-bin histogram of its own (local
 *            atomics), then block r sums bins [r * 256 / K, ...) of every block through DSMEM;
 *   16-bit   65536 u32 bins (256 KB) fit no block. Large tiles (clahe_cluster_packed_kernel):
 *   packed   block r counts its band of rows into all 65536 bins of its own, two 16-bit counters
 *            a word (128 KB), every add local; K (4 or 8) is picked so that no band holds 65536
 *            pixels, so no counter wraps; block r then sums its slice of bins over the K blocks,
 *            reading their counters through DSMEM 16 bytes at a time;
 *   spread   small tiles (or a forced K that cannot pack): block r owns bins [r * 65536 / K, ...)
 *            and every add goes to its owner's shared memory, remote when it is another block's
 *            (the Programming Guide's DSMEM histogram).
 * The clip limit's excess and the cumulative sum cross the cluster the same way: each block
 * publishes its slice's clipped count and adjusted sum in shared memory, reads the others'
 * through DSMEM, and writes its slice of the tile's LUT straight into the blend's cells
 * (clahe_put_cells: the four entries a pixel blends, packed by value), so the blend reads one
 * entry a pixel (gray8: the banded kernel, cells in shared memory; else one gather from L2).
 * Cluster code exists only in the sm_90 machine code: the compute_75 PTX gets an empty body, and
 * the launcher runs only where dev->cc >= 90 and clusters launch. job->param forces the cluster
 * size (1..16; above 8 the non-portable sizes), the benchmark's sweep.
 */
#include "clahe_common.cuh"
#include "variants.h"

#include <cooperative_groups.h>

#define CLAHE_CLUSTER_THREADS 1024
#define CLAHE_PORTABLE_CLUSTER 8
#define CLAHE_MAX_CLUSTER 16
/* Tiles below this many pixels count 16-bit faster spread over 2 blocks than packed over 4 or 8:
 * their few adds do not pay for K blocks' 128 KB each (H100: 1080p's 240 x 135 tiles 0.138 ms
 * spread, 0.163 packed; 8K's 960 x 540 0.574 spread, 0.469 packed over 8). */
#define CLAHE_PACKED_MIN_PIXELS 131072

/* The LUT of the cluster's tile from the slice `own` (bins [rank * per, ...)) that this block
 * holds: the clip limit's excess and the cumulative sum cross the cluster through `part`. Ends
 * with a cluster barrier, so no block leaves while another may still read its shared memory. */
__device__ __forceinline__ void clahe_cluster_lut(const uint32_t *own, int per, const clahe_geom &g,
                                                  int tile, uint16_t *lut, void *cells, unsigned *sh,
                                                  unsigned *part)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = (int)cluster.block_rank(), k = (int)cluster.num_blocks(), first = rank * per;
    unsigned c = clahe_block_clipped(own, per, g.clip, sh);
    if (threadIdx.x == 0)
        part[0] = c;
    __syncwarp();
    cluster.sync();
    unsigned clipped = 0;
    for (int q = 0; q < k; q++)
        clipped += cluster.map_shared_rank(part, q)[0];
    clahe_spread s = clahe_spread_of((long long)clipped, g.bins);
    unsigned sum = clahe_block_slice_sum(own, per, first, g.clip, s, sh);
    if (threadIdx.x == 0)
        part[1] = sum;
    __syncwarp();
    cluster.sync();
    unsigned carry = 0;
    for (int q = 0; q < rank; q++)
        carry += cluster.map_shared_rank(part, q)[1];
    clahe_block_lut_slice(own, per, first, carry, g, s, lut ? lut + (size_t)tile * g.bins : NULL,
                          cells, tile % g.tx, tile / g.tx, sh);
    __syncwarp();
    cluster.sync();
#endif
}

/* u32 bins: 8-bit (each block a whole histogram, block r then sums bins [r * 256 / K, ...) of
 * all the blocks) or 16-bit spread over the cluster (every add to its owner's shared memory). */
template <class T, int CH>
__global__ void __launch_bounds__(CLAHE_CLUSTER_THREADS)
    clahe_cluster_lut_kernel(ts_image in, clahe_geom g, int k, uint16_t *lut, void *cells)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    __shared__ unsigned sh[33];
    __shared__ unsigned part[2]; /* this block's clipped count and adjusted sum */
    const bool local = g.bins == 256;
    const int rank = (int)cluster.block_rank(), tile = blockIdx.x / k;
    const int i = tile % g.tx, j = tile / g.tx, per = g.bins / k;
    const int warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    uint32_t *bins = clahe_smem<uint32_t>();             /* local: 256 bins; else `per` owned */
    uint32_t *own = local ? bins + 256 : bins;           /* the owned slice after the merge */
    const int nb = local ? 256 : per;
    for (int b = threadIdx.x; b < nb; b += blockDim.x)
        bins[b] = 0;
    /* no block adds into another before that one has zeroed its bins */
    __syncwarp(); /* cluster barriers are warp-aligned: reconverge after divergent loops */
    cluster.sync();
    clahe_walk_tile<T, CH>(in, g, i, j, rank * nw + warp, k * nw, [&](unsigned v) {
        if (local) {
            atomicAdd(&bins[v], 1u);
        } else {
            unsigned o = v / (unsigned)per;
            atomicAdd(cluster.map_shared_rank(bins, (int)o) + (v - o * (unsigned)per), 1u);
        }
    });
    /* every add into this block's bins is done before anyone reads them */
    __syncwarp();
    cluster.sync();
    if (local) {
        const int first = rank * per;
        for (int b = threadIdx.x; b < per; b += blockDim.x) {
            unsigned s = 0;
            for (int q = 0; q < k; q++)
                s += cluster.map_shared_rank(bins, q)[first + b];
            own[b] = s;
        }
        __syncthreads();
    }
    clahe_cluster_lut(own, per, g, tile, lut, cells, sh, part);
#endif
}

/* 16-bit, packed: block r of the cluster counts the rows [th * r / K, th * (r + 1) / K) of the
 * tile into all 65536 bins of its own, two 16-bit counters a word (128 KB), every add local; the
 * host picks K so that no band has 65536 pixels (no counter can wrap). Then block r sums its
 * slice of bins over the cluster's K histograms, reading them through DSMEM 16 bytes at a time,
 * and builds that slice of the LUT: a tile is read once, by K SMs, and its histogram never
 * touches global memory. */
template <int CH>
__global__ void __launch_bounds__(CLAHE_CLUSTER_THREADS)
    clahe_cluster_packed_kernel(ts_image in, clahe_geom g, int k, uint16_t *lut, void *cells)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    __shared__ unsigned sh[33];
    __shared__ unsigned part[2];
    const int rank = (int)cluster.block_rank(), tile = blockIdx.x / k;
    const int i = tile % g.tx, j = tile / g.tx, per = 65536 / k;
    const int warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    uint32_t *words = clahe_smem<uint32_t>(); /* 32768: bins 2w (low half) and 2w + 1 */
    uint32_t *own = words + 32768;            /* `per` u32 after the merge */
    for (int b = threadIdx.x; b < 32768 / 4; b += blockDim.x)
        ((uint4 *)words)[b] = make_uint4(0, 0, 0, 0);
    __syncthreads();
    const int r0 = (int)((long long)g.th * rank / k), r1 = (int)((long long)g.th * (rank + 1) / k);
    for (int r = r0 + warp; r < r1; r += nw)
        clahe_walk_row<uint16_t, CH>(clahe_row<uint16_t>(in, clahe_reflect(j * g.th + r, g.h)), g,
                                     i * g.tw, [&](unsigned v) { atomicAdd(&words[v >> 1], 1u << (16 * (v & 1))); });
    /* every block's counts are final before any is read */
    __syncwarp();
    cluster.sync();
    const int first = rank * per;
    uint4 *mine = (uint4 *)(words + first / 2);
    for (int w = threadIdx.x; w < per / 8; w += blockDim.x) {
        unsigned b[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int q = 0; q < k; q++) {
            uint4 x = cluster.map_shared_rank(mine, q)[w];
            const unsigned xs[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
            for (int e = 0; e < 4; e++) {
                b[2 * e] += xs[e] & 0xffffu;
                b[2 * e + 1] += xs[e] >> 16;
            }
        }
        ((uint4 *)own)[2 * w] = make_uint4(b[0], b[1], b[2], b[3]);
        ((uint4 *)own)[2 * w + 1] = make_uint4(b[4], b[5], b[6], b[7]);
    }
    __syncthreads();
    clahe_cluster_lut(own, per, g, tile, lut, cells, sh, part);
#endif
}

/* The cluster size and kernel of a job. 16-bit tiles of CLAHE_PACKED_MIN_PIXELS or more: the
 * packed kernel with the smallest portable K of 4 and 8 whose bands hold fewer than 65536 padded
 * pixels (8 for an 8K image's 8 x 8 tiles: 68 rows of 960), else 65536 u32 bins spread over
 * K = 2 blocks. 8-bit: K = 2, the best of the sweep
 * 1..16 (H100, 8K and 1080p: a tile read by 2 SMs). job->param forces K (1..16; above 8 the
 * non-portable sizes): packed where it can, else spread. k = 0: the size cannot hold the bins. */
struct cluster_plan {
    int k, packed;
    size_t smem;
};

static int packed_fits(const clahe_geom &g, int k)
{
    long long rows = (g.th + k - 1) / k;
    return g.bins == 65536 && k >= 4 && k <= CLAHE_PORTABLE_CLUSTER && rows * g.tw < 65536;
}

static cluster_plan cluster_plan_of(const ts_job *job, const clahe_geom &g)
{
    cluster_plan p = {0, 0, 0};
    size_t optin = job->dev ? job->dev->smem_per_block_optin : (size_t)227 * 1024;
    int k = job->param;
    if (k <= 0 && g.bins == 65536 && (long long)g.tw * g.th >= CLAHE_PACKED_MIN_PIXELS) {
        for (int c = 4; c <= CLAHE_PORTABLE_CLUSTER && !k; c *= 2)
            if (packed_fits(g, c))
                k = c;
    }
    if (k <= 0)
        k = 2;
    if (k > CLAHE_MAX_CLUSTER || g.bins % k)
        return p;
    p.packed = packed_fits(g, k);
    p.smem = p.packed ? (32768 + (size_t)65536 / k) * sizeof(uint32_t)
                      : (g.bins == 256 ? 256 + g.bins / k : g.bins / k) * sizeof(uint32_t);
    if (p.smem > optin)
        return p;
    p.k = k;
    return p;
}

struct ClusterRun {
    const ts_job *job;
    clahe_geom g;
    clahe_bufs s;
    cluster_plan p;
    template <class T, int CH> ts_status run()
    {
        typedef void (*kernel_fn)(ts_image, clahe_geom, int, uint16_t *, void *);
        kernel_fn kernel = clahe_cluster_lut_kernel<T, CH>;
        if (sizeof(T) == 2 && p.packed)
            kernel = clahe_cluster_packed_kernel<CH>;
        const int k = p.k;
        cudaLaunchAttribute attr;
        cudaLaunchConfig_t cfg;
        int clusters = 0;
        ts_status st = gpu_cluster_config((const void *)kernel, k, CLAHE_CLUSTER_THREADS, p.smem,
                                          job->stream, "clahe cluster", &cfg, &attr, &clusters);
        if (st != TS_OK)
            return st;
        cfg.gridDim = dim3((unsigned)(g.tx * g.ty * k));
        /* the plain LUTs only where the blend reads them (no cells) */
        uint16_t *lut = s.cells ? NULL : s.lut;
        CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, job->in, g, k, lut, s.cells));
        ClaheApply a = {job, g, s.lut, s.cells, 0, false, false};
        return a.run<T, CH>();
    }
};

extern "C" int clahe_cluster_supports(const ts_job *job)
{
    if (!clahe_shape_ok(job))
        return 0;
    if (!job->dev)
        return 1;
    return job->dev->cc >= 90 && job->dev->cluster_launch && cluster_plan_of(job, clahe_geom_of(job)).k != 0;
}

extern "C" size_t clahe_cluster_scratch(const ts_job *job)
{
    return clahe_shape_ok(job) ? clahe_scratch_bytes(clahe_geom_of(job), 0, 1) : 0;
}

extern "C" ts_status clahe_cluster(const ts_job *job)
{
    if (!clahe_shape_ok(job))
        return ts_fail(TS_ERR_UNSUPPORTED, "clahe cluster: not a clahe job");
    const ts_device *dev = job->dev;
    if (!dev || dev->cc < 90 || !dev->cluster_launch)
        return ts_fail(TS_ERR_UNSUPPORTED, "clahe cluster: needs thread-block clusters (sm_90)");
    clahe_geom g = clahe_geom_of(job);
    cluster_plan p = cluster_plan_of(job, g);
    if (!p.k)
        return ts_fail(TS_ERR_UNSUPPORTED, "clahe cluster: cluster size %d cannot hold %d bins",
                       job->param, g.bins);
    ClusterRun r = {job, g, clahe_bufs_of(job, g, 0, 1), p};
    return clahe_dispatch(job->in, r);
}
