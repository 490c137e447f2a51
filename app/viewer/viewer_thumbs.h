/* viewer_thumbs.h - thumbnails for the viewer's grid (-t): made on worker threads, the cells on
 * screen first, each from the disk cache or made (a JPEG decoded at reduced size by libjpeg's
 * DCT scaling, turned upright, then the resize op's thumbnail:N on the pipeline: the GPU where
 * there is one) and written back to the cache atomically; the layout of the grid
 * (viewer_thumbs.c; no SDL: unit-tested).
 *
 * The cache: $XDG_CACHE_HOME/tessera/thumbs-N (else ~/.cache/tessera/thumbs-N), one file a
 * thumbnail, named by a hash of the file's absolute path, size and mtime; the file holds those
 * too (checked on read, so a hash collision or a changed file is a miss) and the RGB pixels. */
#ifndef TS_VIEWER_THUMBS_H
#define TS_VIEWER_THUMBS_H

#include "tessera.h"

#include <pthread.h>
#include <stdint.h>

#define VW_THUMB_SIZE 160   /* a thumbnail fits in N x N */
#define VW_THUMB_PAD 12     /* between cells */
#define VW_THUMB_THREADS 16 /* at most */

enum { VW_THUMB_TODO, VW_THUMB_MAKING, VW_THUMB_DONE, VW_THUMB_FAILED };

typedef struct vw_thumb {
    int state;
    ts_image im;     /* RGB8, fits VW_THUMB_SIZE; valid once DONE (then never changed) */
    int from_cache;
} vw_thumb;

typedef struct vw_thumbs {
    int n;
    char **path;          /* the file list's names (the strings borrowed, the array a copy) */
    vw_thumb *t;
    pthread_mutex_t mu;
    pthread_t tid[VW_THUMB_THREADS];
    int threads;
    int stop;             /* under mu: the workers end after their current thumbnail */
    int want_lo, want_hi; /* under mu: the cells on screen, made first */
    int done, cached, failed; /* under mu */
    double started, all_ms; /* now_ms at start; when the last one was made (ms from started) */
    char dir[1024];       /* the cache ("": none) */
    ts_backend backend;
    uint64_t max_pixels;
    void (*wake)(void);   /* called by a worker after each thumbnail */
    /* nvJPEG (a GPU pipeline, a folder of VW_THUMB_GPU_MIN files or more): its device part, made
     * on a thread of its own while the workers begin on the CPU; each worker switches to the
     * GPU's decode once it is there (under mu: gj_ready 1 there, -1 never, 0 not yet) */
    struct gj_dev *gj;
    int gj_ready;
    pthread_t gj_tid;
    int gj_started;
    int made_gpu;         /* under mu: thumbnails decoded by nvJPEG */
} vw_thumbs;

/* Folders this long have their JPEGs decoded by nvJPEG once it is up: its host work per 12 MP
 * file (~20 ms: the GPU Huffman decoder's host stage) is about half of libjpeg's reduced decode
 * (~35 ms on an H100 host's cores), its start-up ~0.5 s. */
#define VW_THUMB_GPU_MIN 64

/* Starts `threads` workers on paths[0..n). Returns 0, or -1 when no thread could start. */
int vw_thumbs_start(vw_thumbs *t, char **paths, int n, int threads, ts_backend backend,
                    uint64_t max_pixels, void (*wake)(void));
/* The cells on screen: made before the others. */
void vw_thumbs_want(vw_thumbs *t, int lo, int hi);
/* Thumbnail i when made (the pointer stays valid until vw_thumbs_free), else NULL; *failed is
 * set when it could not be made. */
const ts_image *vw_thumbs_get(vw_thumbs *t, int i, int *failed);
/* How many are made (or failed). */
int vw_thumbs_done(vw_thumbs *t);
/* 1 when every thumbnail is made (or failed). */
int vw_thumbs_finished(vw_thumbs *t);
/* Stops and joins the workers, frees the thumbnails. */
void vw_thumbs_free(vw_thumbs *t);

/* The cache folder for thumbnails of `size`, created if needed ($XDG_CACHE_HOME, else $HOME/
 * .cache); 0 on success, -1 when there is none (thumbnails are then made every time). */
int vw_thumb_cache_dir(int size, char *dir, size_t len);
/* The cache file of `path` in `dir` (its absolute path, size and mtime in the name's hash);
 * 0 on success, -1 when the file cannot be stat'ed. *size and *mtime_ns get what was used. */
int vw_thumb_cache_file(const char *dir, const char *path, char *file, size_t len, char *abs,
                        size_t abslen, uint64_t *size, int64_t *mtime_ns);
/* Reads a cached thumbnail made from (abs, size, mtime_ns); 0 on a hit. */
int vw_thumb_cache_read(const char *file, const char *abs, uint64_t size, int64_t mtime_ns,
                        ts_image *out);
/* Writes it atomically (a temporary file in the same folder, renamed); 0 on success. */
int vw_thumb_cache_write(const char *file, const char *abs, uint64_t size, int64_t mtime_ns,
                         const ts_image *im);
/* Makes the thumbnail of `path`: RGB8 within size x size (alpha over dark gray, 16-bit rounded
 * to 8), upright by EXIF, through pipeline `p`. */
ts_status vw_thumb_make(ts_pipeline *p, const char *path, int size, uint64_t max_pixels,
                        ts_image *out, char *err, size_t errlen);

/* The grid in a ww x wh area: columns, rows on screen (the last may be cut), and the first row
 * shown moved just enough to keep `sel` on screen. */
typedef struct vw_grid_geom {
    int cell, cols, rows, top;
} vw_grid_geom;
void vw_grid_fit(vw_grid_geom *g, int ww, int wh, int n, int sel);
/* The cell under (x, y), -1 for none. */
int vw_grid_hit(const vw_grid_geom *g, int n, int x, int y);

#endif
