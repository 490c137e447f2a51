/* conv.cu - convolution (box, gauss, sharpen, emboss, edge, kernel:FILE) as a matrix product,
 * Out[o][p] = sum_t W[o][t] * Im2col[t][p], depthwise over the colour channels, correlation with
 * border replicate, alpha copied (ts_ref_conv is the oracle). The variants, slowest first:
 *   naive  one thread per output sample, every tap read from global memory (L1 catches the reuse).
 *   gemm   the textbook route: an explicit im2col matrix in scratch memory, built in bands of pixels
 *          so that it never passes CONV_GEMM_SCRATCH_MAX (256 MiB) whatever the image, then the CUDA
 *          Programming Guide's tiled GEMM (16 x 16 tiles of W and of the patch matrix in shared
 *          memory), with bounds checks for sizes that are not multiples of the tile. Depthwise, the
 *          colour channels fold into the columns: Im2col[t][pixel * cc + c].
 *   tiled, sep, roll, pipe, mma, mmapipe: conv_tiled.cu, conv_sep.cu, conv_roll.cu, conv_pipe.cu,
 *          conv_mma.cu (implicit GEMMs: no im2col; pipe and mmapipe feed roll's and mma's
 *          arithmetic from a cp.async ring of input rows; mma runs the filter rows as Toeplitz
 *          matrices on the tensor cores; its kernels are in conv_mma.cuh, one K a file).
 * This file also turns a job into conv_params (conv_common.cuh), the one place that decides how
 * each filter is accumulated and rounded. Every variant runs through conv_common.cuh's one
 * dispatcher, conv_run<launcher>: a launcher's check, the parameters, then its kernel's
 * instantiation picked one axis at a time (bytes, accumulator, outputs, channels, K).
 *
 * Layout: pitched rows of interleaved samples (u8 or u16); device rows start 256-byte aligned
 * (ts_gpu_pitch) but nothing here relies on it.
 */
#include "conv_common.cuh"

#include <limits.h>
#include <math.h>
#include <string.h>

#define CONV_GEMM_SCRATCH_MAX ((size_t)256 << 20) /* bytes of im2col per band, at most */
#define GEMM_TILE 16

/* ---------------------------------------------------------------- jobs to parameters */

const ts_filter *conv_job_filter(const ts_job *job)
{
    if (!job || !job->op || job->op->kind != TS_OP_CONV)
        return NULL;
    const ts_filter *f = &job->op->filter;
    if (f->k < 1 || f->k > TS_MAX_K || f->k % 2 == 0 || f->outputs < 1 ||
        f->outputs > TS_MAX_OUTPUTS || (f->exact && f->divisor <= 0))
        return NULL;
    return f;
}

size_t conv_smem_limit(const ts_job *job)
{
    if (job->dev && job->dev->smem_per_block_optin)
        return job->dev->smem_per_block_optin;
    return CONV_MIN_OPTIN; /* no device in hand: what every GPU we build for has */
}

static uint32_t f2bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Integer separable factors of an exact filter: iw[ky][kx] == col[ky] * row[kx] for all taps. */
static int exact_factors(const ts_filter *f, int32_t *row, int32_t *col)
{
    for (int i = 0; i < f->k; i++) {
        if (f->row[i] != floorf(f->row[i]) || f->col[i] != floorf(f->col[i]) ||
            fabsf(f->row[i]) > 32767 || fabsf(f->col[i]) > 32767)
            return 0;
        row[i] = (int32_t)f->row[i];
        col[i] = (int32_t)f->col[i];
    }
    for (int y = 0; y < f->k; y++)
        for (int x = 0; x < f->k; x++)
            if ((int64_t)col[y] * row[x] != f->iw[y * f->k + x])
                return 0;
    return 1;
}

/* The epilogue of a filter: which conv_epi reproduces ts_ref_conv's rounding most cheaply. */
static int choose_epi(const ts_filter *f, conv_params *p)
{
    int k = f->k, taps = k * k;
    if (p->nout == 2)
        return f->exact ? CONV_EPI_IMAG : CONV_EPI_FMAG;
    /* can the sum leave [0, maxv]? not if every weight is >= 0 and they add up to <= 1 (with
     * room for the float rounding of up to 961 additions) */
    int nonneg = 1;
    double sum = 0;
    for (int t = 0; t < taps; t++) {
        double w = f->exact ? (double)f->iw[t] / f->divisor : (double)f->w[t];
        nonneg = nonneg && w >= 0;
        sum += w;
    }
    double worst = p->maxv * sum * (1.0 + (f->exact ? 0.0 : taps * ldexp(1.0, -23)));
    int inside = nonneg && worst < p->maxv + 0.25;
    if (!f->exact || f->divisor == 1)
        return inside ? CONV_EPI_ROUND_NC : CONV_EPI_ROUND;
    if (p->acc_int)
        return CONV_EPI_DIV;
    /* float division: a / d + 1/2 stays >= 1/(2d) away from an integer for odd d, and the float
     * error is below (2 maxv + 1) 2^-24, so floor() is exact while d (2 maxv + 1) < 2^23 */
    if (f->divisor % 2 == 1 && (double)f->divisor * (2.0 * p->maxv + 1) < ldexp(1.0, 23)) {
        p->divf_inv = (float)(1.0 / f->divisor);
        p->divf_top = (float)((double)p->maxv * f->divisor);
        return inside ? CONV_EPI_DIVF_NC : CONV_EPI_DIVF;
    }
    return CONV_EPI_DIV;
}

/* Exact filters whose partial sums can pass 2^24 accumulate in int32 (nout filters of f). */
static int needs_int(const ts_filter *f, int nout, int maxv)
{
    int fits = 1, taps = f->k * f->k;
    for (int o = 0; o < nout && f->exact; o++) {
        int64_t s = 0;
        for (int t = 0; t < taps; t++)
            s += llabs((long long)f->iw[o * taps + t]);
        fits = fits && km_exact_fits_float(s, maxv);
    }
    return f->exact && !fits;
}

int conv_job_traits(const ts_job *job, conv_traits *t)
{
    const ts_filter *f = conv_job_filter(job);
    int32_t ir[TS_MAX_K], ic[TS_MAX_K];
    if (!f || job->in.channels < 1 || job->in.channels > 4 ||
        (job->in.bytes != 1 && job->in.bytes != 2))
        return 0;
    t->k = f->k;
    t->nout = f->outputs == 2 && f->magnitude ? 2 : 1;
    t->acc_int = needs_int(f, t->nout, ts_max_value(job->in.bytes));
    t->sep_ok = f->separable && t->nout == 1 && (!f->exact || exact_factors(f, ir, ic));
    return 1;
}

ts_status conv_params_init(const ts_job *job, conv_params *p)
{
    const ts_filter *f = conv_job_filter(job);
    const ts_image *in = &job->in, *out = &job->out;
    memset(p, 0, sizeof *p);
    if (!f)
        return ts_fail(TS_ERR_INVALID, "conv: not a convolution with a valid filter");
    ts_status st = ts_image_geometry(in->width, in->height, in->channels, in->bytes, NULL, NULL);
    if (st != TS_OK)
        return st;
    if (!in->data || !out->data || out->width != in->width || out->height != in->height ||
        out->channels != in->channels || out->bytes != in->bytes ||
        in->pitch < ts_row_bytes(in) || out->pitch < ts_row_bytes(out))
        return ts_fail(TS_ERR_INVALID, "conv: input and output images do not match");
    if ((size_t)in->width * in->channels > INT_MAX / 2)
        return ts_fail(TS_ERR_TOO_LARGE, "conv: rows of %d pixels are too long", in->width);
    p->in = (const unsigned char *)in->data;
    p->out = (unsigned char *)out->data;
    p->in_pitch = in->pitch;
    p->out_pitch = out->pitch;
    p->width = in->width;
    p->height = in->height;
    p->ch = in->channels;
    p->bytes = in->bytes;
    p->maxv = ts_max_value(in->bytes);
    p->wch = in->width * in->channels;
    p->alpha = ts_has_alpha(in->channels);
    p->k = f->k;
    p->r = f->k / 2;
    p->kp = f->k + 2 * CONV_PAD;
    p->nout = f->outputs == 2 && f->magnitude ? 2 : 1;
    p->vec_ok = ((uintptr_t)in->data | (uintptr_t)out->data | in->pitch | out->pitch) % 16 == 0;

    int k = f->k, taps = k * k;
    p->acc_int = needs_int(f, p->nout, p->maxv);
    for (int o = 0; o < p->nout; o++)
        for (int ky = 0; ky < k; ky++)
            for (int kx = 0; kx < k; kx++) {
                int t = o * taps + ky * k + kx;
                uint32_t bits = p->acc_int  ? (uint32_t)f->iw[t]
                                : f->exact ? f2bits((float)f->iw[t])
                                           : f2bits(f->w[t]);
                p->w[(o * k + kx) * p->kp + ky + CONV_PAD] = bits;
            }
    p->epi = choose_epi(f, p);
    if (f->exact)
        p->div = conv_div_make(f->divisor, p->maxv);

    if (f->separable && p->nout == 1) {
        int32_t ir[TS_MAX_K], ic[TS_MAX_K];
        if (!f->exact) {
            p->sep_ok = 1;
            for (int i = 0; i < k; i++)
                p->srow[i] = f2bits(f->row[i]), p->scol[i] = f2bits(f->col[i]);
        } else if (exact_factors(f, ir, ic)) {
            p->sep_ok = 1;
            for (int i = 0; i < k; i++) {
                p->srow[i] = p->acc_int ? (uint32_t)ir[i] : f2bits((float)ir[i]);
                p->scol[i] = p->acc_int ? (uint32_t)ic[i] : f2bits((float)ic[i]);
            }
        }
    }
    return TS_OK;
}

/* ---------------------------------------------------------------- naive */

template <int B, class Acc>
__global__ void __launch_bounds__(256) conv_naive_kernel(const __grid_constant__ conv_params p)
{
    const size_t n = (size_t)p.wch * p.height;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        int y = (int)(i / p.wch), s = (int)(i % p.wch);
        int x = s / p.ch, c = s - x * p.ch;
        uint32_t v;
        if (p.alpha && c == p.ch - 1) {
            v = conv_ld<B>(p.in + (size_t)y * p.in_pitch, s);
        } else {
            Acc a[2] = {0, 0};
            for (int ky = 0; ky < p.k; ky++) {
                int yy = min(max(y + ky - p.r, 0), p.height - 1);
                const unsigned char *row = p.in + (size_t)yy * p.in_pitch;
                for (int kx = 0; kx < p.k; kx++) {
                    int xx = min(max(x + kx - p.r, 0), p.width - 1);
                    Acc sample = conv_from_u<Acc>(conv_ld<B>(row, xx * p.ch + c));
                    int wi = kx * p.kp + ky + CONV_PAD;
                    a[0] += conv_wt<Acc>(p.w[wi]) * sample;
                    if (p.nout == 2)
                        a[1] += conv_wt<Acc>(p.w[wi + p.k * p.kp]) * sample;
                }
            }
            v = conv_finish(p, a[0], a[1]);
        }
        conv_st<B>(p.out + (size_t)y * p.out_pitch, s, v);
    }
}

template <int B, class Acc> static ts_status naive_launch(const conv_params &p, cudaStream_t s)
{
    conv_naive_kernel<B, Acc><<<gpu_grid_for((size_t)p.wch * p.height, 256), 256, 0, s>>>(p);
    LAUNCH_CHECK("conv_naive_kernel");
    return TS_OK;
}

struct naive_launcher : conv_launcher {
    static ts_status launch(const ts_job *job, conv_params &p)
    {
        return conv_by_bytes(p, [&](auto b) {
            return conv_by_acc(p, [&](auto acc) {
                return naive_launch<decltype(b)::value, typename decltype(acc)::type>(p, (cudaStream_t)job->stream);
            });
        });
    }
};

extern "C" ts_status conv_naive(const ts_job *job) { return conv_run<naive_launcher>(job); }

/* ---------------------------------------------------------------- gemm */

/* Pixels per band: the im2col of a band, k*k rows by pixels * cc columns of 4 bytes, fits the
 * bound (a band is at least one pixel: 31 * 31 * 3 * 4 bytes). */
static size_t gemm_band_pixels(const ts_job *job, const ts_filter *f)
{
    size_t per_pixel = (size_t)f->k * f->k * ts_color_channels(job->in.channels) * 4;
    size_t pixels = (size_t)job->in.width * job->in.height;
    size_t band = CONV_GEMM_SCRATCH_MAX / per_pixel;
    return pixels < band ? pixels : band;
}

extern "C" size_t conv_gemm_scratch(const ts_job *job)
{
    const ts_filter *f = conv_job_filter(job);
    if (!f || job->in.width < 1 || job->in.height < 1 || job->in.channels < 1 ||
        job->in.channels > 4)
        return 0;
    return gemm_band_pixels(job, f) * f->k * f->k * ts_color_channels(job->in.channels) * 4;
}

/* Im2col of pixels [p0, p0 + npix): col[t][j], t = ky * k + kx, j = (pixel - p0) * cc + c. */
template <int B, class Acc>
__global__ void __launch_bounds__(256)
    conv_im2col_kernel(const __grid_constant__ conv_params p, Acc *col, size_t p0, int ncol, int cc)
{
    const size_t n = (size_t)p.k * p.k * ncol;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < n;
         e += (size_t)gridDim.x * blockDim.x) {
        int t = (int)(e / ncol), j = (int)(e % ncol);
        size_t pix = p0 + (size_t)(j / cc);
        int c = j % cc, x = (int)(pix % p.width), y = (int)(pix / p.width);
        int yy = min(max(y + t / p.k - p.r, 0), p.height - 1);
        int xx = min(max(x + t % p.k - p.r, 0), p.width - 1);
        col[e] = conv_from_u<Acc>(conv_ld<B>(p.in + (size_t)yy * p.in_pitch, xx * p.ch + c));
    }
}

/* C = W (nout x T) * col (T x ncol) with the Programming Guide's shared tiles; each thread owns
 * one element of C, rows past nout are zero. The epilogue writes the column's output sample. */
template <int B, class Acc>
__global__ void __launch_bounds__(GEMM_TILE *GEMM_TILE)
    conv_gemm_kernel(const __grid_constant__ conv_params p, const Acc *col, size_t p0, int ncol,
                     int cc)
{
    __shared__ Acc As[GEMM_TILE][GEMM_TILE], Bs[GEMM_TILE][GEMM_TILE];
    const int tx = threadIdx.x, ty = threadIdx.y, T = p.k * p.k;
    const int j = blockIdx.x * GEMM_TILE + tx; /* column of C; row = ty */
    Acc sum = 0;
    for (int t0 = 0; t0 < T; t0 += GEMM_TILE) {
        int ta = t0 + tx, tb = t0 + ty;
        As[ty][tx] = ty < p.nout && ta < T
                         ? conv_wt<Acc>(p.w[(ty * p.k + ta % p.k) * p.kp + ta / p.k + CONV_PAD])
                         : (Acc)0;
        Bs[ty][tx] = tb < T && j < ncol ? col[(size_t)tb * ncol + j] : (Acc)0;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < GEMM_TILE; i++)
            sum += As[ty][i] * Bs[i][tx];
        __syncthreads();
    }
    /* the magnitude needs both rows of the column: meet in shared memory (As is free now) */
    As[ty][tx] = sum;
    __syncthreads();
    if (ty == 0 && j < ncol) {
        size_t pix = p0 + (size_t)(j / cc);
        int c = j % cc, x = (int)(pix % p.width), y = (int)(pix / p.width);
        uint32_t v = conv_finish(p, As[0][tx], As[1][tx]);
        conv_st<B>(p.out + (size_t)y * p.out_pitch, x * p.ch + c, v);
    }
}

/* Alpha samples pass through (the GEMM writes colour samples only). */
template <int B>
__global__ void __launch_bounds__(256) conv_alpha_kernel(const __grid_constant__ conv_params p)
{
    const size_t n = (size_t)p.width * p.height;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        int y = (int)(i / p.width), s = (int)(i % p.width) * p.ch + p.ch - 1;
        conv_st<B>(p.out + (size_t)y * p.out_pitch, s,
                   conv_ld<B>(p.in + (size_t)y * p.in_pitch, s));
    }
}

template <int B, class Acc>
static ts_status gemm_launch(const ts_job *job, const conv_params &p, size_t band)
{
    cudaStream_t s = (cudaStream_t)job->stream;
    const int cc = ts_color_channels(p.ch);
    const size_t pixels = (size_t)p.width * p.height;
    Acc *col = (Acc *)job->scratch;
    if (p.alpha) {
        conv_alpha_kernel<B><<<gpu_grid_for(pixels, 256), 256, 0, s>>>(p);
        LAUNCH_CHECK("conv_alpha_kernel");
    }
    for (size_t p0 = 0; p0 < pixels; p0 += band) {
        size_t npix = pixels - p0 < band ? pixels - p0 : band;
        int ncol = (int)(npix * cc); /* <= 2^26: the band is bounded */
        conv_im2col_kernel<B, Acc>
            <<<gpu_grid_for((size_t)p.k * p.k * ncol, 256), 256, 0, s>>>(p, col, p0, ncol, cc);
        LAUNCH_CHECK("conv_im2col_kernel");
        dim3 block(GEMM_TILE, GEMM_TILE);
        conv_gemm_kernel<B, Acc><<<gpu_grid_for(ncol, GEMM_TILE), block, 0, s>>>(p, col, p0, ncol, cc);
        LAUNCH_CHECK("conv_gemm_kernel");
    }
    return TS_OK;
}

struct gemm_launcher : conv_launcher {
    static ts_status check(const ts_job *job)
    {
        size_t need = conv_gemm_scratch(job);
        if (!conv_job_filter(job) || !need)
            return ts_fail(TS_ERR_INVALID, "conv gemm: not a valid convolution job");
        if (!job->scratch || job->scratch_bytes < need)
            return ts_fail(TS_ERR_INVALID, "conv gemm: needs %zu bytes of scratch, got %zu", need,
                           job->scratch ? job->scratch_bytes : (size_t)0);
        return TS_OK;
    }
    static ts_status launch(const ts_job *job, conv_params &p)
    {
        size_t band = gemm_band_pixels(job, conv_job_filter(job));
        return conv_by_bytes(p, [&](auto b) {
            return conv_by_acc(p, [&](auto acc) {
                return gemm_launch<decltype(b)::value, typename decltype(acc)::type>(job, p, band);
            });
        });
    }
};

extern "C" ts_status conv_gemm(const ts_job *job) { return conv_run<gemm_launcher>(job); }
