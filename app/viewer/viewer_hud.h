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

/* The HUD: off, one status line at the bottom, or a panel on the right (i cycles full, line,
 * off; --hud). Either way the image is fitted into the rest of the window (vw_ui_area). */
enum { VW_HUD_OFF, VW_HUD_LINE, VW_HUD_FULL };

typedef struct vw_ui {
    int hud, help;
    char toast[256];
    double toast_until;
} vw_ui;

void vw_toast(vw_ui *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* When the UI changes by itself next (a toast ends), in now_ms() time; 0: never. */
double vw_ui_due(const vw_ui *u);

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
