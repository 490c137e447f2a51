/* hist_eq16_cluster.cu - per-channel equalization of RGB16 (`equalize:rgb`) for the `cluster`
 * rung, which hist.cu hands these jobs: three histograms of 65536 bins and three LUTs of 65536
 * u16 entries, 384 KB of LUT, more than one SM's shared memory (228 KB). `opt` gathers its LUT
 * entries from L2 (three 2-byte gathers a pixel, most of its time). Here a block works on ONE
 * channel, whose LUT (128 KB) it keeps in its own shared memory, and the three blocks of a
 * channel triple put the pixels back together through distributed shared memory:
 *
 *   count   grid (X, 3): block (x, c) counts channel c of the 48-byte units (8 pixels) of its
 *           grid stride into 65536 packed 16-bit counters (two a word, 128 KB); an add that wraps
 *           a counter moves 65536 to the global histogram (exact, as hist_opt.cu's opt16). The
 *           three blocks x walk the same units together, so the image comes from DRAM about once.
 *           Each block writes its packed counters as a partial.
 *   reduce  block (chunk of 1024 bins, c): the partials' sum into the histogram, and the chunk's
 *           total and first non-empty bin.
 *   lut     block (chunk, c): the chunk's offset from the totals before it, then its 1024 entries
 *           with ts_equalize_lut's formula (first non-empty bin h0, ties to even, one-valued
 *           channels unchanged; hist_div_round_even); 192 blocks instead of one a channel.
 *   apply   clusters of K = 3m blocks (param; 3 by default): block rank r keeps channel r % 3's
 *           LUT; triple r / 3 takes tiles of 2048 units (16384 pixels). Every block of a triple
 *           reads the whole tile (the triple's reads of a tile meet in L2), maps its channel's 8
 *           samples a unit with shared-memory LUT loads and writes them as one 16-byte vector
 *           into a plane in its own shared memory. After a cluster barrier, each block
 *           interleaves a third of the tile's units from the three planes (two of them read
 *           through DSMEM, 16 bytes a load) and stores whole 48-byte units, so the output is
 *           written once, coalesced. The planes are double-buffered: one cluster barrier a tile,
 *           split into arrive and wait with the next tile's loads issued in between.
 *           param 1: the non-cluster alternative (the same blocks, no DSMEM: each block stores
 *           its channel's samples to global memory itself, 2-byte stores 6 bytes apart), kept
 *           for the sweep: those partial-sector stores cost far more than the DSMEM interleave.
 * Both big kernels are bound by L2 throughput (each unit crosses L2 once for each of the three
 * blocks); a third plane buffer (the interleave moved inside the barrier) and software-pipelined
 * count loads were measured and did not help (tools/results/nvidia-h100-eq16-2026-11-27.md).
 * Layout: any even pitch; 16-byte aligned rows take the vector path (hist_common.cuh's units).
 */
#include "hist_common.cuh"
#include "variants.h"

#include <cooperative_groups.h>

#define EQC_THREADS 1024
#define EQC_BINS 65536u
#define EQC_WORDS (EQC_BINS / 2)                 /* packed counters of a channel */
#define EQC_LUT_BYTES (EQC_BINS * 2u)            /* one channel's LUT: 128 KB */
#define EQC_UPT 2                                /* units a thread a tile */
#define EQC_TILE (EQC_THREADS * EQC_UPT)         /* units a tile */
#define EQC_THIRD ((EQC_TILE + 2) / 3)           /* units a block interleaves a tile */
#define EQC_PLANE (EQC_TILE * 8)                 /* u16 outputs of a plane: 8 pixels a unit */
#define EQC_APPLY_SMEM (EQC_LUT_BYTES + 2u * EQC_PLANE * 2u)
#define EQC_CHUNK 1024u
#define EQC_CHUNKS (EQC_BINS / EQC_CHUNK)
#define EQC_NONE 0xFFFFFFFFu

typedef HistUnit<2, 3> EqUnit; /* 48 bytes: 8 RGB16 pixels */
static_assert(EqUnit::PIX == 8 && EqUnit::BYTES == 48, "8 whole pixels a unit");
static_assert(EQC_APPLY_SMEM + HIST_SMEM_RESERVED <= 228u * 1024u, "one apply block an SM");
static_assert(EQC_THIRD <= EQC_THREADS, "a thread a unit when interleaving");

/* ---------------------------------------------------------------- units */

/* Unit i of the walk (hist_for_units_pipelined's: one long row when rows are back to back) and
 * how many of its bytes are the image's. */
static __device__ __forceinline__ unsigned char *eqc_unit(const ts_image &im, const HistUnits &u,
                                                          unsigned i, int *nb)
{
    if (u.flat_bytes) {
        size_t off = (size_t)i * EqUnit::BYTES, left = u.flat_bytes - off;
        *nb = left < (size_t)EqUnit::BYTES ? (int)left : EqUnit::BYTES;
        return (unsigned char *)im.data + off;
    }
    return const_cast<unsigned char *>(hist_unit_at<2, 3>(im, u, i, nb));
}

/* ---------------------------------------------------------------- count */

/* The add of 1 to local bin v returned `old` (its whole word) and wrapped its counter: move
 * 65536 counts to the global bins so that field + spills stays each bin's count. */
static __device__ __noinline__ void eqc_wrapped(uint32_t *words, uint32_t *h, unsigned v,
                                                uint32_t old)
{
    atomicAdd(&h[v], 65536u);
    if (v & 1) /* high counter: its carry out of bit 31 is simply lost */
        return;
    if ((old >> 16) == 0xFFFFu) /* the low counter's carry wrapped the high one upwards */
        atomicAdd(&h[v + 1], 65536u);
    uint32_t old2 = atomicSub(&words[v >> 1], 0x10000u); /* take the carry back */
    if ((old2 >> 16) == 0)                                /* which wrapped it downwards */
        atomicAdd(&h[v + 1], 0u - 65536u);
}

template <int C>
static __device__ __forceinline__ void eqc_count_body(const ts_image &im, const HistUnits &units,
                                                      bool vec, uint32_t *words, uint32_t *h)
{
    hist_for_units_pipelined<2, 3, 2, false>(im, units, vec, [&](const EqUnit &u, int nbytes, unsigned) {
        const int npix = nbytes / 6;
        unsigned key[8];
        uint32_t old[8];
        /* All adds go out before any result is looked at. */
#pragma unroll
        for (int p = 0; p < 8; p++) {
            key[p] = p < npix ? u.sample(p * 3 + C) : EQC_NONE;
            old[p] = 0;
            if (key[p] != EQC_NONE)
                old[p] = atomicAdd(&words[key[p] >> 1], key[p] & 1 ? 0x10000u : 1u);
        }
#pragma unroll
        for (int p = 0; p < 8; p++) {
            unsigned field = key[p] & 1 ? old[p] >> 16 : old[p] & 0xFFFFu;
            if (key[p] != EQC_NONE && field == 0xFFFFu)
                eqc_wrapped(words, h, key[p], old[p]);
        }
    });
}

/* Block (x, c): channel c of the units x, x + X, ... (in threads' strides); its packed counters
 * end as partial[c][x][EQC_WORDS]. */
__global__ void __launch_bounds__(EQC_THREADS, 1)
    eqc_count_kernel(ts_image im, HistUnits units, bool vec, uint32_t *hist, uint32_t *partial)
{
    uint32_t *words = hist_smem<uint32_t>();
    uint4 *words4 = hist_smem<uint4>();
    for (unsigned i = threadIdx.x; i < EQC_WORDS / 4; i += blockDim.x)
        words4[i] = make_uint4(0, 0, 0, 0);
    __syncthreads();
    const unsigned c = blockIdx.y;
    uint32_t *h = hist + (size_t)c * EQC_BINS;
    if (c == 0)
        eqc_count_body<0>(im, units, vec, words, h);
    else if (c == 1)
        eqc_count_body<1>(im, units, vec, words, h);
    else
        eqc_count_body<2>(im, units, vec, words, h);
    __syncthreads();
    /* Every field is now < 65536 (wraps went to global memory): this block's partial, exactly. */
    uint4 *dst = reinterpret_cast<uint4 *>(partial + ((size_t)c * gridDim.x + blockIdx.x) * EQC_WORDS);
    for (unsigned i = threadIdx.x; i < EQC_WORDS / 4; i += blockDim.x)
        dst[i] = words4[i];
}

/* ---------------------------------------------------------------- reduce */

/* Block (k, c), thread t: word k * 512 + t of channel c, summed over the `blocks` partials into
 * bins 2w and 2w + 1 (which hold the spills); then the chunk's total and first non-empty bin. */
__global__ void __launch_bounds__(512)
    eqc_reduce_kernel(const uint32_t *partial, unsigned blocks, uint32_t *hist, uint32_t *chunk_total,
                      uint32_t *chunk_first)
{
    __shared__ uint32_t w_total[16], w_first[16];
    const unsigned c = blockIdx.y, k = blockIdx.x, t = threadIdx.x;
    const unsigned w = k * (EQC_CHUNK / 2) + t, lane = t & 31, warp = t >> 5;
    const uint32_t *p = partial + (size_t)c * blocks * EQC_WORDS + w;
    uint32_t a = 0, b = 0; /* at most 2^31 pixels */
#pragma unroll 4
    for (unsigned j = 0; j < blocks; j++) {
        uint32_t v = p[(size_t)j * EQC_WORDS];
        a += v & 0xFFFFu;
        b += v >> 16;
    }
    uint2 *hp = reinterpret_cast<uint2 *>(hist + (size_t)c * EQC_BINS) + w;
    uint2 s = *hp;
    a += s.x;
    b += s.y;
    *hp = make_uint2(a, b);
    uint32_t tot = a + b;
    unsigned first = a ? 2 * w : b ? 2 * w + 1 : EQC_BINS;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        tot += __shfl_xor_sync(0xFFFFFFFFu, tot, o);
        first = min(first, __shfl_xor_sync(0xFFFFFFFFu, first, o));
    }
    if (lane == 0)
        w_total[warp] = tot, w_first[warp] = first;
    __syncthreads();
    if (warp == 0) {
        tot = lane < 16 ? w_total[lane] : 0;
        first = lane < 16 ? w_first[lane] : EQC_BINS;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            tot += __shfl_xor_sync(0xFFFFFFFFu, tot, o);
            first = min(first, __shfl_xor_sync(0xFFFFFFFFu, first, o));
        }
        if (lane == 0)
            chunk_total[c * EQC_CHUNKS + k] = tot, chunk_first[c * EQC_CHUNKS + k] = first;
    }
}

/* ---------------------------------------------------------------- LUT */

/* Block (k, c), 256 threads of 4 bins: entries k * 1024 .. + 1023 of channel c's LUT. */
__global__ void __launch_bounds__(256)
    eqc_lut_kernel(const uint32_t *hist, const uint32_t *chunk_total, const uint32_t *chunk_first,
                   uint32_t n, uint16_t *lut)
{
    __shared__ uint32_t w_incl[8], s_before;
    __shared__ unsigned s_first;
    const unsigned c = blockIdx.y, k = blockIdx.x, t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const uint32_t *h = hist + (size_t)c * EQC_BINS;
    if (warp == 0) { /* the pixels of the chunks before mine; the channel's first non-empty bin */
        const uint32_t *ct = chunk_total + c * EQC_CHUNKS;
        const uint32_t *cf = chunk_first + c * EQC_CHUNKS;
        uint32_t before = (lane < k ? ct[lane] : 0) + (lane + 32 < k ? ct[lane + 32] : 0);
        unsigned f = min(cf[lane], cf[lane + 32]);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            before += __shfl_xor_sync(0xFFFFFFFFu, before, o);
            f = min(f, __shfl_xor_sync(0xFFFFFFFFu, f, o));
        }
        if (lane == 0)
            s_before = before, s_first = f;
    }
    const unsigned base = k * EQC_CHUNK + 4 * t;
    const uint4 q = *reinterpret_cast<const uint4 *>(h + base);
    const uint32_t sum = q.x + q.y + q.z + q.w;
    uint32_t incl = sum;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        uint32_t v = __shfl_up_sync(0xFFFFFFFFu, incl, o);
        incl += lane >= (unsigned)o ? v : 0;
    }
    if (lane == 31)
        w_incl[warp] = incl;
    __syncthreads();
    uint64_t cdf = s_before + incl - sum; /* pixels in bins before mine */
    for (unsigned j = 0; j < warp; j++)
        cdf += w_incl[j];
    const unsigned first = s_first;
    const uint32_t h0 = first < EQC_BINS ? h[first] : 0;
    const bool identity = first >= EQC_BINS || h0 == n; /* empty, or one value */
    const uint64_t den = (uint64_t)(n - h0);
    const double inv = identity ? 0.0 : 1.0 / (double)den;
    uint32_t cnt[4] = {q.x, q.y, q.z, q.w};
    unsigned e[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        unsigned v = base + (unsigned)i;
        cdf += cnt[i];
        e[i] = identity ? v
               : v < first ? 0
                           : (unsigned)hist_div_round_even((cdf - h0) * (EQC_BINS - 1), den, inv);
    }
    *reinterpret_cast<uint2 *>(lut + (size_t)c * EQC_BINS + base) =
        make_uint2(e[0] | e[1] << 16, e[2] | e[3] << 16);
}

/* ---------------------------------------------------------------- apply */

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define EQC_HAVE_CLUSTERS 1
static __device__ __forceinline__ void eqc_cluster_arrive()
{
    asm volatile("barrier.cluster.arrive.release;" ::: "memory");
}
static __device__ __forceinline__ void eqc_cluster_wait()
{
    asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
}
#else
#define EQC_HAVE_CLUSTERS 0
#endif

/* Channel C's block of triple blockIdx.x / 3 (CLUSTER: ranks rank0 .. rank0 + 2 of its
 * cluster). Tile t of the triple's walk is t = triple + it * triples. */
template <int C, bool CLUSTER>
static __device__ __forceinline__ void eqc_apply_body(const ts_image &in, const ts_image &out,
                                                      const HistUnits &units, bool vec,
                                                      const uint16_t *lut, uint16_t *planes)
{
    const unsigned n = units.walked(), triples = gridDim.x / 3, triple = blockIdx.x / 3;
    const unsigned tiles = (n + EQC_TILE - 1) / EQC_TILE;
    const unsigned iters = (tiles + triples - 1) / triples; /* the same for every block */
    EqUnit u[EQC_UPT];
    int nb[EQC_UPT];
    auto load = [&](unsigned tile) {
#pragma unroll
        for (int r = 0; r < EQC_UPT; r++) {
            unsigned i = tile * EQC_TILE + (unsigned)r * EQC_THREADS + threadIdx.x;
            nb[r] = 0;
            if (tile < tiles && i < n) {
                const unsigned char *p = eqc_unit(in, units, i, &nb[r]);
                u[r].load(p, nb[r], vec);
            }
        }
    };
#if EQC_HAVE_CLUSTERS
    namespace cg = cooperative_groups;
    const uint16_t *peer[3] = {planes, planes, planes};
    if (CLUSTER) {
        cg::cluster_group cluster = cg::this_cluster();
        const unsigned rank0 = cluster.block_rank() - C;
#pragma unroll
        for (int cc = 0; cc < 3; cc++)
            peer[cc] = cluster.map_shared_rank(planes, (int)(rank0 + cc));
    }
    /* This block's third of a tile's units from the three planes of buffer `buf`, interleaved
     * into whole 48-byte units. */
    auto interleave = [&](unsigned tile, unsigned buf) {
        const unsigned m = (unsigned)C * EQC_THIRD + threadIdx.x;
        const unsigned i = tile * EQC_TILE + m;
        if (threadIdx.x >= EQC_THIRD || m >= EQC_TILE || tile >= tiles || i >= n)
            return;
        uint4 q[3];
#pragma unroll
        for (int cc = 0; cc < 3; cc++)
            q[cc] = *reinterpret_cast<const uint4 *>(peer[cc] + buf + m * 8);
        EqUnit o;
#pragma unroll
        for (int p = 0; p < 8; p++)
#pragma unroll
            for (int cc = 0; cc < 3; cc++) {
                const uint32_t *qw = reinterpret_cast<const uint32_t *>(&q[cc]);
                /* sample 3p + cc of the unit: entry p of plane cc */
                unsigned v = (qw[p >> 1] >> (16 * (p & 1))) & 0xFFFFu;
                const int k = 3 * p + cc;
                if (k & 1)
                    o.w[k >> 1] |= v << 16;
                else
                    o.w[k >> 1] = v;
            }
        int nbo;
        unsigned char *dst = eqc_unit(out, units, i, &nbo);
        o.store(dst, nbo, vec);
    };
#endif
    load(triple);
    for (unsigned it = 0; it < iters; it++) {
        const unsigned tile = triple + it * triples, buf = (it & 1) * EQC_PLANE;
#pragma unroll
        for (int r = 0; r < EQC_UPT; r++) {
            unsigned e[8];
#pragma unroll
            for (int p = 0; p < 8; p++)
                e[p] = lut[u[r].sample(p * 3 + C)];
            const unsigned m = (unsigned)r * EQC_THREADS + threadIdx.x;
            if (CLUSTER) {
                *reinterpret_cast<uint4 *>(planes + buf + m * 8) =
                    make_uint4(e[0] | e[1] << 16, e[2] | e[3] << 16, e[4] | e[5] << 16, e[6] | e[7] << 16);
            } else if (nb[r] > 0) {
                int nbo;
                uint16_t *dst = reinterpret_cast<uint16_t *>(eqc_unit(out, units, tile * EQC_TILE + m, &nbo));
#pragma unroll
                for (int p = 0; p < 8; p++)
                    if (p * 6 < nbo)
                        dst[p * 3 + C] = (uint16_t)e[p];
            }
        }
        if (!CLUSTER) {
            load(tile + triples);
            continue;
        }
#if EQC_HAVE_CLUSTERS
        eqc_cluster_arrive();
        load(tile + triples); /* in flight across the barrier and the interleave */
        eqc_cluster_wait();
        interleave(tile, buf);
#endif
    }
#if EQC_HAVE_CLUSTERS
    if (CLUSTER) { /* no block leaves while another may still read its planes */
        eqc_cluster_arrive();
        eqc_cluster_wait();
    }
#endif
}

/* Block b: channel b % 3 of triple b / 3; its LUT copied into shared memory first. Launched in
 * clusters of 3m blocks when CLUSTER (sm_90 only: the compute_75 PTX has no cluster path, and
 * run() launches it only where clusters do). */
template <bool CLUSTER>
__global__ void __launch_bounds__(EQC_THREADS, 1)
    eqc_apply_kernel(ts_image in, ts_image out, HistUnits units, bool vec, const uint16_t *d_lut)
{
    const unsigned c = blockIdx.x % 3;
    uint16_t *lut = hist_smem<uint16_t>();
    uint16_t *planes = lut + EQC_BINS;
    const uint4 *src = reinterpret_cast<const uint4 *>(d_lut + (size_t)c * EQC_BINS);
    uint4 *dst = hist_smem<uint4>();
    for (unsigned i = threadIdx.x; i < EQC_LUT_BYTES / 16; i += blockDim.x)
        dst[i] = src[i];
    __syncthreads();
    if (c == 0)
        eqc_apply_body<0, CLUSTER>(in, out, units, vec, lut, planes);
    else if (c == 1)
        eqc_apply_body<1, CLUSTER>(in, out, units, vec, lut, planes);
    else
        eqc_apply_body<2, CLUSTER>(in, out, units, vec, lut, planes);
}

/* ---------------------------------------------------------------- host */

/* Scratch: histogram (u32), LUT (u16), chunk totals and firsts, then the count's partials. */
#define EQC_HIST_BYTES hist_round256((size_t)3 * EQC_BINS * sizeof(uint32_t))
#define EQC_LUTS_BYTES hist_round256((size_t)3 * EQC_BINS * sizeof(uint16_t))
#define EQC_CHUNK_BYTES hist_round256((size_t)2 * 3 * EQC_CHUNKS * sizeof(uint32_t))

static int eqc_k(const ts_job *job) { return job->param ? job->param : 3; }

static int eqc_k_ok(int k) { return k == 1 || (k >= 3 && k <= HIST_MAX_CLUSTER && k % 3 == 0); }

/* Count blocks a channel at most: one count block an SM (128 KB of counters). */
static int eqc_count_blocks_max(const ts_device *dev)
{
    int b = dev->sms * hist_blocks_per_sm(dev, EQC_LUT_BYTES, EQC_THREADS) / 3;
    return b < 1 ? 1 : b;
}

extern "C" int hist_eq16_cluster_takes(const ts_job *job)
{
    return job->op && job->op->kind == TS_OP_EQUALIZE && job->in.bytes == 2 &&
           job->in.channels == 3 && ts_hist_count(job->op->hist_mode, 3) == 3;
}

extern "C" int hist_eq16_cluster_supports(const ts_job *job)
{
    int k = eqc_k(job);
    if (!eqc_k_ok(k))
        return 0;
    if (!job->dev)
        return 1;
    const ts_device *dev = job->dev;
    return dev->cc >= 90 && (k == 1 || dev->cluster_launch) &&
           dev->smem_per_block_optin >= EQC_APPLY_SMEM;
}

extern "C" size_t hist_eq16_cluster_scratch(const ts_job *job)
{
    size_t base = EQC_HIST_BYTES + EQC_LUTS_BYTES + EQC_CHUNK_BYTES;
    if (!job->dev)
        return base;
    return base + (size_t)3 * (size_t)eqc_count_blocks_max(job->dev) * EQC_WORDS * sizeof(uint32_t);
}

static ts_status eqc_apply_cluster(const ts_job *job, int k, const HistUnits &u, bool vec,
                                   const uint16_t *d_lut, unsigned tiles)
{
    void (*kernel)(ts_image, ts_image, HistUnits, bool, const uint16_t *) = eqc_apply_kernel<true>;
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg;
    int clusters = 0;
    ts_status st = gpu_cluster_config((const void *)kernel, k, EQC_THREADS, EQC_APPLY_SMEM,
                                      job->stream, "equalize cluster", &cfg, &attr, &clusters);
    if (st != TS_OK)
        return st;
    unsigned per = (unsigned)k / 3, want = (tiles + per - 1) / per;
    unsigned nc = (unsigned)clusters < want ? (unsigned)clusters : want;
    cfg.gridDim = dim3((nc < 1 ? 1 : nc) * (unsigned)k);
    CUDA_TRY(cudaLaunchKernelEx(&cfg, kernel, job->in, job->out, u, vec, d_lut));
    return TS_OK;
}

extern "C" ts_status hist_eq16_cluster(const ts_job *job)
{
    ts_status st = hist_check_job(job);
    if (st != TS_OK)
        return st;
    const ts_device *dev = job->dev;
    int k = eqc_k(job);
    if (!hist_eq16_cluster_takes(job) || !hist_eq16_cluster_supports(job))
        return ts_fail(TS_ERR_UNSUPPORTED, "%s cluster: RGB16 per channel with a cluster of 3, 6, "
                       "9, 12 or 15 blocks (1: none) on sm_90, not param %d on sm_%d",
                       job->op->text, job->param, dev->cc);
    size_t need = hist_eq16_cluster_scratch(job);
    if (!job->scratch || job->scratch_bytes < need || (uintptr_t)job->scratch % 256)
        return ts_fail(TS_ERR_INVALID, "%s: needs %zu bytes of 256-byte aligned scratch, has %zu",
                       job->op->text, need, job->scratch ? job->scratch_bytes : 0);
    char *sc = (char *)job->scratch;
    uint32_t *d_hist = (uint32_t *)sc;
    uint16_t *d_lut = (uint16_t *)(sc + EQC_HIST_BYTES);
    uint32_t *d_total = (uint32_t *)(sc + EQC_HIST_BYTES + EQC_LUTS_BYTES);
    uint32_t *d_first = d_total + 3 * EQC_CHUNKS;
    uint32_t *d_partial = (uint32_t *)(sc + EQC_HIST_BYTES + EQC_LUTS_BYTES + EQC_CHUNK_BYTES);
    cudaStream_t s = (cudaStream_t)job->stream;
    uint32_t n = (uint32_t)((uint64_t)job->in.width * (uint64_t)job->in.height);

    HistUnits u = hist_units<2, 3>(job->in);
    if (job->out.pitch != ts_row_bytes(&job->out))
        u.flat_bytes = 0; /* the walk's flat layout must be the output's too */
    bool vec_in = hist_vec_ok_walk(&job->in, u);
    bool vec = vec_in && hist_vec_ok_walk(&job->out, u);
    unsigned tiles = (u.walked() + EQC_TILE - 1) / EQC_TILE;

    /* The count's grid: resident blocks in triples, no more than give each thread a unit. */
    const void *ck = (const void *)eqc_count_kernel;
    int resident = 0;
    st = gpu_allow_smem(ck, EQC_LUT_BYTES);
    if (st == TS_OK)
        st = gpu_resident_blocks(ck, EQC_THREADS, EQC_LUT_BYTES, dev, "equalize cluster", &resident);
    if (st != TS_OK)
        return st;
    int x = resident / 3, xmax = eqc_count_blocks_max(dev);
    unsigned xneed = (u.walked() + 2 * EQC_THREADS - 1) / (2 * EQC_THREADS);
    x = x > xmax ? xmax : x;
    x = (unsigned)x > xneed ? (int)xneed : x;
    x = x < 1 ? 1 : x;
    /* The non-cluster apply's grid (param 1). */
    const void *ak = (const void *)eqc_apply_kernel<false>;
    int aresident = 0;
    if (k == 1) {
        st = gpu_allow_smem(ak, EQC_LUT_BYTES);
        if (st == TS_OK)
            st = gpu_resident_blocks(ak, EQC_THREADS, EQC_LUT_BYTES, dev, "equalize cluster",
                                     &aresident);
        if (st != TS_OK)
            return st;
    }

    CUDA_TRY(cudaMemsetAsync(d_hist, 0, (size_t)3 * EQC_BINS * sizeof *d_hist, s));
    eqc_count_kernel<<<dim3((unsigned)x, 3), EQC_THREADS, EQC_LUT_BYTES, s>>>(job->in, u, vec_in,
                                                                                d_hist, d_partial);
    LAUNCH_CHECK("eqc_count_kernel");
    eqc_reduce_kernel<<<dim3(EQC_CHUNKS, 3), 512, 0, s>>>(d_partial, (unsigned)x, d_hist, d_total,
                                                          d_first);
    LAUNCH_CHECK("eqc_reduce_kernel");
    eqc_lut_kernel<<<dim3(EQC_CHUNKS, 3), 256, 0, s>>>(d_hist, d_total, d_first, n, d_lut);
    LAUNCH_CHECK("eqc_lut_kernel");
    if (k > 1)
        return eqc_apply_cluster(job, k, u, vec, d_lut, tiles);
    unsigned triples = (unsigned)aresident / 3;
    triples = triples > tiles ? tiles : triples;
    triples = triples < 1 ? 1 : triples;
    eqc_apply_kernel<false><<<triples * 3, EQC_THREADS, EQC_LUT_BYTES, s>>>(job->in, job->out, u,
                                                                           vec, d_lut);
    LAUNCH_CHECK("eqc_apply_kernel");
    return TS_OK;
}
