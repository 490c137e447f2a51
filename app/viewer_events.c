/* viewer_events.c - what the viewer does with keys, the mouse, window events and dropped files.
 * Keys arrive as vw_key (typed characters from SDL_TEXTINPUT, other keys from SDL_KEYDOWN) and go
 * through the binding table of viewer_keys.c, as replayed --keys do. */
#include "viewer.h"
#include "util.h"

#ifdef TS_HAVE_SDL

#include <string.h>

/* ---------------------------------------------------------------- actions */

static void displayed_size(const viewer *v, int *iw, int *ih)
{
    const ts_image *im = vw_displayed(v);
    *iw = im ? im->width : 1;
    *ih = im ? im->height : 1;
}

/* The chain changed: run again, and old timings and speedups no longer apply. */
static void chain_changed(viewer *v)
{
    v->dirty = 1;
    memset(v->op_ms, 0, sizeof v->op_ms);
    vw_bench_reset(v);
    vw_frames_reset(&v->frames);
}

static void toggle_op(viewer *v, const char *text)
{
    int r = vw_chain_toggle(&v->chain, text, &v->sel);
    if (r < 0) {
        vw_toast(v, "%s: %s", text, ts_error_detail());
        return;
    }
    vw_toast(v, "%s %s", r ? "added" : "removed", text);
    chain_changed(v);
}

static void cycle_variant(viewer *v, int dir)
{
    if (v->sel < 0 || v->sel >= v->chain.n) {
        vw_toast(v, "the chain is empty: b s d e > < t | _ add ops");
        return;
    }
    ts_op *op = &v->chain.ops[v->sel];
    op->variant = vw_variant_cycle(op, ts_pipeline_device(v->pipe), dir);
    vw_toast(v, "%s: variant %s", op->text, op->variant ? op->variant->name : "auto");
    chain_changed(v);
}

static void select_op(viewer *v, int dir)
{
    if (v->chain.n == 0)
        return;
    v->sel = ((v->sel < 0 ? 0 : v->sel + dir) % v->chain.n + v->chain.n) % v->chain.n;
}

static void remove_op(viewer *v)
{
    if (v->sel < 0 || v->sel >= v->chain.n)
        return;
    vw_toast(v, "removed %s", v->chain.ops[v->sel].text);
    ts_chain_remove(&v->chain, v->sel);
    if (v->sel >= v->chain.n)
        v->sel = v->chain.n - 1;
    chain_changed(v);
}

static void go(viewer *v, int index)
{
    if (v->n_files == 0)
        return;
    index = (index % v->n_files + v->n_files) % v->n_files; /* wraps, as in feh */
    vw_open(v, index);
}

static void toggle_fullscreen(viewer *v)
{
    Uint32 flag = v->fullscreen ? 0 : SDL_WINDOW_FULLSCREEN_DESKTOP;
    if (SDL_SetWindowFullscreen(v->win, flag) != 0) {
        vw_toast(v, "fullscreen: %s", SDL_GetError());
        return;
    }
    v->fullscreen = !v->fullscreen;
}

static void zoom_to(viewer *v, double zoom, double ax, double ay)
{
    int iw, ih;
    displayed_size(v, &iw, &ih);
    vw_view_zoom_at(&v->view, zoom, ax, ay, iw, ih, v->ww, v->wh);
}

static void pan(viewer *v, double dx, double dy)
{
    int iw, ih;
    displayed_size(v, &iw, &ih);
    vw_view_pan(&v->view, dx, dy, iw, ih, v->ww, v->wh);
}

/* Actions that change the view; 0 when `a` is not one. (ax, ay): the cursor, for zooms. */
static int view_action(viewer *v, vw_action a, double ax, double ay)
{
    double step = (v->ww < v->wh ? v->ww : v->wh) / 5.0;
    int iw, ih;
    displayed_size(v, &iw, &ih);
    switch (a) {
    case VA_ZOOM_IN: zoom_to(v, vw_zoom_step(v->view.zoom, 1), ax, ay); break;
    case VA_ZOOM_OUT: zoom_to(v, vw_zoom_step(v->view.zoom, -1), ax, ay); break;
    case VA_ONE: zoom_to(v, 1, v->ww / 2.0, v->wh / 2.0); break;
    case VA_FIT: vw_view_fit(&v->view, iw, ih, v->ww, v->wh); break;
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
    case VA_HELP: v->help = !v->help; break;
    case VA_HUD: v->hud = !v->hud; break;
    case VA_LIVE:
        v->live = !v->live;
        vw_frames_reset(&v->frames);
        vw_toast(v, "live mode %s", v->live ? "on: the chain re-runs every frame"
                                            : "off: the chain runs when something changes");
        break;
    case VA_BENCH: vw_bench_request(v); break;
    case VA_COMPARE: v->compare = !v->compare; break;
    case VA_FULLSCREEN: toggle_fullscreen(v); break;
    case VA_SAVE: vw_save(v); break;
    case VA_NEXT: go(v, v->cur + 1); break;
    case VA_PREV: go(v, v->cur - 1); break;
    case VA_FIRST: go(v, 0); break;
    case VA_LAST: go(v, v->n_files - 1); break;
    case VA_SELECT_NEXT: select_op(v, 1); break;
    case VA_SELECT_PREV: select_op(v, -1); break;
    case VA_VARIANT_NEXT: cycle_variant(v, 1); break;
    case VA_VARIANT_PREV: cycle_variant(v, -1); break;
    case VA_REMOVE: remove_op(v); break;
    default: break;
    }
}

void vw_do_key(viewer *v, vw_key k, double ax, double ay)
{
    act(v, vw_key_action(k), ax, ay);
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
    int ow = v->ww, oh = v->wh, iw, ih;
    if (SDL_GetRendererOutputSize(v->ren, &v->ww, &v->wh) != 0) {
        ts_warn("SDL_GetRendererOutputSize: %s", SDL_GetError());
        return;
    }
    displayed_size(v, &iw, &ih);
    vw_view_resize(&v->view, iw, ih, ow, oh, v->ww, v->wh);
    if (v->ww != ow || v->wh != oh)
        vw_frames_reset(&v->frames); /* another window, other costs */
}

static void on_drop(viewer *v, char *file, int *first)
{
    int before = v->n_files;
    vw_files_add(v, file);
    if (*first < 0 && v->n_files > before)
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
            vw_do_key(v, k, mx, my);
        break;
    case SDL_TEXTINPUT:
        SDL_GetMouseState(&mx, &my);
        if (!(SDL_GetModState() & KMOD_CTRL) && vw_key_from_text(e->text.text, &k) == 0)
            vw_do_key(v, k, mx, my);
        break;
    case SDL_MOUSEWHEEL:
        SDL_GetMouseState(&mx, &my);
        if (e->wheel.y)
            act(v, e->wheel.y > 0 ? VA_ZOOM_IN : VA_ZOOM_OUT, mx, my);
        break;
    case SDL_MOUSEBUTTONDOWN: v->dragging |= e->button.button == SDL_BUTTON_LEFT; break;
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

void vw_poll_events(viewer *v)
{
    SDL_Event e;
    int dropped = -1;
    while (SDL_PollEvent(&e))
        on_event(v, &e, &dropped);
    if (dropped >= 0)
        vw_open(v, dropped);
}

#else
typedef int vw_events_unused; /* ISO C wants a declaration in every file */
#endif /* TS_HAVE_SDL */
