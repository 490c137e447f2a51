/* viewer_tex.c - the display textures and drawing the image.
 *
 * A texture holds only the visible part of the image at its on-screen size (viewer_view.c):
 * reduced views are averaged down by the conversion and copied 1:1 by the renderer (the software
 * renderer blits, never scales down), magnified ones repeat pixels (nearest). On the GPU the
 * chain's result stays on the device and ts_pipeline_result + ts_display_convert
 * (kernels/display.cu) send down only those texels, straight into the locked texture: no
 * full-size download, no host conversion. Elsewhere (the CPU backend, src, before|after)
 * viewer_display.c converts the host image the same way on a few threads. Textures only grow:
 * no per-frame allocations but a small one.
 */
#include "viewer_tex.h"
#include "viewer_display.h"
#include "util.h"

#ifdef TS_HAVE_SDL

#include <math.h>
#include <string.h>


/* (Re)creates *t when it is smaller than w x h; 0 when it fits, -1 on error. */
static int ensure_texture(vw_win *win, SDL_Texture **t, int w, int h, int *tw, int *th)
{
    if (*t && *tw >= w && *th >= h)
        return 0;
    if (*t)
        SDL_DestroyTexture(*t);
    *t = SDL_CreateTexture(win->ren, win->tex_format, SDL_TEXTUREACCESS_STREAMING, w, h);
    if (!*t) {
        *tw = *th = 0;
        ts_warn("SDL_CreateTexture %dx%d: %s", w, h, SDL_GetError());
        return -1;
    }
    *tw = w;
    *th = h;
    /* texels are screen pixels, or image pixels repeated when magnified: never filtered */
    vw_sdl(SDL_SetTextureScaleMode(*t, SDL_ScaleModeNearest), "SDL_SetTextureScaleMode");
    return 0;
}

static int lock(SDL_Texture *t, const ts_display_map *m, void **px, int *pitch)
{
    SDL_Rect r = {0, 0, m->tw, m->th};
    if (SDL_LockTexture(t, &r, px, pitch) != 0) {
        ts_warn("SDL_LockTexture: %s", SDL_GetError());
        return -1;
    }
    return 0;
}

/* The GPU path: the result, still on the device, resampled there; only the texels come down,
 * straight into the locked texture. TS_OK, or the failure (the caller falls back). */
static ts_status fill_gpu(vw_tex *v, const vw_run *r, const ts_display_map *m)
{
    SDL_Texture *t = v->tex;
    const ts_image *d = ts_pipeline_result(r->pipe);
    size_t pitch = (size_t)m->tw * 4, need = pitch * (size_t)m->th;
    ts_stream s = ts_pipeline_stream(r->pipe);
    ts_status st;
    if (need > v->d_disp_cap) {
        ts_gpu_free(v->d_disp);
        v->d_disp = NULL;
        v->d_disp_cap = 0;
        if ((st = ts_gpu_malloc(&v->d_disp, need)) != TS_OK)
            return st;
        v->d_disp_cap = need;
    }
    if ((st = ts_display_convert(d, m, v->d_disp, pitch, s)) != TS_OK)
        return st;
    void *px;
    int lp;
    if (lock(t, m, &px, &lp) != 0)
        return ts_fail(TS_ERR_INVALID, "SDL_LockTexture: %s", SDL_GetError());
    ts_image h = {px, (size_t)lp, m->tw, m->th, 4, 1}, dd = {v->d_disp, pitch, m->tw, m->th, 4, 1};
    if ((st = ts_gpu_download(&h, &dd, s)) == TS_OK && (st = ts_gpu_sync(s)) == TS_OK)
        vw_display_hist(px, h.pitch, m->tw, m->th, v->hist);
    SDL_UnlockTexture(t);
    return st;
}

/* The host path; -1 on an SDL failure, 1 when the map does not fit (nothing to show). The
 * histogram is of the main texture only. */
static int fill_host(vw_tex *v, SDL_Texture *t, const ts_image *im, const ts_display_map *m)
{
    void *px;
    int lp;
    if (vw_display_check(m, im->width, im->height) != 0)
        return 1;
    if (lock(t, m, &px, &lp) != 0)
        return -1;
    vw_display_convert(im, m, px, (size_t)lp, v->threads);
    if (t == v->tex)
        vw_display_hist(px, (size_t)lp, m->tw, m->th, v->hist);
    SDL_UnlockTexture(t);
    return 0;
}

static int same_map(const ts_display_map *a, const ts_display_map *b)
{
    return a->gw == b->gw && a->gh == b->gh && a->gx0 == b->gx0 && a->gy0 == b->gy0 &&
           a->tw == b->tw && a->th == b->th;
}

/* The result's texture (or src's when nothing ran), over the area or, in before|after, its
 * right half. */
static int update_main(vw_tex *v, vw_win *win, vw_run *r, const vw_view *view, vw_area a)
{
    const ts_image *im = vw_run_displayed(r);
    int compare = a.compare && r->have_result;
    vw_display d;
    v->shown = vw_display_for_view(view, im->width, im->height, compare ? a.w / 2 : 0, 0, a.w,
                                   a.h, &d);
    if (!v->shown)
        return 0;
    if (v->shown_gen == r->shown_gen && same_map(&d.map, &v->disp.map)) {
        v->disp = d; /* the same texels, maybe elsewhere (the area moved its centre) */
        return 0;
    }
    const ts_display_map *m = &d.map;
    if (ensure_texture(win, &v->tex, m->tw, m->th, &v->tex_w, &v->tex_h) != 0)
        return -1;
    if (r->have_result && r->result_on_gpu && !ts_pipeline_result(r->pipe)) {
        r->dirty = 1; /* a speedup run since has overwritten it: the chain runs again (fast) */
        vw_run_process(r);
        im = vw_run_displayed(r);
        if (!im || im->width != view->iw || im->height != view->ih) {
            v->shown = 0; /* failed, or another shape: next frame */
            return 0;
        }
    }
    v->on_gpu = r->have_result && r->result_on_gpu;
    int rc = 0;
    if (v->on_gpu && fill_gpu(v, r, m) != TS_OK) {
        ts_warn("the GPU display conversion failed (%s): converting on the host from now on",
                ts_error_detail());
        r->gpu_display_off = 1;
        v->on_gpu = 0;
        rc = (im = vw_run_host_result(r)) ? fill_host(v, v->tex, im, m) : 1;
    } else if (!v->on_gpu) {
        rc = fill_host(v, v->tex, im, m);
    }
    if (rc < 0)
        return -1;
    v->shown = rc == 0;
    v->disp = d;
    v->shown_gen = r->shown_gen;
    return 0;
}

/* src's texture in before|after: the left half, sharing the result's centre (a rotation changes
 * the shape). */
static int update_before(vw_tex *v, vw_win *win, const vw_run *r, const vw_view *view, vw_area a)
{
    double z = view->zoom;
    double cx = view->ox + r->result.width * z / 2, cy = view->oy + r->result.height * z / 2;
    vw_view bv = *view;
    bv.ox = round(cx - r->src.width * z / 2);
    bv.oy = round(cy - r->src.height * z / 2);
    vw_display d;
    v->before_shown = vw_display_for_view(&bv, r->src.width, r->src.height, 0, 0, a.w / 2, a.h,
                                          &d);
    if (!v->before_shown)
        return 0;
    if (v->before_gen == r->gen && same_map(&d.map, &v->before_disp.map)) {
        v->before_disp = d;
        return 0;
    }
    int rc = ensure_texture(win, &v->before, d.map.tw, d.map.th, &v->before_w, &v->before_h);
    if (rc == 0 && (rc = fill_host(v, v->before, &r->src, &d.map)) < 0)
        return -1;
    v->before_shown = rc == 0;
    v->before_disp = d;
    v->before_gen = r->gen;
    return 0;
}

int vw_tex_update(vw_tex *t, vw_win *w, vw_run *r, const vw_view *view, vw_area a)
{
    if (!vw_run_displayed(r))
        return 0;
    if (!t->threads)
        t->threads = cpu_count();
    if (update_main(t, w, r, view, a) != 0)
        return -1;
    if (a.compare && r->have_result && update_before(t, w, r, view, a) != 0)
        return -1;
    return 0;
}

/* ---------------------------------------------------------------- drawing */

static void draw_texture(vw_win *w, SDL_Texture *t, const vw_display *d)
{
    const ts_display_map *m = &d->map;
    SDL_Rect src = {0, 0, m->tw, m->th};
    if (d->scale == 1) { /* reduced or 1:1: a plain copy, which the software renderer blits */
        SDL_Rect dst = {(int)d->x, (int)d->y, m->tw, m->th};
        vw_sdl(SDL_RenderCopy(w->ren, t, &src, &dst), "SDL_RenderCopy");
        return;
    }
    SDL_FRect dst = {(float)d->x, (float)d->y, (float)(m->tw * d->scale),
                     (float)(m->th * d->scale)};
    vw_sdl(SDL_RenderCopyF(w->ren, t, &src, &dst), "SDL_RenderCopyF");
}

/* The background where the image leaves the area uncovered (no clear under the image). */
static void clear_around(vw_win *w, const vw_display *d, vw_area a)
{
    double x0 = d->x, y0 = d->y, x1 = x0 + d->map.tw * d->scale, y1 = y0 + d->map.th * d->scale;
    int ix0 = x0 < 0 ? 0 : (int)ceil(x0), iy0 = y0 < 0 ? 0 : (int)ceil(y0);
    int ix1 = x1 > a.w ? a.w : (int)floor(x1), iy1 = y1 > a.h ? a.h : (int)floor(y1);
    SDL_Rect r[4];
    int n = 0;
    if (iy0 > 0)
        r[n++] = (SDL_Rect){0, 0, a.w, iy0};
    if (iy1 < a.h)
        r[n++] = (SDL_Rect){0, iy1, a.w, a.h - iy1};
    if (ix0 > 0)
        r[n++] = (SDL_Rect){0, iy0, ix0, iy1 - iy0};
    if (ix1 < a.w)
        r[n++] = (SDL_Rect){ix1, iy0, a.w - ix1, iy1 - iy0};
    if (n)
        vw_sdl(SDL_RenderFillRects(w->ren, r, n), "SDL_RenderFillRects");
}

static void fill_area(vw_win *w, vw_area a)
{
    SDL_Rect r = {0, 0, a.w, a.h};
    vw_sdl(SDL_RenderFillRect(w->ren, &r), "SDL_RenderFillRect");
}

/* before | after: the two halves and the line between them (the labels are the UI's) */
static void draw_compare(vw_tex *t, vw_win *w, vw_area a)
{
    int split = a.w / 2;
    fill_area(w, a);
    if (t->before_shown && t->before)
        draw_texture(w, t->before, &t->before_disp);
    if (t->shown)
        draw_texture(w, t->tex, &t->disp);
    if (vw_sdl(SDL_SetRenderDrawColor(w->ren, 255, 255, 255, 255), "SDL_SetRenderDrawColor") == 0)
        vw_sdl(SDL_RenderDrawLine(w->ren, split, 0, split, a.h), "SDL_RenderDrawLine");
}

void vw_tex_draw(vw_tex *t, vw_win *w, const vw_run *r, vw_area a)
{
    if (vw_sdl(SDL_SetRenderDrawColor(w->ren, 32, 32, 36, 255), "SDL_SetRenderDrawColor") != 0)
        return;
    if (!vw_run_displayed(r) || !t->tex || !t->shown) {
        fill_area(w, a);
        return;
    }
    if (a.compare && r->have_result) {
        draw_compare(t, w, a);
        return;
    }
    clear_around(w, &t->disp, a);
    draw_texture(w, t->tex, &t->disp);
}

void vw_tex_free(vw_tex *t)
{
    if (t->tex)
        SDL_DestroyTexture(t->tex);
    if (t->before)
        SDL_DestroyTexture(t->before);
    t->tex = t->before = NULL;
    ts_gpu_free(t->d_disp);
    t->d_disp = NULL;
    t->d_disp_cap = 0;
}

#else
typedef int vw_tex_unused; /* ISO C wants a declaration in every file */
#endif /* TS_HAVE_SDL */
