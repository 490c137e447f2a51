/* cli.c - option parsing (getopt_long, every value range-checked), the pipeline set-up that the
 * viewer and the batch share, and --list. */
#include "cli.h"
#include "util.h"
#include "viewer_keys.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_HEADLESS = 256, OPT_OPS, OPT_FORMAT, OPT_QUALITY, OPT_FORCE, OPT_BACKEND, OPT_VARIANT,
    OPT_REPORT, OPT_MAXPIX, OPT_LIST, OPT_VERSION, OPT_KEYS, OPT_FRAMES, OPT_SHOT, OPT_TIMINGS,
    OPT_SHARD, OPT_DEVICES, OPT_HUD, OPT_DEMO, OPT_NO_ORIENT, OPT_STRIP, OPT_LOSSLESS,
    OPT_PNG_LEVEL, OPT_HELP_MAN, OPT_SKIP_EXISTING, OPT_FILES_FROM, OPT_JSONL
};

/* The one option table: getopt's tables, --help and --help-man (the manual page) are made from it,
 * and tests/docs.sh checks README.md against what --help prints. `help` is one paragraph, wrapped
 * when printed; a name of NULL with short 0 is the lone "-" (file names on stdin). */
typedef struct cli_opt {
    const char *name; /* long name, without "--" */
    int short_name;   /* or 0 */
    int id;           /* what getopt_long returns */
    const char *arg;  /* the value's name; NULL: takes none */
    const char *help;
} cli_opt;

static const cli_opt options[] = {
    {"headless", 0, OPT_HEADLESS, NULL, "batch mode: process INPUT files and directories"},
    {"output", 'o', 'o', "PATH", "output directory (or file, for a single input)"},
    {"ops", 0, OPT_OPS, "LIST", "operations; empty: convert formats only"},
    {"format", 0, OPT_FORMAT, "FMT", "png, jpg, webp, tiff, bmp, tga or pnm (default: the input's)"},
    {"quality", 0, OPT_QUALITY, "N", "JPEG and WebP quality " TSIO_QUALITY_TEXT},
    {"lossless", 0, OPT_LOSSLESS, NULL, "WebP: lossless (--quality is then ignored)"},
    {"png-level", 0, OPT_PNG_LEVEL, "N", "PNG compression 0 (stored) .. 9 (smallest); default 1, "
                                         "the fastest, no larger than OpenCV's default"},
    {"no-auto-orient", 0, OPT_NO_ORIENT, NULL, "keep pixels as stored (default: turn upright by "
                                               "EXIF)"},
    {"strip", 0, OPT_STRIP, NULL, "write no metadata (default: ICC profile and EXIF kept)"},
    {"force", 0, OPT_FORCE, NULL, "overwrite existing outputs (never inputs)"},
    {"skip-existing", 0, OPT_SKIP_EXISTING, NULL, "leave inputs whose output exists (outputs are "
                                                  "renamed into place: one that exists is "
                                                  "whole): re-running an interrupted batch "
                                                  "finishes it"},
    {"recursive", 'r', 'r', NULL, "descend into subdirectories of DIR inputs"},
    {"jobs", 'j', 'j', "N", "threads for decoding and encoding (default: CPUs, max 64)"},
    {"backend", 0, OPT_BACKEND, "B", "auto (default), gpu or cpu"},
    {"variant", 0, OPT_VARIANT, "F=NAME", "variant of a family (conv, geom, hist) or op, e.g. "
                                          "conv=tiled"},
    {"report", 0, OPT_REPORT, "FILE.json", "per image and op: variant, backend, device, time"},
    {"timings", 0, OPT_TIMINGS, NULL, "print each image's stage and per-op kernel times"},
    {"shard", 0, OPT_SHARD, "K/N", "process shard K of N (K = 0..N-1) of the inputs: a stable "
                                   "split by a hash of each path; 'slurm' reads K and N from "
                                   "SLURM_ARRAY_TASK_ID/_MIN/_STEP and SLURM_ARRAY_TASK_COUNT"},
    {"devices", 0, OPT_DEVICES, "all|0,1,..", "GPUs the batch deals images to (default: all "
                                              "usable)"},
    {"files-from", 0, OPT_FILES_FROM, "FILE|-", "batch: read the input paths from FILE (- for "
                                                "stdin) as they come, one a line, converting "
                                                "while reading until the end of input; a relative "
                                                "path's output mirrors it under -o DIR; implies "
                                                "--headless, takes no INPUT"},
    {"null", '0', '0', NULL, "--files-from's paths are NUL-separated (find -print0)"},
    {"jsonl", 0, OPT_JSONL, NULL, "batch: one JSON line per image on stdout as it finishes, in "
                                  "input order: input, output, status (ok, error or "
                                  "skipped), error, ms, device"},
    {"max-pixels", 0, OPT_MAXPIX, "N|WxH", "refuse larger images (default 16384x16384)"},
    {"quiet", 'q', 'q', NULL, "only errors"},
    {"keys", 0, OPT_KEYS, "LIST", "viewer: replay keys, one a frame, e.g. \"e,b,Tab,],Ctrl+s\": "
                                  "comma-separated names: a character as typed (e > ] ? B), Tab "
                                  "Shift+Tab Left Right Up Down Home End PageUp PageDown "
                                  "BackSpace Delete Escape Return F1 Space plus minus comma "
                                  "WheelUp WheelDown, and Ctrl+KEY (the keys below)"},
    {"frames", 0, OPT_FRAMES, "N", "viewer: render N frames after the keys, then quit"},
    {"screenshot", 0, OPT_SHOT, "FILE", "viewer: save the window (PNG) after the last frame, "
                                        "then quit (after 1 frame without --frames)"},
    {"fullscreen", 'f', 'f', NULL, "viewer: start fullscreen"},
    {"geometry", 'g', 'g', "WxH", "viewer: the window's initial size (also TESSERA_GEOMETRY)"},
    {"slideshow", 'S', 'S', "SEC", "viewer: next image every SEC seconds (0.1..86400; the S key "
                                   "toggles)"},
    {"thumbnails", 't', 't', NULL, "viewer: open on a grid of thumbnails (Enter opens one and "
                                   "goes back; made on the GPU when there is one, cached in "
                                   "$XDG_CACHE_HOME/tessera)"},
    {"hud", 0, OPT_HUD, "off|line|full", "viewer: at start no HUD, a status line or the full "
                                         "panel (default: the line, the panel while a chain is "
                                         "on and in --demo; i cycles)"},
    {"demo", 0, OPT_DEMO, NULL, "viewer: step each family through its variants (the shared-"
                                "memory ladder) on the image, with each rung's time and speedup; "
                                "ends with --screenshot FILE when given"},
    {NULL, 0, 0, NULL, "viewer: read file names from stdin, one a line"},
    {"list", 0, OPT_LIST, NULL, "list operations and variants"},
    {"help", 'h', 'h', NULL, "this text"},
    {"help-man", 0, OPT_HELP_MAN, NULL, "this text as a manual page (roff, for man -l)"},
    {"version", 0, OPT_VERSION, NULL, "the version"},
};
#define N_OPTIONS (sizeof options / sizeof options[0])

/* "-o, --output PATH", "--ops LIST", "-" */
static void opt_label(const cli_opt *c, char *buf, size_t len)
{
    char s[8] = "";
    if (c->short_name)
        snprintf(s, sizeof s, "-%c%s", c->short_name, c->name ? ", " : "");
    else if (!c->name)
        snprintf(s, sizeof s, "-");
    snprintf(buf, len, "%s%s%s%s%s", s, c->name ? "--" : "", c->name ? c->name : "",
             c->arg ? " " : "", c->arg ? c->arg : "");
}

/* Prints text wrapped at 79 columns, the first line after `col` columns already used, the
 * others indented by `indent`. */
static void print_wrapped(const char *text, int col, int indent)
{
    const char *p = text;
    while (*p) {
        size_t n = strcspn(p, " ");
        if (p > text && col + 1 + (int)n > 79) {
            printf("\n%*s", indent, "");
            col = indent;
        } else if (p > text) {
            putchar(' ');
            col++;
        }
        printf("%.*s", (int)n, p);
        col += (int)n;
        p += n;
        while (*p == ' ')
            p++;
    }
    putchar('\n');
}

static void print_keys(void)
{
    char keys[128];
    const char *what;
    for (int i = 0; vw_help_line(i, keys, sizeof keys, &what); i++) {
        printf("  %-22s", keys);
        print_wrapped(what, 24, 24);
    }
}

void cli_usage(void)
{
    printf("Usage: tessera [options] [IMAGE|DIR|-]...        view images (SDL2 window)\n"
           "       tessera --headless -o DIR|FILE [options] INPUT...   batch conversion\n"
           "       tessera --list                                  operations and variants\n"
           "\n"
           "Operations (--ops, a comma-separated chain applied in order):\n");
    char ops[2048]; /* the grammar, from the op table */
    ts_op_usage(ops, sizeof ops);
    fputs(ops, stdout);
    printf("\nOptions:\n");
    for (size_t i = 0; i < N_OPTIONS; i++) {
        char label[64];
        opt_label(&options[i], label, sizeof label);
        if (strlen(label) > 21) /* a long label: the text on the next line */
            printf("  %s\n%24s", label, "");
        else
            printf("  %-22s", label);
        print_wrapped(options[i].help, 24, 24);
    }
    printf("\nViewer keys (? in the viewer lists them too):\n");
    print_keys();
    printf("\nExit status: 0 ok, 1 some file failed, 2 usage error.\n");
}

/* Text for roff: backslashes and minus signs escaped, no line starting with a control character. */
static void roff(const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", stdout);
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", stdout);
        else if (*s == '-')
            fputs("\\-", stdout);
        else
            putchar(*s);
    }
}

void cli_man(void)
{
    printf(".TH TESSERA 1 \"\" \"tessera %s\" \"User Commands\"\n"
           ".SH NAME\ntessera \\- image viewer and batch converter with GPU operations\n"
           ".SH SYNOPSIS\n"
           ".B tessera\n[\\fIoptions\\fR] [\\fIIMAGE\\fR|\\fIDIR\\fR|\\fB\\-\\fR]...\n.br\n"
           ".B tessera \\-\\-headless \\-o\n\\fIDIR\\fR|\\fIFILE\\fR [\\fIoptions\\fR] "
           "\\fIINPUT\\fR...\n.br\n.B tessera \\-\\-list\n"
           ".SH DESCRIPTION\n"
           "Without \\fB\\-\\-headless\\fR, tessera opens the images in an SDL2 window (no "
           "arguments: the bundled assets). With it, tessera converts files and directories in "
           "batch, applying the chain of \\fB\\-\\-ops\\fR on the GPU when there is one, else on "
           "the CPU.\n"
           ".SH OPERATIONS\n.nf\n", APP_VERSION);
    char ops[2048];
    ts_op_usage(ops, sizeof ops);
    for (char *line = strtok(ops, "\n"); line; line = strtok(NULL, "\n")) {
        roff(line);
        putchar('\n');
    }
    printf(".fi\n.SH OPTIONS\n");
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const cli_opt *c = &options[i];
        printf(".TP\n");
        if (c->short_name)
            printf("\\fB\\-%c\\fR%s", c->short_name, c->name ? ", " : "");
        else if (!c->name)
            printf("\\fB\\-\\fR");
        if (c->name) {
            printf("\\fB\\-\\-");
            roff(c->name);
            printf("\\fR");
        }
        if (c->arg) {
            printf(" \\fI");
            roff(c->arg);
            printf("\\fR");
        }
        putchar('\n');
        roff(c->help);
        putchar('\n');
    }
    printf(".SH KEYS\nIn the viewer:\n");
    char keys[128];
    const char *what;
    for (int i = 0; vw_help_line(i, keys, sizeof keys, &what); i++) {
        printf(".TP\n\\fB");
        roff(keys);
        printf("\\fR\n");
        roff(what);
        putchar('\n');
    }
    printf(".SH EXIT STATUS\n0 all written, 1 some file failed, 2 usage error.\n"
           ".SH SEE ALSO\nThe README.md and docs/ of the source tree.\n");
}

static int usage_error(const char *fmt, const char *a, const char *b)
{
    /* sized from the arguments: a long one keeps the reason that follows it */
    size_t n = strlen(fmt) + strlen(a) + strlen(b) + 1;
    char *msg = xmalloc(n);
    snprintf(msg, n, fmt, a, b);
    app_warn("%s (see tessera --help)", msg);
    free(msg);
    return 2;
}

static int parse_max_pixels(const char *s, uint64_t *out)
{
    long w, h;
    const char *x = strchr(s, 'x');
    if (x) {
        char a[32];
        size_t n = (size_t)(x - s);
        if (n == 0 || n >= sizeof a)
            return -1;
        memcpy(a, s, n);
        a[n] = '\0';
        if (parse_long(a, 1, TS_MAX_DIM, &w) || parse_long(x + 1, 1, TS_MAX_DIM, &h))
            return -1;
        *out = (uint64_t)w * (uint64_t)h;
        return 0;
    }
    if (parse_long(s, 1, (long)1 << 40, &w))
        return -1;
    *out = (uint64_t)w;
    return 0;
}


/* A Slurm array variable as a number; -1 when unset or not a number. */
static long slurm_env(const char *name, long fallback)
{
    const char *s = getenv(name);
    long v;
    if (!s)
        return fallback;
    return parse_long(s, 0, 100000000, &v) ? -1 : v;
}

/* --shard K/N with 0 <= K < N, or "slurm": K = (TASK_ID - TASK_MIN) / TASK_STEP, N = TASK_COUNT,
 * so arrays numbered from 1 (--array=1-8) or with a step work as they are. */
static int parse_shard(const char *arg, app_options *o)
{
    long k, n;
    if (strcmp(arg, "slurm") == 0) {
        long id = slurm_env("SLURM_ARRAY_TASK_ID", -1), lo = slurm_env("SLURM_ARRAY_TASK_MIN", 0);
        long step = slurm_env("SLURM_ARRAY_TASK_STEP", 1);
        n = slurm_env("SLURM_ARRAY_TASK_COUNT", -1);
        if (id < 0 || lo < 0 || step < 1 || n < 1 || id < lo || (id - lo) % step)
            return usage_error("--shard slurm: SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT "
                               "are not set (or not numbers)%s%s", "", "");
        k = (id - lo) / step;
    } else {
        const char *slash = strchr(arg, '/');
        char a[32];
        if (!slash || (size_t)(slash - arg) >= sizeof a)
            return usage_error("--shard '%s': expected K/N, e.g. 0/4 (K counts from 0)%s", arg, "");
        memcpy(a, arg, (size_t)(slash - arg));
        a[slash - arg] = '\0';
        if (parse_long(a, 0, 1000000, &k) || parse_long(slash + 1, 1, 1000000, &n))
            return usage_error("--shard '%s': expected K/N, e.g. 0/4 (K counts from 0)%s", arg, "");
    }
    if (k >= n)
        return usage_error("--shard '%s': K must be 0..N-1 (shards count from 0; for a Slurm array "
                           "numbered from 1 use --shard slurm)%s", arg, "");
    o->shard_k = (int)k;
    o->shard_n = (int)n;
    return 0;
}

/* --devices all, or a list of distinct device numbers 0..APP_MAX_DEVICES-1. */
static int parse_devices(const char *arg, app_options *o)
{
    o->devices_given = 1;
    o->n_devices = 0;
    if (strcmp(arg, "all") == 0)
        return 0;
    const char *s = arg;
    for (;;) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        char num[16];
        long v;
        if (len == 0 || len >= sizeof num)
            return usage_error("--devices '%s': use all or device numbers like 0,1%s", arg, "");
        memcpy(num, s, len);
        num[len] = '\0';
        if (parse_long(num, 0, APP_MAX_DEVICES - 1, &v))
            return usage_error("--devices '%s': use all or device numbers like 0,1%s", arg, "");
        for (int i = 0; i < o->n_devices; i++)
            if (o->devices[i] == v)
                return usage_error("--devices '%s': device %s is listed twice", arg, num);
        o->devices[o->n_devices++] = (int)v;
        if (!end)
            return 0;
        s = end + 1;
    }
}

static int parse_variant(const char *arg, app_options *o)
{
    const char *eq = strchr(arg, '=');
    char fam[32];
    ts_family f;
    if (!eq || eq == arg || !eq[1] || (size_t)(eq - arg) >= sizeof fam)
        return usage_error("--variant '%s': expected FAMILY=NAME, e.g. conv=tiled%s", arg, "");
    memcpy(fam, arg, (size_t)(eq - arg));
    fam[eq - arg] = '\0';
    if (!ts_family_from_name(fam, &f))
        return usage_error("--variant '%s': unknown family '%s' (conv, geom, hist, resize, clahe)",
                           arg, fam);
    if (strcmp(eq + 1, "auto") != 0 && !ts_variant_find(f, eq + 1)) {
        char known[256];
        ts_variant_names(f, known, sizeof known);
        return usage_error("--variant '%s': unknown variant (known: %s)", arg, known);
    }
    if (o->n_variants == APP_MAX_VARIANT_ARGS)
        return usage_error("too many --variant options%s%s", "", "");
    o->variants[o->n_variants].family = f;
    o->variants[o->n_variants].name = eq + 1;
    o->n_variants++;
    return 0;
}

/* The viewer's options: 0 taken, 2 a usage error (said), -1 not one of them. */
static int viewer_option(int c, const char *arg, app_options *o)
{
    long v;
    switch (c) {
    case OPT_KEYS: o->keys = arg; break;
    case OPT_FRAMES:
        if (parse_long(arg, 1, 1000000, &v))
            return usage_error("--frames '%s': must be 1..1000000%s", arg, "");
        o->frames = (int)v;
        break;
    case OPT_SHOT: o->screenshot = arg; break;
    case 'f': o->fullscreen = 1; break;
    case 'g': {
        int gw, gh;
        char end;
        if (sscanf(arg, "%dx%d%c", &gw, &gh, &end) != 2 || gw < 64 || gh < 64 || gw > 16384 ||
            gh > 16384)
            return usage_error("--geometry '%s': WxH, each 64..16384%s", arg, "");
        o->geometry = arg;
        break;
    }
    case 'S': {
        char *end;
        double sec = strtod(arg, &end);
        if (end == arg || *end || !(sec >= 0.1 && sec <= 86400))
            return usage_error("--slideshow '%s': seconds, 0.1..86400%s", arg, "");
        o->slideshow_ms = (int)(sec * 1000 + 0.5);
        break;
    }
    case OPT_HUD:
        if (strcmp(arg, "off") == 0)
            o->hud = 0;
        else if (strcmp(arg, "line") == 0)
            o->hud = 1;
        else if (strcmp(arg, "full") == 0)
            o->hud = 2;
        else
            return usage_error("--hud '%s': use off, line or full%s", arg, "");
        break;
    case OPT_DEMO: o->demo = 1; break;
    case 't': o->thumbs = 1; break;
    default:
        return -1;
    }
    return 0;
}

int cli_parse(int argc, char **argv, app_options *o)
{
    /* getopt's tables, from the option table */
    struct option longs[N_OPTIONS + 1];
    char shorts[2 * N_OPTIONS + 2] = ":";
    size_t nl = 0, ns = 1;
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const cli_opt *c = &options[i];
        if (c->name)
            longs[nl++] = (struct option){c->name, c->arg ? required_argument : no_argument, 0,
                                          c->id};
        if (c->short_name) {
            shorts[ns++] = (char)c->short_name;
            if (c->arg)
                shorts[ns++] = ':';
        }
    }
    longs[nl] = (struct option){0, 0, 0, 0};
    shorts[ns] = '\0';
    long v;
    memset(o, 0, sizeof *o);
    o->ops = "";
    o->jobs = cpu_count();
    o->max_pixels = TS_DEFAULT_MAX_PIXELS;
    o->hud = -1;
    opterr = 0;
    optind = 1;
    for (;;) {
        int longi = 0;
        int c = getopt_long(argc, argv, shorts, longs, &longi);
        if (c == -1)
            break;
        const char *arg = optarg;
        int taken = viewer_option(c, arg, o);
        if (taken >= 0) {
            if (taken)
                return taken;
            continue;
        }
        switch (c) {
        case OPT_HEADLESS: o->headless = 1; break;
        case 'o': o->output = arg; break;
        case OPT_OPS: o->ops = arg; break;
        case OPT_FORMAT:
            o->format = tsio_format_from_name(arg);
            if (o->format == TSIO_UNKNOWN)
                return usage_error("--format '%s': use png, jpg, webp, tiff, bmp, tga or pnm%s", arg, "");
            break;
        case OPT_QUALITY:
            if (parse_long(arg, TSIO_QUALITY_MIN, TSIO_QUALITY_MAX, &v)) {
                char range[32];
                snprintf(range, sizeof range, "%d..%d", TSIO_QUALITY_MIN, TSIO_QUALITY_MAX);
                return usage_error("--quality '%s': must be %s", arg, range);
            }
            o->quality = (int)v;
            break;
        case OPT_FORCE: o->force = 1; break;
        case OPT_SKIP_EXISTING: o->skip_existing = 1; break;
        case 'r': o->recursive = 1; break;
        case 'j':
            if (parse_long(arg, 1, 64, &v))
                return usage_error("--jobs '%s': must be 1..64%s", arg, "");
            o->jobs = (int)v;
            break;
        case OPT_BACKEND:
            if (strcmp(arg, "auto") == 0)
                o->backend = TS_BACKEND_AUTO;
            else if (strcmp(arg, "gpu") == 0)
                o->backend = TS_BACKEND_GPU;
            else if (strcmp(arg, "cpu") == 0)
                o->backend = TS_BACKEND_CPU;
            else
                return usage_error("--backend '%s': use auto, gpu or cpu%s", arg, "");
            break;
        case OPT_VARIANT:
            if (parse_variant(arg, o))
                return 2;
            break;
        case OPT_REPORT: o->report = arg; break;
        case OPT_MAXPIX:
            if (parse_max_pixels(arg, &o->max_pixels))
                return usage_error("--max-pixels '%s': a pixel count or WxH%s", arg, "");
            break;
        case 'q': o->quiet = 1; break;
        case OPT_LIST: o->list = 1; break;
        case 'h': o->help = 1; break;
        case OPT_HELP_MAN: o->help = 2; break;
        case OPT_VERSION: o->version = 1; break;
        case OPT_TIMINGS: o->timings = 1; break;
        case OPT_SHARD:
            if (parse_shard(arg, o))
                return 2;
            break;
        case OPT_DEVICES:
            if (parse_devices(arg, o))
                return 2;
            break;
        case OPT_NO_ORIENT: o->no_auto_orient = 1; break;
        case OPT_STRIP: o->strip = 1; break;
        case OPT_LOSSLESS: o->lossless = 1; break;
        case OPT_PNG_LEVEL:
            if (parse_long(arg, 0, 9, &v))
                return usage_error("--png-level '%s': must be 0..9%s", arg, "");
            o->png_level = v == 0 ? TSIO_PNG_LEVEL_STORE : (int)v;
            break;
        case OPT_FILES_FROM: o->files_from = arg; break;
        case '0': o->files_nul = 1; break;
        case OPT_JSONL: o->jsonl = 1; break;
        case ':':
            return usage_error("option '%s' needs a value%s", argv[optind - 1], "");
        default:
            return usage_error("unknown option '%s'%s", argv[optind - 1], "");
        }
    }
    o->inputs = argv + optind;
    o->n_inputs = argc - optind;
    if (o->files_nul && !o->files_from)
        return usage_error("-0 says how --files-from's paths are separated: give --files-from%s%s",
                           "", "");
    if (o->files_from) {
        o->headless = 1; /* --files-from is the batch's */
        if (o->n_inputs)
            return usage_error("--files-from reads the inputs from '%s': no INPUT arguments "
                               "(here '%s')", o->files_from, o->inputs[0]);
    }
    if (o->jsonl && !o->headless)
        return usage_error("--jsonl is the batch's: use it with --headless or --files-from%s%s",
                           "", "");
    if (o->jsonl && o->timings)
        return usage_error("--timings and --jsonl both write to stdout: use --report FILE.json "
                           "for the timings%s%s", "", "");
    if (o->headless && !o->list && !o->help && !o->version) {
        if (o->n_inputs == 0 && !o->files_from)
            return usage_error("--headless needs at least one INPUT%s%s", "", "");
        if (!o->output)
            return usage_error("--headless needs -o DIR (or -o FILE for one input)%s%s", "", "");
        if (o->force && o->skip_existing)
            return usage_error("--force and --skip-existing: choose one%s%s", "", "");
    }
    return 0;
}

int cli_list(const app_options *o)
{
    ts_device dev;
    int gpu = o->backend != TS_BACKEND_CPU && ts_gpu_open(&dev) == TS_OK;
    if (gpu)
        printf("backend: GPU %s (compute capability %d.%d, %d SMs)\n", dev.name, dev.cc / 10,
               dev.cc % 10, dev.sms);
    else
        printf("backend: CPU (%s)\n", o->backend == TS_BACKEND_CPU ? "--backend cpu"
                                                                   : ts_error_detail());
    for (int f = 0; f < TS_FAM_COUNT; f++) {
        char ops[512];
        ts_op_names(f, ops, sizeof ops);
        const ts_family_info *fi = ts_family_info_of((ts_family)f);
        printf("\n%s: %s%s\n", fi->name, ops, fi->note);
        for (size_t i = 0; i < ts_variant_count(); i++) {
            const ts_variant *v = ts_variant_at(i);
            if (v->family != (ts_family)f)
                continue;
            char need[16];
            if (ts_variant_is_gpu(v))
                snprintf(need, sizeof need, "sm_%d", v->min_cc);
            else
                snprintf(need, sizeof need, "host");
            const char *here = ts_variant_is_gpu(v)
                                   ? (gpu && ts_variant_runnable(v, &dev) ? "yes" : "no")
                                   : "yes";
            printf("  %-8s %-6s runs here: %-3s  %s\n", v->name, need, here, v->why);
        }
    }
    return 0;
}
