/* conv_mma.cuh - the kernels of the conv variants `mma` and `mmapipe` and their launch per
 * instantiation (internal to kernels/). conv_mma.cu holds the host side (which jobs, the
 * dispatcher's launcher); conv_mma_k3.cu ... conv_mmapipe_k7.cu each instantiate one K of one
 * variant, so that make compiles them in parallel. The building blocks and the tuned constants
 * are in conv_mma_parts.cuh; the measurements that chose those in tools/results/conv-mma-tuning.md.
 *
 * The filter as a banded Toeplitz matrix on the tensor cores (see conv.cu for the op). 8-bit
 * images, K = 3, 5, 7, one filter or a magnitude pair.
 *
 * The matrix product: for one filter row ky, the horizontal correlation of a row segment is
 * out[n] = sum_j T_ky[j][n] * in[j], T_ky banded (T[j][n] = w[ky][kx] where input j is output n's
 * tap kx, j - n = kx * C - const: interleaved channels are just a band of stride C, so RGB needs no
 * de-interleaving and channels never mix). One mma.sync.m16n8k16 (FP16 in, FP32 accumulate) takes
 * A = 16 segments x 16 input samples (M x K) and B = T (16 inputs x 8 outputs): 16 segments of 8
 * outputs, the 8 + 2 r C inputs each needs fitting one k-step of 16 (K = 3) or two (K = 5, 7 on
 * RGB). A warp owns 128 consecutive output samples of a strip of rows and walks down it as `roll`
 * does: each input row, loaded once, is multiplied by the K weight matrices T_ky into the K output
 * rows it touches (rolling accumulators, compile-time slots); a finished row is rounded by the
 * project's epilogues and stored. The weight fragments are built once per block (shared memory) and
 * then live in registers; mma's blocks are persistent (grid = what fits), warps take strips in
 * turn; mmapipe launches a block per 4 strips (below).
 *
 * Fragment layout: the A and B k-index is a permutation of the window, chosen so that a lane's
 * k-slots {2t, 2t+1, 2t+8, 2t+9} (t = lane % 4) are window samples 4t..4t+3: one aligned 32-bit
 * load per segment per k-step, and one byte_perm with zero per A register turns two u8 samples b
 * into the FP16 bit patterns 0x00bb, the subnormals b * 2^-24 (exact); the accumulators hold 2^-24
 * times the sums and the epilogues scale by 2^24 (exact: a power of two). The accumulator of lane
 * (g = lane / 4, t) holds outputs 8g + 2t, +1 of segments g and g + 8: 2-byte stores, coalesced
 * over the warp.
 *
 * Exactness: u8 samples are exact in FP16 (as subnormals too), integer weights up to 2048 too, and
 * FP32 accumulation of their products is exact while |partial sums| < 2^24 (exact filters without
 * int32 accumulation): exact filters stay bit-exact. Float weights rounded to FP16 move a result by
 * at most sum |w - fp16(w)| * 255; `supports` takes a float filter only when that, plus a bound of
 * the FP32 accumulation's rounding, is <= 0.25, so the result stays within 1 step of the
 * reference. 16-bit samples are not exact in FP16: refused.
 *
 * Variant `mmapipe` (RING): the same strips fed by a warp-private ring of NS = 2K input rows in
 * shared memory, filled by cp.async (conv_common.cuh) NS - 1 rows ahead instead of P rows held
 * in registers; the border is replicated into the ring row, alpha bytes come from the ring, and
 * the registers saved let a warp take 4 M-tiles (512 outputs) at K = 3, where per-row
 * instructions, not memory, bound it. Strips inside the image take a loop unrolled by NS with
 * compile-time slots (mma_ring_steady), and a block per 4 strips lets the block scheduler balance
 * the last ones.
 *
 * Layout: interleaved u8 samples; input rows 4-byte aligned (mmapipe: 16-byte), output rows
 * 2-byte aligned.
 */
#ifndef CONV_MMA_CUH
#define CONV_MMA_CUH

#include "conv_mma_parts.cuh"

#include <type_traits>
#include <utility>

/* One warp's strip: output rows y0 .. y0 + rows - 1, samples base .. base + 128 MT - 1, input rows
 * loaded P ahead into registers. BORDER: some window or output lies outside the row (the warps
 * at a row's two ends). */
template <int K, int CH, int NOUT, int EPI, int MT, bool BORDER>
__device__ __forceinline__ void mma_strip(const conv_params &p,
                                          const uint32_t (&bf)[NOUT][K][mma_geo<K, CH>::S][2],
                                          int base, int y0, int rows, uint32_t amask)
{
    using G = mma_geo<K, CH>;
    constexpr int R = G::R, A = G::A, S = G::S, P = G::P;
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int N = rows + K - 1;                    /* input rows */
    const int pos0 = base + 8 * g - 4 * A + 4 * t; /* segment g of M-tile 0, k-step 0 */
    const int q0 = base + 8 * g + 2 * t;           /* this lane's first output sample */

    /* one input row: [mt][s][0] segment g, [mt][s][1] segment g + 8 (32-bit offsets: supports) */
    auto load_row = [&](int n, uint32_t(&r)[MT][S][2]) {
        const uint32_t roff = (uint32_t)min(max(y0 - R + n, 0), p.height - 1) * (uint32_t)p.in_pitch;
        const unsigned char *lp = p.in + (roff + (uint32_t)pos0); /* interior: constant offsets */
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int s = 0; s < S; s++)
#pragma unroll
                for (int hm = 0; hm < 2; hm++) {
                    const int off = MMA_SEG * mt + 64 * hm + 16 * s, pos = pos0 + off;
                    if (!BORDER)
                        r[mt][s][hm] = *(const uint32_t *)(lp + off);
                    else if (pos >= 0 && pos + 4 <= p.wch)
                        r[mt][s][hm] = *(const uint32_t *)(p.in + (roff + (uint32_t)pos));
                    else
                        r[mt][s][hm] = mma_load_border<CH>(p.in + roff, pos, p.width);
                }
    };

    float acc[NOUT][K][MT][4];
    mma_clear(acc);
    uint32_t raw[P][MT][S][2];
#pragma unroll
    for (int u = 0; u < P; u++)
        load_row(u, raw[u]);

    for (int n0 = 0; n0 < N; n0 += P) {
#pragma unroll
        for (int u = 0; u < P; u++) {
            const int n = n0 + u; /* rows n >= N (the last group) are clamped rows, not stored */
            uint32_t a[MT][S][4];
            mma_frag(raw[u], a);
            load_row(n + P, raw[u]); /* past the strip: a clamped row, unused (no copies) */
            mma_row(acc, a, bf, u % K);
            /* output row m = n - (K - 1) is complete (its slot restarts fresh at row n + 1) */
            const int m = n - (K - 1);
            if (m >= 0 && m < rows) {
                const uint32_t y = (uint32_t)(y0 + m);
                mma_store_row<K, CH, NOUT, EPI, MT, BORDER>(p, acc, (u + 1) % K,
                                                           mma_out_lane(p, y, q0), q0, amask,
                                                           p.in + y * (uint32_t)p.in_pitch);
            }
        }
    }
}

/* The same strip fed by a warp-private ring of NS input rows in shared memory (conv_common.cuh:
 * cp.async, NS - 1 rows in flight without registers): samples base - 16 .. base + 128 MT + 15
 * of each row, the border replicated into the ring row by BORDER warps. */
template <int K, int CH, int NOUT, int EPI, int MT, bool BORDER, bool SEP>
__device__ __forceinline__ void mma_ring_strip(const conv_params &p,
                                               const uint32_t (&bf)[NOUT][K][mma_geo<K, CH>::S][2],
                                               const float (&cw)[K], int base, int y0, int rows,
                                               uint32_t amask, unsigned char *ring)
{
#if __CUDA_ARCH__ >= 800
    using G = mma_geo<K, CH>;
    constexpr int R = G::R, A = G::A, H = G::H, RB = MMA_RING_ROW(MT), NS = mma_ns<K>();
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int N = rows + K - 1, s0 = base - 16, q0 = base + 8 * g + 2 * t;
    const int rd0 = 16 + 8 * g - 4 * A + 4 * t; /* ring offset of segment g, M-tile 0, k-step 0 */
    /* rows copied ahead; alpha images keep R more rows in the ring: an output row's alpha comes
     * from its centre input row, R rows back */
    constexpr bool ALPHA = CH == 2 || CH == 4;
    constexpr int D = ALPHA ? NS - 1 - R : NS - 1;
    static_assert(D >= 1, "ring too short");
    /* interior strips: this lane's chunk addresses once per strip, 32-bit row offsets (supports),
     * no bounds checks (as fast as conv_ring_fill's checked path) */
    const uint32_t ring_lane = (uint32_t)__cvta_generic_to_shared(ring) + 16 * lane;
    const unsigned char *in_lane = BORDER ? p.in : p.in + (s0 + 16 * lane);
    auto issue = [&](int n) {
        const int yy = min(max(y0 - R + n, 0), p.height - 1);
        if (!BORDER)
            conv_ring_fill_in<RB / 16>(ring_lane + (n % NS) * RB,
                                       in_lane + (uint32_t)yy * (uint32_t)p.in_pitch, lane);
        else
            conv_ring_fill<1, RB / 16>(ring + (n % NS) * RB, p.in + (size_t)yy * p.in_pitch,
                                       s0, p.wch, lane);
    };

    float acc[NOUT][K][MT][4];
    mma_clear(acc);
    __syncwarp(); /* the last strip's alpha reads of the ring are done */
    conv_ring_start<D>(N, issue);
    for (int n0 = 0; n0 < N; n0 += K) {
#pragma unroll
        for (int u = 0; u < K; u++) {
            const int n = n0 + u;
            if (n >= N) /* not a break: the unrolled slots must stay compile-time */
                continue;
            if (ALPHA)
                __syncwarp(); /* the alpha read from the slot refilled next is done */
            conv_ring_next<D>(n, N, issue); /* row n has landed */
            unsigned char *rrow = ring + (n % NS) * RB;
            if (BORDER) {
                conv_ring_border<CH, 1, H>(rrow, s0, RB, p.wch, lane);
                __syncwarp();
            }
            mma_ring_mul<SEP>(acc, bf, cw, rrow + rd0, u);
            const int m = n - (K - 1);
            if (m >= 0) /* alpha from ring row n - R (input row y0 + m), sample q at 16 + q - base */
                mma_store_row<K, CH, NOUT, EPI, MT, BORDER>(
                    p, acc, (u + 1) % K, mma_out_lane(p, (uint32_t)(y0 + m), q0), q0, amask,
                    ring + ((n - R) % NS) * RB + 16 - base);
        }
    }
#endif
}

/* f(std::integral_constant<int, j>()) for j = 0 .. N - 1: an unrolled loop whose index is a
 * compile-time constant inside f (register arrays need compile-time indices). */
template <typename F, int... J>
__device__ __forceinline__ void mma_unroll_seq(F &&f, std::integer_sequence<int, J...>)
{
    (f(std::integral_constant<int, J>()), ...);
}
template <int N, typename F> __device__ __forceinline__ void mma_unroll(F &&f)
{
    mma_unroll_seq(f, std::make_integer_sequence<int, N>());
}

/* One strip of the task list: output samples base .. base + 128 MT - 1 of output rows
 * y0 .. y0 + rows - 1 (tasks run along a row band first). */
struct mma_task {
    int base, y0, rows;
};
__device__ __forceinline__ mma_task mma_task_at(long long task, int nsx, int sh, int seg, int height)
{
    mma_task t;
    t.base = (int)(task % nsx) * seg;
    t.y0 = (int)(task / nsx) * sh;
    t.rows = min(sh, height - t.y0);
    return t;
}

/* The strips mma_ring_steady takes: inside the image on every side (no border samples, no clamped
 * rows) and output rows a multiple of the ring (NS), so that input row n sits in a compile-time
 * slot of a loop unrolled by NS rows. */
template <int K, int MT>
__device__ __forceinline__ bool mma_ring_is_steady(const conv_params &p, const mma_task &t)
{
    constexpr int R = K / 2;
    return t.base > 0 && t.base + MMA_RING_ROW(MT) - 16 <= p.wch && t.rows % mma_ns<K>() == 0 &&
           t.y0 >= R && t.y0 + t.rows + R <= p.height;
}

/* mma_ring_strip for a steady strip. Unrolled by NS rows, each row's ring slot and accumulator
 * slot are compile-time and the lane's addresses advance by a pitch a row: per row, no address
 * arithmetic and no checks but whether a copy is left to issue (the general loop spent about 40
 * of 136 instructions a row on those). */
template <int K, int CH, int NOUT, int EPI, int MT, bool SEP>
__device__ __forceinline__ void mma_ring_steady(const conv_params &p,
                                                const uint32_t (&bf)[NOUT][K][mma_geo<K, CH>::S][2],
                                                const float (&cw)[K], const mma_task &tk,
                                                uint32_t amask, unsigned char *ring)
{
#if __CUDA_ARCH__ >= 800
    using G = mma_geo<K, CH>;
    constexpr int R = G::R, A = G::A, RB = MMA_RING_ROW(MT), NS = mma_ns<K>();
    constexpr bool ALPHA = CH == 2 || CH == 4;
    constexpr int D = ALPHA ? NS - 1 - R : NS - 1; /* as mma_ring_strip */
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int N = tk.rows + K - 1, q0 = tk.base + 8 * g + 2 * t;
    const uint32_t wr = (uint32_t)__cvta_generic_to_shared(ring) + 16 * lane; /* slot 0 chunk */
    const unsigned char *rr = ring + (16 + 8 * g - 4 * A + 4 * t);             /* slot 0 word */
    const size_t ipitch = p.in_pitch, opitch = p.out_pitch;
    const unsigned char *src = /* this lane's chunk of input row 0 (32-bit offsets: supports) */
        p.in + ((uint32_t)(tk.y0 - R) * (uint32_t)p.in_pitch + (uint32_t)(tk.base - 16 + 16 * lane));
    unsigned char *lp = mma_out_lane(p, (uint32_t)tk.y0, q0);

    float acc[NOUT][K][MT][4];
    mma_clear(acc);
    __syncwarp(); /* the last strip's alpha reads of the ring are done */
#pragma unroll
    for (int j = 0; j < D; j++) {
        conv_ring_fill_in<RB / 16>(wr + j * RB, src, lane);
        src += ipitch;
        conv_cp_commit();
    }
    /* input row n in ring slot J = n mod NS (compile-time); STORE: row n finishes output n - K + 1 */
    auto row = [&](int n, auto slot, bool store) {
        constexpr int J = decltype(slot)::value, U = J % K;
        if (ALPHA)
            __syncwarp(); /* the alpha read from the slot refilled next is done */
        conv_ring_next<D>(n, N, [&](int) { /* rows follow each other: src is row n + D */
            conv_ring_fill_in<RB / 16>(wr + (J + D) % NS * RB, src, lane);
            src += ipitch;
        });
        mma_ring_mul<SEP>(acc, bf, cw, rr + J * RB, U);
        if (store) { /* alpha from ring row n - R, sample q at 16 + q - base */
            mma_store_row<K, CH, NOUT, EPI, MT, false>(p, acc, (U + 1) % K, lp, q0, amask,
                                                       ring + ((J - R + NS) % NS * RB + 16 - tk.base));
            lp += opitch;
        }
    };
    /* rows 0 .. K - 2 finish no output row; then groups of NS rows, the first in slot K - 1 */
    mma_unroll<K - 1>([&](auto j) { row(decltype(j)::value, j, false); });
    for (int n0 = K - 1; n0 < N; n0 += NS)
        mma_unroll<NS>([&](auto j) {
            row(n0 + decltype(j)::value, std::integral_constant<int, (K - 1 + decltype(j)::value) % NS>(), true);
        });
#endif
}

/* Blocks an SM must hold (the register cap): more warps hide more latency, but spills and fewer
 * rows in flight a warp can cost more; see the constants above. */
template <int K, int NOUT, bool RING> constexpr int mma_min_blocks()
{
    if (RING)
        return K == 3 && NOUT == 1 ? MMA_MINB_RING3 : 1;
    return K == 3 ? (NOUT == 2 ? MMA_MINB3_PAIR : MMA_MINB3) : K == 5 ? MMA_MINB5 : MMA_MINB7;
}

template <int K, int CH, int NOUT, int EPI, int MT, bool RING, bool SEP>
__global__ void __launch_bounds__(32 * MMA_WARPS, (mma_min_blocks<K, NOUT, RING>()))
    conv_mma_kernel(const __grid_constant__ conv_params p, int sh, int nsx, long long ntasks)
{
    static_assert(!SEP || (RING && NOUT == 1), "mmasep: the ring strips, one filter");
#if __CUDA_ARCH__ >= 800
    using G = mma_geo<K, CH>;
    constexpr int H = G::H, A = G::A, S = G::S;
    constexpr int NT = NOUT * K * S * MMA_DIAG;
    __shared__ unsigned short diag[NT];

    /* T's diagonals as FP16: entry (o, ky, s, e) is the weight of input j = n + e - 7 of k-step s */
    for (int i = threadIdx.x; i < NT; i += blockDim.x) {
        const int e = i % MMA_DIAG - 7, s = i / MMA_DIAG % S, ky = i / (MMA_DIAG * S) % K;
        const int o = i / (MMA_DIAG * S * K), d = e - 4 * A + 16 * s + H; /* = kx * CH */
        float w = 0.0f;
        if (d >= 0 && d % CH == 0 && d / CH < K) /* SEP: the row factors, as filter row 0 */
            w = SEP ? (ky == 0 ? __uint_as_float(p.srow[d / CH]) : 0.0f)
                    : __uint_as_float(p.w[(o * K + d / CH) * p.kp + ky + CONV_PAD]);
        diag[i] = __half_as_ushort(__float2half_rn(w));
    }
    __syncthreads();

    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    uint32_t bf[NOUT][K][S][2]; /* B fragments: rows k = 2t, 2t+1 | 2t+8, 2t+9 of column n = g */
#pragma unroll
    for (int o = 0; o < NOUT; o++)
#pragma unroll
        for (int ky = 0; ky < K; ky++)
#pragma unroll
            for (int s = 0; s < S; s++) {
                const unsigned short *dg = diag + ((o * K + ky) * S + s) * MMA_DIAG + 7 + 4 * t - g;
                bf[o][ky][s][0] = dg[0] | (uint32_t)dg[1] << 16;
                bf[o][ky][s][1] = dg[2] | (uint32_t)dg[3] << 16;
            }
    float cw[K]; /* SEP: the column factors */
#pragma unroll
    for (int ky = 0; ky < K; ky++)
        cw[ky] = SEP ? __uint_as_float(p.scol[ky]) : 0.0f;
    /* alpha bytes of a lane's output pairs: q = 8g + 2t (mod 128) */
    const uint32_t amask = (CH == 2 || (CH == 4 && (t & 1))) ? 0xFF00u : 0u;

    const long long wstride = (long long)gridDim.x * MMA_WARPS;
    for (long long task = (long long)blockIdx.x * MMA_WARPS + (threadIdx.x >> 5); task < ntasks;) {
        const mma_task tk = mma_task_at(task, nsx, sh, MMA_SEG * MT, p.height);
        const int base = tk.base, y0 = tk.y0, rows = tk.rows;
        if constexpr (RING) {
            extern __shared__ __align__(16) unsigned char mma_smem[];
            constexpr int NS = mma_ns<K>();
            unsigned char *ring = mma_smem + (threadIdx.x >> 5) * (NS * MMA_RING_ROW(MT));
            if (mma_ring_is_steady<K, MT>(p, tk))
                mma_ring_steady<K, CH, NOUT, EPI, MT, SEP>(p, bf, cw, tk, amask, ring);
            else if (base == 0 || base + MMA_RING_ROW(MT) - 16 > p.wch)
                mma_ring_strip<K, CH, NOUT, EPI, MT, true, SEP>(p, bf, cw, base, y0, rows, amask, ring);
            else
                mma_ring_strip<K, CH, NOUT, EPI, MT, false, SEP>(p, bf, cw, base, y0, rows, amask, ring);
        } else if (base - 4 * A < 0 ||
                   base + MMA_SEG * (MT - 1) + 136 - 4 * A + 16 * (S - 1) > p.wch) {
            mma_strip<K, CH, NOUT, EPI, MT, true>(p, bf, base, y0, rows, amask);
        } else {
            mma_strip<K, CH, NOUT, EPI, MT, false>(p, bf, base, y0, rows, amask);
        }
        task += wstride;
    }
#endif
}

/* ---------------------------------------------------------------- launch of one instantiation */

/* M-tiles per warp: two at K = 3 with one filter (per-row costs shared by 8 outputs a lane), one
 * where the registers are needed for the accumulators. */
template <int K, int NOUT, bool RING> constexpr int mma_mt()
{
    if (RING) /* no rows held in registers: room for wider warps (less per-row work an output) */
        return K == 3 && NOUT == 1 ? MMA_RING_MT3 : MMA_RING_MT;
    return K == 3 && NOUT == 1 ? MMA_MT3 : 1;
}

template <int K, int CH, int NOUT, int EPI, bool RING, bool SEP>
static ts_status mma_launch(const ts_job *job, const conv_params &p)
{
    constexpr int MT = mma_mt<K, NOUT, RING>();
    auto kernel = conv_mma_kernel<K, CH, NOUT, EPI, MT, RING, SEP>;
    constexpr int NS = mma_ns<K>();
    const size_t smem = RING ? (size_t)MMA_WARPS * NS * MMA_RING_ROW(MT) : 0;
    const ts_status st = gpu_allow_smem((const void *)kernel, smem);
    if (st != TS_OK)
        return st;
    const int nsx = (p.wch + MMA_SEG * MT - 1) / (MMA_SEG * MT);
    /* mma: strips whose input rows fill whole groups of P (no rows computed in vain); mmapipe:
     * MMA_RING_SH3 rows at K = 3, MMA_RING_SH beyond, rounded to a multiple of NS so that whole
     * strips take mma_ring_steady (mmasep: MMA_SEP_SH5, MMA_SEP_SH7, multiples already) */
    constexpr int P = mma_geo<K, CH>::P;
    constexpr int RSH = SEP ? (K == 7 ? MMA_SEP_SH7 : MMA_SEP_SH5)
                            : ((K == 3 ? MMA_RING_SH3 : MMA_RING_SH) + NS / 2) / NS * NS;
    const int sh = job->param > 0 ? job->param
                   : RING       ? (RSH > NS ? RSH : NS)
                                : (MMA_SH + K - 1 + P - 1) / P * P - (K - 1);
    const long long ntasks = (long long)nsx * ((p.height + sh - 1) / sh);
    /* mma: persistent blocks (the weight fragments built once per block, warps take strips in
     * turn). mmapipe: a block per MMA_WARPS strips, so that the block scheduler hands out the
     * strips as SMs free up (with persistent blocks the last strips of the static round robin
     * ran on a partly idle GPU). */
    long long blocks = (ntasks + MMA_WARPS - 1) / MMA_WARPS;
    if (!RING) { /* the occupancy query only where the grid uses it: not on every mmapipe launch */
        int fit;
        const ts_status fst =
            gpu_resident_blocks((const void *)kernel, 32 * MMA_WARPS, smem, job->dev, "conv mma", &fit);
        if (fst != TS_OK)
            return fst;
        blocks = blocks < fit ? blocks : fit;
    }
    kernel<<<gpu_grid(blocks), 32 * MMA_WARPS, smem,
             (cudaStream_t)job->stream>>>(p, sh, nsx, ntasks);
    LAUNCH_CHECK("conv_mma_kernel");
    return TS_OK;
}

/* The compile-time epilogue: gray and RGB (and every channel count in mmapipe) get the common
 * roundings inlined and the exact division (the one rounding left for one filter) out of line,
 * the rest the switch. A magnitude comes only from an exact 3 x 3 pair (supports): its rounding
 * is IMAG, and no kernel is compiled for it at K 5 and 7. */
template <int K, int CH, bool RING>
static ts_status mma_epi(const ts_job *job, const conv_params &p)
{
    if constexpr (K == 3) {
        if (p.nout == 2)
            return mma_launch<K, CH, 2, CH == 1 || CH == 3 ? MMA_EPI_MAG : MMA_EPI_ANY, RING, false>(job, p);
    } else if (p.nout == 2) {
        return ts_fail(TS_ERR_UNSUPPORTED, "conv mma: a magnitude at K %d", K);
    }
    if constexpr (RING || CH == 1 || CH == 3) { /* mmapipe: for alpha images too */
        switch (p.epi) {
        case CONV_EPI_ROUND_NC: return mma_launch<K, CH, 1, MMA_EPI_NC, RING, false>(job, p);
        case CONV_EPI_ROUND: return mma_launch<K, CH, 1, MMA_EPI_CLAMP, RING, false>(job, p);
        case CONV_EPI_DIVF:
        case CONV_EPI_DIVF_NC: return mma_launch<K, CH, 1, MMA_EPI_DIVF, RING, false>(job, p);
        default: return mma_launch<K, CH, 1, MMA_EPI_DIV, RING, false>(job, p); /* CONV_EPI_DIV */
        }
    } else {
        return mma_launch<K, CH, 1, MMA_EPI_ANY, RING, false>(job, p);
    }
}

/* mmasep's: float filters only (supports), rounded by rint, clamped where the sum may leave. */
template <int K, int CH> static ts_status mma_epi_sep(const ts_job *job, const conv_params &p)
{
    if (p.epi == CONV_EPI_ROUND_NC)
        return mma_launch<K, CH, 1, MMA_EPI_NC, true, true>(job, p);
    if (p.epi == CONV_EPI_ROUND)
        return mma_launch<K, CH, 1, MMA_EPI_CLAMP, true, true>(job, p);
    return ts_fail(TS_ERR_UNSUPPORTED, "conv mmasep: float filters only");
}

/* The launch of a job of filter size K (instantiated by conv_mma_k<K>.cu, conv_mmapipe_k<K>.cu,
 * conv_mmasep_k<K>.cu: SEP, the separable rows of mmasep, which are ring strips). */
template <int K, bool RING, bool SEP> ts_status mma_ch(const ts_job *job, const conv_params &p)
{
    if constexpr (SEP) {
        switch (p.ch) {
        case 1: return mma_epi_sep<K, 1>(job, p);
        case 2: return mma_epi_sep<K, 2>(job, p);
        case 3: return mma_epi_sep<K, 3>(job, p);
        default: return mma_epi_sep<K, 4>(job, p);
        }
    } else {
        switch (p.ch) {
        case 1: return mma_epi<K, 1, RING>(job, p);
        case 2: return mma_epi<K, 2, RING>(job, p);
        case 3: return mma_epi<K, 3, RING>(job, p);
        default: return mma_epi<K, 4, RING>(job, p);
        }
    }
}

#endif /* CONV_MMA_CUH */
