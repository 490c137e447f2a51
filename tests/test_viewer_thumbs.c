/* test_viewer_thumbs.c - thumbnail mode's parts without a display (viewer_thumbs.c): the grid's
 * layout and hit test, the disk cache (key, round trip, misses for another size, mtime or path,
 * atomic write), the EXIF thumbnail and JPEG header readers (exif.c), and the workers making a
 * folder's thumbnails into the cache and reading them back. */
#include "exif.h"
#include "image_io.h"
#include "testutil.h"
#include "util.h"
#include "viewer_thumbs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TEST(grid_layout_keeps_the_selection_on_screen)
{
    vw_grid_geom g = {0};
    int cell = VW_THUMB_SIZE + VW_THUMB_PAD;
    vw_grid_fit(&g, 4 * cell + 10, 3 * cell + 20, 100, 0);
    CHECK(g.cols == 4 && g.rows == 4 && g.top == 0); /* the 4th row is cut */
    vw_grid_fit(&g, 4 * cell + 10, 3 * cell + 20, 100, 13); /* row 3: scrolls by one */
    CHECK(g.top == 1);
    vw_grid_fit(&g, 4 * cell + 10, 3 * cell + 20, 100, 5); /* row 1: on screen, no scroll */
    CHECK(g.top == 1);
    vw_grid_fit(&g, 4 * cell + 10, 3 * cell + 20, 100, 0);
    CHECK(g.top == 0);
    vw_grid_fit(&g, 4 * cell + 10, 3 * cell + 20, 100, 99); /* the last row at the bottom */
    CHECK(g.top == 24 - 3 + 1);
    vw_grid_fit(&g, 50, 50, 3, 2); /* smaller than a cell: one column */
    CHECK(g.cols == 1 && g.top == 2);
    vw_grid_fit(&g, 4 * cell, 3 * cell, 100, 0);
    CHECK(vw_grid_hit(&g, 100, 0, 0) == 0);
    CHECK(vw_grid_hit(&g, 100, cell + 1, cell + 1) == 5);
    CHECK(vw_grid_hit(&g, 100, 4 * cell + 1, 0) == -1); /* right of the columns */
    CHECK(vw_grid_hit(&g, 6, cell + 1, cell + 1) == 5 && vw_grid_hit(&g, 5, cell + 1, cell + 1) == -1);
}

TEST(thumbnail_cache_round_trip_and_misses)
{
    char dir[] = "/tmp/tessera-thumbtest.XXXXXX", file[1200], abs[1024], other[1200], abs2[1024];
    CHECK(mkdtemp(dir) != NULL);
    char *img = path_join(dir, "x.png"), *img2 = path_join(dir, "y.png");
    FILE *f = fopen(img, "wb");
    fputs("not read here", f);
    fclose(f);
    f = fopen(img2, "wb");
    fputs("not read here", f);
    fclose(f);
    uint64_t size, size2;
    int64_t mt, mt2;
    CHECK(vw_thumb_cache_file(dir, img, file, sizeof file, abs, sizeof abs, &size, &mt) == 0);
    CHECK(size == 13 && strcmp(abs, img) == 0);
    CHECK(vw_thumb_cache_file(dir, img2, other, sizeof other, abs2, sizeof abs2, &size2, &mt2) == 0);
    CHECK(strcmp(file, other) != 0); /* another path, another name */
    ts_image im, back;
    CHECK(ts_image_alloc(&im, 7, 5, 3, 1) == TS_OK);
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 7; x++)
            for (int c = 0; c < 3; c++)
                ts_put(&im, x, y, c, (unsigned)(x * 30 + y * 7 + c));
    CHECK(vw_thumb_cache_read(file, abs, size, mt, &back) != 0); /* nothing yet */
    CHECK(vw_thumb_cache_write(file, abs, size, mt, &im) == 0);
    CHECK(vw_thumb_cache_read(file, abs, size, mt, &back) == 0);
    CHECK(back.width == 7 && back.height == 5 && back.channels == 3);
    int same = 1;
    for (int y = 0; y < 5; y++)
        same &= memcmp((char *)back.data + y * back.pitch, (char *)im.data + y * im.pitch, 21) == 0;
    CHECK(same);
    ts_image_free(&back);
    CHECK(vw_thumb_cache_read(file, abs, size + 1, mt, &back) != 0);  /* the file grew */
    CHECK(vw_thumb_cache_read(file, abs, size, mt + 1, &back) != 0);  /* touched */
    CHECK(vw_thumb_cache_read(file, abs2, size, mt, &back) != 0);     /* a hash collision */
    f = fopen(file, "r+b"); /* truncated: a miss, never a short thumbnail */
    CHECK(f && ftruncate(fileno(f), 60) == 0);
    fclose(f);
    CHECK(vw_thumb_cache_read(file, abs, size, mt, &back) != 0);
    char cmd[1200];
    ts_image_free(&im);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    free(img);
    free(img2);
}

/* A little-endian EXIF block: IFD0 with Orientation o, linking to an IFD1 whose thumbnail
 * (JPEGInterchangeFormat) is `tlen` bytes of `thumb` stored after it. Returns its length. */
static size_t make_exif(unsigned char *b, int o, const unsigned char *thumb, size_t tlen)
{
    size_t n = 0;
    static const unsigned char head[] = {'E', 'x', 'i', 'f', 0, 0, 'I', 'I', 42, 0, 8, 0, 0, 0};
    memcpy(b, head, sizeof head);
    n = sizeof head;
    unsigned char *t = b + 6; /* offsets count from the TIFF header */
    size_t ifd1 = 8 + 2 + 12 + 4, at = ifd1 + 2 + 2 * 12 + 4;
    unsigned char ifd0[] = {1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, (unsigned char)o, 0, 0, 0,
                            (unsigned char)ifd1, 0, 0, 0};
    memcpy(t + 8, ifd0, sizeof ifd0);
    unsigned char e1[] = {2, 0,
                          0x01, 0x02, 4, 0, 1, 0, 0, 0, (unsigned char)at, 0, 0, 0,
                          0x02, 0x02, 4, 0, 1, 0, 0, 0, (unsigned char)tlen, 0, 0, 0,
                          0, 0, 0, 0};
    memcpy(t + ifd1, e1, sizeof e1);
    memcpy(t + at, thumb, tlen);
    n = 6 + at + tlen;
    return n;
}

TEST(exif_thumbnail_and_jpeg_header_are_found_and_bounded)
{
    unsigned char exif[256], jpg[512];
    const unsigned char thumb[] = {0xFF, 0xD8, 0xFF, 0xD9, 1, 2};
    size_t len = make_exif(exif, 6, thumb, sizeof thumb), off, tl;
    CHECK(tsio_exif_orientation(exif, len) == 6);
    CHECK(tsio_exif_thumbnail(exif, len, &off, &tl) == 1);
    CHECK(tl == sizeof thumb && memcmp(exif + off, thumb, tl) == 0);
    CHECK(tsio_exif_thumbnail(exif, len - 1, &off, &tl) == 0); /* runs past the block */
    CHECK(tsio_exif_thumbnail(exif, 20, &off, &tl) == 0);
    size_t plain_len;
    unsigned char *plain = tsio_exif_without_thumbnail(exif, len, &plain_len);
    CHECK(plain && tsio_exif_thumbnail(plain, plain_len, &off, &tl) == 0);
    free(plain);
    /* SOI, APP1 (the block), SOF0 (8-bit, 300 high, 400 wide, 3 components), SOS */
    size_t n = 0;
    jpg[n++] = 0xFF, jpg[n++] = 0xD8, jpg[n++] = 0xFF, jpg[n++] = 0xE1;
    jpg[n++] = (unsigned char)((len + 2) >> 8), jpg[n++] = (unsigned char)(len + 2);
    memcpy(jpg + n, exif, len);
    n += len;
    static const unsigned char sof[] = {0xFF, 0xC0, 0, 17, 8, 1, 44, 1, 144, 3,
                                        1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1};
    memcpy(jpg + n, sof, sizeof sof);
    n += sizeof sof;
    jpg[n++] = 0xFF, jpg[n++] = 0xDA, jpg[n++] = 0, jpg[n++] = 8;
    const unsigned char *e;
    size_t el;
    int w, h;
    CHECK(tsio_jpeg_exif(jpg, n, &e, &el, &w, &h) == 0);
    CHECK(e == jpg + 6 && el == len && w == 400 && h == 300);
    CHECK(tsio_jpeg_exif(jpg, 6 + len, &e, &el, &w, &h) == -1); /* cut before the frame header */
    jpg[4] = 0xFF; /* APP1 longer than the file */
    CHECK(tsio_jpeg_exif(jpg, n, &e, &el, &w, &h) == -1);
    CHECK(tsio_jpeg_exif((const unsigned char *)"GIF89a", 6, &e, &el, &w, &h) == -1);
}

static void wake_none(void) {}

TEST(workers_make_a_folders_thumbnails_then_read_them_from_the_cache)
{
    char dir[] = "/tmp/tessera-thumbwork.XXXXXX", cache[1200], *paths[5];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    setenv("XDG_CACHE_HOME", cache, 1);
    uint64_t seed = 5;
    for (int i = 0; i < 5; i++) {
        char name[32];
        snprintf(name, sizeof name, "%d.png", i);
        paths[i] = path_join(dir, name);
        ts_image im = tu_random_image(400 + 97 * i, 90 + 31 * i, i % 4 + 1, i == 2 ? 2 : 1, &seed);
        char notice[128], err[256];
        CHECK(tsio_save(paths[i], &im, NULL, notice, sizeof notice, err, sizeof err) == TS_OK);
        ts_image_free(&im);
    }
    FILE *f = fopen(paths[4], "wb"); /* a bad file: fails, the others are made */
    fputs("bad", f);
    fclose(f);
    for (int round = 0; round < 2; round++) {
        vw_thumbs t;
        CHECK(vw_thumbs_start(&t, paths, 5, 2, TS_BACKEND_CPU, 0, wake_none) == 0);
        vw_thumbs_want(&t, 3, 4);
        for (int k = 0; k < 2000 && !vw_thumbs_finished(&t); k++)
            usleep(5000);
        CHECK(vw_thumbs_finished(&t));
        CHECK(t.failed == 1 && t.cached == (round ? 4 : 0));
        for (int i = 0; i < 4; i++) {
            int failed;
            const ts_image *im = vw_thumbs_get(&t, i, &failed);
            CHECK(im && !failed && im->channels == 3 && im->bytes == 1);
            CHECK(im && (im->width == VW_THUMB_SIZE || im->height == VW_THUMB_SIZE ||
                         (im->width <= VW_THUMB_SIZE && im->height <= VW_THUMB_SIZE)));
            CHECK(im && im->width <= VW_THUMB_SIZE && im->height <= VW_THUMB_SIZE);
        }
        int failed;
        CHECK(vw_thumbs_get(&t, 4, &failed) == NULL && failed);
        vw_thumbs_free(&t);
    }
    unsetenv("XDG_CACHE_HOME");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    for (int i = 0; i < 5; i++)
        free(paths[i]);
}
