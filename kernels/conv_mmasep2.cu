/* conv_mmasep2.cu - convolution, variant `mmasep2`: a separable float filter (gauss) with both of
 * its passes on the tensor cores, 8-bit gray and RGB, K = 5 and 7 (conv.cu has the op; the
 * building blocks are conv_mma_parts.cuh's).
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
 * 8 rows at a time, its input rows coming through a warp-private cp.async ring of SEP2_NB blocks
 * in shared memory (SEP2_NB - 1 in flight), rows clamped at the top and bottom, the border
 * replicated into the ring at the sides (conv_ring_border). The M index of a tile is permuted
 * (m = g is sample 2g, m = g + 8 sample 2g + 1) so that a lane's results are pairs of neighbours.
 *
 * Stores: a lane's pairs are rows 2t and 2t + 1 of the block, so a warp's 2-byte store would write
 * 4 rows x 16 bytes, half sectors. Inside the image (every strip but a row's first and last) the
 * warp writes its 8 x 16 NT-byte output block into shared memory first (rows SEP2_SP bytes apart:
 * the 2-byte writes of a store hit distinct banks) and then stores it as 16-byte chunks, each
 * quarter of the warp one row's 128 contiguous bytes: whole sectors, NT / 4 STG.128 a lane and
 * block instead of 2 NT STG.U16. The border strips keep the 2-byte stores (their rows end
 * anywhere).
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

#include <string.h>

#define SEP2_NT 8                 /* tiles of 16 output samples a warp (8: 128 registers, no
                                   * spills; 4 read 4 sectors a row for 2 stored, 8 read 6 for 4) */
#define SEP2_NB 3                 /* ring blocks of 8 rows: 2 in flight */
/* ring row of W warps' strips: W NT + 2 chunks and 16 bytes of pad, an odd number of 16-byte
 * units (W = 1, 4: 11, 35), so that the 8 rows a warp's load reads hit 8 distinct bank groups */
#define SEP2_RB(W, NT) (16 * ((W) * (NT) + 3))
#define SEP2_SP(NT) (16 * (NT) + 16) /* staged output row: 16 NT bytes and 16 of pad */
/* shared memory of a block of MMA_WARPS warps: its rings (one a warp, W = 1, or one shared by
 * all, W = MMA_WARPS), then a stage a warp */
#define SEP2_SMEM(W, NT) ((MMA_WARPS / (W)) * SEP2_NB * 8 * SEP2_RB(W, NT) + MMA_WARPS * 8 * SEP2_SP(NT))
#define SEP2_HSCALE 32768.0f      /* 2^15: the row factors' scale */
#define SEP2_UNSCALE 512.0f       /* 2^24 / 2^15: the inputs' 2^-24 and the row factors' 2^15 */
/* output rows a strip by default (job->param overrides): 32 (shorter strips spread better; 64
 * and 128 measured slower at 8K RGB8), but 64 for one ring a block on RGB (its strips are 4
 * times as wide, fewer of them: 64 measured faster than 32 at 8K RGB8, gauss:5 and gauss:7; on
 * 8K gray8 gauss:7 slower, 0.0376 ms against 0.0344) */
template <int W, int CH> constexpr int sep2_default_sh() { return W > 1 && CH == 3 ? 64 : 32; }

/* Row factor of tile sample 16 (s - 1) + j (chunk s of the three) for the tile's output x, as FP16
 * bits, scaled by 2^15. */
template <int K, int CH>
__device__ __forceinline__ uint32_t sep2_hw(const conv_params &p, int s, int x, int j)
{
    const int d = 16 * (s - 1) + j - x + K / 2 * CH; /* = kx * CH */
    const float w = d >= 0 && d % CH == 0 && d / CH < K ? __uint_as_float(p.srow[d / CH]) * SEP2_HSCALE : 0.0f;
    return __half_as_ushort(__float2half_rn(w));
}

/* Column factor c[j] (0 outside 0 .. K - 1) as FP16 bits. */
template <int K> __device__ __forceinline__ uint32_t sep2_vh(const conv_params &p, int j)
{
    return j >= 0 && j < K ? __half_as_ushort(__float2half_rn(__uint_as_float(p.scol[j]))) : 0u;
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

/* One strip: output samples base .. base + 16 NT - 1 of output rows y0 .. y0 + rows - 1, where
 * base = rbase + 16 NT w for warp w of the W warps that share the ring (rows of samples
 * rbase - 16 .. rbase + 16 W NT + 15; W = 1: the warp's own). BORDER: the ring row sticks out of
 * the image row. Each phase runs over all NT tiles (independent products back to back, their
 * latencies overlapped), and the loop takes two blocks a turn so that the last block's row sums
 * stay in place (hp[i & 1]). W > 1: every warp of the block runs the same strip rows (the block's
 * barriers), those past the row's end computing what they do not store. */
template <int K, int CH, int NT, int EPI, int W, bool BORDER>
__device__ __forceinline__ void sep2_strip(const conv_params &p, const uint32_t (&ha)[3][4],
                                           const uint32_t (&vb)[2], int rbase, int y0, int rows,
                                           unsigned char *ring, unsigned char *stage)
{
#if __CUDA_ARCH__ >= 800
    constexpr int R = K / 2, H = R * CH, NCH = NT + 2, NCR = W * NT + 2, RB = SEP2_RB(W, NT),
                  BLK = 8 * RB, SP = SEP2_SP(NT);
    static_assert(NT % 4 == 0, "mmasep2: 16-byte output chunks, 32 a pass");
    static_assert(W == 1 || W == MMA_WARPS, "mmasep2: a ring a warp or one a block");
    constexpr int NJ = (8 * NCR + 32 * W - 1) / (32 * W); /* chunks a thread copies a block */
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int tid = W == 1 ? lane : (int)threadIdx.x, wofs = W == 1 ? 0 : 16 * NT * (int)(threadIdx.x >> 5);
    const int base = rbase + wofs;
    const int nblk = (rows + 7) / 8 + 1; /* row blocks: input rows y0 - R + 8 i .. + 7 */
    const uint32_t ring_s = (uint32_t)__cvta_generic_to_shared(ring);

    auto issue = [&](int i) {
        const int yb = y0 - R + 8 * i;
        const uint32_t slot = ring_s + (uint32_t)(i % SEP2_NB) * BLK;
#pragma unroll
        for (int j = 0; j < NJ; j++) {
            const int c = tid + 32 * W * j, r = c / NCR, q = rbase - 16 + 16 * (c % NCR);
            if ((32 * W * (j + 1) <= 8 * NCR || c < 8 * NCR) && (!BORDER || (q >= 0 && q < p.wch))) {
                const int y = min(max(yb + r, 0), p.height - 1);
                conv_cp16s(slot + r * RB + 16 * (c % NCR), p.in + ((uint32_t)y * (uint32_t)p.in_pitch + (uint32_t)q));
            }
        }
    };

    /* row sums of blocks i (hp[i & 1]) as FP16 pairs: [e] rows 2t, 2t + 1 of sample 2g (e = 0),
     * 2g + 1 (e = 1): the column pass's a0, a1 for the older block, a2, a3 for the newer */
    uint32_t hp[2][NT][2];
#pragma unroll
    for (int j = 0; j < SEP2_NB - 1; j++) {
        if (j < nblk)
            issue(j);
        conv_cp_commit();
    }
    unsigned char *out_row = p.out + ((uint32_t)(y0 + 2 * t) * (uint32_t)p.out_pitch + (uint32_t)(base + 2 * g));
    /* interior strips: the output block staged in the warp's stage (rows SP bytes apart, an odd
     * multiple of 16: the 2-byte writes of a row pair hit distinct banks) */
    unsigned char *out_blk = p.out + ((uint32_t)y0 * (uint32_t)p.out_pitch + (uint32_t)base);
    auto step = [&](int i, auto cur) {
        constexpr int C = decltype(cur)::value;
        if (W == 1) {
            conv_ring_next<SEP2_NB - 1>(i, nblk, issue);
        } else { /* block i landed (this thread's copies, then by the barrier everyone's), and
                  * every warp has read block i - 1, whose slot block i + 2 refills */
            conv_cp_wait<SEP2_NB - 2>();
            __syncthreads();
            if (i + SEP2_NB - 1 < nblk)
                issue(i + SEP2_NB - 1);
            conv_cp_commit();
        }
        const unsigned char *blk = ring + (i % SEP2_NB) * BLK;
        if (BORDER) {
            if (W == 1 || threadIdx.x < 32) /* W > 1: warp 0 for the block */
#pragma unroll
                for (int r = 0; r < 8; r++)
                    conv_ring_border<CH, 1, H>((unsigned char *)blk + r * RB, rbase - 16, 16 * NCR, p.wch, lane);
            if (W == 1)
                __syncwarp();
            else
                __syncthreads();
        }
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
        for (int s = 0; s < 3; s++)
#pragma unroll
            for (int mt = 0; mt < NT; mt++) {
                if (s == 0)
                    mma_16816<true>(h[mt], ha[0], bw[mt]);
                else
                    mma_16816<false>(h[mt], ha[s], bw[mt + s]);
            }
#pragma unroll
        for (int mt = 0; mt < NT; mt++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const __half2 hh = __floats2half2_rn(h[mt][2 * e], h[mt][2 * e + 1]);
                hp[C][mt][e] = *(const uint32_t *)&hh;
            }
        if (i == 0)
            return;
        float o[NT][4]; /* output block i - 1, laid out as h */
#pragma unroll
        for (int mt = 0; mt < NT; mt++) {
            const uint32_t a[4] = {hp[C ^ 1][mt][0], hp[C ^ 1][mt][1], hp[C][mt][0], hp[C][mt][1]};
            mma_16816<true>(o[mt], a, vb);
        }
        const int m = 8 * (i - 1) + 2 * t; /* this lane's first output row of the block */
#pragma unroll
        for (int mt = 0; mt < NT; mt++) {
            uint32_t u[4];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const float a = EPI == MMA_EPI_NC ? o[mt][e] : fminf(fmaxf(o[mt][e], 0.0f), 255.0f / SEP2_UNSCALE);
                u[e] = __float_as_uint(fmaf(a, SEP2_UNSCALE, CONV_MAGIC));
            }
            const uint32_t w0 = __byte_perm(u[0], u[2], 0x0040u), w1 = __byte_perm(u[1], u[3], 0x0040u);
            if (!BORDER) { /* staged: rows 2t, 2t + 1 of the block, samples 16 mt + 2g */
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
        if (!BORDER) { /* the block's 8 rows of 16 NT bytes as 16-byte chunks, whole sectors */
            __syncwarp();
#pragma unroll
            for (int j = 0; j < NT / 4; j++) {
                const int c = lane + 32 * j, r = c / NT, col = c % NT;
                if (8 * (i - 1) + r < rows)
                    *(uint4 *)(out_blk + r * p.out_pitch + 16 * col) = *(const uint4 *)(stage + r * SP + 16 * col);
            }
            __syncwarp(); /* the stage is read: the next block may write it */
            out_blk += 8 * p.out_pitch;
        }
        out_row += 8 * p.out_pitch;
    };
    for (int i = 0; i < nblk; i += 2) {
        step(i, std::integral_constant<int, 0>());
        if (i + 1 < nblk)
            step(i + 1, std::integral_constant<int, 1>());
    }
#endif
}

/* W = 1: a task a warp (nsx strips of 16 NT samples a row band); W = MMA_WARPS: a task a block,
 * its warps' strips side by side (nsx groups of W strips a row band). */
template <int K, int CH, int EPI, int W>
__global__ void __launch_bounds__(32 * MMA_WARPS)
    conv_mmasep2_kernel(const __grid_constant__ conv_params p, int sh, int nsx, int ntasks)
{
    static_assert(K / 2 * CH <= 16, "mmasep2: the halo must fit one chunk");
    static_assert(K <= 9, "mmasep2: an output block's rows must fit two row blocks");
#if __CUDA_ARCH__ >= 800
    extern __shared__ __align__(16) unsigned char sep2_smem[];
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int task = W == 1 ? blockIdx.x * MMA_WARPS + (threadIdx.x >> 5) : blockIdx.x;
    if (task >= ntasks) /* W = 1: no block barrier below; W > 1: uniform in the block */
        return;

    /* the row pass's A: rows m = g, g + 8 are tile samples 2g, 2g + 1; k-slots 2t, 2t + 1 | 2t + 8,
     * 2t + 9 are chunk samples 4t, 4t + 1 | 4t + 2, 4t + 3 */
    uint32_t ha[3][4];
#pragma unroll
    for (int s = 0; s < 3; s++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int x = 2 * g + (e & 1), j = 4 * t + 2 * (e >> 1);
            ha[s][e] = sep2_hw<K, CH>(p, s, x, j) | sep2_hw<K, CH>(p, s, x, j + 1) << 16;
        }
    /* the column pass's B: V[j][y] = c[j - y], k-slot j = row j of the two blocks (b0: rows 2t,
     * 2t + 1, b1: rows 2t + 8, 2t + 9), n = g the output row */
    uint32_t vb[2];
#pragma unroll
    for (int e = 0; e < 2; e++)
        vb[e] = sep2_vh<K>(p, 8 * e + 2 * t - g) | sep2_vh<K>(p, 8 * e + 2 * t + 1 - g) << 16;

    constexpr int NT = SEP2_NT, SEG = 16 * NT * W, RING = SEP2_NB * 8 * SEP2_RB(W, NT);
    const int warp = threadIdx.x >> 5;
    const int rbase = task % nsx * SEG, y0 = task / nsx * sh, rows = min(sh, p.height - y0);
    unsigned char *ring = sep2_smem + (W == 1 ? warp : 0) * RING;
    unsigned char *stage = sep2_smem + MMA_WARPS / W * RING + warp * 8 * SEP2_SP(NT);
    if (rbase > 0 && rbase + SEG + 16 <= p.wch)
        sep2_strip<K, CH, NT, EPI, W, false>(p, ha, vb, rbase, y0, rows, ring, stage);
    else
        sep2_strip<K, CH, NT, EPI, W, true>(p, ha, vb, rbase, y0, rows, ring, stage);
#endif
}

/* One launch: strips of sh output rows (job->param, or sep2_default_sh); W = 1: a block per MMA_WARPS
 * strips, W = MMA_WARPS: a block per MMA_WARPS strips side by side. */
template <int K, int CH, int EPI, int W> static ts_status sep2_launch(const ts_job *job, const conv_params &p)
{
    auto kernel = conv_mmasep2_kernel<K, CH, EPI, W>;
    const size_t smem = (size_t)SEP2_SMEM(W, SEP2_NT);
    const ts_status st = gpu_allow_smem((const void *)kernel, smem);
    if (st != TS_OK)
        return st;
    constexpr int SEG = 16 * SEP2_NT * W;
    const int sh = job->param > 0 ? job->param : sep2_default_sh<W, CH>(), nsx = (p.wch + SEG - 1) / SEG;
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

/* The jobs where mmasep2b was measured fastest (auto's pick there, ahead of the ranks): RGB at
 * K 5 and 7 and gray at K 7; gray gauss:5 stays mmapipe's (8K gray8: 0.0340 ms, mmasep2 0.0350,
 * mmasep2b 0.0362). */
extern "C" int conv_mmasep2b_prefers(const ts_job *job)
{
    conv_traits t;
    return conv_mmasep2_supports(job) && conv_job_traits(job, &t) &&
           (job->in.channels == 3 || t.k == 7);
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
        if (job->dev && job->dev->cc < 80)
            return ts_fail(TS_ERR_UNSUPPORTED, "conv mmasep2: needs sm_80 (mma.sync, cp.async)");
        if (job->param < 0 || job->param % 8)
            return ts_fail(TS_ERR_INVALID, "conv mmasep2: strip height %d is not a positive "
                           "multiple of 8", job->param);
        return TS_OK;
    }
    static ts_status launch(const ts_job *job, conv_params &p)
    {
        sep2_fix_epi(&job->op->filter, &p);
        return conv_by_k<5, 7>(p, [&](auto k) {
            constexpr int K = decltype(k)::value;
            const bool nc = p.epi == CONV_EPI_ROUND_NC;
            if (p.ch == 1)
                return nc ? sep2_launch<K, 1, MMA_EPI_NC, W>(job, p) : sep2_launch<K, 1, MMA_EPI_CLAMP, W>(job, p);
            return nc ? sep2_launch<K, 3, MMA_EPI_NC, W>(job, p) : sep2_launch<K, 3, MMA_EPI_CLAMP, W>(job, p);
        });
    }
};

extern "C" ts_status conv_mmasep2(const ts_job *job) { return conv_run<sep2_launcher<1>>(job); }
extern "C" ts_status conv_mmasep2b(const ts_job *job) { return conv_run<sep2_launcher<MMA_WARPS>>(job); }
