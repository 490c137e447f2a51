/* viewer_view.h - zoom and pan, and what part of the image the display texture holds
 * (viewer_view.c; no SDL: unit-tested). */
#ifndef TS_VIEWER_VIEW_H
#define TS_VIEWER_VIEW_H

#include "tessera.h"

#define VW_ZOOM_MIN (1.0 / 64)
#define VW_ZOOM_MAX 64.0

/* Screen position of the image: screen = o + zoom * image. o is kept on whole pixels, so 1:1
 * shows exact pixels. */
typedef struct vw_view {
    double zoom;
    double ox, oy;
    int fit; /* follows the window (refit on resize) until the user zooms */
    int iw, ih; /* the image size the view was made for (vw_view_sync); 0: none yet */
} vw_view;

/* The area the image is drawn in: the window's top-left w x h pixels; in before|after
 * (compare) its left half shows src and its right half the result. */
typedef struct vw_area {
    int w, h, compare;
} vw_area;

/* Whole image in the window, shrinking only (a small image stays 1:1), centred. */
void vw_view_fit(vw_view *v, int iw, int ih, int ww, int wh);
/* The next zoom of the ladder 1/64 .. 3/4, 1, 1.5, 2, 3, 4, 6, ... 64 up (dir > 0) or down. */
double vw_zoom_step(double zoom, int dir);
/* Sets the zoom keeping the image point under (ax, ay) (screen) in place, then clamps. */
void vw_view_zoom_at(vw_view *v, double zoom, double ax, double ay, int iw, int ih, int ww,
                     int wh);
/* Moves the image by (dx, dy) screen pixels, then clamps. */
void vw_view_pan(vw_view *v, double dx, double dy, int iw, int ih, int ww, int wh);
/* Centres an axis where the image is smaller than the window, else leaves no gap at its edges. */
void vw_view_clamp(vw_view *v, int iw, int ih, int ww, int wh);
/* The window changed from ow x oh to ww x wh: refit in fit mode, else keep the image point at
 * the window centre where it was. */
void vw_view_resize(vw_view *v, int iw, int ih, int ow, int oh, int ww, int wh);
/* The shown image is now iw x ih: when that differs from the size the view was made for, refit
 * (the first time, or in fit mode) or re-clamp. */
void vw_view_sync(vw_view *v, int iw, int ih, int ww, int wh);
/* What the display texture holds for a view: the visible part of an iw x ih image within the
 * window part [cx0, cx1) x [cy0, cy1), as a ts_display_map (tessera.h), and where its texels go
 * on screen: from (x, y), `scale` screen pixels a texel. Reduced (zoom < 1) a texel is a screen
 * pixel (scale 1: the renderer copies without scaling, the conversion averages); at 1:1 and
 * above it is an image pixel (scale = zoom, nearest). Returns 0 when nothing is visible. */
typedef struct vw_display {
    ts_display_map map;
    double x, y, scale;
} vw_display;
int vw_display_for_view(const vw_view *v, int iw, int ih, int cx0, int cy0, int cx1, int cy1,
                        vw_display *d);

#endif
