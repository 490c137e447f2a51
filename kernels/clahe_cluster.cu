/* clahe_cluster.cu - the cluster rung of CLAHE (sm_90): a thread-block cluster a tile.
 *
 * The K blocks of a cluster count one tile together (rows split over the blocks' warps), so a
 * tile is read by K SMs instead of one. The histogram lives in the cluster's distributed shared
 * memory, the way the Programming Guide's DSMEM histogram does it:
 *   8-bit   each block counts into a whole 256-bin histogram of its own (local atomics), then
 *           block r sums bins [r * 256 / K, ...) of every block through DSMEM;
 *   16-bit  65536 u32 bins (256 KB) fit no block: block r owns bins [r * 65536 / K, ...) and
 *           every pixel's add goes to its owner's shared memory (a remote atomic when it is
 *           another block's), so the histogram never touches global memory.
 * The clip limit's excess and the cumulative sum cross the cluster the same way: each block
 * publishes its slice's clipped count and adjusted sum in shared memory, reads the others'
 * through DSMEM, and writes its slice of the tile's LUT. The blend is clahe_common.cuh's (gray8:
 * the packed LUT cells in shared memory; colour and 16-bit: the four entries from L2).
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

template <class T, int CH>
__global__ void __launch_bounds__(CLAHE_CLUSTER_THREADS)
    clahe_cluster_lut_kernel(ts_image in, clahe_geom g, int k, uint16_t *lut)
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
    const int first = rank * per;
    if (local) {
        for (int b = threadIdx.x; b < per; b += blockDim.x) {
            unsigned s = 0;
            for (int q = 0; q < k; q++)
                s += cluster.map_shared_rank(bins, q)[first + b];
            own[b] = s;
        }
        __syncthreads();
    }
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
    clahe_block_lut_slice(own, per, first, carry, g, s, lut + (size_t)tile * g.bins, sh);
    /* no block leaves (its shared memory gone) while another may still read it */
    __syncwarp();
    cluster.sync();
#endif
}

/* The cluster size: the forced one (param), else 2, the best of the sweep 1..16 (H100, 8K and
 * 1080p, gray8 and gray16: a tile read by 2 SMs; 16-bit: 128 KB of bins a block). 0 when the size
 * cannot hold the bins (16-bit needs >= 2) or divide them. */
static int cluster_size(const ts_job *job, const clahe_geom &g)
{
    int k = job->param > 0 ? job->param : 2;
    if (k > CLAHE_MAX_CLUSTER || g.bins % k)
        return 0;
    size_t smem = (g.bins == 256 ? 256 + g.bins / k : g.bins / k) * sizeof(uint32_t);
    if (job->dev && smem > job->dev->smem_per_block_optin)
        return 0;
    return k;
}

struct ClusterRun {
    const ts_job *job;
    clahe_geom g;
    clahe_bufs s;
    int k;
    template <class T, int CH> ts_status run()
    {
        void (*kernel)(ts_image, clahe_geom, int, uint16_t *) = clahe_cluster_lut_kernel<T, CH>;
        size_t smem = (g.bins == 256 ? 256 + g.bins / k : g.bins / k) * sizeof(uint32_t);
        cudaLaunchAttribute attr[1] = {};
        cudaLaunchConfig_t cfg = {};
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = (unsigned)k;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cfg.gridDim = dim3((unsigned)(g.tx * g.ty * k));
        cfg.blockDim = dim3(CLAHE_CLUSTER_THREADS);
        cfg.dynamicSmemBytes = smem;
        cfg.stream = (cudaStream_t)job->stream;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        ts_status st = gpu_allow_smem((const void *)kernel, smem);
        if (st != TS_OK)
            return st;
        if (k > CLAHE_PORTABLE_CLUSTER)
            CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        int clusters = 0;
        CUDA_TRY(cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg));
        if (clusters < 1)
            return ts_fail(TS_ERR_UNSUPPORTED, "clahe cluster: no cluster of %d blocks with %zu "
                           "bytes of shared memory each fits this GPU", k, smem);
        CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, job->in, g, k, s.lut));
        ClaheApply a = {job, g, s.lut, 1};
        return a.run<T, CH>();
    }
};

extern "C" int clahe_cluster_supports(const ts_job *job)
{
    if (!clahe_shape_ok(job))
        return 0;
    if (!job->dev)
        return 1;
    return job->dev->cc >= 90 && job->dev->cluster_launch && cluster_size(job, clahe_geom_of(job)) != 0;
}

extern "C" size_t clahe_cluster_scratch(const ts_job *job)
{
    return clahe_shape_ok(job) ? clahe_scratch_bytes(clahe_geom_of(job), 0) : 0;
}

extern "C" ts_status clahe_cluster(const ts_job *job)
{
    if (!clahe_shape_ok(job))
        return ts_fail(TS_ERR_UNSUPPORTED, "clahe cluster: not a clahe job");
    const ts_device *dev = job->dev;
    if (!dev || dev->cc < 90 || !dev->cluster_launch)
        return ts_fail(TS_ERR_UNSUPPORTED, "clahe cluster: needs thread-block clusters (sm_90)");
    clahe_geom g = clahe_geom_of(job);
    int k = cluster_size(job, g);
    if (!k)
        return ts_fail(TS_ERR_UNSUPPORTED, "clahe cluster: cluster size %d cannot hold %d bins",
                       job->param, g.bins);
    ClusterRun r = {job, g, clahe_bufs_of(job, g), k};
    return clahe_dispatch(job->in, r);
}
