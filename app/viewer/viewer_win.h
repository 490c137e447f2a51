/* viewer_win.h - the window: SDL set-up, the renderer and what it can do, the window's size,
 * title and fullscreen state, presenting (paced to the display rate where the renderer does not
 * wait for vsync) and screenshots (viewer_win.c). */
#ifndef TS_VIEWER_WIN_H
#define TS_VIEWER_WIN_H

#ifdef TS_HAVE_SDL
#include <SDL.h>

typedef struct vw_win {
    SDL_Window *win;
    SDL_Renderer *ren;
    char renderer[32];
    int software;     /* the software renderer: nearest scaling (linear costs a frame) */
    int paced;        /* no vsync to wait for: present paces itself to refresh_hz */
    Uint32 tex_format;
    int max_tex;      /* largest texture side, 0: unlimited */
    int refresh_hz;
    int ww, wh;       /* renderer output size */
    int fullscreen;
    char title[512];
    double deadline;  /* paced: when the next present is due (ms) */
} vw_win;

/* Checks an SDL call's status: a failure prints "what: SDL_GetError()" (the first few only, so a
 * draw call failing every frame cannot flood stderr). Returns rc. */
int vw_sdl(int rc, const char *what);
/* SDL, the window and its renderer. The size: `geometry` (WxH) when given, else 1280x800 where
 * there is no real screen, else the image's size (iw x ih, 0: none) within 800x600 .. 85% of the
 * screen. 0 on success, -1 with the reason printed. */
int vw_win_open(vw_win *w, const char *geometry, int iw, int ih);
/* The window vw_win_open would open for an iw x ih image (--geometry, else the image's size
 * within 85% of the display): what a preview is fitted into before the window exists. */
void vw_win_size_for(const char *geometry, int iw, int ih, int *w, int *h);
void vw_win_close(vw_win *w);
void vw_win_title(vw_win *w, const char *title);
/* 0 on success, -1 with SDL_GetError() set. */
int vw_win_toggle_fullscreen(vw_win *w);
/* Reads the output size again after a resize: 1 when it changed, 0 when not, -1 on error. */
int vw_win_resized(vw_win *w);
/* Presents, then paces where the renderer does not wait for vsync. Returns when the frame's own
 * work ended (after drawing; before the wait for the display). */
double vw_win_present(vw_win *w);
/* The window's pixels as a PNG (or any format tsio_save knows); 0, or -1 with the reason printed. */
int vw_win_screenshot(vw_win *w, const char *path);

#endif /* TS_HAVE_SDL */
#endif
