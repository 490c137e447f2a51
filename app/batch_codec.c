/* batch_codec.c - the codecs behind the batch's decode and encode stages, and the seam where a
 * GPU codec plugs in.
 *
 * A codec is a `batch_codec`; they are tried in the order of `codecs`: a file that a codec does
 * not take (TS_ERR_UNSUPPORTED: a format it does not handle, a JPEG the hardware refuses) goes to
 * the next one alone, and the last is the CPU codec (tsio_load / tsio_save_atomic), which takes
 * every file. A bad file's failure is final and never touches the other files of its step.
 */
#include "batch.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>

/* A decode/encode backend. decode takes up to max_batch files in one call (nvJPEG's batched
 * decode wants many; the CPU codec takes one); encode writes `im` to it->output through a temp
 * file, with the encode/write times, and returns TS_ERR_UNSUPPORTED for a format it does not
 * write. A GPU codec (app/gpu_jpeg.h) goes in front of the CPU one in `codecs`: its decode will
 * hand the batch device images for the pipeline to use in place, and its encode will take the
 * pipeline's result on the device (ts_run_opts.keep_output). */
typedef struct batch_codec {
    const char *name;
    int max_batch;
    void (*decode)(const batch *b, decode_slot *const *slots, int n);
    ts_status (*encode)(const batch *b, item *it, const ts_image *im, char *notice,
                        size_t noticelen, char *err, size_t errlen);
} batch_codec;

static void cpu_decode(const batch *b, decode_slot *const *slots, int n)
{
    for (int k = 0; k < n; k++) {
        decode_slot *s = slots[k];
        tsio_load_opts lo = {.max_pixels = b->o->max_pixels, .meta = &s->meta,
                             .notice = s->notice, .noticelen = sizeof s->notice};
        double t0 = now_ms();
        s->st = tsio_load(s->it->input, &lo, &s->im, s->err, sizeof s->err);
        s->it->ms[ST_DECODE] = now_ms() - t0;
        s->it->ms[ST_READ] = 0;
        s->it->merged |= 1u << ST_READ; /* tsio_load reads and decodes in one call */
        s->it->decode_path = "cpu";
    }
}

static ts_status cpu_encode(const batch *b, item *it, const ts_image *im, char *notice,
                            size_t noticelen, char *err, size_t errlen)
{
    tsio_save_opts so = {.format = b->o->format, .quality = b->o->quality,
                         .meta = &it->meta_out, .lossless = b->o->lossless};
    if (so.format == TSIO_UNKNOWN)
        so.format = tsio_format_from_name(it->output);
    double t0 = now_ms();
    ts_status st = tsio_save_atomic(it->output, im, &so, b->o->force, notice, noticelen, err,
                                    errlen);
    it->ms[ST_ENCODE] = now_ms() - t0;
    it->ms[ST_WRITE] = 0;
    it->merged |= 1u << ST_ENCODE; /* tsio_save_atomic encodes and writes in one call */
    return st;
}

static const batch_codec cpu_codec = {"cpu", 1, cpu_decode, cpu_encode};
static const batch_codec *const codecs[] = {&cpu_codec};
#define N_CODECS (sizeof codecs / sizeof codecs[0])

int batch_decode_step(void)
{
    long v;
    const char *force = getenv("TESSERA_TEST_DECODE_BATCH"); /* tests: steps of several files */
    if (force && parse_long(force, 1, 256, &v) == 0)
        return (int)v;
    int most = 1;
    for (size_t c = 0; c < N_CODECS; c++)
        most = codecs[c]->max_batch > most ? codecs[c]->max_batch : most;
    return most;
}

void batch_decode(const batch *b, decode_slot *slots, int n)
{
    decode_slot **todo = xcalloc((size_t)n, sizeof *todo);
    for (int k = 0; k < n; k++) {
        slots[k].st = TS_ERR_UNSUPPORTED;
        snprintf(slots[k].err, sizeof slots[k].err, "no decoder takes this file");
    }
    for (size_t c = 0; c < N_CODECS; c++) {
        int m = 0;
        for (int k = 0; k < n; k++)
            if (slots[k].st == TS_ERR_UNSUPPORTED)
                todo[m++] = &slots[k];
        for (int at = 0; at < m; at += codecs[c]->max_batch)
            codecs[c]->decode(b, todo + at,
                              m - at < codecs[c]->max_batch ? m - at : codecs[c]->max_batch);
    }
    free(todo);
}

ts_status batch_encode(const batch *b, item *it, const ts_image *im, char *notice,
                       size_t noticelen, char *err, size_t errlen)
{
    ts_status st = TS_ERR_UNSUPPORTED;
    for (size_t c = 0; c < N_CODECS && st == TS_ERR_UNSUPPORTED; c++)
        st = codecs[c]->encode(b, it, im, notice, noticelen, err, errlen);
    return st;
}
