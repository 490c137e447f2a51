/* viewer_image.c - what the viewer shows: the file list, loading, the chain run, the display
 * texture, saving and screenshots.
 *
 * The frame path avoids per-frame allocations: the pipeline keeps the input on the GPU and
 * downloads into the same host image (ts_pipeline_run_ex), and the streaming texture is only
 * recreated when its size changes. The texture holds the result reduced by 2^level (box filter,
 * viewer_view.c) so the renderer never scales a 4K image down by more than 2: cheap for the
 * software renderer, and no aliasing. The conversion to the texture's 32-bit format (16-bit via a
 * LUT, gray and alpha over a checkerboard) runs on several threads for large images.
 */
#include "viewer.h"
#include "util.h"

#ifdef TS_HAVE_SDL

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- files */

static const char *const image_exts[] = {"png", "jpg", "jpeg", "bmp", "tga", "gif",
                                         "psd", "pnm", "ppm", "pgm", NULL};

static int has_image_ext(const char *name)
{
    const char *e = path_ext(name);
    for (int i = 0; image_exts[i]; i++)
        if (strcasecmp(e, image_exts[i]) == 0)
            return 1;
    return 0;
}

static void add_file(viewer *v, const char *path)
{
    if (v->n_files == v->cap_files) {
        v->cap_files = v->cap_files ? 2 * v->cap_files : 32;
        char **grown = realloc(v->files, (size_t)v->cap_files * sizeof *grown);
        if (!grown) {
            ts_warn("out of memory");
            exit(1);
        }
        v->files = grown;
    }
    v->files[v->n_files++] = xstrdup(path);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory's images in name order (not recursive); a file as given, image or not, so that
 * a bad file shows its error instead of vanishing. */
void vw_files_add(viewer *v, const char *path)
{
    if (!path_is_dir(path)) {
        add_file(v, path);
        return;
    }
    DIR *d = opendir(path);
    if (!d) {
        add_file(v, path); /* shows the error when opened */
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !has_image_ext(e->d_name))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(names, cap * sizeof *grown);
            if (!grown) {
                ts_warn("out of memory");
                exit(1);
            }
            names = grown;
        }
        names[n++] = path_join(path, e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (!path_is_dir(names[i]))
            add_file(v, names[i]);
        free(names[i]);
    }
    free(names);
}

/* ---------------------------------------------------------------- loading and running */

void vw_open(viewer *v, int index)
{
    char err[256];
    tsio_load_opts lo = {v->o->max_pixels};
    ts_image_free(&v->src);
    v->have_result = 0;
    v->loaded = -1;
    v->cur = index;
    v->load_err[0] = v->run_err[0] = '\0';
    if (tsio_load(v->files[index], &lo, &v->src, err, sizeof err) == TS_OK)
        v->loaded = index;
    else
        snprintf(v->load_err, sizeof v->load_err, "%s: %s", path_base(v->files[index]), err);
    v->gen++;
    v->dirty = 1;
    v->tex_stale = 1;
    v->view_iw = v->view_ih = 0; /* fit the new image */
    memset(v->op_ms, 0, sizeof v->op_ms);
    memset(&v->up_ms, 0, sizeof v->up_ms);
    memset(&v->down_ms, 0, sizeof v->down_ms);
    vw_bench_reset(v);
}

const ts_image *vw_displayed(const viewer *v)
{
    if (v->loaded < 0)
        return NULL;
    return v->have_result ? &v->result : &v->src;
}

void vw_process(viewer *v)
{
    /* after a failure, live mode waits for a change instead of failing every frame */
    if (v->loaded < 0 || (!v->dirty && (!v->live || v->run_err[0])))
        return;
    v->dirty = 0;
    v->run_err[0] = '\0';
    if (v->chain.n == 0) { /* nothing to run: show the image itself (live mode has no work) */
        v->tex_stale |= v->have_result;
        v->have_result = 0;
        return;
    }
    ts_run_opts ro = {1, v->gen_on_gpu == v->gen, 1};
    ts_status st = ts_pipeline_run_ex(v->pipe, &v->chain, &v->src, &v->result, &v->rep, &ro);
    v->tex_stale = 1;
    if (st != TS_OK) {
        snprintf(v->run_err, sizeof v->run_err, "%s", ts_error_detail());
        v->have_result = 0;
        v->gen_on_gpu = 0;
        return;
    }
    v->have_result = 1;
    if (ts_pipeline_on_gpu(v->pipe))
        v->gen_on_gpu = v->gen;
    for (int i = 0; i < v->chain.n; i++)
        vw_stat_add(&v->op_ms[i], v->rep.op[i].ms);
    if (!v->rep.input_resident) {
        vw_stat_add(&v->up_ms, v->rep.upload_ms);
        v->first_upload_ms = v->rep.upload_ms;
    }
    vw_stat_add(&v->down_ms, v->rep.download_ms);
    vw_stat_add(&v->run_ms, v->rep.total_ms);
}

/* ---------------------------------------------------------------- conversion to the texture */

typedef struct conv_job {
    const ts_image *im;
    int level;
    unsigned char *dst; /* texture row 0 */
    int pitch;
    int y0, y1;         /* texture rows */
    int tw;
    const unsigned char *lut;
} conv_job;

static inline uint32_t xrgb(unsigned r, unsigned g, unsigned b)
{
    return 0xff000000u | r << 16 | g << 8 | b;
}

static inline unsigned checker(int x, int y) { return ((x >> 3) ^ (y >> 3)) & 1 ? 0x99 : 0x66; }

static inline unsigned over(unsigned c, unsigned a, unsigned bg)
{
    return (c * a + bg * (255 - a) + 127) / 255;
}

/* One texel from 8-bit samples s[] of `ch` channels; alpha over the checkerboard. */
static inline uint32_t compose(const unsigned *s, int ch, int x, int y)
{
    unsigned r = s[0], g = ch >= 3 ? s[1] : s[0], b = ch >= 3 ? s[2] : s[0];
    unsigned a = ch == 4 ? s[3] : ch == 2 ? s[1] : 255;
    if (a != 255) {
        unsigned bg = checker(x, y);
        r = over(r, a, bg);
        g = over(g, a, bg);
        b = over(b, a, bg);
    }
    return xrgb(r, g, b);
}

static inline unsigned sample(const unsigned char *row, size_t i, int bytes,
                              const unsigned char *lut)
{
    return bytes == 2 ? lut[((const uint16_t *)(const void *)row)[i]] : row[i];
}

/* Level 0: one texel per pixel, with a plain loop for the common RGB8 case. */
static void rows_full(const conv_job *j)
{
    const ts_image *im = j->im;
    int ch = im->channels;
    unsigned s[4] = {0, 0, 0, 0};
    for (int y = j->y0; y < j->y1; y++) {
        const unsigned char *row = (const unsigned char *)im->data + (size_t)y * im->pitch;
        uint32_t *d = (uint32_t *)(void *)(j->dst + (size_t)y * (size_t)j->pitch);
        if (ch == 3 && im->bytes == 1) {
            for (int x = 0; x < im->width; x++, row += 3)
                d[x] = xrgb(row[0], row[1], row[2]);
            continue;
        }
        for (int x = 0; x < im->width; x++) {
            for (int c = 0; c < ch; c++)
                s[c] = sample(row, (size_t)x * (size_t)ch + (size_t)c, im->bytes, j->lut);
            d[x] = compose(s, ch, x, y);
        }
    }
}

/* The mean of `sum` over cnt samples: a shift for whole 2^level squares, else a division. */
static inline unsigned mean(unsigned sum, unsigned cnt, int shift)
{
    return cnt == 1u << shift ? (sum + (1u << shift >> 1)) >> shift : (sum + cnt / 2) / cnt;
}

/* Level > 0, 8-bit samples: each texel is the mean of a 2^level square (clipped at the edges).
 * Inlined with a constant `ch` so the sums stay in registers. */
static inline __attribute__((always_inline)) void reduce8(const conv_job *j, const int ch)
{
    const ts_image *im = j->im;
    int L = j->level, n = 1 << L, shift = 2 * L;
    for (int ty = j->y0; ty < j->y1; ty++) {
        uint32_t *d = (uint32_t *)(void *)(j->dst + (size_t)ty * (size_t)j->pitch);
        int y0 = ty << L, y1 = y0 + n < im->height ? y0 + n : im->height;
        for (int tx = 0; tx < j->tw; tx++) {
            int x0 = tx << L, x1 = x0 + n < im->width ? x0 + n : im->width;
            unsigned s0 = 0, s1 = 0, s2 = 0, s3 = 0, s[4];
            for (int y = y0; y < y1; y++) {
                const unsigned char *p = (const unsigned char *)im->data + (size_t)y * im->pitch;
                const unsigned char *e = p + (size_t)x1 * (size_t)ch;
                for (p += (size_t)x0 * (size_t)ch; p < e; p += ch) {
                    s0 += p[0];
                    s1 += ch > 1 ? p[1] : 0;
                    s2 += ch > 2 ? p[2] : 0;
                    s3 += ch > 3 ? p[3] : 0;
                }
            }
            unsigned cnt = (unsigned)((x1 - x0) * (y1 - y0));
            s[0] = mean(s0, cnt, shift);
            s[1] = mean(s1, cnt, shift);
            s[2] = mean(s2, cnt, shift);
            s[3] = mean(s3, cnt, shift);
            d[tx] = ch == 3 ? xrgb(s[0], s[1], s[2]) : compose(s, ch, tx, ty);
        }
    }
}

/* Level > 0, 16-bit samples (rarer): the same through the LUT, without the register tricks. */
static void reduce16(const conv_job *j)
{
    const ts_image *im = j->im;
    int ch = im->channels, L = j->level, n = 1 << L, shift = 2 * L;
    for (int ty = j->y0; ty < j->y1; ty++) {
        uint32_t *d = (uint32_t *)(void *)(j->dst + (size_t)ty * (size_t)j->pitch);
        int y0 = ty << L, y1 = y0 + n < im->height ? y0 + n : im->height;
        for (int tx = 0; tx < j->tw; tx++) {
            int x0 = tx << L, x1 = x0 + n < im->width ? x0 + n : im->width;
            unsigned sum[4] = {0, 0, 0, 0}, s[4] = {0, 0, 0, 0};
            for (int y = y0; y < y1; y++) {
                const uint16_t *p =
                    (const uint16_t *)(const void *)((const char *)im->data + (size_t)y * im->pitch);
                for (int x = x0; x < x1; x++)
                    for (int c = 0; c < ch; c++)
                        sum[c] += p[(size_t)x * (size_t)ch + (size_t)c];
            }
            unsigned cnt = (unsigned)((x1 - x0) * (y1 - y0));
            for (int c = 0; c < ch; c++)
                s[c] = j->lut[mean(sum[c], cnt, shift)];
            d[tx] = compose(s, ch, tx, ty);
        }
    }
}

static void rows_reduced(const conv_job *j)
{
    if (j->im->bytes == 2) {
        reduce16(j);
        return;
    }
    switch (j->im->channels) {
    case 1: reduce8(j, 1); break;
    case 2: reduce8(j, 2); break;
    case 3: reduce8(j, 3); break;
    default: reduce8(j, 4); break;
    }
}

static void *conv_thread(void *arg)
{
    const conv_job *j = arg;
    if (j->level == 0)
        rows_full(j);
    else
        rows_reduced(j);
    return NULL;
}

#define MAX_CONV_THREADS 8

/* Fills a locked texture of th rows; large images are split into row bands over threads. */
static void convert(const ts_image *im, int level, void *dst, int pitch, int tw, int th,
                    const unsigned char *lut)
{
    static int cpus;
    if (!cpus)
        cpus = cpu_count();
    int nt = (size_t)im->width * (size_t)im->height >= ((size_t)1 << 20) ? cpus : 1;
    nt = nt > MAX_CONV_THREADS ? MAX_CONV_THREADS : nt > th ? th : nt;
    conv_job jobs[MAX_CONV_THREADS];
    pthread_t tid[MAX_CONV_THREADS];
    int started[MAX_CONV_THREADS] = {0};
    for (int i = 0; i < nt; i++) {
        jobs[i] = (conv_job){im, level, dst, pitch, th * i / nt, th * (i + 1) / nt, tw, lut};
        /* the last band runs here; a thread that cannot start runs here too */
        if (i == nt - 1 || pthread_create(&tid[i], NULL, conv_thread, &jobs[i]) != 0)
            conv_thread(&jobs[i]);
        else
            started[i] = 1;
    }
    for (int i = 0; i < nt; i++)
        if (started[i])
            pthread_join(tid[i], NULL);
}

/* Luma histogram (8-bit bins) of about 256K pixels spread over the image. */
static void histogram(const ts_image *im, const unsigned char *lut, uint32_t *hist)
{
    memset(hist, 0, 256 * sizeof *hist);
    int step = 1, ch = im->channels;
    while ((size_t)im->width * (size_t)im->height / ((size_t)step * (size_t)step) > 262144)
        step++;
    for (int y = 0; y < im->height; y += step) {
        const unsigned char *row = (const unsigned char *)im->data + (size_t)y * im->pitch;
        for (int x = 0; x < im->width; x += step) {
            size_t i = (size_t)x * (size_t)ch;
            unsigned l = sample(row, i, im->bytes, lut);
            if (ch >= 3)
                l = (299 * l + 587 * sample(row, i + 1, im->bytes, lut) +
                     114 * sample(row, i + 2, im->bytes, lut) + 500) / 1000;
            hist[l]++;
        }
    }
}

/* The level for this zoom, raised while the texture would exceed the renderer's limit. */
static int display_level(const viewer *v, const ts_image *im)
{
    int level = vw_view_level(v->view.zoom, VW_MAX_LEVEL);
    while (v->max_tex > 0 && level < 12 &&
           (((im->width - 1) >> level) + 1 > v->max_tex || ((im->height - 1) >> level) + 1 > v->max_tex))
        level++;
    return level;
}

/* (Re)creates *t as a streaming texture of w x h; 1 when new, 0 when kept, -1 on error. */
static int ensure_texture(viewer *v, SDL_Texture **t, int w, int h, int *tw, int *th)
{
    if (*t && *tw == w && *th == h)
        return 0;
    if (*t)
        SDL_DestroyTexture(*t);
    *t = SDL_CreateTexture(v->ren, v->tex_format, SDL_TEXTUREACCESS_STREAMING, w, h);
    if (!*t) {
        ts_warn("SDL_CreateTexture %dx%d: %s", w, h, SDL_GetError());
        return -1;
    }
    *tw = w;
    *th = h;
    return 1;
}

static int fill_texture(viewer *v, SDL_Texture *t, const ts_image *im, int level, int tw, int th)
{
    void *px;
    int pitch;
    if (SDL_LockTexture(t, NULL, &px, &pitch) != 0) {
        ts_warn("SDL_LockTexture: %s", SDL_GetError());
        return -1;
    }
    convert(im, level, px, pitch, tw, th, v->lut16);
    SDL_UnlockTexture(t);
    return 0;
}

static void make_lut16(viewer *v)
{
    if (v->lut16)
        return;
    v->lut16 = xmalloc(65536);
    for (unsigned i = 0; i < 65536; i++)
        v->lut16[i] = (unsigned char)((i * 255 + 32767) / 65535); /* round(i / 257) */
}

/* One display texture: `im` at the zoom's level into *t (sized *tw x *th, level *lv). */
static int update_one(viewer *v, SDL_Texture **t, const ts_image *im, int *tw, int *th, int *lv,
                      int stale)
{
    int level = display_level(v, im);
    int w = ((im->width - 1) >> level) + 1, h = ((im->height - 1) >> level) + 1;
    int r = ensure_texture(v, t, w, h, tw, th);
    if (r < 0)
        return -1;
    if (!r && !stale && level == *lv)
        return 0;
    *lv = level;
    return fill_texture(v, *t, im, level, w, h);
}

int vw_update_textures(viewer *v)
{
    const ts_image *im = vw_displayed(v);
    if (!im)
        return 0;
    make_lut16(v);
    double t0 = now_ms();
    if (update_one(v, &v->tex, im, &v->tex_w, &v->tex_h, &v->tex_level, v->tex_stale) != 0)
        return -1;
    if (v->tex_stale) {
        histogram(im, v->lut16, v->hist);
        vw_stat_add(&v->tex_ms, now_ms() - t0);
        v->tex_stale = 0;
    }
    if (v->compare && v->have_result) {
        int stale = v->tex_gen_before != v->gen;
        if (update_one(v, &v->tex_before, &v->src, &v->before_w, &v->before_h, &v->before_level,
                       stale) != 0)
            return -1;
        v->tex_gen_before = v->gen;
    }
    return 0;
}

/* ---------------------------------------------------------------- drawing */

/* The visible part of a texture of level `level` whose image has its top-left at (ox, oy). */
static void draw_texture(viewer *v, SDL_Texture *t, int tw, int th, int level, double ox,
                         double oy)
{
    double tz = v->view.zoom * (1 << level); /* screen pixels per texel */
    int tx0 = ox < 0 ? (int)floor(-ox / tz) : 0, ty0 = oy < 0 ? (int)floor(-oy / tz) : 0;
    int tx1 = (int)fmin(tw, ceil((v->ww - ox) / tz)), ty1 = (int)fmin(th, ceil((v->wh - oy) / tz));
    if (tx1 <= tx0 || ty1 <= ty0)
        return;
    SDL_Rect src = {tx0, ty0, tx1 - tx0, ty1 - ty0};
    SDL_FRect dst = {(float)(ox + tx0 * tz), (float)(oy + ty0 * tz), (float)((tx1 - tx0) * tz),
                     (float)((ty1 - ty0) * tz)};
    /* magnified or 1:1: exact pixels; reduced: linear, except in software where the 2^level
     * box filter already did the averaging and linear would cost a frame */
    SDL_ScaleMode mode = tz >= 1 - 1e-9 || v->software ? SDL_ScaleModeNearest : SDL_ScaleModeLinear;
    if (vw_sdl(SDL_SetTextureScaleMode(t, mode), "SDL_SetTextureScaleMode") == 0)
        vw_sdl(SDL_RenderCopyF(v->ren, t, &src, &dst), "SDL_RenderCopyF");
}

static void draw_compare(viewer *v)
{
    static const SDL_Color white = {255, 255, 255, 255};
    int split = v->ww / 2;
    double z = v->view.zoom;
    /* the before image shares the after image's centre (a rotation changes the shape) */
    double cx = v->view.ox + v->result.width * z / 2, cy = v->view.oy + v->result.height * z / 2;
    SDL_Rect left = {0, 0, split, v->wh}, right = {split, 0, v->ww - split, v->wh};
    if (vw_sdl(SDL_RenderSetClipRect(v->ren, &left), "SDL_RenderSetClipRect") == 0)
        draw_texture(v, v->tex_before, v->before_w, v->before_h, v->before_level,
                     round(cx - v->src.width * z / 2), round(cy - v->src.height * z / 2));
    if (vw_sdl(SDL_RenderSetClipRect(v->ren, &right), "SDL_RenderSetClipRect") == 0)
        draw_texture(v, v->tex, v->tex_w, v->tex_h, v->tex_level, v->view.ox, v->view.oy);
    vw_sdl(SDL_RenderSetClipRect(v->ren, NULL), "SDL_RenderSetClipRect");
    if (vw_sdl(SDL_SetRenderDrawColor(v->ren, 255, 255, 255, 255), "SDL_SetRenderDrawColor") == 0)
        vw_sdl(SDL_RenderDrawLine(v->ren, split, 0, split, v->wh), "SDL_RenderDrawLine");
    int s = v->wh >= 700 ? 2 : 1;
    vw_text(v, split - vw_text_width("before", s) - 8 * s, v->wh - 14 * s, s, white, "before");
    vw_text(v, split + 8 * s, v->wh - 14 * s, s, white, "after");
}

void vw_draw_image(viewer *v)
{
    if (!vw_displayed(v) || !v->tex)
        return;
    if (v->compare && v->have_result && v->tex_before)
        draw_compare(v);
    else
        draw_texture(v, v->tex, v->tex_w, v->tex_h, v->tex_level, v->view.ox, v->view.oy);
}

/* ---------------------------------------------------------------- saving */

/* DIR/NAME.tessera.png beside the original, or NAME.tessera-N.png: never an existing file. */
static char *save_path(const char *orig)
{
    const char *base = path_base(orig);
    const char *dot = strrchr(base, '.');
    int stem = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
    int dir = (int)(base - orig);
    size_t len = strlen(orig) + 32;
    char *p = xmalloc(len);
    for (int i = 0; i < 1000; i++) {
        if (i == 0)
            snprintf(p, len, "%.*s%.*s.tessera.png", dir, orig, stem, base);
        else
            snprintf(p, len, "%.*s%.*s.tessera-%d.png", dir, orig, stem, base, i);
        if (!path_exists(p))
            return p;
    }
    free(p);
    return NULL;
}

void vw_save(viewer *v)
{
    char notice[256], err[256];
    vw_process(v); /* a change made in this frame is saved too */
    const ts_image *im = vw_displayed(v);
    if (!im) {
        vw_toast(v, "nothing to save");
        return;
    }
    char *path = save_path(v->files[v->cur]);
    if (!path) {
        vw_toast(v, "cannot save: too many NAME.tessera-N.png files");
        return;
    }
    /* force = 0: never replaces a file, even one created since save_path looked */
    if (tsio_save_atomic(path, im, NULL, 0, notice, sizeof notice, err, sizeof err) == TS_OK) {
        vw_toast(v, "saved %s%s%s", path_base(path), notice[0] ? ": " : "", notice);
        if (!v->o->quiet)
            printf("tessera: saved %s\n", path);
    } else {
        vw_toast(v, "cannot save %s: %s", path_base(path), err);
        ts_warn("%s: %s", path, err);
    }
    fflush(stdout);
    free(path);
}

int vw_screenshot(viewer *v, const char *path)
{
    ts_image im;
    char notice[256], err[256];
    int w, h;
    if (SDL_GetRendererOutputSize(v->ren, &w, &h) != 0) {
        ts_warn("SDL_GetRendererOutputSize: %s", SDL_GetError());
        return -1;
    }
    if (ts_image_alloc(&im, w, h, 3, 1) != TS_OK) {
        ts_warn("screenshot: %s", ts_error_detail());
        return -1;
    }
    int rc = 0;
    if (SDL_RenderReadPixels(v->ren, NULL, SDL_PIXELFORMAT_RGB24, im.data, (int)im.pitch) != 0) {
        ts_warn("SDL_RenderReadPixels: %s", SDL_GetError());
        rc = -1;
    } else if (tsio_save(path, &im, NULL, notice, sizeof notice, err, sizeof err) != TS_OK) {
        ts_warn("%s: %s", path, err);
        rc = -1;
    }
    ts_image_free(&im);
    return rc;
}

void vw_image_free(viewer *v)
{
    if (v->tex)
        SDL_DestroyTexture(v->tex);
    if (v->tex_before)
        SDL_DestroyTexture(v->tex_before);
    v->tex = v->tex_before = NULL;
    ts_image_free(&v->src);
    ts_image_free(&v->result);
    free(v->lut16);
    v->lut16 = NULL;
}

#else
typedef int vw_image_unused; /* ISO C wants a declaration in every file */
#endif /* TS_HAVE_SDL */
