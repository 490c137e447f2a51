/* viewer_hud.c - the UI: the HUD, help, messages, the before|after labels and toasts.
 *
 * The HUD never covers the image: in full mode it is a panel on the right and the image is
 * fitted into the rest of the window; in line mode one status line at the bottom; off, the image
 * has the window (vw_ui_area). The panel: backend and device, the file, the chain with each op's
 * variant, kernel time and speedup over naive (a bar on a log scale with 1x, 10x and 100x marks:
 * longer is faster), transfers, the frame statistics (the exit summary's figures) and a histogram
 * of the shown image. Toasts sit at the top of the image area, away from the split view's labels
 * at its bottom. Nothing is allocated per frame.
 */
#include "viewer_hud.h"
#include "viewer_display.h"
#include "viewer_keys.h"
#include "viewer_text.h"
#include "util.h"

#ifdef TS_HAVE_SDL

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const SDL_Color c_text = {235, 235, 235, 255}, c_dim = {160, 160, 170, 255},
                       c_sel = {255, 214, 90, 255}, c_good = {120, 220, 120, 255},
                       c_bad = {255, 120, 110, 255}, c_warn = {255, 200, 80, 255},
                       c_panel = {24, 24, 28, 255};

void vw_toast(vw_ui *u, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(u->toast, sizeof u->toast, fmt, ap);
    va_end(ap);
    u->toast_until = now_ms() + 3000;
}

double vw_ui_due(const vw_ui *u)
{
    return u->toast[0] && u->toast_until > now_ms() ? u->toast_until : 0;
}

/* ---------------------------------------------------------------- geometry */

int vw_ui_scale(int ww, int wh)
{
    int s = ww / 400 < wh / 300 ? ww / 400 : wh / 300;
    return s < 1 ? 1 : s > 4 ? 4 : s;
}

int vw_ui_follow(vw_ui *u, int chain_on, int demo)
{
    int want = chain_on || demo ? VW_HUD_FULL : VW_HUD_LINE;
    if (!u->hud_auto || u->hud == want)
        return 0;
    u->hud = want;
    return 1;
}

static int ui_scale(const vw_win *w) { return vw_ui_scale(w->ww, w->wh); }
static int panel_width(const vw_win *w)
{
    int pw = 390 * ui_scale(w), most = w->ww * 2 / 5;
    return pw < most ? pw : most;
}
/* The panel's text: the window's scale where at least 38 characters fit a line, else smaller
 * (the panel is the details; the picture keeps 3/5 of the window). */
static int panel_scale(const vw_win *w)
{
    int s = ui_scale(w), ch = vw_text_width("abcdefghij", 1) / 10, pw = panel_width(w);
    while (s > 1 && (pw - 16 * s) / (ch * s) < 38)
        s--;
    return s;
}
static int line_height(const vw_win *w) { return (VW_TEXT_LINE + 6) * ui_scale(w); }

vw_area vw_ui_area(const vw_ui *u, const vw_win *w, int compare)
{
    vw_area a = {w->ww, w->wh, compare};
    if (u->hud == VW_HUD_FULL)
        a.w -= panel_width(w);
    else if (u->hud == VW_HUD_LINE)
        a.h -= line_height(w);
    a.w = a.w < 1 ? 1 : a.w;
    a.h = a.h < 1 ? 1 : a.h;
    return a;
}

/* ---------------------------------------------------------------- the panel's items */

#define MAX_ITEMS (8 * TS_MAX_CHAIN + 40)

enum { IT_TEXT, IT_BAR, IT_HIST, IT_GAP };

typedef struct item {
    int kind, op; /* IT_BAR: the op whose speedup it shows (-2 - i: rung i of the demo) */
    int labels;   /* IT_BAR: the scale's labels under it (the last bar of a group) */
    SDL_Color color;
    char text[160];
} item;

typedef struct panel {
    item it[MAX_ITEMS];
    int n, s, width; /* text scale, room for a line in pixels */
} panel;

static item *add(panel *p, int kind, SDL_Color c, const char *text)
{
    if (p->n == MAX_ITEMS)
        return &p->it[MAX_ITEMS - 1];
    item *it = &p->it[p->n++];
    it->kind = kind;
    it->op = -1;
    it->labels = 0;
    it->color = c;
    snprintf(it->text, sizeof it->text, "%s", text ? text : "");
    return it;
}

/* A line of text, wrapped at blanks to the panel's width. */
static void say(panel *p, SDL_Color c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(panel *p, SDL_Color c, const char *fmt, ...)
{
    char all[512], buf[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(all, sizeof all, fmt, ap);
    va_end(ap);
    const char *s = all;
    int indent = 0;
    while (*s) {
        size_t cut = strlen(s);
        snprintf(buf, sizeof buf, "%*s%.*s", indent, "", (int)sizeof buf - 1 - indent, s);
        cut = strlen(buf);
        while (cut > (size_t)indent + 1 && vw_text_width(buf, p->s) > p->width) {
            size_t b = cut - 1;
            while (b > (size_t)indent && buf[b] != ' ')
                b--;
            cut = b > (size_t)indent ? b : cut - 1;
            buf[cut] = '\0';
        }
        add(p, IT_TEXT, c, buf);
        s += cut - indent;
        while (*s == ' ')
            s++;
        indent = 2; /* continued lines */
    }
}

static void fmt_ms(char *buf, size_t len, double ms)
{
    snprintf(buf, len, ms < 10 ? "%.3f" : ms < 100 ? "%.2f" : "%.0f", ms);
}

/* The details (a chain on, or the demo): backend, renderer, transfers and frame figures. */
static int details(const vw_scene *v) { return v->demo->on || v->run->chain.n > 0; }

static void backend_items(const vw_scene *v, panel *p)
{
    const ts_device *d = ts_pipeline_device(v->run->pipe);
    add(p, IT_GAP, c_dim, NULL);
    if (!details(v)) { /* plain viewing: one line */
        if (d)
            say(p, c_dim, "tessera %s, edits on the GPU (%s)", APP_VERSION, d->name);
        else
            say(p, c_dim, "tessera %s, edits on the CPU", APP_VERSION);
        return;
    }
    say(p, c_text, "tessera %s", APP_VERSION);
    if (d)
        say(p, c_text, "GPU %s (sm_%d, %d SMs)", d->name, d->cc, d->sms);
    else
        say(p, c_text, "CPU backend (%s)",
            v->o->backend == TS_BACKEND_CPU ? "--backend cpu"
            : ts_gpu_compiled()             ? "no usable GPU"
                                            : "built without CUDA");
    say(p, c_dim, "renderer %s", v->win->renderer);
}

static void file_items(const vw_scene *v, panel *p)
{
    static const char *const ch[] = {"", "gray", "gray+alpha", "RGB", "RGBA"};
    const ts_image *im = vw_run_displayed(v->run);
    if (!v->files->n)
        return;
    say(p, c_text, "%s", path_base(v->files->path[v->files->cur]));
    if (im) { /* the file's size and zoom, also while its preview shows */
        double mp = (double)v->run->full_w * v->run->full_h / 1e6;
        say(p, c_dim, "%d x %d pixels (%.*f MP), %s %d-bit", v->run->full_w, v->run->full_h,
            mp < 10 ? 1 : 0, mp, ch[im->channels], im->bytes * 8);
        say(p, c_dim, "picture %d of %d   zoom %.0f%%", v->files->cur + 1, v->files->n,
            v->view->zoom * vw_run_file_scale(v->run) * 100);
    }
    if (im && v->run->preview)
        say(p, c_warn, "preview (1/%d size, %dx%d): decoding the full image...",
            v->run->preview_denom, im->width, im->height);
    if (im && v->run->orientation > 1)
        say(p, c_dim, "turned upright (EXIF orientation %d)", v->run->orientation);
    if (v->run->icc_line[0])
        say(p, c_dim, "%s", v->run->icc_line);
    if (im && v->run->anim.n)
        say(p, c_dim, "animated GIF: frame %d/%d", v->run->anim_frame + 1, v->run->anim.n);
}

/* The speedup line under an op: a bar where there is a measurement, else why not. */
static void speedup_items(const vw_scene *v, panel *p, int i)
{
    const vw_bench *b = v->bench;
    if (!ts_pipeline_on_gpu(v->run->pipe)) /* measured on the GPU only: nothing to say here */
        return;
    const char *why = !b->valid ? (b->running ? "speedup over naive: measuring..." : "speedup: -")
                      : b->res_state[i] < 0 ? "naive cannot run this"
                                            : NULL;
    if (why) {
        say(p, c_dim, "  %s", why);
        return;
    }
    char naive[16];
    fmt_ms(naive, sizeof naive, b->res_naive[i]);
    double x = b->res_cur[i] > 0 ? b->res_naive[i] / b->res_cur[i] : 0;
    say(p, x > 1.05 ? c_good : x < 0.95 ? c_bad : c_text, "  x%.1f over naive (naive %s ms)", x,
        naive);
    item *bar = add(p, IT_BAR, c_good, NULL);
    bar->op = i;
    bar->labels = i + 1 == v->run->chain.n;
}

static void chain_items(const vw_scene *v, panel *p)
{
    const vw_run *r = v->run;
    add(p, IT_GAP, c_dim, NULL);
    if (r->chain.n == 0) {
        say(p, c_dim, "edits: none (b blur, s sharpen, d edges, e equalize, > < turn; ? all "
            "keys)");
        return;
    }
    say(p, c_dim, "chain (Tab selects, [ ] variant):");
    for (int i = 0; i < r->chain.n; i++) {
        const ts_op *op = &r->chain.ops[i];
        const ts_variant *ran = r->have_result ? r->rep.op[i].variant : NULL;
        const char *how = op->variant ? ""
                          : ts_pipeline_selected(r->pipe, ts_op_family(op->kind)) ? " (--variant)"
                                                                                   : " (auto)";
        char avg[16] = "-", last[16] = "-";
        if (r->op_ms[i].n) {
            fmt_ms(avg, sizeof avg, r->op_ms[i].avg);
            fmt_ms(last, sizeof last, r->op_ms[i].last);
        }
        say(p, i == r->sel ? c_sel : c_text, "%s %s   %s%s", i == r->sel ? ">" : " ", op->text,
            ran ? ran->name : "-", how);
        say(p, c_text, "  %s ms avg, %s last", avg, last);
        speedup_items(v, p, i);
    }
}

/* --demo: every rung with its time, variant and speedup over the family's first rung. */
static void demo_items(const vw_scene *v, panel *p)
{
    const vw_demo *d = v->demo;
    add(p, IT_GAP, c_dim, NULL);
    say(p, c_sel, "demo: the shared-memory ladder%s", d->done ? " (done)" : "");
    if (d->note[0])
        say(p, c_warn, "%s", d->note);
    for (int i = 0; i < d->n; i++) {
        const vw_rung *g = &d->rung[i];
        char ms[16] = "...";
        if (i == 0 || g->family != d->rung[i - 1].family)
            say(p, c_dim, "%s, %s:", ts_family_name(g->family), g->op);
        if (g->state > 0)
            fmt_ms(ms, sizeof ms, g->ms);
        else if (g->state < 0)
            snprintf(ms, sizeof ms, "n/a");
        double x = vw_demo_speedup(d, i);
        SDL_Color c = i == d->cur && !d->done ? c_sel : g->state < 0 ? c_dim : c_text;
        if (x > 0 && g->var)
            say(p, c, "%s %-8s %s ms   x%.1f", i == d->cur && !d->done ? ">" : " ",
                g->var ? g->var->name : "cpu", ms, x);
        else
            say(p, c, "%s %-8s %s ms", i == d->cur && !d->done ? ">" : " ",
                g->var ? g->var->name : "cpu", ms);
        int first = i == 0 || g->family != d->rung[i - 1].family;
        int last = i + 1 == d->n || d->rung[i + 1].family != g->family;
        if (x > 0 && g->var && !first) { /* the first rung is the family's 1x */
            item *bar = add(p, IT_BAR, c_good, NULL);
            bar->op = -2 - i;
            bar->labels = last;
        }
    }
}

static void transfer_items(const vw_scene *v, panel *p)
{
    char up[16], down[16], disp[16];
    fmt_ms(disp, sizeof disp, v->stats->display_med);
    add(p, IT_GAP, c_dim, NULL);
    if (!ts_pipeline_on_gpu(v->run->pipe)) {
        say(p, c_dim, "kernel times: host clock (CPU backend: no upload or download); display "
            "%s ms (host%s)", disp, v->tex->resampled ? ", " VW_RESAMPLE_FILTER : "");
        return;
    }
    if (!v->run->have_result)
        return;
    fmt_ms(up, sizeof up, v->run->first_upload_ms);
    if (v->tex->on_gpu) {
        say(p, c_dim, "upload %s ms (once, kept on the GPU); display %s ms (%dx%d texels: GPU "
            "%s, download)", up, disp, v->tex->disp.map.tw, v->tex->disp.map.th,
            v->tex->resampled ? VW_RESAMPLE_FILTER : "conversion");
        return;
    }
    fmt_ms(down, sizeof down, v->run->down_ms.avg);
    say(p, c_dim, "upload %s ms (once, kept on the GPU); download %s ms; display %s ms (host "
        "conversion)", up, down, disp);
}

/* The frame statistics (viewer_stats.c), as the exit summary prints them. */
static void frame_items(const vw_scene *v, panel *p)
{
    const vw_frame_stats *s = v->stats;
    char figures[160], basis[200], verdict[120];
    vw_frames_text(v->frames, v->stats, v->win->refresh_hz, v->win->paced, figures,
                   sizeof figures, basis, sizeof basis, verdict, sizeof verdict);
    add(p, IT_GAP, c_dim, NULL);
    say(p, c_text, "%s", figures);
    say(p, c_dim, "%s", basis);
    say(p, !s->measured ? c_text : s->holding ? c_good : c_bad, "%s", verdict);
}

static void status_items(const vw_scene *v, panel *p)
{
    const vw_bench *b = v->bench;
    const vw_run *r = v->run;
    add(p, IT_GAP, c_dim, NULL);
    if (r->chain.n)
        say(p, c_dim, "%s", r->live ? "live: the chain re-runs every frame while the HUD shows "
                                      "(L: off)"
                                    : "the chain runs when something changes (L: every frame)");
    if (b->running && r->chain.n)
        say(p, c_dim, "measuring speedups: %s...", r->chain.ops[b->op].text);
    else if (b->valid)
        say(p, c_dim, "speedups measured %.0f s ago (B again)", (now_ms() - b->at) / 1000);
    else if (b->note[0])
        say(p, c_dim, "%.150s", b->note);
    if (r->have_result && r->rep.notice[0])
        say(p, c_warn, "%s", r->rep.notice);
    if (r->run_err[0])
        say(p, c_bad, "%s", r->run_err);
    say(p, c_dim, "? all keys   i: hide   c: compare   Ctrl+S: save a copy");
    add(p, IT_GAP, c_dim, NULL);
    add(p, IT_HIST, c_dim, "brightness histogram");
}

/* ---------------------------------------------------------------- drawing the panel */

static void histogram(const vw_scene *v, int x, int y, int w, int hgt)
{
    SDL_Renderer *ren = v->win->ren;
    const uint32_t *hist = v->tex->hist;
    uint32_t max = 1;
    for (int i = 1; i < 255; i++)     /* the clipped ends would flatten the rest */
        max = hist[i] > max ? hist[i] : max;
    vw_fill(ren, x, y, w, hgt, (SDL_Color){40, 40, 46, 255});
    if (vw_sdl(SDL_SetRenderDrawColor(ren, 200, 200, 210, 255), "SDL_SetRenderDrawColor"))
        return;
    for (int c = 0; c < w; c++) { /* column c: bins [c*256/w, (c+1)*256/w), at least one */
        int b0 = c * 256 / w, b1 = (c + 1) * 256 / w;
        b1 = b1 > b0 ? b1 : b0 + 1;
        uint32_t s = 0;
        for (int k = b0; k < b1; k++)
            s += hist[k];
        int bh = (int)((double)s / (b1 - b0) / max * hgt + 0.5);
        bh = bh > hgt ? hgt : bh;
        if (bh > 0)
            vw_sdl(SDL_RenderDrawLine(ren, x + c, y + hgt - 1, x + c, y + hgt - bh),
                   "SDL_RenderDrawLine");
    }
}

/* Where a speedup falls on the bar: log10 from 1x (0) to 1000x (w); below 1x: 0. */
static int bar_pos(double speedup, int w)
{
    double f = speedup > 1 ? log10(speedup) / 3 : 0;
    return (int)(w * (f > 1 ? 1 : f) + 0.5);
}

/* The speedup over naive as a bar that grows with it (log scale), marks at 1x, 10x, 100x. */
static void speed_bar(const vw_scene *v, int i, int labels, int x, int y, int w, int s)
{
    const vw_bench *b = v->bench;
    SDL_Renderer *ren = v->win->ren;
    double speedup = i <= -2                ? vw_demo_speedup(v->demo, -2 - i)
                     : b->res_cur[i] > 0 ? b->res_naive[i] / b->res_cur[i]
                                         : 0;
    int h = 6 * s, len = bar_pos(speedup, w);
    vw_fill(ren, x, y, w, h, (SDL_Color){60, 60, 68, 255});
    vw_fill(ren, x, y, len < 1 ? 1 : len, h, speedup >= 0.95 ? c_good : c_bad);
    static const struct {
        double at;
        const char *label;
    } marks[] = {{1, "1x"}, {10, "10x"}, {100, "100x"}, {1000, "1000x"}};
    for (int m = 0; m < 4; m++) {
        int mx = x + bar_pos(marks[m].at, w) - (m == 3 ? s : 0);
        vw_fill(ren, mx, y - s, s, h + 2 * s, c_text);
        if (!labels)
            continue;
        int tw = vw_text_width(marks[m].label, s);
        int tx = m == 0 ? mx : m == 3 ? mx - tw + s : mx - tw / 2;
        vw_text(ren, tx, y + h + 2 * s, s, c_dim, marks[m].label);
    }
}

static int item_height(const item *it, int s)
{
    switch (it->kind) {
    case IT_BAR: return (it->labels ? 20 : 11) * s;
    case IT_HIST: return 34 * s + VW_TEXT_LINE * s;
    case IT_GAP: return 5 * s;
    default: return VW_TEXT_LINE * s;
    }
}

static void draw_panel(const vw_scene *v)
{
    static panel p;
    int s = panel_scale(v->win), pad = 8 * s, pw = panel_width(v->win), x0 = v->win->ww - pw;
    p.n = 0;
    p.s = s;
    p.width = pw - 2 * pad;
    file_items(v, &p);
    if (v->demo->on)
        demo_items(v, &p);
    else
        chain_items(v, &p);
    backend_items(v, &p);
    if (details(v)) {
        transfer_items(v, &p);
        frame_items(v, &p);
    }
    status_items(v, &p);
    vw_fill(v->win->ren, x0, 0, pw, v->win->wh, c_panel);
    int y = pad;
    for (int i = 0; i < p.n && y < v->win->wh; i++) {
        const item *it = &p.it[i];
        if (it->kind == IT_TEXT)
            vw_text(v->win->ren, x0 + pad, y, s, it->color, it->text);
        else if (it->kind == IT_BAR)
            speed_bar(v, it->op, it->labels, x0 + pad + 2 * VW_TEXT_LINE * s / 2, y + 2 * s,
                      p.width - 2 * VW_TEXT_LINE * s, s);
        else if (it->kind == IT_HIST) {
            histogram(v, x0 + pad, y, p.width < 256 * s ? p.width : 256 * s, 32 * s);
            vw_text(v->win->ren, x0 + pad, y + 34 * s, s, it->color, it->text);
        }
        y += item_height(it, s);
    }
}

/* Line mode: the file, its size, the zoom and where it is in the list; with a chain, its ops
 * and their time; a key hint on the right where it fits. */
static void draw_line(const vw_scene *v)
{
    char line[400], ops[200] = "";
    int s = ui_scale(v->win), h = line_height(v->win), y = v->win->wh - h;
    const vw_run *r = v->run;
    double total = 0;
    for (int i = 0; i < r->chain.n; i++) {
        size_t used = strlen(ops);
        snprintf(ops + used, sizeof ops - used, "%s%s", i ? ", " : "", r->chain.ops[i].text);
        total += r->op_ms[i].avg;
    }
    char named[300], size[64] = "";
    const char *name = v->files->n ? path_base(v->files->path[v->files->cur]) : "no images";
    if (r->preview) {
        snprintf(named, sizeof named, "%.200s (preview)", name);
        name = named;
    }
    if (vw_run_displayed(r))
        snprintf(size, sizeof size, "   %d x %d", r->full_w, r->full_h);
    double zoom = v->view->zoom * vw_run_file_scale(r) * 100;
    int n = snprintf(line, sizeof line, "%s%s   %.0f%%   %d / %d", name, size, zoom,
                     v->files->cur + 1, v->files->n);
    if (r->chain.n && n > 0 && (size_t)n < sizeof line)
        snprintf(line + n, sizeof line - (size_t)n, "   |   %s   %.1f ms", ops, total);
    static const char *const hint = "? keys   i info";
    vw_fill(v->win->ren, 0, y, v->win->ww, h, c_panel);
    vw_text(v->win->ren, 8 * s, y + 3 * s, s, c_text, line);
    int hw = vw_text_width(hint, s), lw = vw_text_width(line, s);
    if (16 * s + lw + 32 * s + hw <= v->win->ww)
        vw_text(v->win->ren, v->win->ww - 8 * s - hw, y + 3 * s, s, c_dim, hint);
}

/* ---------------------------------------------------------------- help, messages, labels */

static void draw_help(const vw_scene *v)
{
    char keys[64][64];
    const char *what[64];
    static const char *const title = "tessera keys (--keys replays them: e,b,Tab,],Ctrl+s)";
    static const char *const note = "note: b s d e x [ ] edit the chain here (blur, sharpen, "
                                    "edges, equalize, remove, variant), unlike nsxiv and imv";
    int n = 0, kw = 0, ww = 0, s = ui_scale(v->win);
    while (n < 64 && vw_help_line(n, keys[n], sizeof keys[n], &what[n]))
        n++;
    for (int i = 0; i < n; i++) {
        int a = vw_text_width(keys[i], s), b = vw_text_width(what[i], s);
        kw = a > kw ? a : kw;
        ww = b > ww ? b : ww;
    }
    int line = VW_TEXT_LINE * s, pad = 10 * s, colw = kw + 3 * pad + ww;
    int cols = ((n + 3) * line + 2 * pad > v->win->wh * 3 / 4 && 2 * colw + 3 * pad < v->win->ww)
                   ? 2 : 1;
    int rows = (n + cols - 1) / cols;
    int pw = cols * colw + (cols + 1) * pad, ph = (rows + 3) * line + 2 * pad;
    int nw = vw_text_width(note, s) + 2 * pad;
    pw = nw > pw ? nw : pw;
    int x0 = (v->win->ww - pw) / 2, y0 = (v->win->wh - ph) / 2;
    vw_fill(v->win->ren, x0, y0, pw, ph, (SDL_Color){0, 0, 0, 225});
    vw_text(v->win->ren, x0 + pad, y0 + pad, s, c_sel, title);
    vw_text(v->win->ren, x0 + pad, y0 + pad + line, s, c_warn, note);
    for (int i = 0; i < n; i++) {
        int x = x0 + pad + (i / rows) * (colw + pad), y = y0 + pad + (i % rows + 3) * line;
        vw_text(v->win->ren, x, y, s, c_text, keys[i]);
        vw_text(v->win->ren, x + kw + 3 * pad, y, s, c_dim, what[i]);
    }
}

/* A message in the middle of the image area (a file that cannot be shown), wrapped to fit. */
static void draw_message(const vw_scene *v, vw_area a, const char *msg, SDL_Color c)
{
    char lines[8][160];
    int n = 0, s = ui_scale(v->win), line = 12 * s, pad = 12 * s, maxw = a.w - 4 * pad, w = 0;
    const char *p = msg;
    while (*p && n < 8) {
        size_t cut;
        char buf[160];
        snprintf(buf, sizeof buf, "%s", p);
        cut = strlen(buf);
        while (cut > 1 && vw_text_width(buf, s) > maxw) { /* break at the last blank that fits */
            size_t b = cut - 1;
            while (b > 0 && buf[b] != ' ')
                b--;
            cut = b > 0 ? b : cut - 1;
            buf[cut] = '\0';
        }
        snprintf(lines[n], sizeof lines[n], "%s", buf);
        int lw = vw_text_width(lines[n++], s);
        w = lw > w ? lw : w;
        p += cut;
        while (*p == ' ')
            p++;
    }
    int x0 = (a.w - w) / 2 - pad, y0 = (a.h - n * line) / 2 - pad;
    vw_fill(v->win->ren, x0, y0, w + 2 * pad, n * line + 2 * pad, (SDL_Color){0, 0, 0, 200});
    for (int i = 0; i < n; i++)
        vw_text(v->win->ren, x0 + pad, y0 + pad + i * line, s, c, lines[i]);
}

/* At the top of the image area: the split view's labels are at its bottom. */
static void draw_toast(const vw_scene *v, vw_area a)
{
    int s = ui_scale(v->win), line = VW_TEXT_LINE * s, pad = 8 * s;
    if (!v->ui->toast[0] || now_ms() >= v->ui->toast_until)
        return;
    int tw = vw_text_width(v->ui->toast, s);
    vw_fill(v->win->ren, (a.w - tw) / 2 - pad, pad, tw + 2 * pad, line + 2 * pad,
            (SDL_Color){0, 0, 0, 200});
    vw_text(v->win->ren, (a.w - tw) / 2, 2 * pad, s, c_text, v->ui->toast);
}

static void draw_labels(const vw_scene *v, vw_area a)
{
    static const SDL_Color white = {255, 255, 255, 255};
    int split = a.w / 2, s = ui_scale(v->win);
    vw_text(v->win->ren, split - vw_text_width("before", s) - 8 * s, a.h - 14 * s, s, white,
            "before");
    vw_text(v->win->ren, split + 8 * s, a.h - 14 * s, s, white, "after");
}

void vw_ui_draw(const vw_scene *v)
{
    static const SDL_Color red = {255, 110, 100, 255};
    vw_area a = vw_ui_area(v->ui, v->win, v->compare);
    if (a.compare && v->run->have_result && v->tex->shown)
        draw_labels(v, a);
    if (v->files->n == 0)
        draw_message(v, a, "no images: drop files on this window (or run tessera IMAGE|DIR...)",
                     red);
    else if (!vw_run_displayed(v->run))
        draw_message(v, a, v->run->load_err, red);
    if (v->ui->hud == VW_HUD_FULL)
        draw_panel(v);
    else if (v->ui->hud == VW_HUD_LINE)
        draw_line(v);
    draw_toast(v, a);
    if (v->ui->help)
        draw_help(v);
}

#else
typedef int vw_hud_unused; /* ISO C wants a declaration in every file */
#endif /* TS_HAVE_SDL */
