/* viewer_anim.c - the frames of an animated GIF. tsio_load (image_io.c) decodes the first frame
 * of every format; only the viewer plays the others, so their decoder lives here: stb_image's GIF
 * decoder alone (STBI_ONLY_GIF), static to this file, under the same kind of allocation budget
 * as image_io.c's (the frames' pixels plus a margin) and a cap on the file's size. */
#include "viewer_anim.h"
#include "image_io.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAME_PIXELS ((uint64_t)1 << 28) /* all frames together: 1 GB of RGBA */

static _Thread_local size_t budget; /* bytes this decode may still allocate */

static void *anim_malloc(size_t n)
{
    if (n > budget)
        return NULL;
    budget -= n;
    return malloc(n ? n : 1);
}

static void *anim_realloc(void *p, size_t old_n, size_t new_n)
{
    size_t grow = new_n > old_n ? new_n - old_n : 0;
    if (grow > budget)
        return NULL;
    budget -= grow;
    return realloc(p, new_n ? new_n : 1);
}

#define STBI_MALLOC(n) anim_malloc(n)
#define STBI_REALLOC_SIZED(p, old_n, new_n) anim_realloc(p, old_n, new_n)
#define STBI_FREE(p) free(p)
#define STBI_NO_STDIO
#define STBI_ONLY_GIF
#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#endif
#include <stb_image.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
/* STBI_ONLY_GIF leaves stb's zlib and PNG functions declared static and undefined; the compiler
 * names them at the end of the file */
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

int vw_anim_load(const char *path, uint64_t max_pixels, vw_anim *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    size_t len;
    unsigned char *buf;
    const tsio_codec *c;
    /* the one guarded read: a file that is not a GIF is read no further than its head */
    ts_status st = tsio_read_file(path, max_pixels, NULL, &buf, &len, &c, err, errlen);
    if (st != TS_OK)
        return -1;
    if (strcmp(c->name, "GIF") != 0) {
        free(buf);
        return 0;
    }
    int w, h, comp, n = 0, *delays = NULL;
    budget = (size_t)1 << 20; /* the header read allocates stb's GIF state */
    if (len < 6 || memcmp(buf, "GIF8", 4) != 0 || len > (size_t)INT32_MAX ||
        !stbi_info_from_memory(buf, (int)len, &w, &h, &comp)) {
        budget = 0;
        free(buf);
        return 0;
    }
    uint64_t most = max_pixels && max_pixels < MAX_FRAME_PIXELS ? max_pixels : MAX_FRAME_PIXELS;
    /* the frames (4 bytes a pixel), stb's two working frames and its tables */
    budget = (size_t)(most * 4 + (uint64_t)w * h * 8 + ((size_t)1 << 20));
    unsigned char *px = stbi_load_gif_from_memory(buf, (int)len, &delays, &w, &h, &n, &comp, 4);
    budget = 0;
    free(buf);
    if (!px) {
        snprintf(err, errlen, "GIF frames: %s (the limit is %llu pixels in all)",
                 stbi_failure_reason(), (unsigned long long)most);
        return -1;
    }
    if (n < 2 || (uint64_t)w * h * n > most) {
        free(px);
        free(delays);
        return 0; /* still, or more than the cap allowed: shown as one frame */
    }
    a->n = n;
    a->w = w;
    a->h = h;
    a->px = px;
    a->delay_ms = delays;
    for (int i = 0; i < n; i++) /* 0 or 10 ms: browsers show such frames for 100 ms */
        a->delay_ms[i] = a->delay_ms[i] <= 10 ? 100 : a->delay_ms[i];
    return n;
}

void vw_anim_free(vw_anim *a)
{
    free(a->px);
    free(a->delay_ms);
    memset(a, 0, sizeof *a);
}
