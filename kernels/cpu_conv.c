/* cpu_conv.c - convolution on the CPU, variant "simd": row bands on threads; each input row of a
 * band converted once into a padded row (the border replicated into r pixels each side, so the tap loops have
 * no edge case) and kept in a ring of K rows; the loops run over the interleaved
 * samples of a row (a tap is an offset of C samples), which the compiler vectorizes with the
 * ISA the CPU has (CPU_CLONES).
 *
 *   float separable (gauss):  row pass into the ring, column pass, 2K FMAs a sample instead of
 *                             K*K; within one step of the reference (README: float filters);
 *   exact separable (box):    the same in int32 with integer factors, then one division rounded
 *                             ties to even: bit for bit;
 *   exact 2-D 8-bit with divisor 1 and |weights| summing below 128 (sharpen, emboss): int16
 *                             sums, exact (no partial sum can leave int16), twice the lanes;
 *   exact 2-D (edge, integer kernel files, 16-bit): int32 sums (exact: ts_math.h's
 *                             KM_EXACT_WEIGHT_SUM bound), zero taps skipped, the Sobel magnitude
 *                             in float where every sum is exact in it (8-bit), else in double;
 *   float 2-D (sharpen:0.5, float kernel files): float sums.
 * K = 1, 3, 5, 7 are compiled with K known (the tap loop unrolled, the sample loop vectorized).
 * A float bank of two outputs (no op builds one) is left to the reference (supports).
 */
#include "cpu_common.h"
#include "ts_math.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct conv_ctx {
    const ts_filter *f;
    const ts_image *in;
    const ts_image *out;
    int band, nbands;
    int path;          /* PATH_* */
    int32_t rowi[TS_MAX_K], coli[TS_MAX_K]; /* integer factors (exact separable) */
    double inv;        /* 1 / divisor */
    int mag_float;     /* magnitude sums exact in float */
    int small;         /* 1: every exact sum below 2^24: the division in float; 2: also d odd and
                          sums below 2^22: the float quotient rounded as it is */
    ts_hist_mode hist_mode;
    uint32_t *hist;    /* fusion: per-thread histograms (NULL: none) */
    size_t hist_len;   /* counts per thread */
    int failed;        /* a band could not allocate its rows */
} conv_ctx;

enum { PATH_SEP_F, PATH_SEP_I, PATH_2D_F, PATH_2D_I, PATH_2D_S };

/* ---------------------------------------------------------------- rows in */

/* Pixels x0 - r .. x1 + r - 1 of row `src` (W pixels of C samples) into dst, the pixels past
 * the image's sides replicated from its first and last. */
#define DEFINE_LOAD(NAME, T)                                                                       \
    CPU_CLONES static void NAME(const void *src, int bytes, int W, int C, int x0, int x1, int r,   \
                                T *restrict dst)                                                   \
    {                                                                                              \
        int a = x0 - r, b = x1 + r, lo = a < 0 ? 0 : a, hi = b > W ? W : b;                       \
        T *d = dst + (size_t)(lo - a) * C;                                                         \
        int n = (hi - lo) * C;                                                                     \
        if (bytes == 1) {                                                                          \
            const uint8_t *s = (const uint8_t *)src + (size_t)lo * C;                              \
            for (int i = 0; i < n; i++)                                                            \
                d[i] = (T)s[i];                                                                    \
        } else {                                                                                   \
            const uint16_t *s = (const uint16_t *)src + (size_t)lo * C;                            \
            for (int i = 0; i < n; i++)                                                            \
                d[i] = (T)s[i];                                                                    \
        }                                                                                          \
        for (int p = a; p < lo; p++)                                                               \
            for (int c = 0; c < C; c++)                                                            \
                dst[(size_t)(p - a) * C + c] =                                                     \
                    (T)(bytes == 1 ? ((const uint8_t *)src)[c] : ((const uint16_t *)src)[c]);       \
        for (int p = hi; p < b; p++)                                                               \
            for (int c = 0; c < C; c++)                                                            \
                dst[(size_t)(p - a) * C + c] =                                                     \
                    (T)(bytes == 1 ? ((const uint8_t *)src)[(size_t)(W - 1) * C + c]               \
                                   : ((const uint16_t *)src)[(size_t)(W - 1) * C + c]);            \
    }
DEFINE_LOAD(load_f, float)
DEFINE_LOAD(load_i, int32_t)
DEFINE_LOAD(load_s, int16_t)

/* ---------------------------------------------------------------- row pass (separable) */

/* o[i] = sum_kx w[kx] * p[i + kx * C], i < n: K known, so the tap loop unrolls and the sample
 * loop vectorizes. */
#define HPASS_K(T, K)                                                                              \
    for (int i = 0; i < n; i++) {                                                                  \
        T a = w[0] * p[i];                                                                         \
        for (int kx = 1; kx < (K); kx++)                                                           \
            a += w[kx] * p[i + kx * C];                                                            \
        o[i] = a;                                                                                  \
    }

#define DEFINE_HPASS(NAME, T)                                                                      \
    CPU_CLONES static void NAME(const T *restrict p, const T *restrict w, int k, int n, int C,     \
                                T *restrict o)                                                     \
    {                                                                                              \
        switch (k) {                                                                               \
        case 1: HPASS_K(T, 1) return;                                                              \
        case 3: HPASS_K(T, 3) return;                                                              \
        case 5: HPASS_K(T, 5) return;                                                              \
        case 7: HPASS_K(T, 7) return;                                                              \
        default:                                                                                   \
            for (int i = 0; i < n; i++)                                                            \
                o[i] = w[0] * p[i];                                                                \
            for (int kx = 1; kx < k; kx++) {                                                       \
                const T *q = p + kx * C;                                                           \
                T wk = w[kx];                                                                      \
                for (int i = 0; i < n; i++)                                                        \
                    o[i] += wk * q[i];                                                             \
            }                                                                                      \
        }                                                                                          \
    }
DEFINE_HPASS(hpass_f, float)
DEFINE_HPASS(hpass_i, int32_t)

/* ---------------------------------------------------------------- rows out */

/* km_round_sat_f, vector-friendly: NaN and negatives 0, saturate, then round half to even by
 * the 1.5 * 2^23 trick (exact for 0 <= v < 2^22, the default rounding mode). */
static inline float round_sat_f(float v, float maxv)
{
    v = v > 0.0f ? v : 0.0f;
    v = v < maxv ? v : maxv;
    return (v + 12582912.0f) - 12582912.0f;
}

/* km_round_sat_i for divisor d > 1 from an estimate q of acc / d that is off by at most one:
 * corrected by the remainder, then rounded ties to even and saturated. */
static inline int32_t div_fix_round_sat(int32_t acc, int32_t q, int32_t d, int32_t maxv)
{
    int32_t r = acc - q * d;
    q = r < 0 ? q - 1 : q;
    r = r < 0 ? r + d : r;
    q = r >= d ? q + 1 : q;
    r = r >= d ? r - d : r;
    q = (2 * r > d || (2 * r == d && (q & 1))) ? q + 1 : q;
    return q < 0 ? 0 : q > maxv ? maxv : q;
}

/* The estimate from a double product. */
static inline int32_t div_round_sat(int32_t acc, int32_t d, double inv, int32_t maxv)
{
    return div_fix_round_sat(acc, (int32_t)((double)acc * inv), d, maxv);
}

/* The estimate from a float product, for sums below 2^24 in magnitude (exact in float; the
 * product's error stays below one for d >= 2, which the correction absorbs). */
static inline int32_t div_round_sat_f(int32_t acc, int32_t d, float inv, int32_t maxv)
{
    return div_fix_round_sat(acc, (int32_t)((float)acc * inv), d, maxv);
}

static inline int32_t clamp_i(int32_t v, int32_t maxv) { return v < 0 ? 0 : v > maxv ? maxv : v; }

/* Column pass of a float separable filter plus the rounding, into an output row. */
#define VPASS_F_K(K, OUT_T)                                                                              \
    for (int i = 0; i < n; i++) {                                                                  \
        float a = w[0] * r[0][i];                                                                  \
        for (int ky = 1; ky < (K); ky++)                                                           \
            a += w[ky] * r[ky][i];                                                                 \
        o[i] = (OUT_T)round_sat_f(a, maxv);                                                        \
    }
#define DEFINE_VPASS_F(NAME, OUT_T)                                                                \
    CPU_CLONES static void NAME(const float *const *r, const float *restrict w, int k, int n,      \
                                float maxv, OUT_T *restrict o, float *restrict acc)                \
    {                                                                                              \
        switch (k) {                                                                               \
        case 1: VPASS_F_K(1, OUT_T) return;                                                               \
        case 3: VPASS_F_K(3, OUT_T) return;                                                               \
        case 5: VPASS_F_K(5, OUT_T) return;                                                               \
        case 7: VPASS_F_K(7, OUT_T) return;                                                               \
        default:                                                                                   \
            for (int i = 0; i < n; i++)                                                            \
                acc[i] = w[0] * r[0][i];                                                           \
            for (int ky = 1; ky < k; ky++) {                                                       \
                const float *q = r[ky];                                                            \
                float wk = w[ky];                                                                  \
                for (int i = 0; i < n; i++)                                                        \
                    acc[i] += wk * q[i];                                                           \
            }                                                                                      \
            for (int i = 0; i < n; i++)                                                            \
                o[i] = (OUT_T)round_sat_f(acc[i], maxv);                                           \
        }                                                                                          \
    }
DEFINE_VPASS_F(vpass_f8, uint8_t)
DEFINE_VPASS_F(vpass_f16, uint16_t)

/* Column pass of an exact separable filter, then the division. */
#define VPASS_I_K(K)                                                                               \
    for (int i = 0; i < n; i++) {                                                                  \
        int32_t a = w[0] * r[0][i];                                                                \
        for (int ky = 1; ky < (K); ky++)                                                           \
            a += w[ky] * r[ky][i];                                                                 \
        acc[i] = a;                                                                                \
    }
CPU_CLONES static void vpass_i(const int32_t *const *r, const int32_t *restrict w, int k, int n,
                               int32_t *restrict acc)
{
    switch (k) {
    case 1: VPASS_I_K(1) return;
    case 3: VPASS_I_K(3) return;
    case 5: VPASS_I_K(5) return;
    case 7: VPASS_I_K(7) return;
    default:
        for (int i = 0; i < n; i++)
            acc[i] = w[0] * r[0][i];
        for (int ky = 1; ky < k; ky++) {
            const int32_t *q = r[ky];
            int32_t wk = w[ky];
            for (int i = 0; i < n; i++)
                acc[i] += wk * q[i];
        }
    }
}

/* Integer sums to samples: / d (ties to even) and saturation; in float when every sum is below
 * 2^24 (small: 8-bit box filters). */
#define DEFINE_STORE_I(NAME, OUT_T)                                                                \
    CPU_CLONES static void NAME(const int32_t *restrict acc, int n, int32_t d, double inv,         \
                                int32_t maxv, int small, OUT_T *restrict o)                        \
    {                                                                                              \
        if (d == 1)                                                                                \
            for (int i = 0; i < n; i++)                                                            \
                o[i] = (OUT_T)clamp_i(acc[i], maxv);                                               \
        else if (small == 2)                                                                       \
            for (int i = 0; i < n; i++)                                                            \
                o[i] = (OUT_T)round_sat_f((float)acc[i] * (float)inv, (float)maxv);                \
        else if (small)                                                                            \
            for (int i = 0; i < n; i++)                                                            \
                o[i] = (OUT_T)div_round_sat_f(acc[i], d, (float)inv, maxv);                        \
        else                                                                                       \
            for (int i = 0; i < n; i++)                                                            \
                o[i] = (OUT_T)div_round_sat(acc[i], d, inv, maxv);                                 \
    }
DEFINE_STORE_I(store_i8, uint8_t)
DEFINE_STORE_I(store_i16, uint16_t)

/* round(sqrt(a^2 + b^2)) saturated (km_magnitude_i): in float when a^2 + b^2 < 2^24 always (then
 * the float sum is exact, sqrtf correctly rounded, and no sqrt of an integer lies within half an
 * ulp of a rounding boundary below 256), else in double, as the reference. */
CPU_CLONES static void store_mag8(const int32_t *restrict a, const int32_t *restrict b, int n,
                                  uint8_t *restrict o)
{
    for (int i = 0; i < n; i++) {
        float m = sqrtf((float)(a[i] * a[i] + b[i] * b[i]));
        o[i] = (uint8_t)round_sat_f(m, 255.0f);
    }
}

CPU_CLONES static void store_mag_d(const int32_t *restrict a, const int32_t *restrict b, int n,
                                   int maxv, int bytes, void *o)
{
    for (int i = 0; i < n; i++) {
        double m = sqrt((double)a[i] * a[i] + (double)b[i] * b[i]);
        unsigned v = m >= maxv ? (unsigned)maxv : (unsigned)rint(m);
        if (bytes == 2)
            ((uint16_t *)o)[i] = (uint16_t)v;
        else
            ((uint8_t *)o)[i] = (uint8_t)v;
    }
}

/* ---------------------------------------------------------------- 2-D taps */

/* acc[i] = sum_ky sum_kx w[ky][kx] * rows[ky][i + kx * C] (zero taps skipped), K = 3 unrolled. */
#define DEFINE_TAPS2D(NAME, T)                                                                     \
    CPU_CLONES static void NAME(const T *const *rows, const T *restrict w, int k, int n, int C,    \
                                T *restrict acc)                                                   \
    {                                                                                              \
        if (k == 3) {                                                                              \
            const T *r0 = rows[0], *r1 = rows[1], *r2 = rows[2];                                   \
            T w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6],         \
              w7 = w[7], w8 = w[8];                                                                \
            int c2 = 2 * C;                                                                        \
            for (int i = 0; i < n; i++)                                                            \
                acc[i] = w0 * r0[i] + w1 * r0[i + C] + w2 * r0[i + c2] + w3 * r1[i] +              \
                         w4 * r1[i + C] + w5 * r1[i + c2] + w6 * r2[i] + w7 * r2[i + C] +          \
                         w8 * r2[i + c2];                                                          \
            return;                                                                                \
        }                                                                                          \
        for (int i = 0; i < n; i++)                                                                \
            acc[i] = 0;                                                                            \
        for (int ky = 0; ky < k; ky++)                                                             \
            for (int kx = 0; kx < k; kx++) {                                                       \
                T wk = w[ky * k + kx];                                                             \
                if (wk == 0)                                                                       \
                    continue;                                                                      \
                const T *q = rows[ky] + kx * C;                                                    \
                for (int i = 0; i < n; i++)                                                        \
                    acc[i] += wk * q[i];                                                           \
            }                                                                                      \
    }
DEFINE_TAPS2D(taps2d_f, float)
DEFINE_TAPS2D(taps2d_i, int32_t)
DEFINE_TAPS2D(taps2d_s, int16_t)

/* int16 sums of an 8-bit exact filter with divisor 1 to samples. */
CPU_CLONES static void store_s8(const int16_t *restrict acc, int n, uint8_t *restrict o)
{
    for (int i = 0; i < n; i++)
        o[i] = (uint8_t)(acc[i] < 0 ? 0 : acc[i] > 255 ? 255 : acc[i]);
}

CPU_CLONES static void store_f(const float *restrict acc, int n, float maxv, int bytes, void *o)
{
    if (bytes == 2)
        for (int i = 0; i < n; i++)
            ((uint16_t *)o)[i] = (uint16_t)round_sat_f(acc[i], maxv);
    else
        for (int i = 0; i < n; i++)
            ((uint8_t *)o)[i] = (uint8_t)round_sat_f(acc[i], maxv);
}

/* ---------------------------------------------------------------- bands */

static void copy_alpha_row(const ts_image *in, int y, const ts_image *out)
{
    int C = in->channels, a = C - 1;
    if (!ts_has_alpha(C))
        return;
    const char *s = (const char *)in->data + (size_t)y * in->pitch;
    char *d = (char *)out->data + (size_t)y * out->pitch;
    if (in->bytes == 2)
        for (int x = 0; x < in->width; x++)
            ((uint16_t *)d)[x * C + a] = ((const uint16_t *)s)[x * C + a];
    else
        for (int x = 0; x < in->width; x++)
            d[x * C + a] = s[x * C + a];
}

static const void *in_row(const ts_image *in, int y)
{
    y = y < 0 ? 0 : y >= in->height ? in->height - 1 : y;
    return (const char *)in->data + (size_t)y * in->pitch;
}

/* Rows [y0, y1) of the output. The ring holds the K rows (row-filtered for the separable paths,
 * padded samples for the 2-D ones) that output row y reads: input rows y - r .. y + r, row
 * y - r + j in slot (y - y0 + j) % K. */
static void conv_band(void *arg, int band, int thread)
{
    conv_ctx *x = arg;
    const ts_filter *f = x->f;
    const ts_image *in = x->in, *out = x->out;
    int k = f->k, r = k / 2, C = in->channels, W = in->width;
    int y0 = band * x->band, y1 = y0 + x->band < in->height ? y0 + x->band : in->height;
    int sep = x->path == PATH_SEP_F || x->path == PATH_SEP_I;
    int fl = x->path == PATH_SEP_F || x->path == PATH_2D_F, F = f->outputs;
    /* one strip: the whole row. Strips narrow enough for L1 (the K + 3 rows of a strip in
     * 24 KiB) measured slower at 16 MP (gauss:5 20.3 vs 18.2 ms, sharpen 27 vs 20): a short
     * piece of each row defeats the hardware prefetcher's streams, and L2 holds the rows. */
    int sp = W;
    size_t padn = (size_t)(sp + 2 * r) * C, slot = sep ? (size_t)sp * C : padn;
    /* ring K slots, the padded row (separable), two accumulator rows */
    size_t need = (size_t)k * slot + (sep ? padn : 0) + 2 * (size_t)sp * C + 64;
    float *mem = malloc(need * 4);
    if (!mem) {
        __atomic_store_n(&x->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    void *ring[TS_MAX_K];
    for (int j = 0; j < k; j++)
        ring[j] = mem + (size_t)j * slot;
    void *pad = mem + (size_t)k * slot, *acc = (float *)pad + (sep ? padn : 0);
    void *acc2 = (float *)acc + (size_t)sp * C;
    float wrow[TS_MAX_K], wcol[TS_MAX_K];
    for (int j = 0; j < k; j++)
        wrow[j] = f->row[j], wcol[j] = f->col[j];
    int maxv = ts_max_value(in->bytes);
    int32_t wi2[2][TS_MAX_K * TS_MAX_K];
    float wf2[TS_MAX_K * TS_MAX_K];
    int16_t ws[TS_MAX_K * TS_MAX_K];
    for (int t = 0; t < k * k; t++) {
        ws[t] = (int16_t)f->iw[t]; /* used only when every weight and sum fits (PATH_2D_S) */
        wf2[t] = f->w[t];
        wi2[0][t] = f->iw[t];
        wi2[1][t] = F == 2 ? f->iw[k * k + t] : 0;
    }
    for (int x0 = 0; x0 < W; x0 += sp) {
        int x1 = x0 + sp < W ? x0 + sp : W, n = (x1 - x0) * C;
        /* fill: the rows before the first output's last row */
        for (int j = 0; j < k - 1; j++) {
            const void *src = in_row(in, y0 - r + j);
            void *dst = ring[j % k];
            if (x->path == PATH_SEP_F) {
                load_f(src, in->bytes, W, C, x0, x1, r, pad);
                hpass_f(pad, wrow, k, n, C, dst);
            } else if (x->path == PATH_SEP_I) {
                load_i(src, in->bytes, W, C, x0, x1, r, pad);
                hpass_i(pad, x->rowi, k, n, C, dst);
            } else if (x->path == PATH_2D_S) {
                load_s(src, in->bytes, W, C, x0, x1, r, dst);
            } else if (fl) {
                load_f(src, in->bytes, W, C, x0, x1, r, dst);
            } else {
                load_i(src, in->bytes, W, C, x0, x1, r, dst);
            }
        }
        for (int y = y0; y < y1; y++) {
            const void *src = in_row(in, y + r);
            void *dst = ring[(y - y0 + k - 1) % k];
            const void *rows[TS_MAX_K];
            for (int j = 0; j < k; j++)
                rows[j] = ring[(y - y0 + j) % k];
            void *o = (char *)out->data + (size_t)y * out->pitch + (size_t)x0 * C * in->bytes;
            switch (x->path) {
            case PATH_SEP_F:
                load_f(src, in->bytes, W, C, x0, x1, r, pad);
                hpass_f(pad, wrow, k, n, C, dst);
                if (in->bytes == 2)
                    vpass_f16((const float *const *)rows, wcol, k, n, (float)maxv, o, acc);
                else
                    vpass_f8((const float *const *)rows, wcol, k, n, (float)maxv, o, acc);
                break;
            case PATH_SEP_I:
                load_i(src, in->bytes, W, C, x0, x1, r, pad);
                hpass_i(pad, x->rowi, k, n, C, dst);
                vpass_i((const int32_t *const *)rows, x->coli, k, n, acc);
                if (in->bytes == 2)
                    store_i16(acc, n, f->divisor, x->inv, maxv, x->small, o);
                else
                    store_i8(acc, n, f->divisor, x->inv, maxv, x->small, o);
                break;
            case PATH_2D_F:
                load_f(src, in->bytes, W, C, x0, x1, r, dst);
                taps2d_f((const float *const *)rows, wf2, k, n, C, acc);
                store_f(acc, n, (float)maxv, in->bytes, o);
                break;
            case PATH_2D_S:
                load_s(src, in->bytes, W, C, x0, x1, r, dst);
                taps2d_s((const int16_t *const *)rows, ws, k, n, C, acc);
                store_s8(acc, n, o);
                break;
            default:
                load_i(src, in->bytes, W, C, x0, x1, r, dst);
                taps2d_i((const int32_t *const *)rows, wi2[0], k, n, C, acc);
                if (F == 2) {
                    taps2d_i((const int32_t *const *)rows, wi2[1], k, n, C, acc2);
                    if (x->mag_float)
                        store_mag8(acc, acc2, n, o);
                    else
                        store_mag_d(acc, acc2, n, maxv, in->bytes, o);
                } else if (in->bytes == 2) {
                    store_i16(acc, n, f->divisor, x->inv, maxv, x->small, o);
                } else {
                    store_i8(acc, n, f->divisor, x->inv, maxv, x->small, o);
                }
            }
        }
    }
    free(mem);
    for (int y = y0; y < y1; y++)
        copy_alpha_row(in, y, out);
    if (x->hist) /* fusion: the band's output rows are still in cache */
        cpu_hist_rows(out, y0, y1, x->hist_mode, x->hist + (size_t)thread * x->hist_len);
}

/* Integer row and column factors whose product is the exact filter's weights (box). */
static int integer_factors(const ts_filter *f, int32_t *row, int32_t *col)
{
    int k = f->k;
    for (int i = 0; i < k; i++) {
        if (f->row[i] != floorf(f->row[i]) || f->col[i] != floorf(f->col[i]) ||
            fabsf(f->row[i]) > 32767 || fabsf(f->col[i]) > 32767)
            return 0;
        row[i] = (int32_t)f->row[i];
        col[i] = (int32_t)f->col[i];
    }
    int64_t sr = 0, sc = 0;
    for (int i = 0; i < k; i++)
        sr += llabs((long long)row[i]), sc += llabs((long long)col[i]);
    if (sr * sc > KM_EXACT_WEIGHT_SUM) /* the int32 bound of exact filters */
        return 0;
    for (int y = 0; y < k; y++)
        for (int xx = 0; xx < k; xx++)
            if ((int64_t)col[y] * row[xx] != f->iw[y * k + xx])
                return 0;
    return 1;
}

int cpu_conv_supports(const ts_job *job)
{
    const ts_filter *f = &job->op->filter;
    return job->op->kind == TS_OP_CONV &&
           (f->outputs == 1 || (f->outputs == 2 && f->magnitude && f->exact));
}

static ts_status conv_run(const ts_job *job, ts_hist_mode mode, uint32_t *hist)
{
    const ts_filter *f = &job->op->filter;
    const ts_image *in = &job->in;
    if (!cpu_conv_supports(job) || f->k < 1 || f->k > TS_MAX_K || f->k % 2 == 0)
        return ts_fail(TS_ERR_UNSUPPORTED, "simd: a float bank of two outputs");
    conv_ctx x;
    memset(&x, 0, sizeof x);
    x.f = f;
    x.in = in;
    x.out = &job->out;
    x.band = cpu_band_rows(in->height, 16);
    x.nbands = (in->height + x.band - 1) / x.band;
    x.inv = f->exact ? 1.0 / f->divisor : 0;
    if (f->separable && !f->exact && f->outputs == 1)
        x.path = PATH_SEP_F;
    else if (f->separable && f->exact && f->outputs == 1 && integer_factors(f, x.rowi, x.coli))
        x.path = PATH_SEP_I;
    else
        x.path = f->exact ? PATH_2D_I : PATH_2D_F;
    if (x.path == PATH_2D_I && f->outputs == 1 && f->divisor == 1 && in->bytes == 1) {
        /* 8-bit, |weights| summing below 128: every partial sum fits int16, twice the lanes
         * of int32 (sharpen, emboss) */
        int64_t sum = 0;
        for (int t = 0; t < f->k * f->k; t++)
            sum += llabs((long long)f->iw[t]);
        if (sum * 255 < 32768)
            x.path = PATH_2D_S;
    }
    if (f->exact) {
        int64_t sum = 0;
        for (int t = 0; t < f->k * f->k; t++)
            sum += llabs((long long)f->iw[t]);
        int64_t a = sum * ts_max_value(in->bytes);
        x.small = a < ((int64_t)1 << 24);
        /* odd d: no quotient is a tie, and one is at least 1 / (2d) from a rounding boundary;
         * below 2^22 the float product is closer than that, so rounding it is exact */
        if (a < ((int64_t)1 << 22) && f->divisor % 2 == 1)
            x.small = 2;
    }
    if (f->outputs == 2) {
        int64_t s = 0;
        for (int o = 0; o < 2; o++) {
            int64_t so = 0;
            for (int t = 0; t < f->k * f->k; t++)
                so += llabs((long long)f->iw[o * f->k * f->k + t]);
            s = so > s ? so : s;
        }
        s *= ts_max_value(in->bytes);
        x.mag_float = in->bytes == 1 && 2 * s * s < ((int64_t)1 << 24);
    }
    int nt = cpu_threads(x.nbands);
    if (hist) {
        x.hist_mode = mode;
        x.hist_len = (size_t)ts_hist_count(mode, in->channels) * ts_hist_bins(in->bytes);
        x.hist = calloc((size_t)nt * x.hist_len, sizeof *x.hist);
        if (!x.hist)
            return ts_fail(TS_ERR_NOMEM, "out of memory for %d histograms", nt);
    }
    cpu_for(x.nbands, conv_band, &x);
    if (hist) {
        memset(hist, 0, x.hist_len * sizeof *hist);
        for (int t = 0; t < nt; t++)
            for (size_t i = 0; i < x.hist_len; i++)
                hist[i] += x.hist[(size_t)t * x.hist_len + i];
        free(x.hist);
    }
    if (x.failed)
        return ts_fail(TS_ERR_NOMEM, "out of memory for a %dx%d convolution", in->width,
                       in->height);
    return TS_OK;
}

ts_status cpu_conv_run(const ts_job *job) { return conv_run(job, TS_HIST_LUMA, NULL); }

ts_status cpu_conv_run_hist(const ts_job *job, ts_hist_mode mode, uint32_t *hist)
{
    return conv_run(job, mode, hist);
}
