/* viewer_hud.h - what the viewer draws beside and over the image: the HUD (a panel or a status
 * line), the help overlay, messages, the before|after labels and toasts (viewer_hud.c). */
#ifndef TS_VIEWER_HUD_H
#define TS_VIEWER_HUD_H

#ifdef TS_HAVE_SDL
#include "options.h"
#include "viewer_bench.h"
#include "viewer_demo.h"
#include "viewer_files.h"
#include "viewer_run.h"
#include "viewer_stats.h"
#include "viewer_tex.h"
#include "viewer_view.h"
#include "viewer_win.h"

/* The HUD: off, one status line at the bottom, or a panel on the right (i cycles line, full,
 * off; --hud). Either way the image is fitted into the rest of the window (vw_ui_area). Picture
 * first: by default (hud_auto) the line, and the panel while a chain is on or the demo runs;
 * i makes the choice the user's. */
enum { VW_HUD_OFF, VW_HUD_LINE, VW_HUD_FULL };

typedef struct vw_ui {
    int hud, help;
    int hud_auto;   /* the HUD follows the chain (vw_ui_follow) until i is pressed */
    char toast[256];
    double toast_until;
} vw_ui;

void vw_toast(vw_ui *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* When the UI changes by itself next (a toast ends), in now_ms() time; 0: never. */
double vw_ui_due(const vw_ui *u);

/* hud_auto: the panel while a chain is on or the demo runs, else the status line; 1 when the
 * HUD changed (the image area with it). */
int vw_ui_follow(vw_ui *u, int chain_on, int demo);
/* The text scale: grows with the window (1 below 800x600, 2 there, 3 on 1200x900 and up, at most
 * 4), so that the HUD reads at arm's length on any screen. */
int vw_ui_scale(int ww, int wh);

/* The part of the window left to the image (the rest is the UI's). */
vw_area vw_ui_area(const vw_ui *u, const vw_win *w, int compare);

/* What the UI shows: every part, read only. */
typedef struct vw_scene {
    const app_options *o;
    const vw_ui *ui;
    const vw_win *win;
    const vw_files *files;
    const vw_run *run;
    const vw_bench *bench;
    const vw_demo *demo;
    const vw_tex *tex;
    const vw_view *view;
    const vw_frames *frames;
    const vw_frame_stats *stats;
    int compare;
} vw_scene;

/* The HUD, labels, messages, toast and help of a frame, over or beside the drawn image. */
void vw_ui_draw(const vw_scene *v);

#endif /* TS_HAVE_SDL */
#endif
