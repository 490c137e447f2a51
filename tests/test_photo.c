/* test_photo.c - the EXIF and ICC readers (app/codec/exif.c) on hand-built and hostile blocks, and the
 * orientation chain and metadata rules of app/codec/photo.c. End to end against Pillow: tests/photos.py. */
#include "exif.h"
#include "photo.h"
#include "photo_io.h"
#include "testutil.h"
#include "tst.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

/* An EXIF block: header in byte order `be`, IFD0 with Orientation o (SHORT), a second entry, and
 * a link to IFD1 (which holds one entry). 50 bytes. */
static size_t make_block(unsigned char *b, int be, unsigned o)
{
#define P16(at, v) (be ? (b[at] = (unsigned char)((v) >> 8), b[(at) + 1] = (unsigned char)(v)) \
                       : (b[at] = (unsigned char)(v), b[(at) + 1] = (unsigned char)((v) >> 8)))
#define P32(at, v) (be ? (P16(at, (v) >> 16), P16((at) + 2, (v) & 0xFFFF)) \
                       : (P16(at, (v) & 0xFFFF), P16((at) + 2, (v) >> 16)))
    memset(b, 0, 50);
    memcpy(b, be ? "MM\0*" : "II*\0", 4);
    P32(4, 8u);
    P16(8, 2u);                                      /* two entries */
    P16(10, 0x010Fu), P16(12, 2u), P32(14, 4u);      /* Make, ASCII x4, inline "cam" */
    memcpy(b + 18, "cam", 4);
    P16(22, 0x0112u), P16(24, 3u), P32(26, 1u), P16(30, o);
    P32(34, 38u);                                    /* IFD1 at 38 */
    P16(38, 1u), P16(40, 0x0103u), P16(42, 3u), P32(44, 1u), P16(48, 6u);
    return 50; /* IFD1's next link is cut: readers of IFD0 never get there */
#undef P16
#undef P32
}

TEST(exif_orientation_both_byte_orders)
{
    unsigned char b[64];
    for (int be = 0; be < 2; be++)
        for (unsigned o = 1; o <= 8; o++) {
            size_t n = make_block(b, be, o);
            CHECKF(tsio_exif_orientation(b, n) == (int)o, "be %d o %u", be, o);
            CHECK(tsio_exif_valid(b, n));
        }
    size_t n = make_block(b, 0, 9); /* out of range */
    CHECK(tsio_exif_orientation(b, n) == 0 && tsio_exif_valid(b, n));
    unsigned char pre[70];
    memcpy(pre, "Exif\0\0", 6);
    n = make_block(pre + 6, 1, 6);
    CHECK(tsio_exif_orientation(pre, n + 6) == 6);
}

TEST(exif_upright_resets_orientation_and_drops_ifd1)
{
    unsigned char b[64];
    for (int be = 0; be < 2; be++) {
        size_t n = make_block(b, be, 6), m = 0;
        unsigned char *u = tsio_exif_upright(b, n, &m);
        CHECK(u && m == n);
        CHECK(tsio_exif_orientation(u, m) == 1);
        CHECK(memcmp(u + 18, "cam", 4) == 0);             /* other tags kept */
        CHECK(u[34] == 0 && u[35] == 0 && u[36] == 0 && u[37] == 0); /* no IFD1 link */
        CHECK(memcmp(u, b, 30) == 0);                     /* nothing else changed before */
        free(u);
    }
    unsigned char pre[70], *u;
    size_t m;
    memcpy(pre, "Exif\0\0", 6);
    size_t n = make_block(pre + 6, 0, 3);
    CHECK((u = tsio_exif_upright(pre, n + 6, &m)) != NULL && m == n && memcmp(u, "II*\0", 4) == 0);
    free(u);
}

TEST(exif_hostile_blocks)
{
    unsigned char b[64], *u;
    size_t n = make_block(b, 0, 6), m;
    for (size_t cut = 0; cut < 38; cut++) { /* any cut through header or IFD0 */
        CHECKF(tsio_exif_orientation(b, cut) == 0, "cut %zu", cut);
        CHECKF((u = tsio_exif_upright(b, cut, &m)) == NULL && m == 0, "cut %zu", cut);
    }
    CHECK(tsio_exif_orientation(b, n) == 6);
    b[4] = 60; /* IFD0 past the end */
    CHECK(tsio_exif_orientation(b, n) == 0 && !tsio_exif_valid(b, n));
    b[4] = 8;
    b[8] = 0xFF, b[9] = 0xFF; /* 65535 entries */
    CHECK(tsio_exif_orientation(b, n) == 0 && !tsio_exif_valid(b, n));
    b[8] = 2, b[9] = 0;
    b[24] = 4; /* Orientation as LONG: not the standard's SHORT */
    CHECK(tsio_exif_orientation(b, n) == 0);
    b[24] = 3;
    b[26] = 2; /* count 2 */
    CHECK(tsio_exif_orientation(b, n) == 0);
    CHECK(tsio_exif_orientation(NULL, 0) == 0 && tsio_exif_orientation((const unsigned char *)"MM", 2) == 0);
}

TEST(exif_make_minimal_block)
{
    unsigned char b[26];
    for (int o = 1; o <= 8; o++) {
        CHECK(tsio_exif_make(o, b) == 26);
        CHECK(tsio_exif_orientation(b, 26) == o);
    }
    CHECK(tsio_exif_make(0, b) == 0 && tsio_exif_make(9, b) == 0);
}

/* An ICC profile of 128 header bytes, one tag ('desc') of type v2 'desc' or v4 'mluc'. */
TEST(icc_description_and_srgb)
{
    unsigned char p[512];
    char d[64];
    for (int v4 = 0; v4 < 2; v4++) {
        size_t n = tu_make_icc(p, "sRGB IEC61966-2.1", v4);
        CHECK(tsio_icc_description(p, n, d, sizeof d) && strcmp(d, "sRGB IEC61966-2.1") == 0);
        CHECK(!tsio_icc_is_non_srgb(p, n));
        n = tu_make_icc(p, "Adobe RGB (1998)", v4);
        CHECK(tsio_icc_description(p, n, d, sizeof d) && strcmp(d, "Adobe RGB (1998)") == 0);
        CHECK(tsio_icc_is_non_srgb(p, n));
        CHECK(tsio_icc_description(p, n - 5, d, sizeof d) == 0); /* tag past the end */
        tsio_meta m = {.icc = p, .icc_len = n};
        char line[128];
        CHECK(photo_icc_hud(&m, line, sizeof line) && strstr(line, "Adobe RGB (1998)"));
    }
    CHECK(!tsio_icc_is_non_srgb(NULL, 0));
    CHECK(tsio_icc_description(p, 100, d, sizeof d) == 0 && d[0] == '\0');
}

/* Each orientation's op composed with its EXIF meaning: pixel (x, y) of the upright image is
 * stored at the position the EXIF standard gives (0th row / 0th column description). */
TEST(orientation_ops_match_exif_meaning)
{
    ts_image st;
    CHECK(ts_image_alloc(&st, 5, 3, 1, 1) == TS_OK);
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 5; x++)
            ((unsigned char *)st.data)[y * 5 + x] = (unsigned char)(y * 5 + x);
    for (int o = 1; o <= 8; o++) {
        unsigned char blk[26];
        tsio_exif_make(o, blk);
        tsio_meta m = {.exif = blk, .exif_len = 26};
        ts_image im;
        CHECK(ts_image_alloc(&im, 5, 3, 1, 1) == TS_OK);
        memcpy(im.data, st.data, 15);
        int applied = 0;
        CHECK(photo_orient_image(NULL, &im, &m, &applied) == TS_OK && applied == o);
        int W = o >= 5 ? 3 : 5, H = o >= 5 ? 5 : 3;
        CHECKF(im.width == W && im.height == H, "o %d", o);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                int sx, sy; /* where upright (x, y) is stored */
                switch (o) {
                case 1: sx = x, sy = y; break;
                case 2: sx = 4 - x, sy = y; break;
                case 3: sx = 4 - x, sy = 2 - y; break;
                case 4: sx = x, sy = 2 - y; break;
                case 5: sx = y, sy = x; break;
                case 6: sx = y, sy = 2 - x; break;
                case 7: sx = 4 - y, sy = 2 - x; break;
                default: sx = 4 - y, sy = x; break;
                }
                CHECKF(ts_get(&im, x, y, 0) == ts_get(&st, sx, sy, 0), "o %d at %d,%d", o, x, y);
            }
        ts_image_free(&im);
    }
    ts_image_free(&st);
}

TEST(chain_and_meta_rules)
{
    unsigned char b[64];
    size_t n = make_block(b, 1, 8);
    unsigned char icc[3] = {1, 2, 3};
    tsio_meta m = {.exif = b, .exif_len = n, .icc = icc, .icc_len = 3}, out;
    ts_chain user, c;
    char err[128];
    int o;
    CHECK(ts_chain_parse("flip,gauss:3", &user, err, sizeof err) == TS_OK);
    CHECK(photo_chain(&m, 1, &user, &c, &o) == TS_OK && o == 8 && c.n == 3);
    CHECK(strcmp(c.ops[0].text, "rotate:270") == 0 && strcmp(c.ops[1].text, "flip") == 0);
    ts_chain_free(&c);
    CHECK(photo_chain(&m, 0, &user, &c, &o) == TS_OK && o == 1 && c.n == 2);
    ts_chain_free(&c);
    ts_chain_free(&user);
    CHECK(photo_meta_out(&m, 1, 1, 0, &out) == TS_OK && !out.exif && !out.icc);
    CHECK(photo_meta_out(&m, 0, 1, 0, &out) == TS_OK && out.icc_len == 3 && out.exif_len == n);
    CHECK(tsio_exif_orientation(out.exif, out.exif_len) == 1 && memcmp(out.icc, icc, 3) == 0);
    tsio_meta_free(&out);
    CHECK(photo_meta_out(&m, 0, 0, 0, &out) == TS_OK && out.exif_len == n &&
          memcmp(out.exif, b, n) == 0); /* not turned: kept as read */
    tsio_meta_free(&out);
    unsigned char pre[70];
    memcpy(pre, "Exif\0\0", 6);
    memcpy(pre + 6, b, n);
    tsio_meta pm = {.exif = pre, .exif_len = n + 6};
    CHECK(photo_meta_out(&pm, 0, 0, 0, &out) == TS_OK && out.exif_len == n &&
          memcmp(out.exif, b, n) == 0); /* the prefix is not carried */
    tsio_meta_free(&out);
    /* pixels changed by the chain, not turned: the thumbnail goes, the stored tag stays */
    CHECK(tsio_exif_has_thumbnail(b, n));
    CHECK(photo_meta_out(&m, 0, 0, 1, &out) == TS_OK && out.exif_len == n &&
          !tsio_exif_has_thumbnail(out.exif, out.exif_len) &&
          tsio_exif_orientation(out.exif, out.exif_len) == 8);
    tsio_meta_free(&out);
    CHECK(photo_meta_out(&m, 0, 1, 1, &out) == TS_OK && !tsio_exif_has_thumbnail(out.exif, n) &&
          tsio_exif_orientation(out.exif, out.exif_len) == 1);
    tsio_meta_free(&out);
    tsio_meta bad = {.exif = (unsigned char *)"junk", .exif_len = 4};
    CHECK(photo_meta_out(&bad, 0, 1, 0, &out) == TS_OK && !out.exif); /* malformed: not written */
}

TEST(gif_frame_count)
{
    /* header, logical screen without a table, then N image blocks of 1x1 with 1 data byte */
    unsigned char g[256] = "GIF89a";
    size_t i = 6;
    g[i++] = 1, g[i++] = 0, g[i++] = 1, g[i++] = 0, g[i++] = 0, g[i++] = 0, g[i++] = 0;
    for (int f = 0; f < 4; f++) {
        static const unsigned char gce[] = {0x21, 0xF9, 4, 0, 10, 0, 0, 0};
        memcpy(g + i, gce, sizeof gce), i += sizeof gce;
        static const unsigned char img[] = {0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 1, 0x44, 0};
        memcpy(g + i, img, sizeof img), i += sizeof img;
    }
    g[i++] = 0x3B;
    CHECK(tsio_gif_frames(g, i) == 4);
    CHECK(tsio_gif_frames(g, 13 + 8 + 14) == 1);
    CHECK(tsio_gif_frames(g, 20) == 0);
    g[13] = 0x99; /* junk after the screen: stop */
    CHECK(tsio_gif_frames(g, i) == 0);
}

/* The marker scan (the GPU decoder's metadata) finds what libjpeg-turbo wrote: EXIF and an ICC
 * profile over three APP2 segments; a file cut anywhere gives no partial profile. */
TEST(jpeg_meta_scan_matches_the_writer)
{
    ts_image im;
    CHECK(ts_image_alloc(&im, 8, 8, 3, 1) == TS_OK);
    memset(im.data, 90, ts_row_bytes(&im) * 8);
    unsigned char blk[64];
    size_t bn = make_block(blk, 0, 6), icc_len = 150000;
    unsigned char *icc = malloc(icc_len);
    CHECK(icc != NULL);
    for (size_t i = 0; i < icc_len; i++)
        icc[i] = (unsigned char)(i * 7 + i / 251);
    tsio_meta m = {.exif = blk, .exif_len = bn, .icc = icc, .icc_len = icc_len};
    char path[] = "/tmp/tessera-photo-XXXXXX.jpg", err[256], notice[128];
    int fd = mkstemps(path, 4);
    CHECK(fd >= 0);
    close(fd);
    tsio_save_opts so = {.format = TSIO_JPEG, .meta = &m};
    ts_status st = tsio_save(path, &im, &so, notice, sizeof notice, err, sizeof err);
    ts_image_free(&im);
    FILE *f = fopen(path, "rb");
    unsigned char *buf = malloc(400000);
    size_t len = f && buf ? fread(buf, 1, 400000, f) : 0;
    if (f)
        fclose(f);
    unlink(path);
    CHECKF(st == TS_OK && len > icc_len, "%s", err);
    tsio_meta got = {0};
    CHECK(tsio_jpeg_meta_scan(buf, len, &got) == TS_OK);
    CHECK(got.exif_len == bn && memcmp(got.exif, blk, bn) == 0);
    CHECK(got.icc_len == icc_len && memcmp(got.icc, icc, icc_len) == 0);
    tsio_meta_free(&got);
    for (size_t cut = 0; cut < len; cut += 997) {
        CHECK(tsio_jpeg_meta_scan(buf, cut, &got) == TS_OK);
        CHECKF(!got.icc || got.icc_len == icc_len, "cut %zu", cut);
        tsio_meta_free(&got);
    }
    free(buf);
    free(icc);
}

/* The GPU encoder's output gets its metadata spliced in: libjpeg's reader must find the same EXIF
 * block and ICC profile in the result, and the image must still decode to the same pixels. */
TEST(jpeg_add_meta_round_trips_through_libjpeg)
{
    ts_image im;
    CHECK(ts_image_alloc(&im, 16, 9, 3, 1) == TS_OK);
    for (size_t i = 0; i < ts_row_bytes(&im) * 9; i++)
        ((unsigned char *)im.data)[i] = (unsigned char)(i * 13);
    char path[] = "/tmp/tessera-photo-XXXXXX.jpg", err[256], notice[128];
    int fd = mkstemps(path, 4);
    CHECK(fd >= 0);
    close(fd);
    tsio_save_opts so = {.format = TSIO_JPEG};
    CHECK(tsio_save(path, &im, &so, notice, sizeof notice, err, sizeof err) == TS_OK);
    FILE *f = fopen(path, "rb");
    unsigned char *plain = malloc(100000);
    size_t n = f && plain ? fread(plain, 1, 100000, f) : 0;
    if (f)
        fclose(f);
    CHECK(n > 4);
    unsigned char blk[64];
    size_t bn = make_block(blk, 1, 6), icc_len = 140000;
    unsigned char *icc = malloc(icc_len);
    CHECK(icc != NULL);
    for (size_t i = 0; i < icc_len; i++)
        icc[i] = (unsigned char)(i * 5 + i / 253);
    tsio_meta m = {.exif = blk, .exif_len = bn, .icc = icc, .icc_len = icc_len};
    unsigned char *with = NULL;
    size_t wn = 0;
    CHECK(tsio_jpeg_add_meta(plain, n, &m, &with, &wn, NULL, 0) == TS_OK);
    unsigned char *bad = NULL;
    size_t badn = 0;
    CHECK(tsio_jpeg_add_meta((const unsigned char *)"GIF89a", 6, &m, &bad, &badn, NULL, 0) ==
              TS_ERR_INVALID &&
          bad == NULL);
    f = fopen(path, "wb");
    CHECK(f && fwrite(with, 1, wn, f) == wn);
    fclose(f);
    tsio_meta got = {0};
    ts_image a, b;
    tsio_load_opts lo = {.meta = &got};
    CHECK(tsio_load(path, &lo, &b, err, sizeof err) == TS_OK);
    unlink(path);
    CHECKF(got.exif_len == bn && memcmp(got.exif, blk, bn) == 0, "exif %zu", got.exif_len);
    CHECKF(got.icc_len == icc_len && memcmp(got.icc, icc, icc_len) == 0, "icc %zu", got.icc_len);
    CHECK(tsio_load_memory(plain, n, NULL, &a, err, sizeof err) == TS_OK);
    CHECK(a.width == b.width && a.height == b.height &&
          memcmp(a.data, b.data, ts_row_bytes(&a) * (size_t)a.height) == 0);
    tsio_meta_free(&got);
    ts_image_free(&a);
    ts_image_free(&b);
    ts_image_free(&im);
    free(with);
    free(plain);
    free(icc);
}
