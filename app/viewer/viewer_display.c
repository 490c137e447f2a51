/* viewer_display.c - the display conversion of host images (the CPU backend, the original in
 * before|after, images shown without a chain): the cells, rounding, 16-bit mapping and
 * checkerboard of ts_display_convert (kernels/display.cu, tessera.h), so both give the same
 * texels; bands of rows on a few threads for large views. Zoomed-out views resampled as the
 * resize op does (the reference on the host; viewer_tex.c runs the GPU's variant). Also the luma
 * histogram of the texels shown. Pure C (no SDL): tests/test_viewer_display.c checks it by hand
 * and against the GPU.
 */
#include "viewer_display.h"
#include "util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CELL 65536 /* pixels: sums stay below 2^32 for 16-bit samples */
#define MAX_THREADS 8

int vw_display_check(const ts_display_map *m, int iw, int ih)
{
    if (m->gw < 1 || m->gh < 1 || m->gw > iw || m->gh > ih || m->tw < 1 || m->th < 1 ||
        m->gx0 < 0 || m->gy0 < 0 || m->gx0 > m->gw - m->tw || m->gy0 > m->gh - m->th)
        return -1;
    int64_t cw = (iw + m->gw - 1) / m->gw, ch = (ih + m->gh - 1) / m->gh;
    return cw * ch > MAX_CELL ? -1 : 0;
}

/* Cell bounds along one axis: cell gx0 + i covers source [b[i], b[i + 1]). */
static void bounds(int *b, int n, int g0, int g, int size)
{
    for (int i = 0; i <= n; i++)
        b[i] = (int)((int64_t)(g0 + i) * size / g);
}

static inline uint32_t xrgb(unsigned r, unsigned g, unsigned b)
{
    return 0xff000000u | r << 16 | g << 8 | b;
}

static inline unsigned over(unsigned c, unsigned a, unsigned bg)
{
    return (c * a + bg * (255 - a) + 127) / 255;
}

/* A texel from 8-bit values v[] of `ch` channels at cell (gx, gy); alpha over the checkerboard. */
static inline uint32_t compose(const unsigned *v, int ch, int gx, int gy)
{
    unsigned r = v[0], g = ch >= 3 ? v[1] : v[0], b = ch >= 3 ? v[2] : v[0];
    unsigned a = ch == 4 ? v[3] : ch == 2 ? v[1] : 255;
    if (a != 255) {
        unsigned bg = ((gx >> 3) ^ (gy >> 3)) & 1 ? 0x99 : 0x66;
        r = over(r, a, bg);
        g = over(g, a, bg);
        b = over(b, a, bg);
    }
    return xrgb(r, g, b);
}

/* (sum + cnt / 2) / cnt, with a shift for the power-of-two cells of 1:1, 50%, 25%... */
static inline unsigned mean(unsigned sum, unsigned cnt)
{
    if ((cnt & (cnt - 1)) == 0)
        return cnt == 1 ? sum : (sum + cnt / 2) >> __builtin_ctz(cnt);
    return (sum + cnt / 2) / cnt;
}

static inline unsigned to8(unsigned v, int bytes)
{
    return bytes == 2 ? (v * 255u + 32767u) / 65535u : v; /* round(v / 257) */
}

typedef struct band {
    const ts_image *im;
    const ts_display_map *m;
    const int *bx, *by;
    unsigned char *dst;
    size_t pitch;
    int y0, y1; /* output rows */
} band;

/* 8-bit, one pixel a cell (1:1): a plain loop for RGB8. */
static void rows_direct(const band *j)
{
    const ts_image *im = j->im;
    const ts_display_map *m = j->m;
    int ch = im->channels;
    unsigned v[4] = {0, 0, 0, 0};
    for (int y = j->y0; y < j->y1; y++) {
        const unsigned char *row = (const unsigned char *)im->data + (size_t)(m->gy0 + y) * im->pitch;
        const unsigned char *p = row + (size_t)m->gx0 * (size_t)ch;
        uint32_t *d = (uint32_t *)(void *)(j->dst + (size_t)y * j->pitch);
        if (ch == 3) {
            for (int x = 0; x < m->tw; x++, p += 3)
                d[x] = xrgb(p[0], p[1], p[2]);
            continue;
        }
        for (int x = 0; x < m->tw; x++, p += ch) {
            for (int c = 0; c < ch; c++)
                v[c] = p[c];
            d[x] = compose(v, ch, m->gx0 + x, m->gy0 + y);
        }
    }
}

/* Cells of any size; inlined per channel count so that the sums stay in registers. */
static inline __attribute__((always_inline)) void rows_cells(const band *j, const int ch)
{
    const ts_image *im = j->im;
    const ts_display_map *m = j->m;
    int bytes = im->bytes;
    for (int y = j->y0; y < j->y1; y++) {
        uint32_t *d = (uint32_t *)(void *)(j->dst + (size_t)y * j->pitch);
        int sy0 = j->by[y], sy1 = j->by[y + 1];
        for (int x = 0; x < m->tw; x++) {
            int sx0 = j->bx[x], sx1 = j->bx[x + 1];
            unsigned s0 = 0, s1 = 0, s2 = 0, s3 = 0, v[4];
            for (int sy = sy0; sy < sy1; sy++) {
                const unsigned char *row = (const unsigned char *)im->data + (size_t)sy * im->pitch;
                if (bytes == 1) {
                    const unsigned char *p = row + (size_t)sx0 * (size_t)ch;
                    for (int sx = sx0; sx < sx1; sx++, p += ch) {
                        s0 += p[0];
                        s1 += ch > 1 ? p[1] : 0;
                        s2 += ch > 2 ? p[2] : 0;
                        s3 += ch > 3 ? p[3] : 0;
                    }
                } else {
                    const uint16_t *p = (const uint16_t *)(const void *)row + (size_t)sx0 * (size_t)ch;
                    for (int sx = sx0; sx < sx1; sx++, p += ch) {
                        s0 += p[0];
                        s1 += ch > 1 ? p[1] : 0;
                        s2 += ch > 2 ? p[2] : 0;
                        s3 += ch > 3 ? p[3] : 0;
                    }
                }
            }
            unsigned cnt = (unsigned)((sx1 - sx0) * (sy1 - sy0));
            v[0] = to8(mean(s0, cnt), bytes);
            v[1] = to8(mean(s1, cnt), bytes);
            v[2] = to8(mean(s2, cnt), bytes);
            v[3] = to8(mean(s3, cnt), bytes);
            d[x] = ch == 3 ? xrgb(v[0], v[1], v[2]) : compose(v, ch, m->gx0 + x, m->gy0 + y);
        }
    }
}

static void *band_run(void *arg)
{
    const band *j = arg;
    if (j->im->bytes == 1 && j->m->gw == j->im->width && j->m->gh == j->im->height) {
        rows_direct(j);
        return NULL;
    }
    switch (j->im->channels) {
    case 1: rows_cells(j, 1); break;
    case 2: rows_cells(j, 2); break;
    case 3: rows_cells(j, 3); break;
    default: rows_cells(j, 4); break;
    }
    return NULL;
}

int vw_display_convert(const ts_image *im, const ts_display_map *m, void *dst, size_t pitch,
                       int threads)
{
    if (vw_display_check(m, im->width, im->height) != 0 || pitch < (size_t)m->tw * 4)
        return -1;
    int *bx = xmalloc(((size_t)m->tw + (size_t)m->th + 2) * sizeof *bx), *by = bx + m->tw + 1;
    bounds(bx, m->tw, m->gx0, m->gw, im->width);
    bounds(by, m->th, m->gy0, m->gh, im->height);
    /* threads pay off from about a million source pixels */
    size_t work = (size_t)(bx[m->tw] - bx[0]) * (size_t)(by[m->th] - by[0]);
    int nt = work >= ((size_t)1 << 20) ? threads : 1;
    nt = nt > MAX_THREADS ? MAX_THREADS : nt > m->th ? m->th : nt < 1 ? 1 : nt;
    band jobs[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (int i = 0; i < nt; i++) {
        jobs[i] = (band){im, m, bx, by, dst, pitch, m->th * i / nt, m->th * (i + 1) / nt};
        /* the last band runs here; a thread that cannot start runs here too */
        if (i == nt - 1 || pthread_create(&tid[i], NULL, band_run, &jobs[i]) != 0)
            band_run(&jobs[i]);
        else
            started[i] = 1;
    }
    for (int i = 0; i < nt; i++)
        if (started[i])
            pthread_join(tid[i], NULL);
    free(bx);
    return 0;
}

int vw_display_resampled(const ts_display_map *m, int iw, int ih, int channels, int host)
{
    if (m->gw >= iw && m->gh >= ih)
        return 0; /* 1:1 or magnified: cells of one pixel */
    if ((int64_t)m->gw * m->gh > VW_RESAMPLE_MAX_TEXELS)
        return 0;
    return !host || (int64_t)iw * ih * channels <= VW_RESAMPLE_MAX_HOST_SAMPLES;
}

ts_status vw_display_resize_op(int gw, int gh, ts_op *op)
{
    char text[64], err[128];
    snprintf(text, sizeof text, "resize:%dx%d:%s", gw, gh, VW_RESAMPLE_FILTER);
    return ts_op_parse(text, op, err, sizeof err);
}

ts_status vw_display_resample(const ts_image *im, int gw, int gh, ts_image *out)
{
    ts_op op;
    ts_status st = vw_display_resize_op(gw, gh, &op);
    return st == TS_OK ? ts_ref_op(&op, im, out) : st;
}

void vw_display_hist(const void *px, size_t pitch, int w, int h, uint32_t *hist)
{
    memset(hist, 0, 256 * sizeof *hist);
    int step = 1;
    while ((size_t)w * (size_t)h / ((size_t)step * (size_t)step) > 262144)
        step++;
    for (int y = 0; y < h; y += step) {
        const uint32_t *row = (const uint32_t *)(const void *)((const char *)px + (size_t)y * pitch);
        for (int x = 0; x < w; x += step) {
            uint32_t t = row[x];
            unsigned r = t >> 16 & 255, g = t >> 8 & 255, b = t & 255;
            hist[(299 * r + 587 * g + 114 * b + 500) / 1000]++;
        }
    }
}
