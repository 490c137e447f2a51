/* filter.c - the filter banks of the conv ops and kernel files.
 *
 * Filters are built here once, so every backend gets the same float weights (and, where the
 * weights are integers, the same exact integer weights and divisor). A kernel file is K*K weights
 * (K odd, 1..31) and an optional divisor, parsed here from text that the caller read (the app's
 * reader, app/common/kernel_file.c, opens regular files only: a FIFO or a device named by
 * kernel:FILE is refused instead of blocking the batch). The build hooks of the conv rows of the
 * op table (ops.c) are at the end.
 */
#include "op_table.h"
#include "ts_math.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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
        /* the centre is exp(0) = 1 even when 2 sigma^2 underflows to 0 (gauss:3:1e-200): the
         * other taps go to exp(-inf) = 0 and the filter is the identity, as OpenCV's */
        g[i] = x == 0 ? 1.0 : exp(-(x * x) / (2 * sigma * sigma));
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
        if (s > KM_EXACT_WEIGHT_SUM)
            f->exact = 0; /* the float weights are already set */
    }
}

/* A kernel file being read: position, line (for messages) and the reason of a failure. */
typedef struct kf_reader {
    const char *text;
    size_t len, i;
    int line;
    char why[256];
} kf_reader;

#define KF_FAIL(r, ...) (snprintf((r)->why, sizeof (r)->why, __VA_ARGS__), -1)

/* Skips blanks, separators, newlines and '#' comments; 1 when a value starts at r->i. */
static int kf_skip(kf_reader *r)
{
    while (r->i < r->len) {
        char c = r->text[r->i];
        if (c == '\n') {
            r->line++;
            r->i++;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == ',' || c == ';') {
            r->i++;
        } else if (c == '#') {
            while (r->i < r->len && r->text[r->i] != '\n')
                r->i++;
        } else {
            return 1;
        }
    }
    return 0;
}

/* One value: a weight, or the divisor after '/' or "divisor" (':' or '=' optional). */
static int kf_value(kf_reader *r, double *x, int *is_div)
{
    const char *text = r->text;
    size_t len = r->len;
    *is_div = 0;
    if (text[r->i] == '/') {
        *is_div = 1;
        r->i++;
    } else if (len - r->i >= 7 && strncmp(text + r->i, "divisor", 7) == 0) {
        *is_div = 1;
        r->i += 7;
        while (r->i < len && (text[r->i] == ' ' || text[r->i] == '\t'))
            r->i++;
        if (r->i < len && (text[r->i] == ':' || text[r->i] == '='))
            r->i++;
    }
    while (*is_div && r->i < len && (text[r->i] == ' ' || text[r->i] == '\t'))
        r->i++;
    /* one token: up to the next separator */
    char tok[64];
    size_t tl = 0;
    while (r->i < len && !strchr(" \t\r\n,;#", text[r->i])) {
        if (tl + 1 >= sizeof tok)
            return KF_FAIL(r, "line %d: number too long", r->line);
        if (text[r->i] == '\0')
            return KF_FAIL(r, "line %d: NUL byte in kernel file", r->line);
        tok[tl++] = text[r->i++];
    }
    tok[tl] = '\0';
    if (tl == 0 || ops_parse_float(tok, x) != 0) {
        if (tl && (strstr(tok, "nan") || strstr(tok, "NAN") || strstr(tok, "inf") ||
                   strstr(tok, "INF") || strstr(tok, "Inf") || strstr(tok, "NaN")))
            return KF_FAIL(r, "line %d: '%s' is not a finite number", r->line, tok);
        return KF_FAIL(r, "line %d: '%s' is not a number", r->line,
                       tl ? tok : (*is_div ? "divisor" : "?"));
    }
    if (fabs(*x) > 1e9)
        return KF_FAIL(r, "line %d: %s is out of range (|w| <= 1e9)", r->line, tok);
    return 0;
}

/* All values: n weights into v, then at most one divisor (1 when none). */
static int kf_read(kf_reader *r, double *v, int *n, double *div)
{
    int have_div = 0;
    double x;
    int is_div;
    *n = 0;
    *div = 1;
    while (kf_skip(r)) {
        if (kf_value(r, &x, &is_div) != 0)
            return -1;
        if (is_div) {
            if (have_div)
                return KF_FAIL(r, "line %d: second divisor", r->line);
            if (x == 0)
                return KF_FAIL(r, "line %d: divisor is zero", r->line);
            have_div = 1;
            *div = x;
            continue;
        }
        if (have_div)
            return KF_FAIL(r, "line %d: weights after the divisor line", r->line);
        if (*n == TS_MAX_K * TS_MAX_K)
            return KF_FAIL(r, "more than %d weights (K is at most %d)", TS_MAX_K * TS_MAX_K,
                           TS_MAX_K);
        v[(*n)++] = x;
    }
    return 0;
}

/* K of n weights: a square of an odd side, each weight / div within range. */
static int kf_check(kf_reader *r, const double *v, int n, double div, int *k)
{
    if (n == 0)
        return KF_FAIL(r, "no weights in kernel file");
    *k = (int)lround(sqrt((double)n));
    if (*k * *k != n)
        return KF_FAIL(r, "%d weights is not a square K x K", n);
    if (*k % 2 == 0)
        return KF_FAIL(r, "%d weights make K = %d, which is even (K must be odd)", n, *k);
    for (int t = 0; t < n; t++) /* a tiny divisor takes a weight past float (found by fuzzing) */
        if (!(fabs(v[t] / div) <= 1e9))
            return KF_FAIL(r, "weight %g / divisor %g is out of range (|w| <= 1e9)", v[t], div);
    return 0;
}
#undef KF_FAIL

/* Integer weights and divisor make an exact filter (while int32 sums cannot overflow). */
static void kf_build(ts_filter *f, const double *v, int k, double div)
{
    int n = k * k;
    f->k = k;
    f->outputs = 1;
    int integral = div == floor(div) && fabs(div) <= 1e6;
    for (int t = 0; t < n; t++)
        integral = integral && v[t] == floor(v[t]) && fabs(v[t]) <= KM_EXACT_WEIGHT_SUM;
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
}

ts_status ts_filter_parse(const char *text, size_t len, ts_filter *f, char *err, size_t errlen)
{
    double v[TS_MAX_K * TS_MAX_K], div;
    int n, k;
    kf_reader r = {.text = text, .len = len, .line = 1};
    memset(f, 0, sizeof *f);
    if (len > TS_KERNEL_FILE_MAX)
        snprintf(r.why, sizeof r.why, "kernel file is larger than %u bytes", TS_KERNEL_FILE_MAX);
    else if (kf_read(&r, v, &n, &div) == 0 && kf_check(&r, v, n, div, &k) == 0) {
        kf_build(f, v, k, div);
        return TS_OK;
    }
    if (err && errlen)
        snprintf(err, errlen, "%s", r.why);
    return ts_fail(TS_ERR_FORMAT, "%s", r.why);
}

/* ---------------------------------------------------------------- the conv rows' build hooks */

ts_status op_build_box(const op_row *row, const op_values *v, const char *item, ts_op *op,
                       char *err, size_t errlen)
{
    filter_box(&op->filter, (int)v->i[0]);
    snprintf(op->text, sizeof op->text, "box:%ld", v->i[0]);
    return TS_OK;
}

ts_status op_build_gauss(const op_row *row, const op_values *v, const char *item, ts_op *op,
                         char *err, size_t errlen)
{
    int k = (int)v->i[0];
    /* OpenCV's getGaussianKernel default, so gauss:K matches cv2.GaussianBlur(ksize=K, 0) */
    double sigma = v->given == 2 ? v->f[1] : 0.3 * ((k - 1) * 0.5 - 1) + 0.8;
    filter_gauss(&op->filter, k, sigma);
    if (v->given == 2)
        snprintf(op->text, sizeof op->text, "gauss:%d:%g", k, sigma);
    else
        snprintf(op->text, sizeof op->text, "gauss:%d", k);
    return TS_OK;
}

ts_status op_build_sharpen(const op_row *row, const op_values *v, const char *item, ts_op *op,
                           char *err, size_t errlen)
{
    filter_sharpen(&op->filter, v->f[0]);
    if (v->given)
        snprintf(op->text, sizeof op->text, "sharpen:%g", v->f[0]);
    else
        snprintf(op->text, sizeof op->text, "sharpen");
    return TS_OK;
}

ts_status op_build_emboss(const op_row *row, const op_values *v, const char *item, ts_op *op,
                          char *err, size_t errlen)
{
    static const int32_t iw[9] = {-2, -1, 0, -1, 1, 1, 0, 1, 2};
    filter_3x3(&op->filter, 1, iw, 0);
    snprintf(op->text, sizeof op->text, "emboss");
    return TS_OK;
}

ts_status op_build_edge(const op_row *row, const op_values *v, const char *item, ts_op *op,
                        char *err, size_t errlen)
{
    static const int32_t iw[18] = {-1, 0, 1, -2, 0, 2, -1, 0, 1,   /* Sobel x */
                                   -1, -2, -1, 0, 0, 0, 1, 2, 1}; /* Sobel y */
    filter_3x3(&op->filter, 2, iw, 1);
    snprintf(op->text, sizeof op->text, "edge");
    return TS_OK;
}

ts_status op_build_kernel(const op_row *row, const op_values *v, const char *item, ts_op *op,
                          char *err, size_t errlen)
{
    /* the caller reads the file (the library opens none) and gives its weights */
    if (!v->reader) {
        op_error(err, errlen, item, "kernel files are read by the caller (ts_op_parse_with)");
        return TS_ERR_UNSUPPORTED;
    }
    ts_status st = v->reader(v->s[0], &op->filter, err, errlen);
    if (st != TS_OK)
        return st;
    const char *base = strrchr(v->s[0], '/');
    snprintf(op->text, sizeof op->text, "kernel:%.60s", base ? base + 1 : v->s[0]);
    return TS_OK;
}
