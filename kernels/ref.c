/* ref.c - the CPU reference of every operation: the oracle of the GPU tests and the backend of
 * machines without a GPU. Written for clarity first; the loops are arranged so that a fallback
 * run on a large photo still takes seconds, not minutes (clamped-index tables, row bands).
 *
 * Semantics (README "Operations"): correlation with border replicate; exact filters accumulate
 * integers and round once (ties to even); float filters accumulate in float; alpha passes through.
 */
#include "op_table.h"
#include "ts_math.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Rows of output planes the reference convolution holds at once (per thread). */
#define BAND_ROWS 64
#define MAX_THREADS 64

static atomic_int ref_threads = 1;

void ts_ref_set_threads(int n)
{
    atomic_store(&ref_threads, n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n);
}

int ts_ref_threads(void) { return atomic_load(&ref_threads); }

/* Clamped column index table: xi[x + kx] = clamp(x + kx - r, 0, w - 1), for x in [0, w), kx < k. */
static int *clamp_table(int n, int k)
{
    int r = k / 2;
    int *t = malloc(sizeof *t * (size_t)(n + k));
    if (!t)
        return NULL;
    for (int i = 0; i < n + k; i++) {
        int v = i - r;
        t[i] = v < 0 ? 0 : v >= n ? n - 1 : v;
    }
    return t;
}

/* One tap row of one channel added to a row of accumulators: acc[x] += sum_kx w[kx] * in[xi[x+kx]].
 * Per output the additions happen in the order ky, kx, as in the definition; the loops are only
 * arranged so that the sample type is known outside them. */
#define TAP_ROW(ACC_T, SAMPLE_T, W_T)                                                               \
    do {                                                                                           \
        const SAMPLE_T *src = (const SAMPLE_T *)row;                                               \
        for (int x = 0; x < W; x++) {                                                              \
            ACC_T a = acc[x];                                                                      \
            const int *xs = xi + x;                                                                \
            for (int kx = 0; kx < k; kx++)                                                         \
                a += (ACC_T)wr[kx] * (ACC_T)src[(size_t)xs[kx] * ch + c];                         \
            acc[x] = a;                                                                            \
        }                                                                                          \
    } while (0)

/* Rows [y0, y1) of a bank; out planes hold (y1 - y0) * width values each. One body for the float
 * bank (float weights and sums) and the exact one (int32 weights, int64 sums): W_T and ACC_T are
 * the only difference, so the two cannot drift apart. A channel whose weights are all zero adds
 * nothing and is skipped. */
#define DEFINE_BANK_ROWS(NAME, W_T, ACC_T)                                                          \
    static void NAME(const ts_image *in, const W_T *w, int outputs, int k, const int *xi, int y0,  \
                     int y1, ACC_T *out)                                                           \
    {                                                                                              \
        int r = k / 2, taps = k * k, ch = in->channels, W = in->width;                             \
        size_t plane = (size_t)(y1 - y0) * (size_t)W;                                              \
        for (int o = 0; o < outputs; o++) {                                                        \
            ACC_T *op = out + (size_t)o * plane;                                                   \
            memset(op, 0, plane * sizeof *op);                                                     \
            for (int c = 0; c < ch; c++) {                                                         \
                const W_T *ws = w + ((size_t)o * ch + c) * taps;                                   \
                int zero = 1;                                                                      \
                for (int t = 0; t < taps && zero; t++)                                             \
                    zero = ws[t] == 0;                                                             \
                if (zero)                                                                          \
                    continue;                                                                      \
                for (int y = y0; y < y1; y++) {                                                    \
                    ACC_T *acc = op + (size_t)(y - y0) * W;                                        \
                    for (int ky = 0; ky < k; ky++) {                                               \
                        int yy = y + ky - r;                                                       \
                        yy = yy < 0 ? 0 : yy >= in->height ? in->height - 1 : yy;                  \
                        const unsigned char *row =                                                 \
                            (const unsigned char *)in->data + (size_t)yy * in->pitch;              \
                        const W_T *wr = ws + ky * k;                                               \
                        if (in->bytes == 2)                                                        \
                            TAP_ROW(ACC_T, uint16_t, W_T);                                         \
                        else                                                                       \
                            TAP_ROW(ACC_T, uint8_t, W_T);                                          \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }
DEFINE_BANK_ROWS(bank_rows_f, float, float)
DEFINE_BANK_ROWS(bank_rows_i, int32_t, int64_t)
#undef DEFINE_BANK_ROWS
#undef TAP_ROW

static ts_status check_bank(const ts_image *in, int outputs, int k)
{
    if (!in || !in->data || outputs < 1 || k < 1 || k > TS_MAX_K || k % 2 == 0)
        return ts_fail(TS_ERR_INVALID, "filter bank: bad arguments");
    return ts_image_geometry(in->width, in->height, in->channels, in->bytes, NULL, NULL);
}

/* The whole image through bank_rows_i (exact) or bank_rows_f. */
static ts_status filter_bank(const ts_image *in, const void *w, int outputs, int k, void *out,
                             int exact)
{
    ts_status st = check_bank(in, outputs, k);
    if (st != TS_OK)
        return st;
    int *xi = clamp_table(in->width, k);
    if (!xi)
        return ts_fail(TS_ERR_NOMEM, "out of memory");
    if (exact)
        bank_rows_i(in, w, outputs, k, xi, 0, in->height, out);
    else
        bank_rows_f(in, w, outputs, k, xi, 0, in->height, out);
    free(xi);
    return TS_OK;
}

ts_status ts_ref_filter_bank(const ts_image *in, const float *w, int outputs, int k, float *out)
{
    return filter_bank(in, w, outputs, k, out, 0);
}

ts_status ts_ref_filter_bank_int(const ts_image *in, const int32_t *w, int outputs, int k,
                                 int64_t *out)
{
    return filter_bank(in, w, outputs, k, out, 1);
}

static void copy_alpha(const ts_image *in, ts_image *out)
{
    if (!ts_has_alpha(in->channels))
        return;
    int a = in->channels - 1;
    for (int y = 0; y < in->height; y++)
        for (int x = 0; x < in->width; x++)
            ts_put(out, x, y, a, ts_get(in, x, y, a));
}

/* A depthwise convolution in bands of rows: what each thread shares (read-only but `next`). */
typedef struct conv_job {
    const ts_filter *f;
    const ts_image *in;
    ts_image *out;
    const float *wf;
    const int32_t *wi;
    const int *xi;
    int nout, band, nbands;
    atomic_int next;   /* the next band to take */
    atomic_int failed; /* a thread could not allocate its planes */
} conv_job;

/* Output rows [y0, y1) from the bank's planes (one band). */
static void conv_band(const conv_job *j, int y0, int y1, void *planes)
{
    const ts_filter *f = j->f;
    const ts_image *in = j->in;
    int F = f->outputs, cc = ts_color_channels(in->channels), maxv = ts_max_value(in->bytes);
    int k = f->k;
    size_t pl = (size_t)(y1 - y0) * in->width;
    if (f->exact)
        bank_rows_i(in, j->wi, j->nout, k, j->xi, y0, y1, planes);
    else
        bank_rows_f(in, j->wf, j->nout, k, j->xi, y0, y1, planes);
    for (int c = 0; c < cc; c++)
        for (int y = y0; y < y1; y++)
            for (int x = 0; x < in->width; x++) {
                size_t i = (size_t)(y - y0) * in->width + x;
                size_t o0 = (size_t)(c * F) * pl + i, o1 = o0 + pl;
                unsigned v;
                if (f->exact) {
                    const int64_t *p = planes;
                    v = F == 2 && f->magnitude ? km_magnitude_i(p[o0], p[o1], maxv)
                                               : km_round_sat_i(p[o0], f->divisor, maxv);
                } else {
                    const float *p = planes;
                    v = F == 2 && f->magnitude ? km_magnitude_f(p[o0], p[o1], maxv)
                                               : km_round_sat_f(p[o0], maxv);
                }
                ts_put(j->out, x, y, c, v);
            }
}

/* A thread's share: bands taken in turn until none is left. Every output sample is computed by
 * the same code whichever thread takes its band, so the result does not depend on the count. */
static void *conv_worker(void *arg)
{
    conv_job *j = arg;
    size_t plane = (size_t)j->band * j->in->width;
    void *planes = malloc(plane * j->nout * (j->f->exact ? sizeof(int64_t) : sizeof(float)));
    if (!planes) {
        atomic_store(&j->failed, 1);
        return NULL;
    }
    for (int b; !atomic_load(&j->failed) && (b = atomic_fetch_add(&j->next, 1)) < j->nbands;) {
        int y0 = b * j->band, y1 = y0 + j->band < j->in->height ? y0 + j->band : j->in->height;
        conv_band(j, y0, y1, planes);
    }
    free(planes);
    return NULL;
}

/* A depthwise op as the general bank: outputs (c, f) see only colour channel c. Bands of
 * BAND_ROWS rows go to up to ts_ref_threads() threads (the caller's among them). */
ts_status ref_conv_into(const ts_op *op, const ts_image *in, ts_image *out)
{
    const ts_filter *f = &op->filter;
    int k = f->k, taps = k * k, F = f->outputs, ch = in->channels;
    int cc = ts_color_channels(ch);
    ts_status st = check_bank(in, F, k);
    if (st != TS_OK)
        return st;
    conv_job j;
    memset(&j, 0, sizeof j);
    j.f = f;
    j.in = in;
    j.out = out;
    j.nout = cc * F;
    j.band = in->height < BAND_ROWS ? in->height : BAND_ROWS;
    j.nbands = (in->height + j.band - 1) / j.band;
    atomic_init(&j.next, 0);
    atomic_init(&j.failed, 0);
    size_t bank_n = (size_t)j.nout * ch * taps;
    float *wf = calloc(bank_n, sizeof *wf);
    int32_t *wi = calloc(bank_n, sizeof *wi);
    int *xi = clamp_table(in->width, k);
    if (wf && wi && xi) {
        for (int c = 0; c < cc; c++)
            for (int o = 0; o < F; o++) {
                size_t at = ((size_t)(c * F + o) * ch + c) * taps;
                memcpy(wf + at, f->w + o * taps, taps * sizeof *wf);
                memcpy(wi + at, f->iw + o * taps, taps * sizeof *wi);
            }
        j.wf = wf;
        j.wi = wi;
        j.xi = xi;
        int nt = ts_ref_threads();
        nt = nt < j.nbands ? nt : j.nbands;
        pthread_t tid[MAX_THREADS];
        int started = 0;
        for (; started < nt - 1; started++)
            if (pthread_create(&tid[started], NULL, conv_worker, &j) != 0)
                break; /* fewer threads: the bands still all get done */
        conv_worker(&j);
        for (int i = 0; i < started; i++)
            pthread_join(tid[i], NULL);
    }
    if (!wf || !wi || !xi || atomic_load(&j.failed))
        st = ts_fail(TS_ERR_NOMEM, "out of memory for a %dx%d convolution", in->width, in->height);
    else
        copy_alpha(in, out);
    free(wf);
    free(wi);
    free(xi);
    return st;
}

ts_status ref_geom_into(const ts_op *op, const ts_image *in, ts_image *out)
{
    ts_geom g = op->geom;
    int W = in->width, H = in->height, ow = out->width, oh = out->height;
    size_t px = ts_pixel_bytes(in);
    for (int y = 0; y < oh; y++) {
        unsigned char *dst = (unsigned char *)out->data + (size_t)y * out->pitch;
        for (int x = 0; x < ow; x++) {
            int sx, sy;
            switch (g) {
            case TS_GEOM_ROT90: sx = y, sy = H - 1 - x; break;
            case TS_GEOM_ROT180: sx = W - 1 - x, sy = H - 1 - y; break;
            case TS_GEOM_ROT270: sx = W - 1 - y, sy = x; break;
            case TS_GEOM_TRANSPOSE: sx = y, sy = x; break;
            case TS_GEOM_TRANSVERSE: sx = W - 1 - y, sy = H - 1 - x; break;
            case TS_GEOM_FLIP: sx = x, sy = H - 1 - y; break;
            case TS_GEOM_FLOP: sx = W - 1 - x, sy = y; break;
            default: return ts_fail(TS_ERR_INVALID, "bad geometry op");
            }
            memcpy(dst + (size_t)x * px, (const unsigned char *)in->data + (size_t)sy * in->pitch +
                   (size_t)sx * px, px);
        }
    }
    return TS_OK;
}

ts_status ts_ref_hist(const ts_image *in, ts_hist_mode mode, uint32_t *hist)
{
    int bins = ts_hist_bins(in->bytes), nh = ts_hist_count(mode, in->channels);
    memset(hist, 0, sizeof *hist * (size_t)bins * nh);
    for (int y = 0; y < in->height; y++)
        for (int x = 0; x < in->width; x++) {
            if (nh == 3)
                for (int c = 0; c < 3; c++)
                    hist[c * bins + ts_get(in, x, y, c)]++;
            else if (ts_color_channels(in->channels) == 1)
                hist[ts_get(in, x, y, 0)]++;
            else
                hist[km_luma_of_sum(km_luma_sum(ts_get(in, x, y, 0), ts_get(in, x, y, 1),
                                                ts_get(in, x, y, 2)))]++;
        }
    return TS_OK;
}

void ts_equalize_lut(const uint32_t *hist, int bins, uint64_t n, uint16_t *lut)
{
    int first = 0;
    while (first < bins && hist[first] == 0)
        first++;
    if (first == bins || hist[first] == n) { /* empty, or one value: unchanged */
        for (int v = 0; v < bins; v++)
            lut[v] = (uint16_t)v;
        return;
    }
    int64_t h0 = hist[first], den = (int64_t)n - h0, cdf = 0;
    for (int v = 0; v < bins; v++) {
        cdf += hist[v];
        lut[v] = v < first ? 0 : (uint16_t)km_div_round_even((cdf - h0) * (bins - 1), den);
    }
}

ts_status ref_equalize_into(const ts_op *op, const ts_image *in, ts_image *out)
{
    ts_hist_mode mode = op->hist_mode;
    int bins = ts_hist_bins(in->bytes), nh = ts_hist_count(mode, in->channels);
    int maxv = ts_max_value(in->bytes), cc = ts_color_channels(in->channels);
    uint64_t n = (uint64_t)in->width * in->height;
    uint32_t *hist = malloc(sizeof *hist * (size_t)bins * nh);
    uint16_t *lut = malloc(sizeof *lut * (size_t)bins * nh);
    ts_status st = hist && lut ? TS_OK : ts_fail(TS_ERR_NOMEM, "out of memory");
    if (st != TS_OK)
        goto done;
    ts_ref_hist(in, mode, hist);
    for (int h = 0; h < nh; h++)
        ts_equalize_lut(hist + (size_t)h * bins, bins, n, lut + (size_t)h * bins);
    for (int y = 0; y < in->height; y++)
        for (int x = 0; x < in->width; x++) {
            if (nh == 3 || cc == 1) {
                for (int c = 0; c < cc; c++)
                    ts_put(out, x, y, c, lut[(size_t)c * bins + ts_get(in, x, y, c)]);
            } else {
                unsigned r = ts_get(in, x, y, 0), g = ts_get(in, x, y, 1), b = ts_get(in, x, y, 2);
                int32_t s = km_luma_sum(r, g, b);
                unsigned ly = lut[km_luma_of_sum(s)];
                ts_put(out, x, y, 0, km_luma_apply(r, s, ly, maxv));
                ts_put(out, x, y, 1, km_luma_apply(g, s, ly, maxv));
                ts_put(out, x, y, 2, km_luma_apply(b, s, ly, maxv));
            }
        }
    copy_alpha(in, out);
done:
    free(hist);
    free(lut);
    return st;
}

/* The reference of an op is its table row's (ops.c); so is its output shape. */
ts_status ts_ref_op_into(const ts_op *op, const ts_image *in, ts_image *out)
{
    const op_row *row = op_row_of_kind(op->kind);
    int ow, oh;
    ts_status st = ts_op_out_size(op, in->width, in->height, &ow, &oh);
    if (st != TS_OK) /* a crop box outside the image */
        return ts_fail(st, "%s: %s", op->text, ts_error_detail());
    if (!row || !row->ref || out->width != ow || out->height != oh ||
        out->channels != in->channels || out->bytes != in->bytes)
        return ts_fail(TS_ERR_INVALID, "%s: output image has the wrong shape", op->text);
    return row->ref(op, in, out);
}

ts_status ts_ref_op(const ts_op *op, const ts_image *in, ts_image *out)
{
    const op_row *row = op_row_of_kind(op->kind);
    int ow, oh;
    if (!row || !row->ref)
        return ts_fail(TS_ERR_INVALID, "%s: not an image operation", op->text);
    ts_status st = ts_op_out_size(op, in->width, in->height, &ow, &oh);
    if (st != TS_OK)
        return ts_fail(st, "%s: %s", op->text, ts_error_detail());
    st = ts_image_alloc(out, ow, oh, in->channels, in->bytes);
    if (st == TS_OK && (st = ts_ref_op_into(op, in, out)) != TS_OK)
        ts_image_free(out);
    return st;
}

ts_status ts_ref_conv(const ts_op *op, const ts_image *in, ts_image *out)
{
    if (op->kind != TS_OP_CONV)
        return ts_fail(TS_ERR_INVALID, "ts_ref_conv: not a convolution");
    return ts_ref_op(op, in, out);
}

ts_status ts_ref_geom(ts_geom g, const ts_image *in, ts_image *out)
{
    ts_op op;
    memset(&op, 0, sizeof op);
    op.kind = TS_OP_GEOM;
    op.geom = g;
    return ts_ref_op(&op, in, out);
}

ts_status ts_ref_equalize(ts_hist_mode mode, const ts_image *in, ts_image *out)
{
    ts_op op;
    memset(&op, 0, sizeof op);
    op.kind = TS_OP_EQUALIZE;
    op.hist_mode = mode;
    return ts_ref_op(&op, in, out);
}
