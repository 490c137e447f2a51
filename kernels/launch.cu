/* launch.cu - the host side of launching kernels, shared by every family (gpu_util.cuh): the
 * dynamic shared memory opt-in and the resident-block (occupancy) query.
 *
 * Both are remembered per kernel and device, so a run enqueues its work without runtime calls
 * (cudaFuncSetAttribute is reported to synchronize inside the runtime with pending copies; in the
 * benchmark on an H200 the cache changed no figure, its runs being enqueued well ahead of the GPU).
 * The attribute is kept a high-water mark: two threads that launch one kernel with different sizes
 * (hist opt's slices, conv tiled's block heights) never lower it under each other. A full cache
 * only means the runtime is asked again.
 */
#include "gpu_util.cuh"

#include <mutex>

namespace {
struct SmemSet {
    const void *kernel;
    int device;
    size_t smem;
};
struct Resident {
    const void *kernel;
    int device, threads, per_sm;
    size_t smem;
};
std::mutex cache_lock;
SmemSet smem_set[256];
Resident resident[256];
int n_smem_set, n_resident;
} // namespace

ts_status gpu_allow_smem(const void *kernel, size_t smem)
{
    if (smem <= GPU_DEFAULT_SMEM)
        return TS_OK;
    int device = 0;
    CUDA_TRY(cudaGetDevice(&device));
    std::lock_guard<std::mutex> hold(cache_lock);
    SmemSet *e = NULL;
    for (int i = 0; i < n_smem_set && !e; i++)
        if (smem_set[i].kernel == kernel && smem_set[i].device == device)
            e = &smem_set[i];
    if (e && e->smem >= smem)
        return TS_OK;
    CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)smem));
    if (!e && n_smem_set < (int)(sizeof smem_set / sizeof *smem_set))
        e = &smem_set[n_smem_set++];
    if (e)
        *e = {kernel, device, smem};
    return TS_OK;
}

ts_status gpu_blocks_per_sm(const void *kernel, int threads, size_t smem, const char *who,
                            int *per_sm_out)
{
    int device = 0, per_sm = 0;
    CUDA_TRY(cudaGetDevice(&device));
    {
        std::lock_guard<std::mutex> hold(cache_lock);
        for (int i = 0; i < n_resident && !per_sm; i++) {
            const Resident &r = resident[i];
            if (r.kernel == kernel && r.device == device && r.threads == threads && r.smem == smem)
                per_sm = r.per_sm;
        }
    }
    if (!per_sm) {
        CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
        std::lock_guard<std::mutex> hold(cache_lock);
        if (per_sm > 0 && n_resident < (int)(sizeof resident / sizeof *resident))
            resident[n_resident++] = {kernel, device, threads, per_sm, smem};
    }
    if (per_sm < 1)
        return ts_fail(TS_ERR_UNSUPPORTED, "%s: a block of %d threads and %zu bytes of shared "
                       "memory does not fit an SM", who, threads, smem);
    *per_sm_out = per_sm;
    return TS_OK;
}

ts_status gpu_resident_blocks(const void *kernel, int threads, size_t smem, const ts_device *dev,
                              const char *who, int *blocks)
{
    int per_sm = 0, sms = dev ? dev->sms : 0;
    ts_status st = gpu_blocks_per_sm(kernel, threads, smem, who, &per_sm);
    if (st != TS_OK)
        return st;
    if (sms <= 0) {
        int device = 0;
        CUDA_TRY(cudaGetDevice(&device));
        CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    }
    *blocks = per_sm * (sms > 0 ? sms : 1);
    return TS_OK;
}
