/* gpu_jpeg_int.h - what app/codec/gpu_jpeg.c (loader, context, encode) and app/codec/gpu_jpeg_decode.c
 * (routing and the decode paths) share: the table of library functions resolved at run time and
 * the context's layout. Not part of the module's interface (gpu_jpeg.h).
 */
#ifndef TESSERA_GPU_JPEG_INT_H
#define TESSERA_GPU_JPEG_INT_H

#include "codec.h"
#include "gpu_jpeg.h"

#include <stddef.h>
#include <time.h>

/* ms of a clock: CLOCK_MONOTONIC (wall) or CLOCK_THREAD_CPUTIME_ID (this thread's CPU). */
static inline double gj_clock_ms(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Every library function this module uses, in one list: the loader resolves them all before the
 * library counts as available, and gj_probe checks the same list in the CPU build. */
#define GJ_SYMS(X)                                                                                 \
    X(nvjpegCreateEx) X(nvjpegCreateExV2) X(nvjpegDestroy) X(nvjpegGetHardwareDecoderInfo)                             \
    X(nvjpegJpegStateCreate) X(nvjpegJpegStateDestroy) X(nvjpegDecodeBatchedInitialize)            \
    X(nvjpegDecodeBatched) X(nvjpegDecodeBatchedSupported) X(nvjpegJpegStreamCreate)               \
    X(nvjpegJpegStreamDestroy) X(nvjpegJpegStreamParse) X(nvjpegJpegStreamParseHeader)             \
    X(nvjpegJpegStreamGetFrameDimensions) X(nvjpegJpegStreamGetComponentsNum)                      \
    X(nvjpegJpegStreamGetJpegEncoding) X(nvjpegJpegStreamGetSamplePrecision)                       \
    X(nvjpegDecoderCreate) X(nvjpegDecoderDestroy) X(nvjpegDecoderJpegSupported)                   \
    X(nvjpegDecoderStateCreate) X(nvjpegDecodeParamsCreate) X(nvjpegDecodeParamsDestroy)           \
    X(nvjpegDecodeParamsSetOutputFormat) X(nvjpegBufferPinnedCreateV2)                \
    X(nvjpegBufferPinnedDestroy) X(nvjpegBufferDeviceCreateV2) X(nvjpegBufferDeviceDestroy) X(nvjpegStateAttachPinnedBuffer)      \
    X(nvjpegStateAttachDeviceBuffer) X(nvjpegDecodeJpegHost) X(nvjpegDecodeJpegTransferToDevice)   \
    X(nvjpegDecodeJpegDevice) X(nvjpegEncoderStateCreate) X(nvjpegEncoderStateDestroy)             \
    X(nvjpegEncoderParamsCreate) X(nvjpegEncoderParamsDestroy) X(nvjpegEncoderParamsSetQuality)    \
    X(nvjpegEncoderParamsSetSamplingFactors) X(nvjpegEncoderParamsSetOptimizedHuffman)             \
    X(nvjpegEncodeImage) X(nvjpegEncodeYUV) X(nvjpegEncodeRetrieveBitstream)

#define GJ_COUNT(n) +1
enum { GJ_N_SYMS = 0 GJ_SYMS(GJ_COUNT) };

/* Failures go through the codec layer's tsio_fail (codec.h): the reason into the caller's buffer
 * (when given) and ts_error_detail(). */

#if defined(TS_HAVE_CUDA) && defined(TS_HAVE_NVJPEG)
#define GJ_ENABLED 1

#include <cuda_runtime.h>
#include <nvjpeg.h>
#include <pthread.h>

/* The resolved functions, typed from nvjpeg.h's own prototypes; NV.nvjpegX(...) calls one. */
#define GJ_FIELD(n) __typeof__(&n) n;
typedef union gj_nv_table {
    struct { GJ_SYMS(GJ_FIELD) } f;
    void *slot[GJ_N_SYMS];
} gj_nv_table;
extern gj_nv_table gj_nv;
#define NV (gj_nv.f)

const char *gj_nvj_str(nvjpegStatus_t s);

enum { DEC_HOST = 0, DEC_GPU = 1 }; /* Huffman on the host (HYBRID) or on the GPU (GPU_HYBRID) */
/* Below this many pixels GPU_HYBRID's GPU Huffman decode costs more than it saves. */
#define GPU_HUFFMAN_MIN_PIXELS (1024 * 1024)

/* One host thread's share of the decoupled path. */
typedef struct slot {
    nvjpegJpegState_t st[2];
    nvjpegBufferPinned_t pinned;
    nvjpegBufferDevice_t devbuf;
    nvjpegJpegStream_t js;
    nvjpegDecodeParams_t params;
    cudaStream_t stream;
    double prof[GJ_PROF_COUNT]; /* this thread's CPU ms in each call of the decoupled decode */
} slot;

/* One batched engine state. Creating one costs about 350 ms on an H100 (and they are made one
 * at a time), so a device part makes a few and its contexts take turns on them. */
typedef struct gj_hw {
    pthread_mutex_t lock; /* held while a context decodes with it */
    nvjpegJpegState_t st; /* NULL: lost (a failed batch whose state could not be remade) */
    int batch;            /* batch size st is initialized for; 0: none */
} gj_hw;
#define GJ_MAX_HW 8

/* What a device's contexts share: nvJPEG's handles and decoders are thread-safe (its states,
 * streams and buffers are not: those are per context and per slot, and the engine states are
 * taken under a lock). Creating a handle costs hundreds of milliseconds (the hardware backend's
 * about 1.3 s on an H100), so a batch makes one set per device. */
struct gj_dev {
    int device;
    nvjpegHandle_t h;    /* decode: the HARDWARE backend when the engines are used */
    int has_engine;
    nvjpegJpegDecoder_t dec[2];
    nvjpegHandle_t he;   /* encode: the default backend (h itself when h is one) */
    gj_hw hw[GJ_MAX_HW];
    int n_hw;
    gj_setup_times setup;
};

struct gj_ctx {
    cudaStream_t stream; /* the caller's */
    uint64_t max_pixels;
    gj_dev *dev;         /* the shared part: handles and decoders */
    gj_dev *own;         /* == dev when this context made its own (gj_ctx_create) */
    int has_engine;      /* dev->has_engine, unless this context declines the engines (the
                            warm-up's pass over the decoupled path) */
    slot *slots;
    int nslots;
    nvjpegEncoderState_t enc;
    nvjpegEncoderParams_t encp;
    gj_huffman huffman;  /* opts->huffman */
};

/* nvJPEG's allocators (gpu_jpeg.c): every handle and buffer of this module is made with them. */
extern nvjpegDevAllocatorV2_t gj_dev_alloc;
extern nvjpegPinnedAllocatorV2_t gj_pinned_alloc;
/* Before each handle (its device current): the allocation mode ($TESSERA_NVJPEG_ALLOC), set once
 * per process, and in pool mode the current device's pool kept from handing memory back. */
void gj_alloc_init(void);

/* A fresh decoder state k for slot s, with the slot's pinned and device buffers attached. */
nvjpegStatus_t gj_state_make(gj_ctx *c, slot *s, int k);

#endif
#endif
