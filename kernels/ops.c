/* ops.c - the operation grammar, filter construction and kernel files.
 *
 * Grammar of a chain: items separated by commas, blanks around items ignored:
 *   box[:K]  gauss[:K[:SIGMA]]  sharpen[:A]  emboss  edge  kernel:FILE
 *   rotate:90|180|270  transpose  transverse  flip  flop  equalize[:luma|rgb]
 *   resize:GEOMETRY[:FILTER]  thumbnail:N[:FILTER]  crop:WxH+X+Y  (ref_resize.c)
 * K is odd, 1..31. Filters are built here once, so every backend gets the same float weights.
 */
#include "tessera.h"
#include "ts_math.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KERNEL_FILE_MAX (1u << 20) /* a kernel file longer than 1 MiB is refused unread */

static ts_status op_error(char *err, size_t errlen, const char *item, const char *what)
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
static int parse_float(const char *s, double *out)
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

static int parse_k(const char *s, const char *item, int *k, char *err, size_t errlen)
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
    *k = (int)v;
    return 0;
}

/* Sets exact integer weights (one output per call) and derives the float weights. */
static void filter_set_int(ts_filter *f, int o, const int32_t *iw)
{
    int taps = f->k * f->k;
    for (int t = 0; t < taps; t++) {
        f->iw[o * taps + t] = iw[t];
        f->w[o * taps + t] = (float)((double)iw[t] / f->divisor);
    }
}

static void filter_box(ts_filter *f, int k)
{
    int32_t iw[TS_MAX_K * TS_MAX_K];
    memset(f, 0, sizeof *f);
    f->k = k;
    f->outputs = 1;
    f->exact = 1;
    f->divisor = k * k;
    f->separable = 1;
    for (int i = 0; i < k * k; i++)
        iw[i] = 1;
    for (int i = 0; i < k; i++)
        f->row[i] = f->col[i] = 1.0f; /* integer factors; the divisor applies to their product */
    filter_set_int(f, 0, iw);
}

static void filter_gauss(ts_filter *f, int k, double sigma)
{
    double g[TS_MAX_K], sum = 0;
    int r = (k - 1) / 2;
    memset(f, 0, sizeof *f);
    f->k = k;
    f->outputs = 1;
    f->separable = 1;
    for (int i = 0; i < k; i++) {
        double x = i - r;
        g[i] = exp(-(x * x) / (2 * sigma * sigma));
        sum += g[i];
    }
    for (int i = 0; i < k; i++) {
        g[i] /= sum;
        f->row[i] = f->col[i] = (float)g[i];
    }
    for (int y = 0; y < k; y++)
        for (int x = 0; x < k; x++)
            f->w[y * k + x] = (float)(g[y] * g[x]);
}

static void filter_3x3(ts_filter *f, int outputs, const int32_t *iw, int magnitude)
{
    memset(f, 0, sizeof *f);
    f->k = 3;
    f->outputs = outputs;
    f->exact = 1;
    f->divisor = 1;
    f->magnitude = magnitude;
    for (int o = 0; o < outputs; o++)
        filter_set_int(f, o, iw + 9 * o);
}

static void filter_sharpen(ts_filter *f, double a)
{
    if (a == floor(a) && fabs(a) <= 1000) {
        int32_t ia = (int32_t)a;
        int32_t iw[9] = {0, -ia, 0, -ia, 1 + 4 * ia, -ia, 0, -ia, 0};
        filter_3x3(f, 1, iw, 0);
        return;
    }
    float fa = (float)a;
    float w[9] = {0, -fa, 0, -fa, 1 + 4 * fa, -fa, 0, -fa, 0};
    memset(f, 0, sizeof *f);
    f->k = 3;
    f->outputs = 1;
    memcpy(f->w, w, sizeof w);
}

/* Keeps a filter exact only while int32 accumulation of 16-bit samples cannot overflow. */
static void filter_check_exact(ts_filter *f)
{
    if (!f->exact)
        return;
    int taps = f->k * f->k;
    for (int o = 0; o < f->outputs; o++) {
        int64_t s = 0;
        for (int t = 0; t < taps; t++)
            s += llabs((long long)f->iw[o * taps + t]);
        if (s > TS_EXACT_WEIGHT_SUM)
            f->exact = 0; /* the float weights are already set */
    }
}

ts_status ts_filter_parse(const char *text, size_t len, ts_filter *f, char *err, size_t errlen)
{
    double v[TS_MAX_K * TS_MAX_K];
    int n = 0, have_div = 0;
    double div = 1;
    size_t i = 0;
    int line = 1;
    memset(f, 0, sizeof *f);
#define KF_FAIL(...)                                                                               \
    do {                                                                                           \
        if (err && errlen)                                                                         \
            snprintf(err, errlen, __VA_ARGS__);                                                    \
        return ts_fail(TS_ERR_FORMAT, __VA_ARGS__);                                                \
    } while (0)
    if (len > KERNEL_FILE_MAX)
        KF_FAIL("kernel file is larger than %u bytes", KERNEL_FILE_MAX);
    while (i < len) {
        char c = text[i];
        if (c == '\n') {
            line++;
            i++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == ',' || c == ';') {
            i++;
            continue;
        }
        if (c == '#') {
            while (i < len && text[i] != '\n')
                i++;
            continue;
        }
        int is_div = 0;
        if (c == '/') {
            is_div = 1;
            i++;
        } else if (len - i >= 7 && strncmp(text + i, "divisor", 7) == 0) {
            is_div = 1;
            i += 7;
            while (i < len && (text[i] == ' ' || text[i] == '\t'))
                i++;
            if (i < len && (text[i] == ':' || text[i] == '='))
                i++;
        }
        while (is_div && i < len && (text[i] == ' ' || text[i] == '\t'))
            i++;
        /* one token: up to the next separator */
        char tok[64];
        size_t tl = 0;
        while (i < len && !strchr(" \t\r\n,;#", text[i])) {
            if (tl + 1 >= sizeof tok)
                KF_FAIL("line %d: number too long", line);
            if (text[i] == '\0')
                KF_FAIL("line %d: NUL byte in kernel file", line);
            tok[tl++] = text[i++];
        }
        tok[tl] = '\0';
        double x;
        if (tl == 0 || parse_float(tok, &x) != 0) {
            if (tl && (strstr(tok, "nan") || strstr(tok, "NAN") || strstr(tok, "inf") ||
                       strstr(tok, "INF") || strstr(tok, "Inf") || strstr(tok, "NaN")))
                KF_FAIL("line %d: '%s' is not a finite number", line, tok);
            KF_FAIL("line %d: '%s' is not a number", line, tl ? tok : (is_div ? "divisor" : "?"));
        }
        if (fabs(x) > 1e9)
            KF_FAIL("line %d: %s is out of range (|w| <= 1e9)", line, tok);
        if (is_div) {
            if (have_div)
                KF_FAIL("line %d: second divisor", line);
            if (x == 0)
                KF_FAIL("line %d: divisor is zero", line);
            have_div = 1;
            div = x;
            continue;
        }
        if (have_div)
            KF_FAIL("line %d: weights after the divisor line", line);
        if (n == TS_MAX_K * TS_MAX_K)
            KF_FAIL("more than %d weights (K is at most %d)", TS_MAX_K * TS_MAX_K, TS_MAX_K);
        v[n++] = x;
    }
    if (n == 0)
        KF_FAIL("no weights in kernel file");
    int k = (int)lround(sqrt((double)n));
    if (k * k != n)
        KF_FAIL("%d weights is not a square K x K", n);
    if (k % 2 == 0)
        KF_FAIL("%d weights make K = %d, which is even (K must be odd)", n, k);
    for (int t = 0; t < n; t++) /* a tiny divisor takes a weight past float (found by fuzzing) */
        if (!(fabs(v[t] / div) <= 1e9))
            KF_FAIL("weight %g / divisor %g is out of range (|w| <= 1e9)", v[t], div);
#undef KF_FAIL
    f->k = k;
    f->outputs = 1;
    int integral = div == floor(div) && fabs(div) <= 1e6;
    for (int t = 0; t < n; t++)
        integral = integral && v[t] == floor(v[t]) && fabs(v[t]) <= TS_EXACT_WEIGHT_SUM;
    if (integral) {
        int32_t iw[TS_MAX_K * TS_MAX_K];
        int sign = div < 0 ? -1 : 1;
        f->exact = 1;
        f->divisor = (int32_t)(div * sign);
        for (int t = 0; t < n; t++)
            iw[t] = (int32_t)v[t] * sign;
        filter_set_int(f, 0, iw);
        filter_check_exact(f);
    } else {
        for (int t = 0; t < n; t++)
            f->w[t] = (float)(v[t] / div);
    }
    return TS_OK;
}

static ts_status filter_load(const char *path, ts_filter *f, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        if (err && errlen)
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return ts_fail(TS_ERR_IO, "%s: %s", path, strerror(errno));
    }
    char *buf = malloc(KERNEL_FILE_MAX + 1);
    if (!buf) {
        fclose(fp);
        return ts_fail(TS_ERR_NOMEM, "%s: out of memory", path);
    }
    size_t len = fread(buf, 1, KERNEL_FILE_MAX + 1, fp);
    int rerr = ferror(fp);
    fclose(fp);
    ts_status st;
    if (rerr) {
        /* fread on a directory fails with EISDIR */
        if (err && errlen)
            snprintf(err, errlen, "%s: cannot read (is it a directory?)", path);
        st = ts_fail(TS_ERR_IO, "%s: cannot read (is it a directory?)", path);
    } else {
        char sub[200];
        st = ts_filter_parse(buf, len, f, sub, sizeof sub);
        if (st != TS_OK) {
            if (err && errlen)
                snprintf(err, errlen, "%s: %s", path, sub);
            ts_fail(st, "%s: %s", path, sub);
        }
    }
    free(buf);
    return st;
}

static int streq(const char *a, const char *b) { return strcmp(a, b) == 0; }

ts_status ts_op_parse(const char *item_in, ts_op *op, char *err, size_t errlen)
{
    char item[1024], *arg[3] = {NULL, NULL, NULL};
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
    char *name = item;
    char *colon = strchr(item, ':');
    if (colon && strncmp(item, "kernel:", 7) == 0) {
        *colon = '\0';
        arg[0] = colon + 1; /* a file name may hold ':' */
        nargs = 1;
    } else {
        while (colon) {
            *colon = '\0';
            if (nargs == 3)
                return op_error(err, errlen, shown, "too many ':' arguments");
            arg[nargs++] = colon + 1;
            colon = strchr(colon + 1, ':');
        }
    }
    for (int i = 0; i < nargs; i++)
        if (!*arg[i])
            return op_error(err, errlen, shown, "empty argument");

#define MAXARGS(m)                                                                                 \
    do {                                                                                           \
        if (nargs > (m))                                                                           \
            return op_error(err, errlen, shown, (m) ? "too many arguments" : "takes no argument"); \
    } while (0)

    op->kind = TS_OP_CONV;
    if (streq(name, "box")) {
        int k = 3;
        MAXARGS(1);
        if (nargs && parse_k(arg[0], shown, &k, err, errlen))
            return TS_ERR_INVALID;
        filter_box(&op->filter, k);
        snprintf(op->text, sizeof op->text, "box:%d", k);
    } else if (streq(name, "gauss")) {
        int k = 5;
        MAXARGS(2);
        if (nargs && parse_k(arg[0], shown, &k, err, errlen))
            return TS_ERR_INVALID;
        double sigma = 0.3 * ((k - 1) * 0.5 - 1) + 0.8;
        if (nargs == 2 && (parse_float(arg[1], &sigma) != 0 || !(sigma > 0) || sigma > 1000))
            return op_error(err, errlen, shown, "SIGMA must be a number in (0, 1000]");
        filter_gauss(&op->filter, k, sigma);
        if (nargs == 2)
            snprintf(op->text, sizeof op->text, "gauss:%d:%g", k, sigma);
        else
            snprintf(op->text, sizeof op->text, "gauss:%d", k);
    } else if (streq(name, "sharpen")) {
        double a = 1;
        MAXARGS(1);
        if (nargs && (parse_float(arg[0], &a) != 0 || fabs(a) > 1000))
            return op_error(err, errlen, shown, "A must be a number in [-1000, 1000]");
        filter_sharpen(&op->filter, a);
        if (nargs)
            snprintf(op->text, sizeof op->text, "sharpen:%g", a);
        else
            snprintf(op->text, sizeof op->text, "sharpen");
    } else if (streq(name, "emboss")) {
        static const int32_t iw[9] = {-2, -1, 0, -1, 1, 1, 0, 1, 2};
        MAXARGS(0);
        filter_3x3(&op->filter, 1, iw, 0);
        snprintf(op->text, sizeof op->text, "emboss");
    } else if (streq(name, "edge")) {
        static const int32_t iw[18] = {-1, 0, 1, -2, 0, 2, -1, 0, 1,   /* Sobel x */
                                       -1, -2, -1, 0, 0, 0, 1, 2, 1}; /* Sobel y */
        MAXARGS(0);
        filter_3x3(&op->filter, 2, iw, 1);
        snprintf(op->text, sizeof op->text, "edge");
    } else if (streq(name, "kernel")) {
        if (nargs != 1)
            return op_error(err, errlen, shown, "needs a file: kernel:FILE");
        ts_status st = filter_load(arg[0], &op->filter, err, errlen);
        if (st != TS_OK)
            return st;
        const char *base = strrchr(arg[0], '/');
        snprintf(op->text, sizeof op->text, "kernel:%.60s", base ? base + 1 : arg[0]);
    } else if (streq(name, "rotate")) {
        long deg;
        op->kind = TS_OP_GEOM;
        if (nargs != 1 || parse_int(arg[0], -1000, 1000, &deg) != 0 ||
            (deg != 90 && deg != 180 && deg != 270 && deg != -90))
            return op_error(err, errlen, shown, "rotate takes 90, 180 or 270 (clockwise)");
        if (deg == -90)
            deg = 270;
        op->geom = deg == 90 ? TS_GEOM_ROT90 : deg == 180 ? TS_GEOM_ROT180 : TS_GEOM_ROT270;
        snprintf(op->text, sizeof op->text, "rotate:%ld", deg);
    } else if (streq(name, "transpose") || streq(name, "transverse") || streq(name, "flip") ||
               streq(name, "flop")) {
        MAXARGS(0);
        op->kind = TS_OP_GEOM;
        op->geom = streq(name, "transpose")    ? TS_GEOM_TRANSPOSE
                   : streq(name, "transverse") ? TS_GEOM_TRANSVERSE
                   : streq(name, "flip")       ? TS_GEOM_FLIP
                                               : TS_GEOM_FLOP;
        snprintf(op->text, sizeof op->text, "%.20s", name);
    } else if (streq(name, "equalize")) {
        MAXARGS(1);
        op->kind = TS_OP_EQUALIZE;
        op->hist_mode = TS_HIST_LUMA;
        if (nargs && streq(arg[0], "rgb"))
            op->hist_mode = TS_HIST_CHANNELS;
        else if (nargs && !streq(arg[0], "luma"))
            return op_error(err, errlen, shown, "equalize takes luma or rgb");
        snprintf(op->text, sizeof op->text, "%s",
                 op->hist_mode == TS_HIST_CHANNELS ? "equalize:rgb" : "equalize");
    } else if (streq(name, "resize") || streq(name, "thumbnail") || streq(name, "crop")) {
        /* resize family: grammar in ref_resize.c */
        return ts_resize_parse(name, nargs, arg, shown, op, err, errlen);
    } else {
        return op_error(err, errlen, shown,
                        "unknown operation (known: box gauss sharpen emboss edge kernel rotate "
                        "transpose transverse flip flop equalize resize thumbnail crop)");
    }
#undef MAXARGS
    return TS_OK;
}

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
        st = ts_op_parse(item, op, err, errlen);
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

const char *ts_family_name(ts_family f)
{
    static const char *const names[TS_FAM_COUNT] = {"conv", "geom", "hist", "resize"};
    return (unsigned)f < TS_FAM_COUNT ? names[f] : "?";
}

ts_family ts_op_family(ts_op_kind k)
{
    return k == TS_OP_CONV       ? TS_FAM_CONV
           : k == TS_OP_GEOM     ? TS_FAM_GEOM
           : k == TS_OP_RESIZE ? TS_FAM_RESIZE
                                 : TS_FAM_HIST;
}

int ts_family_from_name(const char *name, ts_family *f)
{
    static const struct {
        const char *name;
        ts_family f;
    } map[] = {
        {"conv", TS_FAM_CONV},     {"box", TS_FAM_CONV},        {"gauss", TS_FAM_CONV},
        {"sharpen", TS_FAM_CONV},  {"emboss", TS_FAM_CONV},     {"edge", TS_FAM_CONV},
        {"kernel", TS_FAM_CONV},   {"geom", TS_FAM_GEOM},       {"rotate", TS_FAM_GEOM},
        {"transpose", TS_FAM_GEOM}, {"transverse", TS_FAM_GEOM}, {"flip", TS_FAM_GEOM},
        {"flop", TS_FAM_GEOM},     {"hist", TS_FAM_HIST},       {"equalize", TS_FAM_HIST},
        {"resize", TS_FAM_RESIZE}, {"thumbnail", TS_FAM_RESIZE}, {"crop", TS_FAM_RESIZE},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(name, map[i].name) == 0) {
            *f = map[i].f;
            return 1;
        }
    return 0;
}
