/* cpu_hist.c - histograms and equalization on the CPU, variant "simd".
 *
 *   - each thread counts its row bands into a private histogram, merged once at the end (no
 *     atomics); 8-bit counts go to four interleaved sub-histograms on the stack, so consecutive
 *     equal values do not wait on each other's increments;
 *   - luma is computed a chunk of pixels at a time in a vector loop (299R + 587G + 114B, the
 *     division by 1000 a multiply-high), then counted;
 *   - the equalization's apply is a row transform (LUT, or the luma formula of ts_math.h) that
 *     the pipeline can run inside the geometry op that follows (cpu_geom_apply), and the counts
 *     can come from the op before (cpu_conv_run_hist): one pass over the pixels less each.
 * Bit for bit with the reference: the same integer formulas (ts_math.h) and ts_equalize_lut.
 */
#include "cpu_common.h"
#include "ts_math.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK 256
#define KM_LUMA_MAX8 (1000 * 255) /* the largest 8-bit luma sum */

/* Luma values of n pixels (8 or 16-bit samples, C >= 3). */
CPU_CLONES static void luma_chunk(const void *src, int bytes, int C, int n, uint32_t *restrict y)
{
    if (bytes == 1) {
        const uint8_t *s = src;
        if (C == 3)
            for (int i = 0; i < n; i++)
                y[i] = km_luma_of_sum(km_luma_sum(s[3 * i], s[3 * i + 1], s[3 * i + 2]));
        else
            for (int i = 0; i < n; i++)
                y[i] = km_luma_of_sum(km_luma_sum(s[4 * i], s[4 * i + 1], s[4 * i + 2]));
    } else {
        const uint16_t *s = src;
        for (int i = 0; i < n; i++)
            y[i] = km_luma_of_sum(km_luma_sum(s[(size_t)C * i], s[(size_t)C * i + 1],
                                              s[(size_t)C * i + 2]));
    }
}

void cpu_hist_rows(const ts_image *im, int y0, int y1, ts_hist_mode mode, uint32_t *hist)
{
    int C = im->channels, W = im->width, bins = ts_hist_bins(im->bytes);
    int nh = ts_hist_count(mode, C), luma = nh == 1 && ts_color_channels(C) == 3;
    uint32_t sub[4][3 * 256];
    uint32_t yv[CHUNK];
    if (im->bytes == 1)
        memset(sub, 0, sizeof sub);
    for (int y = y0; y < y1; y++) {
        const char *row = (const char *)im->data + (size_t)y * im->pitch;
        if (im->bytes == 1 && !luma) {
            const uint8_t *s = (const uint8_t *)row;
            for (int c = 0; c < nh; c++) {
                uint32_t *h0 = sub[0] + c * 256, *h1 = sub[1] + c * 256, *h2 = sub[2] + c * 256,
                         *h3 = sub[3] + c * 256;
                int x = 0;
                for (; x + 4 <= W; x += 4) {
                    h0[s[(size_t)x * C + c]]++;
                    h1[s[(size_t)(x + 1) * C + c]]++;
                    h2[s[(size_t)(x + 2) * C + c]]++;
                    h3[s[(size_t)(x + 3) * C + c]]++;
                }
                for (; x < W; x++)
                    h0[s[(size_t)x * C + c]]++;
            }
        } else if (im->bytes == 1) {
            for (int x0 = 0; x0 < W; x0 += CHUNK) {
                int n = W - x0 < CHUNK ? W - x0 : CHUNK, i = 0;
                luma_chunk(row + (size_t)x0 * C, 1, C, n, yv);
                for (; i + 4 <= n; i += 4) {
                    sub[0][yv[i]]++;
                    sub[1][yv[i + 1]]++;
                    sub[2][yv[i + 2]]++;
                    sub[3][yv[i + 3]]++;
                }
                for (; i < n; i++)
                    sub[0][yv[i]]++;
            }
        } else if (luma) {
            for (int x0 = 0; x0 < W; x0 += CHUNK) {
                int n = W - x0 < CHUNK ? W - x0 : CHUNK;
                luma_chunk(row + (size_t)x0 * C * 2, 2, C, n, yv);
                for (int i = 0; i < n; i++)
                    hist[yv[i]]++;
            }
        } else {
            const uint16_t *s = (const uint16_t *)row;
            for (int c = 0; c < nh; c++)
                for (int x = 0; x < W; x++)
                    hist[(size_t)c * bins + s[(size_t)x * C + c]]++;
        }
    }
    if (im->bytes == 1)
        for (int i = 0; i < nh * 256; i++)
            hist[i] += sub[0][i] + sub[1][i] + sub[2][i] + sub[3][i];
}

/* ---------------------------------------------------------------- counting */

typedef struct count_ctx {
    const ts_image *im;
    ts_hist_mode mode;
    int band;
    size_t len;
    uint32_t *priv; /* per thread */
} count_ctx;

static void count_task(void *arg, int task, int thread)
{
    count_ctx *x = arg;
    int y0 = task * x->band, y1 = y0 + x->band < x->im->height ? y0 + x->band : x->im->height;
    cpu_hist_rows(x->im, y0, y1, x->mode, x->priv + (size_t)thread * x->len);
}

ts_status cpu_hist_count(const ts_image *in, ts_hist_mode mode, uint32_t *hist)
{
    count_ctx x = {.im = in, .mode = mode, .band = cpu_band_rows(in->height, 16)};
    x.len = (size_t)ts_hist_count(mode, in->channels) * ts_hist_bins(in->bytes);
    int ntasks = (in->height + x.band - 1) / x.band, nt = cpu_threads(ntasks);
    memset(hist, 0, x.len * sizeof *hist);
    if (nt == 1) {
        cpu_hist_rows(in, 0, in->height, mode, hist);
        return TS_OK;
    }
    x.priv = calloc((size_t)nt * x.len, sizeof *x.priv);
    if (!x.priv)
        return ts_fail(TS_ERR_NOMEM, "out of memory for %d histograms", nt);
    cpu_for(ntasks, count_task, &x);
    for (int t = 0; t < nt; t++)
        for (size_t i = 0; i < x.len; i++)
            hist[i] += x.priv[(size_t)t * x.len + i];
    free(x.priv);
    return TS_OK;
}

/* ---------------------------------------------------------------- applying */

typedef struct eq_ctx {
    int C, cc, bytes, bins, luma;
    int32_t maxv;
    const uint16_t *lut; /* [histograms][bins] */
    const int16_t *qtab; /* 8-bit luma: q(S) for S = 0..255000 */
} eq_ctx;

/* Luma sums S of n 8-bit pixels (C = 3 or 4). */
CPU_CLONES static void luma_sums8(const uint8_t *restrict s, int C, int n, int32_t *restrict sum)
{
    if (C == 3)
        for (int i = 0; i < n; i++)
            sum[i] = km_luma_sum(s[3 * i], s[3 * i + 1], s[3 * i + 2]);
    else
        for (int i = 0; i < n; i++)
            sum[i] = km_luma_sum(s[4 * i], s[4 * i + 1], s[4 * i + 2]);
}

static inline uint8_t add_sat8(int v, int q)
{
    v += q;
    v = v < 0 ? 0 : v;
    return (uint8_t)(v > 255 ? 255 : v);
}

/* d = clamp(s + dq) on the colour samples, alpha copied (unrolled: a loop over c keeps GCC from
 * vectorizing). */
CPU_CLONES static void luma_add8(const uint8_t *restrict s, int C, int n,
                                 const int16_t *restrict dq, uint8_t *restrict d)
{
    if (C == 3)
        for (int i = 0; i < n; i++) {
            int q = dq[i];
            d[3 * i] = add_sat8(s[3 * i], q);
            d[3 * i + 1] = add_sat8(s[3 * i + 1], q);
            d[3 * i + 2] = add_sat8(s[3 * i + 2], q);
        }
    else
        for (int i = 0; i < n; i++) {
            int q = dq[i];
            d[4 * i] = add_sat8(s[4 * i], q);
            d[4 * i + 1] = add_sat8(s[4 * i + 1], q);
            d[4 * i + 2] = add_sat8(s[4 * i + 2], q);
            d[4 * i + 3] = s[4 * i + 3];
        }
}

/* 8-bit luma: a colour sample c of a pixel of luma sum S becomes clamp(c + q(S)) with
 * q(S) = round((1000 lut[y(S)] - S) / 1000) (km_luma_apply): q from a table over S (0..255000,
 * built once per image), so a pixel is a vector sum, one table read and three saturating adds. */
static void apply_luma8(const eq_ctx *e, const uint8_t *s, uint8_t *d, int n)
{
    if (!e->qtab) { /* a small image: the formula per pixel (ts_math.h), no table */
        int C = e->C;
        for (int i = 0; i < n; i++) {
            const uint8_t *p = s + (size_t)i * C;
            uint8_t *q = d + (size_t)i * C;
            int32_t S = km_luma_sum(p[0], p[1], p[2]);
            uint32_t ly = e->lut[km_luma_of_sum(S)];
            for (int c = 0; c < 3; c++)
                q[c] = (uint8_t)km_luma_apply(p[c], S, ly, 255);
            if (C == 4)
                q[3] = p[3];
        }
        return;
    }
    int32_t sum[CHUNK];
    int16_t dq[CHUNK];
    for (int x0 = 0; x0 < n; x0 += CHUNK) {
        int m = n - x0 < CHUNK ? n - x0 : CHUNK;
        luma_sums8(s + (size_t)x0 * e->C, e->C, m, sum);
        for (int i = 0; i < m; i++)
            dq[i] = e->qtab[sum[i]];
        luma_add8(s + (size_t)x0 * e->C, e->C, m, dq, d + (size_t)x0 * e->C);
    }
}

CPU_CLONES static void apply_lut8(const eq_ctx *e, const uint8_t *restrict s, uint8_t *restrict d,
                                  int n)
{
    int C = e->C, cc = e->cc;
    const uint16_t *lut = e->lut;
    if (C == 1) {
        for (int i = 0; i < n; i++)
            d[i] = (uint8_t)lut[s[i]];
        return;
    }
    for (int i = 0; i < n; i++) {
        for (int c = 0; c < cc; c++)
            d[i * C + c] = (uint8_t)lut[c * 256 + s[i * C + c]];
        if (cc < C)
            d[i * C + C - 1] = s[i * C + C - 1];
    }
}

static void apply16(const eq_ctx *e, const uint16_t *s, uint16_t *d, int n)
{
    int C = e->C, cc = e->cc;
    for (int i = 0; i < n; i++) {
        const uint16_t *p = s + (size_t)i * C;
        uint16_t *q = d + (size_t)i * C;
        if (e->luma) {
            uint32_t r = p[0], g = p[1], b = p[2];
            int32_t sum = km_luma_sum(r, g, b);
            uint32_t ly = e->lut[km_luma_of_sum(sum)];
            q[0] = (uint16_t)km_luma_apply(r, sum, ly, e->maxv);
            q[1] = (uint16_t)km_luma_apply(g, sum, ly, e->maxv);
            q[2] = (uint16_t)km_luma_apply(b, sum, ly, e->maxv);
        } else {
            for (int c = 0; c < cc; c++)
                q[c] = e->lut[(size_t)c * e->bins + p[c]];
        }
        if (cc < C)
            q[C - 1] = p[C - 1];
    }
}

static void eq_row(const void *ctx, const void *src, void *dst, int n)
{
    const eq_ctx *e = ctx;
    if (e->bytes == 2)
        apply16(e, src, dst, n);
    else if (e->luma)
        apply_luma8(e, src, dst, n);
    else
        apply_lut8(e, src, dst, n);
}

typedef struct eq_rows_ctx {
    const eq_ctx *e;
    const ts_image *in, *out;
    int band;
} eq_rows_ctx;

static void eq_rows_task(void *arg, int task, int thread)
{
    eq_rows_ctx *x = arg;
    int y0 = task * x->band, y1 = y0 + x->band < x->in->height ? y0 + x->band : x->in->height;
    for (int y = y0; y < y1; y++)
        eq_row(x->e, (const char *)x->in->data + (size_t)y * x->in->pitch,
               (char *)x->out->data + (size_t)y * x->out->pitch, x->in->width);
}

ts_status cpu_equalize_geom(ts_hist_mode mode, const uint32_t *hist, int geom, const ts_image *in,
                            ts_image *out)
{
    int bins = ts_hist_bins(in->bytes), nh = ts_hist_count(mode, in->channels);
    uint64_t n = (uint64_t)in->width * in->height;
    uint32_t *own = NULL;
    uint16_t *lut = malloc(sizeof *lut * (size_t)bins * nh);
    ts_status st = lut ? TS_OK : ts_fail(TS_ERR_NOMEM, "out of memory");
    if (st == TS_OK && !hist) {
        own = malloc(sizeof *own * (size_t)bins * nh);
        st = own ? cpu_hist_count(in, mode, own) : ts_fail(TS_ERR_NOMEM, "out of memory");
        hist = own;
    }
    if (st != TS_OK)
        goto done;
    for (int h = 0; h < nh; h++)
        ts_equalize_lut(hist + (size_t)h * bins, bins, n, lut + (size_t)h * bins);
    eq_ctx e = {.C = in->channels, .cc = ts_color_channels(in->channels), .bytes = in->bytes,
                .bins = bins, .maxv = ts_max_value(in->bytes), .lut = lut};
    e.luma = nh == 1 && e.cc == 3;
    int16_t *qtab = NULL;
    /* the table (255001 entries, built per image) only where it pays: a large image */
    if (e.luma && in->bytes == 1 && n >= ((uint64_t)1 << 18)) {
        if (!(qtab = malloc(sizeof *qtab * (KM_LUMA_MAX8 + 1)))) {
            st = ts_fail(TS_ERR_NOMEM, "out of memory");
            goto done;
        }
        for (int32_t S = 0; S <= KM_LUMA_MAX8; S++) {
            int32_t dd = (int32_t)(1000u * lut[km_luma_of_sum(S)]) - S;
            qtab[S] = (int16_t)(dd >= 0 ? (dd + 500) / 1000 : -((-dd + 500) / 1000));
        }
        e.qtab = qtab;
    }
    if (geom >= 0) {
        st = cpu_geom_apply((ts_geom)geom, in, out, eq_row, &e);
    } else {
        eq_rows_ctx x = {.e = &e, .in = in, .out = out, .band = cpu_band_rows(in->height, 16)};
        cpu_for((in->height + x.band - 1) / x.band, eq_rows_task, &x);
    }
    free(qtab);
done:
    free(own);
    free(lut);
    return st;
}

ts_status cpu_hist_run(const ts_job *job)
{
    const ts_op *op = job->op;
    if (op->kind == TS_OP_HIST)
        return cpu_hist_count(&job->in, op->hist_mode, job->hist);
    ts_image out = job->out;
    return cpu_equalize_geom(op->hist_mode, NULL, -1, &job->in, &out);
}
