/* cpu_geom.c - rotations and mirrors on the CPU, variant "blocked".
 *
 * The reference copies one pixel at a time with a memcpy of a run-time size and reads across
 * rows for the swapping ops (rotate:90/270, transpose, transverse), a cache miss a pixel. Here:
 *   - pixels are moved as a type of their size (1, 2, 3, 4, 6 or 8 bytes), so a move is one load
 *     and one store;
 *   - the swapping ops go through 64 x 64-pixel tiles: a tile's source rows (64 rows of 64 pixels,
 *     at most 32 KiB) are staged contiguously (no L1 set conflicts) while its output rows are
 *     written in order, each output row of a tile reading down one staged column; 3-byte pixels
 *     move as overlapping 4-byte words;
 *   - flips copy whole rows (memcpy), flops and rotate:180 reverse rows pixel by pixel;
 *   - tasks are bands of output rows (one tile high) on the thread pool.
 * An optional row transform (cpu_row_fn) is applied to the source pixels on the way: the pipeline
 * uses it to fold an equalization into the rotation that follows it (one pass instead of two).
 */
#include "cpu_common.h"

#include <stdlib.h>
#include <string.h>

#define TILE 64

typedef struct px3 { uint8_t b[3]; } px3;
typedef struct px6 { uint16_t s[3]; } px6;

typedef struct geom_ctx {
    ts_geom g;
    const ts_image *in;
    const ts_image *out;
    cpu_row_fn fn;
    const void *fctx;
    int band; /* output rows per task */
    int failed;
} geom_ctx;

static int geom_swaps(ts_geom g)
{
    return g == TS_GEOM_ROT90 || g == TS_GEOM_ROT270 || g == TS_GEOM_TRANSPOSE ||
           g == TS_GEOM_TRANSVERSE;
}

/* out row (ox0..ox1) from a source column: pixel ox reads src + (ox - ox0) * step bytes. */
#define DEFINE_COLUMN(NAME, PT)                                                                    \
    static void NAME(const char *src, ptrdiff_t step, int n, char *dst)                            \
    {                                                                                              \
        PT *d = (PT *)(void *)dst;                                                                 \
        for (int i = 0; i < n; i++)                                                                \
            memcpy(&d[i], src + (ptrdiff_t)i * step, sizeof(PT));                                  \
    }
DEFINE_COLUMN(column1, uint8_t)
DEFINE_COLUMN(column2, uint16_t)

/* 3-byte pixels as 4-byte moves: each store also writes the next pixel's first byte, which the
 * next store overwrites; the last pixel is moved as 3 bytes (the source is a staged tile with
 * slack after each row, so the 4-byte loads stay inside it). */
static void column3(const char *src, ptrdiff_t step, int n, char *dst)
{
    int i = 0;
    for (; i < n - 1; i++) {
        uint32_t v;
        memcpy(&v, src + (ptrdiff_t)i * step, 4);
        memcpy(dst + 3 * (size_t)i, &v, 4);
    }
    if (n > 0)
        memcpy(dst + 3 * (size_t)i, src + (ptrdiff_t)i * step, 3);
}
DEFINE_COLUMN(column4, uint32_t)
DEFINE_COLUMN(column6, px6)
DEFINE_COLUMN(column8, uint64_t)

typedef void (*column_fn)(const char *, ptrdiff_t, int, char *);

static column_fn column_of(size_t px)
{
    switch (px) {
    case 1: return column1;
    case 2: return column2;
    case 3: return column3;
    case 4: return column4;
    case 6: return column6;
    default: return column8;
    }
}

/* n pixels of src into dst in reverse order. */
#define DEFINE_REVERSE(NAME, PT)                                                                   \
    CPU_CLONES static void NAME(const char *src, int n, char *dst)                                 \
    {                                                                                              \
        const PT *s = (const PT *)(const void *)src;                                               \
        PT *d = (PT *)(void *)dst;                                                                 \
        for (int i = 0; i < n; i++)                                                                \
            memcpy(&d[i], &s[n - 1 - i], sizeof(PT));                                              \
    }
DEFINE_REVERSE(reverse1, uint8_t)
DEFINE_REVERSE(reverse2, uint16_t)

/* 3-byte pixels as 4-byte moves, as column3: the first pixel read (the row's last) and the last
 * one written as 3 bytes, so no access leaves the rows. */
static void reverse3(const char *src, int n, char *dst)
{
    if (n <= 0)
        return;
    memcpy(dst, src + 3 * (size_t)(n - 1), 3);
    for (int i = 1; i < n; i++) {
        uint32_t v;
        memcpy(&v, src + 3 * (size_t)(n - 1 - i), 4);
        if (i < n - 1)
            memcpy(dst + 3 * (size_t)i, &v, 4);
        else
            memcpy(dst + 3 * (size_t)i, &v, 3);
    }
}
DEFINE_REVERSE(reverse4, uint32_t)
DEFINE_REVERSE(reverse6, px6)
DEFINE_REVERSE(reverse8, uint64_t)

typedef void (*reverse_fn)(const char *, int, char *);

static reverse_fn reverse_of(size_t px)
{
    switch (px) {
    case 1: return reverse1;
    case 2: return reverse2;
    case 3: return reverse3;
    case 4: return reverse4;
    case 6: return reverse6;
    default: return reverse8;
    }
}

/* Output rows [y0, y1) of a flip, flop or rotate:180. */
static void rows_band(geom_ctx *x, int y0, int y1, char *tmp)
{
    const ts_image *in = x->in, *out = x->out;
    size_t px = ts_pixel_bytes(in), rb = ts_row_bytes(in);
    reverse_fn rev = reverse_of(px);
    for (int y = y0; y < y1; y++) {
        int sy = x->g == TS_GEOM_FLOP ? y : in->height - 1 - y;
        const char *s = (const char *)in->data + (size_t)sy * in->pitch;
        char *d = (char *)out->data + (size_t)y * out->pitch;
        if (x->fn) {
            x->fn(x->fctx, s, tmp, in->width);
            s = tmp;
        }
        if (x->g == TS_GEOM_FLIP)
            memcpy(d, s, rb);
        else
            rev(s, in->width, d);
    }
}

/* Output rows [y0, y1) of a swapping op, in tiles of TILE x TILE pixels. Output pixel (ox, oy)
 * reads source column sx(oy) of source row sy(ox); sy steps by +-1 with ox. */
static void tiles_band(geom_ctx *x, int y0, int y1, char *tmp)
{
    const ts_image *in = x->in, *out = x->out;
    int W = in->width, H = in->height, ow = out->width;
    size_t px = ts_pixel_bytes(in);
    column_fn col = column_of(px);
    int flip_x = x->g == TS_GEOM_ROT270 || x->g == TS_GEOM_TRANSVERSE; /* sx = W - 1 - oy */
    int flip_y = x->g == TS_GEOM_ROT90 || x->g == TS_GEOM_TRANSVERSE;  /* sy = H - 1 - ox */
    for (int ox0 = 0; ox0 < ow; ox0 += TILE) {
        int ox1 = ox0 + TILE < ow ? ox0 + TILE : ow, nx = ox1 - ox0;
        /* the source rows of this tile: sy from ox0 to ox1 - 1 */
        int sya = flip_y ? H - ox1 : ox0;                 /* lowest source row */
        int sxa = flip_x ? W - y1 : y0, nsx = y1 - y0;    /* lowest source column, count */
        /* the tile's source rectangle staged in tmp, rows TILE pixels apart: reading down a
         * column of the image itself strides a whole row, and rows a multiple of 64 bytes apart
         * fall into few L1 sets (conflict misses); staged rows 3 lines apart spread over all */
        for (int i = 0; i < nx; i++) {
            const char *row =
                (const char *)in->data + (size_t)(sya + i) * in->pitch + (size_t)sxa * px;
            char *t = tmp + (size_t)i * TILE * px;
            if (x->fn)
                x->fn(x->fctx, row, t, nsx);
            else
                memcpy(t, row, (size_t)nsx * px);
        }
        const char *base = tmp;
        ptrdiff_t pitch = (ptrdiff_t)(TILE * px);
        for (int oy = y0; oy < y1; oy++) {
            int sx = (flip_x ? W - 1 - oy : oy) - sxa;
            int sy0 = (flip_y ? H - 1 - ox0 : ox0) - sya;
            const char *s = base + (ptrdiff_t)sy0 * pitch + (ptrdiff_t)sx * (ptrdiff_t)px;
            char *d = (char *)out->data + (size_t)oy * out->pitch + (size_t)ox0 * px;
            col(s, flip_y ? -pitch : pitch, nx, d);
        }
    }
}

static void geom_task(void *arg, int task, int thread)
{
    geom_ctx *x = arg;
    int y0 = task * x->band, y1 = y0 + x->band < x->out->height ? y0 + x->band : x->out->height;
    char *tmp = NULL;
    if (x->fn || geom_swaps(x->g)) { /* + slack: column3's 4-byte loads */
        size_t px = ts_pixel_bytes(x->in);
        tmp = malloc(geom_swaps(x->g) ? (size_t)TILE * TILE * px + 8 : ts_row_bytes(x->in));
        if (!tmp) {
            __atomic_store_n(&x->failed, 1, __ATOMIC_RELAXED);
            return;
        }
    }
    if (geom_swaps(x->g))
        tiles_band(x, y0, y1, tmp);
    else
        rows_band(x, y0, y1, tmp);
    free(tmp);
}

ts_status cpu_geom_apply(ts_geom g, const ts_image *in, const ts_image *out, cpu_row_fn fn,
                         const void *fctx)
{
    int ow, oh;
    if ((unsigned)g > TS_GEOM_FLOP)
        return ts_fail(TS_ERR_INVALID, "bad geometry op");
    ts_geom_size(g, in->width, in->height, &ow, &oh);
    if (out->width != ow || out->height != oh || out->channels != in->channels ||
        out->bytes != in->bytes)
        return ts_fail(TS_ERR_INVALID, "geom: output image has the wrong shape");
    geom_ctx x = {.g = g, .in = in, .out = out, .fn = fn, .fctx = fctx};
    /* swapping ops: bands one tile high (a tile's source columns are its output rows) */
    x.band = geom_swaps(g) ? TILE : cpu_band_rows(oh, 16);
    int ntasks = (oh + x.band - 1) / x.band;
    cpu_for(ntasks, geom_task, &x);
    if (x.failed)
        return ts_fail(TS_ERR_NOMEM, "out of memory for a %dx%d geometry op", in->width,
                       in->height);
    return TS_OK;
}

ts_status cpu_geom_run(const ts_job *job)
{
    return cpu_geom_apply(job->op->geom, &job->in, &job->out, NULL, NULL);
}
