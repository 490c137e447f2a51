/* viewer.c - `tessera [IMAGE|DIR]...`: the SDL2 viewer (issue 6). SDL set-up, the frame loop,
 * pacing and frame timing; the other parts are listed in viewer.h.
 *
 * A frame: events (and one replayed --keys key), the chain when something changed or in live mode
 * (input and result kept on the GPU), the display texture when the result or the view changed,
 * a step of the speedup measurement, the image, the HUD, present. With a renderer that cannot
 * wait for vsync (software, offscreen) the loop paces itself to the display rate, so "holding 60
 * FPS" means the same thing everywhere. Each frame's interval, work and parts go to the frame
 * statistics (viewer_stats.c), whose medians and 95th percentiles the HUD and the exit summary
 * both print; frames that loaded, uploaded, measured speedups or saved the screenshot are
 * counted apart.
 */
#include "viewer.h"
#include "util.h"

#ifndef TS_HAVE_SDL

int ts_viewer(const ts_options *o)
{
    (void)o;
    ts_warn("this tessera was built without SDL2, so it has no viewer: use --headless (see "
            "tessera --help), or install libsdl2-dev (make deps) and rebuild");
    return 2;
}

#else

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void vw_stat_add(vw_stat *s, double v)
{
    s->last = v;
    s->avg = s->n ? s->avg + 0.1 * (v - s->avg) : v; /* about the last 10 frames */
    s->n++;
}

int vw_sdl(int rc, const char *what)
{
    static int printed;
    if (rc < 0 && printed < 10) {
        printed++;
        ts_warn("%s: %s", what, SDL_GetError());
    }
    return rc;
}

void vw_toast(viewer *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->toast, sizeof v->toast, fmt, ap);
    va_end(ap);
    v->toast_until = now_ms() + 3000;
}

/* ---------------------------------------------------------------- set-up */

static int video_driver_is(const char *name)
{
    const char *d = SDL_GetCurrentVideoDriver();
    return d && strcmp(d, name) == 0;
}

/* The initial window: TESSERA_GEOMETRY=WxH; else 1280x800 where there is no real screen
 * (offscreen); else the image's size within 800x600 .. 85% of the screen. */
static void window_size(const viewer *v, int *w, int *h)
{
    const char *g = getenv("TESSERA_GEOMETRY");
    int gw, gh;
    if (g && sscanf(g, "%dx%d", &gw, &gh) == 2 && gw >= 64 && gh >= 64 && gw <= 16384 &&
        gh <= 16384) {
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
    *w = v->loaded >= 0 ? v->src.width : 800;
    *h = v->loaded >= 0 ? v->src.height : 600;
    *w = *w < 800 ? 800 : *w > maxw ? maxw : *w;
    *h = *h < 600 ? 600 : *h > maxh ? maxh : *h;
}

static void pick_texture_format(viewer *v, const SDL_RendererInfo *ri)
{
    /* XRGB first: it is the window surface's format, so the software renderer blits it as is */
    v->tex_format = SDL_PIXELFORMAT_ARGB8888;
    for (Uint32 i = 0; i < ri->num_texture_formats; i++)
        if (ri->texture_formats[i] == SDL_PIXELFORMAT_RGB888) {
            v->tex_format = SDL_PIXELFORMAT_RGB888;
            break;
        }
}

static int sdl_start(viewer *v)
{
    /* The software renderer presents straight to the window, not through SDL's OpenGL
     * emulation of a window surface (50 ms a frame on Mesa's llvmpipe). The environment wins. */
    SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0");
    /* textures are drawn 1:1 or magnified: nearest everywhere (textures also set it) */
    SDL_SetHint(SDL_HINT_RENDER_SCALE_QUALITY, "nearest");
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        ts_warn("SDL_Init: %s", SDL_GetError());
        return -1;
    }
    int w, h;
    window_size(v, &w, &h);
    v->win = SDL_CreateWindow("tessera", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, w, h,
                              SDL_WINDOW_RESIZABLE);
    if (!v->win) {
        ts_warn("SDL_CreateWindow: %s", SDL_GetError());
        return -1;
    }
    v->ren = SDL_CreateRenderer(v->win, -1, SDL_RENDERER_PRESENTVSYNC);
    if (!v->ren) {
        ts_warn("SDL_CreateRenderer: %s", SDL_GetError());
        return -1;
    }
    SDL_RendererInfo ri;
    if (SDL_GetRendererInfo(v->ren, &ri) != 0) {
        ts_warn("SDL_GetRendererInfo: %s", SDL_GetError());
        return -1;
    }
    snprintf(v->renderer, sizeof v->renderer, "%s", ri.name);
    v->software = strcmp(ri.name, "software") == 0;
    /* no display to wait for, or a renderer that does not wait: pace frames ourselves */
    v->paced = v->software || !(ri.flags & SDL_RENDERER_PRESENTVSYNC) ||
               video_driver_is("offscreen") || video_driver_is("dummy");
    v->max_tex = ri.max_texture_width < ri.max_texture_height ? ri.max_texture_width
                                                               : ri.max_texture_height;
    pick_texture_format(v, &ri);
    SDL_DisplayMode m;
    v->refresh_hz = SDL_GetWindowDisplayMode(v->win, &m) == 0 && m.refresh_rate > 0 ? m.refresh_rate
                                                                                   : 60;
    if (SDL_GetRendererOutputSize(v->ren, &v->ww, &v->wh) != 0) {
        ts_warn("SDL_GetRendererOutputSize: %s", SDL_GetError());
        return -1;
    }
    SDL_StartTextInput();
    (void)SDL_EventState(SDL_DROPFILE, SDL_ENABLE); /* returns the previous state, not an error */
    return 0;
}

/* ---------------------------------------------------------------- frames */

static const char *depth_name(const ts_image *im, char *buf, size_t len)
{
    static const char *const ch[] = {"", "gray", "gray+alpha", "RGB", "RGBA"};
    snprintf(buf, len, "%s%d", ch[im->channels], im->bytes * 8);
    return buf;
}

static void update_title(viewer *v)
{
    char t[sizeof v->title], depth[32];
    const ts_image *im = &v->src; /* the file's size and depth; the zoom is of what is shown */
    if (v->n_files == 0)
        snprintf(t, sizeof t, "tessera - no images (drop files here)");
    else if (v->loaded < 0)
        snprintf(t, sizeof t, "%s - cannot open - tessera", path_base(v->files[v->cur]));
    else
        snprintf(t, sizeof t, "%s - %dx%d %s - %.0f%% - [%d/%d] - tessera",
                 path_base(v->files[v->cur]), im->width, im->height, depth_name(im, depth, 32),
                 v->view.zoom * 100, v->cur + 1, v->n_files);
    if (strcmp(t, v->title) != 0) {
        snprintf(v->title, sizeof v->title, "%s", t);
        SDL_SetWindowTitle(v->win, v->title);
    }
}

void vw_sync_view(viewer *v)
{
    const ts_image *im = vw_displayed(v);
    if (!im || (im->width == v->view_iw && im->height == v->view_ih))
        return;
    if (v->view_iw == 0 || v->view.fit)
        vw_view_fit(&v->view, im->width, im->height, v->ww, v->wh);
    else
        vw_view_clamp(&v->view, im->width, im->height, v->ww, v->wh);
    v->view_iw = im->width;
    v->view_ih = im->height;
}

static void bench_tick(viewer *v)
{
    vw_bench *b = &v->bench;
    v->bench_frame = 0;
    if (!ts_pipeline_on_gpu(v->pipe) || !v->have_result || v->dirty)
        return;
    /* measure after a change, and again every 10 s in live mode */
    if (!b->running && !b->failed && (!b->valid || (v->live && now_ms() - b->at > 10000)))
        vw_bench_start(v);
    if (b->running) {
        vw_bench_step(v);
        v->bench_frame = 1;
    }
}

static void render(viewer *v)
{
    static const SDL_Color red = {255, 110, 100, 255};
    vw_draw_image(v); /* clears what the image leaves uncovered */
    if (v->n_files == 0)
        vw_draw_message(v, "no images: drop files on this window (or run tessera IMAGE|DIR...)",
                        red);
    else if (!vw_displayed(v))
        vw_draw_message(v, v->load_err, red);
    if (v->hud)
        vw_draw_hud(v);
    if (v->help)
        vw_draw_help(v);
}

static void sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)((ms - (time_t)(ms / 1000) * 1000) * 1e6)};
    nanosleep(&ts, NULL);
}

/* Present, then pace to the display rate where the renderer does not wait for vsync. Returns
 * when the frame's own work ended (after drawing; before the wait for the display). */
static double present(viewer *v, double *next_deadline)
{
    double t0 = now_ms();
    SDL_RenderPresent(v->ren);
    double t1 = now_ms();
    if (v->paced) {
        double period = 1000.0 / v->refresh_hz;
        if (*next_deadline > t1)
            sleep_ms(*next_deadline - t1);
        *next_deadline = (*next_deadline > t1 - period ? *next_deadline : t1) + period;
    }
    /* the software renderer draws in Present; a vsync'd one waits there for the display */
    return v->paced ? t1 : t0;
}

/* One frame into the statistics, or counted apart with its reason. */
static void record(viewer *v, double work_end, const vw_frame *parts, int shot)
{
    double now = now_ms();
    vw_frame f = *parts;
    f.work = (float)(work_end - v->frame_start);
    f.interval = (float)(now - v->last_present);
    if (shot)
        vw_frames_skip(&v->frames, VW_SKIP_SHOT);
    else if (v->start_frame || v->last_present <= 0)
        vw_frames_skip(&v->frames, VW_SKIP_START);
    else if (v->bench_frame)
        vw_frames_skip(&v->frames, VW_SKIP_BENCH);
    else
        vw_frames_add(&v->frames, &f);
    v->last_present = now;
    vw_frames_stats(&v->frames, 1000.0 / v->refresh_hz, &v->stats);
}

void vw_frames_text(const viewer *v, char *figures, size_t flen, char *basis, size_t blen,
                    char *verdict, size_t vlen)
{
    const vw_frame_stats *s = &v->stats;
    char left[160];
    if (s->n == 0)
        snprintf(figures, flen, "-- FPS   no steady frame yet");
    else
        snprintf(figures, flen, "%.1f FPS   interval median %.2f / p95 %.2f ms   work median "
                 "%.2f / p95 %.2f ms", s->fps, s->interval_med, s->interval_p95, s->work_med,
                 s->work_p95);
    int any = vw_frames_skipped_text(&v->frames, left, sizeof left);
    snprintf(basis, blen, "over %d steady frames since the last change; left out: %s", s->n,
             any ? left : "none");
    snprintf(verdict, vlen, "%d Hz %s: %s", v->refresh_hz,
             v->paced ? "(paced by tessera)" : "vsync",
             !s->measured                          ? "measuring"
             : s->holding                          ? "holding it (p95 within the refresh period)"
             : s->interval_p95 > s->period * 1.05 ? "not holding it (p95 interval past the period)"
                                                  : "not holding it (p95 work past the period)");
}

/* Frames: each replayed key gets its own frame; then --frames N more (1 with --screenshot only);
 * no --frames and no --screenshot: until closed. */
static void loop(viewer *v, const vw_key *keys, int n_keys)
{
    const ts_options *o = v->o;
    long after = o->frames ? o->frames : o->screenshot ? 1 : -1;
    long total = after < 0 ? -1 : n_keys + after;
    double deadline = 0;
    v->running = 1;
    while (v->running) {
        vw_frame parts = {0, 0, 0, 0, 0};
        v->frame_start = now_ms();
        v->start_frame = v->frame_no == 0;
        vw_poll_events(v);
        if (v->frame_no < n_keys)
            vw_do_key(v, keys[v->frame_no], v->ww / 2.0, v->wh / 2.0);
        if (!v->running)
            break;
        double t0 = now_ms();
        vw_process(v);
        parts.run = (float)(now_ms() - t0);
        vw_sync_view(v);
        update_title(v);
        t0 = now_ms();
        if (vw_update_textures(v) != 0) { /* before the speedup step reuses the GPU's buffers */
            v->status = 1;
            break;
        }
        parts.display = (float)(now_ms() - t0);
        bench_tick(v);
        t0 = now_ms();
        render(v);
        int last = total > 0 && v->frame_no + 1 >= total, shot = last && o->screenshot;
        double shot_ms = 0;
        if (shot) { /* not part of the frame: PNG encoding takes longer than many frames */
            double ts = now_ms();
            if (vw_screenshot(v, o->screenshot) != 0)
                v->status = 1;
            shot_ms = now_ms() - ts;
            v->frame_start += shot_ms;
            t0 += shot_ms;
        }
        double end = present(v, &deadline);
        parts.draw = (float)(end - t0);
        record(v, end, &parts, shot);
        v->frame_no++;
        if (last)
            break;
    }
}

/* With --frames: what the frames cost, for scripts and the GPU run's log: the HUD's figures. */
static void print_summary(const viewer *v)
{
    const vw_frame_stats *s = &v->stats;
    char ops[512] = "", figures[160], basis[200], verdict[120], disp[96] = "", down[64] = "";
    for (int i = 0; i < v->chain.n && v->have_result; i++) {
        size_t used = strlen(ops);
        const ts_variant *var = v->rep.op[i].variant;
        snprintf(ops + used, sizeof ops - used, "%s%s[%s] %.3f", used ? ", " : "",
                 v->chain.ops[i].text, var ? var->name : "?", v->op_ms[i].avg);
        if (v->bench.valid && v->bench.res_state[i] > 0 && v->bench.res_cur[i] > 0)
            snprintf(ops + strlen(ops), sizeof ops - strlen(ops), " (x%.1f over naive)",
                     v->bench.res_naive[i] / v->bench.res_cur[i]);
    }
    vw_frames_text(v, figures, sizeof figures, basis, sizeof basis, verdict, sizeof verdict);
    if (v->tex_shown)
        snprintf(disp, sizeof disp, " (%dx%d texels, %s)", v->disp.map.tw, v->disp.map.th,
                 v->disp_on_gpu ? "resampled on the GPU" : "host conversion");
    if (ts_pipeline_on_gpu(v->pipe) && v->down_ms.n) /* only where the GPU does not convert */
        snprintf(down, sizeof down, ", full download %.2f ms", v->down_ms.avg);
    fprintf(stderr,
            "tessera: viewer: %ld frames: %s, %s; %s\n"
            "tessera: viewer: work medians: chain run %.2f ms, display %.2f ms%s, draw and present "
            "%.2f ms; kernels ms (moving average): %s; upload %.2f ms%s%s; window %dx%d, renderer "
            "%s\n",
            v->frame_no, figures, basis, verdict, s->run_med, s->display_med, disp, s->draw_med,
            ops[0] ? ops : "none", v->first_upload_ms,
            ts_pipeline_on_gpu(v->pipe) ? " (once)" : "", down, v->ww, v->wh, v->renderer);
}

/* ---------------------------------------------------------------- entry */

/* No arguments: the bundled assets, from the working directory or beside the binary. */
static void add_default_files(viewer *v)
{
    char exe[PATH_MAX];
    if (path_is_dir("assets")) {
        vw_files_add(v, "assets");
        return;
    }
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 16);
    if (n <= 0)
        return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return;
    strcpy(slash, "/../assets"); /* build/tessera -> build/../assets */
    if (path_is_dir(exe))
        vw_files_add(v, exe);
}

static int have_display(void)
{
    const char *d = getenv("DISPLAY"), *w = getenv("WAYLAND_DISPLAY"),
               *drv = getenv("SDL_VIDEODRIVER");
    return (d && *d) || (w && *w) || (drv && *drv);
}

static void viewer_free(viewer *v)
{
    vw_bench_free(v);
    vw_image_free(v);
    if (v->ren)
        SDL_DestroyRenderer(v->ren);
    if (v->win)
        SDL_DestroyWindow(v->win);
    SDL_Quit();
    ts_pipeline_destroy(v->pipe);
    ts_chain_free(&v->chain);
    for (int i = 0; i < v->n_files; i++)
        free(v->files[i]);
    free(v->files);
    free(v);
}

int ts_viewer(const ts_options *o)
{
    char err[256];
    vw_key *keys = NULL;
    int n_keys = 0;
    ts_chain chain;
    if (o->keys && (n_keys = vw_keys_parse(o->keys, &keys, err, sizeof err)) < 0) {
        ts_warn("--keys: %s", err);
        return 2;
    }
    if (ts_chain_parse(o->ops, &chain, err, sizeof err) != TS_OK) {
        ts_warn("--ops '%s': %s", o->ops, err);
        free(keys);
        return 2;
    }
    if (!have_display()) {
        ts_warn("no display (DISPLAY/WAYLAND_DISPLAY unset): use --headless, or "
                "SDL_VIDEODRIVER=offscreen");
        ts_chain_free(&chain);
        free(keys);
        return 1;
    }
    viewer *v = xcalloc(1, sizeof *v);
    v->o = o;
    v->chain = chain;
    v->sel = chain.n ? 0 : -1;
    v->hud = v->live = 1;
    vw_frames_reset(&v->frames);
    v->loaded = -1;
    v->status = 1;
    if ((v->pipe = ts_open_pipeline(o)) != NULL) {
        for (int i = 0; i < o->n_inputs; i++)
            vw_files_add(v, o->inputs[i]);
        if (o->n_inputs == 0)
            add_default_files(v);
        if (v->n_files)
            vw_open(v, 0);
        if (sdl_start(v) == 0) {
            v->status = 0;
            loop(v, keys, n_keys);
            if (o->frames && !o->quiet)
                print_summary(v);
        }
    }
    int status = v->status;
    viewer_free(v);
    free(keys);
    return status;
}

#endif /* TS_HAVE_SDL */
