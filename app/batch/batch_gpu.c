/* batch_gpu.c - the batch's GPU path: the nvJPEG codec (app/codec/gpu_jpeg.h) in the codec table, a
 * context per GPU worker, a pool of device buffers per device, pinned staging for downloads.
 *
 * Why the shape:
 *   - Decoded images stay on their device: nvJPEG decodes into a pool buffer, the pipeline runs
 *     the chain on it in place (ts_pipeline_run_dev) and hands back the result's buffer
 *     (ts_pipeline_take_result), which nvJPEG encodes. Only the file's bytes and the JPEG's bytes
 *     cross PCIe; for other output formats the pixels come down once, into pinned memory.
 *   - The pool: a buffer lives from decode to encode, then returns to its device's pool for the
 *     next image. The scheduler bounds the images in flight, so the buffers a device ever has are
 *     bounded too (in flight + the pipeline's two), whatever the batch's length.
 *   - A worker's device is made current in its own thread before any CUDA call (the runtime
 *     keeps the current device per thread).
 */
#include "batch.h"
#include "gpu_jpeg.h"
#include "photo_io.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef TS_HAVE_CUDA
#include <cuda_runtime.h>
#endif

struct gpu_pool {
    pthread_mutex_t lock;
    pthread_mutex_t retry; /* one encoder of the device at a time retries after running out */
    ts_image *im;
    size_t *cap;
    int n, len;
};

struct gpu_worker {
    device_slot *d;
    ts_stream stream;
    gj_ctx *gj;          /* NULL: nvJPEG not usable here (the CPU codecs do JPEG) */
    gj_result *res;      /* one per file of a decode call (max 8, the codec's batch) */
    int n_res;
    void *staging;       /* pinned host memory for downloads */
    size_t staging_cap;
};

/* ---------------------------------------------------------------- device buffers */

void batch_gpu_take(device_slot *d, ts_image *im, size_t *cap)
{
    memset(im, 0, sizeof *im);
    *cap = 0;
    if (!d->pool)
        return;
    pthread_mutex_lock(&d->pool->lock);
    if (d->pool->n > 0) {
        d->pool->n--;
        *im = d->pool->im[d->pool->n];
        *cap = d->pool->cap[d->pool->n];
    }
    pthread_mutex_unlock(&d->pool->lock);
}

void batch_gpu_give(device_slot *d, ts_image *im, size_t *cap)
{
    if (!im->data)
        return;
    if (!d->pool) {
        ts_gpu_image_free(im);
        *cap = 0;
        return;
    }
    gpu_pool *p = d->pool;
    pthread_mutex_lock(&p->lock);
    if (p->n == p->len) {
        p->len = p->len ? 2 * p->len : 16;
        p->im = realloc(p->im, (size_t)p->len * sizeof *p->im);
        p->cap = realloc(p->cap, (size_t)p->len * sizeof *p->cap);
        if (!p->im || !p->cap) {
            app_warn("out of memory");
            exit(1);
        }
    }
    p->im[p->n] = *im;
    p->cap[p->n++] = *cap;
    pthread_mutex_unlock(&p->lock);
    memset(im, 0, sizeof *im);
    *cap = 0;
}

static ts_status fake_nomem(char *err, size_t errlen)
{
    snprintf(err, errlen, "nvjpegEncodeImage: allocation failed (TESSERA_TEST_GPU_ENCODE_NOMEM)");
    return TS_ERR_NOMEM;
}

/* Gives the device's cached buffers back to CUDA: an encoder that ran out of device memory
 * needs it more than the next image's decode, which allocates again when it must. */
static void pool_trim(device_slot *d)
{
    pthread_mutex_lock(&d->pool->lock);
    for (int k = 0; k < d->pool->n; k++)
        ts_gpu_image_free(&d->pool->im[k]);
    d->pool->n = 0;
    pthread_mutex_unlock(&d->pool->lock);
}

/* ---------------------------------------------------------------- open and close */

static int any_gpu(const batch *b)
{
    for (int i = 0; i < b->n_devs; i++)
        if (b->devs[i].id >= 0)
            return 1;
    return 0;
}

static void warn_once(batch *b, const char *why)
{
    pthread_mutex_lock(&b->lock);
    int first = !b->gpu_warned;
    b->gpu_warned = 1;
    pthread_mutex_unlock(&b->lock);
    if (first && !b->o->quiet)
        app_warn("nvJPEG %s: JPEG files are decoded and encoded on the CPU", why);
}

/* The JPEG engines are used only when TESSERA_NVJPEG_ENGINES=1. Measured on an H100 with 16
 * host cores (2026-11-24, 1200 baseline 8 MP photos, gauss:5,equalize,rotate:90, JPEG q90): the
 * decoupled path alone (its GPU Huffman decoder takes the large baseline files) 2.26 s; with the
 * engines 3.72 s, of which 1.0 s is the hardware backend's handle and two engine states (1.3 s
 * against 0.3 s for the default handle) and the rest the engines' share running no faster than
 * the decoupled path beside them. A host with few cores per GPU may gain: hence the switch. */
#define ENGINE_STATES 2 /* shared by a device's workers, taken in turn */

static int use_engines(void)
{
    const char *e = getenv("TESSERA_NVJPEG_ENGINES");
    return e && !strcmp(e, "1");
}

/* Where baseline files' Huffman is decoded: nvJPEG's choice by size unless
 * TESSERA_NVJPEG_HUFFMAN=host|gpu asks (measurements). */
static gj_huffman huffman_place(void)
{
    const char *e = getenv("TESSERA_NVJPEG_HUFFMAN");
    return !e ? GJ_HUFFMAN_AUTO
           : !strcmp(e, "host") ? GJ_HUFFMAN_HOST
           : !strcmp(e, "gpu")  ? GJ_HUFFMAN_GPU
                                : GJ_HUFFMAN_AUTO;
}

/* The workers share the cores: each decodes its own steps' Huffman work on this many threads. */
static int host_threads(const batch *b)
{
    int workers = b->workers > 0 ? b->workers : b->o->jobs > 0 ? b->o->jobs : 1;
    int cores = cpu_count();
    return cores / workers > 1 ? cores / workers : 1;
}

/* The engines' batched call wants several files; the decoupled path decodes a step's files on
 * the worker's host threads, so a step of more files than those only queues them behind one
 * worker while the others wait for the in-flight bound (2 per worker: 16 workers with 8-file
 * steps had at most 4 steps decoding at once). */
int batch_gpu_decode_batch(const batch *b)
{
    int n = use_engines() ? 8 : host_threads(b);
    return n < 8 ? n : 8;
}

/* How host threads wait for a GPU: CUDA's choice (with one context and many cores, spinning)
 * unless TESSERA_CUDA_SYNC=spin|yield|block asks for another (measurements). Blocking was
 * measured and not kept (2 x H100, 32 cores, 4800 camera photos, 2026-11-26): host CPU per image
 * the same (16-17 ms: the waits are not where it goes), and with 32 workers on one device
 * 720 images/s against 1598 spinning (each wake-up lengthens the device's turn at its chain). */
static const char *sync_mode(unsigned *flags)
{
    const char *e = getenv("TESSERA_CUDA_SYNC");
    *flags = 0;
#ifdef TS_HAVE_CUDA
    static const struct {
        const char *name;
        unsigned flag;
    } modes[] = {{"block", cudaDeviceScheduleBlockingSync}, {"spin", cudaDeviceScheduleSpin},
                 {"yield", cudaDeviceScheduleYield}};
    for (size_t i = 0; e && i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(e, modes[i].name) == 0) {
            *flags = modes[i].flag;
            return modes[i].name;
        }
#else
    (void)e;
#endif
    return "CUDA's default";
}

/* One device's nvJPEG set-up, in a thread of its own: the devices' handles (hundreds of ms
 * each) are made at the same time rather than one after the other. */
typedef struct dev_setup {
    batch *b;
    device_slot *d;
    ts_status st;
    char why[512];
    double open_ms, warm_ms;
} dev_setup;

static void *setup_device(void *arg)
{
    dev_setup *u = arg;
    batch *b = u->b;
    gj_opts go = {.no_engine = !use_engines(), .engine_states = ENGINE_STATES};
    double t1 = now_ms();
    u->st = ts_gpu_use(u->d->id);
    if (u->st == TS_OK)
        u->st = gj_dev_open(&u->d->gj, &go, u->why, sizeof u->why);
    double t2 = now_ms();
    batch_mark(b, "nvJPEG handles", u->d->id, t1 - b->t0, t2 - b->t0);
    if (u->st == TS_OK) { /* its parts, in the order gj_dev_open makes them */
        gj_setup_times st;
        gj_dev_setup_times(u->d->gj, &st);
        double at = t1 - b->t0;
        const struct {
            const char *what;
            double ms;
        } part[] = {{"  nvJPEG decode handle", st.handle_ms},
                    {"  nvJPEG decoders (host and GPU Huffman)", st.decoders_ms},
                    {"  nvJPEG encode handle", st.encoder_ms},
                    {"  nvJPEG engine states", st.states_ms}};
        for (size_t k = 0; k < sizeof part / sizeof part[0]; k++) {
            if (part[k].ms > 0.05)
                batch_mark(b, part[k].what, u->d->id, at, at + part[k].ms);
            at += part[k].ms;
        }
    }
    if (u->st == TS_OK)
        u->st = gj_dev_warm_up(u->d->gj, u->why, sizeof u->why);
    double t3 = now_ms();
    batch_mark(b, "nvJPEG warm-up", u->d->id, t2 - b->t0, t3 - b->t0);
    u->open_ms = t2 - t1, u->warm_ms = t3 - t2;
    if (u->st != TS_OK && !u->why[0])
        snprintf(u->why, sizeof u->why, "%s", ts_error_detail());
    return NULL;
}

void batch_gpu_open(batch *b)
{
    if (!any_gpu(b))
        return;
    unsigned flags;
    b->cuda_sync = sync_mode(&flags);
    for (int i = 0; i < b->n_devs; i++) {
        if (b->devs[i].id < 0)
            continue;
        b->devs[i].pool = xcalloc(1, sizeof *b->devs[i].pool);
        pthread_mutex_init(&b->devs[i].pool->lock, NULL);
        pthread_mutex_init(&b->devs[i].pool->retry, NULL);
#ifdef TS_HAVE_CUDA
        /* the device's context exists (its pipeline): the flags apply to it from now on */
        if (flags && ts_gpu_use(b->devs[i].id) == TS_OK &&
            cudaSetDeviceFlags(flags) != cudaSuccess) {
            cudaGetLastError();
            b->cuda_sync = "auto (the driver refused another)";
        }
#endif
    }
    char why[512];
    double t0 = now_ms();
    ts_status loaded = gj_load(why, sizeof why);
    b->setup_load_ms = now_ms() - t0;
    batch_mark(b, "nvJPEG load", -1, t0 - b->t0, t0 - b->t0 + b->setup_load_ms);
    if (loaded != TS_OK) {
        warn_once(b, why);
        return;
    }
    /* one set of nvJPEG handles per device, made before the workers start (the warm-up loads the
     * library's kernels once), every device at once */
    dev_setup *u = xcalloc((size_t)b->n_devs, sizeof *u);
    pthread_t *tid = xcalloc((size_t)b->n_devs, sizeof *tid);
    int *started = xcalloc((size_t)b->n_devs, sizeof *started);
    for (int i = 0; i < b->n_devs; i++) {
        if (b->devs[i].id < 0)
            continue;
        u[i] = (dev_setup){.b = b, .d = &b->devs[i]};
        started[i] = i > 0 && pthread_create(&tid[i], NULL, setup_device, &u[i]) == 0;
        if (!started[i] && i > 0)
            setup_device(&u[i]);
    }
    if (b->devs[0].id >= 0)
        setup_device(&u[0]); /* the first in this thread */
    for (int i = 0; i < b->n_devs; i++) {
        if (started[i])
            pthread_join(tid[i], NULL);
        if (b->devs[i].id < 0)
            continue;
        b->setup_codec_ms = u[i].open_ms > b->setup_codec_ms ? u[i].open_ms : b->setup_codec_ms;
        b->setup_warm_ms = u[i].warm_ms > b->setup_warm_ms ? u[i].warm_ms : b->setup_warm_ms;
        if (u[i].st != TS_OK) {
            gj_dev_close(b->devs[i].gj);
            b->devs[i].gj = NULL;
            warn_once(b, u[i].why);
            continue;
        }
        b->gpu_codec = 1;
    }
    free(u);
    free(tid);
    free(started);
}

void batch_gpu_close(batch *b)
{
    for (int i = 0; i < b->n_devs; i++) {
        if (b->devs[i].gj) {
            ts_gpu_use(b->devs[i].id);
            gj_dev_close(b->devs[i].gj);
            b->devs[i].gj = NULL;
        }
        gpu_pool *p = b->devs[i].pool;
        if (!p)
            continue;
        ts_gpu_use(b->devs[i].id);
        for (int k = 0; k < p->n; k++)
            ts_gpu_image_free(&p->im[k]);
        free(p->im);
        free(p->cap);
        pthread_mutex_destroy(&p->lock);
        pthread_mutex_destroy(&p->retry);
        free(p);
        b->devs[i].pool = NULL;
    }
}

gpu_worker *batch_gpu_worker_create(batch *b, device_slot *d)
{
    if (d->id < 0 || !d->pool)
        return NULL;
    if (ts_gpu_use(d->id) != TS_OK) {
        warn_once(b, ts_error_detail());
        return NULL;
    }
    gpu_worker *w = xcalloc(1, sizeof *w);
    w->d = d;
    if (ts_gpu_stream_create(&w->stream) != TS_OK) {
        warn_once(b, ts_error_detail());
        free(w);
        return NULL;
    }
    if (d->gj) {
        char why[512];
        gj_opts go = {.host_threads = host_threads(b), .max_pixels = b->o->max_pixels,
                      .huffman = huffman_place()};
        double t0 = now_ms();
        ts_status st = gj_ctx_create_on(&w->gj, d->gj, w->stream, &go, why, sizeof why);
        double ms = now_ms() - t0;
        batch_mark(b, "worker's nvJPEG context", d->id, t0 - b->t0, t0 - b->t0 + ms);
        pthread_mutex_lock(&b->lock);
        if (ms > b->setup_worker_ms)
            b->setup_worker_ms = ms;
        pthread_mutex_unlock(&b->lock);
        if (st != TS_OK) {
            w->gj = NULL;
            warn_once(b, why);
        } else {
            w->n_res = 8;
            w->res = xcalloc((size_t)w->n_res, sizeof *w->res);
        }
    }
    return w;
}

static void staging_free(gpu_worker *w)
{
#ifdef TS_HAVE_CUDA
    if (w->staging)
        cudaFreeHost(w->staging);
#endif
    w->staging = NULL;
    w->staging_cap = 0;
}

void batch_gpu_worker_destroy(gpu_worker *w)
{
    if (!w)
        return;
    ts_gpu_use(w->d->id);
    if (w->res) {
        gj_results_free(w->res, w->n_res);
        free(w->res);
    }
    gj_ctx_destroy(w->gj);
    staging_free(w);
    ts_gpu_stream_destroy(w->stream);
    free(w);
}

/* ---------------------------------------------------------------- download */

ts_status batch_gpu_download(gpu_worker *w, item *it, const ts_image *d_im, ts_image *h, char *err,
                             size_t errlen)
{
    memset(h, 0, sizeof *h);
    if (!w) {
        snprintf(err, errlen, "a device image without a GPU worker");
        return TS_ERR_INVALID;
    }
#ifdef TS_HAVE_CUDA
    size_t pitch = ts_row_bytes(d_im), need = pitch * (size_t)d_im->height;
    if (need > w->staging_cap) {
        staging_free(w);
        void *p = NULL;
        cudaError_t e = cudaMallocHost(&p, need);
        if (e != cudaSuccess) {
            cudaGetLastError();
            snprintf(err, errlen, "cannot pin %zu bytes of host memory: %s", need,
                     cudaGetErrorString(e));
            return TS_ERR_NOMEM;
        }
        w->staging = p;
        w->staging_cap = need;
    }
    *h = *d_im;
    h->data = w->staging;
    h->pitch = pitch;
    double t0 = now_ms(), c0 = thread_cpu_ms();
    ts_status st = ts_gpu_download(h, d_im, w->stream);
    if (st == TS_OK)
        st = ts_gpu_sync(w->stream);
    it->ms[ST_DOWNLOAD] += now_ms() - t0;
    it->cpu[ST_DOWNLOAD] += thread_cpu_ms() - c0;
    if (st != TS_OK) {
        snprintf(err, errlen, "download: %s", ts_error_detail());
        memset(h, 0, sizeof *h);
    }
    return st;
#else
    (void)it, (void)d_im;
    snprintf(err, errlen, "built without CUDA");
    return TS_ERR_NO_GPU;
#endif
}

/* ---------------------------------------------------------------- the nvJPEG codec */

void gpu_codec_decode(const batch *b, gpu_worker *w, decode_slot *const *slots, int n)
{
    if (!w || !w->gj)
        return;
    const unsigned char *data[8];
    size_t len[8];
    unsigned char *own[8];
    int idx[8], m = 0;
    for (int k = 0; k < n && m < w->n_res; k++) {
        item *it = slots[k]->it;
        double t0 = now_ms(), c0 = thread_cpu_ms();
        size_t l = 0;
        /* JPEG by content, through the one guarded read (size, head, probe): other files go to
         * the CPU codec untouched, read no further than their head; one refused too (it says
         * why, and the same way) */
        unsigned char *buf = NULL;
        char why[256];
        if (tsio_read_file(it->input, b->o->max_pixels, tsio_codec_jpeg(), &buf, &l, NULL, why,
                           sizeof why) != TS_OK || l < 4) {
            free(buf);
            continue;
        }
        it->ms[ST_READ] = now_ms() - t0;
        it->cpu[ST_READ] += thread_cpu_ms() - c0;
        own[m] = buf;
        data[m] = buf;
        len[m] = l;
        idx[m] = k;
        batch_gpu_take(w->d, &w->res[m].d_im, &w->res[m].capacity);
        m++;
    }
    if (m == 0)
        return;
    /* the calling thread's CPU beyond what the files' own threads counted (res[].cpu_ms): the
     * call's set-up and its wait for the stream, shared out */
    double c0 = thread_cpu_ms();
    ts_status call = gj_decode_batch(w->gj, data, len, m, w->res);
    if (call == TS_OK)
        call = ts_gpu_sync(w->stream); /* the pipeline's stream reads them next */
    double own_cpu = thread_cpu_ms() - c0;
    for (int j = 0; j < m; j++)
        own_cpu -= w->res[j].cpu_ms;
    own_cpu = own_cpu > 0 ? own_cpu / m : 0; /* pool threads ran the files: only the rest */
    for (int j = 0; j < m; j++) {
        decode_slot *s = slots[idx[j]];
        gj_result *r = &w->res[j];
        double c1 = thread_cpu_ms();
        if (call == TS_OK && r->status == TS_OK &&
            tsio_codec_jpeg()->meta_read(own[j], len[j], &s->meta) != TS_OK)
            r->status = TS_ERR_NOMEM; /* the CPU codec tries it */
        s->it->cpu[ST_DECODE] += r->cpu_ms + own_cpu + (thread_cpu_ms() - c1);
        free(own[j]);
        if (call == TS_OK && r->status == TS_OK) {
            s->im = r->d_im;
            s->cap = r->capacity;
            s->on_device = 1;
            s->st = TS_OK;
            s->it->ms[ST_DECODE] = r->ms;
            s->it->decode_path = gj_path_name(r->path);
            memset(&r->d_im, 0, sizeof r->d_im);
            r->capacity = 0;
        } else {
            /* the CPU codec decodes it alone (st stays TS_ERR_UNSUPPORTED); its read is redone */
            s->it->ms[ST_READ] = 0;
            batch_gpu_give(w->d, &r->d_im, &r->capacity);
        }
    }
}

static tsio_format out_format(const batch *b, const item *it)
{
    return b->o->format != TSIO_UNKNOWN ? b->o->format : tsio_format_from_name(it->output);
}

ts_status gpu_codec_encode(const batch *b, gpu_worker *w, item *it, const ts_image *im,
                           int on_device, char *notice, size_t noticelen, char *err,
                           size_t errlen)
{
    if (noticelen)
        notice[0] = '\0';
    /* JPEG of 8-bit gray or RGB already on the device; the CPU codec does the rest (16-bit and
     * alpha conversions with their notices) */
    if (!on_device || !w || !w->gj || out_format(b, it) != TSIO_JPEG || im->bytes != 1 ||
        (im->channels != 1 && im->channels != 3))
        return TS_ERR_UNSUPPORTED;
    if (!b->o->force && path_exists(it->output)) {
        snprintf(err, errlen, "exists (use --force)");
        return TS_ERR_IO;
    }
    gj_encode_opts eo = {b->o->quality, 420}; /* 0: the default (tsio_quality) */
    unsigned char *jpg = NULL;
    size_t n = 0;
    double t0 = now_ms(), c0 = thread_cpu_ms();
    /* tests: TESSERA_TEST_GPU_ENCODE_NOMEM=once fails the first try as if the device were full,
     * =1 every try */
    const char *nomem = getenv("TESSERA_TEST_GPU_ENCODE_NOMEM");
    int fake = 0;
    if (nomem)
        fake = !strcmp(nomem, "1") ? 2 : !strcmp(nomem, "once") ? 1 : 0;
    ts_status st =
        fake ? fake_nomem(err, errlen) : gj_encode(w->gj, im, &eo, &jpg, &n, err, errlen);
    if (st == TS_ERR_NOMEM && w->d->pool) {
        /* The device is full (other images in flight, nvJPEG's own buffers: a 268 MP image
         * holds 6-8 GB): the cached buffers go back to CUDA and one encoder of the device at a
         * time tries again; failing that, the CPU encoder takes the image (batch_encode
         * downloads it), and the file says so. */
        pool_trim(w->d);
        pthread_mutex_lock(&w->d->pool->retry);
        st = fake == 2 ? fake_nomem(err, errlen)
                       : gj_encode(w->gj, im, &eo, &jpg, &n, err, errlen);
        pthread_mutex_unlock(&w->d->pool->retry);
        if (st == TS_ERR_NOMEM) {
            it->ms[ST_ENCODE] = now_ms() - t0;
            it->cpu[ST_ENCODE] += thread_cpu_ms() - c0;
            snprintf(notice, noticelen, "the GPU was out of memory: encoded on the CPU");
            return TS_ERR_UNSUPPORTED;
        }
    }
    it->ms[ST_ENCODE] = now_ms() - t0;
    it->cpu[ST_ENCODE] += thread_cpu_ms() - c0;
    if (st != TS_OK) {
        free(jpg);
        return st == TS_ERR_UNSUPPORTED ? TS_ERR_CUDA : st; /* no silent second try */
    }
    t0 = now_ms(), c0 = thread_cpu_ms();
    if (it->meta_out.exif || it->meta_out.icc) { /* nvJPEG writes none: spliced in here */
        unsigned char *with = NULL;
        size_t wn = 0;
        st = tsio_jpeg_add_meta(jpg, n, &it->meta_out, &with, &wn, notice, noticelen);
        if (st != TS_OK) {
            free(jpg);
            snprintf(err, errlen, "cannot add the metadata: %s", ts_status_str(st));
            return st;
        }
        free(jpg);
        jpg = with;
        n = wn;
    }
    st = tsio_save_bytes(it->output, jpg, n, b->o->force, err, errlen);
    it->ms[ST_WRITE] = now_ms() - t0;
    it->cpu[ST_WRITE] += thread_cpu_ms() - c0;
    free(jpg);
    return st;
}
