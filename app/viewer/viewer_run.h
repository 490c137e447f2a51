/* viewer_run.h - the image and its chain: the loaded file (host), the pipeline and its run (input
 * and result kept on the GPU where there is one), the run's times and errors, saving the result
 * (viewer_run.c; no SDL). */
#ifndef TS_VIEWER_RUN_H
#define TS_VIEWER_RUN_H

#include "tessera.h"
#include "viewer_anim.h"
#include "viewer_load.h"
#include "viewer_stats.h"

#include <stdint.h>

typedef struct vw_run {
    ts_pipeline *pipe;
    ts_chain chain;
    int sel;               /* selected op (Tab), -1: none */
    int live;              /* re-run every frame (while the HUD shows its times), not only on
                              changes */

    ts_image src;          /* the loaded image (host) */
    int loaded;            /* src holds the current file */
    unsigned gen;          /* bumped whenever src changes */
    unsigned gen_on_gpu;   /* src generation kept on the GPU, 0: none */
    unsigned shown_gen;    /* bumped whenever what vw_run_displayed shows changes */
    char load_err[512];    /* why the file could not be loaded ("" when fine) */
    vw_anim anim;          /* an animated GIF's frames (n 0: a still image) */
    int anim_frame;        /* the frame in src */
    double anim_at;        /* when the next frame is due (now_ms) */

    ts_image result;       /* the processed image, valid when have_result; its pixels are only on
                              the GPU (ts_pipeline_result, data NULL) when result_on_gpu */
    int have_result, dirty, result_on_gpu;
    int rerun;             /* this run is live mode's: the same input and chain as the last one */
    int gpu_display_off;   /* the GPU display conversion failed once: the host converts */
    ts_run_report rep;
    char run_err[512];
    vw_stat op_ms[TS_MAX_CHAIN], up_ms, down_ms;
    double first_upload_ms; /* the upload that made the input resident */
    int fresh;             /* loaded or uploaded since the frame loop last looked (not steady) */
    int auto_orient;       /* turn src upright by its EXIF orientation on load */
    int orientation;       /* the orientation applied to src (1: none) */
    char icc_line[160];    /* the HUD's colour profile line ("" for none or sRGB) */

    /* A large JPEG opens as a reduced-size preview (tsio_jpeg_decode_reduced: 1/2, 1/4 or 1/8,
     * upright as the full image will be) fitted into the area, while its full decode runs on a
     * thread (vw_load); the chain, saving and the speedup runs wait for the full image. */
    int preview_box_w, preview_box_h; /* the area previews are fitted into; 0: no previews */
    vw_load load;
    unsigned load_token;   /* bumped by every vw_run_load: the file that is wanted now */
    int preview;           /* src is the preview of the file being decoded */
    int preview_denom;
    char *decode_path;     /* the full decode to start once the preview is on screen */
    uint64_t decode_max_pixels;
    int full_w, full_h;    /* the file's size, upright (preview: the size to come) */
    int swapped;           /* the full image replaced the preview since the view looked */
    char name[256];        /* the file's base name, for messages */
    double opened_at;      /* now_ms when vw_run_load began */
    double first_ms, full_ms; /* from opened_at: the first image (preview or full) ready; the
                              full one ready (a preview's decode thread done) */
} vw_run;

/* Loads `path` as the new src (the reason kept in load_err on failure): a large JPEG as a preview
 * first when preview_box_w/h are set (then vw_run_poll_load brings the full image). */
void vw_run_load(vw_run *r, const char *path, uint64_t max_pixels);
/* A full decode finished: the full image replaces the preview (or the error is shown); 1 when
 * something changed. Results for a file no longer shown are dropped. */
int vw_run_poll_load(vw_run *r);
/* Starts the full decode of the previewed file: after the frame that shows the preview, so that
 * the decode does not compete with that frame (window creation, first conversion) for the CPU. */
void vw_run_start_decode(vw_run *r);
/* 1 while a preview waits for its full image. */
int vw_run_loading(const vw_run *r);
/* Displayed pixels per file pixel (< 1 for a preview, else 1): the zoom the user sees is the
 * view's zoom times this. */
double vw_run_file_scale(const vw_run *r);
/* An animated GIF: the next frame into src when it is due (the chain runs on it); 1 when it
 * moved on. */
int vw_run_anim_tick(vw_run *r);
/* When the next frame is due (now_ms time); 0: a still image. */
double vw_run_anim_due(const vw_run *r);
/* Runs the chain when dirty. */
void vw_run_process(vw_run *r);
/* Live mode has work: a chain to re-run on a loaded image, and no failure to wait out. */
int vw_run_live_work(const vw_run *r);
/* The result, or src when nothing ran; NULL: nothing loaded. */
const ts_image *vw_run_displayed(const vw_run *r);
/* The displayed image on the host: a chain that left its result on the GPU runs again with a
 * download (the input is still there). NULL, with run_err set, on failure. */
const ts_image *vw_run_host_result(vw_run *r);
/* The chain changed: run again; old timings no longer apply. */
void vw_run_chain_changed(vw_run *r);
/* Saves the displayed image as DIR/NAME.tessera.png beside `orig` (never over a file); what
 * happened in msg. 0 when saved. */
int vw_run_save(vw_run *r, const char *orig, int quiet, char *msg, size_t len);
void vw_run_free(vw_run *r);

#endif
