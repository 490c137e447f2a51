/* viewer_tex.h - the display textures and drawing the image (viewer_tex.c): the visible part of
 * the displayed image (and of the original, before|after) at its on-screen size, filled when the
 * image, the view or the area changed, and the luma histogram of the texels shown. */
#ifndef TS_VIEWER_TEX_H
#define TS_VIEWER_TEX_H

#ifdef TS_HAVE_SDL
#include "viewer_run.h"
#include "viewer_view.h"
#include "viewer_win.h"

#include <stdint.h>

typedef struct vw_tex {
    /* the result (or src) and src in before|after, each in the top-left of a texture that only
     * grows */
    SDL_Texture *tex, *before;
    int tex_w, tex_h, before_w, before_h;  /* texture sizes */
    vw_display disp, before_disp;          /* what they hold and where it goes */
    int shown, before_shown;               /* 0: nothing of the image is visible */
    unsigned shown_gen;                    /* vw_run.shown_gen of the texture's texels */
    unsigned before_gen;                   /* src generation in `before` */
    int threads;                           /* for host conversions */
    void *d_disp;                          /* GPU: the texels before their download */
    size_t d_disp_cap;
    int on_gpu;                            /* the last fill was the GPU conversion */
    uint32_t hist[256];                    /* luma of the shown texels (sampled) */
} vw_tex;

/* Fills the textures when the result, the view or the area changed; -1: SDL error. Before any
 * other pipeline run of the frame (the speedup bars): on the GPU it reads the result the chain
 * left on the device. */
int vw_tex_update(vw_tex *t, vw_win *w, vw_run *r, const vw_view *view, vw_area a);
/* The image and the background around it, in the area. */
void vw_tex_draw(vw_tex *t, vw_win *w, const vw_run *r, vw_area a);
void vw_tex_free(vw_tex *t);

#endif /* TS_HAVE_SDL */
#endif
