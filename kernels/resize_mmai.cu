/* resize_mmai.cu - the `mmai` row of the resize ladder, opt's choice for 8-bit images (1-4
 * channels) on sm_80 and newer where its geometry applies: the fused resample on the tensor
 * cores with the samples left interleaved, as they are in the image. With alpha, each thread
 * premultiplies the 16-byte chunks it staged (Pillow's RGBa) and unpremultiplies the pixel or two
 * of each 32-bit word it stores.
 *
 * What it changes against resize_mma.cu (channel planes), which was issue-bound (tools/results/
 * nvidia-h100-resize.md: ~140 instructions an output sample around the mma):
 *   - no reordering of the input in memory: the rows go from global to shared memory by
 *     cp.async as they lie. For RGB where it saves k-chunks (mi_px_able: lanczos3 and cubic)
 *     each thread splits the three words of 4 pixels it loads into one A fragment per channel
 *     with byte permutes (6 prmt), so the horizontal product runs on pixels: an n-tile of 8
 *     output pixels spans one k-chunk of 32 input pixels at a 2x reduction, the three channels
 *     share its weights (6 registers where the samples' n-tiles held 36), and each
 *     accumulator's chain is 3 products long, not 6: half the horizontal products.
 *     Otherwise the product runs over the bytes as they lie (k = C * x + c), the weight matrix
 *     zero where the channel differs: an n-tile of 8 samples spans 2 k-chunks of 32 bytes at
 *     2x, 4 at 4x (with 2 n-tiles a warp so that the weights still fit the registers);
 *   - the weight fragments (three byte planes, fragment order) are built by a small kernel
 *     (mi_prep) and kept on the device per geometry (the plan cache: resize_mmai_cache.cu);
 *     one block per resident slot takes a run of tiles down a column (mi_run: the blocks that
 *     start at the same height read the same input rows across the width) and holds its warps'
 *     B fragments of the column in registers (loaded when it enters the column);
 *   - the three byte planes' sums are chained in one accumulator: hi, then acc << 8 plus mid,
 *     then acc << 8 plus the rounding half plus lo. Each partial value is the final sum less the
 *     lower planes' sums, so it stays in int32;
 *   - the horizontal pass's rows are permuted as they are staged (fragment rows gq and gq + 8
 *     hold input rows 2gq and 2gq + 1) so each thread's two sums of a column are adjacent rows:
 *     one 16-bit store into the intermediate (column-major: the vertical pass's B operand). Down
 *     a column, the intermediate rows a tile shares with the tile before are moved to the front,
 *     not recomputed;
 *   - the vertical pass takes four n-tiles whose columns interleave (n-tile j's column c is
 *     sample 8 (c / 2) + 2 j + c % 2) so each thread holds 8 adjacent output samples of a row:
 *     one 64-bit global store, whole 32-byte sectors, no output tile in shared memory (two
 *     n-tiles and 32-bit stores where four would spill registers); the rounding, clamping and
 *     packing of 4 sums is two cvt.pack.sat;
 *   - the next tile's first input rows are in flight while the vertical pass of this one runs.
 * The kernel reads as its stages (mi_block, below): enter a tile, keep rows, horizontal pass,
 * vertical pass.
 *
 * The sums are the reference's (resize.h): bit-identical to the CPU and to the planar kernel.
 * The geometry does not apply (rs_mmai_applies says no; the row fails as unsupported) where an
 * n-tile's band needs more than MI_NKH k-chunks (lanczos3 RGB reductions past ~5x), a 16-row
 * band more than MI_NKV, a staged row more than the thread's chunks, or shared memory is short.
 */
#include "resize_mma.cuh"
#include "resize_mmai.cuh"
#include "variants.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define MI_THREADS 256
#define MI_SMEM_TWO (112 * 1024) /* shared memory a block for two an SM (228 KB, 1 KB each
                                  * reserved) */
#define MI_NMAX 8  /* 16-row bands of a tile: 8 (128 rows) for 1 or 3 channels, else 4; fewer
                    * where more would leave one block an SM */
#define MI_NS 4    /* ring of 16-row input stages: three in flight, one in use */
#define MI_NKV 4             /* k-chunks (32 intermediate rows) a 16-row band may span */
#define MI_NKH 4             /* k-chunks (32 bytes) an n-tile of 8 samples may span */
#define MI_SMAX 4            /* 16-byte chunks a thread stages per 16 rows */
#define MI_HALF (1 << (RS_PREC8 - 1))
/* The shared-memory slot of row r (0..15) of a stage: even rows 0..7, odd rows 8..15. */
#define MI_SLOT(r) (((r) >> 1) + ((r) & 1) * 8)

/* Whether the horizontal pass may run on pixels: an n-tile is 8 output pixels, its k-chunks 32
 * input pixels, and each thread splits the bytes it loads into one A fragment per channel (byte
 * permutes), so the channels share the weights. RGB only, and only where that takes fewer
 * k-chunks an n-tile than the samples as they lie (mi_geom_make: lanczos3 and cubic, not box or
 * triangle at 2x, where the permutes would be added work). 2 or 4 channels stay on samples: a
 * column of 64 RGBA pixels at 4x leaves one block an SM (tools/results has the measurements). */
static constexpr bool mi_px_able(int C) { return C == 3; }

/* n-tiles of 8 samples per warp (8 warps): 3 for 3 or 4 channels (a tile of 64 RGB or 48 RGBA
 * pixels), 2 for 1 or 2 (128 gray pixels); 2 where an n-tile spans 4 k-chunks (reductions past
 * ~2.5x: the weights' registers). On pixels (px), one n-tile of 8 pixels (a tile of 64). */
static __host__ __device__ constexpr int mi_ntw(int C, int nkh, bool px)
{
    return px ? 1 : nkh > 2 || C < 3 ? 2 : 3;
}

/* Samples a column of tiles spans: 8 warps of NTW n-tiles of 8 samples, or of 8 pixels. */
static __host__ __device__ constexpr int mi_txs(int C, int nkh, bool px)
{
    return 64 * mi_ntw(C, nkh, px) * (px ? C : 1);
}

/* Whether the vertical A fragments of a tile go through shared memory (two tiles' worth): at 4
 * k-chunks a band, where the vertical pass reads them per step; at 1 or 2 each warp holds its
 * band's in registers, loaded from global memory once a tile. */
static __host__ __device__ constexpr bool mi_wv_staged(int nkv) { return nkv > 2; }

/* ---------------------------------------------------------------- geometry (host and device) */

/* The first byte (rounded down to 4) and the end of the inputs of n-tile n (samples 8n ..). */
RS_HD void mi_tile_band(const int *b, int C, int S, int n, int *lo, int *hi)
{
    *lo = INT_MAX;
    *hi = 0;
    for (int s = 8 * n; s < 8 * n + 8 && s < S; s++) {
        int px = s / C, c = s - px * C;
        int first = C * b[2 * px] + c, end = C * (b[2 * px] + b[2 * px + 1] - 1) + c + 1;
        *lo = first < *lo ? first : *lo;
        *hi = end > *hi ? end : *hi;
    }
    if (*lo != INT_MAX)
        *lo &= ~3;
}

/* The first input row (rounded down to 4) and the end of the rows of 16-row band m. */
RS_HD void mi_row_band(const int *b, int oh, int m, int *lo, int *hi)
{
    *lo = INT_MAX;
    *hi = 0;
    for (int o = 16 * m; o < 16 * m + 16 && o < oh; o++) {
        *lo = b[2 * o] < *lo ? b[2 * o] : *lo;
        *hi = b[2 * o] + b[2 * o + 1] > *hi ? b[2 * o] + b[2 * o + 1] : *hi;
    }
    if (*lo != INT_MAX)
        *lo &= ~3;
}

static size_t mi_align(size_t n) { return (n + 255) & ~(size_t)255; }

/* The kernel is built for 1, 2 or 4 k-chunks an n-tile or band: n rounded up to one of them,
 * and the launcher table's index of a built count (n / 2). */
static int mi_kbuilt(int n) { return n == 3 ? 4 : n; }

/* Fragment bytes for an output of ow x oh with C channels, at most (before the tables exist):
 * what resize.cu's scratch layout reserves. */
size_t rs_mmai_frag_bound(int ow, int oh, int C)
{
    if (C < 1 || C > 4)
        return 0;
    size_t ntp = 0; /* n-tiles padded to whole blocks, at 2 or 3 a warp */
    for (int w = 2; w <= 3; w++) {
        size_t txs = 64 * (size_t)w, n = ((size_t)ow * C + txs - 1) / txs * (txs / 8);
        ntp = n > ntp ? n : ntp;
    }
    size_t nmp = ((size_t)oh + 16 * MI_NMAX - 1) / (16 * MI_NMAX) * MI_NMAX; /* >= at 2 bands */
    return mi_align(ntp * sizeof(int)) + mi_align(ntp * MI_NKH * 768) +
           mi_align(nmp * 2 * sizeof(int)) + nmp * MI_NKV * 1536;
}

/* On pixels (px) or samples: the units (U, nt), the n-tiles' first units (kb, nt of them,
 * unless kb is null) and the k-chunks the widest one spans (1, 2 or 4: mi_kbuilt; more where
 * the kernel does not apply). */
static int mi_hbands(const rs_coeffs *ch, mi_geom *g, int px, int *kb)
{
    g->U = px ? g->C : 1;
    g->nt = (g->S / g->U + 7) / 8;
    int lo, hi, nkh = 1;
    for (int n = 0; n < g->nt; n++) {
        mi_tile_band(ch->bounds, g->C / g->U, g->S / g->U, n, &lo, &hi);
        if (kb)
            kb[n] = lo;
        nkh = (hi - lo + 31) / 32 > nkh ? (hi - lo + 31) / 32 : nkh;
    }
    return mi_kbuilt(nkh);
}

/* The geometry of a launch on this plan; -1 where the kernel does not apply. */
static int mi_geom_make(const rs_plan *p, int C, int nm, const ts_job *job, mi_geom *g)
{
    const rs_coeffs *ch = p->ch, *cv = p->cv;
    const int ow = ch->out_size, oh = cv->out_size;
    g->C = C;
    g->S = ow * C;
    g->nty = (oh + 16 * nm - 1) / (16 * nm);
    g->nmr = (oh + 15) / 16;
    g->nm = nm;
    g->nmp = g->nty * nm;
    int *kb = (int *)malloc(((size_t)(g->S + 7) / 8 + 24) * sizeof(int)), lo, hi, nkv = 1;
    if (!kb)
        return -1;
    /* on pixels where that takes fewer k-chunks an n-tile than the samples as they lie */
    const int px = mi_px_able(C) && mi_hbands(ch, g, 1, NULL) < mi_hbands(ch, g, 0, NULL);
    const int nkh = mi_hbands(ch, g, px, kb);
    const int U = g->U, ntb = 8 * mi_ntw(C, nkh, U > 1), txs = mi_txs(C, nkh, U > 1);
    g->gx = (g->S + txs - 1) / txs;
    g->ntp = g->gx * ntb; /* < nt + 24 */
    for (int n = g->nt; n < g->ntp; n++)
        kb[n] = kb[g->nt - 1];
    int win = 0; /* bytes */
    for (int bx = 0; bx < g->gx && nkh <= MI_NKH; bx++)
        for (int n = bx * ntb; n < bx * ntb + ntb; n++)
            win = U * (kb[n] + 32 * nkh) - (U * kb[bx * ntb] & ~15) > win
                      ? U * (kb[n] + 32 * nkh) - (U * kb[bx * ntb] & ~15)
                      : win;
    free(kb);
    g->nkh = nkh;
    g->nch = (win + 15) / 16;
    if (nkh > MI_NKH || 16 * g->nch > MI_SMAX * MI_THREADS)
        return -1;
    g->rb = 16 * (g->nch | 1); /* 16 mod 32 bytes: the A fragments' rows hit distinct banks */
    for (int m = 0; m < g->nmr; m++) {
        mi_row_band(cv->bounds, oh, m, &lo, &hi);
        nkv = (hi - lo + 31) / 32 > nkv ? (hi - lo + 31) / 32 : nkv;
    }
    if (nkv > MI_NKV)
        return -1;
    g->nkv = nkv = mi_kbuilt(nkv);
    /* intermediate rows a tile holds (kept from the tile before + its stages: fewer than
     * end - base + 16) or reads (its bands' k-chunks) */
    int rows = 0;
    for (int t = 0; t < g->nty; t++) {
        int base = 0, end = 0, reach = 0;
        for (int m = t * nm; m < t * nm + nm && m < g->nmr; m++) {
            mi_row_band(cv->bounds, oh, m, &lo, &hi);
            if (m == t * nm)
                base = lo;
            end = hi > end ? hi : end;
            reach = lo + 32 * nkv > reach ? lo + 32 * nkv : reach;
        }
        rows = end - base + 16 > rows ? end - base + 16 : rows;
        rows = reach - base > rows ? reach - base : rows;
    }
    g->mr = (rows + 7) & ~7;
    if (g->mr % 16 == 0)
        g->mr += 8; /* mr / 4 = 2 mod 4: the 16-bit stores conflict-free, the loads 2-way */
    g->off_mid = (size_t)MI_NS * 16 * g->rb;
    g->off_wv = (g->off_mid + (size_t)txs * g->mr + 15) & ~(size_t)15;
    g->smem = g->off_wv + (mi_wv_staged(nkv) ? 2 * (size_t)nm * nkv * 1536 : 0);
    g->off_fh = mi_align((size_t)g->ntp * sizeof(int));
    g->off_vb = g->off_fh + mi_align((size_t)g->ntp * nkh * 768);
    g->off_fv = g->off_vb + mi_align((size_t)g->nmp * 2 * sizeof(int));
    g->frag_bytes = g->off_fv + (size_t)g->nmp * nkv * 1536;
    g->frag = NULL; /* the caller's: a plan-cache slot or the job's scratch */
    size_t optin = job->dev ? job->dev->smem_per_block_optin : 0;
    return g->smem > (optin ? optin : 99 * 1024) ? -1 : 0;
}

/* 128-row tiles (1 or 3 channels: with alpha they measured slower), else 64, or 32 where the
 * taller would leave one block an SM; -1 where none applies. */
int mi_geom_pick(const rs_plan *p, int C, const ts_job *job, mi_geom *g)
{
    for (int nm = C % 2 ? MI_NMAX : MI_NMAX / 2; nm > 2; nm /= 2)
        if (mi_geom_make(p, C, nm, job, g) == 0 && g->smem <= MI_SMEM_TWO)
            return 0;
    return mi_geom_make(p, C, 2, job, g);
}

/* ---------------------------------------------------------------- device */

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
/* Two sums clamped to 0..255 and packed under c: byte 0 = b, byte 1 = a, bytes 2-3 = c's low
 * half. */
__device__ __forceinline__ unsigned mi_pack(int a, int b, unsigned c)
{
    unsigned d;
    asm("cvt.pack.sat.u8.s32.b32 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}
#endif

/* The fragments of every n-tile and 16-row band, in the order the kernel's lanes read them
 * (C: channels of a horizontal unit, 1 on pixels): fh[n][k][plane][lane] (uint2: the B
 * fragment of k-chunk k), fv[m][k][plane][lane] (uint4: the A fragment), kbh[n] (the n-tile's
 * first unit: byte, or pixel), vb[m], vend[m] (the band's first row, rounded down to 4, and the
 * end of its rows; 0 for a band past the image). Tiles and bands past the image get zero
 * weights at the last real one's position. A warp makes one (tile or band, k-chunk): its lanes'
 * bounds are loaded once and the band's start is a warp minimum. */
template <int C>
__global__ void mi_prep_kernel(rs_args a, mi_geom g)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x, lane = i & 31, gq = lane >> 2;
    const int hs = g.S / g.U; /* units a row */
    const int nh = g.ntp * g.nkh * 32;
    if (i < nh) {
        int k = (i >> 5) % g.nkh, n = (i >> 5) / g.nkh, nb = n < g.nt ? n : g.nt - 1;
        int s = 8 * nb + gq, px = s / C, c = s - px * C, b0 = 0, cnt = 0, row = 0;
        if (s < hs)
            b0 = a.bh[2 * px], cnt = a.bh[2 * px + 1], row = a.rh[px];
        int lo = s < hs ? C * b0 + c : INT_MAX;
        for (int o = 4; o < 32; o *= 2)
            lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, o));
        lo &= ~3;
        if (k == 0 && lane == 0)
            ((int *)g.frag)[n] = lo;
        if (n != nb)
            cnt = 0; /* a tile past the row: zero weights */
        const int32_t *kr = a.kh + (size_t)row * a.ksh;
        int w[2][4];
#pragma unroll
        for (int j = 0; j < 2; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                int byte = lo + 32 * k + 4 * (lane & 3) + 16 * j + e, ip = byte / C,
                    t = ip - b0;
                w[j][e] = byte - ip * C == c && t >= 0 && t < cnt ? kr[t] : 0;
            }
        unsigned pl[2][3];
        mma_pack_planes(w[0], pl[0]);
        mma_pack_planes(w[1], pl[1]);
        uint2 *fh = (uint2 *)(g.frag + g.off_fh) + ((size_t)(n * 32 + lane) * g.nkh + k) * 3;
#pragma unroll
        for (int p = 0; p < 3; p++)
            fh[p] = make_uint2(pl[0][p], pl[1][p]);
        return;
    }
    const int iv = i - nh;
    if (iv >= g.nmp * g.nkv * 32)
        return;
    int k = (iv >> 5) % g.nkv, m = (iv >> 5) / g.nkv, mb = m < g.nmr ? m : g.nmr - 1;
    int b0[2], cnt[2], row[2], lo = INT_MAX, hi = 0;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        int o = 16 * mb + gq + 8 * h;
        b0[h] = cnt[h] = row[h] = 0;
        if (o < a.oh) {
            b0[h] = a.bv[2 * o], cnt[h] = a.bv[2 * o + 1], row[h] = a.rv[o];
            lo = min(lo, b0[h]);
            hi = max(hi, b0[h] + cnt[h]);
        }
        if (m != mb)
            cnt[h] = 0;
    }
    for (int o = 4; o < 32; o *= 2) {
        lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, o));
        hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, o));
    }
    lo &= ~3;
    int *vb = (int *)(g.frag + g.off_vb);
    if (k == 0 && lane == 0) {
        vb[m] = lo;
        vb[g.nmp + m] = m < g.nmr ? hi : 0;
    }
    unsigned pl[4][3];
#pragma unroll
    for (int j = 0; j < 4; j++) {
        int h = j & 1, w[4];
        const int32_t *kr = a.kv + (size_t)row[h] * a.ksv;
#pragma unroll
        for (int e = 0; e < 4; e++) {
            int t = lo + 32 * k + 4 * (lane & 3) + 16 * (j >> 1) + e - b0[h];
            w[e] = t >= 0 && t < cnt[h] ? kr[t] : 0;
        }
        mma_pack_planes(w, pl[j]);
    }
    uint4 *fv = (uint4 *)(g.frag + g.off_fv) + (size_t)(m * g.nkv + k) * 96 + lane;
#pragma unroll
    for (int p = 0; p < 3; p++)
        fv[32 * p] = make_uint4(pl[0][p], pl[1][p], pl[2][p], pl[3][p]);
}

/* Three words of 4 RGB pixels (byte 0 first: R0 G0 B0 R1 | G1 B1 R2 G2 | B2 R3 G3 B3) to one
 * word a channel, its 4 samples in pixel order. */
__device__ __forceinline__ void mi_deinterleave3(const unsigned (&w)[3], unsigned (&ch)[3])
{
    ch[0] = __byte_perm(__byte_perm(w[0], w[1], 0x0630), w[2], 0x5210);
    ch[1] = __byte_perm(__byte_perm(w[0], w[1], 0x0741), w[2], 0x6210);
    ch[2] = __byte_perm(__byte_perm(w[0], w[1], 0x0052), w[2], 0x7410);
}

/* acc << 8 (+ the rounding half): between two planes of a chained sum. The chain runs hi, mid,
 * lo, so every partial value is the final sum less lower planes' sums: no overflow. */
__device__ __forceinline__ void mi_shift(int (&acc)[4], int add)
{
#pragma unroll
    for (int q = 0; q < 4; q++)
        acc[q] = (int)(((unsigned)acc[q] << 8) + (unsigned)add);
}

/* The chained sums of NT accumulators over NK k-chunks, planes hi, mid, lo (mma(t, k, pl, acc)
 * issues plane pl's product of k-chunk k for accumulator t), shifted down to the samples before
 * clamping. */
template <int NT, int NK, class Mma>
__device__ __forceinline__ void mi_chain(int (&acc)[NT][4], Mma mma)
{
#pragma unroll
    for (int pl = 2; pl >= 0; pl--) {
#pragma unroll
        for (int k = 0; k < NK; k++)
#pragma unroll
            for (int t = 0; t < NT; t++)
                mma(t, k, pl, acc[t]);
        if (pl > 0) {
#pragma unroll
            for (int t = 0; t < NT; t++)
                mi_shift(acc[t], pl == 1 ? MI_HALF : 0);
        }
    }
#pragma unroll
    for (int t = 0; t < NT; t++)
#pragma unroll
        for (int q = 0; q < 4; q++)
            acc[t][q] >>= RS_PREC8;
}

/* This block's run of tiles, positions [*it, *end) of a list: with L = ceil(tiles / blocks),
 * block b < gx * P (P = nty / L parts a column) takes part b / gx of column b % gx, L tiles down
 * the column, so at any time the blocks of a part read the same input rows across the width
 * (whole DRAM pages, not 464-byte pieces of rows far apart); the R = nty - P * L tiles left at
 * the foot of every column are dealt, in column order, to the other blocks (*lo_r = R: position
 * i is tile i % R of those of column i / R, from row tile *lo_base). Where that would give a
 * block more than L tiles, or leave no block for the foot: equal runs of the column-major list
 * (*lo_r = 0: position i is tile i). */
__device__ __forceinline__ void mi_run(const mi_geom &g, int *it, int *end, int *lo_r,
                                       int *lo_base)
{
    const long items = (long)g.gx * g.nty;
    const int B = gridDim.x, b = blockIdx.x, L = (int)((items + B - 1) / B);
    const int P = g.nty / L, R = g.nty - P * L, full = g.gx * P, nb = B - full, foot = g.gx * R;
    *lo_r = *lo_base = 0;
    if (P >= 1 && full <= B && (foot == 0 || (nb > 0 && (foot + nb - 1) / nb <= L))) {
        if (b < full) {
            *it = (b % g.gx) * g.nty + (b / g.gx) * L;
            *end = *it + L;
        } else {
            *it = (int)((long)foot * (b - full) / nb); /* b >= full: nb > 0 */
            *end = (int)((long)foot * (b - full + 1) / nb);
            *lo_r = R;
            *lo_base = P * L;
        }
        return;
    }
    *it = (int)(items * b / B);
    *end = (int)(items * (b + 1) / B);
}
/* ---------------------------------------------------------------- the resampler, by stage
 *
 * One block walks its run of tiles (mi_run). Each tile goes through:
 *   enter      the column's weights and staging plan when the column changes (set_column), the
 *              tile's rows, its first MI_NS - 1 stages of 16 input rows put in flight (prologue);
 *   keep_rows  the intermediate rows the tile shares with the one above moved to the front of
 *              mid (the filter's reach, ~12 rows at 2x), not recomputed;
 *   h_pass     per stage: wait for it, premultiply (alpha), load the A fragments (h_load), the
 *              chained products against the column's weights, the sums stored into mid, the
 *              next stage issued;
 *   v_pass     the vertical products of mid by the band's weights, stored to the output
 *              (v_store); the next tile's first stages are already in flight.
 * mi_block holds what the stages share: the block's shared-memory views, the column's staging
 * plan and weights, and where the tile's rows stand. */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800 /* mma.sync, cp.async */
template <int C, int NKH, int NKV, bool PX> struct mi_block {
    /* n-tiles a warp, a block; samples a column; bytes a horizontal unit; accumulators a warp
     * in the horizontal pass (an n-tile's, or on pixels a channel's) */
    static constexpr int NTW = mi_ntw(C, NKH, PX), NTB = 8 * NTW, TXS = mi_txs(C, NKH, PX);
    static constexpr int U = PX ? C : 1;
    static constexpr int NA = PX ? C : NTW;
    /* vertical n-tiles a step: 2 where 4 would spill registers */
    static constexpr int VT = NKV <= 2 && NKH <= 2 ? 4 : 2;

    const rs_args &a;
    const mi_geom &g;
    unsigned char *const raw;  /* [MI_NS][16][rb]: input rows as they are */
    unsigned char *const mid;  /* [TXS][mr]: the intermediate, column-major */
    const uint4 *const wv;     /* [2][nm][NKV][3][32]: vertical A fragments, where mi_wv_staged */
    const unsigned raw_s, wv_s; /* the same as shared-window addresses (cp.async) */
    const int *const kbh, *const vb, *const vend;
    const uint2 *const fh;
    const uint4 *const fv;
    const int tid, lane, warp, gq, tg;
    const int nm; /* 2, 4 or 8: 8 % nm == 0, so a warp's vertical band is warp % nm */
    const int wv_words, rowbytes, rb;
    const int ra, rbb; /* this thread's A fragment rows in a stage (MI_SLOT: rows 2gq, 2gq + 1) */
    const size_t step; /* 16 input rows */

    /* The column of tiles being worked on: its first sample, the warp's n-tiles' first bytes
     * (from the column's first staged byte w0) and this thread's 16-byte chunks of a stage. */
    int col = -1, sx0 = 0, w0 = 0, full = 0, kx[NTW], sdst[MI_SMAX], sbytes[MI_SMAX];
    int slim[MI_SMAX], srow[MI_SMAX], sx[MI_SMAX];
    const unsigned char *ssrc[MI_SMAX]; /* the chunk's source in the next stage to issue */
    uint2 bh[NTW][NKH][3]; /* the warp's B fragments (weights) of the column, for every stage */

    /* The tile: t its row of tiles; mid row 0 is input row rbase; rows [rbase, mdone) are
     * computed; its nst stages start at input row first; cshift, clen: the rows kept. */
    int t = 0, rbase = 0, first = 0, nst = 0, slot = 0, mdone = 0, cshift = 0, clen = 0;

    __device__ __forceinline__ mi_block(const rs_args &a_, const mi_geom &g_, unsigned char *sm)
        : a(a_), g(g_), raw(sm), mid(sm + g_.off_mid), wv((const uint4 *)(sm + g_.off_wv)),
          raw_s((unsigned)__cvta_generic_to_shared(sm)),
          wv_s((unsigned)__cvta_generic_to_shared(sm + g_.off_wv)), kbh((const int *)g_.frag),
          vb((const int *)(g_.frag + g_.off_vb)), vend(vb + g_.nmp),
          fh((const uint2 *)(g_.frag + g_.off_fh)), fv((const uint4 *)(g_.frag + g_.off_fv)),
          tid(threadIdx.x), lane(tid & 31), warp(tid >> 5), gq(lane >> 2), tg(lane & 3),
          nm(g_.nm), wv_words(nm * NKV * 96), rowbytes(a_.iw * C), rb(g_.rb),
          ra(gq * rb + 4 * U * tg), rbb((gq + 8) * rb + 4 * U * tg), step(16 * a_.in_pitch)
    {
    }

    /* ---- staging */

    __device__ __forceinline__ void set_column(int x)
    {
        const int n0 = x * NTB;
        col = x;
        sx0 = x * TXS;
        w0 = U * kbh[n0] & ~15;
        full = w0 + 16 * g.nch <= rowbytes;
#pragma unroll
        for (int i = 0; i < NTW; i++)
            kx[i] = U * kbh[n0 + warp + 8 * i] - w0;
#pragma unroll
        for (int it = 0; it < MI_SMAX; it++) {
            int e = tid + it * MI_THREADS, r = e / g.nch, j = e - r * g.nch;
            sdst[it] = MI_SLOT(r) * rb + 16 * j;
            sbytes[it] = e < 16 * g.nch ? max(0, min(16, rowbytes - w0 - 16 * j)) : -1;
            srow[it] = r;
            sx[it] = sbytes[it] > 0 ? w0 + 16 * j : 0;
        }
#pragma unroll
        for (int i = 0; i < NTW; i++) {
            const uint2 *src = fh + ((size_t)(n0 + warp + 8 * i) * 32 + lane) * (NKH * 3);
#pragma unroll
            for (int k = 0; k < NKH; k++)
#pragma unroll
                for (int p = 0; p < 3; p++)
                    bh[i][k][p] = src[3 * k + p];
        }
    }

    /* The chunks' sources for stages from input row fr on; a row past the image repeats the
     * last one (its weights are zero). */
    __device__ __forceinline__ void issue_start(int fr)
    {
#pragma unroll
        for (int it = 0; it < MI_SMAX; it++) {
            slim[it] = a.ih - fr - srow[it];
            ssrc[it] = a.in + (size_t)min(fr + srow[it], a.ih - 1) * a.in_pitch + sx[it];
        }
    }

    /* Stage st of the tile into its ring slot; called for st = 0, 1, 2, ... in order (a commit
     * group each, empty past the tile). */
    __device__ __forceinline__ void issue(int st)
    {
        if (st < nst) {
            const unsigned dst = raw_s + (unsigned)((st % MI_NS) * 16 * rb);
            if (full) { /* every chunk of the column's window inside the row */
#pragma unroll
                for (int it = 0; it < MI_SMAX; it++) {
                    if (sbytes[it] < 0)
                        break;
                    mma_cp16s(dst + sdst[it], ssrc[it]);
                    if (16 * (st + 1) < slim[it])
                        ssrc[it] += step;
                }
            } else {
#pragma unroll
                for (int it = 0; it < MI_SMAX; it++) {
                    if (sbytes[it] < 0)
                        break;
                    mma_cp16s(dst + sdst[it], ssrc[it], sbytes[it]); /* zeros past the row */
                    if (16 * (st + 1) < slim[it])
                        ssrc[it] += step;
                }
            }
        }
        mma_cp_commit();
    }

    /* The tile's vertical weights (where staged) and its first MI_NS - 1 stages in flight. */
    __device__ __forceinline__ void prologue()
    {
        const uint4 *src = fv + (size_t)t * wv_words;
        for (int i = tid; i < (mi_wv_staged(NKV) ? wv_words : 0); i += MI_THREADS)
            mma_cp16s(wv_s + 16u * (unsigned)(slot * wv_words + i), src + i);
        issue_start(first);
#pragma unroll 1
        for (int st = 0; st < MI_NS - 1; st++)
            issue(st);
    }

    /* Tile `item` (column-major index): its rows, those kept from the tile above. */
    __device__ __forceinline__ void enter(int item)
    {
        const bool carry = item / g.nty == col;
        if (!carry)
            set_column(item / g.nty);
        t = item % g.nty;
        int e = 0;
#pragma unroll
        for (int m = 0; m < nm; m++)
            e = max(e, vend[t * nm + m]);
        const int r0 = vb[t * nm];
        if (carry && mdone > r0) {
            cshift = r0 - rbase;
            clen = mdone - r0;
            first = mdone;
        } else {
            cshift = clen = 0;
            first = r0;
        }
        rbase = r0;
        nst = e > first ? (e - first + 15) / 16 : 0;
        prologue();
    }

    /* The rows kept from the tile above move to the front of mid (after its vertical pass). */
    __device__ __forceinline__ void keep_rows()
    {
        if (clen > 0 && cshift > 0)
            for (int c = tid; c < TXS; c += MI_THREADS) {
                unsigned *q = (unsigned *)(mid + (size_t)c * g.mr);
                for (int w = 0; w < clen / 4; w++)
                    q[w] = q[w + cshift / 4];
            }
    }

    /* ---- horizontal pass */

    /* This thread's chunks of the stage at sb, premultiplied in place (Pillow's RGBa). */
    __device__ __forceinline__ void h_premultiply(int sb)
    {
#pragma unroll
        for (int it = 0; it < MI_SMAX; it++) {
            if (sbytes[it] < 0)
                break;
            uint4 *q = (uint4 *)(raw + sb + sdst[it]);
            uint4 v = *q;
            v.x = mma_premul_word<C>(v.x), v.y = mma_premul_word<C>(v.y);
            v.z = mma_premul_word<C>(v.z), v.w = mma_premul_word<C>(v.w);
            *q = v;
        }
    }

    /* The warp's A fragments of the stage at sb: rows gq and gq + 8, k 4tg.. and 16 + 4tg.. of
     * each k-chunk, per n-tile; on pixels each word is 4 pixels, C words of the row split into
     * the channels' fragments. */
    __device__ __forceinline__ void h_load(int sb, unsigned (&af)[NA][NKH][4])
    {
        if constexpr (PX) {
            static_assert(C == 3, "pixels: RGB only (mi_px_able)");
#pragma unroll
            for (int k = 0; k < NKH; k++)
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    const int off = (q & 1 ? rbb : ra) + kx[0] + C * (32 * k + 16 * (q >> 1));
                    const unsigned *src = (const unsigned *)(raw + sb + off);
                    unsigned w[C], ch[C];
#pragma unroll
                    for (int j = 0; j < C; j++)
                        w[j] = src[j];
                    mi_deinterleave3(w, ch);
#pragma unroll
                    for (int c = 0; c < C; c++)
                        af[c][k][q] = ch[c];
                }
        } else {
#pragma unroll
            for (int i = 0; i < NTW; i++)
#pragma unroll
                for (int k = 0; k < NKH; k++) {
                    const unsigned char *pa = raw + sb + ra + kx[i] + 32 * k,
                                        *pb = raw + sb + rbb + kx[i] + 32 * k;
                    af[i][k][0] = *(const unsigned *)pa;
                    af[i][k][1] = *(const unsigned *)pb;
                    af[i][k][2] = *(const unsigned *)(pa + 16);
                    af[i][k][3] = *(const unsigned *)(pb + 16);
                }
        }
    }

    /* The sums of stage s into mid: column 2tg holds rows 2gq (low byte) and 2gq + 1, column
     * 2tg + 1 likewise, one 16-bit store each; on pixels the columns are pixels, channel i of
     * each a sample C apart. */
    __device__ __forceinline__ void h_store(const int (&acc)[NA][4], int off0, int s)
    {
#pragma unroll
        for (int i = 0; i < NA; i++) {
            unsigned c0 = mi_pack(acc[i][2], acc[i][0], 0), c1 = mi_pack(acc[i][3], acc[i][1], 0);
            const int s0 = PX ? C * (8 * warp + 2 * tg) + i : 8 * (warp + 8 * i) + 2 * tg;
            unsigned char *d = mid + (size_t)s0 * g.mr + off0 + 16 * s + 2 * gq;
            *(unsigned short *)d = (unsigned short)c0;
            *(unsigned short *)(d + U * g.mr) = (unsigned short)c1;
        }
    }

    /* The tile's new intermediate rows, 16 input rows a stage, the next three in flight. */
    __device__ __forceinline__ void h_pass()
    {
        const int off0 = first - rbase;
        for (int s = 0; s < nst; s++) {
            mma_cp_wait<MI_NS - 2>();
            const int sb = (s % MI_NS) * 16 * rb;
            if (C == 2 || C == 4)
                h_premultiply(sb);
            __syncthreads();
            issue(s + MI_NS - 1);
            unsigned af[NA][NKH][4];
            h_load(sb, af);
            /* one chain an accumulator (n-tile or channel), side by side */
            int acc[NA][4] = {};
            mi_chain<NA, NKH>(acc, [&](int i, int k, int pl, int(&d)[4]) {
                const unsigned *f = af[i][k];
                const uint2 w = bh[PX ? 0 : i][k][pl];
                if (pl == 2)
                    mma_us(d, f[0], f[1], f[2], f[3], w.x, w.y);
                else
                    mma_uu(d, f[0], f[1], f[2], f[3], w.x, w.y);
            });
            h_store(acc, off0, s);
        }
        mdone = first + 16 * nst;
        mma_cp_wait<0>();
        __syncthreads();
    }

    /* ---- vertical pass */

    /* Row gq + 8h of a step's sums (word i: n-tiles 2i and 2i + 1, columns 2tg, 2tg + 1),
     * clamped, packed, unpremultiplied, stored at orow + p0 (none where orow is null): whole
     * words where the row goes on (one 64-bit store at VT = 4 when aligned), bytes at its end. */
    __device__ __forceinline__ void v_store(const int (&acc)[VT][4], int h, unsigned char *orow,
                                            int p0, bool inside, bool al8, int rest)
    {
        unsigned w[VT / 2];
#pragma unroll
        for (int i = 0; i < VT / 2; i++) {
            const int(&x)[4] = acc[2 * i], (&y)[4] = acc[2 * i + 1];
            const unsigned hi = mi_pack(y[2 * h + 1], y[2 * h], 0);
            w[i] = mi_pack(x[2 * h + 1], x[2 * h], hi);
            if (C == 2 || C == 4)
                w[i] = mma_unpremul_word<C>(w[i]);
        }
        if (!orow)
            return;
        unsigned char *o = orow + p0;
        if (inside || rest >= 2 * VT) {
            if (VT == 4 && al8) {
                *(uint2 *)o = make_uint2(w[0], w[VT / 2 - 1]);
            } else {
#pragma unroll
                for (int i = 0; i < VT / 2; i++)
                    *(unsigned *)(o + 4 * i) = w[i];
            }
        } else {
            for (int b = 0; b < rest; b++) {
                const unsigned v = b < 4 ? w[0] : w[VT / 2 - 1];
                o[b] = (unsigned char)(v >> (8 * (b & 3)));
            }
        }
    }

    /* 16 output rows x 8 VT samples a step (VT n-tiles whose columns interleave, so each thread
     * holds 2 VT adjacent samples of a row); the warp's band is always warp % nm, its A
     * fragments loaded once a tile. cur, cbase, csx0, wvc: the tile's row of tiles, mid's first
     * input row, first sample and staged weights (the next tile is entered already). */
    __device__ __forceinline__ void v_pass(int cur, int cbase, int csx0, const uint4 *wvc)
    {
        const int m = warp % nm, oy0 = (cur * nm + m) * 16;
        if (oy0 >= a.oh)
            return;
        /* this thread's two output rows (null past the image), and whether the tile's samples
         * all lie inside the row: whole-word stores, no checks */
        unsigned char *orow[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int y = oy0 + gq + 8 * h;
            orow[h] = y < a.oh ? a.out + (size_t)y * a.out_pitch + csx0 + 2 * VT * tg : nullptr;
        }
        const bool al8 = (((size_t)a.out | a.out_pitch) & 7) == 0;
        const bool inside = csx0 + TXS <= g.S;
        /* held in registers at 1 or 2 k-chunks (loaded from global memory once a tile); at 4
         * (48 registers) read per step from the copy in shared memory */
        constexpr int NW = NKV <= 2 ? NKV : 1;
        const uint4 *wsrc =
            (mi_wv_staged(NKV) ? wvc : fv + (size_t)cur * wv_words) + m * NKV * 96 + lane;
        uint4 wr[NW][3];
#pragma unroll
        for (int k = 0; k < NW; k++)
#pragma unroll
            for (int p = 0; p < 3; p++)
                wr[k][p] = wsrc[k * 96 + 32 * p];
        const int roff = vb[cur * nm + m] - cbase + 4 * tg;
        for (int u = warp; u < nm * (TXS / (8 * VT)); u += 8) {
            const int p0 = 8 * VT * (u / nm);
            if (!inside && csx0 + p0 >= g.S)
                break;
            const unsigned char *p =
                mid + (size_t)(p0 + 2 * VT * (gq >> 1) + (gq & 1)) * g.mr + roff;
            unsigned bb[NKV][VT][2];
#pragma unroll
            for (int k = 0; k < NKV; k++)
#pragma unroll
                for (int j = 0; j < VT; j++) {
                    const unsigned char *q = p + (size_t)(2 * j) * g.mr + 32 * k;
                    bb[k][j][0] = *(const unsigned *)q;
                    bb[k][j][1] = *(const unsigned *)(q + 16);
                }
            int acc[VT][4] = {};
            mi_chain<VT, NKV>(acc, [&](int j, int k, int pl, int(&d)[4]) {
                uint4 w;
                if constexpr (NKV <= 2)
                    w = wr[k][pl];
                else
                    w = wsrc[k * 96 + 32 * pl];
                if (pl == 2)
                    mma_su(d, w.x, w.y, w.z, w.w, bb[k][j][0], bb[k][j][1]);
                else
                    mma_uu(d, w.x, w.y, w.z, w.w, bb[k][j][0], bb[k][j][1]);
            });
            const int rest = g.S - (csx0 + p0 + 2 * VT * tg); /* samples left in the row */
#pragma unroll
            for (int h = 0; h < 2; h++)
                v_store(acc, h, orow[h], p0, inside, al8, rest);
        }
    }
};

#endif

template <int C, int NKH, int NKV, bool PX>
__global__ void __launch_bounds__(MI_THREADS, 2) resize_mmai_kernel(rs_args a, mi_geom g)
{
#if __CUDA_ARCH__ >= 800
    extern __shared__ __align__(16) unsigned char sm[];
    mi_block<C, NKH, NKV, PX> b(a, g, sm);
    int it, end, lo_r, lo_base;
    mi_run(g, &it, &end, &lo_r, &lo_base);
    /* the tile (column-major index) of position i of the block's run */
    auto item_at = [&](int i) { return lo_r ? (i / lo_r) * g.nty + lo_base + i % lo_r : i; };
    /* one pass per tile and one before the first (which only enters it): enter() is inlined
     * once, the code stays small enough for the instruction cache */
    for (int cit = it - 1; cit < end; cit++) {
        const bool work = cit >= it;
        const int cur = b.t, cbase = b.rbase, csx0 = b.sx0;
        const uint4 *wvc = b.wv + (size_t)b.slot * b.wv_words;
        if (work) {
            b.keep_rows();
            b.h_pass();
        }
        if (cit + 1 < end) {
            if (work)
                b.slot ^= 1;
            b.enter(item_at(cit + 1));
        }
        if (work) {
            b.v_pass(cur, cbase, csx0, wvc);
            __syncthreads(); /* mid and this tile's fragments are free */
        }
    }
#endif
}

/* ---------------------------------------------------------------- launch */

template <int C, int NKH, int NKV, bool PX>
static ts_status mi_launch(const rs_args &a, const ts_job *job, const mi_geom &g, int prep,
                           cudaEvent_t ready, int *blocks)
{
    const void *k = (const void *)resize_mmai_kernel<C, NKH, NKV, PX>;
    if (*blocks <= 0) {
        ts_status st = gpu_allow_smem(k, g.smem);
        int per_sm = 0;
        if (st == TS_OK)
            st = gpu_blocks_per_sm(k, MI_THREADS, g.smem, "resize_mmai_kernel", &per_sm);
        if (st != TS_OK)
            return st;
        /* one block per resident slot, each with an equal run of tiles */
        long items = (long)g.gx * g.nty, resident = (long)job->dev->sms * per_sm;
        *blocks = (int)(resident < items ? resident : items);
    }
    if (prep) {
        int n = (g.ntp * g.nkh + g.nmp * g.nkv) * 32;
        mi_prep_kernel<PX ? 1 : C><<<(n + 255) / 256, 256, 0, job->stream>>>(a, g);
        LAUNCH_CHECK("mi_prep_kernel");
        if (ready)
            CUDA_TRY(cudaEventRecord(ready, job->stream));
    }
    resize_mmai_kernel<C, NKH, NKV, PX>
        <<<(unsigned)*blocks, MI_THREADS, g.smem, job->stream>>>(a, g);
    LAUNCH_CHECK("resize_mmai_kernel");
    return TS_OK;
}

/* The kernel built for the geometry's channels, k-chunk counts (nkh, nkv: 1, 2 or 4) and units
 * (on pixels: RGB only, mi_px_able). */
#define MI_L(C, H, P) {&mi_launch<C, H, 1, P>, &mi_launch<C, H, 2, P>, &mi_launch<C, H, 4, P>}
#define MI_C(C, P) {MI_L(C, 1, P), MI_L(C, 2, P), MI_L(C, 4, P)}
static const mi_launcher mi_launchers[4][3][3] = {MI_C(1, false), MI_C(2, false), MI_C(3, false),
                                                  MI_C(4, false)};
static const mi_launcher mi_launchers_px[3][3] = MI_C(3, true);
#undef MI_C
#undef MI_L
mi_launcher mi_pick(const mi_geom &g)
{
    /* mi_kbuilt's 1, 2, 4 -> 0, 1, 2 */
    const int h = g.nkh / 2, v = g.nkv / 2;
    return g.U > 1 ? mi_launchers_px[h][v] : mi_launchers[g.C - 1][h][v];
}

/* ---------------------------------------------------------------- entry points */

int rs_mmai_applies(rs_plan *p, const ts_job *job)
{
    mi_geom g;
    if (!rs_mma_usable(job) || !job->dev)
        return 0;
    return mi_cache_holds(p, job) || mi_geom_pick(p, job->in.channels, job, &g) == 0;
}

ts_status rs_mmai_launch(rs_plan *p, const ts_job *job)
{
    if (!rs_mma_usable(job) || !job->dev)
        return ts_fail(TS_ERR_UNSUPPORTED, "resize mmai: 8-bit, aligned images on sm_80 or newer");
    mi_geom g;
    int geom = 0, done = 0;
    ts_status st = mi_cache_run(p, job, &g, &geom, &done);
    if (st != TS_OK || done)
        return st;
    /* without the cache: the fragments in the job's scratch, built every time */
    if (geom < 0 || (geom == 0 && mi_geom_pick(p, job->in.channels, job, &g) != 0))
        return ts_fail(TS_ERR_UNSUPPORTED, "resize mmai: its bands do not hold %dx%d -> %dx%d",
                       p->a.iw, p->a.ih, p->a.ow, p->a.oh);
    if (!p->frag || g.frag_bytes > p->frag_bytes)
        return ts_fail(TS_ERR_UNSUPPORTED, "resize mmai: no scratch for the weight fragments");
    g.frag = p->frag;
    int blocks = 0;
    st = rs_plan_upload(p, job);
    if (st == TS_OK)
        st = mi_pick(g)(p->a, job, g, 1, NULL, &blocks);
    return st;
}

static ts_status mmai_row_launch(rs_plan *p, const ts_job *job) { return rs_mmai_launch(p, job); }

extern "C" int resize_mmai_supports(const ts_job *job)
{
    return job->op->resize.mode == TS_RESIZE_CROP ||
           (job->out.width == job->in.width && job->out.height == job->in.height) ||
           rs_mma_usable(job);
}

extern "C" ts_status resize_mmai(const ts_job *job) { return rs_run(job, mmai_row_launch); }
