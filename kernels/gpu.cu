/* gpu.cu - the small GPU runtime behind tessera.h's ts_gpu_* and ts_timer_* functions:
 * device query, one error-to-message path, pitched device images, copies, a stream, event timers.
 * Every CUDA call is checked; failures become TS_ERR_CUDA with the call and CUDA's message in
 * ts_error_detail(). Nothing here prints or exits.
 */
#include "gpu_util.cuh"

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

extern "C" int ts_gpu_compiled(void) { return 1; }

extern "C" ts_status ts_gpu_open(ts_device *dev) { return ts_gpu_open_id(dev, -1); }

extern "C" int ts_gpu_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

/* The CUDA runtime's current device is per host thread: a thread other than the one that opened
 * a device would otherwise run on device 0. */
extern "C" ts_status ts_gpu_use(int id)
{
    CUDA_TRY(cudaSetDevice(id));
    return TS_OK;
}

extern "C" ts_status ts_gpu_open_id(ts_device *dev, int want_id)
{
    int n = 0, id = 0;
    memset(dev, 0, sizeof *dev);
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice) {
        cudaGetLastError();
        return ts_fail(TS_ERR_NO_GPU, "%s", e == cudaErrorNoDevice ? "no CUDA device found"
                       : "no NVIDIA driver for CUDA 13 found");
    }
    if (e != cudaSuccess) {
        cudaGetLastError();
        return ts_fail(TS_ERR_NO_GPU, "%s", cudaGetErrorString(e));
    }
    if (n == 0)
        return ts_fail(TS_ERR_NO_GPU, "no CUDA device found");
    const ts_gpu_settings *set = ts_gpu_get();
    if (want_id < 0 && set->device_set) {
        if (set->device < 0 || set->device >= n)
            return ts_fail(TS_ERR_NO_GPU, "device %d chosen but %d device(s) present", set->device,
                           n);
        id = set->device;
    } else if (want_id >= 0) {
        if (want_id >= n)
            return ts_fail(TS_ERR_NO_GPU, "device %d asked for but %d device(s) present", want_id, n);
        id = want_id;
    }
    cudaDeviceProp p;
    CUDA_TRY(cudaSetDevice(id));
    CUDA_TRY(cudaGetDeviceProperties(&p, id));
    dev->id = id;
    snprintf(dev->name, sizeof dev->name, "%s", p.name);
    dev->cc_real = p.major * 10 + p.minor;
    dev->cc = dev->cc_real;
    if (set->max_cc > 0 && set->max_cc < dev->cc) /* tests force the pre-sm_90 paths */
        dev->cc = set->max_cc;
    dev->sms = p.multiProcessorCount;
    dev->global_mem = p.totalGlobalMem;
    dev->smem_per_block = p.sharedMemPerBlock;
    dev->smem_per_block_optin = p.sharedMemPerBlockOptin;
    dev->smem_per_sm = p.sharedMemPerMultiprocessor;
    dev->l2_bytes = (size_t)p.l2CacheSize;
    int v = 0;
    cudaDeviceGetAttribute(&v, cudaDevAttrClusterLaunch, id);
    dev->cluster_launch = v && dev->cc >= 90;
    v = 0;
    cudaDeviceGetAttribute(&v, cudaDevAttrCooperativeLaunch, id);
    dev->coop_launch = v != 0;
    cudaDeviceGetAttribute(&dev->clock_khz, cudaDevAttrClockRate, id);
    cudaDeviceGetAttribute(&dev->mem_clock_khz, cudaDevAttrMemoryClockRate, id);
    cudaDeviceGetAttribute(&dev->mem_bus_bits, cudaDevAttrGlobalMemoryBusWidth, id);
    cudaDriverGetVersion(&dev->driver_version);
    cudaRuntimeGetVersion(&dev->runtime_version);
    size_t fr = 0, tot = 0;
    CUDA_TRY(cudaMemGetInfo(&fr, &tot));
    dev->free_mem = fr;
    cudaGetLastError();
    return TS_OK;
}

/* The settings' mem_limit refuses any one allocation above it, as a GPU with that little free
 * memory would: the tests use it (the app's TESSERA_GPU_MEM_LIMIT) to check that an image too
 * large for the GPU is refused with a clear message and the batch goes on. */
static size_t mem_limit(void)
{
    size_t l = ts_gpu_get()->mem_limit;
    return l ? l : SIZE_MAX;
}

static ts_status out_of_memory(size_t bytes)
{
    size_t fr = 0, tot = 0;
    cudaMemGetInfo(&fr, &tot);
    cudaGetLastError();
    size_t limit = mem_limit();
    if (limit < fr)
        fr = limit;
    return ts_fail(TS_ERR_TOO_LARGE, "not enough GPU memory: %.1f MB needed at once, %.1f MB free",
                   bytes / 1048576.0, fr / 1048576.0);
}

extern "C" ts_status ts_gpu_malloc(void **d_ptr, size_t bytes)
{
    *d_ptr = NULL;
    if (bytes > mem_limit())
        return out_of_memory(bytes);
    cudaError_t e = cudaMalloc(d_ptr, bytes ? bytes : 1);
    if (e == cudaErrorMemoryAllocation) {
        *d_ptr = NULL;
        return out_of_memory(bytes);
    }
    if (e != cudaSuccess) {
        cudaGetLastError();
        *d_ptr = NULL;
        return ts_fail(TS_ERR_CUDA, "cudaMalloc(%zu bytes): %s", bytes, cudaGetErrorString(e));
    }
    return TS_OK;
}

extern "C" void ts_gpu_free(void *d_ptr)
{
    if (d_ptr)
        cudaFree(d_ptr);
}

extern "C" void ts_gpu_image_free(ts_image *d_im)
{
    if (!d_im)
        return;
    ts_gpu_free(d_im->data);
    memset(d_im, 0, sizeof *d_im);
}

static ts_status copy2d(ts_image *dst, const ts_image *src, cudaMemcpyKind kind, ts_stream s)
{
    if (dst->width != src->width || dst->height != src->height || dst->channels != src->channels ||
        dst->bytes != src->bytes)
        return ts_fail(TS_ERR_INVALID, "image copy between different shapes");
    CUDA_TRY(cudaMemcpy2DAsync(dst->data, dst->pitch, src->data, src->pitch, ts_row_bytes(src),
                                  (size_t)src->height, kind, (cudaStream_t)s));
    return TS_OK;
}

extern "C" ts_status ts_gpu_upload(ts_image *d_dst, const ts_image *h_src, ts_stream s)
{
    return copy2d(d_dst, h_src, cudaMemcpyHostToDevice, s);
}

extern "C" ts_status ts_gpu_download(ts_image *h_dst, const ts_image *d_src, ts_stream s)
{
    return copy2d(h_dst, d_src, cudaMemcpyDeviceToHost, s);
}

extern "C" ts_status ts_gpu_copy_to_host(void *h_dst, const void *d_src, size_t bytes, ts_stream s)
{
    CUDA_TRY(cudaMemcpyAsync(h_dst, d_src, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)s));
    return TS_OK;
}

extern "C" ts_status ts_gpu_copy_to_device(void *d_dst, const void *h_src, size_t bytes,
                                           ts_stream s)
{
    CUDA_TRY(cudaMemcpyAsync(d_dst, h_src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)s));
    return TS_OK;
}

extern "C" ts_status ts_gpu_memset(void *d_ptr, int value, size_t bytes, ts_stream s)
{
    CUDA_TRY(cudaMemsetAsync(d_ptr, value, bytes, (cudaStream_t)s));
    return TS_OK;
}

extern "C" ts_status ts_gpu_image_fill(ts_image *d_im, int byte_value, ts_stream s)
{
    CUDA_TRY(cudaMemset2DAsync(d_im->data, d_im->pitch, byte_value, ts_row_bytes(d_im),
                                  (size_t)d_im->height, (cudaStream_t)s));
    return TS_OK;
}

extern "C" ts_status ts_gpu_stream_create(ts_stream *s)
{
    cudaStream_t cs = NULL;
    CUDA_TRY(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    *s = (ts_stream)cs;
    return TS_OK;
}

extern "C" void ts_gpu_stream_destroy(ts_stream s)
{
    if (s)
        cudaStreamDestroy((cudaStream_t)s);
}

extern "C" ts_status ts_gpu_sync(ts_stream s)
{
    CUDA_TRY(cudaStreamSynchronize((cudaStream_t)s));
    return TS_OK;
}

struct ts_timer {
    cudaEvent_t start, stop;
};

extern "C" ts_status ts_timer_create(ts_timer **t)
{
    *t = (ts_timer *)calloc(1, sizeof **t);
    if (!*t)
        return ts_fail(TS_ERR_NOMEM, "out of memory");
    cudaError_t e = cudaEventCreate(&(*t)->start);
    if (e == cudaSuccess && (e = cudaEventCreate(&(*t)->stop)) != cudaSuccess)
        cudaEventDestroy((*t)->start);
    if (e != cudaSuccess) {
        cudaGetLastError();
        free(*t);
        *t = NULL;
        return ts_fail(TS_ERR_CUDA, "cudaEventCreate: %s", cudaGetErrorString(e));
    }
    return TS_OK;
}

extern "C" void ts_timer_destroy(ts_timer *t)
{
    if (!t)
        return;
    cudaEventDestroy(t->start);
    cudaEventDestroy(t->stop);
    free(t);
}

extern "C" ts_status ts_timer_start(ts_timer *t, ts_stream s)
{
    CUDA_TRY(cudaEventRecord(t->start, (cudaStream_t)s));
    return TS_OK;
}

extern "C" ts_status ts_timer_stop(ts_timer *t, ts_stream s)
{
    CUDA_TRY(cudaEventRecord(t->stop, (cudaStream_t)s));
    return TS_OK;
}

extern "C" ts_status ts_timer_ms(ts_timer *t, float *ms)
{
    CUDA_TRY(cudaEventSynchronize(t->stop));
    CUDA_TRY(cudaEventElapsedTime(ms, t->start, t->stop));
    return TS_OK;
}
