/* cpu_resize.c - resize, thumbnail and crop on the CPU, variant "simd": the reference's two
 * passes (Pillow's ImagingResample: the same integer weights of rs_coeffs_make, the same
 * rounding to the depth between the passes), arranged for speed:
 *   - horizontal pass: each input row premultiplied (alpha) and widened once into 4-lane int32
 *     pixels, then each output pixel is its band of the weight matrix times those pixels, four
 *     channels in one vector multiply-add per tap (8-bit; 16-bit in int64, scalar);
 *   - vertical pass: each output row a weighted sum of whole intermediate rows, vectorized over
 *     the row's samples (the banded product in the other direction);
 *   - both passes per band of 32 output rows on the thread pool: the horizontal result of the
 *     input rows a band reads stays in cache (no image-sized intermediate: no page faults, no
 *     trip through memory); crops and same-size resizes copy rows.
 * Bit for bit with the reference at both depths (the same integer sums).
 */
#include "cpu_common.h"
#include "resize.h"

#include <stdlib.h>
#include <string.h>

typedef int32_t v4i __attribute__((vector_size(16)));

#define RS_BAND 32 /* output rows per task */

typedef struct rs_ctx {
    const ts_image *in, *out;
    rs_coeffs ch, cv;
    int band;
    int failed;
} rs_ctx;

static inline uint16_t clamp_shift(int64_t acc, int prec, int64_t max)
{
    int64_t v = acc >> prec;
    return (uint16_t)(v < 0 ? 0 : v > max ? max : v);
}

/* One 8-bit row widened to 4-lane pixels (C known in each loop, so it vectorizes),
 * premultiplied where the image has alpha. */
CPU_CLONES static void widen8(const uint8_t *restrict s, int W, int C, v4i *restrict p)
{
    switch (C) {
    case 1:
        for (int x = 0; x < W; x++)
            p[x] = (v4i){s[x], 0, 0, 0};
        return;
    case 2:
        for (int x = 0; x < W; x++)
            p[x] = (v4i){(int32_t)rs_premul(s[2 * x], s[2 * x + 1], 1), s[2 * x + 1], 0, 0};
        return;
    case 3:
        for (int x = 0; x < W; x++)
            p[x] = (v4i){s[3 * x], s[3 * x + 1], s[3 * x + 2], 0};
        return;
    default:
        for (int x = 0; x < W; x++) {
            unsigned a = s[4 * x + 3];
            p[x] = (v4i){(int32_t)rs_premul(s[4 * x], a, 1), (int32_t)rs_premul(s[4 * x + 1], a, 1),
                         (int32_t)rs_premul(s[4 * x + 2], a, 1), (int32_t)a};
        }
    }
}

CPU_CLONES static void hrow8(const v4i *restrict p, const rs_coeffs *ch, int C, uint16_t *restrict t)
{
    const int prec = RS_PREC8;
    const v4i half = {1 << (prec - 1), 1 << (prec - 1), 1 << (prec - 1), 1 << (prec - 1)};
    for (int x = 0; x < ch->out_size; x++) {
        const int32_t *k = ch->kk + (size_t)x * ch->ksize;
        const v4i *q = p + ch->bounds[2 * x];
        int n = ch->bounds[2 * x + 1];
        v4i acc = half;
        for (int i = 0; i < n; i++)
            acc += q[i] * k[i];
        acc >>= prec;
        for (int c = 0; c < C; c++) {
            int32_t v = acc[c];
            t[(size_t)x * C + c] = (uint16_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
}

static void hrow16(const uint16_t *s, int C, const rs_coeffs *ch, uint16_t *prem, uint16_t *t)
{
    int W = ch->in_size, prec = RS_PREC16;
    if (ts_has_alpha(C)) {
        for (int x = 0; x < W; x++) {
            for (int c = 0; c < C - 1; c++)
                prem[x * C + c] = (uint16_t)rs_premul(s[x * C + c], s[x * C + C - 1], 2);
            prem[x * C + C - 1] = s[x * C + C - 1];
        }
        s = prem;
    }
    for (int x = 0; x < ch->out_size; x++) {
        const int32_t *k = ch->kk + (size_t)x * ch->ksize;
        const uint16_t *q = s + (size_t)ch->bounds[2 * x] * C;
        int n = ch->bounds[2 * x + 1];
        for (int c = 0; c < C; c++) {
            int64_t acc = (int64_t)1 << (prec - 1);
            for (int i = 0; i < n; i++)
                acc += (int64_t)q[i * C + c] * k[i];
            t[(size_t)x * C + c] = clamp_shift(acc, prec, 65535);
        }
    }
}

/* acc[i] = half + sum_t rows[t][i] * k[t] over n samples (8-bit: int32 sums, as Pillow). */
CPU_CLONES static void vrow8(const uint16_t *const *rows, const int32_t *k, int nt, int n,
                             int32_t *restrict acc, uint8_t *restrict o)
{
    const int prec = RS_PREC8;
    for (int i = 0; i < n; i++)
        acc[i] = (1 << (prec - 1)) + rows[0][i] * k[0];
    for (int t = 1; t < nt; t++) {
        const uint16_t *r = rows[t];
        int32_t kt = k[t];
        for (int i = 0; i < n; i++)
            acc[i] += r[i] * kt;
    }
    for (int i = 0; i < n; i++) {
        int32_t v = acc[i] >> prec;
        o[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
}

CPU_CLONES static void vrow16(const uint16_t *const *rows, const int32_t *k, int nt, int n,
                              int64_t *restrict acc, uint16_t *restrict o)
{
    const int prec = RS_PREC16;
    for (int i = 0; i < n; i++)
        acc[i] = ((int64_t)1 << (prec - 1)) + (int64_t)rows[0][i] * k[0];
    for (int t = 1; t < nt; t++) {
        const uint16_t *r = rows[t];
        int64_t kt = k[t];
        for (int i = 0; i < n; i++)
            acc[i] += r[i] * kt;
    }
    for (int i = 0; i < n; i++)
        o[i] = clamp_shift(acc[i], prec, 65535);
}

static void unpremul_row(void *row, int W, int C, int bytes)
{
    for (int x = 0; x < W; x++)
        if (bytes == 2) {
            uint16_t *p = (uint16_t *)row + (size_t)x * C;
            for (int c = 0; c < C - 1; c++)
                p[c] = (uint16_t)rs_unpremul(p[c], p[C - 1], 2);
        } else {
            uint8_t *p = (uint8_t *)row + (size_t)x * C;
            if (p[C - 1] != 0 && p[C - 1] != 255)
                for (int c = 0; c < C - 1; c++)
                    p[c] = (uint8_t)rs_unpremul(p[c], p[C - 1], 1);
        }
}

/* Output rows [y0, y1): the horizontal pass of the input rows they read (lo .. hi - 1) into a
 * band-sized intermediate that stays in cache, then the vertical pass. Neighbouring bands
 * share a few input rows (the filter's support), computed by both. */
static void band_task(void *arg, int task, int thread)
{
    rs_ctx *x = arg;
    const ts_image *in = x->in, *out = x->out;
    int C = out->channels, oh = out->height, n = out->width * C;
    int y0 = task * x->band, y1 = y0 + x->band < oh ? y0 + x->band : oh;
    int lo = x->cv.bounds[2 * y0], hi = lo;
    for (int y = y0; y < y1; y++) {
        int a = x->cv.bounds[2 * y], b = a + x->cv.bounds[2 * y + 1];
        lo = a < lo ? a : lo;
        hi = b > hi ? b : hi;
    }
    size_t wide = in->bytes == 1 ? sizeof(v4i) * (size_t)in->width
                                 : sizeof(uint16_t) * (size_t)in->width * C;
    uint16_t *tmp = malloc(sizeof *tmp * (size_t)(hi - lo) * n + 64);
    void *buf = malloc(wide), *acc = malloc(sizeof(int64_t) * (size_t)n);
    const uint16_t **rows = malloc(sizeof *rows * (size_t)x->cv.ksize);
    if (!tmp || !buf || !acc || !rows) {
        __atomic_store_n(&x->failed, 1, __ATOMIC_RELAXED);
        goto done;
    }
    for (int r = lo; r < hi; r++) {
        const void *row = (const char *)in->data + (size_t)r * in->pitch;
        uint16_t *t = tmp + (size_t)(r - lo) * n;
        if (in->bytes == 1) {
            widen8(row, in->width, C, buf);
            hrow8(buf, &x->ch, C, t);
        } else {
            hrow16(row, C, &x->ch, buf, t);
        }
    }
    for (int y = y0; y < y1; y++) {
        const int32_t *k = x->cv.kk + (size_t)y * x->cv.ksize;
        int first = x->cv.bounds[2 * y] - lo, nt = x->cv.bounds[2 * y + 1];
        char *o = (char *)out->data + (size_t)y * out->pitch;
        for (int t = 0; t < nt; t++)
            rows[t] = tmp + (size_t)(first + t) * n;
        if (out->bytes == 1)
            vrow8(rows, k, nt, n, acc, (uint8_t *)o);
        else
            vrow16(rows, k, nt, n, acc, (uint16_t *)o);
        if (ts_has_alpha(C))
            unpremul_row(o, out->width, C, out->bytes);
    }
done:
    free(tmp);
    free(buf);
    free(acc);
    free(rows);
}

typedef struct copy_ctx {
    const ts_image *in, *out;
    int x0, y0, band;
} copy_ctx;

static void copy_task(void *arg, int task, int thread)
{
    copy_ctx *x = arg;
    const ts_image *in = x->in, *out = x->out;
    int y0 = task * x->band, y1 = y0 + x->band < out->height ? y0 + x->band : out->height;
    for (int y = y0; y < y1; y++)
        memcpy((char *)out->data + (size_t)y * out->pitch,
               (const char *)in->data + (size_t)(y + x->y0) * in->pitch +
                   (size_t)x->x0 * ts_pixel_bytes(in),
               ts_row_bytes(out));
}

ts_status cpu_resize_run(const ts_job *job)
{
    const ts_op *op = job->op;
    const ts_resize *r = &op->resize;
    const ts_image *in = &job->in, *out = &job->out;
    int ow = out->width, oh = out->height;
    int cw, chh;
    ts_status st = ts_op_out_size(op, in->width, in->height, &cw, &chh);
    if (st != TS_OK)
        return st;
    if (cw != ow || chh != oh || out->channels != in->channels || out->bytes != in->bytes)
        return ts_fail(TS_ERR_INVALID, "resize: output image has the wrong shape");
    if (r->mode == TS_RESIZE_CROP || (ow == in->width && oh == in->height)) {
        copy_ctx c = {.in = in, .out = out, .band = cpu_band_rows(oh, 64)};
        if (r->mode == TS_RESIZE_CROP)
            c.x0 = r->x > 0 ? (int)r->x : 0, c.y0 = r->y > 0 ? (int)r->y : 0;
        cpu_for((oh + c.band - 1) / c.band, copy_task, &c);
        return TS_OK;
    }
    rs_ctx x;
    memset(&x, 0, sizeof x);
    x.in = in;
    x.out = out;
    if ((st = rs_coeffs_make(in->width, ow, r->filter, in->bytes, &x.ch)) != TS_OK)
        return st;
    if ((st = rs_coeffs_make(in->height, oh, r->filter, in->bytes, &x.cv)) != TS_OK) {
        rs_coeffs_free(&x.ch);
        return st;
    }
    x.band = RS_BAND;
    cpu_for((oh + x.band - 1) / x.band, band_task, &x);
    if (x.failed)
        st = ts_fail(TS_ERR_NOMEM, "resize: out of memory for a band of rows");
    rs_coeffs_free(&x.ch);
    rs_coeffs_free(&x.cv);
    return st;
}

