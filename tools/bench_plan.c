/* bench_plan.c - what the benchmark runs: the ops of the plan with their formats (full run,
 * --quick, headline), the sizes, the hist sweep, and the command line that narrows them down
 * (--op, --variant, --format, --size...). Usage errors print a message and exit 2 here, before
 * any GPU work; --help exits 0.
 */
#include "bench.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define Q_RGB BF_BIT(BF_RGB8)
#define Q_RGBA BF_BIT(BF_RGBA8)
#define Q_G8 BF_BIT(BF_GRAY8)
#define Q_G16 BF_BIT(BF_GRAY16)
#define Q_RGB16 BF_BIT(BF_RGB16)

/* quick/headline formats: the ones the performance targets name (RGB8 conv and equalize, RGBA8
 * geometry, 16-bit histograms; 8-bit histograms against CUB). An op row is
 * reported under its own text; only the histogram alone (no op text) and the resize rows (named by
 * their target size, as the NPP and torchvision baselines report them) have names of their own. */
#define OP(TEXT, ...) {(TEXT), (TEXT), __VA_ARGS__}
static const bench_opdef builtin_ops[] = {
    OP("gauss:3", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB),
    OP("gauss:5", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB),
    OP("gauss:7", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB),
    OP("sharpen", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB),
    OP("box:15", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB),
    OP("edge", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB),
    OP("rotate:90", BD_UNIFORM, BF_ALL, Q_RGBA, Q_RGBA),
    OP("transpose", BD_UNIFORM, BF_ALL, Q_RGBA, Q_RGBA),
    OP("rotate:180", BD_UNIFORM, BF_ALL, Q_RGBA, Q_RGBA),
    OP("flip", BD_UNIFORM, BF_ALL, Q_RGBA, Q_RGBA),
    {"hist", NULL, BD_UNIFORM, BF_ALL, Q_G16 | Q_RGBA, Q_G16 | Q_G8 | Q_RGBA},
    {"hist:narrow", NULL, BD_BAND, Q_G16, Q_G16, Q_G16},
    OP("equalize", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB),
    /* RGB16: 3 x 65536 bins, more than one block holds (the cluster rung's case) */
    OP("equalize:rgb", BD_UNIFORM, Q_RGB | Q_RGBA | Q_RGB16, Q_RGB | Q_RGB16, Q_RGB | Q_RGB16),
    /* resize to fixed sizes: at the 8K input (--quick) these are 8K -> 4K and 8K -> 1080p */
    {"resize:4k", "resize:3840x2160", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB},
    {"resize:4k:triangle", "resize:3840x2160:triangle", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB},
    {"resize:1080p", "resize:1920x1080", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB},
    {"resize:1080p:triangle", "resize:1920x1080:triangle", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB},
    /* interp: two taps an axis, no antialiasing: the work of NPP's and OpenCV's linear resize */
    {"resize:4k:interp", "resize:3840x2160:interp", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB},
    {"resize:1080p:interp", "resize:1920x1080:interp", BD_UNIFORM, BF_ALL, Q_RGB, Q_RGB},
    /* CLAHE with OpenCV's defaults (40, 8x8): gray8 is the target, gray16 the cluster's case */
    OP("clahe", BD_UNIFORM, BF_ALL | Q_RGB16, Q_G8 | Q_G16 | Q_RGB, Q_G8 | Q_G16),
};
#undef OP
#define N_BUILTIN (sizeof builtin_ops / sizeof builtin_ops[0])

static const struct {
    const char *name;
    int w, h;
} named_sizes[] = {{"1080p", 1920, 1080}, {"4k", 3840, 2160}, {"8k", 7680, 4320}};

/* Cluster sizes swept through job->param for the hist variants below (3, 6, 12: the RGB16
 * equalize:rgb cluster path takes multiples of 3, a block a channel; 1 is its non-cluster form). */
static const int sweep_params[] = {1, 2, 3, 4, 6, 8, 12, 16};
static const char *const swept_variants[] = {"cluster", "opt"};
static const char *const vendor_names[] = {"cudnn", "cub", "npp"};

#define MAX_ITEMS 32

typedef struct item {
    char name[48];
    int param; /* -1: any */
} item;

static item variant_items[MAX_ITEMS];
static int n_variant_items;

void bench_die(const char *fmt, ...)
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
            "for gray8, rgb8, rgba8, gray16 (rgb16 where an op names it). Prints a markdown table and a headline block.\n\n"
            "  --quick          7680x4320 only, the formats the targets name, 10 runs\n"
            "  --op LIST        ops or families, comma-separated: conv, geom, hist, equalize,\n"
            "                   gauss (all gauss:K), gauss:5, rotate:90, hist:narrow, or any op\n"
            "                   text tessera parses (e.g. emboss, gauss:9, rotate:270)\n");
    char names[512]; /* from tessera's op table */
    ts_op_names(-1, names, sizeof names);
    fprintf(f, "                   ops: %s\n", names);
    fprintf(f,
            "  --variant LIST   variant names (naive, tiled, cluster; NAME/P runs job->param P:\n"
            "                   cluster/2 a cluster size, pipe/16 a conv strip height)\n"
            "                   cpu, and the vendors cudnn, cub, npp)\n"
            "  --size LIST      WxH, 1080p, 4k, 8k\n"
            "  --format LIST    gray8, rgb8, rgba8, gray16, rgb16\n"
            "  --runs N         timed runs per row, median reported (default 20; --quick 10)\n"
            "  --csv FILE       write one CSV row per measurement\n"
            "  --md FILE        write the headline and the full table as markdown\n"
            "  --no-vendor      no cuDNN/CUB/NPP rows\n"
            "  --sweep          run the hist/equalize variants cluster and opt and clahe's cluster\n"
            "                   with job->param 1,2,3,4,6,8,12,16\n"
            "                   (cluster: the cluster size; default on, off with --quick)\n"
            "  --no-sweep       no sweep\n"
            "  --cpu            also time the CPU variants (at 1920x1080 only)\n"
            "  --seed N         replay the random inputs of an earlier run\n"
            "  --slug           print the device's file-name stem and exit\n"
            "  --list           print what would run (no GPU needed) and exit\n"
            "  --help           this text\n");
}

/* ---------------------------------------------------------------- helpers for the runner */

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
    /* luma for gray, one histogram per colour channel for colour */
    op->hist_mode = bench_formats[fmt].channels >= 3 ? TS_HIST_CHANNELS : TS_HIST_LUMA;
    snprintf(op->text, sizeof op->text, "hist");
    return TS_OK;
}

int bench_wanted(const char *name, int param)
{
    if (!n_variant_items)
        return 1;
    for (int i = 0; i < n_variant_items; i++)
        if (strcmp(variant_items[i].name, name) == 0 &&
            (variant_items[i].param < 0 || variant_items[i].param == param))
            return 1;
    return 0;
}

static int is_swept(const char *variant)
{
    for (size_t i = 0; i < sizeof swept_variants / sizeof swept_variants[0]; i++)
        if (!strcmp(variant, swept_variants[i]))
            return 1;
    return 0;
}

static int add_param(int *out, int n, int param)
{
    for (int i = 0; i < n; i++)
        if (out[i] == param)
            return n;
    if (n == BENCH_MAX_PARAMS) /* said, not dropped: a sweep row that never ran would read as done */
        bench_die("at most %d parameters for one variant (the sweep's and --variant's together)",
                  BENCH_MAX_PARAMS);
    out[n++] = param;
    return n;
}

int bench_params(int sweep, ts_op_kind kind, const char *name, int *out)
{
    int n = 0;
    if (bench_wanted(name, 0))
        n = add_param(out, n, 0);
    if (sweep && (((kind == TS_OP_HIST || kind == TS_OP_EQUALIZE) && is_swept(name)) ||
                  (kind == TS_OP_CLAHE && !strcmp(name, "cluster"))))
        for (size_t k = 0; k < sizeof sweep_params / sizeof sweep_params[0]; k++)
            if (bench_wanted(name, sweep_params[k]))
                n = add_param(out, n, sweep_params[k]);
    for (int i = 0; i < n_variant_items; i++)
        if (variant_items[i].param > 0 && !strcmp(variant_items[i].name, name))
            n = add_param(out, n, variant_items[i].param);
    return n;
}

/* ---------------------------------------------------------------- the command line */

/* Splits a comma list into fixed items ("name", or "name/param" when with_param). */
static int split_items(const char *arg, item *out, int max, int with_param)
{
    int n = 0;
    const char *p = arg;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len) {
            if (n == max || len >= sizeof out[0].name)
                bench_die("too many or too long items in '%s'", arg);
            memcpy(out[n].name, p, len);
            out[n].name[len] = '\0';
            out[n].param = -1;
            char *slash = with_param ? strchr(out[n].name, '/') : NULL;
            if (slash) {
                char *end;
                long v = strtol(slash + 1, &end, 10);
                if (*end || end == slash + 1 || v < 0 || v > 1024)
                    bench_die("bad variant '%s' (NAME or NAME/PARAM, PARAM 0..1024)", out[n].name);
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
        bench_die("%s takes a number in [%ld, %ld], not '%s'", flag, lo, hi, s);
    return v;
}

typedef struct filters {
    const char *op, *variant, *format, *size;
} filters;

static int in_list(const char *flag, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(flag, list[i]))
            return 1;
    return 0;
}

static const char *const bare_flags[] = {"--quick", "--no-vendor", "--sweep", "--no-sweep",
                                         "--cpu", "--slug", "--list", "--help", "-h"};
static const char *const value_flags[] = {"--op", "--variant", "--size", "--format",
                                          "--runs", "--csv", "--md", "--seed"};
#define IS_BARE(f) in_list(f, bare_flags, sizeof bare_flags / sizeof bare_flags[0])
#define TAKES_VALUE(f) in_list(f, value_flags, sizeof value_flags / sizeof value_flags[0])

static void parse_flags(bench_plan *p, filters *fl, int argc, char **argv)
{
    p->vendor = 1;
    p->runs = -1;
    p->sweep = -1;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i], flag[64];
        const char *val = NULL;
        char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        snprintf(flag, sizeof flag, "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
        if (eq)
            val = eq + 1;
        if (!IS_BARE(flag) && !TAKES_VALUE(flag)) {
            fprintf(stderr, "bench: unknown option '%s'\n", a);
            usage(stderr);
            exit(2);
        }
        if (val && IS_BARE(flag))
            bench_die("%s takes no value", flag);
        if (!val && TAKES_VALUE(flag)) {
            if (i + 1 >= argc)
                bench_die("%s needs a value", flag);
            val = argv[++i];
        }
        if (!strcmp(flag, "--help") || !strcmp(flag, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(flag, "--quick")) {
            p->quick = 1;
        } else if (!strcmp(flag, "--op")) {
            fl->op = val;
        } else if (!strcmp(flag, "--variant")) {
            fl->variant = val;
        } else if (!strcmp(flag, "--size")) {
            fl->size = val;
        } else if (!strcmp(flag, "--format")) {
            fl->format = val;
        } else if (!strcmp(flag, "--runs")) {
            p->runs = (int)parse_long(val, "--runs", 1, 1000);
        } else if (!strcmp(flag, "--csv")) {
            p->csv = val;
        } else if (!strcmp(flag, "--md")) {
            p->md = val;
        } else if (!strcmp(flag, "--no-vendor")) {
            p->vendor = 0;
        } else if (!strcmp(flag, "--sweep")) {
            p->sweep = 1;
        } else if (!strcmp(flag, "--no-sweep")) {
            p->sweep = 0;
        } else if (!strcmp(flag, "--cpu")) {
            p->cpu = 1;
        } else if (!strcmp(flag, "--seed")) {
            char *end;
            errno = 0;
            p->seed = strtoull(val, &end, 10);
            if (errno || *end || end == val)
                bench_die("--seed takes a number, not '%s'", val);
            p->have_seed = 1;
        } else if (!strcmp(flag, "--slug")) {
            p->slug_only = 1;
        } else if (!strcmp(flag, "--list")) {
            p->list_only = 1;
        }
    }
    if (p->runs < 0)
        p->runs = p->quick ? 10 : 20;
    if (p->sweep < 0)
        p->sweep = !p->quick;
}

static ts_family def_family(const bench_opdef *d)
{
    ts_op op;
    char err[160];
    if (!d->text || ts_op_parse(d->text, &op, err, sizeof err) != TS_OK)
        return TS_FAM_HIST;
    return ts_op_family(op.kind);
}

/* "conv"/"geom": the family; otherwise the op's name or its stem ("gauss" for gauss:K). */
static int op_matches(const bench_opdef *d, const char *it)
{
    size_t n = strlen(it);
    if (!strcmp(it, "conv") || !strcmp(it, "geom"))
        return !strcmp(ts_family_name(def_family(d)), it);
    return !strcmp(d->name, it) || (!strncmp(d->name, it, n) && d->name[n] == ':');
}

static void add_op(bench_plan *p, const bench_opdef *d)
{
    for (size_t i = 0; i < p->n_ops; i++)
        if (!strcmp(p->ops[i].name, d->name))
            return;
    if (p->n_ops == BENCH_MAX_OPS)
        bench_die("too many ops");
    p->ops[p->n_ops++] = *d;
}

static void plan_ops(bench_plan *p, const char *arg)
{
    item it[MAX_ITEMS];
    if (!arg) {
        for (size_t i = 0; i < N_BUILTIN; i++)
            add_op(p, &builtin_ops[i]);
        return;
    }
    int n = split_items(arg, it, MAX_ITEMS, 0);
    for (int k = 0; k < n; k++) {
        int hit = 0;
        for (size_t i = 0; i < N_BUILTIN; i++)
            if (op_matches(&builtin_ops[i], it[k].name)) {
                add_op(p, &builtin_ops[i]);
                hit = 1;
            }
        if (hit)
            continue;
        ts_op op; /* any op text tessera parses, e.g. for make profile */
        char err[200];
        if (ts_op_parse(it[k].name, &op, err, sizeof err) != TS_OK)
            bench_die("--op %s: not an op of the plan nor op text tessera parses (%s)",
                      it[k].name, err);
        if (p->n_ops == BENCH_MAX_OPS)
            bench_die("too many ops");
        char *text = p->op_text[p->n_ops];
        snprintf(text, sizeof p->op_text[0], "%s", op.text);
        bench_opdef d = {text, text, BD_UNIFORM, BF_ALL, BF_ALL, BF_ALL};
        add_op(p, &d);
    }
}

static void plan_formats(bench_plan *p, const char *arg)
{
    item it[MAX_ITEMS];
    unsigned mask = 0;
    if (arg) {
        int n = split_items(arg, it, MAX_ITEMS, 0);
        for (int k = 0; k < n; k++) {
            int f = 0;
            while (f < BF_COUNT && strcmp(bench_formats[f].name, it[k].name))
                f++;
            if (f == BF_COUNT)
                bench_die("--format %s: one of gray8, rgb8, rgba8, gray16, rgb16", it[k].name);
            mask |= BF_BIT(f);
        }
    }
    for (size_t i = 0; i < p->n_ops; i++)
        p->formats[i] = arg ? (p->ops[i].formats & mask)
                            : p->quick ? p->ops[i].quick : p->ops[i].formats;
}

static void plan_sizes(bench_plan *p, const char *arg)
{
    item it[MAX_ITEMS];
    if (!arg) {
        for (size_t s = 0; s < sizeof named_sizes / sizeof named_sizes[0]; s++)
            if (!p->quick || named_sizes[s].w == 7680) {
                p->sizes[p->n_sizes][0] = named_sizes[s].w;
                p->sizes[p->n_sizes][1] = named_sizes[s].h;
                p->n_sizes++;
            }
        return;
    }
    int n = split_items(arg, it, MAX_ITEMS, 0);
    for (int k = 0; k < n; k++) {
        int w = 0, h = 0;
        char extra;
        for (size_t s = 0; s < sizeof named_sizes / sizeof named_sizes[0]; s++)
            if (!strcasecmp(named_sizes[s].name, it[k].name))
                w = named_sizes[s].w, h = named_sizes[s].h;
        if (!w && (sscanf(it[k].name, "%dx%d%c", &w, &h, &extra) != 2 || w < 1 || h < 1 ||
                   w > 16384 || h > 16384))
            bench_die("--size %s: WxH (1..16384 each), 1080p, 4k or 8k", it[k].name);
        if (p->n_sizes == BENCH_MAX_SIZES)
            bench_die("too many sizes");
        p->sizes[p->n_sizes][0] = w;
        p->sizes[p->n_sizes][1] = h;
        p->n_sizes++;
    }
}

/* A --variant name must exist somewhere: a typo would otherwise run nothing, silently. */
static void plan_variants(const char *arg)
{
    if (!arg)
        return;
    n_variant_items = split_items(arg, variant_items, MAX_ITEMS, 1);
    for (int k = 0; k < n_variant_items; k++) {
        int known = !strcmp(variant_items[k].name, "cpu");
        for (size_t i = 0; i < ts_variant_count(); i++)
            known |= !strcmp(ts_variant_at(i)->name, variant_items[k].name);
        for (size_t i = 0; i < sizeof vendor_names / sizeof vendor_names[0]; i++)
            known |= !strcmp(vendor_names[i], variant_items[k].name);
        if (!known)
            bench_die("--variant %s: no such variant in the table (nor a vendor: cudnn cub npp)",
                      variant_items[k].name);
    }
}

void bench_plan_parse(bench_plan *p, int argc, char **argv)
{
    filters fl;
    memset(p, 0, sizeof *p);
    memset(&fl, 0, sizeof fl);
    parse_flags(p, &fl, argc, argv);
    plan_ops(p, fl.op);
    plan_formats(p, fl.format);
    plan_sizes(p, fl.size);
    plan_variants(fl.variant);
}

void bench_plan_print(FILE *f, const bench_plan *p)
{
    size_t groups = 0;
    for (size_t i = 0; i < p->n_ops; i++) {
        ts_op op;
        char err[200];
        if (bench_make_op(&p->ops[i], BF_GRAY8, &op, err, sizeof err) != TS_OK)
            continue;
        ts_family fam = ts_op_family(op.kind);
        fprintf(f, "%-13s formats:", p->ops[i].name);
        for (int fmt = 0; fmt < BF_COUNT; fmt++)
            if (p->formats[i] & BF_BIT(fmt)) {
                fprintf(f, " %s", bench_formats[fmt].name);
                groups += (size_t)p->n_sizes;
            }
        fprintf(f, "; variants:");
        for (size_t v = 0; v < ts_variant_count(); v++) {
            const ts_variant *tv = ts_variant_at(v);
            if (tv->family != fam || (!ts_variant_is_gpu(tv) && !p->cpu))
                continue;
            int params[BENCH_MAX_PARAMS], np = bench_params(p->sweep, op.kind, tv->name, params);
            for (int k = 0; k < np; k++)
                fprintf(f, params[k] ? " %s/%d" : " %s", tv->name, params[k]);
        }
        if (p->vendor)
            fprintf(f, "; vendors where they compute the op:%s%s%s",
                    op.kind == TS_OP_CONV && bench_wanted("cudnn", 0) ? " cudnn" : "",
                    op.kind == TS_OP_HIST && bench_wanted("cub", 0) ? " cub" : "",
                    op.kind != TS_OP_EQUALIZE && bench_wanted("npp", 0) ? " npp" : "");
        fputc('\n', f);
    }
    fprintf(f, "sizes:");
    for (int s = 0; s < p->n_sizes; s++)
        fprintf(f, " %dx%d", p->sizes[s][0], p->sizes[s][1]);
    fprintf(f, "\n%zu groups (op x format x size), %d timed runs a row%s\n", groups, p->runs,
            p->sweep ? ", hist cluster sweep on" : "");
}
