/* gpu_jpeg.h - JPEG decode and encode on the GPU with nvJPEG, for the batch converter.
 *
 * libnvjpeg is loaded at run time (dlopen: $TESSERA_NVJPEG_LIB, else libnvjpeg.so.13, then
 * libnvjpeg.so, by the loader's search and then in the directories the build found it in), so a
 * binary built with CUDA still runs where the library is absent: gj_load() then says
 * "unavailable: <reason>" and the caller uses its CPU codecs.
 *
 * Decode paths, per file (gj_result.path):
 *   GJ_PATH_ENGINE  the hardware JPEG engines (NVJPEG_BACKEND_HARDWARE, batched API): baseline
 *                   colour files that nvjpegDecodeBatchedSupported accepts;
 *   GJ_PATH_CUDA    the decoupled API (nvjpegDecodeJpegHost / TransferToDevice / Device), one
 *                   decoder state per host thread so the Huffman work of progressive files runs
 *                   on every thread given: progressive, gray, and what the engines refuse;
 *   GJ_PATH_CPU     nvJPEG cannot decode the file (12-bit, arithmetic, lossless, CMYK, corrupt,
 *                   over the pixel limit): result.status != TS_OK with a reason, and the caller
 *                   decodes that file alone on the CPU. Nothing else in the batch is affected: a
 *                   batch of engine files that fails as a whole is decoded again file by file on
 *                   the decoupled path, and a decoupled state that saw an error is replaced.
 *
 * Images are 8-bit interleaved device images (ts_image, rows ts_gpu_pitch apart as
 * ts_gpu_image_alloc makes them): RGB for colour files, 1 channel for gray ones, the same channel
 * counts as the CPU loader gives. EXIF orientation is not applied (the CPU loader ignores it too).
 *
 * Typical use: once per device, in a thread where that device is current,
 *   gj_dev_open(&dev, &opts, why, sizeof why)  failing: say `why` once, use the CPU;
 * then by each GPU worker thread of a batch (one context each; host_threads = the cores that
 * worker may use for Huffman work):
 *   gj_ctx_create_on(&ctx, dev, stream, &opts, why, sizeof why);
 *   gj_result res[B] = {0};  per batch of n <= B files read into memory:
 *   gj_decode_batch(ctx, data, len, n, res);
 *   res[i].status == TS_OK: the chain runs on res[i].d_im where it lies (the device), and
 *     gj_encode(ctx, &d_out, &eo, &bytes, &nbytes, err, sizeof err) gives the JPEG bytes;
 *   else: file i alone goes to the CPU decoder (res[i].err says why, for --report);
 *   at the end gj_results_free(res, B), gj_ctx_destroy(ctx), and after every context
 *   gj_dev_close(dev). gj_ctx_create makes a context with a device part of its own (tests, tools).
 *
 * Nothing here prints or exits: functions return a ts_status and write a one-line reason into
 * `why`/`err` (also set as ts_error_detail()).
 */
#ifndef TESSERA_GPU_JPEG_H
#define TESSERA_GPU_JPEG_H

#include "tessera.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gj_path { GJ_PATH_NONE = 0, GJ_PATH_ENGINE, GJ_PATH_CUDA, GJ_PATH_CPU } gj_path;
const char *gj_path_name(gj_path p); /* "engine", "cuda", "cpu", "-" */

/* Loads libnvjpeg once per process (thread-safe). TS_OK, or TS_ERR_UNSUPPORTED with why =
 * "unavailable: <reason>" (built without CUDA, library not found, a symbol missing, wrong major
 * version). The answer is the same on every later call. */
ts_status gj_load(char *why, size_t whylen);
/* Tries one library name or path without keeping it (tests; the CPU build too): TS_OK when it
 * opens and has every function this module uses, else TS_ERR_UNSUPPORTED and the reason. */
ts_status gj_probe(const char *name, char *why, size_t whylen);

/* Where the decoupled path decodes a baseline file's Huffman: AUTO, GPU from 1 MP up. */
typedef enum { GJ_HUFFMAN_AUTO = 0, GJ_HUFFMAN_HOST, GJ_HUFFMAN_GPU } gj_huffman;

typedef struct gj_opts {
    int host_threads;    /* threads for the decoupled path's Huffman work; 0: online cores */
    int no_engine;       /* 1: never use the hardware engines (benchmarks, tests) */
    uint64_t max_pixels; /* larger files are refused (TS_ERR_TOO_LARGE); 0: TS_DEFAULT_MAX_PIXELS */
    int engine_states;   /* gj_dev_open: batched engine states its contexts share (0: 1) */
    gj_huffman huffman;  /* where the decoupled path decodes Huffman (measurements, tests) */
} gj_opts;

/* One per device, shared by its contexts: the library's handles (the hardware backend's when
 * the GPU has JPEG engines and opts->no_engine is 0) and decoders, made in the calling thread's
 * current device. Fails with TS_ERR_UNSUPPORTED (library unavailable), TS_ERR_NO_GPU or
 * TS_ERR_CUDA and a reason. Close it after every context made on it. */
typedef struct gj_dev gj_dev;
ts_status gj_dev_open(gj_dev **dev, const gj_opts *opts, char *why, size_t whylen);
/* Encodes and decodes one small image on the device part (gpu_jpeg_warm.c), so that the
 * library's kernels are loaded once here rather than by every worker's first image at the same
 * time. A failure says why: the device part should not be used. */
ts_status gj_dev_warm_up(gj_dev *dev, char *why, size_t whylen);
void gj_dev_close(gj_dev *dev);
/* What gj_dev_open spent, ms: the decode handle, the two decoupled decoders, the encoder's
 * handle (0 when the decode handle serves) and the engine states. */
typedef struct gj_setup_times {
    double handle_ms, decoders_ms, encoder_ms, states_ms;
} gj_setup_times;
void gj_dev_setup_times(const gj_dev *dev, gj_setup_times *t);

/* nvJPEG's own allocations in this process, counted (every handle and buffer gets this module's
 * allocators): calls, bytes and the wall ms spent in them, device and pinned host memory, both
 * the allocations and the frees. A batch's first images grow every decoder state's buffers.
 * By default device memory comes stream-ordered from the device's pool and freed pinned blocks
 * are kept for reuse (gpu_jpeg.c says why); $TESSERA_NVJPEG_ALLOC=sync gives nvJPEG's default
 * allocators' behaviour (cudaMalloc/cudaFree, cudaHostAlloc/cudaFreeHost) for measurements. */
typedef struct gj_alloc_counts {
    long n[2][2];     /* [0 device, 1 pinned][0 alloc, 1 free] */
    double bytes[2];  /* allocated */
    double ms[2][2];  /* wall ms in those calls, summed over threads */
    long pinned_reused; /* pinned allocations served by a kept block */
    const char *mode; /* "sync" or "pool" */
} gj_alloc_counts;
void gj_alloc_counts_get(gj_alloc_counts *c);

/* One per GPU worker thread: decoder states, the encoder state, pinned and device buffers,
 * streams, on `dev` (its device must be current). `stream` is where decoded images are ready (and
 * where encode runs); `opts` may be NULL (its no_engine is honoured only by gj_ctx_create: the
 * device part decides). Fails as gj_dev_open. */
typedef struct gj_ctx gj_ctx;
ts_status gj_ctx_create_on(gj_ctx **ctx, gj_dev *dev, ts_stream stream, const gj_opts *opts,
                           char *why, size_t whylen);
/* A context with a device part of its own (gj_dev_open, then gj_ctx_create_on). */
ts_status gj_ctx_create(gj_ctx **ctx, ts_stream stream, const gj_opts *opts, char *why,
                        size_t whylen);
void gj_ctx_destroy(gj_ctx *ctx);
/* 1 when this context's device has JPEG engines the library can use. */
int gj_ctx_has_engine(const gj_ctx *ctx);

/* Host CPU time (ms, summed over the context's threads) in each call of the decoupled decode:
 * nvJPEG's parse, its host stage, the transfer, the device stage, the wait for the stream
 * (measurements: tools/nvjpeg_bench). */
enum { GJ_PROF_PARSE, GJ_PROF_HOST, GJ_PROF_TRANSFER, GJ_PROF_DEVICE, GJ_PROF_SYNC, GJ_PROF_COUNT };
void gj_ctx_decode_profile(const gj_ctx *ctx, double out[GJ_PROF_COUNT]);

/* One file of a batch. Keep the array between batches: d_im's memory is reused while
 * `capacity` suffices (ts_gpu_image_reserve). Zero it before the first use; free the images with
 * gj_results_free. */
typedef struct gj_result {
    ts_image d_im;     /* the decoded image (device) when status == TS_OK */
    size_t capacity;   /* bytes behind d_im.data */
    ts_status status;  /* TS_OK, or why the caller must decode this file on the CPU */
    gj_path path;      /* the path that decoded it; GJ_PATH_CPU when status != TS_OK */
    float ms;          /* host wall time spent on this file (an engine batch's share) */
    float cpu_ms;      /* host CPU time spent on this file (header and decode, any thread) */
    char err[160];     /* the reason when status != TS_OK */
} gj_result;
void gj_results_free(gj_result *res, int n);

/* Decodes n files (host bytes, kept alive by the caller until return). Returns TS_OK when the
 * call itself worked, whatever each file's outcome (see res[i].status); on return every decoded
 * image is complete on the context's stream. A non-OK return (CUDA failure of the context) means
 * no res[i] with status TS_OK can be trusted. */
ts_status gj_decode_batch(gj_ctx *ctx, const unsigned char *const *data, const size_t *len,
                          int n, gj_result *res);

typedef struct gj_encode_opts {
    int quality;     /* TSIO_QUALITY_MIN..MAX; 0: TSIO_QUALITY_DEFAULT (codec.h) */
    int subsampling; /* 420 (default when 0), 422 or 444 for colour; gray is always 1 component */
} gj_encode_opts;

/* Encodes an 8-bit device image of 1 (gray, a 1-component JPEG) or 3 (RGB) channels on the
 * context's stream; the bitstream comes back in *out (malloc'd, *out_len bytes; the caller
 * frees). Only the compressed bytes cross to the host. Other shapes are TS_ERR_UNSUPPORTED (the
 * caller uses its CPU encoder). `o` may be NULL. */
ts_status gj_encode(gj_ctx *ctx, const ts_image *d_im, const gj_encode_opts *o, unsigned char **out,
                    size_t *out_len, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
