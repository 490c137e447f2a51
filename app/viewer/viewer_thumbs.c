/* viewer_thumbs.c - the grid's thumbnails: the disk cache, making one, the workers, the layout.
 * A worker takes the first thumbnail not yet started among the cells on screen, else the next
 * one after them, else from the start: the screen fills first, then the rest in order. */
#include "viewer_thumbs.h"
#include "exif.h"
#include "gpu_jpeg.h"
#include "image_io.h"
#include "photo.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- the cache */

static int mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(path, 0700);
        *p = '/';
        if (rc != 0 && errno != EEXIST)
            return -1;
    }
    return mkdir(path, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

int vw_thumb_cache_dir(int size, char *dir, size_t len)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/') /* the spec: a relative path is to be ignored */
        n = snprintf(dir, len, "%s/tessera/thumbs-%d", xdg, size);
    else if (home && home[0])
        n = snprintf(dir, len, "%s/.cache/tessera/thumbs-%d", home, size);
    else
        n = -1;
    if (n < 0 || (size_t)n >= len || mkdirs(dir) != 0) {
        dir[0] = '\0';
        return -1;
    }
    return 0;
}

int vw_thumb_cache_file(const char *dir, const char *path, char *file, size_t len, char *abs,
                        size_t abslen, uint64_t *size, int64_t *mtime_ns)
{
    struct stat st;
    char buf[PATH_MAX], key[PATH_MAX + 64];
    if (stat(path, &st) != 0)
        return -1;
    snprintf(abs, abslen, "%s", realpath(path, buf) ? buf : path);
    *size = (uint64_t)st.st_size;
    *mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    snprintf(key, sizeof key, "%s\n%llu\n%lld", abs, (unsigned long long)*size,
             (long long)*mtime_ns);
    int n = snprintf(file, len, "%s/%016llx.tth", dir, (unsigned long long)hash_fnv1a64(key));
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* A cache file in memory: a regular file of at most 4 MB (a thumbnail is ~77 KB). */
static unsigned char *read_small(const char *file, size_t *len)
{
    FILE *f = fopen(file, "rb");
    struct stat st;
    unsigned char *buf = NULL;
    if (!f)
        return NULL;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        st.st_size <= (4 << 20) && (buf = malloc((size_t)st.st_size)) &&
        fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        free(buf);
        buf = NULL;
    }
    *len = buf ? (size_t)st.st_size : 0;
    fclose(f);
    return buf;
}

/* "TSTH1 W H SIZE MTIME PATHLEN\n", the path, "\n", W*H*3 bytes of RGB. */
int vw_thumb_cache_read(const char *file, const char *abs, uint64_t size, int64_t mtime_ns,
                        ts_image *out)
{
    size_t len;
    unsigned char *buf = read_small(file, &len);
    int w, h, used = 0;
    unsigned long long sz, plen;
    long long mt;
    memset(out, 0, sizeof *out);
    if (!buf)
        return -1;
    int rc = -1;
    char head[128];
    size_t hl = len < sizeof head - 1 ? len : sizeof head - 1;
    memcpy(head, buf, hl);
    head[hl] = '\0';
    if (sscanf(head, "TSTH1 %d %d %llu %lld %llu\n%n", &w, &h, &sz, &mt, &plen, &used) == 5 &&
        used > 0 && w >= 1 && h >= 1 && w <= 4096 && h <= 4096 && sz == size &&
        mt == mtime_ns && plen == strlen(abs) && (size_t)used + plen + 1 <= len &&
        memcmp(buf + used, abs, plen) == 0 && buf[used + plen] == '\n' &&
        len - ((size_t)used + plen + 1) == (size_t)w * h * 3 &&
        ts_image_alloc(out, w, h, 3, 1) == TS_OK) {
        const unsigned char *px = buf + used + plen + 1;
        for (int y = 0; y < h; y++)
            memcpy((char *)out->data + (size_t)y * out->pitch, px + (size_t)y * w * 3,
                   (size_t)w * 3);
        rc = 0;
    }
    free(buf);
    return rc;
}

int vw_thumb_cache_write(const char *file, const char *abs, uint64_t size, int64_t mtime_ns,
                         const ts_image *im)
{
    char tmp[PATH_MAX + 16];
    if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", file) >= (int)sizeof tmp)
        return -1;
    int fd = mkstemp(tmp);
    if (fd < 0)
        return -1;
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        unlink(tmp);
        return -1;
    }
    int ok = fprintf(f, "TSTH1 %d %d %llu %lld %zu\n%s\n", im->width, im->height,
                     (unsigned long long)size, (long long)mtime_ns, strlen(abs), abs) > 0;
    for (int y = 0; ok && y < im->height; y++)
        ok = fwrite((const char *)im->data + (size_t)y * im->pitch, 3, (size_t)im->width, f) ==
             (size_t)im->width;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, file) != 0) { /* rename: readers see the old file or the whole new one */
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- making one */

/* Any image as RGB8: gray spread, 16-bit rounded as the display does, alpha over dark gray. */
static ts_status to_rgb8(const ts_image *in, ts_image *out)
{
    ts_status st = ts_image_alloc(out, in->width, in->height, 3, 1);
    if (st != TS_OK)
        return st;
    int ch = in->channels, alpha = ch == 2 || ch == 4;
    for (int y = 0; y < in->height; y++) {
        const unsigned char *s8 = (const unsigned char *)in->data + (size_t)y * in->pitch;
        const uint16_t *s16 = (const uint16_t *)(const void *)s8;
        unsigned char *d = (unsigned char *)out->data + (size_t)y * out->pitch;
        for (int x = 0; x < in->width; x++, d += 3) {
            unsigned v[4] = {0, 0, 0, 0};
            for (int c = 0; c < ch; c++)
                v[c] = in->bytes == 2 ? (s16[x * ch + c] * 255u + 32767) / 65535 : s8[x * ch + c];
            unsigned r = v[0], g = ch >= 3 ? v[1] : v[0], b = ch >= 3 ? v[2] : v[0];
            if (alpha) {
                unsigned a = v[ch - 1], bg = 48 * (255 - a);
                r = (r * a + bg + 127) / 255;
                g = (g * a + bg + 127) / 255;
                b = (b * a + bg + 127) / 255;
            }
            d[0] = (unsigned char)r;
            d[1] = (unsigned char)g;
            d[2] = (unsigned char)b;
        }
    }
    return TS_OK;
}

/* The thumbnail a camera stored in the EXIF block (IFD1, usually 160x120), when it is at least
 * 3/4 of `size` on its long side and has the picture's proportions (some cameras pad it with
 * bars): no need to decode the picture at all. The EXIF block goes to *meta, for the
 * orientation. 1 when *im holds it. */
static int exif_thumbnail(const unsigned char *buf, size_t len, int size, ts_image *im,
                          tsio_meta *meta)
{
    const unsigned char *exif;
    size_t elen, off, tlen;
    int fw, fh;
    char err[128];
    if (tsio_jpeg_exif(buf, len, &exif, &elen, &fw, &fh) != 0 || !exif ||
        !tsio_exif_thumbnail(exif, elen, &off, &tlen) ||
        tsio_jpeg_decode_reduced(exif + off, tlen, (uint64_t)size * size * 4, 0, 0, NULL, NULL,
                                 im, err, sizeof err) != TS_OK)
        return 0;
    int longest = im->width > im->height ? im->width : im->height;
    double a = (double)im->width / im->height, b = (double)fw / fh;
    if (longest * 4 < size * 3 || fabs(a - b) > 0.03 * b || !(meta->exif = malloc(elen))) {
        ts_image_free(im);
        return 0;
    }
    memcpy(meta->exif, exif, elen);
    meta->exif_len = elen;
    return 1;
}

/* The first 64 KB of a regular file (a camera's EXIF block and the frame header lie there);
 * NULL for anything else. O_NONBLOCK: opening a FIFO never waits for a writer. */
static unsigned char *read_head(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    unsigned char *buf = NULL;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (buf = malloc(65536))) {
        ssize_t n = pread(fd, buf, 65536, 0);
        if (n < 4) {
            free(buf);
            buf = NULL;
        } else
            *len = (size_t)n;
    }
    close(fd);
    return buf;
}

/* A worker's nvJPEG context and the device image it decodes into (gpu_way). */
typedef struct thumb_gpu {
    gj_ctx *ctx;
    gj_result res;
    ts_stream stream;
} thumb_gpu;

/* The file's bytes decoded by nvJPEG on the device and made a thumbnail there by the resize op,
 * downloaded into *small, with the file's metadata; TS_ERR_UNSUPPORTED when nvJPEG refuses it
 * (libjpeg's reduced decode takes it then). */
static ts_status gpu_thumb(thumb_gpu *g, ts_pipeline *p, const unsigned char *buf, size_t len,
                           int size, tsio_meta *meta, ts_image *small)
{
    ts_status st = gj_decode_batch(g->ctx, &buf, &len, 1, &g->res);
    if (st == TS_OK && g->res.status == TS_OK)
        st = ts_gpu_sync(g->stream);
    else if (st == TS_OK)
        st = TS_ERR_UNSUPPORTED;
    if (st == TS_OK && tsio_codec_jpeg()->meta_read(buf, len, meta) != TS_OK)
        st = TS_ERR_UNSUPPORTED;
    char text[48], err[256];
    ts_chain chain;
    ts_run_report rep;
    snprintf(text, sizeof text, "thumbnail:%d:cubic", size); /* as the CPU way's below */
    if (st == TS_OK && (st = ts_chain_parse(text, &chain, err, sizeof err)) == TS_OK) {
        st = ts_pipeline_run_dev(p, &chain, &g->res.d_im, small, &rep, NULL);
        ts_chain_free(&chain);
    }
    if (st != TS_OK) {
        tsio_meta_free(meta);
        memset(meta, 0, sizeof *meta);
        return TS_ERR_UNSUPPORTED;
    }
    return TS_OK;
}

/* vw_thumb_make, with nvJPEG's decode in place of libjpeg's reduced one when g is given (then
 * *by_gpu says whether it took the file). */
static ts_status thumb_make(ts_pipeline *p, thumb_gpu *g, const char *path, int size,
                            uint64_t max_pixels, ts_image *out, char *err, size_t errlen,
                            int *by_gpu)
{
    ts_image im = {0}, small = {0};
    tsio_meta meta = {0};
    size_t len;
    ts_status st = TS_ERR_FORMAT;
    memset(out, 0, sizeof *out);
    /* a camera's EXIF thumbnail: from the file's head alone (APP1 comes before the scan) */
    unsigned char *buf = read_head(path, &len);
    int exif = buf && exif_thumbnail(buf, len, size, &im, &meta);
    free(buf);
    buf = NULL;
    /* else a JPEG at 1/2, 1/4 or 1/8 size: libjpeg skips most of the IDCT and all the
       upsampling; the guarded read: a JPEG, else nothing read past its head */
    if (!exif && tsio_read_file(path, max_pixels, tsio_codec_jpeg(), &buf, &len, NULL, err,
                                errlen) != TS_OK)
        buf = NULL;
    if (exif)
        st = TS_OK;
    else if (buf && g && gpu_thumb(g, p, buf, len, size, &meta, &im) == TS_OK) {
        st = TS_OK; /* already small: upright below (the same picture, 1/500 of the pixels) */
        *by_gpu = 1;
    } else if (buf) {
        tsio_reduced info;
        st = tsio_jpeg_decode_reduced(buf, len, max_pixels, size, size, &meta, &info, &im, err,
                                      errlen);
    }
    free(buf);
    if (st != TS_OK) { /* not a JPEG (or a JPEG the reduced decode refused: the full one says
                          why) */
        tsio_meta_free(&meta);
        memset(&meta, 0, sizeof meta);
        tsio_load_opts lo = {.max_pixels = max_pixels, .meta = &meta};
        if ((st = tsio_load(path, &lo, &im, err, errlen)) != TS_OK) {
            tsio_meta_free(&meta);
            return st;
        }
    }
    int orientation;
    photo_orient_image(p, &im, &meta, &orientation); /* a failure leaves it as stored */
    tsio_meta_free(&meta);
    const ts_image *src = &im;
    if (im.width > size || im.height > size) { /* the resize op: on the GPU where there is one */
        char text[48];
        ts_chain chain;
        ts_run_report rep;
        /* cubic (Pillow's thumbnail()'s): lanczos3's lobes cost half as much again for little
           a 160-pixel picture shows */
        snprintf(text, sizeof text, "thumbnail:%d:cubic", size);
        if ((st = ts_chain_parse(text, &chain, err, errlen)) == TS_OK) {
            st = ts_pipeline_run(p, &chain, &im, &small, &rep);
            ts_chain_free(&chain);
            if (st != TS_OK)
                snprintf(err, errlen, "%s", ts_error_detail());
        }
        src = &small;
    }
    if (st == TS_OK && (st = to_rgb8(src, out)) != TS_OK)
        snprintf(err, errlen, "%s", ts_error_detail());
    ts_image_free(&small);
    ts_image_free(&im);
    return st;
}

ts_status vw_thumb_make(ts_pipeline *p, const char *path, int size, uint64_t max_pixels,
                        ts_image *out, char *err, size_t errlen)
{
    return thumb_make(p, NULL, path, size, max_pixels, out, err, errlen, NULL);
}

/* nvJPEG's device part for the workers, on its own thread: a GPU pipeline makes the device
 * current here (the workers' pipelines open the same one). */
static void *gj_setup(void *arg)
{
    vw_thumbs *t = arg;
    ts_pipeline *p = NULL;
    gj_dev *d = NULL;
    char why[256];
    if (ts_pipeline_create(&p, TS_BACKEND_GPU, why, sizeof why) == TS_OK &&
        ts_pipeline_on_gpu(p)) {
        gj_opts o = {.no_engine = 1, .max_pixels = t->max_pixels};
        if (gj_dev_open(&d, &o, why, sizeof why) == TS_OK &&
            gj_dev_warm_up(d, why, sizeof why) != TS_OK) {
            gj_dev_close(d);
            d = NULL;
        }
    }
    ts_pipeline_destroy(p);
    pthread_mutex_lock(&t->mu);
    t->gj = d;
    t->gj_ready = d ? 1 : -1;
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

/* A worker's nvJPEG context once the device part is up (its pipeline on that GPU); 0 when it
 * has one. */
static int gpu_way(vw_thumbs *t, ts_pipeline *p, thumb_gpu *g)
{
    if (g->ctx)
        return 0;
    pthread_mutex_lock(&t->mu);
    gj_dev *d = t->gj_ready == 1 ? t->gj : NULL;
    pthread_mutex_unlock(&t->mu);
    if (!d || !p || !ts_pipeline_on_gpu(p))
        return -1;
    char why[256];
    gj_opts o = {.host_threads = 1, .max_pixels = t->max_pixels};
    if (!g->stream && ts_gpu_stream_create(&g->stream) != TS_OK)
        return -1;
    if (gj_ctx_create_on(&g->ctx, d, g->stream, &o, why, sizeof why) != TS_OK)
        g->ctx = NULL;
    return g->ctx ? 0 : -1;
}

static void gpu_way_close(thumb_gpu *g)
{
    gj_results_free(&g->res, 1);
    gj_ctx_destroy(g->ctx);
    if (g->stream)
        ts_gpu_stream_destroy(g->stream);
    memset(g, 0, sizeof *g);
}

/* ---------------------------------------------------------------- the workers */

/* The next thumbnail to make (under mu): from the screen's first cell on (the screen, then the
 * ones after it), then those before it. */
static int pick(vw_thumbs *t)
{
    int lo = t->want_lo < 0 ? 0 : t->want_lo > t->n ? t->n : t->want_lo;
    for (int i = lo; i < t->n; i++)
        if (t->t[i].state == VW_THUMB_TODO)
            return i;
    for (int i = 0; i < lo; i++)
        if (t->t[i].state == VW_THUMB_TODO)
            return i;
    return -1;
}

/* The worker's pipeline, made when its first thumbnail is not in the cache: a folder seen
 * before opens without a GPU's start-up (~0.25 s). NULL when none can be made. */
static ts_pipeline *worker_pipeline(vw_thumbs *t, ts_pipeline **p)
{
    char msg[256];
    if (!*p && ts_pipeline_create(p, t->backend, msg, sizeof msg) != TS_OK &&
        ts_pipeline_create(p, TS_BACKEND_CPU, msg, sizeof msg) != TS_OK)
        *p = NULL;
    return *p;
}

static void make_one(vw_thumbs *t, ts_pipeline **pp, thumb_gpu *g, int i, ts_image *im,
                     int *cached)
{
    char file[PATH_MAX + 64], abs[PATH_MAX], err[256];
    uint64_t size = 0;
    int64_t mtime = 0;
    int keyed = t->dir[0] && vw_thumb_cache_file(t->dir, t->path[i], file, sizeof file, abs,
                                                 sizeof abs, &size, &mtime) == 0;
    *cached = 0;
    if (keyed && vw_thumb_cache_read(file, abs, size, mtime, im) == 0) {
        *cached = 1;
        return;
    }
    ts_pipeline *p = worker_pipeline(t, pp);
    if (!p)
        return;
    int by_gpu = 0;
    if (thumb_make(p, gpu_way(t, p, g) == 0 ? g : NULL, t->path[i], VW_THUMB_SIZE, t->max_pixels,
                   im, err, sizeof err, &by_gpu) != TS_OK)
        return; /* the cell says the file cannot be shown; opening it shows why */
    if (by_gpu) {
        pthread_mutex_lock(&t->mu);
        t->made_gpu++;
        pthread_mutex_unlock(&t->mu);
    }
    if (keyed)
        vw_thumb_cache_write(file, abs, size, mtime, im);
}

static void *worker(void *arg)
{
    vw_thumbs *t = arg;
    ts_pipeline *p = NULL;
    thumb_gpu g;
    memset(&g, 0, sizeof g);
    for (;;) {
        pthread_mutex_lock(&t->mu);
        int i = t->stop ? -1 : pick(t);
        if (i >= 0)
            t->t[i].state = VW_THUMB_MAKING;
        pthread_mutex_unlock(&t->mu);
        if (i < 0)
            break;
        ts_image im = {0};
        int cached;
        make_one(t, &p, &g, i, &im, &cached);
        pthread_mutex_lock(&t->mu);
        t->t[i].im = im;
        t->t[i].from_cache = cached;
        t->t[i].state = im.data ? VW_THUMB_DONE : VW_THUMB_FAILED;
        t->cached += cached;
        t->failed += !im.data;
        if (++t->done == t->n)
            t->all_ms = now_ms() - t->started;
        pthread_mutex_unlock(&t->mu);
        if (t->wake)
            t->wake();
    }
    gpu_way_close(&g);
    ts_pipeline_destroy(p);
    return NULL;
}

int vw_thumbs_start(vw_thumbs *t, char **paths, int n, int threads, ts_backend backend,
                    uint64_t max_pixels, void (*wake)(void))
{
    memset(t, 0, sizeof *t);
    t->n = n;
    t->path = calloc(n > 0 ? (size_t)n : 1, sizeof *t->path); /* the list may grow (drops) */
    t->t = calloc(n > 0 ? (size_t)n : 1, sizeof *t->t);
    t->backend = backend;
    t->max_pixels = max_pixels;
    t->wake = wake;
    t->started = now_ms();
    t->want_hi = -1;
    pthread_mutex_init(&t->mu, NULL);
    if (!t->t || !t->path)
        return -1;
    memcpy(t->path, paths, (size_t)n * sizeof *paths);
    vw_thumb_cache_dir(VW_THUMB_SIZE, t->dir, sizeof t->dir);
    char why[256];
    t->gj_ready = -1;
    if (backend != TS_BACKEND_CPU && n >= VW_THUMB_GPU_MIN && access("/dev/nvidiactl", F_OK) == 0 &&
        gj_load(why, sizeof why) == TS_OK) {
        t->gj_ready = 0;
        t->gj_started = pthread_create(&t->gj_tid, NULL, gj_setup, t) == 0;
        if (!t->gj_started)
            t->gj_ready = -1;
    }
    threads = threads < 1 ? 1 : threads > VW_THUMB_THREADS ? VW_THUMB_THREADS : threads;
    threads = threads > n ? n : threads;
    for (int i = 0; i < threads; i++)
        if (pthread_create(&t->tid[t->threads], NULL, worker, t) == 0)
            t->threads++;
    return t->threads || n == 0 ? 0 : -1;
}

void vw_thumbs_want(vw_thumbs *t, int lo, int hi)
{
    pthread_mutex_lock(&t->mu);
    t->want_lo = lo;
    t->want_hi = hi;
    pthread_mutex_unlock(&t->mu);
}

const ts_image *vw_thumbs_get(vw_thumbs *t, int i, int *failed)
{
    pthread_mutex_lock(&t->mu);
    int state = i >= 0 && i < t->n ? t->t[i].state : VW_THUMB_FAILED;
    pthread_mutex_unlock(&t->mu);
    *failed = state == VW_THUMB_FAILED;
    return state == VW_THUMB_DONE ? &t->t[i].im : NULL;
}

int vw_thumbs_finished(vw_thumbs *t)
{
    pthread_mutex_lock(&t->mu);
    int done = t->done == t->n;
    pthread_mutex_unlock(&t->mu);
    return done;
}

int vw_thumbs_done(vw_thumbs *t)
{
    pthread_mutex_lock(&t->mu);
    int done = t->done;
    pthread_mutex_unlock(&t->mu);
    return done;
}

void vw_thumbs_free(vw_thumbs *t)
{
    if (!t->t) {
        free(t->path);
        return;
    }
    pthread_mutex_lock(&t->mu);
    t->stop = 1;
    pthread_mutex_unlock(&t->mu);
    for (int i = 0; i < t->threads; i++)
        pthread_join(t->tid[i], NULL);
    if (t->gj_started)
        pthread_join(t->gj_tid, NULL);
    gj_dev_close(t->gj); /* after every worker's context */
    for (int i = 0; i < t->n; i++)
        ts_image_free(&t->t[i].im);
    free(t->t);
    free(t->path);
    pthread_mutex_destroy(&t->mu);
    memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------------- the layout */

void vw_grid_fit(vw_grid_geom *g, int ww, int wh, int n, int sel)
{
    g->cell = VW_THUMB_SIZE + VW_THUMB_PAD;
    g->cols = ww / g->cell > 0 ? ww / g->cell : 1;
    g->rows = (wh + g->cell - 1) / g->cell; /* the last one may be cut */
    int full = wh / g->cell > 0 ? wh / g->cell : 1;
    int last_row = n > 0 ? (n - 1) / g->cols : 0, row = sel > 0 ? sel / g->cols : 0;
    if (row < g->top)
        g->top = row;
    else if (row >= g->top + full)
        g->top = row - full + 1;
    if (g->top > last_row - full + 1) /* no empty rows below the last while there is more above */
        g->top = last_row - full + 1;
    if (g->top < 0)
        g->top = 0;
}

int vw_grid_hit(const vw_grid_geom *g, int n, int x, int y)
{
    if (x < 0 || y < 0 || g->cell < 1)
        return -1;
    int c = x / g->cell, r = y / g->cell + g->top, i = r * g->cols + c;
    return c < g->cols && i < n ? i : -1;
}
