/* hist_equalize.cu - histogram equalization on the GPU, shared by every `hist` variant: the
 * variant's histogram (into scratch), then a LUT kernel, then an apply kernel. Bit-exact with
 * ts_ref_equalize (ref.c); see hist.cu for the histogram variants.
 *
 * LUT kernel: one block per histogram scans its (up to 65536) bins: each thread owns a run of
 * bins/blockDim contiguous bins (read as uint4), the block scans the per-thread sums with warp
 * shuffles, and each thread then writes its LUT entries with ts_equalize_lut's integer formula
 * (first non-empty bin h0, n pixels, ties to even, one-valued images unchanged). The division by
 * n - h0 is hist_div_round_even: a double estimate corrected exactly, since 64-bit integer
 * division is a long subroutine on the GPU; bins whose cumulative count repeats reuse the entry.
 *
 * Apply kernel: the LUT is copied into shared memory when it fits a block (8-bit: 0.5 to 1.5 KB;
 * 16-bit with one histogram: 128 KB); three 16-bit histograms (384 KB) stay in global memory
 * (read through L1). Pixels move in 16-byte units (48 for 3 channels, so pixels stay whole)
 * with vector loads and stores, for 16-byte units the next units' loads issued before the
 * current ones are mapped (hist_for_units_pipelined; images whose rows are back to back, in and
 * out, are walked as one long row, without a division a unit); luma equalization recomputes y from R, G, B in registers (no
 * luma plane) and applies km_luma_apply to each colour sample; alpha is copied.
 * Layout: rows 16-byte aligned for the vector path (device images are 256-byte aligned); any
 * other even pitch takes the sample-by-sample path.
 */
#include "hist_common.cuh"

#define LUT_THREADS_16 1024 /* 64 bins a thread */
#define LUT_THREADS_8 256   /* one bin a thread */
#define APPLY_THREADS 1024

/* ---------------------------------------------------------------- LUT */

template <unsigned BINS, int THREADS>
__global__ void __launch_bounds__(THREADS)
    hist_lut_kernel(const uint32_t *hist, uint16_t *lut, uint32_t n)
{
    constexpr int E = (int)(BINS / THREADS); /* bins a thread */
    constexpr int WARPS = THREADS / 32;
    static_assert(BINS % THREADS == 0 && WARPS <= 32, "whole warps, whole bins");
    __shared__ uint32_t warp_total[WARPS], warp_before[WARPS];
    __shared__ unsigned warp_first[WARPS], block_first;
    const uint32_t *h = hist + (size_t)blockIdx.x * BINS;
    uint16_t *l = lut + (size_t)blockIdx.x * BINS;
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, base = threadIdx.x * E;

    /* My bins' count and my first non-empty bin (walked backwards: the last hit is the first). */
    uint32_t sum = 0; /* counts sum to n <= 2^31 */
    unsigned first = BINS;
    if constexpr (E % 4 == 0) {
        const uint4 *p = reinterpret_cast<const uint4 *>(h + base);
#pragma unroll 4
        for (int i = E / 4 - 1; i >= 0; i--) {
            uint4 q = p[i];
            sum += q.x + q.y + q.z + q.w;
            unsigned b = base + 4 * (unsigned)i;
            first = q.w ? b + 3 : first;
            first = q.z ? b + 2 : first;
            first = q.y ? b + 1 : first;
            first = q.x ? b : first;
        }
    } else {
#pragma unroll
        for (int i = E - 1; i >= 0; i--) {
            uint32_t v = h[base + i];
            sum += v;
            first = v ? base + i : first;
        }
    }

    /* Block-wide exclusive scan of the sums and minimum of the firsts. */
    uint32_t incl = sum;
    hist_warp_scan_min(incl, first, lane);
    if (lane == 31)
        warp_total[warp] = incl;
    if (lane == 0)
        warp_first[warp] = first;
    __syncthreads();
    if (warp == 0) {
        uint32_t t = lane < WARPS ? warp_total[lane] : 0, ti = t;
        unsigned f = lane < WARPS ? warp_first[lane] : BINS;
        hist_warp_scan_min(ti, f, lane);
        if (lane < WARPS)
            warp_before[lane] = ti - t;
        if (lane == 0)
            block_first = f;
    }
    __syncthreads();
    first = block_first;

    const uint32_t h0 = first < BINS ? h[first] : 0;
    const bool identity = first >= BINS || h0 == n; /* empty, or one value */
    const uint64_t den = (uint64_t)(n - h0);
    const double inv = identity ? 0.0 : 1.0 / (double)den;
    uint64_t cdf = warp_before[warp] + (incl - sum); /* pixels in bins before mine */
    uint64_t last_cdf = ~(uint64_t)0;
    unsigned last = 0;
    /* Entry of bin v once cdf counts bins 0..v; equal cdfs give equal entries. */
    auto entry = [&](unsigned v) -> unsigned {
        if (identity)
            return v;
        if (v < first)
            return 0;
        if (cdf != last_cdf) {
            last = (unsigned)hist_div_round_even((cdf - h0) * (BINS - 1), den, inv);
            last_cdf = cdf;
        }
        return last;
    };
    if constexpr (E % 4 == 0) {
        const uint4 *p = reinterpret_cast<const uint4 *>(h + base);
        uint2 *out = reinterpret_cast<uint2 *>(l + base);
#pragma unroll 2
        for (int i = 0; i < E / 4; i++) {
            uint4 q = p[i];
            unsigned b = base + 4 * (unsigned)i, e0, e1, e2, e3;
            cdf += q.x;
            e0 = entry(b);
            cdf += q.y;
            e1 = entry(b + 1);
            cdf += q.z;
            e2 = entry(b + 2);
            cdf += q.w;
            e3 = entry(b + 3);
            out[i] = make_uint2(e0 | e1 << 16, e2 | e3 << 16);
        }
    } else {
#pragma unroll
        for (int i = 0; i < E; i++) {
            cdf += h[base + i];
            l[base + i] = (uint16_t)entry(base + i);
        }
    }
}

/* ---------------------------------------------------------------- apply */

template <int B, int CH, bool LUMA>
__global__ void __launch_bounds__(APPLY_THREADS)
    hist_apply_kernel(ts_image in, ts_image out, HistUnits units, bool vec, const uint16_t *d_lut,
                      bool lut_in_smem)
{
    typedef HistShape<B, CH, LUMA> S;
    typedef HistUnit<B, CH> U;
    const uint16_t *lut = d_lut;
    if (lut_in_smem) {
        constexpr unsigned N16 = (unsigned)S::NH * S::BINS / 8; /* uint4s of u16 entries */
        uint4 *dst = hist_smem<uint4>();
        const uint4 *src = reinterpret_cast<const uint4 *>(d_lut);
        for (unsigned i = threadIdx.x; i < N16; i += blockDim.x)
            dst[i] = src[i];
        __syncthreads();
        lut = hist_smem<uint16_t>();
    }
    constexpr int UNR = U::NVEC == 1 ? 2 : 1;
    constexpr bool PIPE = U::NVEC == 1; /* 3 x 48 bytes of registers would spill at 64 a thread */
    hist_for_units_pipelined<B, CH, UNR, PIPE>(in, units, vec, [&](const U &u, int nbytes, unsigned i) {
        U o = hist_map_unit<B, CH, LUMA>(u, lut);
        int nb;
        unsigned char *dst = units.flat_bytes
                                 ? (unsigned char *)out.data + (size_t)i * U::BYTES
                                 : const_cast<unsigned char *>(hist_unit_at<B, CH>(out, units, i, &nb));
        o.store(dst, nbytes, vec);
    });
}

/* ---------------------------------------------------------------- driver */

struct EqualizeOp {
    const ts_job *job;
    const uint32_t *hist;
    uint16_t *lut;
    template <int B, int CH, bool L> ts_status run()
    {
        typedef HistShape<B, CH, L> S;
        cudaStream_t s = (cudaStream_t)job->stream;
        uint32_t n = (uint32_t)((uint64_t)job->in.width * (uint64_t)job->in.height);
        /* The apply kernel's host-side queries first, then the two launches back to back. */
        const void *k = (const void *)hist_apply_kernel<B, CH, L>;
        size_t lut_bytes = (size_t)S::NH * S::BINS * sizeof(uint16_t);
        bool in_smem = lut_bytes <= job->dev->smem_per_block_optin;
        size_t smem = in_smem ? lut_bytes : 0;
        int resident = 0;
        ts_status st = gpu_allow_smem(k, smem);
        if (st == TS_OK)
            st = gpu_resident_blocks(k, APPLY_THREADS, smem, job->dev, "hist", &resident);
        if (st != TS_OK)
            return st;
        HistUnits u = hist_units<B, CH>(job->in);
        if (job->out.pitch != ts_row_bytes(&job->out))
            u.flat_bytes = 0; /* the walk's flat layout must be the output's too */
        unsigned need = (u.walked() + APPLY_THREADS - 1) / APPLY_THREADS;
        unsigned blocks = need < (unsigned)resident ? need : (unsigned)resident;
        bool vec = hist_vec_ok_walk(&job->in, u) && hist_vec_ok_walk(&job->out, u);
        if (B == 2)
            hist_lut_kernel<65536u, LUT_THREADS_16><<<S::NH, LUT_THREADS_16, 0, s>>>(hist, lut, n);
        else
            hist_lut_kernel<256u, LUT_THREADS_8><<<S::NH, LUT_THREADS_8, 0, s>>>(hist, lut, n);
        LAUNCH_CHECK("hist_lut_kernel");
        hist_apply_kernel<B, CH, L><<<blocks, APPLY_THREADS, smem, s>>>(job->in, job->out, u, vec,
                                                                          lut, in_smem);
        LAUNCH_CHECK("hist_apply_kernel");
        return TS_OK;
    }
};

ts_status hist_run_job(const ts_job *job, hist_count_fn count, size_t extra_bytes)
{
    ts_status st = hist_check_job(job);
    if (st != TS_OK)
        return st;
    long nbins = hist_total_bins(job->op->hist_mode, job->in.channels, job->in.bytes);
    size_t need = (job->op->kind == TS_OP_EQUALIZE ? hist_eq_bytes(nbins) : 0) + extra_bytes;
    if (need && (!job->scratch || job->scratch_bytes < need || (uintptr_t)job->scratch % 256))
        return ts_fail(TS_ERR_INVALID, "%s: needs %zu bytes of 256-byte aligned scratch, has %zu",
                       job->op->text, need, job->scratch ? job->scratch_bytes : 0);
    if (job->op->kind == TS_OP_HIST)
        return count(job, job->hist, job->scratch, job->scratch_bytes);

    char *scratch = (char *)job->scratch;
    uint32_t *d_hist = (uint32_t *)scratch;
    uint16_t *d_lut = (uint16_t *)(scratch + hist_eq_hist_bytes(nbins));
    size_t eq = hist_eq_bytes(nbins);
    if ((st = count(job, d_hist, scratch + eq, job->scratch_bytes - eq)) != TS_OK)
        return st;
    EqualizeOp op = {job, d_hist, d_lut};
    return hist_dispatch(job->in, job->op->hist_mode, op);
}
