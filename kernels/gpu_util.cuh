/* gpu_util.cuh - helpers shared by the .cu files (internal to kernels/): the CUDA error check that
 * turns a failed call into TS_ERR_CUDA with a message, the launch check, and the launch plumbing
 * every family uses: grid sizing, the dynamic shared memory opt-in and the resident-block query
 * (the last two in launch.cu, cached per kernel and device), and the cluster launch's setup. Device pitches are ts_gpu_pitch's
 * business (gpu.cu); nothing here assumes one. */
#ifndef TS_GPU_UTIL_CUH
#define TS_GPU_UTIL_CUH

#include "tessera.h"
#include "ts_math.h"

#include <cuda_runtime.h>
#include <limits.h>
#include <stdio.h>

/* Evaluates a CUDA call; on failure clears the sticky-free error state and returns TS_ERR_CUDA
 * from the enclosing function, naming the call. */
#define CUDA_TRY(call)                                                                          \
    do {                                                                                           \
        cudaError_t cu_err_ = (call);                                                                \
        if (cu_err_ != cudaSuccess) {                                                                \
            cudaGetLastError();                                                                    \
            return ts_fail(TS_ERR_CUDA, "%s: %s", #call, cudaGetErrorString(cu_err_));              \
        }                                                                                          \
    } while (0)

/* After a <<<>>> launch: reports a bad configuration (or an earlier asynchronous fault). */
#define LAUNCH_CHECK(kernel_name)                                                               \
    do {                                                                                           \
        cudaError_t cu_err_ = cudaGetLastError();                                                    \
        if (cu_err_ != cudaSuccess)                                                                  \
            return ts_fail(TS_ERR_CUDA, "launch of %s: %s", kernel_name,                          \
                           cudaGetErrorString(cu_err_));                                             \
    } while (0)

/* ---------------------------------------------------------------- grid sizing */

static inline unsigned gpu_div_up(size_t a, unsigned b) { return (unsigned)((a + b - 1) / b); }

/* A grid.x of `blocks`, clamped to [1, INT_MAX] (grid-stride kernels cover the rest). */
static inline unsigned gpu_grid(long long blocks)
{
    return (unsigned)(blocks < 1 ? 1 : blocks > (long long)INT_MAX ? (long long)INT_MAX : blocks);
}

/* The grid of a grid-stride kernel over `items` with `block` threads a block. */
static inline unsigned gpu_grid_for(size_t items, unsigned block)
{
    size_t g = (items + block - 1) / block;
    return (unsigned)(g < 1 ? 1 : g > (size_t)INT_MAX ? (size_t)INT_MAX : g);
}

/* ---------------------------------------------------------------- launch.cu */

#define GPU_DEFAULT_SMEM (48 * 1024) /* dynamic shared memory a launch gets without opting in */

/* Raises the kernel's dynamic shared memory limit when `smem` passes the default 48 KB. */
ts_status gpu_allow_smem(const void *kernel, size_t smem);
/* Blocks of `kernel` resident on one SM at once (>= 1), else TS_ERR_UNSUPPORTED naming `who`. */
ts_status gpu_blocks_per_sm(const void *kernel, int threads, size_t smem, const char *who,
                            int *per_sm);
/* A persistent grid: blocks of `kernel` resident on the whole device (>= 1); dev may be NULL
 * (the current device's SM count is asked then). */
ts_status gpu_resident_blocks(const void *kernel, int threads, size_t smem, const ts_device *dev,
                              const char *who, int *blocks);

/* ---------------------------------------------------------------- thread-block clusters */

/* A launch of `kernel` in clusters of k blocks along x (above 8 the non-portable sizes, opted
 * into here) of `threads` threads and `smem` bytes of dynamic shared memory each, on `stream`:
 * fills *cfg (its attrs point at *attr, which must outlive the launch; gridDim is one cluster:
 * the caller sets it), opts the kernel into `smem`, and sets *clusters to how many such clusters
 * the GPU holds at once (>= 1, else TS_ERR_UNSUPPORTED naming `who`). Launch with
 * cudaLaunchKernelEx. */
static inline ts_status gpu_cluster_config(const void *kernel, int k, int threads, size_t smem,
                                           void *stream, const char *who, cudaLaunchConfig_t *cfg,
                                           cudaLaunchAttribute *attr, int *clusters)
{
    *attr = cudaLaunchAttribute{};
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = (unsigned)k;
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    *cfg = cudaLaunchConfig_t{};
    cfg->gridDim = dim3((unsigned)k);
    cfg->blockDim = dim3((unsigned)threads);
    cfg->dynamicSmemBytes = smem;
    cfg->stream = (cudaStream_t)stream;
    cfg->attrs = attr;
    cfg->numAttrs = 1;
    *clusters = 0;
    ts_status st = gpu_allow_smem(kernel, smem);
    if (st != TS_OK)
        return st;
    if (k > 8)
        CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    CUDA_TRY(cudaOccupancyMaxActiveClusters(clusters, kernel, cfg));
    if (*clusters < 1)
        return ts_fail(TS_ERR_UNSUPPORTED, "%s: no cluster of %d blocks with %zu bytes of shared "
                       "memory each fits this GPU", who, k, smem);
    return TS_OK;
}

#endif /* TS_GPU_UTIL_CUH */
