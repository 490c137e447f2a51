/* viewer.h - the parts of the SDL2 viewer (app/viewer*.c).
 *
 *   viewer_keys.c  key names (--keys), the one binding table (keys -> actions, also the ? help),
 *                  what op keys do to the chain, variant cycling      (pure: tests/test_viewer.c)
 *   viewer_view.c  zoom and pan: fit, zoom ladder, zoom around a point, clamping, and what part
 *                  of the image the display texture holds at what size      (pure: tested)
 *   viewer_display.c the display conversion of host images, same texels as the GPU's (pure)
 *   viewer_stats.c the frame statistics of the HUD and the exit summary      (pure: tested)
 *   viewer.c       ts_viewer: SDL set-up, the frame loop, pacing and timing
 *   viewer_events.c keys, mouse, window events and dropped files -> actions
 *   viewer_image.c file list, loading, the pipeline run, the display texture, save, screenshot
 *   viewer_hud.c   text (stb_easy_font), the HUD, speedup bars, histogram, help, messages
 *   viewer_bench.c the speedup-over-naive measurement, one run per frame
 *
 * The pure parts build without SDL2 so the unit tests run everywhere.
 */
#ifndef TS_VIEWER_H
#define TS_VIEWER_H

#include "cli.h"

#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- keys (viewer_keys.c) */

/* A key: a Unicode character as typed ('>' not Shift+'.'), or one of VK_*; ctrl for Ctrl+key. */
enum {
    VK_SPECIAL = 0x110000, /* past Unicode */
    VK_LEFT = VK_SPECIAL, VK_RIGHT, VK_UP, VK_DOWN, VK_HOME, VK_END, VK_PAGEUP, VK_PAGEDOWN,
    VK_TAB, VK_BACKTAB, VK_BACKSPACE, VK_DELETE, VK_ESCAPE, VK_RETURN, VK_F1,
    VK_WHEELUP, VK_WHEELDOWN, /* the wheel, at the window centre when replayed */
    VK_LAST
};

typedef struct vw_key {
    int code;
    int ctrl;
} vw_key;

typedef enum vw_action {
    VA_NONE,
    VA_QUIT, VA_HELP, VA_HUD, VA_LIVE, VA_BENCH, VA_COMPARE, VA_FULLSCREEN, VA_SAVE,
    VA_NEXT, VA_PREV, VA_FIRST, VA_LAST,
    VA_ZOOM_IN, VA_ZOOM_OUT, VA_FIT, VA_ONE,
    VA_PAN_LEFT, VA_PAN_RIGHT, VA_PAN_UP, VA_PAN_DOWN,
    VA_OP_BLUR, VA_OP_SHARPEN, VA_OP_EDGE, VA_OP_EQUALIZE, VA_OP_ROT_CW, VA_OP_ROT_CCW,
    VA_OP_TRANSPOSE, VA_OP_FLOP, VA_OP_FLIP,
    VA_SELECT_NEXT, VA_SELECT_PREV, VA_VARIANT_NEXT, VA_VARIANT_PREV, VA_REMOVE,
    VA_COUNT
} vw_action;

/* One key name: a printable character ("e", "]", ">"), or (case-insensitive) Tab, Shift+Tab,
 * Left, Right, Up, Down, Home, End, PageUp, PageDown, BackSpace, Delete, Escape (Esc), Return
 * (Enter), F1, Space, plus, minus, comma, WheelUp, WheelDown; "Ctrl+" in front for Ctrl.
 * Returns 0 on success. */
int vw_key_parse(const char *name, size_t len, vw_key *k);
/* A comma-separated list ("e,b,],Ctrl+s"; blanks around names ignored) into a new array
 * (free it). Returns the count, or -1 with the reason in err. */
int vw_keys_parse(const char *list, vw_key **keys, char *err, size_t errlen);
/* The key of typed text (SDL_TEXTINPUT): its first character. Returns 0 on success. */
int vw_key_from_text(const char *utf8, vw_key *k);
/* The canonical name of a key ("Ctrl+s", "Tab", "plus"). */
void vw_key_name(vw_key k, char *buf, size_t len);
vw_action vw_key_action(vw_key k);
/* Line i of the help: the keys ("n Space") and what they do; 0 past the last line. */
int vw_help_line(int i, char *keys, size_t klen, const char **what);
/* The op an op key toggles ("gauss:5"); NULL for other actions. */
const char *vw_action_op(vw_action a);
/* Toggles `op_text` in the chain: removes the last op of the same kind (same name, and for
 * rotate the same angle) or appends it. *sel follows: the appended op, or stays in range.
 * Returns 1 when added, 0 when removed, -1 on error (ts_error_detail). */
int vw_chain_toggle(ts_chain *c, const char *op_text, int *sel);
/* The next (dir 1) or previous (-1) choice for an op's variant: auto (NULL), then each variant of
 * its family that can run on this backend (dev NULL: the CPU), in table order, wrapping. */
const ts_variant *vw_variant_cycle(const ts_op *op, const ts_device *dev, int dir);

/* ---------------------------------------------------------------- view (viewer_view.c) */

#define VW_ZOOM_MIN (1.0 / 64)
#define VW_ZOOM_MAX 64.0

/* Screen position of the image: screen = o + zoom * image. o is kept on whole pixels, so 1:1
 * shows exact pixels. */
typedef struct vw_view {
    double zoom;
    double ox, oy;
    int fit; /* follows the window (refit on resize) until the user zooms */
} vw_view;

/* Whole image in the window, shrinking only (a small image stays 1:1), centred. */
void vw_view_fit(vw_view *v, int iw, int ih, int ww, int wh);
/* The next zoom of the ladder 1/64 .. 3/4, 1, 1.5, 2, 3, 4, 6, ... 64 up (dir > 0) or down. */
double vw_zoom_step(double zoom, int dir);
/* Sets the zoom keeping the image point under (ax, ay) (screen) in place, then clamps. */
void vw_view_zoom_at(vw_view *v, double zoom, double ax, double ay, int iw, int ih, int ww,
                     int wh);
/* Moves the image by (dx, dy) screen pixels, then clamps. */
void vw_view_pan(vw_view *v, double dx, double dy, int iw, int ih, int ww, int wh);
/* Centres an axis where the image is smaller than the window, else leaves no gap at its edges. */
void vw_view_clamp(vw_view *v, int iw, int ih, int ww, int wh);
/* The window changed from ow x oh to ww x wh: refit in fit mode, else keep the image point at
 * the window centre where it was. */
void vw_view_resize(vw_view *v, int iw, int ih, int ow, int oh, int ww, int wh);
/* What the display texture holds for a view: the visible part of an iw x ih image within the
 * window part [cx0, cx1) x [cy0, cy1), as a ts_display_map (tessera.h), and where its texels go
 * on screen: from (x, y), `scale` screen pixels a texel. Reduced (zoom < 1) a texel is a screen
 * pixel (scale 1: the renderer copies without scaling, the conversion averages); at 1:1 and
 * above it is an image pixel (scale = zoom, nearest). Returns 0 when nothing is visible. */
typedef struct vw_display {
    ts_display_map map;
    double x, y, scale;
} vw_display;
int vw_display_for_view(const vw_view *v, int iw, int ih, int cx0, int cy0, int cx1, int cy1,
                        vw_display *d);

/* ---------------------------------------------------------------- display (viewer_display.c) */

/* 0 when `m` fits an iw x ih image (and its cells are at most 65536 pixels), else -1. */
int vw_display_check(const ts_display_map *m, int iw, int ih);
/* ts_display_convert's conversion of a host image into dst (tw x th texels, rows `pitch` bytes
 * apart), on up to `threads` threads for large views. Returns -1 when the map does not fit. */
int vw_display_convert(const ts_image *im, const ts_display_map *m, void *dst, size_t pitch,
                       int threads);
/* Luma histogram (256 bins) of about 256K texels spread over w x h XRGB texels. */
void vw_display_hist(const void *px, size_t pitch, int w, int h, uint32_t *hist);

/* ---------------------------------------------------------------- frames (viewer_stats.c) */

#define VW_FRAMES 600    /* the statistics cover the last 600 steady frames: 10 s at 60 Hz */
#define VW_FRAMES_MIN 30 /* fewer steady frames than this: "measuring" */

/* Frames kept out of the statistics, counted by kind. */
enum { VW_SKIP_START, VW_SKIP_BENCH, VW_SKIP_SHOT, VW_SKIP_KINDS };

typedef struct vw_frame {
    float interval; /* ms from the previous present to this one */
    float work;     /* ms of the frame's own work: all but waiting for the refresh */
    float run, display, draw; /* its parts: the chain, the display texture, drawing + present */
} vw_frame;

typedef struct vw_frames {
    vw_frame ring[VW_FRAMES];
    int n, next;
    long steady;                   /* steady frames added since the reset */
    long skipped[VW_SKIP_KINDS];   /* frames left out since the reset */
} vw_frames;

typedef struct vw_frame_stats {
    int n;            /* steady frames the figures are over */
    long skipped;     /* frames left out since the reset */
    double period;    /* the refresh period, ms */
    double fps;       /* n over the sum of their intervals */
    double interval_med, interval_p95, work_med, work_p95;
    double run_med, display_med, draw_med;
    int measured;     /* at least VW_FRAMES_MIN frames */
    int holding;      /* measured, p95 interval <= 1.05 period and p95 work <= period */
} vw_frame_stats;

/* The chain, image, window or mode changed: the figures start again. */
void vw_frames_reset(vw_frames *f);
void vw_frames_add(vw_frames *f, const vw_frame *fr);
void vw_frames_skip(vw_frames *f, int why);
void vw_frames_stats(const vw_frames *f, double period_ms, vw_frame_stats *s);
/* "3 start-up, 18 measuring speedups" into buf; 0 when no frame was left out. */
int vw_frames_skipped_text(const vw_frames *f, char *buf, size_t len);
/* Nearest-rank percentile (p in [0, 1]) of n values, which it sorts; 0 when n is 0. */
double vw_percentile(float *v, int n, double p);

#ifdef TS_HAVE_SDL
#include <SDL.h>

/* ---------------------------------------------------------------- the viewer (SDL2) */

/* Moving average (exponential) and last value of a time. */
typedef struct vw_stat {
    double avg, last;
    int n;
} vw_stat;
void vw_stat_add(vw_stat *s, double v);

/* The speedup measurement (viewer_bench.c): per op, naive and the chain's variant, best of
 * VW_BENCH_REPS runs each, on the op's real input (the chain's intermediate image), one run per
 * frame so the viewer stays responsive. */
#define VW_BENCH_REPS 3
typedef struct vw_bench {
    int running, op, step;
    ts_image in;                         /* input of op `op` (host) */
    const ts_variant *cur[TS_MAX_CHAIN]; /* the variant the chain used */
    double naive_ms[TS_MAX_CHAIN], cur_ms[TS_MAX_CHAIN];
    int state[TS_MAX_CHAIN];             /* 0 pending, 1 measured, -1 naive cannot take it */
    /* the last finished measurement, kept on screen while the next one runs */
    double res_naive[TS_MAX_CHAIN], res_cur[TS_MAX_CHAIN];
    int res_state[TS_MAX_CHAIN];
    int valid;                           /* res_* belong to the current chain and image */
    int failed;                          /* no retry until the chain or image changes */
    double at;                           /* when it last finished (ms) */
    char note[200];
} vw_bench;

typedef struct viewer {
    const ts_options *o;
    SDL_Window *win;
    SDL_Renderer *ren;
    char renderer[32];
    int software;          /* the software renderer: nearest scaling (linear costs a frame) */
    int paced;             /* no vsync to wait for: the loop paces itself to refresh_hz */
    Uint32 tex_format;
    int max_tex;           /* largest texture side, 0: unlimited */
    int refresh_hz;
    int ww, wh;            /* renderer output size */
    int running, status;

    char **files;
    int n_files, cap_files, cur;

    ts_image src;          /* the loaded image (host) */
    int loaded;            /* index of src in files, -1: none */
    unsigned gen;          /* bumped whenever src changes */
    unsigned gen_on_gpu;   /* src generation kept on the GPU, 0: none */
    char load_err[512];    /* why files[cur] could not be shown ("" when fine) */

    ts_pipeline *pipe;
    ts_chain chain;
    int sel;               /* selected op (Tab), -1: none */
    ts_image result;       /* the processed image, valid when have_result; its pixels are only on
                              the GPU (ts_pipeline_result, data NULL) when result_on_gpu */
    int have_result, dirty, result_on_gpu;
    int gpu_display_off;   /* the GPU display conversion failed once: the host converts */
    ts_run_report rep;
    char run_err[512];
    vw_stat op_ms[TS_MAX_CHAIN], up_ms, down_ms;
    double first_upload_ms; /* the upload that made the input resident */
    vw_bench bench;

    /* display textures of the result (or src) and of src (before|after): the visible part at its
     * on-screen size (viewer_view.c), in the top-left of a texture that only grows */
    SDL_Texture *tex, *tex_before;
    int tex_w, tex_h, before_w, before_h;  /* texture sizes */
    vw_display disp, before_disp;          /* what they hold and where it goes */
    int tex_shown, before_shown;           /* 0: nothing of the image is visible */
    unsigned tex_gen_before;               /* src generation in tex_before */
    int tex_stale;                         /* result changed since the texture was filled */
    int threads;                           /* for host conversions */
    void *d_disp;                          /* GPU: the texels before their download */
    size_t d_disp_cap;
    int disp_on_gpu;                       /* the last fill was the GPU conversion */
    uint32_t hist[256];                    /* luma of the shown texels (sampled) */

    vw_view view;
    int view_iw, view_ih;          /* image size the view was made for */
    int hud, help, live, compare, fullscreen;
    int dragging;
    char title[512];

    double frame_start, last_present;
    long frame_no;
    int bench_frame;               /* this frame ran a bench step */
    int start_frame;               /* this frame loaded a file or uploaded the input */
    vw_frames frames;              /* the steady frames since the last change */
    vw_frame_stats stats;          /* their figures, for the HUD and the summary */

    char toast[256];
    double toast_until;
} viewer;

/* viewer.c */
/* Checks an SDL call's status: a failure prints "what: SDL_GetError()" (the first few only, so a
 * draw call failing every frame cannot flood stderr). Returns rc. */
int vw_sdl(int rc, const char *what);
void vw_toast(viewer *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The displayed image changed size (new file, a rotation toggled): refit or re-clamp. */
void vw_sync_view(viewer *v);
/* v->stats in words, for the HUD and the summary alike: the figures ("60.0 FPS   interval
 * median 16.67 / p95 16.80 ms   work ..."), what they are over and what was left out, and
 * whether the display rate holds. */
void vw_frames_text(const viewer *v, char *figures, size_t flen, char *basis, size_t blen,
                    char *verdict, size_t vlen);

/* viewer_events.c */
void vw_poll_events(viewer *v);
/* One key's action; (ax, ay) is the point a zoom keeps in place (the cursor). */
void vw_do_key(viewer *v, vw_key k, double ax, double ay);

/* viewer_image.c */
void vw_files_add(viewer *v, const char *path);  /* a file, or a directory's images */
void vw_open(viewer *v, int index);              /* load files[index] (error kept on failure) */
void vw_process(viewer *v);                      /* runs the chain when dirty or live */
const ts_image *vw_displayed(const viewer *v);   /* result, or src; NULL: nothing loaded */
/* Fills the display textures when the result, the view or the window changed; -1: SDL error.
 * Before any other pipeline run of the frame (the speedup bars): on the GPU it reads the result
 * the chain left on the device. */
int vw_update_textures(viewer *v);
void vw_draw_image(viewer *v);
void vw_save(viewer *v);                         /* Ctrl+S */
int vw_screenshot(viewer *v, const char *path);  /* 0 on success (printed otherwise) */
void vw_image_free(viewer *v);

/* viewer_hud.c */
int vw_text_width(const char *s, int scale);
void vw_text(viewer *v, int x, int y, int scale, SDL_Color c, const char *s);
void vw_draw_hud(viewer *v);
void vw_draw_help(viewer *v);
void vw_draw_message(viewer *v, const char *msg, SDL_Color c);

/* viewer_bench.c */
void vw_bench_reset(viewer *v);
void vw_bench_start(viewer *v);   /* now, on the current result (bench_tick in viewer.c) */
void vw_bench_request(viewer *v); /* the B key: measure again as soon as the result is fresh */
void vw_bench_step(viewer *v); /* one run; call once per frame */
void vw_bench_free(viewer *v);

#endif /* TS_HAVE_SDL */
#endif
