/* resize_direct_even.cu - the `direct` row's kernel for the interp filter at whole factors
 * (resize_direct.cu has the other cases): both axes reduced by whole factors, the horizontal one
 * 2, 4, 8 or 16, as 8K -> 4K and 8K -> 1080p are.
 *
 * Then the taps repeat every 16 input pixels: output x reads pixels kx x + (kx - 1) / 2 and the
 * next, weights one half each (an odd factor: the first alone), so 16 input pixels hold the taps
 * of 16 / kx outputs. A thread loads those 16 pixels of its two input rows with 16-byte loads
 * straight into registers (a warp reads 512 contiguous bytes a load), for 1, 2 or 4 output rows
 * at once, every load before any arithmetic, and writes its outputs with 32-bit or wider stores:
 * no shared memory, no barrier, no division. An odd vertical factor reads one input row an
 * output row (its second tap weighs 0). The weights of an even factor are one half each, so
 * 8-bit gray and RGB take each pass as a rounding-up byte average, four samples at once (the
 * same integers as the reference's sums); other formats take the sums (alpha premultiplied per
 * tap, unpremultiplied at the store): bit-identical to ref_resize.c either way.
 *
 * A loop form deals the items (an output row's chunks, a block wide) to blocks that are all
 * resident at once, two items in flight a thread: no partial last wave, but 3-12% slower than
 * the one pass on an H100 (tools/results/nvidia-h100-resize-2026-11-27.md), so a row for sweeps.
 * job->param: 6, 7, 8 one pass with 1, 2, 4 output rows a thread; 9 the loop form on every
 * resident block, 10 with its items shared evenly; 0 one pass, 1 row a thread at one byte a
 * pixel, else 2 (the fastest measured at 8K -> 4K and -> 1080p, gray8 and rgb8).
 */
#include "resize_gpu.cuh"

#include <limits.h>

#define EV_THREADS 256 /* at most; a block is 2 to 8 warps of 16-pixel chunks of one row */

/* Rows a thread makes at most: up to 64 registers of input (16 uint4 words), at most 4 rows. */
template <typename T, int C> struct ev_rows {
    static constexpr int PB = C * (int)sizeof(T);
    static constexpr int max = PB <= 2 ? 4 : PB <= 4 ? 2 : 1;
};

/* Sample c of pixel p (0..15) from the 16 pixels in w (uint32 words, as loaded). */
template <typename T, int C>
__device__ __forceinline__ unsigned ev_sample(const uint32_t *w, int p, int c)
{
    const int i = p * C + c;
    return sizeof(T) == 1 ? (w[i >> 2] >> (8 * (i & 3))) & 255u : (w[i >> 1] >> (16 * (i & 1))) & 65535u;
}

/* (a + b + 1) >> 1 in each byte: the 8-bit pass at weights of one half each, exactly
 * (half + a 2^(p-1) + b 2^(p-1)) >> p. */
__device__ __forceinline__ uint32_t ev_avg4(uint32_t a, uint32_t b)
{
    return (a | b) - (((a ^ b) >> 1) & 0x7f7f7f7fu);
}

/* One output row of a chunk: the NB bytes of its 16 / KX outputs in ob (little-endian words),
 * from the chunk's 16 pixels of the two input rows (bot unused where wy1 is 0). */
template <typename T, int C, int KX>
__device__ __forceinline__ void ev_row(const uint4 *top, const uint4 *bot, int32_t wx1, int32_t wy1,
                                       uint32_t *ob)
{
    constexpr int PB = C * (int)sizeof(T), N = 16 / KX, NB = N * PB, NW = (NB + 3) / 4;
    const uint32_t *wt = (const uint32_t *)top, *wb = (const uint32_t *)bot;
#pragma unroll
    for (int i = 0; i < NW; i++)
        ob[i] = 0;
    if (sizeof(T) == 1 && (C == 1 || C == 3)) {
        /* 8-bit without alpha: both weights of an even factor are one half, so each pass is a
         * rounding-up byte average: 4 samples an instruction sequence. h byte i = the horizontal
         * result for the taps at bytes i and i + C (the chunk's last pixel is never a first tap,
         * so the missing byte past the chunk is never used). */
        constexpr int W = 4 * C; /* words of 16 pixels */
        uint32_t h[W];
#pragma unroll
        for (int j = 0; j < W; j++) {
            const uint32_t nt = j + 1 < W ? wt[j + 1] : 0u;
            uint32_t v = ev_avg4(wt[j], __funnelshift_r(wt[j], nt, 8 * C));
            if (wy1) {
                const uint32_t nb = j + 1 < W ? wb[j + 1] : 0u;
                v = ev_avg4(v, ev_avg4(wb[j], __funnelshift_r(wb[j], nb, 8 * C)));
            }
            h[j] = v;
        }
#pragma unroll
        for (int m = 0; m < NB; m++) {
            const int o = m / C, c = m % C, s = (o * KX + (KX - 1) / 2) * C + c;
            ob[m >> 2] |= ((h[s >> 2] >> (8 * (s & 3))) & 255u) << (8 * (m & 3));
        }
        return;
    }
    const int32_t one = (int32_t)1 << (sizeof(T) == 2 ? RS_PREC16 : RS_PREC8);
    const int32_t wx0 = one - wx1, wy0 = one - wy1;
#pragma unroll
    for (int o = 0; o < N; o++) {
        const int p0 = o * KX + (KX - 1) / 2;
        unsigned s[2][2][C];
#pragma unroll
        for (int r = 0; r < 2; r++) {
            const uint32_t *w = r ? wb : wt;
#pragma unroll
            for (int c = 0; c < C; c++) {
                s[r][0][c] = ev_sample<T, C>(w, p0, c);
                s[r][1][c] = ev_sample<T, C>(w, p0 + 1, c);
            }
            di_premul<T, C>(s[r]);
        }
        unsigned q[C];
#pragma unroll
        for (int c = 0; c < C; c++) {
            const unsigned h0 = di_lerp<T>(s[0][0][c], s[0][1][c], wx0, wx1);
            const unsigned h1 = di_lerp<T>(s[1][0][c], s[1][1][c], wx0, wx1);
            q[c] = di_lerp<T>(h0, h1, wy0, wy1);
        }
        if (C == 2 || C == 4) {
#pragma unroll
            for (int c = 0; c < C - 1; c++)
                q[c] = rs_unpremul(q[c], q[C - 1], (int)sizeof(T));
        }
#pragma unroll
        for (int c = 0; c < C; c++) {
            const int i = o * C + c;
            if (sizeof(T) == 1)
                ob[i >> 2] |= q[c] << (8 * (i & 3));
            else
                ob[i >> 1] |= q[c] << (16 * (i & 1));
        }
    }
}

/* The NB bytes of ob at dst, as wide as the output's alignment oal allows. */
template <int NB>
__device__ __forceinline__ void ev_store(unsigned char *dst, const uint32_t *ob, int oal)
{
    constexpr int NW = (NB + 3) / 4;
    if (NB % 16 == 0 && oal >= 16) {
#pragma unroll
        for (int i = 0; i < NW; i += 4)
            *(uint4 *)(dst + 4 * i) = make_uint4(ob[i], ob[i + 1], ob[i + 2], ob[i + 3]);
    } else if (NB % 8 == 0 && oal >= 8) {
#pragma unroll
        for (int i = 0; i < NW; i += 2)
            *(uint2 *)(dst + 4 * i) = make_uint2(ob[i], ob[i + 1]);
    } else if (NB % 4 == 0 && oal >= 4) {
#pragma unroll
        for (int i = 0; i < NW; i++)
            *(uint32_t *)(dst + 4 * i) = ob[i];
    } else {
#pragma unroll
        for (int i = 0; i < NB; i++)
            dst[i] = (unsigned char)(ob[i >> 2] >> (8 * (i & 3)));
    }
}

/* The chunk cx of output row y's two input rows (the second only where wy1 is not 0, else
 * zeros): NV 16-byte loads each. */
template <int NV>
__device__ __forceinline__ void ev_load(const rs_args &a, int ky, int32_t wy1, int y, int cx,
                                        uint4 (&v)[2][NV])
{
    const int sy = ky * y + (ky - 1) / 2;
    const uint4 *p0 = (const uint4 *)(a.in + (size_t)sy * a.in_pitch) + (size_t)cx * NV;
#pragma unroll
    for (int k = 0; k < NV; k++)
        v[0][k] = __ldg(p0 + k);
    if (wy1) {
        const int sy1 = min(sy + 1, a.ih - 1);
        const uint4 *p1 = (const uint4 *)(a.in + (size_t)sy1 * a.in_pitch) + (size_t)cx * NV;
#pragma unroll
        for (int k = 0; k < NV; k++)
            v[1][k] = __ldg(p1 + k);
    } else {
#pragma unroll
        for (int k = 0; k < NV; k++)
            v[1][k] = make_uint4(0, 0, 0, 0);
    }
}

/* A thread makes ru output rows of its chunk: every load first (2 ru NV 16-byte loads in
 * flight), then the arithmetic. */
template <typename T, int C, int KX, int RU>
__global__ void __launch_bounds__(EV_THREADS)
    resize_direct_even_kernel(rs_args a, int ky, int32_t wx1, int32_t wy1, int oal)
{
    constexpr int PB = C * (int)sizeof(T), NV = PB; /* uint4 words of 16 pixels */
    constexpr int N = 16 / KX;                      /* outputs of 16 input pixels */
    constexpr int NB = N * PB;                      /* output bytes of a thread's row */
    const int cx = blockIdx.x * blockDim.x + threadIdx.x; /* 16-pixel chunk of the input row */
    if (cx >= a.ow / N)
        return;
    const int y0 = blockIdx.y * RU;
    uint4 v[RU][2][NV];
#pragma unroll
    for (int u = 0; u < RU; u++)
        if (y0 + u < a.oh)
            ev_load<NV>(a, ky, wy1, y0 + u, cx, v[u]);
#pragma unroll
    for (int u = 0; u < RU; u++) {
        const int y = y0 + u;
        if (y >= a.oh)
            break;
        uint32_t ob[(NB + 3) / 4];
        ev_row<T, C, KX>(v[u][0], v[u][1], wx1, wy1, ob);
        ev_store<NB>(a.out + (size_t)y * a.out_pitch + (size_t)cx * NB, ob, oal);
    }
}

/* The same work as items (an output row's chunks, nbx blocks wide) dealt to the blocks that fit
 * the GPU at once, round robin: no tail of a last partial wave, and each thread loads its next
 * item before it computes this one (two items in flight). */
template <typename T, int C, int KX>
__global__ void __launch_bounds__(EV_THREADS)
    resize_direct_even_loop_kernel(rs_args a, int ky, int nbx, int32_t wx1, int32_t wy1, int oal)
{
    constexpr int PB = C * (int)sizeof(T), NV = PB, N = 16 / KX, NB = N * PB;
    const int chunks = a.ow / N, items = a.oh * nbx;
    uint4 cur[2][NV], nxt[2][NV];
#pragma unroll
    for (int r = 0; r < 2; r++)
#pragma unroll
        for (int k = 0; k < NV; k++)
            cur[r][k] = nxt[r][k] = make_uint4(0, 0, 0, 0);
    int t = blockIdx.x, y = t / nbx, cx = (t - y * nbx) * blockDim.x + threadIdx.x;
    if (t < items && cx < chunks)
        ev_load<NV>(a, ky, wy1, y, cx, cur);
    for (; t < items; t += gridDim.x) {
        const int tn = t + gridDim.x, yn = tn / nbx, cxn = (tn - yn * nbx) * blockDim.x + threadIdx.x;
        if (tn < items && cxn < chunks)
            ev_load<NV>(a, ky, wy1, yn, cxn, nxt);
        if (cx < chunks) {
            uint32_t ob[(NB + 3) / 4];
            ev_row<T, C, KX>(cur[0], cur[1], wx1, wy1, ob);
            ev_store<NB>(a.out + (size_t)y * a.out_pitch + (size_t)cx * NB, ob, oal);
        }
#pragma unroll
        for (int r = 0; r < 2; r++)
#pragma unroll
            for (int k = 0; k < NV; k++)
                cur[r][k] = nxt[r][k];
        y = yn, cx = cxn;
    }
}

/* The even kernel's geometry: whole factors on both axes, the horizontal one 2, 4, 8 or 16, the
 * output width a multiple of its outputs per 16 pixels, a 16-byte aligned input; the taps checked
 * against rs_interp_tap at both ends of each axis (the kernel uses the closed form). 0: it does
 * not apply. */
struct ev_geom {
    int kx, ky;
    int32_t wx1, wy1;
};

static int ev_plan(const rs_args &a, int bytes, ev_geom *g)
{
    const int prec = rs_prec(bytes);
    if ((((uintptr_t)a.in | a.in_pitch) & 15) != 0 || a.ow < 1 || a.oh < 1 || a.iw % a.ow ||
        a.ih % a.oh)
        return 0;
    g->kx = a.iw / a.ow, g->ky = a.ih / a.oh;
    if ((g->kx != 2 && g->kx != 4 && g->kx != 8 && g->kx != 16) || a.ow % (16 / g->kx))
        return 0;
    const int ends[2][2] = {{0, a.ow - 1}, {0, a.oh - 1}};
    for (int axis = 0; axis < 2; axis++) {
        const int k = axis ? g->ky : g->kx, in = axis ? a.ih : a.iw, out = axis ? a.oh : a.ow;
        int32_t w0 = 0;
        for (int e = 0; e < 2; e++) {
            int32_t w;
            const int i = ends[axis][e], s = rs_interp_tap(i, in, out, prec, &w);
            const int want = k * i + (k - 1) / 2;
            const int32_t ww = k % 2 ? 0 : (int32_t)1 << (prec - 1);
            if (s != min(want, in - 1) || w != ww)
                return 0;
            w0 = w;
        }
        (axis ? g->wy1 : g->wx1) = w0;
    }
    return 1;
}

template <typename T, int C, int KX, int R>
static ts_status ev_grid(const rs_args &a, const ev_geom &g, int threads, int oal, ts_stream stream)
{
    constexpr int RU = R < ev_rows<T, C>::max ? R : ev_rows<T, C>::max;
    const int chunks = a.ow / (16 / KX);
    dim3 grid(gpu_div_up((size_t)chunks, (unsigned)threads), gpu_div_up((size_t)a.oh, RU));
    if (grid.y > 65535)
        return ts_fail(TS_ERR_UNSUPPORTED, "resize direct: %d output rows", a.oh);
    resize_direct_even_kernel<T, C, KX, RU><<<grid, threads, 0, stream>>>(a, g.ky, g.wx1, g.wy1, oal);
    LAUNCH_CHECK("resize_direct_even_kernel");
    return TS_OK;
}

/* mode 1, 2, 4: the kernel with that many rows a thread (at most ev_rows::max); 0: the loop
 * kernel on as many blocks as share its items evenly (k items each, k the fewest that the
 * resident blocks take: the blocks then advance at one pace and finish together); -1: the loop
 * kernel on every resident block (round robin, some blocks one item more). */
template <typename T, int C, int KX>
static ts_status ev_launch_kx(const rs_args &a, const ev_geom &g, int mode, int threads, int oal,
                             const ts_device *dev, ts_stream stream)
{
    if (mode == 1)
        return ev_grid<T, C, KX, 1>(a, g, threads, oal, stream);
    if (mode == 2)
        return ev_grid<T, C, KX, 2>(a, g, threads, oal, stream);
    if (mode == 4)
        return ev_grid<T, C, KX, 4>(a, g, threads, oal, stream);
    const int chunks = a.ow / (16 / KX), nbx = (chunks + threads - 1) / threads;
    int blocks = 0;
    ts_status st = gpu_resident_blocks((const void *)resize_direct_even_loop_kernel<T, C, KX>,
                                       threads, 0, dev, "resize direct", &blocks);
    if (st != TS_OK)
        return st;
    const long long items = (long long)a.oh * nbx;
    if (items > INT_MAX)
        return ts_fail(TS_ERR_UNSUPPORTED, "resize direct: %d output rows", a.oh);
    if (mode == 0) {
        const long long k = (items + blocks - 1) / blocks;
        blocks = (int)((items + k - 1) / k);
    } else {
        blocks = (int)min((long long)blocks, items);
    }
    resize_direct_even_loop_kernel<T, C, KX>
        <<<blocks, threads, 0, stream>>>(a, g.ky, nbx, g.wx1, g.wy1, oal);
    LAUNCH_CHECK("resize_direct_even_loop_kernel");
    return TS_OK;
}

/* param 6, 7, 8: 1, 2, 4 rows a thread; 9: the loop kernel round robin; 10: the loop kernel, its
 * items shared evenly; 0: one row a thread at 1 byte a pixel, else 2 (the fastest on an H100 at
 * 8K -> 4K and -> 1080p, gray8 and rgb8; the loop kernel was 3-12% slower there:
 * tools/results/nvidia-h100-resize-2026-11-27.md). */
template <typename T, int C>
static ts_status ev_launch(const rs_args &a, const ev_geom &g, int param, const ts_device *dev,
                           ts_stream stream)
{
    const int pb = C * (int)sizeof(T);
    const int mode = param == 6   ? 1
                     : param == 7 ? 2
                     : param == 8 ? 4
                     : param == 9 ? -1
                     : param == 10 ? 0
                     : pb == 1     ? 1
                                   : 2;
    const uintptr_t al = (uintptr_t)a.out | a.out_pitch;
    const int oal = al % 16 == 0 ? 16 : al % 8 == 0 ? 8 : al % 4 == 0 ? 4 : 1;
    /* the block's width: the most warps (2..8) that split a row's chunks with the fewest idle
     * threads (8K: 480 chunks, 3 blocks of 5 warps) */
    const int chunks = a.ow / (16 / g.kx), warps = (chunks + 31) / 32;
    int bw = 8;
    for (int b = 8, best = 1 << 30; b >= 2; b--) {
        const int idle = b * ((warps + b - 1) / b) - warps;
        if (idle < best)
            best = idle, bw = b;
    }
    const int threads = 32 * bw;
    switch (g.kx) {
    case 2:
        return ev_launch_kx<T, C, 2>(a, g, mode, threads, oal, dev, stream);
    case 4:
        return ev_launch_kx<T, C, 4>(a, g, mode, threads, oal, dev, stream);
    case 8:
        return ev_launch_kx<T, C, 8>(a, g, mode, threads, oal, dev, stream);
    default:
        return ev_launch_kx<T, C, 16>(a, g, mode, threads, oal, dev, stream);
    }
}

/* Whether the even kernel takes the job (opt's plan asks). */
int rs_direct_even(const rs_args &a, int bytes)
{
    ev_geom g;
    return ev_plan(a, bytes, &g);
}

template <typename T, int C>
static ts_status ev_launch_job(const rs_args &a, int param, const ts_device *dev, ts_stream stream)
{
    ev_geom g;
    if (!ev_plan(a, (int)sizeof(T), &g))
        return ts_fail(TS_ERR_UNSUPPORTED, "resize direct: not a whole-factor reduction");
    return ev_launch<T, C>(a, g, param, dev, stream);
}

ts_status rs_direct_even_launch(const rs_args &a, int bytes, int channels, int param,
                                const ts_device *dev, ts_stream stream)
{
    if (bytes == 2)
        return channels == 1   ? ev_launch_job<uint16_t, 1>(a, param, dev, stream)
               : channels == 2 ? ev_launch_job<uint16_t, 2>(a, param, dev, stream)
               : channels == 3 ? ev_launch_job<uint16_t, 3>(a, param, dev, stream)
                               : ev_launch_job<uint16_t, 4>(a, param, dev, stream);
    return channels == 1   ? ev_launch_job<uint8_t, 1>(a, param, dev, stream)
           : channels == 2 ? ev_launch_job<uint8_t, 2>(a, param, dev, stream)
           : channels == 3 ? ev_launch_job<uint8_t, 3>(a, param, dev, stream)
                           : ev_launch_job<uint8_t, 4>(a, param, dev, stream);
}
