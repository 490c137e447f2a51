/* display.cu - the viewer's display conversion on the GPU (tessera.h, ts_display_convert): the
 * visible part of the result, resampled to its on-screen size and converted to 32-bit XRGB,
 * so that only what the window shows crosses PCIe (a 4K RGB8 result fitted into a 1920x1080
 * window: 8 MB instead of 25 MB) and the host has nothing left to convert.
 *
 * One thread per output texel sums its cell (a box of source pixels; 1x1 at 1:1, 2x2 at a 50%
 * fit) in 32-bit integers and rounds the mean half up, the same arithmetic as the host version in
 * app/viewer/viewer_display.c, so both give the same texels (tests/test_viewer.c checks). Cell bounds
 * come from 64-bit products (grid * width reaches 2^40). Reads are per pixel and not vectorised:
 * a fit reads each source byte once, and the kernel takes tens of microseconds against the
 * download it saves. Not an op of the chain: no variants, no table row.
 */
#include "gpu_util.cuh"

#include <stdint.h>

#define DISPLAY_BLOCK_X 32
#define DISPLAY_BLOCK_Y 8
#define DISPLAY_MAX_CELL 65536 /* pixels: 65536 * 65535 + 32768 < 2^32 */

__device__ __forceinline__ unsigned display_sample(const unsigned char *row, size_t i, int bytes)
{
    return bytes == 2 ? ((const uint16_t *)row)[i] : row[i];
}

/* round(v / 257): 16-bit to 8-bit as the host's lookup table */
__device__ __forceinline__ unsigned display_to8(unsigned v, int bytes)
{
    return bytes == 2 ? (v * 255u + 32767u) / 65535u : v;
}

__device__ __forceinline__ unsigned display_over(unsigned c, unsigned a, unsigned bg)
{
    return (c * a + bg * (255u - a) + 127u) / 255u;
}

template <int CH>
__global__ void __launch_bounds__(DISPLAY_BLOCK_X * DISPLAY_BLOCK_Y)
display_kernel(const unsigned char *__restrict__ src, size_t pitch, int iw, int ih, int bytes,
               ts_display_map m, uint32_t *__restrict__ dst, size_t dst_pitch)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= m.tw || y >= m.th)
        return;
    int gx = m.gx0 + x, gy = m.gy0 + y;
    int x0 = (int)((int64_t)gx * iw / m.gw), x1 = (int)((int64_t)(gx + 1) * iw / m.gw);
    int y0 = (int)((int64_t)gy * ih / m.gh), y1 = (int)((int64_t)(gy + 1) * ih / m.gh);
    unsigned s[4] = {0, 0, 0, 0};
    for (int sy = y0; sy < y1; sy++) {
        const unsigned char *row = src + (size_t)sy * pitch;
        for (int sx = x0; sx < x1; sx++)
#pragma unroll
            for (int c = 0; c < CH; c++)
                s[c] += display_sample(row, (size_t)sx * CH + c, bytes);
    }
    unsigned cnt = (unsigned)((x1 - x0) * (y1 - y0)), v[4];
#pragma unroll
    for (int c = 0; c < CH; c++)
        v[c] = display_to8((s[c] + cnt / 2) / cnt, bytes);
    unsigned r = v[0], g = CH >= 3 ? v[1] : v[0], b = CH >= 3 ? v[2] : v[0];
    unsigned a = CH == 4 ? v[3] : CH == 2 ? v[1] : 255u;
    if (a != 255u) {
        unsigned bg = ((gx >> 3) ^ (gy >> 3)) & 1 ? 0x99u : 0x66u;
        r = display_over(r, a, bg);
        g = display_over(g, a, bg);
        b = display_over(b, a, bg);
    }
    uint32_t *out = (uint32_t *)((unsigned char *)dst + (size_t)y * dst_pitch);
    out[x] = 0xff000000u | r << 16 | g << 8 | b;
}

extern "C" ts_status ts_display_convert(const ts_image *d_src, const ts_display_map *m,
                                        void *d_dst, size_t dst_pitch, ts_stream s)
{
    int iw = d_src->width, ih = d_src->height;
    if (m->gw < 1 || m->gh < 1 || m->gw > iw || m->gh > ih || m->tw < 1 || m->th < 1 ||
        m->gx0 < 0 || m->gy0 < 0 || m->gx0 > m->gw - m->tw || m->gy0 > m->gh - m->th)
        return ts_fail(TS_ERR_INVALID, "display map %dx%d cells at (%d,%d), %dx%d texels, does not "
                       "fit a %dx%d image", m->gw, m->gh, m->gx0, m->gy0, m->tw, m->th, iw, ih);
    if (d_src->channels < 1 || d_src->channels > 4 || (d_src->bytes != 1 && d_src->bytes != 2))
        return ts_fail(TS_ERR_INVALID, "display: %d channels of %d bytes", d_src->channels,
                       d_src->bytes);
    /* the largest cell: ceil(iw / gw) x ceil(ih / gh) */
    int64_t cw = (iw + m->gw - 1) / m->gw, ch = (ih + m->gh - 1) / m->gh;
    if (cw * ch > DISPLAY_MAX_CELL)
        return ts_fail(TS_ERR_TOO_LARGE, "display: cells of %lldx%lld pixels (at most %d)",
                       (long long)cw, (long long)ch, DISPLAY_MAX_CELL);
    if (dst_pitch < (size_t)m->tw * 4 || dst_pitch % 4)
        return ts_fail(TS_ERR_INVALID, "display: pitch %zu for %d texels", dst_pitch, m->tw);
    dim3 block(DISPLAY_BLOCK_X, DISPLAY_BLOCK_Y);
    dim3 grid(gpu_div_up((size_t)m->tw, block.x), gpu_div_up((size_t)m->th, block.y));
    const unsigned char *src = (const unsigned char *)d_src->data;
    uint32_t *dst = (uint32_t *)d_dst;
    cudaStream_t st = (cudaStream_t)s;
    switch (d_src->channels) {
    case 1:
        display_kernel<1><<<grid, block, 0, st>>>(src, d_src->pitch, iw, ih, d_src->bytes, *m, dst,
                                                  dst_pitch);
        break;
    case 2:
        display_kernel<2><<<grid, block, 0, st>>>(src, d_src->pitch, iw, ih, d_src->bytes, *m, dst,
                                                  dst_pitch);
        break;
    case 3:
        display_kernel<3><<<grid, block, 0, st>>>(src, d_src->pitch, iw, ih, d_src->bytes, *m, dst,
                                                  dst_pitch);
        break;
    default:
        display_kernel<4><<<grid, block, 0, st>>>(src, d_src->pitch, iw, ih, d_src->bytes, *m, dst,
                                                  dst_pitch);
        break;
    }
    LAUNCH_CHECK("display_kernel");
    return TS_OK;
}
