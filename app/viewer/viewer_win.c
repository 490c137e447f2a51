/* viewer_win.c - the window: SDL set-up, the renderer and its limits, size, title, fullscreen,
 * presenting and screenshots. With a renderer that cannot wait for vsync (software, offscreen)
 * present paces itself to the display rate, so "holding 60 FPS" means the same thing everywhere.
 */
#include "viewer_win.h"
#include "image_io.h"
#include "util.h"

#ifdef TS_HAVE_SDL

#include <stdio.h>
#include <string.h>
#include <time.h>

int vw_sdl(int rc, const char *what)
{
    static int printed;
    if (rc < 0 && printed < 10) {
        printed++;
        app_warn("%s: %s", what, SDL_GetError());
    }
    return rc;
}

static int video_driver_is(const char *name)
{
    const char *d = SDL_GetCurrentVideoDriver();
    return d && strcmp(d, name) == 0;
}

static void window_size(const char *geometry, int iw, int ih, int *w, int *h)
{
    int gw, gh;
    if (geometry && sscanf(geometry, "%dx%d", &gw, &gh) == 2 && gw >= 64 && gh >= 64 &&
        gw <= 16384 && gh <= 16384) {
        *w = gw;
        *h = gh;
        return;
    }
    *w = 1280;
    *h = 800;
    SDL_Rect r;
    if (video_driver_is("offscreen") || video_driver_is("dummy") ||
        SDL_GetDisplayUsableBounds(0, &r) != 0)
        return;
    int maxw = r.w * 85 / 100, maxh = r.h * 85 / 100;
    *w = iw > 0 ? iw : 800;
    *h = ih > 0 ? ih : 600;
    *w = *w < 800 ? 800 : *w > maxw ? maxw : *w;
    *h = *h < 600 ? 600 : *h > maxh ? maxh : *h;
}

static void pick_texture_format(vw_win *w, const SDL_RendererInfo *ri)
{
    /* XRGB first: it is the window surface's format, so the software renderer blits it as is */
    w->tex_format = SDL_PIXELFORMAT_ARGB8888;
    for (Uint32 i = 0; i < ri->num_texture_formats; i++)
        if (ri->texture_formats[i] == SDL_PIXELFORMAT_RGB888) {
            w->tex_format = SDL_PIXELFORMAT_RGB888;
            break;
        }
}

int vw_win_open(vw_win *w, const char *geometry, int iw, int ih)
{
    /* The software renderer presents straight to the window, not through SDL's OpenGL
     * emulation of a window surface (50 ms a frame on Mesa's llvmpipe). The environment wins. */
    SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0");
    /* textures are drawn 1:1 or magnified: nearest everywhere (textures also set it) */
    SDL_SetHint(SDL_HINT_RENDER_SCALE_QUALITY, "nearest");
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        app_warn("SDL_Init: %s", SDL_GetError());
        return -1;
    }
    int width, height;
    window_size(geometry, iw, ih, &width, &height);
    w->win = SDL_CreateWindow("tessera", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, width,
                              height, SDL_WINDOW_RESIZABLE);
    if (!w->win) {
        app_warn("SDL_CreateWindow: %s", SDL_GetError());
        return -1;
    }
    w->ren = SDL_CreateRenderer(w->win, -1, SDL_RENDERER_PRESENTVSYNC);
    if (!w->ren) {
        app_warn("SDL_CreateRenderer: %s", SDL_GetError());
        return -1;
    }
    SDL_RendererInfo ri;
    if (SDL_GetRendererInfo(w->ren, &ri) != 0) {
        app_warn("SDL_GetRendererInfo: %s", SDL_GetError());
        return -1;
    }
    snprintf(w->renderer, sizeof w->renderer, "%s", ri.name);
    w->software = strcmp(ri.name, "software") == 0;
    /* no display to wait for, or a renderer that does not wait: pace frames ourselves */
    w->paced = w->software || !(ri.flags & SDL_RENDERER_PRESENTVSYNC) ||
               video_driver_is("offscreen") || video_driver_is("dummy");
    w->max_tex = ri.max_texture_width < ri.max_texture_height ? ri.max_texture_width
                                                               : ri.max_texture_height;
    pick_texture_format(w, &ri);
    SDL_DisplayMode m;
    w->refresh_hz = SDL_GetWindowDisplayMode(w->win, &m) == 0 && m.refresh_rate > 0 ? m.refresh_rate
                                                                                   : 60;
    if (SDL_GetRendererOutputSize(w->ren, &w->ww, &w->wh) != 0) {
        app_warn("SDL_GetRendererOutputSize: %s", SDL_GetError());
        return -1;
    }
    SDL_StartTextInput();
    (void)SDL_EventState(SDL_DROPFILE, SDL_ENABLE); /* returns the previous state, not an error */
    return 0;
}

void vw_win_size_for(const char *geometry, int iw, int ih, int *w, int *h)
{
    *w = 1280;
    *h = 800;
    if (SDL_InitSubSystem(SDL_INIT_VIDEO) != 0)
        return; /* vw_win_open says why */
    window_size(geometry, iw, ih, w, h);
    /* left initialized: vw_win_open's SDL_Init then costs nothing (a new X connection would
     * cost tens of ms of the first paint), and vw_win_close's SDL_Quit ends both */
}

void vw_win_close(vw_win *w)
{
    if (w->ren)
        SDL_DestroyRenderer(w->ren);
    if (w->win)
        SDL_DestroyWindow(w->win);
    w->ren = NULL;
    w->win = NULL;
    SDL_Quit();
}

void vw_win_title(vw_win *w, const char *title)
{
    if (strcmp(title, w->title) == 0)
        return;
    snprintf(w->title, sizeof w->title, "%s", title);
    SDL_SetWindowTitle(w->win, w->title);
}

int vw_win_toggle_fullscreen(vw_win *w)
{
    Uint32 flag = w->fullscreen ? 0 : SDL_WINDOW_FULLSCREEN_DESKTOP;
    if (SDL_SetWindowFullscreen(w->win, flag) != 0)
        return -1;
    w->fullscreen = !w->fullscreen;
    return 0;
}

int vw_win_resized(vw_win *w)
{
    int ow = w->ww, oh = w->wh;
    if (SDL_GetRendererOutputSize(w->ren, &w->ww, &w->wh) != 0) {
        app_warn("SDL_GetRendererOutputSize: %s", SDL_GetError());
        return -1;
    }
    return w->ww != ow || w->wh != oh;
}

static void sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)((ms - (time_t)(ms / 1000) * 1000) * 1e6)};
    nanosleep(&ts, NULL);
}

double vw_win_present(vw_win *w)
{
    double t0 = now_ms();
    SDL_RenderPresent(w->ren);
    double t1 = now_ms();
    if (w->paced) {
        double period = 1000.0 / w->refresh_hz;
        if (w->deadline > t1)
            sleep_ms(w->deadline - t1);
        w->deadline = (w->deadline > t1 - period ? w->deadline : t1) + period;
    }
    /* the software renderer draws in Present; a vsync'd one waits there for the display */
    return w->paced ? t1 : t0;
}

int vw_win_screenshot(vw_win *w, const char *path)
{
    ts_image im;
    char notice[256], err[256];
    int width, height;
    if (SDL_GetRendererOutputSize(w->ren, &width, &height) != 0) {
        app_warn("SDL_GetRendererOutputSize: %s", SDL_GetError());
        return -1;
    }
    if (ts_image_alloc(&im, width, height, 3, 1) != TS_OK) {
        app_warn("screenshot: %s", ts_error_detail());
        return -1;
    }
    int rc = 0;
    if (SDL_RenderReadPixels(w->ren, NULL, SDL_PIXELFORMAT_RGB24, im.data, (int)im.pitch) != 0) {
        app_warn("SDL_RenderReadPixels: %s", SDL_GetError());
        rc = -1;
    } else if (tsio_save_atomic(path, &im, NULL, 1, notice, sizeof notice, err, sizeof err) !=
               TS_OK) {
        app_warn("%s: %s", path, err);
        rc = -1;
    }
    ts_image_free(&im);
    return rc;
}

#else
typedef int vw_win_unused; /* ISO C wants a declaration in every file */
#endif /* TS_HAVE_SDL */
