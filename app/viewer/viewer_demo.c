/* viewer_demo.c - the shared-memory ladder, rung by rung. A rung: the chain is set to the
 * family's op with the rung's variant (so the window shows what it computes), then
 * ts_pipeline_run_op times it on the loaded image (CUDA events around the kernel on the GPU,
 * the host clock on the CPU): a warm-up and VW_DEMO_REPS runs, one a frame, best kept. */
#include "viewer_demo.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

/* The op each family is shown with: the family table's (ts_family_info_of). */
static const char *family_op(ts_family f) { return ts_family_info_of(f)->demo_op; }

static void add(vw_demo *d, ts_family f, const ts_variant *v)
{
    if (d->n == VW_DEMO_MAX)
        return;
    d->rung[d->n++] = (vw_rung){.family = f, .op = family_op(f), .var = v};
}

/* Sets the chain to the rung's op and variant, so the next frame shows its result. */
static int show(vw_demo *d, vw_run *r)
{
    char err[256];
    vw_rung *g = &d->rung[d->cur];
    ts_chain c;
    if (ts_chain_parse(g->op, &c, err, sizeof err) != TS_OK) {
        snprintf(d->note, sizeof d->note, "%s: %.150s", g->op, err);
        return -1;
    }
    c.ops[0].variant = g->var;
    d->op = c.ops[0];
    ts_chain_free(&r->chain);
    r->chain = c;
    r->sel = 0;
    vw_run_chain_changed(r);
    return 0;
}

void vw_demo_start(vw_demo *d, vw_run *r, double dwell_ms)
{
    const ts_device *dev = ts_pipeline_device(r->pipe);
    memset(d, 0, sizeof *d);
    d->on = 1;
    d->dwell_ms = dwell_ms;
    for (int f = 0; f < TS_FAM_COUNT; f++) {
        int before = d->n;
        for (size_t i = 0; dev && i < ts_variant_count(); i++) {
            const ts_variant *v = ts_variant_at(i);
            if (v->family == (ts_family)f && ts_variant_is_gpu(v) && ts_variant_runnable(v, dev))
                add(d, (ts_family)f, v);
        }
        if (d->n == before) /* the CPU backend: the reference alone */
            add(d, (ts_family)f, NULL);
    }
    if (!dev)
        snprintf(d->note, sizeof d->note, "the ladder needs the GPU (a CUDA build on a GPU "
                 "machine): CPU reference times only");
    if (!r->loaded) {
        snprintf(d->note, sizeof d->note, "no image to run the demo on");
        d->done = 1;
        return;
    }
    if (show(d, r) != 0)
        d->done = 1;
}

double vw_demo_speedup(const vw_demo *d, int i)
{
    const vw_rung *g = &d->rung[i];
    for (int k = 0; k < d->n; k++) /* the family's first measured rung */
        if (d->rung[k].family == g->family && d->rung[k].state > 0)
            return g->state > 0 && g->ms > 0 ? d->rung[k].ms / g->ms : 0;
    return 0;
}

int vw_demo_tick(vw_demo *d, vw_run *r)
{
    if (!d->on || d->done || !r->loaded)
        return 0;
    vw_rung *g = &d->rung[d->cur];
    if (g->state != 0) { /* measured: shown for dwell_ms, then the next rung */
        if (now_ms() < d->next_at)
            return 0;
        if (++d->cur == d->n) {
            d->done = 1;
            return 0;
        }
        if (show(d, r) != 0)
            d->done = 1;
        return 0;
    }
    if (r->dirty || !r->have_result)
        return 0; /* the chain shows the rung first */
    ts_image out;
    float ms = 0;
    if (ts_pipeline_run_op(r->pipe, &d->op, g->var, &r->src, &out, &ms) != TS_OK) {
        g->state = -1; /* e.g. this variant does not take this image's format */
    } else {
        ts_image_free(&out);
        if (d->runs > 0 && (g->ms <= 0 || ms < g->ms)) /* run 0 warms up */
            g->ms = ms;
        if (++d->runs <= VW_DEMO_REPS)
            return 1;
        g->state = 1;
    }
    d->runs = 0;
    d->next_at = now_ms() + d->dwell_ms;
    return 1;
}
