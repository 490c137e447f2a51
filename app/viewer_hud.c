/* viewer_hud.c - text and the heads-up display.
 *
 * Text is stb_easy_font: its glyphs are axis-aligned quads, drawn here as one
 * SDL_RenderFillRectsF batch per string (cheaper than triangles through SDL_RenderGeometry,
 * which matters in the software renderer). The HUD: backend and device, the chain with each op's
 * variant, kernel time (moving average and last) and speedup over naive with bars, upload and
 * display transfer, the frame statistics (median and p95 of interval and work, FPS, whether the
 * display rate holds: the exit summary's figures) and a histogram of the shown image.
 * Buffers are static: nothing is allocated per frame.
 */
#include "viewer_hud.h"
#include "viewer_keys.h"
#include "util.h"

#ifdef TS_HAVE_SDL

#include <stb_easy_font.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_TEXT 480                 /* characters per string */
#define MAX_QUADS 12000              /* stb_easy_font: at most ~25 quads a character */

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
    return u->hud && u->toast[0] && u->toast_until > now_ms() ? u->toast_until : 0;
}

vw_area vw_ui_area(const vw_ui *u, const vw_win *w, int compare)
{
    (void)u; /* the HUD is drawn over the image */
    return (vw_area){w->ww, w->wh, compare};
}

static const SDL_Color c_text = {235, 235, 235, 255}, c_dim = {160, 160, 170, 255},
                       c_sel = {255, 214, 90, 255}, c_good = {120, 220, 120, 255},
                       c_bad = {255, 120, 110, 255}, c_warn = {255, 200, 80, 255};

/* Printable ASCII only: stb_easy_font indexes its table by the character. */
static void sanitize(const char *s, char *out, size_t len)
{
    size_t i = 0;
    for (; s[i] && i + 1 < len; i++)
        out[i] = s[i] >= 32 && s[i] < 127 ? s[i] : '?';
    out[i] = '\0';
}

int vw_text_width(const char *s, int scale)
{
    char buf[MAX_TEXT];
    sanitize(s, buf, sizeof buf);
    return stb_easy_font_width(buf) * scale;
}

void vw_text(SDL_Renderer *ren, int x, int y, int scale, SDL_Color c, const char *s)
{
    static struct {
        float x, y, z;
        unsigned char rgba[4];
    } vtx[MAX_QUADS * 4];
    static SDL_FRect rects[MAX_QUADS];
    char buf[MAX_TEXT];
    sanitize(s, buf, sizeof buf);
    int quads = stb_easy_font_print(0, 0, buf, NULL, vtx, (int)sizeof vtx);
    for (int q = 0; q < quads; q++) { /* vertices 0 and 2 are opposite corners */
        const float *a = &vtx[4 * q].x, *b = &vtx[4 * q + 2].x;
        rects[q] = (SDL_FRect){x + a[0] * scale, y + a[1] * scale, (b[0] - a[0]) * scale,
                               (b[1] - a[1]) * scale};
    }
    if (vw_sdl(SDL_SetRenderDrawColor(ren, c.r, c.g, c.b, c.a), "SDL_SetRenderDrawColor") == 0)
        vw_sdl(SDL_RenderFillRectsF(ren, rects, quads), "SDL_RenderFillRectsF");
}

static void panel(const vw_scene *v, int x, int y, int w, int h, Uint8 alpha)
{
    SDL_Rect r = {x, y, w, h};
    if (vw_sdl(SDL_SetRenderDrawBlendMode(v->win->ren, SDL_BLENDMODE_BLEND), "SDL_SetRenderDrawBlendMode") ||
        vw_sdl(SDL_SetRenderDrawColor(v->win->ren, 0, 0, 0, alpha), "SDL_SetRenderDrawColor"))
        return;
    vw_sdl(SDL_RenderFillRect(v->win->ren, &r), "SDL_RenderFillRect");
    vw_sdl(SDL_SetRenderDrawBlendMode(v->win->ren, SDL_BLENDMODE_NONE), "SDL_SetRenderDrawBlendMode");
}

static void fill(const vw_scene *v, int x, int y, int w, int h, SDL_Color c)
{
    SDL_Rect r = {x, y, w, h};
    if (vw_sdl(SDL_SetRenderDrawColor(v->win->ren, c.r, c.g, c.b, c.a), "SDL_SetRenderDrawColor") == 0)
        vw_sdl(SDL_RenderFillRect(v->win->ren, &r), "SDL_RenderFillRect");
}

/* Text scale: 2 on a window of 1100x640 and up, else 1. */
static int hud_scale(const vw_scene *v) { return v->win->ww >= 1100 && v->win->wh >= 640 ? 2 : 1; }

/* ---------------------------------------------------------------- the HUD's rows */

#define HUD_COLS 6
#define HUD_ROWS (TS_MAX_CHAIN + 16)

typedef struct hud_row {
    char cell[HUD_COLS][160];
    SDL_Color color[HUD_COLS];
    int table; /* cells in columns shared with the other table rows; else cell 0 is the line */
    int bar;   /* op whose speedup bar is drawn in column 4; -1: none */
} hud_row;

typedef struct hud {
    hud_row row[HUD_ROWS];
    int n;
} hud;

static hud_row *add_row(hud *h, SDL_Color c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static hud_row *add_row(hud *h, SDL_Color c, const char *fmt, ...)
{
    if (h->n == HUD_ROWS)
        return &h->row[HUD_ROWS - 1];
    hud_row *r = &h->row[h->n++];
    memset(r, 0, sizeof *r);
    r->bar = -1;
    for (int i = 0; i < HUD_COLS; i++)
        r->color[i] = c;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->cell[0], sizeof r->cell[0], fmt, ap);
    va_end(ap);
    return r;
}

static void fmt_ms(char *buf, size_t len, double ms)
{
    snprintf(buf, len, ms < 10 ? "%.3f" : ms < 100 ? "%.2f" : "%.0f", ms);
}

static void backend_row(const vw_scene *v, hud *h)
{
    const ts_device *d = ts_pipeline_device(v->run->pipe);
    if (d)
        add_row(h, c_text, "tessera %s   GPU %s (sm_%d, %d SMs)   renderer %s", TS_VERSION,
                d->name, d->cc, d->sms, v->win->renderer);
    else
        add_row(h, c_text, "tessera %s   CPU backend (%s)   renderer %s", TS_VERSION,
                v->o->backend == TS_BACKEND_CPU ? "--backend cpu"
                : ts_gpu_compiled()             ? "no usable GPU"
                                                : "built without CUDA",
                v->win->renderer);
}

static void file_row(const vw_scene *v, hud *h)
{
    const ts_image *im = vw_run_displayed(v->run);
    static const char *const ch[] = {"", "gray", "gray+alpha", "RGB", "RGBA"};
    if (!im)
        return;
    add_row(h, c_dim, "%s   %dx%d %s%d   [%d/%d]   zoom %.0f%%", path_base(v->files->path[v->files->cur]),
            im->width, im->height, ch[im->channels], im->bytes * 8, v->files->cur + 1, v->files->n,
            v->view->zoom * 100);
}

/* Column 4 and 5 of an op row: the speedup over naive (bar drawn later). */
static void speedup_cells(const vw_scene *v, hud_row *r, int i)
{
    const vw_bench *b = v->bench;
    const char *why = !ts_pipeline_on_gpu(v->run->pipe)     ? "(GPU backend only)"
                      : !b->valid || i >= v->run->chain.n   ? (b->running ? "measuring..." : "-")
                      : b->res_state[i] < 0            ? "naive cannot run this"
                                                       : NULL;
    if (why) { /* no bar: the text takes its place */
        snprintf(r->cell[4], sizeof r->cell[4], "%s", why);
        r->color[4] = c_dim;
        return;
    }
    char naive[16];
    fmt_ms(naive, sizeof naive, b->res_naive[i]);
    r->bar = i;
    snprintf(r->cell[5], sizeof r->cell[5], "x%.1f  (naive %s ms)",
             b->res_cur[i] > 0 ? b->res_naive[i] / b->res_cur[i] : 0.0, naive);
    r->color[5] = b->res_naive[i] > b->res_cur[i] * 1.05 ? c_good : c_text;
}

static void chain_rows(const vw_scene *v, hud *h)
{
    if (v->run->chain.n == 0) {
        add_row(h, c_dim, "chain: empty   (b s d e > < t | _ add ops)");
        return;
    }
    hud_row *r = add_row(h, c_dim, "op");
    r->table = 1;
    snprintf(r->cell[1], sizeof r->cell[1], "variant");
    snprintf(r->cell[2], sizeof r->cell[2], "avg ms");
    snprintf(r->cell[3], sizeof r->cell[3], "last ms");
    snprintf(r->cell[4], sizeof r->cell[4], "time vs naive (bar), speedup");
    for (int i = 0; i < v->run->chain.n; i++) {
        const ts_op *op = &v->run->chain.ops[i];
        const ts_variant *ran = v->run->have_result ? v->run->rep.op[i].variant : NULL;
        r = add_row(h, i == v->run->sel ? c_sel : c_text, "%s %s", i == v->run->sel ? ">" : " ", op->text);
        r->table = 1;
        const char *how = op->variant                                            ? ""
                          : ts_pipeline_selected(v->run->pipe, ts_op_family(op->kind)) ? " (--variant)"
                                                                                  : " (auto)";
        snprintf(r->cell[1], sizeof r->cell[1], "%s%s", ran ? ran->name : "-", how);
        if (v->run->op_ms[i].n) {
            fmt_ms(r->cell[2], sizeof r->cell[2], v->run->op_ms[i].avg);
            fmt_ms(r->cell[3], sizeof r->cell[3], v->run->op_ms[i].last);
        }
        speedup_cells(v, r, i);
    }
}

static void transfer_row(const vw_scene *v, hud *h)
{
    char up[16], down[16], disp[16];
    fmt_ms(disp, sizeof disp, v->stats->display_med);
    if (!ts_pipeline_on_gpu(v->run->pipe)) {
        add_row(h, c_dim, "kernel times: host clock (CPU backend: no upload or download)   "
                "display %s ms (host conversion)", disp);
        return;
    }
    if (!v->run->have_result)
        return;
    fmt_ms(up, sizeof up, v->run->first_upload_ms);
    if (v->tex->on_gpu) {
        add_row(h, c_dim, "upload %s ms (once, kept on the GPU)   display %s ms (%dx%d texels: "
                "GPU resample, download)", up, disp, v->tex->disp.map.tw, v->tex->disp.map.th);
        return;
    }
    fmt_ms(down, sizeof down, v->run->down_ms.avg);
    add_row(h, c_dim, "upload %s ms (once, kept on the GPU)   download %s ms   display %s ms "
            "(host conversion)", up, down, disp);
}

/* The frame statistics (viewer_stats.c), as the exit summary prints them. */
static void frame_rows(const vw_scene *v, hud *h)
{
    const vw_frame_stats *s = v->stats;
    char figures[160], basis[200], verdict[120];
    vw_frames_text(v->frames, v->stats, v->win->refresh_hz, v->win->paced, figures, sizeof figures, basis, sizeof basis, verdict, sizeof verdict);
    add_row(h, c_text, "%s", figures);
    add_row(h, c_dim, "%s", basis);
    hud_row *r = add_row(h, c_text, "%s", verdict);
    r->color[0] = !s->measured ? c_text : s->holding ? c_good : c_bad;
}

static void status_rows(const vw_scene *v, hud *h)
{
    const vw_bench *b = v->bench;
    char bench[160] = "";
    if (b->running && v->run->chain.n)
        snprintf(bench, sizeof bench, "   measuring speedups: %s...", v->run->chain.ops[b->op].text);
    else if (b->valid)
        snprintf(bench, sizeof bench, "   speedups measured %.0f s ago (B again)",
                 (now_ms() - b->at) / 1000);
    else if (b->note[0])
        snprintf(bench, sizeof bench, "   %.150s", b->note);
    add_row(h, c_dim, "%s%s", v->run->live ? "live: the chain re-runs every frame (L: off)"
                                      : "live off: runs on changes (L: on)", bench);
    if (v->run->have_result && v->run->rep.notice[0])
        add_row(h, c_warn, "%s", v->run->rep.notice);
    if (v->run->run_err[0])
        add_row(h, c_bad, "%s", v->run->run_err);
    add_row(h, c_dim, "? keys   Tab op   [ ] variant   c before|after   i HUD   Ctrl+S save");
}

/* ---------------------------------------------------------------- drawing the HUD */

static void histogram(const vw_scene *v, int x, int y, int w, int hgt)
{
    uint32_t max = 1;
    int per = 256 / w > 0 ? 256 / w : 1; /* bins per column */
    for (int i = 1; i < 255; i++)     /* the clipped ends would flatten the rest */
        max = v->tex->hist[i] > max ? v->tex->hist[i] : max;
    fill(v, x, y, w, hgt, (SDL_Color){20, 20, 24, 255});
    if (vw_sdl(SDL_SetRenderDrawColor(v->win->ren, 200, 200, 210, 255), "SDL_SetRenderDrawColor"))
        return;
    for (int c = 0; c < w && c * per < 256; c++) {
        uint32_t s = 0;
        for (int k = 0; k < per; k++)
            s += v->tex->hist[c * per + k];
        int bh = (int)((double)s / per / max * hgt + 0.5);
        bh = bh > hgt ? hgt : bh;
        if (bh > 0)
            vw_sdl(SDL_RenderDrawLine(v->win->ren, x + c, y + hgt - 1, x + c, y + hgt - bh),
                   "SDL_RenderDrawLine");
    }
}

/* Naive's time as a grey bar of full width, the chain variant's time as a green bar on it. */
static void speed_bar(const vw_scene *v, int i, int x, int y, int w, int hgt)
{
    const vw_bench *b = v->bench;
    double f = b->res_naive[i] > 0 ? b->res_cur[i] / b->res_naive[i] : 1;
    int cw = (int)(w * (f > 1 ? 1 : f) + 0.5);
    fill(v, x, y, w, hgt, (SDL_Color){90, 90, 100, 255});
    fill(v, x, y, cw < 1 ? 1 : cw, hgt, c_good);
}

static void hud_columns(const vw_scene *v, const hud *h, int s, int *colx, int *width)
{
    int pad = 6 * s, bar = 90 * s, w[HUD_COLS] = {0};
    for (int i = 0; i < h->n; i++)
        for (int c = 0; c < HUD_COLS && h->row[i].table; c++) {
            int cw = vw_text_width(h->row[i].cell[c], s);
            w[c] = cw > w[c] ? cw : w[c];
        }
    w[4] = w[4] > bar ? w[4] : bar;
    /* the header's "speedup over naive" spans the bar and its label */
    colx[0] = 0;
    for (int c = 1; c < HUD_COLS; c++)
        colx[c] = colx[c - 1] + (c == 5 ? bar : w[c - 1]) + 3 * pad;
    *width = colx[5] + w[5] > colx[4] + w[4] ? colx[5] + w[5] : colx[4] + w[4];
    for (int i = 0; i < h->n; i++)
        if (!h->row[i].table) {
            int lw = vw_text_width(h->row[i].cell[0], s);
            *width = lw > *width ? lw : *width;
        }
}

static void draw_hud(const vw_scene *v)
{
    static hud h;
    int s = hud_scale(v), line = 11 * s, pad = 8 * s, colx[HUD_COLS], width;
    h.n = 0;
    backend_row(v, &h);
    file_row(v, &h);
    chain_rows(v, &h);
    transfer_row(v, &h);
    frame_rows(v, &h);
    status_rows(v, &h);
    hud_columns(v, &h, s, colx, &width);
    int hist_h = 32 * s, hist_w = 128 * s;
    panel(v, 0, 0, width + 2 * pad, h.n * line + hist_h + 3 * pad, 170);
    for (int i = 0; i < h.n; i++) {
        const hud_row *r = &h.row[i];
        int y = pad + i * line;
        for (int c = 0; c < (r->table ? HUD_COLS : 1); c++)
            if (r->cell[c][0])
                vw_text(v->win->ren, pad + colx[c], y, s, r->color[c], r->cell[c]);
        if (r->bar >= 0)
            speed_bar(v, r->bar, pad + colx[4], y + s, 90 * s, 6 * s);
    }
    int hy = pad * 2 + h.n * line;
    histogram(v, pad, hy, hist_w, hist_h);
    vw_text(v->win->ren, pad * 2 + hist_w, hy + hist_h - line, s, c_dim, "luma histogram of the shown image");
}

/* ---------------------------------------------------------------- help and messages */

static void draw_help(const vw_scene *v)
{
    char keys[64][64];
    const char *what[64];
    int n = 0, kw = 0, ww = 0, s = hud_scale(v);
    while (n < 64 && vw_help_line(n, keys[n], sizeof keys[n], &what[n]))
        n++;
    for (int i = 0; i < n; i++) {
        int a = vw_text_width(keys[i], s), b = vw_text_width(what[i], s);
        kw = a > kw ? a : kw;
        ww = b > ww ? b : ww;
    }
    int line = 11 * s, pad = 10 * s, colw = kw + 3 * pad + ww;
    int cols = ((n + 2) * line + 2 * pad > v->win->wh * 3 / 4 && 2 * colw + 3 * pad < v->win->ww) ? 2 : 1;
    int rows = (n + cols - 1) / cols;
    int pw = cols * colw + (cols + 1) * pad, ph = (rows + 2) * line + 2 * pad;
    int x0 = (v->win->ww - pw) / 2, y0 = (v->win->wh - ph) / 2;
    panel(v, x0, y0, pw, ph, 225);
    vw_text(v->win->ren, x0 + pad, y0 + pad, s, c_sel, "tessera keys (--keys replays them: e,b,Tab,],Ctrl+s)");
    for (int i = 0; i < n; i++) {
        int x = x0 + pad + (i / rows) * (colw + pad), y = y0 + pad + (i % rows + 2) * line;
        vw_text(v->win->ren, x, y, s, c_text, keys[i]);
        vw_text(v->win->ren, x + kw + 3 * pad, y, s, c_dim, what[i]);
    }
}

/* A message in the middle of the window (a file that cannot be shown), wrapped to fit. */
static void draw_message(const vw_scene *v, const char *msg, SDL_Color c)
{
    char lines[8][MAX_TEXT];
    int n = 0, s = hud_scale(v), line = 12 * s, pad = 12 * s, maxw = v->win->ww - 8 * pad, w = 0;
    const char *p = msg;
    while (*p && n < 8) {
        size_t len = strlen(p), cut = len;
        char buf[MAX_TEXT];
        snprintf(buf, sizeof buf, "%s", p);
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
    int x0 = (v->win->ww - w) / 2 - pad, y0 = (v->win->wh - n * line) / 2 - pad;
    panel(v, x0, y0, w + 2 * pad, n * line + 2 * pad, 200);
    for (int i = 0; i < n; i++)
        vw_text(v->win->ren, x0 + pad, y0 + pad + i * line, s, c, lines[i]);
}

/* ---------------------------------------------------------------- the frame's UI */

static void draw_toast(const vw_scene *v)
{
    int s = hud_scale(v), line = 11 * s, pad = 8 * s;
    if (!v->ui->toast[0] || now_ms() >= v->ui->toast_until)
        return;
    int tw = vw_text_width(v->ui->toast, s);
    panel(v, (v->win->ww - tw) / 2 - pad, v->win->wh - line - 3 * pad, tw + 2 * pad, line + 2 * pad,
          200);
    vw_text(v->win->ren, (v->win->ww - tw) / 2, v->win->wh - line - 2 * pad, s, c_text, v->ui->toast);
}

static void draw_labels(const vw_scene *v, vw_area a)
{
    static const SDL_Color white = {255, 255, 255, 255};
    int split = a.w / 2, s = a.h >= 700 ? 2 : 1;
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
        draw_message(v, "no images: drop files on this window (or run tessera IMAGE|DIR...)", red);
    else if (!vw_run_displayed(v->run))
        draw_message(v, v->run->load_err, red);
    if (v->ui->hud) {
        draw_hud(v);
        draw_toast(v); /* part of the HUD: `i` hides both */
    }
    if (v->ui->help)
        draw_help(v);
}

#else
typedef int vw_hud_unused; /* ISO C wants a declaration in every file */
#endif /* TS_HAVE_SDL */
