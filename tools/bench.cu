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
 * The table goes to stdout as it grows, then the headline block; --md/--csv write the files that
 * `make bench` puts in tools/results/ (tools/chart.py draws the PNG from the CSV).
 */
#include "bench_gpu.cuh"
#include "gpu_util.cuh"

#include <cuda_runtime.h>

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---------------------------------------------------------------- the plan */

#define Q_RGB BF_BIT(BF_RGB8)
#define Q_RGBA BF_BIT(BF_RGBA8)
#define Q_G8 BF_BIT(BF_GRAY8)
#define Q_G16 BF_BIT(BF_GRAY16)

/* quick/headline formats: where issues 3-5 set their targets (RGB8 conv and equalize, RGBA8
 * geometry, 16-bit histograms; 8-bit histograms against CUB). */
static const bench_opdef builtin_ops[] = {
    {"gauss:3", "gauss:3", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB},
    {"gauss:5", "gauss:5", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB},
    {"gauss:7", "gauss:7", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB},
    {"sharpen", "sharpen", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB},
    {"box:15", "box:15", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB},
    {"edge", "edge", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB},
    {"rotate:90", "rotate:90", BD_UNIFORM, BF_ALL, Q_RGBA, Q_RGBA},
    {"transpose", "transpose", BD_UNIFORM, BF_ALL, Q_RGBA, Q_RGBA},
    {"rotate:180", "rotate:180", BD_UNIFORM, BF_ALL, Q_RGBA, Q_RGBA},
    {"flip", "flip", BD_UNIFORM, BF_ALL, Q_RGBA, Q_RGBA},
    {"hist", NULL, BD_UNIFORM, BF_ALL, Q_G16 | Q_RGBA, Q_G16 | Q_G8 | Q_RGBA},
    {"hist:narrow", NULL, BD_BAND, Q_G16, Q_G16, Q_G16},
    {"equalize", "equalize", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB},
    {"equalize:rgb", "equalize:rgb", BD_UNIFORM, Q_RGB | Q_RGBA, Q_RGB, Q_RGB},
};
#define N_BUILTIN (sizeof builtin_ops / sizeof builtin_ops[0])

static const struct {
    const char *name;
    int w, h;
} named_sizes[] = {{"1080p", 1920, 1080}, {"4k", 3840, 2160}, {"8k", 7680, 4320}};

/* Cluster sizes swept through job->param for the hist variants below (issue 5). */
static const int sweep_params[] = {1, 2, 4, 8, 16};
static const char *const sweep_variants[] = {"cluster", "opt"};
static const char *const vendor_names[] = {"cudnn", "cub", "npp"};

#define MAX_OPS 64
#define MAX_SIZES 16
#define MAX_ITEMS 32

typedef struct item {
    char name[48];
    int param; /* -1: any */
} item;

typedef struct config {
    int quick, runs, vendor, sweep, cpu, slug_only;
    int have_seed;
    unsigned long long seed;
    const char *csv, *md;
    const char *op_arg, *variant_arg, *format_arg, *size_arg;
} config;

typedef struct bench {
    config cfg;
    ts_device dev;
    bench_env env;
    bench_meta meta;
    bench_rows rows;
    bench_ref *ref;
    bench_vendor *vendor;
    bench_opdef ops[MAX_OPS];
    char op_text[MAX_OPS][80];
    unsigned op_formats[MAX_OPS];
    size_t n_ops;
    int sizes[MAX_SIZES][2];
    int n_sizes;
    ts_image d_in, d_out, d_gold;
    size_t in_cap, out_cap, gold_cap;
    uint32_t *d_hist, *d_gold_hist;
    size_t hist_cap, gold_hist_cap;
    uint32_t *h_hist_a, *h_hist_b; /* host copies for comparing histograms */
    size_t h_hist_n;
    int stopped; /* the CUDA context is gone */
} bench;

static item variant_items[MAX_ITEMS];
static int n_variant_items;

static void die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "bench: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench [options]\n"
            "Times every variant of tessera's variant table, vendor baselines (cuDNN, CUB, NPP)\n"
            "and a device-to-device copy of the same bytes, at 1920x1080, 3840x2160, 7680x4320\n"
            "for gray8, rgb8, rgba8, gray16. Prints a markdown table and a headline block.\n\n"
            "  --quick          7680x4320 only, the formats the targets name, 10 runs\n"
            "  --op LIST        ops or families, comma-separated: conv, geom, hist, equalize,\n"
            "                   gauss (all gauss:K), gauss:5, rotate:90, hist:narrow, or any op\n"
            "                   text tessera parses (e.g. emboss, gauss:9, rotate:270)\n"
            "  --variant LIST   variant names (naive, tiled, cluster, cluster/2 for one swept\n"
            "                   size, cudnn, cub, npp, cpu)\n"
            "  --size LIST      WxH, 1080p, 4k, 8k\n"
            "  --format LIST    gray8, rgb8, rgba8, gray16\n"
            "  --runs N         timed runs per row, median reported (default 20; --quick 10)\n"
            "  --csv FILE       write one CSV row per measurement\n"
            "  --md FILE        write the headline and the full table as markdown\n"
            "  --no-vendor      no cuDNN/CUB/NPP rows\n"
            "  --sweep          sweep hist cluster sizes 1,2,4,8,16 through job->param\n"
            "                   (cluster and opt rows; default on, off with --quick)\n"
            "  --no-sweep       no sweep\n"
            "  --cpu            also time the CPU variants (at 1920x1080 only)\n"
            "  --seed N         replay the random inputs of an earlier run\n"
            "  --slug           print the device's file-name stem and exit\n"
            "  --help           this text\n");
}

/* ---------------------------------------------------------------- shared helpers */

int bench_tolerance(const ts_op *op)
{
    return op->kind == TS_OP_CONV && !op->filter.exact ? 1 : 0;
}

size_t bench_hist_count(const ts_op *op, int channels, int bytes)
{
    return (size_t)ts_hist_count(op->hist_mode, channels) * (size_t)ts_hist_bins(bytes);
}

ts_status bench_make_op(const bench_opdef *def, int fmt, ts_op *op, char *err, size_t errlen)
{
    if (def->text)
        return ts_op_parse(def->text, op, err, errlen);
    memset(op, 0, sizeof *op);
    op->kind = TS_OP_HIST;
    /* issue 7: luma for gray, one histogram per colour channel for colour */
    op->hist_mode = bench_formats[fmt].channels >= 3 ? TS_HIST_CHANNELS : TS_HIST_LUMA;
    snprintf(op->text, sizeof op->text, "hist");
    return TS_OK;
}

static int wanted(const char *name, int param)
{
    if (!n_variant_items)
        return 1;
    for (int i = 0; i < n_variant_items; i++)
        if (strcmp(variant_items[i].name, name) == 0 &&
            (variant_items[i].param < 0 || variant_items[i].param == param))
            return 1;
    return 0;
}

bench_row *bench_group_row(const bench_group *grp, bench_rows *rows, const char *variant)
{
    bench_row *r = bench_rows_add(rows);
    if (!r)
        die("out of memory");
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

/* ---------------------------------------------------------------- arguments */

/* Splits a comma list into fixed items ("name" or "name/param"). */
static int split_items(const char *arg, item *out, int max, int with_param)
{
    int n = 0;
    const char *p = arg;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len) {
            if (n == max || len >= sizeof out[0].name)
                die("too many or too long items in '%s'", arg);
            memcpy(out[n].name, p, len);
            out[n].name[len] = '\0';
            out[n].param = -1;
            char *slash = with_param ? strchr(out[n].name, '/') : NULL;
            if (slash) {
                char *end;
                long v = strtol(slash + 1, &end, 10);
                if (*end || end == slash + 1 || v < 0 || v > 1024)
                    die("bad variant '%s' (NAME or NAME/PARAM)", out[n].name);
                *slash = '\0';
                out[n].param = (int)v;
            }
            n++;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    return n;
}

static long parse_long(const char *s, const char *flag, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi)
        die("%s takes a number in [%ld, %ld], not '%s'", flag, lo, hi, s);
    return v;
}

static void parse_args(config *c, int argc, char **argv)
{
    memset(c, 0, sizeof *c);
    c->vendor = 1;
    c->runs = -1;
    c->sweep = -1;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i], *val = NULL, flag[64];
        char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        snprintf(flag, sizeof flag, "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
        if (eq)
            val = eq + 1;
#define VALUE() (val ? val : (i + 1 < argc ? argv[++i] : (die("%s needs a value", flag), "")))
        if (!strcmp(flag, "--help") || !strcmp(flag, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(flag, "--quick")) {
            c->quick = 1;
        } else if (!strcmp(flag, "--op")) {
            c->op_arg = VALUE();
        } else if (!strcmp(flag, "--variant")) {
            c->variant_arg = VALUE();
        } else if (!strcmp(flag, "--size")) {
            c->size_arg = VALUE();
        } else if (!strcmp(flag, "--format")) {
            c->format_arg = VALUE();
        } else if (!strcmp(flag, "--runs")) {
            c->runs = (int)parse_long(VALUE(), "--runs", 1, 1000);
        } else if (!strcmp(flag, "--csv")) {
            c->csv = VALUE();
        } else if (!strcmp(flag, "--md")) {
            c->md = VALUE();
        } else if (!strcmp(flag, "--no-vendor")) {
            c->vendor = 0;
        } else if (!strcmp(flag, "--sweep")) {
            c->sweep = 1;
        } else if (!strcmp(flag, "--no-sweep")) {
            c->sweep = 0;
        } else if (!strcmp(flag, "--cpu")) {
            c->cpu = 1;
        } else if (!strcmp(flag, "--seed")) {
            const char *s = VALUE();
            char *end;
            errno = 0;
            c->seed = strtoull(s, &end, 10);
            if (errno || *end || end == s)
                die("--seed takes a number, not '%s'", s);
            c->have_seed = 1;
        } else if (!strcmp(flag, "--slug")) {
            c->slug_only = 1;
        } else {
            fprintf(stderr, "bench: unknown option '%s'\n", a);
            usage(stderr);
            exit(2);
        }
        if (val && (!strcmp(flag, "--quick") || !strcmp(flag, "--no-vendor") ||
                    !strcmp(flag, "--sweep") || !strcmp(flag, "--no-sweep") ||
                    !strcmp(flag, "--cpu") || !strcmp(flag, "--slug")))
            die("%s takes no value", flag);
#undef VALUE
    }
    if (c->runs < 0)
        c->runs = c->quick ? 10 : 20;
    if (c->sweep < 0)
        c->sweep = !c->quick;
}

static ts_family def_family(const bench_opdef *d)
{
    ts_op op;
    char err[160];
    if (!d->text || ts_op_parse(d->text, &op, err, sizeof err) != TS_OK)
        return TS_FAM_HIST;
    return ts_op_family(op.kind);
}

static int op_matches(const bench_opdef *d, const char *it)
{
    size_t n = strlen(it);
    if (!strcmp(it, "conv") || !strcmp(it, "geom"))
        return !strcmp(ts_family_name(def_family(d)), it);
    return !strcmp(d->name, it) || (!strncmp(d->name, it, n) && d->name[n] == ':');
}

static void add_op(bench *b, const bench_opdef *d)
{
    for (size_t i = 0; i < b->n_ops; i++)
        if (!strcmp(b->ops[i].name, d->name))
            return;
    if (b->n_ops == MAX_OPS)
        die("too many ops");
    b->ops[b->n_ops++] = *d;
}

static void build_plan(bench *b)
{
    const config *c = &b->cfg;
    item it[MAX_ITEMS];
    if (!c->op_arg) {
        for (size_t i = 0; i < N_BUILTIN; i++)
            add_op(b, &builtin_ops[i]);
    } else {
        int n = split_items(c->op_arg, it, MAX_ITEMS, 0);
        for (int k = 0; k < n; k++) {
            int hit = 0;
            for (size_t i = 0; i < N_BUILTIN; i++)
                if (op_matches(&builtin_ops[i], it[k].name)) {
                    add_op(b, &builtin_ops[i]);
                    hit = 1;
                }
            if (hit)
                continue;
            ts_op op; /* any op text tessera parses, e.g. for make profile */
            char err[200];
            if (ts_op_parse(it[k].name, &op, err, sizeof err) != TS_OK)
                die("--op %s: not an op of the plan nor op text tessera parses (%s)", it[k].name,
                    err);
            size_t j = b->n_ops;
            snprintf(b->op_text[j], sizeof b->op_text[j], "%s", op.text);
            bench_opdef d = {b->op_text[j], b->op_text[j], BD_UNIFORM, BF_ALL, BF_ALL, BF_ALL};
            add_op(b, &d);
        }
    }
    unsigned fmask = 0;
    if (c->format_arg) {
        int n = split_items(c->format_arg, it, MAX_ITEMS, 0);
        for (int k = 0; k < n; k++) {
            int f = 0;
            while (f < BF_COUNT && strcmp(bench_formats[f].name, it[k].name))
                f++;
            if (f == BF_COUNT)
                die("--format %s: one of gray8, rgb8, rgba8, gray16", it[k].name);
            fmask |= BF_BIT(f);
        }
    }
    for (size_t i = 0; i < b->n_ops; i++)
        b->op_formats[i] = c->format_arg ? (b->ops[i].formats & fmask)
                                         : c->quick ? b->ops[i].quick : b->ops[i].formats;
    if (c->size_arg) {
        int n = split_items(c->size_arg, it, MAX_ITEMS, 0);
        for (int k = 0; k < n && b->n_sizes < MAX_SIZES; k++) {
            int w = 0, h = 0;
            for (size_t s = 0; s < sizeof named_sizes / sizeof named_sizes[0]; s++)
                if (!strcasecmp(named_sizes[s].name, it[k].name))
                    w = named_sizes[s].w, h = named_sizes[s].h;
            char x;
            if (!w && (sscanf(it[k].name, "%dx%d%c", &w, &h, &x) != 2 || w < 1 || h < 1 ||
                       w > 16384 || h > 16384))
                die("--size %s: WxH (1..16384 each), 1080p, 4k or 8k", it[k].name);
            b->sizes[b->n_sizes][0] = w;
            b->sizes[b->n_sizes][1] = h;
            b->n_sizes++;
        }
    } else {
        for (size_t s = 0; s < 3; s++)
            if (!c->quick || s == 2) {
                b->sizes[b->n_sizes][0] = named_sizes[s].w;
                b->sizes[b->n_sizes][1] = named_sizes[s].h;
                b->n_sizes++;
            }
    }
    if (c->variant_arg) {
        n_variant_items = split_items(c->variant_arg, variant_items, MAX_ITEMS, 1);
        for (int k = 0; k < n_variant_items; k++) {
            int known = !strcmp(variant_items[k].name, "cpu");
            for (size_t i = 0; i < ts_variant_count(); i++)
                known |= !strcmp(ts_variant_at(i)->name, variant_items[k].name);
            for (size_t i = 0; i < sizeof vendor_names / sizeof vendor_names[0]; i++)
                known |= !strcmp(vendor_names[i], variant_items[k].name);
            if (!known)
                die("--variant %s: no such variant in the table (nor a vendor: cudnn cub npp)",
                    variant_items[k].name);
        }
    }
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
        TS_CUDA_TRY(cudaMemcpyAsync(b->d_gold_hist, job->hist, bytes, cudaMemcpyDeviceToDevice,
                                    (cudaStream_t)b->env.stream));
        grp->d_gold_hist = b->d_gold_hist;
    } else {
        const ts_image *o = &job->out;
        if ((st = bg_image_reserve(&b->d_gold, &b->gold_cap, o->width, o->height, o->channels,
                                   o->bytes)) != TS_OK)
            return st;
        TS_CUDA_TRY(cudaMemcpy2DAsync(b->d_gold.data, b->d_gold.pitch, o->data, o->pitch,
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
    if (grp->op->kind == TS_OP_GEOM)
        ts_geom_size(grp->op->geom, grp->width, grp->height, &ow, &oh);
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
    if ((st = bg_time(b->env.g, timed_run, &t, b->cfg.runs, &tm)) != TS_OK) {
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

static int is_sweep_variant(const ts_variant *v)
{
    for (size_t i = 0; i < sizeof sweep_variants / sizeof sweep_variants[0]; i++)
        if (!strcmp(v->name, sweep_variants[i]))
            return 1;
    return 0;
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
    if (bg_copy_floor(b->env.g, (size_t)(grp.bytes / 2), b->cfg.runs, &floor_ms) == TS_OK)
        grp.floor_ms = floor_ms;
    else
        fprintf(stderr, "bench: %s: copy floor failed: %s\n", where, ts_error_detail());
    ts_family fam = ts_op_family(op->kind);
    for (size_t i = 0; i < ts_variant_count() && !bg_context_lost(); i++) {
        const ts_variant *v = ts_variant_at(i);
        if (v->family != fam)
            continue;
        if (!ts_variant_is_gpu(v)) {
            if (b->cfg.cpu && w == BENCH_CHECK_W && h == BENCH_CHECK_H && wanted(v->name, 0))
                run_cpu_variant(b, &grp, v);
            continue;
        }
        int sweep = b->cfg.sweep && op->kind == TS_OP_HIST && is_sweep_variant(v);
        int any = wanted(v->name, 0);
        for (size_t p = 0; sweep && p < sizeof sweep_params / sizeof sweep_params[0]; p++)
            any |= wanted(v->name, sweep_params[p]);
        if (!any)
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
        if (wanted(v->name, 0))
            run_variant(b, &grp, v, 0);
        for (size_t p = 0; sweep && p < sizeof sweep_params / sizeof sweep_params[0]; p++)
            if (!bg_context_lost() && wanted(v->name, sweep_params[p]))
                run_variant(b, &grp, v, sweep_params[p]);
    }
    if (b->cfg.vendor && b->vendor && !bg_context_lost())
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
    size_t n = (size_t)snprintf(m->command, sizeof m->command, "build/bench");
    for (int i = 1; i < argc && n < sizeof m->command; i++)
        n += (size_t)snprintf(m->command + n, sizeof m->command - n, " %s", argv[i]);
    m->runs = b->cfg.runs;
    m->quick = b->cfg.quick;
    m->seed = b->cfg.seed;
    bench_text(m->timing, sizeof m->timing,
               "median of %d runs after a warm-up, CUDA events around each run, L2 (%.0f MB) "
               "flushed before each run by reading 3x its size; random inputs, --seed %llu "
               "replays them; outputs checked once per op/format at %dx%d against the CPU "
               "reference",
               b->cfg.runs, b->dev.l2_bytes / 1048576.0, (unsigned long long)b->cfg.seed,
               BENCH_CHECK_W, BENCH_CHECK_H);
    if (b->cfg.vendor)
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
    bench_print_headline(stdout, &b->rows, b->ops, b->n_ops);
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
    parse_args(&b.cfg, argc, argv);
    build_plan(&b);
    if (ts_gpu_open(&b.dev) != TS_OK) {
        fprintf(stderr, "bench: no usable GPU: %s\n", ts_error_detail());
        return 1;
    }
    if (b.cfg.slug_only) {
        char slug[80];
        bench_slug(b.dev.name, slug, sizeof slug);
        printf("%s\n", slug);
        return 0;
    }
    if (!b.cfg.have_seed)
        b.cfg.seed = (unsigned long long)time(NULL) * 2654435761ull ^ (unsigned long long)clock();
    if (bg_open(&b.env.g, &b.dev, b.cfg.runs) != TS_OK) {
        fprintf(stderr, "bench: cannot set up the timing harness: %s\n", ts_error_detail());
        return 1;
    }
    b.env.dev = &b.dev;
    b.env.stream = bg_stream(b.env.g);
    b.env.seed = b.cfg.seed;
    b.env.runs = b.cfg.runs;
    b.env.meta = &b.meta;
    b.env.wanted = wanted;
    if (!(b.ref = bref_new()))
        die("out of memory");
    if (b.cfg.vendor)
        b.vendor = bv_open(&b.env);
    fill_meta(&b, argc, argv);
    printf("# tessera benchmark: %s%s\n\n", b.dev.name, b.cfg.quick ? " (--quick)" : "");
    bench_print_meta(stdout, &b.meta, "- ");
    printf("\n");
    bench_print_table_head(stdout);
    for (size_t i = 0; i < b.n_ops && !b.stopped; i++) {
        for (int fmt = 0; fmt < BF_COUNT && !b.stopped; fmt++) {
            if (!(b.op_formats[i] & BF_BIT(fmt)))
                continue;
            ts_op op;
            char err[200];
            if (bench_make_op(&b.ops[i], fmt, &op, err, sizeof err) != TS_OK)
                die("op %s: %s", b.ops[i].name, err);
            for (int s = 0; s < b.n_sizes && !b.stopped; s++)
                run_group(&b, &b.ops[i], &op, fmt, b.sizes[s][0], b.sizes[s][1]);
        }
    }
    if (b.cfg.cpu && !(b.n_sizes && b.sizes[0][0] == BENCH_CHECK_W))
        bench_note(&b.meta, "--cpu times the CPU variants at %dx%d only", BENCH_CHECK_W,
                   BENCH_CHECK_H);
    if (b.rows.n == 0)
        fprintf(stderr, "bench: nothing to run: no op, format, size and variant of the plan "
                        "match the filters\n");
    finish(&b);
    if (b.cfg.md && bench_write_md(b.cfg.md, &b.meta, &b.rows, b.ops, b.n_ops) != 0)
        rc = 1;
    if (b.cfg.csv && bench_write_csv(b.cfg.csv, &b.meta, &b.rows) != 0)
        rc = 1;
    if (b.cfg.md && !rc)
        fprintf(stderr, "bench: wrote %s\n", b.cfg.md);
    if (b.cfg.csv && !rc)
        fprintf(stderr, "bench: wrote %s\n", b.cfg.csv);
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
