/* hist_plan.h - the host-side decisions of the GPU histogram variants (hist*.cu) as pure functions
 * of the job's shape and a ts_device, so that the CPU tests can check them with a made-up device;
 * and the exact LUT division the GPU uses. Internal to kernels/ (and tests/test_gpu_hist.c).
 * Compiles as C11 and as CUDA C++.
 */
#ifndef HIST_PLAN_H
#define HIST_PLAN_H

#include "tessera.h"
#include "ts_math.h"

#include <stddef.h>
#include <stdint.h>

/* Images up to 2^31 pixels: the kernels' 32-bit pixel and unit indexes (plus a stride) cannot
 * wrap, and every count fits a uint32. Larger images go to the CPU variant. */
#define HIST_MAX_PIXELS ((uint64_t)1 << 31)
#define HIST_MAX_CLUSTER 16   /* 16 needs cudaFuncAttributeNonPortableClusterSizeAllowed */
#define HIST_PORTABLE_CLUSTER 8
#define HIST_SMEM_RESERVED 1024 /* shared memory the system keeps per block (sm_80 and later) */
#define HIST_OPT8_THREADS 512
#define HIST_OPT16_THREADS 1024
#define HIST_LANES 32 /* opt, 8-bit: one copy of every counter per lane of a warp */
/* opt, 16-bit on sm_90: blocks a cluster whose packed counters are merged through DSMEM (the
 * cluster row sweeps 1..16 with job->param; on an H100 at 8K, 2 was the fastest: 4 and 8 leave
 * 4 of the 132 SMs without a block, 16 more) */
#define HIST_OPT16_CLUSTER 2

/* All counters of a job: ts_hist_count() histograms of ts_hist_bins() bins, back to back. */
static inline long hist_total_bins(ts_hist_mode mode, int channels, int bytes)
{
    return (long)ts_hist_count(mode, channels) * ts_hist_bins(bytes);
}

static inline size_t hist_round256(size_t b) { return (b + 255) & ~(size_t)255; }

/* Cluster size of the `cluster` variant: the bins are split evenly over the K blocks of a
 * cluster, K a power of two up to 16, each block's share (nbins / K u32 counters) within the
 * shared memory one block may opt into. forced == 0: the smallest K that fits (fewest remote
 * adds); else `forced` itself if it is such a K. 0: no cluster size can hold the bins. */
static inline int hist_cluster_size(long nbins, size_t smem_optin, int forced)
{
    for (int k = 1; k <= HIST_MAX_CLUSTER; k *= 2) {
        if (forced && k != forced)
            continue;
        if (nbins % k == 0 && (size_t)(nbins / k) * sizeof(uint32_t) <= smem_optin)
            return k;
    }
    return 0;
}

/* The smallest number of slices P (P divides nbins, each slice a multiple of `align` bins) whose
 * nbins / P bins of `bin_bytes` each fit `smem_limit` bytes; 0 if none up to 64. A slice is a
 * contiguous range of the job's bins; every slice's blocks read the whole image. */
static inline int hist_slices(long nbins, size_t bin_bytes, size_t smem_limit, long align)
{
    for (int p = 1; p <= 64; p++) {
        long s = nbins / p;
        if (nbins % p == 0 && s % align == 0 && (size_t)s * bin_bytes <= smem_limit)
            return p;
    }
    return 0;
}

/* How `shared` and `opt` lay a job out: P slices of S bins, `smem` bytes of counters per block,
 * `threads` per block, at most `blocks` blocks per slice (one wave: an upper bound of what is
 * resident, so run() may launch fewer), and for 16-bit `opt` the scratch for the per-block
 * partial histograms (packed 16-bit counters, S / 2 words per block). */
typedef struct hist_plan {
    int slices;
    long slice_bins;
    size_t smem;
    int threads;
    int blocks;
    size_t partial_bytes;
} hist_plan;

/* Blocks per SM that shared memory and threads allow (registers may allow fewer). */
static inline int hist_blocks_per_sm(const ts_device *dev, size_t smem, int threads)
{
    int by_threads = 2048 / threads;
    size_t by_smem = dev->smem_per_sm / (smem + HIST_SMEM_RESERVED);
    int b = by_smem < (size_t)by_threads ? (int)by_smem : by_threads;
    return b < 1 ? 1 : b;
}

/* shared: u32 counters per block. */
static inline int hist_plan_shared(long nbins, const ts_device *dev, hist_plan *p)
{
    p->slices = hist_slices(nbins, sizeof(uint32_t), dev->smem_per_block_optin, 1);
    if (!p->slices)
        return 0;
    p->slice_bins = nbins / p->slices;
    p->smem = (size_t)p->slice_bins * sizeof(uint32_t);
    p->threads = 1024;
    p->blocks = dev->sms * hist_blocks_per_sm(dev, p->smem, p->threads) / p->slices;
    p->blocks = p->blocks < 1 ? 1 : p->blocks;
    p->partial_bytes = 0;
    return 1;
}

/* opt: 8-bit keeps 32 lane copies of each u32 counter (128 bytes a bin); 16-bit packs two
 * 16-bit counters in a word (2 bytes a bin) and needs a partial histogram per block.
 * forced != 0 (job->param, the benchmark's sweep): that many slices, if they fit and divide the
 * bins evenly; more slices mean smaller blocks, more of them an SM, and more reads. */
static inline int hist_plan_opt(long nbins, int bytes, const ts_device *dev, int forced,
                                   hist_plan *p)
{
    int wide = bytes == 2;
    size_t bin_bytes = wide ? 2 : HIST_LANES * sizeof(uint32_t);
    long align = wide ? 8 : 1;
    if (forced) {
        long s = forced > 0 && forced <= 64 ? nbins / forced : 0;
        int fits = s > 0 && nbins % forced == 0 && s % align == 0 &&
                   (size_t)s * bin_bytes <= dev->smem_per_block_optin;
        p->slices = fits ? forced : 0;
    } else {
        p->slices = hist_slices(nbins, bin_bytes, dev->smem_per_block_optin, align);
    }
    if (!p->slices)
        return 0;
    p->slice_bins = nbins / p->slices;
    p->smem = (size_t)p->slice_bins * bin_bytes;
    p->threads = wide ? HIST_OPT16_THREADS : HIST_OPT8_THREADS;
    p->blocks = dev->sms * hist_blocks_per_sm(dev, p->smem, p->threads) / p->slices;
    p->blocks = p->blocks < 1 ? 1 : p->blocks;
    p->partial_bytes =
        wide ? (size_t)p->slices * (size_t)p->blocks * (size_t)p->slice_bins * 2 : 0;
    return 1;
}

/* Scratch of an equalize job: its histogram (u32) and its LUT (u16), 256-byte aligned. */
static inline size_t hist_eq_hist_bytes(long nbins)
{
    return hist_round256((size_t)nbins * sizeof(uint32_t));
}
static inline size_t hist_eq_bytes(long nbins)
{
    return hist_eq_hist_bytes(nbins) + hist_round256((size_t)nbins * sizeof(uint16_t));
}

/* km_div_round_even(num, den) for 0 <= num < 2^53 and 1 <= den < 2^53, inv = 1.0 / den: the
 * quotient is estimated in double (within one of the floor) and corrected with an exact
 * remainder, so the LUT kernel runs no 64-bit integer division (a slow subroutine on the GPU).
 * tests/test_gpu_hist.c checks it against km_div_round_even on the CPU. */
KM_HD uint64_t hist_div_round_even(uint64_t num, uint64_t den, double inv)
{
    uint64_t q = (uint64_t)((double)num * inv);
    int64_t d = (int64_t)den;
    int64_t r = (int64_t)(num - q * den); /* wraps to a small negative when q is one too big */
    while (r < 0) {
        q--;
        r += d;
    }
    while (r >= d) {
        q++;
        r -= d;
    }
    if (2 * r > d || (2 * r == d && (q & 1)))
        q++;
    return q;
}

#endif /* HIST_PLAN_H */
