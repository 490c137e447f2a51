/* viewer_app.h - the viewer's state: one struct per part, each owned by its file (viewer.h has
 * the map). Only the frame loop (viewer.c) and the commands that keys and events run
 * (viewer_events.c) see the whole; the UI gets every part read only (vw_scene), every other part
 * only the parts it needs. */
#ifndef TS_VIEWER_APP_H
#define TS_VIEWER_APP_H

#ifdef TS_HAVE_SDL
#include "options.h"
#include "viewer_bench.h"
#include "viewer_demo.h"
#include "viewer_files.h"
#include "viewer_grid.h"
#include "viewer_hud.h"
#include "viewer_run.h"
#include "viewer_stats.h"
#include "viewer_tex.h"
#include "viewer_view.h"
#include "viewer_win.h"

typedef struct viewer {
    const app_options *o;
    vw_win win;       /* viewer_win.c */
    vw_files files;   /* viewer_files.c */
    vw_run run;       /* viewer_run.c */
    vw_bench bench;   /* viewer_bench.c */
    vw_demo demo;     /* viewer_demo.c */
    vw_tex tex;       /* viewer_tex.c */
    vw_view view;     /* viewer_view.c */
    vw_ui ui;         /* viewer_hud.c */
    vw_grid grid;     /* viewer_grid.c: thumbnail mode */
    int compare;      /* before | after */
    int dragging;     /* the left button is down: motion pans */
    int slideshow;    /* on: the next image every slide_ms */
    int slide_ms;
    double slide_at;  /* when the next image is due (now_ms) */
    int running, status;
    /* the frame loop (viewer.c) */
    long frame_no;
    double frame_start, last_present;
    double started;        /* now_ms at viewer_main's start */
    double paint_first, paint_full; /* the first file: first frame showing it, the full image
                                       (0: not yet), in ms from `started` */
    long paint_full_frame;
    double win_ready, image_ready; /* ms from `started`: the window open, the first image decoded */
    int paint_preview_w, paint_preview_h, paint_denom; /* the first paint's preview (0: none) */
    int paint_w, paint_h;  /* the first file's size */
    unsigned paint_token;  /* its vw_run.load_token: the full image counts only for that file */
    vw_frames frames;      /* the steady frames since the last change */
    vw_frame_stats stats;  /* their figures, for the HUD and the summary */
} viewer;

#endif /* TS_HAVE_SDL */
#endif
