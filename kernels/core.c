/* core.c - status strings, the per-thread error detail, and host images. */
#include "tessera.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>

static _Thread_local char ts__detail[512];

const char *ts_status_str(ts_status s)
{
    switch (s) {
    case TS_OK: return "ok";
    case TS_ERR_INVALID: return "invalid argument";
    case TS_ERR_NOMEM: return "out of memory";
    case TS_ERR_TOO_LARGE: return "too large";
    case TS_ERR_UNSUPPORTED: return "not supported";
    case TS_ERR_NO_GPU: return "no usable GPU";
    case TS_ERR_CUDA: return "CUDA error";
    case TS_ERR_IO: return "I/O error";
    case TS_ERR_FORMAT: return "bad format";
    }
    return "unknown error";
}

/* Set once by the app before its threads start (then only read): no lock. */
static ts_gpu_settings ts__gpu_settings;

void ts_gpu_set(const ts_gpu_settings *s)
{
    if (s)
        ts__gpu_settings = *s;
    else
        memset(&ts__gpu_settings, 0, sizeof ts__gpu_settings);
}

const ts_gpu_settings *ts_gpu_get(void) { return &ts__gpu_settings; }

const char *ts_error_detail(void) { return ts__detail; }

void ts_clear_error(void) { ts__detail[0] = '\0'; }

ts_status ts_fail(ts_status s, const char *fmt, ...)
{
    char tmp[sizeof ts__detail];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap); /* fmt may use the old detail as an argument */
    va_end(ap);
    memcpy(ts__detail, tmp, sizeof tmp);
    return s;
}

ts_status ts_image_geometry(int width, int height, int channels, int bytes, size_t *row_bytes,
                            size_t *total_bytes)
{
    if (width < 1 || height < 1)
        return ts_fail(TS_ERR_INVALID, "image size %dx%d is empty", width, height);
    if (width > TS_MAX_DIM || height > TS_MAX_DIM)
        return ts_fail(TS_ERR_TOO_LARGE, "image size %dx%d exceeds %d on a side", width, height,
                       TS_MAX_DIM);
    if (channels < 1 || channels > 4)
        return ts_fail(TS_ERR_INVALID, "%d channels (1 to 4 supported)", channels);
    if (bytes != 1 && bytes != 2)
        return ts_fail(TS_ERR_INVALID, "%d bytes per sample (1 or 2 supported)", bytes);
    size_t row = (size_t)width * (size_t)channels * (size_t)bytes;
    if ((size_t)height > SIZE_MAX / row)
        return ts_fail(TS_ERR_TOO_LARGE, "image size %dx%d overflows", width, height);
    if (row_bytes)
        *row_bytes = row;
    if (total_bytes)
        *total_bytes = row * (size_t)height;
    return TS_OK;
}

static void set_shape(ts_image *im, size_t pitch, int width, int height, int channels, int bytes)
{
    im->pitch = pitch;
    im->width = width;
    im->height = height;
    im->channels = channels;
    im->bytes = bytes;
}

/* Large host images start on a 2 MiB boundary and ask for transparent huge pages (where the
 * kernel gives them only on request): the first write to a fresh image is then one fault per
 * 2 MiB, not per 4 KiB page, which is most of the time of an op at memory speed (a flip). */
#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_MIN ((size_t)4 << 20)

ts_status ts_image_alloc(ts_image *im, int width, int height, int channels, int bytes)
{
    size_t row, total;
    ts_status st = ts_image_geometry(width, height, channels, bytes, &row, &total);
    memset(im, 0, sizeof *im);
    if (st != TS_OK)
        return st;
    im->data = NULL;
    if (total >= HUGE_MIN) { /* 2 MiB pages: a 48 MB image faults 24 times instead of 12288 */
        if (posix_memalign(&im->data, HUGE_PAGE, total) != 0)
            im->data = NULL;
#ifdef MADV_HUGEPAGE
        else
            madvise(im->data, total, MADV_HUGEPAGE); /* a hint: failure changes nothing */
#endif
    } else {
        im->data = malloc(total);
    }
    if (!im->data)
        return ts_fail(TS_ERR_NOMEM, "cannot allocate %zu bytes for a %dx%d image", total, width,
                       height);
    set_shape(im, row, width, height, channels, bytes);
    return TS_OK;
}

void ts_image_free(ts_image *im)
{
    if (!im)
        return;
    free(im->data);
    memset(im, 0, sizeof *im);
}

int ts_image_equal(const ts_image *a, const ts_image *b)
{
    if (a->width != b->width || a->height != b->height || a->channels != b->channels ||
        a->bytes != b->bytes)
        return 0;
    size_t row = ts_row_bytes(a);
    for (int y = 0; y < a->height; y++)
        if (memcmp((const char *)a->data + (size_t)y * a->pitch,
                   (const char *)b->data + (size_t)y * b->pitch, row) != 0)
            return 0;
    return 1;
}

ts_status ts_gpu_image_reserve(ts_image *d_im, size_t *capacity, int width, int height,
                               int channels, int bytes)
{
    size_t row;
    ts_status st = ts_image_geometry(width, height, channels, bytes, &row, NULL);
    if (st != TS_OK)
        return st;
    size_t pitch = ts_gpu_pitch(row);
    if ((size_t)height > SIZE_MAX / pitch)
        return ts_fail(TS_ERR_TOO_LARGE, "image size %dx%d overflows", width, height);
    size_t need = pitch * (size_t)height;
    if (!d_im->data || need > *capacity) {
        ts_gpu_free(d_im->data);
        d_im->data = NULL;
        *capacity = 0;
        if ((st = ts_gpu_malloc(&d_im->data, need)) != TS_OK)
            return st;
        *capacity = need;
    }
    set_shape(d_im, pitch, width, height, channels, bytes);
    return TS_OK;
}

ts_status ts_gpu_image_alloc(ts_image *d_im, int width, int height, int channels, int bytes)
{
    size_t capacity = 0;
    memset(d_im, 0, sizeof *d_im);
    ts_status st = ts_gpu_image_reserve(d_im, &capacity, width, height, channels, bytes);
    if (st != TS_OK)
        memset(d_im, 0, sizeof *d_im);
    return st;
}
