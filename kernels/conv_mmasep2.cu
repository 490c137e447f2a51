/* conv_mmasep2.cu - convolution, variants `mmasep2` and `mmasep2b`: a separable float filter
 * (gauss) with both of its passes on the tensor cores, 8-bit gray and RGB, K = 5 and 7; and
 * `mmabox`, the box filter K 3 .. 31 on the same strips, bit-exact (at the end of the file).
 * conv.cu has the op; the building blocks are conv_mma_parts.cuh's.
 *
 * mmasep (conv_mma.cuh) multiplies each input row by the row factors on the tensor cores and then
 * spends K FP32 FMAs an output on the column factors: at K = 7 those FMAs are most of what it
 * issues. Here the column pass is a matrix product too, by choosing the first product's layout so
 * that its result is already the second one's A operand (no shuffles):
 *
 *   row pass  (mma.sync m16n8k16, FP16 in, FP32 accumulate): C[m][n] = sum_k T[m][k] in[n][k],
 *             m = 16 output samples of a tile, n = 8 image rows of a block, k = 16 input samples
 *             (three k-steps: the chunks of 16 samples left of, under and right of the tile, so
 *             the halo may be up to 16 samples). A = the row factors' banded Toeplitz matrix
 *             (constant, in registers), B = the rows: lane (g, t) takes row g's samples 4t..4t+3
 *             of a chunk with one 32-bit load and two byte_perms (the u8 -> FP16 subnormal trick
 *             of conv_mma.cuh), and a chunk serves the three tiles that overlap it.
 *   column pass (mma.sync m16n8k16 again): out[m][y] = sum_j h[m][j] V[j][y], m = the same 16
 *             samples, y = 8 output rows, j = the 16 rows of two row blocks (the K - 1 + 8 an
 *             output block needs), V[j][y] = c[j - y]. The row pass's accumulators of lane (g, t),
 *             rows 2t and 2t + 1 of samples g and g + 8, rounded to FP16 pairs, are exactly its A
 *             fragment (k-slots 2t, 2t + 1 of the older block, 2t + 8, 2t + 9 of the newer).
 *
 * Exactness: the row pass is mmasep's (FP16 row factors, exact products, FP32 sums); its result h
 * enters the column pass rounded to FP16 once (2^-11 of it) and is multiplied by the FP16 column
 * factors. `supports` bounds the whole arithmetic for the job's filter (sep2_ok below) and takes it
 * only within 0.25 of a step, so that every result stays within 1 step of the reference (gauss:7:
 * about 0.19, gauss:5: 0.24). The row factors enter scaled by 2^15 (exact: FP16 holds r 2^15 while
 * |r| < 2), so that h, 2^-9 times the row sums, stays in FP16's normal range, and the epilogue
 * unscales by 2^9.
 *
 * Work: a warp owns SEP2_NT tiles (16 NT samples) of a strip of rows and walks down it a block of
 * 8 rows at a time, its input rows coming through a warp-private cp.async ring of NB blocks
 * in shared memory (NB - 1 in flight), rows clamped at the top and bottom, the border
 * replicated into the ring at the sides (conv_ring_border). The M index of a tile is permuted
 * (m = g is sample 2g, m = g + 8 sample 2g + 1) so that a lane's results are pairs of neighbours.
 *
 * Stores: a lane's pairs are rows 2t and 2t + 1 of the block, so a warp's 2-byte store would write
 * 4 rows x 16 bytes, half sectors. So the warp writes its 8 x 16 NT-byte output block into shared
 * memory first (rows SEP2_SP bytes apart: the 2-byte writes of a store hit distinct banks) and then
 * stores it as 16-byte chunks, each quarter of the warp one row's 128 contiguous bytes: whole
 * sectors, NT / 4 STG.128 a lane and block instead of 2 NT STG.U16. In the strips at a row's ends
 * (BORDER) a chunk past the row's end is left out and the one across it written byte by byte (but
 * for the one shape where that spilled, sep2_geo::BSTAGE: 2-byte stores with bounds there).
 *
 * Strips: job->param output rows (a multiple of 8; sep2_default_sh by default). A strip of S rows reads
 * S + 8 input rows (whole blocks), so short strips read more, but they spread better over the SMs.
 *
 * Variant `mmasep2b`: the loads. A warp's ring row is samples base - 16 .. base + 16 NT + 15, 160
 * bytes at NT = 8, which touch 6 sectors of 32 bytes however the row is aligned (the two halos
 * each take a sector for 16 bytes): 1.5 sectors read for each one stored, where mmasep's 288-byte
 * rows for 256 outputs take 1.25. mmasep2b gives the 4 warps of a block one ring of strips side by
 * side (544-byte rows for 512 outputs: 18 sectors, 1.125 a sector stored), its copies spread over
 * the block's threads, at the cost of a block barrier a row block (the warps run the same strip
 * rows, and those past a row's end compute what they do not store). Everything else is mmasep2's.
 *
 * Layout: interleaved u8 samples, 1 or 3 channels (no alpha); input and output rows 16-byte
 * aligned (the ring's copies, the staged stores).
 */
#include "conv_mma_parts.cuh"
#include "mma_int8.cuh"

#include <string.h>

/* A strip kernel's shape: CH channels, C1 chunks of 16 samples of halo each side of a tile (the
 * row pass's k-steps: S = 2 C1 + 1 of k16, or for box C1 of k32, and one of k16 unless SHIFT),
 * NBK row blocks of 8 an output block reads (the column pass: NBK / 2 k16 products and a k8 one
 * when NBK is odd), SPLIT: the row sums pass FP16's integers, so the column pass takes their two
 * bytes through int8 products, BOX: the box filter's arithmetic (mmabox below), NB: ring blocks.
 * gauss:5 and gauss:7 are C1 = 1, NBK = 2, their K compile-time (K_: the factors' loads
 * uniform); box's K is the job's. NT, the tiles of 16 output samples a warp: 8 (128 registers,
 * no spills; 4 read 4 sectors a row for 2 stored, 8 read 6 for 4), 4 from NBK 4 (the row sums
 * kept, 2 NBK NT words, would not fit; 8 there at 3 blocks an SM measured no faster). */
template <int CH_, int C1_, int NBK_, bool SPLIT_, bool BOX_, int K_ = 0, bool SHIFT_ = false, int NB_ = 3>
struct sep2_geo {
    static constexpr int CH = CH_, C1 = C1_, NBK = NBK_, S = 2 * C1_ + 1, K = K_;
    /* box's row pass: C1 k32 steps and a k16 one (HALF) over the tile's samples [-16 C1, 16 C1 +
     * 16); SHIFT (a halo of at most 16 C1 - 8 samples): C1 k32 steps over [-16 C1 + 8, 16 C1 + 8) */
    static constexpr bool SHIFT = SHIFT_, HALF = BOX_ && !SHIFT_;
    static constexpr int WOFF = SHIFT_ ? 8 : 0; /* bytes into a chunk where a k-step's B starts */
    static constexpr int NB = NB_; /* ring blocks of 8 rows, NB - 1 in flight (box: 3 or 4 by shape) */
    static constexpr bool SPLIT = SPLIT_, BOX = BOX_;
    static constexpr int NT = NBK_ <= 3 ? 8 : 4;
    /* the border strips' output staged too (see Stores above), but for RGB box K 23-25, where it
     * spilled registers and ran 3.6% slower (H100 8K: 0.1195 ms against 0.1154), the 2-byte stores */
    static constexpr bool BSTAGE = !(CH_ == 3 && C1_ == 3 && NBK_ == 4);
    /* box: 4 blocks an SM (launch bounds of 128 registers: no shape spills; a few % faster than
     * unbounded, nvidia-h100-box-2026-11-27c.md) */
    static constexpr int MINB = BOX_ ? 4 : 1;
    static_assert(NBK_ >= 2 && C1_ >= 1, "mmasep2: an output block reads two row blocks or more");
};
template <int CH, int K> using sep2_gauss = sep2_geo<CH, 1, 2, false, false, K>;

/* ring row of W warps' strips: W NT + 2 C1 chunks and 16 bytes of pad, an odd number of 16-byte
 * units (NT even), so that the 8 rows a warp's load reads hit 8 distinct bank groups */
#define SEP2_RB(W, NT, C1) (16 * ((W) * (NT) + 2 * (C1) + 1))
#define SEP2_SP(NT) (16 * (NT) + 16) /* staged output row: 16 NT bytes and 16 of pad */
/* shared memory of a block of MMA_WARPS warps: its rings (one a warp, W = 1, or one shared by
 * all, W = MMA_WARPS), then a stage a warp */
#define SEP2_SMEM(W, NT, C1, NB) ((MMA_WARPS / (W)) * (NB) * 8 * SEP2_RB(W, NT, C1) + MMA_WARPS * 8 * SEP2_SP(NT))
#define SEP2_HSCALE 32768.0f      /* 2^15: the row factors' scale */
#define SEP2_UNSCALE 512.0f       /* 2^24 / 2^15: the inputs' 2^-24 and the row factors' 2^15 */
/* output rows a strip by default (job->param overrides): 32 (shorter strips spread better; 64
 * and 128 measured slower at 8K RGB8), but 64 for one ring a block on RGB (its strips are 4
 * times as wide, fewer of them: 64 measured faster than 32 at 8K RGB8, gauss:5 and gauss:7; on
 * 8K gray8 gauss:7 slower, 0.0376 ms against 0.0344); and longer where an output block reads
 * more row blocks (a strip reads 8 (NBK - 1) rows twice) or a warp holds 4 tiles: gray 64 at NBK
 * 3 and 4, 128 from NBK 5, RGB 128 from NBK 4 (box, 8K: box:19 rgb8 0.1096 at 128, 0.1187 at 64,
 * 0.1131 at 256; box:17 rgb8 0.1002 at 64, 0.1013 at 128: tools/results/nvidia-h100-box-2026-11-27c.md;
 * since the border strips stage their stores, resampled at 15:29 UTC, median of 20, two runs:
 * gray8 box:11-17 0.0313-0.0350 ms at 48 rows, 0.0300-0.0334 at 64, 0.0343-0.0376 at 96; box:27-31
 * 0.0423-0.0428 at 64, 0.0415-0.0417 at 128; RGB's defaults still the fastest or within 0.2%:
 * tools/results/nvidia-h100-headroom-2026-11-27g.md) */
template <int W, class G> constexpr int sep2_default_sh()
{
    return W == 1 ? 32 : G::CH == 3 ? (G::NBK >= 4 ? 128 : 64) : (G::NBK >= 5 ? 128 : G::NBK >= 3 ? 64 : 32);
}

/* d += a * b, m16n8k8 (the column pass's last row block when NBK is odd). */
__device__ __forceinline__ void sep2_mma1688(float (&d)[4], const uint32_t (&a)[2], uint32_t b)
{
#if __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
        "{%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(b));
#endif
}

/* mmabox's row factor (0 or 1) of output x of a tile against sample kk of k-step s (chunks 2s,
 * 2s + 1 of the tile's window, whose chunk C1 is the tile's own; SHIFT: WOFF samples on). */
template <class G> __device__ __forceinline__ uint32_t sep2_box_w(const conv_params &p, int s, int x, int kk)
{
    const int h = p.k / 2 * G::CH, d = 32 * s + kk - 16 * G::C1 + G::WOFF - x + h;
    return (unsigned)d <= (unsigned)(2 * h) && d % G::CH == 0;
}

/* Row factor of tile sample 16 (s - C1) + j (chunk s of the S) for the tile's output x, as FP16
 * bits, scaled by 2^15. */
template <class G>
__device__ __forceinline__ uint32_t sep2_hw(const conv_params &p, int s, int x, int j)
{
    const int k = G::K, d = 16 * (s - G::C1) + j - x + k / 2 * G::CH; /* = kx * CH */
    const float w = d >= 0 && d % G::CH == 0 && d / G::CH < k ? __uint_as_float(p.srow[d / G::CH]) * SEP2_HSCALE : 0.0f;
    return __half_as_ushort(__float2half_rn(w));
}

/* Column factor c[j] (0 outside 0 .. K - 1) as FP16 bits (BOX: 1 = 0x3c00). */
template <class G> __device__ __forceinline__ uint32_t sep2_vh(const conv_params &p, int j)
{
    const int k = G::K ? G::K : p.k;
    if (G::BOX)
        return (unsigned)j < (unsigned)k ? 0x3c00u : 0u;
    return j >= 0 && j < k ? __half_as_ushort(__float2half_rn(__uint_as_float(p.scol[j]))) : 0u;
}

/* Stores a lane's pair (x, x + 1) of an output row (EDGE: the pair may end or lie past the row). */
template <bool EDGE>
__device__ __forceinline__ void sep2_put(unsigned char *o, int x, int wch, uint32_t pair)
{
    if (!EDGE || x + 2 <= wch)
        *(uint16_t *)o = (uint16_t)pair;
    else if (x < wch)
        *o = (unsigned char)pair;
}

/* Stores a staged 16-byte chunk of an output row that starts at sample x (EDGE: the chunk may end
 * or lie past the row's wch samples: only the samples inside are written). */
template <bool EDGE>
__device__ __forceinline__ void sep2_put16(unsigned char *o, int x, int wch, const unsigned char *chunk)
{
    if (!EDGE || x + 16 <= wch) {
        *(uint4 *)o = *(const uint4 *)chunk;
    } else {
#pragma unroll 1
        for (int b = 0; b < wch - x; b++)
            o[b] = chunk[b];
    }
}

/* f(integral_constant<0>), ..., f(integral_constant<N - 1>). */
template <int N, class F> __device__ __forceinline__ void sep2_unroll(F &&f)
{
    if constexpr (N > 0) {
        sep2_unroll<N - 1>(f);
        f(std::integral_constant<int, N - 1>());
    }
}

/* The constants of a strip: the row pass's A (S k-steps), the column pass's B (NBK / 2 k16
 * products, vb8 the k8 one), the epilogue's scale and offset, the row sums' start. */
template <class G> struct sep2_consts {
    uint32_t ha[G::BOX ? G::C1 + G::HALF : G::S][4]; /* BOX: C1 k32 steps of 8-bit factors (and
                                                      * the k16 one's in [C1][0], [C1][1]) */
    uint32_t vb[G::NBK / 2][2];
    uint32_t vb8;
    uint32_t vq[(G::NBK + 1) / 2]; /* SPLIT: the column pass's B as bytes, a block pair each */
    float ea, eb;
    int h0i;
};

/* The box's constants made opaque to the compiler, so that they stay in registers: ptxas otherwise
 * rebuilt some from the lane index inside the border strips' loop (the split column factors vq
 * every step, ~55 instructions of a step's ~470 at NBK 5; the interior strips kept them). H100, 8K,
 * median of 20: gray8 box:27-31 0.0462-0.0470 -> 0.0452-0.0456 ms, box:17 0.0385-0.0387 -> 0.0378,
 * rgb8 box:27-31 -1%, the rest unchanged (tools/results/nvidia-h100-headroom-2026-11-27g.md). */
template <class G> __device__ __forceinline__ void sep2_pin(sep2_consts<G> &k)
{
#pragma unroll
    for (int s = 0; s < G::C1 + G::HALF; s++)
#pragma unroll
        for (int e = 0; e < 4; e++)
            asm volatile("" : "+r"(k.ha[s][e]));
    if constexpr (G::SPLIT) {
#pragma unroll
        for (int s = 0; s < (G::NBK + 1) / 2; s++)
            asm volatile("" : "+r"(k.vq[s]));
    } else {
#pragma unroll
        for (int s = 0; s < G::NBK / 2; s++)
            asm volatile("" : "+r"(k.vb[s][0]), "+r"(k.vb[s][1]));
        asm volatile("" : "+r"(k.vb8));
    }
}

/* One strip: output samples base .. base + 16 NT - 1 of output rows y0 .. y0 + rows - 1, where
 * base = rbase + 16 NT w for warp w of the W warps that share the ring (rows of samples
 * rbase - 16 C1 .. rbase + 16 W NT + 16 C1 - 1; W = 1: the warp's own). BORDER: the ring row
 * sticks out of the image row. Each phase runs over all NT tiles (independent products back to
 * back, their latencies overlapped), and the loop takes NBK blocks a turn so that the row sums of
 * the NBK blocks an output block reads stay in place (hp[i % NBK]). W > 1: every warp of the
 * block runs the same strip rows (the block's barriers), those past the row's end computing what
 * they do not store. */
template <class G, int EPI, int W, bool BORDER>
__device__ __forceinline__ void sep2_strip(const conv_params &p, const sep2_consts<G> &k, int rbase, int y0,
                                           int rows, unsigned char *ring, unsigned char *stage)
{
#if __CUDA_ARCH__ >= 800
    constexpr int NT = G::NT, C1 = G::C1, NBK = G::NBK, NCH = NT + 2 * C1, NCR = W * NT + 2 * C1,
                  RB = SEP2_RB(W, NT, C1), BLK = 8 * RB, SP = SEP2_SP(NT);
    static_assert(NT % 4 == 0, "mmasep2: 16-byte output chunks, 32 a pass");
    static_assert(W == 1 || W == MMA_WARPS, "mmasep2: a ring a warp or one a block");
    constexpr int NJ = (8 * NCR + 32 * W - 1) / (32 * W); /* chunks a thread copies a block */
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3, R = p.k / 2;
    const int tid = W == 1 ? lane : (int)threadIdx.x, wofs = W == 1 ? 0 : 16 * NT * (int)(threadIdx.x >> 5);
    const int base = rbase + wofs;
    const int nblk = (rows + 7) / 8 + NBK - 1; /* row blocks: input rows y0 - R + 8 i .. + 7 */
    const uint32_t ring_s = (uint32_t)__cvta_generic_to_shared(ring);

    auto issue = [&](int i) {
        const int yb = y0 - R + 8 * i;
        const uint32_t slot = ring_s + (uint32_t)(i % G::NB) * BLK;
#pragma unroll
        for (int j = 0; j < NJ; j++) {
            const int c = tid + 32 * W * j, r = c / NCR, q = rbase - 16 * C1 + 16 * (c % NCR);
            if ((32 * W * (j + 1) <= 8 * NCR || c < 8 * NCR) && (!BORDER || (q >= 0 && q < p.wch))) {
                const int y = min(max(yb + r, 0), p.height - 1);
                conv_cp16s(slot + r * RB + 16 * (c % NCR), p.in + ((uint32_t)y * (uint32_t)p.in_pitch + (uint32_t)q));
            }
        }
    };

    /* row sums of the last NBK blocks (hp[i % NBK]) as FP16 pairs (SPLIT: bytes, see below):
     * [e] rows 2t, 2t + 1 of sample 2g (e = 0), 2g + 1 (e = 1): the column pass's a0, a1 for the
     * older block of a k-step, a2, a3 for the newer */
    uint32_t hp[NBK][NT][2];
#pragma unroll
    for (int j = 0; j < G::NB - 1; j++) {
        if (j < nblk)
            issue(j);
        conv_cp_commit();
    }
    /* the output block staged in the warp's stage (rows SP bytes apart, an odd multiple of 16: the
     * 2-byte writes of a row pair hit distinct banks), then stored as 16-byte chunks; or (a border
     * strip without BSTAGE) a lane's pairs stored from out_row */
    constexpr bool STAGED = !BORDER || G::BSTAGE;
    unsigned char *out_row = p.out + ((uint32_t)(y0 + 2 * t) * (uint32_t)p.out_pitch + (uint32_t)(base + 2 * g));
    unsigned char *out_blk = p.out + ((uint32_t)y0 * (uint32_t)p.out_pitch + (uint32_t)base);
    auto step = [&](int i, auto cur) {
        constexpr int C = decltype(cur)::value;
        if (W == 1) {
            conv_ring_next<G::NB - 1>(i, nblk, issue);
        } else { /* block i landed (this thread's copies, then by the barrier everyone's), and
                  * every warp has read block i - 1, whose slot block i + 2 refills */
            conv_cp_wait<G::NB - 2>();
            __syncthreads();
            if (i + G::NB - 1 < nblk)
                issue(i + G::NB - 1);
            conv_cp_commit();
        }
        const unsigned char *blk = ring + (i % G::NB) * BLK;
        if (BORDER) {
            if (W == 1 || threadIdx.x < 32) /* W > 1: warp 0 for the block */
#pragma unroll
                for (int r = 0; r < 8; r++)
                    conv_ring_border_n<G::CH, 1, 16 * C1>((unsigned char *)blk + r * RB, rbase - 16 * C1,
                                                          16 * NCR, p.wch, R * G::CH, lane);
            if (W == 1)
                __syncwarp();
            else
                __syncthreads();
        }
        if constexpr (G::BOX) { /* integer row pass (see mmabox below) */
            constexpr int NBW = NT + 2 * C1 - 1 + G::HALF;
            uint32_t bw[NBW]; /* B as they are: row g, samples WOFF + 4t .. + 3 of each chunk */
#pragma unroll
            for (int c = 0; c < NBW; c++)
                bw[c] = *(const uint32_t *)(blk + g * RB + wofs + 16 * c + G::WOFF + 4 * t);
            if (W == 1)
                __syncwarp(); /* the block is read: the copies issued next may refill its slot */
            int h[NT][4]; /* as the FP16 pass's below */
#pragma unroll
            for (int mt = 0; mt < NT; mt++)
                h[mt][0] = h[mt][1] = h[mt][2] = h[mt][3] = k.h0i;
#pragma unroll
            for (int s = 0; s < C1; s++)
#pragma unroll
                for (int mt = 0; mt < NT; mt++)
                    mma_uu(h[mt], k.ha[s][0], k.ha[s][1], k.ha[s][2], k.ha[s][3], bw[mt + 2 * s],
                           bw[mt + 2 * s + 1]);
            if constexpr (G::HALF)
#pragma unroll
                for (int mt = 0; mt < NT; mt++)
                    mma_uu_k16(h[mt], k.ha[C1][0], k.ha[C1][1], bw[mt + 2 * C1]);
#pragma unroll
            for (int mt = 0; mt < NT; mt++) {
                if constexpr (G::SPLIT) { /* bytes: [0] the sums' low bytes, [1] their high ones,
                                           * each (sample 2g: rows 2t, 2t + 1; 2g + 1: the same) */
                    const uint32_t q0 = __byte_perm(h[mt][0], h[mt][1], 0x5140u),
                                   q1 = __byte_perm(h[mt][2], h[mt][3], 0x5140u);
                    hp[C][mt][0] = __byte_perm(q0, q1, 0x5410u);
                    hp[C][mt][1] = __byte_perm(q0, q1, 0x7632u);
                } else {
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const __half2 hh = __floats2half2_rn((float)h[mt][2 * e], (float)h[mt][2 * e + 1]);
                        hp[C][mt][e] = *(const uint32_t *)&hh;
                    }
                }
            }
        } else {
            uint32_t bw[NCH][2]; /* B fragments of the chunks: row g, samples 4t .. 4t + 3 */
#pragma unroll
            for (int c = 0; c < NCH; c++) {
                const uint32_t w = *(const uint32_t *)(blk + g * RB + wofs + 16 * c + 4 * t);
                bw[c][0] = mma_h2<0x4140u>(w);
                bw[c][1] = mma_h2<0x4342u>(w);
            }
            if (W == 1)
                __syncwarp(); /* the block is read: the copies issued next may refill its slot */
            float h[NT][4]; /* (sample 2g, row 2t), (2g, 2t + 1), (2g + 1, 2t), (2g + 1, 2t + 1) */
#pragma unroll
            for (int s = 0; s < G::S; s++)
#pragma unroll
                for (int mt = 0; mt < NT; mt++) {
                    if (s == 0)
                        mma_16816<true>(h[mt], k.ha[0], bw[mt]);
                    else
                        mma_16816<false>(h[mt], k.ha[s], bw[mt + s]);
                }
#pragma unroll
            for (int mt = 0; mt < NT; mt++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const __half2 hh = __floats2half2_rn(h[mt][2 * e], h[mt][2 * e + 1]);
                    hp[C][mt][e] = *(const uint32_t *)&hh;
                }
        }
        if (i < NBK - 1)
            return;
        float o[NT][4]; /* output block i - NBK + 1, laid out as h: from the blocks in slots
                         * (C + 1 + b) % NBK, b = 0 .. NBK - 1, oldest first */
        if constexpr (G::SPLIT) { /* int8 products of block pairs, two pairs a k32 product (fewer
                                   * products issued: 5-9% faster than one a pair): the high bytes,
                                   * times 256, then the low ones; k-slots 4t .. 4t + 3 of a pair:
                                   * rows 2t, 2t + 1 of the older block, then of the newer (an odd
                                   * last one: any bytes, its factors are 0) */
#pragma unroll
            for (int mt = 0; mt < NT; mt++) {
                int oi[4];
#pragma unroll
                for (int part = 1; part >= 0; part--) {
                    if (part == 0)
                        oi[0] <<= 8, oi[1] <<= 8, oi[2] <<= 8, oi[3] <<= 8;
                    constexpr int NPR = (NBK + 1) / 2; /* block pairs */
                    uint32_t a[NPR][2];
#pragma unroll
                    for (int s = 0; s < NPR; s++) {
                        const int b0 = (C + 1 + 2 * s) % NBK, b1 = 2 * s + 1 < NBK ? (C + 2 + 2 * s) % NBK : b0;
                        const uint32_t x = hp[b0][mt][part], y = hp[b1][mt][part];
                        a[s][0] = __byte_perm(x, y, 0x5410u);
                        a[s][1] = __byte_perm(x, y, 0x7632u);
                    }
                    if (part == 1)
                        oi[0] = oi[1] = oi[2] = oi[3] = 0;
#pragma unroll
                    for (int q = 0; q < NPR / 2; q++) { /* two pairs a k32 product */
                        mma_uu(oi, a[2 * q][0], a[2 * q][1], a[2 * q + 1][0], a[2 * q + 1][1], k.vq[2 * q],
                               k.vq[2 * q + 1]);
                    }
                    if constexpr (NPR % 2 == 1)
                        mma_uu_k16(oi, a[NPR - 1][0], a[NPR - 1][1], k.vq[NPR - 1]);
                }
#pragma unroll
                for (int e = 0; e < 4; e++)
                    o[mt][e] = (float)oi[e]; /* S: exact below 2^24 */
            }
        } else {
#pragma unroll
            for (int mt = 0; mt < NT; mt++) {
#pragma unroll
                for (int s = 0; s < NBK / 2; s++) {
                    const int b0 = (C + 1 + 2 * s) % NBK, b1 = (C + 2 + 2 * s) % NBK;
                    const uint32_t a[4] = {hp[b0][mt][0], hp[b0][mt][1], hp[b1][mt][0], hp[b1][mt][1]};
                    if (s == 0)
                        mma_16816<true>(o[mt], a, k.vb[s]);
                    else
                        mma_16816<false>(o[mt], a, k.vb[s]);
                }
                if constexpr (NBK % 2 == 1) {
                    constexpr int bl = (C + NBK) % NBK;
                    const uint32_t a[2] = {hp[bl][mt][0], hp[bl][mt][1]};
                    sep2_mma1688(o[mt], a, k.vb8);
                }
            }
        }
        const int m = 8 * (i - NBK + 1) + 2 * t; /* this lane's first output row of the block */
#pragma unroll
        for (int mt = 0; mt < NT; mt++) {
            uint32_t u[4];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const float a = EPI == MMA_EPI_NC ? o[mt][e] : fminf(fmaxf(o[mt][e], 0.0f), 255.0f / SEP2_UNSCALE);
                u[e] = __float_as_uint(fmaf(a, k.ea, k.eb));
            }
            const uint32_t w0 = __byte_perm(u[0], u[2], 0x0040u), w1 = __byte_perm(u[1], u[3], 0x0040u);
            if (STAGED) { /* rows 2t, 2t + 1 of the block, samples 16 mt + 2g */
                *(uint16_t *)(stage + 2 * t * SP + 16 * mt + 2 * g) = (uint16_t)w0;
                *(uint16_t *)(stage + (2 * t + 1) * SP + 16 * mt + 2 * g) = (uint16_t)w1;
                continue;
            }
            const int x = base + 16 * mt + 2 * g;
            unsigned char *o0 = out_row + 16 * mt;
            if (m < rows)
                sep2_put<BORDER>(o0, x, p.wch, w0);
            if (m + 1 < rows)
                sep2_put<BORDER>(o0 + p.out_pitch, x, p.wch, w1);
        }
        if (STAGED) { /* the block's 8 rows of 16 NT bytes as 16-byte chunks, whole sectors (BORDER:
                       * the chunks past the row's end left out, the one across it cut; the 2-byte
                       * stores there made a border strip's step ~2x an interior one's) */
            __syncwarp();
#pragma unroll
            for (int j = 0; j < NT / 4; j++) {
                const int c = lane + 32 * j, r = c / NT, col = c % NT;
                if (8 * (i - NBK + 1) + r < rows)
                    sep2_put16<BORDER>(out_blk + r * p.out_pitch + 16 * col, base + 16 * col, p.wch,
                                       stage + r * SP + 16 * col);
            }
            __syncwarp(); /* the stage is read: the next block may write it */
            out_blk += 8 * p.out_pitch;
        }
        out_row += 8 * p.out_pitch;
    };
    for (int i = 0; i < nblk; i += NBK)
        sep2_unroll<NBK>([&](auto c) {
            if (i + decltype(c)::value < nblk)
                step(i + decltype(c)::value, c);
        });
#endif
}

/* W = 1: a task a warp (nsx strips of 16 NT samples a row band); W = MMA_WARPS: a task a block,
 * its warps' strips side by side (nsx groups of W strips a row band). */
template <class G, int EPI, int W, int MINB>
__global__ void __launch_bounds__(32 * MMA_WARPS, MINB)
    conv_mmasep2_kernel(const __grid_constant__ conv_params p, int sh, int nsx, int ntasks)
{
#if __CUDA_ARCH__ >= 800
    extern __shared__ __align__(16) unsigned char sep2_smem[];
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int task = W == 1 ? blockIdx.x * MMA_WARPS + (threadIdx.x >> 5) : blockIdx.x;
    if (task >= ntasks) /* W = 1: no block barrier below; W > 1: uniform in the block */
        return;

    sep2_consts<G> k;
    if constexpr (G::BOX) {
        /* the row pass's A, m16 x k32 bytes: a0 (m = g: tile sample 2g, k 4t .. 4t + 3), a1 (m =
         * g + 8: sample 2g + 1), a2, a3 the same at k 16 + 4t .. 16 + 4t + 3 */
#pragma unroll
        for (int s = 0; s < G::C1 + G::HALF; s++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int x = 2 * g + (e & 1), kk = 16 * (e >> 1) + 4 * t;
                k.ha[s][e] = sep2_box_w<G>(p, s, x, kk) | sep2_box_w<G>(p, s, x, kk + 1) << 8 |
                             sep2_box_w<G>(p, s, x, kk + 2) << 16 | sep2_box_w<G>(p, s, x, kk + 3) << 24;
            }
    } else {
        /* the row pass's A: rows m = g, g + 8 are tile samples 2g, 2g + 1; k-slots 2t, 2t + 1 |
         * 2t + 8, 2t + 9 are chunk samples 4t, 4t + 1 | 4t + 2, 4t + 3 */
#pragma unroll
        for (int s = 0; s < G::S; s++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int x = 2 * g + (e & 1), j = 4 * t + 2 * (e >> 1);
                k.ha[s][e] = sep2_hw<G>(p, s, x, j) | sep2_hw<G>(p, s, x, j + 1) << 16;
            }
    }
    if constexpr (G::SPLIT) {
        /* the column pass's B as bytes: byte q of a pair's is row 16 s + 8 (q >> 1) + 2t + (q & 1)
         * against output row g */
#pragma unroll
        for (int s = 0; s < (G::NBK + 1) / 2; s++) {
            k.vq[s] = 0;
#pragma unroll
            for (int q = 0; q < 4; q++)
                k.vq[s] |= (uint32_t)((unsigned)(16 * s + 8 * (q >> 1) + 2 * t + (q & 1) - g) < (unsigned)p.k)
                           << (8 * q);
        }
    } else {
        /* the column pass's B: V[j][y] = c[j - y], k-slot j = row j of the NBK blocks (b0: rows
         * 16 s + 2t, + 1, b1: rows 16 s + 2t + 8, + 9; vb8: rows 16 (NBK / 2) + 2t, + 1), n = g the
         * output row */
#pragma unroll
        for (int s = 0; s < G::NBK / 2; s++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int j = 16 * s + 8 * e + 2 * t - g;
                k.vb[s][e] = sep2_vh<G>(p, j) | sep2_vh<G>(p, j + 1) << 16;
            }
        const int j8 = 16 * (G::NBK / 2) + 2 * t - g;
        k.vb8 = G::NBK % 2 ? sep2_vh<G>(p, j8) | sep2_vh<G>(p, j8 + 1) << 16 : 0u;
    }
    if (G::BOX) { /* see mmabox below */
        k.ea = __fdiv_rn(1.0f, (float)(p.k * p.k));
        k.eb = G::SPLIT ? CONV_MAGIC : 128.0f + CONV_MAGIC;
        k.h0i = G::SPLIT ? 0 : -128 * p.k;
    } else {
        k.ea = SEP2_UNSCALE;
        k.eb = CONV_MAGIC;
        k.h0i = 0;
    }

    if constexpr (G::BOX)
        sep2_pin(k);

    constexpr int NT = G::NT, SEG = 16 * NT * W, RING = G::NB * 8 * SEP2_RB(W, NT, G::C1);
    const int warp = threadIdx.x >> 5;
    const int rbase = task % nsx * SEG, y0 = task / nsx * sh, rows = min(sh, p.height - y0);
    unsigned char *ring = sep2_smem + (W == 1 ? warp : 0) * RING;
    unsigned char *stage = sep2_smem + MMA_WARPS / W * RING + warp * 8 * SEP2_SP(NT);
    if (rbase >= 16 * G::C1 && rbase + SEG + 16 * G::C1 <= p.wch)
        sep2_strip<G, EPI, W, false>(p, k, rbase, y0, rows, ring, stage);
    else
        sep2_strip<G, EPI, W, true>(p, k, rbase, y0, rows, ring, stage);
#endif
}

/* One launch: strips of sh output rows (job->param, or sep2_default_sh); W = 1: a block per MMA_WARPS
 * strips, W = MMA_WARPS: a block per MMA_WARPS strips side by side. */
template <class G, int EPI, int W> static ts_status sep2_launch(const ts_job *job, const conv_params &p)
{
    auto kernel = conv_mmasep2_kernel<G, EPI, W, G::MINB>;
    const size_t smem = (size_t)SEP2_SMEM(W, G::NT, G::C1, G::NB);
    const ts_status st = gpu_allow_smem((const void *)kernel, smem);
    if (st != TS_OK)
        return st;
    constexpr int SEG = 16 * G::NT * W;
    const int sh = job->param > 0 ? job->param : sep2_default_sh<W, G>(), nsx = (p.wch + SEG - 1) / SEG;
    const long long ntasks = (long long)nsx * ((p.height + sh - 1) / sh);
    if (ntasks > INT_MAX)
        return ts_fail(TS_ERR_UNSUPPORTED, "conv mmasep2: %lld strips", ntasks);
    const long long blocks = W == 1 ? (ntasks + MMA_WARPS - 1) / MMA_WARPS : ntasks;
    kernel<<<gpu_grid(blocks), 32 * MMA_WARPS, smem, (cudaStream_t)job->stream>>>(p, sh, nsx, (int)ntasks);
    LAUNCH_CHECK("conv_mmasep2_kernel");
    return TS_OK;
}

/* ---------------------------------------------------------------- host side */

static float sep2_fp16(float w) { return __half2float(__float2half_rn(w)); }
/* The bound of the arithmetic (see the top), times maxv: the FP16 row and column factors, the row
 * sums rounded to FP16 (2^-11 of at most maxv sum |r|, and 2^-16 absolute where they are
 * subnormal), the FP32 sums of 3 k-steps and one of 16 products (truncating, as tensor cores may):
 * at most 0.25 of a step. */
static int sep2_ok(const ts_filter *f, int maxv)
{
    double er = 0, sr = 0, ec = 0, sc = 0;
    for (int i = 0; i < f->k; i++) {
        if (!(fabsf(f->row[i]) < 1.99f)) /* r 2^15 in FP16; NaN refused too */
            return 0;
        er += fabs((double)f->row[i] - (double)sep2_fp16(f->row[i]));
        sr += fabs((double)sep2_fp16(f->row[i]));
        ec += fabs((double)f->col[i] - (double)sep2_fp16(f->col[i]));
        sc += fabs((double)sep2_fp16(f->col[i]));
    }
    const double err = er * sc + sr * ec + sr * sc * (ldexp(1.0, -11) + 4 * 16 * ldexp(1.0, -22));
    return err * maxv + sc * ldexp(1.0, -16) <= 0.25;
}

extern "C" int conv_mmasep2_supports(const ts_job *job)
{
    conv_traits t;
    if (!conv_mmapipe_supports(job) || !conv_job_traits(job, &t) || !t.sep_ok || t.nout != 1 ||
        job->op->filter.exact || (t.k != 5 && t.k != 7) ||
        (job->in.channels != 1 && job->in.channels != 3) ||
        (((uintptr_t)job->out.data | job->out.pitch) & 15)) /* the staged 16-byte stores */
        return 0;
    return sep2_ok(&job->op->filter, 255);
}

/* The checks every strip variant makes after its own: the device, the strip height. */
static ts_status sep2_check(const ts_job *job, const char *name)
{
    if (job->dev && job->dev->cc < 80)
        return ts_fail(TS_ERR_UNSUPPORTED, "conv %s: needs sm_80 (mma.sync, cp.async)", name);
    if (job->param < 0 || job->param % 8)
        return ts_fail(TS_ERR_INVALID, "conv %s: strip height %d is not a positive multiple of 8",
                       name, job->param);
    return TS_OK;
}

/* ROUND_NC while the arithmetic's filter sum cannot reach maxv + 1/4 (as conv_mma.cu's). */
static void sep2_fix_epi(const ts_filter *f, conv_params *p)
{
    if (p->epi != CONV_EPI_ROUND_NC)
        return;
    double sr = 0, sc = 0;
    for (int i = 0; i < f->k; i++)
        sr += sep2_fp16(f->row[i]), sc += sep2_fp16(f->col[i]);
    if (!(sr * sc * p->maxv * (1 + ldexp(1.0, -19)) < p->maxv + 0.25))
        p->epi = CONV_EPI_ROUND;
}

template <int W> struct sep2_launcher : conv_launcher {
    static ts_status check(const ts_job *job)
    {
        if (!conv_mmasep2_supports(job))
            return ts_fail(TS_ERR_UNSUPPORTED, "conv mmasep2: needs mmapipe's job on 1 or 3 channels "
                                               "with a float separable filter of K 5 or 7 whose FP16 "
                                               "row and column factors stay within 0.25 of a step");
        return sep2_check(job, "mmasep2");
    }
    static ts_status launch(const ts_job *job, conv_params &p)
    {
        sep2_fix_epi(&job->op->filter, &p);
        return conv_by_k<5, 7>(p, [&](auto k) {
            constexpr int K = decltype(k)::value;
            const bool nc = p.epi == CONV_EPI_ROUND_NC;
            if (p.ch == 1)
                return nc ? sep2_launch<sep2_gauss<1, K>, MMA_EPI_NC, W>(job, p)
                          : sep2_launch<sep2_gauss<1, K>, MMA_EPI_CLAMP, W>(job, p);
            return nc ? sep2_launch<sep2_gauss<3, K>, MMA_EPI_NC, W>(job, p)
                      : sep2_launch<sep2_gauss<3, K>, MMA_EPI_CLAMP, W>(job, p);
        });
    }
};

extern "C" ts_status conv_mmasep2(const ts_job *job) { return conv_run<sep2_launcher<1>>(job); }
extern "C" ts_status conv_mmasep2b(const ts_job *job) { return conv_run<sep2_launcher<MMA_WARPS>>(job); }

/* ---------------------------------------------------------------- mmabox
 * The box filter K x K (K 3 .. 31) on mmasep2b's strips, bit-exact: round(S / K^2) of the integer
 * window sum S, the division's ties impossible (K^2 odd).
 *
 *   row pass: mma.sync m16n8k32 on unsigned bytes with int32 sums (exact): the samples as the ring
 *             holds them are the B operand (no conversion), the factors 0 or 1 the A; the 2 C1 + 1
 *             chunks of a tile's window [-16 C1, 16 C1 + 16) in C1 k32 steps (chunk pairs) and a
 *             k16 one, where the FP16 pass takes 2 C1 + 1 k16 steps; or (SHIFT), where the halo H
 *             is at most 16 C1 - 8 samples, C1 k32 steps alone: the window [-H, 16 + H) then fits
 *             the 32 C1 samples from 16 C1 - 8 left of the tile (its B words loaded 8 bytes into
 *             each chunk). Against C1 + 1 k32 steps (H100, 8K, median of 20: tools/results/
 *             nvidia-h100-headroom-2026-11-27e.md): gray8 box:11 0.0375 -> 0.0355 ms, box:19
 *             0.0428 -> 0.0405, box:27 0.0494 -> 0.0480; rgb8 box:17 0.0961 -> 0.0901, box:19
 *             0.1048 -> 0.1031, box:23 0.1298 -> 0.1246;
 *   column pass, K <= 15: the sums start at -128 K, so that they end as h = (sum of the K
 *             samples) - 128 K, |h| <= 128 K <= 1920: integers FP16 holds exactly; FP16 factors 1
 *             over the K rows of the NBK blocks (k16 products of block pairs, a k8 one for an odd
 *             block), FP32 sums: o = S - 128 K^2 exactly (every partial sum an integer below 2^17
 *             in magnitude, however the tensor cores align and truncate);
 *   column pass, K >= 17 (SPLIT; the sums up to 7905 pass FP16's 2048): the sums as they are, their
 *             low and high bytes packed 4 to a word (the two rows and two samples of a lane),
 *             int8 products m16n8k32 of two block pairs (k-slots 4t .. 4t + 3 of a pair: rows 2t,
 *             2t + 1 of the older block, then of the newer; an odd pair m16n8k16), the high bytes'
 *             int32 sum times 256 plus the low bytes': S exactly. Half the registers of two FP16
 *             parts, 8 tiles a warp at NBK 3;
 *   epilogue: fma(o, 1 / K^2, 128 + 1.5 2^23) (SPLIT: fma(S, 1 / K^2, 1.5 2^23)), rounded once to
 *             an integer: 1 / K^2 in FP32 is within 2^-24 of itself, so the exact value is within
 *             255 2^-24 < 2 10^-5 of S / K^2, which is 1 / (2 K^2) >= 5.2 10^-4 or more away from
 *             a half-integer: the rounding is round(S / K^2), in [0, 255] (no clamp), the low byte
 *             of the bits.
 * The halo (K / 2 samples of each channel) sets the row pass's k-steps: C1 chunks of 16 each side
 * (gray: 1 up to K 31; RGB: 1 to K 11, 2 to K 21, 3 to K 31), SHIFT where it fits (gray to K 17;
 * RGB K 3, 5, 13 .. 17, 23 .. 27), else the k16 step; the rows an output block reads set NBK:
 * 8 + K - 1 rows in blocks of 8 (2 to K 9, 3 to K 17, 4 to K 25, 5 to K 31). */
static bool sep2_box_filter(const ts_filter *f)
{
    if (!f || !f->exact || f->outputs != 1 || f->magnitude || f->k < 3 || f->k > 31 || f->divisor != f->k * f->k)
        return false;
    for (int i = 0; i < f->k * f->k; i++)
        if (f->iw[i] != 1)
            return false;
    return true;
}

extern "C" int conv_mmabox_supports(const ts_job *job)
{
    return sep2_box_filter(conv_job_filter(job)) && job->in.bytes == 1 &&
           (job->in.channels == 1 || job->in.channels == 3) &&
           (((uintptr_t)job->in.data | job->in.pitch | (uintptr_t)job->out.data | job->out.pitch) & 15) == 0 &&
           conv_offsets_fit_int(job);
}

struct box_launcher : conv_launcher {
    static ts_status check(const ts_job *job)
    {
        if (!conv_mmabox_supports(job))
            return ts_fail(TS_ERR_UNSUPPORTED, "conv mmabox: needs a box filter (K 3 .. 31) on 8-bit "
                                               "gray or RGB with 16-byte aligned rows");
        return sep2_check(job, "mmabox");
    }
    static ts_status launch(const ts_job *job, conv_params &p)
    {
        const int r = p.k / 2, c1 = (r * p.ch + 15) / 16, nbk = (7 + 2 * r) / 8 + 1;
        const bool split = p.k >= 17, shift = r * p.ch <= 16 * c1 - 8;
        /* NB: ring blocks, 4 (3 in flight) where measured faster than 3 (H100 11:44 UTC, 8K, median
         * of 20: rgb8 box:23-25 0.1242-0.1245 -> 0.1158-0.1164 ms, box:13-15 0.0860-0.0865 ->
         * 0.0843-0.0846, box:29-31 0.1415-0.1419 -> 0.1390-0.1399, gray8 box:27-31 0.0480-0.0484
         * -> 0.0469-0.0476; slower at gray K 11 .. 25 and RGB K 19, 21, even elsewhere) */
#define SEP2_BOX(CH, C1, NBK, SPLIT, SHIFT, NB)                                                      \
    if (p.ch == (CH) && c1 == (C1) && nbk == (NBK) && split == (SPLIT) && shift == (SHIFT))        \
        return sep2_launch<sep2_geo<CH, C1, NBK, SPLIT, true, 0, SHIFT, NB>, MMA_EPI_NC, MMA_WARPS>(job, p);
        SEP2_BOX(1, 1, 2, false, true, 3)  /* K 3 .. 9 */
        SEP2_BOX(1, 1, 3, false, true, 3)  /* 11 .. 15 */
        SEP2_BOX(1, 1, 3, true, true, 3)   /* 17 */
        SEP2_BOX(1, 1, 4, true, false, 3)  /* 19 .. 25 */
        SEP2_BOX(1, 1, 5, true, false, 4)  /* 27 .. 31 */
        SEP2_BOX(3, 1, 2, false, true, 4)  /* K 3, 5 */
        SEP2_BOX(3, 1, 2, false, false, 4) /* 7, 9 */
        SEP2_BOX(3, 1, 3, false, false, 4) /* 11 */
        SEP2_BOX(3, 2, 3, false, true, 4)  /* 13, 15 */
        SEP2_BOX(3, 2, 3, true, true, 3)   /* 17 */
        SEP2_BOX(3, 2, 4, true, false, 3)  /* 19, 21 */
        SEP2_BOX(3, 3, 4, true, true, 4)   /* 23, 25 */
        SEP2_BOX(3, 3, 5, true, true, 4)   /* 27 */
        SEP2_BOX(3, 3, 5, true, false, 4)  /* 29, 31 */
#undef SEP2_BOX
        return ts_fail(TS_ERR_UNSUPPORTED, "conv mmabox: no kernel for K %d on %d channels", p.k, p.ch);
    }
};

extern "C" ts_status conv_mmabox(const ts_job *job) { return conv_run<box_launcher>(job); }
