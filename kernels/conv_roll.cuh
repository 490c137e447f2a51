/* conv_roll.cuh - what the row-streaming conv kernels (conv_roll.cu, conv_pipe.cu) share: a lane
 * owns 16 consecutive samples of a row (one 16-byte access for u8, two for u16); its 16 output
 * samples are rounded by the op's epilogue, packed, merged with the input's alpha samples and
 * stored with 16-byte stores (sample by sample where the row ends inside them). Internal to
 * kernels/.
 */
#ifndef CONV_ROLL_CUH
#define CONV_ROLL_CUH

#include "conv_common.cuh"

#define ROLL_TX 16                 /* samples per lane */
#define FULL 0xffffffffu

template <int CH> __device__ __forceinline__ constexpr bool roll_alpha(int i)
{
    return (CH == 2 || CH == 4) && i % CH == CH - 1;
}

/* v[c] for a run-time c < CH, through selects (a run-time index would spill v to local memory). */
template <int CH> __device__ __forceinline__ float roll_pick(const float (&v)[CH], int c)
{
    float r = v[0];
#pragma unroll
    for (int j = 1; j < CH; j++)
        r = c == j ? v[j] : r;
    return r;
}

/* One input row of this lane: 16 samples from 16 * B bytes, pieces outside the row left at 0. */
template <int B>
__device__ __forceinline__ void roll_load(const conv_params &p, int yy, int s, uint4 (&raw)[B])
{
    const unsigned char *row = p.in + (size_t)yy * p.in_pitch;
#pragma unroll
    for (int h = 0; h < B; h++) {
        const int q = s + h * (16 / B); /* first sample of the piece; 16-byte aligned */
        raw[h] = q >= 0 && q < p.wch ? *(const uint4 *)(row + (size_t)q * B) : make_uint4(0, 0, 0, 0);
    }
}

/* 32-bit word w of N 16-byte pieces. */
template <int N> __device__ __forceinline__ uint32_t roll_word(const uint4 (&raw)[N], int w)
{
    const uint4 &v = raw[w / 4];
    return (w & 3) == 0 ? v.x : (w & 3) == 1 ? v.y : (w & 3) == 2 ? v.z : v.w;
}

/* The epilogue of 16 samples: low 8 (B = 1) or 16 bits of v[i] hold the output sample. */
__device__ __forceinline__ void roll_finish(const conv_params &p, const float (&a)[ROLL_TX],
                                            uint32_t (&v)[ROLL_TX])
{
    switch (p.epi) {
    case CONV_EPI_ROUND_NC:
#pragma unroll
        for (int i = 0; i < ROLL_TX; i++)
            v[i] = __float_as_uint(a[i] + CONV_MAGIC);
        break;
    case CONV_EPI_ROUND:
#pragma unroll
        for (int i = 0; i < ROLL_TX; i++)
            v[i] = __float_as_uint(fminf(fmaxf(a[i], 0.0f), (float)p.maxv) + CONV_MAGIC);
        break;
    case CONV_EPI_DIVF_NC:
#pragma unroll
        for (int i = 0; i < ROLL_TX; i++)
            v[i] = __float_as_uint(__fadd_rd(fmaf(a[i], p.divf_inv, 0.5f), CONV_MAGIC));
        break;
    case CONV_EPI_DIVF:
#pragma unroll
        for (int i = 0; i < ROLL_TX; i++)
            v[i] = __float_as_uint(
                __fadd_rd(fmaf(fminf(fmaxf(a[i], 0.0f), p.divf_top), p.divf_inv, 0.5f), CONV_MAGIC));
        break;
    default: /* CONV_EPI_DIV */
#pragma unroll
        for (int i = 0; i < ROLL_TX; i++)
            v[i] = conv_epi_div(p.div, p.maxv, __float2int_rn(a[i]));
        break;
    }
}

/* Rounds, packs and stores output row y of this lane (samples s .. s + 15). */
template <int CH, int B>
__device__ __forceinline__ void roll_store(const conv_params &p, const float (&a)[ROLL_TX], int y,
                                           int s)
{
    constexpr int NW = 4 * B; /* 32-bit words in 16 samples */
    uint32_t v[ROLL_TX], w[NW];
    roll_finish(p, a, v);
#pragma unroll
    for (int i = 0; i < NW; i++)
        w[i] = B == 1 ? __byte_perm(__byte_perm(v[4 * i], v[4 * i + 1], 0x0040u),
                                    __byte_perm(v[4 * i + 2], v[4 * i + 3], 0x0040u), 0x5410u)
                      : __byte_perm(v[2 * i], v[2 * i + 1], 0x5410u);
    if (CH == 2 || CH == 4) { /* alpha passes through: take those bits from the input row */
        uint4 in[B];
        roll_load<B>(p, y, s, in);
#pragma unroll
        for (int i = 0; i < NW; i++) {
            uint32_t m = B == 1 ? (CH == 4 ? 0xFF000000u : 0xFF00FF00u)
                                : (CH == 2 || (i & 1) ? 0xFFFF0000u : 0u);
            w[i] = (w[i] & ~m) | (roll_word<B>(in, i) & m);
        }
    }
    unsigned char *row = p.out + (size_t)y * p.out_pitch;
    if (s + ROLL_TX <= p.wch) {
#pragma unroll
        for (int h = 0; h < B; h++)
            *(uint4 *)(row + (size_t)(s + h * (16 / B)) * B) =
                make_uint4(w[4 * h], w[4 * h + 1], w[4 * h + 2], w[4 * h + 3]);
    } else { /* the row ends inside this lane's samples */
#pragma unroll
        for (int i = 0; i < ROLL_TX; i++)
            if (s + i < p.wch)
                conv_st<B>(row, s + i, (w[i * B / 4] >> (8 * B * (i % (4 / B)))) & (B == 1 ? 0xFFu : 0xFFFFu));
    }
}

/* Input row n, as the window win of samples s - H .. s + 16 + H - 1 (H = K / 2 * CH), feeds the
 * output rows n - ky (ky < K), whose accumulators sit in slot (u - ky) mod K, u = n mod K (a
 * compile-time value in the unrolled callers, so every index is static). The weights are
 * compile-time offsets into the kernel parameters: constant-bank operands of the FMAs. */
template <int K, int CH>
__device__ __forceinline__ void roll_accumulate(const conv_params &p, float (&acc)[K][ROLL_TX],
                                                const float (&win)[ROLL_TX + 2 * (K / 2) * CH], int u)
{
    constexpr int KP = K + 2 * CONV_PAD;
#pragma unroll
    for (int ky = 0; ky < K; ky++) {
        const int slot = ((u - ky) % K + K) % K;
#pragma unroll
        for (int kx = 0; kx < K; kx++) {
            const float w = __uint_as_float(p.w[kx * KP + ky + CONV_PAD]);
#pragma unroll
            for (int i = 0; i < ROLL_TX; i++)
                if (!roll_alpha<CH>(i))
                    acc[slot][i] = fmaf(w, win[i + kx * CH], acc[slot][i]);
        }
    }
}

/* What roll takes (conv_roll_supports); pipe the same but K = 1 (no halo rows to keep: the
 * ring buys nothing there, and roll measured faster: 8K RGB8 box:1 0.0557 ms against 0.0609). */
#define ROLL_NEEDS "needs K 1, 3, 5 or 7, one filter, float-exact sums and 16-byte aligned rows"
#define PIPE_NEEDS "needs K 3, 5 or 7, one filter, float-exact sums and 16-byte aligned rows"

/* L::run<K, CH, B>(job, p) for the job's K (one of KS), channel count and depth: the shape
 * dispatch of the row-streaming launchers. */
template <class L, int... KS> static ts_status roll_dispatch(const ts_job *job, const conv_params &p)
{
    return conv_by_k<KS...>(p, [&](auto k) {
        return conv_by_bytes(p, [&](auto b) {
            return conv_by_ch(p, [&](auto ch) {
                return L::template run<decltype(k)::value, decltype(ch)::value, decltype(b)::value>(
                    job, p);
            });
        });
    });
}

#endif /* CONV_ROLL_CUH */
