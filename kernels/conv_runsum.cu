/* conv_runsum.cu - convolution, variant `runsum`: box filters (every weight 1, any divisor: box:K
 * and kernel files of ones) by running sums, a constant cost per output sample whatever K (see
 * conv.cu for the op).
 *
 * Trick: a box sum is a column sum of K rows summed over K columns, and both sums slide. A block
 * owns a vertical strip of P output pixels (P + 2r staged, 4 samples a thread, 1024 samples in
 * all) and walks a segment of rows down it, G rows at a time:
 *   - column pass: each thread keeps the column sums of its 4 samples in registers and moves them
 *     down a row by adding the entering input row (y + r) and subtracting the leaving one
 *     (y - r - 1, read K + 1 rows earlier by this block). 8-bit input on 16-byte aligned rows
 *     (sm_80) takes the pair path below (RGB at K <= 25 with the multiply-high rounding its
 *     double-buffered kernel, RGBA at K >= 17 the ring path): the rows come through a cp.async
 *     ring in shared memory, one group ahead; 16-bit and unaligned rows load from global memory,
 *     a group's 2G loads issued one group ahead, during the row pass of the group before. 8-bit
 *     sums are packed two to a register (16-bit lanes: K * 255 < 2^16, and a lane never borrows,
 *     its sum holding the leaving sample), so a word of 4 samples costs two adds; the G rows of
 *     sums go to shared memory (u16 for 8-bit input, else u32) with one 8- or 16-byte store;
 *   - row pass: a thread takes 16 consecutive pixels (8 on RGBA) of one buffered row (all colour
 *     channels) and slides a window of K column sums along them: one add and one subtract an
 *     output after the first window, every shared-memory offset a compile-time constant from two
 *     base addresses;
 *   - the epilogue is the reference's rounding, half to even (km_round_sat_i); for box:K (odd
 *     divisor K^2 >= the taps: no tie, no saturation) a multiply-high and a shift
 *     (conv_math.h's magic number), else conv_div_round_sat;
 *   - the run's outputs are packed in registers and written with 16-byte stores (alpha samples, of
 *     channel C - 1 of 2 or 4, merged from the input's same 16 bytes).
 * Rows and columns outside the image are the clamped ones (border replicate): a column sum of a
 * sample past a side is that of the replicated pixel, and the sliding sums add and subtract the
 * clamped rows, so the sum stays the reference's. Sums stay exact in 32 bits (31 * 31 * 65535 <
 * 2^31). Segments of `hs` rows (job->param, else rs_launch's and rr_launch's defaults) start
 * with a full K-row column sum.
 *
 * Shared-memory banks: buffer rows of 1028 elements (514 or 1028 words: rows 2 or 4 banks apart)
 * and consecutive threads on consecutive rows keep the row pass at 2-way conflicts or fewer.
 *
 * Layout: interleaved samples (u8 or u16); 16-byte aligned rows take the vector loads and stores,
 * others (and the strip's last partial run) go sample by sample.
 */
#include "conv_common.cuh"

#define RS_THREADS 256
#define RS_VS 4                    /* samples a thread owns in the column pass */
#define RS_NS (RS_THREADS * RS_VS) /* staged samples per strip row */
#define RS_BP 1028                 /* buffer row pitch, elements */

/* Pixels a thread takes in the row pass: 16, 8 on 4 channels (the registers of its outputs);
 * whole 16-byte chunks either way. */
static __host__ __device__ constexpr int rs_run(int ch) { return ch == 4 ? 8 : 16; }
/* Blocks an SM must hold (the register cap): 4 (64 registers, no spill) on gray 8-bit, whose
 * short rows need the most blocks in flight; elsewhere what the registers give (2-3). */
static __host__ __device__ constexpr int rs_min_blocks(int bytes, int ch)
{
    return bytes == 1 && ch == 1 ? 4 : 1;
}
/* Rows a group: enough row-pass jobs (rows x runs) for the block's 256 threads. */
static __host__ __device__ constexpr int rs_group(int bytes, int ch)
{
    return ch == 1 || ch == 4 ? 8 : ch == 3 ? 12 : bytes == 1 ? 16 : 8;
}

/* Output pixels per strip: the staged samples hold P + 2r pixels and up to 3 samples of alignment,
 * P a multiple of 16 so that every strip and run starts 16-byte aligned (and runs tile it). */
static int rs_strip_pixels(int r, int ch) { return (RS_NS - 3 - 2 * r * ch) / ch / 16 * 16; }

static size_t rs_smem(int bytes, int g) { return (size_t)g * RS_BP * (bytes == 1 ? 2 : 4); }

/* A thread's 4 samples, as loaded: one u32 (B = 1) or two (B = 2). */
template <int B> struct rs_vec {
    uint32_t w[B];
};

/* The 4 samples of a row wholly inside it, 16-byte aligned rows (the fast path). */
template <int B> __device__ __forceinline__ rs_vec<B> rs_load_in(const unsigned char *src)
{
    rs_vec<B> v;
    if constexpr (B == 1) {
        v.w[0] = __ldg((const unsigned int *)src);
    } else {
        const uint2 u = __ldg((const uint2 *)src);
        v.w[0] = u.x;
        v.w[B - 1] = u.y;
    }
    return v;
}

/* The samples [q0, q0 + 4) of row y for any q0, sample by sample, clamped into the row. */
template <int B, int CH>
__device__ __forceinline__ rs_vec<B> rs_load_any(const conv_params &p, int y, int q0)
{
    const unsigned char *src = p.in + (size_t)y * p.in_pitch;
    rs_vec<B> v;
#pragma unroll
    for (int i = 0; i < B; i++)
        v.w[i] = 0;
#pragma unroll
    for (int j = 0; j < RS_VS; j++) {
        const int q = q0 + j, x = conv_floor_div(q, CH), c = q - x * CH;
        const uint32_t s = conv_ld<B>(src, min(max(x, 0), p.width - 1) * CH + c);
        if constexpr (B == 1)
            v.w[0] |= s << (8 * j);
        else
            v.w[j >> 1] |= s << (16 * (j & 1));
    }
    return v;
}

/* Column sums of a thread's 4 samples. B = 1: two registers of two 16-bit lanes, samples (0, 2)
 * and (1, 3); B = 2: one register a sample. */
template <int B> struct rs_cols {
    uint32_t s[B == 1 ? 2 : 4];
};

template <int B> __device__ __forceinline__ void rs_cols_clear(rs_cols<B> &c)
{
#pragma unroll
    for (int i = 0; i < (B == 1 ? 2 : 4); i++)
        c.s[i] = 0;
}

/* c += e - l (l: a row the sums hold, so no lane goes below zero). */
template <int B>
__device__ __forceinline__ void rs_cols_step(rs_cols<B> &c, const rs_vec<B> &e, const rs_vec<B> &l)
{
    if constexpr (B == 1) {
        c.s[0] += (e.w[0] & 0x00FF00FFu) - (l.w[0] & 0x00FF00FFu);
        c.s[1] += ((e.w[0] >> 8) & 0x00FF00FFu) - ((l.w[0] >> 8) & 0x00FF00FFu);
    } else {
#pragma unroll
        for (int j = 0; j < 4; j++)
            c.s[j] += ((e.w[j >> 1] >> (16 * (j & 1))) & 0xFFFFu) - ((l.w[j >> 1] >> (16 * (j & 1))) & 0xFFFFu);
    }
}

template <int B> __device__ __forceinline__ void rs_cols_add(rs_cols<B> &c, const rs_vec<B> &e)
{
    rs_vec<B> zero;
#pragma unroll
    for (int i = 0; i < B; i++)
        zero.w[i] = 0;
    rs_cols_step<B>(c, e, zero);
}

/* The 4 sums into buffer elements [4t, 4t + 4) of a row (8-byte aligned u16, 16-byte u32). */
template <int B> __device__ __forceinline__ void rs_cols_store(void *dst, const rs_cols<B> &c)
{
    if constexpr (B == 1)
        *(uint2 *)dst = make_uint2(__byte_perm(c.s[0], c.s[1], 0x5410u), __byte_perm(c.s[0], c.s[1], 0x7632u));
    else
        *(uint4 *)dst = make_uint4(c.s[0], c.s[1], c.s[2], c.s[3]);
}

/* The rounding of a sum a: FD (odd divisor d >= the taps: a in [0, maxv d], no tie) is
 * floor((2a + d) / 2d) by conv_div's multiply-high; else conv_div_round_sat. */
template <bool FD>
__device__ __forceinline__ uint32_t rs_finish(const conv_div &dv, int maxv, uint32_t a)
{
    if constexpr (FD)
        return __umulhi(2u * a + (uint32_t)dv.d, dv.m) >> dv.shift;
    else
        return conv_div_round_sat((int64_t)a, &dv, maxv);
}

/* Alpha bits of word w of a run's packed outputs (channel C - 1 of 2 or 4; 0 otherwise). */
template <int B, int CH> __device__ __forceinline__ constexpr uint32_t rs_amask(int w)
{
    if constexpr (CH == 2)
        return B == 1 ? 0xFF00FF00u : 0xFFFF0000u;
    else if constexpr (CH == 4)
        return B == 1 ? 0xFF000000u : (w & 1) ? 0xFFFF0000u : 0u;
    else
        return 0u;
}

template <int B, int CH, int G, bool FD>
__global__ void __launch_bounds__(RS_THREADS, rs_min_blocks(B, CH))
    conv_runsum_kernel(const __grid_constant__ conv_params p, int P, int hs, int nx, long long ntiles)
{
    typedef typename std::conditional<B == 1, uint16_t, uint32_t>::type CS;
    constexpr int CF = (CH == 2 || CH == 4) ? CH - 1 : CH; /* filtered channels */
    constexpr int RUN = rs_run(CH);                      /* pixels a run */
    constexpr int NOW = RUN * CH * B / 4;                /* output words of a run */
    extern __shared__ __align__(16) unsigned char conv_smem[];
    CS *buf = (CS *)conv_smem; /* G rows x RS_BP */
    const int t = threadIdx.x, r = p.r, k = p.k, maxv = p.maxv;
    const conv_div dv = p.div;

    for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const int x0 = (int)(tile % nx) * P, y0 = (int)(tile / nx) * hs;
        const int y1 = min(y0 + hs, p.height), np = min(P, p.width - x0);
        const int qs = (x0 - r) * CH, a0 = conv_floor_div(qs, RS_VS) * RS_VS, off = qs - a0;
        const int nw = (off + (np + 2 * r) * CH + RS_VS - 1) / RS_VS; /* <= RS_THREADS */
        const int jpr = (np + RUN - 1) / RUN;                   /* runs a row */
        const int q0 = a0 + RS_VS * t;
        const bool col = t < nw, fast = p.vec_ok && q0 >= 0 && q0 + RS_VS <= p.wch;
        const unsigned char *cin = p.in + (size_t)max(q0, 0) * B; /* this thread's column */
        CS *cdst = buf + RS_VS * t;

        /* the column sums of row y0 - 1 */
        rs_cols<B> cs;
        rs_cols_clear<B>(cs);
        if (col)
            for (int d = -r; d <= r; d++) {
                const int y = min(max(y0 - 1 + d, 0), p.height - 1);
                rs_cols_add<B>(cs, fast ? rs_load_in<B>(cin + (size_t)y * p.in_pitch)
                                        : rs_load_any<B, CH>(p, y, q0));
            }

        /* the fast path's loads run one group ahead: a group's 2G rows are issued before the
         * row pass of the group before, so that pass hides their latency */
        rs_vec<B> e[G], l[G];
        auto load_group = [&](int yg) {
#pragma unroll
            for (int g = 0; g < G; g++)
                if (yg + g < y1) {
                    const int y = yg + g;
                    e[g] = rs_load_in<B>(cin + (size_t)min(y + r, p.height - 1) * p.in_pitch);
                    l[g] = rs_load_in<B>(cin + (size_t)max(y - r - 1, 0) * p.in_pitch);
                }
        };
        if (col && fast)
            load_group(y0);
        for (int yg = y0; yg < y1; yg += G) {
            const int ng = min(G, y1 - yg);
            if (col && fast) { /* column pass: rows yg .. yg + ng - 1 into the buffer */
#pragma unroll
                for (int g = 0; g < G; g++)
                    if (g < ng) {
                        rs_cols_step<B>(cs, e[g], l[g]);
                        rs_cols_store<B>(cdst + g * RS_BP, cs);
                    }
            } else if (col) { /* the strip's sides and unaligned rows */
#pragma unroll 1
                for (int g = 0; g < ng; g++) {
                    const int y = yg + g;
                    rs_cols_step<B>(cs, rs_load_any<B, CH>(p, min(y + r, p.height - 1), q0),
                                    rs_load_any<B, CH>(p, max(y - r - 1, 0), q0));
                    rs_cols_store<B>(cdst + g * RS_BP, cs);
                }
            }
            __syncthreads();
            if (col && fast && yg + G < y1)
                load_group(yg + G);

            /* row pass: job j -> row g = j mod G, run j / G (neighbouring threads on
             * neighbouring rows: fewer bank conflicts) */
            for (int j = t; j < G * jpr; j += RS_THREADS) {
                const int g = j % G, run = j / G;
                if (g >= ng)
                    continue;
                const int i0 = run * RUN, y = yg + g;
                const CS *lv = buf + g * RS_BP + off + i0 * CH; /* pixel x0 + i0 - r, leaving */
                const CS *en = lv + k * CH;                       /* pixel x0 + i0 + r + 1, entering */
                uint32_t acc[CF];
#pragma unroll
                for (int c = 0; c < CF; c++)
                    acc[c] = 0;
#pragma unroll 4
                for (int i = 0; i < k; i++)
#pragma unroll
                    for (int c = 0; c < CF; c++)
                        acc[c] += lv[i * CH + c];
                uint32_t o[NOW];
#pragma unroll
                for (int w = 0; w < NOW; w++)
                    o[w] = 0;
#pragma unroll
                for (int i = 0; i < RUN; i++) {
#pragma unroll
                    for (int c = 0; c < CF; c++) {
                        const int s = i * CH + c, w = s * B / 4, sh = (s * B % 4) * 8;
                        o[w] |= rs_finish<FD>(dv, maxv, acc[c]) << sh;
                        if (i + 1 < RUN)
                            acc[c] += (uint32_t)en[i * CH + c] - (uint32_t)lv[i * CH + c];
                    }
                }
                unsigned char *orow = p.out + (size_t)y * p.out_pitch + (size_t)(x0 + i0) * CH * B;
                const unsigned char *irow = p.in + (size_t)y * p.in_pitch + (size_t)(x0 + i0) * CH * B;
                if (p.vec_ok && i0 + RUN <= np) { /* 16-byte stores, alpha merged from the input */
#pragma unroll
                    for (int v = 0; v < NOW / 4; v++) {
                        uint4 q = make_uint4(o[4 * v], o[4 * v + 1], o[4 * v + 2], o[4 * v + 3]);
                        if constexpr (CF < CH) {
                            const uint4 a = __ldg((const uint4 *)irow + v);
                            q.x |= a.x & rs_amask<B, CH>(4 * v);
                            q.y |= a.y & rs_amask<B, CH>(4 * v + 1);
                            q.z |= a.z & rs_amask<B, CH>(4 * v + 2);
                            q.w |= a.w & rs_amask<B, CH>(4 * v + 3);
                        }
                        ((uint4 *)orow)[v] = q;
                    }
                } else { /* sample by sample, up to the strip's last pixel */
                    const int ns = (min(i0 + RUN, np) - i0) * CH;
#pragma unroll
                    for (int s = 0; s < RUN * CH; s++) /* unrolled: o stays in registers */
                        if (s < ns) {
                            uint32_t v = (o[s * B / 4] >> ((s * B % 4) * 8)) & (B == 1 ? 0xFFu : 0xFFFFu);
                            if (CF < CH && s % CH == CH - 1)
                                v = conv_ld<B>(irow, s);
                            conv_st<B>(orow, s, v);
                        }
                }
            }
            __syncthreads(); /* the next column pass overwrites the buffer */
        }
    }
}

/* ---------------------------------------------------------------- the ring path (8-bit, sm_80)
 * RGBA at K >= 17 (the pair path below takes the other 8-bit jobs). The same column and row
 * passes, with the input rows coming through a ring of RR rows of the strip in shared memory,
 * filled by cp.async (16-byte chunks, no registers held) RR_D groups ahead, so a group's loads fly
 * while the group before is summed; the leaving row of a column sum is read back from the ring
 * instead of L1/L2. Each thread copies one 16-byte chunk of every fourth row (its address work
 * hoisted out of the rows), and the column pass of the strip's inner threads is a plain 32-bit
 * shared load per row. Virtual row v (y0 - r - 1 ... y1 - 1 + r, clamped into the image when
 * copied) sits in slot (v - y0 + r + 1) mod RR; the strip's staged bytes start 16-byte aligned at
 * a0 (off = 0..15 bytes before the first needed sample); chunks outside the image row are not
 * copied, and the threads at the image's sides read the clamped sample's byte instead. One group
 * in flight and 3 blocks an SM (80 registers, no spill on the box path; the ring and buffer are 64
 * KB at K = 15 on RGB): more warps to hide the shared-memory and barrier waits, the kernel being
 * bound by issue latency, not by DRAM (tools/results/nvidia-h100-box-2026-11-27.md). */
/* Ring rows: the rows a column pass reads (its group, K + G), and D groups loading. */
static int rr_rows(int k, int g, int d) { return (d + 1) * g + k; }
static size_t rr_smem(int k, int g, int d)
{
    return (size_t)rr_rows(k, g, d) * RS_NS + (size_t)g * RS_BP * 2;
}
#define RR_SEG 96 /* default segment rows */
static int rr_strip_pixels(int r, int ch) { return (RS_NS - 15 - 2 * r * ch) / ch / 16 * 16; }

/* One thread's part of a strip's ring (RR slots of RS_NS bytes; the staged bytes of a row start
 * 16-byte aligned at a0, nch chunks): copying rows in and reading its 4 samples back. */
template <int CH> struct rr_ring {
    const conv_params &p;
    const unsigned char *ring;
    int RR, t, a0, q0, nbytes;
    bool fast, cvalid;
    const unsigned char *csrc;
    uint32_t cdst;

    /* this thread copies chunk t mod 64 (16 bytes at b) of a row; chunks past the strip or outside
     * the image row are not copied, the one across the row's end is zero-filled past it */
    __device__ __forceinline__ rr_ring(const conv_params &p_, unsigned char *ring_, int RR_, int t_, int a0_,
                                       int nch, int q0_, bool fast_)
        : p(p_), ring(ring_), RR(RR_), t(t_), a0(a0_), q0(q0_), fast(fast_)
    {
        const int cc = t & 63, b = a0 + 16 * cc;
        cvalid = cc < nch && b >= 0 && b < p.wch;
        nbytes = min(16, p.wch - b);
        csrc = p.in + b;
        cdst = (uint32_t)__cvta_generic_to_shared(ring_) + 16 * cc;
    }

    /* rows [v, v + n) (clamped into the image) into slots from s, wrapping: this thread's chunk of
     * rows t / 64, t / 64 + 4, ... */
    __device__ __forceinline__ void issue(int v, int n, int s) const
    {
        if (cvalid)
            for (int i = t >> 6; i < n; i += RS_THREADS / 64) {
                int sl = s + i;
                sl = sl >= RR ? sl - RR : sl;
                const int y = min(max(v + i, 0), p.height - 1);
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(cdst + sl * RS_NS),
                             "l"(csrc + (size_t)y * p.in_pitch), "r"(nbytes)
                             : "memory");
            }
    }

    /* the 4 samples of this thread from ring slot sl (the image's sides: the clamped samples) */
    __device__ __forceinline__ rs_vec<1> word(int sl) const
    {
        rs_vec<1> v;
        const unsigned char *row = ring + (size_t)sl * RS_NS;
        if (fast) {
            v.w[0] = *(const uint32_t *)(row + RS_VS * t);
        } else {
            v.w[0] = 0;
#pragma unroll
            for (int j = 0; j < RS_VS; j++) {
                const int q = q0 + j, x = conv_floor_div(q, CH), c = q - x * CH;
                v.w[0] |= (uint32_t)row[min(max(x, 0), p.width - 1) * CH + c - a0] << (8 * j);
            }
        }
        return v;
    }
};

template <int CH, int G, bool FD, int RR_D, int MINB>
__global__ void __launch_bounds__(RS_THREADS, MINB)
    conv_runsum_ring_kernel(const __grid_constant__ conv_params p, int P, int hs, int nx, long long ntiles, int RR)
{
#if __CUDA_ARCH__ >= 800
    constexpr int B = 1;
    typedef uint16_t CS;
    constexpr int CF = (CH == 2 || CH == 4) ? CH - 1 : CH;
    constexpr int RUN = rs_run(CH);
    constexpr int NOW = RUN * CH * B / 4;
    extern __shared__ __align__(16) unsigned char conv_smem[];
    unsigned char *ring = conv_smem;               /* RR rows x RS_NS bytes */
    CS *buf = (CS *)(conv_smem + (size_t)RR * RS_NS); /* G rows x RS_BP */
    const int t = threadIdx.x, r = p.r, k = p.k, maxv = p.maxv;
    const conv_div dv = p.div;

    for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const int x0 = (int)(tile % nx) * P, y0 = (int)(tile / nx) * hs;
        const int y1 = min(y0 + hs, p.height), np = min(P, p.width - x0);
        const int qs = (x0 - r) * CH, a0 = conv_floor_div(qs, 16) * 16, off = qs - a0;
        const int nb = off + (np + 2 * r) * CH;      /* staged bytes, <= RS_NS */
        const int nw = (nb + RS_VS - 1) / RS_VS;     /* column-pass threads */
        const int nch = (nb + 15) / 16;              /* 16-byte chunks a row */
        const int jpr = (np + RUN - 1) / RUN;
        const int q0 = a0 + RS_VS * t;
        const bool col = t < nw, fast = q0 >= 0 && q0 + RS_VS <= p.wch;
        const int vb = y0 - r - 1; /* virtual row in slot 0 */

        const rr_ring<CH> rg(p, ring, RR, t, a0, nch, q0, fast);
        auto group_rows = [&](int n) { return max(0, min(G, y1 - y0 - n * G)); };

        /* the window of row y0 - 1 and group 0's entering rows, then groups 1 .. RR_D - 1 */
        rg.issue(vb, k + group_rows(0), 0);
        conv_cp_commit();
#pragma unroll
        for (int d = 1; d < RR_D; d++) {
            rg.issue(y0 + d * G + r, group_rows(d), d * G + k);
            conv_cp_commit();
        }

        rs_cols<B> cs;
        rs_cols_clear<B>(cs);
        int rb = 0; /* slot of group n's first leaving row: n G mod RR */
        for (int n = 0, yg = y0; yg < y1; n++, yg += G) {
            const int ng = min(G, y1 - yg);
            conv_cp_wait<RR_D - 1>(); /* group n's rows have landed (this thread's copies) */
            __syncthreads();          /* everyone's; the buffer's last row pass is done */
            if (n == 0 && col)
                for (int i = 0; i < k; i++)
                    rs_cols_add<B>(cs, rg.word(i));
            {
                int s = rb + RR_D * G + k;
                s = s >= RR ? s - RR : s;
                rg.issue(yg + RR_D * G + r, group_rows(n + RR_D), s);
                conv_cp_commit();
            }
            if (col && fast) { /* column pass: rows yg .. yg + ng - 1 into the buffer */
                const uint32_t *wl = (const uint32_t *)ring + t;
#pragma unroll
                for (int g = 0; g < G; g++)
                    if (g < ng) {
                        int sl = rb + g, se = rb + g + k;
                        sl = sl >= RR ? sl - RR : sl;
                        se = se >= RR ? se - RR : se;
                        rs_vec<B> e, l;
                        e.w[0] = wl[se * (RS_NS / 4)];
                        l.w[0] = wl[sl * (RS_NS / 4)];
                        rs_cols_step<B>(cs, e, l);
                        rs_cols_store<B>(buf + RS_VS * t + g * RS_BP, cs);
                    }
            } else if (col) { /* the strip's sides: the clamped samples */
#pragma unroll 1
                for (int g = 0; g < ng; g++) {
                    int sl = rb + g, se = rb + g + k;
                    sl = sl >= RR ? sl - RR : sl;
                    se = se >= RR ? se - RR : se;
                    rs_cols_step<B>(cs, rg.word(se), rg.word(sl));
                    rs_cols_store<B>(buf + RS_VS * t + g * RS_BP, cs);
                }
            }
            rb += G;
            rb = rb >= RR ? rb - RR : rb;
            __syncthreads();

            for (int j = t; j < G * jpr; j += RS_THREADS) {
                const int g = j % G, run = j / G;
                if (g >= ng)
                    continue;
                const int i0 = run * RUN, y = yg + g;
                const CS *lv = buf + g * RS_BP + off + i0 * CH;
                const CS *en = lv + k * CH;
                uint32_t acc[CF];
#pragma unroll
                for (int c = 0; c < CF; c++)
                    acc[c] = 0;
#pragma unroll 4
                for (int i = 0; i < k; i++)
#pragma unroll
                    for (int c = 0; c < CF; c++)
                        acc[c] += lv[i * CH + c];
                uint32_t o[NOW];
#pragma unroll
                for (int w = 0; w < NOW; w++)
                    o[w] = 0;
#pragma unroll
                for (int i = 0; i < RUN; i++) {
#pragma unroll
                    for (int c = 0; c < CF; c++) {
                        const int s = i * CH + c, w = s / 4, sh = (s % 4) * 8;
                        o[w] |= rs_finish<FD>(dv, maxv, acc[c]) << sh;
                        if (i + 1 < RUN)
                            acc[c] += (uint32_t)en[i * CH + c] - (uint32_t)lv[i * CH + c];
                    }
                }
                unsigned char *orow = p.out + (size_t)y * p.out_pitch + (size_t)(x0 + i0) * CH;
                const unsigned char *irow = p.in + (size_t)y * p.in_pitch + (size_t)(x0 + i0) * CH;
                if (i0 + RUN <= np) {
#pragma unroll
                    for (int v = 0; v < NOW / 4; v++) {
                        uint4 q = make_uint4(o[4 * v], o[4 * v + 1], o[4 * v + 2], o[4 * v + 3]);
                        if constexpr (CF < CH) {
                            const uint4 a = __ldg((const uint4 *)irow + v);
                            q.x |= a.x & rs_amask<B, CH>(4 * v);
                            q.y |= a.y & rs_amask<B, CH>(4 * v + 1);
                            q.z |= a.z & rs_amask<B, CH>(4 * v + 2);
                            q.w |= a.w & rs_amask<B, CH>(4 * v + 3);
                        }
                        ((uint4 *)orow)[v] = q;
                    }
                } else {
                    const int ns = (min(i0 + RUN, np) - i0) * CH;
#pragma unroll
                    for (int s = 0; s < RUN * CH; s++)
                        if (s < ns) {
                            uint32_t v = (o[s / 4] >> ((s % 4) * 8)) & 0xFFu;
                            if (CF < CH && s % CH == CH - 1)
                                v = irow[s];
                            orow[s] = (unsigned char)v;
                        }
                }
            }
        }
        conv_cp_wait<0>(); /* nothing of this tile's copies outlives it (the empty groups) */
        __syncthreads();   /* the next tile's copies overwrite the ring, its column pass the buffer */
    }
#endif
}

/* ---------------------------------------------------------------- the pair path (8-bit, sm_80)
 * The ring above (the same copies, slots and clamping), with rows in pairs: the column pass
 * writes, for each sample, the column sums of rows y and y + 1 as the two 16-bit lanes of one
 * word (a "pair row" of the buffer), so every word the row pass reads serves two outputs at
 * offsets that are compile-time constants for any channel count. The row pass then slides
 * (RP_PACK: the box's whole sum under 2^16, K <= 15 on 8-bit) both lanes with one add and one
 * subtract, or (RP_WIDE, RP_GEN) each lane in its own register; the window's first sum adds chunks
 * of 8 packed words before splitting (8 * 31 * 255 < 2^16). The rounding (RP_PACK, RP_WIDE: odd
 * divisor d >= the taps, so no tie and no saturation) is one multiply-high: round(a / d) =
 * floor((a + (d - 1) / 2) / d) = umulhi(a + (d - 1) / 2, ceil(2^32 / d)), exact while
 * (a + (d - 1) / 2) d < 2^32 (rp_mode); the bias rides in the sums from the window's start.
 * RP_GEN (any other divisor) is conv_div_round_sat on each lane. Outputs are packed with byte
 * permutes and written with 8- or 16-byte stores.
 *
 * Shared-memory banks: the row pass's threads of a warp read one word each at the same offset
 * from their pair row and run; with a pitch that is a multiple of 4 words those words fall in 8
 * banks at most (4-way conflicts, 8-way on RGBA), so the pair rows have an odd pitch, and the
 * column pass stores its 4 words one by one. Measured against the ring (the same group of rows in
 * flight, 3 blocks an SM on RGB): 8K RGB8 box:15 0.1980 -> 0.1635 ms, box:3 0.1822 -> 0.1507,
 * gray8 box:15 0.0668 -> 0.0564 (tools/results/nvidia-h100-box-2026-11-27b.md).
 *
 * Double-buffered (DB: RGB at K <= RP_DB_KMAX, the multiply-high rounding, packed and 32-bit row
 * passes; rs_pick): two column-sum buffers, so a group of rows costs one barrier, not two: after
 * it, the column pass of group n fills one buffer while the row pass of group n - 1 reads the
 * other (each warp does both, so the warps of a block no longer wait at a barrier between the two
 * phases), and one more turn passes the last group's rows alone. The ring is unchanged (the
 * column pass reads only its own group's slots, the copies of group n + 1 overwrite those of
 * group n - 1). A pad after each buffer keeps a partial run's reads past its last pair row off the
 * other buffer. RGB in groups of 8 rows (160 row-pass jobs) keeps 3 blocks an SM (65 KB at
 * K = 15); in the single buffer's 12 rows (2 blocks an SM, 89 KB) it lost everywhere but
 * box:31 (1.8%). Against the single buffer, 8K RGB8: box:3 0.1486 -> 0.1297 ms, box:15 0.1630
 * -> 0.1448, box:31 0.2092 -> 0.2137 (both at 2 blocks an SM there: RP_DB_KMAX). On gray8 and
 * RGBA8 (their own shapes) it was slower (box:15 0.0559 -> 0.0597 ms, 0.2369 -> 0.2450): they
 * keep the single buffer (tools/results/nvidia-h100-box-2026-11-27b.md). */
enum { RP_GEN = 0, RP_WIDE = 1, RP_PACK = 2 };

/* The multiply-high rounding: m = ceil(2^32 / d), bias (d - 1) / 2 (d = 1: m = 2^32 - 1, bias 1,
 * umulhi(a + 1, m) = a). */
struct rp_div {
    uint32_t m, bias;
};

/* Ring rows: the rows a column pass reads (its group, K + G), and one group loading. */
static int rp_rows(int k, int g) { return 2 * g + k; }
/* the buffer's pad: a strip's last partial run slides past the staged samples (reads unused) */
#define RP_PAD 64
#define RP_BP 1029 /* pair-row pitch, words: odd (the banks, above) */
/* NB column-sum buffers: 1, or 2 (double-buffered) */
static size_t rp_smem(int k, int g, int nb)
{
    return (size_t)rp_rows(k, g) * RS_NS + (size_t)nb * (g / 2 * RP_BP + RP_PAD) * 4;
}

/* Rows a group (even) and pixels a row-pass run, per channel count: pairs x runs near the block's
 * 256 threads, runs of 8 or 16 bytes a row, and (with the odd pitch) at most 2 threads of a warp
 * on one bank: a run's RUN * CH words put warp neighbours 8 or 16 banks apart, the pair rows
 * 5 apart (G = 16 on RGBA: 8 pair rows for its 2 run offsets). The fastest of the shapes measured
 * at 8K (tools/results/nvidia-h100-box-2026-11-27b.md). */
template <int CH, bool DB = false> struct rp_shape {
    static_assert(!DB || CH == 3, "double-buffered: RGB alone");
    static constexpr int G = DB ? 8 : CH == 3 ? 12 : CH == 1 ? 8 : 16;
    static constexpr int RUN = CH == 4 ? 4 : 8;
};
/* The largest K of the double-buffered RGB kernel (G = 8, 2 buffers: (16 + K) 1024 + 33440
 * bytes a block, and the 1 KB the driver reserves a block): 3 blocks an SM's 228 KB up to K = 25
 * (76448 bytes a block; K = 27: 78496). The single-buffered RGB kernel (G = 12) drops from 3 to 2
 * at the same K (K = 25: 76152 bytes, K = 27: 78200), so at K <= 25 the two hold the 3 blocks an
 * SM under which the double buffer won at K = 3 and 15 (13% and 11%), and at K >= 27 both hold 2,
 * where it lost 2% at K = 31. K 17..25 (its 32-bit row pass) not measured. */
#define RP_DB_KMAX 25
/* Blocks an SM the shared memory allows at K = 15 (the register cap, at most 4), NB buffers. */
static __host__ __device__ constexpr int rp_minb(int g, int nb = 1)
{
    return (228 * 1024) / ((2 * g + 15) * RS_NS + nb * (g / 2 * RP_BP + RP_PAD) * 4 + 1024) > 4
               ? 4
               : (228 * 1024) / ((2 * g + 15) * RS_NS + nb * (g / 2 * RP_BP + RP_PAD) * 4 + 1024);
}

/* rs_cols_step<1> with the byte selects as permutes in place of the masks and shift. */
__device__ __forceinline__ void rp_cols_step(rs_cols<1> &c, const rs_vec<1> &e, const rs_vec<1> &l)
{
    c.s[0] += __byte_perm(e.w[0], 0, 0x4240u) - __byte_perm(l.w[0], 0, 0x4240u);
    c.s[1] += __byte_perm(e.w[0], 0, 0x4341u) - __byte_perm(l.w[0], 0, 0x4341u);
}
__device__ __forceinline__ void rp_cols_add(rs_cols<1> &c, const rs_vec<1> &e)
{
    rs_vec<1> zero;
    zero.w[0] = 0;
    rp_cols_step(c, e, zero);
}

/* Pair-row words of a thread's 4 samples: rows a (y) and b (y + 1), lanes (0, 2) and (1, 3). */
__device__ __forceinline__ void rp_cols_store(uint32_t *dst, const rs_cols<1> &a, const rs_cols<1> &b)
{
    const uint4 w = make_uint4(__byte_perm(a.s[0], b.s[0], 0x5410u), __byte_perm(a.s[1], b.s[1], 0x5410u),
                               __byte_perm(a.s[0], b.s[0], 0x7632u), __byte_perm(a.s[1], b.s[1], 0x7632u));
    dst[0] = w.x; /* an odd pitch: no 16-byte store */
    dst[1] = w.y;
    dst[2] = w.z;
    dst[3] = w.w;
}

/* Bytes 0 of x0..x3 as one word. */
__device__ __forceinline__ uint32_t rp_pack4(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3)
{
    return __byte_perm(__byte_perm(x0, x1, 0x0040u), __byte_perm(x2, x3, 0x0040u), 0x5410u);
}

/* A run's RB bytes of one row, in W-byte stores, channel CH - 1 merged from the input when it
 * is alpha (CF < CH). */
template <int CH, int CF, int NOW>
__device__ __forceinline__ void rp_store(unsigned char *orow, const unsigned char *irow, const uint32_t (&o)[NOW])
{
    constexpr int RB = NOW * 4, W = RB % 16 == 0 ? 16 : 8;
#pragma unroll
    for (int v = 0; v < RB / W; v++) {
        if constexpr (W == 16) {
            uint4 q = make_uint4(o[4 * v], o[4 * v + 1], o[4 * v + 2], o[4 * v + 3]);
            if constexpr (CF < CH) {
                const uint4 a = __ldg((const uint4 *)irow + v);
                q.x |= a.x & rs_amask<1, CH>(0);
                q.y |= a.y & rs_amask<1, CH>(0);
                q.z |= a.z & rs_amask<1, CH>(0);
                q.w |= a.w & rs_amask<1, CH>(0);
            }
            ((uint4 *)orow)[v] = q;
        } else {
            uint2 q = make_uint2(o[2 * v], o[2 * v + 1]);
            if constexpr (CF < CH) {
                const uint2 a = __ldg((const uint2 *)irow + v);
                q.x |= a.x & rs_amask<1, CH>(0);
                q.y |= a.y & rs_amask<1, CH>(0);
            }
            ((uint2 *)orow)[v] = q;
        }
    }
}

/* The strip's last partial run, sample by sample (ns samples). */
template <int CH, int CF, int NOW>
__device__ __forceinline__ void rp_store_part(unsigned char *orow, const unsigned char *irow, const uint32_t (&o)[NOW],
                                              int ns)
{
#pragma unroll
    for (int s = 0; s < NOW * 4; s++) /* unrolled: o stays in registers */
        if (s < ns)
            orow[s] = CF < CH && s % CH == CH - 1 ? irow[s] : (unsigned char)(o[s / 4] >> (8 * (s % 4)));
}

/* The row pass of the na rows from ya (na <= G), their pair rows at bb. */
template <int CH, int G, int RUN, int MODE>
__device__ __forceinline__ void rp_row_pass(const conv_params &p, const rp_div &q, const uint32_t *bb, int ya, int na,
                                            int t, int k, int x0, int np, int off, int jpr)
{
    constexpr int CF = (CH == 2 || CH == 4) ? CH - 1 : CH;
    constexpr int NPR = G / 2;        /* pair rows a group */
    constexpr int NOW = RUN * CH / 4; /* output words of a run's row */
    /* row pass: job j -> pair row h = j mod NPR, run j / NPR */
    for (int j = t; j < NPR * jpr; j += RS_THREADS) {
        const int h = j % NPR, run = j / NPR;
        if (2 * h >= na)
            continue;
        const int i0 = run * RUN, y = ya + 2 * h;
        const uint32_t *lv = bb + h * RP_BP + off + i0 * CH; /* pixel x0 + i0 - r, leaving */
        const uint32_t *en = lv + k * CH;                     /* pixel x0 + i0 + r + 1, entering */
        uint32_t lo[CF], hi[CF]; /* RP_PACK: lo holds both lanes */
#pragma unroll
        for (int c = 0; c < CF; c++)
            lo[c] = hi[c] = 0;
        if constexpr (MODE == RP_PACK) {
#pragma unroll 4
            for (int i = 0; i < k; i++)
#pragma unroll
                for (int c = 0; c < CF; c++)
                    lo[c] += lv[i * CH + c];
#pragma unroll
            for (int c = 0; c < CF; c++)
                lo[c] += q.bias * 0x10001u;
        } else {
            for (int i = 0; i < k; i += 8) {
                uint32_t s[CF];
#pragma unroll
                for (int c = 0; c < CF; c++)
                    s[c] = 0;
#pragma unroll
                for (int u = 0; u < 8; u++)
                    if (i + u < k)
#pragma unroll
                        for (int c = 0; c < CF; c++)
                            s[c] += lv[(i + u) * CH + c];
#pragma unroll
                for (int c = 0; c < CF; c++) {
                    lo[c] += s[c] & 0xFFFFu;
                    hi[c] += s[c] >> 16;
                }
            }
            if constexpr (MODE == RP_WIDE)
#pragma unroll
                for (int c = 0; c < CF; c++) {
                    lo[c] += q.bias;
                    hi[c] += q.bias;
                }
        }
        uint32_t o0[NOW], o1[NOW], qa[4], qb[4];
#pragma unroll
        for (int s = 0; s < NOW * 4; s++) {
            const int i = s / CH, c = s % CH;
            if (c >= CF) {
                qa[s % 4] = qb[s % 4] = 0;
            } else {
                if constexpr (MODE == RP_PACK) {
                    qa[s % 4] = __umulhi(lo[c] & 0xFFFFu, q.m);
                    qb[s % 4] = __umulhi(lo[c] >> 16, q.m);
                } else if constexpr (MODE == RP_WIDE) {
                    qa[s % 4] = __umulhi(lo[c], q.m);
                    qb[s % 4] = __umulhi(hi[c], q.m);
                } else {
                    qa[s % 4] = conv_div_round_sat((int64_t)lo[c], &p.div, p.maxv);
                    qb[s % 4] = conv_div_round_sat((int64_t)hi[c], &p.div, p.maxv);
                }
                if (i + 1 < RUN) { /* slide */
                    const uint32_t we = en[s], wl = lv[s];
                    if constexpr (MODE == RP_PACK) {
                        lo[c] += we - wl;
                    } else {
                        lo[c] += (we & 0xFFFFu) - (wl & 0xFFFFu);
                        hi[c] += (we >> 16) - (wl >> 16);
                    }
                }
            }
            if (s % 4 == 3) {
                o0[s / 4] = rp_pack4(qa[0], qa[1], qa[2], qa[3]);
                o1[s / 4] = rp_pack4(qb[0], qb[1], qb[2], qb[3]);
            }
        }
        const bool two = 2 * h + 1 < na;
        unsigned char *orow = p.out + (size_t)y * p.out_pitch + (size_t)(x0 + i0) * CH;
        const unsigned char *irow = p.in + (size_t)y * p.in_pitch + (size_t)(x0 + i0) * CH;
        if (i0 + RUN <= np) {
            rp_store<CH, CF, NOW>(orow, irow, o0);
            if (two)
                rp_store<CH, CF, NOW>(orow + p.out_pitch, irow + p.in_pitch, o1);
        } else {
            const int ns = (np - i0) * CH;
            rp_store_part<CH, CF, NOW>(orow, irow, o0, ns);
            if (two)
                rp_store_part<CH, CF, NOW>(orow + p.out_pitch, irow + p.in_pitch, o1, ns);
        }
    }
}

template <int CH, int G, int RUN, int MODE, int MINB, bool DB>
__global__ void __launch_bounds__(RS_THREADS, MINB)
    conv_runsum_pair_kernel(const __grid_constant__ conv_params p, int P, int hs, int nx, long long ntiles, int RR,
                            rp_div q)
{
#if __CUDA_ARCH__ >= 800
    static_assert(G % 2 == 0 && RUN * CH % 8 == 0, "pairs of rows, 8-byte runs");
    constexpr int NPR = G / 2; /* pair rows a group */
    extern __shared__ __align__(16) unsigned char conv_smem[];
    unsigned char *ring = conv_smem;                        /* RR rows x RS_NS bytes */
    uint32_t *buf = (uint32_t *)(conv_smem + (size_t)RR * RS_NS); /* NPR pair rows x RP_BP words */
    constexpr int BS = NPR * RP_BP + RP_PAD; /* DB: the second buffer's offset, words */
    const int t = threadIdx.x, r = p.r, k = p.k;

    for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const int x0 = (int)(tile % nx) * P, y0 = (int)(tile / nx) * hs;
        const int y1 = min(y0 + hs, p.height), np = min(P, p.width - x0);
        const int qs = (x0 - r) * CH, a0 = conv_floor_div(qs, 16) * 16, off = qs - a0;
        const int nb = off + (np + 2 * r) * CH;      /* staged bytes, <= RS_NS */
        const int nw = (nb + RS_VS - 1) / RS_VS;     /* column-pass threads */
        const int nch = (nb + 15) / 16;              /* 16-byte chunks a row */
        const int jpr = (np + RUN - 1) / RUN;
        const int q0 = a0 + RS_VS * t;
        const bool col = t < nw, fast = q0 >= 0 && q0 + RS_VS <= p.wch;
        const int vb = y0 - r - 1; /* virtual row in slot 0 */

        const rr_ring<CH> rg(p, ring, RR, t, a0, nch, q0, fast);
        auto group_rows = [&](int n) { return max(0, min(G, y1 - y0 - n * G)); };
        auto slot = [&](int s) { return s >= RR ? s - RR : s; };

        /* the window of row y0 - 1 and group 0's entering rows */
        rg.issue(vb, k + group_rows(0), 0);
        conv_cp_commit();


        rs_cols<1> cs;
        rs_cols_clear<1>(cs);
        int rb = 0; /* slot of group n's first leaving row: n G mod RR */
        /* DB: one more turn, the last group's row pass alone */
        for (int n = 0, yg = y0; yg < (DB ? y1 + G : y1); n++, yg += G) {
            const int ng = min(G, y1 - yg);
            conv_cp_wait<0>(); /* group n's rows have landed (this thread's copies) */
            __syncthreads();   /* everyone's; the buffer's last row pass is done (DB: the one before
                                * it, and group n - 1's column pass) */
            uint32_t *cb = DB && (n & 1) ? buf + BS : buf; /* group n's pair rows */
            if (!DB || yg < y1) {
                if (n == 0 && col)
                    for (int i = 0; i < k; i++)
                        rp_cols_add(cs, rg.word(i));
                rg.issue(yg + G + r, group_rows(n + 1), slot(rb + G + k));
                conv_cp_commit();
                /* column pass: rows yg .. yg + ng - 1 into pair rows (an odd last row pairs with a
                 * copy of itself) */
                if (col && fast) {
                    const uint32_t *wl = (const uint32_t *)ring + t;
#pragma unroll
                    for (int h = 0; h < NPR; h++)
                        if (2 * h < ng) {
                            rs_vec<1> e, l;
                            e.w[0] = wl[slot(rb + 2 * h + k) * (RS_NS / 4)];
                            l.w[0] = wl[slot(rb + 2 * h) * (RS_NS / 4)];
                            rp_cols_step(cs, e, l);
                            const rs_cols<1> a = cs;
                            if (2 * h + 1 < ng) {
                                e.w[0] = wl[slot(rb + 2 * h + 1 + k) * (RS_NS / 4)];
                                l.w[0] = wl[slot(rb + 2 * h + 1) * (RS_NS / 4)];
                                rp_cols_step(cs, e, l);
                            }
                            rp_cols_store(cb + h * RP_BP + RS_VS * t, a, cs);
                        }
                } else if (col) { /* the strip's sides: the clamped samples */
#pragma unroll 1
                    for (int h = 0; 2 * h < ng; h++) {
                        rp_cols_step(cs, rg.word(slot(rb + 2 * h + k)), rg.word(slot(rb + 2 * h)));
                        const rs_cols<1> a = cs;
                        if (2 * h + 1 < ng)
                            rp_cols_step(cs, rg.word(slot(rb + 2 * h + 1 + k)), rg.word(slot(rb + 2 * h + 1)));
                        rp_cols_store(cb + h * RP_BP + RS_VS * t, a, cs);
                    }
                }
                rb = slot(rb + G);
            }
            if constexpr (DB) { /* group n - 1 while the others sum group n */
                if (n > 0)
                    rp_row_pass<CH, G, RUN, MODE>(p, q, (n & 1) ? buf : buf + BS, yg - G, min(G, y1 - yg + G), t, k,
                                                  x0, np, off, jpr);
            } else {
                __syncthreads();
                rp_row_pass<CH, G, RUN, MODE>(p, q, buf, yg, ng, t, k, x0, np, off, jpr);
            }
        }
        conv_cp_wait<0>(); /* nothing of this tile's copies outlives it (the empty groups) */
        __syncthreads();   /* the next tile's copies overwrite the ring, its column pass the buffer */
    }
#endif
}

/* ---------------------------------------------------------------- host side */

/* A box-like filter: one exact output whose weights are all 1 (box:K, kernel files of ones). */
extern "C" int conv_runsum_supports(const ts_job *job)
{
    const ts_filter *f = conv_job_filter(job);
    if (!f || !f->exact || f->outputs != 1 || f->magnitude || job->in.channels < 1 ||
        job->in.channels > 4 || job->in.bytes < 1 || job->in.bytes > 2)
        return 0;
    for (int i = 0; i < f->k * f->k; i++)
        if (f->iw[i] != 1)
            return 0;
    return rs_smem(job->in.bytes, rs_group(job->in.bytes, job->in.channels)) <= conv_smem_limit(job);
}

/* job->param: segment rows S (1..511; 0: the launchers' defaults), or 512 + S: the same, with
 * RGB8 at K <= RP_DB_KMAX on the single-buffered pair kernel (the default before the double
 * buffer, kept to compare against; the bench's NAME/P takes P <= 1024); elsewhere 512 + S is S. */
static bool rp_single(const ts_job *job) { return job->param >= 512 && job->param < 1024; }
static int rs_seg(const ts_job *job) { return rp_single(job) ? job->param - 512 : job->param; }

template <int B, int CH, bool FD> static ts_status rs_launch(const ts_job *job, const conv_params &p)
{
    constexpr int G = rs_group(B, CH);
    const int P = rs_strip_pixels(p.r, CH);
    const size_t smem = rs_smem(B, G);
    auto kernel = conv_runsum_kernel<B, CH, G, FD>;
    ts_status st = gpu_allow_smem((const void *)kernel, smem);
    if (st != TS_OK)
        return st;
    const int nx = (p.width + P - 1) / P;
    /* segment rows: a segment starts with K rows of column sums, so about 2K rows walked; gray
     * rows make few strips, and more segments keep more blocks in flight: 2K within [16, 32]
     * there (the fastest of 16..128 rows measured at 8K but for one format and K:
     * tools/results/nvidia-h100-box-2026-11-26.md) */
    const int hs2 = 2 * p.k;
    const int hs = rs_seg(job) > 0 ? rs_seg(job)
                   : CH == 1      ? conv_round_up(hs2 < 16 ? 16 : hs2 > 32 ? 32 : hs2, G)
                                  : conv_round_up(hs2 > 32 ? hs2 : 32, G);
    const long long ntiles = (long long)nx * ((p.height + hs - 1) / hs);
    kernel<<<gpu_grid(ntiles), RS_THREADS, smem, (cudaStream_t)job->stream>>>(p, P, hs, nx, ntiles);
    LAUNCH_CHECK("conv_runsum_kernel");
    return TS_OK;
}

/* The ring path takes 8-bit jobs on 16-byte aligned rows, sm_80 and its shared memory. */
static bool rr_takes(const ts_job *job, const conv_params &p, int g)
{
    return p.bytes == 1 && p.vec_ok && (!job->dev || job->dev->cc >= 80) &&
           rr_smem(p.k, g, 1) <= conv_smem_limit(job);
}

/* D groups of rows in flight, MINB blocks an SM (the register cap): 1 and 3 (the build that also
 * hoisted the copies' address work) ran faster than 2 and 2, the two changes not separated
 * (tools/results/nvidia-h100-box-2026-11-27.md) */
template <int CH, bool FD, int D, int MINB>
static ts_status rr_launch(const ts_job *job, const conv_params &p)
{
    constexpr int G = rs_group(1, CH);
    const int P = rr_strip_pixels(p.r, CH), RR = rr_rows(p.k, G, D);
    const size_t smem = rr_smem(p.k, G, D);
    auto kernel = conv_runsum_ring_kernel<CH, G, FD, D, MINB>;
    ts_status st = gpu_allow_smem((const void *)kernel, smem);
    if (st != TS_OK)
        return st;
    int resident = 0;
    st = gpu_resident_blocks((const void *)kernel, RS_THREADS, smem, job->dev, "conv runsum", &resident);
    if (st != TS_OK)
        return st;
    const int nx = (p.width + P - 1) / P;
    /* segment rows: job->param, else RR_SEG, or one wave of tiles where that is shorter (gray
     * rows make few strips: 96 rows would leave SMs without a block); a segment's K starting rows
     * cost little against 96, and tiles several times the resident blocks balance the SMs (8K RGB8, box:3 and box:15: 96 rows 0.1848
     * and 0.2006 ms, 192 rows 0.1883 and 0.2046: tools/results/nvidia-h100-box-2026-11-27.md) */
    const int nseg = resident / nx > 1 ? resident / nx : 1; /* one wave of tiles */
    const int h1 = conv_round_up((p.height + nseg - 1) / nseg, G);
    const int hs = rs_seg(job) > 0 ? rs_seg(job) : h1 < RR_SEG ? h1 : RR_SEG;
    const long long ntiles = (long long)nx * ((p.height + hs - 1) / hs);
    kernel<<<gpu_grid(ntiles < resident ? ntiles : resident), RS_THREADS, smem,
             (cudaStream_t)job->stream>>>(p, P, hs, nx, ntiles, RR);
    LAUNCH_CHECK("conv_runsum_ring_kernel");
    return TS_OK;
}

/* The pair path's mode for this divisor, and its multiply-high (rp_div above). */
static int rp_mode(const conv_params &p, rp_div *q)
{
    const uint32_t d = (uint32_t)p.div.d;
    const uint64_t top = (uint64_t)p.maxv * p.k * p.k; /* the largest box sum */
    q->m = d == 1 ? 0xFFFFFFFFu : (uint32_t)((((uint64_t)1 << 32) + d - 1) / d);
    q->bias = d == 1 ? 1 : (d - 1) / 2;
    if (!(d & 1) || d < (uint32_t)(p.k * p.k) || (top + q->bias) * d >= ((uint64_t)1 << 32))
        return RP_GEN;
    return top + q->bias < 65536 ? RP_PACK : RP_WIDE;
}

template <int CH, int MODE, bool DB = false>
static ts_status rp_launch(const ts_job *job, const conv_params &p, const rp_div &q)
{
    constexpr int G = rp_shape<CH, DB>::G, RUN = rp_shape<CH, DB>::RUN, NB = DB ? 2 : 1;
    const int P = rr_strip_pixels(p.r, CH), RR = rp_rows(p.k, G);
    const size_t smem = rp_smem(p.k, G, NB);
    auto kernel = conv_runsum_pair_kernel<CH, G, RUN, MODE, rp_minb(G, NB), DB>;
    ts_status st = gpu_allow_smem((const void *)kernel, smem);
    if (st != TS_OK)
        return st;
    int resident = 0;
    st = gpu_resident_blocks((const void *)kernel, RS_THREADS, smem, job->dev, "conv runsum", &resident);
    if (st != TS_OK)
        return st;
    const int nx = (p.width + P - 1) / P;
    /* segment rows: as rr_launch's */
    const int nseg = resident / nx > 1 ? resident / nx : 1;
    const int h1 = conv_round_up((p.height + nseg - 1) / nseg, G);
    const int hs = rs_seg(job) > 0 ? rs_seg(job) : h1 < RR_SEG ? h1 : RR_SEG;
    const long long ntiles = (long long)nx * ((p.height + hs - 1) / hs);
    kernel<<<gpu_grid(ntiles < resident ? ntiles : resident), RS_THREADS, smem, (cudaStream_t)job->stream>>>(
        p, P, hs, nx, ntiles, RR, q);
    LAUNCH_CHECK("conv_runsum_pair_kernel");
    return TS_OK;
}

/* 8-bit jobs on 16-byte aligned rows (sm_80) take the pair path (RGB at K <= RP_DB_KMAX with
 * the multiply-high rounding double-buffered, unless job->param asks for the single buffer), but
 * RGBA's 32-bit row pass (RP_WIDE: box:17 and up), which ran slower there than the ring's (8K
 * RGBA8 box:31 0.3088 against 0.2987 ms; packed, box:15, 0.2376 against 0.2417); the rest the
 * global-load kernel. */
template <int B, int CH> static ts_status rs_pick(const ts_job *job, const conv_params &p)
{
    /* the multiply-high alone: an odd divisor (no tie) at least the taps (no saturation) */
    const bool fd = p.div.magic && (p.div.d & 1) && p.div.d >= p.k * p.k;
    if constexpr (B == 1) {
        rp_div q;
        const int mode = rp_mode(p, &q);
        if constexpr (CH == 4)
            if (mode == RP_WIDE) /* implies fd */
                return rr_takes(job, p, rs_group(1, CH)) ? rr_launch<CH, true, 1, 3>(job, p)
                                                         : rs_launch<B, CH, true>(job, p);
        const bool pair = p.vec_ok && (!job->dev || job->dev->cc >= 80);
        if constexpr (CH == 3)
            if (pair && mode != RP_GEN && p.k <= RP_DB_KMAX && !rp_single(job) &&
                rp_smem(p.k, rp_shape<CH, true>::G, 2) <= conv_smem_limit(job))
                return mode == RP_PACK ? rp_launch<CH, RP_PACK, true>(job, p, q)
                                       : rp_launch<CH, RP_WIDE, true>(job, p, q);
        if (pair && rp_smem(p.k, rp_shape<CH>::G, 1) <= conv_smem_limit(job))
            return mode == RP_PACK   ? rp_launch<CH, RP_PACK>(job, p, q)
                   : mode == RP_WIDE ? rp_launch<CH, RP_WIDE>(job, p, q)
                                     : rp_launch<CH, RP_GEN>(job, p, q);
    }
    return fd ? rs_launch<B, CH, true>(job, p) : rs_launch<B, CH, false>(job, p);
}

struct runsum_launcher : conv_launcher {
    static ts_status check(const ts_job *job)
    {
        if (!conv_runsum_supports(job))
            return ts_fail(TS_ERR_UNSUPPORTED, "conv runsum: needs a box filter (one exact output, "
                                               "every weight 1)");
        return TS_OK;
    }
    static ts_status launch(const ts_job *job, conv_params &p)
    {
        return conv_by_bytes(p, [&](auto b) {
            return conv_by_ch(p, [&](auto ch) {
                return rs_pick<decltype(b)::value, decltype(ch)::value>(job, p);
            });
        });
    }
};

extern "C" ts_status conv_runsum(const ts_job *job) { return conv_run<runsum_launcher>(job); }
