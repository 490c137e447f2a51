/* batch_codec.c - the codecs behind the batch's decode and encode stages, and the seam where a
 * GPU codec plugs in.
 *
 * A codec is a `batch_codec`; they are tried in the order of `codecs`: a file that a codec does
 * not take (TS_ERR_UNSUPPORTED: a format it does not handle, a JPEG the hardware refuses) goes to
 * the next one alone, and the last is the CPU codec (tsio_load / tsio_save_atomic), which takes
 * every file. A bad file's failure is final and never touches the other files of its step.
 * In front of it, on GPU workers, the nvJPEG codec (batch_gpu.c): JPEG files it cannot decode
 * (12-bit, arithmetic, lossless, CMYK, corrupt) go to the CPU codec one by one.
 */
#include "batch.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>

/* A decode/encode backend. decode takes up to max_batch files in one call (nvJPEG's batched
 * decode wants many; the CPU codec takes one); encode writes `im` to it->output through a temp
 * file, with the encode/write times, and returns TS_ERR_UNSUPPORTED for a format or an image it
 * does not write. A GPU codec (gpu != 0) is used only by GPU workers with nvJPEG loaded: its
 * decode hands the batch device images for the pipeline to use in place, and its encode takes
 * the pipeline's result on the device (ts_pipeline_take_result). */
typedef struct batch_codec {
    const char *name;
    int max_batch;
    int gpu;
    void (*decode)(const batch *b, gpu_worker *w, decode_slot *const *slots, int n);
    ts_status (*encode)(const batch *b, gpu_worker *w, item *it, const ts_image *im,
                        int on_device, char *notice, size_t noticelen, char *err, size_t errlen);
} batch_codec;

static void cpu_decode(const batch *b, gpu_worker *w, decode_slot *const *slots, int n)
{
    (void)w;
    for (int k = 0; k < n; k++) {
        decode_slot *s = slots[k];
        tsio_load_opts lo = {.max_pixels = b->o->max_pixels, .meta = &s->meta,
                             .notice = s->notice, .noticelen = sizeof s->notice};
        double t0 = now_ms(), c0 = thread_cpu_ms();
        s->st = tsio_load(s->it->input, &lo, &s->im, s->err, sizeof s->err);
        s->it->ms[ST_DECODE] = now_ms() - t0;
        s->it->cpu[ST_DECODE] += thread_cpu_ms() - c0;
        s->it->ms[ST_READ] = 0;
        s->it->merged |= 1u << ST_READ; /* tsio_load reads and decodes in one call */
        s->it->decode_path = "cpu";
    }
}

static ts_status cpu_encode(const batch *b, gpu_worker *w, item *it, const ts_image *im,
                            int on_device, char *notice, size_t noticelen, char *err, size_t errlen)
{
    (void)w;
    if (on_device)
        return TS_ERR_UNSUPPORTED; /* batch_encode downloads it first */
    tsio_save_opts so = {.format = b->o->format, .quality = b->o->quality,
                         .meta = &it->meta_out, .lossless = b->o->lossless,
                         .png_level = b->o->png_level};
    if (so.format == TSIO_UNKNOWN)
        so.format = tsio_format_from_name(it->output);
    double t0 = now_ms(), c0 = thread_cpu_ms();
    ts_status st = tsio_save_atomic(it->output, im, &so, b->o->force, notice, noticelen, err,
                                    errlen);
    it->ms[ST_ENCODE] = now_ms() - t0;
    it->cpu[ST_ENCODE] += thread_cpu_ms() - c0;
    it->ms[ST_WRITE] = 0;
    it->merged |= 1u << ST_ENCODE; /* tsio_save_atomic encodes and writes in one call */
    return st;
}

/* The engines take batches: 8 files amortise a batched call while keeping the images in
 * flight (2 per worker) few. */
static const batch_codec gpu_codec = {"nvjpeg", 8, 1, gpu_codec_decode, gpu_codec_encode};
static const batch_codec cpu_codec = {"cpu", 1, 0, cpu_decode, cpu_encode};
static const batch_codec *const codecs[] = {&gpu_codec, &cpu_codec};
#define N_CODECS (sizeof codecs / sizeof codecs[0])

/* A codec this worker may use: the GPU ones only with an nvJPEG context. */
static int usable(const batch *b, const batch_codec *c, const gpu_worker *w)
{
    return !c->gpu || (b->gpu_codec && w);
}

int batch_decode_step(const batch *b, const char *path)
{
    long v;
    const char *force = getenv("TESSERA_TEST_DECODE_BATCH"); /* tests: steps of several files */
    if (force && parse_long(force, 1, 256, &v) == 0)
        return (int)v;
    /* Only the nvJPEG codec decodes several files in one call; a step of other files is one
     * file, or a worker would decode them one after the other while the others wait. */
    const tsio_codec *c = tsio_codec_of(tsio_format_from_name(path));
    if (b->gpu_codec && c && c->gpu_decode)
        return batch_gpu_decode_batch(b);
    return 1;
}

void batch_decode(const batch *b, gpu_worker *w, decode_slot *slots, int n)
{
    decode_slot **todo = xcalloc((size_t)n, sizeof *todo);
    for (int k = 0; k < n; k++) {
        slots[k].st = TS_ERR_UNSUPPORTED;
        snprintf(slots[k].err, sizeof slots[k].err, "no decoder takes this file");
    }
    for (size_t c = 0; c < N_CODECS; c++) {
        if (!usable(b, codecs[c], w))
            continue;
        int m = 0;
        for (int k = 0; k < n; k++)
            if (slots[k].st == TS_ERR_UNSUPPORTED)
                todo[m++] = &slots[k];
        for (int at = 0; at < m; at += codecs[c]->max_batch)
            codecs[c]->decode(b, w, todo + at,
                              m - at < codecs[c]->max_batch ? m - at : codecs[c]->max_batch);
    }
    free(todo);
}

ts_status batch_encode(const batch *b, gpu_worker *w, item *it, const ts_image *im, int on_device,
                       char *notice, size_t noticelen, char *err, size_t errlen)
{
    ts_status st = TS_ERR_UNSUPPORTED;
    ts_image host;
    char passed[256] = ""; /* what a codec that passed the image on said (why it did) */
    snprintf(err, errlen, "no encoder takes this image");
    for (size_t c = 0; c < N_CODECS && st == TS_ERR_UNSUPPORTED; c++) {
        if (!usable(b, codecs[c], w))
            continue;
        if (on_device && !codecs[c]->gpu) { /* the CPU codecs read host memory */
            if ((st = batch_gpu_download(w, it, im, &host, err, errlen)) != TS_OK)
                return st;
            im = &host;
            on_device = 0;
        }
        st = codecs[c]->encode(b, w, it, im, on_device, notice, noticelen, err, errlen);
        if (st == TS_ERR_UNSUPPORTED && noticelen && notice[0])
            snprintf(passed, sizeof passed, "%s", notice);
    }
    if (st == TS_OK && passed[0] && noticelen) {
        char own[256];
        snprintf(own, sizeof own, "%s", notice);
        snprintf(notice, noticelen, own[0] ? "%s; %s" : "%s%s", passed, own);
    }
    return st;
}
