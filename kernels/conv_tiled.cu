/* conv_tiled.cu - convolution, variant `tiled`: the implicit GEMM (see conv.cu for the op).
 *
 * Trick: no im2col matrix. A block stages its input tile with the halo once in shared memory
 * (rows y0 - r .. y0 + BH + r, samples s0 - r*C .. s0 + 256 + r*C, converted to float, or int32
 * for exact filters whose partial sums can pass 2^24), border replicated during staging, so the
 * inner loop has no clamps. Each thread then accumulates a register tile of TX x TY outputs:
 * samples lane + 32 t (t < TX: consecutive lanes read consecutive words, no bank conflicts) of TY
 * consecutive rows (TY = 4, or 8 for K > 7). Walking the input rows iy of the tile once, each
 * value loaded from shared memory feeds the TY output rows that use it (rows iy - ty); the
 * weights of those rows come from the kernel parameters (constant bank), padded with zero rows
 * so that no branch is needed.
 * K is a run-time value (1..31); the block height shrinks when a large K's halo would not fit in
 * shared memory, down to one row of threads, which fits every K on every sm_75+ GPU.
 *
 * Layout: interleaved samples (sample space, see conv_common.cuh); any pitch (16-byte aligned rows
 * load a word at a time).
 */
#include "conv_common.cuh"


#define TILED_TX 8   /* samples per thread, 32 apart */
#define TILED_BS (32 * TILED_TX)
/* Rows per thread: 8 for K > 7 (each shared-memory load then feeds 64 FMAs, and the zero weight
 * rows that pad the first and last TY - 1 input rows cost little next to K), 4 for small K. */
#define TILED_TY_SMALL 4
#define TILED_TY_LARGE 8
static inline int tiled_ty(int k) { return k > 7 ? TILED_TY_LARGE : TILED_TY_SMALL; }

static_assert(TILED_TY_LARGE <= CONV_PAD + 1, "weight padding too small for the register tile");

template <int B, class Acc, int NOUT, int TY>
__global__ void __launch_bounds__(256)
    conv_tiled_kernel(const __grid_constant__ conv_params p, int ncols, int off, int ntx,
                      long long ntiles)
{
    extern __shared__ __align__(16) unsigned char conv_smem[];
    Acc *s = (Acc *)conv_smem;
    const int lane = threadIdx.x, ty = threadIdx.y;
    const int BH = blockDim.y * TY, nrows = BH + 2 * p.r, h = p.r * p.ch;
    for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const int s0 = (int)(tile % ntx) * TILED_BS, y0 = (int)(tile / ntx) * BH;
        /* smem column 0 is sample a0 = s0 - h - off (word aligned); sample q is at q - a0 */
        conv_stage<B, Acc, true>(p, s, ncols, s0 - h - off, ncols, y0 - p.r, nrows);
        __syncthreads();

        Acc acc[NOUT][TY][TILED_TX];
#pragma unroll
        for (int o = 0; o < NOUT; o++)
#pragma unroll
            for (int j = 0; j < TY; j++)
#pragma unroll
                for (int t = 0; t < TILED_TX; t++)
                    acc[o][j][t] = 0;
        /* tap kx of output sample s0 + lane + 32t reads smem column off + lane + 32t + kx * C */
        const Acc *base = s + ty * TY * ncols + off + lane;
        for (int iy = 0; iy < TY + p.k - 1; iy++) {
            const Acc *srow = base + iy * ncols;
            for (int kx = 0; kx < p.k; kx++) {
                Acc v[TILED_TX];
#pragma unroll
                for (int t = 0; t < TILED_TX; t++)
                    v[t] = srow[kx * p.ch + 32 * t];
#pragma unroll
                for (int o = 0; o < NOUT; o++) {
                    const int wi = (o * p.k + kx) * p.kp + iy + CONV_PAD; /* weight of row iy */
#pragma unroll
                    for (int j = 0; j < TY; j++) { /* output row j uses ky = iy - j */
                        Acc w = conv_wt<Acc>(p.w[wi - j]);
#pragma unroll
                        for (int t = 0; t < TILED_TX; t++)
                            acc[o][j][t] += w * v[t];
                    }
                }
            }
        }

#pragma unroll
        for (int j = 0; j < TY; j++) {
            const int y = y0 + ty * TY + j;
            if (y >= p.height)
                break;
            unsigned char *orow = p.out + (size_t)y * p.out_pitch;
            const Acc *center = s + (ty * TY + j + p.r) * ncols + off + h + lane;
#pragma unroll
            for (int t = 0; t < TILED_TX; t++) {
                const int q = s0 + lane + 32 * t;
                if (q >= p.wch)
                    break;
                uint32_t v;
                if (p.alpha && (q & (p.ch - 1)) == p.ch - 1)
                    v = conv_to_u(center[32 * t]);
                else
                    v = conv_finish(p, acc[0][j][t], acc[NOUT - 1][j][t]);
                conv_st<B>(orow, q, v);
            }
        }
        __syncthreads(); /* the next tile overwrites shared memory */
    }
}

/* Shared-memory geometry of a launch: columns per row (and the word-alignment offset). */
static void tiled_cols(const conv_params &p, int *ncols, int *off)
{
    const int spw = 4 / p.bytes, h = p.r * p.ch;
    *off = ((-h) % spw + spw) % spw; /* s0 - h - off is a multiple of spw (s0 is) */
    *ncols = conv_round_up(*off + 2 * h + TILED_BS, spw);
}

/* Rows of threads per block (8, 4, 2 or 1) whose tile fits `limit` bytes; 0 if none does. */
static int tiled_rows(const conv_params &p, size_t limit, size_t *bytes)
{
    int ncols, off;
    tiled_cols(p, &ncols, &off);
    for (int by = 8; by >= 1; by /= 2) {
        *bytes = (size_t)(by * tiled_ty(2 * p.r + 1) + 2 * p.r) * ncols * 4;
        if (*bytes <= limit)
            return by;
    }
    return 0;
}

/* Rows of threads for a job without conv_params (supports: shapes only). */
static int tiled_rows_job(const ts_job *job, size_t *bytes)
{
    const ts_filter *f = conv_job_filter(job);
    if (!f || job->in.channels < 1 || job->in.channels > 4 || (job->in.bytes != 1 && job->in.bytes != 2))
        return 0;
    conv_params p; /* only the fields tiled_cols and tiled_rows read */
    p.bytes = job->in.bytes;
    p.ch = job->in.channels;
    p.r = f->k / 2;
    return tiled_rows(p, conv_smem_limit(job), bytes);
}

extern "C" int conv_tiled_supports(const ts_job *job)
{
    size_t bytes;
    return tiled_rows_job(job, &bytes) > 0;
}

template <int B, class Acc, int NOUT, int TY>
static ts_status tiled_launch(const ts_job *job, const conv_params &p)
{
    int ncols, off;
    size_t bytes;
    tiled_cols(p, &ncols, &off);
    int by = tiled_rows(p, conv_smem_limit(job), &bytes);
    if (!by)
        return ts_fail(TS_ERR_UNSUPPORTED, "conv tiled: K=%d does not fit in shared memory", p.k);
    auto kernel = conv_tiled_kernel<B, Acc, NOUT, TY>;
    ts_status st = gpu_allow_smem((const void *)kernel, bytes);
    if (st != TS_OK)
        return st;
    const int bh = by * TY, ntx = (p.wch + TILED_BS - 1) / TILED_BS;
    long long ntiles = (long long)ntx * ((p.height + bh - 1) / bh);
    kernel<<<gpu_grid(ntiles), dim3(32, by), bytes, (cudaStream_t)job->stream>>>(p, ncols, off, ntx, ntiles);
    LAUNCH_CHECK("conv_tiled_kernel");
    return TS_OK;
}

struct tiled_launcher : conv_launcher {
    static ts_status launch(const ts_job *job, conv_params &p)
    {
        auto pick = [&](auto ty) {
            return conv_by_bytes(p, [&](auto b) {
                return conv_by_acc(p, [&](auto acc) {
                    return conv_by_nout(p, [&](auto nout) {
                        return tiled_launch<decltype(b)::value, typename decltype(acc)::type,
                                            decltype(nout)::value, decltype(ty)::value>(job, p);
                    });
                });
            });
        };
        return tiled_ty(p.k) == TILED_TY_LARGE ? pick(conv_int<TILED_TY_LARGE>())
                                               : pick(conv_int<TILED_TY_SMALL>());
    }
};

extern "C" ts_status conv_tiled(const ts_job *job) { return conv_run<tiled_launcher>(job); }
