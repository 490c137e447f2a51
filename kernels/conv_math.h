/* conv_math.h - the convolution epilogue's integer arithmetic, cheap enough for a GPU and provably
 * equal to ts_math.h's (internal to kernels/; the CPU test in tests/test_gpu_conv.c checks it against
 * km_round_sat_i and km_magnitude_i over millions of values).
 *
 * km_round_sat_i divides by the filter's divisor in 64 bits; a GPU does that in software, per
 * output. Here the divisor is turned once per job into a multiply-high by a magic number
 * (Granlund-Montgomery), valid while the numerator stays below 2^31, and rounding half to even is
 * done on floor((2a + d) / 2d), which only ties when d is even.
 * km_magnitude_i takes a double square root; a float square root lands within 1 of round(sqrt(S))
 * for S < 2^32 and two integer comparisons make it exact.
 */
#ifndef CONV_MATH_H
#define CONV_MATH_H

#include "ts_math.h"

#include <stdint.h>

/* A divisor prepared for conv_div_round_sat. */
typedef struct conv_div {
    int32_t d;      /* the divisor, >= 1 */
    int32_t magic;  /* 1: the multiply-high path is valid for every clamped numerator */
    uint32_t m;     /* ceil(2^(31 + l) / (2d)) */
    uint32_t shift; /* l - 1, where l = ceil(log2(2d)) */
    int64_t top;    /* maxv * d: accumulators at or above it saturate */
} conv_div;

/* Prepares d (> 0) for results saturated to [0, maxv]. */
KM_HD conv_div conv_div_make(int32_t d, int maxv)
{
    conv_div v;
    uint64_t D = 2 * (uint64_t)d;
    uint32_t l = 0;
    while (((uint64_t)1 << l) < D)
        l++;
    v.d = d;
    v.top = (int64_t)maxv * d;
    /* numerators 2a + d with 0 < a < maxv * d stay below (2 maxv + 1) d, which must be < 2^31 */
    v.magic = d > 1 && (2 * (int64_t)maxv + 1) * d < ((int64_t)1 << 31);
    v.m = v.magic ? (uint32_t)((((uint64_t)1 << (31 + l)) + D - 1) / D) : 0;
    v.shift = l ? l - 1 : 0;
    return v;
}

/* km_round_sat_i(acc, d, maxv), with a multiply-high instead of a 64-bit division. */
KM_HD unsigned conv_div_round_sat(int64_t acc, const conv_div *v, int maxv)
{
    if (acc <= 0)
        return 0; /* round(acc / d) <= 0 */
    if (acc >= v->top)
        return (unsigned)maxv; /* round(acc / d) >= maxv */
    if (v->d == 1)
        return (unsigned)acc;
    if (!v->magic)
        return km_round_sat_i(acc, v->d, maxv);
    uint32_t n = 2 * (uint32_t)acc + (uint32_t)v->d; /* < 2^31 by conv_div_make */
    uint32_t q = (uint32_t)(((uint64_t)n * v->m) >> 32) >> v->shift; /* floor(n / 2d) */
    /* a tie (a / d = q - 1/2) leaves n a multiple of 2d; half to even then takes q - 1 if q is odd */
    if ((q & 1u) && n == q * 2u * (uint32_t)v->d)
        q--;
    return q;
}

/* km_magnitude_i(a, b, maxv) for |a|, |b| < 2^31, without a double square root. */
KM_HD unsigned conv_mag_exact(int64_t a, int64_t b, int maxv)
{
    uint64_t S = (uint64_t)(a * a) + (uint64_t)(b * b);
    if (S >= (uint64_t)maxv * (uint64_t)maxv)
        return (unsigned)maxv; /* sqrt(S) >= maxv */
    uint32_t s = (uint32_t)S;   /* < 65535^2 < 2^32 */
    uint32_t n = (uint32_t)rintf(sqrtf((float)s)); /* round(sqrt(s)) + {-1, 0, 1} */
    /* round(sqrt(s)) = n exactly when n^2 - n < s <= n^2 + n (sqrt(s) is never n + 1/2) */
    if (s > n * n + n)
        n++;
    else if (n > 0 && s <= n * n - n)
        n--;
    return n;
}

#endif /* CONV_MATH_H */
