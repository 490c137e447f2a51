/* viewer_grid.c - thumbnail mode: the grid, the textures of the thumbnails on screen, the status
 * line. Nothing is drawn for a cell still being made but its frame; a file that cannot be shown
 * gets a red cross (opening it shows why). */
#include "viewer_grid.h"
#include "viewer_text.h"
#include "util.h"

#ifdef TS_HAVE_SDL

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const SDL_Color c_bg = {24, 24, 28, 255}, c_cell = {40, 40, 46, 255},
                       c_sel = {255, 214, 90, 255}, c_text = {235, 235, 235, 255},
                       c_dim = {160, 160, 170, 255}, c_bad = {255, 120, 110, 255};

int vw_grid_line(int s) { return (VW_TEXT_LINE + 6) * s; }

int vw_grid_start(vw_grid *g, const vw_files *f, int threads, ts_backend backend,
                  uint64_t max_pixels, void (*wake)(void))
{
    if (g->started)
        return 0;
    g->n = f->n;
    g->tex = calloc(f->n > 0 ? (size_t)f->n : 1, sizeof *g->tex);
    if (!g->tex || vw_thumbs_start(&g->th, f->path, f->n, threads, backend, max_pixels, wake)) {
        app_warn("thumbnails: cannot start their threads");
        return -1;
    }
    g->started = 1;
    return 0;
}

/* Cells on screen (as last laid out) made or failed. */
static int ready_on_screen(vw_grid *g)
{
    const vw_grid_geom *m = &g->geom;
    int first = m->top * m->cols, end = (m->top + m->rows) * m->cols, ready = 0, failed;
    for (int i = first; i < end && i < g->n; i++)
        ready += vw_thumbs_get(&g->th, i, &failed) != NULL || failed;
    return ready;
}

int vw_grid_due(vw_grid *g)
{
    if (g->redraw || g->geom.cols == 0)
        return 1;
    int finished = vw_thumbs_finished(&g->th);
    return ready_on_screen(g) != g->drawn_ready || finished != g->drawn_finished ||
           (!finished && now_ms() - g->drawn_at >= 500);
}

void vw_grid_move(vw_grid *g, int d)
{
    int s = g->sel + d;
    g->sel = g->n ? (s < 0 ? 0 : s >= g->n ? g->n - 1 : s) : 0;
}

/* Thumbnail i's texture: made on its first frame on screen. NULL while it is being made. */
static SDL_Texture *texture(vw_grid *g, vw_win *w, int i, int *failed)
{
    const ts_image *im = vw_thumbs_get(&g->th, i, failed);
    if (!im || g->tex[i])
        return g->tex[i];
    SDL_Texture *t = SDL_CreateTexture(w->ren, SDL_PIXELFORMAT_RGB24, SDL_TEXTUREACCESS_STATIC,
                                       im->width, im->height);
    if (!t || vw_sdl(SDL_UpdateTexture(t, NULL, im->data, (int)im->pitch), "SDL_UpdateTexture")) {
        if (!t)
            vw_sdl(-1, "SDL_CreateTexture");
        else
            SDL_DestroyTexture(t);
        *failed = 1;
        return NULL;
    }
    return g->tex[i] = t;
}

int vw_grid_draw(vw_grid *g, vw_win *w, const vw_files *f, int s)
{
    int lh = vw_grid_line(s), ah = w->wh - lh > 1 ? w->wh - lh : 1;
    vw_grid_fit(&g->geom, w->ww, ah, g->n, g->sel);
    const vw_grid_geom *m = &g->geom;
    int first = m->top * m->cols, last = (m->top + m->rows) * m->cols - 1;
    last = last >= g->n ? g->n - 1 : last;
    vw_thumbs_want(&g->th, first, last);
    vw_fill(w->ren, 0, 0, w->ww, w->wh, c_bg);
    int x0 = (w->ww - m->cols * m->cell) / 2, filled = 1, box = VW_THUMB_SIZE, shown = 0;
    for (int i = first; i <= last; i++) {
        int r = i / m->cols - m->top, c = i % m->cols;
        int x = x0 + c * m->cell + VW_THUMB_PAD / 2, y = r * m->cell + VW_THUMB_PAD / 2, failed;
        if (i == g->sel)
            vw_fill(w->ren, x - 4, y - 4, box + 8, box + 8, c_sel);
        vw_fill(w->ren, x, y, box, box, c_cell);
        SDL_Texture *t = texture(g, w, i, &failed);
        shown += t != NULL || failed;
        if (t) {
            int tw, th;
            SDL_QueryTexture(t, NULL, NULL, &tw, &th);
            SDL_Rect dst = {x + (box - tw) / 2, y + (box - th) / 2, tw, th};
            vw_sdl(SDL_RenderCopy(w->ren, t, NULL, &dst), "SDL_RenderCopy");
        } else if (failed) {
            vw_text(w->ren, x + box / 2 - vw_text_width("x", 4) / 2, y + box / 2 - 14, 4, c_bad,
                    "x");
        } else
            filled = 0;
    }
    /* the status line: the selected file, its place, and how far the thumbnails are */
    char line[512], prog[96] = "";
    int done = vw_thumbs_done(&g->th), n = g->n;
    if (done < n)
        snprintf(prog, sizeof prog, "   |   thumbnails %d / %d", done, n);
    snprintf(line, sizeof line, "%s   %d / %d%s", n ? path_base(f->path[g->sel]) : "no images",
             n ? g->sel + 1 : 0, n, prog);
    vw_fill(w->ren, 0, w->wh - lh, w->ww, lh, c_bg);
    vw_text(w->ren, 8 * s, w->wh - lh + 3 * s, s, c_text, line);
    static const char *const hint = "Enter open   arrows move   q quit";
    int hw = vw_text_width(hint, s);
    if (16 * s + vw_text_width(line, s) + 32 * s + hw <= w->ww)
        vw_text(w->ren, w->ww - 8 * s - hw, w->wh - lh + 3 * s, s, c_dim, hint);
    g->redraw = 0;
    g->drawn_ready = shown;
    g->drawn_finished = done == n;
    g->drawn_at = now_ms();
    return filled;
}

void vw_grid_free(vw_grid *g)
{
    if (g->started)
        vw_thumbs_free(&g->th);
    for (int i = 0; g->tex && i < g->n; i++)
        if (g->tex[i])
            SDL_DestroyTexture(g->tex[i]);
    free(g->tex);
    memset(g, 0, sizeof *g);
}

#else
typedef int vw_grid_unused; /* ISO C wants a declaration in every file */
#endif /* TS_HAVE_SDL */
