/* resize_mma.cu - the `mma` row of the resize ladder, opt's second tensor-core kernel for 8-bit
 * images (1-4 channels) on sm_80 and newer, with the samples split into channel planes: opt plans
 * it where resize_mmai.cu (interleaved) does not apply, i.e. reductions past ~5x (lanczos3 RGB),
 * whose bands that one cannot hold. Both passes of the resample fused per output tile, each
 * pass a banded matrix product on the tensor cores (mma.sync m16n8k32, 8-bit operands, 32-bit
 * sums), exact.
 *
 * Why tensor cores, and why exact: a tap is a multiply-add of an 8-bit sample by a 22-bit weight
 * (Pillow's fixed point, resize.h), summed in int32. The CUDA cores do that one IMAD per tap (half
 * the FP32 rate on Hopper) and 8K -> 4K lanczos3 is ~0.9 G taps: ~54 us of IMAD alone, more than
 * the copy floor (~43 us). The tensor cores multiply 8-bit by 8-bit, so each weight is split into
 * three bytes w = hi * 2^16 + mid * 2^8 + lo (lo, mid unsigned, hi signed) and the three products
 * are summed separately and recombined: the same int32 sum, bit for bit, as the CPU reference.
 * A band of 12 taps inside a k-chunk of 32 wastes most of each product; the tensor cores are fast
 * enough that it does not matter. What limits this kernel on an H100 is the issue of everything
 * around the mma (staging, index arithmetic, rounding, byte stores): tools/results/ has the
 * profile and the numbers.
 *
 * One block (8 warps) makes a TX x TY tile of the output:
 *   1. the input rows the tile's vertical filter reads are staged 16 at a time, channel planes
 *      apart (premultiplied when there is alpha): either with coalesced 32-bit loads into
 *      registers, the next 16 rows loaded while the tensor cores work on these (other resident
 *      blocks hide the wait), or, where few blocks fit an SM, by a cp.async pipeline that keeps
 *      two blocks of 16 rows in flight (mma_pick says which; one barrier per 16 rows);
 *   2. horizontal pass: per (16 rows, 8 outputs, channel) an m16n8 tile: A = the staged samples
 *      (16 rows x 32 inputs from the 8 outputs' first input, rounded down to 4), B = their weight
 *      band (32 x 8, staged per block, one byte plane per mma); rounded to 8 bits as the reference
 *      does, stored transposed (rows contiguous per output column) for the vertical pass;
 *   3. vertical pass: per (16 output rows, 8 columns, channel): A = the weight band (16 x 32),
 *      B = the intermediate (32 rows x 8 columns); rounded, unpremultiplied, written out with
 *      coalesced 32-bit stores.
 * Shared-memory strides are 16 mod 32 bytes so that the fragment loads hit 32 distinct banks.
 * It does not apply (rs_mma_applies; the row fails as unsupported, opt plans the CUDA-core kernel)
 * where the bands are too wide for RS_MMA_NK k-chunks (strong reductions), for 16-bit samples,
 * or for unaligned images.
 */
#include "resize_mma.cuh"
#include "variants.h"

#include <limits.h>

#define MMA_WARPS 8
#define MMA_THREADS (MMA_WARPS * 32)
#define MMA_PF 6 /* 4-pixel groups a thread prefetches per 16 staged rows (no pipeline) */
#define MMA_NS 3 /* blocks of 16 input rows in shared memory: two in flight, one in use */
#define MMA_SMEM_MAX (160 * 1024)
#define MMA_SMEM_THREE (74 * 1024) /* three blocks an SM */

/* ---------------------------------------------------------------- geometry (host and device) */

/* The first input of outputs [o0, o0 + n) (clipped to size), rounded down to 4, and the end of
 * their inputs; lo = INT_MAX when no output is in range. */
RS_HD void mma_band(const int *b, int o0, int n, int size, int *lo, int *hi)
{
    *lo = INT_MAX;
    *hi = 0;
    for (int i = o0; i < o0 + n && i < size; i++) {
        *lo = b[2 * i] < *lo ? b[2 * i] : *lo;
        *hi = b[2 * i] + b[2 * i + 1] > *hi ? b[2 * i] + b[2 * i + 1] : *hi;
    }
    if (*lo != INT_MAX)
        *lo &= ~3;
}

/* What a launch needs beyond rs_args: chunk counts, strides, shared-memory offsets. */
struct mma_geom {
    int nkh, nkv;  /* k-chunks per 8-column band (horizontal) and 16-row band (vertical) */
    int groups;    /* 4-pixel groups staged per input row */
    int wp;        /* bytes per staged row of one channel plane */
    int mr;        /* intermediate rows per output column */
    int os;        /* bytes per row of the output tile */
    int rb;        /* bytes per raw staged row (cp.async pipeline), 0 without it */
    size_t off_raw, off_mid, off_wh, off_wv, off_kb, smem;
};

static int round_bank(int n) /* up to a multiple of 16 that is 16 mod 32 */
{
    n = (n + 15) & ~15;
    return n % 32 ? n : n + 16;
}

/* Strides and offsets from the chunk counts, the widest staged window (input columns) and the
 * most intermediate rows of a tile; -1 when they do not fit the prefetch or shared memory. */
static int mma_layout(int C, int tx, int ty, int win, int rows, int pipe, mma_geom *g)
{
    g->groups = win / 4;
    if (g->nkh > RS_MMA_NK || g->nkv > RS_MMA_NK || 16 * g->groups > MMA_PF * MMA_THREADS)
        return -1;
    g->wp = round_bank(win);
    g->mr = round_bank(rows);
    g->os = tx * C + 4;
    g->rb = pipe ? 16 * ((12 + win * C + 15) / 16) : 0; /* from 16-byte aligned chunks */
    g->off_raw = 2 * (size_t)C * 16 * g->wp;
    size_t in = g->off_raw + (size_t)MMA_NS * 16 * g->rb, out = (size_t)ty * g->os;
    g->off_mid = ((in > out ? in : out) + 15) & ~(size_t)15;
    g->off_wh = g->off_mid + (((size_t)C * tx * g->mr + 15) & ~(size_t)15);
    g->off_wv = g->off_wh + (size_t)(tx / 8) * g->nkh * 3 * 32 * 8;
    g->off_kb = g->off_wv + (size_t)(ty / 16) * g->nkv * 3 * 32 * 16;
    g->smem = g->off_kb + (size_t)(tx / 8 + ty / 16 + 8) * sizeof(int);
    return g->smem <= MMA_SMEM_MAX ? 0 : -1;
}

/* The geometry for tiles of tx x ty on this plan; -1 when the fast path does not fit. */
static int mma_geom_make(const rs_plan *p, int C, int tx, int ty, int pipe, mma_geom *g)
{
    const rs_coeffs *ch = p->ch, *cv = p->cv;
    int ow = ch->out_size, oh = cv->out_size, lo, hi;
    g->nkh = g->nkv = 0;
    for (int o = 0; o < ow; o += 8) {
        mma_band(ch->bounds, o, 8, ow, &lo, &hi);
        g->nkh = (hi - lo + 31) / 32 > g->nkh ? (hi - lo + 31) / 32 : g->nkh;
    }
    for (int o = 0; o < oh; o += 16) {
        mma_band(cv->bounds, o, 16, oh, &lo, &hi);
        g->nkv = (hi - lo + 31) / 32 > g->nkv ? (hi - lo + 31) / 32 : g->nkv;
    }
    if (g->nkh > RS_MMA_NK || g->nkv > RS_MMA_NK)
        return -1;
    int win = 0, rows = 0;
    for (int x0 = 0; x0 < ow; x0 += tx) { /* the widest staged window of a tile */
        int first = INT_MAX, end = 0;
        for (int q = x0; q < x0 + tx && q < ow; q += 8) {
            mma_band(ch->bounds, q, 8, ow, &lo, &hi);
            first = lo < first ? lo : first;
            end = lo + 32 * g->nkh > end ? lo + 32 * g->nkh : end;
        }
        win = end - first > win ? end - first : win;
    }
    for (int y0 = 0; y0 < oh; y0 += ty) { /* the most intermediate rows a tile reads or makes */
        int first = INT_MAX, end = 0, need = 0;
        for (int m = y0; m < y0 + ty && m < oh; m += 16) {
            mma_band(cv->bounds, m, 16, oh, &lo, &hi);
            first = lo < first ? lo : first;
            end = lo + 32 * g->nkv > end ? lo + 32 * g->nkv : end;
            need = hi > need ? hi : need;
        }
        int made = (need - first + 15) & ~15; /* the horizontal pass makes 16 rows at a time */
        int r = end - first > made ? end - first : made;
        rows = r > rows ? r : rows;
    }
    return mma_layout(C, tx, ty, win, rows, pipe, g);
}

/* ---------------------------------------------------------------- device helpers */


/* The three byte planes' sums recombined into Pillow's int32 sum, rounded to 8 bits. */
__device__ __forceinline__ unsigned mma_round(int lo, int mid, int hi)
{
    int v = mma_sum(lo + (1 << (RS_PREC8 - 1)), mid, hi);
    return (unsigned)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* Four consecutive inputs' weights for output o as three byte planes (mma_pack_planes). */
__device__ __forceinline__ void mma_planes(const int *b, const int *r, const int32_t *k, int ks,
                                           int size, int o, int i, unsigned pl[3])
{
    int w[4];
#pragma unroll
    for (int e = 0; e < 4; e++)
        w[e] = mma_weight(b, r, k, ks, size, o, i + e);
    mma_pack_planes(w, pl);
}

/* Four pixels' samples (C words as loaded) -> C words, one per channel plane, premultiplied. */
template <int C>
__device__ __forceinline__ void mma_planar(const unsigned w[C], unsigned pl[C])
{
    if (C == 1) {
        pl[0] = w[0];
    } else if (C == 3) {
        pl[0] = __byte_perm(__byte_perm(w[0], w[1], 0x0630), w[2], 0x5210);
        pl[1] = __byte_perm(__byte_perm(w[0], w[1], 0x0741), w[2], 0x6210);
        pl[2] = __byte_perm(__byte_perm(w[0], w[1], 0x0052), w[2], 0x7410);
    } else { /* 2 or 4 channels: the last is alpha */
#pragma unroll
        for (int c = 0; c < C; c++)
            pl[c] = 0;
#pragma unroll
        for (int p = 0; p < 4; p++) {
            unsigned s[C];
#pragma unroll
            for (int c = 0; c < C; c++)
                s[c] = (w[(p * C + c) / 4] >> (8 * ((p * C + c) % 4))) & 255u;
#pragma unroll
            for (int c = 0; c < C - 1; c++)
                s[c] = rs_premul(s[c], s[C - 1], 1);
#pragma unroll
            for (int c = 0; c < C; c++)
                pl[c] |= s[c] << (8 * p);
        }
    }
}

/* The C words of 4-pixel group j (pixels x0 + 4j ..) of input row y; zeros outside the image. */
template <int C>
__device__ __forceinline__ void mma_fetch(const rs_args &a, int y, int x, unsigned w[C])
{
    const unsigned char *row = a.in + (size_t)y * a.in_pitch;
    if (y < a.ih && x + 3 < a.iw) {
        const unsigned char *p = row + (size_t)x * C;
        if (C == 4) {
            uint4 v = __ldg((const uint4 *)p);
            w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
        } else if (C == 2) {
            uint2 v = __ldg((const uint2 *)p);
            w[0] = v.x, w[1] = v.y;
        } else {
#pragma unroll
            for (int i = 0; i < C; i++)
                w[i] = __ldg((const unsigned *)p + i);
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < C; i++)
        w[i] = 0;
    if (y >= a.ih)
        return;
#pragma unroll
    for (int i = 0; i < 4 * C; i++)
        if (x + i / C < a.iw)
            w[i / 4] |= (unsigned)row[(size_t)x * C + i] << (8 * (i % 4));
}

/* ---------------------------------------------------------------- the kernel */


template <int C, int TX, int TY, bool PIPE>
__global__ void __launch_bounds__(MMA_THREADS)
    resize_mma_kernel(rs_args a, mma_geom g)
{
#if __CUDA_ARCH__ >= 800
    constexpr int NQ = TX / 8, NM = TY / 16, RW = (TY + 31) / 32;
    static_assert(TX % 32 == 0 && TX <= 128 && TY % 16 == 0 && TY <= 128 &&
                      MMA_WARPS % NM == 0 && TX / 32 + RW <= MMA_WARPS,
                  "tile shape: whole warps of columns, a band of 16 rows per warp group");
    extern __shared__ __align__(16) unsigned char sm[];
    unsigned char *stage = sm;            /* [2][C][16][wp]: input rows, channel planes */
    unsigned char *raw = sm + g.off_raw;  /* PIPE: [MMA_NS][16][rb]: input rows as they are */
    unsigned char *tile = sm;             /* [TY][os]: the output tile (after the passes) */
    unsigned char *mid = sm + g.off_mid;  /* [C][TX][mr]: the intermediate, rows contiguous */
    uint2 *wh = (uint2 *)(sm + g.off_wh); /* [NQ][nkh][3][32]: B fragments, horizontal */
    uint4 *wv = (uint4 *)(sm + g.off_wv); /* [NM][nkv][3][32]: A fragments, vertical */
    int *kbh = (int *)(sm + g.off_kb);    /* [NQ]: first staged column of each 8-column band */
    int *kbv = kbh + NQ;                  /* [NM]: first intermediate row of each 16-row band */
    int *ends = kbv + NM;                 /* [RW]: the last input row + 1 of a warp's rows */
    int *base = ends + RW;                /* first input column, first input row, rows needed */

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, gq = lane >> 2, tg = lane & 3;
    const int ox0 = blockIdx.x * TX, oy0 = blockIdx.y * TY;

    /* bands: warps [0, TX/32) reduce 8 columns each, the next RW warps 16 rows each */
    if (warp < TX / 32 + RW) {
        int col = warp < TX / 32, w = col ? warp : warp - TX / 32;
        int o = (col ? ox0 : oy0) + w * 32 + lane;
        const int *b = col ? a.bh : a.bv;
        int size = col ? a.ow : a.oh, lo = INT_MAX, hi = 0;
        if (o < size && (col || o < oy0 + TY))
            lo = b[2 * o], hi = lo + b[2 * o + 1];
        int span = col ? 8 : 16;
        for (int s = 1; s < 32; s *= 2) {
            int l2 = __shfl_xor_sync(0xffffffffu, lo, s), h2 = __shfl_xor_sync(0xffffffffu, hi, s);
            if (s < span)
                lo = min(lo, l2);
            hi = max(hi, h2); /* over the whole warp: the rows the tile needs */
        }
        int i = (lane + w * 32) / span;
        if (lane % span == 0 && (col ? i < NQ : i < NM))
            (col ? kbh : kbv)[i] = lo == INT_MAX ? INT_MAX : lo & ~3;
        if (!col && lane == 0)
            ends[w] = hi;
    }
    __syncthreads();
    if (tid < 32) {
        int c0 = tid < NQ ? kbh[tid] : INT_MAX, r0 = tid < NM ? kbv[tid] : INT_MAX;
        int e = tid < RW ? ends[tid] : 0;
        for (int s = 1; s < 32; s *= 2) {
            c0 = min(c0, __shfl_xor_sync(0xffffffffu, c0, s));
            r0 = min(r0, __shfl_xor_sync(0xffffffffu, r0, s));
            e = max(e, __shfl_xor_sync(0xffffffffu, e, s));
        }
        if (tid < NQ && kbh[tid] == INT_MAX)
            kbh[tid] = c0; /* a band past the image: reads inside the window, weights 0 */
        if (tid < NM && kbv[tid] == INT_MAX)
            kbv[tid] = r0;
        if (tid == 0)
            base[0] = c0, base[1] = r0, base[2] = e;
    }
    __syncthreads();
    const int cbase = base[0], rbase = base[1];
    const int nst = (base[2] - rbase + 15) / 16; /* blocks of 16 intermediate rows */

    /* PIPE: the first MMA_NS blocks of input rows go in flight before the weights are built;
     * cp.async copies 16-byte chunks from the one below the window's first byte */
    const int off = (cbase * C) & 15, nch = g.rb / 16;
    const unsigned char *in0 = a.in + ((size_t)cbase * C - off);
    const int lim = a.iw * C - (cbase * C - off); /* chunks starting here or later: zeros */
    [[maybe_unused]] auto issue = [=](int st) {
        if (st < nst) {
            unsigned char *dst = raw + (size_t)(st % MMA_NS) * 16 * g.rb;
#pragma unroll 2
            for (int e = tid; e < 16 * nch; e += MMA_THREADS) {
                int r = e / nch, j = e % nch, y = rbase + 16 * st + r;
                bool ok = y < a.ih && 16 * j < lim;
                mma_cp16(dst + r * g.rb + 16 * j,
                         ok ? (const void *)(in0 + (size_t)y * a.in_pitch + 16 * j)
                            : (const void *)a.in,
                         ok ? 16 : 0);
            }
        }
        mma_cp_commit();
    };
    /* the raw rows of block st, 4-pixel groups -> channel planes (premultiplied) */
    [[maybe_unused]] auto planes = [=](int st) {
        const unsigned char *src = raw + (size_t)(st % MMA_NS) * 16 * g.rb + off;
        unsigned char *buf = stage + (size_t)(st & 1) * C * 16 * g.wp;
        for (int i = tid; i < 16 * g.groups; i += MMA_THREADS) {
            int r = i / g.groups, j = i % g.groups;
            unsigned w[C], pl[C];
#pragma unroll
            for (int c = 0; c < C; c++)
                w[c] = *(const unsigned *)(src + r * g.rb + 4 * C * j + 4 * c);
            mma_planar<C>(w, pl);
#pragma unroll
            for (int c = 0; c < C; c++)
                *(unsigned *)(buf + ((size_t)c * 16 + r) * g.wp + 4 * j) = pl[c];
        }
    };
    if constexpr (PIPE) {
        for (int st = 0; st < MMA_NS; st++)
            issue(st);
    }

    /* weight fragments: B (horizontal, 32 inputs x 8 outputs) and A (vertical, 16 x 32) */
#pragma unroll 2
    for (int e = tid; e < NQ * g.nkh * 64; e += MMA_THREADS) {
        int j = e & 1, l = (e >> 1) & 31, k = (e >> 6) % g.nkh, q = (e >> 6) / g.nkh;
        unsigned pl[3];
        mma_planes(a.bh, a.rh, a.kh, a.ksh, a.ow, ox0 + 8 * q + (l >> 2),
                   kbh[q] + 32 * k + (l & 3) * 4 + 16 * j, pl);
        unsigned *d = (unsigned *)(wh + (q * g.nkh + k) * 96 + l) + j;
#pragma unroll
        for (int p = 0; p < 3; p++)
            d[p * 64] = pl[p];
    }
#pragma unroll 4
    for (int e = tid; e < NM * g.nkv * 128; e += MMA_THREADS) {
        int j = e & 3, l = (e >> 2) & 31, k = (e >> 7) % g.nkv, m = (e >> 7) / g.nkv;
        unsigned pl[3];
        mma_planes(a.bv, a.rv, a.kv, a.ksv, a.oh, oy0 + 16 * m + (l >> 2) + 8 * (j & 1),
                   kbv[m] + 32 * k + (l & 3) * 4 + 16 * (j >> 1), pl);
        unsigned *d = (unsigned *)(wv + (m * g.nkv + k) * 96 + l) + j;
#pragma unroll
        for (int p = 0; p < 3; p++)
            d[p * 128] = pl[p];
    }
    /* rows the vertical pass reads but no output needs: zero (their weights are 0) */
    for (int i = tid; i < C * TX * (g.mr - 16 * nst) / 4; i += MMA_THREADS) {
        int per = (g.mr - 16 * nst) / 4;
        ((unsigned *)(mid + (size_t)(i / per) * g.mr + 16 * nst))[i % per] = 0;
    }

    /* ---- horizontal pass, 16 input rows at a time, the next ones in flight */
    [[maybe_unused]] unsigned pf[PIPE ? 1 : MMA_PF][C];
    [[maybe_unused]] const int items = 16 * g.groups;
    if constexpr (PIPE) {
        mma_cp_wait<MMA_NS - 1>();
        __syncthreads();
        planes(0);
    } else {
#pragma unroll
        for (int it = 0; it < MMA_PF; it++) {
            int i = tid + it * MMA_THREADS;
            if (i < items)
                mma_fetch<C>(a, rbase + i / g.groups, cbase + 4 * (i % g.groups), pf[it]);
        }
    }
    for (int s = 0; s < nst; s++) {
        unsigned char *buf = stage + (size_t)(s & 1) * C * 16 * g.wp;
        if constexpr (PIPE) {
            /* block s + 1 landed (own copies; the barrier: everyone's), block s - 1's raw
             * buffer is free for block s + MMA_NS - 1... s + MMA_NS */
            mma_cp_wait<MMA_NS - 2>();
            __syncthreads();
            issue(s + MMA_NS);
            if (s + 1 < nst)
                planes(s + 1);
        } else {
#pragma unroll
            for (int it = 0; it < MMA_PF; it++) {
                int i = tid + it * MMA_THREADS;
                if (i < items) {
                    unsigned pl[C];
                    mma_planar<C>(pf[it], pl);
#pragma unroll
                    for (int c = 0; c < C; c++)
                        *(unsigned *)(buf + ((size_t)c * 16 + i / g.groups) * g.wp +
                                      4 * (i % g.groups)) = pl[c];
                }
            }
            if (s + 1 < nst) {
#pragma unroll
                for (int it = 0; it < MMA_PF; it++) {
                    int i = tid + it * MMA_THREADS;
                    if (i < items)
                        mma_fetch<C>(a, rbase + 16 * (s + 1) + i / g.groups,
                                     cbase + 4 * (i % g.groups), pf[it]);
                }
            }
            __syncthreads();
        }
        for (int t = warp; t < C * NQ; t += MMA_WARPS) {
            int c = t / NQ, q = t % NQ;
            if (ox0 + 8 * q >= a.ow)
                continue;
            int acc[3][4] = {};
            const unsigned char *src = buf + (size_t)c * 16 * g.wp + (size_t)gq * g.wp +
                                       (kbh[q] - cbase) + 4 * tg;
            const uint2 *wb = wh + q * g.nkh * 96 + lane;
            for (int k = 0; k < g.nkh; k++) {
                const unsigned char *p = src + 32 * k;
                unsigned a0 = *(const unsigned *)p, a1 = *(const unsigned *)(p + 8 * g.wp);
                unsigned a2 = *(const unsigned *)(p + 16),
                         a3 = *(const unsigned *)(p + 8 * g.wp + 16);
                uint2 b0 = wb[k * 96], b1 = wb[k * 96 + 32], b2 = wb[k * 96 + 64];
                mma_uu(acc[0], a0, a1, a2, a3, b0.x, b0.y);
                mma_uu(acc[1], a0, a1, a2, a3, b1.x, b1.y);
                mma_us(acc[2], a0, a1, a2, a3, b2.x, b2.y);
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
                mid[(size_t)(c * TX + 8 * q + 2 * tg + (i & 1)) * g.mr + 16 * s + gq +
                    8 * (i >> 1)] = (unsigned char)mma_round(acc[0][i], acc[1][i], acc[2][i]);
        }
    }
    if constexpr (PIPE)
        mma_cp_wait<0>(); /* nothing is left in flight (the last groups are empty) */
    __syncthreads();

    /* ---- vertical pass: the warp's 16-row band is fixed (NM divides the warp count) */
    for (int t = warp; t < NM * C * NQ; t += MMA_WARPS) {
        int m = t % NM, c = (t / NM) / NQ, q = (t / NM) % NQ;
        if (oy0 + 16 * m >= a.oh || ox0 + 8 * q >= a.ow)
            continue;
        int acc[3][4] = {};
        const unsigned char *src =
            mid + (size_t)(c * TX + 8 * q + gq) * g.mr + (kbv[m] - rbase) + 4 * tg;
        const uint4 *wa = wv + m * g.nkv * 96 + lane;
        for (int k = 0; k < g.nkv; k++) {
            unsigned b0 = *(const unsigned *)(src + 32 * k),
                     b1 = *(const unsigned *)(src + 32 * k + 16);
            uint4 w0 = wa[k * 96], w1 = wa[k * 96 + 32], w2 = wa[k * 96 + 64];
            mma_uu(acc[0], w0.x, w0.y, w0.z, w0.w, b0, b1);
            mma_uu(acc[1], w1.x, w1.y, w1.z, w1.w, b0, b1);
            mma_su(acc[2], w2.x, w2.y, w2.z, w2.w, b0, b1);
        }
#pragma unroll
        for (int i = 0; i < 4; i++)
            tile[(size_t)(16 * m + gq + 8 * (i >> 1)) * g.os + (8 * q + 2 * tg + (i & 1)) * C + c] =
                (unsigned char)mma_round(acc[0][i], acc[1][i], acc[2][i]);
    }
    __syncthreads();

    /* ---- the tile out: unpremultiplied, 32-bit stores along each row */
    const int nx = min(TX, a.ow - ox0), ny = min(TY, a.oh - oy0);
    if (C == 2 || C == 4) {
        for (int i = tid; i < ny * nx; i += MMA_THREADS) {
            unsigned char *px = tile + (size_t)(i / nx) * g.os + (i % nx) * C;
            const unsigned al = px[C - 1], r = mma_unpremul_rcp(al);
#pragma unroll
            for (int c = 0; c < C - 1; c++)
                px[c] = (unsigned char)mma_unpremul_r(px[c], al, r);
        }
        __syncthreads();
    }
    const int rb = nx * C, words = (rb + 3) / 4;
    for (int i = tid; i < ny * words; i += MMA_THREADS) {
        int y = i / words, w = i % words;
        unsigned char *dst = a.out + (size_t)(oy0 + y) * a.out_pitch + (size_t)ox0 * C + 4 * w;
        const unsigned char *src = tile + (size_t)y * g.os + 4 * w;
        if (4 * w + 4 <= rb) {
            *(unsigned *)dst = *(const unsigned *)src;
        } else {
            for (int b = 0; 4 * w + b < rb; b++)
                dst[b] = src[b];
        }
    }
#endif
}

/* ---------------------------------------------------------------- launch */

template <int C, int TX, int TY, bool PIPE>
static ts_status mma_launch(const rs_plan *p, const ts_job *job, int *done,
                            size_t smem_max = MMA_SMEM_MAX)
{
    mma_geom g;
    if (mma_geom_make(p, C, TX, TY, PIPE, &g) != 0 || g.smem > smem_max)
        return TS_OK; /* not done: the caller falls back */
    const rs_args &a = p->a;
    dim3 grid(gpu_div_up((size_t)a.ow, TX), gpu_div_up((size_t)a.oh, TY));
    if (grid.y > 65535)
        return TS_OK;
    ts_status st = gpu_allow_smem((const void *)resize_mma_kernel<C, TX, TY, PIPE>, g.smem);
    if (st != TS_OK)
        return st;
    resize_mma_kernel<C, TX, TY, PIPE><<<grid, MMA_THREADS, g.smem, job->stream>>>(a, g);
    LAUNCH_CHECK("resize_mma_kernel");
    *done = 1;
    return TS_OK;
}

/* The tile (measured on an H100, tools/results/nvidia-h100-resize.md). Without the cp.async
 * pipeline a block waits for each 16 rows it loads; three resident blocks an SM hide that, and
 * 64 x 32 without the pipeline was the fastest for 8K -> 4K (2x). A stronger reduction makes
 * the intermediate taller and leaves room for fewer blocks: then the 32 x 32 tile with the
 * pipeline was (8K -> 1080p, 4x). On the `mma` row, job->param 1..5 (3 channels) pick the
 * shapes the benchmark compared: 64x32, 32x64, 128x32, 32x32 pipelined, 64x32 not. */
template <int C>
static ts_status mma_pick(const rs_plan *p, const ts_job *job, int *done)
{
    if constexpr (C == 3) {
        switch (job->param) {
        case 1: return mma_launch<C, 64, 32, true>(p, job, done);
        case 2: return mma_launch<C, 32, 64, true>(p, job, done);
        case 3: return mma_launch<C, 128, 32, true>(p, job, done);
        case 4: return mma_launch<C, 32, 32, true>(p, job, done);
        case 5: return mma_launch<C, 64, 32, false>(p, job, done);
        default: break;
        }
    }
    ts_status st = mma_launch<C, 64, 32, false>(p, job, done, MMA_SMEM_THREE);
    if (st != TS_OK || *done)
        return st;
    return mma_launch<C, 32, 32, true>(p, job, done);
}

/* Whether the tile tx x ty fits, from bounds on the tables: n outputs' inputs span at most
 * ceil((n - 1) * scale) + ksize + 2 (rs_coeffs_make), the rounding down to 4 adds 3. */
static int mma_fits_bound(const ts_job *job, int tx, int ty, int pipe, size_t smem_max)
{
    int iw = job->in.width, ih = job->in.height, ow = job->out.width, oh = job->out.height;
    ts_resize_filter f = job->op->resize.filter;
    int ksh = rs_coeffs_ksize(iw, ow, f), ksv = rs_coeffs_ksize(ih, oh, f);
    if (!ksh || !ksv || (oh + ty - 1) / ty > 65535)
        return 0;
    mma_geom g;
    g.nkh = rs_mma_chunks_bound(iw, ow, ksh, 8);
    g.nkv = rs_mma_chunks_bound(ih, oh, ksv, 16);
    int win = (int)ceil((double)(tx - 8) * iw / ow) + 8 + 32 * g.nkh;
    int rows = (int)ceil((double)(ty - 16) * ih / oh) + 8 + 32 * g.nkv;
    return mma_layout(job->in.channels, tx, ty, (win + 3) & ~3, rows, pipe, &g) == 0 &&
           g.smem <= smem_max;
}

/* Whether mma_pick's default takes the job (resize_opt_supports: no tables yet). */
int rs_mma_fits(const ts_job *job)
{
    return rs_mma_usable(job) && (mma_fits_bound(job, 64, 32, 0, MMA_SMEM_THREE) ||
                                  mma_fits_bound(job, 32, 32, 1, MMA_SMEM_MAX));
}

int rs_mma_usable(const ts_job *job)
{
    const ts_image *in = &job->in, *out = &job->out;
    return in->bytes == 1 && (!job->dev || job->dev->cc >= 80) && in->pitch % 16 == 0 &&
           (uintptr_t)in->data % 16 == 0 && out->pitch % 4 == 0 && (uintptr_t)out->data % 4 == 0;
}

ts_status rs_mma_run(const rs_plan *p, const ts_job *job, int *done)
{
    *done = 0;
    if (!rs_mma_usable(job) || !job->dev)
        return TS_OK;
    switch (job->in.channels) {
    case 1: return mma_pick<1>(p, job, done);
    case 2: return mma_pick<2>(p, job, done);
    case 3: return mma_pick<3>(p, job, done);
    default: return mma_pick<4>(p, job, done);
    }
}

/* Whether mma_pick's default takes the planned job: a tile whose bands and shared memory fit. */
int rs_mma_applies(const rs_plan *p, const ts_job *job)
{
    if (!rs_mma_usable(job) || !job->dev)
        return 0;
    const int C = job->in.channels;
    mma_geom g;
    if ((p->a.oh + 31) / 32 > 65535)
        return 0;
    return (mma_geom_make(p, C, 64, 32, 0, &g) == 0 && g.smem <= MMA_SMEM_THREE) ||
           (mma_geom_make(p, C, 32, 32, 1, &g) == 0 && g.smem <= MMA_SMEM_MAX);
}

/* ---------------------------------------------------------------- the mma row */

static ts_status mma_row_launch(rs_plan *p, const ts_job *job)
{
    int done = 0;
    ts_status st = rs_plan_upload(p, job);
    if (st == TS_OK)
        st = rs_mma_run(p, job, &done);
    if (st == TS_OK && !done)
        return ts_fail(TS_ERR_UNSUPPORTED, "resize mma: its bands do not hold %dx%d -> %dx%d",
                       p->a.iw, p->a.ih, p->a.ow, p->a.oh);
    return st;
}

extern "C" int resize_mma_supports(const ts_job *job)
{
    return job->op->resize.mode == TS_RESIZE_CROP ||
           (job->out.width == job->in.width && job->out.height == job->in.height) ||
           rs_mma_fits(job);
}

extern "C" ts_status resize_mma(const ts_job *job) { return rs_run(job, mma_row_launch); }
