/* conv_sep.cu - convolution, variant `sep`: separable filters as two fused 1-D passes (see conv.cu
 * for the op).
 *
 * Trick: gauss and box weights are an outer product w[ky][kx] = col[ky] * row[kx], so a K x K
 * filter costs 2K FMAs per output instead of K^2 (62 instead of 961 at K = 31). One kernel, one
 * trip through global memory: a block stages its input tile with halo in shared memory (as
 * `tiled`), filters each staged row horizontally into a second shared buffer (the K rows of halo
 * included), then filters the columns of that buffer vertically. Both passes keep their 1-D weights
 * in registers (K is a run-time value, so the loops are unrolled to the largest K and guarded) and
 * reuse every loaded value for a register run of outputs: the row pass gives each thread a row
 * (lanes down the rows, odd row pitch: no bank conflicts) and 16 consecutive samples, walking the
 * 16 + 2 r C input samples once; the column pass gives each thread a column (lanes across) and 8
 * rows, walking the 8 + 2 r input rows once. Exact box filters stay exact: their factors are the
 * integers 1, and the float partial sums stay below 2^24 (jobs past that go to `tiled`).
 *
 * Layout: interleaved samples; the channel count is a template parameter so that the row pass's
 * tap positions (multiples of C) are static.
 */
#include "conv_common.cuh"


#define SEP_BS 64 /* output samples per tile row */
#define SEP_BH 32 /* output rows per tile */
#define SEP_RUN 16 /* samples per thread in the row pass */
#define SEP_TY 8   /* rows per thread in the column pass */
#define SEP_HP (SEP_BS + 1) /* row pitch of the row-pass buffer: odd, conflict-free columns */

static_assert(SEP_BS / SEP_RUN * (SEP_BH + TS_MAX_K - 1) <= 256, "row pass: one job per thread");
static_assert(SEP_BS * (SEP_BH / SEP_TY) == 256, "column pass: one job per thread");

/* Shared-memory geometry: input columns (ncols, staged), its odd pitch, the alignment offset. */
static void sep_cols(int k, int ch, int bytes, int *ncols, int *spitch, int *off)
{
    const int spw = 4 / bytes, h = k / 2 * ch;
    *off = ((-h) % spw + spw) % spw;
    *ncols = conv_round_up(*off + 2 * h + SEP_BS, spw);
    *spitch = *ncols | 1;
}

static size_t sep_smem(int k, int ch, int bytes)
{
    int ncols, spitch, off;
    sep_cols(k, ch, bytes, &ncols, &spitch, &off);
    return (size_t)(SEP_BH + k - 1) * (spitch + SEP_HP) * sizeof(float);
}

template <int B, int CH>
__global__ void __launch_bounds__(256)
    conv_sep_kernel(const __grid_constant__ conv_params p, int ncols, int spitch, int off, int ntx,
                    long long ntiles)
{
    extern __shared__ __align__(16) unsigned char conv_smem[];
    constexpr int JMAX = SEP_RUN + (TS_MAX_K - 1) * CH; /* row-pass window of the largest K */
    float *S = (float *)conv_smem;                       /* staged input, rows x spitch */
    const int r = p.r, h = r * CH, nrows = SEP_BH + 2 * r;
    float *Hb = S + nrows * spitch;                      /* row-pass output, rows x SEP_HP */
    const int t = threadIdx.y * 32 + threadIdx.x;

    for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const int s0 = (int)(tile % ntx) * SEP_BS, y0 = (int)(tile / ntx) * SEP_BH;
        conv_stage<B, float, false>(p, S, spitch, s0 - h - off, ncols, y0 - r, nrows);
        __syncthreads();

        { /* row pass: thread -> (row, run of 16 samples); taps of sample i at i + kx * CH */
            const int row = t % (SEP_BH + TS_MAX_K - 1), run = t / (SEP_BH + TS_MAX_K - 1);
            if (row < nrows && run < SEP_BS / SEP_RUN) {
                float w[TS_MAX_K], acc[SEP_RUN];
#pragma unroll
                for (int kx = 0; kx < TS_MAX_K; kx++)
                    w[kx] = __uint_as_float(p.srow[kx]); /* zero past k */
#pragma unroll
                for (int i = 0; i < SEP_RUN; i++)
                    acc[i] = 0.0f;
                const float *src = S + row * spitch + off + run * SEP_RUN;
                const int jn = SEP_RUN + 2 * h; /* window of this K */
#pragma unroll
                for (int j = 0; j < JMAX; j++) {
                    if (j < jn) {
                        const float v = src[j];
#pragma unroll
                        for (int i = 0; i < SEP_RUN; i++)
                            if (j >= i && (j - i) % CH == 0 && (j - i) / CH < TS_MAX_K)
                                acc[i] = fmaf(w[(j - i) / CH], v, acc[i]);
                    }
                }
#pragma unroll
                for (int i = 0; i < SEP_RUN; i++)
                    Hb[row * SEP_HP + run * SEP_RUN + i] = acc[i];
            }
        }
        __syncthreads();

        { /* column pass: thread -> (column, 8 rows) */
            const int col = t % SEP_BS, g = t / SEP_BS;
            float w[TS_MAX_K], acc[SEP_TY];
#pragma unroll
            for (int ky = 0; ky < TS_MAX_K; ky++)
                w[ky] = __uint_as_float(p.scol[ky]);
#pragma unroll
            for (int j = 0; j < SEP_TY; j++)
                acc[j] = 0.0f;
            const float *src = Hb + g * SEP_TY * SEP_HP + col;
#pragma unroll
            for (int iy = 0; iy < SEP_TY + TS_MAX_K - 1; iy++) {
                if (iy < SEP_TY + 2 * r) {
                    const float v = src[iy * SEP_HP];
#pragma unroll
                    for (int j = 0; j < SEP_TY; j++)
                        if (iy >= j && iy - j < TS_MAX_K)
                            acc[j] = fmaf(w[iy - j], v, acc[j]);
                }
            }
            const int q = s0 + col;
#pragma unroll
            for (int j = 0; j < SEP_TY; j++) {
                const int y = y0 + g * SEP_TY + j;
                if (y < p.height && q < p.wch) {
                    uint32_t v;
                    if ((CH == 2 || CH == 4) && q % CH == CH - 1) /* alpha: the input sample */
                        v = conv_to_u(S[(g * SEP_TY + j + r) * spitch + off + h + col]);
                    else
                        v = conv_finish(p, acc[j], acc[j]);
                    conv_st<B>(p.out + (size_t)y * p.out_pitch, q, v);
                }
            }
        }
        __syncthreads(); /* the next tile overwrites both buffers */
    }
}

extern "C" int conv_sep_supports(const ts_job *job)
{
    conv_traits t;
    if (!conv_job_traits(job, &t) || !t.sep_ok || t.acc_int)
        return 0;
    return sep_smem(t.k, job->in.channels, job->in.bytes) <= conv_smem_limit(job);
}

template <int B, int CH> static ts_status sep_launch(const ts_job *job, const conv_params &p)
{
    int ncols, spitch, off;
    sep_cols(p.k, CH, B, &ncols, &spitch, &off);
    size_t bytes = sep_smem(p.k, CH, B);
    auto kernel = conv_sep_kernel<B, CH>;
    ts_status st = gpu_allow_smem((const void *)kernel, bytes);
    if (st != TS_OK)
        return st;
    const int ntx = (p.wch + SEP_BS - 1) / SEP_BS;
    long long ntiles = (long long)ntx * ((p.height + SEP_BH - 1) / SEP_BH);
    kernel<<<gpu_grid(ntiles), dim3(32, 8), bytes, (cudaStream_t)job->stream>>>(p, ncols, spitch, off, ntx,
                                                                     ntiles);
    LAUNCH_CHECK("conv_sep_kernel");
    return TS_OK;
}

struct sep_launcher : conv_launcher {
    static ts_status check(const ts_job *job)
    {
        if (!conv_sep_supports(job))
            return ts_fail(TS_ERR_UNSUPPORTED, "conv sep: needs a separable filter with float-exact "
                                               "sums whose tile fits in shared memory");
        return TS_OK;
    }
    static ts_status launch(const ts_job *job, conv_params &p)
    {
        if (!p.sep_ok)
            return ts_fail(TS_ERR_UNSUPPORTED, "conv sep: filter is not separable");
        return conv_by_bytes(p, [&](auto b) {
            return conv_by_ch(p, [&](auto ch) {
                return sep_launch<decltype(b)::value, decltype(ch)::value>(job, p);
            });
        });
    }
};

extern "C" ts_status conv_sep(const ts_job *job) { return conv_run<sep_launcher>(job); }
