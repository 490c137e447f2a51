/* conv_common.cuh - what the conv_*.cu files share (internal to kernels/): the job as a kernel
 * parameter, sample conversions, the epilogues that must agree with ts_ref_conv, and the staging
 * of an input tile into shared memory with the border replicated.
 *
 * Sample space: a row of W pixels of C channels is a row of W * C samples (u8 or u16), and the tap
 * (ky, kx) of output sample s reads input sample s + (kx - r) * C of row y + ky - r. All colour
 * channels share one filter, so a kernel can treat interleaved RGB as plain samples; only alpha
 * samples (channel C - 1 when C is 2 or 4) are copied instead.
 *
 * The filter travels by value in the kernel parameters (conv_params, about 11 KB: CUDA 12.1+
 * allows 32 KB on sm_70 and later), so concurrent jobs on different streams never share state.
 */
#ifndef CONV_COMMON_CUH
#define CONV_COMMON_CUH

#include "conv_math.h"
#include "gpu_util.cuh"
#include "variants.h"

#include <limits.h>
#include <new>
#include <stdint.h>
#include <type_traits>

/* Weight rows are stored transposed and padded: w[(o * k + kx) * kp + ky + CONV_PAD], kp = k + 2 *
 * CONV_PAD, zero outside 0 <= ky < k, so a register tile of up to CONV_PAD + 1 rows can read the
 * weights of rows iy - ty (any ty) without a branch. */
#define CONV_PAD 7
#define CONV_KP_MAX (TS_MAX_K + 2 * CONV_PAD)
#define CONV_WORDS (TS_MAX_OUTPUTS * TS_MAX_K * CONV_KP_MAX)
#define CONV_MIN_OPTIN (64 * 1024)    /* the opt-in limit of the smallest GPU we run on (sm_75) */

/* How an accumulator becomes an output sample (all agree with ts_ref_conv; see conv_params_init). */
enum conv_epi {
    CONV_EPI_ROUND_NC, /* float: rint; the filter cannot leave [0, maxv] (weights >= 0, sum <= 1) */
    CONV_EPI_ROUND,    /* float: clamp, rint (also exact filters with divisor 1) */
    CONV_EPI_DIVF_NC,  /* exact, odd divisor: floor(a / d + 1/2) in float, a already in [0, maxv d] */
    CONV_EPI_DIVF,     /* the same after clamping a to [0, maxv d] */
    CONV_EPI_DIV,      /* exact: conv_div_round_sat */
    CONV_EPI_FMAG,     /* float magnitude of two outputs */
    CONV_EPI_IMAG      /* exact magnitude of two outputs */
};

struct conv_params {
    const unsigned char *in;
    unsigned char *out;
    size_t in_pitch, out_pitch; /* bytes */
    int width, height, ch, bytes, maxv;
    int wch;      /* samples per row: width * ch */
    int alpha;    /* 1 when the last channel is alpha (ch 2 or 4) */
    int k, r, kp; /* kp = k + 2 * CONV_PAD */
    int nout;     /* filters accumulated: 2 for a magnitude, else 1 */
    int epi;      /* enum conv_epi */
    int acc_int;  /* 1: int32 accumulation (exact filters whose partial sums can pass 2^24) */
    int vec_ok;   /* 1: in and out rows start 16-byte aligned (pointer and pitch) */
    int sep_ok;   /* 1: w[o=0][ky][kx] = scol[ky] * srow[kx] exactly (as accumulated) */
    float divf_inv, divf_top; /* CONV_EPI_DIVF*: 1 / d and maxv * d */
    conv_div div;             /* CONV_EPI_DIV */
    uint32_t srow[TS_MAX_K], scol[TS_MAX_K]; /* separable factors, float or int32 bits */
    uint32_t w[CONV_WORDS];                  /* float or int32 bits (acc_int), layout above */
};

/* ---------------------------------------------------------------- host side (conv.cu) */

/* The one dispatcher of the conv variants (hist_run_job's counterpart). A variant's launcher is
 * a struct
 *     struct X_launcher : conv_launcher {
 *         static ts_status check(const ts_job *job);        optional: refuse before any work
 *         static ts_status launch(const ts_job *job, conv_params &p);
 *     };
 * whose launch picks its kernel's instantiation with the conv_by_* pickers below, each of which
 * calls f with one compile-time value (conv_int<V> or conv_type<T>) for one axis of the job;
 * conv_run<X_launcher>(job) is the variant's entry in variants.h. conv_params (about 11 KB) lives
 * on the heap, not on the caller's stack. */
struct conv_launcher {
    static ts_status check(const ts_job *) { return TS_OK; }
};

/* Checks the job and fills *p (TS_ERR_INVALID with a reason for a malformed job). */
ts_status conv_params_init(const ts_job *job, conv_params *p);

template <class L> static ts_status conv_run(const ts_job *job)
{
    ts_status st = L::check(job);
    if (st != TS_OK)
        return st;
    conv_params *p = new (std::nothrow) conv_params;
    if (!p)
        return ts_fail(TS_ERR_NOMEM, "out of memory");
    st = conv_params_init(job, p);
    if (st == TS_OK)
        st = L::launch(job, *p);
    delete p;
    return st;
}

template <int V> using conv_int = std::integral_constant<int, V>;
template <class T> struct conv_type {
    typedef T type;
};

/* f(conv_int<B>()): bytes a sample, 1 or 2. */
template <class F> static inline ts_status conv_by_bytes(const conv_params &p, F &&f)
{
    return p.bytes == 1 ? f(conv_int<1>()) : f(conv_int<2>());
}
/* f(conv_type<Acc>()): int32_t for exact filters whose partial sums can pass 2^24, else float. */
template <class F> static inline ts_status conv_by_acc(const conv_params &p, F &&f)
{
    return p.acc_int ? f(conv_type<int32_t>()) : f(conv_type<float>());
}
/* f(conv_int<NOUT>()): filters accumulated, 2 for a magnitude, else 1. */
template <class F> static inline ts_status conv_by_nout(const conv_params &p, F &&f)
{
    return p.nout == 2 ? f(conv_int<2>()) : f(conv_int<1>());
}
/* f(conv_int<CH>()): channels, 1 to 4. */
template <class F> static inline ts_status conv_by_ch(const conv_params &p, F &&f)
{
    switch (p.ch) {
    case 1: return f(conv_int<1>());
    case 2: return f(conv_int<2>());
    case 3: return f(conv_int<3>());
    default: return f(conv_int<4>());
    }
}
/* f(conv_int<K>()) for the K of the list that the job has; the last one takes any other K (the
 * variant's check has refused those). */
template <int K0, int... KS, class F> static inline ts_status conv_by_k(const conv_params &p, F &&f)
{
    if constexpr (sizeof...(KS) == 0)
        return f(conv_int<K0>());
    else
        return p.k == K0 ? f(conv_int<K0>()) : conv_by_k<KS...>(p, f);
}

/* The filter a job asks for, or NULL when the job is not a convolution. */
const ts_filter *conv_job_filter(const ts_job *job);
/* What a variant's supports() needs to know of a job without device memory: 0 if the job is
 * not a valid convolution. acc_int and sep_ok as conv_params_init would set them. */
typedef struct conv_traits {
    int k, nout, acc_int, sep_ok;
} conv_traits;
int conv_job_traits(const ts_job *job, conv_traits *t);
/* Dynamic shared memory a block of this job's device may use (opt-in limit). */
size_t conv_smem_limit(const ts_job *job);

static inline int conv_round_up(int a, int b) { return (a + b - 1) / b * b; }

/* Whether every byte offset of the job's images fits the 32-bit offsets of the tensor-core
 * kernels (mma, mmapipe, mmasep, mmasep2, mmabox). */
static inline bool conv_offsets_fit_int(const ts_job *job)
{
    return (uint64_t)job->in.pitch * job->in.height <= INT_MAX && (uint64_t)job->out.pitch * job->out.height <= INT_MAX;
}
/* Floor division for a possibly negative a (b > 0). */
static inline __host__ __device__ int conv_floor_div(int a, int b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* ---------------------------------------------------------------- device side */

template <class Acc> __device__ __forceinline__ Acc conv_wt(uint32_t bits);
template <> __device__ __forceinline__ float conv_wt<float>(uint32_t bits)
{
    return __uint_as_float(bits);
}
template <> __device__ __forceinline__ int32_t conv_wt<int32_t>(uint32_t bits)
{
    return (int32_t)bits;
}

/* v < 2^23 as a float, exactly, without the quarter-rate I2F: 2^23 + v has v as its mantissa. */
__device__ __forceinline__ float conv_u2f(uint32_t v)
{
    return __uint_as_float(0x4B000000u | v) - 8388608.0f;
}

/* Sample j of a 32-bit word holding 4 u8 (B = 1) or 2 u16 (B = 2) samples, as Acc. */
template <int B, class Acc> __device__ __forceinline__ Acc conv_word_sample(uint32_t w, int j);
template <> __device__ __forceinline__ float conv_word_sample<1, float>(uint32_t w, int j)
{
    return __uint_as_float(__byte_perm(w, 0x4B000000u, 0x7440u | (unsigned)j)) - 8388608.0f;
}
template <> __device__ __forceinline__ float conv_word_sample<2, float>(uint32_t w, int j)
{
    return __uint_as_float(__byte_perm(w, 0x4B000000u, j ? 0x7432u : 0x7410u)) - 8388608.0f;
}
template <> __device__ __forceinline__ int32_t conv_word_sample<1, int32_t>(uint32_t w, int j)
{
    return (int32_t)((w >> (8 * j)) & 0xFFu);
}
template <> __device__ __forceinline__ int32_t conv_word_sample<2, int32_t>(uint32_t w, int j)
{
    return (int32_t)((w >> (16 * j)) & 0xFFFFu);
}

/* Sample i of a row (B bytes per sample). */
template <int B> __device__ __forceinline__ uint32_t conv_ld(const unsigned char *row, int i)
{
    return B == 2 ? (uint32_t)((const uint16_t *)row)[i] : (uint32_t)row[i];
}
template <int B> __device__ __forceinline__ void conv_st(unsigned char *row, int i, uint32_t v)
{
    if (B == 2)
        ((uint16_t *)row)[i] = (uint16_t)v;
    else
        row[i] = (unsigned char)v;
}

template <class Acc> __device__ __forceinline__ Acc conv_from_u(uint32_t v);
template <> __device__ __forceinline__ float conv_from_u<float>(uint32_t v) { return conv_u2f(v); }
template <> __device__ __forceinline__ int32_t conv_from_u<int32_t>(uint32_t v)
{
    return (int32_t)v;
}
/* An accumulator type holding an exact sample value, back to the sample. */
__device__ __forceinline__ uint32_t conv_to_u(float v) { return __float_as_uint(v + 8388608.0f) & 0x7FFFFFu; }
__device__ __forceinline__ uint32_t conv_to_u(int32_t v) { return (uint32_t)v; }

/* 1.5 * 2^23: v + this, for |v| < 2^22, rounds v to an integer (ties to even, as rintf) and leaves
 * that integer in the low mantissa bits. */
#define CONV_MAGIC 12582912.0f
#define CONV_MAGIC_BITS 0x4B400000u

/* The rare epilogues, out of line: inlined into every unrolled output they would multiply the
 * code (and compile time) for jobs that almost never run (even or huge divisors, magnitudes). */
static __device__ __noinline__ uint32_t conv_epi_div(conv_div d, int maxv, int32_t a)
{
    return conv_div_round_sat(a, &d, maxv);
}
static __device__ __noinline__ uint32_t conv_epi_fmag(int maxv, float a, float b)
{
    return km_magnitude_f(a, b, maxv);
}
static __device__ __noinline__ uint32_t conv_epi_imag(int maxv, int32_t a, int32_t b)
{
    return conv_mag_exact(a, b, maxv);
}

/* The epilogue of one output from float accumulators (a1: the second filter of a magnitude). */
__device__ __forceinline__ uint32_t conv_finish(const conv_params &p, float a0, float a1)
{
    switch (p.epi) {
    case CONV_EPI_ROUND_NC:
        return __float_as_uint(a0 + CONV_MAGIC) - CONV_MAGIC_BITS;
    case CONV_EPI_ROUND: /* fmaxf maps NaN to 0, as km_round_sat_f */
        return __float_as_uint(fminf(fmaxf(a0, 0.0f), (float)p.maxv) + CONV_MAGIC) - CONV_MAGIC_BITS;
    case CONV_EPI_DIVF:
        a0 = fminf(fmaxf(a0, 0.0f), p.divf_top);
        /* fall through */
    case CONV_EPI_DIVF_NC: /* a / d + 1/2 is never an integer for odd d: floor is round */
        return __float_as_uint(__fadd_rd(fmaf(a0, p.divf_inv, 0.5f), CONV_MAGIC)) - CONV_MAGIC_BITS;
    case CONV_EPI_DIV:
        return conv_epi_div(p.div, p.maxv, __float2int_rn(a0));
    case CONV_EPI_FMAG:
        return conv_epi_fmag(p.maxv, a0, a1);
    default: /* CONV_EPI_IMAG */
        return conv_epi_imag(p.maxv, __float2int_rn(a0), __float2int_rn(a1));
    }
}

/* The same from int32 accumulators (epi is ROUND, DIV or IMAG then). */
__device__ __forceinline__ uint32_t conv_finish(const conv_params &p, int32_t a0, int32_t a1)
{
    if (p.epi == CONV_EPI_IMAG)
        return conv_epi_imag(p.maxv, a0, a1);
    if (p.epi == CONV_EPI_DIV)
        return conv_epi_div(p.div, p.maxv, a0);
    return (uint32_t)min(max(a0, 0), p.maxv);
}

__device__ __forceinline__ uint32_t conv_bits(float v) { return __float_as_uint(v); }
__device__ __forceinline__ uint32_t conv_bits(int32_t v) { return (uint32_t)v; }

/* Stages input rows [y_lo, y_lo + nrows) x samples [a0, a0 + ncols) into s (row pitch spitch
 * elements), as Acc, with rows and pixels clamped into the image (border replicate). a0 and ncols
 * are multiples of the samples per 32-bit word (4 / B); each thread moves whole words, so a warp
 * reads 128 contiguous bytes. VEC: one 16-byte (B = 1) or 8-byte store per word, which needs
 * spitch to be a multiple of 4 / B and s 16-byte aligned; else scalar stores (any spitch). Words
 * that straddle the row's ends (or rows not 4-byte aligned) go sample by sample. */
template <int B, class Acc, bool VEC>
__device__ void conv_stage(const conv_params &p, Acc *s, int spitch, int a0, int ncols, int y_lo,
                           int nrows)
{
    constexpr int SPW = 4 / B;
    const int nw = ncols / SPW;
    /* blockDim.x is 32: a warp takes 32 words of a row at a time, warps take rows */
    for (int row = threadIdx.y; row < nrows; row += blockDim.y)
        for (int wi = threadIdx.x; wi < nw; wi += blockDim.x) {
            int y = min(max(y_lo + row, 0), p.height - 1);
            const unsigned char *src = p.in + (size_t)y * p.in_pitch;
            int q0 = a0 + wi * SPW;
            Acc v[SPW];
            if (p.vec_ok && q0 >= 0 && q0 + SPW <= p.wch) {
                uint32_t wd = *(const uint32_t *)(src + (size_t)q0 * B);
#pragma unroll
                for (int j = 0; j < SPW; j++)
                    v[j] = conv_word_sample<B, Acc>(wd, j);
            } else {
#pragma unroll
                for (int j = 0; j < SPW; j++) {
                    int q = q0 + j, c = q - conv_floor_div(q, p.ch) * p.ch;
                    int x = min(max(conv_floor_div(q, p.ch), 0), p.width - 1);
                    v[j] = conv_from_u<Acc>(conv_ld<B>(src, x * p.ch + c));
                }
            }
            Acc *d = s + (size_t)row * spitch + wi * SPW;
            if constexpr (VEC && SPW == 4) {
                *(uint4 *)d = make_uint4(conv_bits(v[0]), conv_bits(v[1]), conv_bits(v[2]), conv_bits(v[3]));
            } else if constexpr (VEC) {
                *(uint2 *)d = make_uint2(conv_bits(v[0]), conv_bits(v[1]));
            } else {
#pragma unroll
                for (int j = 0; j < SPW; j++)
                    d[j] = v[j];
            }
        }
}

/* ---------------------------------------------------------------- rings of input rows (sm_80)
 * A warp-private ring in shared memory holds input rows [s0, s0 + NCHUNK * 16 / B) samples wide,
 * filled by cp.async (16 bytes, L2 only) while earlier rows are computed: the copies in flight
 * hold no registers. Chunks that start outside the image row are not copied; a chunk that starts
 * inside stays inside the row's pitch when rows are 16-byte aligned (the variants require it).
 * Per strip conv_ring_start, per row conv_ring_next (the copies of a later row are started, this
 * row's awaited), conv_ring_border at the image's sides, __syncwarp, read, __syncwarp before the
 * row's slot is filled again. */
#if __CUDA_ARCH__ >= 800
/* 16 bytes from src (global) to the 32-bit shared address dst. */
__device__ __forceinline__ void conv_cp16s(uint32_t dst, const unsigned char *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
/* The same to a generic pointer into shared memory. */
__device__ __forceinline__ void conv_cp16(unsigned char *dst, const unsigned char *src)
{
    conv_cp16s((uint32_t)__cvta_generic_to_shared(dst), src);
}
__device__ __forceinline__ void conv_cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
/* Waits until at most N of this thread's committed groups are pending. */
template <int N> __device__ __forceinline__ void conv_cp_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* The ring's protocol, one commit group a row: rows 0 .. D - 1 are started before the first is
 * read (D rows in flight); empty groups past the strip keep the count, so that wait_group<D>
 * always means row n. issue(n) starts the copies of input row n. */
template <int D, class Issue> __device__ __forceinline__ void conv_ring_start(int N, Issue &&issue)
{
#pragma unroll
    for (int j = 0; j < D; j++) {
        if (j < N)
            issue(j);
        conv_cp_commit();
    }
}
/* Before input row n (of N) is read: starts row n + D, then waits for row n: this lane's copies,
 * then (__syncwarp) every lane's. */
template <int D, class Issue>
__device__ __forceinline__ void conv_ring_next(int n, int N, Issue &&issue)
{
    if (n + D < N)
        issue(n + D);
    conv_cp_commit();
    conv_cp_wait<D>();
    __syncwarp();
}

/* conv_ring_fill for a ring row wholly inside the image row: no bounds checks, and the lane's
 * addresses computed once by the caller (dst: shared address of this lane's first chunk, src: its
 * first byte in the image row). */
template <int NCHUNK>
__device__ __forceinline__ void conv_ring_fill_in(uint32_t dst, const unsigned char *src, int lane)
{
#pragma unroll
    for (int c0 = 0; c0 < NCHUNK; c0 += 32)
        if (c0 + 32 <= NCHUNK || lane < NCHUNK - c0)
            conv_cp16s(dst + 16 * c0, src + 16 * c0);
}

/* Starts the copies of one ring row from image row `row` (chunk c by lane c mod 32). */
template <int B, int NCHUNK>
__device__ __forceinline__ void conv_ring_fill(unsigned char *dst, const unsigned char *row, int s0,
                                               int wch, int lane)
{
#pragma unroll
    for (int c0 = 0; c0 < NCHUNK; c0 += 32) {
        const int c = c0 + lane, q = s0 + c * (16 / B);
        if ((c0 + 32 <= NCHUNK || c < NCHUNK) && q >= 0 && q < wch)
            conv_cp16(dst + 16 * c, row + (size_t)q * B);
    }
}
#endif

/* Writes the replicated border into a ring row of `len` samples starting at sample s0: samples
 * -h .. -1 (when s0 <= -h) get the first pixel's, wch .. wch + h - 1 (those inside the ring row)
 * the last pixel's, by lanes 0 .. 31 (h <= HMAX, a multiple of CH). A window of an output inside
 * the row needs no others. */
template <int CH, int B, int HMAX>
__device__ __forceinline__ void conv_ring_border_n(unsigned char *rrow, int s0, int len, int wch, int h,
                                                   int lane)
{
    auto one = [&](int l) {
        if (s0 < 0)
            conv_st<B>(rrow, -s0 - h + l, conv_ld<B>(rrow, -s0 + l % CH));
        const int r = wch - s0 + l;
        if (r < len)
            conv_st<B>(rrow, r, conv_ld<B>(rrow, wch - s0 - CH + l % CH));
    };
    if constexpr (HMAX <= 32) {
        if (lane < h)
            one(lane);
    } else {
#pragma unroll 1
        for (int l = lane; l < h; l += 32)
            one(l);
    }
}
/* The same for a compile-time halo H <= 32 (lanes 0 .. H - 1). */
template <int CH, int B, int H>
__device__ __forceinline__ void conv_ring_border(unsigned char *rrow, int s0, int len, int wch,
                                                 int lane)
{
    static_assert(H <= 32, "conv_ring_border: a lane a sample");
    conv_ring_border_n<CH, B, H>(rrow, s0, len, wch, H, lane);
}

#endif /* CONV_COMMON_CUH */
