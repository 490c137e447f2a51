/* hist_opt_eq8.cu - `opt`'s 8-bit equalize in one kernel (see hist_opt.cu for the variant and
 * hist.cu for the op): a cooperative kernel, one 1024-thread block an SM, that counts (lane copies,
 * opt8_count) while keeping each thread's first units in the shared memory the counters leave
 * free, waits at a grid barrier, builds the LUT in every block (no LUT kernel), then applies it:
 * the units read last first, backwards, while the L2 still holds part of them, then the kept ones
 * (no read at all). Equalizes with one histogram (luma, gray) of 1 to 3 channels; the rest keep
 * the three kernels (hist_run_job). Bit-exact with ts_ref_equalize.
 */
#include "hist_common.cuh"

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

/* equalize of an 8-bit image in one kernel, one block an SM, all blocks resident (a cooperative
 * launch): (1) count as hist_opt8_kernel does (lane copies), keeping each thread's first
 * `slots` units in shared memory; add the block's counts to `hist`; (2) a grid barrier
 * (`arrive`, zeroed before the launch); (3) every block builds the LUT from `hist` itself (no
 * LUT kernel); (4) apply: the units read last in (1) first, backwards (the L2 still holds part
 * of them), then those kept in shared memory (no read at all). The image is read from DRAM
 * twice less what the SMs and the L2 hold (4 x 48 KB a block for RGB8: 25 MB on 132 SMs).
 * Measured on H100 (8K RGB8): the backward order and the kept units each save about 6 us;
 * L2 evict-first hints on the stores and the reads not needed again cost 3 us (dropped). */
template <int CH, bool LUMA>
__global__ void __launch_bounds__(EQ8_THREADS, 1)
    hist_opt_eq8_kernel(ts_image in, ts_image out, HistUnits u, bool vec, unsigned slots,
                        uint32_t *hist, unsigned *arrive)
{
    typedef HistShape<1, CH, LUMA> S;
    typedef HistUnit<1, CH> U;
    constexpr unsigned NB = (unsigned)S::NH * 256u;
    __shared__ __align__(16) uint16_t lut[NB];
    uint32_t *cnt = hist_smem<uint32_t>(); /* [NB][32] lane copies */
    uint4 *keep = hist_smem<uint4>() + NB * HIST_LANES / 4; /* [slots][NVEC][blockDim] */
    const unsigned T = blockDim.x, tid = threadIdx.x, lane = tid & 31;
    const unsigned stride = gridDim.x * T, n = u.walked(), first = blockIdx.x * T + tid;
    const unsigned iters = first < n ? (n - first + stride - 1) / stride : 0; /* < 2^32: n < 2^31 */
    uint4 *cnt4 = hist_smem<uint4>();
    for (unsigned i = tid; i < NB * (HIST_LANES / 4); i += T)
        cnt4[i] = make_uint4(0, 0, 0, 0);
    __syncthreads();

    auto load = [&](U &a, unsigned k) -> int {
        int nb;
        const unsigned char *p = hist_walk_unit<1, CH>(in, u, first + k * stride, &nb);
        a.load(p, nb, vec);
        return nb;
    };
    auto apply = [&](const U &a, unsigned k) {
        int nb;
        unsigned char *p = hist_walk_unit<1, CH>(out, u, first + k * stride, &nb);
        hist_map_unit<1, CH, LUMA>(a, lut).store(p, nb, vec);
    };

    /* (1) count, keeping the first `slots` units */
    uint32_t *mine = cnt + lane;
    U cur;
    int ncur = 0;
    if (iters)
        ncur = load(cur, 0);
    for (unsigned k = 0; k < iters; k++) {
        U nxt;
        int nnxt = 0;
        if (k + 1 < iters)
            nnxt = load(nxt, k + 1);
        else
            nxt.clear();
        if (ncur == U::BYTES)
            opt8_count<CH, LUMA, false>(cur, U::PIX, mine, 0, NB);
        else
            opt8_count<CH, LUMA, true>(cur, ncur / CH, mine, 0, NB);
        if (k < slots)
#pragma unroll
            for (int v = 0; v < U::NVEC; v++)
                keep[(k * U::NVEC + v) * T + tid] =
                    make_uint4(cur.w[4 * v], cur.w[4 * v + 1], cur.w[4 * v + 2], cur.w[4 * v + 3]);
        cur = nxt;
        ncur = nnxt;
    }
    __syncthreads();
    for (unsigned b = tid; b < NB; b += T) {
        uint32_t sum = 0;
#pragma unroll 8
        for (unsigned j = 0; j < HIST_LANES; j++)
            sum += cnt[b * HIST_LANES + ((j + b) & (HIST_LANES - 1))];
        if (sum)
            atomicAdd(&hist[b], sum);
    }

    /* (2) every block's counts are in `hist` */
    __syncthreads();
    if (tid == 0) {
        __threadfence();
        atomicAdd(arrive, 1u);
        unsigned seen = 0;
        while (seen < gridDim.x) {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(arrive) : "memory");
            if (seen < gridDim.x)
                __nanosleep(64);
        }
        __threadfence();
    }
    __syncthreads();

    /* (3) the LUT, one warp a histogram */
    if (tid < 32 * S::NH)
        eq8_lut_warp(hist + (tid >> 5) * 256u, lut + (tid >> 5) * 256u,
                     (uint32_t)((uint64_t)in.width * (uint64_t)in.height), lane);
    __syncthreads();

    /* (4) apply: the L2's units backwards, then the kept ones */
    const unsigned kept = iters < slots ? iters : slots;
    if (iters > kept) {
        unsigned k = iters - 1;
        load(cur, k);
        for (;; k--) {
            U nxt;
            if (k > kept)
                load(nxt, k - 1);
            else
                nxt.clear();
            apply(cur, k);
            if (k == kept)
                break;
            cur = nxt;
        }
    }
    for (unsigned k = kept; k-- > 0;) {
#pragma unroll
        for (int v = 0; v < U::NVEC; v++) {
            uint4 q = keep[(k * U::NVEC + v) * T + tid];
            cur.w[4 * v] = q.x, cur.w[4 * v + 1] = q.y, cur.w[4 * v + 2] = q.z, cur.w[4 * v + 3] = q.w;
        }
        apply(cur, k);
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
        const size_t static_bytes = nbins * sizeof(uint16_t), slot_bytes = (size_t)EQ8_THREADS * U::BYTES;
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
        size_t eq = hist_eq_bytes((long)nbins);
        CUDA_TRY(cudaMemsetAsync(scratch, 0, eq + HIST_EQ8_ARRIVE_BYTES, s));
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
                                    (unsigned)slots, (uint32_t *)scratch, (unsigned *)(scratch + eq)));
        LAUNCH_CHECK("hist_opt_eq8_kernel");
        return TS_OK;
    }
};

/* The one-kernel equalize runs: an 8-bit equalize of one histogram, no forced slice count (the
 * sweep keeps the counting kernel it measures), and a device that launches cooperative kernels.
 * Not RGBA8: at 8K it measured 2% slower than the three kernels (H100; 8% and 19% faster at 4K
 * and 1080p): one 16-byte unit in flight a thread is half what the three kernels' walk keeps. */
bool hist_opt_eq8_runs(const ts_job *job)
{
    if (job->op->kind != TS_OP_EQUALIZE || job->in.bytes != 1 || job->param != 0 || !job->dev ||
        ts_hist_count(job->op->hist_mode, job->in.channels) != 1 || job->in.channels == 4)
        return false;
    int coop = 0;
    if (cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, job->dev->id) != cudaSuccess)
        return false;
    return coop != 0;
}

ts_status hist_opt_eq8(const ts_job *job)
{
    long nbins = hist_total_bins(job->op->hist_mode, job->in.channels, job->in.bytes);
    size_t need = hist_eq_bytes(nbins) + HIST_EQ8_ARRIVE_BYTES;
    if (!job->scratch || job->scratch_bytes < need || (uintptr_t)job->scratch % 256)
        return ts_fail(TS_ERR_INVALID, "%s: needs %zu bytes of 256-byte aligned scratch, has %zu",
                       job->op->text, need, job->scratch ? job->scratch_bytes : 0);
    OptEqualize8 op = {job};
    return hist_dispatch(job->in, job->op->hist_mode, op);
}
