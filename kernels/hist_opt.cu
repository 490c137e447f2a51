/* hist_opt.cu - the `opt` histogram variant (see hist.cu for the op and the other variants).
 *
 * Beyond the seed, without clusters: the seed splits 65536 u32 bins over the blocks of a
 * cluster, so half or more of its adds cross to another SM. Here every add stays in the block's
 * own shared memory, and any GPU from sm_75 runs it (the pre-sm_90 path `auto` needs):
 *   - 16-bit: two 16-bit counters per word (bins 2k and 2k+1), so 65536 bins take 128 KB and fit
 *     one block. An add whose counter wraps past 65535 (the atomic returns the old word, so the
 *     adding thread sees it) moves 65536 counts to the global histogram, takes back the carry it
 *     pushed into the neighbour counter, and accounts for that neighbour's own wrap up or down:
 *     every counter's true count = its final field + the net 65536s spilled, exactly.
 *     Equal neighbours in a thread's unit are added as one run (a smooth or one-valued image
 *     then costs about what a uniform one does: one 32-way conflicting atomic instead of eight
 *     spread ones). Each block writes its packed histogram (< 65536 a field) as a partial to
 *     scratch; a second kernel sums the partials per bin: 132 x 128 KB of plain, coalesced
 *     traffic that stays in L2, instead of 8.6 M global atomics.
 *   - 8-bit: 32 copies of each counter, one per lane, at word (bin * 32 + lane): lane l only ever
 *     touches bank l, so an atomic instruction never has a bank or address conflict whatever the
 *     data (a one-valued image included); the merge reads the copies diagonally (conflict-free)
 *     and adds each non-zero bin to global memory once per block. 3 x 256 bins: 96 KB a block,
 *     two blocks an SM. Every add is an increment by 1 in straight-line code (see opt8_count),
 *     and the loads are software-pipelined: the next units are in flight while the current
 *     ones are counted (hist_for_units_pipelined), an image with back-to-back rows walked as
 *     one long row without a division a unit.
 *   - Pixels arrive in 16-byte units with vector loads (48 bytes for 3-channel pixels: 16 RGB8
 *     or 8 RGB16 pixels), two units in flight a thread for 16-byte units; luma is computed in
 *     registers; a persistent grid of resident blocks (the occupancy API) covers all SMs.
 *   - Bins that do not fit one block (3 x 65536 16-bit: 384 KB) are cut into slices like
 *     `shared` (2 slices of 192 KB on sm_90), each slice's blocks reading the whole image.
 * job->param, when non-zero, forces the number of slices (the benchmark sweeps 1..16): more,
 * smaller slices put more blocks on an SM but read the image more often; the default is the
 * fewest that fit. `supports` refuses a count that does not divide the bins or fit a block.
 */
#include "hist_common.cuh"
#include "variants.h"

#define NONE 0xFFFFFFFFu

/* ---------------------------------------------------------------- 8-bit: lane copies */

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

/* Lane l's copy of local bin b is the word b * 32 + l. SLICED: the bins are cut into slices
 * (blockIdx.y picks one; only the benchmark's forced slice counts). */
template <int CH, bool LUMA, bool SLICED>
__global__ void __launch_bounds__(HIST_OPT8_THREADS, 2)
    hist_opt8_kernel(ts_image im, HistUnits units, bool vec, unsigned slice_bins, uint32_t *hist)
{
    typedef HistUnit<1, CH> U;
    uint32_t *cnt = hist_smem<uint32_t>(); /* [slice_bins][32] */
    const unsigned lane = threadIdx.x & 31, lo = blockIdx.y * slice_bins;
    uint4 *cnt4 = hist_smem<uint4>();
    for (unsigned i = threadIdx.x; i < slice_bins * (HIST_LANES / 4); i += blockDim.x)
        cnt4[i] = make_uint4(0, 0, 0, 0);
    __syncthreads();
    uint32_t *mine = cnt + lane;
    constexpr int UNR = U::NVEC == 1 ? 2 : 1;
    hist_for_units_pipelined<1, CH, UNR>(im, units, vec, [&](const U &u, int nbytes, unsigned) {
        if (!SLICED && nbytes == U::BYTES)
            opt8_count<CH, LUMA, false>(u, U::PIX, mine, 0, slice_bins);
        else /* the short last unit of a row or image, or a slice of the bins */
            opt8_count<CH, LUMA, true>(u, nbytes / CH, mine, lo, slice_bins);
    });
    __syncthreads();
    for (unsigned b = threadIdx.x; b < slice_bins; b += blockDim.x) {
        uint32_t sum = 0;
#pragma unroll 8
        for (unsigned j = 0; j < HIST_LANES; j++) /* thread b reads bank (b + j) % 32 */
            sum += cnt[b * HIST_LANES + ((j + b) & (HIST_LANES - 1))];
        if (sum)
            atomicAdd(&hist[lo + b], sum);
    }
}

/* ---------------------------------------------------------------- 16-bit: packed counters */

/* The add of `amt` to local bin `key` returned `old` (the whole word) and wrapped a counter:
 * move whole 65536s to the global bins so that field + spills stays each bin's count. */
__device__ __noinline__ void packed_wrapped(uint32_t *words, uint32_t *hist, unsigned lo,
                                            unsigned key, unsigned amt, uint32_t old)
{
    const unsigned g = lo + key;
    if (key & 1) { /* high counter: the carry out of bit 31 is simply lost */
        atomicAdd(&hist[g], 65536u);
        return;
    }
    atomicAdd(&hist[g], 65536u); /* low counter wrapped and carried 1 into the high one */
    if ((old >> 16) == 0xFFFFu)  /* that carry wrapped the high counter upwards */
        atomicAdd(&hist[g + 1], 65536u);
    uint32_t old2 = atomicSub(&words[key >> 1], 0x10000u); /* take the carry back */
    if ((old2 >> 16) == 0)       /* which wrapped the high counter downwards */
        atomicAdd(&hist[g + 1], 0u - 65536u);
}

template <int CH, bool LUMA>
__global__ void __launch_bounds__(HIST_OPT16_THREADS, 1)
    hist_opt16_kernel(ts_image im, HistUnits units, bool vec, unsigned slice_bins, uint32_t *hist,
                      uint32_t *partial)
{
    typedef HistShape<2, CH, LUMA> S;
    typedef HistUnit<2, CH> U;
    uint32_t *words = hist_smem<uint32_t>(); /* slice_bins / 2 words */
    uint4 *words4 = hist_smem<uint4>();
    const unsigned lo = blockIdx.y * slice_bins, nwords = slice_bins / 2;
    for (unsigned i = threadIdx.x; i < nwords / 4; i += blockDim.x)
        words4[i] = make_uint4(0, 0, 0, 0);
    __syncthreads();
    constexpr int UNR = U::NVEC == 1 ? 2 : 1;
    hist_for_units<2, CH, UNR>(im, units, vec, [&](const U &u, int nbytes, unsigned) {
        const int npix = nbytes / (2 * CH);
#pragma unroll
        for (int h = 0; h < S::NH; h++) {
            /* Block-uniform: skip a histogram that this slice holds no bin of. */
            if ((unsigned)h * 65536u + 65536u <= lo || (unsigned)h * 65536u >= lo + slice_bins)
                continue;
            unsigned key[U::PIX];
#pragma unroll
            for (int p = 0; p < U::PIX; p++) {
                unsigned s[CH];
#pragma unroll
                for (int c = 0; c < CH; c++)
                    s[c] = u.sample(p * CH + c);
                unsigned l = (unsigned)h * 65536u + hist_value<2, CH, LUMA>(s, h) - lo;
                key[p] = p < npix && l < slice_bins ? l : NONE;
            }
            /* Runs of equal keys become one add; all adds go out before any result is looked at. */
            unsigned amt[U::PIX];
            uint32_t old[U::PIX];
            unsigned run = 1;
#pragma unroll
            for (int p = 0; p < U::PIX; p++) {
                bool end = p == U::PIX - 1 || key[p + 1 < U::PIX ? p + 1 : p] != key[p];
                amt[p] = end && key[p] != NONE ? run : 0;
                run = end ? 1 : run + 1;
                old[p] = 0;
                if (amt[p])
                    old[p] = atomicAdd(&words[key[p] >> 1], key[p] & 1 ? amt[p] << 16 : amt[p]);
            }
#pragma unroll
            for (int p = 0; p < U::PIX; p++) {
                unsigned field = key[p] & 1 ? old[p] >> 16 : old[p] & 0xFFFFu;
                if (amt[p] && field + amt[p] > 0xFFFFu)
                    packed_wrapped(words, hist, lo, key[p], amt[p], old[p]);
            }
        }
    });
    __syncthreads();
    /* Every field is now < 65536 (wraps went to global memory): the words are this block's
     * partial histogram, exactly. */
    uint4 *dst = reinterpret_cast<uint4 *>(partial + ((size_t)blockIdx.y * gridDim.x + blockIdx.x) * nwords);
    for (unsigned i = threadIdx.x; i < nwords / 4; i += blockDim.x)
        dst[i] = words4[i];
}

/* hist[2w], hist[2w + 1] += the two fields of word w summed over the partials of w's slice.
 * Block (32, 8): 32 consecutive words (coalesced), 8 threads splitting the partials. */
__global__ void __launch_bounds__(256)
    hist_opt16_reduce_kernel(const uint32_t *partial, unsigned slice_words, unsigned blocks,
                             unsigned total_words, uint32_t *hist)
{
    __shared__ uint2 part[8][32];
    const unsigned gw = blockIdx.x * 32 + threadIdx.x;
    uint32_t a = 0, b = 0; /* at most blocks * 65535 < 2^32 */
    if (gw < total_words) {
        unsigned s = gw / slice_words, w = gw - s * slice_words;
        const uint32_t *p = partial + (size_t)s * blocks * slice_words + w;
#pragma unroll 4
        for (unsigned j = threadIdx.y; j < blocks; j += 8) {
            uint32_t v = p[(size_t)j * slice_words];
            a += v & 0xFFFFu;
            b += v >> 16;
        }
    }
    part[threadIdx.y][threadIdx.x] = make_uint2(a, b);
    __syncthreads();
    if (threadIdx.y == 0 && gw < total_words) {
        for (int j = 1; j < 8; j++) {
            a += part[j][threadIdx.x].x;
            b += part[j][threadIdx.x].y;
        }
        hist[2 * gw] += a;
        hist[2 * gw + 1] += b;
    }
}

/* ---------------------------------------------------------------- launchers */

static int plan_of(const ts_job *job, hist_plan *p)
{
    long nbins = hist_total_bins(job->op->hist_mode, job->in.channels, job->in.bytes);
    return hist_plan_opt(nbins, job->in.bytes, job->dev, job->param, p);
}

struct OptCount {
    const ts_job *job;
    uint32_t *hist;
    void *extra;
    size_t extra_bytes;
    hist_plan plan;

    /* Blocks per slice: resident ones, no more than the units need, at most `cap`. */
    ts_status grid(const void *k, unsigned units, int cap, int *per_slice)
    {
        int resident = 0;
        ts_status st = gpu_allow_smem(k, plan.smem);
        if (st == TS_OK)
            st = gpu_resident_blocks(k, plan.threads, plan.smem, job->dev, "hist", &resident);
        if (st != TS_OK)
            return st;
        unsigned need = (units + (unsigned)plan.threads - 1) / (unsigned)plan.threads;
        int b = resident / plan.slices;
        b = (unsigned)b > need ? (int)need : b;
        b = b > cap ? cap : b;
        *per_slice = b < 1 ? 1 : b;
        return TS_OK;
    }

    /* The output starts at zero: 8-bit blocks and 16-bit spills add into it. */
    ts_status zero()
    {
        CUDA_TRY(cudaMemsetAsync(hist, 0, (size_t)plan.slices * plan.slice_bins * sizeof *hist,
                                    (cudaStream_t)job->stream));
        return TS_OK;
    }

    template <int B, int CH, bool L> ts_status run()
    {
        if constexpr (B == 1)
            return run8<CH, L>();
        else
            return run16<CH, L>();
    }

    template <int CH, bool L> ts_status run8()
    {
        return plan.slices > 1 ? run8k<CH, L, true>() : run8k<CH, L, false>();
    }

    template <int CH, bool L, bool SLICED> ts_status run8k()
    {
        HistUnits u = hist_units<1, CH>(job->in);
        int per_slice = 0;
        ts_status st = grid((const void *)hist_opt8_kernel<CH, L, SLICED>, u.walked(), INT32_MAX,
                            &per_slice);
        if (st != TS_OK)
            return st;
        dim3 g((unsigned)per_slice, (unsigned)plan.slices);
        if ((st = zero()) != TS_OK)
            return st;
        hist_opt8_kernel<CH, L, SLICED><<<g, plan.threads, plan.smem, (cudaStream_t)job->stream>>>(
            job->in, u, hist_vec_ok_walk(&job->in, u), (unsigned)plan.slice_bins, hist);
        LAUNCH_CHECK("hist_opt8_kernel");
        return TS_OK;
    }

    template <int CH, bool L> ts_status run16()
    {
        HistUnits u = hist_units<2, CH>(job->in);
        int per_slice = 0;
        ts_status st = grid((const void *)hist_opt16_kernel<CH, L>, u.total, plan.blocks, &per_slice);
        if (st != TS_OK)
            return st;
        size_t need = (size_t)plan.slices * (size_t)per_slice * (size_t)plan.slice_bins * 2;
        if (!extra || extra_bytes < need)
            return ts_fail(TS_ERR_INVALID, "hist opt: %zu bytes of scratch for partial histograms, "
                           "%zu needed", extra ? extra_bytes : 0, need);
        cudaStream_t s = (cudaStream_t)job->stream;
        unsigned slice_words = (unsigned)plan.slice_bins / 2;
        dim3 g((unsigned)per_slice, (unsigned)plan.slices);
        if ((st = zero()) != TS_OK)
            return st;
        hist_opt16_kernel<CH, L><<<g, plan.threads, plan.smem, s>>>(
            job->in, u, hist_vec_ok(&job->in), (unsigned)plan.slice_bins, hist, (uint32_t *)extra);
        LAUNCH_CHECK("hist_opt16_kernel");
        unsigned total_words = slice_words * (unsigned)plan.slices;
        hist_opt16_reduce_kernel<<<(total_words + 31) / 32, dim3(32, 8), 0, s>>>(
            (const uint32_t *)extra, slice_words, (unsigned)per_slice, total_words, hist);
        LAUNCH_CHECK("hist_opt16_reduce_kernel");
        return TS_OK;
    }
};

static ts_status opt_count(const ts_job *job, uint32_t *d_hist, void *extra, size_t extra_bytes)
{
    OptCount op = {job, d_hist, extra, extra_bytes, {0, 0, 0, 0, 0, 0}};
    if (!plan_of(job, &op.plan))
        return ts_fail(TS_ERR_UNSUPPORTED, "hist opt: the bins do not fit shared memory");
    return hist_dispatch(job->in, job->op->hist_mode, op);
}

extern "C" int hist_opt_supports(const ts_job *job)
{
    hist_plan p;
    return hist_supports(job) && (!job->dev || plan_of(job, &p));
}

extern "C" size_t hist_opt_scratch(const ts_job *job)
{
    hist_plan p;
    size_t partial = job->dev && plan_of(job, &p) ? p.partial_bytes : 0;
    return hist_scratch(job) + partial;
}

extern "C" ts_status hist_opt(const ts_job *job)
{
    hist_plan p;
    ts_status st = hist_check_job(job);
    if (st != TS_OK)
        return st;
    if (!plan_of(job, &p))
        return ts_fail(TS_ERR_UNSUPPORTED, "hist opt: the bins do not fit shared memory");
    return hist_run_job(job, opt_count, p.partial_bytes);
}
