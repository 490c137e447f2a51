/* ref_resize.c - resize, thumbnail and crop: what their rows in the op table (ops.c) point to:
 * the hook reading their arguments, the output size and the CPU reference (the test oracle and
 * the no-GPU fallback).
 *
 * Resampling is Pillow's ImagingResample (src/libImaging/Resample.c), so an independent library
 * is the oracle (tests/resize_pillow.py): per axis, scale = in / out, the filter's support is
 * stretched by max(scale, 1) when reducing, output i is centred at (i + 0.5) * scale, its inputs
 * are [(int)(centre - support + 0.5), (int)(centre + support + 0.5)) clipped to the image, each
 * weighted by filter((j - centre + 0.5) / max(scale, 1)), the weights normalized per output. The
 * horizontal pass runs first over only the rows the vertical pass reads; each pass rounds to the
 * depth (fixed point, resize.h). Images with alpha are resampled premultiplied (RGBA -> RGBa ->
 * RGBA, as Pillow's Image.resize). An unchanged size is an exact copy (Pillow returns a copy).
 *
 * Grammar:  resize:WxH[:FILTER]  resize:W[:F]  resize:xH[:F]  resize:N%[:F]
 *           thumbnail:N[:FILTER]  crop:WxH[+X+Y]
 * A missing side keeps the aspect ratio: H = floor(h * W / w + 0.5), at least 1 (ImageMagick's
 * rounding of -resize W); N% scales both sides the same way. thumbnail:N fits the image within
 * N x N, the long side becoming N, and never enlarges (a smaller image is copied). crop takes the
 * part of the box inside the image (X and Y may be negative) and fails when nothing is left.
 * FILTER: box, triangle (bilinear), cubic (Catmull-Rom, a = -0.5), lanczos3 (the default),
 * interp: interpolation without antialiasing, as OpenCV's INTER_LINEAR samples (NPP's linear
 * resize does the same work at src = i * in / out: tools/npp_linear_model.cu): whatever the
 * scale, output i reads inputs sx and sx + 1 around its centre's position
 * src = (i + 0.5) * in / out - 0.5 (sx = floor(src), clamped to the image as OpenCV clamps:
 * before the first input, the first alone; from the last on, the last alone). A 4x reduction
 * reads 2 of every 4 rows and columns (aliasing, but half the bytes). Its weights are exact
 * rationals rounded once, (src - sx) * 2^prec half up (rs_interp_tap, shared with the GPU's
 * direct kernel), not OpenCV's float positions and 11-bit weights: the same samples, a result
 * within a step of OpenCV's (tests/test_resize.c says how far). Both passes round to the depth
 * as the other filters do.
 */
#include "op_table.h"
#include "resize.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---------------------------------------------------------------- filters (Pillow's) */

static double sinc(double x)
{
    if (x == 0.0)
        return 1.0;
    x *= M_PI;
    return sin(x) / x;
}

static double filter_eval(ts_resize_filter f, double x)
{
    switch (f) {
    case TS_FILTER_BOX:
        return x > -0.5 && x <= 0.5 ? 1.0 : 0.0; /* half-open: a tie goes to one side only */
    case TS_FILTER_TRIANGLE:
        x = fabs(x);
        return x < 1.0 ? 1.0 - x : 0.0;
    case TS_FILTER_CUBIC: {
        const double a = -0.5;
        x = fabs(x);
        if (x < 1.0)
            return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
        if (x < 2.0)
            return (((x - 5) * x + 8) * x - 4) * a;
        return 0.0;
    }
    case TS_FILTER_LANCZOS3:
        return -3.0 <= x && x < 3.0 ? sinc(x) * sinc(x / 3) : 0.0;
    case TS_FILTER_INTERP: /* its taps come from rs_interp_tap, not from a kernel */
        break;
    }
    return 0.0;
}

static double filter_support(ts_resize_filter f)
{
    static const double s[] = {0.5, 1.0, 2.0, 3.0, 1.0};
    return s[f];
}

static const char *const filter_names[] = {"box", "triangle", "cubic", "lanczos3", "interp"};

/* ---------------------------------------------------------------- weight tables */

void rs_coeffs_free(rs_coeffs *c)
{
    free(c->bounds);
    free(c->kk);
    memset(c, 0, sizeof *c);
}

int rs_coeffs_ksize(int in_size, int out_size, ts_resize_filter f)
{
    if (in_size == out_size)
        return 1;
    if (f == TS_FILTER_INTERP)
        return 2;
    double scale = (double)in_size / out_size, filterscale = scale < 1.0 ? 1.0 : scale;
    double kd = ceil(filter_support(f) * filterscale) * 2 + 1;
    return kd * out_size > (double)(INT_MAX / 8) ? 0 : (int)kd;
}

ts_status rs_coeffs_make(int in_size, int out_size, ts_resize_filter f, int bytes, rs_coeffs *c)
{
    memset(c, 0, sizeof *c);
    if (in_size < 1 || out_size < 1 || (unsigned)f > TS_FILTER_INTERP)
        return ts_fail(TS_ERR_INVALID, "resize: bad sizes %d -> %d", in_size, out_size);
    double scale = (double)in_size / out_size, filterscale = scale < 1.0 ? 1.0 : scale;
    double support = filter_support(f) * filterscale;
    int ident = in_size == out_size, ksize = rs_coeffs_ksize(in_size, out_size, f);
    if (!ksize)
        return ts_fail(TS_ERR_TOO_LARGE, "resize: %d -> %d needs too many weights", in_size,
                       out_size);
    c->in_size = in_size;
    c->out_size = out_size;
    c->ksize = ksize;
    c->bounds = malloc((size_t)out_size * 2 * sizeof *c->bounds);
    c->kk = calloc((size_t)out_size * (size_t)c->ksize, sizeof *c->kk);
    double *k = malloc((size_t)c->ksize * sizeof *k);
    if (!c->bounds || !c->kk || !k) {
        free(k);
        rs_coeffs_free(c);
        return ts_fail(TS_ERR_NOMEM, "resize: out of memory for the weights");
    }
    double one = (double)(1 << rs_prec(bytes));
    for (int i = 0; i < out_size; i++) {
        int32_t *ki = c->kk + (size_t)i * c->ksize;
        if (ident) { /* Pillow skips the pass; a weight of exactly one gives the same samples */
            c->bounds[2 * i] = i;
            c->bounds[2 * i + 1] = 1;
            ki[0] = (int32_t)one;
            continue;
        }
        if (f == TS_FILTER_INTERP) {
            int32_t w1;
            c->bounds[2 * i] = rs_interp_tap(i, in_size, out_size, rs_prec(bytes), &w1);
            c->bounds[2 * i + 1] = c->bounds[2 * i] + 1 < in_size ? 2 : 1;
            ki[0] = (int32_t)one - w1;
            ki[1] = c->bounds[2 * i + 1] == 2 ? w1 : 0;
            continue;
        }
        double center = (i + 0.5) * scale, ww = 0.0, ss = 1.0 / filterscale;
        int xmin = (int)(center - support + 0.5), xmax = (int)(center + support + 0.5);
        if (xmin < 0)
            xmin = 0;
        if (xmax > in_size)
            xmax = in_size;
        xmax -= xmin;
        for (int x = 0; x < xmax; x++) {
            k[x] = filter_eval(f, (x + xmin - center + 0.5) * ss);
            ww += k[x];
        }
        for (int x = 0; x < xmax; x++) {
            double w = ww != 0.0 ? k[x] / ww : k[x];
            /* Pillow's normalize_coeffs_8bpc: round half away from zero */
            ki[x] = (int32_t)(w < 0 ? -0.5 + w * one : 0.5 + w * one);
        }
        c->bounds[2 * i] = xmin;
        c->bounds[2 * i + 1] = xmax;
    }
    free(k);
    c->first = c->bounds[0];
    c->last = c->bounds[2 * (out_size - 1)] + c->bounds[2 * (out_size - 1) + 1];
    for (int i = 0; i < out_size; i++) { /* bounds are monotone, but say so only once checked */
        if (c->bounds[2 * i] < c->first)
            c->first = c->bounds[2 * i];
        if (c->bounds[2 * i] + c->bounds[2 * i + 1] > c->last)
            c->last = c->bounds[2 * i] + c->bounds[2 * i + 1];
    }
    return TS_OK;
}

int rs_coeffs_span(const rs_coeffs *c, int n)
{
    int best = 0;
    for (int i = 0; i < c->out_size; i += n) {
        int j = i + n - 1 < c->out_size ? i + n - 1 : c->out_size - 1;
        int lo = c->bounds[2 * i], hi = c->bounds[2 * j] + c->bounds[2 * j + 1];
        for (int t = i; t <= j; t++) { /* robust to non-monotone bounds near the edges */
            if (c->bounds[2 * t] < lo)
                lo = c->bounds[2 * t];
            if (c->bounds[2 * t] + c->bounds[2 * t + 1] > hi)
                hi = c->bounds[2 * t] + c->bounds[2 * t + 1];
        }
        if (hi - lo > best)
            best = hi - lo;
    }
    return best;
}

/* ---------------------------------------------------------------- output size */

static int round_side(double v)
{
    double r = floor(v + 0.5);
    return r < 1 ? 1 : r > TS_MAX_DIM + 1.0 ? TS_MAX_DIM + 1 : (int)r;
}

ts_status op_resize_shape(const ts_op *op, int width, int height, int *ow, int *oh)
{
    const ts_resize *r = &op->resize;
    int w = width, h = height;
    switch (r->mode) {
    case TS_RESIZE_SCALE:
        if (r->percent > 0) {
            w = round_side(width * r->percent / 100.0);
            h = round_side(height * r->percent / 100.0);
        } else if (r->w && r->h) {
            w = r->w;
            h = r->h;
        } else if (r->w) {
            w = r->w;
            h = round_side((double)height * r->w / width);
        } else {
            h = r->h;
            w = round_side((double)width * r->h / height);
        }
        break;
    case TS_RESIZE_THUMBNAIL:
        if (width <= r->w && height <= r->h)
            break; /* never enlarge */
        if ((double)width * r->h >= (double)height * r->w) {
            w = r->w;
            h = round_side((double)height * r->w / width);
        } else {
            h = r->h;
            w = round_side((double)width * r->h / height);
        }
        break;
    case TS_RESIZE_CROP: {
        long x0 = r->x > 0 ? r->x : 0, y0 = r->y > 0 ? r->y : 0;
        long x1 = r->x + r->w < width ? r->x + r->w : width;
        long y1 = r->y + r->h < height ? r->y + r->h : height;
        if (x1 <= x0 || y1 <= y0)
            return ts_fail(TS_ERR_INVALID, "crop box %dx%d%+ld%+ld lies outside the %dx%d image",
                           r->w, r->h, r->x, r->y, width, height);
        w = (int)(x1 - x0);
        h = (int)(y1 - y0);
        break;
    }
    }
    if (w > TS_MAX_DIM || h > TS_MAX_DIM)
        return ts_fail(TS_ERR_TOO_LARGE, "resize to %dx%d: a side is longer than %d", w, h,
                       TS_MAX_DIM);
    *ow = w;
    *oh = h;
    return TS_OK;
}

/* ---------------------------------------------------------------- grammar */

/* Decimal digits at *s as a side length 1..TS_MAX_DIM; advances *s. 0 on success. */
static int parse_side(const char **s, int *v)
{
    long n = 0;
    if (!isdigit((unsigned char)**s))
        return -1;
    while (isdigit((unsigned char)**s)) {
        n = n * 10 + (**s - '0');
        if (n > TS_MAX_DIM)
            return -1;
        (*s)++;
    }
    if (n < 1)
        return -1;
    *v = (int)n;
    return 0;
}

/* [+-]digits as an offset of at most TS_MAX_DIM; advances *s. */
static int parse_offset(const char **s, long *v)
{
    int neg = **s == '-';
    long n = 0;
    if (**s != '+' && **s != '-')
        return -1;
    (*s)++;
    if (!isdigit((unsigned char)**s))
        return -1;
    while (isdigit((unsigned char)**s)) {
        n = n * 10 + (**s - '0');
        if (n > TS_MAX_DIM)
            return -1;
        (*s)++;
    }
    *v = neg ? -n : n;
    return 0;
}

static int parse_filter(const char *s, ts_resize_filter *f)
{
    static const struct {
        const char *name;
        ts_resize_filter f;
    } map[] = {{"box", TS_FILTER_BOX},           {"triangle", TS_FILTER_TRIANGLE},
               {"bilinear", TS_FILTER_TRIANGLE}, {"linear", TS_FILTER_TRIANGLE},
               {"cubic", TS_FILTER_CUBIC},       {"bicubic", TS_FILTER_CUBIC},
               {"catrom", TS_FILTER_CUBIC},      {"lanczos3", TS_FILTER_LANCZOS3},
               {"lanczos", TS_FILTER_LANCZOS3},  {"interp", TS_FILTER_INTERP}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(s, map[i].name) == 0) {
            *f = map[i].f;
            return 0;
        }
    return -1;
}

#define FILTER_HELP "FILTER is box, triangle, cubic, lanczos3 or interp"

/* The arguments arrive as text (the row declares them ARG_TEXT): a geometry has its own syntax,
 * and the filter names have aliases. */
ts_status op_build_resize(const op_row *row, const op_values *v, const char *shown, ts_op *op,
                          char *err, size_t errlen)
{
    const char *name = row->info.name, *const *args = v->s;
    int nargs = v->given;
    ts_resize *r = &op->resize;
    memset(r, 0, sizeof *r);
    op->kind = TS_OP_RESIZE;
    r->filter = TS_FILTER_LANCZOS3;
    char ftext[16] = "";
    if (strcmp(name, "crop") == 0) {
        const char *s = nargs == 1 ? args[0] : "";
        r->mode = TS_RESIZE_CROP;
        if (parse_side(&s, &r->w) || (*s != 'x' && *s != 'X') || (s++, parse_side(&s, &r->h)) ||
            (*s && (parse_offset(&s, &r->x) || parse_offset(&s, &r->y) || *s)))
            return op_error(err, errlen, shown,
                               "crop takes WxH+X+Y (sizes 1 to 1048576, offsets signed)");
        snprintf(op->text, sizeof op->text, "crop:%dx%d%+ld%+ld", r->w, r->h, r->x, r->y);
        return TS_OK;
    }
    if (nargs < 1 || nargs > 2)
        return op_error(err, errlen, shown,
                           strcmp(name, "thumbnail") == 0 ? "thumbnail takes N[:FILTER]"
                                                          : "resize takes GEOMETRY[:FILTER]");
    if (nargs == 2) {
        if (parse_filter(args[1], &r->filter))
            return op_error(err, errlen, shown, FILTER_HELP);
        if (r->filter != TS_FILTER_LANCZOS3)
            snprintf(ftext, sizeof ftext, ":%s", filter_names[r->filter]);
    }
    const char *s = args[0];
    if (strcmp(name, "thumbnail") == 0) {
        r->mode = TS_RESIZE_THUMBNAIL;
        if (parse_side(&s, &r->w) || *s)
            return op_error(err, errlen, shown, "thumbnail takes N from 1 to 1048576");
        r->h = r->w;
        snprintf(op->text, sizeof op->text, "thumbnail:%d%s", r->w, ftext);
        return TS_OK;
    }
    r->mode = TS_RESIZE_SCALE;
    size_t n = strlen(s);
    if (n && s[n - 1] == '%') {
        char num[32], *end;
        if (n - 1 >= sizeof num)
            return op_error(err, errlen, shown, "N% must be a number in (0, 10000]");
        memcpy(num, s, n - 1);
        num[n - 1] = '\0';
        errno = 0;
        r->percent = strtod(num, &end);
        if (!n || errno || *end || end == num || !isdigit((unsigned char)num[0]) ||
            !(r->percent > 0) || r->percent > 10000)
            return op_error(err, errlen, shown, "N% must be a number in (0, 10000]");
        snprintf(op->text, sizeof op->text, "resize:%g%%%s", r->percent, ftext);
        return TS_OK;
    }
    int ok = 1;
    if (*s != 'x' && *s != 'X')
        ok = parse_side(&s, &r->w) == 0;
    if (ok && (*s == 'x' || *s == 'X')) {
        s++;
        ok = parse_side(&s, &r->h) == 0;
    }
    if (!ok || *s || (!r->w && !r->h))
        return op_error(err, errlen, shown,
                           "resize takes WxH, W, xH or N% (sides 1 to 1048576)[:FILTER]");
    if (r->w && r->h)
        snprintf(op->text, sizeof op->text, "resize:%dx%d%s", r->w, r->h, ftext);
    else if (r->w)
        snprintf(op->text, sizeof op->text, "resize:%d%s", r->w, ftext);
    else
        snprintf(op->text, sizeof op->text, "resize:x%d%s", r->h, ftext);
    return TS_OK;
}

/* ---------------------------------------------------------------- the reference */

static void copy_box(const ts_image *in, int x0, int y0, ts_image *out)
{
    size_t px = ts_pixel_bytes(in);
    for (int y = 0; y < out->height; y++)
        memcpy((char *)out->data + (size_t)y * out->pitch,
               (const char *)in->data + (size_t)(y + y0) * in->pitch + (size_t)x0 * px,
               ts_row_bytes(out));
}

/* Sample c of pixel x of row `row`, premultiplied when the image has alpha. */
static unsigned load(const ts_image *in, const unsigned char *row, int x, int c)
{
    size_t i = (size_t)x * (size_t)in->channels;
    unsigned v = in->bytes == 2 ? ((const uint16_t *)row)[i + c] : row[i + c];
    if (ts_has_alpha(in->channels) && c < in->channels - 1) {
        unsigned a = in->bytes == 2 ? ((const uint16_t *)row)[i + in->channels - 1]
                                    : row[i + in->channels - 1];
        v = rs_premul(v, a, in->bytes);
    }
    return v;
}

static unsigned clamp_shift(int64_t acc, int prec, unsigned max)
{
    int64_t v = acc >> prec; /* floor, as Pillow's arithmetic shift */
    return v < 0 ? 0 : v > (int64_t)max ? max : (unsigned)v;
}

ts_status ref_resize_into(const ts_op *op, const ts_image *in, ts_image *out)
{
    const ts_resize *r = &op->resize;
    int ow, oh;
    ts_status st = op_resize_shape(op, in->width, in->height, &ow, &oh);
    if (st != TS_OK)
        return st;
    if (out->width != ow || out->height != oh || out->channels != in->channels ||
        out->bytes != in->bytes)
        return ts_fail(TS_ERR_INVALID, "resize: output image has the wrong shape");
    if (r->mode == TS_RESIZE_CROP) {
        copy_box(in, r->x > 0 ? (int)r->x : 0, r->y > 0 ? (int)r->y : 0, out);
        return TS_OK;
    }
    if (ow == in->width && oh == in->height) {
        copy_box(in, 0, 0, out);
        return TS_OK;
    }
    rs_coeffs ch, cv;
    if ((st = rs_coeffs_make(in->width, ow, r->filter, in->bytes, &ch)) != TS_OK)
        return st;
    if ((st = rs_coeffs_make(in->height, oh, r->filter, in->bytes, &cv)) != TS_OK) {
        rs_coeffs_free(&ch);
        return st;
    }
    int C = in->channels, prec = rs_prec(in->bytes), rows = cv.last - cv.first;
    unsigned max = (unsigned)ts_max_value(in->bytes);
    int64_t half = (int64_t)1 << (prec - 1);
    /* the horizontal pass's result, rounded to the depth: rows [cv.first, cv.last) */
    uint16_t *tmp = malloc((size_t)rows * (size_t)ow * (size_t)C * sizeof *tmp);
    if (!tmp) {
        rs_coeffs_free(&ch);
        rs_coeffs_free(&cv);
        return ts_fail(TS_ERR_NOMEM, "resize: out of memory for %d x %d intermediate", ow, rows);
    }
    for (int y = 0; y < rows; y++) {
        const unsigned char *row = (const unsigned char *)in->data + (size_t)(y + cv.first) * in->pitch;
        uint16_t *t = tmp + (size_t)y * ow * C;
        for (int x = 0; x < ow; x++) {
            const int32_t *k = ch.kk + (size_t)x * ch.ksize;
            int x0 = ch.bounds[2 * x], n = ch.bounds[2 * x + 1];
            for (int c = 0; c < C; c++) {
                int64_t acc = half;
                for (int i = 0; i < n; i++)
                    acc += (int64_t)load(in, row, x0 + i, c) * k[i];
                t[(size_t)x * C + c] = (uint16_t)clamp_shift(acc, prec, max);
            }
        }
    }
    for (int y = 0; y < oh; y++) {
        const int32_t *k = cv.kk + (size_t)y * cv.ksize;
        int y0 = cv.bounds[2 * y] - cv.first, n = cv.bounds[2 * y + 1];
        for (int x = 0; x < ow; x++) {
            unsigned px[4];
            for (int c = 0; c < C; c++) {
                int64_t acc = half;
                for (int i = 0; i < n; i++)
                    acc += (int64_t)tmp[((size_t)(y0 + i) * ow + x) * C + c] * k[i];
                px[c] = clamp_shift(acc, prec, max);
            }
            if (ts_has_alpha(C))
                for (int c = 0; c < C - 1; c++)
                    px[c] = rs_unpremul(px[c], px[C - 1], in->bytes);
            for (int c = 0; c < C; c++)
                ts_put(out, x, y, c, px[c]);
        }
    }
    free(tmp);
    rs_coeffs_free(&ch);
    rs_coeffs_free(&cv);
    return TS_OK;
}
