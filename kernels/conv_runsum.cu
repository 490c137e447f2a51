/* conv_runsum.cu - convolution, variant `runsum`: box filters (every weight 1, any divisor: box:K
 * and kernel files of ones) by running sums, a constant cost per output sample whatever K (see
 * conv.cu for the op).
 *
 * Trick: a box sum is a column sum of K rows summed over K columns, and both sums slide. A block
 * owns a vertical strip of P output pixels (P + 2r staged, 4 samples a thread, 1024 samples in
 * all) and walks a segment of rows down it:
 *   - column pass: each thread keeps the column sums of its 4 samples in registers and moves them
 *     down a row by adding the entering input row (y + r) and subtracting the leaving one
 *     (y - r - 1, read K + 1 rows earlier by this block: an L1 or L2 hit). G rows at a time, all
 *     2G loads issued before any is used, so a thread has 2G loads in flight; the sums go to a
 *     G-row buffer in shared memory (u16 for 8-bit input: K * 255 < 2^16; else u32);
 *   - row pass: a thread takes R consecutive pixels of one buffered row and slides a window of K
 *     column sums along them, one add and one subtract per output after the first window;
 *   - the epilogue is the reference's exact integer rounding (conv_div_round_sat, half to even),
 *     the outputs go through a staging row in shared memory to 16-byte coalesced stores. Alpha
 *     samples (channel C - 1 of 2 or 4) are copied from the input.
 * Rows and columns outside the image are the clamped ones (border replicate): a column sum of a
 * sample past a side is that of the replicated pixel, and the sliding sums add and subtract the
 * clamped rows, so the sum stays the reference's. Sums stay exact in 32 bits (31 * 31 * 65535 <
 * 2^31). Segments of `hs` rows start with a full K-row column sum; segments are sized so that the
 * grid is one wave of resident blocks.
 *
 * job->param (benchmark sweeps and tests): bits 0-2 pick G (0 the default, 1: 4, 2: 8, 3: 16),
 * param >> 3 times 4 is the segment height in rows (0: one wave).
 *
 * Layout: interleaved samples (u8 or u16); 16-byte aligned rows take the vector loads and stores,
 * others go sample by sample.
 */
#include "conv_common.cuh"

#define RS_THREADS 256
#define RS_VS 4                          /* samples a thread owns in the column pass */
#define RS_NS (RS_THREADS * RS_VS)       /* staged samples per strip row */
#define RS_PAD(u) ((u) + ((u) >> 5))     /* one spare word every 32: fewer bank conflicts */
#define RS_NSP (RS_PAD(RS_NS))           /* buffer row pitch, elements */
#define RS_G_DEFAULT(B) ((B) == 1 ? 8 : 8)

static_assert(RS_NSP * 2 % 16 == 0, "the staging rows after the buffer stay 16-byte aligned");

/* Output pixels per strip: the staged samples hold P + 2r pixels and up to 3 samples of alignment,
 * P a multiple of 16 so that every strip starts 16-byte aligned. */
static int rs_strip_pixels(int r, int ch) { return (RS_NS - 3 - 2 * r * ch) / ch / 16 * 16; }

static size_t rs_smem(int bytes, int ch, int g, int P)
{
    return (size_t)g * RS_NSP * (bytes == 1 ? 2 : 4) + (size_t)g * P * ch * bytes;
}

/* A thread's 4 samples, as loaded: one u32 (B = 1) or two (B = 2). */
template <int B> struct rs_vec {
    uint32_t w[B];
};

/* The 4 samples [q0, q0 + 4) of a row wholly inside it, 16-byte aligned rows (the fast path). */
template <int B> __device__ __forceinline__ rs_vec<B> rs_load_in(const unsigned char *src)
{
    rs_vec<B> v;
    if constexpr (B == 1) {
        v.w[0] = __ldg((const unsigned int *)src);
    } else {
        uint2 u = __ldg((const uint2 *)src);
        v.w[0] = u.x;
        v.w[B - 1] = u.y;
    }
    return v;
}

/* The same for any q0, sample by sample, clamped into the row (border replicate). */
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

template <int B> __device__ __forceinline__ uint32_t rs_sample(const rs_vec<B> &v, int j)
{
    if constexpr (B == 1)
        return (v.w[0] >> (8 * j)) & 0xFFu;
    else
        return (v.w[j >> 1] >> (16 * (j & 1))) & 0xFFFFu;
}

template <int B, int CH, int G>
__global__ void __launch_bounds__(RS_THREADS)
    conv_runsum_kernel(const __grid_constant__ conv_params p, int P, int hs, int nx,
                       long long ntiles, int R, int jpr)
{
    typedef typename std::conditional<B == 1, uint16_t, uint32_t>::type CS;
    constexpr int CF = (CH == 2 || CH == 4) ? CH - 1 : CH; /* filtered channels */
    extern __shared__ __align__(16) unsigned char conv_smem[];
    CS *buf = (CS *)conv_smem;                                   /* G rows x RS_NSP */
    unsigned char *outb = conv_smem + (size_t)G * RS_NSP * sizeof(CS); /* G rows x P * CH */
    const int t = threadIdx.x, r = p.r, k = p.k;
    const int orow_bytes = P * CH * B;

    for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const int x0 = (int)(tile % nx) * P, y0 = (int)(tile / nx) * hs;
        const int y1 = min(y0 + hs, p.height), np = min(P, p.width - x0);
        const int qs = (x0 - r) * CH, a0 = conv_floor_div(qs, RS_VS) * RS_VS, off = qs - a0;
        const int nw = (off + (np + 2 * r) * CH + RS_VS - 1) / RS_VS; /* <= RS_THREADS */
        const int q0 = a0 + RS_VS * t;
        const bool col = t < nw;

        /* the column sums of row y0 - 1 */
        const bool fast = p.vec_ok && q0 >= 0 && q0 + RS_VS <= p.wch;
        const unsigned char *cin = p.in + (size_t)max(q0, 0) * B; /* this thread's column */
        uint32_t cs[RS_VS] = {0, 0, 0, 0};
        if (col)
            for (int d = -r; d <= r; d++) {
                const int y = min(max(y0 - 1 + d, 0), p.height - 1);
                const rs_vec<B> v = fast ? rs_load_in<B>(cin + (size_t)y * p.in_pitch)
                                         : rs_load_any<B, CH>(p, y, q0);
#pragma unroll
                for (int j = 0; j < RS_VS; j++)
                    cs[j] += rs_sample<B>(v, j);
            }

        for (int yg = y0; yg < y1; yg += G) {
            const int ng = min(G, y1 - yg);
            /* column pass: rows yg .. yg + ng - 1 into the buffer; inside the row, all 2G loads
             * issued before the first is used */
            if (col && fast) {
                rs_vec<B> e[G], l[G];
#pragma unroll
                for (int g = 0; g < G; g++)
                    if (g < ng) {
                        const int y = yg + g;
                        e[g] = rs_load_in<B>(cin + (size_t)min(y + r, p.height - 1) * p.in_pitch);
                        l[g] = rs_load_in<B>(cin + (size_t)max(y - r - 1, 0) * p.in_pitch);
                    }
#pragma unroll
                for (int g = 0; g < G; g++)
                    if (g < ng) {
#pragma unroll
                        for (int j = 0; j < RS_VS; j++) {
                            cs[j] += rs_sample<B>(e[g], j) - rs_sample<B>(l[g], j);
                            buf[g * RS_NSP + RS_PAD(RS_VS * t + j)] = (CS)cs[j];
                        }
                    }
            } else if (col) { /* the strip's sides and unaligned rows */
#pragma unroll 1
                for (int g = 0; g < ng; g++) {
                    const int y = yg + g;
                    const rs_vec<B> e = rs_load_any<B, CH>(p, min(y + r, p.height - 1), q0);
                    const rs_vec<B> l = rs_load_any<B, CH>(p, max(y - r - 1, 0), q0);
#pragma unroll
                    for (int j = 0; j < RS_VS; j++) {
                        cs[j] += rs_sample<B>(e, j) - rs_sample<B>(l, j);
                        buf[g * RS_NSP + RS_PAD(RS_VS * t + j)] = (CS)cs[j];
                    }
                }
            }
            __syncthreads();

            /* row pass: job -> (row g, pixels [i0, i0 + R)) */
            for (int job = t; job < ng * jpr; job += RS_THREADS) {
                const int g = job / jpr, i0 = (job - g * jpr) * R, i1 = min(i0 + R, np);
                if (i0 >= np)
                    continue;
                const CS *row = buf + g * RS_NSP;
                unsigned char *orow = outb + (size_t)g * orow_bytes;
                uint32_t acc[CF];
#pragma unroll
                for (int c = 0; c < CF; c++)
                    acc[c] = 0;
                for (int j = 0; j < k; j++) {
                    const int u = off + (i0 + j) * CH;
#pragma unroll
                    for (int c = 0; c < CF; c++)
                        acc[c] += row[RS_PAD(u + c)];
                }
                const unsigned char *arow = p.in + (size_t)(yg + g) * p.in_pitch;
                for (int i = i0;;) {
#pragma unroll
                    for (int c = 0; c < CF; c++)
                        conv_st<B>(orow, i * CH + c, conv_div_round_sat((int64_t)acc[c], &p.div, p.maxv));
                    if (CF < CH) /* alpha: the input sample */
                        conv_st<B>(orow, i * CH + CH - 1, conv_ld<B>(arow, (x0 + i) * CH + CH - 1));
                    if (++i >= i1)
                        break;
                    const int ue = off + (i + k - 1) * CH, ul = off + (i - 1) * CH;
#pragma unroll
                    for (int c = 0; c < CF; c++)
                        acc[c] += (uint32_t)row[RS_PAD(ue + c)] - (uint32_t)row[RS_PAD(ul + c)];
                }
            }
            __syncthreads();

            /* the staged rows out: 16-byte chunks, then the samples past the last whole chunk */
            const int nb = np * CH * B, nc = p.vec_ok ? nb / 16 : 0;
            for (int it = t; it < ng * nc; it += RS_THREADS) {
                const int g = it / nc, ci = it - g * nc;
                *(uint4 *)(p.out + (size_t)(yg + g) * p.out_pitch + (size_t)x0 * CH * B + ci * 16) =
                    *(const uint4 *)(outb + (size_t)g * orow_bytes + ci * 16);
            }
            const int ntail = (nb - nc * 16) / B;
            for (int it = t; it < ng * ntail; it += RS_THREADS) {
                const int g = it / ntail, s = nc * 16 / B + (it - g * ntail);
                conv_st<B>(p.out + (size_t)(yg + g) * p.out_pitch, x0 * CH + s,
                           conv_ld<B>(outb + (size_t)g * orow_bytes, s));
            }
            /* no barrier: the next column pass writes only the buffer (read before the barrier
             * above), and the next row pass writes the staging rows after the next barrier */
        }
    }
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
    return rs_smem(job->in.bytes, job->in.channels, 8, rs_strip_pixels(f->k / 2, job->in.channels)) <=
           conv_smem_limit(job);
}

template <int B, int CH, int G> static ts_status rs_launch(const ts_job *job, const conv_params &p)
{
    const int P = rs_strip_pixels(p.r, CH);
    const size_t smem = rs_smem(B, CH, G, P);
    auto kernel = conv_runsum_kernel<B, CH, G>;
    ts_status st = gpu_allow_smem((const void *)kernel, smem);
    if (st != TS_OK)
        return st;
    const int nx = (p.width + P - 1) / P;
    int hs = (job->param >> 3) * 4;
    if (hs <= 0) { /* one wave: as many segments per strip as resident blocks allow */
        int per_sm = 1;
        st = gpu_blocks_per_sm((const void *)kernel, RS_THREADS, smem, "conv runsum", &per_sm);
        if (st != TS_OK)
            return st;
        const long long blocks = (long long)per_sm * (job->dev && job->dev->sms > 0 ? job->dev->sms : 1);
        const long long ny = (blocks + nx - 1) / nx;
        hs = (int)(((long long)p.height + ny - 1) / ny);
        hs = conv_round_up(hs, G);
    }
    const long long ntiles = (long long)nx * ((p.height + hs - 1) / hs);
    const int R = (P * G + RS_THREADS - 1) / RS_THREADS, jpr = (P + R - 1) / R;
    kernel<<<gpu_grid(ntiles), RS_THREADS, smem, (cudaStream_t)job->stream>>>(p, P, hs, nx, ntiles,
                                                                              R, jpr);
    LAUNCH_CHECK("conv_runsum_kernel");
    return TS_OK;
}

template <int B, int CH> static ts_status rs_pick_g(const ts_job *job, const conv_params &p)
{
    int gsel = job->param & 7;
    const int P = rs_strip_pixels(p.r, CH);
    if (gsel == 3 && rs_smem(B, CH, 16, P) > conv_smem_limit(job))
        gsel = 2; /* G = 16 does not fit this device */
    switch (gsel) {
    case 1: return rs_launch<B, CH, 4>(job, p);
    case 3: return rs_launch<B, CH, 16>(job, p);
    case 2: return rs_launch<B, CH, 8>(job, p);
    default: return rs_launch<B, CH, RS_G_DEFAULT(B)>(job, p);
    }
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
                return rs_pick_g<decltype(b)::value, decltype(ch)::value>(job, p);
            });
        });
    }
};

extern "C" ts_status conv_runsum(const ts_job *job) { return conv_run<runsum_launcher>(job); }
