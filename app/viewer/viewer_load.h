/* viewer_load.h - the full decode of a large JPEG on a thread of its own, while the viewer shows
 * its reduced-size preview (viewer_load.c; no SDL). One decode at a time: a file opened while
 * one runs waits for it (the latest only), and a result whose token is no longer the file shown
 * is thrown away, so navigating or reloading never shows the wrong image. */
#ifndef TS_VIEWER_LOAD_H
#define TS_VIEWER_LOAD_H

#include "image_io.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct vw_job {
    char *path;            /* NULL: no job */
    uint64_t max_pixels;
    unsigned token;        /* the caller's name for the file it was asked for */
} vw_job;

typedef struct vw_load {
    pthread_t tid;
    int started;           /* a thread to join */
    atomic_int done;       /* set by the thread as it ends: the result below is the caller's */
    vw_job job, next;      /* running; waiting for it to end */
    /* the result, the thread's until `done` */
    ts_image im;
    tsio_meta meta;
    ts_status st;
    char err[256];
    double ms;             /* the decode's wall time */
    void (*wake)(void);    /* called by the thread as it ends (wakes a waiting frame loop) */
} vw_load;

/* Decodes `path` (tsio_load, with its metadata) on the thread, under `token`. */
void vw_load_start(vw_load *l, const char *path, uint64_t max_pixels, unsigned token);
/* A finished decode for `token`: 1 with the result moved into *im and *meta (the caller frees
 * them), *st and err; 0 when none (still running, or only stale results, which it frees). */
int vw_load_poll(vw_load *l, unsigned token, ts_image *im, tsio_meta *meta, ts_status *st,
                 char *err, size_t errlen, double *ms);
/* 1 while a decode runs or waits. */
int vw_load_busy(const vw_load *l);
/* Waits for a running decode (quit: bounded by one decode) and frees everything. */
void vw_load_free(vw_load *l);

#endif
