/* hist_opt.cu - the `opt` histogram variant (see hist.cu for the op and the other variants).
 *
 * Beyond the seed, without clusters: the seed splits 65536 u32 bins over the blocks of a
 * cluster, so half or more of its adds cross to another SM. Here every add stays in the block's
 * own shared memory, and any GPU from sm_75 runs it (the pre-sm_90 path `auto` needs):
 *   - 16-bit: two 16-bit counters per word (bins 2k and 2k+1), so 65536 bins take 128 KB and fit
 *     one block. The counts go up in rounds of at most 61440 pixels a block; between rounds a
 *     drain moves each field's multiples of 4096 to the global histogram. A field thus never
 *     passes 65535, so an add needs no wrap check and no returned value (before: each add
 *     returned the old word to catch a wrap, and runs of equal neighbours were merged: slower
 *     on every image but a smooth one). A unit of one value is still one add. Each block writes
 *     its packed histogram (< 65536 a field) as a partial to scratch; a second kernel sums the
 *     partials per bin: 132 x 128 KB of plain, coalesced traffic, instead of 8.6 M global
 *     atomics. On sm_90, one histogram of 65536 bins (gray16, luma): the blocks of a cluster of
 *     HIST_OPT16_CLUSTER add their packed words together through distributed shared memory
 *     first, so there is a partial a cluster (hist_opt16_cluster_kernel; the `cluster` row
 *     sweeps the cluster size). Where a block counts fewer than 256 x 4096 pixels (8K on an
 *     H100 counts ~254 K a block) this runs as one cooperative kernel instead
 *     (hist_opt16_fused_kernel): the drains go to a byte a bin in the shared memory the words
 *     leave free, so nothing reaches the histogram before a grid barrier after the cluster
 *     merge, and then every block sums its share of the bins over the clusters' partials and
 *     stores it: no memset of the histogram before, no reduce kernel after.
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
 *   - 8-bit equalize with one histogram (luma, gray; job->param 0): one cooperative kernel, one
 *     1024-thread block an SM: count (lane copies) while keeping each thread's first units in
 *     the shared memory the counters leave free, a grid barrier, the LUT built by every block,
 *     then the apply: the units read last first, backwards, while the L2 still holds them, then
 *     the kept ones (no read at all). The image crosses DRAM 3 times less what the SMs and the
 *     L2 hold (hist_opt_eq8.cu). Three histograms (96 KB of lane copies) leave too
 *     little room and one block an SM counts slower, and RGBA8 measured slower at 8K (see
 *     hist_opt_eq8_runs): they keep the three kernels.
 * job->param, when 1..64, forces the number of slices (the benchmark sweeps 1..16): more,
 * smaller slices put more blocks on an SM but read the image more often; the default is the
 * fewest that fit. `supports` refuses a count that does not divide the bins or fit a block.
 * On the one-kernel shapes a slice count takes the three kernels (opt/1..64); the one kernel
 * itself has no parameter.
 */
#include "hist_common.cuh"
#include "variants.h"

#include <cooperative_groups.h>

/* ---------------------------------------------------------------- 8-bit: lane copies */

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

/* Counts go up in rounds: a round adds at most HIST_OPT16_ROUND counts to any one 16-bit field
 * (a block counts no more pixels than that in it), and a drain between rounds moves every field's
 * multiples of 4096 to the global histogram, leaving each below 4096. So no field ever passes
 * 4095 + 61440 = 65535: the adds need no wrap check, so no returned value to wait for. */
#define HIST_OPT16_ROUND 61440u
#define HIST_OPT16_KEEP 0x0FFFu

/* The units a thread counts between two drains: a block's pixels in one round fit the bound. */
template <int CH> struct Opt16Round {
    static constexpr unsigned UNITS = HIST_OPT16_ROUND / (HIST_OPT16_THREADS * HistUnit<2, CH>::PIX);
    static_assert(UNITS >= 1, "a round holds a unit a thread");
};

/* Adds the unit's values of histogram h that fall in this slice [lo, lo + slice_bins) to the packed
 * words (bins 2k and 2k + 1 in word k's low and high half). A unit of one value is one add. */
template <int CH, bool LUMA>
__device__ __forceinline__ void opt16_count(const HistUnit<2, CH> &u, int npix, uint32_t *words,
                                            unsigned lo, unsigned slice_bins)
{
    typedef HistShape<2, CH, LUMA> S;
    typedef HistUnit<2, CH> U;
#pragma unroll
    for (int h = 0; h < S::NH; h++) {
        /* Block-uniform: skip a histogram that this slice holds no bin of. */
        if ((unsigned)h * 65536u + 65536u <= lo || (unsigned)h * 65536u >= lo + slice_bins)
            continue;
        unsigned key[U::PIX];
        bool one = npix == U::PIX;
#pragma unroll
        for (int p = 0; p < U::PIX; p++) {
            unsigned s[CH];
#pragma unroll
            for (int c = 0; c < CH; c++)
                s[c] = u.sample(p * CH + c);
            key[p] = (unsigned)h * 65536u + hist_value<2, CH, LUMA>(s, h) - lo; /* wraps when below */
            one = one && key[p] == key[0];
        }
        if (one) {
            if (key[0] < slice_bins)
                atomicAdd(&words[key[0] >> 1], key[0] & 1 ? (unsigned)U::PIX << 16 : (unsigned)U::PIX);
            continue;
        }
#pragma unroll
        for (int p = 0; p < U::PIX; p++)
            if (p < npix && key[p] < slice_bins)
                atomicAdd(&words[key[p] >> 1], key[p] & 1 ? 1u << 16 : 1u);
    }
}

/* HIGH: the block's flag "a drain moved counts to the high bytes", after the words (2 bytes a
 * bin) and the high bytes (1 byte a bin). */
__device__ __forceinline__ unsigned *opt16_drained_flag(unsigned slice_bins)
{
    return reinterpret_cast<unsigned *>(hist_dyn_smem + (size_t)slice_bins * 3);
}

/* The 16-bit count of one block into its packed words (slice [lo, lo + slice_bins)), in rounds with
 * drains between them. LAST_DRAIN: drain after the last round too, leaving every field below 4096
 * (so the words of up to 16 blocks add up without a carry between the halves: 16 x 4095 < 65536);
 * else the fields end below 65536. Ends with the block synchronized. */
template <int CH, bool LUMA, bool LAST_DRAIN, bool HIGH = false>
__device__ __forceinline__ void opt16_count_rounds(const ts_image &im, const HistUnits &units, bool vec,
                                                   unsigned lo, unsigned slice_bins, uint32_t *hist)
{
    typedef HistUnit<2, CH> U;
    constexpr unsigned R = Opt16Round<CH>::UNITS;
    uint32_t *words = hist_smem<uint32_t>(); /* slice_bins / 2 words */
    uint4 *words4 = hist_smem<uint4>();
    const unsigned nwords = slice_bins / 2, T = blockDim.x;
    uint2 *high2 = reinterpret_cast<uint2 *>(words + nwords); /* HIGH: a byte a bin */
    for (unsigned i = threadIdx.x; i < nwords / 4; i += T) {
        words4[i] = make_uint4(0, 0, 0, 0);
        if (HIGH)
            high2[i] = make_uint2(0, 0);
    }
    if (HIGH && threadIdx.x == 0)
        *opt16_drained_flag(slice_bins) = 0;
    __syncthreads();
    const unsigned stride = gridDim.x * T, n = units.walked(), first = blockIdx.x * T + threadIdx.x;
    /* every thread of the block goes through the rounds of its thread 0, which walks the most */
    const unsigned b0 = blockIdx.x * T;
    const unsigned iters0 = b0 < n ? (n - b0 + stride - 1) / stride : 0;
    const unsigned rounds = (iters0 + R - 1) / R;
    auto load = [&](U &a, unsigned k) -> int {
        unsigned j = first + k * stride; /* < n + stride < 2^32 */
        if (j >= n) {
            a.clear();
            return 0;
        }
        int nb;
        const unsigned char *p = hist_walk_unit<2, CH>(im, units, j, &nb);
        a.load(p, nb, vec);
        return nb;
    };
    /* The next D units are in flight while one counts. 16-byte units: D = 2 (with one block of
     * 1024 threads an SM, one unit in flight a thread is 16 KB an SM, too little to cover the
     * DRAM latency; measured on an H100 at 8K: 2 beat 1 by ~2.5 us, 4 lost ~2 us to 2). */
    constexpr int D = U::NVEC == 1 ? 2 : 1;
    U cur[D];
    int ncur[D];
#pragma unroll
    for (int d = 0; d < D; d++)
        ncur[d] = load(cur[d], (unsigned)d);
    for (unsigned r = 0, k = 0; r < rounds; r++) {
        for (unsigned q = 0; q < R; q++, k++) {
            U nxt;
            int nnxt = load(nxt, k + D);
            if (ncur[0] > 0)
                opt16_count<CH, LUMA>(cur[0], ncur[0] / (2 * CH), words, lo, slice_bins);
#pragma unroll
            for (int d = 0; d + 1 < D; d++)
                cur[d] = cur[d + 1], ncur[d] = ncur[d + 1];
            cur[D - 1] = nxt;
            ncur[D - 1] = nnxt;
        }
        __syncthreads();
        if (!LAST_DRAIN && r + 1 == rounds)
            break; /* the partial holds fields up to 65535: no drain after the last round */
        for (unsigned i = threadIdx.x; i < nwords / 4; i += T) {
            uint4 q = words4[i];
            uint32_t v[4] = {q.x, q.y, q.z, q.w};
            const uint32_t spill = ~(HIST_OPT16_KEEP | HIST_OPT16_KEEP << 16);
            if (((v[0] | v[1] | v[2] | v[3]) & spill) == 0)
                continue;
            if (HIGH) {
                /* the multiples of 4096 as counts of 4096 in the bins' bytes (bins 8i..8i+7: the
                 * bytes of high2[i] in order); a byte never passes 255 (opt16_fused_fits) */
                uint32_t inc[2];
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    uint32_t a = (v[2 * h] & spill) >> 12, b = (v[2 * h + 1] & spill) >> 12;
                    inc[h] = (a & 0xFu) | (a >> 16) << 8 | (b & 0xFu) << 16 | (b >> 16) << 24;
                }
                uint2 hv = high2[i];
                high2[i] = make_uint2(hv.x + inc[0], hv.y + inc[1]);
                atomicOr(opt16_drained_flag(slice_bins), 1u);
#pragma unroll
                for (int e = 0; e < 4; e++)
                    v[e] -= v[e] & spill;
            } else {
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    uint32_t l = v[e] & spill & 0xFFFFu, hi = (v[e] & spill) >> 16;
                    v[e] -= v[e] & spill;
                    if (l)
                        atomicAdd(&hist[lo + 2 * (4 * i + e)], l);
                    if (hi)
                        atomicAdd(&hist[lo + 2 * (4 * i + e) + 1], hi);
                }
            }
            words4[i] = make_uint4(v[0], v[1], v[2], v[3]);
        }
        __syncthreads();
    }
}

template <int CH, bool LUMA>
__global__ void __launch_bounds__(HIST_OPT16_THREADS, 1)
    hist_opt16_kernel(ts_image im, HistUnits units, bool vec, unsigned slice_bins, uint32_t *hist,
                      uint32_t *partial)
{
    const unsigned lo = blockIdx.y * slice_bins, nwords = slice_bins / 2;
    opt16_count_rounds<CH, LUMA, false>(im, units, vec, lo, slice_bins, hist);
    /* Every field is now < 65536 (the rest went to global memory): the words are this block's
     * partial histogram, exactly. */
    const uint4 *words4 = hist_smem<uint4>();
    uint4 *dst = reinterpret_cast<uint4 *>(partial + ((size_t)blockIdx.y * gridDim.x + blockIdx.x) * nwords);
    for (unsigned i = threadIdx.x; i < nwords / 4; i += blockDim.x)
        dst[i] = words4[i];
}

/* sm_90: the same count, one histogram of 65536 bins (one slice) in every block of a cluster of K
 * (1..16), then the K blocks' packed words merged through distributed shared memory: block r of
 * the cluster sums the 16-byte groups [r * 8192 / K, (r + 1) * 8192 / K) of all K blocks (reading
 * from its own rank on, so the K blocks read different SMs at once) and writes them as the
 * cluster's partial. After the last drain every field is below 4096, so the packed words add as
 * plain u32 (K x 4095 < 65536 a half) and the partial stays packed: the partials and the reduce
 * kernel shrink K-fold (132 x 128 KB before, 17 MB on an H100). Cluster code exists only in the
 * sm_90 machine code; the launcher runs it only where clusters launch. */
template <int CH, bool LUMA>
__global__ void __launch_bounds__(HIST_OPT16_THREADS, 1)
    hist_opt16_cluster_kernel(ts_image im, HistUnits units, bool vec, uint32_t *hist, uint32_t *partial)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    constexpr unsigned NW4 = 65536u / 2 / 4; /* the packed words as uint4 */
    opt16_count_rounds<CH, LUMA, true>(im, units, vec, 0, 65536u, hist);
    cg::cluster_group cluster = cg::this_cluster();
    /* every block of the cluster has counted and drained before any reads its words */
    cluster.sync();
    const unsigned k = cluster.num_blocks(), r = cluster.block_rank();
    uint4 *words4 = hist_smem<uint4>();
    const unsigned b = r * NW4 / k, e = (r + 1) * NW4 / k;
    uint4 *dst = reinterpret_cast<uint4 *>(partial) + (size_t)(blockIdx.x / k) * NW4;
    for (unsigned i = b + threadIdx.x; i < e; i += blockDim.x) {
        uint4 s = make_uint4(0, 0, 0, 0);
        unsigned src = r;
#pragma unroll 4
        for (unsigned j = 0; j < k; j++) {
            const uint4 q = cluster.map_shared_rank(words4, (int)src)[i];
            s.x += q.x, s.y += q.y, s.z += q.z, s.w += q.w;
            src = src + 1 == k ? 0 : src + 1;
        }
        dst[i] = s;
    }
    /* no block exits (its shared memory gone) while another may still read its words */
    cluster.sync();
#endif
}

/* The same count and merge in one kernel that also writes the histogram, so no memset before it
 * and no reduce kernel after it (sm_90, a cooperative launch of clusters): the drains move
 * counts to a byte a bin in shared memory (in units of 4096) instead of to global memory, so
 * nothing is written to `hist` before the end; the cluster's blocks merge the packed words and
 * the high bytes (as 16-bit lanes) through DSMEM into the cluster's partials; a grid-wide barrier;
 * then block g sums its 1/G of the bins over every cluster's partials (the high ones only where
 * a drain of that cluster moved counts) and stores them. Needs every bin of a block below
 * 256 x 4096 counts (opt16_fused_fits). Scratch: nc packed partials, nc high partials, nc flags. */
template <int CH, bool LUMA>
__global__ void __launch_bounds__(HIST_OPT16_THREADS, 1)
    hist_opt16_fused_kernel(ts_image im, HistUnits units, bool vec, uint32_t *hist, uint32_t *partial)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    constexpr unsigned NW4 = 65536u / 2 / 4; /* the packed words as uint4: 8 bins each */
    opt16_count_rounds<CH, LUMA, true, true>(im, units, vec, 0, 65536u, hist);
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();
    const unsigned k = cluster.num_blocks(), r = cluster.block_rank();
    const unsigned nc = gridDim.x / k, c = blockIdx.x / k;
    uint4 *words4 = hist_smem<uint4>();
    uint2 *high2 = reinterpret_cast<uint2 *>(words4 + NW4);
    unsigned *flags = partial + (size_t)2 * nc * (NW4 * 4);
    unsigned drained = 0;
    for (unsigned j = 0; j < k; j++)
        drained |= *cluster.map_shared_rank(opt16_drained_flag(65536u), (int)j);
    const unsigned b = r * NW4 / k, e = (r + 1) * NW4 / k;
    uint4 *dst = reinterpret_cast<uint4 *>(partial) + (size_t)c * NW4;
    uint4 *hdst = reinterpret_cast<uint4 *>(partial) + (size_t)(nc + c) * NW4;
    for (unsigned i = b + threadIdx.x; i < e; i += blockDim.x) {
        uint4 s = make_uint4(0, 0, 0, 0), h = make_uint4(0, 0, 0, 0);
        unsigned src = r;
#pragma unroll 4
        for (unsigned j = 0; j < k; j++) {
            const uint4 q = cluster.map_shared_rank(words4, (int)src)[i];
            s.x += q.x, s.y += q.y, s.z += q.z, s.w += q.w;
            if (drained) { /* bytes to 16-bit lanes, in bin order: k x 255 < 65536 */
                const uint2 t = cluster.map_shared_rank(high2, (int)src)[i];
                h.x += __byte_perm(t.x, 0, 0x4140), h.y += __byte_perm(t.x, 0, 0x4342);
                h.z += __byte_perm(t.y, 0, 0x4140), h.w += __byte_perm(t.y, 0, 0x4342);
            }
            src = src + 1 == k ? 0 : src + 1;
        }
        dst[i] = s;
        if (drained)
            hdst[i] = h;
    }
    if (r == 0 && threadIdx.x == 0)
        flags[c] = drained;
    /* no block reuses its shared memory (below) while another of its cluster may still read it:
     * the grid barrier orders that too, but only the cluster barrier says so to racecheck */
    cluster.sync();
    /* every cluster's partials written */
    cg::this_grid().sync();

    /* Block g: the groups [gb, ge) of 8 bins, 64 at a time; thread (lane, t & 63) sums the
     * clusters lane, lane + 16, ...; the 16 lanes' sums added in shared memory. */
    const unsigned G = gridDim.x, g = blockIdx.x;
    const unsigned gb = (unsigned)((size_t)g * NW4 / G), ge = (unsigned)((size_t)(g + 1) * NW4 / G);
    uint32_t *red = hist_smem<uint32_t>();            /* [16][64][8] */
    unsigned *has_high = red + 16 * 64 * 8;          /* [nc] */
    for (unsigned j = threadIdx.x; j < nc; j += blockDim.x)
        has_high[j] = flags[j];
    __syncthreads();
    const uint4 *part4 = reinterpret_cast<const uint4 *>(partial);
    const unsigned col = threadIdx.x & 63, lane = threadIdx.x >> 6;
    for (unsigned base = gb; base < ge; base += 64) {
        const unsigned i = base + col;
        uint32_t a[8] = {0, 0, 0, 0, 0, 0, 0, 0}; /* < 2^31: the image's pixels */
        if (i < ge) {
#pragma unroll 4
            for (unsigned cc = lane; cc < nc; cc += 16) {
                const uint4 q = part4[(size_t)cc * NW4 + i];
                a[0] += q.x & 0xFFFFu, a[1] += q.x >> 16, a[2] += q.y & 0xFFFFu, a[3] += q.y >> 16;
                a[4] += q.z & 0xFFFFu, a[5] += q.z >> 16, a[6] += q.w & 0xFFFFu, a[7] += q.w >> 16;
                if (has_high[cc]) {
                    const uint4 t = part4[(size_t)(nc + cc) * NW4 + i];
                    a[0] += (t.x & 0xFFFFu) << 12, a[1] += (t.x >> 16) << 12;
                    a[2] += (t.y & 0xFFFFu) << 12, a[3] += (t.y >> 16) << 12;
                    a[4] += (t.z & 0xFFFFu) << 12, a[5] += (t.z >> 16) << 12;
                    a[6] += (t.w & 0xFFFFu) << 12, a[7] += (t.w >> 16) << 12;
                }
            }
        }
#pragma unroll
        for (int x = 0; x < 8; x++)
            red[(lane * 64 + col) * 8 + x] = a[x];
        __syncthreads();
        if (threadIdx.x < 64 * 8) { /* thread (col, x): bin 8 (base + col) + x */
            const unsigned cl = threadIdx.x >> 3, x = threadIdx.x & 7;
            if (base + cl < ge) {
                uint32_t sum = 0;
#pragma unroll
                for (int l = 0; l < 16; l++)
                    sum += red[(l * 64 + cl) * 8 + x];
                hist[8 * (base + cl) + x] = sum;
            }
        }
        __syncthreads();
    }
#endif
}

/* hist[2w], hist[2w + 1] += the two fields of word w summed over the partials of w's slice.
 * Block (32, 8): 32 threads reading 4 consecutive words each (512 coalesced bytes a load), 8
 * splitting the partials; the slices' words are multiples of 4 (slice bins of 8). */
__global__ void __launch_bounds__(256)
    hist_opt16_reduce_kernel(const uint32_t *partial, unsigned slice_words, unsigned blocks,
                             unsigned total_words, uint32_t *hist)
{
    __shared__ uint4 part[8][32][2];
    const unsigned gw = (blockIdx.x * 32 + threadIdx.x) * 4;
    uint32_t a[8] = {0, 0, 0, 0, 0, 0, 0, 0}; /* at most blocks * 65535 < 2^32 */
    if (gw < total_words) {
        unsigned s = gw / slice_words, w = gw - s * slice_words;
        const uint32_t *p = partial + (size_t)s * blocks * slice_words + w;
#pragma unroll 4
        for (unsigned j = threadIdx.y; j < blocks; j += 8) {
            uint4 q = *reinterpret_cast<const uint4 *>(p + (size_t)j * slice_words);
            a[0] += q.x & 0xFFFFu, a[1] += q.x >> 16, a[2] += q.y & 0xFFFFu, a[3] += q.y >> 16;
            a[4] += q.z & 0xFFFFu, a[5] += q.z >> 16, a[6] += q.w & 0xFFFFu, a[7] += q.w >> 16;
        }
    }
    part[threadIdx.y][threadIdx.x][0] = make_uint4(a[0], a[1], a[2], a[3]);
    part[threadIdx.y][threadIdx.x][1] = make_uint4(a[4], a[5], a[6], a[7]);
    __syncthreads();
    if (threadIdx.y == 0 && gw < total_words) {
        for (int j = 1; j < 8; j++) {
            uint4 x = part[j][threadIdx.x][0], y = part[j][threadIdx.x][1];
            a[0] += x.x, a[1] += x.y, a[2] += x.z, a[3] += x.w;
            a[4] += y.x, a[5] += y.y, a[6] += y.z, a[7] += y.w;
        }
#pragma unroll
        for (int e = 0; e < 8; e++)
            hist[2 * gw + e] += a[e];
    }
}

/* ---------------------------------------------------------------- launchers */

/* The fused kernel's shared memory: the packed words, a byte a bin, the drained flag. */
#define HIST_OPT16_FUSED_SMEM (65536u * 3 + 16)

/* Whether no bin of a block of the fused kernel can pass 255 x 4096 + 4095 counts (its high byte
 * stays below 256): the most pixels a block counts, `walked` units over `blocks` blocks. */
static bool opt16_fused_fits(unsigned walked, unsigned blocks, int pix)
{
    uint64_t stride = (uint64_t)blocks * HIST_OPT16_THREADS;
    uint64_t iters = (walked + stride - 1) / stride;
    return iters * HIST_OPT16_THREADS * (uint64_t)pix <= 255u * 4096u + 4095u;
}

/* Its scratch for nc clusters: nc packed partials, nc high partials (128 KB each), nc flags. */
static size_t opt16_fused_scratch(unsigned nc)
{
    return (size_t)nc * 2 * 65536u * 2 + hist_round256((size_t)nc * sizeof(uint32_t));
}

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
    int cluster_k; /* 16-bit: 0 per-block partials (any GPU), else clusters of this many (sm_90) */

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
        if constexpr (HistShape<2, CH, L>::NH == 1)
            if (cluster_k)
                return run16_cluster<CH, L>();
        HistUnits u = hist_units<2, CH>(job->in);
        int per_slice = 0;
        ts_status st = grid((const void *)hist_opt16_kernel<CH, L>, u.walked(), plan.blocks, &per_slice);
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
            job->in, u, hist_vec_ok_walk(&job->in, u), (unsigned)plan.slice_bins, hist, (uint32_t *)extra);
        LAUNCH_CHECK("hist_opt16_kernel");
        unsigned total_words = slice_words * (unsigned)plan.slices;
        hist_opt16_reduce_kernel<<<(total_words / 4 + 31) / 32, dim3(32, 8), 0, s>>>(
            (const uint32_t *)extra, slice_words, (unsigned)per_slice, total_words, hist);
        LAUNCH_CHECK("hist_opt16_reduce_kernel");
        return TS_OK;
    }

    /* One slice of 65536 bins in clusters of cluster_k blocks (sm_90): the fused kernel where it
     * applies, else the count and merge, then the reduce. */
    template <int CH, bool L> ts_status run16_cluster()
    {
        bool ran = false;
        ts_status st = run16_fused<CH, L>(&ran);
        return st != TS_OK || ran ? st : run16_merge<CH, L>();
    }

    /* hist_opt16_fused_kernel in one cooperative launch of clusters of cluster_k: *ran false (and
     * nothing launched) where a block could count more than opt16_fused_fits allows, the scratch
     * is short, or the device or driver refuses a cooperative launch of clusters. */
    template <int CH, bool L> ts_status run16_fused(bool *ran)
    {
        *ran = false;
        HistUnits u = hist_units<2, CH>(job->in);
        void (*kernel)(ts_image, HistUnits, bool, uint32_t *, uint32_t *) = hist_opt16_fused_kernel<CH, L>;
        const int k = cluster_k;
        const size_t smem = HIST_OPT16_FUSED_SMEM;
        if (!job->dev->coop_launch)
            return TS_OK;
        cudaLaunchAttribute attr[2];
        cudaLaunchConfig_t cfg;
        int clusters = 0;
        if (gpu_cluster_config((const void *)kernel, k, plan.threads, smem, job->stream, "hist opt", &cfg,
                               &attr[0], &clusters) != TS_OK) {
            cudaGetLastError();
            return TS_OK;
        }
        unsigned need = (u.walked() + (unsigned)plan.threads - 1) / (unsigned)plan.threads;
        unsigned want = (need + (unsigned)k - 1) / (unsigned)k;
        unsigned nc = (unsigned)clusters < want ? (unsigned)clusters : want;
        nc = nc < 1 ? 1 : nc;
        const unsigned g = nc * (unsigned)k;
        if (!opt16_fused_fits(u.walked(), g, HistUnit<2, CH>::PIX) || !extra ||
            extra_bytes < opt16_fused_scratch(nc))
            return TS_OK;
        attr[1] = cudaLaunchAttribute{};
        attr[1].id = cudaLaunchAttributeCooperative;
        attr[1].val.cooperative = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 2;
        cfg.gridDim = dim3(g);
        if (cudaLaunchKernelEx(&cfg, kernel, job->in, u, hist_vec_ok_walk(&job->in, u), hist,
                               (uint32_t *)extra) != cudaSuccess) {
            cudaGetLastError(); /* refused at launch: the three-step path instead */
            return TS_OK;
        }
        *ran = true;
        return TS_OK;
    }

    /* One wave of clusters, no more than the units need; a packed partial a cluster, summed by
     * the reduce kernel. */
    template <int CH, bool L> ts_status run16_merge()
    {
        HistUnits u = hist_units<2, CH>(job->in);
        void (*kernel)(ts_image, HistUnits, bool, uint32_t *, uint32_t *) = hist_opt16_cluster_kernel<CH, L>;
        const int k = cluster_k;
        cudaLaunchAttribute attr;
        cudaLaunchConfig_t cfg;
        int clusters = 0;
        ts_status st = gpu_cluster_config((const void *)kernel, k, plan.threads, plan.smem, job->stream,
                                          "hist opt", &cfg, &attr, &clusters);
        if (st != TS_OK)
            return st;
        unsigned need = (u.walked() + (unsigned)plan.threads - 1) / (unsigned)plan.threads;
        unsigned want = (need + (unsigned)k - 1) / (unsigned)k;
        unsigned nc = (unsigned)clusters < want ? (unsigned)clusters : want;
        nc = nc < 1 ? 1 : nc;
        const unsigned words = 65536u / 2;
        size_t bytes = (size_t)nc * words * sizeof(uint32_t);
        if (!extra || extra_bytes < bytes)
            return ts_fail(TS_ERR_INVALID, "hist opt: %zu bytes of scratch for the clusters' partial "
                           "histograms, %zu needed", extra ? extra_bytes : 0, bytes);
        cfg.gridDim = dim3(nc * (unsigned)k);
        if ((st = zero()) != TS_OK)
            return st;
        CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, job->in, u, hist_vec_ok_walk(&job->in, u), hist,
                                    (uint32_t *)extra));
        hist_opt16_reduce_kernel<<<(words / 4 + 31) / 32, dim3(32, 8), 0, cfg.stream>>>(
            (const uint32_t *)extra, words, nc, words, hist);
        LAUNCH_CHECK("hist_opt16_reduce_kernel");
        return TS_OK;
    }
};

/* Whether 16-bit counting takes the cluster path: one slice of 65536 bins, clusters launch. */
static bool opt16_clusters(const ts_job *job, const hist_plan *p)
{
    return job->in.bytes == 2 && p->slices == 1 && p->slice_bins == 65536 && job->dev &&
           job->dev->cc >= 90 && job->dev->cluster_launch;
}

/* opt's scratch past the histogram (and LUT): the 16-bit partials; on the cluster path the fused
 * kernel's (two partials a cluster and its flags; the three-step path needs less). */
static size_t opt_partial_bytes(const ts_job *job, const hist_plan *p)
{
    return opt16_clusters(job, p) ? opt16_fused_scratch((unsigned)p->blocks) : p->partial_bytes;
}

static ts_status opt_count(const ts_job *job, uint32_t *d_hist, void *extra, size_t extra_bytes)
{
    OptCount op = {job, d_hist, extra, extra_bytes, {0, 0, 0, 0, 0, 0}, 0};
    if (!plan_of(job, &op.plan))
        return ts_fail(TS_ERR_UNSUPPORTED, "hist opt: the bins do not fit shared memory");
    if (opt16_clusters(job, &op.plan))
        op.cluster_k = HIST_OPT16_CLUSTER;
    return hist_dispatch(job->in, job->op->hist_mode, op);
}

/* The plan with the default slices: the `cluster` row's job->param is a cluster size. */
static int default_plan(const ts_job *job, hist_plan *p)
{
    long nbins = hist_total_bins(job->op->hist_mode, job->in.channels, job->in.bytes);
    return job->dev && hist_plan_opt(nbins, job->in.bytes, job->dev, 0, p);
}

extern "C" int hist_opt16_cluster_takes(const ts_job *job)
{
    hist_plan p;
    return default_plan(job, &p) && opt16_clusters(job, &p);
}

extern "C" size_t hist_opt16_cluster_partial_bytes(const ts_job *job)
{
    hist_plan p;
    return default_plan(job, &p) ? opt16_fused_scratch((unsigned)p.blocks) : 0;
}

extern "C" ts_status hist_opt16_cluster_count(const ts_job *job, uint32_t *d_hist, void *extra,
                                              size_t extra_bytes, int k)
{
    OptCount op = {job, d_hist, extra, extra_bytes, {0, 0, 0, 0, 0, 0}, k};
    if (!default_plan(job, &op.plan) || !opt16_clusters(job, &op.plan) || k < 1 || k > HIST_MAX_CLUSTER)
        return ts_fail(TS_ERR_UNSUPPORTED, "hist: packed 16-bit counters in clusters of %d blocks "
                       "need one histogram of 65536 bins, sm_90 and 1..%d blocks", k, HIST_MAX_CLUSTER);
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
    size_t partial = job->dev && plan_of(job, &p) ? opt_partial_bytes(job, &p) : 0;
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
    if (hist_opt_eq8_runs(job))
        return hist_opt_eq8(job);
    return hist_run_job(job, opt_count, opt_partial_bytes(job, &p));
}
