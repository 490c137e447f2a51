/* ref_clahe.c - the clahe row: its build hook (clahe[:CLIP[:TxT]]) and its CPU reference, OpenCV's
 * createCLAHE(CLIP, Size(TX, TY)).apply() as kernels/clahe.h spells it out (the padding, the clip
 * and its redistribution, the float LUT and blend, each rounding). The reference is the oracle of
 * the GPU variants and is checked against cv2 itself by tests/clahe_cv2.py.
 */
#include "clahe.h"
#include "op_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "8", "8x8" or "16x4": tiles across x tiles down, 1..TS_CLAHE_MAX_TILES. */
static int parse_grid(const char *s, int *tx, int *ty)
{
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (end == s || a < 1 || a > TS_CLAHE_MAX_TILES)
        return -1;
    if (*end == 'x') {
        const char *t = end + 1;
        b = strtol(t, &end, 10);
        if (end == t || b < 1 || b > TS_CLAHE_MAX_TILES)
            return -1;
    }
    if (*end)
        return -1;
    *tx = (int)a;
    *ty = (int)b;
    return 0;
}

ts_status op_build_clahe(const op_row *row, const op_values *v, const char *item, ts_op *op,
                         char *err, size_t errlen)
{
    (void)row;
    op->clahe.clip = v->f[0];
    op->clahe.tiles_x = op->clahe.tiles_y = 8;
    if (v->s[1] && parse_grid(v->s[1], &op->clahe.tiles_x, &op->clahe.tiles_y) != 0)
        return op_error(err, errlen, item, "the tile grid is TXxTY (or T), each 1 to 32");
    snprintf(op->text, sizeof op->text, "clahe:%.6g:%dx%d", op->clahe.clip, op->clahe.tiles_x,
             op->clahe.tiles_y);
    return TS_OK;
}

/* The LUT of tile (i, j) from the plane (the values equalized, w x h), OpenCV's CLAHE_CalcLut. */
static void tile_lut(const clahe_geom *g, const uint16_t *plane, int i, int j, uint32_t *hist,
                     uint16_t *lut)
{
    memset(hist, 0, sizeof *hist * (size_t)g->bins);
    for (int py = j * g->th; py < (j + 1) * g->th; py++) {
        const uint16_t *row = plane + (size_t)clahe_reflect(py, g->h) * g->w;
        for (int px = i * g->tw; px < (i + 1) * g->tw; px++)
            hist[row[clahe_reflect(px, g->w)]]++;
    }
    clahe_spread s = {0, 0, 1};
    if (g->clip > 0) {
        long long clipped = 0;
        for (int b = 0; b < g->bins; b++)
            if (hist[b] > (uint32_t)g->clip) {
                clipped += hist[b] - (uint32_t)g->clip;
                hist[b] = (uint32_t)g->clip;
            }
        s = clahe_spread_of(clipped, g->bins);
    }
    long long cdf = 0;
    for (int b = 0; b < g->bins; b++) {
        cdf += hist[b] + (g->clip > 0 ? clahe_extra(&s, b) : 0);
        lut[b] = (uint16_t)clahe_lut_value(cdf, g->scale, g->maxv);
    }
}

ts_status ref_clahe_into(const ts_op *op, const ts_image *in, ts_image *out)
{
    clahe_geom g;
    clahe_geom_init(&g, &op->clahe, in->width, in->height, in->bytes);
    int cc = ts_color_channels(in->channels), ntiles = g.tx * g.ty;
    size_t n = (size_t)g.w * g.h;
    uint16_t *plane = malloc(sizeof *plane * n);
    int32_t *sums = cc == 3 ? malloc(sizeof *sums * n) : NULL;
    uint16_t *lut = malloc(sizeof *lut * (size_t)g.bins * ntiles);
    uint32_t *hist = malloc(sizeof *hist * (size_t)g.bins);
    ts_status st = plane && lut && hist && (cc == 1 || sums) ? TS_OK
                                                              : ts_fail(TS_ERR_NOMEM, "out of memory");
    if (st != TS_OK)
        goto done;
    for (int y = 0; y < g.h; y++)
        for (int x = 0; x < g.w; x++) {
            size_t k = (size_t)y * g.w + x;
            if (cc == 1) {
                plane[k] = (uint16_t)ts_get(in, x, y, 0);
            } else {
                sums[k] = km_luma_sum(ts_get(in, x, y, 0), ts_get(in, x, y, 1), ts_get(in, x, y, 2));
                plane[k] = (uint16_t)km_luma_of_sum(sums[k]);
            }
        }
    for (int j = 0; j < g.ty; j++)
        for (int i = 0; i < g.tx; i++)
            tile_lut(&g, plane, i, j, hist, lut + (size_t)(j * g.tx + i) * g.bins);
    for (int y = 0; y < g.h; y++) {
        clahe_axis ay = clahe_axis_of(y, g.inv_th, g.ty);
        const uint16_t *l1 = lut + (size_t)ay.t1 * g.tx * g.bins;
        const uint16_t *l2 = lut + (size_t)ay.t2 * g.tx * g.bins;
        for (int x = 0; x < g.w; x++) {
            clahe_axis ax = clahe_axis_of(x, g.inv_tw, g.tx);
            size_t k = (size_t)y * g.w + x, a = (size_t)ax.t1 * g.bins + plane[k],
                   b = (size_t)ax.t2 * g.bins + plane[k];
            unsigned v = clahe_blend(l1[a], l1[b], l2[a], l2[b], ax.a, ay.a, g.maxv);
            if (cc == 1) {
                ts_put(out, x, y, 0, v);
            } else {
                for (int c = 0; c < 3; c++)
                    ts_put(out, x, y, c, km_luma_apply(ts_get(in, x, y, c), sums[k], v, g.maxv));
            }
        }
    }
    if (ts_has_alpha(in->channels))
        for (int y = 0; y < g.h; y++)
            for (int x = 0; x < g.w; x++)
                ts_put(out, x, y, in->channels - 1, ts_get(in, x, y, in->channels - 1));
done:
    free(plane);
    free(sums);
    free(lut);
    free(hist);
    return st;
}
