/* resize.h - what the resize reference (ref_resize.c) and the GPU variants (resize*.cu) share,
 * internal to kernels/: the fixed-point weight tables and the alpha (un)premultiplication.
 *
 * The weights are built once on the host (rs_coeffs_make) and the GPU uploads the same integers,
 * so every backend computes the same sums: 8-bit and 16-bit results are bit-identical across the
 * CPU and the GPU variants. 8-bit follows Pillow's ImagingResample exactly: double weights
 * normalized per output, rounded to 22 fractional bits (PRECISION_BITS = 32 - 8 - 2), an int32
 * sum started at half, an arithmetic shift and a clamp. 16-bit (Pillow has no 16-bit resample)
 * uses 29 fractional bits and an int64 sum, so it stays within +-1 of the exact double result.
 */
#ifndef TS_RESIZE_H
#define TS_RESIZE_H

#include "tessera.h"

#ifdef __CUDACC__
#define RS_HD __host__ __device__ __forceinline__
#else
#define RS_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define RS_PREC8 22  /* Pillow's PRECISION_BITS: 255 * 2^22 * sum|w| (<= ~1.3) stays in int32 */
#define RS_PREC16 29 /* |w| < 2 after normalization keeps a weight in int32; sums in int64 */

static inline int rs_prec(int bytes) { return bytes == 2 ? RS_PREC16 : RS_PREC8; }

/* One axis of a resample: output i reads inputs bounds[2i] .. bounds[2i] + bounds[2i+1] - 1
 * with weights kk[i * ksize + t]. An axis whose size does not change gets the identity (ksize 1,
 * weight 1.0): Pillow skips that pass, and a weight of exactly 1.0 gives the same samples. */
typedef struct rs_coeffs {
    int in_size, out_size;
    int ksize;    /* weights stored per output (Pillow's ksize: 2 * ceil(support) + 1) */
    int *bounds;  /* [out_size][2]: first input, count */
    int32_t *kk;  /* [out_size][ksize], zero past the count */
    int first;    /* the inputs any output reads: [first, last) */
    int last;
} rs_coeffs;

/* The ksize rs_coeffs_make will use (identity: 1), 0 when too large. */
int rs_coeffs_ksize(int in_size, int out_size, ts_resize_filter f);
ts_status rs_coeffs_make(int in_size, int out_size, ts_resize_filter f, int bytes, rs_coeffs *c);
void rs_coeffs_free(rs_coeffs *c);
/* The widest input span any `n` consecutive outputs read (for shared-memory tile sizing). */
int rs_coeffs_span(const rs_coeffs *c, int n);

#ifdef __cplusplus
}
#endif

/* The interp filter's taps for output i of an axis in -> out: returns the first input sx and
 * sets *w1, the weight of sx + 1 (sx's is 2^prec - *w1; *w1 is 0 where sx is clamped to an
 * edge). The sampling position src = ((2i + 1) in - out) / (2 out) is an exact rational, so the
 * host's tables and the GPU's direct kernel get the same integers. */
RS_HD int rs_interp_tap(int i, int in, int out, int prec, int32_t *w1)
{
    long long num = (2LL * i + 1) * in - out, den = 2LL * out;
    long long sx = num >= 0 ? num / den : -((-num + den - 1) / den); /* floor */
    long long fr = num - sx * den;                                   /* 0 <= fr < den */
    if (sx < 0 || sx >= in - 1) {
        *w1 = 0;
        return sx < 0 ? 0 : in - 1;
    }
    *w1 = (int32_t)(((fr << (prec + 1)) + den) / (2 * den)); /* fr / den * 2^prec, half up */
    return (int)sx;
}

/* Pillow's RGBA -> RGBa: c * a / 255 rounded (MULDIV255); 16-bit the same over 65535. */
RS_HD unsigned rs_premul(unsigned c, unsigned a, int bytes)
{
    if (bytes == 2) {
        unsigned long long t = (unsigned long long)c * a + 32768u;
        return (unsigned)(((t >> 16) + t) >> 16);
    }
    unsigned t = c * a + 128u;
    return ((t >> 8) + t) >> 8;
}

/* Pillow's RGBa -> RGBA: unchanged where alpha is 0 or full, else max * c / a (floor), clamped. */
RS_HD unsigned rs_unpremul(unsigned c, unsigned a, int bytes)
{
    unsigned max = bytes == 2 ? 65535u : 255u;
    if (a == 0 || a == max)
        return c;
    unsigned long long v = (unsigned long long)max * c / a;
    return v > max ? max : (unsigned)v;
}

#endif /* TS_RESIZE_H */
