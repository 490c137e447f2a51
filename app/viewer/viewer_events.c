/* viewer_events.c - what the viewer does with keys, the mouse, window events and dropped files.
 * Keys arrive as vw_key (typed characters from SDL_TEXTINPUT, other keys from SDL_KEYDOWN) and go
 * through the binding table of viewer_keys.c, as replayed --keys do. */
#include "viewer_events.h"
#include "util.h"

#ifdef TS_HAVE_SDL

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- actions */

static void displayed_size(const viewer *v, int *iw, int *ih)
{
    const ts_image *im = vw_run_displayed(&v->run);
    *iw = im ? im->width : 1;
    *ih = im ? im->height : 1;
}

/* The part of the window the image is fitted into (the HUD takes the rest). */
static vw_area area(const viewer *v) { return vw_ui_area(&v->ui, &v->win, v->compare); }

/* The chain changed: run again, and old timings and speedups no longer apply. */
static void chain_changed(viewer *v)
{
    vw_run_chain_changed(&v->run);
    vw_bench_reset(&v->bench);
    vw_frames_reset(&v->frames);
}

/* The area a large JPEG's preview is fitted into: the window's, or before it exists the largest
 * window the image could get. None for --demo (it times its rungs on the image it starts with)
 * or with TESSERA_VIEWER_PREVIEW=0 (the full decode first, to compare). */
static void preview_box(viewer *v)
{
    const char *env = getenv("TESSERA_VIEWER_PREVIEW");
    vw_run *r = &v->run;
    if (v->o->demo || (env && strcmp(env, "0") == 0))
        r->preview_box_w = r->preview_box_h = 0;
    else if (v->win.win) {
        r->preview_box_w = v->win.ww;
        r->preview_box_h = v->win.wh;
    } else
        vw_win_size_for(v->o->geometry ? v->o->geometry : getenv("TESSERA_GEOMETRY"), 1 << 14,
                        1 << 14, &r->preview_box_w, &r->preview_box_h);
}

void vw_open(viewer *v, int index)
{
    v->files.cur = index;
    preview_box(v);
    vw_run_load(&v->run, v->files.path[index], v->o->max_pixels);
    v->view.iw = v->view.ih = 0; /* fit the new image */
    vw_frames_reset(&v->frames);
    vw_bench_reset(&v->bench);
}

void vw_sync_view(viewer *v)
{
    const ts_image *im = vw_run_displayed(&v->run);
    vw_area a = vw_ui_area(&v->ui, &v->win, v->compare);
    if (im && v->run.swapped) { /* the full image for its preview: the same view of the file */
        v->run.swapped = 0;
        if (!v->view.fit && v->view.iw > 0) {
            v->view.zoom *= (double)v->view.iw / im->width;
            v->view.iw = im->width;
            v->view.ih = im->height;
            vw_view_clamp(&v->view, im->width, im->height, a.w, a.h);
        }
    }
    if (im)
        vw_view_sync(&v->view, im->width, im->height, a.w, a.h);
}

static void toggle_op(viewer *v, const char *text)
{
    int r = vw_chain_toggle(&v->run.chain, text, &v->run.sel);
    if (r < 0) {
        vw_toast(&v->ui, "%s: %s", text, ts_error_detail());
        return;
    }
    vw_toast(&v->ui, "%s %s", r ? "added" : "removed", text);
    chain_changed(v);
}

static void cycle_variant(viewer *v, int dir)
{
    vw_run *r = &v->run;
    if (r->sel < 0 || r->sel >= r->chain.n) {
        vw_toast(&v->ui, "the chain is empty: b s d e > < t | _ add ops");
        return;
    }
    ts_op *op = &r->chain.ops[r->sel];
    op->variant = vw_variant_cycle(op, ts_pipeline_device(r->pipe), dir);
    vw_toast(&v->ui, "%s: variant %s", op->text, op->variant ? op->variant->name : "auto");
    chain_changed(v);
}

static void select_op(vw_run *r, int dir)
{
    if (r->chain.n == 0)
        return;
    r->sel = ((r->sel < 0 ? 0 : r->sel + dir) % r->chain.n + r->chain.n) % r->chain.n;
}

static void remove_op(viewer *v)
{
    vw_run *r = &v->run;
    if (r->sel < 0 || r->sel >= r->chain.n)
        return;
    vw_toast(&v->ui, "removed %s", r->chain.ops[r->sel].text);
    ts_chain_remove(&r->chain, r->sel);
    if (r->sel >= r->chain.n)
        r->sel = r->chain.n - 1;
    chain_changed(v);
}

static void go(viewer *v, int index)
{
    index = vw_files_wrap(&v->files, index); /* wraps, as in feh */
    if (index >= 0)
        vw_open(v, index);
}

/* r: the file again from disk (changed since it was opened); the view stays where it was when
 * the size did not change. */
static void reload(viewer *v)
{
    if (v->files.n == 0)
        return;
    vw_run_load(&v->run, v->files.path[v->files.cur], v->o->max_pixels);
    vw_frames_reset(&v->frames);
    vw_bench_reset(&v->bench);
    vw_toast(&v->ui, "reloaded %s", path_base(v->files.path[v->files.cur]));
}

void vw_events_timers(viewer *v)
{
    if (!v->slideshow || v->files.n < 2 || now_ms() < v->slide_at)
        return;
    go(v, v->files.cur + 1);
    v->slide_at = now_ms() + v->slide_ms;
}

double vw_events_due(const viewer *v)
{
    return v->slideshow && v->files.n > 1 ? v->slide_at : 0;
}

/* i: panel, status line, off, panel; the image area changes with it, as on a resize */
/* The HUD changed from `before` (a mode): the view keeps its place in the new area. */
static void hud_changed(viewer *v, int before_hud)
{
    int iw, ih, now = v->ui.hud;
    v->ui.hud = before_hud;
    vw_area before = area(v);
    v->ui.hud = now;
    vw_area after = area(v);
    displayed_size(v, &iw, &ih);
    vw_view_resize(&v->view, iw, ih, before.w, before.h, after.w, after.h);
}

/* i: the status line, the panel, nothing; from then on the HUD is the user's choice. */
static void cycle_hud(viewer *v)
{
    int before = v->ui.hud;
    v->ui.hud_auto = 0;
    v->ui.hud = before == VW_HUD_LINE ? VW_HUD_FULL : before == VW_HUD_FULL ? VW_HUD_OFF
                                                                             : VW_HUD_LINE;
    hud_changed(v, before);
}

void vw_events_follow_hud(viewer *v)
{
    int before = v->ui.hud;
    if (vw_ui_follow(&v->ui, v->run.chain.n > 0, v->demo.on))
        hud_changed(v, before);
}

static void toggle_fullscreen(viewer *v)
{
    if (vw_win_toggle_fullscreen(&v->win) != 0)
        vw_toast(&v->ui, "fullscreen: %s", SDL_GetError());
}

static void save(viewer *v)
{
    char msg[sizeof v->ui.toast];
    if (v->files.n == 0)
        return;
    vw_run_save(&v->run, v->files.path[v->files.cur], v->o->quiet, msg, sizeof msg);
    vw_toast(&v->ui, "%s", msg);
}

static void zoom_to(viewer *v, double zoom, double ax, double ay)
{
    int iw, ih;
    vw_area a = area(v);
    displayed_size(v, &iw, &ih);
    vw_view_zoom_at(&v->view, zoom, ax, ay, iw, ih, a.w, a.h);
}

static void pan(viewer *v, double dx, double dy)
{
    int iw, ih;
    vw_area a = area(v);
    displayed_size(v, &iw, &ih);
    vw_view_pan(&v->view, dx, dy, iw, ih, a.w, a.h);
}

/* Actions that change the view; 0 when `a` is not one. (ax, ay): the cursor, for zooms. */
static int view_action(viewer *v, vw_action a, double ax, double ay)
{
    vw_area ar = area(v);
    double step = (ar.w < ar.h ? ar.w : ar.h) / 5.0;
    int iw, ih;
    displayed_size(v, &iw, &ih);
    switch (a) {
    case VA_ZOOM_IN: zoom_to(v, vw_zoom_step(v->view.zoom, 1), ax, ay); break;
    case VA_ZOOM_OUT: zoom_to(v, vw_zoom_step(v->view.zoom, -1), ax, ay); break;
    case VA_ONE: zoom_to(v, 1, ar.w / 2.0, ar.h / 2.0); break;
    case VA_FIT: vw_view_fit(&v->view, iw, ih, ar.w, ar.h); break;
    /* keys move the view over the image: Left shows more of the left, so the image moves right */
    case VA_PAN_LEFT: pan(v, step, 0); break;
    case VA_PAN_RIGHT: pan(v, -step, 0); break;
    case VA_PAN_UP: pan(v, 0, step); break;
    case VA_PAN_DOWN: pan(v, 0, -step); break;
    default: return 0;
    }
    return 1;
}

static void act(viewer *v, vw_action a, double ax, double ay)
{
    const char *op = vw_action_op(a);
    vw_sync_view(v); /* an image opened earlier in this frame gets its fit before a zoom or pan */
    if (op) {
        toggle_op(v, op);
        return;
    }
    if (view_action(v, a, ax, ay))
        return;
    switch (a) {
    case VA_QUIT: v->running = 0; break;
    case VA_ESCAPE: /* the help first, as a dialog closes before the window */
        if (v->ui.help)
            v->ui.help = 0;
        else
            v->running = 0;
        break;
    case VA_RELOAD: reload(v); break;
    case VA_SLIDESHOW:
        v->slideshow = !v->slideshow;
        v->slide_at = now_ms() + v->slide_ms;
        vw_toast(&v->ui, "slideshow %s", v->slideshow ? "on" : "off");
        break;
    case VA_HELP: v->ui.help = !v->ui.help; break;
    case VA_HUD: cycle_hud(v); break;
    case VA_LIVE:
        v->run.live = !v->run.live;
        vw_frames_reset(&v->frames);
        vw_toast(&v->ui, "live mode %s", v->run.live ? "on: the chain re-runs every frame"
                                            : "off: the chain runs when something changes");
        break;
    case VA_BENCH: vw_bench_request(&v->bench, &v->run); break;
    case VA_COMPARE: v->compare = !v->compare; break;
    case VA_FULLSCREEN: toggle_fullscreen(v); break;
    case VA_SAVE: save(v); break;
    case VA_NEXT: go(v, v->files.cur + 1); break;
    case VA_PREV: go(v, v->files.cur - 1); break;
    case VA_FIRST: go(v, 0); break;
    case VA_LAST: go(v, v->files.n - 1); break;
    case VA_SELECT_NEXT: select_op(&v->run, 1); break;
    case VA_SELECT_PREV: select_op(&v->run, -1); break;
    case VA_VARIANT_NEXT: cycle_variant(v, 1); break;
    case VA_VARIANT_PREV: cycle_variant(v, -1); break;
    case VA_REMOVE: remove_op(v); break;
    default: break;
    }
}

/* ---------------------------------------------------------------- thumbnail mode */

void vw_events_thumbnails(viewer *v, int sel)
{
    const app_options *o = v->o;
    if (v->files.n == 0 || vw_grid_start(&v->grid, &v->files, o->jobs, o->backend, o->max_pixels,
                                         v->run.load.wake) != 0)
        return;
    v->grid.on = 1;
    v->grid.sel = sel < v->grid.n ? sel : 0;
    v->ui.help = 0;
    v->slideshow = 0;
}

/* The grid's keys, as nsxiv's: arrows and hjkl move, g G (Home End) the first and the last,
 * PageUp PageDown a screen, n p Space BackSpace one, the wheel a row, Enter opens; q, f and ?
 * as in image mode. The other keys (ops, zoom) do nothing here. */
static void grid_key(viewer *v, vw_key k, vw_action a, double ax, double ay)
{
    vw_grid *g = &v->grid;
    int cols = g->geom.cols > 0 ? g->geom.cols : 1;
    int page = cols * (g->geom.rows > 2 ? g->geom.rows - 1 : 1);
    if (k.code == VK_PAGEDOWN || k.code == VK_PAGEUP) {
        vw_grid_move(g, k.code == VK_PAGEDOWN ? page : -page);
        return;
    }
    switch (a) {
    case VA_PAN_LEFT: case VA_PREV: vw_grid_move(g, -1); break;
    case VA_PAN_RIGHT: case VA_NEXT: vw_grid_move(g, 1); break;
    case VA_PAN_UP: case VA_ZOOM_IN: vw_grid_move(g, -cols); break;
    case VA_PAN_DOWN: case VA_ZOOM_OUT: vw_grid_move(g, cols); break;
    case VA_FIRST: vw_grid_move(g, -g->n); break;
    case VA_LAST: vw_grid_move(g, g->n); break;
    case VA_THUMBS:
        if (g->sel < v->files.n) {
            g->on = 0;
            vw_open(v, g->sel);
        }
        break;
    case VA_QUIT: case VA_ESCAPE: case VA_HELP: case VA_FULLSCREEN: act(v, a, ax, ay); break;
    default: break;
    }
}

void vw_events_key(viewer *v, vw_key k, double ax, double ay)
{
    vw_action a = vw_key_action(k);
    if (v->grid.on)
        grid_key(v, k, a, ax, ay);
    else if (a == VA_THUMBS)
        vw_events_thumbnails(v, v->files.cur);
    else
        act(v, a, ax, ay);
}

/* A click selects a thumbnail, a double click opens it. */
static void grid_click(viewer *v, const SDL_MouseButtonEvent *b)
{
    vw_grid *g = &v->grid;
    int x0 = (v->win.ww - g->geom.cols * g->geom.cell) / 2;
    int i = vw_grid_hit(&g->geom, g->n, b->x - x0, b->y);
    if (b->button != SDL_BUTTON_LEFT || i < 0)
        return;
    g->sel = i;
    if (b->clicks >= 2)
        grid_key(v, (vw_key){VK_RETURN, 0}, VA_THUMBS, 0, 0);
}

/* ---------------------------------------------------------------- events */

/* Keys that type no text (and Ctrl+key) come as SDL_KEYDOWN; typed characters come as
 * SDL_TEXTINPUT, so '>' or '?' work whatever the keyboard layout. 0: wait for the text. */
static int key_from_sdl(const SDL_Keysym *ks, vw_key *k)
{
    static const struct {
        SDL_Keycode sym;
        int code;
    } map[] = {
        {SDLK_LEFT, VK_LEFT},     {SDLK_RIGHT, VK_RIGHT},         {SDLK_UP, VK_UP},
        {SDLK_DOWN, VK_DOWN},     {SDLK_HOME, VK_HOME},           {SDLK_END, VK_END},
        {SDLK_PAGEUP, VK_PAGEUP}, {SDLK_PAGEDOWN, VK_PAGEDOWN},   {SDLK_TAB, VK_TAB},
        {SDLK_DELETE, VK_DELETE}, {SDLK_BACKSPACE, VK_BACKSPACE}, {SDLK_ESCAPE, VK_ESCAPE},
        {SDLK_RETURN, VK_RETURN}, {SDLK_F1, VK_F1},
    };
    k->ctrl = (ks->mod & KMOD_CTRL) != 0;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i].sym == ks->sym) {
            k->code = map[i].code == VK_TAB && (ks->mod & KMOD_SHIFT) ? VK_BACKTAB : map[i].code;
            return 1;
        }
    if (k->ctrl && ks->sym >= 'a' && ks->sym <= 'z') {
        k->code = (int)ks->sym;
        return 1;
    }
    return 0;
}

static void resized(viewer *v)
{
    vw_area before = area(v);
    int iw, ih, changed = vw_win_resized(&v->win);
    if (changed < 0)
        return;
    vw_area after = area(v);
    displayed_size(v, &iw, &ih);
    vw_view_resize(&v->view, iw, ih, before.w, before.h, after.w, after.h);
    if (changed)
        vw_frames_reset(&v->frames); /* another window, other costs */
}

static void on_drop(viewer *v, char *file, int *first)
{
    int before = v->files.n;
    vw_files_add(&v->files, file, v->o->recursive);
    if (*first < 0 && v->files.n > before)
        *first = before;
    SDL_free(file);
}

static void on_event(viewer *v, const SDL_Event *e, int *dropped)
{
    int mx, my;
    vw_key k;
    switch (e->type) {
    case SDL_QUIT: v->running = 0; break;
    case SDL_KEYDOWN:
        SDL_GetMouseState(&mx, &my);
        if (key_from_sdl(&e->key.keysym, &k))
            vw_events_key(v, k, mx, my);
        break;
    case SDL_TEXTINPUT:
        SDL_GetMouseState(&mx, &my);
        if (!(SDL_GetModState() & KMOD_CTRL) && vw_key_from_text(e->text.text, &k) == 0)
            vw_events_key(v, k, mx, my);
        break;
    case SDL_MOUSEWHEEL:
        SDL_GetMouseState(&mx, &my);
        if (e->wheel.y && v->grid.on)
            grid_key(v, (vw_key){0, 0}, e->wheel.y > 0 ? VA_ZOOM_IN : VA_ZOOM_OUT, mx, my);
        else if (e->wheel.y)
            act(v, e->wheel.y > 0 ? VA_ZOOM_IN : VA_ZOOM_OUT, mx, my);
        break;
    case SDL_MOUSEBUTTONDOWN:
        if (v->grid.on)
            grid_click(v, &e->button);
        else
            v->dragging |= e->button.button == SDL_BUTTON_LEFT;
        break;
    case SDL_MOUSEBUTTONUP: v->dragging &= e->button.button != SDL_BUTTON_LEFT; break;
    case SDL_MOUSEMOTION:
        if (v->dragging)
            pan(v, e->motion.xrel, e->motion.yrel);
        break;
    case SDL_WINDOWEVENT:
        if (e->window.event == SDL_WINDOWEVENT_SIZE_CHANGED)
            resized(v);
        break;
    case SDL_DROPFILE: on_drop(v, e->drop.file, dropped); break;
    default: break;
    }
}

int vw_events_poll(viewer *v)
{
    SDL_Event e;
    int dropped = -1, n = 0;
    while (SDL_PollEvent(&e)) {
        on_event(v, &e, &dropped);
        n++;
    }
    if (dropped >= 0) {
        v->grid.on = 0; /* the grid holds the files it started with: the drop opens as an image */
        vw_open(v, dropped);
    }
    return n;
}

#else
typedef int vw_events_unused; /* ISO C wants a declaration in every file */
#endif /* TS_HAVE_SDL */
