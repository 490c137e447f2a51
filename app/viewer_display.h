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
/* Luma histogram (256 bins) of about 256K texels spread over w x h XRGB texels. */
void vw_display_hist(const void *px, size_t pitch, int w, int h, uint32_t *hist);

#endif
