/* viewer_grid.h - thumbnail mode (-t, Enter): the grid of the file list's thumbnails, the
 * selected one framed, a status line; the cells on screen are made first (viewer_thumbs.c) and
 * each is uploaded as a texture once made (viewer_grid.c). */
#ifndef TS_VIEWER_GRID_H
#define TS_VIEWER_GRID_H

#ifdef TS_HAVE_SDL
#include "viewer_files.h"
#include "viewer_thumbs.h"
#include "viewer_win.h"

typedef struct vw_grid {
    int on;              /* the grid is shown (else the image) */
    int started;         /* the thumbnails are being made (vw_thumbs) */
    vw_thumbs th;
    SDL_Texture **tex;   /* one a made thumbnail, created when first on screen */
    int n;
    int sel;             /* the selected file */
    vw_grid_geom geom;   /* the last layout */
    double screen_ms;    /* the first frame with every cell on screen filled (from the viewer's
                            start), 0: not yet */
    int screen_cells;    /* how many cells that screen had */
    int redraw;          /* an event came: draw the next frame */
    int drawn_ready;     /* cells on screen made (or failed) in the last frame drawn */
    int drawn_finished;  /* every thumbnail was made by then */
    double drawn_at;     /* when (now_ms) */
} vw_grid;

/* Starts making thumbnails of f's files (the first call only). 0, or -1 with the reason printed. */
int vw_grid_start(vw_grid *g, const vw_files *f, int threads, ts_backend backend,
                  uint64_t max_pixels, void (*wake)(void));
/* Draws the grid and its status line (ui text scale s); 1 when every cell on screen is filled
 * (made or failed). */
int vw_grid_draw(vw_grid *g, vw_win *w, const vw_files *f, int s);
/* 1 when the grid wants a frame: an event came (redraw), a cell on screen was made, the last
 * thumbnail was made, or the status line's figure is half a second old while they are made. */
int vw_grid_due(vw_grid *g);
/* Moves the selection by d (clamped to the list). */
void vw_grid_move(vw_grid *g, int d);
/* The status line's height at scale s (the grid fills the rest). */
int vw_grid_line(int s);
void vw_grid_free(vw_grid *g);

#endif /* TS_HAVE_SDL */
#endif
