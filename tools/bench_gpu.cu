/* bench_gpu.cu - the benchmark's timing harness and device helpers.
 *
 * Timing: one untimed warm-up run, then N runs; before each, a kernel reads a buffer of 3x the
 * L2 size, so no run finds its input (or the previous run's output) in the 50-60 MB L2 of an
 * H100/H200. The flush reads rather than writes: a written buffer would leave L2 full of dirty
 * lines whose write-back would land inside the next timed run. Each run sits between two CUDA
 * events on the benchmark's stream; the row's figure is the median. The timed runs are inside an
 * NVTX range "ts_timed", so `ncu --nvtx --nvtx-include ts_timed/` profiles only them.
 * The copy floor is a cudaMemcpyAsync device-to-device of the same bytes, timed the same way.
 * Inputs are random samples hashed on the device from the process seed (fresh per process).
 */
#include "bench_gpu.cuh"
#include "diag.cuh"
#include "gpu_util.cuh"

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <stdlib.h>
#include <string.h>

#define FLUSH_L2_MULTIPLE 3
#define ROW_BUDGET_MS 8000.0 /* a row slower than this gets fewer runs (at least MIN_SLOW_RUNS) */
#define MIN_SLOW_RUNS 3
#define MAX_FLOORS 64

struct bench_gpu {
    const ts_device *dev;
    cudaStream_t stream;
    int max_runs;
    cudaEvent_t *start, *stop; /* max_runs each */
    cudaEvent_t warm0, warm1;
    void *d_flush; /* FLUSH_L2_MULTIPLE x L2 bytes, read before each timed run */
    size_t flush_bytes;
    unsigned *d_sink; /* never written in practice: keeps the flush reads alive */
    unsigned *d_max;  /* bg_max_diff's result */
    void *d_copy_src, *d_copy_dst;
    size_t copy_cap;
    void *d_scratch;
    size_t scratch_cap;
    struct {
        size_t bytes;
        double ms;
    } floors[MAX_FLOORS];
    int n_floors;
};

static int context_lost;

int bg_context_lost(void) { return context_lost; }

/* After a failed call: an error that a simple call still reports is sticky (the context is gone). */
static void note_failure(void)
{
    cudaGetLastError();
    if (cudaDeviceSynchronize() != cudaSuccess) {
        cudaError_t e = cudaGetLastError();
        (void)e;
        context_lost = 1;
    }
}

ts_stream bg_stream(const bench_gpu *g) { return (ts_stream)g->stream; }

/* ---------------------------------------------------------------- kernels */

__device__ __forceinline__ uint64_t splitmix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* One thread per sample; sample = lo + hash(seed, index) mod span. */
__global__ void random_kernel(unsigned char *data, size_t pitch, int row_samples, int height,
                              int bytes, uint64_t seed, unsigned lo, unsigned span)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x >= row_samples || y >= height)
        return;
    uint64_t h = splitmix64(seed ^ ((uint64_t)y * (uint64_t)row_samples + (uint64_t)x) * 0xD1B54A32D192ED03ull);
    unsigned v = lo + (unsigned)(h % span);
    unsigned char *row = data + (size_t)y * pitch;
    if (bytes == 2)
        ((uint16_t *)row)[x] = (uint16_t)v;
    else
        row[x] = (unsigned char)v;
}

__global__ void max_diff_kernel(const unsigned char *a, size_t pitch_a, const unsigned char *b,
                                size_t pitch_b, int width, int height, int channels, int compare,
                                int bytes, unsigned *max_out)
{
    unsigned worst = 0;
    size_t n = (size_t)width * height;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t y = i / (size_t)width, x = i % (size_t)width;
        const unsigned char *ra = a + y * pitch_a, *rb = b + y * pitch_b;
        for (int c = 0; c < compare; c++) {
            size_t k = x * (size_t)channels + (size_t)c;
            int va = bytes == 2 ? ((const uint16_t *)ra)[k] : ra[k];
            int vb = bytes == 2 ? ((const uint16_t *)rb)[k] : rb[k];
            unsigned d = (unsigned)(va > vb ? va - vb : vb - va);
            worst = d > worst ? d : worst;
        }
    }
    if (worst)
        atomicMax(max_out, worst);
}

/* ---------------------------------------------------------------- setup */

ts_status bg_open(bench_gpu **gp, const ts_device *dev, int max_runs)
{
    bench_gpu *g = (bench_gpu *)calloc(1, sizeof *g);
    *gp = NULL;
    if (!g)
        return ts_fail(TS_ERR_NOMEM, "out of memory");
    g->dev = dev;
    g->max_runs = max_runs < 1 ? 1 : max_runs;
    g->start = (cudaEvent_t *)calloc((size_t)g->max_runs, sizeof *g->start);
    g->stop = (cudaEvent_t *)calloc((size_t)g->max_runs, sizeof *g->stop);
    if (!g->start || !g->stop) {
        bg_close(g);
        return ts_fail(TS_ERR_NOMEM, "out of memory");
    }
    *gp = g; /* bg_close frees whatever the steps below made */
    CUDA_TRY(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    for (int i = 0; i < g->max_runs; i++) {
        CUDA_TRY(cudaEventCreate(&g->start[i]));
        CUDA_TRY(cudaEventCreate(&g->stop[i]));
    }
    CUDA_TRY(cudaEventCreate(&g->warm0));
    CUDA_TRY(cudaEventCreate(&g->warm1));
    size_t l2 = dev->l2_bytes ? dev->l2_bytes : (size_t)64 << 20;
    g->flush_bytes = (FLUSH_L2_MULTIPLE * l2 + 15) & ~(size_t)15;
    CUDA_TRY(cudaMalloc(&g->d_flush, g->flush_bytes));
    /* Equal words: each uint4 XORs to 0, so the flush's accumulator is 0, never its magic 1. */
    CUDA_TRY(cudaMemset(g->d_flush, 0x5A, g->flush_bytes));
    CUDA_TRY(cudaMalloc((void **)&g->d_sink, sizeof(unsigned)));
    CUDA_TRY(cudaMalloc((void **)&g->d_max, sizeof(unsigned)));
    CUDA_TRY(cudaDeviceSynchronize());
    return TS_OK;
}

void bg_close(bench_gpu *g)
{
    if (!g)
        return;
    if (g->stream)
        cudaStreamSynchronize(g->stream);
    for (int i = 0; i < g->max_runs; i++) {
        if (g->start && g->start[i])
            cudaEventDestroy(g->start[i]);
        if (g->stop && g->stop[i])
            cudaEventDestroy(g->stop[i]);
    }
    if (g->warm0)
        cudaEventDestroy(g->warm0);
    if (g->warm1)
        cudaEventDestroy(g->warm1);
    cudaFree(g->d_flush);
    cudaFree(g->d_sink);
    cudaFree(g->d_max);
    cudaFree(g->d_copy_src);
    cudaFree(g->d_copy_dst);
    cudaFree(g->d_scratch);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    free(g->start);
    free(g->stop);
    free(g);
}

ts_status bg_sync(bench_gpu *g)
{
    cudaError_t e = cudaStreamSynchronize(g->stream);
    if (e == cudaSuccess)
        e = cudaGetLastError();
    if (e != cudaSuccess) {
        note_failure();
        return ts_fail(TS_ERR_CUDA, "%s", cudaGetErrorString(e));
    }
    return TS_OK;
}

/* ---------------------------------------------------------------- timing */

static ts_status flush_l2(bench_gpu *g)
{
    size_t n = g->flush_bytes / sizeof(uint4);
    unsigned blocks = (unsigned)(g->dev->sms > 0 ? g->dev->sms * 4 : 512);
    diag_flush_kernel<<<blocks, 512, 0, g->stream>>>((const uint4 *)g->d_flush, n, 1u, g->d_sink);
    LAUNCH_CHECK("diag_flush_kernel");
    return TS_OK;
}

ts_status bg_time(bench_gpu *g, bg_run_fn fn, void *arg, int runs, bg_timing *t)
{
    ts_status st;
    float warm = 0;
    memset(t, 0, sizeof *t);
    t->median_ms = t->min_ms = -1;
    if (runs > g->max_runs)
        runs = g->max_runs;
    if (runs < 1)
        runs = 1;
    /* Warm-up, flushed like the timed runs, so its time says how many runs fit the budget. */
    if ((st = flush_l2(g)) != TS_OK)
        return st;
    CUDA_TRY(cudaEventRecord(g->warm0, g->stream));
    if ((st = fn(arg)) != TS_OK) {
        note_failure();
        return st;
    }
    CUDA_TRY(cudaEventRecord(g->warm1, g->stream));
    if ((st = bg_sync(g)) != TS_OK)
        return st;
    CUDA_TRY(cudaEventElapsedTime(&warm, g->warm0, g->warm1));
    if ((double)warm * runs > ROW_BUDGET_MS) {
        int fit = (int)(ROW_BUDGET_MS / (warm > 0 ? warm : 1));
        int cut = fit < MIN_SLOW_RUNS ? MIN_SLOW_RUNS : fit;
        if (cut < runs) {
            bench_text(t->note, sizeof t->note, "%d runs, not %d: %.0f ms a run", cut, runs,
                       (double)warm);
            runs = cut;
        }
    }
    for (int i = 0; i < runs; i++) {
        if ((st = flush_l2(g)) != TS_OK)
            return st;
        nvtxRangePushA("ts_timed");
        cudaError_t e = cudaEventRecord(g->start[i], g->stream);
        st = e == cudaSuccess ? fn(arg) : ts_fail(TS_ERR_CUDA, "cudaEventRecord: %s", cudaGetErrorString(e));
        if (st == TS_OK && (e = cudaEventRecord(g->stop[i], g->stream)) != cudaSuccess)
            st = ts_fail(TS_ERR_CUDA, "cudaEventRecord: %s", cudaGetErrorString(e));
        nvtxRangePop();
        if (st != TS_OK) {
            char why[BENCH_TEXT];
            bench_text(why, sizeof why, "%s", ts_error_detail());
            note_failure();
            return ts_fail(st, "%s", why);
        }
    }
    if ((st = bg_sync(g)) != TS_OK)
        return st;
    double *ms = (double *)malloc((size_t)runs * sizeof *ms);
    if (!ms)
        return ts_fail(TS_ERR_NOMEM, "out of memory");
    for (int i = 0; i < runs; i++) {
        float f = 0;
        cudaError_t e = cudaEventElapsedTime(&f, g->start[i], g->stop[i]);
        if (e != cudaSuccess) {
            free(ms);
            cudaGetLastError();
            return ts_fail(TS_ERR_CUDA, "cudaEventElapsedTime: %s", cudaGetErrorString(e));
        }
        ms[i] = f;
    }
    std::sort(ms, ms + runs);
    t->median_ms = runs % 2 ? ms[runs / 2] : 0.5 * (ms[runs / 2 - 1] + ms[runs / 2]);
    t->min_ms = ms[0];
    t->runs = runs;
    free(ms);
    return TS_OK;
}

typedef struct copy_arg {
    bench_gpu *g;
    size_t bytes;
} copy_arg;

static ts_status copy_run(void *p)
{
    copy_arg *a = (copy_arg *)p;
    CUDA_TRY(cudaMemcpyAsync(a->g->d_copy_dst, a->g->d_copy_src, a->bytes,
                                cudaMemcpyDeviceToDevice, a->g->stream));
    return TS_OK;
}

ts_status bg_copy_floor(bench_gpu *g, size_t bytes, int runs, double *ms)
{
    for (int i = 0; i < g->n_floors; i++)
        if (g->floors[i].bytes == bytes) {
            *ms = g->floors[i].ms;
            return TS_OK;
        }
    if (bytes > g->copy_cap) {
        cudaFree(g->d_copy_src);
        cudaFree(g->d_copy_dst);
        g->d_copy_src = g->d_copy_dst = NULL;
        g->copy_cap = 0;
        CUDA_TRY(cudaMalloc(&g->d_copy_src, bytes));
        CUDA_TRY(cudaMalloc(&g->d_copy_dst, bytes));
        /* not zeros: nothing may shortcut a copy of constant data */
        CUDA_TRY(cudaMemsetAsync(g->d_copy_src, 0x5A, bytes, g->stream));
        g->copy_cap = bytes;
    }
    copy_arg a = {g, bytes};
    bg_timing t;
    ts_status st = bg_time(g, copy_run, &a, runs, &t);
    if (st != TS_OK)
        return st;
    *ms = t.median_ms;
    if (g->n_floors < MAX_FLOORS) {
        g->floors[g->n_floors].bytes = bytes;
        g->floors[g->n_floors].ms = t.median_ms;
        g->n_floors++;
    }
    return TS_OK;
}

/* ---------------------------------------------------------------- buffers and inputs */

ts_status bg_reserve(void **d_ptr, size_t *cap, size_t bytes)
{
    if (*d_ptr && bytes <= *cap)
        return TS_OK;
    cudaFree(*d_ptr);
    *d_ptr = NULL;
    *cap = 0;
    CUDA_TRY(cudaMalloc(d_ptr, bytes ? bytes : 1));
    *cap = bytes;
    return TS_OK;
}

ts_status bg_image_reserve(ts_image *d_im, size_t *cap, int width, int height, int channels,
                           int bytes)
{
    return ts_gpu_image_reserve(d_im, cap, width, height, channels, bytes);
}

void bg_image_release(ts_image *d_im, size_t *cap)
{
    cudaFree(d_im->data);
    memset(d_im, 0, sizeof *d_im);
    *cap = 0;
}

ts_status bg_scratch(bench_gpu *g, size_t bytes, void **d_scratch)
{
    *d_scratch = NULL;
    if (!bytes)
        return TS_OK;
    ts_status st = bg_reserve(&g->d_scratch, &g->scratch_cap, bytes);
    if (st == TS_OK)
        *d_scratch = g->d_scratch;
    return st;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0xBF58476D1CE4E5B9ull;
}

ts_status bg_make_input(bench_gpu *g, uint64_t seed, int fmt, bench_data data, int width,
                        int height, ts_image *d_im, size_t *cap)
{
    const bench_format *f = &bench_formats[fmt];
    ts_status st = bg_image_reserve(d_im, cap, width, height, f->channels, f->bytes);
    if (st != TS_OK)
        return st;
    unsigned range = (unsigned)ts_max_value(f->bytes) + 1, lo = 0, span = range;
    if (data == BD_BAND && range > BENCH_BAND_VALUES) {
        /* the band's place is fresh per process too */
        span = BENCH_BAND_VALUES;
        lo = (unsigned)(mix(seed, 0xBA4D) % (range - span + 1));
    }
    uint64_t s = mix(mix(mix(mix(seed, (uint64_t)fmt), (uint64_t)data), (uint64_t)width),
                     (uint64_t)height);
    int row_samples = width * f->channels;
    dim3 grid(gpu_div_up((size_t)row_samples, 256), (unsigned)height);
    random_kernel<<<grid, 256, 0, g->stream>>>((unsigned char *)d_im->data, d_im->pitch,
                                               row_samples, height, f->bytes, s, lo, span);
    LAUNCH_CHECK("random_kernel");
    return TS_OK;
}

ts_status bg_max_diff(bench_gpu *g, const ts_image *a, const ts_image *b, int channels,
                      unsigned *max_diff)
{
    if (a->width != b->width || a->height != b->height || a->channels != b->channels ||
        a->bytes != b->bytes)
        return ts_fail(TS_ERR_INVALID, "compare of images of different shapes");
    unsigned blocks = (unsigned)(g->dev->sms > 0 ? g->dev->sms * 8 : 1024);
    CUDA_TRY(cudaMemsetAsync(g->d_max, 0, sizeof(unsigned), g->stream));
    max_diff_kernel<<<blocks, 256, 0, g->stream>>>(
        (const unsigned char *)a->data, a->pitch, (const unsigned char *)b->data, b->pitch,
        a->width, a->height, a->channels, channels < a->channels ? channels : a->channels, a->bytes,
        g->d_max);
    LAUNCH_CHECK("max_diff_kernel");
    CUDA_TRY(cudaMemcpyAsync(max_diff, g->d_max, sizeof(unsigned), cudaMemcpyDeviceToHost,
                                g->stream));
    return bg_sync(g);
}
