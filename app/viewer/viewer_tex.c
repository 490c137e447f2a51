/* viewer_tex.c - the display textures and drawing the image.
 *
 * A texture holds only the visible part of the image at its on-screen size (viewer_view.c):
 * reduced views are resampled as the resize op does (lanczos3, viewer_display.h) and copied 1:1
 * by the renderer (the software renderer blits, never scales down), magnified ones repeat pixels
 * (nearest). On the GPU the chain's result stays on the device: the resize op's GPU variant
 * resamples it there on a display pipeline of its own (once per image and zoom), and
 * ts_display_convert (kernels/display.cu) sends down only the visible texels, straight into the
 * locked texture: no full-size download, no host conversion. Elsewhere (the CPU backend,
 * before|after) the host resamples with the reference, the frame after the view settled (box
 * cells meanwhile), and viewer_display.c converts on a few threads. Textures only grow: no
 * per-frame allocations but a small one.
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
        app_warn("SDL_CreateTexture %dx%d: %s", w, h, SDL_GetError());
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
        app_warn("SDL_LockTexture: %s", SDL_GetError());
        return -1;
    }
    return 0;
}

/* The GPU path: device image d (the chain's result, or its resampling) converted there; only the
 * texels come down, straight into the locked texture. TS_OK, or the failure (the caller falls
 * back). */
static ts_status fill_gpu(vw_tex *v, const ts_image *d, const ts_display_map *m, ts_stream s)
{
    SDL_Texture *t = v->tex;
    size_t pitch = (size_t)m->tw * 4, need = pitch * (size_t)m->th;
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

/* The GPU's resampling failed (memory, most likely): box cells from now on, from the chain's
 * result on the device, or from src on the host. */
static ts_status resample_failed(vw_tex *v, const vw_run *r, const ts_image **d, ts_stream *s)
{
    app_warn("resampling the view on the GPU failed (%s): box cells from now on",
            ts_error_detail());
    v->dev_rs_off = 1;
    v->dev_valid = 0;
    *d = r->have_result && r->result_on_gpu ? ts_pipeline_result(r->pipe) : NULL;
    *s = ts_pipeline_stream(r->pipe);
    return TS_OK;
}

/* The device image that map m shows on the GPU backend, and the stream its work is on: the
 * chain's result as it is, or (a zoomed-out view) the resize op's GPU variant's resampling of it
 * (or of src, uploaded once and kept, when nothing ran), made once per image and zoom on the
 * display pipeline. *d NULL: nothing on the device to show (src at 1:1 or larger: the host
 * copies it). */
static ts_status dev_source(vw_tex *v, const vw_run *r, const ts_display_map *m,
                            const ts_image **d, ts_stream *s)
{
    const ts_image *im = vw_run_displayed(r);
    int on_dev = r->have_result && r->result_on_gpu;
    *d = NULL;
    *s = ts_pipeline_stream(r->pipe);
    /* a preview is shown as box cells: it is replaced within a fraction of a second */
    if (r->preview || v->dev_rs_off ||
        !vw_display_resampled(m, im->width, im->height, im->channels, 0)) {
        *d = on_dev ? ts_pipeline_result(r->pipe) : NULL;
        return TS_OK;
    }
    ts_status st = TS_OK;
    if (!v->dpipe) {
        char msg[256];
        const ts_device *dev = ts_pipeline_device(r->pipe);
        if ((st = ts_pipeline_create_on(&v->dpipe, TS_BACKEND_GPU, dev ? dev->id : -1, msg,
                                        sizeof msg)) != TS_OK)
            return resample_failed(v, r, d, s);
    }
    if (!(v->dev_valid && v->dev_gen == r->shown_gen && v->dev_gw == m->gw &&
          v->dev_gh == m->gh && ts_pipeline_result(v->dpipe))) {
        ts_op op;
        if ((st = vw_display_resize_op(m->gw, m->gh, &op)) != TS_OK)
            return st;
        ts_chain c = {1, &op};
        ts_image out = {0};
        ts_run_report rep;
        v->dev_valid = 0;
        if (on_dev) { /* the result is complete once its stream is */
            if ((st = ts_gpu_sync(*s)) == TS_OK)
                st = ts_pipeline_run_dev(v->dpipe, &c, ts_pipeline_result(r->pipe), &out, &rep,
                                         &(ts_run_opts){0, 0, 0, 1});
            v->dev_src_gen = 0;
        } else { /* src, or a result brought to the host (a save): kept uploaded while src */
            int is_src = im == &r->src;
            st = ts_pipeline_run_ex(v->dpipe, &c, im, &out, &rep,
                                    &(ts_run_opts){1, is_src && v->dev_src_gen == r->gen, 0, 1});
            v->dev_src_gen = st == TS_OK && is_src ? r->gen : 0;
        }
        ts_image_free(&out); /* its shape only: the pixels stay on the device */
        if (st != TS_OK)
            return resample_failed(v, r, d, s);
        v->dev_valid = 1;
        v->dev_gen = r->shown_gen;
        v->dev_gw = m->gw;
        v->dev_gh = m->gh;
    }
    *d = ts_pipeline_result(v->dpipe);
    *s = ts_pipeline_stream(v->dpipe);
    v->resampled = 1;
    return *d ? TS_OK : ts_fail(TS_ERR_INVALID, "display: the resampled view is gone");
}

/* Map m of host image im (generation gen) into dst: from the resampled cache c, resampled now
 * (the view was shown as box cells last time), or as box cells while the resampling waits for
 * the next update (or for good: `boxed`, a preview). Returns 1 when resampled. */
static int convert_host(vw_tex *v, vw_rs_host *c, const ts_image *im, unsigned gen,
                        const ts_display_map *m, void *dst, size_t pitch, int boxed)
{
    c->waiting = 0;
    if (!boxed && vw_display_resampled(m, im->width, im->height, im->channels, 1) &&
        !(c->fail_gen == gen && c->fail_gw == m->gw && c->fail_gh == m->gh)) {
        int have = c->im.data && c->gen == gen && c->im.width == m->gw && c->im.height == m->gh;
        if (!have && c->wait_gen == gen && c->wait_gw == m->gw && c->wait_gh == m->gh) {
            ts_image_free(&c->im);
            if (vw_display_resample(im, m->gw, m->gh, &c->im) == TS_OK) {
                c->gen = gen;
                have = 1;
            } else {
                app_warn("resampling the view failed (%s): box cells instead", ts_error_detail());
                ts_image_free(&c->im);
                c->fail_gen = gen;
                c->fail_gw = m->gw;
                c->fail_gh = m->gh;
            }
        } else if (!have) {
            c->waiting = 1;
            c->wait_gen = gen;
            c->wait_gw = m->gw;
            c->wait_gh = m->gh;
        }
        if (have) {
            vw_display_convert(&c->im, m, dst, pitch, v->threads);
            return 1;
        }
    }
    vw_display_convert(im, m, dst, pitch, v->threads);
    return 0;
}

/* The host path; -1 on an SDL failure, 1 when the map does not fit (nothing to show). The
 * histogram is of the main texture only. */
static int fill_host(vw_tex *v, SDL_Texture *t, vw_rs_host *c, const ts_image *im, unsigned gen,
                     const ts_display_map *m, int boxed)
{
    void *px;
    int lp;
    if (vw_display_check(m, im->width, im->height) != 0)
        return 1;
    if (lock(t, m, &px, &lp) != 0)
        return -1;
    int rs = convert_host(v, c, im, gen, m, px, (size_t)lp, boxed);
    if (t == v->tex) {
        v->resampled = rs;
        vw_display_hist(px, (size_t)lp, m->tw, m->th, v->hist);
    }
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
    if (!v->rs_main.waiting && v->shown_gen == r->shown_gen && same_map(&d.map, &v->disp.map)) {
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
    int rc = 0;
    v->on_gpu = v->resampled = 0;
    if (ts_pipeline_on_gpu(r->pipe) && !r->gpu_display_off) {
        const ts_image *dsrc;
        ts_stream s;
        ts_status st = dev_source(v, r, m, &dsrc, &s);
        if (st == TS_OK && dsrc)
            st = fill_gpu(v, dsrc, m, s);
        if (st != TS_OK) {
            app_warn("the GPU display conversion failed (%s): converting on the host from now on",
                    ts_error_detail());
            r->gpu_display_off = 1;
            v->resampled = 0;
            im = vw_run_host_result(r);
        } else
            v->on_gpu = dsrc != NULL;
    }
    v->rs_main.waiting = 0;
    if (!v->on_gpu)
        rc = im ? fill_host(v, v->tex, &v->rs_main, im, r->shown_gen, m, r->preview) : 1;
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
    if (!v->rs_before.waiting && v->before_gen == r->gen && same_map(&d.map, &v->before_disp.map)) {
        v->before_disp = d;
        return 0;
    }
    int rc = ensure_texture(win, &v->before, d.map.tw, d.map.th, &v->before_w, &v->before_h);
    if (rc == 0 && (rc = fill_host(v, v->before, &v->rs_before, &r->src, r->gen, &d.map, 0)) < 0)
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

int vw_tex_waiting(const vw_tex *t) { return t->rs_main.waiting || t->rs_before.waiting; }

void vw_tex_free(vw_tex *t)
{
    ts_image_free(&t->rs_main.im);
    ts_image_free(&t->rs_before.im);
    ts_pipeline_destroy(t->dpipe);
    t->dpipe = NULL;
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
