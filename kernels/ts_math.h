/* ts_math.h - the arithmetic every backend must share bit for bit (internal to kernels/).
 *
 * Included by ref.c (C11) and by the .cu files (CUDA C++), so the CPU reference and the GPU kernels
 * round, saturate and convert colours with the very same integer expressions.
 */
#ifndef TS_MATH_H
#define TS_MATH_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define KM_HD __host__ __device__ __forceinline__
#else
#define KM_HD static inline
#endif

/* num / den rounded to nearest, ties to even; den > 0. */
KM_HD int64_t km_div_round_even(int64_t num, int64_t den)
{
    int64_t q = num / den, r = num % den; /* C truncates toward zero */
    if (r < 0) {                          /* make r in [0, den) with floor division */
        r += den;
        q -= 1;
    }
    if (2 * r > den || (2 * r == den && (q & 1)))
        q += 1;
    return q;
}

KM_HD int64_t km_clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* A float filter result: round to nearest even (rint), then saturate to [0, maxv]. NaN gives 0. */
KM_HD unsigned km_round_sat_f(float v, int maxv)
{
    if (!(v > 0.0f))
        return 0;
    if (v >= (float)maxv)
        return (unsigned)maxv;
    return (unsigned)rintf(v);
}

/* An exact filter result: acc / divisor, ties to even, saturated. */
KM_HD unsigned km_round_sat_i(int64_t acc, int32_t divisor, int maxv)
{
    return (unsigned)km_clamp64(km_div_round_even(acc, divisor), 0, maxv);
}

/* Edge epilogue: round(sqrt(a^2 + b^2)) of integer gradients, IEEE double sqrt, saturated. */
KM_HD unsigned km_magnitude_i(int64_t a, int64_t b, int maxv)
{
    double m = sqrt((double)(a * a + b * b));
    if (m >= (double)maxv)
        return (unsigned)maxv;
    return (unsigned)rint(m);
}

/* Edge epilogue for float gradients (a kernel bank with float weights). */
KM_HD unsigned km_magnitude_f(float a, float b, int maxv)
{
    return km_round_sat_f(sqrtf(a * a + b * b), maxv);
}

/* Luma: S = 299R + 587G + 114B; the histogrammed value is y = (S + 500) / 1000. */
KM_HD int32_t km_luma_sum(uint32_t r, uint32_t g, uint32_t b)
{
    return (int32_t)(299u * r + 587u * g + 114u * b);
}
KM_HD uint32_t km_luma_of_sum(int32_t s) { return (uint32_t)((s + 500) / 1000); }

/* Luma equalization of one colour sample c of a pixel whose luma sum is s and whose equalized
 * luma is ly: c + round((1000 * ly - s) / 1000), ties away from zero, saturated to [0, maxv]. */
KM_HD uint32_t km_luma_apply(uint32_t c, int32_t s, uint32_t ly, int maxv)
{
    int32_t d = (int32_t)(1000u * ly) - s;
    int32_t q = d >= 0 ? (d + 500) / 1000 : -((-d + 500) / 1000);
    int32_t v = (int32_t)c + q;
    return (uint32_t)(v < 0 ? 0 : v > maxv ? maxv : v);
}

/* Largest sum of |integer weights| for which int32 accumulation of 16-bit samples cannot overflow;
 * filters past it are computed as float filters (ops.c). */
#define KM_EXACT_WEIGHT_SUM 32767

/* 1 when float accumulation of this exact filter is exact too (every partial sum < 2^24). */
KM_HD int km_exact_fits_float(int64_t abs_weight_sum, int maxv)
{
    return abs_weight_sum * (int64_t)maxv < ((int64_t)1 << 24);
}

#endif /* TS_MATH_H */
