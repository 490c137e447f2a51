/* bench_check.cu - the benchmark's correctness guard: before a variant's figures count, its
 * output on a 1920x1080 input is compared once per op and format with the CPU reference
 * (ts_ref_op / ts_ref_hist), within the op's tolerance (0 exact, 1 float convolution). The input
 * is the one bg_make_input() makes for that size, so it is the same random image the 1080p group
 * times. The reference is computed once per op and format and dropped when either changes; the
 * verdict per (variant, param) is cached. At larger sizes bench.cu compares each variant with the
 * output of the first variant that passed here, on the device.
 */
#include "bench_gpu.cuh"
#include "gpu_util.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_VERDICTS 128

typedef struct verdict {
    const ts_variant *v;
    int param;
    int result; /* 1 ok, 0 wrong, -1 not checked */
    char text[BENCH_TEXT];
} verdict;

struct bench_ref {
    const bench_opdef *def;
    int fmt;
    int ready;                  /* the reference below belongs to (def, fmt) */
    ts_status ref_status;       /* TS_OK when the reference ran */
    char ref_why[BENCH_TEXT];
    ts_image d_in, d_out;       /* device input and a variant's output */
    size_t in_cap, out_cap;
    uint32_t *d_hist;
    size_t hist_cap;
    ts_image h_in, h_ref, h_out; /* host input, reference output, a variant's output */
    uint32_t *h_ref_hist, *h_hist;
    size_t hist_n;
    verdict done[MAX_VERDICTS];
    int n_done;
};

bench_ref *bref_new(void) { return (bench_ref *)calloc(1, sizeof(bench_ref)); }

static void drop_reference(bench_ref *r)
{
    ts_image_free(&r->h_in);
    ts_image_free(&r->h_ref);
    ts_image_free(&r->h_out);
    free(r->h_ref_hist);
    free(r->h_hist);
    r->h_ref_hist = r->h_hist = NULL;
    r->hist_n = 0;
    r->n_done = 0;
    r->ready = 0;
    r->def = NULL;
}

void bref_free(bench_ref *r)
{
    if (!r)
        return;
    drop_reference(r);
    bg_image_release(&r->d_in, &r->in_cap);
    bg_image_release(&r->d_out, &r->out_cap);
    cudaFree(r->d_hist);
    free(r);
}

static void out_shape(const ts_op *op, int w, int h, int *ow, int *oh)
{
    *ow = w;
    *oh = h;
    if (op->kind != TS_OP_HIST) /* geometry and resize change the size */
        ts_op_out_size(op, w, h, ow, oh);
}

/* Makes the input (device and host) and the CPU reference for (def, fmt) unless already there. */
static ts_status prepare(bench_ref *r, const bench_env *env, const bench_opdef *def,
                         const ts_op *op, int fmt)
{
    if (r->ready && r->def == def && r->fmt == fmt)
        return r->ref_status;
    drop_reference(r);
    r->def = def;
    r->fmt = fmt;
    r->ready = 1;
    const bench_format *f = &bench_formats[fmt];
    ts_status st = bg_make_input(env->g, env->seed, fmt, def->data, BENCH_CHECK_W, BENCH_CHECK_H,
                                 &r->d_in, &r->in_cap);
    if (st == TS_OK)
        st = ts_image_alloc(&r->h_in, BENCH_CHECK_W, BENCH_CHECK_H, f->channels, f->bytes);
    if (st == TS_OK && (st = ts_gpu_download(&r->h_in, &r->d_in, env->stream)) == TS_OK)
        st = bg_sync(env->g);
    if (st == TS_OK) {
        if (op->kind == TS_OP_HIST) {
            r->hist_n = bench_hist_count(op, f->channels, f->bytes);
            r->h_ref_hist = (uint32_t *)calloc(r->hist_n, sizeof(uint32_t));
            r->h_hist = (uint32_t *)calloc(r->hist_n, sizeof(uint32_t));
            st = !r->h_ref_hist || !r->h_hist ? ts_fail(TS_ERR_NOMEM, "out of memory")
                                              : ts_ref_hist(&r->h_in, op->hist_mode, r->h_ref_hist);
        } else {
            st = ts_ref_op(op, &r->h_in, &r->h_ref);
        }
    }
    r->ref_status = st;
    if (st != TS_OK)
        bench_text(r->ref_why, sizeof r->ref_why, "no CPU reference: %s", ts_error_detail());
    return st;
}

/* Largest |a - b| over all samples of two host images of one shape, and where. */
static long host_max_diff(const ts_image *a, const ts_image *b, int *wx, int *wy, int *wc)
{
    long worst = 0;
    for (int y = 0; y < a->height; y++)
        for (int x = 0; x < a->width; x++)
            for (int c = 0; c < a->channels; c++) {
                long d = (long)ts_get(a, x, y, c) - (long)ts_get(b, x, y, c);
                d = d < 0 ? -d : d;
                if (d > worst) {
                    worst = d;
                    *wx = x, *wy = y, *wc = c;
                }
            }
    return worst;
}

/* Runs v once on the check input into a poisoned output and brings the result to the host. */
static ts_status run_once(bench_ref *r, const bench_env *env, const ts_op *op, const ts_variant *v,
                          int param, int *unsupported)
{
    const bench_format *f = &bench_formats[r->fmt];
    int ow, oh;
    ts_status st;
    ts_job job;
    memset(&job, 0, sizeof job);
    *unsupported = 0;
    out_shape(op, BENCH_CHECK_W, BENCH_CHECK_H, &ow, &oh);
    if ((st = bg_image_reserve(&r->d_out, &r->out_cap, ow, oh, f->channels, f->bytes)) != TS_OK)
        return st;
    job.op = op;
    job.in = r->d_in;
    job.out = r->d_out;
    job.stream = env->stream;
    job.dev = env->dev;
    job.param = param;
    if (op->kind == TS_OP_HIST) {
        if ((st = bg_reserve((void **)&r->d_hist, &r->hist_cap, r->hist_n * sizeof(uint32_t))) !=
            TS_OK)
            return st;
        job.hist = r->d_hist;
    }
    if (v->supports && !v->supports(&job)) {
        *unsupported = 1;
        return TS_OK;
    }
    job.scratch_bytes = v->scratch ? v->scratch(&job) : 0;
    if ((st = bg_scratch(env->g, job.scratch_bytes, &job.scratch)) != TS_OK)
        return st;
    if (op->kind == TS_OP_HIST)
        st = ts_gpu_memset(job.hist, 0xA5, r->hist_n * sizeof(uint32_t), env->stream);
    else
        st = ts_gpu_image_fill(&job.out, 0xA5, env->stream); /* an unwritten pixel shows */
    if (st == TS_OK)
        st = v->run(&job);
    if (st == TS_OK)
        st = bg_sync(env->g);
    if (st != TS_OK)
        return st;
    if (op->kind == TS_OP_HIST) {
        st = ts_gpu_copy_to_host(r->h_hist, r->d_hist, r->hist_n * sizeof(uint32_t), env->stream);
    } else {
        if (!r->h_out.data && (st = ts_image_alloc(&r->h_out, ow, oh, f->channels, f->bytes)) != TS_OK)
            return st;
        st = ts_gpu_download(&r->h_out, &r->d_out, env->stream);
    }
    return st == TS_OK ? bg_sync(env->g) : st;
}

static int compare(bench_ref *r, const ts_op *op, char *text, size_t len)
{
    if (op->kind == TS_OP_HIST) {
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < r->hist_n; i++)
            if (r->h_hist[i] != r->h_ref_hist[i] && bad++ == 0)
                first = i;
        if (!bad) {
            bench_text(text, len, "exact at %dx%d", BENCH_CHECK_W, BENCH_CHECK_H);
            return 1;
        }
        bench_text(text, len, "%zu of %zu bins differ at %dx%d (bin %zu: %u, CPU %u)", bad,
                   r->hist_n, BENCH_CHECK_W, BENCH_CHECK_H, first, r->h_hist[first],
                   r->h_ref_hist[first]);
        return 0;
    }
    int x = 0, y = 0, c = 0, tol = bench_tolerance(op);
    long d = host_max_diff(&r->h_out, &r->h_ref, &x, &y, &c);
    if (d <= tol) {
        bench_text(text, len, "max diff %ld at %dx%d (tolerance %d)", d, BENCH_CHECK_W,
                   BENCH_CHECK_H, tol);
        return 1;
    }
    bench_text(text, len, "differs from the CPU by %ld at (%d,%d) channel %d of %dx%d (got %u, CPU "
               "%u; tolerance %d)", d, x, y, c, BENCH_CHECK_W, BENCH_CHECK_H,
               ts_get(&r->h_out, x, y, c), ts_get(&r->h_ref, x, y, c), tol);
    return 0;
}

int bref_check(bench_ref *r, const bench_env *env, const bench_opdef *def, const ts_op *op, int fmt,
               const ts_variant *v, int param, char *text, size_t len)
{
    if (prepare(r, env, def, op, fmt) != TS_OK) {
        bench_text(text, len, "%s", r->ref_why);
        return -1;
    }
    for (int i = 0; i < r->n_done; i++)
        if (r->done[i].v == v && r->done[i].param == param) {
            bench_text(text, len, "%s", r->done[i].text);
            return r->done[i].result;
        }
    int unsupported = 0, result;
    ts_status st = run_once(r, env, op, v, param, &unsupported);
    if (st != TS_OK) {
        bench_text(text, len, "failed at %dx%d: %s", BENCH_CHECK_W, BENCH_CHECK_H,
                   ts_error_detail());
        result = -1;
    } else if (unsupported) {
        bench_text(text, len, "does not take a %dx%d image", BENCH_CHECK_W, BENCH_CHECK_H);
        result = -1;
    } else {
        result = compare(r, op, text, len);
    }
    if (r->n_done < MAX_VERDICTS) {
        verdict *d = &r->done[r->n_done++];
        d->v = v;
        d->param = param;
        d->result = result;
        bench_text(d->text, sizeof d->text, "%s", text);
    }
    return result;
}

static double host_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

ts_status bref_time_cpu(bench_ref *r, const bench_env *env, const bench_opdef *def, const ts_op *op,
                        int fmt, const ts_variant *v, int runs, double *ms)
{
    ts_status st = prepare(r, env, def, op, fmt);
    if (st != TS_OK)
        return ts_fail(st, "%s", r->ref_why);
    const bench_format *f = &bench_formats[fmt];
    int ow, oh;
    out_shape(op, BENCH_CHECK_W, BENCH_CHECK_H, &ow, &oh);
    ts_image out;
    memset(&out, 0, sizeof out);
    ts_job job;
    memset(&job, 0, sizeof job);
    job.op = op;
    job.in = r->h_in;
    if (op->kind == TS_OP_HIST) {
        job.hist = r->h_hist;
    } else {
        if ((st = ts_image_alloc(&out, ow, oh, f->channels, f->bytes)) != TS_OK)
            return st;
        job.out = out;
    }
    if (v->supports && !v->supports(&job)) {
        ts_image_free(&out);
        return ts_fail(TS_ERR_UNSUPPORTED, "%s does not take this job", v->name);
    }
    void *scratch = NULL;
    job.scratch_bytes = v->scratch ? v->scratch(&job) : 0;
    if (job.scratch_bytes && !(scratch = malloc(job.scratch_bytes))) {
        ts_image_free(&out);
        return ts_fail(TS_ERR_NOMEM, "out of memory");
    }
    job.scratch = scratch;
    double t[16];
    runs = runs < 1 ? 1 : runs > 16 ? 16 : runs;
    for (int i = 0; i < runs && st == TS_OK; i++) {
        double t0 = host_ms();
        st = v->run(&job);
        t[i] = host_ms() - t0;
    }
    free(scratch);
    ts_image_free(&out);
    if (st != TS_OK)
        return st;
    std::sort(t, t + runs);
    *ms = runs % 2 ? t[runs / 2] : 0.5 * (t[runs / 2 - 1] + t[runs / 2]);
    return TS_OK;
}
