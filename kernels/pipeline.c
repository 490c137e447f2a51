/* pipeline.c - runs a chain of ops on the GPU (one upload, ping-pong device buffers, one
 * download, CUDA-event time per op) or on the CPU (the reference, host-clock time per op).
 * Variant choice per op: the op's own, else the family's selection, else `auto`; a chosen variant
 * that cannot take a job gives way to `auto` with a notice. A family with no GPU variant able to
 * take a job runs that op on the CPU in the middle of a GPU chain, also with a notice.
 * ts_pipeline_run_ex can keep the input on the GPU (in d_in, which no op writes) so that a caller
 * re-running chains on one image (the viewer's live mode) uploads it once, and can leave the
 * result there (keep_output) for a caller that downloads only what it shows. A batch converter
 * whose decoder leaves images on the GPU hands them in as they are (ts_pipeline_run_dev) and takes
 * the result's buffer (ts_pipeline_take_result) for its encoder: pixels never cross to the host.
 */
#include "tessera.h"
#include "cpu_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N_TIMERS (TS_MAX_CHAIN + 2) /* one per op, upload, download */
#define N_WARM 64                   /* op runs remembered as warmed up (then no more warm-ups) */

/* An op run the GPU has seen: variant, op text, channels and depth pick the kernel instance. */
typedef struct warm_key {
    const ts_variant *v;
    uint64_t op_hash;
    int ch, bytes;
} warm_key;

struct ts_pipeline {
    int gpu;
    ts_device dev;
    ts_stream stream;
    const ts_variant *sel[TS_FAM_COUNT];
    ts_image d_buf[2];
    size_t d_cap[2];
    ts_image d_in;    /* the kept input (ts_run_opts.keep_input) */
    size_t d_in_cap;
    int in_valid;     /* d_in holds the last kept upload */
    const ts_image *kept_out; /* the last run's result left on the device, NULL: none */
    void *scratch; /* device scratch on the GPU, host scratch on the CPU */
    size_t scratch_cap;
    ts_timer *timer[N_TIMERS];
    warm_key warm[N_WARM];
    int n_warm;
    uint64_t max_pixels; /* an op's output over it is refused before allocating; 0: default */
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

ts_status ts_pipeline_create(ts_pipeline **pp, ts_backend want, char *msg, size_t msglen)
{
    return ts_pipeline_create_on(pp, want, -1, msg, msglen);
}

ts_status ts_pipeline_create_on(ts_pipeline **pp, ts_backend want, int device, char *msg,
                                size_t msglen)
{
    ts_pipeline *p = calloc(1, sizeof *p);
    if (msg && msglen)
        msg[0] = '\0';
    *pp = NULL;
    if (!p)
        return ts_fail(TS_ERR_NOMEM, "out of memory");
    if (want != TS_BACKEND_CPU) {
        ts_status st = ts_gpu_open_id(&p->dev, device);
        if (st == TS_OK)
            st = ts_gpu_stream_create(&p->stream);
        if (st == TS_OK) {
            p->gpu = 1;
        } else if (want == TS_BACKEND_GPU) {
            free(p);
            return ts_fail(TS_ERR_NO_GPU, "no usable GPU: %s", ts_error_detail());
        } else if (msg && msglen) {
            snprintf(msg, msglen, "no usable GPU (%s): running on the CPU", ts_error_detail());
        }
    }
    ts_clear_error();
    *pp = p;
    return TS_OK;
}

void ts_pipeline_destroy(ts_pipeline *p)
{
    if (!p)
        return;
    if (p->gpu) {
        ts_gpu_use(p->dev.id);
        for (int i = 0; i < 2; i++)
            ts_gpu_free(p->d_buf[i].data);
        ts_gpu_free(p->d_in.data);
        ts_gpu_free(p->scratch);
        for (int i = 0; i < N_TIMERS; i++)
            ts_timer_destroy(p->timer[i]);
        ts_gpu_stream_destroy(p->stream);
    } else {
        free(p->scratch);
    }
    free(p);
}

int ts_pipeline_on_gpu(const ts_pipeline *p) { return p->gpu; }

const ts_image *ts_pipeline_result(const ts_pipeline *p) { return p->kept_out; }

ts_status ts_pipeline_take_result(ts_pipeline *p, ts_image *d_im, size_t *capacity)
{
    if (!p->kept_out)
        return ts_fail(TS_ERR_INVALID, "no result kept on the device");
    for (int i = 0; i < 2; i++)
        if (p->kept_out == &p->d_buf[i]) {
            ts_image mine = p->d_buf[i];
            size_t cap = p->d_cap[i];
            p->d_buf[i] = *d_im;
            p->d_cap[i] = *capacity;
            *d_im = mine;
            *capacity = cap;
            break;
        }
    p->kept_out = NULL; /* d_buf[i] now holds the caller's old pixels */
    return TS_OK;
}

ts_stream ts_pipeline_stream(const ts_pipeline *p) { return p->gpu ? p->stream : NULL; }

const ts_device *ts_pipeline_device(const ts_pipeline *p) { return p->gpu ? &p->dev : NULL; }

size_t ts_variant_names(ts_family f, char *buf, size_t len)
{
    size_t at = (size_t)snprintf(buf, len, "auto");
    for (size_t i = 0; i < ts_variant_count(); i++)
        if (ts_variant_at(i)->family == f) {
            int n = snprintf(at < len ? buf + at : NULL, at < len ? len - at : 0, " %s",
                             ts_variant_at(i)->name);
            at += n > 0 ? (size_t)n : 0;
        }
    return at;
}

ts_status ts_pipeline_select(ts_pipeline *p, ts_family f, const char *name)
{
    if ((unsigned)f >= TS_FAM_COUNT)
        return ts_fail(TS_ERR_INVALID, "bad family");
    if (!name || strcmp(name, "auto") == 0) {
        p->sel[f] = NULL;
        return TS_OK;
    }
    const ts_variant *v = ts_variant_find(f, name);
    if (!v) {
        char known[256];
        ts_variant_names(f, known, sizeof known);
        return ts_fail(TS_ERR_INVALID, "%s has no variant '%s' (known: %s)", ts_family_name(f),
                       name, known);
    }
    if (ts_variant_is_gpu(v) && !p->gpu)
        return ts_fail(TS_ERR_UNSUPPORTED, "%s=%s needs a GPU; running on the CPU",
                       ts_family_name(f), name);
    if (!ts_variant_is_gpu(v) && p->gpu)
        return ts_fail(TS_ERR_UNSUPPORTED, "%s=cpu: use --backend cpu", ts_family_name(f));
    if (!ts_variant_runnable(v, p->gpu ? &p->dev : NULL))
        return ts_fail(TS_ERR_UNSUPPORTED, "%s=%s needs compute capability %d.%d, %s has %d.%d",
                       ts_family_name(f), name, v->min_cc / 10, v->min_cc % 10, p->dev.name,
                       p->dev.cc / 10, p->dev.cc % 10);
    p->sel[f] = v;
    return TS_OK;
}

const ts_variant *ts_pipeline_selected(const ts_pipeline *p, ts_family f)
{
    return (unsigned)f < TS_FAM_COUNT ? p->sel[f] : NULL;
}

static void add_notice(ts_run_report *rep, const char *fmt, const char *a, const char *b,
                       const char *c)
{
    size_t used = strlen(rep->notice);
    if (used + 2 >= sizeof rep->notice)
        return;
    if (used)
        rep->notice[used++] = ';', rep->notice[used++] = ' ', rep->notice[used] = '\0';
    snprintf(rep->notice + used, sizeof rep->notice - used, fmt, a, b, c);
}

/* The variant for one op: its own, the family's selection, or auto; NULL: no GPU variant fits. */
static const ts_variant *choose(ts_pipeline *p, const ts_job *job, ts_run_report *rep)
{
    const ts_device *dev = p->gpu ? &p->dev : NULL;
    const ts_variant *v = job->op->variant ? job->op->variant : p->sel[ts_op_family(job->op->kind)];
    if (v && ts_variant_is_gpu(v) == p->gpu && ts_variant_runnable(v, dev) &&
        (!v->supports || v->supports(job)))
        return v;
    const ts_variant *a = ts_variant_auto(job, dev);
    if (v && rep)
        add_notice(rep, "%s: %s cannot run it here, used %s", job->op->text, v->name,
                   a ? a->name : "cpu");
    return a;
}

/* Shapes device buffer `b` (capacity *cap bytes) as a w x h image, growing it when needed. */
static ts_status ensure_dev(ts_pipeline *p, int i, int w, int h, int ch, int bytes)
{
    return ts_gpu_image_reserve(&p->d_buf[i], &p->d_cap[i], w, h, ch, bytes);
}

static ts_status ensure_scratch(ts_pipeline *p, size_t need)
{
    if (need <= p->scratch_cap)
        return TS_OK;
    if (p->gpu) {
        ts_gpu_free(p->scratch);
        p->scratch = NULL;
        p->scratch_cap = 0;
        ts_status st = ts_gpu_malloc(&p->scratch, need);
        if (st != TS_OK)
            return st;
    } else {
        free(p->scratch);
        p->scratch = malloc(need);
        p->scratch_cap = 0;
        if (!p->scratch)
            return ts_fail(TS_ERR_NOMEM, "out of memory for %zu bytes of scratch", need);
    }
    p->scratch_cap = need;
    return TS_OK;
}

static ts_status timer(ts_pipeline *p, int i, ts_timer **t)
{
    if (!p->timer[i]) {
        ts_status st = ts_timer_create(&p->timer[i]);
        if (st != TS_OK)
            return st;
    }
    *t = p->timer[i];
    return TS_OK;
}

/* Geometry and resize ops change the size; a crop outside the image is an error, and so is an
 * output over the pixel limit (resize:65536x65536 of a 1x1 image would take 12.9 GB). */
static ts_status out_shape(const ts_pipeline *p, const ts_op *op, const ts_image *in, int *w,
                           int *h)
{
    ts_status st = ts_op_out_size(op, in->width, in->height, w, h);
    uint64_t limit = p->max_pixels ? p->max_pixels : TS_DEFAULT_MAX_PIXELS;
    if (st == TS_OK && (uint64_t)*w * (uint64_t)*h > limit)
        return ts_fail(TS_ERR_TOO_LARGE, "output %dx%d is over the limit of %llu pixels", *w, *h,
                       (unsigned long long)limit);
    return st;
}

void ts_pipeline_set_max_pixels(ts_pipeline *p, uint64_t max_pixels) { p->max_pixels = max_pixels; }

/* Adds "op [variant]: " in front of the current error detail. */
static ts_status blame(ts_status st, const ts_op *op, const ts_variant *v)
{
    return ts_fail(st, "%s [%s]: %s", op->text, v ? v->name : "?", ts_error_detail());
}

/* One op with a CPU variant, on host images. */
static ts_status run_cpu_op(ts_pipeline *p, const ts_op *op, const ts_variant *v,
                            const ts_image *in, ts_image *out, float *ms)
{
    int w, h;
    ts_status st = out_shape(p, op, in, &w, &h);
    if (st != TS_OK || (st = ts_image_alloc(out, w, h, in->channels, in->bytes)) != TS_OK)
        return st;
    ts_job job = {.op = op, .in = *in, .out = *out};
    size_t need = v->scratch ? v->scratch(&job) : 0;
    if (need && (st = ensure_scratch(p, need)) != TS_OK) {
        ts_image_free(out);
        return st;
    }
    job.scratch = need ? p->scratch : NULL;
    job.scratch_bytes = need;
    double t0 = now_ms();
    st = v->run(&job);
    *ms = (float)(now_ms() - t0);
    if (st != TS_OK)
        ts_image_free(out);
    return st;
}

/* 1 the first time this pipeline runs variant v on op's text and this pixel format (then
 * remembered). CUDA loads a kernel's module at its first launch (lazy loading): without an untimed
 * first run that load, milliseconds, would land inside the first image's CUDA events. */
static int needs_warm_up(ts_pipeline *p, const ts_variant *v, const ts_op *op, const ts_image *in)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a of the op text */
    for (const char *c = op->text; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211u;
    for (int i = 0; i < p->n_warm; i++) {
        const warm_key *k = &p->warm[i];
        if (k->v == v && k->op_hash == h && k->ch == in->channels && k->bytes == in->bytes)
            return 0;
    }
    if (p->n_warm == N_WARM)
        return 0;
    p->warm[p->n_warm++] = (warm_key){v, h, in->channels, in->bytes};
    return 1;
}

/* One op on the GPU from device image `in` into d_buf[dst]. */
static ts_status run_gpu_op(ts_pipeline *p, const ts_op *op, const ts_variant *v,
                            const ts_image *in, int dst, ts_timer *t)
{
    int w, h;
    ts_status st = out_shape(p, op, in, &w, &h);
    if (st != TS_OK || (st = ensure_dev(p, dst, w, h, in->channels, in->bytes)) != TS_OK)
        return st;
    ts_job job = {.op = op, .in = *in, .out = p->d_buf[dst], .stream = p->stream,
                  .dev = &p->dev};
    size_t need = v->scratch ? v->scratch(&job) : 0;
    if (need && (st = ensure_scratch(p, need)) != TS_OK)
        return st;
    job.scratch = need ? p->scratch : NULL;
    job.scratch_bytes = need;
    if (needs_warm_up(p, v, op, in) && (st = v->run(&job)) != TS_OK)
        return st;
    if ((st = ts_timer_start(t, p->stream)) != TS_OK)
        return st;
    if ((st = v->run(&job)) != TS_OK)
        return st;
    return ts_timer_stop(t, p->stream);
}

/* A GPU chain's op that only the CPU can take: down (from `d`), reference, up (to d_buf[dst]). */
static ts_status gpu_op_on_cpu(ts_pipeline *p, const ts_op *op, const ts_image *d, int dst,
                               float *ms)
{
    ts_image h_in, h_out;
    ts_status st = ts_image_alloc(&h_in, d->width, d->height, d->channels, d->bytes);
    if (st != TS_OK)
        return st;
    if ((st = ts_gpu_download(&h_in, d, p->stream)) == TS_OK &&
        (st = ts_gpu_sync(p->stream)) == TS_OK) {
        double t0 = now_ms();
        st = ts_ref_op(op, &h_in, &h_out);
        *ms = (float)(now_ms() - t0);
        if (st == TS_OK) {
            st = ensure_dev(p, dst, h_out.width, h_out.height, h_out.channels, h_out.bytes);
            if (st == TS_OK && (st = ts_gpu_upload(&p->d_buf[dst], &h_out, p->stream)) == TS_OK)
                st = ts_gpu_sync(p->stream);
            ts_image_free(&h_out);
        }
    }
    ts_image_free(&h_in);
    return st;
}

static int same_shape(const ts_image *a, const ts_image *b)
{
    return a->width == b->width && a->height == b->height && a->channels == b->channels &&
           a->bytes == b->bytes;
}

/* Uploads `in` (into d_in when kept, else d_buf[0]) unless the kept copy is still valid;
 * *src is the device image the chain starts from. */
static ts_status upload_input(ts_pipeline *p, const ts_image *in, const ts_run_opts *o,
                              int in_dev, ts_timer *t_up, ts_run_report *rep, const ts_image **src)
{
    int keep = o && o->keep_input;
    ts_image *b = keep ? &p->d_in : &p->d_buf[0];
    ts_status st;
    if (in_dev) {
        *src = in;
        rep->input_resident = 1;
        return TS_OK;
    }
    *src = b;
    if (keep && o->input_unchanged && p->in_valid && same_shape(b, in)) {
        rep->input_resident = 1;
        return TS_OK;
    }
    if (keep)
        p->in_valid = 0; /* until this upload is known to have completed */
    st = keep ? ts_gpu_image_reserve(b, &p->d_in_cap, in->width, in->height, in->channels, in->bytes)
              : ensure_dev(p, 0, in->width, in->height, in->channels, in->bytes);
    if (st != TS_OK)
        return ts_fail(st, "upload: %s", ts_error_detail());
    if ((st = ts_timer_start(t_up, p->stream)) != TS_OK ||
        (st = ts_gpu_upload(b, in, p->stream)) != TS_OK ||
        (st = ts_timer_stop(t_up, p->stream)) != TS_OK)
        return ts_fail(st, "upload: %s", ts_error_detail());
    return TS_OK;
}

/* The host image for the result: `out` itself when reusable and of the right shape. */
static ts_status host_out(ts_image *out, const ts_image *d, int reuse)
{
    if (reuse && out->data && same_shape(out, d) && out->pitch == ts_row_bytes(d))
        return TS_OK;
    ts_image_free(out);
    return ts_image_alloc(out, d->width, d->height, d->channels, d->bytes);
}

static ts_status run_gpu(ts_pipeline *p, const ts_chain *c, const ts_image *in, int in_dev,
                         ts_image *out, ts_run_report *rep, const ts_run_opts *o)
{
    ts_timer *t_up, *t_down, *t_op;
    const ts_image *src;
    int on_cpu[TS_MAX_CHAIN] = {0};
    ts_status st;
    if ((st = timer(p, 0, &t_up)) != TS_OK || (st = timer(p, 1, &t_down)) != TS_OK)
        return st;
    if ((st = upload_input(p, in, o, in_dev, t_up, rep, &src)) != TS_OK)
        return st;
    int dst = src == &p->d_buf[0]; /* ping-pong through d_buf, never writing the input */
    for (int i = 0; i < c->n; i++) {
        const ts_op *op = &c->ops[i];
        ts_job probe = {.op = op, .in = *src, .out = *src, .stream = p->stream, .dev = &p->dev};
        int pw, ph; /* `supports` may read the output shape (resize: the tiles it needs) */
        if (out_shape(p, op, src, &pw, &ph) == TS_OK)
            probe.out.width = pw, probe.out.height = ph;
        const ts_variant *v = choose(p, &probe, rep);
        if (!v) { /* no GPU variant of this family can take it */
            add_notice(rep, "%s: no GPU variant%s%s, ran on the CPU", op->text, "", "");
            v = ts_variant_find(ts_op_family(op->kind), "cpu");
            on_cpu[i] = 1;
            st = gpu_op_on_cpu(p, op, src, dst, &rep->op[i].ms);
        } else {
            if ((st = timer(p, 2 + i, &t_op)) == TS_OK)
                st = run_gpu_op(p, op, v, src, dst, t_op);
        }
        rep->op[i].variant = v;
        if (st != TS_OK)
            return blame(st, op, v);
        src = &p->d_buf[dst];
        dst = !dst;
    }
    if (o && o->keep_output) { /* the caller reads the result on the device */
        if ((st = ts_gpu_sync(p->stream)) != TS_OK)
            return c->n ? blame(st, &c->ops[c->n - 1], rep->op[c->n - 1].variant) : st;
        ts_image_free(out);
        *out = *src;
        out->data = NULL;
        out->pitch = 0;
        p->kept_out = src;
    } else if ((st = host_out(out, src, o && o->reuse_out)) != TS_OK) {
        return st;
    } else if ((st = ts_timer_start(t_down, p->stream)) != TS_OK ||
               (st = ts_gpu_download(out, src, p->stream)) != TS_OK ||
               (st = ts_timer_stop(t_down, p->stream)) != TS_OK ||
               (st = ts_gpu_sync(p->stream)) != TS_OK) {
        ts_image_free(out);
        /* an asynchronous kernel fault surfaces here: name the chain's last GPU op */
        return c->n ? blame(st, &c->ops[c->n - 1], rep->op[c->n - 1].variant) : st;
    } else {
        ts_timer_ms(t_down, &rep->download_ms);
    }
    if (!rep->input_resident)
        ts_timer_ms(t_up, &rep->upload_ms);
    if (o && o->keep_input && !in_dev)
        p->in_valid = 1;
    for (int i = 0; i < c->n; i++)
        if (!on_cpu[i])
            ts_timer_ms(p->timer[2 + i], &rep->op[i].ms);
    return TS_OK;
}

/* Fusion on the CPU (the fast variants only; a chain that names the reference runs op by op):
 * a conv followed by an equalization counts the histogram while it writes its output (the
 * equalization then skips its counting pass), and an equalization followed by a geometry op is
 * applied on the way through the rotation (one pass instead of two). The fused pair's time is
 * reported on its first op, 0 on the second. tests/test_cpu.c checks each fused path against
 * the same variants run op by op. */
static int is_fast(const ts_variant *v, ts_status (*run)(const ts_job *))
{
    return v && v->run == run;
}

/* The variant op i + 1 would get on the output of op i (no notice), NULL at the chain's end. */
static const ts_variant *peek_next(ts_pipeline *p, const ts_chain *c, int i, const ts_image *cur)
{
    int w, h;
    if (i + 1 >= c->n || out_shape(p, &c->ops[i], cur, &w, &h) != TS_OK)
        return NULL;
    ts_job probe = {.op = &c->ops[i + 1], .in = *cur};
    probe.in.width = w, probe.in.height = h;
    probe.out = probe.in;
    return choose(p, &probe, NULL);
}

static ts_status run_cpu(ts_pipeline *p, const ts_chain *c, const ts_image *in, ts_image *out,
                         ts_run_report *rep)
{
    ts_image cur = *in; /* the input is read, never written: no copy */
    int owned = 0;
    uint32_t *hist = NULL; /* counted by a fused conv for the equalization that follows */
    ts_status st = TS_OK;
    for (int i = 0; i < c->n && st == TS_OK; i++) {
        const ts_op *op = &c->ops[i];
        ts_job probe = {.op = op, .in = cur, .out = cur};
        const ts_variant *v = choose(p, &probe, rep), *vn = peek_next(p, c, i, &cur);
        const ts_op *nop = i + 1 < c->n ? &c->ops[i + 1] : NULL;
        ts_image next;
        rep->op[i].variant = v;
        if (!v) {
            st = ts_fail(TS_ERR_UNSUPPORTED, "%s: no CPU variant", op->text);
            break;
        }
        int eq = op->kind == TS_OP_EQUALIZE && is_fast(v, cpu_hist_run);
        int eq_geom = eq && nop && nop->kind == TS_OP_GEOM && is_fast(vn, cpu_geom_run);
        int conv_hist = op->kind == TS_OP_CONV && is_fast(v, cpu_conv_run) && nop &&
                        nop->kind == TS_OP_EQUALIZE && is_fast(vn, cpu_hist_run);
        if (eq || conv_hist) {
            const ts_op *shape_op = eq_geom ? nop : op;
            int w, h;
            if ((st = out_shape(p, shape_op, &cur, &w, &h)) != TS_OK ||
                (st = ts_image_alloc(&next, w, h, cur.channels, cur.bytes)) != TS_OK)
                break;
            double t0 = now_ms();
            if (conv_hist) {
                size_t len = (size_t)ts_hist_count(nop->hist_mode, cur.channels) *
                             ts_hist_bins(cur.bytes);
                free(hist);
                if (!(hist = malloc(len * sizeof *hist)))
                    st = ts_fail(TS_ERR_NOMEM, "out of memory");
                ts_job job = {.op = op, .in = cur, .out = next};
                if (st == TS_OK)
                    st = cpu_conv_run_hist(&job, nop->hist_mode, hist);
            } else {
                st = cpu_equalize_geom(op->hist_mode, hist, eq_geom ? (int)nop->geom : -1, &cur,
                                       &next);
                free(hist);
                hist = NULL;
            }
            rep->op[i].ms = (float)(now_ms() - t0);
            if (st != TS_OK)
                ts_image_free(&next);
            if (st == TS_OK && eq_geom) {
                rep->op[++i].variant = vn;
                rep->op[i].ms = 0;
            }
        } else {
            st = run_cpu_op(p, op, v, &cur, &next, &rep->op[i].ms);
        }
        if (st != TS_OK) {
            st = blame(st, op, v);
            break;
        }
        if (owned)
            ts_image_free(&cur);
        cur = next;
        owned = 1;
    }
    free(hist);
    if (st != TS_OK) {
        if (owned)
            ts_image_free(&cur);
        return st;
    }
    if (!owned) { /* an empty chain: the result is a packed copy of the input */
        if ((st = ts_image_alloc(out, in->width, in->height, in->channels, in->bytes)) != TS_OK)
            return st;
        for (int y = 0; y < in->height; y++)
            memcpy((char *)out->data + (size_t)y * out->pitch,
                   (const char *)in->data + (size_t)y * in->pitch, ts_row_bytes(in));
        return TS_OK;
    }
    *out = cur;
    return TS_OK;
}

static ts_status check_run(const ts_chain *c, const ts_image *in)
{
    if (c->n > TS_MAX_CHAIN)
        return ts_fail(TS_ERR_TOO_LARGE, "more than %d operations", TS_MAX_CHAIN);
    for (int i = 0; i < c->n; i++)
        if (c->ops[i].kind == TS_OP_HIST)
            return ts_fail(TS_ERR_INVALID, "a histogram is not an image operation");
    return ts_image_geometry(in->width, in->height, in->channels, in->bytes, NULL, NULL);
}

static ts_status run_any(ts_pipeline *p, const ts_chain *c, const ts_image *in, int in_dev,
                         ts_image *out, ts_run_report *rep, const ts_run_opts *o)
{
    ts_run_report local;
    if (!rep)
        rep = &local;
    memset(rep, 0, sizeof *rep);
    p->kept_out = NULL; /* this run's buffers overwrite it */
    if (!(o && o->reuse_out))
        memset(out, 0, sizeof *out);
    ts_status st = check_run(c, in);
    if (st == TS_OK && in_dev && !p->gpu)
        st = ts_fail(TS_ERR_INVALID, "a device input on the CPU pipeline");
    if (st == TS_OK && p->gpu)
        st = ts_gpu_use(p->dev.id);
    if (st == TS_OK) {
        rep->n = c->n;
        double t0 = now_ms();
        if (p->gpu) {
            st = run_gpu(p, c, in, in_dev, out, rep, o);
        } else {
            ts_image res;
            if ((st = run_cpu(p, c, in, &res, rep)) == TS_OK) {
                ts_image_free(out); /* the CPU path allocates per op: nothing to reuse */
                *out = res;
            }
        }
        rep->total_ms = (float)(now_ms() - t0);
    }
    if (st != TS_OK)
        ts_image_free(out);
    return st;
}

ts_status ts_pipeline_run_ex(ts_pipeline *p, const ts_chain *c, const ts_image *in, ts_image *out,
                             ts_run_report *rep, const ts_run_opts *o)
{
    return run_any(p, c, in, 0, out, rep, o);
}

ts_status ts_pipeline_run_dev(ts_pipeline *p, const ts_chain *c, const ts_image *d_in,
                              ts_image *out, ts_run_report *rep, const ts_run_opts *o)
{
    return run_any(p, c, d_in, 1, out, rep, o);
}

ts_status ts_pipeline_run(ts_pipeline *p, const ts_chain *c, const ts_image *in, ts_image *out,
                          ts_run_report *rep)
{
    return ts_pipeline_run_ex(p, c, in, out, rep, NULL);
}

ts_status ts_pipeline_run_op(ts_pipeline *p, const ts_op *op, const ts_variant *v,
                             const ts_image *in, ts_image *out, float *ms)
{
    ts_op one = *op;
    ts_chain c = {1, &one};
    ts_run_report rep;
    if (v && (ts_variant_is_gpu(v) != p->gpu || !ts_variant_runnable(v, ts_pipeline_device(p))))
        return ts_fail(TS_ERR_UNSUPPORTED, "%s: variant %s cannot run on this backend", op->text,
                       v->name);
    one.variant = v;
    ts_status st = ts_pipeline_run(p, &c, in, out, &rep);
    if (st == TS_OK && v && rep.op[0].variant != v) {
        ts_image_free(out);
        return ts_fail(TS_ERR_UNSUPPORTED, "%s: variant %s cannot take this image", op->text,
                       v->name);
    }
    if (ms)
        *ms = rep.op[0].ms;
    return st;
}
