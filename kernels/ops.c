/* ops.c - the op table, and everything derived from it: the chain grammar (ts_op_parse), the
 * "known:" list, the synopses of --help and --list, family names, output shapes, and the row of
 * each op kind that the reference (ref.c) and the pipeline consult.
 *
 * Grammar of a chain: items separated by commas, blanks around items ignored; an item is NAME or
 * NAME:ARG[:ARG...], with the names and arguments of the rows of `rows` below. Adding an op is one
 * row here with its build hook (the conv rows' are in filter.c), its reference (ref.c), its
 * kernels and its tests; see docs/HACKING.md.
 */
#include "op_table.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ts_status op_error(char *err, size_t errlen, const char *item, const char *what)
{
    if (err && errlen)
        snprintf(err, errlen, "'%s': %s", item, what);
    return ts_fail(TS_ERR_INVALID, "'%s': %s", item, what);
}

/* Whole-string integer in [lo, hi]; 0 on success. */
static int parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    if (!*s || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Whole-string finite float; 0 on success. */
int ops_parse_float(const char *s, double *out)
{
    char *end;
    if (!*s || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* A filter size: three messages, so a user learns which rule the value broke. */
static int parse_k(const char *s, const char *item, long *k, char *err, size_t errlen)
{
    long v;
    if (parse_int(s, -1000000, 1000000, &v) != 0) {
        op_error(err, errlen, item, "K must be an odd integer from 1 to 31");
        return -1;
    }
    if (v < 1 || v > TS_MAX_K) {
        op_error(err, errlen, item, "K must be from 1 to 31");
        return -1;
    }
    if (v % 2 == 0) {
        op_error(err, errlen, item, "K must be odd");
        return -1;
    }
    *k = v;
    return 0;
}

/* ---------------------------------------------------------------- build hooks and shape rules */

static ts_status build_rotate(const op_row *row, const op_values *v, const char *item, ts_op *op,
                              char *err, size_t errlen)
{
    long deg = v->i[0] == -90 ? 270 : v->i[0]; /* -90: counter-clockwise, an alias */
    if (deg != 90 && deg != 180 && deg != 270)
        return op_error(err, errlen, item, row->usage);
    op->geom = deg == 90 ? TS_GEOM_ROT90 : deg == 180 ? TS_GEOM_ROT180 : TS_GEOM_ROT270;
    snprintf(op->text, sizeof op->text, "rotate:%ld", deg);
    return TS_OK;
}

/* transpose, transverse, flip, flop: the row's param is the ts_geom. */
static ts_status build_geom(const op_row *row, const op_values *v, const char *item, ts_op *op,
                            char *err, size_t errlen)
{
    op->geom = (ts_geom)row->param;
    snprintf(op->text, sizeof op->text, "%.20s", row->info.name);
    return TS_OK;
}

static ts_status build_equalize(const op_row *row, const op_values *v, const char *item, ts_op *op,
                                char *err, size_t errlen)
{
    op->hist_mode = v->i[0] == 1 ? TS_HIST_CHANNELS : TS_HIST_LUMA; /* choices "luma|rgb" */
    snprintf(op->text, sizeof op->text, "%s",
             op->hist_mode == TS_HIST_CHANNELS ? "equalize:rgb" : "equalize");
    return TS_OK;
}

static ts_status geom_shape(const ts_op *op, int w, int h, int *ow, int *oh)
{
    ts_geom_size(op->geom, w, h, ow, oh);
    return TS_OK;
}

/* ---------------------------------------------------------------- the table */

#define K_ARG(DEF)                                                                                 \
    {.name = "K", .kind = ARG_KSIZE, .def = (DEF)}
#define CONV_OP(NAME, HELP)                                                                        \
    .info = {.name = (NAME), .family = TS_FAM_CONV, .help = (HELP)}, .kind = TS_OP_CONV,          \
    .ref = ref_conv_into
#define GEOM_OP(NAME, HELP)                                                                        \
    .info = {.name = (NAME), .family = TS_FAM_GEOM, .help = (HELP)}, .kind = TS_OP_GEOM,          \
    .ref = ref_geom_into, .shape = geom_shape
#define RESIZE_OP(NAME, HELP)                                                                      \
    .info = {.name = (NAME), .family = TS_FAM_RESIZE, .help = (HELP)}, .kind = TS_OP_RESIZE,      \
    .build = op_build_resize, .ref = ref_resize_into, .shape = op_resize_shape
/* The resize rows' filter: text read by the hook, which also takes aliases (bilinear, lanczos) */
#define FILTER_ARG {.name = "FILTER", .kind = ARG_TEXT, .choices = "box|triangle|cubic|lanczos3|interp"}

/* In help order. Every row of one kind has the same family, reference and shape rule (a test
 * checks it): the pipeline and the reference look an op up by its kind. */
static const op_row rows[] = {
    {CONV_OP("box", "mean of a K x K square (exact)"), .nargs = 1, .args = {K_ARG(3)},
     .build = op_build_box},
    {CONV_OP("gauss", "Gaussian blur, K x K, SIGMA by default as OpenCV's for K"), .nargs = 2,
     .args = {K_ARG(5),
              {.name = "SIGMA", .kind = ARG_FLOAT, .lo = 0, .lo_open = 1, .hi = 1000,
               .bad = "SIGMA must be a number in (0, 1000]"}},
     .build = op_build_gauss},
    {CONV_OP("sharpen", "3x3 Laplacian sharpening of strength A (default 1)"), .nargs = 1,
     .args = {{.name = "A", .kind = ARG_FLOAT, .lo = -1000, .hi = 1000, .def = 1,
               .bad = "A must be a number in [-1000, 1000]"}},
     .build = op_build_sharpen},
    {CONV_OP("emboss", "3x3 emboss"), .build = op_build_emboss},
    {CONV_OP("edge", "Sobel gradient magnitude"), .build = op_build_edge},
    {CONV_OP("kernel", "the K x K weights of a file (see README), e.g. kernel:blur.txt"),
     .nargs = 1, .required = 1, .args = {{.name = "FILE", .kind = ARG_TEXT, .rest = 1}},
     .usage = "needs a file: kernel:FILE", .build = op_build_kernel},
    {GEOM_OP("rotate", "rotate clockwise by 90, 180 or 270 degrees"), .nargs = 1, .required = 1,
     .args = {{.name = "DEG", .kind = ARG_INT, .lo = -1000, .hi = 1000, .choices = "90|180|270",
               .bad = "rotate takes 90, 180 or 270 (clockwise)"}},
     .usage = "rotate takes 90, 180 or 270 (clockwise)", .build = build_rotate},
    {GEOM_OP("transpose", "mirror about the main diagonal"), .param = TS_GEOM_TRANSPOSE,
     .build = build_geom},
    {GEOM_OP("transverse", "mirror about the other diagonal"), .param = TS_GEOM_TRANSVERSE,
     .build = build_geom},
    {GEOM_OP("flip", "mirror top to bottom"), .param = TS_GEOM_FLIP, .build = build_geom},
    {GEOM_OP("flop", "mirror left to right"), .param = TS_GEOM_FLOP, .build = build_geom},
    {.info = {.name = "equalize", .family = TS_FAM_HIST,
              .help = "histogram equalization of the luma (default) or of each colour channel"},
     .kind = TS_OP_EQUALIZE, .nargs = 1,
     .args = {{.name = "MODE", .kind = ARG_WORD, .choices = "luma|rgb",
               .bad = "equalize takes luma or rgb"}},
     .build = build_equalize, .ref = ref_equalize_into},
    /* the geometry is free text (640x480, x480, 50%, 10x10+5-3), read by the hook in ref_resize.c */
    {RESIZE_OP("resize", "resample to WxH, to width W or height xH keeping the aspect ratio, or "
                         "to N%; Pillow's filters, lanczos3 by default"),
     .nargs = 2, .required = 1,
     .args = {{.name = "GEOMETRY", .kind = ARG_TEXT, .choices = "WxH|W|xH|N%"}, FILTER_ARG},
     .usage = "resize takes GEOMETRY[:FILTER]"},
    {RESIZE_OP("thumbnail", "fit within N x N keeping the aspect ratio, never enlarging"),
     .nargs = 2, .required = 1, .args = {{.name = "N", .kind = ARG_TEXT}, FILTER_ARG},
     .usage = "thumbnail takes N[:FILTER]"},
    {RESIZE_OP("crop", "the W x H box at X, Y (signed offsets), clamped to the image; an error "
                       "when nothing is left"),
     .nargs = 1, .required = 1, .args = {{.name = "WxH+X+Y", .kind = ARG_TEXT}},
     .usage = "crop takes WxH+X+Y (sizes 1 to 1048576, offsets signed)"},
    {.info = {.name = "clahe", .family = TS_FAM_CLAHE,
              .help = "contrast-limited adaptive equalization (OpenCV's CLAHE) of the luma, "
                      "clip limit CLIP (40; 0: none) on a TXxTY tile grid (8x8)"},
     .kind = TS_OP_CLAHE, .nargs = 2,
     .args = {{.name = "CLIP", .kind = ARG_FLOAT, .lo = 0, .hi = 1000, .def = 40,
               .bad = "CLIP must be a number in [0, 1000]"},
              {.name = "TXxTY", .kind = ARG_TEXT}},
     .build = op_build_clahe, .ref = ref_clahe_into},
    /* not in the grammar: the histogram alone, for the tests and the benchmark */
    {.info = {.name = "hist", .family = TS_FAM_HIST, .help = "histogram only"},
     .kind = TS_OP_HIST, .hidden = 1},
};
#define N_ROWS ((int)(sizeof rows / sizeof rows[0]))

#undef K_ARG
#undef CONV_OP
#undef GEOM_OP
#undef RESIZE_OP
#undef FILTER_ARG

/* Visible rows come first, so index i < ts_op_count() is the i-th op of the grammar. */
int ts_op_count(void)
{
    int n = 0;
    while (n < N_ROWS && !rows[n].hidden)
        n++;
    return n;
}

const ts_op_info *ts_op_info_at(int i)
{
    return i >= 0 && i < ts_op_count() ? &rows[i].info : NULL;
}

int ts_op_find(const char *name)
{
    for (int i = 0; i < ts_op_count(); i++)
        if (strcmp(rows[i].info.name, name) == 0)
            return i;
    return -1;
}

int ts_op_index(const ts_op *op)
{
    char name[sizeof op->text];
    size_t n = strcspn(op->text, ":");
    memcpy(name, op->text, n);
    name[n] = '\0';
    int i = ts_op_find(name);
    return i >= 0 && rows[i].kind == op->kind ? i : -1;
}

const op_row *op_row_of_kind(ts_op_kind k)
{
    for (int i = 0; i < N_ROWS; i++)
        if (rows[i].kind == k)
            return &rows[i];
    return NULL;
}

ts_status ts_op_out_size(const ts_op *op, int width, int height, int *out_width,
                         int *out_height)
{
    const op_row *row = op_row_of_kind(op->kind);
    *out_width = width;
    *out_height = height;
    return row && row->shape ? row->shape(op, width, height, out_width, out_height) : TS_OK;
}

/* The rules the rest of this file relies on; "" when the table keeps them (tests/test_ops.c). */
const char *op_table_check(void)
{
    for (int i = 0; i < N_ROWS; i++) {
        const op_row *r = &rows[i], *first = op_row_of_kind(r->kind);
        if (!r->info.name || !*r->info.name || strchr(r->info.name, ':') || !r->info.help)
            return r->info.name ? r->info.name : "a row without a name";
        if (i > 0 && rows[i - 1].hidden && !r->hidden)
            return "visible rows must come before hidden ones";
        if ((unsigned)r->info.family >= TS_FAM_COUNT || first->info.family != r->info.family ||
            first->ref != r->ref || first->shape != r->shape)
            return "rows of one kind must share family, reference and shape rule";
        if (r->nargs > OP_MAX_ARGS || r->required > r->nargs)
            return "more arguments than OP_MAX_ARGS, or more required than declared";
        for (int j = 0; j < i; j++)
            if (strcmp(rows[j].info.name, r->info.name) == 0)
                return "two rows of one name";
        for (int a = 0; a < r->nargs; a++) {
            const op_arg *g = &r->args[a];
            if (!g->name || (g->kind != ARG_KSIZE && g->kind != ARG_TEXT && !g->bad) ||
                (g->kind == ARG_WORD && !g->choices) || (g->rest && (a || r->nargs != 1)))
                return "an argument lacks a name, an error text or choices, or a rest is not alone";
        }
    }
    return "";
}

/* ---------------------------------------------------------------- text derived from the table */

/* Appends printf-style text to buf (always terminated); returns the length it would have. */
static size_t append(char *buf, size_t len, size_t at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static size_t append(char *buf, size_t len, size_t at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(at < len ? buf + at : NULL, at < len ? len - at : 0, fmt, ap);
    va_end(ap);
    return at + (n > 0 ? (size_t)n : 0);
}

size_t ts_op_synopsis(int i, char *buf, size_t len)
{
    const op_row *row = i >= 0 && i < ts_op_count() ? &rows[i] : NULL;
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    if (!row)
        return 0;
    at = append(buf, len, at, "%s", row->info.name);
    for (int a = 0; a < row->nargs; a++) {
        const op_arg *g = &row->args[a];
        at = append(buf, len, at, "%s:%s", a >= row->required ? "[" : "",
                    g->choices ? g->choices : g->name);
    }
    for (int a = row->required; a < row->nargs; a++)
        at = append(buf, len, at, "]");
    return at;
}

size_t ts_op_names(int family, char *buf, size_t len)
{
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    for (int i = 0; i < ts_op_count(); i++)
        if (family < 0 || rows[i].info.family == (ts_family)family)
            at = append(buf, len, at, "%s%s", at ? " " : "", rows[i].info.name);
    return at;
}

size_t ts_op_usage(char *buf, size_t len)
{
    char syn[128];
    size_t at = 0, line = 0;
    if (len)
        buf[0] = '\0';
    for (int i = 0; i < ts_op_count(); i++) {
        size_t n = ts_op_synopsis(i, syn, sizeof syn);
        if (line && line + 2 + n > 79) { /* wrap before column 80 */
            at = append(buf, len, at, "\n");
            line = 0;
        }
        at = append(buf, len, at, "  %s", syn);
        line += 2 + n;
    }
    /* the defaults of K, from the rows that take one */
    at = append(buf, len, at, "\n  K is odd, 1..%d (", TS_MAX_K);
    int first = 1;
    for (int i = 0; i < ts_op_count(); i++)
        for (int a = 0; a < rows[i].nargs; a++)
            if (rows[i].args[a].kind == ARG_KSIZE) {
                at = append(buf, len, at, "%s%s %d", first ? "" : ", ", rows[i].info.name,
                            (int)rows[i].args[a].def);
                first = 0;
            }
    return append(buf, len, at, " by default).\n");
}

/* ---------------------------------------------------------------- the grammar */

static const op_row *find_row(const char *name)
{
    int i = ts_op_find(name);
    return i >= 0 ? &rows[i] : NULL;
}

/* Index of `word` in "a|b|c", or -1. */
static int choice_index(const char *choices, const char *word)
{
    size_t n = strlen(word);
    for (int i = 0; *choices; i++) {
        size_t m = strcspn(choices, "|");
        if (m == n && strncmp(choices, word, n) == 0)
            return i;
        choices += m + (choices[m] == '|');
    }
    return -1;
}

/* Parses the given arguments by their kinds into v; the others get their defaults. */
static ts_status parse_args(const op_row *row, char **arg, int nargs, const char *item,
                            op_values *v, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    v->given = nargs;
    for (int a = 0; a < row->nargs; a++) {
        const op_arg *g = &row->args[a];
        v->i[a] = (long)g->def;
        v->f[a] = g->def;
        if (a >= nargs)
            continue;
        v->s[a] = arg[a];
        int bad = 0;
        switch (g->kind) {
        case ARG_KSIZE:
            if (parse_k(arg[a], item, &v->i[a], err, errlen) != 0)
                return TS_ERR_INVALID;
            break;
        case ARG_INT: bad = parse_int(arg[a], (long)g->lo, (long)g->hi, &v->i[a]) != 0; break;
        case ARG_FLOAT:
            bad = ops_parse_float(arg[a], &v->f[a]) != 0 || v->f[a] < g->lo || v->f[a] > g->hi ||
                  (g->lo_open && v->f[a] == g->lo);
            break;
        case ARG_WORD: bad = (v->i[a] = choice_index(g->choices, arg[a])) < 0; break;
        case ARG_TEXT: break;
        }
        if (bad)
            return op_error(err, errlen, item, g->bad);
    }
    return TS_OK;
}

/* Cuts "name:a:b" into the name (left in item), its row (NULL: unknown) and the arguments; an
 * argument of kind `rest` takes the rest, ':' included (a file name may hold ':'). */
static ts_status split_item(char *item, const char *shown, const op_row **row,
                            char *arg[OP_MAX_ARGS], int *nargs, char *err, size_t errlen)
{
    char *colon = strchr(item, ':');
    if (colon)
        *colon = '\0';
    *row = find_row(item);
    *nargs = 0;
    if (colon && *row && (*row)->nargs && (*row)->args[0].rest) {
        arg[(*nargs)++] = colon + 1;
    } else {
        while (colon) {
            if (*nargs == OP_MAX_ARGS)
                return op_error(err, errlen, shown, "too many ':' arguments");
            arg[(*nargs)++] = colon + 1;
            if ((colon = strchr(colon + 1, ':')) != NULL)
                *colon = '\0';
        }
    }
    for (int i = 0; i < *nargs; i++)
        if (!*arg[i])
            return op_error(err, errlen, shown, "empty argument");
    return TS_OK;
}

ts_status ts_op_parse(const char *item, ts_op *op, char *err, size_t errlen)
{
    return ts_op_parse_with(item, NULL, op, err, errlen);
}

ts_status ts_op_parse_with(const char *item_in, ts_kernel_reader reader, ts_op *op, char *err,
                           size_t errlen)
{
    char item[1024], *arg[OP_MAX_ARGS] = {NULL};
    int nargs = 0;
    memset(op, 0, sizeof *op);
    /* trim blanks */
    while (isspace((unsigned char)*item_in))
        item_in++;
    size_t n = strlen(item_in);
    while (n && isspace((unsigned char)item_in[n - 1]))
        n--;
    if (n == 0)
        return op_error(err, errlen, "", "empty operation");
    if (n >= sizeof item)
        return op_error(err, errlen, "...", "operation text too long");
    memcpy(item, item_in, n);
    item[n] = '\0';
    char shown[sizeof item];
    memcpy(shown, item, n + 1);
    const op_row *row;
    ts_status st = split_item(item, shown, &row, arg, &nargs, err, errlen);
    if (st != TS_OK)
        return st;
    if (!row) {
        char what[512], known[400];
        ts_op_names(-1, known, sizeof known);
        snprintf(what, sizeof what, "unknown operation (known: %s)", known);
        return op_error(err, errlen, shown, what);
    }
    if (nargs > row->nargs || nargs < row->required)
        return op_error(err, errlen, shown,
                        row->usage ? row->usage
                        : row->nargs ? "too many arguments"
                                     : "takes no argument");
    op_values v;
    st = parse_args(row, arg, nargs, shown, &v, err, errlen);
    if (st != TS_OK)
        return st;
    v.reader = reader;
    op->kind = row->kind;
    if (!row->build) {
        snprintf(op->text, sizeof op->text, "%s", row->info.name);
        return TS_OK;
    }
    return row->build(row, &v, shown, op, err, errlen);
}

/* ---------------------------------------------------------------- chains */

ts_status ts_chain_append(ts_chain *chain, const ts_op *op)
{
    if (chain->n >= TS_MAX_CHAIN)
        return ts_fail(TS_ERR_TOO_LARGE, "more than %d operations", TS_MAX_CHAIN);
    ts_op *ops = realloc(chain->ops, (size_t)(chain->n + 1) * sizeof *ops);
    if (!ops)
        return ts_fail(TS_ERR_NOMEM, "out of memory");
    chain->ops = ops;
    chain->ops[chain->n++] = *op;
    return TS_OK;
}

void ts_chain_remove(ts_chain *chain, int index)
{
    if (index < 0 || index >= chain->n)
        return;
    memmove(chain->ops + index, chain->ops + index + 1,
            (size_t)(chain->n - index - 1) * sizeof *chain->ops);
    chain->n--;
}

void ts_chain_free(ts_chain *chain)
{
    free(chain->ops);
    chain->ops = NULL;
    chain->n = 0;
}

ts_status ts_chain_parse(const char *text, ts_chain *chain, char *err, size_t errlen)
{
    return ts_chain_parse_with(text, NULL, chain, err, errlen);
}

ts_status ts_chain_parse_with(const char *text, ts_kernel_reader reader, ts_chain *chain,
                              char *err, size_t errlen)
{
    chain->n = 0;
    chain->ops = NULL;
    if (err && errlen)
        err[0] = '\0';
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (!*p)
        return TS_OK;
    ts_op *op = malloc(sizeof *op);
    if (!op)
        return ts_fail(TS_ERR_NOMEM, "out of memory");
    ts_status st = TS_OK;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[1024];
        if (len >= sizeof item) {
            st = op_error(err, errlen, "...", "operation text too long");
            break;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        st = ts_op_parse_with(item, reader, op, err, errlen);
        if (st == TS_OK)
            st = ts_chain_append(chain, op);
        if (st != TS_OK) {
            if (st == TS_ERR_TOO_LARGE && err && errlen)
                snprintf(err, errlen, "more than %d operations", TS_MAX_CHAIN);
            break;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    free(op);
    if (st != TS_OK)
        ts_chain_free(chain);
    return st;
}


void ts_geom_size(ts_geom g, int width, int height, int *out_width, int *out_height)
{
    int swap = g == TS_GEOM_ROT90 || g == TS_GEOM_ROT270 || g == TS_GEOM_TRANSPOSE ||
               g == TS_GEOM_TRANSVERSE;
    *out_width = swap ? height : width;
    *out_height = swap ? width : height;
}

int ts_hist_count(ts_hist_mode mode, int channels)
{
    return (mode == TS_HIST_LUMA || ts_color_channels(channels) == 1) ? 1 : 3;
}


/* ---------------------------------------------------------------- families */

/* One row per family, in ts_family order: its name, what --list adds after its ops, and the op
 * the viewer's --demo (and the tests of every family) show it with: a blur large enough for
 * shared memory to matter (gauss:7, the largest K every conv rung takes), a rotation, the
 * equalization, a halving resample, CLAHE with OpenCV's defaults. */
static const ts_family_info families[] = {
    [TS_FAM_CONV] = {"conv", "", "gauss:7"},
    [TS_FAM_GEOM] = {"geom", "", "rotate:90"},
    [TS_FAM_HIST] = {"hist", " (histogram)", "equalize"},
    [TS_FAM_RESIZE] = {"resize", "", "resize:50%"},
    [TS_FAM_CLAHE] = {"clahe", " (tile histograms)", "clahe"},
};
_Static_assert(sizeof families / sizeof families[0] == TS_FAM_COUNT,
               "every family needs a row in families[]");

const ts_family_info *ts_family_info_of(ts_family f)
{
    return (unsigned)f < TS_FAM_COUNT ? &families[f] : NULL;
}

const char *ts_family_name(ts_family f)
{
    return (unsigned)f < TS_FAM_COUNT ? families[f].name : "?";
}

ts_family ts_op_family(ts_op_kind k)
{
    const op_row *row = op_row_of_kind(k);
    return row ? row->info.family : TS_FAM_HIST;
}

int ts_family_from_name(const char *name, ts_family *f)
{
    for (int i = 0; i < TS_FAM_COUNT; i++)
        if (strcmp(name, families[i].name) == 0) {
            *f = (ts_family)i;
            return 1;
        }
    const op_row *row = find_row(name);
    if (row)
        *f = row->info.family;
    return row != NULL;
}
