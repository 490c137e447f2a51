/* conv_mma_parts.cuh - the building blocks of the conv variants `mma` and `mmapipe` (conv_mma.cuh
 * tells the whole trick): the constants, the window geometry, the u8 -> FP16 conversion, the
 * mma.sync, the epilogues and the stores of a finished row. Internal to kernels/.
 */
#ifndef CONV_MMA_PARTS_CUH
#define CONV_MMA_PARTS_CUH

#include "conv_common.cuh"

#include <cuda_fp16.h>
#include <limits.h>
#include <math.h>
#include <type_traits>
#include <utility>

#define MMA_WARPS 4      /* warps per block */
#define MMA_SEG 128      /* output samples per warp: 16 segments (M) x 8 outputs (N) */
#define MMA_SH 32        /* output rows per strip at least (default; job->param overrides) */
#define MMA_DIAG 24      /* diagonals j - n of one k-step's T: -7 .. 15, stored from index 0 */
#define MMA_RING_ROW(MT) (MMA_SEG * (MT) + 32) /* mmapipe: bytes of a ring row, 16 halo each side */

/* The tuned values (measured on an H200, 8K RGB8: tools/results/conv-mma-tuning.md). */
constexpr int MMA_NS_K = 2;       /* mmapipe: ring rows per warp, in multiples of K (NS - 1 in flight) */
constexpr int MMA_RING_SH3 = 12;  /* mmapipe: output rows per strip at K = 3 (default; job->param */
constexpr int MMA_RING_SH = 30;   /* overrides), and at K = 5, 7 (rounded to a multiple of NS) */
constexpr int MMA_SEP_SH5 = 20;   /* mmasep: output rows per strip at K = 5 and 7, multiples of NS */
constexpr int MMA_SEP_SH7 = 42;   /* (the fastest of 10..56: tools/results/nvidia-h100-box-*.md) */
constexpr int MMA_RING_MT3 = 4;   /* mmapipe: M-tiles per warp at K = 3, one filter (issue-bound at 2) */
constexpr int MMA_RING_MT = 2;    /* mmapipe: M-tiles per warp otherwise */
constexpr int MMA_MINB_RING3 = 6; /* mmapipe: blocks an SM must hold at K = 3, one filter (K = 5, 7:
                                   * a cap spills, none) */
constexpr int MMA_MINB3 = 1;      /* mma: blocks an SM must hold at K = 3, one filter (1: no cap) */
constexpr int MMA_MINB3_PAIR = 8; /* ... at K = 3, a magnitude pair */
constexpr int MMA_MINB5 = 4;      /* ... at K = 5 (more spill) */
constexpr int MMA_MINB7 = 4;      /* ... at K = 7 */
constexpr int MMA_MT3 = 2;        /* mma: M-tiles per warp at K = 3, one filter */
constexpr int MMA_PK3 = 2;        /* mma: input rows held in registers at K = 3, in multiples of K */

/* mmapipe's ring rows per warp: a multiple of K, so that in a loop unrolled by NS both a row's ring
 * slot and its accumulator slot are compile-time (mma_ring_steady). */
template <int K> __host__ __device__ constexpr int mma_ns() { return MMA_NS_K * K; }

/* Window geometry of K x K on CH channels: halo H samples each side, padded to A words of 4; S
 * k-steps of 16 samples cover the 8 + 8 A samples a segment of 8 outputs needs. */
template <int K, int CH> struct mma_geo {
    static constexpr int R = K / 2, H = R * CH, A = (H + 3) / 4, S = (A + 2) / 2;
    /* input rows in flight: a multiple of K (static accumulator slots), at least 5 */
    static constexpr int P = K >= 5 ? K : MMA_PK3 * K;
    static_assert(8 + 8 * A <= 16 * S, "window does not fit the k-steps");
};

/* u8 samples b0..b3 of w -> half2 (b0, b1) (SEL 0x4140) or (b2, b3) (SEL 0x4342), exactly: the
 * FP16 bit pattern 0x00bb is the subnormal b * 2^-24, so one byte_perm with zero is the whole
 * conversion; the accumulators are 2^-24 times the sums (exact: a power of two), MMA_UNSCALE. */
template <uint32_t SEL> __device__ __forceinline__ uint32_t mma_h2(uint32_t w)
{
    return __byte_perm(w, 0u, SEL);
}
#define MMA_UNSCALE 16777216.0f /* 2^24 */
#define MMA_SCALE (1.0f / 16777216.0f)

/* d += a * b (FRESH: d = a * b, the first product into a fresh accumulator: no clearing). */
template <bool FRESH>
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
{
#if __CUDA_ARCH__ >= 800
    if (FRESH)
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%10,%10,%10,%10};"
            : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(0.0f));
    else
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

/* Word at sample pos of a row that sticks out of [0, wch): border replicate, sample by sample. */
template <int CH>
__device__ __noinline__ uint32_t mma_load_border(const unsigned char *row, int pos, int width)
{
    uint32_t w = 0;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        int q = pos + j, x = conv_floor_div(q, CH), c = q - x * CH;
        x = min(max(x, 0), width - 1);
        w |= (uint32_t)row[x * CH + c] << (8 * j);
    }
    return w;
}

/* km_magnitude_i for 8-bit, from accumulators a, b that are 2^-24 times integer gradients: below
 * 255^2 the float sum of squares is exact (2^-48 times an integer), above it saturates (rounding is
 * monotone); the root of an integer m < 255^2 is about 1 / (8 sqrt(m)) >= 1 / 2032 or more away
 * from a half-integer, far more than sqrt.approx's error, so rounding the approximate root is exact. */
__device__ __forceinline__ uint32_t mma_mag8(float a, float b)
{
    float m = fminf(fmaf(a, a, b * b), 65025.0f * MMA_SCALE * MMA_SCALE), r;
    asm("sqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(m));
    return __float_as_uint(fmaf(r, MMA_UNSCALE, CONV_MAGIC));
}

/* Epilogue classes, compile-time so that the common ones cost 1-4 instructions an output (DIV:
 * the exact division alone, where the dispatch has sent every other rounding elsewhere; ANY: the
 * run-time switch, for alpha images in mma). */
enum { MMA_EPI_NC, MMA_EPI_CLAMP, MMA_EPI_DIVF, MMA_EPI_MAG, MMA_EPI_ANY, MMA_EPI_DIV };

/* One output (low byte of the result) from its accumulators, 2^-24 times the sums (b: the
 * magnitude's second filter). The unscaling by 2^24 is exact, so each path rounds as its conv_epi. */
template <int NOUT, int EPI>
__device__ __forceinline__ uint32_t mma_out(const conv_params &p, float a, float b)
{
    if (NOUT == 2 && EPI == MMA_EPI_MAG) /* IMAG */
        return mma_mag8(a, b);
    if (NOUT == 2)
        return p.epi == CONV_EPI_IMAG ? mma_mag8(a, b)
                                      : conv_epi_fmag(p.maxv, a * MMA_UNSCALE, b * MMA_UNSCALE);
    if (EPI == MMA_EPI_NC) /* ROUND_NC */
        return __float_as_uint(fmaf(a, MMA_UNSCALE, CONV_MAGIC));
    if (EPI == MMA_EPI_CLAMP) /* ROUND */
        return __float_as_uint(fmaf(fminf(fmaxf(a, 0.0f), 255.0f * MMA_SCALE), MMA_UNSCALE, CONV_MAGIC));
    if (EPI == MMA_EPI_DIVF) /* DIVF and DIVF_NC (the clamp is harmless there) */
        return __float_as_uint(__fadd_rd(
            fmaf(fminf(fmaxf(a, 0.0f), p.divf_top * MMA_SCALE), p.divf_inv * MMA_UNSCALE, 0.5f),
            CONV_MAGIC));
    if (EPI == MMA_EPI_DIV) /* DIV: conv_finish's case, without the switch around it */
        return conv_epi_div(p.div, p.maxv, __float2int_rn(a * MMA_UNSCALE));
    return conv_finish(p, a * MMA_UNSCALE, 0.0f);
}

/* Stores output pair (q, q + 1) of an output row at o (q even); alpha bytes (amask) come from the
 * input row, arow[q] being its sample q (global memory, or mmapipe's ring). EDGE: the pair may
 * end or lie past the row's end. */
template <int CH, bool EDGE>
__device__ __forceinline__ void mma_put(unsigned char *o, int q, int wch, uint32_t pair,
                                        uint32_t amask, const unsigned char *arow)
{
    if (EDGE && q >= wch)
        return;
    if ((CH == 2 || CH == 4) && amask) {
        uint32_t in = *(const uint16_t *)(arow + q);
        pair = (pair & ~amask) | (in & amask);
    }
    if (!EDGE || q + 2 <= wch)
        *(uint16_t *)o = (uint16_t)pair;
    else
        *o = (unsigned char)pair;
}

/* A fragments of one input row: k-slots 2t, 2t+1 | 2t+8, 2t+9 = samples 4t..4t+3 of a segment's
 * window ([mt][s][0]: segment g, [1]: segment g + 8). */
template <int MT, int S>
__device__ __forceinline__ void mma_frag(const uint32_t (&raw)[MT][S][2], uint32_t (&a)[MT][S][4])
{
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int s = 0; s < S; s++) {
            a[mt][s][0] = mma_h2<0x4140u>(raw[mt][s][0]);
            a[mt][s][1] = mma_h2<0x4140u>(raw[mt][s][1]);
            a[mt][s][2] = mma_h2<0x4342u>(raw[mt][s][0]);
            a[mt][s][3] = mma_h2<0x4342u>(raw[mt][s][1]);
        }
}

/* Input row n (u = n mod K, compile-time) feeds output rows n - ky, whose accumulators sit in slot
 * (u - ky) mod K; ky = 0 starts output row n: its slot was finished by row n - 1. */
template <int K, int NOUT, int MT, int S>
__device__ __forceinline__ void mma_row(float (&acc)[NOUT][K][MT][4], const uint32_t (&a)[MT][S][4],
                                        const uint32_t (&bf)[NOUT][K][S][2], int u)
{
#pragma unroll
    for (int ky = 0; ky < K; ky++) {
        const int slot = ((u - ky) % K + K) % K;
#pragma unroll
        for (int o = 0; o < NOUT; o++)
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int s = 0; s < S; s++) {
                    if (ky == 0 && s == 0)
                        mma_16816<true>(acc[o][slot][mt], a[mt][s], bf[o][ky][s]);
                    else
                        mma_16816<false>(acc[o][slot][mt], a[mt][s], bf[o][ky][s]);
                }
    }
}

/* mmasep's row: a separable filter w[ky][kx] = col[ky] * row[kx] needs one Toeplitz product per
 * input row, h = T_row * in (bf[0][0]: the row factors), which then enters the K output rows it
 * touches scaled by col[ky] on the FP32 cores: S mma and 4 K FMAs an M-tile instead of K S mma.
 * Slots as mma_row's (ky = 0 starts output row n). One filter only. */
template <int K, int NOUT, int MT, int S>
__device__ __forceinline__ void mma_row_sep(float (&acc)[NOUT][K][MT][4], const uint32_t (&a)[MT][S][4],
                                            const uint32_t (&bf)[NOUT][K][S][2], const float (&cw)[K],
                                            int u)
{
    static_assert(NOUT == 1, "mmasep: one filter");
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
        float h[4];
#pragma unroll
        for (int s = 0; s < S; s++) {
            if (s == 0)
                mma_16816<true>(h, a[mt][0], bf[0][0][0]);
            else
                mma_16816<false>(h, a[mt][s], bf[0][0][s]);
        }
#pragma unroll
        for (int ky = 0; ky < K; ky++) {
            const int slot = ((u - ky) % K + K) % K;
#pragma unroll
            for (int i = 0; i < 4; i++)
                acc[0][slot][mt][i] = ky == 0 ? cw[0] * h[i] : fmaf(cw[ky], h[i], acc[0][slot][mt][i]);
        }
    }
}

/* One ring row's A words (rr: this lane's first word in the row), read, then its K products (SEP:
 * mma_row_sep's one product and K scalings). */
template <bool SEP, int K, int NOUT, int MT, int S>
__device__ __forceinline__ void mma_ring_mul(float (&acc)[NOUT][K][MT][4],
                                             const uint32_t (&bf)[NOUT][K][S][2], const float (&cw)[K],
                                             const unsigned char *rr, int u)
{
    uint32_t raw[MT][S][2], a[MT][S][4];
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int s = 0; s < S; s++)
#pragma unroll
            for (int hm = 0; hm < 2; hm++)
                raw[mt][s][hm] = *(const uint32_t *)(rr + MMA_SEG * mt + 64 * hm + 16 * s);
    __syncwarp(); /* the ring row is read: the copy issued next may refill it */
    mma_frag(raw, a);
    if constexpr (SEP)
        mma_row_sep(acc, a, bf, cw, u);
    else
        mma_row(acc, a, bf, u);
}

/* Rounds and stores a finished output row from accumulator slot `done`: lp is this lane's first
 * output (sample q0 = base + 8g + 2t of the row). */
template <int K, int CH, int NOUT, int EPI, int MT, bool BORDER>
__device__ __forceinline__ void mma_store_row(const conv_params &p, const float (&acc)[NOUT][K][MT][4],
                                              int done, unsigned char *lp, int q0, uint32_t amask,
                                              const unsigned char *arow)
{
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
        const float(&a0)[4] = acc[0][done][mt];
        const float(&a1)[4] = acc[NOUT - 1][done][mt];
        uint32_t v[4];
#pragma unroll
        for (int i = 0; i < 4; i++)
            v[i] = mma_out<NOUT, EPI>(p, a0[i], a1[i]);
        const uint32_t w0 = __byte_perm(v[0], v[1], 0x0040u), w1 = __byte_perm(v[2], v[3], 0x0040u);
        if (!BORDER && CH != 2 && CH != 4) {
            *(uint16_t *)(lp + MMA_SEG * mt) = (uint16_t)w0;
            *(uint16_t *)(lp + MMA_SEG * mt + 64) = (uint16_t)w1;
        } else {
            const int q = q0 + MMA_SEG * mt;
            mma_put<CH, BORDER>(lp + MMA_SEG * mt, q, p.wch, w0, amask, arow);
            mma_put<CH, BORDER>(lp + MMA_SEG * mt + 64, q + 64, p.wch, w1, amask, arow);
        }
    }
}

/* This lane's first output of row y (sample base + 8g + 2t), through 32-bit offsets (supports). */
__device__ __forceinline__ unsigned char *mma_out_lane(const conv_params &p, uint32_t y, int q0)
{
    return p.out + (y * (uint32_t)p.out_pitch + (uint32_t)q0);
}

template <int K, int NOUT, int MT> __device__ __forceinline__ void mma_clear(float (&acc)[NOUT][K][MT][4])
{
#pragma unroll
    for (int o = 0; o < NOUT; o++)
#pragma unroll
        for (int j = 0; j < K; j++)
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int i = 0; i < 4; i++)
                    acc[o][j][mt][i] = 0.0f;
}

#endif /* CONV_MMA_PARTS_CUH */
