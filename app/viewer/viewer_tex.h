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

/* A zoomed-out view resampled on the host (viewer_display.h): the whole image at gw x gh, made
 * the second frame a view holds still (the first shows box cells at once, so zooming through
 * the ladder never waits for a resampling it leaves behind), then kept while image and zoom
 * stay. */
typedef struct vw_rs_host {
    ts_image im;            /* data NULL: none */
    unsigned gen;           /* generation of the image it was made from */
    unsigned wait_gen;      /* shown as box cells: (gen, gw, gh) resampled at the next update */
    int wait_gw, wait_gh, waiting;
    unsigned fail_gen;      /* a resampling that failed is not tried again for that image */
    int fail_gw, fail_gh;
} vw_rs_host;

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
    int resampled;                         /* the last fill of `tex` was resampled, not boxed */
    vw_rs_host rs_main, rs_before;         /* host resamplings of `tex` and `before` */
    /* GPU: zoomed-out views resampled by the resize op's GPU variant on a pipeline of their own
     * (the chain's result and the speedup runs stay on the main one); its result is the cache */
    ts_pipeline *dpipe;
    unsigned dev_gen, dev_src_gen;         /* shown_gen resampled; src generation kept uploaded */
    int dev_gw, dev_gh, dev_valid;
    int dev_rs_off;                        /* resampling on the GPU failed once: box cells there */
    uint32_t hist[256];                    /* luma of the shown texels (sampled) */
} vw_tex;

/* Fills the textures when the result, the view or the area changed; -1: SDL error. Before any
 * other pipeline run of the frame (the speedup bars): on the GPU it reads the result the chain
 * left on the device. */
int vw_tex_update(vw_tex *t, vw_win *w, vw_run *r, const vw_view *view, vw_area a);
/* The image and the background around it, in the area. */
void vw_tex_draw(vw_tex *t, vw_win *w, const vw_run *r, vw_area a);
/* 1 while a view shows box cells and waits for its resampling (the next frame). */
int vw_tex_waiting(const vw_tex *t);
void vw_tex_free(vw_tex *t);

#endif /* TS_HAVE_SDL */
#endif
