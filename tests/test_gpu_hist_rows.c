/* test_gpu_hist_rows.c - the `hist` family on device images whose rows are back to back.
 *
 * The device allocator pads rows to 256 bytes, so tests/test_gpu_hist.c only sees back-to-back
 * rows where the padding is nil (widths whose rows are multiples of 256 bytes). `opt` and the
 * apply kernel walk such images as one long row of 16/48-byte units (hist_for_units_pipelined),
 * so here the rows are packed on purpose: odd widths (a short last unit, units that straddle
 * rows), a start one byte past 16-byte alignment (no vector loads), and for equalize an output
 * that is packed too or padded (then the walk must not be flat). Every GPU hist variant, exact
 * against the CPU reference, outputs and scratch poisoned. Skipped without a GPU.
 */
#include "hist_plan.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int w, h, ch, bytes, offset; /* offset: bytes past the allocation's (aligned) start */
} shape;

static const shape shapes[] = {
    {33, 17, 1, 1, 0}, {33, 17, 3, 1, 0}, {7, 5, 4, 1, 0},  {4097, 3, 3, 1, 0},
    {33, 17, 4, 1, 1}, {301, 7, 1, 1, 1}, {33, 17, 3, 2, 0}, {31, 9, 1, 2, 2},
    {1, 1, 3, 1, 1},   {130, 2, 2, 1, 0},
};

/* A job for v on a packed copy of `in` at `offset` (d_base keeps the allocation). */
static ts_status packed_job(const ts_variant *v, const ts_op *op, const ts_image *in, int offset,
                            ts_job *job, void **d_base)
{
    size_t bytes = ts_row_bytes(in) * (size_t)in->height;
    ts_status st;
    memset(job, 0, sizeof *job);
    *d_base = NULL;
    job->op = op;
    job->dev = tu_gpu();
    if ((st = ts_gpu_stream_create(&job->stream)) != TS_OK ||
        (st = ts_gpu_malloc(d_base, bytes + 16)) != TS_OK ||
        (st = ts_gpu_copy_to_device((char *)*d_base + offset, in->data, bytes, job->stream)) != TS_OK)
        return st;
    job->in = *in;
    job->in.data = (char *)*d_base + offset;
    job->in.pitch = ts_row_bytes(in);
    return TS_OK;
}

static void close_job(ts_job *job, void *d_base)
{
    ts_gpu_free(job->scratch);
    ts_gpu_free(job->hist);
    ts_gpu_free(d_base);
    ts_gpu_stream_destroy(job->stream);
}

static void check_hist(const ts_variant *v, const ts_image *in, const shape *s, ts_hist_mode mode)
{
    ts_op op;
    memset(&op, 0, sizeof op);
    op.kind = TS_OP_HIST;
    op.hist_mode = mode;
    snprintf(op.text, sizeof op.text, "hist");
    size_t n = (size_t)ts_hist_count(mode, in->channels) * (size_t)ts_hist_bins(in->bytes);
    uint32_t *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    ts_job job;
    void *base;
    if (!want || !got)
        abort();
    ts_ref_hist(in, mode, want);
    ts_status st = packed_job(v, &op, in, s->offset, &job, &base);
    if (st == TS_OK && (st = ts_gpu_malloc((void **)&job.hist, n * sizeof *job.hist)) == TS_OK &&
        (st = ts_gpu_memset(job.hist, 0xA5, n * sizeof *job.hist, job.stream)) == TS_OK &&
        (st = tu_job_run(v, &job)) == TS_OK &&
        (st = ts_gpu_copy_to_host(got, job.hist, n * sizeof *got, job.stream)) == TS_OK)
        st = ts_gpu_sync(job.stream);
    CHECKF(st == TS_OK, "hist %s on packed %dx%d %dch %d-bit +%d: %s", v->name, s->w, s->h, s->ch,
           8 * s->bytes, s->offset, ts_error_detail());
    for (size_t i = 0; st == TS_OK && i < n; i++)
        if (got[i] != want[i]) {
            tst_fail(__FILE__, __LINE__, "hist %s (%s) on packed %dx%d %dch %d-bit +%d: bin %zu is "
                     "%u, want %u", v->name, mode == TS_HIST_LUMA ? "luma" : "channels", s->w,
                     s->h, s->ch, 8 * s->bytes, s->offset, i, got[i], want[i]);
            break;
        }
    close_job(&job, base);
    free(want);
    free(got);
}

/* equalize into a packed output (packed_out) or a padded one. */
static void check_equalize(const ts_variant *v, const ts_image *in, const shape *s,
                           const char *text, int packed_out)
{
    ts_op op = tu_op(text);
    ts_image want, got = {0};
    ts_job job;
    void *base, *d_out = NULL;
    int x = 0, y = 0, c = 0;
    if (ts_ref_op(&op, in, &want) != TS_OK || ts_image_alloc(&got, in->width, in->height,
                                                             in->channels, in->bytes) != TS_OK)
        abort();
    size_t bytes = ts_row_bytes(in) * (size_t)in->height;
    ts_status st = packed_job(v, &op, in, s->offset, &job, &base);
    if (st == TS_OK && packed_out) {
        if ((st = ts_gpu_malloc(&d_out, bytes)) == TS_OK &&
            (st = ts_gpu_memset(d_out, 0xA5, bytes, job.stream)) == TS_OK) {
            job.out = job.in;
            job.out.data = d_out;
        }
    } else if (st == TS_OK &&
               (st = ts_gpu_image_alloc(&job.out, in->width, in->height, in->channels, in->bytes)) == TS_OK) {
        st = ts_gpu_image_fill(&job.out, 0xA5, job.stream);
    }
    if (st == TS_OK && (st = tu_job_run(v, &job)) == TS_OK) {
        if (packed_out)
            st = ts_gpu_copy_to_host(got.data, d_out, bytes, job.stream);
        else
            st = ts_gpu_download(&got, &job.out, job.stream);
        if (st == TS_OK)
            st = ts_gpu_sync(job.stream);
    }
    CHECKF(st == TS_OK, "%s %s on packed %dx%d %dch %d-bit +%d: %s", text, v->name, s->w, s->h,
           s->ch, 8 * s->bytes, s->offset, ts_error_detail());
    long diff = st == TS_OK ? tu_max_diff(&got, &want, &x, &y, &c) : 0;
    CHECKF(diff == 0, "%s %s on packed %dx%d %dch %d-bit +%d into a %s output: differs by %ld at "
           "(%d, %d) channel %d", text, v->name, s->w, s->h, s->ch, 8 * s->bytes, s->offset,
           packed_out ? "packed" : "padded", diff, x, y, c);
    if (packed_out)
        ts_gpu_free(d_out);
    else
        ts_gpu_image_free(&job.out);
    close_job(&job, base);
    ts_image_free(&want);
    ts_image_free(&got);
}

TEST(gpu_hist_packed_rows)
{
    TU_GPU_OR_SKIP(dev);
    uint64_t rng = tu_seed();
    for (size_t i = 0; i < ts_variant_count(); i++) {
        const ts_variant *v = ts_variant_at(i);
        if (v->family != TS_FAM_HIST || !ts_variant_is_gpu(v) || !ts_variant_runnable(v, dev))
            continue;
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
            const shape *s = &shapes[k];
            ts_image in = tu_random_image(s->w, s->h, s->ch, s->bytes, &rng);
            check_hist(v, &in, s, TS_HIST_CHANNELS);
            if (s->ch >= 3)
                check_hist(v, &in, s, TS_HIST_LUMA);
            for (int packed_out = 0; packed_out < 2; packed_out++) {
                check_equalize(v, &in, s, "equalize", packed_out);
                if (s->ch >= 3)
                    check_equalize(v, &in, s, "equalize:rgb", packed_out);
            }
            ts_image_free(&in);
        }
    }
}
