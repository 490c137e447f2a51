/* hist_opt_eq8.cu - `opt`'s 8-bit equalize in one kernel (see hist_opt.cu for the variant and
 * hist.cu for the op): a cooperative kernel, one 1024-thread block an SM, that counts (lane copies)
 * while keeping each thread's first units in the shared memory the counters leave free, waits at
 * a grid barrier, builds the LUT in every block (no LUT kernel), then applies it: the units read
 * last first, backwards, while the L2 still holds part of them, then the kept ones (no read at
 * all). Equalizes with one histogram (luma, gray) of 1 to 3 channels; the rest keep the three
 * kernels (hist_run_job). Bit-exact with ts_ref_equalize.
 * The apply stores RGB8's 48-byte units through shared memory as whole pieces (evict-first where
 * it reads units back from L2); H100, 8K RGB8: 0.0960 ms (67% of copy bandwidth) against 0.1100
 * (59%) storing each lane's unit itself; 0.0952 without the memset. L2 prefetches of each warp's
 * units 2 or 3 walk steps ahead (one bulk prefetch a warp a step) measured 0.0975 and 0.1051 ms
 * there and 0.0300 and 0.0309 at 4K (0.0293 without); they won only at 1080p (0.0168 against
 * 0.0175, 3 steps) and by 1% on gray8 8K, so they went, with the old stores (the candidates'
 * code: f492310; figures: tools/results/nvidia-h100-equalize-2026-11-27b.md).
 */
#include "hist_common.cuh"

#include <cooperative_groups.h>

#define EQ8_THREADS 1024 /* one block an SM: the rest of its shared memory holds image units */

/* The LUT of one 256-bin histogram by one warp, 8 bins a lane: the formula of hist_lut_kernel
 * (ts_equalize_lut's: first non-empty bin h0, n pixels, ties to even, one value unchanged). */
__device__ __forceinline__ void eq8_lut_warp(const uint32_t *h, uint16_t *l, uint32_t n, unsigned lane)
{
    const unsigned base = lane * 8;
    uint32_t v[8], sum = 0;
    unsigned first = 256;
    uint4 a = __ldcg(reinterpret_cast<const uint4 *>(h + base));
    uint4 b = __ldcg(reinterpret_cast<const uint4 *>(h + base) + 1);
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
#pragma unroll
    for (int i = 7; i >= 0; i--) {
        sum += v[i];
        first = v[i] ? base + (unsigned)i : first;
    }
    uint32_t incl = sum;
    hist_warp_scan_min(incl, first, lane);
    const uint32_t h0 = first < 256 ? __ldcg(h + first) : 0;
    const bool identity = first >= 256 || h0 == n;
    const uint64_t den = (uint64_t)(n - h0);
    const double inv = identity ? 0.0 : 1.0 / (double)den;
    uint64_t cdf = incl - sum;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        unsigned bin = base + (unsigned)i;
        cdf += v[i];
        unsigned e = identity ? bin
                     : bin < first ? 0u
                                   : (unsigned)hist_div_round_even((cdf - h0) * 255u, den, inv);
        l[bin] = (uint16_t)e;
    }
}

/* 2^32 / 1000 rounded up: umulhi(x, EQ8_INV1000) == x / 1000 for x < 2^20 (error < x / 2^31). */
#define EQ8_INV1000 4294968u

/* Sample k of a unit, zero-extended (one PRMT). */
template <int CH> __device__ __forceinline__ unsigned eq8_byte(const HistUnit<1, CH> &u, int k)
{
    return __byte_perm(u.w[k >> 2], 0u, 0x4440u | (unsigned)(k & 3));
}

/* The lane copies' count of a unit: opt8_count's adds (lane l's copy of bin b: word b * 32 + l),
 * samples taken with PRMT, luma's y = (S + 500) / 1000 as one IMAD.HI (EQ8_INV1000). */
template <int CH, bool LUMA, bool CHECK>
__device__ __forceinline__ void eq8_count(const HistUnit<1, CH> &u, int npix, uint32_t *mine)
{
    typedef HistShape<1, CH, LUMA> S;
#pragma unroll
    for (int p = 0; p < HistUnit<1, CH>::PIX; p++) {
        if (CHECK && p >= npix)
            break;
        if (LUMA) {
            unsigned x = 299u * eq8_byte(u, p * CH) + 587u * eq8_byte(u, p * CH + 1) +
                         114u * eq8_byte(u, p * CH + 2) + 500u;
            atomicAdd(&mine[__umulhi(x, EQ8_INV1000) * HIST_LANES], 1u);
        } else {
#pragma unroll
            for (int h = 0; h < S::NH; h++)
                atomicAdd(&mine[((unsigned)h * 256u + eq8_byte(u, p * CH + h)) * HIST_LANES], 1u);
        }
    }
}

/* The luma apply's table: km_luma_apply(c, S, lut[y], 255) == clamp(c + q) where, with
 * x = S + 500, y = x / 1000 and k = lut[y] - y, q = k + (x % 1000 == 0 && k >= 0) (the one tie,
 * S = 1000 y - 500). Indexed by ya + yb, ya = x / 1000, yb = (x - 1) / 1000 (ya - 1 exactly at a
 * tie): tab[2y] = k, tab[2y - 1] = k + (k >= 0). */
__device__ __forceinline__ void eq8_luma_tab(const uint16_t *lut, int16_t *tab, unsigned y)
{
    int k = (int)lut[y] - (int)y;
    tab[2 * y] = (int16_t)k;
    if (y)
        tab[2 * y - 1] = (int16_t)(k + (k >= 0));
}

__device__ __forceinline__ unsigned eq8_clamp(int v) { return (unsigned)(v < 0 ? 0 : v > 255 ? 255 : v); }

/* Samples o[] (a byte value each) put back into a unit's words with PRMT. */
template <int CH> __device__ __forceinline__ HistUnit<1, CH> eq8_pack(const unsigned *o)
{
    HistUnit<1, CH> out;
#pragma unroll
    for (int i = 0; i < HistUnit<1, CH>::WORDS; i++)
        out.w[i] = __byte_perm(__byte_perm(o[4 * i], o[4 * i + 1], 0x0040u),
                               __byte_perm(o[4 * i + 2], o[4 * i + 3], 0x0040u), 0x5410u);
    return out;
}

/* hist_map_unit<1, CH, true> through eq8_luma_tab's table: per pixel three IMADs, two IMAD.HI,
 * one shared load and one add-and-clamp a colour sample; samples taken and put back with PRMT. */
template <int CH>
__device__ __forceinline__ HistUnit<1, CH> eq8_map_luma(const HistUnit<1, CH> &u, const int16_t *tab)
{
    typedef HistUnit<1, CH> U;
    unsigned o[U::SAMPLES];
#pragma unroll
    for (int p = 0; p < U::PIX; p++) {
        unsigned r = eq8_byte(u, p * CH), g = eq8_byte(u, p * CH + 1), b = eq8_byte(u, p * CH + 2);
        unsigned x1 = 499u + 299u * r + 587u * g + 114u * b; /* x - 1 */
        int q = tab[__umulhi(x1 + 1u, EQ8_INV1000) + __umulhi(x1, EQ8_INV1000)];
        o[p * CH] = eq8_clamp((int)r + q);
        o[p * CH + 1] = eq8_clamp((int)g + q);
        o[p * CH + 2] = eq8_clamp((int)b + q);
        if (CH == 4)
            o[p * CH + 3] = eq8_byte(u, p * CH + 3);
    }
    return eq8_pack<CH>(o);
}

/* hist_map_unit<1, CH, false> with samples taken and put back with PRMT: colour sample c through
 * lut[c * 256 + value], alpha copied. */
template <int CH, int NH>
__device__ __forceinline__ HistUnit<1, CH> eq8_map_lut(const HistUnit<1, CH> &u, const uint16_t *lut)
{
    typedef HistUnit<1, CH> U;
    constexpr int CC = CH >= 3 ? 3 : 1;
    unsigned o[U::SAMPLES];
#pragma unroll
    for (int p = 0; p < U::PIX; p++)
#pragma unroll
        for (int c = 0; c < CH; c++) {
            unsigned v = eq8_byte(u, p * CH + c);
            o[p * CH + c] = c < CC ? lut[(NH == 1 ? 0u : (unsigned)c * 256u) + v] : v;
        }
    return eq8_pack<CH>(o);
}

/* f(unit, bytes, j) for j = 0 .. m-1, the units loaded by load(unit, j) (which returns their
 * bytes) one ahead: the next unit is in flight while one is used. */
template <class U, class Load, class F>
__device__ __forceinline__ void eq8_pipeline(unsigned m, Load &&load, F &&f)
{
    U cur;
    int ncur = 0;
    if (m)
        ncur = load(cur, 0u);
    for (unsigned j = 0; j < m; j++) {
        U nxt;
        int nnxt = 0;
        if (j + 1 < m)
            nnxt = load(nxt, j + 1);
        else
            nxt.clear();
        f(cur, ncur, j);
        cur = nxt;
        ncur = nnxt;
    }
}

/* equalize of an 8-bit image in one kernel, one block an SM, all blocks resident (a cooperative
 * launch): (1) count with lane copies, keeping each thread's first `slots` units in shared
 * memory; add the block's counts to `hist`, which block 0 zeroed at the start (behind a split grid
 * barrier: every block arrives at the start and waits before its adds, by when the zeroes are
 * long visible: no memset before the launch, 1 us at 8K, 5-7% at 1080p and 4K); (2) a grid
 * barrier (both the cooperative launch's own: no counter to zero); (3) every block builds the LUT
 * from `hist` itself (no LUT kernel); (4) apply: the units read last in (1) first, backwards
 * (the L2 still holds part of them), then those kept in shared memory (no read at all). The
 * image is read from DRAM twice less what the SMs and the L2 hold (4 x 48 KB a block for RGB8:
 * 25 MB on 132 SMs).
 * A thread walks the grid stride; the last, partial round goes round the blocks a warp's 32
 * units at a time, so every SM gets its share of it (in the stride's order the first blocks got
 * it all, and the other SMs idled at the barrier and at the end). Samples are taken and put
 * back with PRMT, luma's y is one IMAD.HI and its apply one table load a pixel (eq8_luma_tab):
 * a quarter fewer instructions than hist_map_unit's. What each step gave, and what bounded the
 * kernel before the staged stores (48 bytes a lane: every 32-byte sector written in pieces), is
 * in issue 36's results (tools/results/). */
template <int CH, bool LUMA>
__global__ void __launch_bounds__(EQ8_THREADS, 1)
    hist_opt_eq8_kernel(ts_image in, ts_image out, HistUnits u, bool vec, unsigned slots, uint32_t *hist)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    typedef HistShape<1, CH, LUMA> S;
    typedef HistUnit<1, CH> U;
    constexpr unsigned NB = (unsigned)S::NH * 256u;
    __shared__ __align__(16) uint16_t lut[NB];
    __shared__ __align__(16) int16_t tab[LUMA ? 512 : 1]; /* eq8_luma_tab */
    uint32_t *cnt = hist_smem<uint32_t>(); /* [NB][32] lane copies */
    uint4 *keep = hist_smem<uint4>() + NB * HIST_LANES / 4; /* [slots][NVEC][blockDim] */
    const unsigned T = blockDim.x, G = gridDim.x, tid = threadIdx.x, lane = tid & 31;
    const unsigned stride = G * T, n = u.walked(), first = blockIdx.x * T + tid;
    const unsigned full = n / stride; /* whole rounds; then this thread's unit of the last one: */
    const unsigned tail = full * stride + (((tid >> 5) * G + blockIdx.x) << 5) + lane;
    const unsigned iters = full + (tail < n); /* n + stride < 2^32: n < 2^31 */
    uint4 *cnt4 = hist_smem<uint4>();
    for (unsigned i = tid; i < NB * (HIST_LANES / 4); i += T)
        cnt4[i] = make_uint4(0, 0, 0, 0);
    if (blockIdx.x == 0)
        for (unsigned b = tid; b < NB; b += T)
            hist[b] = 0;
    /* the first half of a grid barrier (the driver's, no memory to zero first): every block's
     * adds into `hist` wait for its second half, by when block 0 has long zeroed it */
    auto zeroed = grid.barrier_arrive(); /* syncs the block too */

    auto unit = [&](unsigned k) -> unsigned { return k == full ? tail : first + k * stride; };
    auto load = [&](U &a, unsigned k) -> int {
        int nb;
        const unsigned char *p = hist_walk_unit<1, CH>(in, u, unit(k), &nb);
        a.load(p, nb, vec);
        return nb;
    };
    /* Evict-first stores where the apply reads units back from L2 (some thread walks more units
     * than it keeps): the output then leaves the L2 before that input. Not otherwise: an output
     * that fits the L2 would go to DRAM inside the run. */
    const bool cs = full >= slots;
    /* 48-byte units: each lane's three 16-byte stores would fill every 32-byte sector of the warp's
     * 1536 bytes in pieces. When the warp's 32 units lie back to back, half a warp's units at a
     * time go through shared memory (the lane copies' area, free after the LUT) and out as whole
     * 512- and 256-byte pieces. */
    uint4 *stage = hist_smem<uint4>() + (tid >> 5) * (16 * U::NVEC);
    static_assert(U::NVEC != 3 || NB * HIST_LANES * 4 >= EQ8_THREADS / 32 * 16 * 48,
                  "the staging fits the lane copies");
    auto put = [&](uint4 *q, uint4 v) {
        if (cs)
            __stcs(q, v);
        else
            *q = v;
    };
    auto apply = [&](const U &a, unsigned k) {
        int nb;
        unsigned char *p = hist_walk_unit<1, CH>(out, u, unit(k), &nb);
        U o;
        if constexpr (LUMA)
            o = eq8_map_luma<CH>(a, tab);
        else
            o = eq8_map_lut<CH, S::NH>(a, lut);
        bool whole = vec && nb == U::BYTES;
        if constexpr (U::NVEC == 3) {
            unsigned char *p0 = p;
            bool run = false;
            if (__activemask() == 0xFFFFFFFFu) {
                p0 = (unsigned char *)__shfl_sync(0xFFFFFFFFu, (unsigned long long)p, 0);
                run = __all_sync(0xFFFFFFFFu, whole && p == p0 + (size_t)lane * U::BYTES);
            }
            if (run) {
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    if ((lane >> 4) == (unsigned)h)
#pragma unroll
                        for (int v = 0; v < 3; v++)
                            stage[(lane & 15) * 3 + v] =
                                make_uint4(o.w[4 * v], o.w[4 * v + 1], o.w[4 * v + 2], o.w[4 * v + 3]);
                    __syncwarp();
                    uint4 *q = reinterpret_cast<uint4 *>(p0 + 768 * h);
                    put(q + lane, stage[lane]);
                    if (lane < 16)
                        put(q + 32 + lane, stage[32 + lane]);
                    __syncwarp();
                }
                return;
            }
        }
        if (whole) {
#pragma unroll
            for (int v = 0; v < U::NVEC; v++)
                put(reinterpret_cast<uint4 *>(p) + v,
                    make_uint4(o.w[4 * v], o.w[4 * v + 1], o.w[4 * v + 2], o.w[4 * v + 3]));
        } else {
            o.store(p, nb, vec);
        }
    };

    /* (1) count, keeping the first `slots` units */
    uint32_t *mine = cnt + lane;
    eq8_pipeline<U>(iters, load, [&](const U &a, int nb, unsigned k) {
        if (nb == U::BYTES)
            eq8_count<CH, LUMA, false>(a, U::PIX, mine);
        else
            eq8_count<CH, LUMA, true>(a, nb / CH, mine);
        if (k < slots)
#pragma unroll
            for (int v = 0; v < U::NVEC; v++)
                keep[(k * U::NVEC + v) * T + tid] =
                    make_uint4(a.w[4 * v], a.w[4 * v + 1], a.w[4 * v + 2], a.w[4 * v + 3]);
    });
    grid.barrier_wait(std::move(zeroed)); /* syncs the block too */
    for (unsigned b = tid; b < NB; b += T) {
        uint32_t sum = 0;
#pragma unroll 8
        for (unsigned j = 0; j < HIST_LANES; j++)
            sum += cnt[b * HIST_LANES + ((j + b) & (HIST_LANES - 1))];
        if (sum)
            atomicAdd(&hist[b], sum);
    }

    /* (2) every block's counts are in `hist` */
    grid.sync();

    /* (3) the LUT, one warp a histogram; luma's apply table from it */
    if (tid < 32 * S::NH)
        eq8_lut_warp(hist + (tid >> 5) * 256u, lut + (tid >> 5) * 256u,
                     (uint32_t)((uint64_t)in.width * (uint64_t)in.height), lane);
    __syncthreads();
    if constexpr (LUMA) {
        if (tid < 256)
            eq8_luma_tab(lut, tab, tid);
        __syncthreads();
    }

    /* (4) apply: the L2's units backwards, then the kept ones */
    const unsigned kept = iters < slots ? iters : slots;
    const unsigned m = iters - kept;
    eq8_pipeline<U>(
        m,
        [&](U &a, unsigned j) { return load(a, iters - 1 - j); },
        [&](const U &a, int, unsigned j) { apply(a, iters - 1 - j); });
    for (unsigned k = kept; k-- > 0;) {
        U a;
#pragma unroll
        for (int v = 0; v < U::NVEC; v++) {
            uint4 q = keep[(k * U::NVEC + v) * T + tid];
            a.w[4 * v] = q.x, a.w[4 * v + 1] = q.y, a.w[4 * v + 2] = q.z, a.w[4 * v + 3] = q.w;
        }
        apply(a, k);
    }
}

struct OptEqualize8 {
    const ts_job *job;

    template <int B, int CH, bool L> ts_status run()
    {
        if constexpr (B != 1 || HistShape<B, CH, L>::NH != 1)
            return ts_fail(TS_ERR_UNSUPPORTED, "equalize opt: one kernel for one 8-bit histogram only");
        else
            return run8<CH, L>();
    }

    template <int CH, bool L> ts_status run8()
    {
        typedef HistShape<1, CH, L> S;
        typedef HistUnit<1, CH> U;
        const void *k = (const void *)hist_opt_eq8_kernel<CH, L>;
        const size_t nbins = (size_t)S::NH * 256, cnt_bytes = nbins * HIST_LANES * sizeof(uint32_t);
        cudaFuncAttributes fa;
        CUDA_TRY(cudaFuncGetAttributes(&fa, k));
        const size_t static_bytes = fa.sharedSizeBytes, slot_bytes = (size_t)EQ8_THREADS * U::BYTES;
        const size_t optin = job->dev->smem_per_block_optin;
        if (optin < cnt_bytes + static_bytes)
            return ts_fail(TS_ERR_UNSUPPORTED, "equalize opt: %zu bytes of shared memory a block",
                           optin);
        size_t slots = (optin - cnt_bytes - static_bytes) / slot_bytes;
        size_t smem = cnt_bytes + slots * slot_bytes;
        int resident = 0;
        ts_status st = gpu_allow_smem(k, smem);
        if (st == TS_OK)
            st = gpu_resident_blocks(k, EQ8_THREADS, smem, job->dev, "equalize", &resident);
        if (st != TS_OK)
            return st;
        HistUnits u = hist_units<1, CH>(job->in);
        if (job->out.pitch != ts_row_bytes(&job->out))
            u.flat_bytes = 0; /* the walk's flat layout must be the output's too */
        unsigned need = (u.walked() + EQ8_THREADS - 1) / EQ8_THREADS;
        unsigned blocks = need < (unsigned)resident ? need : (unsigned)resident;
        size_t stride = (size_t)blocks * EQ8_THREADS, iters = (u.walked() + stride - 1) / stride;
        slots = slots < iters ? slots : iters; /* a small image: no more than a thread walks */
        smem = cnt_bytes + slots * slot_bytes;
        bool vec = hist_vec_ok_walk(&job->in, u) && hist_vec_ok_walk(&job->out, u);
        cudaStream_t s = (cudaStream_t)job->stream;
        char *scratch = (char *)job->scratch;
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeCooperative;
        attr[0].val.cooperative = 1;
        cfg.gridDim = dim3(blocks);
        cfg.blockDim = dim3(EQ8_THREADS);
        cfg.dynamicSmemBytes = smem;
        cfg.stream = s;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        CUDA_TRY(cudaLaunchKernelEx(&cfg, hist_opt_eq8_kernel<CH, L>, job->in, job->out, u, vec,
                                    (unsigned)slots, (uint32_t *)scratch));
        LAUNCH_CHECK("hist_opt_eq8_kernel");
        return TS_OK;
    }
};

/* The one-kernel equalize runs: an 8-bit equalize of one histogram, no forced slice count (the
 * sweep keeps the counting kernel it measures), and a device that launches cooperative kernels.
 * Not RGBA8: at 8K it measured 2% slower than the three kernels (H100; 8% and 19% faster at 4K
 * and 1080p): one 16-byte unit in flight a thread is half what the three kernels' walk keeps. */
static bool hist_opt_eq8_shape(const ts_job *job)
{
    return job->op->kind == TS_OP_EQUALIZE && job->in.bytes == 1 &&
           ts_hist_count(job->op->hist_mode, job->in.channels) == 1 && job->in.channels != 4;
}

bool hist_opt_eq8_runs(const ts_job *job)
{
    return hist_opt_eq8_shape(job) && job->param == 0 && job->dev && job->dev->coop_launch;
}

ts_status hist_opt_eq8(const ts_job *job)
{
    long nbins = hist_total_bins(job->op->hist_mode, job->in.channels, job->in.bytes);
    size_t need = hist_eq_bytes(nbins);
    if (!job->scratch || job->scratch_bytes < need || (uintptr_t)job->scratch % 256)
        return ts_fail(TS_ERR_INVALID, "%s: needs %zu bytes of 256-byte aligned scratch, has %zu",
                       job->op->text, need, job->scratch ? job->scratch_bytes : 0);
    OptEqualize8 op = {job};
    return hist_dispatch(job->in, job->op->hist_mode, op);
}
