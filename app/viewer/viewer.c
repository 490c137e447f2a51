/* viewer.c - `tessera [IMAGE|DIR]...`: the SDL2 viewer. Start, the frame loop and frame timing;
 * the other parts are listed in viewer.h.
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
#include "kernel_file.h"
#include "util.h"

#ifndef TS_HAVE_SDL

int viewer_main(const app_options *o)
{
    (void)o;
    app_warn("this tessera was built without SDL2, so it has no viewer: use --headless (see "
            "tessera --help), or install libsdl2-dev (make deps) and rebuild");
    return 2;
}

#else

#include "viewer_events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- frames */

static const char *depth_name(const ts_image *im, char *buf, size_t len)
{
    static const char *const ch[] = {"", "gray", "gray+alpha", "RGB", "RGBA"};
    snprintf(buf, len, "%s%d", ch[im->channels], im->bytes * 8);
    return buf;
}

static void update_title(viewer *v)
{
    char t[sizeof v->win.title], depth[32];
    const ts_image *im = &v->run.src; /* the file's size and depth; the zoom is of what is shown */
    double zoom = v->view.zoom * vw_run_file_scale(&v->run) * 100;
    const char *name = v->files.n ? path_base(v->files.path[v->files.cur]) : "";
    if (v->files.n == 0)
        snprintf(t, sizeof t, "tessera - no images (drop files here)");
    else if (!v->run.loaded)
        snprintf(t, sizeof t, "%s - cannot open - tessera", name);
    else
        snprintf(t, sizeof t, "%s - %dx%d %s - %.0f%%%s - [%d/%d] - tessera", name,
                 v->run.full_w, v->run.full_h, depth_name(im, depth, 32), zoom,
                 v->run.preview ? " (preview)" : "", v->files.cur + 1, v->files.n);
    vw_win_title(&v->win, t);
}

/* One frame into the statistics, or counted apart with its reason. */
static void record(viewer *v, double work_end, const vw_frame *parts, int start, int bench,
                   int shot, int paused)
{
    double now = now_ms();
    vw_frame f = *parts;
    f.work = (float)(work_end - v->frame_start);
    f.interval = (float)(now - v->last_present);
    if (shot)
        vw_frames_skip(&v->frames, VW_SKIP_SHOT);
    else if (start || v->last_present <= 0)
        vw_frames_skip(&v->frames, VW_SKIP_START);
    else if (bench)
        vw_frames_skip(&v->frames, VW_SKIP_BENCH);
    else if (paused)
        vw_frames_skip(&v->frames, VW_SKIP_IDLE);
    else
        vw_frames_add(&v->frames, &f);
    v->last_present = now;
    vw_frames_stats(&v->frames, 1000.0 / v->win.refresh_hz, &v->stats);
}

/* Frames to draw after the replayed keys: --frames N, 1 with --screenshot alone; 0: until
 * closed. */
static long total_frames(const app_options *o) { return o->frames ? o->frames : o->screenshot ? 1 : 0; }

/* The first file's first paint and the frame of its full image, for the summary. */
static void first_paint(viewer *v, double at)
{
    const vw_run *r = &v->run;
    if (!r->loaded || !v->tex.shown)
        return;
    if (v->paint_first == 0) {
        v->paint_first = at - v->started;
        v->paint_token = r->load_token;
        v->paint_w = r->full_w;
        v->paint_h = r->full_h;
        if (r->preview) {
            v->paint_preview_w = r->src.width;
            v->paint_preview_h = r->src.height;
            v->paint_denom = r->preview_denom;
        }
    }
    if (v->paint_full == 0 && !r->preview && r->load_token == v->paint_token) {
        v->paint_full = at - v->started;
        v->paint_full_frame = v->frame_no;
    }
}

static void print_paint(const viewer *v)
{
    char full[96] = "not shown (another file opened, or the viewer ended, first)";
    if (v->paint_first == 0)
        return;
    if (v->paint_full > 0)
        snprintf(full, sizeof full, "at %.0f ms (frame %ld, decoded on a thread)", v->paint_full,
                 v->paint_full_frame);
    if (v->paint_preview_w)
        fprintf(stderr, "tessera: viewer: first paint %.0f ms after start: a 1/%d preview "
                "(%dx%d of %dx%d; decoded at %.0f ms, window at %.0f ms); the full image %s\n",
                v->paint_first, v->paint_denom, v->paint_preview_w, v->paint_preview_h,
                v->paint_w, v->paint_h, v->image_ready, v->win_ready, full);
    else
        fprintf(stderr, "tessera: viewer: first paint %.0f ms after start: the full image "
                "(%dx%d; decoded at %.0f ms, window at %.0f ms; frame %ld)\n", v->paint_first,
                v->paint_w, v->paint_h, v->image_ready, v->win_ready, v->paint_full_frame);
}

/* At rest the loop waits for events and uses no CPU. It keeps drawing frames while something
 * changes by itself: live mode with a chain and the HUD to show its times, a speedup measurement,
 * a file just opened or a chain just changed. */
static int busy(const viewer *v)
{
    if (v->grid.on) /* the thumbnails' threads wake the loop as each one is made */
        return 0;
    /* a preview waits without frames: the decode thread wakes the loop (an SDL user event) */
    return (v->run.dirty && !vw_run_loading(&v->run)) || (v->ui.hud && vw_run_live_work(&v->run)) ||
           vw_bench_pending(&v->bench, &v->run) || (v->demo.on && !v->demo.done) ||
           vw_tex_waiting(&v->tex);
}

/* Waits for an event, or for the next change that comes with time (a toast ends, a slideshow
 * or GIF frame is due); 1 when it waited. SDL_WaitEventTimeout sleeps in the X server's socket, so this costs no CPU. */
static int wait_idle(const viewer *v)
{
    if (busy(v))
        return 0;
    for (;;) {
        double due = vw_ui_due(&v->ui), now = now_ms();
        double other[2] = {vw_events_due(v), vw_run_anim_due(&v->run)};
        for (int i = 0; i < 2; i++)
            if (other[i] > 0 && (due == 0 || other[i] < due))
                due = other[i];
        if (due > 0 && due <= now)
            return 1;
        int ms = due > 0 ? (int)(due - now) + 1 : 1000;
        if (SDL_WaitEventTimeout(NULL, ms > 1000 ? 1000 : ms))
            return 1;
    }
}

/* Frames the last frame waits for a full image and its resampling (a decode on a thread, the
 * resampled view after box cells) before it ends the run anyway. */
#define VW_LAST_WAIT 3000

/* A frame of thumbnail mode: the grid and its status line. The last frame of --frames or
 * --screenshot waits for every thumbnail (each is made or fails, so it comes). 1: the last. */
static int grid_frame(viewer *v, long total, vw_frame *parts)
{
    const app_options *o = v->o;
    double t0 = now_ms();
    int s = vw_ui_scale(v->win.ww, v->win.wh);
    int filled = vw_grid_draw(&v->grid, &v->win, &v->files, s);
    char t[sizeof v->win.title];
    snprintf(t, sizeof t, "tessera - thumbnails - %d images", v->files.n);
    vw_win_title(&v->win, t);
    int last = total > 0 && v->frame_no + 1 >= total && filled &&
               vw_thumbs_finished(&v->grid.th);
    int shot = last && o->screenshot;
    if (shot && vw_win_screenshot(&v->win, o->screenshot) != 0)
        v->status = 1;
    double end = vw_win_present(&v->win);
    parts->draw = (float)(end - t0);
    if (filled && v->grid.screen_ms == 0) {
        const vw_grid_geom *m = &v->grid.geom;
        int first = m->top * m->cols, end_cell = (m->top + m->rows) * m->cols;
        v->grid.screen_ms = end - v->started;
        v->grid.screen_cells = (end_cell < v->grid.n ? end_cell : v->grid.n) - first;
    }
    record(v, end, parts, 0, 0, shot, 0);
    return last;
}

/* Frames: each replayed key gets its own frame; then --frames N more (1 with --screenshot only);
 * no --frames and no --screenshot: until closed, waiting for events when nothing changes. */
static void loop(viewer *v, const vw_key *keys, int n_keys)
{
    const app_options *o = v->o;
    long after = total_frames(o) ? total_frames(o) : -1;
    long total = after < 0 ? -1 : n_keys + after;
    long due_at = -1; /* the frame that was due to be the last one */
    v->running = 1;
    while (v->running) {
        vw_frame parts = {0, 0, 0, 0, 0};
        int paused = total < 0 && v->frame_no >= n_keys && v->frame_no > 0 && wait_idle(v);
        v->frame_start = now_ms();
        if (v->frame_no == 0)
            v->run.fresh = 1;
        if (vw_events_poll(v))
            v->grid.redraw = 1;
        vw_events_timers(v);
        vw_run_poll_load(&v->run);
        vw_run_anim_tick(&v->run);
        if (v->frame_no < n_keys) {
            vw_area a = vw_ui_area(&v->ui, &v->win, v->compare);
            vw_events_key(v, keys[v->frame_no], a.w / 2.0, a.h / 2.0);
        }
        if (!v->running)
            break;
        if (v->grid.on && v->frame_no >= n_keys && !vw_grid_due(&v->grid) &&
            !(total > 0 && vw_thumbs_finished(&v->grid.th))) {
            /* nothing new on screen: no frame (a frame costs the renderer's CPU, which the
               thumbnails' threads want); a thumbnail made, a key or the line's figure wakes.
               --frames N: once all are made, frames until the last */
            SDL_WaitEventTimeout(NULL, 100);
            continue;
        }
        if (v->grid.on) {
            int last = grid_frame(v, total, &parts);
            v->frame_no++;
            if (last)
                break;
            continue;
        }
        vw_events_follow_hud(v);
        double t0 = now_ms();
        int demo = v->demo.on && !v->demo.done; /* the demo times its rungs itself */
        if (v->ui.hud && vw_run_live_work(&v->run) && !demo && !v->run.dirty)
            v->run.rerun = v->run.dirty = 1; /* live: again, for the HUD's times */
        vw_run_process(&v->run);
        parts.run = (float)(now_ms() - t0);
        vw_sync_view(v);
        update_title(v);
        t0 = now_ms();
        vw_area a = vw_ui_area(&v->ui, &v->win, v->compare);
        /* before the speedup step reuses the GPU's buffers */
        if (vw_tex_update(&v->tex, &v->win, &v->run, &v->view, a) != 0) {
            v->status = 1;
            break;
        }
        parts.display = (float)(now_ms() - t0);
        int bench = demo ? vw_demo_tick(&v->demo, &v->run) : vw_bench_tick(&v->bench, &v->run);
        t0 = now_ms();
        vw_tex_draw(&v->tex, &v->win, &v->run, a); /* clears what the image leaves uncovered */
        vw_ui_draw(&(vw_scene){o, &v->ui, &v->win, &v->files, &v->run, &v->bench, &v->demo,
                               &v->tex, &v->view, &v->frames, &v->stats, v->compare});
        /* --demo with --frames or --screenshot: until the last rung is measured */
        /* the last frame shows the full image, resampled; it waits for that at most
           VW_LAST_WAIT frames, so that --frames N always ends */
        int due = o->demo ? v->frame_no >= n_keys && v->demo.done : v->frame_no + 1 >= total;
        int last = total > 0 && due &&
                   ((!vw_tex_waiting(&v->tex) && !vw_run_loading(&v->run)) ||
                    (due_at >= 0 && v->frame_no - due_at >= VW_LAST_WAIT));
        if (due && due_at < 0)
            due_at = v->frame_no;
        int shot = last && o->screenshot;
        if (shot) { /* not part of the frame: PNG encoding takes longer than many frames */
            double ts = now_ms();
            if (vw_win_screenshot(&v->win, o->screenshot) != 0)
                v->status = 1;
            double shot_ms = now_ms() - ts;
            v->frame_start += shot_ms;
            t0 += shot_ms;
        }
        double end = vw_win_present(&v->win);
        parts.draw = (float)(end - t0);
        first_paint(v, end);
        vw_run_start_decode(&v->run); /* a preview is on screen now */
        record(v, end, &parts, v->run.fresh, bench, shot, paused);
        v->run.fresh = 0;
        v->frame_no++;
        if (last)
            break;
    }
}

/* With --frames: what the frames cost, for scripts and the GPU run's log: the HUD's figures. */
static void print_summary(const viewer *v)
{
    const vw_frame_stats *s = &v->stats;
    const vw_run *r = &v->run;
    const vw_bench *b = &v->bench;
    char ops[512] = "", figures[160], basis[200], verdict[120], disp[96] = "", down[64] = "";
    for (int i = 0; i < r->chain.n && r->have_result; i++) {
        size_t used = strlen(ops);
        const ts_variant *var = r->rep.op[i].variant;
        snprintf(ops + used, sizeof ops - used, "%s%s[%s] %.3f", used ? ", " : "",
                 r->chain.ops[i].text, var ? var->name : "?", r->op_ms[i].avg);
        if (b->valid && b->res_state[i] > 0 && b->res_cur[i] > 0)
            snprintf(ops + strlen(ops), sizeof ops - strlen(ops), " (x%.1f over naive)",
                     b->res_naive[i] / b->res_cur[i]);
    }
    vw_frames_text(&v->frames, s, v->win.refresh_hz, v->win.paced, figures, sizeof figures, basis,
                   sizeof basis, verdict, sizeof verdict);
    if (v->tex.shown)
        snprintf(disp, sizeof disp, " (%dx%d texels, %s on the %s)", v->tex.disp.map.tw,
                 v->tex.disp.map.th, v->tex.resampled ? VW_RESAMPLE_FILTER : "converted",
                 v->tex.on_gpu ? "GPU" : "host");
    if (ts_pipeline_on_gpu(r->pipe) && r->down_ms.n) /* only where the GPU does not convert */
        snprintf(down, sizeof down, ", full download %.2f ms", r->down_ms.avg);
    fprintf(stderr,
            "tessera: viewer: %ld frames: %s, %s; %s\n"
            "tessera: viewer: work medians: chain run %.2f ms, display %.2f ms%s, draw and present "
            "%.2f ms; kernels ms (moving average): %s; upload %.2f ms%s%s; window %dx%d, renderer "
            "%s\n",
            v->frame_no, figures, basis, verdict, s->run_med, s->display_med, disp, s->draw_med,
            ops[0] ? ops : "none", r->first_upload_ms,
            ts_pipeline_on_gpu(r->pipe) ? " (once)" : "", down, v->win.ww, v->win.wh,
            v->win.renderer);
    print_paint(v);
}

/* Thumbnail mode with --frames: when the first screen and the whole grid were there. */
static void print_grid(const viewer *v)
{
    const vw_grid *g = &v->grid;
    const vw_thumbs *t = &g->th;
    char all[64] = "not all made by the end";
    if (t->all_ms > 0 || t->n == 0)
        snprintf(all, sizeof all, "all %d made at %.0f ms", t->n,
                 t->n ? t->started - v->started + t->all_ms : 0);
    fprintf(stderr, "tessera: viewer: thumbnails of %d files (%d threads, %s): the first screen "
            "(%d cells) at %.0f ms after start, %s; %d from the cache, %d made (%d decoded by "
            "nvJPEG), %d failed; cache %s\n", t->n, t->threads,
            ts_pipeline_on_gpu(v->run.pipe) ? "GPU resize" : "CPU", g->screen_cells, g->screen_ms,
            all, t->cached, t->done - t->cached - t->failed, t->made_gpu, t->failed,
            t->dir[0] ? t->dir : "none");
}

/* --demo: each rung's time and speedup, one line a family, for the log of a talk's run. */
static void print_demo(const viewer *v)
{
    const vw_demo *d = &v->demo;
    for (int i = 0; i < d->n; i++) {
        const vw_rung *g = &d->rung[i];
        int first = i == 0 || g->family != d->rung[i - 1].family;
        if (first)
            fprintf(stderr, "tessera: demo: %s %s on %dx%d:", ts_family_name(g->family), g->op,
                    v->run.src.width, v->run.src.height);
        if (g->state > 0)
            fprintf(stderr, " %s %.3f ms (x%.1f)", g->var ? g->var->name : "cpu", g->ms,
                    vw_demo_speedup(d, i));
        else
            fprintf(stderr, " %s %s", g->var ? g->var->name : "cpu",
                    g->state < 0 ? "n/a" : "not reached");
        if (i + 1 == d->n || d->rung[i + 1].family != g->family)
            fprintf(stderr, "\n");
    }
    if (d->note[0])
        fprintf(stderr, "tessera: demo: %s\n", d->note);
}

/* ---------------------------------------------------------------- entry */

static int have_display(void)
{
    const char *d = getenv("DISPLAY"), *w = getenv("WAYLAND_DISPLAY"),
               *drv = getenv("SDL_VIDEODRIVER");
    return (d && *d) || (w && *w) || (drv && *drv);
}

/* From the decode thread: a frame loop waiting for events wakes up and takes the full image. */
static void wake(void)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_USEREVENT;
    SDL_PushEvent(&e); /* thread-safe; a full queue only delays it to the next event */
}

static void viewer_free(viewer *v)
{
    vw_load_free(&v->run.load); /* before SDL_Quit: the thread's last act is wake() */
    vw_bench_free(&v->bench);
    vw_grid_free(&v->grid); /* its threads end before SDL does (they wake the loop) */
    vw_tex_free(&v->tex);
    vw_win_close(&v->win);
    vw_run_free(&v->run);
    vw_files_free(&v->files);
    free(v);
}

int viewer_main(const app_options *o)
{
    char err[256];
    vw_key *keys = NULL;
    int n_keys = 0;
    ts_chain chain;
    if (o->keys && (n_keys = vw_keys_parse(o->keys, &keys, err, sizeof err)) < 0) {
        app_warn("--keys: %s", err);
        return 2;
    }
    if (app_chain_parse(o->ops, &chain, err, sizeof err) != TS_OK) {
        app_warn("--ops '%s': %s", o->ops, err);
        free(keys);
        return 2;
    }
    if (!have_display()) {
        app_warn("no display (DISPLAY/WAYLAND_DISPLAY unset): use --headless, or "
                "SDL_VIDEODRIVER=offscreen");
        ts_chain_free(&chain);
        free(keys);
        return 1;
    }
    viewer *v = xcalloc(1, sizeof *v);
    v->o = o;
    v->started = now_ms();
    v->run.load.wake = wake;
    v->run.chain = chain;
    v->run.sel = chain.n ? 0 : -1;
    v->ui.hud_auto = o->hud < 0;
    v->ui.hud = o->hud < 0 ? (chain.n || o->demo ? VW_HUD_FULL : VW_HUD_LINE) : o->hud;
    v->run.auto_orient = !o->no_auto_orient;
    v->slideshow = o->slideshow_ms > 0;
    v->slide_ms = o->slideshow_ms > 0 ? o->slideshow_ms : 3000;
    vw_frames_reset(&v->frames);
    v->status = 1;
    if ((v->run.pipe = app_open_pipeline(o)) != NULL) {
        /* live re-runs on the GPU are the dashboard's point (its times move); on the CPU they
           would take a core for good: there the chain runs once per change, L asks for live */
        v->run.live = ts_pipeline_on_gpu(v->run.pipe);
        for (int i = 0; i < o->n_inputs; i++)
            if (strcmp(o->inputs[i], "-") == 0)
                vw_files_add_lines(&v->files, stdin, o->recursive);
            else
                vw_files_add(&v->files, o->inputs[i], o->recursive);
        if (o->n_inputs == 0)
            vw_files_add_default(&v->files);
        if (v->files.skipped_dirs && !o->quiet)
            app_warn("%d subfolder%s left out (-r opens them too)", v->files.skipped_dirs,
                     v->files.skipped_dirs == 1 ? "" : "s");
        if (v->files.n == 0 && o->n_inputs > 0) { /* each missing path was named on stderr */
            app_warn("nothing to show%s", v->files.missing ? "" : ": no images in the paths given");
            v->status = 1;
            goto done;
        }
        if (v->files.n && !o->thumbs)
            vw_open(v, 0);
        v->image_ready = now_ms() - v->started;
        const vw_run *r = &v->run; /* the window is sized for the file, not for its preview */
        const char *geometry = o->geometry ? o->geometry : getenv("TESSERA_GEOMETRY");
        if (vw_win_open(&v->win, geometry, r->loaded ? r->full_w : 0, r->loaded ? r->full_h : 0) ==
            0) {
            v->win_ready = now_ms() - v->started;
            v->status = 0;
            if (o->fullscreen && vw_win_toggle_fullscreen(&v->win) != 0)
                app_warn("--fullscreen: %s", SDL_GetError());
            if (o->thumbs)
                vw_events_thumbnails(v, 0);
            v->slide_at = now_ms() + v->slide_ms;
            if (o->demo) /* each rung stays 1.5 s (a talk; with --frames too, to measure its
                            frame rate); for a screenshot, none */
                vw_demo_start(&v->demo, &v->run, o->screenshot ? 0 : 1500);
            loop(v, keys, n_keys);
            if (o->frames && !o->quiet && v->grid.started)
                print_grid(v);
            if (o->frames && !o->quiet && !o->thumbs)
                print_summary(v);
            if (o->demo && !o->quiet)
                print_demo(v);
        }
    }
done:;
    int status = v->status;
    viewer_free(v);
    free(keys);
    return status;
}

#endif /* TS_HAVE_SDL */
