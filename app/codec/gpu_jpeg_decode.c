/* gpu_jpeg_decode.c - gj_decode_batch (gpu_jpeg.h): routing each file from its header, the
 * hardware engines' batched decode, the decoupled decode over a pool of host threads, and the
 * per-file isolation of failures (see gpu_jpeg.c's header comment for why the shape).
 */
#include "codec.h"
#include "gpu_jpeg_int.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef GJ_ENABLED

#include <stdatomic.h>

/* Routing of one file, from its header (phase 1). */
typedef struct route {
    gj_path path;
    int comps, w, h, progressive;
} route;

typedef struct job {
    gj_ctx *ctx;
    const unsigned char *const *data;
    const size_t *len;
    gj_result *res;
    route *rt;
    const int *idx; /* the files this job works on */
    int n;
    atomic_int next;
    atomic_int fatal; /* a sticky CUDA error: the context is unusable */
    int phase;        /* 1: route, 2: decode on the decoupled path */
} job;

#define now_ms() gj_clock_ms(CLOCK_MONOTONIC)
#define thread_ms() gj_clock_ms(CLOCK_THREAD_CPUTIME_ID)

static void set_cpu(gj_result *r, ts_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_cpu(gj_result *r, ts_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
    r->status = st;
    r->path = GJ_PATH_CPU;
}

static int sticky(cudaError_t e)
{
    /* Errors after which the CUDA context is lost; the others leave it usable. */
    return e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure ||
           e == cudaErrorHardwareStackError || e == cudaErrorIllegalInstruction ||
           e == cudaErrorMisalignedAddress || e == cudaErrorInvalidPc ||
           e == cudaErrorUnknown;
}

/* Phase 1: reads the header and picks the path; files nvJPEG cannot take are marked for the CPU. */
static void route_one(gj_ctx *c, slot *s, const unsigned char *data, size_t len, gj_result *r,
                      route *rt)
{
    if (!data || len < 4) {
        set_cpu(r, TS_ERR_FORMAT, "not a JPEG (%zu bytes)", data ? len : 0);
        return;
    }
    /* nvJPEG trusts what libjpeg would warn about (a cut file came out grey-filled) and has no
     * scan limit: a file that is not sound as the CPU path sees it goes to libjpeg, whose error
     * is then the file's on both backends */
    char why[128];
    if (tsio_jpeg_check(data, len, why, sizeof why) != TS_OK) {
        set_cpu(r, TS_ERR_FORMAT, "%s (libjpeg decides)", why);
        return;
    }
    nvjpegStatus_t e = NV.nvjpegJpegStreamParseHeader(c->dev->h, data, len, s->js);
    if (e != NVJPEG_STATUS_SUCCESS) {
        set_cpu(r, TS_ERR_FORMAT, "nvJPEG cannot read the header: %s", gj_nvj_str(e));
        return;
    }
    unsigned prec = 0, comps = 0, w = 0, h = 0;
    nvjpegJpegEncoding_t enc = NVJPEG_ENCODING_UNKNOWN;
    if (NV.nvjpegJpegStreamGetSamplePrecision(s->js, &prec) != NVJPEG_STATUS_SUCCESS ||
        NV.nvjpegJpegStreamGetJpegEncoding(s->js, &enc) != NVJPEG_STATUS_SUCCESS ||
        NV.nvjpegJpegStreamGetComponentsNum(s->js, &comps) != NVJPEG_STATUS_SUCCESS ||
        NV.nvjpegJpegStreamGetFrameDimensions(s->js, &w, &h) != NVJPEG_STATUS_SUCCESS) {
        set_cpu(r, TS_ERR_FORMAT, "nvJPEG cannot read the frame header");
        return;
    }
    if (prec != 8) {
        set_cpu(r, TS_ERR_UNSUPPORTED, "%u-bit samples (nvJPEG decodes 8-bit)", prec);
        return;
    }
    if (enc != NVJPEG_ENCODING_BASELINE_DCT && enc != NVJPEG_ENCODING_EXTENDED_SEQUENTIAL_DCT_HUFFMAN &&
        enc != NVJPEG_ENCODING_PROGRESSIVE_DCT_HUFFMAN) {
        set_cpu(r, TS_ERR_UNSUPPORTED, "%s coding (nvJPEG decodes Huffman DCT)",
                enc == NVJPEG_ENCODING_LOSSLESS_HUFFMAN ? "lossless" : "arithmetic or other");
        return;
    }
    if (comps != 1 && comps != 3) {
        set_cpu(r, TS_ERR_UNSUPPORTED, "%u components (nvJPEG path takes gray or YCbCr)", comps);
        return;
    }
    if (w == 0 || h == 0 || w > TS_MAX_DIM || h > TS_MAX_DIM ||
        (uint64_t)w * h > c->max_pixels) {
        set_cpu(r, TS_ERR_TOO_LARGE, "image %ux%u over the pixel limit", w, h);
        return;
    }
    rt->comps = (int)comps;
    rt->w = (int)w;
    rt->h = (int)h;
    rt->progressive = enc == NVJPEG_ENCODING_PROGRESSIVE_DCT_HUFFMAN;
    rt->path = GJ_PATH_CUDA;
    if (c->has_engine && comps == 3 && !rt->progressive) {
        int unsupported = 1;
        /* The engines' check wants the whole stream parsed (scan layout, tables). */
        nvjpegHandle_t nh = c->dev->h;
        if (NV.nvjpegJpegStreamParse(nh, data, len, 0, 0, s->js) == NVJPEG_STATUS_SUCCESS &&
            NV.nvjpegDecodeBatchedSupported(nh, s->js, &unsupported) == NVJPEG_STATUS_SUCCESS &&
            unsupported == 0)
            rt->path = GJ_PATH_ENGINE;
    }
    r->status = TS_OK;
    r->path = rt->path;
}

/* Phase 2: one file through the decoupled API on this thread's slot. Returns 1 on a sticky CUDA
 * error (the context is lost), else 0; the file's outcome is in *r. */
static int decode_one(gj_ctx *c, slot *s, const unsigned char *data, size_t len, gj_result *r,
                      const route *rt)
{
    double t0 = now_ms(), c0 = thread_ms(), c1;
    nvjpegHandle_t h = c->dev->h;
    const nvjpegJpegDecoder_t *dec = c->dev->dec;
    nvjpegStatus_t e = NV.nvjpegJpegStreamParse(h, data, len, 0, 0, s->js);
#define PROF(k) (c1 = thread_ms(), s->prof[k] += c1 - c0, c0 = c1)
    PROF(GJ_PROF_PARSE);
    if (e != NVJPEG_STATUS_SUCCESS) {
        set_cpu(r, TS_ERR_FORMAT, "nvJPEG: %s", gj_nvj_str(e));
        return 0;
    }
    int k = DEC_HOST;
    int64_t min_px = c->huffman == GJ_HUFFMAN_GPU ? 0 : GPU_HUFFMAN_MIN_PIXELS;
    if (dec[DEC_GPU] && c->huffman != GJ_HUFFMAN_HOST && !rt->progressive &&
        (int64_t)rt->w * rt->h >= min_px) {
        int unsupported = 1;
        if (NV.nvjpegDecoderJpegSupported(dec[DEC_GPU], s->js, s->params, &unsupported) ==
                NVJPEG_STATUS_SUCCESS && unsupported == 0)
            k = DEC_GPU;
    }
    nvjpegOutputFormat_t fmt = rt->comps == 1 ? NVJPEG_OUTPUT_Y : NVJPEG_OUTPUT_RGBI;
    ts_status st = ts_gpu_image_reserve(&r->d_im, &r->capacity, rt->w, rt->h, rt->comps, 1);
    if (st != TS_OK) {
        set_cpu(r, st, "%s", ts_error_detail());
        return 0;
    }
    nvjpegImage_t dst;
    memset(&dst, 0, sizeof dst);
    dst.channel[0] = r->d_im.data;
    dst.pitch[0] = r->d_im.pitch;
    const char *stage = "nvjpegDecodeParamsSetOutputFormat";
    e = NV.nvjpegDecodeParamsSetOutputFormat(s->params, fmt);
    if (e == NVJPEG_STATUS_SUCCESS) {
        stage = "nvjpegDecodeJpegHost";
        PROF(GJ_PROF_PARSE);
        e = NV.nvjpegDecodeJpegHost(h, dec[k], s->st[k], s->params, s->js);
        PROF(GJ_PROF_HOST);
    }
    if (e == NVJPEG_STATUS_SUCCESS) {
        stage = "nvjpegDecodeJpegTransferToDevice";
        e = NV.nvjpegDecodeJpegTransferToDevice(h, dec[k], s->st[k], s->js, s->stream);
        PROF(GJ_PROF_TRANSFER);
    }
    if (e == NVJPEG_STATUS_SUCCESS) {
        stage = "nvjpegDecodeJpegDevice";
        e = NV.nvjpegDecodeJpegDevice(h, dec[k], s->st[k], &dst, s->stream);
        PROF(GJ_PROF_DEVICE);
    }
    /* The pinned buffer is reused by the next file's host stage: wait for the copy. */
    cudaError_t ce = cudaStreamSynchronize(s->stream);
    PROF(GJ_PROF_SYNC);
#undef PROF
    if (ce != cudaSuccess) {
        cudaGetLastError();
        set_cpu(r, TS_ERR_CUDA, "decode on the GPU: %s", cudaGetErrorString(ce));
        return sticky(ce);
    }
    if (e != NVJPEG_STATUS_SUCCESS) {
        set_cpu(r, e == NVJPEG_STATUS_ALLOCATOR_FAILURE ? TS_ERR_TOO_LARGE : TS_ERR_FORMAT,
                "nvJPEG %s: %s", stage, gj_nvj_str(e));
        /* Whatever the failed file left in this state must not reach the next file. */
        NV.nvjpegJpegStateDestroy(s->st[k]);
        s->st[k] = NULL;
        if (gj_state_make(c, s, k) != NVJPEG_STATUS_SUCCESS)
            return 1;
        return 0;
    }
    r->status = TS_OK;
    r->path = GJ_PATH_CUDA;
    r->err[0] = 0;
    r->ms = (float)(now_ms() - t0);
    return 0;
}

static void *worker(void *arg)
{
    void **a = arg;
    job *j = a[0];
    slot *s = a[1];
    gj_ctx *c = j->ctx;
    if (cudaSetDevice(c->dev->device) != cudaSuccess) {
        cudaGetLastError();
        atomic_store(&j->fatal, 1);
        return NULL;
    }
    for (;;) {
        int k = atomic_fetch_add(&j->next, 1);
        if (k >= j->n || atomic_load(&j->fatal))
            break;
        int i = j->idx[k];
        double t0 = thread_ms();
        if (j->phase == 1) {
            route_one(c, s, j->data[i], j->len[i], &j->res[i], &j->rt[i]);
        } else if (decode_one(c, s, j->data[i], j->len[i], &j->res[i], &j->rt[i])) {
            atomic_store(&j->fatal, 1);
        }
        j->res[i].cpu_ms += (float)(thread_ms() - t0);
    }
    return NULL;
}

typedef struct pool {
    pthread_t tid[128];
    void *args[128][2];
    int started[128];
    int n;
} pool;

/* Starts the job's threads. caller_joins: the calling thread has nothing else to do until
 * pool_join, so it takes the first slot's share there itself (a step of one file, the usual
 * batch case, starts no thread at all). */
static void pool_start(pool *p, job *j, int caller_joins)
{
    int n = j->n < j->ctx->nslots ? j->n : j->ctx->nslots;
    p->n = n;
    for (int t = 0; t < n; t++) {
        p->args[t][0] = j;
        p->args[t][1] = &j->ctx->slots[t];
        p->started[t] =
            !(caller_joins && t == 0) && pthread_create(&p->tid[t], NULL, worker, p->args[t]) == 0;
    }
}

static void pool_join(pool *p)
{
    for (int t = 0; t < p->n; t++) {
        if (p->started[t])
            pthread_join(p->tid[t], NULL);
        else
            worker(p->args[t]); /* no thread: the calling thread does that slot's share */
    }
}

/* A free engine state of the device part, locked; NULL when every one is in use (the files then
 * take the decoupled path rather than wait) or lost. */
static gj_hw *hw_take(gj_dev *d)
{
    for (int i = 0; i < d->n_hw; i++) {
        if (pthread_mutex_trylock(&d->hw[i].lock) != 0)
            continue;
        if (d->hw[i].st)
            return &d->hw[i];
        pthread_mutex_unlock(&d->hw[i].lock);
    }
    return NULL;
}

/* The engine files in one batched call on the context's stream, with engine state hw (locked by
 * the caller); 0 when it failed as a whole. */
static int engine_batch(gj_ctx *c, gj_hw *hw, job *j, const int *idx, int n)
{
    const unsigned char **d = malloc((size_t)n * sizeof *d);
    size_t *l = malloc((size_t)n * sizeof *l);
    nvjpegImage_t *dst = calloc((size_t)n, sizeof *dst);
    int ok = d && l && dst;
    double t0 = now_ms(), c0 = thread_ms();
    for (int k = 0; ok && k < n; k++) {
        gj_result *r = &j->res[idx[k]];
        const route *rt = &j->rt[idx[k]];
        if (ts_gpu_image_reserve(&r->d_im, &r->capacity, rt->w, rt->h, 3, 1) != TS_OK)
            ok = 0;
        d[k] = j->data[idx[k]];
        l[k] = j->len[idx[k]];
        dst[k].channel[0] = r->d_im.data;
        dst[k].pitch[0] = r->d_im.pitch;
    }
    if (ok && hw->batch != n) {
        ok = NV.nvjpegDecodeBatchedInitialize(c->dev->h, hw->st, n, 1, NVJPEG_OUTPUT_RGBI) ==
             NVJPEG_STATUS_SUCCESS;
        hw->batch = ok ? n : 0;
    }
    if (ok)
        ok = NV.nvjpegDecodeBatched(c->dev->h, hw->st, d, l, dst, c->stream) ==
             NVJPEG_STATUS_SUCCESS;
    if (ok) {
        cudaError_t ce = cudaStreamSynchronize(c->stream);
        if (ce != cudaSuccess) {
            cudaGetLastError();
            ok = 0;
            if (sticky(ce))
                atomic_store(&j->fatal, 1);
        }
    }
    float share = (float)((now_ms() - t0) / n), cpu = (float)((thread_ms() - c0) / n);
    for (int k = 0; ok && k < n; k++) {
        j->res[idx[k]].ms = share;
        j->res[idx[k]].cpu_ms += cpu;
        j->res[idx[k]].path = GJ_PATH_ENGINE;
    }
    if (!ok) {
        /* A fresh engine state: the failed batch's leftovers must not reach the next batch. */
        NV.nvjpegJpegStateDestroy(hw->st);
        hw->batch = 0;
        if (NV.nvjpegJpegStateCreate(c->dev->h, &hw->st) != NVJPEG_STATUS_SUCCESS)
            hw->st = NULL;
    }
    free(d);
    free(l);
    free(dst);
    return ok;
}

void gj_ctx_decode_profile(const gj_ctx *c, double out[GJ_PROF_COUNT])
{
    for (int k = 0; k < GJ_PROF_COUNT; k++) {
        out[k] = 0;
        for (int i = 0; c && i < c->nslots; i++)
            out[k] += c->slots[i].prof[k];
    }
}

ts_status gj_decode_batch(gj_ctx *c, const unsigned char *const *data, const size_t *len, int n,
                          gj_result *res)
{
    if (!c || n < 0 || (n > 0 && (!data || !len || !res)))
        return ts_fail(TS_ERR_INVALID, "gj_decode_batch: bad arguments");
    if (n == 0)
        return TS_OK;
    route *rt = calloc((size_t)n, sizeof *rt);
    int *all = malloc((size_t)n * sizeof *all);
    int *eng = malloc((size_t)n * sizeof *eng);
    int *dec = malloc((size_t)n * sizeof *dec);
    if (!rt || !all || !eng || !dec) {
        free(rt), free(all), free(eng), free(dec);
        return ts_fail(TS_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        all[i] = i;
        res[i].status = TS_ERR_INVALID;
        res[i].path = GJ_PATH_NONE;
        res[i].ms = 0;
        res[i].cpu_ms = 0;
        res[i].err[0] = 0;
    }
    job j;
    memset(&j, 0, sizeof j);
    j.ctx = c, j.data = data, j.len = len, j.res = res, j.rt = rt;
    pool p;
    /* Phase 1: route every file (header reads spread over the threads). */
    j.idx = all, j.n = n, j.phase = 1;
    atomic_store(&j.next, 0);
    pool_start(&p, &j, 1);
    pool_join(&p);
    int ne = 0, nd = 0;
    for (int i = 0; i < n; i++) {
        if (res[i].status != TS_OK)
            continue;
        if (rt[i].path == GJ_PATH_ENGINE)
            eng[ne++] = i;
        else
            dec[nd++] = i;
    }
    /* Phase 2: the engines on this thread while the pool runs the decoupled files; when another
     * context holds every engine state, the engine files join the decoupled ones. */
    gj_hw *hw = ne ? hw_take(c->dev) : NULL;
    if (ne && !hw) {
        for (int k = 0; k < ne; k++) {
            rt[eng[k]].path = GJ_PATH_CUDA;
            res[eng[k]].path = GJ_PATH_CUDA;
            dec[nd++] = eng[k];
        }
        ne = 0;
    }
    j.idx = dec, j.n = nd, j.phase = 2;
    atomic_store(&j.next, 0);
    if (nd)
        pool_start(&p, &j, ne == 0);
    int eng_ok = ne ? engine_batch(c, hw, &j, eng, ne) : 1;
    if (hw)
        pthread_mutex_unlock(&hw->lock);
    if (nd)
        pool_join(&p);
    if (!eng_ok && !atomic_load(&j.fatal)) {
        /* The batch failed as a whole: each of its files alone, so that one bad file costs only
         * itself. */
        for (int k = 0; k < ne; k++)
            rt[eng[k]].path = GJ_PATH_CUDA;
        j.idx = eng, j.n = ne;
        atomic_store(&j.next, 0);
        pool_start(&p, &j, 1);
        pool_join(&p);
    }
    int fatal = atomic_load(&j.fatal);
    free(rt), free(all), free(eng), free(dec);
    if (fatal)
        return ts_fail(TS_ERR_CUDA, "nvJPEG decode: the GPU reported a fatal error");
    return TS_OK;
}

#else

void gj_ctx_decode_profile(const gj_ctx *ctx, double out[GJ_PROF_COUNT])
{
    (void)ctx;
    for (int k = 0; k < GJ_PROF_COUNT; k++)
        out[k] = 0;
}

ts_status gj_decode_batch(gj_ctx *ctx, const unsigned char *const *data, const size_t *len, int n,
                          gj_result *res)
{
    char why[160];
    return gj_load(why, sizeof why);
}

#endif
