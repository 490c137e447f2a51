/* viewer_bench.c - the speedup bars: each op of the chain timed with `naive` and with the
 * variant the chain used, on the op's own input (the previous op's output), through
 * ts_pipeline_run_op (CUDA events around the kernel only). Best of VW_BENCH_REPS runs each, the
 * first of which also warms up (module load, caches). One run per frame keeps the window
 * responsive; the previous result stays on screen until the new one is complete.
 */
#include "viewer_bench.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

void vw_bench_reset(vw_bench *b)
{
    ts_image_free(&b->in);
    b->running = b->op = b->step = 0;
    b->valid = b->failed = 0;
    b->note[0] = '\0';
}

void vw_bench_free(vw_bench *b) { ts_image_free(&b->in); }

void vw_bench_request(vw_bench *b, const vw_run *r)
{
    vw_bench_reset(b); /* vw_bench_tick starts it once the chain's result is fresh */
    if (!ts_pipeline_on_gpu(r->pipe)) {
        snprintf(b->note, sizeof b->note, "speedups over naive need the GPU backend");
        b->failed = 1;
    }
}

static ts_status copy_image(const ts_image *src, ts_image *dst)
{
    ts_status st = ts_image_alloc(dst, src->width, src->height, src->channels, src->bytes);
    for (int y = 0; st == TS_OK && y < src->height; y++)
        memcpy((char *)dst->data + (size_t)y * dst->pitch,
               (const char *)src->data + (size_t)y * src->pitch, ts_row_bytes(src));
    return st;
}

static void start(vw_bench *b, const vw_run *r)
{
    int keep_shown = b->valid; /* a refresh keeps the old bars until it is done */
    ts_image_free(&b->in);
    b->running = b->op = b->step = 0;
    b->failed = 0;
    b->note[0] = '\0';
    if (!ts_pipeline_on_gpu(r->pipe)) {
        snprintf(b->note, sizeof b->note, "speedups over naive need the GPU backend");
        b->failed = 1;
        return;
    }
    if (r->chain.n == 0 || !r->have_result || copy_image(&r->src, &b->in) != TS_OK) {
        snprintf(b->note, sizeof b->note, "nothing to measure");
        b->failed = 1;
        return;
    }
    for (int i = 0; i < r->chain.n; i++) {
        b->cur[i] = r->rep.op[i].variant;
        b->state[i] = 0;
        b->naive_ms[i] = b->cur_ms[i] = 0;
    }
    b->valid = keep_shown;
    b->running = 1;
}

static void finish(vw_bench *b, const vw_run *r)
{
    for (int i = 0; i < r->chain.n; i++) {
        b->res_naive[i] = b->naive_ms[i];
        b->res_cur[i] = b->cur_ms[i];
        b->res_state[i] = b->state[i];
    }
    ts_image_free(&b->in);
    b->running = 0;
    b->valid = 1;
    b->at = now_ms();
}

static void keep_best(double *best, float ms)
{
    if (*best <= 0 || ms < *best)
        *best = ms;
}

/* Even steps run naive, odd steps the chain's variant; the last run's output feeds the next op. */
static void step(vw_bench *b, vw_run *r)
{
    const ts_op *op = &r->chain.ops[b->op];
    const ts_variant *naive = ts_variant_find(ts_op_family(op->kind), "naive");
    const ts_variant *cur = b->cur[b->op];
    if (cur && !ts_variant_is_gpu(cur))
        cur = NULL; /* the chain ran this op on the CPU: time it the same way (auto) */
    int is_cur = b->step % 2;
    /* naive when it is the chain's variant, or cannot take this op, is not run twice */
    if (!is_cur && (naive == cur || b->state[b->op] < 0 || !naive))
        is_cur = 1, b->step++;
    ts_image out;
    float ms = 0;
    ts_status st = ts_pipeline_run_op(r->pipe, op, is_cur ? cur : naive, &b->in, &out, &ms);
    if (st != TS_OK && !is_cur) {
        b->state[b->op] = -1; /* e.g. naive does not support this job */
    } else if (st != TS_OK) {
        snprintf(b->note, sizeof b->note, "speedup run failed: %.150s", ts_error_detail());
        b->running = 0;
        b->failed = 1;
        ts_image_free(&b->in);
        return;
    } else {
        keep_best(is_cur ? &b->cur_ms[b->op] : &b->naive_ms[b->op], ms);
    }
    if (++b->step < 2 * VW_BENCH_REPS) {
        if (st == TS_OK)
            ts_image_free(&out);
        return;
    }
    /* op done: its output (the last run was the chain's variant) is the next op's input */
    if (b->state[b->op] == 0)
        b->state[b->op] = 1;
    if (naive == cur)
        b->naive_ms[b->op] = b->cur_ms[b->op];
    ts_image_free(&b->in);
    b->in = out;
    b->step = 0;
    if (++b->op == r->chain.n)
        finish(b, r);
}

/* Measure after a change, and again every 10 s in live mode. */
static int due(const vw_bench *b, const vw_run *r)
{
    return !b->running && !b->failed && ts_pipeline_on_gpu(r->pipe) && r->have_result &&
           (!b->valid || (vw_run_live_work(r) && now_ms() - b->at > 10000));
}

int vw_bench_pending(const vw_bench *b, const vw_run *r) { return b->running || due(b, r); }

int vw_bench_tick(vw_bench *b, vw_run *r)
{
    if (!ts_pipeline_on_gpu(r->pipe) || !r->have_result || r->dirty)
        return 0;
    if (due(b, r))
        start(b, r);
    if (!b->running)
        return 0;
    step(b, r);
    return 1;
}
