/* conv_pipe.cu - convolution, variant `pipe`: roll's rolling register rows (conv_roll.cu) fed by
 * an asynchronous copy ring in shared memory, so that many more bytes are in flight per SM.
 *
 * roll keeps the next two input rows in registers: about 1 KB in flight per warp (the ncu profile
 * of the register-fed 3x3 kernels showed warps waiting on those loads). Here each warp owns a
 * private ring of PIPE_NS input rows in shared memory, filled with cp.async (16 bytes per copy,
 * L2 only; conv_common.cuh): while row n is computed, rows n + 1 .. n + 7 are on their way, and
 * in-flight copies hold no registers. Per warp:
 *   - a segment of 32 lanes x 16 samples, every lane writing (roll spends lanes 0 and 31 on the
 *     halo); the ring row also holds 16 samples each side, so the horizontal halo is read from
 *     shared memory (three 16-byte loads per lane and row, u8);
 *   - rows are waited for with cp.async.wait_group and published to the warp with __syncwarp: no
 *     block barrier, warps never wait for each other;
 *   - at the image's sides, H lanes write the replicated border samples into the ring row.
 * Same arithmetic, epilogue and stores as roll (conv_roll.cuh), so the same filters (K = 3, 5, 7,
 * one output, float-exact sums) and the same results. Measured (H200, 8K RGB8 gauss:3): roll
 * 0.189 ms, pipe 0.101; what bounds pipe then is the FP32 work (K*K FMAs a sample), which mmapipe
 * moves to the tensor cores. cp.async needs sm_80.
 */
#include "conv_roll.cuh"

#include <limits.h>

#define PIPE_WARPS 4                 /* warps per block */
#define PIPE_SEG (32 * ROLL_TX)      /* output samples per warp */
#define PIPE_NS 8                    /* ring rows per warp: PIPE_NS - 1 in flight */
#define PIPE_SH 32                   /* output rows per strip (default; job->param overrides) */
#define PIPE_ROW_BYTES(B) (34 * 16 * (B)) /* 16 halo samples, 512 own, 16 halo; 16-byte chunks */


/* Blocks per SM the register budget must allow: 4 (128 registers) at K = 3 keeps 16 warps and
 * 60 KB of copies in flight per SM; larger K need the registers for their K rows of sums. */
template <int K> constexpr int pipe_min_blocks() { return K == 3 ? 4 : K == 5 ? 3 : 2; }

template <int K, int CH, int B>
__global__ void __launch_bounds__(32 * PIPE_WARPS, pipe_min_blocks<K>())
    conv_pipe_kernel(const __grid_constant__ conv_params p, int sh, int nsx, long long nwarps)
{
#if __CUDA_ARCH__ >= 800
    constexpr int R = K / 2, H = R * CH, NWIN = ROLL_TX + 2 * H, RB = PIPE_ROW_BYTES(B);
    static_assert(H <= ROLL_TX, "the halo must fit in the ring row's 16 extra samples");
    extern __shared__ __align__(16) unsigned char pipe_smem[];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    const long long gw = (long long)blockIdx.x * PIPE_WARPS + wib;
    if (gw >= nwarps)
        return; /* whole warps only */
    unsigned char *ring = pipe_smem + (size_t)wib * PIPE_NS * RB;
    const int wx = (int)(gw % nsx), y0 = (int)(gw / nsx) * sh;
    const int s0 = wx * PIPE_SEG - ROLL_TX;    /* sample at byte 0 of a ring row */
    const int s = s0 + ROLL_TX + lane * ROLL_TX; /* this lane's first output sample */
    const int rows_out = min(sh, p.height - y0), N = rows_out + K - 1; /* input rows */
    const bool fix = s0 < 0 || p.wch - s0 < RB / B; /* the ring row reaches past a side */

    /* input row n into ring row n mod PIPE_NS (conv_common.cuh) */
    auto issue = [&](int n) {
        const int yy = min(max(y0 - R + n, 0), p.height - 1);
        conv_ring_fill<B, RB / 16>(ring + (n % PIPE_NS) * RB, p.in + (size_t)yy * p.in_pitch, s0,
                                   p.wch, lane);
    };

    float acc[K][ROLL_TX];
#pragma unroll
    for (int j = 0; j < K; j++)
#pragma unroll
        for (int i = 0; i < ROLL_TX; i++)
            acc[j][i] = 0.0f;

    conv_ring_start<PIPE_NS - 1>(N, issue);

    for (int n0 = 0; n0 < N; n0 += K) {
#pragma unroll
        for (int u = 0; u < K; u++) {
            const int n = n0 + u;
            if (n >= N) /* not a break: the unrolled slots must stay compile-time */
                continue;
            conv_ring_next<PIPE_NS - 1>(n, N, issue); /* row n has landed */

            unsigned char *rrow = ring + (n % PIPE_NS) * RB;
            if (fix) { /* replicate the border into the ring row */
                conv_ring_border<CH, B, H>(rrow, s0, RB / B, p.wch, lane);
                __syncwarp();
            }

            /* the window, samples s - H .. s + 16 + H - 1, from this lane's chunk and the 16
             * samples either side of it */
            uint4 raw[3 * B];
#pragma unroll
            for (int j = 0; j < 3 * B; j++)
                raw[j] = *(const uint4 *)(rrow + (lane * B + j) * 16);
            __syncwarp(); /* the ring row is read: the copy issued next may refill it */
            float win[NWIN];
#pragma unroll
            for (int i = 0; i < NWIN; i++) {
                const int t = ROLL_TX - H + i; /* sample of the 48 loaded */
                win[i] = conv_word_sample<B, float>(roll_word<3 * B>(raw, t * B / 4), t % (4 / B));
            }

            roll_accumulate<K, CH>(p, acc, win, u);

            /* output row m = n - (K - 1) is complete; its slot then serves row m + K */
            const int done = (u + 1) % K;
            const int m = n - (K - 1);
            if (m >= 0 && s < p.wch)
                roll_store<CH, B>(p, acc[done], y0 + m, s);
#pragma unroll
            for (int i = 0; i < ROLL_TX; i++)
                acc[done][i] = 0.0f;
        }
    }
    conv_cp_wait<0>(); /* no copy outlives the block */
#endif
}

extern "C" int conv_pipe_supports(const ts_job *job)
{
    return conv_roll_supports(job) && job->op->filter.k != 1;
}

struct pipe_launcher : conv_launcher {
    static ts_status check(const ts_job *job)
    {
        if (!conv_pipe_supports(job))
            return ts_fail(TS_ERR_UNSUPPORTED, "conv pipe: " PIPE_NEEDS);
        return TS_OK;
    }
    static ts_status launch(const ts_job *job, conv_params &p)
    {
        return roll_dispatch<pipe_launcher, 3, 5, 7>(job, p);
    }
    /* the launch of one instantiation */
    template <int K, int CH, int B> static ts_status run(const ts_job *job, const conv_params &p)
    {
        const int sh = job->param > 0 ? job->param : PIPE_SH;
        const int nsx = (p.wch + PIPE_SEG - 1) / PIPE_SEG;
        const long long nwarps = (long long)nsx * ((p.height + sh - 1) / sh);
        const long long blocks = (nwarps + PIPE_WARPS - 1) / PIPE_WARPS;
        if (blocks > INT_MAX)
            return ts_fail(TS_ERR_TOO_LARGE, "conv pipe: %dx%d needs too many blocks", p.width,
                           p.height);
        const size_t smem = (size_t)PIPE_WARPS * PIPE_NS * PIPE_ROW_BYTES(B);
        ts_status st = gpu_allow_smem((const void *)conv_pipe_kernel<K, CH, B>, smem);
        if (st != TS_OK)
            return st;
        conv_pipe_kernel<K, CH, B><<<(unsigned)blocks, 32 * PIPE_WARPS, smem,
                                     (cudaStream_t)job->stream>>>(p, sh, nsx, nwarps);
        LAUNCH_CHECK("conv_pipe_kernel");
        return TS_OK;
    }
};

extern "C" ts_status conv_pipe(const ts_job *job) { return conv_run<pipe_launcher>(job); }
