/* viewer_view.c - zoom and pan as feh and nsxiv users expect them: fit on open (shrinking only),
 * a zoom ladder through 1:1, zoom around the cursor, no gaps when the image is larger than the
 * window, centred when smaller. The offset stays on whole pixels so that 1:1 is pixel-exact. And
 * what part of the image a view shows, at what size (the display map of the texture). */
#include "viewer_view.h"

#include <math.h>
#include <string.h>

static double clampd(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

/* One axis: image span `span` in a window of `win` pixels. */
static double clamp_axis(double o, double span, int win)
{
    if (span <= win)
        return floor((win - span) / 2);
    return clampd(round(o), ceil(win - span), 0);
}

void vw_view_clamp(vw_view *v, int iw, int ih, int ww, int wh)
{
    v->ox = clamp_axis(v->ox, iw * v->zoom, ww);
    v->oy = clamp_axis(v->oy, ih * v->zoom, wh);
}

void vw_view_fit(vw_view *v, int iw, int ih, int ww, int wh)
{
    double z = 1;
    if (iw > 0 && ih > 0 && ww > 0 && wh > 0) {
        double zx = (double)ww / iw, zy = (double)wh / ih;
        z = clampd(zx < zy ? zx : zy, VW_ZOOM_MIN, 1);
    }
    v->zoom = z;
    v->fit = 1;
    v->ox = v->oy = 0;
    vw_view_clamp(v, iw, ih, ww, wh);
}

double vw_zoom_step(double zoom, int dir)
{
    /* 2^e and 1.5 * 2^e: 1/64, 3/128, ..., 1/2, 3/4, 1, 1.5, 2, 3, 4, 6, ..., 48, 64 */
    double best = dir > 0 ? VW_ZOOM_MAX : VW_ZOOM_MIN;
    for (int e = -6; e <= 6; e++)
        for (int m = 0; m < 2; m++) {
            double z = ldexp(m ? 1.5 : 1.0, e);
            if (z > VW_ZOOM_MAX)
                continue;
            if (dir > 0 && z > zoom * (1 + 1e-9) && z < best)
                best = z;
            if (dir < 0 && z < zoom * (1 - 1e-9) && z > best)
                best = z;
        }
    return best;
}

void vw_view_zoom_at(vw_view *v, double zoom, double ax, double ay, int iw, int ih, int ww, int wh)
{
    zoom = clampd(zoom, VW_ZOOM_MIN, VW_ZOOM_MAX);
    double ix = (ax - v->ox) / v->zoom, iy = (ay - v->oy) / v->zoom;
    v->ox = round(ax - ix * zoom);
    v->oy = round(ay - iy * zoom);
    v->zoom = zoom;
    v->fit = 0;
    vw_view_clamp(v, iw, ih, ww, wh);
}

void vw_view_pan(vw_view *v, double dx, double dy, int iw, int ih, int ww, int wh)
{
    v->ox += dx;
    v->oy += dy;
    vw_view_clamp(v, iw, ih, ww, wh);
}

void vw_view_resize(vw_view *v, int iw, int ih, int ow, int oh, int ww, int wh)
{
    if (v->fit) {
        vw_view_fit(v, iw, ih, ww, wh);
        return;
    }
    double cx = (ow / 2.0 - v->ox) / v->zoom, cy = (oh / 2.0 - v->oy) / v->zoom;
    v->ox = round(ww / 2.0 - cx * v->zoom);
    v->oy = round(wh / 2.0 - cy * v->zoom);
    vw_view_clamp(v, iw, ih, ww, wh);
}

int vw_display_for_view(const vw_view *v, int iw, int ih, int cx0, int cy0, int cx1, int cy1,
                        vw_display *d)
{
    memset(d, 0, sizeof *d);
    if (iw < 1 || ih < 1 || cx1 <= cx0 || cy1 <= cy0)
        return 0;
    /* reduced: a cell per screen pixel, so the renderer copies 1:1; magnified (or 1:1): a cell
     * per image pixel, which the renderer repeats (nearest) */
    int magnify = v->zoom >= 1 - 1e-9;
    double s = magnify ? v->zoom : 1;
    int gw = magnify ? iw : (int)fmin(iw, fmax(1, floor(iw * v->zoom + 0.5)));
    int gh = magnify ? ih : (int)fmin(ih, fmax(1, floor(ih * v->zoom + 0.5)));
    int gx0 = (int)fmax(0, floor((cx0 - v->ox) / s)), gy0 = (int)fmax(0, floor((cy0 - v->oy) / s));
    int gx1 = (int)fmin(gw, ceil((cx1 - v->ox) / s)), gy1 = (int)fmin(gh, ceil((cy1 - v->oy) / s));
    if (gx1 <= gx0 || gy1 <= gy0)
        return 0;
    d->map = (ts_display_map){gw, gh, gx0, gy0, gx1 - gx0, gy1 - gy0};
    d->scale = s;
    d->x = v->ox + gx0 * s;
    d->y = v->oy + gy0 * s;
    return 1;
}

void vw_view_sync(vw_view *v, int iw, int ih, int ww, int wh)
{
    if (iw == v->iw && ih == v->ih)
        return;
    if (v->iw == 0 || v->fit)
        vw_view_fit(v, iw, ih, ww, wh);
    else
        vw_view_clamp(v, iw, ih, ww, wh);
    v->iw = iw;
    v->ih = ih;
}
