/* gpu_jpeg.c - nvJPEG behind gpu_jpeg.h: the run-time loader, the per-worker context and encode;
 * batched decode over three paths (engines, decoupled CUDA decode on host threads, CPU by the
 * caller) is in gpu_jpeg_decode.c. See gpu_jpeg.h for the contract.
 *
 * Why the shape:
 *   - dlopen, not a link: Debian's CUDA and many machines lack libnvjpeg; the binary must run
 *     there and say why it uses the CPU codecs.
 *   - A batch runs in two phases over a pool of host threads, each with its own parse stream and
 *     decoder states (nvJPEG states are not thread-safe; the handle is): first every file's header
 *     is read and routed, then the calling thread feeds the engines one batched call while the
 *     other threads run the decoupled decode, whose Huffman stage (progressive files above all)
 *     is host work that only scales with threads.
 *   - Isolation: a file that fails on the decoupled path gets its thread's state replaced before
 *     the next file; a batched engine call that fails (the API does not say which file) gets a
 *     fresh engine state and its files are decoded again one by one on the decoupled path.
 */
#include "codec.h"
#include "gpu_jpeg_int.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define GJ_NAME(n) #n,
static const char *const sym_names[] = {GJ_SYMS(GJ_NAME)};
_Static_assert(sizeof sym_names / sizeof sym_names[0] == GJ_N_SYMS, "one name per symbol");

const char *gj_path_name(gj_path p)
{
    switch (p) {
    case GJ_PATH_ENGINE: return "engine";
    case GJ_PATH_CUDA: return "cuda";
    case GJ_PATH_CPU: return "cpu";
    default: return "-";
    }
}

/* Opens `name` and resolves every symbol into slots[] (NULL: only check). */
static ts_status open_lib(const char *name, void **lib, void **slots, char *why, size_t len)
{
    *lib = NULL;
    dlerror();
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        return tsio_fail(why, len, TS_ERR_UNSUPPORTED, "unavailable: %s", e ? e : name);
    }
    for (size_t i = 0; i < GJ_N_SYMS; i++) {
        void *f = dlsym(h, sym_names[i]);
        if (!f) {
            dlclose(h);
            return tsio_fail(why, len, TS_ERR_UNSUPPORTED, "unavailable: %s has no %s", name,
                            sym_names[i]);
        }
        if (slots)
            slots[i] = f;
    }
    *lib = h;
    return TS_OK;
}

ts_status gj_probe(const char *name, char *why, size_t whylen)
{
    void *lib;
    ts_status st = open_lib(name, &lib, NULL, why, whylen);
    if (st == TS_OK)
        dlclose(lib);
    return st;
}

#ifdef GJ_ENABLED

/* Runs `fn` over every name the loader tries, in order, until it returns nonzero. */
static int for_each_lib_name(int (*fn)(const char *name, void *arg), void *arg)
{
    const char *env = getenv("TESSERA_NVJPEG_LIB");
    if (env && *env)
        return fn(env, arg); /* an explicit choice: nothing else (tests force absence with it) */
    static const char *const bare[] = {"libnvjpeg.so.13", "libnvjpeg.so"};
    for (size_t i = 0; i < sizeof bare / sizeof bare[0]; i++)
        if (fn(bare[i], arg))
            return 1;
#ifdef TS_NVJPEG_DIRS
    /* Where the build found the header: CUDA's lib64 or `make deps`' .deps/nvjpeg/lib. */
    const char *dirs = TS_NVJPEG_DIRS;
    while (*dirs) {
        size_t n = strcspn(dirs, ":");
        char path[1024];
        if (n > 0 && n < 900) {
            snprintf(path, sizeof path, "%.*s/libnvjpeg.so.13", (int)n, dirs);
            if (fn(path, arg))
                return 1;
        }
        dirs += n + (dirs[n] == ':');
    }
#endif
    return 0;
}

gj_nv_table gj_nv;
_Static_assert(sizeof gj_nv.f == sizeof gj_nv.slot, "one pointer per symbol");

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static ts_status load_status = TS_ERR_UNSUPPORTED;
static char load_why[512];

struct try_arg {
    char first_err[400];
    int tried;
};

static int try_one(const char *name, void *arg)
{
    struct try_arg *t = arg;
    char why[400];
    void *lib;
    if (open_lib(name, &lib, gj_nv.slot, why, sizeof why) == TS_OK)
        return 1; /* kept open for the life of the process */
    if (!t->tried++)
        snprintf(t->first_err, sizeof t->first_err, "%s", why);
    return 0;
}

static void load_once_fn(void)
{
    struct try_arg t = {{0}, 0};
    if (for_each_lib_name(try_one, &t)) {
        load_status = TS_OK;
        load_why[0] = 0;
    } else {
        load_status = TS_ERR_UNSUPPORTED;
        snprintf(load_why, sizeof load_why, "%s", t.first_err);
    }
}

ts_status gj_load(char *why, size_t whylen)
{
    pthread_once(&load_once, load_once_fn);
    if (load_status != TS_OK)
        return tsio_fail(why, whylen, load_status, "%s", load_why);
    if (why && whylen)
        why[0] = 0;
    return TS_OK;
}

const char *gj_nvj_str(nvjpegStatus_t s)
{
    switch (s) {
    case NVJPEG_STATUS_SUCCESS: return "success";
    case NVJPEG_STATUS_NOT_INITIALIZED: return "not initialized";
    case NVJPEG_STATUS_INVALID_PARAMETER: return "invalid parameter";
    case NVJPEG_STATUS_BAD_JPEG: return "bad JPEG";
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED: return "JPEG not supported";
    case NVJPEG_STATUS_ALLOCATOR_FAILURE: return "allocation failed";
    case NVJPEG_STATUS_EXECUTION_FAILED: return "execution failed";
    case NVJPEG_STATUS_ARCH_MISMATCH: return "not supported on this GPU";
    case NVJPEG_STATUS_INTERNAL_ERROR: return "internal error";
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED: return "not implemented for this backend";
    case NVJPEG_STATUS_INCOMPLETE_BITSTREAM: return "incomplete bitstream";
    default: return "unknown nvJPEG status";
    }
}

/* ---------------------------------------------------------------- nvJPEG's memory
 *
 * nvJPEG allocates and frees its work buffers as it goes: with its default allocators a batch of
 * 120 camera photos made 263 device allocations (7.6 GB in all) and 55 pinned ones, and 120
 * progressive files 1.4 GB of pinned memory, each cudaFree waiting for the whole device and each
 * cudaHostAlloc pinning pages afresh (H100, 16 workers, 2026-11-27: 0.8-1.1 s of the workers'
 * time for the camera batch, 4-6 s for the progressive one). So every handle and buffer of this
 * module gets these allocators (nvJPEG's V2 interface, stream-ordered):
 *   device  from the device's stream-ordered pool (cudaMallocAsync / cudaFreeAsync on the stream
 *           nvJPEG names), which keeps freed memory for the next allocation;
 *   pinned  freed blocks kept, once their stream is done, for a later allocation they fit (at
 *           most PIN_CACHE_MAX bytes kept; the rest is freed), all freed when the last device
 *           part closes.
 * Pinned blocks are portable (every device's context sees them pinned): the cache is the
 * process's. $TESSERA_NVJPEG_ALLOC=sync gives the default allocators' behaviour back
 * (measurements). */

enum { A_DEV = 0, A_PIN = 1 };
#define PIN_CACHE_MAX ((size_t)2 << 30)
typedef struct pin_block {
    void *p;
    size_t n;
} pin_block;
static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static gj_alloc_counts alloc_counts = {.mode = "pool"};
static int alloc_sync;                   /* $TESSERA_NVJPEG_ALLOC=sync */
static int dev_nopool; /* the first device has no stream-ordered pools: cudaMalloc (set once) */
static pin_block *pin_live, *pin_idle;   /* handed out / kept for reuse (under alloc_lock) */
static int n_live, cap_live, n_idle, cap_idle;
static size_t idle_bytes;
static int open_devs; /* device parts open: the last one's close frees the cache */

static void alloc_count(int kind, int is_free, size_t bytes, double t0)
{
    double ms = gj_clock_ms(CLOCK_MONOTONIC) - t0;
    pthread_mutex_lock(&alloc_lock);
    alloc_counts.n[kind][is_free]++;
    alloc_counts.ms[kind][is_free] += ms;
    if (!is_free)
        alloc_counts.bytes[kind] += (double)bytes;
    pthread_mutex_unlock(&alloc_lock);
}

static int dev_malloc(void *ctx, void **p, size_t n, cudaStream_t s)
{
    (void)ctx;
    double t0 = gj_clock_ms(CLOCK_MONOTONIC);
    cudaError_t e = alloc_sync || dev_nopool ? cudaMalloc(p, n) : cudaMallocAsync(p, n, s);
    alloc_count(A_DEV, 0, n, t0);
    return e == cudaSuccess ? 0 : (cudaGetLastError(), 1);
}

static int dev_free(void *ctx, void *p, size_t n, cudaStream_t s)
{
    (void)ctx, (void)n;
    double t0 = gj_clock_ms(CLOCK_MONOTONIC);
    cudaError_t e = alloc_sync || dev_nopool ? cudaFree(p) : cudaFreeAsync(p, s);
    alloc_count(A_DEV, 1, 0, t0);
    return e == cudaSuccess ? 0 : (cudaGetLastError(), 1);
}

/* Appends b to a block list (alloc_lock held); 0, or -1 out of memory. */
static int pin_push(pin_block **v, int *len, int *cap, pin_block b)
{
    if (*len == *cap) {
        int c = *cap ? 2 * *cap : 64;
        pin_block *w = realloc(*v, (size_t)c * sizeof *w);
        if (!w)
            return -1;
        *v = w;
        *cap = c;
    }
    (*v)[(*len)++] = b;
    return 0;
}

static int pinned_malloc(void *ctx, void **p, size_t n, cudaStream_t s)
{
    (void)ctx, (void)s;
    double t0 = gj_clock_ms(CLOCK_MONOTONIC);
    *p = NULL;
    pthread_mutex_lock(&alloc_lock);
    /* the smallest kept block that holds n without wasting most of itself */
    int best = -1;
    for (int i = 0; !alloc_sync && i < n_idle; i++)
        if (pin_idle[i].n >= n && pin_idle[i].n <= 4 * n + ((size_t)1 << 20) &&
            (best < 0 || pin_idle[i].n < pin_idle[best].n))
            best = i;
    pin_block b = {NULL, n};
    if (best >= 0) {
        b = pin_idle[best];
        pin_idle[best] = pin_idle[--n_idle];
        idle_bytes -= b.n;
        alloc_counts.pinned_reused++;
    }
    pthread_mutex_unlock(&alloc_lock);
    cudaError_t e = cudaSuccess;
    if (!b.p && (e = cudaHostAlloc(&b.p, n, cudaHostAllocPortable)) != cudaSuccess)
        cudaGetLastError();
    if (e == cudaSuccess) {
        pthread_mutex_lock(&alloc_lock);
        if (pin_push(&pin_live, &n_live, &cap_live, b) != 0)
            e = cudaErrorMemoryAllocation;
        pthread_mutex_unlock(&alloc_lock);
        if (e != cudaSuccess)
            cudaFreeHost(b.p);
        else
            *p = b.p;
    }
    alloc_count(A_PIN, 0, n, t0);
    return e == cudaSuccess ? 0 : 1;
}

/* Stream-ordered: work queued on `s` may still read the block, so that is waited for first. */
static int pinned_free(void *ctx, void *p, size_t n, cudaStream_t s)
{
    (void)ctx, (void)n;
    double t0 = gj_clock_ms(CLOCK_MONOTONIC);
    cudaError_t e = cudaStreamSynchronize(s);
    pin_block b = {p, 0};
    pthread_mutex_lock(&alloc_lock);
    for (int i = 0; i < n_live; i++)
        if (pin_live[i].p == p) {
            b = pin_live[i];
            pin_live[i] = pin_live[--n_live];
            break;
        }
    int keep = e == cudaSuccess && !alloc_sync && b.n > 0 && idle_bytes + b.n <= PIN_CACHE_MAX &&
               pin_push(&pin_idle, &n_idle, &cap_idle, b) == 0;
    if (keep)
        idle_bytes += b.n;
    pthread_mutex_unlock(&alloc_lock);
    if (!keep) {
        cudaGetLastError();
        e = cudaFreeHost(p);
    }
    alloc_count(A_PIN, 1, 0, t0);
    return e == cudaSuccess ? 0 : (cudaGetLastError(), 1);
}

nvjpegDevAllocatorV2_t gj_dev_alloc = {dev_malloc, dev_free, NULL};
nvjpegPinnedAllocatorV2_t gj_pinned_alloc = {pinned_malloc, pinned_free, NULL};

static pthread_once_t alloc_once = PTHREAD_ONCE_INIT;
/* Once, before any handle: the mode, and whether the (first) device has pools at all. */
static void alloc_mode(void)
{
    const char *m = getenv("TESSERA_NVJPEG_ALLOC");
    int dev, pools = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, dev) != cudaSuccess)
        cudaGetLastError();
    pthread_mutex_lock(&alloc_lock);
    alloc_sync = m && strcmp(m, "sync") == 0;
    dev_nopool = !pools;
    alloc_counts.mode = alloc_sync ? "sync" : "pool";
    pthread_mutex_unlock(&alloc_lock);
}

/* Before each handle, its device current: the mode, and that device's pool kept from handing
 * memory back between uses. */
void gj_alloc_init(void)
{
    pthread_once(&alloc_once, alloc_mode);
    if (alloc_sync || dev_nopool)
        return;
    int dev;
    cudaMemPool_t pool;
    uint64_t keep = UINT64_MAX;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetDefaultMemPool(&pool, dev) != cudaSuccess ||
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess)
        cudaGetLastError(); /* the pool then gives memory back at each sync: slower, still right */
}

/* A device part opens (+1) or closes (-1); the last close frees the kept pinned blocks. */
static void alloc_users(int delta)
{
    pthread_mutex_lock(&alloc_lock);
    open_devs += delta;
    pin_block *idle = NULL;
    int n = 0;
    if (open_devs == 0) {
        idle = pin_idle;
        n = n_idle;
        pin_idle = NULL;
        n_idle = cap_idle = 0;
        idle_bytes = 0;
    }
    pthread_mutex_unlock(&alloc_lock);
    for (int i = 0; i < n; i++)
        cudaFreeHost(idle[i].p);
    free(idle);
}

void gj_alloc_counts_get(gj_alloc_counts *c)
{
    pthread_mutex_lock(&alloc_lock);
    *c = alloc_counts;
    pthread_mutex_unlock(&alloc_lock);
}

nvjpegStatus_t gj_state_make(gj_ctx *c, slot *s, int k)
{
    nvjpegStatus_t e = NV.nvjpegDecoderStateCreate(c->dev->h, c->dev->dec[k], &s->st[k]);
    if (e == NVJPEG_STATUS_SUCCESS)
        e = NV.nvjpegStateAttachPinnedBuffer(s->st[k], s->pinned);
    if (e == NVJPEG_STATUS_SUCCESS)
        e = NV.nvjpegStateAttachDeviceBuffer(s->st[k], s->devbuf);
    return e;
}

static void slot_free(slot *s)
{
    for (int k = 0; k < 2; k++)
        if (s->st[k])
            NV.nvjpegJpegStateDestroy(s->st[k]);
    if (s->params)
        NV.nvjpegDecodeParamsDestroy(s->params);
    if (s->js)
        NV.nvjpegJpegStreamDestroy(s->js);
    if (s->pinned)
        NV.nvjpegBufferPinnedDestroy(s->pinned);
    if (s->devbuf)
        NV.nvjpegBufferDeviceDestroy(s->devbuf);
    if (s->stream)
        cudaStreamDestroy(s->stream);
    memset(s, 0, sizeof *s);
}

static ts_status slot_init(gj_ctx *c, slot *s, char *why, size_t len)
{
    nvjpegStatus_t e;
    if (cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking) != cudaSuccess) {
        cudaGetLastError();
        s->stream = NULL;
        return tsio_fail(why, len, TS_ERR_CUDA, "cudaStreamCreateWithFlags failed");
    }
#define SLOT_TRY(call)                                                                             \
    if ((e = (call)) != NVJPEG_STATUS_SUCCESS)                                                     \
        return tsio_fail(why, len, TS_ERR_CUDA, "%s: %s", #call, gj_nvj_str(e));
    SLOT_TRY(NV.nvjpegBufferPinnedCreateV2(c->dev->h, &gj_pinned_alloc, &s->pinned));
    SLOT_TRY(NV.nvjpegBufferDeviceCreateV2(c->dev->h, &gj_dev_alloc, &s->devbuf));
    SLOT_TRY(NV.nvjpegJpegStreamCreate(c->dev->h, &s->js));
    SLOT_TRY(NV.nvjpegDecodeParamsCreate(c->dev->h, &s->params));
    for (int k = 0; k < 2; k++)
        if (c->dev->dec[k])
            SLOT_TRY(gj_state_make(c, s, k));
#undef SLOT_TRY
    return TS_OK;
}

int gj_ctx_has_engine(const gj_ctx *ctx) { return ctx && ctx->has_engine; }

void gj_ctx_destroy(gj_ctx *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->nslots; i++)
        slot_free(&c->slots[i]);
    free(c->slots);
    if (c->encp)
        NV.nvjpegEncoderParamsDestroy(c->encp);
    if (c->enc)
        NV.nvjpegEncoderStateDestroy(c->enc);
    gj_dev_close(c->own);
    free(c);
}

/* libjpeg-turbo (the CPU path) upsamples chroma with a triangle filter; nvJPEG replicates unless
 * asked to interpolate. Interpolation keeps the GPU and CPU decodes of 4:2:0 files close; a
 * library that refuses the flag still decodes. */
static nvjpegStatus_t create_handle(nvjpegBackend_t backend, nvjpegHandle_t *h)
{
    gj_alloc_init();
    nvjpegStatus_t e = NV.nvjpegCreateExV2(backend, &gj_dev_alloc, &gj_pinned_alloc,
                                           NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION, h);
    if (e != NVJPEG_STATUS_SUCCESS) {
        *h = NULL;
        e = NV.nvjpegCreateExV2(backend, &gj_dev_alloc, &gj_pinned_alloc, 0, h);
    }
    if (e != NVJPEG_STATUS_SUCCESS)
        *h = NULL;
    return e;
}

static void dev_free_decoders(gj_dev *d)
{
    for (int k = 0; k < 2; k++) {
        if (d->dec[k])
            NV.nvjpegDecoderDestroy(d->dec[k]);
        d->dec[k] = NULL;
    }
    if (d->h)
        NV.nvjpegDestroy(d->h);
    d->h = NULL;
}

/* The decode handle and the decoupled decoders (engines = 1: with the hardware backend). A GPU
 * without engines, or a library whose hardware handle refuses the decoupled decoders, fails with
 * engines = 1 and leaves the device part clean for a second try without them. */
#define ms_now() gj_clock_ms(CLOCK_MONOTONIC)

static nvjpegStatus_t open_decoders(gj_dev *d, int engines)
{
    double t0 = ms_now();
    /* every handle costs ~0.275 s whatever its backend (H100, 2026-11-26/27: DEFAULT, HYBRID,
     * GPU_HYBRID, HARDWARE 273-288 ms, a second handle too): nvjpegCreate initializes the
     * driver's libnvcuvid.so.1 (the JPEG engines' library) and waits inside it (stacks sampled
     * with cuda-gdb), and it first waits for the CUDA context, so a handle begun beside the
     * context on another thread ends no sooner (490-554 ms for both, against 216-280 ms for the
     * context alone) */
    nvjpegStatus_t e = create_handle(engines ? NVJPEG_BACKEND_HARDWARE : NVJPEG_BACKEND_DEFAULT,
                                     &d->h);
    double t1 = ms_now();
    d->setup.handle_ms += t1 - t0;
    if (e == NVJPEG_STATUS_SUCCESS && engines) {
        unsigned n = 0, cores = 0;
        if (NV.nvjpegGetHardwareDecoderInfo(d->h, &n, &cores) == NVJPEG_STATUS_SUCCESS && n == 0)
            e = NVJPEG_STATUS_ARCH_MISMATCH;
    }
    if (e == NVJPEG_STATUS_SUCCESS)
        e = NV.nvjpegDecoderCreate(d->h, NVJPEG_BACKEND_HYBRID, &d->dec[DEC_HOST]);
    /* The GPU Huffman decoder is an optimization for large baseline files; without it every
     * decoupled file goes through the host Huffman decoder. */
    if (e == NVJPEG_STATUS_SUCCESS &&
        NV.nvjpegDecoderCreate(d->h, NVJPEG_BACKEND_GPU_HYBRID, &d->dec[DEC_GPU]) !=
            NVJPEG_STATUS_SUCCESS)
        d->dec[DEC_GPU] = NULL;
    d->setup.decoders_ms += ms_now() - t1;
    if (e != NVJPEG_STATUS_SUCCESS)
        dev_free_decoders(d);
    d->has_engine = e == NVJPEG_STATUS_SUCCESS && engines;
    return e;
}

void gj_dev_close(gj_dev *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->n_hw; i++) {
        if (d->hw[i].st)
            NV.nvjpegJpegStateDestroy(d->hw[i].st);
        pthread_mutex_destroy(&d->hw[i].lock);
    }
    if (d->he && d->he != d->h)
        NV.nvjpegDestroy(d->he);
    dev_free_decoders(d);
    free(d);
    alloc_users(-1);
}

ts_status gj_dev_open(gj_dev **out, const gj_opts *o, char *why, size_t len)
{
    *out = NULL;
    if (why && len)
        why[0] = '\0';
    ts_status st = gj_load(why, len);
    if (st != TS_OK)
        return st;
    gj_dev *d = calloc(1, sizeof *d);
    if (!d)
        return tsio_fail(why, len, TS_ERR_NOMEM, "out of memory");
    cudaError_t ce = cudaGetDevice(&d->device);
    if (ce != cudaSuccess) {
        cudaGetLastError();
        free(d);
        return tsio_fail(why, len, TS_ERR_NO_GPU, "no usable GPU: %s", cudaGetErrorString(ce));
    }
    alloc_users(+1); /* gj_dev_close takes it back, on every path from here */
    nvjpegStatus_t e = NVJPEG_STATUS_ARCH_MISMATCH;
    if (!o || !o->no_engine)
        e = open_decoders(d, 1);
    if (e != NVJPEG_STATUS_SUCCESS && (e = open_decoders(d, 0)) != NVJPEG_STATUS_SUCCESS) {
        gj_dev_close(d);
        return tsio_fail(why, len, TS_ERR_UNSUPPORTED, "unavailable: nvJPEG decoder: %s",
                           gj_nvj_str(e));
    }
    /* the encoder wants a default-backend handle: the decode handle when it is one */
    double t0 = ms_now();
    if (!d->has_engine)
        d->he = d->h;
    else if ((e = NV.nvjpegCreateExV2(NVJPEG_BACKEND_DEFAULT, &gj_dev_alloc, &gj_pinned_alloc, 0,
                                        &d->he)) !=
             NVJPEG_STATUS_SUCCESS) {
        d->he = NULL;
        gj_dev_close(d);
        return tsio_fail(why, len, TS_ERR_UNSUPPORTED, "unavailable: nvJPEG encoder: %s",
                           gj_nvj_str(e));
    }
    double t1 = ms_now();
    d->setup.encoder_ms = t1 - t0;
    int want = o && o->engine_states > 0 ? o->engine_states : 1;
    for (int i = 0; d->has_engine && i < want && i < GJ_MAX_HW; i++) {
        if (NV.nvjpegJpegStateCreate(d->h, &d->hw[i].st) != NVJPEG_STATUS_SUCCESS) {
            d->hw[i].st = NULL;
            break;
        }
        pthread_mutex_init(&d->hw[i].lock, NULL);
        d->n_hw = i + 1;
    }
    if (d->n_hw == 0)
        d->has_engine = 0; /* no engine state: every file takes the decoupled path */
    d->setup.states_ms = ms_now() - t1;
    *out = d;
    return TS_OK;
}

void gj_dev_setup_times(const gj_dev *d, gj_setup_times *t)
{
    memset(t, 0, sizeof *t);
    if (d)
        *t = d->setup;
}

ts_status gj_ctx_create_on(gj_ctx **out, gj_dev *d, ts_stream stream, const gj_opts *o,
                           char *why, size_t len)
{
    *out = NULL;
    if (!d)
        return tsio_fail(why, len, TS_ERR_INVALID, "gj_ctx_create_on: no device part");
    gj_opts def = {.host_threads = 0};
    if (!o)
        o = &def;
    gj_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return tsio_fail(why, len, TS_ERR_NOMEM, "out of memory");
    c->dev = d;
    c->stream = (cudaStream_t)stream;
    c->max_pixels = o->max_pixels ? o->max_pixels : TS_DEFAULT_MAX_PIXELS;
    c->has_engine = d->has_engine;
    c->huffman = o->huffman;
    const char *stage = "nvjpegEncoderStateCreate";
    nvjpegStatus_t e = NV.nvjpegEncoderStateCreate(c->dev->he, &c->enc, c->stream);
    if (e == NVJPEG_STATUS_SUCCESS) {
        stage = "nvjpegEncoderParamsCreate";
        e = NV.nvjpegEncoderParamsCreate(c->dev->he, &c->encp, c->stream);
    }
    /* libjpeg's and OpenCV's default: the standard tables, so sizes compare. */
    if (e == NVJPEG_STATUS_SUCCESS) {
        stage = "nvjpegEncoderParamsSetOptimizedHuffman";
        e = NV.nvjpegEncoderParamsSetOptimizedHuffman(c->encp, 0, c->stream);
    }
    if (e != NVJPEG_STATUS_SUCCESS) {
        gj_ctx_destroy(c);
        return tsio_fail(why, len, TS_ERR_CUDA, "%s: %s", stage, gj_nvj_str(e));
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int n = o->host_threads > 0 ? o->host_threads : (int)(cores > 0 ? cores : 1);
    if (n > 128)
        n = 128;
    c->slots = calloc((size_t)n, sizeof *c->slots);
    if (!c->slots) {
        gj_ctx_destroy(c);
        return tsio_fail(why, len, TS_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        c->nslots = i + 1;
        ts_status st = slot_init(c, &c->slots[i], why, len);
        if (st != TS_OK) {
            gj_ctx_destroy(c);
            return st;
        }
    }
    *out = c;
    return TS_OK;
}

ts_status gj_ctx_create(gj_ctx **out, ts_stream stream, const gj_opts *o, char *why, size_t len)
{
    *out = NULL;
    gj_dev *d = NULL;
    ts_status st = gj_dev_open(&d, o, why, len);
    if (st == TS_OK && (st = gj_ctx_create_on(out, d, stream, o, why, len)) == TS_OK)
        (*out)->own = d;
    else
        gj_dev_close(d);
    return st;
}

void gj_results_free(gj_result *res, int n)
{
    for (int i = 0; i < n; i++) {
        ts_gpu_image_free(&res[i].d_im);
        res[i].capacity = 0;
    }
}

ts_status gj_encode(gj_ctx *c, const ts_image *d_im, const gj_encode_opts *o, unsigned char **out,
                    size_t *out_len, char *err, size_t errlen)
{
    *out = NULL;
    *out_len = 0;
    if (!c || !d_im || !d_im->data)
        return tsio_fail(err, errlen, TS_ERR_INVALID, "gj_encode: bad arguments");
    if (d_im->bytes != 1 || (d_im->channels != 1 && d_im->channels != 3))
        return tsio_fail(err, errlen, TS_ERR_UNSUPPORTED,
                        "nvJPEG encodes 8-bit gray or RGB, not %d channel(s) of %d bits",
                        d_im->channels, 8 * d_im->bytes);
    int q = o && o->quality ? o->quality : TSIO_QUALITY_DEFAULT;
    int sub = o && o->subsampling ? o->subsampling : 420;
    if (q < TSIO_QUALITY_MIN || q > TSIO_QUALITY_MAX)
        return tsio_fail(err, errlen, TS_ERR_INVALID, "JPEG quality %d is not in %d..%d", q,
                           TSIO_QUALITY_MIN, TSIO_QUALITY_MAX);
    /* the format's own limit, as libjpeg's encoder has it: nvJPEG would write a broken file */
    if (d_im->width > TSIO_JPEG_MAX_SIDE || d_im->height > TSIO_JPEG_MAX_SIDE)
        return tsio_fail(err, errlen, TS_ERR_TOO_LARGE, "image is %dx%d, too large for JPEG",
                           d_im->width, d_im->height);
    nvjpegChromaSubsampling_t css = d_im->channels == 1 ? NVJPEG_CSS_GRAY
                                    : sub == 444        ? NVJPEG_CSS_444
                                    : sub == 422        ? NVJPEG_CSS_422
                                                        : NVJPEG_CSS_420;
    nvjpegStatus_t e;
    const char *stage = "";
#define ENC_TRY(name, call)                                                                        \
    do {                                                                                           \
        stage = name;                                                                              \
        if ((e = (call)) != NVJPEG_STATUS_SUCCESS)                                                 \
            goto fail;                                                                             \
    } while (0)
    ENC_TRY("nvjpegEncoderParamsSetQuality",
            NV.nvjpegEncoderParamsSetQuality(c->encp, q, c->stream));
    ENC_TRY("nvjpegEncoderParamsSetSamplingFactors",
            NV.nvjpegEncoderParamsSetSamplingFactors(c->encp, css, c->stream));
    nvjpegImage_t src;
    memset(&src, 0, sizeof src);
    src.channel[0] = d_im->data;
    src.pitch[0] = d_im->pitch;
    if (d_im->channels == 3)
        ENC_TRY("nvjpegEncodeImage",
                NV.nvjpegEncodeImage(c->dev->he, c->enc, c->encp, &src, NVJPEG_INPUT_RGBI,
                                     d_im->width, d_im->height, c->stream));
    else
        ENC_TRY("nvjpegEncodeYUV",
                NV.nvjpegEncodeYUV(c->dev->he, c->enc, c->encp, &src, NVJPEG_CSS_GRAY, d_im->width,
                                   d_im->height, c->stream));
    size_t n = 0;
    ENC_TRY("nvjpegEncodeRetrieveBitstream",
            NV.nvjpegEncodeRetrieveBitstream(c->dev->he, c->enc, NULL, &n, c->stream));
    unsigned char *buf = malloc(n ? n : 1);
    if (!buf)
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory for a %zu-byte JPEG", n);
    e = NV.nvjpegEncodeRetrieveBitstream(c->dev->he, c->enc, buf, &n, c->stream);
    cudaError_t ce = cudaStreamSynchronize(c->stream);
    if (e != NVJPEG_STATUS_SUCCESS || ce != cudaSuccess) {
        cudaGetLastError();
        free(buf);
        return tsio_fail(err, errlen, TS_ERR_CUDA, "nvjpegEncodeRetrieveBitstream: %s",
                        e != NVJPEG_STATUS_SUCCESS ? gj_nvj_str(e) : cudaGetErrorString(ce));
    }
    *out = buf;
    *out_len = n;
    return TS_OK;
fail:
#undef ENC_TRY
    cudaGetLastError();
    /* out of device memory is TS_ERR_NOMEM: the caller may free some and try again */
    return tsio_fail(err, errlen,
                       e == NVJPEG_STATUS_ALLOCATOR_FAILURE ? TS_ERR_NOMEM : TS_ERR_CUDA,
                       "%s: %s", stage, gj_nvj_str(e));
}

#else /* built without CUDA or without nvjpeg.h: the same API, always unavailable */

#if defined(TS_HAVE_CUDA)
#define GJ_WHY "unavailable: built without nvjpeg.h (run 'make deps')"
#else
#define GJ_WHY "unavailable: built without CUDA"
#endif

ts_status gj_load(char *why, size_t whylen)
{
    return tsio_fail(why, whylen, TS_ERR_UNSUPPORTED, "%s", GJ_WHY);
}

struct gj_ctx {
    int unused;
};
struct gj_dev {
    int unused;
};

ts_status gj_dev_open(gj_dev **dev, const gj_opts *opts, char *why, size_t whylen)
{
    (void)opts;
    *dev = NULL;
    return gj_load(why, whylen);
}
void gj_dev_close(gj_dev *dev) { (void)dev; }
void gj_alloc_counts_get(gj_alloc_counts *c)
{
    memset(c, 0, sizeof *c);
    c->mode = "-";
}
void gj_dev_setup_times(const gj_dev *dev, gj_setup_times *t)
{
    (void)dev;
    memset(t, 0, sizeof *t);
}

ts_status gj_ctx_create_on(gj_ctx **ctx, gj_dev *dev, ts_stream stream, const gj_opts *opts,
                           char *why, size_t whylen)
{
    (void)dev, (void)stream, (void)opts;
    *ctx = NULL;
    return gj_load(why, whylen);
}

ts_status gj_ctx_create(gj_ctx **ctx, ts_stream stream, const gj_opts *opts, char *why,
                        size_t whylen)
{
    *ctx = NULL;
    return gj_load(why, whylen);
}

void gj_ctx_destroy(gj_ctx *ctx) { (void)ctx; }
int gj_ctx_has_engine(const gj_ctx *ctx) { return 0; }

void gj_results_free(gj_result *res, int n)
{
    for (int i = 0; i < n; i++) {
        ts_gpu_image_free(&res[i].d_im);
        res[i].capacity = 0;
    }
}

ts_status gj_encode(gj_ctx *ctx, const ts_image *d_im, const gj_encode_opts *o, unsigned char **out,
                    size_t *out_len, char *err, size_t errlen)
{
    *out = NULL;
    *out_len = 0;
    return tsio_fail(err, errlen, TS_ERR_UNSUPPORTED, "%s", GJ_WHY);
}

#endif
