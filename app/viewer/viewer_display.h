/* viewer_display.h - the display conversion of host images (viewer_display.c; no SDL). */
#ifndef TS_VIEWER_DISPLAY_H
#define TS_VIEWER_DISPLAY_H

#include "tessera.h"

#include <stddef.h>
#include <stdint.h>

/* 0 when `m` fits an iw x ih image (and its cells are at most 65536 pixels), else -1. */
int vw_display_check(const ts_display_map *m, int iw, int ih);
/* ts_display_convert's conversion of a host image into dst (tw x th texels, rows `pitch` bytes
 * apart), on up to `threads` threads for large views. Returns -1 when the map does not fit. */
int vw_display_convert(const ts_image *im, const ts_display_map *m, void *dst, size_t pitch,
                       int threads);
/* Zoomed-out views are resampled as the resize op resamples (kernels/ref_resize.c: Pillow's
 * ImagingResample, premultiplied alpha), with its default filter, so that a fitted photo looks as
 * the batch's resize:WxH output does: the whole image once at its on-screen size gw x gh (kept
 * while the image and the zoom stay), then the visible part of it converted 1:1. Past these
 * budgets the box cells above are shown instead: the resampled image of a view (texels; 3/4 of
 * a 48 MP photo fits) and, for the host reference, the samples it reads (a 24 MP RGB photo
 * takes about 0.9 s on one core of a loaded 2-core machine; a 268 MP scan would take seconds). */
#define VW_RESAMPLE_FILTER "lanczos3"
#define VW_RESAMPLE_MAX_TEXELS ((int64_t)32 << 20)
#define VW_RESAMPLE_MAX_HOST_SAMPLES ((int64_t)100 << 20)
/* 1 when the map of an iw x ih image with `channels` channels is a reduction within the budget
 * (host: also the host budget). */
int vw_display_resampled(const ts_display_map *m, int iw, int ih, int channels, int host);
/* The resize op that makes the gw x gh image of such a view. */
ts_status vw_display_resize_op(int gw, int gh, ts_op *op);
/* That image on the host (the CPU reference); `out` is allocated by the call. */
ts_status vw_display_resample(const ts_image *im, int gw, int gh, ts_image *out);

/* Luma histogram (256 bins) of about 256K texels spread over w x h XRGB texels. */
void vw_display_hist(const void *px, size_t pitch, int w, int h, uint32_t *hist);

#endif
