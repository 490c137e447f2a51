/* geom_opt.cu - the `opt` variant of transpose, rotation and flips (geom.cu has the ladder below
 * it and the op flags; geom.cuh explains the flags).
 *
 * Ops that swap the axes (rotate:90/270, transpose, transverse): words, not pixels.
 *   A "unit" is K pixels of a row that fill N 32-bit words (K * P = 4 * N bytes). A thread loads
 *   a stack of K units, one per input row, all at the same column: a K x K block of pixels, read
 *   as one 16-, 8- or 12-byte access per row (coalesced along the row by the warp). It
 *   transposes the block in registers with __byte_perm (the permutations are computed at compile
 *   time for each pixel size, so 1 to 3 PRMT per output word, none for 4- and 8-byte pixels)
 *   and so holds K output units, one per output row. These go through a shared tile, whose rows
 *   are output rows, and come out as 16-, 8- or 4-byte row-contiguous stores.
 *       pixel  unit       block    stacks   input tile          shared tile (one element padding)
 *       bytes  N words K  threads  /thread  px x rows           rows x elements x bytes
 *         1    2  (8B) 8  32x8       2      256 x 128  (gray8)  256 x 17 x 8   34.8 KB
 *         2    4 (16B) 8  16x16      1      128 x 128           128 x 17 x 16  34.8 KB
 *         3    3 (12B) 4  32x8       2      128 x 64   (RGB8)   128 x 49 x 4   25.1 KB
 *         4    4 (16B) 4  16x16      1       64 x 64   (RGBA8)   64 x 17 x 16  17.4 KB
 *         6    3 (12B) 2  32x8       4       64 x 64   (RGB16)   64 x 97 x 4   24.8 KB
 *         8    4 (16B) 2  16x16      2       32 x 64   (RGBA16)  32 x 33 x 16  16.9 KB
 *   Every thread has 64 to 128 bytes of loads in flight before its first use of them (3 or 4
 *   blocks of 256 threads per SM by registers), and a tile's row segments are whole 32-byte
 *   sectors on both sides: 256 or 384 input bytes per row, 128 to 512 output bytes (192 for
 *   RGB8, whose 48 KB tile of 128 x 128 pixels would pass the static shared-memory limit).
 *   Bank conflicts: phase 1 writes one output unit per lane to a different tile row (lanes go
 *   along the input row); the row stride is an odd number of elements, so the 8 lanes of a
 *   16-byte access phase, the 16 of an 8-byte one or the 32 of a 4-byte one hit distinct banks.
 *   Phase 2 reads elements along a tile row: contiguous, conflict-free (for 3-byte pixels the
 *   48-element rows make one warp in three straddle two rows: one 2-way conflict there).
 *   3- and 6-byte pixels: 4 RGB8 (2 RGB16) pixels are 12 bytes = 3 words, so they move as words
 *   through registers and shared memory, never byte by byte; the input access is three 32-bit
 *   loads per lane (a warp's three together read 384 contiguous bytes, merged in L1), the output
 *   is 32-bit stores contiguous across the warp.
 *   Mirroring (fx, fy) costs nothing: a stack's K rows are chosen in output order (descending
 *   input rows for fy), and which output row a unit's pixel j lands in is an address (fx).
 *
 * Ops that keep the axes (rotate:180, flip, flop): no tile. Each thread moves a chunk of 16 bytes
 * (48 for 3- and 6-byte pixels: 16 RGB8 or 8 RGB16 pixels), for 4 (2) rows, loads first. flip is
 * a 16-byte copy between mirrored rows; flop and rotate:180 read the mirrored chunk, which is
 * 16-byte aligned when the row length is a multiple of 16 bytes (32-bit loads and a funnel shift
 * otherwise), and reverse its pixels with compile-time __byte_perm selections.
 *
 * Partial units and chunks at the right edges load and store byte by byte: nothing outside the
 * pixels of a row is written (pitch padding stays untouched), nothing read past the 4-byte word
 * that holds a row's last byte. Only tiles on the right or bottom edge take the checked path;
 * the others run without a bounds test. The vector paths need
 * rows starting on 16 bytes (data and pitch multiples of 16, as ts_gpu_image_alloc makes them);
 * other images go to the padded variant.
 */
#include "geom.cuh"
#include "variants.h"

/* ---------------------------------------------------------------- compile-time byte gathers */

/* How to build one 32-bit word from 4 source bytes s0..s3 (byte indices into a word array):
 * n distinct source words d0..d3; one PRMT when n <= 2, two when 3, three when 4. */
struct g4plan {
    int n, d0, d1, d2, d3, sel1, sel2, sel3;
};

__host__ __device__ constexpr g4plan g4_make(int s0, int s1, int s2, int s3)
{
    int s[4] = {s0, s1, s2, s3}, d[4] = {0, 0, 0, 0}, n = 0;
    for (int k = 0; k < 4; k++) {
        int seen = 0;
        for (int q = 0; q < n; q++)
            seen |= d[q] == s[k] >> 2;
        if (!seen)
            d[n++] = s[k] >> 2;
    }
    int sel1 = 0, sel2 = 0, sel3 = 0;
    for (int k = 0; k < 4; k++) {
        int q = 0, b = s[k] & 3;
        while (d[q] != s[k] >> 2)
            q++;
        if (n <= 2 || q < 2) { /* byte b of d[q] at position k of the first PRMT */
            sel1 |= (q * 4 + b) << (4 * k);
            sel3 |= k << (4 * k);
        } else if (n == 3) { /* straight from d[2] in the merging PRMT */
            sel3 |= (4 + b) << (4 * k);
        } else { /* through the second PRMT of d[2], d[3] */
            sel2 |= ((q - 2) * 4 + b) << (4 * k);
            sel3 |= (4 + k) << (4 * k);
        }
    }
    if (n == 1)
        d[1] = d[0];
    return g4plan{n, d[0], d[1], d[2], d[3], sel1, sel2, sel3};
}

template <int S0, int S1, int S2, int S3, int NI>
__device__ __forceinline__ uint32_t gather4(const uint32_t (&w)[NI])
{
    constexpr g4plan p = g4_make(S0, S1, S2, S3);
    static_assert(S0 >= 0 && S1 >= 0 && S2 >= 0 && S3 >= 0 && p.d0 < NI && p.d1 < NI &&
                      p.d2 < NI && p.d3 < NI,
                  "gather4: source byte outside the word array");
    if constexpr (p.n == 1 && p.sel1 == 0x3210)
        return w[p.d0];
    else if constexpr (p.n <= 2)
        return __byte_perm(w[p.d0], w[p.d1], p.sel1);
    else if constexpr (p.n == 3)
        return __byte_perm(__byte_perm(w[p.d0], w[p.d1], p.sel1), w[p.d2], p.sel3);
    else
        return __byte_perm(__byte_perm(w[p.d0], w[p.d1], p.sel1),
                           __byte_perm(w[p.d2], w[p.d3], p.sel2), p.sel3);
}

/* out = in with its bytes rearranged: output byte b is input byte Map::src(b). */
template <class Map, int O = 0, int NI, int NO>
__device__ __forceinline__ void permute(const uint32_t (&in)[NI], uint32_t (&out)[NO])
{
    if constexpr (O < NO) {
        out[O] = gather4<Map::src(4 * O), Map::src(4 * O + 1), Map::src(4 * O + 2),
                         Map::src(4 * O + 3)>(in);
        permute<Map, O + 1>(in, out);
    }
}

/* A K x K stack of P-byte pixels, K units of K*P bytes one after another: output unit j holds,
 * as its pixel i, pixel j of input unit i. */
template <int P, int K> struct xpose_map {
    __host__ __device__ static constexpr int src(int ob)
    {
        return (ob % (K * P)) / P * (K * P) + ob / (K * P) * P + ob % P;
    }
};

/* A run of U bytes of P-byte pixels, pixels in reverse order. */
template <int P, int U> struct reverse_map {
    __host__ __device__ static constexpr int src(int ob) { return U - P * (ob / P + 1) + ob % P; }
};

/* ---------------------------------------------------------------- loads and stores */

template <int E> struct elem_of;
template <> struct elem_of<4> { typedef uint32_t type; };
template <> struct elem_of<8> { typedef uint2 type; };
template <> struct elem_of<16> { typedef uint4 type; };

/* N words from p (aligned to 4N bytes for N = 1, 2, 4; to 4 for N = 3). */
template <int N> __device__ __forceinline__ void load_words(const unsigned char *p, uint32_t *w)
{
    if constexpr (N == 4) {
        const uint4 v = __ldg(reinterpret_cast<const uint4 *>(p));
        w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
    } else if constexpr (N == 2) {
        const uint2 v = __ldg(reinterpret_cast<const uint2 *>(p));
        w[0] = v.x, w[1] = v.y;
    } else {
#pragma unroll
        for (int k = 0; k < N; k++)
            w[k] = __ldg(reinterpret_cast<const uint32_t *>(p) + k);
    }
}

/* The first n (< 4N) bytes of a unit at a row's end; the rest of w stays as it was (zero). */
template <int N>
__device__ __forceinline__ void load_words_part(const unsigned char *p, int n, uint32_t *w)
{
#pragma unroll
    for (int b = 0; b < 4 * N; b++)
        if (b < n)
            w[b >> 2] |= (uint32_t)__ldg(p + b) << (8 * (b & 3));
}

template <int N> __device__ __forceinline__ typename elem_of<4 * N>::type make_elem(const uint32_t *w)
{
    if constexpr (N == 4)
        return make_uint4(w[0], w[1], w[2], w[3]);
    else if constexpr (N == 2)
        return make_uint2(w[0], w[1]);
    else
        return w[0];
}

/* NW words (NW a multiple of 4) as 16-byte accesses; p 16-byte aligned. */
template <int NW> __device__ __forceinline__ void load16(const unsigned char *p, uint32_t (&w)[NW])
{
#pragma unroll
    for (int k = 0; k < NW; k += 4)
        load_words<4>(p + 4 * k, &w[k]);
}

template <int NW> __device__ __forceinline__ void store16(unsigned char *p, const uint32_t (&w)[NW])
{
#pragma unroll
    for (int k = 0; k < NW; k += 4)
        *reinterpret_cast<uint4 *>(p + 4 * k) = make_uint4(w[k], w[k + 1], w[k + 2], w[k + 3]);
}

/* NW words from row + ib, ib a multiple of 4 bytes or not: aligned words and a funnel shift.
 * The extra word is read only when needed; it lies in the 4-byte word that holds the chunk's
 * last byte, inside the row's pitch. */
template <int NW>
__device__ __forceinline__ void load_shifted(const unsigned char *row, int ib, uint32_t (&w)[NW])
{
    const uint32_t *a = reinterpret_cast<const uint32_t *>(row + (ib & ~3));
    const int sh = 8 * (ib & 3);
    uint32_t t[NW + 1];
#pragma unroll
    for (int k = 0; k < NW; k++)
        t[k] = __ldg(a + k);
    t[NW] = sh ? __ldg(a + NW) : 0u;
#pragma unroll
    for (int k = 0; k < NW; k++)
        w[k] = __funnelshift_r(t[k], t[k + 1], sh);
}

/* ---------------------------------------------------------------- swapping ops */

template <int P_, int N_, int BX_, int BY_, int S_> struct swap_cfg {
    static constexpr int P = P_, N = N_, BX = BX_, BY = BY_, S = S_;
    static constexpr int UB = 4 * N;              /* bytes per unit */
    static constexpr int K = UB / P;              /* pixels per unit = input rows per stack */
    static constexpr int E = N == 3 ? 4 : UB;     /* bytes per shared element */
    static constexpr int TC = BX;                 /* input units per tile (one per lane) */
    static constexpr int TU = BY * S;             /* output units per tile row */
    static constexpr int ROWS = K * TC;           /* output rows per tile */
    static constexpr int WE = TU * UB / E;        /* elements per tile row */
    static constexpr int RS = WE | 1;             /* odd row stride: conflict-free phase 1 */
    static constexpr int THREADS = BX * BY;
    static constexpr int STORES = ROWS * WE / THREADS; /* phase-2 elements per thread */
    typedef typename elem_of<E>::type Elem;
    /* 4 blocks of 256 threads per SM (64 registers) hold enough loads in flight; stacks of 32
     * words need a few registers more, so 3 there */
    static constexpr int MIN_BLOCKS = S * K * N >= 32 ? 3 : 4;
    static_assert(K * P == UB, "a unit holds whole pixels");
    static_assert(BX * E >= 128, "the lanes of a 128-byte shared access share threadIdx.y");
    static_assert(ROWS * RS * E <= 48 * 1024, "static shared memory limit");
    static_assert(ROWS * WE % THREADS == 0, "phase 2 divides evenly");
};

/* One tile: the stacks of output units tu * TU.. and of this block's input units, through the
 * shared tile to the output rows. EDGE: the tile reaches past the input's right or bottom edge,
 * so units are checked and may be partial; interior tiles (nearly all) run without a test. */
template <class C, bool EDGE>
__device__ __forceinline__ void swap_tile(typename C::Elem (*tile)[C::RS],
                                          const unsigned char *__restrict__ in, size_t ipitch,
                                          unsigned char *__restrict__ out, size_t opitch, int W,
                                          int H, int fx, int fy, int tu)
{
    constexpr int P = C::P, N = C::N, K = C::K, S = C::S;
    const int in_bytes = W * P, out_bytes = H * P; /* row bytes; the output is H x W */
    const int cl = threadIdx.x, ib = (blockIdx.x * C::TC + cl) * C::UB;
    /* phase 1: S stacks of K units, all loads issued before the first use */
    uint32_t v[S][K * N];
#pragma unroll
    for (int s = 0; s < S; s++) {
        const int u = tu * C::TU + threadIdx.y + s * C::BY;
#pragma unroll
        for (int i = 0; i < K; i++) {
            uint32_t *w = &v[s][i * N];
            const int x = u * K + i; /* output column, the input row before mirroring */
            const unsigned char *p = in + (size_t)(fy ? H - 1 - x : x) * ipitch + ib;
            if constexpr (!EDGE) {
                load_words<N>(p, w);
            } else {
#pragma unroll
                for (int k = 0; k < N; k++)
                    w[k] = 0;
                if (x < H && ib < in_bytes) {
                    if (ib + C::UB <= in_bytes)
                        load_words<N>(p, w);
                    else
                        load_words_part<N>(p, in_bytes - ib, w);
                }
            }
        }
    }
#pragma unroll
    for (int s = 0; s < S; s++) {
        uint32_t o[K * N];
        permute<xpose_map<P, K>>(v[s], o);
        const int ul = threadIdx.y + s * C::BY;
#pragma unroll
        for (int j = 0; j < K; j++) {
            if constexpr (N == 3) {
#pragma unroll
                for (int k = 0; k < 3; k++)
                    tile[j * C::TC + cl][3 * ul + k] = o[j * 3 + k];
            } else {
                tile[j * C::TC + cl][ul] = make_elem<N>(&o[j * N]);
            }
        }
    }
    __syncthreads();
    /* phase 2: tile rows to output rows, contiguous elements (stores need no unrolling to
     * overlap; four keep the shared loads ahead without holding every address) */
    const int tid = threadIdx.y * C::BX + threadIdx.x;
#pragma unroll 4
    for (int k = 0; k < C::STORES; k++) {
        const int t = tid + k * C::THREADS, row = t / C::WE, col = t % C::WE;
        const int sx = (blockIdx.x * C::TC + row % C::TC) * K + row / C::TC;
        const int ob = tu * C::TU * C::UB + col * C::E;
        unsigned char *d = out + (size_t)(fx ? W - 1 - sx : sx) * opitch + ob;
        if (!EDGE || (sx < W && ob + C::E <= out_bytes)) {
            *reinterpret_cast<typename C::Elem *>(d) = tile[row][col];
        } else if (sx < W && ob < out_bytes) { /* the output row ends inside this element */
            const unsigned char *e = reinterpret_cast<const unsigned char *>(&tile[row][col]);
#pragma unroll 1
            for (int b = 0; b < out_bytes - ob; b++)
                d[b] = e[b];
        }
    }
}

template <int P, int N, int BX, int BY, int S>
__global__ void __launch_bounds__(BX * BY, (swap_cfg<P, N, BX, BY, S>::MIN_BLOCKS))
geom_opt_swap_kernel(const unsigned char *__restrict__ in, size_t ipitch,
                     unsigned char *__restrict__ out, size_t opitch, int W, int H, int fx, int fy,
                     int tiles_u)
{
    typedef swap_cfg<P, N, BX, BY, S> C;
    __shared__ typename C::Elem tile[C::ROWS][C::RS];
    const int edge_x = (int)(blockIdx.x + 1) * C::TC * C::UB > W * P;
    for (int tu = blockIdx.y; tu < tiles_u; tu += gridDim.y) {
        if (edge_x || (tu + 1) * C::TU * C::K > H) /* uniform per block */
            swap_tile<C, true>(tile, in, ipitch, out, opitch, W, H, fx, fy, tu);
        else
            swap_tile<C, false>(tile, in, ipitch, out, opitch, W, H, fx, fy, tu);
        if (tu + (int)gridDim.y < tiles_u)
            __syncthreads(); /* the next tile overwrites this one */
    }
}

template <int P, int N, int BX, int BY, int S>
static ts_status launch_swap(const ts_job *job, const geom_map &m)
{
    typedef swap_cfg<P, N, BX, BY, S> C;
    const ts_image *in = &job->in, *out = &job->out;
    const int W = in->width, H = in->height;
    const size_t tiles_x = gpu_div_up(gpu_div_up((size_t)W, C::K), C::TC);
    const int tiles_u = (int)gpu_div_up(gpu_div_up((size_t)H, C::K), C::TU);
    dim3 grid((unsigned)tiles_x, geom_grid_y((size_t)tiles_u)), block(BX, BY);
    geom_opt_swap_kernel<P, N, BX, BY, S><<<grid, block, 0, (cudaStream_t)job->stream>>>(
        (const unsigned char *)in->data, in->pitch, (unsigned char *)out->data, out->pitch, W, H,
        m.fx, m.fy, tiles_u);
    LAUNCH_CHECK("geom_opt_swap_kernel");
    return TS_OK;
}

/* ---------------------------------------------------------------- rotate:180, flip, flop */

#define FLAT_X 32 /* lanes along a row: one chunk each */
#define FLAT_Y 8  /* rows of threads; each thread takes FLAT_R rows FLAT_Y apart */

template <int P> struct flat_cfg {
    static constexpr int U = P == 3 || P == 6 ? 48 : 16; /* chunk bytes: whole pixels, 16-aligned */
    static constexpr int NW = U / 4;
    static constexpr int R = U == 16 ? 4 : 2; /* rows per thread: 64 or 96 bytes in flight */
};

template <int P>
__global__ void __launch_bounds__(FLAT_X * FLAT_Y, 4)
geom_opt_flat_kernel(const unsigned char *__restrict__ in, size_t ipitch,
                     unsigned char *__restrict__ out, size_t opitch, int W, int H, int fx, int fy,
                     int aligned16)
{
    typedef flat_cfg<P> C;
    const int rb = W * P, ob = (blockIdx.x * FLAT_X + threadIdx.x) * C::U;
    if (ob >= rb)
        return;
    const int full = ob + C::U <= rb, ib = rb - ob - C::U; /* the mirrored chunk when fx */
    for (int y0 = blockIdx.y * FLAT_Y * C::R + threadIdx.y; y0 < H; y0 += gridDim.y * FLAT_Y * C::R) {
        uint32_t w[C::R][C::NW];
#pragma unroll
        for (int r = 0; r < C::R; r++) {
            const int y = y0 + r * FLAT_Y;
            if (y >= H || !full)
                continue;
            const unsigned char *src = in + (size_t)(fy ? H - 1 - y : y) * ipitch;
            if (!fx)
                load16(src + ob, w[r]);
            else if (aligned16)
                load16(src + ib, w[r]);
            else
                load_shifted(src, ib, w[r]);
        }
#pragma unroll
        for (int r = 0; r < C::R; r++) {
            const int y = y0 + r * FLAT_Y;
            if (y >= H)
                continue;
            unsigned char *dst = out + (size_t)y * opitch + ob;
            if (full) {
                if (fx) {
                    uint32_t rev[C::NW];
                    permute<reverse_map<P, C::U>>(w[r], rev);
                    store16(dst, rev);
                } else {
                    store16(dst, w[r]);
                }
            } else { /* the row ends inside this chunk: pixel by pixel */
                const unsigned char *src = in + (size_t)(fy ? H - 1 - y : y) * ipitch;
#pragma unroll 1
                for (int x = ob / P; x < W; x++) {
                    const unsigned char *s = src + (size_t)(fx ? W - 1 - x : x) * P;
#pragma unroll 1
                    for (int b = 0; b < P; b++)
                        dst[x * P - ob + b] = s[b];
                }
            }
        }
    }
}

template <int P> static ts_status launch_flat(const ts_job *job, const geom_map &m)
{
    typedef flat_cfg<P> C;
    const ts_image *in = &job->in, *out = &job->out;
    const int W = in->width, H = in->height;
    const size_t rb = (size_t)W * P;
    dim3 grid(gpu_div_up(gpu_div_up(rb, C::U), FLAT_X), geom_grid_y(gpu_div_up((size_t)H, FLAT_Y * C::R)));
    dim3 block(FLAT_X, FLAT_Y);
    geom_opt_flat_kernel<P><<<grid, block, 0, (cudaStream_t)job->stream>>>(
        (const unsigned char *)in->data, in->pitch, (unsigned char *)out->data, out->pitch, W, H,
        m.fx, m.fy, rb % 16 == 0);
    LAUNCH_CHECK("geom_opt_flat_kernel");
    return TS_OK;
}

/* ---------------------------------------------------------------- the variant */

extern "C" ts_status geom_opt(const ts_job *job)
{
    geom_map m = {0, 0, 0};
    ts_status st = geom_check(job, &m);
    if (st != TS_OK)
        return st;
    if (!geom_aligned(job, 16)) /* the 16-byte paths need 16-byte aligned rows */
        return geom_padded(job);
    switch (ts_pixel_bytes(&job->in)) {
    case 1: return m.swap ? launch_swap<1, 2, 32, 8, 2>(job, m) : launch_flat<1>(job, m);
    case 2: return m.swap ? launch_swap<2, 4, 16, 16, 1>(job, m) : launch_flat<2>(job, m);
    case 3: return m.swap ? launch_swap<3, 3, 32, 8, 2>(job, m) : launch_flat<3>(job, m);
    case 4: return m.swap ? launch_swap<4, 4, 16, 16, 1>(job, m) : launch_flat<4>(job, m);
    case 6: return m.swap ? launch_swap<6, 3, 32, 8, 4>(job, m) : launch_flat<6>(job, m);
    case 8: return m.swap ? launch_swap<8, 4, 16, 16, 2>(job, m) : launch_flat<8>(job, m);
    }
    return ts_fail(TS_ERR_INVALID, "geom: %zu-byte pixels", ts_pixel_bytes(&job->in));
}
