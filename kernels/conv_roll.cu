/* conv_roll.cu - convolution, variant `roll`: K = 1, 3, 5, 7 at memory speed (see conv.cu for the op).
 *
 * At 3x3 a convolution of 8-bit RGB is a copy with 9 FMAs per byte: it is won by moving each byte
 * once, 16 bytes per access, and by spending few instructions per sample. So, per warp:
 *   - a vertical strip of `sh` output rows (16 by default, job->param overrides) and a segment of
 *     32 lanes x 16 samples; lanes 1..30 write 480 output samples, lanes 0 and 31 only load the
 *     halo for their neighbours. A lane loads its 16 samples of each input row with one 16-byte
 *     load (two for u16), two rows ahead of use, and converts them to float once;
 *   - the horizontal halo (r * C samples each side, at most 12) comes from the neighbour lanes by
 *     warp shuffles, not from shared memory, and the image border is replicated in registers (only
 *     the warps at a row's ends take that branch);
 *   - the vertical reuse is a rolling register tile: each input row is added, with compile-time
 *     weights (constant-bank operands of the FMAs), into the K output rows it touches; when an
 *     output row is complete it is rounded, packed and stored with 16-byte stores, and its
 *     accumulators start the row K below. No shared memory, no barrier: warps never wait for
 *     each other, which keeps many loads in flight.
 * K, the channel count C and the depth are template parameters, so every index is static and the
 * window stays in registers. Alpha samples (C = 2, 4) are skipped by the FMAs and merged back from
 * the input with a bit mask. Float accumulation only (float filters, and exact filters whose
 * partial sums stay below 2^24), one output per tap (no magnitude), rows 16-byte aligned.
 * K = 1 (a per-sample scale) is the same loop with no halo: every lane writes, nothing is shuffled,
 * and a warp's rows stream through at the copy's pace.
 */
#include "conv_roll.cuh"

#include <limits.h>

/* output samples per warp: lanes 1..30 (K = 1 needs no halo: all 32 lanes) */
template <int K> __host__ __device__ constexpr int roll_seg() { return (K == 1 ? 32 : 30) * ROLL_TX; }
#define ROLL_WARPS 4               /* warps per block */
#define ROLL_SH 16                 /* output rows per strip (default) */

template <int K, int CH, int B>
__global__ void __launch_bounds__(32 * ROLL_WARPS)
    conv_roll_kernel(const __grid_constant__ conv_params p, int sh, int nsx, long long nwarps)
{
    constexpr int R = K / 2, H = R * CH, NWIN = ROLL_TX + 2 * H, SEG = roll_seg<K>();
    constexpr int LEAD = K == 1 ? 0 : ROLL_TX; /* samples of lane 0 left of the segment */
    static_assert(H <= ROLL_TX, "the halo must come from one neighbour lane");
    const int lane = threadIdx.x & 31;
    const long long gw = (long long)blockIdx.x * ROLL_WARPS + (threadIdx.x >> 5);
    if (gw >= nwarps)
        return; /* whole warps only: no shuffle loses a partner */
    const int wx = (int)(gw % nsx), y0 = (int)(gw / nsx) * sh;
    const int s = wx * SEG - LEAD + lane * ROLL_TX; /* first sample of this lane */
    const bool writer = (K == 1 || (lane >= 1 && lane <= 30)) && s < p.wch;
    const bool border_warp = wx == 0 || wx * SEG - LEAD + 32 * ROLL_TX > p.wch;
    const int rows_out = min(sh, p.height - y0), N = rows_out + K - 1; /* input rows */

    float acc[K][ROLL_TX];
#pragma unroll
    for (int j = 0; j < K; j++)
#pragma unroll
        for (int i = 0; i < ROLL_TX; i++)
            acc[j][i] = 0.0f;

    uint4 raw0[B], raw1[B], raw2[B]; /* rows n, n + 1, n + 2 */
#pragma unroll
    for (int h = 0; h < B; h++)
        raw1[h] = raw2[h] = make_uint4(0, 0, 0, 0);
    auto row_y = [&](int n) { return min(max(y0 - R + n, 0), p.height - 1); };
    roll_load<B>(p, row_y(0), s, raw0);
    if (N > 1)
        roll_load<B>(p, row_y(1), s, raw1);

    for (int n0 = 0; n0 < N; n0 += K) {
#pragma unroll
        for (int u = 0; u < K; u++) {
            const int n = n0 + u;
            if (n >= N) /* not a break: the unrolled slots must stay compile-time */
                continue;
            if (n + 2 < N)
                roll_load<B>(p, row_y(n + 2), s, raw2);

            float f[ROLL_TX];
#pragma unroll
            for (int i = 0; i < ROLL_TX; i++)
                f[i] = conv_word_sample<B, float>(roll_word<B>(raw0, i * B / 4), i % (4 / B));
            if (H > 0 && border_warp && (s < 0 || s + ROLL_TX > p.wch)) {
                /* outside the row: the first or last pixel's sample of the same channel */
                const unsigned char *row = p.in + (size_t)row_y(n) * p.in_pitch;
                float first[CH], last[CH];
#pragma unroll
                for (int c = 0; c < CH; c++) {
                    first[c] = conv_u2f(conv_ld<B>(row, c));
                    last[c] = conv_u2f(conv_ld<B>(row, p.wch - CH + c));
                }
                int c = ((s % CH) + CH) % CH;
#pragma unroll
                for (int i = 0; i < ROLL_TX; i++) {
                    if (s + i < 0)
                        f[i] = roll_pick<CH>(first, c);
                    else if (s + i >= p.wch)
                        f[i] = roll_pick<CH>(last, c);
                    c = c + 1 == CH ? 0 : c + 1;
                }
            }

            /* window: samples s - H .. s + 16 + H - 1 */
            float win[NWIN];
#pragma unroll
            for (int j = 0; j < H; j++) {
                win[j] = __shfl_up_sync(FULL, f[ROLL_TX - H + j], 1);
                win[H + ROLL_TX + j] = __shfl_down_sync(FULL, f[j], 1);
            }
#pragma unroll
            for (int i = 0; i < ROLL_TX; i++)
                win[H + i] = f[i];

            roll_accumulate<K, CH>(p, acc, win, u);

            /* output row m = n - (K - 1) is complete; its slot then serves row m + K (and the
             * rows m < 0 that the first inputs fed are cleared the same way) */
            const int done = (u + 1) % K;
            const int m = n - (K - 1);
            if (m >= 0 && writer)
                roll_store<CH, B>(p, acc[done], y0 + m, s);
#pragma unroll
            for (int i = 0; i < ROLL_TX; i++)
                acc[done][i] = 0.0f;

#pragma unroll
            for (int h = 0; h < B; h++)
                raw0[h] = raw1[h], raw1[h] = raw2[h];
        }
    }
}

/* Whether roll takes a job (shapes, filter and row alignment only). */
extern "C" int conv_roll_supports(const ts_job *job)
{
    conv_traits t;
    if (!conv_job_traits(job, &t) || (t.k != 1 && t.k != 3 && t.k != 5 && t.k != 7) || t.nout != 1 || t.acc_int)
        return 0;
    return (((uintptr_t)job->in.data | (uintptr_t)job->out.data | job->in.pitch | job->out.pitch) &
            15) == 0;
}

struct roll_launcher : conv_launcher {
    static ts_status check(const ts_job *job)
    {
        if (!conv_roll_supports(job))
            return ts_fail(TS_ERR_UNSUPPORTED, "conv roll: " ROLL_NEEDS);
        return TS_OK;
    }
    static ts_status launch(const ts_job *job, conv_params &p)
    {
        return roll_dispatch<roll_launcher, 1, 3, 5, 7>(job, p);
    }
    /* the launch of one instantiation */
    template <int K, int CH, int B> static ts_status run(const ts_job *job, const conv_params &p)
    {
        const int sh = job->param > 0 ? job->param : ROLL_SH;
        const int nsx = (p.wch + roll_seg<K>() - 1) / roll_seg<K>();
        const long long nwarps = (long long)nsx * ((p.height + sh - 1) / sh);
        const long long blocks = (nwarps + ROLL_WARPS - 1) / ROLL_WARPS;
        if (blocks > INT_MAX)
            return ts_fail(TS_ERR_TOO_LARGE, "conv roll: %dx%d needs too many blocks", p.width,
                           p.height);
        conv_roll_kernel<K, CH, B>
            <<<(unsigned)blocks, 32 * ROLL_WARPS, 0, (cudaStream_t)job->stream>>>(p, sh, nsx, nwarps);
        LAUNCH_CHECK("conv_roll_kernel");
        return TS_OK;
    }
};

extern "C" ts_status conv_roll(const ts_job *job) { return conv_run<roll_launcher>(job); }
