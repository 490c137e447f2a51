/* hist.cu - histogram (TS_OP_HIST) and the histogram step of equalize (TS_OP_EQUALIZE) on the GPU:
 * the variants `naive`, `shared` and `cluster`; `opt` is in hist_opt.cu, the LUT and apply kernels
 * that turn any variant's histogram into an equalized image in hist_equalize.cu.
 *
 * What is counted: ts_hist_count() histograms of ts_hist_bins() u32 bins (256, or 65536 for
 * 16-bit), back to back as one array of "global bins" g = h * bins + value: one histogram per
 * colour channel (alpha never counted), or one of luma y = km_luma_of_sum(km_luma_sum(R, G, B))
 * computed on the fly (no luma plane is written).
 *
 * Variants (each pixel read once per slice, row-major with a grid stride; any pitch):
 *   naive    one global atomicAdd per value: L2 atomics, which serialize on hot bins.
 *   shared   one private u32 histogram per block in shared memory, merged with one global atomic
 *            per non-zero bin. 65536 bins are 256 KB, more than a block may have (227 KB on
 *            sm_90), so the bins are cut into P slices that each fit (P = 2 for 16-bit gray,
 *            4 for 3 x 65536): blockIdx.y picks the slice and every slice re-reads the image.
 *   cluster  the CUDA Programming Guide's distributed-shared-memory histogram (sm_90): the bins
 *            are split over the K blocks of a thread-block cluster, each value is added
 *            atomically into its owner block's shared memory through map_shared_rank, and each
 *            block then merges its share into global memory. K is the smallest power of two
 *            whose share fits a block unless job->param forces one. One histogram of 65536
 *            bins (gray16, luma of 16-bit colour) instead counts as `opt` does, in packed 16-bit
 *            counters a block, and merges the K blocks' counters through DSMEM (hist_opt.cu's
 *            hist_opt16_cluster_kernel; K = job->param, 1..16, default HIST_OPT16_CLUSTER).
 * All grids are persistent (one wave of resident blocks), so each block merges its histogram
 * once. The output is zeroed with cudaMemsetAsync first (variants own the zeroing), enqueued
 * after the host-side occupancy queries so the GPU does not wait on them between the two.
 */
#include "hist_common.cuh"
#include "variants.h"

#include <cooperative_groups.h>

#define NAIVE_THREADS 256
#define BLOCK_THREADS 1024 /* shared and cluster: one or two big blocks an SM */

/* ---------------------------------------------------------------- kernels */

template <int B, int CH, bool LUMA>
__global__ void __launch_bounds__(NAIVE_THREADS) hist_naive_kernel(ts_image im, uint32_t *hist)
{
    hist_walk_pixels<B, CH, LUMA>(im, [&](unsigned g) { atomicAdd(&hist[g], 1u); });
}

/* Block (x, s) counts the bins [s * slice_bins, (s + 1) * slice_bins) of the pixels of its
 * stride. */
template <int B, int CH, bool LUMA>
__global__ void __launch_bounds__(BLOCK_THREADS)
    hist_shared_kernel(ts_image im, unsigned slice_bins, uint32_t *hist)
{
    uint32_t *bins = hist_smem<uint32_t>();
    const unsigned lo = blockIdx.y * slice_bins;
    for (unsigned i = threadIdx.x; i < slice_bins; i += blockDim.x)
        bins[i] = 0;
    __syncthreads();
    hist_walk_pixels<B, CH, LUMA>(im, [&](unsigned g) {
        unsigned l = g - lo; /* wraps above slice_bins when g < lo */
        if (l < slice_bins)
            atomicAdd(&bins[l], 1u);
    });
    __syncthreads();
    for (unsigned i = threadIdx.x; i < slice_bins; i += blockDim.x) {
        uint32_t v = bins[i];
        if (v)
            atomicAdd(&hist[lo + i], v);
    }
}

/* Block rank r of a cluster owns the bins [r * per_block, (r + 1) * per_block) of the cluster's
 * histogram. Cluster code exists only in the sm_90 machine code: the compute_75 PTX gets an
 * empty body, and run() launches this kernel only where dev->cc >= 90 and clusters launch. */
template <int B, int CH, bool LUMA>
__global__ void __launch_bounds__(BLOCK_THREADS)
    hist_cluster_kernel(ts_image im, unsigned per_block, uint32_t *hist)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    uint32_t *bins = hist_smem<uint32_t>();
    for (unsigned i = threadIdx.x; i < per_block; i += blockDim.x)
        bins[i] = 0;
    /* No block may add into another before that one has started and zeroed its bins. */
    cluster.sync();
    hist_walk_pixels<B, CH, LUMA>(im, [&](unsigned g) {
        unsigned rank = g / per_block;
        uint32_t *dst = cluster.map_shared_rank(bins, (int)rank);
        atomicAdd(dst + (g - rank * per_block), 1u);
    });
    /* Every add into this block's bins is done before it reads them, and no block exits (its
     * shared memory gone) while others may still add into it. */
    cluster.sync();
    uint32_t *out = hist + (size_t)cluster.block_rank() * per_block;
    for (unsigned i = threadIdx.x; i < per_block; i += blockDim.x) {
        uint32_t v = bins[i];
        if (v)
            atomicAdd(&out[i], v);
    }
#endif
}

/* ---------------------------------------------------------------- shared helpers */

static uint64_t job_pixels(const ts_job *job) { return (uint64_t)job->in.width * job->in.height; }

static long job_bins(const ts_job *job)
{
    return hist_total_bins(job->op->hist_mode, job->in.channels, job->in.bytes);
}

/* Blocks that give every thread at least one pixel: small images get small grids. */
static int blocks_for_pixels(const ts_job *job, int threads)
{
    uint64_t b = (job_pixels(job) + (uint64_t)threads - 1) / (uint64_t)threads;
    return b > (uint64_t)INT32_MAX ? INT32_MAX : (int)b;
}

static int min_int(int a, int b) { return a < b ? a : b; }

ts_status hist_check_job(const ts_job *job)
{
    const ts_image *in = &job->in;
    if (!job->op || (job->op->kind != TS_OP_HIST && job->op->kind != TS_OP_EQUALIZE))
        return ts_fail(TS_ERR_INVALID, "hist: not a histogram or equalize job");
    if (!in->data || in->width < 1 || in->height < 1 || in->channels < 1 || in->channels > 4 ||
        (in->bytes != 1 && in->bytes != 2) || in->pitch < ts_row_bytes(in))
        return ts_fail(TS_ERR_INVALID, "hist: bad input image");
    if ((uintptr_t)in->data % (uintptr_t)in->bytes || in->pitch % (size_t)in->bytes)
        return ts_fail(TS_ERR_INVALID, "hist: 16-bit rows must be 2-byte aligned");
    if (job_pixels(job) > HIST_MAX_PIXELS)
        return ts_fail(TS_ERR_UNSUPPORTED, "hist: more than 2^31 pixels");
    if (!job->dev)
        return ts_fail(TS_ERR_INVALID, "hist: a GPU job needs a device");
    if (job->op->kind == TS_OP_HIST && !job->hist)
        return ts_fail(TS_ERR_INVALID, "hist: no output histogram");
    if (job->op->kind == TS_OP_EQUALIZE) {
        const ts_image *out = &job->out;
        if (!out->data || out->width != in->width || out->height != in->height ||
            out->channels != in->channels || out->bytes != in->bytes ||
            out->pitch < ts_row_bytes(out) || (uintptr_t)out->data % (uintptr_t)out->bytes ||
            out->pitch % (size_t)out->bytes)
            return ts_fail(TS_ERR_INVALID, "%s: output image has the wrong shape", job->op->text);
    }
    return TS_OK;
}

static ts_status zero_hist(const ts_job *job, uint32_t *d_hist)
{
    CUDA_TRY(cudaMemsetAsync(d_hist, 0, (size_t)job_bins(job) * sizeof *d_hist,
                                (cudaStream_t)job->stream));
    return TS_OK;
}

/* Shape checks of `supports`: the job and, when known, the device. */
static int shape_ok(const ts_job *job)
{
    const ts_image *in = &job->in;
    if (!job->op || (job->op->kind != TS_OP_HIST && job->op->kind != TS_OP_EQUALIZE))
        return 0;
    if (in->channels < 1 || in->channels > 4 || (in->bytes != 1 && in->bytes != 2) ||
        in->width < 1 || in->height < 1)
        return 0;
    return job_pixels(job) <= HIST_MAX_PIXELS;
}

/* ---------------------------------------------------------------- naive */

struct NaiveCount {
    const ts_job *job;
    uint32_t *hist;
    template <int B, int CH, bool L> ts_status run()
    {
        int blocks = min_int(blocks_for_pixels(job, NAIVE_THREADS), job->dev->sms * (2048 / NAIVE_THREADS));
        hist_naive_kernel<B, CH, L><<<blocks, NAIVE_THREADS, 0, (cudaStream_t)job->stream>>>(job->in, hist);
        LAUNCH_CHECK("hist_naive_kernel");
        return TS_OK;
    }
};

static ts_status naive_count(const ts_job *job, uint32_t *d_hist, void *extra, size_t extra_bytes)
{
    ts_status st = zero_hist(job, d_hist);
    NaiveCount op = {job, d_hist};
    return st != TS_OK ? st : hist_dispatch(job->in, job->op->hist_mode, op);
}

extern "C" ts_status hist_naive(const ts_job *job) { return hist_run_job(job, naive_count, 0); }

extern "C" int hist_supports(const ts_job *job) { return shape_ok(job); }

extern "C" size_t hist_scratch(const ts_job *job)
{
    return job->op->kind == TS_OP_EQUALIZE ? hist_eq_bytes(job_bins(job)) : 0;
}

/* ---------------------------------------------------------------- shared */

struct SharedCount {
    const ts_job *job;
    uint32_t *hist;
    hist_plan plan;
    template <int B, int CH, bool L> ts_status run()
    {
        const void *k = (const void *)hist_shared_kernel<B, CH, L>;
        int resident = 0;
        ts_status st = gpu_allow_smem(k, plan.smem);
        if (st == TS_OK)
            st = gpu_resident_blocks(k, plan.threads, plan.smem, job->dev, "hist", &resident);
        if (st != TS_OK)
            return st;
        int per_slice = min_int(resident / plan.slices, blocks_for_pixels(job, plan.threads));
        dim3 grid((unsigned)(per_slice < 1 ? 1 : per_slice), (unsigned)plan.slices);
        if ((st = zero_hist(job, hist)) != TS_OK)
            return st;
        hist_shared_kernel<B, CH, L><<<grid, plan.threads, plan.smem, (cudaStream_t)job->stream>>>(
            job->in, (unsigned)plan.slice_bins, hist);
        LAUNCH_CHECK("hist_shared_kernel");
        return TS_OK;
    }
};

static ts_status shared_count(const ts_job *job, uint32_t *d_hist, void *extra, size_t extra_bytes)
{
    SharedCount op = {job, d_hist, {0, 0, 0, 0, 0, 0}};
    if (!hist_plan_shared(job_bins(job), job->dev, &op.plan))
        return ts_fail(TS_ERR_UNSUPPORTED, "hist shared: %ld bins do not fit shared memory",
                       job_bins(job));
    return hist_dispatch(job->in, job->op->hist_mode, op);
}

extern "C" int hist_shared_supports(const ts_job *job)
{
    hist_plan p;
    return shape_ok(job) && (!job->dev || hist_plan_shared(job_bins(job), job->dev, &p));
}

extern "C" ts_status hist_shared(const ts_job *job)
{
    return hist_run_job(job, shared_count, 0);
}

/* ---------------------------------------------------------------- cluster */

struct ClusterCount {
    const ts_job *job;
    uint32_t *hist;
    int k;           /* cluster size */
    unsigned per_block;
    template <int B, int CH, bool L> ts_status run()
    {
        void (*kernel)(ts_image, unsigned, uint32_t *) = hist_cluster_kernel<B, CH, L>;
        cudaLaunchAttribute attr;
        cudaLaunchConfig_t cfg;
        int clusters = 0;
        ts_status st = gpu_cluster_config((const void *)kernel, k, BLOCK_THREADS,
                                          (size_t)per_block * sizeof(uint32_t), job->stream,
                                          "hist cluster", &cfg, &attr, &clusters);
        if (st != TS_OK)
            return st;
        /* One wave of clusters, and no more blocks than give each thread a pixel. */
        int want = (blocks_for_pixels(job, BLOCK_THREADS) + k - 1) / k;
        cfg.gridDim = dim3((unsigned)(min_int(clusters, want < 1 ? 1 : want) * k));
        if ((st = zero_hist(job, hist)) != TS_OK)
            return st;
        CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, job->in, per_block, hist));
        return TS_OK;
    }
};

static int cluster_size_of(const ts_job *job)
{
    return hist_cluster_size(job_bins(job), job->dev->smem_per_block_optin, job->param);
}

static ts_status cluster_count(const ts_job *job, uint32_t *d_hist, void *extra, size_t extra_bytes)
{
    const ts_device *dev = job->dev;
    if (dev->cc < 90 || !dev->cluster_launch)
        return ts_fail(TS_ERR_UNSUPPORTED, "hist cluster: needs thread-block clusters (sm_90), "
                       "device is sm_%d", dev->cc);
    if (hist_opt16_cluster_takes(job)) /* 65536 bins: packed counters, merged through DSMEM */
        return hist_opt16_cluster_count(job, d_hist, extra, extra_bytes,
                                        job->param ? job->param : HIST_OPT16_CLUSTER);
    int k = cluster_size_of(job);
    if (!k)
        return ts_fail(TS_ERR_UNSUPPORTED, "hist cluster: no cluster size%s holds %ld bins in "
                       "%zu bytes of shared memory a block", job->param ? " (forced)" : "",
                       job_bins(job), dev->smem_per_block_optin);
    ClusterCount op = {job, d_hist, k, (unsigned)(job_bins(job) / k)};
    return hist_dispatch(job->in, job->op->hist_mode, op);
}

extern "C" int hist_cluster_supports(const ts_job *job)
{
    if (!shape_ok(job))
        return 0;
    if (hist_eq16_cluster_takes(job)) /* RGB16 per channel: hist_eq16_cluster.cu */
        return hist_eq16_cluster_supports(job);
    if (!job->dev)
        return 1;
    if (hist_opt16_cluster_takes(job))
        return job->param >= 0 && job->param <= HIST_MAX_CLUSTER;
    return job->dev->cc >= 90 && job->dev->cluster_launch && cluster_size_of(job) != 0;
}

static size_t cluster_partial_bytes(const ts_job *job)
{
    return hist_opt16_cluster_takes(job) ? hist_opt16_cluster_partial_bytes(job) : 0;
}

extern "C" size_t hist_cluster_scratch(const ts_job *job)
{
    return hist_eq16_cluster_takes(job) ? hist_eq16_cluster_scratch(job)
                                        : hist_scratch(job) + cluster_partial_bytes(job);
}

extern "C" ts_status hist_cluster(const ts_job *job)
{
    if (hist_eq16_cluster_takes(job))
        return hist_eq16_cluster(job);
    return hist_run_job(job, cluster_count, cluster_partial_bytes(job));
}
