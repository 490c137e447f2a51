/* hist_common.cuh - what the histogram files (hist.cu, hist_opt.cu, hist_opt_eq8.cu,
 * hist_equalize.cu) share:
 * the pixel shapes as template parameters and the one switch that picks an instantiation, the
 * two ways kernels walk an image (pixel by pixel with a grid stride, or in 16/48-byte units with
 * vector loads), the job checks, and the equalize driver that every variant's run() calls.
 * Internal to kernels/.
 */
#ifndef HIST_COMMON_CUH
#define HIST_COMMON_CUH

#include "gpu_util.cuh"
#include "hist_plan.h"

#include <stdint.h>

/* Dynamic shared memory of every histogram kernel, typed by each kernel (one declaration per
 * translation unit: differently typed `extern __shared__` arrays would clash). */
extern __shared__ __align__(16) unsigned char hist_dyn_smem[];
template <class T> __device__ __forceinline__ T *hist_smem() { return reinterpret_cast<T *>(hist_dyn_smem); }

/* A pixel shape: B bytes a sample, CH channels, LUMA: colour pixels counted by their luma.
 * Gray images are always instantiated with LUMA false (both modes count the gray channel). */
template <int B, int CH, bool LUMA> struct HistShape {
    static_assert(B == 1 || B == 2, "8 or 16-bit samples");
    static_assert(CH >= 1 && CH <= 4, "1 to 4 channels");
    static_assert(!LUMA || CH >= 3, "luma needs colour");
    static constexpr int NH = (CH >= 3 && !LUMA) ? 3 : 1; /* histograms */
    static constexpr int CC = CH >= 3 ? 3 : 1;            /* colour channels */
    static constexpr unsigned BINS = B == 2 ? 65536u : 256u;
    static constexpr int MAXV = B == 2 ? 65535 : 255;
};

/* Histogram h's value of a pixel whose samples are s[0..CH-1] (h < NH). */
template <int B, int CH, bool LUMA>
__device__ __forceinline__ unsigned hist_value(const unsigned *s, int h)
{
    if (LUMA)
        return km_luma_of_sum(km_luma_sum(s[0], s[1], s[2]));
    return s[h];
}

/* Calls f(global bin) for every value of every pixel, in row-major order with a grid stride.
 * (x, y) advance by the stride's (dx, dy) with one compare, not a division per pixel. */
template <int B, int CH, bool LUMA, class F>
__device__ __forceinline__ void hist_walk_pixels(const ts_image &im, F &&f)
{
    typedef HistShape<B, CH, LUMA> S;
    const unsigned w = (unsigned)im.width, h = (unsigned)im.height;
    const unsigned stride = gridDim.x * blockDim.x;
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned dy = stride / w, dx = stride - dy * w;
    unsigned y = t / w, x = t - y * w;
    while (y < h) {
        const unsigned char *row = (const unsigned char *)im.data + (size_t)y * im.pitch;
        unsigned s[CH];
#pragma unroll
        for (int c = 0; c < CH; c++)
            s[c] = B == 1 ? row[x * CH + c] : ((const uint16_t *)row)[x * CH + c];
#pragma unroll
        for (int k = 0; k < S::NH; k++)
            f((unsigned)k * S::BINS + hist_value<B, CH, LUMA>(s, k));
        x += dx;
        y += dy;
        if (x >= w) {
            x -= w;
            y++;
        }
    }
}

/* A unit of whole pixels that a thread loads with 16-byte vector loads: 16 bytes, or 48 for
 * 3-channel pixels (so no pixel straddles two units). Samples live in registers: every index
 * is a compile-time constant once the loops over a unit are unrolled. */
template <int B, int CH> struct HistUnit {
    static constexpr int NVEC = CH == 3 ? 3 : 1;
    static constexpr int BYTES = 16 * NVEC;
    static constexpr int WORDS = 4 * NVEC;
    static constexpr int SAMPLES = BYTES / B;
    static constexpr int PIX = SAMPLES / CH;
    uint32_t w[WORDS];

    __device__ __forceinline__ unsigned sample(int k) const
    {
        return B == 1 ? (w[k >> 2] >> (8 * (k & 3))) & 0xFFu : (w[k >> 1] >> (16 * (k & 1))) & 0xFFFFu;
    }
    __device__ __forceinline__ void put(int k, unsigned v)
    {
        if (B == 1)
            w[k >> 2] |= (v & 0xFFu) << (8 * (k & 3));
        else
            w[k >> 1] |= (v & 0xFFFFu) << (16 * (k & 1));
    }
    __device__ __forceinline__ void clear()
    {
#pragma unroll
        for (int i = 0; i < WORDS; i++)
            w[i] = 0;
    }
    /* nbytes (a whole number of pixels) of the unit at p; vec: p is 16-byte aligned. Samples
     * past nbytes read as 0. The short last unit of a row reads sample by sample, so a row is
     * never read past its end. */
    __device__ __forceinline__ void load(const unsigned char *p, int nbytes, bool vec)
    {
        if (vec && nbytes == BYTES) {
#pragma unroll
            for (int v = 0; v < NVEC; v++) {
                uint4 q = __ldg(reinterpret_cast<const uint4 *>(p) + v);
                w[4 * v] = q.x, w[4 * v + 1] = q.y, w[4 * v + 2] = q.z, w[4 * v + 3] = q.w;
            }
            return;
        }
        clear();
#pragma unroll
        for (int k = 0; k < SAMPLES; k++)
            if (k * B < nbytes)
                put(k, B == 1 ? p[k] : reinterpret_cast<const uint16_t *>(p)[k]);
    }
    __device__ __forceinline__ void store(unsigned char *p, int nbytes, bool vec) const
    {
        if (vec && nbytes == BYTES) {
#pragma unroll
            for (int v = 0; v < NVEC; v++)
                reinterpret_cast<uint4 *>(p)[v] = make_uint4(w[4 * v], w[4 * v + 1], w[4 * v + 2], w[4 * v + 3]);
            return;
        }
#pragma unroll
        for (int k = 0; k < SAMPLES; k++)
            if (k * B < nbytes) {
                if (B == 1)
                    p[k] = (unsigned char)sample(k);
                else
                    reinterpret_cast<uint16_t *>(p)[k] = (uint16_t)sample(k);
            }
    }
};

/* The equalized unit of u: each colour sample through its histogram's LUT (LUMA: y from R, G, B
 * through the one LUT, applied with km_luma_apply to each colour sample); alpha copied. */
template <int B, int CH, bool LUMA>
__device__ __forceinline__ HistUnit<B, CH> hist_map_unit(const HistUnit<B, CH> &u, const uint16_t *lut)
{
    typedef HistShape<B, CH, LUMA> S;
    HistUnit<B, CH> o;
    o.clear();
#pragma unroll
    for (int p = 0; p < HistUnit<B, CH>::PIX; p++) {
        unsigned s[CH];
#pragma unroll
        for (int c = 0; c < CH; c++)
            s[c] = u.sample(p * CH + c);
        if (LUMA) {
            int32_t sum = km_luma_sum(s[0], s[1], s[2]);
            uint32_t ly = lut[km_luma_of_sum(sum)];
#pragma unroll
            for (int c = 0; c < 3; c++)
                o.put(p * CH + c, km_luma_apply(s[c], sum, ly, S::MAXV));
        } else {
#pragma unroll
            for (int c = 0; c < S::CC; c++)
                o.put(p * CH + c, lut[(unsigned)c * S::BINS + s[c]]);
        }
        if (CH == 2 || CH == 4)
            o.put(p * CH + CH - 1, s[CH - 1]);
    }
    return o;
}

/* The units of an image: `per_row` units a row (the last one maybe short), `total` in all
 * (< 2^31 since units hold at least one pixel: see HIST_MAX_PIXELS). */
struct HistUnits {
    unsigned per_row, total;
    int row_bytes;
    /* Rows back to back (pitch == row bytes): all the bytes as one long row of flat_total units
     * (whole pixels still: BYTES is a multiple of the pixel), for hist_for_units_pipelined. */
    size_t flat_bytes;
    unsigned flat_total;
    /* The units that hist_for_units_pipelined walks. */
    __host__ __device__ unsigned walked() const { return flat_bytes ? flat_total : total; }
};

template <int B, int CH> static inline HistUnits hist_units(const ts_image &im)
{
    HistUnits u;
    u.row_bytes = (int)ts_row_bytes(&im);
    u.per_row = (unsigned)((u.row_bytes + HistUnit<B, CH>::BYTES - 1) / HistUnit<B, CH>::BYTES);
    u.total = u.per_row * (unsigned)im.height;
    u.flat_bytes = im.pitch == ts_row_bytes(&im) ? im.pitch * (size_t)im.height : 0;
    u.flat_total = (unsigned)((u.flat_bytes + HistUnit<B, CH>::BYTES - 1) / HistUnit<B, CH>::BYTES);
    return u;
}

/* Unit i of an image: its first byte and how many of its bytes lie in the row. */
template <int B, int CH>
__device__ __forceinline__ const unsigned char *hist_unit_at(const ts_image &im, const HistUnits &u,
                                                            unsigned i, int *nbytes)
{
    constexpr int UB = HistUnit<B, CH>::BYTES;
    unsigned y = i / u.per_row, x = i - y * u.per_row;
    int left = u.row_bytes - (int)(x * UB);
    *nbytes = left < UB ? left : UB;
    return (const unsigned char *)im.data + (size_t)y * im.pitch + (size_t)x * UB;
}

/* Unit j of the walk (one long row when u.flat_bytes), its bytes in *nb. */
template <int B, int CH>
__device__ __forceinline__ unsigned char *hist_walk_unit(const ts_image &im, const HistUnits &u,
                                                         unsigned j, int *nb)
{
    constexpr int UB = HistUnit<B, CH>::BYTES;
    if (u.flat_bytes) {
        size_t off = (size_t)j * UB, left = u.flat_bytes - off;
        *nb = left < (size_t)UB ? (int)left : UB;
        return (unsigned char *)im.data + off;
    }
    return const_cast<unsigned char *>(hist_unit_at<B, CH>(im, u, j, nb));
}

/* Calls f(unit, nbytes, index) for the units of a grid stride, UNR at a time, software-pipelined:
 * the loads of the next UNR units are issued before the current ones are used, so a thread always
 * has loads in flight; the units of an image whose rows are back to back (u.flat_bytes) are found without a division, and the index passed to f
 * is then the unit's place in that one long row (byte offset index * BYTES). PIPE false: no
 * prefetch (the flat walk only), for kernels that would spill the second set of registers. */
template <int B, int CH, int UNR, bool PIPE = true, class F>
__device__ __forceinline__ void hist_for_units_pipelined(const ts_image &im, const HistUnits &u,
                                                         bool vec, F &&f)
{
    typedef HistUnit<B, CH> U;
    const unsigned stride = gridDim.x * blockDim.x, n = u.walked();
    auto load = [&](U (&a)[UNR], int (&nb)[UNR], unsigned i) {
#pragma unroll
        for (int r = 0; r < UNR; r++) {
            unsigned j = i + (unsigned)r * stride;
            nb[r] = 0;
            if (j < n) {
                const unsigned char *p;
                if (u.flat_bytes) {
                    size_t off = (size_t)j * U::BYTES, left = u.flat_bytes - off;
                    p = (const unsigned char *)im.data + off;
                    nb[r] = left < (size_t)U::BYTES ? (int)left : U::BYTES;
                } else {
                    p = hist_unit_at<B, CH>(im, u, j, &nb[r]);
                }
                a[r].load(p, nb[r], vec);
            }
        }
    };
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    U cur[UNR];
    int ncur[UNR];
    if (PIPE)
        load(cur, ncur, i);
    for (; i < n; i += UNR * stride) { /* n + 2 * UNR * stride < 2^32: no wrap */
        U nxt[UNR];
        int nnxt[UNR];
        if (PIPE)
            load(nxt, nnxt, i + UNR * stride);
        else
            load(cur, ncur, i);
#pragma unroll
        for (int r = 0; r < UNR; r++)
            if (ncur[r] > 0)
                f(cur[r], ncur[r], i + (unsigned)r * stride);
        if (PIPE) {
#pragma unroll
            for (int r = 0; r < UNR; r++)
                cur[r] = nxt[r], ncur[r] = nnxt[r];
        }
    }
}

/* 16-byte vector loads (and stores) are safe: rows start 16-byte aligned. */
static inline bool hist_vec_ok(const ts_image *im)
{
    return ((uintptr_t)im->data % 16) == 0 && im->pitch % 16 == 0;
}

/* The same for hist_for_units_pipelined's walk: back-to-back rows need an aligned start only. */
static inline bool hist_vec_ok_walk(const ts_image *im, const HistUnits &u)
{
    return u.flat_bytes ? (uintptr_t)im->data % 16 == 0 : hist_vec_ok(im);
}

/* The values of the first npix pixels of a unit, each added to lane copy `mine` of its local bin
 * (global bin - lo; only those below slice_bins when CHECK). Every add is of the constant 1,
 * which compiles to the shared-memory increment ATOMS.POPC.INC: on an H200 twice the rate of adds
 * of a variable amount (two 16-bit counters a word, adding 1 << 16 or 1, ran at half the speed
 * for the same number of atomics, so packing the lane copies to fit more blocks lost). Without
 * CHECK (a whole unit, one slice) the adds are straight-line code: with a branch around each,
 * the compiler wrapped every atomic in a convergence barrier (BSSY/BSYNC) and recomputed the
 * shared window's base, and the kernel ran at 57% of the speed. */
template <int CH, bool LUMA, bool CHECK>
__device__ __forceinline__ void opt8_count(const HistUnit<1, CH> &u, int npix, uint32_t *mine,
                                           unsigned lo, unsigned slice_bins)
{
    typedef HistShape<1, CH, LUMA> S;
#pragma unroll
    for (int p = 0; p < HistUnit<1, CH>::PIX; p++) {
        if (CHECK && p >= npix)
            break;
        unsigned s[CH];
#pragma unroll
        for (int c = 0; c < CH; c++)
            s[c] = u.sample(p * CH + c);
#pragma unroll
        for (int h = 0; h < S::NH; h++) {
            unsigned l = (unsigned)h * 256u + hist_value<1, CH, LUMA>(s, h);
            if (!CHECK)
                atomicAdd(&mine[l * HIST_LANES], 1u);
            else if (l - lo < slice_bins) /* wraps above slice_bins when l < lo */
                atomicAdd(&mine[(l - lo) * HIST_LANES], 1u);
        }
    }
}

/* Calls op.template run<B, CH, LUMA>() for the image's shape (LUMA only for colour). */
template <class Op> static ts_status hist_dispatch(const ts_image &im, ts_hist_mode mode, Op &op)
{
    bool luma = mode == TS_HIST_LUMA && im.channels >= 3;
#define HIST_CASE(B, CH, L)                                                                     \
    if (im.bytes == (B) && im.channels == (CH) && luma == (L))                                     \
        return op.template run<B, CH, L>();
    HIST_CASE(1, 1, false) HIST_CASE(1, 2, false)
    HIST_CASE(1, 3, false) HIST_CASE(1, 3, true)
    HIST_CASE(1, 4, false) HIST_CASE(1, 4, true)
    HIST_CASE(2, 1, false) HIST_CASE(2, 2, false)
    HIST_CASE(2, 3, false) HIST_CASE(2, 3, true)
    HIST_CASE(2, 4, false) HIST_CASE(2, 4, true)
#undef HIST_CASE
    return ts_fail(TS_ERR_UNSUPPORTED, "histogram of %d-channel %d-byte images", im.channels,
                   im.bytes);
}

/* The histogram step of a variant: counts job->in into d_hist (zeroing it first), using
 * `extra` (extra_bytes of device scratch) for its own needs. */
typedef ts_status (*hist_count_fn)(const ts_job *job, uint32_t *d_hist, void *extra,
                                   size_t extra_bytes);

/* Shape checks shared by every GPU variant (what `supports` says, with reasons). */
ts_status hist_check_job(const ts_job *job);
/* TS_OP_HIST: count into job->hist with `count`; TS_OP_EQUALIZE: count into scratch, then the
 * LUT and apply kernels. `extra_bytes`: what `count` needs past the equalize scratch. */
ts_status hist_run_job(const ts_job *job, hist_count_fn count, size_t extra_bytes);

/* 16-bit, one histogram of 65536 bins, sm_90 (hist_opt.cu): packed counters a block, merged
 * through DSMEM in clusters of k blocks (1..16); `opt` takes it with HIST_OPT16_CLUSTER, the
 * `cluster` row with job->param. Its scratch past the histogram: partial_bytes. */
extern "C" int hist_opt16_cluster_takes(const ts_job *job);
extern "C" size_t hist_opt16_cluster_partial_bytes(const ts_job *job);
extern "C" ts_status hist_opt16_cluster_count(const ts_job *job, uint32_t *d_hist, void *extra,
                                              size_t extra_bytes, int k);
/* `opt`'s one-kernel 8-bit equalize (hist_opt_eq8.cu): whether it takes the job, and the run.
 * Its scratch: the equalize scratch (histogram; the LUT unused); its grid barrier is the
 * cooperative launch's own. */
bool hist_opt_eq8_runs(const ts_job *job);
ts_status hist_opt_eq8(const ts_job *job);

/* Across the warp: `incl` becomes the inclusive prefix sum of the lanes' values, `first` the
 * minimum of the lanes' values (every lane gets it). */
static __device__ __forceinline__ void hist_warp_scan_min(uint32_t &incl, unsigned &first, unsigned lane)
{
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        uint32_t v = __shfl_up_sync(0xFFFFFFFFu, incl, o);
        incl += lane >= (unsigned)o ? v : 0;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        first = min(first, __shfl_xor_sync(0xFFFFFFFFu, first, o));
}

#endif /* HIST_COMMON_CUH */
