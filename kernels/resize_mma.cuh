/* resize_mma.cuh - what the two tensor-core resamplers (resize_mma.cu: channel planes;
 * resize_mmai.cu: interleaved samples) share: the 8-bit mma.sync wrappers (mma_int8.cuh),
 * cp.async, and the recombination of the three byte planes' sums. Internal to kernels/; sm_80 and newer.
 *
 * A weight (22 fractional bits, Pillow's fixed point) is split into three bytes
 * w = hi * 2^16 + mid * 2^8 + lo (lo, mid unsigned, hi signed): the tensor cores multiply 8-bit
 * by 8-bit, the three sums are recombined in 32 bits and give the CPU reference's int32 sum,
 * bit for bit.
 */
#ifndef TS_RESIZE_MMA_CUH
#define TS_RESIZE_MMA_CUH

#include "mma_int8.cuh"
#include "resize_gpu.cuh"

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
/* 16 bytes global -> shared, asynchronously, to a shared-window address; zeros past
 * src_bytes (0..16) in the second form. */
__device__ __forceinline__ void mma_cp16s(unsigned dst, const void *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void mma_cp16s(unsigned dst, const void *src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes));
}
/* The same to a generic pointer into shared memory. */
__device__ __forceinline__ void mma_cp16(void *dst, const void *src, int src_bytes)
{
    mma_cp16s((unsigned)__cvta_generic_to_shared(dst), src, src_bytes);
}
__device__ __forceinline__ void mma_cp_commit() { asm volatile("cp.async.commit_group;\n"); }
template <int N> __device__ __forceinline__ void mma_cp_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
#endif

/* The three planes' sums recombined into Pillow's int32 sum (the half for rounding included
 * by the caller or here), shifted: the sample before clamping. */
__device__ __forceinline__ int mma_sum(int lo, int mid, int hi)
{
    unsigned s = ((unsigned)hi << 16) + ((unsigned)mid << 8) + (unsigned)lo;
    return (int)s >> RS_PREC8;
}

/* The weight of input i for output o of an axis (0 outside its band or past the last output). */
__device__ __forceinline__ int mma_weight(const int *b, const int *r, const int32_t *k, int ks,
                                          int size, int o, int i)
{
    if (o >= size)
        return 0;
    int t = i - b[2 * o];
    return t >= 0 && t < b[2 * o + 1] ? k[(size_t)r[o] * ks + t] : 0;
}

/* Four weights as three byte planes (lo, mid: unsigned; hi: signed) packed four to a word, the
 * way the mma fragments hold them. */
__device__ __forceinline__ void mma_pack_planes(const int w[4], unsigned pl[3])
{
    pl[0] = pl[1] = pl[2] = 0;
#pragma unroll
    for (int e = 0; e < 4; e++) {
        pl[0] |= ((unsigned)w[e] & 255u) << (8 * e);
        pl[1] |= (((unsigned)w[e] >> 8) & 255u) << (8 * e);
        pl[2] |= (((unsigned)w[e] >> 16) & 255u) << (8 * e);
    }
}

/* 2^32 / a rounded up to a float, for mma_unpremul_r (a = 2 .. 254; 0 for a = 1). It exceeds
 * 2^32 / a by less than 128, so for every 255 c <= 65025 the product's error stays below 1 / a,
 * less than the distance from 255 c / a to the next integer: the high word is the floor, exact
 * (checked for every a and c). One float reciprocal a pixel instead of an integer division a
 * sample. */
__device__ __forceinline__ unsigned mma_unpremul_rcp(unsigned a)
{
    return a > 1 ? (unsigned)(__frcp_ru((float)a) * 4294967296.0f) : 0u;
}

/* 255 * c / a (floor), clamped: rs_unpremul for 8 bits, r = mma_unpremul_rcp(a). */
__device__ __forceinline__ unsigned mma_unpremul_r(unsigned c, unsigned a, unsigned r)
{
    if (a == 0 || a == 255)
        return c;
    unsigned v = a == 1 ? 255u * c : __umulhi(255u * c, r);
    return v > 255u ? 255u : v;
}

/* Pillow's RGBA -> RGBa (rs_premul, 8 bits) on one 32-bit word of samples in place: C = 4, one
 * pixel (alpha in byte 3; red and blue side by side in 16-bit lanes); C = 2, two pixels. */
template <int C>
__device__ __forceinline__ unsigned mma_premul_word(unsigned w)
{
    if (C == 4) {
        unsigned a = w >> 24, rb = (w & 0x00FF00FFu) * a + 0x00800080u,
                 g = ((w >> 8) & 255u) * a + 128u;
        rb = ((rb + ((rb >> 8) & 0x00FF00FFu)) >> 8) & 0x00FF00FFu;
        g = ((g + (g >> 8)) >> 8) & 255u;
        return rb | (g << 8) | (a << 24);
    }
    unsigned x = (w & 255u) * ((w >> 8) & 255u) + 128u, y = ((w >> 16) & 255u) * (w >> 24) + 128u;
    x = (x + (x >> 8)) >> 8;
    y = (y + (y >> 8)) >> 8;
    return (w & 0xFF00FF00u) | x | (y << 16);
}

/* The inverse on a word of output samples (rs_unpremul: alpha 0 and 255 leave it as it is). */
template <int C>
__device__ __forceinline__ unsigned mma_unpremul_word(unsigned w)
{
#pragma unroll
    for (int p = 0; p < 4 / C; p++) {
        unsigned a = (w >> (8 * (C * p + C - 1))) & 255u;
        if (a == 0 || a == 255)
            continue;
        const unsigned r = mma_unpremul_rcp(a);
#pragma unroll
        for (int c = 0; c < C - 1; c++) {
            int sh = 8 * (C * p + c);
            w = (w & ~(255u << sh)) | (mma_unpremul_r((w >> sh) & 255u, a, r) << sh);
        }
    }
    return w;
}

#endif /* TS_RESIZE_MMA_CUH */
