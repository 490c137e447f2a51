/* viewer_image.c - what the viewer shows: the file list, loading, the chain run, the display
 * texture, saving and screenshots.
 *
 * The display texture holds only the visible part of the image at its on-screen size
 * (viewer_view.c): reduced views are averaged down by the conversion and copied 1:1 by the
 * renderer (the software renderer blits, never scales down), magnified ones repeat pixels
 * (nearest). On the GPU the chain's result stays on the device and ts_pipeline_result +
 * ts_display_convert (kernels/display.cu) send down only those texels, straight into the locked
 * texture: no full-size download, no host conversion. Elsewhere (the CPU backend, src, before|
 * after) viewer_display.c converts the host image the same way on a few threads. The pipeline
 * keeps the input on the GPU, and textures only grow: no per-frame allocations but a small one.
 */
#include "viewer.h"
#include "util.h"

#ifdef TS_HAVE_SDL

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- files */

static void add_file(viewer *v, const char *path)
{
    if (v->n_files == v->cap_files) {
        v->cap_files = v->cap_files ? 2 * v->cap_files : 32;
        char **grown = realloc(v->files, (size_t)v->cap_files * sizeof *grown);
        if (!grown) {
            ts_warn("out of memory");
            exit(1);
        }
        v->files = grown;
    }
    v->files[v->n_files++] = xstrdup(path);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory's images in name order (not recursive); a file as given, image or not, so that
 * a bad file shows its error instead of vanishing. */
void vw_files_add(viewer *v, const char *path)
{
    if (!path_is_dir(path)) {
        add_file(v, path);
        return;
    }
    DIR *d = opendir(path);
    if (!d) {
        add_file(v, path); /* shows the error when opened */
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !tsio_is_image_name(e->d_name))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(names, cap * sizeof *grown);
            if (!grown) {
                ts_warn("out of memory");
                exit(1);
            }
            names = grown;
        }
        names[n++] = path_join(path, e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (!path_is_dir(names[i]))
            add_file(v, names[i]);
        free(names[i]);
    }
    free(names);
}

/* ---------------------------------------------------------------- loading and running */

void vw_open(viewer *v, int index)
{
    char err[256];
    tsio_load_opts lo = {.max_pixels = v->o->max_pixels};
    ts_image_free(&v->src);
    v->have_result = v->result_on_gpu = 0;
    v->loaded = -1;
    v->cur = index;
    v->start_frame = 1;
    vw_frames_reset(&v->frames);
    v->load_err[0] = v->run_err[0] = '\0';
    if (tsio_load(v->files[index], &lo, &v->src, err, sizeof err) == TS_OK)
        v->loaded = index;
    else
        snprintf(v->load_err, sizeof v->load_err, "%s: %s", path_base(v->files[index]), err);
    v->gen++;
    v->dirty = 1;
    v->tex_stale = 1;
    v->view_iw = v->view_ih = 0; /* fit the new image */
    memset(v->op_ms, 0, sizeof v->op_ms);
    memset(&v->up_ms, 0, sizeof v->up_ms);
    memset(&v->down_ms, 0, sizeof v->down_ms);
    vw_bench_reset(v);
}

const ts_image *vw_displayed(const viewer *v)
{
    if (v->loaded < 0)
        return NULL;
    return v->have_result ? &v->result : &v->src;
}

void vw_process(viewer *v)
{
    /* after a failure, live mode waits for a change instead of failing every frame */
    if (v->loaded < 0 || (!v->dirty && (!v->live || v->run_err[0])))
        return;
    v->dirty = 0;
    v->run_err[0] = '\0';
    if (v->chain.n == 0) { /* nothing to run: show the image itself (live mode has no work) */
        v->tex_stale |= v->have_result;
        v->have_result = 0;
        return;
    }
    /* on the GPU the result stays there: the display conversion reads it (vw_update_textures) */
    ts_run_opts ro = {1, v->gen_on_gpu == v->gen, 1, !v->gpu_display_off};
    ts_status st = ts_pipeline_run_ex(v->pipe, &v->chain, &v->src, &v->result, &v->rep, &ro);
    v->tex_stale = 1;
    if (st != TS_OK) {
        snprintf(v->run_err, sizeof v->run_err, "%s", ts_error_detail());
        v->have_result = v->result_on_gpu = 0;
        v->gen_on_gpu = 0;
        return;
    }
    v->have_result = 1;
    v->result_on_gpu = ts_pipeline_result(v->pipe) != NULL;
    if (ts_pipeline_on_gpu(v->pipe))
        v->gen_on_gpu = v->gen;
    for (int i = 0; i < v->chain.n; i++)
        vw_stat_add(&v->op_ms[i], v->rep.op[i].ms);
    if (!v->rep.input_resident && ts_pipeline_on_gpu(v->pipe)) {
        vw_stat_add(&v->up_ms, v->rep.upload_ms);
        v->first_upload_ms = v->rep.upload_ms;
        v->start_frame = 1; /* an upload: not a steady frame */
    }
    if (!v->result_on_gpu)
        vw_stat_add(&v->down_ms, v->rep.download_ms);
}

/* ---------------------------------------------------------------- display textures */

/* (Re)creates *t when it is smaller than w x h; 0 when it fits, -1 on error. */
static int ensure_texture(viewer *v, SDL_Texture **t, int w, int h, int *tw, int *th)
{
    if (*t && *tw >= w && *th >= h)
        return 0;
    if (*t)
        SDL_DestroyTexture(*t);
    *t = SDL_CreateTexture(v->ren, v->tex_format, SDL_TEXTUREACCESS_STREAMING, w, h);
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
static ts_status fill_gpu(viewer *v, SDL_Texture *t, const ts_display_map *m, int hist)
{
    const ts_image *d = ts_pipeline_result(v->pipe);
    size_t pitch = (size_t)m->tw * 4, need = pitch * (size_t)m->th;
    ts_stream s = ts_pipeline_stream(v->pipe);
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
    if ((st = ts_gpu_download(&h, &dd, s)) == TS_OK && (st = ts_gpu_sync(s)) == TS_OK && hist)
        vw_display_hist(px, h.pitch, m->tw, m->th, v->hist);
    SDL_UnlockTexture(t);
    return st;
}

/* The host path; -1 on an SDL failure, 1 when the map does not fit (nothing to show). */
static int fill_host(viewer *v, SDL_Texture *t, const ts_image *im, const ts_display_map *m,
                     int hist)
{
    void *px;
    int lp;
    if (vw_display_check(m, im->width, im->height) != 0)
        return 1;
    if (lock(t, m, &px, &lp) != 0)
        return -1;
    vw_display_convert(im, m, px, (size_t)lp, v->threads);
    if (hist)
        vw_display_hist(px, (size_t)lp, m->tw, m->th, v->hist);
    SDL_UnlockTexture(t);
    return 0;
}

/* The host result of a chain that left it on the GPU: the chain runs again with a download
 * (the input is still there). NULL, with run_err set, on failure. */
static const ts_image *host_result(viewer *v)
{
    if (!v->have_result || !v->result_on_gpu)
        return vw_displayed(v);
    ts_run_opts ro = {1, v->gen_on_gpu == v->gen, 1, 0};
    if (ts_pipeline_run_ex(v->pipe, &v->chain, &v->src, &v->result, &v->rep, &ro) != TS_OK) {
        snprintf(v->run_err, sizeof v->run_err, "%s", ts_error_detail());
        v->have_result = v->result_on_gpu = 0;
        v->gen_on_gpu = 0;
        return NULL;
    }
    v->result_on_gpu = 0;
    return &v->result;
}

static int same_map(const ts_display_map *a, const ts_display_map *b)
{
    return a->gw == b->gw && a->gh == b->gh && a->gx0 == b->gx0 && a->gy0 == b->gy0 &&
           a->tw == b->tw && a->th == b->th;
}

/* The result's texture (or src's when nothing ran), over the window or, in before|after, its
 * right half. */
static int update_main(viewer *v)
{
    const ts_image *im = vw_displayed(v);
    int compare = v->compare && v->have_result;
    vw_display d;
    v->tex_shown = vw_display_for_view(&v->view, im->width, im->height, compare ? v->ww / 2 : 0, 0,
                                       v->ww, v->wh, &d);
    if (!v->tex_shown || (!v->tex_stale && same_map(&d.map, &v->disp.map)))
        return 0;
    const ts_display_map *m = &d.map;
    if (ensure_texture(v, &v->tex, m->tw, m->th, &v->tex_w, &v->tex_h) != 0)
        return -1;
    if (v->have_result && v->result_on_gpu && !ts_pipeline_result(v->pipe)) {
        v->dirty = 1; /* a speedup run since has overwritten it: the chain runs again (fast) */
        vw_process(v);
        im = vw_displayed(v);
        if (!im || im->width != v->view_iw || im->height != v->view_ih) {
            v->tex_shown = 0; /* failed, or another shape: next frame */
            return 0;
        }
    }
    v->disp_on_gpu = v->have_result && v->result_on_gpu;
    int rc = 0;
    if (v->disp_on_gpu && fill_gpu(v, v->tex, m, 1) != TS_OK) {
        ts_warn("the GPU display conversion failed (%s): converting on the host from now on",
                ts_error_detail());
        v->gpu_display_off = 1;
        v->disp_on_gpu = 0;
        rc = (im = host_result(v)) ? fill_host(v, v->tex, im, m, 1) : 1;
    } else if (!v->disp_on_gpu) {
        rc = fill_host(v, v->tex, im, m, 1);
    }
    if (rc < 0)
        return -1;
    v->tex_shown = rc == 0;
    v->disp = d;
    v->tex_stale = 0;
    return 0;
}

/* src's texture in before|after: the left half, sharing the result's centre (a rotation changes
 * the shape). */
static int update_before(viewer *v)
{
    double z = v->view.zoom;
    double cx = v->view.ox + v->result.width * z / 2, cy = v->view.oy + v->result.height * z / 2;
    vw_view bv = v->view;
    bv.ox = round(cx - v->src.width * z / 2);
    bv.oy = round(cy - v->src.height * z / 2);
    vw_display d;
    v->before_shown = vw_display_for_view(&bv, v->src.width, v->src.height, 0, 0, v->ww / 2,
                                          v->wh, &d);
    if (!v->before_shown || (v->tex_gen_before == v->gen && same_map(&d.map, &v->before_disp.map)))
        return 0;
    int rc = ensure_texture(v, &v->tex_before, d.map.tw, d.map.th, &v->before_w, &v->before_h);
    if (rc == 0 && (rc = fill_host(v, v->tex_before, &v->src, &d.map, 0)) < 0)
        return -1;
    v->before_shown = rc == 0;
    v->before_disp = d;
    v->tex_gen_before = v->gen;
    return 0;
}

int vw_update_textures(viewer *v)
{
    if (!vw_displayed(v))
        return 0;
    if (!v->threads)
        v->threads = cpu_count();
    if (update_main(v) != 0)
        return -1;
    if (v->compare && v->have_result && update_before(v) != 0)
        return -1;
    return 0;
}

/* ---------------------------------------------------------------- drawing */

static void draw_texture(viewer *v, SDL_Texture *t, const vw_display *d)
{
    const ts_display_map *m = &d->map;
    SDL_Rect src = {0, 0, m->tw, m->th};
    if (d->scale == 1) { /* reduced or 1:1: a plain copy, which the software renderer blits */
        SDL_Rect dst = {(int)d->x, (int)d->y, m->tw, m->th};
        vw_sdl(SDL_RenderCopy(v->ren, t, &src, &dst), "SDL_RenderCopy");
        return;
    }
    SDL_FRect dst = {(float)d->x, (float)d->y, (float)(m->tw * d->scale),
                     (float)(m->th * d->scale)};
    vw_sdl(SDL_RenderCopyF(v->ren, t, &src, &dst), "SDL_RenderCopyF");
}

/* The background where the image leaves the window uncovered (no clear under the image). */
static void clear_around(viewer *v, const vw_display *d)
{
    double x0 = d->x, y0 = d->y, x1 = x0 + d->map.tw * d->scale, y1 = y0 + d->map.th * d->scale;
    int ix0 = x0 < 0 ? 0 : (int)ceil(x0), iy0 = y0 < 0 ? 0 : (int)ceil(y0);
    int ix1 = x1 > v->ww ? v->ww : (int)floor(x1), iy1 = y1 > v->wh ? v->wh : (int)floor(y1);
    SDL_Rect r[4];
    int n = 0;
    if (iy0 > 0)
        r[n++] = (SDL_Rect){0, 0, v->ww, iy0};
    if (iy1 < v->wh)
        r[n++] = (SDL_Rect){0, iy1, v->ww, v->wh - iy1};
    if (ix0 > 0)
        r[n++] = (SDL_Rect){0, iy0, ix0, iy1 - iy0};
    if (ix1 < v->ww)
        r[n++] = (SDL_Rect){ix1, iy0, v->ww - ix1, iy1 - iy0};
    if (n)
        vw_sdl(SDL_RenderFillRects(v->ren, r, n), "SDL_RenderFillRects");
}

static void draw_compare(viewer *v)
{
    static const SDL_Color white = {255, 255, 255, 255};
    int split = v->ww / 2;
    vw_sdl(SDL_RenderClear(v->ren), "SDL_RenderClear");
    if (v->before_shown && v->tex_before)
        draw_texture(v, v->tex_before, &v->before_disp);
    if (v->tex_shown)
        draw_texture(v, v->tex, &v->disp);
    if (vw_sdl(SDL_SetRenderDrawColor(v->ren, 255, 255, 255, 255), "SDL_SetRenderDrawColor") == 0)
        vw_sdl(SDL_RenderDrawLine(v->ren, split, 0, split, v->wh), "SDL_RenderDrawLine");
    int s = v->wh >= 700 ? 2 : 1;
    vw_text(v, split - vw_text_width("before", s) - 8 * s, v->wh - 14 * s, s, white, "before");
    vw_text(v, split + 8 * s, v->wh - 14 * s, s, white, "after");
}

void vw_draw_image(viewer *v)
{
    if (vw_sdl(SDL_SetRenderDrawColor(v->ren, 32, 32, 36, 255), "SDL_SetRenderDrawColor") != 0)
        return;
    if (!vw_displayed(v) || !v->tex || !v->tex_shown) {
        vw_sdl(SDL_RenderClear(v->ren), "SDL_RenderClear");
        return;
    }
    if (v->compare && v->have_result) {
        draw_compare(v);
        return;
    }
    clear_around(v, &v->disp);
    draw_texture(v, v->tex, &v->disp);
}

/* ---------------------------------------------------------------- saving */

/* DIR/NAME.tessera.png beside the original, or NAME.tessera-N.png: never an existing file. */
static char *save_path(const char *orig)
{
    const char *base = path_base(orig);
    const char *dot = strrchr(base, '.');
    int stem = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
    int dir = (int)(base - orig);
    size_t len = strlen(orig) + 32;
    char *p = xmalloc(len);
    for (int i = 0; i < 1000; i++) {
        if (i == 0)
            snprintf(p, len, "%.*s%.*s.tessera.png", dir, orig, stem, base);
        else
            snprintf(p, len, "%.*s%.*s.tessera-%d.png", dir, orig, stem, base, i);
        if (!path_exists(p))
            return p;
    }
    free(p);
    return NULL;
}

void vw_save(viewer *v)
{
    char notice[256], err[256];
    vw_process(v); /* a change made in this frame is saved too */
    const ts_image *im = host_result(v);
    if (!im) {
        vw_toast(v, "nothing to save");
        return;
    }
    char *path = save_path(v->files[v->cur]);
    if (!path) {
        vw_toast(v, "cannot save: too many NAME.tessera-N.png files");
        return;
    }
    /* force = 0: never replaces a file, even one created since save_path looked */
    if (tsio_save_atomic(path, im, NULL, 0, notice, sizeof notice, err, sizeof err) == TS_OK) {
        vw_toast(v, "saved %s%s%s", path_base(path), notice[0] ? ": " : "", notice);
        if (!v->o->quiet)
            printf("tessera: saved %s\n", path);
    } else {
        vw_toast(v, "cannot save %s: %s", path_base(path), err);
        ts_warn("%s: %s", path, err);
    }
    fflush(stdout);
    free(path);
}

int vw_screenshot(viewer *v, const char *path)
{
    ts_image im;
    char notice[256], err[256];
    int w, h;
    if (SDL_GetRendererOutputSize(v->ren, &w, &h) != 0) {
        ts_warn("SDL_GetRendererOutputSize: %s", SDL_GetError());
        return -1;
    }
    if (ts_image_alloc(&im, w, h, 3, 1) != TS_OK) {
        ts_warn("screenshot: %s", ts_error_detail());
        return -1;
    }
    int rc = 0;
    if (SDL_RenderReadPixels(v->ren, NULL, SDL_PIXELFORMAT_RGB24, im.data, (int)im.pitch) != 0) {
        ts_warn("SDL_RenderReadPixels: %s", SDL_GetError());
        rc = -1;
    } else if (tsio_save(path, &im, NULL, notice, sizeof notice, err, sizeof err) != TS_OK) {
        ts_warn("%s: %s", path, err);
        rc = -1;
    }
    ts_image_free(&im);
    return rc;
}

void vw_image_free(viewer *v)
{
    if (v->tex)
        SDL_DestroyTexture(v->tex);
    if (v->tex_before)
        SDL_DestroyTexture(v->tex_before);
    v->tex = v->tex_before = NULL;
    ts_gpu_free(v->d_disp);
    v->d_disp = NULL;
    ts_image_free(&v->src);
    ts_image_free(&v->result);
}

#else
typedef int vw_image_unused; /* ISO C wants a declaration in every file */
#endif /* TS_HAVE_SDL */
