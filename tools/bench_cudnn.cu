/* bench_cudnn.cu - the cuDNN baseline of the convolution rows (built with TS_HAVE_CUDNN).
 *
 * The image is converted once, outside the timing, to fp32 NCHW planes of its colour channels
 * (alpha is passed through by tessera and not convolved here). The filter bank becomes a grouped
 * ("depthwise") convolution: groups = colour channels, each group `outputs` filters of K x K
 * (edge: Sobel x and y, so the magnitude of tessera's epilogue is not part of cuDNN's time).
 * Cross-correlation mode, like tessera; cuDNN pads with zeros where tessera replicates the border,
 * so only the interior is compared with the gold output. The algorithm is the fastest that
 * cudnnFindConvolutionForwardAlgorithmEx measures (cudnnGetConvolutionForwardAlgorithm_v7's
 * first choice if that fails), with its workspace; only cudnnConvolutionForward is timed. Above
 * K = 15 FindEx is not called (it did not return at K = 31 on 8K; dnn_pick_implicit).
 * Math type CUDNN_DEFAULT_MATH: TF32 tensor cores allowed on sm_80+, as PyTorch does by default.
 */
#include "bench_vendor.cuh"
#include "gpu_util.cuh"

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#ifdef TS_HAVE_CUDNN
#include <cudnn.h>

#define WS_LIMIT ((size_t)1 << 30) /* the most workspace an algorithm may ask for */
#define FIND_MAX_K 15 /* FindEx at K <= 15; above it, dnn_pick_implicit */

struct bv_cudnn {
    cudnnHandle_t handle;
    int failed; /* cudnnCreate failed: every row says why */
    char why[BENCH_TEXT];
    float *d_x, *d_y, *d_w;
    size_t x_cap, y_cap, w_cap;
    void *d_ws;
    size_t ws_cap;
    unsigned *d_max;
};

static const char *algo_name(cudnnConvolutionFwdAlgo_t a)
{
    static const char *const names[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT",
                                        "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
    return (unsigned)a < sizeof names / sizeof names[0] ? names[a] : "?";
}

#define DNN_TRY(call)                                                                              \
    do {                                                                                           \
        cudnnStatus_t s__ = (call);                                                                \
        if (s__ != CUDNN_STATUS_SUCCESS)                                                           \
            return ts_fail(TS_ERR_CUDA, "%s: %s", #call, cudnnGetErrorString(s__));               \
    } while (0)

/* Colour channel c of every pixel into plane c (fp32), once per group. */
__global__ void to_planes_kernel(const unsigned char *img, size_t pitch, int width, int height,
                                 int channels, int colour, int bytes, float *planes)
{
    size_t n = (size_t)width * height;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t y = i / (size_t)width, x = i % (size_t)width;
        const unsigned char *row = img + y * pitch;
        for (int c = 0; c < colour; c++) {
            size_t k = x * (size_t)channels + (size_t)c;
            planes[(size_t)c * n + i] = bytes == 2 ? (float)((const uint16_t *)row)[k] : (float)row[k];
        }
    }
}

/* Largest difference between cuDNN's result (rounded and saturated as tessera does, through the
 * magnitude for 2-output banks) and the gold image, away from the border cuDNN zero-pads. */
__global__ void interior_diff_kernel(const float *y_planes, int outputs, int colour,
                                     const unsigned char *gold, size_t pitch, int width, int height,
                                     int channels, int bytes, int r, unsigned *max_out)
{
    size_t n = (size_t)width * height;
    int maxv = bytes == 2 ? 65535 : 255;
    unsigned worst = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        int y = (int)(i / (size_t)width), x = (int)(i % (size_t)width);
        if (x < r || y < r || x >= width - r || y >= height - r)
            continue;
        const unsigned char *row = gold + (size_t)y * pitch;
        for (int c = 0; c < colour; c++) {
            unsigned v = outputs == 2 ? km_magnitude_f(y_planes[(size_t)(2 * c) * n + i],
                                                       y_planes[(size_t)(2 * c + 1) * n + i], maxv)
                                      : km_round_sat_f(y_planes[(size_t)c * n + i], maxv);
            size_t k = (size_t)x * channels + c;
            unsigned g = bytes == 2 ? ((const uint16_t *)row)[k] : row[k];
            unsigned d = v > g ? v - g : g - v;
            worst = d > worst ? d : worst;
        }
    }
    if (worst)
        atomicMax(max_out, worst);
}

typedef struct dnn_job {
    cudnnHandle_t h;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    cudnnConvolutionFwdAlgo_t algo;
    const float *x, *w;
    float *y;
    void *ws;
    size_t ws_bytes;
} dnn_job;

static ts_status dnn_run(void *p)
{
    dnn_job *j = (dnn_job *)p;
    const float one = 1.0f, zero = 0.0f;
    DNN_TRY(cudnnConvolutionForward(j->h, &one, j->xd, j->x, j->wd, j->w, j->cd, j->algo, j->ws,
                                    j->ws_bytes, &zero, j->yd, j->y));
    return TS_OK;
}

static ts_status dnn_start(bench_vendor *v)
{
    bv_cudnn *d = v->cudnn;
    DNN_TRY(cudnnCreate(&d->handle));
    DNN_TRY(cudnnSetStream(d->handle, (cudaStream_t)v->env->stream));
    CUDA_TRY(cudaMalloc((void **)&d->d_max, sizeof(unsigned)));
    return TS_OK;
}

/* Above FIND_MAX_K: cudnnFindConvolutionForwardAlgorithmEx on gauss:31 at 7680x4320 RGB (H200,
 * cuDNN 9.14 and 9.19) ran past 200 s and 130 GB of host memory without returning, twice. So there
 * the two implicit GEMM algorithms (FindEx's pick at K = 15) are timed by the harness, one run
 * each after a warm-up, and the faster is kept. */
static ts_status dnn_pick_implicit(bench_gpu *g, dnn_job *j, size_t ws_cap)
{
    static const cudnnConvolutionFwdAlgo_t cand[] = {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                                                     CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM};
    double best = -1;
    cudnnConvolutionFwdAlgo_t pick = cand[0];
    size_t pick_ws = 0;
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
        size_t ws = 0;
        bg_timing t;
        if (cudnnGetConvolutionForwardWorkspaceSize(j->h, j->xd, j->wd, j->cd, j->yd, cand[i], &ws) !=
                CUDNN_STATUS_SUCCESS ||
            ws > ws_cap)
            continue;
        j->algo = cand[i];
        j->ws_bytes = ws;
        if (bg_time(g, dnn_run, j, 1, &t) != TS_OK)
            continue;
        if (best < 0 || t.median_ms < best)
            best = t.median_ms, pick = cand[i], pick_ws = ws;
    }
    if (best < 0)
        return ts_fail(TS_ERR_UNSUPPORTED, "no implicit GEMM cuDNN algorithm for this convolution");
    j->algo = pick;
    j->ws_bytes = pick_ws;
    return TS_OK;
}

/* Descriptors, buffers and the algorithm for one group; then the checked run. */
static ts_status dnn_setup(bench_vendor *v, const bench_group *grp, dnn_job *j, char *note,
                           size_t len)
{
    bv_cudnn *d = v->cudnn;
    const ts_filter *f = &grp->op->filter;
    const bench_format *fm = &bench_formats[grp->fmt];
    int C = ts_color_channels(fm->channels), K = C * f->outputs, k = f->k, r = k / 2;
    int H = grp->height, W = grp->width;
    size_t n = (size_t)W * H, taps = (size_t)k * k;
    ts_status st;
    if ((st = bg_reserve((void **)&d->d_x, &d->x_cap, (size_t)C * n * sizeof(float))) != TS_OK ||
        (st = bg_reserve((void **)&d->d_y, &d->y_cap, (size_t)K * n * sizeof(float))) != TS_OK ||
        (st = bg_reserve((void **)&d->d_w, &d->w_cap, (size_t)K * taps * sizeof(float))) != TS_OK)
        return st;
    float *h_w = (float *)malloc((size_t)K * taps * sizeof(float));
    if (!h_w)
        return ts_fail(TS_ERR_NOMEM, "out of memory");
    for (int c = 0; c < C; c++) /* group c: output channels c*outputs .. +outputs-1 */
        for (int o = 0; o < f->outputs; o++)
            memcpy(h_w + ((size_t)c * f->outputs + o) * taps, f->w + (size_t)o * taps,
                   taps * sizeof(float));
    st = ts_gpu_copy_to_device(d->d_w, h_w, (size_t)K * taps * sizeof(float), v->env->stream);
    if (st == TS_OK)
        st = bg_sync(v->env->g); /* h_w must outlive the copy */
    free(h_w);
    if (st != TS_OK)
        return st;
    unsigned blocks = (unsigned)(v->env->dev->sms * 8);
    to_planes_kernel<<<blocks, 256, 0, (cudaStream_t)v->env->stream>>>(
        (const unsigned char *)grp->d_in.data, grp->d_in.pitch, W, H, fm->channels, C, fm->bytes,
        d->d_x);
    LAUNCH_CHECK("to_planes_kernel");
    j->h = d->handle;
    j->x = d->d_x;
    j->y = d->d_y;
    j->w = d->d_w;
    DNN_TRY(cudnnSetTensor4dDescriptor(j->xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, C, H, W));
    DNN_TRY(cudnnSetFilter4dDescriptor(j->wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, 1, k, k));
    DNN_TRY(cudnnSetConvolution2dDescriptor(j->cd, r, r, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                            CUDNN_DATA_FLOAT));
    DNN_TRY(cudnnSetConvolutionGroupCount(j->cd, C));
    DNN_TRY(cudnnSetConvolutionMathType(j->cd, CUDNN_DEFAULT_MATH));
    int on, oc, oh, ow;
    DNN_TRY(cudnnGetConvolution2dForwardOutputDim(j->cd, j->xd, j->wd, &on, &oc, &oh, &ow));
    if (on != 1 || oc != K || oh != H || ow != W)
        return ts_fail(TS_ERR_INVALID, "cuDNN output %dx%dx%dx%d, expected 1x%dx%dx%d", on, oc, oh,
                       ow, K, H, W);
    DNN_TRY(cudnnSetTensor4dDescriptor(j->yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, K, H, W));
    size_t free_b = 0, total_b = 0;
    CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    size_t limit = free_b / 4 < WS_LIMIT ? free_b / 4 : WS_LIMIT;
    if ((st = bg_reserve(&d->d_ws, &d->ws_cap, limit)) != TS_OK)
        return st;
    j->ws = d->d_ws;
    if (k > FIND_MAX_K) {
        if ((st = dnn_pick_implicit(v->env->g, j, d->ws_cap)) != TS_OK)
            return st;
        bench_text(note, len, "cuDNN %zu fp32 NCHW, groups %d, %s (the faster implicit GEMM: "
                   "FindEx does not return at K > %d), workspace %.1f MB", cudnnGetVersion(), C,
                   algo_name(j->algo), FIND_MAX_K, j->ws_bytes / 1048576.0);
        return TS_OK;
    }
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int got = 0, pick = -1;
    const char *how = "fastest measured by FindEx";
    cudnnStatus_t s = cudnnFindConvolutionForwardAlgorithmEx(
        j->h, j->xd, j->x, j->wd, j->w, j->cd, j->yd, j->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got,
        perf, d->d_ws, d->ws_cap);
    for (int i = 0; s == CUDNN_STATUS_SUCCESS && i < got && pick < 0; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= d->ws_cap)
            pick = i; /* sorted fastest first */
    if (pick < 0) {
        how = "heuristic first choice (FindEx found none)";
        DNN_TRY(cudnnGetConvolutionForwardAlgorithm_v7(j->h, j->xd, j->wd, j->cd, j->yd,
                                                       CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got,
                                                       perf));
        for (int i = 0; i < got && pick < 0; i++)
            if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= d->ws_cap)
                pick = i;
        if (pick < 0)
            return ts_fail(TS_ERR_UNSUPPORTED, "no cuDNN algorithm for this convolution");
    }
    j->algo = perf[pick].algo;
    j->ws = d->d_ws;
    j->ws_bytes = perf[pick].memory;
    bench_text(note, len, "cuDNN %zu fp32 NCHW, groups %d, %s (%s), workspace %.1f MB",
               cudnnGetVersion(), C, algo_name(j->algo), how, j->ws_bytes / 1048576.0);
    return TS_OK;
}

static void dnn_check(bench_vendor *v, const bench_group *grp, bench_row *r)
{
    bv_cudnn *d = v->cudnn;
    const bench_format *fm = &bench_formats[grp->fmt];
    if (!grp->d_gold) {
        r->state = BS_UNCHECKED;
        bench_text(r->check, sizeof r->check, "unchecked: no checked variant to compare with");
        return;
    }
    unsigned worst = 0;
    cudaStream_t s = (cudaStream_t)v->env->stream;
    cudaError_t e = cudaMemsetAsync(d->d_max, 0, sizeof(unsigned), s);
    if (e == cudaSuccess) {
        interior_diff_kernel<<<v->env->dev->sms * 8, 256, 0, s>>>(
            d->d_y, grp->op->filter.outputs, ts_color_channels(fm->channels),
            (const unsigned char *)grp->d_gold->data, grp->d_gold->pitch, grp->width, grp->height,
            fm->channels, fm->bytes, grp->op->filter.k / 2, d->d_max);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(&worst, d->d_max, sizeof worst, cudaMemcpyDeviceToHost, s);
    if (e != cudaSuccess || bg_sync(v->env->g) != TS_OK) {
        r->state = BS_UNCHECKED;
        bench_text(r->check, sizeof r->check, "unchecked: compare failed: %s",
                   e != cudaSuccess ? cudaGetErrorString(e) : ts_error_detail());
        return;
    }
    int tol = 2; /* fp32 sums in another order, both within 1 of the exact value */
    r->state = (int)worst <= tol ? BS_OK : BS_WRONG;
    bench_text(r->check, sizeof r->check, "%s: interior differs from %s by up to %u (tolerance "
               "%d); zero-padded border", (int)worst <= tol ? "ok" : "WRONG", grp->gold_name,
               worst, tol);
}

void bv_cudnn_rows(bench_vendor *v, const bench_group *grp, bench_rows *rows)
{
    if (grp->op->kind != TS_OP_CONV || !v->env->wanted("cudnn", 0))
        return;
    bench_row *r = bv_row(grp, rows, "cudnn");
    if (!v->cudnn) {
        if (!(v->cudnn = (bv_cudnn *)calloc(1, sizeof(bv_cudnn)))) {
            ts_fail(TS_ERR_NOMEM, "out of memory");
            bv_error(r, "");
            return;
        }
        if (dnn_start(v) != TS_OK) {
            v->cudnn->failed = 1;
            bench_text(v->cudnn->why, sizeof v->cudnn->why, "%s", ts_error_detail());
        }
    }
    if (v->cudnn->failed) {
        r->state = BS_ERROR;
        bench_text(r->check, sizeof r->check, "error: %s", v->cudnn->why);
        return;
    }
    bench_note(v->env->meta, "cudnn rows: fp32 NCHW depthwise convolution (groups = colour "
               "channels) of planes converted from the image outside the timing; cuDNN pads with "
               "zeros, so only the interior is compared; edge is the two Sobel outputs without "
               "the magnitude");
    dnn_job j;
    memset(&j, 0, sizeof j);
    ts_status st = TS_OK;
    cudnnStatus_t s = cudnnCreateTensorDescriptor(&j.xd);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnCreateTensorDescriptor(&j.yd);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnCreateFilterDescriptor(&j.wd);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnCreateConvolutionDescriptor(&j.cd);
    if (s != CUDNN_STATUS_SUCCESS)
        st = ts_fail(TS_ERR_CUDA, "cuDNN descriptor: %s", cudnnGetErrorString(s));
    if (st == TS_OK)
        st = dnn_setup(v, grp, &j, r->note, sizeof r->note);
    if (st == TS_OK && (st = dnn_run(&j)) == TS_OK)
        st = bg_sync(v->env->g);
    if (st != TS_OK) {
        bv_error(r, "");
    } else {
        dnn_check(v, grp, r);
        bv_time(v, r, dnn_run, &j);
    }
    if (j.cd)
        cudnnDestroyConvolutionDescriptor(j.cd);
    if (j.wd)
        cudnnDestroyFilterDescriptor(j.wd);
    if (j.yd)
        cudnnDestroyTensorDescriptor(j.yd);
    if (j.xd)
        cudnnDestroyTensorDescriptor(j.xd);
}

void bv_cudnn_close(bench_vendor *v)
{
    bv_cudnn *d = v->cudnn;
    if (!d)
        return;
    if (d->handle)
        cudnnDestroy(d->handle);
    cudaFree(d->d_x);
    cudaFree(d->d_y);
    cudaFree(d->d_w);
    cudaFree(d->d_ws);
    cudaFree(d->d_max);
    free(d);
    v->cudnn = NULL;
}

void bv_cudnn_describe(char *out, size_t len)
{
    size_t rt = cudnnGetVersion();
    bench_text(out, len, "cuDNN %d.%d.%d (runtime %zu.%zu.%zu)", CUDNN_MAJOR, CUDNN_MINOR,
               CUDNN_PATCHLEVEL, rt / 10000, rt % 10000 / 100, rt % 100);
}

#else /* no cuDNN at build time */

void bv_cudnn_rows(bench_vendor *v, const bench_group *grp, bench_rows *rows) {}
void bv_cudnn_close(bench_vendor *v) {}
void bv_cudnn_describe(char *out, size_t len)
{
    bench_text(out, len, "cuDNN not built in (no cudnn.h and libcudnn at build time): no cudnn "
               "rows");
}

#endif
