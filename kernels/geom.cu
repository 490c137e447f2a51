/* geom.cu - transpose, rotation and flips on the GPU: the naive, shared and padded variants
 * (geom_opt.cu holds `opt`). Whole pixels move bit-exact; ref.c's geom_into is the oracle.
 *
 *   naive   one thread per input pixel. Reads are coalesced; for the four ops that swap the axes
 *           (rotate:90/270, transpose, transverse) each warp's 32 writes land in 32 different
 *           output rows, so every store touches its own 32-byte sector.
 *   shared  a block of 32x8 threads moves a 32x32-pixel tile through shared memory: it reads 32
 *           pixels of an input row per warp and writes 32 pixels of an output row per warp, so
 *           both sides coalesce. The tile is [32][32]: the column read of the second phase hits
 *           one bank 32 times for 4-byte pixels (16 for 8-byte pixels, 16 for 2-byte, 8 for
 *           1-byte), the bank conflicts this variant exists to show.
 *   padded  the same with a [32][33] tile: the extra pixel per row shifts each row by one bank
 *           (4-byte pixels), making the column read conflict-free; 1-, 2- and 8-byte pixels come
 *           out conflict-free too (8-byte accesses go by half-warps).
 * Ops that keep the axes (rotate:180, flip, flop) need no tile: input and output rows map to each
 * other, so a warp reads and writes 32 neighbouring pixels. naive, shared and padded all run them
 * with the naive kernel; `opt` has a vectorised path for them.
 *
 * Layout: rows start at data + y * pitch. Pixels of 1, 2, 4 and 8 bytes move as one load/store of
 * that width, 3 bytes as 3 byte accesses, 6 as 3 16-bit ones; when data or pitch is not a
 * multiple of that natural alignment the kernels fall back to byte-wise pixels (any pitch works).
 * The tile lives in output coordinates (tile[i][j] = out(x0 + i, y0 + j)), so the mirroring flags
 * change addresses only and the partial tiles at the right and bottom edges just skip pixels.
 */
#include "geom.cuh"
#include "variants.h"

#define TILE 32      /* pixels per tile side */
#define TILE_ROWS 8  /* threads per tile column: each moves TILE / TILE_ROWS pixels */

/* Pixel types: the natural one of each size, and byte arrays for misaligned images. */
template <int P> struct px_bytes {
    unsigned char b[P];
};
struct px6 {
    uint16_t h[3]; /* RGB16 */
};

template <class T>
__device__ __forceinline__ const T &px_at(const unsigned char *row, int x)
{
    return reinterpret_cast<const T *>(row)[x];
}

template <class T> __device__ __forceinline__ T &px_at(unsigned char *row, int x)
{
    return reinterpret_cast<T *>(row)[x];
}

/* ---------------------------------------------------------------- kernels */

template <class T>
__global__ void __launch_bounds__(TILE * TILE_ROWS)
geom_naive_kernel(const unsigned char *__restrict__ in, size_t ipitch, unsigned char *__restrict__ out,
                  size_t opitch, int W, int H, geom_map m)
{
    const int sx = blockIdx.x * TILE + threadIdx.x;
    if (sx >= W)
        return;
    for (int sy = blockIdx.y * TILE_ROWS + threadIdx.y; sy < H; sy += gridDim.y * TILE_ROWS) {
        int x, y;
        if (m.swap) {
            x = m.fy ? H - 1 - sy : sy;
            y = m.fx ? W - 1 - sx : sx;
        } else {
            x = m.fx ? W - 1 - sx : sx;
            y = m.fy ? H - 1 - sy : sy;
        }
        px_at<T>(out + (size_t)y * opitch, x) = px_at<T>(in + (size_t)sy * ipitch, sx);
    }
}

/* One 32x32 tile of a swapping op per iteration; tile rows beyond gridDim.y are looped over.
 * Phase 1: lane j reads input column sx(y0 + j) of the input rows sy(x0 + i): coalesced.
 * Phase 2: lane i writes output column x0 + i of row y0 + j, reading tile column i. */
template <class T, int PAD>
__device__ __forceinline__ void tile_swap(T (*tile)[TILE + PAD], const unsigned char *__restrict__ in,
                                          size_t ipitch, unsigned char *__restrict__ out,
                                          size_t opitch, int W, int H, geom_map m, int tiles_y)
{
    const int ow = H, oh = W; /* output size */
    const int x0 = blockIdx.x * TILE;
    for (int ty = blockIdx.y; ty < tiles_y; ty += gridDim.y) {
        const int y0 = ty * TILE;
        const int oy = y0 + threadIdx.x;
        if (oy < oh) {
            const int sx = m.fx ? W - 1 - oy : oy;
#pragma unroll
            for (int k = 0; k < TILE / TILE_ROWS; k++) {
                const int i = threadIdx.y + k * TILE_ROWS, ox = x0 + i;
                if (ox < ow)
                    tile[i][threadIdx.x] =
                        px_at<T>(in + (size_t)(m.fy ? H - 1 - ox : ox) * ipitch, sx);
            }
        }
        __syncthreads();
        const int ox = x0 + threadIdx.x;
        if (ox < ow) {
#pragma unroll
            for (int k = 0; k < TILE / TILE_ROWS; k++) {
                const int j = threadIdx.y + k * TILE_ROWS;
                if (y0 + j < oh)
                    px_at<T>(out + (size_t)(y0 + j) * opitch, ox) = tile[threadIdx.x][j];
            }
        }
        __syncthreads(); /* the next iteration overwrites the tile */
    }
}

template <class T>
__global__ void __launch_bounds__(TILE * TILE_ROWS)
geom_shared_kernel(const unsigned char *__restrict__ in, size_t ipitch, unsigned char *__restrict__ out,
                   size_t opitch, int W, int H, geom_map m, int tiles_y)
{
    __shared__ T tile[TILE][TILE]; /* column reads conflict: kept on purpose */
    tile_swap<T, 0>(tile, in, ipitch, out, opitch, W, H, m, tiles_y);
}

template <class T>
__global__ void __launch_bounds__(TILE * TILE_ROWS)
geom_padded_kernel(const unsigned char *__restrict__ in, size_t ipitch, unsigned char *__restrict__ out,
                   size_t opitch, int W, int H, geom_map m, int tiles_y)
{
    __shared__ T tile[TILE][TILE + 1]; /* row stride of 33 pixels: column reads spread over banks */
    tile_swap<T, 1>(tile, in, ipitch, out, opitch, W, H, m, tiles_y);
}

/* ---------------------------------------------------------------- launchers */

enum geom_kind { GEOM_NAIVE, GEOM_SHARED, GEOM_PADDED };

template <class T> static ts_status launch(const ts_job *job, const geom_map &m, geom_kind kind)
{
    const ts_image *in = &job->in, *out = &job->out;
    const unsigned char *d_in = (const unsigned char *)in->data;
    unsigned char *d_out = (unsigned char *)out->data;
    cudaStream_t s = (cudaStream_t)job->stream;
    dim3 block(TILE, TILE_ROWS);
    int W = in->width, H = in->height;
    if (kind == GEOM_NAIVE || !m.swap) {
        dim3 grid(gpu_div_up((size_t)W, TILE), geom_grid_y(gpu_div_up((size_t)H, TILE_ROWS)));
        geom_naive_kernel<T><<<grid, block, 0, s>>>(d_in, in->pitch, d_out, out->pitch, W, H, m);
        LAUNCH_CHECK("geom_naive_kernel");
        return TS_OK;
    }
    /* swapping op: tiles cover the output, H x W */
    int tiles_y = (int)gpu_div_up((size_t)W, TILE);
    dim3 grid(gpu_div_up((size_t)H, TILE), geom_grid_y((size_t)tiles_y));
    if (kind == GEOM_SHARED) {
        geom_shared_kernel<T><<<grid, block, 0, s>>>(d_in, in->pitch, d_out, out->pitch, W, H, m,
                                                     tiles_y);
        LAUNCH_CHECK("geom_shared_kernel");
    } else {
        geom_padded_kernel<T><<<grid, block, 0, s>>>(d_in, in->pitch, d_out, out->pitch, W, H, m,
                                                     tiles_y);
        LAUNCH_CHECK("geom_padded_kernel");
    }
    return TS_OK;
}

/* Picks the pixel type: natural width when rows and pitches allow it, else bytes. */
static ts_status run(const ts_job *job, geom_kind kind)
{
    geom_map m = {0, 0, 0};
    ts_status st = geom_check(job, &m);
    if (st != TS_OK)
        return st;
    size_t P = ts_pixel_bytes(&job->in);
    size_t natural = P == 3 ? 1 : P == 6 ? 2 : P;
    int aligned = geom_aligned(job, natural);
    switch (P) {
    case 1: return launch<uint8_t>(job, m, kind);
    case 2: return aligned ? launch<uint16_t>(job, m, kind) : launch<px_bytes<2>>(job, m, kind);
    case 3: return launch<px_bytes<3>>(job, m, kind);
    case 4: return aligned ? launch<uint32_t>(job, m, kind) : launch<px_bytes<4>>(job, m, kind);
    case 6: return aligned ? launch<px6>(job, m, kind) : launch<px_bytes<6>>(job, m, kind);
    case 8: return aligned ? launch<uint2>(job, m, kind) : launch<px_bytes<8>>(job, m, kind);
    }
    return ts_fail(TS_ERR_INVALID, "geom: %zu-byte pixels", P);
}

extern "C" ts_status geom_naive(const ts_job *job) { return run(job, GEOM_NAIVE); }
extern "C" ts_status geom_shared(const ts_job *job) { return run(job, GEOM_SHARED); }
extern "C" ts_status geom_padded(const ts_job *job) { return run(job, GEOM_PADDED); }
