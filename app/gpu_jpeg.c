/* gpu_jpeg.c - nvJPEG behind gpu_jpeg.h: the run-time loader, the per-worker context, batched
 * decode over three paths (engines, decoupled CUDA decode on host threads, CPU by the caller)
 * and encode. See gpu_jpeg.h for the contract.
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
#include "gpu_jpeg.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Every library function this module uses, in one list: the loader resolves them all before the
 * library counts as available, and gj_probe checks the same list in the CPU build. */
#define GJ_SYMS(X)                                                                                 \
    X(nvjpegCreateEx) X(nvjpegDestroy) X(nvjpegGetHardwareDecoderInfo)                             \
    X(nvjpegJpegStateCreate) X(nvjpegJpegStateDestroy) X(nvjpegDecodeBatchedInitialize)            \
    X(nvjpegDecodeBatched) X(nvjpegDecodeBatchedSupported) X(nvjpegJpegStreamCreate)               \
    X(nvjpegJpegStreamDestroy) X(nvjpegJpegStreamParse) X(nvjpegJpegStreamParseHeader)             \
    X(nvjpegJpegStreamGetFrameDimensions) X(nvjpegJpegStreamGetComponentsNum)                      \
    X(nvjpegJpegStreamGetJpegEncoding) X(nvjpegJpegStreamGetSamplePrecision)                       \
    X(nvjpegDecoderCreate) X(nvjpegDecoderDestroy) X(nvjpegDecoderJpegSupported)                   \
    X(nvjpegDecoderStateCreate) X(nvjpegDecodeParamsCreate) X(nvjpegDecodeParamsDestroy)           \
    X(nvjpegDecodeParamsSetOutputFormat) X(nvjpegBufferPinnedCreate) X(nvjpegBufferPinnedDestroy)  \
    X(nvjpegBufferDeviceCreate) X(nvjpegBufferDeviceDestroy) X(nvjpegStateAttachPinnedBuffer)      \
    X(nvjpegStateAttachDeviceBuffer) X(nvjpegDecodeJpegHost) X(nvjpegDecodeJpegTransferToDevice)   \
    X(nvjpegDecodeJpegDevice) X(nvjpegEncoderStateCreate) X(nvjpegEncoderStateDestroy)             \
    X(nvjpegEncoderParamsCreate) X(nvjpegEncoderParamsDestroy) X(nvjpegEncoderParamsSetQuality)    \
    X(nvjpegEncoderParamsSetSamplingFactors) X(nvjpegEncoderParamsSetOptimizedHuffman)             \
    X(nvjpegEncodeImage) X(nvjpegEncodeYUV) X(nvjpegEncodeRetrieveBitstream)

#define GJ_NAME(n) #n,
static const char *const sym_names[] = {GJ_SYMS(GJ_NAME)};
#define N_SYMS (sizeof sym_names / sizeof sym_names[0])

const char *gj_path_name(gj_path p)
{
    switch (p) {
    case GJ_PATH_ENGINE: return "engine";
    case GJ_PATH_CUDA: return "cuda";
    case GJ_PATH_CPU: return "cpu";
    default: return "-";
    }
}

static ts_status fail_msg(char *buf, size_t len, ts_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static ts_status fail_msg(char *buf, size_t len, ts_status st, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (buf && len)
        snprintf(buf, len, "%s", tmp);
    return ts_fail(st, "%s", tmp);
}

/* Opens `name` and resolves every symbol into slots[] (NULL: only check). */
static ts_status open_lib(const char *name, void **lib, void **slots, char *why, size_t len)
{
    *lib = NULL;
    dlerror();
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        return fail_msg(why, len, TS_ERR_UNSUPPORTED, "unavailable: %s", e ? e : name);
    }
    for (size_t i = 0; i < N_SYMS; i++) {
        void *f = dlsym(h, sym_names[i]);
        if (!f) {
            dlclose(h);
            return fail_msg(why, len, TS_ERR_UNSUPPORTED, "unavailable: %s has no %s", name,
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

#if defined(TS_HAVE_CUDA) && defined(TS_HAVE_NVJPEG)

#include <cuda_runtime.h>
#include <nvjpeg.h>
#include <stdatomic.h>

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

/* The resolved functions, typed from nvjpeg.h's own prototypes. */
#define GJ_FIELD(n) __typeof__(&n) n;
static union {
    struct { GJ_SYMS(GJ_FIELD) } f;
    void *slot[N_SYMS];
} nv;
_Static_assert(sizeof nv.f == sizeof nv.slot, "one pointer per symbol");

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
    if (open_lib(name, &lib, nv.slot, why, sizeof why) == TS_OK)
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
        return fail_msg(why, whylen, load_status, "%s", load_why);
    if (why && whylen)
        why[0] = 0;
    return TS_OK;
}

static const char *nvj_str(nvjpegStatus_t s)
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

enum { DEC_HOST = 0, DEC_GPU = 1 }; /* Huffman on the host (HYBRID) or on the GPU (GPU_HYBRID) */
/* Below this many pixels GPU_HYBRID's GPU Huffman decode costs more than it saves. */
#define GPU_HUFFMAN_MIN_PIXELS (1024 * 1024)

typedef struct slot {
    nvjpegJpegState_t st[2];
    nvjpegBufferPinned_t pinned;
    nvjpegBufferDevice_t devbuf;
    nvjpegJpegStream_t js;
    nvjpegDecodeParams_t params;
    cudaStream_t stream;
} slot;

struct gj_ctx {
    int device;
    cudaStream_t stream; /* the caller's */
    uint64_t max_pixels;
    nvjpegHandle_t h;    /* decode: created with the HARDWARE backend when the GPU has engines */
    int has_engine;
    nvjpegJpegState_t hw_state;
    int hw_batch;        /* batch size hw_state is initialized for; 0: none */
    nvjpegJpegDecoder_t dec[2];
    slot *slots;
    int nslots;
    nvjpegHandle_t he;   /* encode: the default backend, made at the first encode */
    nvjpegEncoderState_t enc;
    nvjpegEncoderParams_t encp;
};

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

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

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

static nvjpegStatus_t state_make(gj_ctx *c, slot *s, int k)
{
    nvjpegStatus_t e = nv.f.nvjpegDecoderStateCreate(c->h, c->dec[k], &s->st[k]);
    if (e == NVJPEG_STATUS_SUCCESS)
        e = nv.f.nvjpegStateAttachPinnedBuffer(s->st[k], s->pinned);
    if (e == NVJPEG_STATUS_SUCCESS)
        e = nv.f.nvjpegStateAttachDeviceBuffer(s->st[k], s->devbuf);
    return e;
}

static void slot_free(slot *s)
{
    for (int k = 0; k < 2; k++)
        if (s->st[k])
            nv.f.nvjpegJpegStateDestroy(s->st[k]);
    if (s->params)
        nv.f.nvjpegDecodeParamsDestroy(s->params);
    if (s->js)
        nv.f.nvjpegJpegStreamDestroy(s->js);
    if (s->pinned)
        nv.f.nvjpegBufferPinnedDestroy(s->pinned);
    if (s->devbuf)
        nv.f.nvjpegBufferDeviceDestroy(s->devbuf);
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
        return fail_msg(why, len, TS_ERR_CUDA, "cudaStreamCreateWithFlags failed");
    }
#define SLOT_TRY(call)                                                                             \
    if ((e = (call)) != NVJPEG_STATUS_SUCCESS)                                                     \
        return fail_msg(why, len, TS_ERR_CUDA, "%s: %s", #call, nvj_str(e));
    SLOT_TRY(nv.f.nvjpegBufferPinnedCreate(c->h, NULL, &s->pinned));
    SLOT_TRY(nv.f.nvjpegBufferDeviceCreate(c->h, NULL, &s->devbuf));
    SLOT_TRY(nv.f.nvjpegJpegStreamCreate(c->h, &s->js));
    SLOT_TRY(nv.f.nvjpegDecodeParamsCreate(c->h, &s->params));
    for (int k = 0; k < 2; k++)
        if (c->dec[k])
            SLOT_TRY(state_make(c, s, k));
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
    if (c->hw_state)
        nv.f.nvjpegJpegStateDestroy(c->hw_state);
    for (int k = 0; k < 2; k++)
        if (c->dec[k])
            nv.f.nvjpegDecoderDestroy(c->dec[k]);
    if (c->encp)
        nv.f.nvjpegEncoderParamsDestroy(c->encp);
    if (c->enc)
        nv.f.nvjpegEncoderStateDestroy(c->enc);
    if (c->he)
        nv.f.nvjpegDestroy(c->he);
    if (c->h)
        nv.f.nvjpegDestroy(c->h);
    free(c);
}

/* libjpeg-turbo (the CPU path) upsamples chroma with a triangle filter; nvJPEG replicates unless
 * asked to interpolate. Interpolation keeps the GPU and CPU decodes of 4:2:0 files close; a
 * library that refuses the flag still decodes. */
static nvjpegStatus_t create_handle(nvjpegBackend_t backend, nvjpegHandle_t *h)
{
    nvjpegStatus_t e =
        nv.f.nvjpegCreateEx(backend, NULL, NULL, NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION, h);
    if (e != NVJPEG_STATUS_SUCCESS) {
        *h = NULL;
        e = nv.f.nvjpegCreateEx(backend, NULL, NULL, 0, h);
    }
    if (e != NVJPEG_STATUS_SUCCESS)
        *h = NULL;
    return e;
}

ts_status gj_ctx_create(gj_ctx **out, ts_stream stream, const gj_opts *o, char *why, size_t len)
{
    *out = NULL;
    ts_status st = gj_load(why, len);
    if (st != TS_OK)
        return st;
    gj_opts def = {0, 0, 0};
    if (!o)
        o = &def;
    gj_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return fail_msg(why, len, TS_ERR_NOMEM, "out of memory");
    cudaError_t ce = cudaGetDevice(&c->device);
    if (ce != cudaSuccess) {
        cudaGetLastError();
        free(c);
        return fail_msg(why, len, TS_ERR_NO_GPU, "no usable GPU: %s", cudaGetErrorString(ce));
    }
    c->stream = (cudaStream_t)stream;
    c->max_pixels = o->max_pixels ? o->max_pixels : TS_DEFAULT_MAX_PIXELS;
    nvjpegStatus_t e = NVJPEG_STATUS_ARCH_MISMATCH;
    if (!o->no_engine)
        e = create_handle(NVJPEG_BACKEND_HARDWARE, &c->h);
    if (e == NVJPEG_STATUS_SUCCESS) {
        unsigned engines = 0, cores = 0;
        if (nv.f.nvjpegGetHardwareDecoderInfo(c->h, &engines, &cores) == NVJPEG_STATUS_SUCCESS &&
            engines == 0) {
            nv.f.nvjpegDestroy(c->h);
            c->h = NULL;
            e = NVJPEG_STATUS_ARCH_MISMATCH;
        } else {
            c->has_engine = 1;
        }
    }
    if (e != NVJPEG_STATUS_SUCCESS) {
        c->h = NULL;
        e = create_handle(NVJPEG_BACKEND_DEFAULT, &c->h);
        if (e != NVJPEG_STATUS_SUCCESS) {
            c->h = NULL;
            gj_ctx_destroy(c);
            return fail_msg(why, len, TS_ERR_UNSUPPORTED, "unavailable: nvjpegCreateEx: %s",
                            nvj_str(e));
        }
    }
    if (c->has_engine && nv.f.nvjpegJpegStateCreate(c->h, &c->hw_state) != NVJPEG_STATUS_SUCCESS) {
        c->hw_state = NULL;
        c->has_engine = 0;
    }
    if ((e = nv.f.nvjpegDecoderCreate(c->h, NVJPEG_BACKEND_HYBRID, &c->dec[DEC_HOST])) !=
        NVJPEG_STATUS_SUCCESS) {
        c->dec[DEC_HOST] = NULL;
        gj_ctx_destroy(c);
        return fail_msg(why, len, TS_ERR_UNSUPPORTED, "unavailable: nvjpegDecoderCreate: %s",
                        nvj_str(e));
    }
    /* The GPU Huffman decoder is an optimization for large baseline files; without it every
     * decoupled file goes through the host Huffman decoder. */
    if (nv.f.nvjpegDecoderCreate(c->h, NVJPEG_BACKEND_GPU_HYBRID, &c->dec[DEC_GPU]) !=
        NVJPEG_STATUS_SUCCESS)
        c->dec[DEC_GPU] = NULL;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int n = o->host_threads > 0 ? o->host_threads : (int)(cores > 0 ? cores : 1);
    if (n > 128)
        n = 128;
    c->slots = calloc((size_t)n, sizeof *c->slots);
    if (!c->slots) {
        gj_ctx_destroy(c);
        return fail_msg(why, len, TS_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        c->nslots = i + 1;
        if ((st = slot_init(c, &c->slots[i], why, len)) != TS_OK) {
            gj_ctx_destroy(c);
            return st;
        }
    }
    *out = c;
    return TS_OK;
}

void gj_results_free(gj_result *res, int n)
{
    for (int i = 0; i < n; i++) {
        ts_gpu_image_free(&res[i].d_im);
        res[i].capacity = 0;
    }
}

/* Phase 1: reads the header and picks the path; files nvJPEG cannot take are marked for the CPU. */
static void route_one(gj_ctx *c, slot *s, const unsigned char *data, size_t len, gj_result *r,
                      route *rt)
{
    nvjpegStatus_t e = nv.f.nvjpegJpegStreamParseHeader(c->h, data, len, s->js);
    if (e != NVJPEG_STATUS_SUCCESS) {
        set_cpu(r, TS_ERR_FORMAT, "nvJPEG cannot read the header: %s", nvj_str(e));
        return;
    }
    unsigned prec = 0, comps = 0, w = 0, h = 0;
    nvjpegJpegEncoding_t enc = NVJPEG_ENCODING_UNKNOWN;
    if (nv.f.nvjpegJpegStreamGetSamplePrecision(s->js, &prec) != NVJPEG_STATUS_SUCCESS ||
        nv.f.nvjpegJpegStreamGetJpegEncoding(s->js, &enc) != NVJPEG_STATUS_SUCCESS ||
        nv.f.nvjpegJpegStreamGetComponentsNum(s->js, &comps) != NVJPEG_STATUS_SUCCESS ||
        nv.f.nvjpegJpegStreamGetFrameDimensions(s->js, &w, &h) != NVJPEG_STATUS_SUCCESS) {
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
        if (nv.f.nvjpegJpegStreamParse(c->h, data, len, 0, 0, s->js) == NVJPEG_STATUS_SUCCESS &&
            nv.f.nvjpegDecodeBatchedSupported(c->h, s->js, &unsupported) == NVJPEG_STATUS_SUCCESS &&
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
    double t0 = now_ms();
    nvjpegStatus_t e = nv.f.nvjpegJpegStreamParse(c->h, data, len, 0, 0, s->js);
    if (e != NVJPEG_STATUS_SUCCESS) {
        set_cpu(r, TS_ERR_FORMAT, "nvJPEG: %s", nvj_str(e));
        return 0;
    }
    int k = DEC_HOST;
    if (c->dec[DEC_GPU] && !rt->progressive && (int64_t)rt->w * rt->h >= GPU_HUFFMAN_MIN_PIXELS) {
        int unsupported = 1;
        if (nv.f.nvjpegDecoderJpegSupported(c->dec[DEC_GPU], s->js, s->params, &unsupported) ==
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
    e = nv.f.nvjpegDecodeParamsSetOutputFormat(s->params, fmt);
    if (e == NVJPEG_STATUS_SUCCESS) {
        stage = "nvjpegDecodeJpegHost";
        e = nv.f.nvjpegDecodeJpegHost(c->h, c->dec[k], s->st[k], s->params, s->js);
    }
    if (e == NVJPEG_STATUS_SUCCESS) {
        stage = "nvjpegDecodeJpegTransferToDevice";
        e = nv.f.nvjpegDecodeJpegTransferToDevice(c->h, c->dec[k], s->st[k], s->js, s->stream);
    }
    if (e == NVJPEG_STATUS_SUCCESS) {
        stage = "nvjpegDecodeJpegDevice";
        e = nv.f.nvjpegDecodeJpegDevice(c->h, c->dec[k], s->st[k], &dst, s->stream);
    }
    /* The pinned buffer is reused by the next file's host stage: wait for the copy. */
    cudaError_t ce = cudaStreamSynchronize(s->stream);
    if (ce != cudaSuccess) {
        cudaGetLastError();
        set_cpu(r, TS_ERR_CUDA, "decode on the GPU: %s", cudaGetErrorString(ce));
        return sticky(ce);
    }
    if (e != NVJPEG_STATUS_SUCCESS) {
        set_cpu(r, e == NVJPEG_STATUS_ALLOCATOR_FAILURE ? TS_ERR_TOO_LARGE : TS_ERR_FORMAT,
                "nvJPEG %s: %s", stage, nvj_str(e));
        /* Whatever the failed file left in this state must not reach the next file. */
        nv.f.nvjpegJpegStateDestroy(s->st[k]);
        s->st[k] = NULL;
        if (state_make(c, s, k) != NVJPEG_STATUS_SUCCESS)
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
    if (cudaSetDevice(c->device) != cudaSuccess) {
        cudaGetLastError();
        atomic_store(&j->fatal, 1);
        return NULL;
    }
    for (;;) {
        int k = atomic_fetch_add(&j->next, 1);
        if (k >= j->n || atomic_load(&j->fatal))
            break;
        int i = j->idx[k];
        if (j->phase == 1) {
            route_one(c, s, j->data[i], j->len[i], &j->res[i], &j->rt[i]);
        } else if (decode_one(c, s, j->data[i], j->len[i], &j->res[i], &j->rt[i])) {
            atomic_store(&j->fatal, 1);
        }
    }
    return NULL;
}

typedef struct pool {
    pthread_t tid[128];
    void *args[128][2];
    int started[128];
    int n;
} pool;

static void pool_start(pool *p, job *j)
{
    int n = j->n < j->ctx->nslots ? j->n : j->ctx->nslots;
    p->n = n;
    for (int t = 0; t < n; t++) {
        p->args[t][0] = j;
        p->args[t][1] = &j->ctx->slots[t];
        p->started[t] = pthread_create(&p->tid[t], NULL, worker, p->args[t]) == 0;
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

/* The engine files in one batched call on the context's stream; 0 when it failed as a whole. */
static int engine_batch(gj_ctx *c, job *j, const int *idx, int n)
{
    const unsigned char **d = malloc((size_t)n * sizeof *d);
    size_t *l = malloc((size_t)n * sizeof *l);
    nvjpegImage_t *dst = calloc((size_t)n, sizeof *dst);
    int ok = d && l && dst;
    double t0 = now_ms();
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
    if (ok && c->hw_batch != n) {
        ok = nv.f.nvjpegDecodeBatchedInitialize(c->h, c->hw_state, n, 1, NVJPEG_OUTPUT_RGBI) ==
             NVJPEG_STATUS_SUCCESS;
        c->hw_batch = ok ? n : 0;
    }
    if (ok)
        ok = nv.f.nvjpegDecodeBatched(c->h, c->hw_state, d, l, dst, c->stream) ==
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
    float share = (float)((now_ms() - t0) / n);
    for (int k = 0; ok && k < n; k++) {
        j->res[idx[k]].ms = share;
        j->res[idx[k]].path = GJ_PATH_ENGINE;
    }
    if (!ok && c->hw_state) {
        /* A fresh engine state: the failed batch's leftovers must not reach the next batch. */
        nv.f.nvjpegJpegStateDestroy(c->hw_state);
        c->hw_state = NULL;
        c->hw_batch = 0;
        if (nv.f.nvjpegJpegStateCreate(c->h, &c->hw_state) != NVJPEG_STATUS_SUCCESS) {
            c->hw_state = NULL;
            c->has_engine = 0;
        }
    }
    free(d);
    free(l);
    free(dst);
    return ok;
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
        res[i].err[0] = 0;
    }
    job j;
    memset(&j, 0, sizeof j);
    j.ctx = c, j.data = data, j.len = len, j.res = res, j.rt = rt;
    pool p;
    /* Phase 1: route every file (header reads spread over the threads). */
    j.idx = all, j.n = n, j.phase = 1;
    atomic_store(&j.next, 0);
    pool_start(&p, &j);
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
    /* Phase 2: the engines on this thread while the pool runs the decoupled files. */
    j.idx = dec, j.n = nd, j.phase = 2;
    atomic_store(&j.next, 0);
    if (nd)
        pool_start(&p, &j);
    int eng_ok = ne ? engine_batch(c, &j, eng, ne) : 1;
    if (nd)
        pool_join(&p);
    if (!eng_ok && !atomic_load(&j.fatal)) {
        /* The batch failed as a whole: each of its files alone, so that one bad file costs only
         * itself. */
        for (int k = 0; k < ne; k++)
            rt[eng[k]].path = GJ_PATH_CUDA;
        j.idx = eng, j.n = ne;
        atomic_store(&j.next, 0);
        pool_start(&p, &j);
        pool_join(&p);
    }
    int fatal = atomic_load(&j.fatal);
    free(rt), free(all), free(eng), free(dec);
    if (fatal)
        return ts_fail(TS_ERR_CUDA, "nvJPEG decode: the GPU reported a fatal error");
    return TS_OK;
}

ts_status gj_encode(gj_ctx *c, const ts_image *d_im, const gj_encode_opts *o, unsigned char **out,
                    size_t *out_len, char *err, size_t errlen)
{
    *out = NULL;
    *out_len = 0;
    if (!c || !d_im || !d_im->data)
        return fail_msg(err, errlen, TS_ERR_INVALID, "gj_encode: bad arguments");
    if (d_im->bytes != 1 || (d_im->channels != 1 && d_im->channels != 3))
        return fail_msg(err, errlen, TS_ERR_UNSUPPORTED,
                        "nvJPEG encodes 8-bit gray or RGB, not %d channel(s) of %d bits",
                        d_im->channels, 8 * d_im->bytes);
    int q = o && o->quality ? o->quality : 90;
    int sub = o && o->subsampling ? o->subsampling : 420;
    if (q < 1 || q > 100)
        return fail_msg(err, errlen, TS_ERR_INVALID, "JPEG quality %d outside 1..100", q);
    nvjpegChromaSubsampling_t css = d_im->channels == 1 ? NVJPEG_CSS_GRAY
                                    : sub == 444        ? NVJPEG_CSS_444
                                    : sub == 422        ? NVJPEG_CSS_422
                                                        : NVJPEG_CSS_420;
    nvjpegStatus_t e;
    const char *stage = "nvjpegCreateEx";
#define ENC_TRY(call)                                                                              \
    do {                                                                                           \
        stage = #call;                                                                             \
        if ((e = (call)) != NVJPEG_STATUS_SUCCESS)                                                 \
            goto fail;                                                                             \
    } while (0)
    if (!c->he) {
        ENC_TRY(nv.f.nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, NULL, NULL, 0, &c->he));
        ENC_TRY(nv.f.nvjpegEncoderStateCreate(c->he, &c->enc, c->stream));
        ENC_TRY(nv.f.nvjpegEncoderParamsCreate(c->he, &c->encp, c->stream));
        /* libjpeg's and OpenCV's default: the standard tables, so sizes compare. */
        ENC_TRY(nv.f.nvjpegEncoderParamsSetOptimizedHuffman(c->encp, 0, c->stream));
    }
    ENC_TRY(nv.f.nvjpegEncoderParamsSetQuality(c->encp, q, c->stream));
    ENC_TRY(nv.f.nvjpegEncoderParamsSetSamplingFactors(c->encp, css, c->stream));
    nvjpegImage_t src;
    memset(&src, 0, sizeof src);
    src.channel[0] = d_im->data;
    src.pitch[0] = d_im->pitch;
    if (d_im->channels == 3)
        ENC_TRY(nv.f.nvjpegEncodeImage(c->he, c->enc, c->encp, &src, NVJPEG_INPUT_RGBI,
                                       d_im->width, d_im->height, c->stream));
    else
        ENC_TRY(nv.f.nvjpegEncodeYUV(c->he, c->enc, c->encp, &src, NVJPEG_CSS_GRAY, d_im->width,
                                     d_im->height, c->stream));
    size_t n = 0;
    ENC_TRY(nv.f.nvjpegEncodeRetrieveBitstream(c->he, c->enc, NULL, &n, c->stream));
    unsigned char *buf = malloc(n ? n : 1);
    if (!buf)
        return fail_msg(err, errlen, TS_ERR_NOMEM, "out of memory for a %zu-byte JPEG", n);
    e = nv.f.nvjpegEncodeRetrieveBitstream(c->he, c->enc, buf, &n, c->stream);
    cudaError_t ce = cudaStreamSynchronize(c->stream);
    if (e != NVJPEG_STATUS_SUCCESS || ce != cudaSuccess) {
        cudaGetLastError();
        free(buf);
        return fail_msg(err, errlen, TS_ERR_CUDA, "nvjpegEncodeRetrieveBitstream: %s",
                        e != NVJPEG_STATUS_SUCCESS ? nvj_str(e) : cudaGetErrorString(ce));
    }
    *out = buf;
    *out_len = n;
    return TS_OK;
fail:
#undef ENC_TRY
    return fail_msg(err, errlen, TS_ERR_CUDA, "%s: %s", stage, nvj_str(e));
}

#else /* built without CUDA or without nvjpeg.h: the same API, always unavailable */

#if defined(TS_HAVE_CUDA)
#define GJ_WHY "unavailable: built without nvjpeg.h (run 'make deps')"
#else
#define GJ_WHY "unavailable: built without CUDA"
#endif

ts_status gj_load(char *why, size_t whylen)
{
    return fail_msg(why, whylen, TS_ERR_UNSUPPORTED, "%s", GJ_WHY);
}

struct gj_ctx {
    int unused;
};

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

ts_status gj_decode_batch(gj_ctx *ctx, const unsigned char *const *data, const size_t *len, int n,
                          gj_result *res)
{
    return ts_fail(TS_ERR_UNSUPPORTED, "%s", GJ_WHY);
}

ts_status gj_encode(gj_ctx *ctx, const ts_image *d_im, const gj_encode_opts *o, unsigned char **out,
                    size_t *out_len, char *err, size_t errlen)
{
    *out = NULL;
    *out_len = 0;
    return fail_msg(err, errlen, TS_ERR_UNSUPPORTED, "%s", GJ_WHY);
}

#endif
