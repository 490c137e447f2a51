/* bench.cu - tessera's benchmark: every variant of the one table (kernels/registry.c) on every op,
 * pixel format and size of the plan, against vendor libraries and the copy floor.
 *
 * For each op x format x size (a "group"): a random input is made on the device; the copy floor is
 * a D2D copy of half the bytes the op must move (a copy reads and writes each byte); then each GPU
 * variant of the op's family, in table order (the speedup ladder), is checked once per op/format
 * at 1920x1080 against the CPU reference (bench_check.cu), run once into a poisoned output and
 * compared on the device with the first checked variant's output at this size, then timed
 * (bench_gpu.cu: warm-up, L2 flushed before each run, CUDA events, median). Vendor rows follow
 * (bench_vendor.cu). A variant the device cannot run, or that does not take the job, is skipped
 * with a note; a wrong one is timed and marked WRONG; a failing one says "error: ...".
 * The plan and the flags are bench_plan.c's. The table goes to stdout as it grows, then the
 * headline block; --md/--csv write the files that `make bench` puts in tools/results/
 * (tools/chart.py draws the PNG from the CSV).
 */
#include "bench_gpu.cuh"
#include "gpu_util.cuh"
#include "kernel_file.h"

#include <cuda_runtime.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct bench {
    bench_plan plan;
    ts_device dev;
    bench_env env;
    bench_meta meta;
    bench_rows rows;
    bench_ref *ref;
    bench_vendor *vendor;
    ts_image d_in, d_out, d_gold;
    size_t in_cap, out_cap, gold_cap;
    uint32_t *d_hist, *d_gold_hist;
    size_t hist_cap, gold_hist_cap;
    uint32_t *h_hist_a, *h_hist_b; /* host copies for comparing histograms */
    size_t h_hist_n;
    int stopped; /* the CUDA context is gone */
} bench;

bench_row *bench_group_row(const bench_group *grp, bench_rows *rows, const char *variant)
{
    bench_row *r = bench_rows_add(rows);
    if (!r)
        bench_die("out of memory");
    bench_text(r->op, sizeof r->op, "%s", grp->def->name);
    r->fmt = grp->fmt;
    r->width = grp->width;
    r->height = grp->height;
    bench_text(r->variant, sizeof r->variant, "%s", variant);
    r->bytes = grp->bytes;
    r->flops = grp->flops;
    r->floor_ms = grp->floor_ms;
    return r;
}

static void set_state(bench_row *r, bench_state s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void set_state(bench_row *r, bench_state s, const char *fmt, ...)
{
    va_list ap;
    r->state = s;
    va_start(ap, fmt);
    vsnprintf(r->check, sizeof r->check, fmt, ap);
    va_end(ap);
}

/* ---------------------------------------------------------------- one variant of a group */

typedef struct timed_job {
    const ts_variant *v;
    ts_job job;
} timed_job;

static ts_status timed_run(void *p)
{
    timed_job *t = (timed_job *)p;
    return t->v->run(&t->job);
}

static ts_status hist_diff(bench *b, const uint32_t *d_a, const uint32_t *d_b, size_t n,
                           size_t *bad)
{
    if (n > b->h_hist_n) {
        free(b->h_hist_a);
        free(b->h_hist_b);
        b->h_hist_a = (uint32_t *)malloc(n * sizeof(uint32_t));
        b->h_hist_b = (uint32_t *)malloc(n * sizeof(uint32_t));
        b->h_hist_n = b->h_hist_a && b->h_hist_b ? n : 0;
        if (!b->h_hist_n)
            return ts_fail(TS_ERR_NOMEM, "out of memory");
    }
    ts_status st = ts_gpu_copy_to_host(b->h_hist_a, d_a, n * sizeof(uint32_t), b->env.stream);
    if (st == TS_OK)
        st = ts_gpu_copy_to_host(b->h_hist_b, d_b, n * sizeof(uint32_t), b->env.stream);
    if (st == TS_OK)
        st = bg_sync(b->env.g);
    *bad = 0;
    for (size_t i = 0; st == TS_OK && i < n; i++)
        *bad += b->h_hist_a[i] != b->h_hist_b[i];
    return st;
}

/* Compares the variant's fresh output with the group's gold; -1 when it could not. */
static long diff_to_gold(bench *b, const bench_group *grp, const ts_job *job)
{
    ts_status st;
    if (grp->op->kind == TS_OP_HIST) {
        size_t bad = 0;
        st = hist_diff(b, job->hist, grp->d_gold_hist, grp->hist_n, &bad);
        return st == TS_OK ? (long)bad : -1;
    }
    unsigned d = 0;
    st = bg_max_diff(b->env.g, &job->out, grp->d_gold, job->out.channels, &d);
    return st == TS_OK ? (long)d : -1;
}

static ts_status keep_as_gold(bench *b, bench_group *grp, const ts_job *job, const char *name)
{
    ts_status st;
    if (grp->op->kind == TS_OP_HIST) {
        size_t bytes = grp->hist_n * sizeof(uint32_t);
        if ((st = bg_reserve((void **)&b->d_gold_hist, &b->gold_hist_cap, bytes)) != TS_OK)
            return st;
        CUDA_TRY(cudaMemcpyAsync(b->d_gold_hist, job->hist, bytes, cudaMemcpyDeviceToDevice,
                                    (cudaStream_t)b->env.stream));
        grp->d_gold_hist = b->d_gold_hist;
    } else {
        const ts_image *o = &job->out;
        if ((st = bg_image_reserve(&b->d_gold, &b->gold_cap, o->width, o->height, o->channels,
                                   o->bytes)) != TS_OK)
            return st;
        CUDA_TRY(cudaMemcpy2DAsync(b->d_gold.data, b->d_gold.pitch, o->data, o->pitch,
                                      ts_row_bytes(o), (size_t)o->height, cudaMemcpyDeviceToDevice,
                                      (cudaStream_t)b->env.stream));
        grp->d_gold = &b->d_gold;
    }
    grp->gold_name = name;
    return bg_sync(b->env.g);
}

static void group_label(const bench_group *grp, char *out, size_t len)
{
    bench_text(out, len, "%s %s %dx%d", grp->def->name, bench_formats[grp->fmt].name, grp->width,
               grp->height);
}

static void run_variant(bench *b, bench_group *grp, const ts_variant *v, int param)
{
    const bench_format *f = &bench_formats[grp->fmt];
    char label[64], where[96], ref_text[BENCH_TEXT];
    timed_job t;
    ts_status st;
    memset(&t, 0, sizeof t);
    if (param)
        bench_text(label, sizeof label, "%s/%d", v->name, param);
    else
        bench_text(label, sizeof label, "%s", v->name);
    group_label(grp, where, sizeof where);
    t.v = v;
    t.job.op = grp->op;
    t.job.in = grp->d_in;
    t.job.stream = b->env.stream;
    t.job.dev = &b->dev;
    t.job.param = param;
    int ow = grp->width, oh = grp->height;
    if (grp->op->kind != TS_OP_HIST) /* geometry and resize change the size */
        ts_op_out_size(grp->op, grp->width, grp->height, &ow, &oh);
    if (grp->op->kind == TS_OP_HIST)
        st = bg_reserve((void **)&b->d_hist, &b->hist_cap, grp->hist_n * sizeof(uint32_t));
    else
        st = bg_image_reserve(&b->d_out, &b->out_cap, ow, oh, f->channels, f->bytes);
    t.job.out = b->d_out;
    t.job.hist = b->d_hist;
    if (v->supports && !v->supports(&t.job)) {
        if (param) { /* a swept size the variant refuses: no row */
            fprintf(stderr, "bench: %s: %s does not take this job: skipped\n", where, label);
            return;
        }
        bench_row *r = bench_group_row(grp, &b->rows, label);
        set_state(r, BS_SKIPPED, "skipped: does not take this job");
        fprintf(stderr, "bench: %s: %s does not take this job: skipped\n", where, label);
        return;
    }
    int verdict = bref_check(b->ref, &b->env, grp->def, grp->op, grp->fmt, v, param, ref_text,
                             sizeof ref_text);
    bench_row *r = bench_group_row(grp, &b->rows, label);
    r->param = param;
    if (st == TS_OK) {
        t.job.scratch_bytes = v->scratch ? v->scratch(&t.job) : 0;
        st = bg_scratch(b->env.g, t.job.scratch_bytes, &t.job.scratch);
    }
    /* One run into a poisoned output: the output to check, and the first warm-up. */
    if (st == TS_OK)
        st = grp->op->kind == TS_OP_HIST
                 ? ts_gpu_memset(t.job.hist, 0xA5, grp->hist_n * sizeof(uint32_t), b->env.stream)
                 : ts_gpu_image_fill(&t.job.out, 0xA5, b->env.stream);
    if (st == TS_OK && (st = v->run(&t.job)) == TS_OK)
        st = bg_sync(b->env.g);
    if (st != TS_OK) {
        set_state(r, BS_ERROR, "error: %s", ts_error_detail());
        return;
    }
    long diff = -2; /* -2: no gold to compare with */
    int tol = bench_tolerance(grp->op) * 2; /* both sides within 1 of the CPU */
    if (grp->d_gold || grp->d_gold_hist)
        diff = diff_to_gold(b, grp, &t.job);
    else if (verdict == 1 && param == 0 && (st = keep_as_gold(b, grp, &t.job, v->name)) != TS_OK)
        fprintf(stderr, "bench: %s: cannot keep %s's output: %s\n", where, label,
                ts_error_detail());
    if (verdict == 0)
        set_state(r, BS_WRONG, "WRONG: %s", ref_text);
    else if (diff == -1)
        set_state(r, BS_UNCHECKED, "unchecked: compare failed: %s", ts_error_detail());
    else if (diff > tol && grp->op->kind == TS_OP_HIST)
        set_state(r, BS_WRONG, "WRONG: %ld bins differ from %s's at this size", diff,
                  grp->gold_name);
    else if (diff > tol)
        set_state(r, BS_WRONG, "WRONG: differs from %s by up to %ld at this size (tolerance %d)",
                  grp->gold_name, diff, tol);
    else if (verdict == 1)
        set_state(r, BS_OK, "ok");
    else if (diff >= 0)
        set_state(r, BS_OK, "ok: matches %s (%s)", grp->gold_name, ref_text);
    else
        set_state(r, BS_UNCHECKED, "unchecked: %s", ref_text);
    if (bg_context_lost())
        return;
    bg_timing tm;
    if ((st = bg_time(b->env.g, timed_run, &t, b->plan.runs, &tm)) != TS_OK) {
        set_state(r, BS_ERROR, "error: %s", ts_error_detail());
        return;
    }
    r->ms = tm.median_ms;
    r->min_ms = tm.min_ms;
    r->runs = tm.runs;
    bench_text(r->note, sizeof r->note, "%s", tm.note);
}

static void run_cpu_variant(bench *b, bench_group *grp, const ts_variant *v)
{
    double ms = -1;
    ts_status st = bref_time_cpu(b->ref, &b->env, grp->def, grp->op, grp->fmt, v, 3, &ms);
    bench_row *r = bench_group_row(grp, &b->rows, v->name);
    r->host = 1;
    if (st != TS_OK) {
        set_state(r, BS_ERROR, "error: %s", ts_error_detail());
        return;
    }
    r->ms = r->min_ms = ms;
    r->runs = 3;
    set_state(r, BS_OK, "ok: the reference");
    bench_text(r->note, sizeof r->note, "host clock, median of 3");
}

/* ---------------------------------------------------------------- one group */

static void run_group(bench *b, const bench_opdef *def, const ts_op *op, int fmt, int w, int h)
{
    const bench_format *f = &bench_formats[fmt];
    bench_group grp;
    char where[96];
    memset(&grp, 0, sizeof grp);
    grp.env = &b->env;
    grp.def = def;
    grp.op = op;
    grp.fmt = fmt;
    grp.width = w;
    grp.height = h;
    grp.floor_ms = -1;
    group_label(&grp, where, sizeof where);
    size_t first = b->rows.n;
    double image_bytes = (double)w * h * f->channels * f->bytes;
    grp.bytes = op->kind == TS_OP_HIST ? image_bytes : 2 * image_bytes;
    if (op->kind == TS_OP_CLAHE) { /* the image read twice (the tiles' histograms, the blend) */
        grp.bytes = 3 * image_bytes;
        bench_note(&b->meta, "clahe rows: bytes and %% of copy bw count what CLAHE must move, the "
                   "image read twice (the tiles' histograms, the blend) and written once: 3x the "
                   "image; the copy floor copies 1.5x the image");
    }
    int ow = w, oh = h; /* resize: the bytes read plus the bytes written */
    if (op->kind == TS_OP_RESIZE && ts_op_out_size(op, w, h, &ow, &oh) == TS_OK)
        grp.bytes = image_bytes + (double)ow * oh * f->channels * f->bytes;
    if (op->kind == TS_OP_CONV)
        grp.flops = 2.0 * op->filter.k * op->filter.k * op->filter.outputs *
                    ts_color_channels(f->channels) * (double)w * h;
    if (op->kind == TS_OP_HIST)
        grp.hist_n = bench_hist_count(op, f->channels, f->bytes);
    ts_status st = bg_make_input(b->env.g, b->env.seed, fmt, def->data, w, h, &b->d_in, &b->in_cap);
    if (st == TS_OK)
        st = bg_sync(b->env.g);
    if (st != TS_OK) {
        bench_row *r = bench_group_row(&grp, &b->rows, "input");
        set_state(r, BS_ERROR, "error: cannot make the input: %s", ts_error_detail());
        fprintf(stderr, "bench: %s: cannot make the input: %s\n", where, ts_error_detail());
        bench_print_rows(stdout, b->rows.v + first, b->rows.n - first);
        return;
    }
    grp.d_in = b->d_in;
    double floor_ms = -1;
    if (bg_copy_floor(b->env.g, (size_t)(grp.bytes / 2), b->plan.runs, &floor_ms) == TS_OK)
        grp.floor_ms = floor_ms;
    else
        fprintf(stderr, "bench: %s: copy floor failed: %s\n", where, ts_error_detail());
    ts_family fam = ts_op_family(op->kind);
    for (size_t i = 0; i < ts_variant_count() && !bg_context_lost(); i++) {
        const ts_variant *v = ts_variant_at(i);
        if (v->family != fam)
            continue;
        if (!ts_variant_is_gpu(v)) {
            if (b->plan.cpu && w == BENCH_CHECK_W && h == BENCH_CHECK_H && bench_wanted(v->name, 0))
                run_cpu_variant(b, &grp, v);
            continue;
        }
        int params[BENCH_MAX_PARAMS], np = bench_params(b->plan.sweep, op->kind, v->name, params);
        if (!np)
            continue;
        if (!ts_variant_runnable(v, &b->dev)) {
            bench_row *r = bench_group_row(&grp, &b->rows, v->name);
            set_state(r, BS_SKIPPED, "skipped: needs compute capability %d.%d", v->min_cc / 10,
                      v->min_cc % 10);
            bench_note(&b->meta, "%s %s skipped: needs compute capability %d.%d, the device "
                       "has %d.%d", ts_family_name(fam), v->name, v->min_cc / 10, v->min_cc % 10,
                       b->dev.cc / 10, b->dev.cc % 10);
            fprintf(stderr, "bench: %s: %s needs compute capability %d.%d: skipped\n", where,
                    v->name, v->min_cc / 10, v->min_cc % 10);
            continue;
        }
        for (int k = 0; k < np && !bg_context_lost(); k++)
            run_variant(b, &grp, v, params[k]);
    }
    if (b->plan.vendor && b->vendor && !bg_context_lost())
        bv_rows(b->vendor, &grp, &b->rows);
    double naive = -1;
    for (size_t i = first; i < b->rows.n; i++) {
        const bench_row *r = &b->rows.v[i];
        if (!r->vendor && !r->host && r->param == 0 && !strcmp(r->variant, "naive") && r->ms > 0)
            naive = r->ms;
    }
    for (size_t i = first; i < b->rows.n; i++)
        b->rows.v[i].naive_ms = naive;
    bench_print_rows(stdout, b->rows.v + first, b->rows.n - first);
    if (bg_context_lost()) {
        b->stopped = 1;
        bench_note(&b->meta, "run stopped at %s: a CUDA error destroyed the context (see the "
                   "error rows)", where);
    }
}

/* ---------------------------------------------------------------- main */

static void fill_meta(bench *b, int argc, char **argv)
{
    bench_meta *m = &b->meta;
    m->dev = b->dev;
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(m->date, sizeof m->date, "%Y-%m-%d %H:%M:%S UTC", &tmv);
    bench_slug(b->dev.name, m->slug, sizeof m->slug);
    size_t n = (size_t)snprintf(m->command, sizeof m->command, "%s", argv[0]);
    for (int i = 1; i < argc && n < sizeof m->command; i++)
        n += (size_t)snprintf(m->command + n, sizeof m->command - n, " %s", argv[i]);
    m->runs = b->plan.runs;
    m->quick = b->plan.quick;
    m->seed = b->plan.seed;
    bench_text(m->timing, sizeof m->timing,
               "median of %d runs after a warm-up, CUDA events around each run, L2 (%.0f MB) "
               "flushed before each run by reading 3x its size; random inputs, --seed %llu "
               "replays them; outputs checked once per op/format at %dx%d against the CPU "
               "reference (%d threads)",
               b->plan.runs, b->dev.l2_bytes / 1048576.0, (unsigned long long)b->plan.seed,
               BENCH_CHECK_W, BENCH_CHECK_H, ts_ref_threads());
    if (b->plan.vendor)
        bv_describe(m->vendors, sizeof m->vendors);
    else
        bench_text(m->vendors, sizeof m->vendors, "left out (--no-vendor)");
}

static void finish(bench *b)
{
    size_t wrong = 0, errors = 0, skipped = 0;
    for (size_t i = 0; i < b->rows.n; i++) {
        wrong += b->rows.v[i].state == BS_WRONG;
        errors += b->rows.v[i].state == BS_ERROR;
        skipped += b->rows.v[i].state == BS_SKIPPED;
    }
    printf("\n## Headline\n\n");
    bench_print_headline(stdout, &b->rows, b->plan.ops, b->plan.n_ops);
    if (b->meta.n_notes) {
        printf("\n## Notes\n\n");
        for (int i = 0; i < b->meta.n_notes; i++)
            printf("- %s\n", b->meta.notes[i]);
    }
    fflush(stdout);
    fprintf(stderr, "bench: %zu rows: %zu WRONG, %zu errors, %zu skipped\n", b->rows.n, wrong,
            errors, skipped);
}

int main(int argc, char **argv)
{
    static bench b; /* large; zeroed */
    int rc = 0;
    setvbuf(stdout, NULL, _IOLBF, 0); /* the table is the progress report */
    bench_plan_parse(&b.plan, argc, argv);
    if (b.plan.list_only) {
        bench_plan_print(stdout, &b.plan);
        return 0;
    }
    app_gpu_env(); /* TESSERA_DEVICE, TESSERA_RESIZE_PLAN_CACHE=0 (first-call timings) */
    if (ts_gpu_open(&b.dev) != TS_OK) {
        fprintf(stderr, "bench: no usable GPU: %s\n", ts_error_detail());
        return 1;
    }
    if (b.plan.slug_only) {
        char slug[80];
        bench_slug(b.dev.name, slug, sizeof slug);
        printf("%s\n", slug);
        return 0;
    }
    /* the CPU reference (the check, --cpu rows) on every core: at K = 31 one thread takes minutes */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    ts_ref_set_threads(ncpu > 0 ? (int)ncpu : 1);
    if (!b.plan.have_seed)
        b.plan.seed = (unsigned long long)time(NULL) * 2654435761ull ^ (unsigned long long)clock();
    if (bg_open(&b.env.g, &b.dev, b.plan.runs) != TS_OK) {
        fprintf(stderr, "bench: cannot set up the timing harness: %s\n", ts_error_detail());
        return 1;
    }
    b.env.dev = &b.dev;
    b.env.stream = bg_stream(b.env.g);
    b.env.seed = b.plan.seed;
    b.env.runs = b.plan.runs;
    b.env.meta = &b.meta;
    b.env.wanted = bench_wanted;
    if (!(b.ref = bref_new()))
        bench_die("out of memory");
    if (b.plan.vendor)
        b.vendor = bv_open(&b.env);
    fill_meta(&b, argc, argv);
    printf("# tessera benchmark: %s%s\n\n", b.dev.name, b.plan.quick ? " (--quick)" : "");
    bench_print_meta(stdout, &b.meta, "- ");
    printf("\n");
    bench_print_table_head(stdout);
    for (size_t i = 0; i < b.plan.n_ops && !b.stopped; i++) {
        for (int fmt = 0; fmt < BF_COUNT && !b.stopped; fmt++) {
            if (!(b.plan.formats[i] & BF_BIT(fmt)))
                continue;
            ts_op op;
            char err[200];
            if (bench_make_op(&b.plan.ops[i], fmt, &op, err, sizeof err) != TS_OK)
                bench_die("op %s: %s", b.plan.ops[i].name, err);
            for (int s = 0; s < b.plan.n_sizes && !b.stopped; s++)
                run_group(&b, &b.plan.ops[i], &op, fmt, b.plan.sizes[s][0], b.plan.sizes[s][1]);
        }
    }
    int has_check_size = 0;
    for (int s = 0; s < b.plan.n_sizes; s++)
        has_check_size |= b.plan.sizes[s][0] == BENCH_CHECK_W && b.plan.sizes[s][1] == BENCH_CHECK_H;
    if (b.plan.cpu && !has_check_size)
        bench_note(&b.meta, "--cpu times the CPU variants at %dx%d only", BENCH_CHECK_W,
                   BENCH_CHECK_H);
    if (b.rows.n == 0)
        fprintf(stderr, "bench: nothing to run: no op, format, size and variant of the plan "
                        "match the filters\n");
    finish(&b);
    if (b.plan.md && bench_write_md(b.plan.md, &b.meta, &b.rows, b.plan.ops, b.plan.n_ops) != 0)
        rc = 1;
    if (b.plan.csv && bench_write_csv(b.plan.csv, &b.meta, &b.rows) != 0)
        rc = 1;
    if (b.plan.md && !rc)
        fprintf(stderr, "bench: wrote %s\n", b.plan.md);
    if (b.plan.csv && !rc)
        fprintf(stderr, "bench: wrote %s\n", b.plan.csv);
    if (b.stopped)
        rc = 2;
    if (!bg_context_lost()) { /* a lost context cannot free anything */
        bv_close(b.vendor);
        bref_free(b.ref);
        bg_image_release(&b.d_in, &b.in_cap);
        bg_image_release(&b.d_out, &b.out_cap);
        bg_image_release(&b.d_gold, &b.gold_cap);
        cudaFree(b.d_hist);
        cudaFree(b.d_gold_hist);
        bg_close(b.env.g);
    }
    free(b.h_hist_a);
    free(b.h_hist_b);
    bench_rows_free(&b.rows);
    return rc;
}
