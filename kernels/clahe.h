/* clahe.h - the arithmetic of CLAHE that the CPU reference (ref_clahe.c) and the GPU variants
 * (clahe*.cu) share bit for bit (internal to kernels/). It follows OpenCV 4's CLAHE_Impl::apply
 * (imgproc/src/clahe.cpp) step by step, so that tessera's result is cv2's:
 *
 *   padding  when width or height is not a multiple of the grid, the image is extended on the
 *            right and at the bottom by BORDER_REFLECT_101 by `tiles - size % tiles` on BOTH
 *            sides, so a side that already divides gets a whole tile more (OpenCV's quirk, kept);
 *            the tiles are the padded image's, the output is the original size;
 *   clip     limit = max(1, (int)(clip * tile_pixels / bins)) counts (double arithmetic), none
 *            when clip is 0; the excess is spread as OpenCV does: clipped / bins to every bin,
 *            then one more to bins 0, step, 2 step, ... (step = max(bins / residual, 1)) until
 *            the residual is spent;
 *   LUT      lut[v] = saturate(rint_even((float)cdf[v] * scale)), scale = (float)(bins - 1) /
 *            tile_pixels in single precision, as saturate_cast<T>(int * float);
 *   blend    for pixel x: txf = (float)x * (1.0f / tile_w) - 0.5f, tx1 = floor(txf), a = txf -
 *            tx1, the two tiles clamped to the grid; likewise y; result =
 *            (L11 * (1 - a) + L12 * a) * (1 - b) + (L21 * (1 - a) + L22 * a) * b, every product
 *            and sum rounded to float on its own (no fused multiply-add), then rint_even and
 *            saturate. That is OpenCV's scalar loop; its order of operations is kept exactly.
 * Colour: the plane equalized is the luma y = (299R + 587G + 114B + 500) / 1000 (ts_math.h) and
 * each colour sample moves by the luma's change, as equalize does; alpha passes through.
 */
#ifndef TS_CLAHE_H
#define TS_CLAHE_H

#include "tessera.h"
#include "ts_math.h"

typedef struct clahe_geom {
    int w, h;       /* the image */
    int tx, ty;     /* the tile grid */
    int tw, th;     /* a tile of the padded image */
    int bins;       /* 256 or 65536 */
    int maxv;       /* bins - 1 */
    int clip;       /* the clip limit in counts; 0: none */
    float scale;    /* (bins - 1) / (tw * th), float */
    float inv_tw, inv_th;
} clahe_geom;

/* OpenCV's borderInterpolate for BORDER_REFLECT_101 (gfedcb|abcdefgh|gfedcba), any distance. */
KM_HD int clahe_reflect(int p, int len)
{
    if (len == 1)
        return 0;
    while ((unsigned)p >= (unsigned)len)
        p = p < 0 ? -p : 2 * len - 2 - p;
    return p;
}

/* The geometry of an op on a w x h image of `bytes` bytes per sample. */
static inline void clahe_geom_init(clahe_geom *g, const ts_clahe *c, int w, int h, int bytes)
{
    g->w = w;
    g->h = h;
    g->tx = c->tiles_x;
    g->ty = c->tiles_y;
    int pw = w, ph = h;
    if (w % g->tx != 0 || h % g->ty != 0) {
        pw = w + g->tx - w % g->tx;
        ph = h + g->ty - h % g->ty;
    }
    g->tw = pw / g->tx;
    g->th = ph / g->ty;
    g->bins = ts_hist_bins(bytes);
    g->maxv = g->bins - 1;
    double area = (double)g->tw * g->th;
    g->clip = 0;
    if (c->clip > 0.0) {
        double lim = c->clip * area / g->bins;
        g->clip = lim >= 2147483647.0 ? 2147483647 : (int)lim;
        if (g->clip < 1)
            g->clip = 1;
    }
    g->scale = (float)g->maxv / (float)area;
    g->inv_tw = 1.0f / (float)g->tw;
    g->inv_th = 1.0f / (float)g->th;
}

/* After clipping: the counts every bin gets (batch) and how many bins get one more (residual,
 * at bins i with i % step == 0 and i / step < residual). */
typedef struct clahe_spread {
    int batch, residual, step;
} clahe_spread;

KM_HD clahe_spread clahe_spread_of(long long clipped, int bins)
{
    clahe_spread s;
    s.batch = (int)(clipped / bins);
    s.residual = (int)(clipped - (long long)s.batch * bins);
    s.step = s.residual ? bins / s.residual : 1;
    if (s.step < 1)
        s.step = 1;
    return s;
}

KM_HD int clahe_extra(const clahe_spread *s, int i)
{
    return s->batch + (i % s->step == 0 && i / s->step < s->residual);
}

/* One LUT entry from the running sum of the clipped, redistributed histogram. */
KM_HD unsigned clahe_lut_value(long long cdf, float scale, int maxv)
{
    float v = (float)cdf * scale;
    return km_round_sat_f(v, maxv);
}

/* Float steps each rounded on their own: nvcc would fuse a * b + c into one rounding (an FMA),
 * which OpenCV's x86 build does not do. */
#ifdef __CUDA_ARCH__
#define CLAHE_MUL(a, b) __fmul_rn((a), (b))
#define CLAHE_ADD(a, b) __fadd_rn((a), (b))
#define CLAHE_SUB(a, b) __fsub_rn((a), (b))
#else
#define CLAHE_MUL(a, b) ((a) * (b))
#define CLAHE_ADD(a, b) ((a) + (b))
#define CLAHE_SUB(a, b) ((a) - (b))
#endif

/* The interpolation coordinate of pixel x along a side: the first tile, the second (clamped to
 * the grid) and the weight of the second. */
typedef struct clahe_axis {
    int t1, t2;
    int cell; /* floor + 1, 0..tiles: which pair of tiles (the packed blend's index) */
    float a;
} clahe_axis;

KM_HD clahe_axis clahe_axis_of(int x, float inv, int tiles)
{
    clahe_axis r;
    float f = CLAHE_SUB(CLAHE_MUL((float)x, inv), 0.5f);
    int t = (int)floorf(f);
    r.a = CLAHE_SUB(f, (float)t);
    r.t1 = t < 0 ? 0 : t;
    r.t2 = t + 1 > tiles - 1 ? tiles - 1 : t + 1;
    r.cell = t + 1;
    return r;
}

/* The blend of four LUT values (OpenCV's order, no fused multiply-add). */
KM_HD unsigned clahe_blend(unsigned l11, unsigned l12, unsigned l21, unsigned l22, float xa,
                           float ya, int maxv)
{
    float xa1 = CLAHE_SUB(1.0f, xa), ya1 = CLAHE_SUB(1.0f, ya);
    float top = CLAHE_ADD(CLAHE_MUL((float)l11, xa1), CLAHE_MUL((float)l12, xa));
    float bot = CLAHE_ADD(CLAHE_MUL((float)l21, xa1), CLAHE_MUL((float)l22, xa));
    float r = CLAHE_ADD(CLAHE_MUL(top, ya1), CLAHE_MUL(bot, ya));
    return km_round_sat_f(r, maxv);
}

#endif /* TS_CLAHE_H */
