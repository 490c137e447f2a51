/* test_codecs.c - the PNG decoder (libspng) against stb_image's pixels for every colour type,
 * depth, tRNS and Adam7 case (PNGs written here with zlib, decoded by a private copy of stb's PNG
 * decoder as the oracle), JPEG decodes against OpenCV (the same libjpeg-turbo: equal bytes),
 * arithmetic-coded JPEG, metadata kept through a save and a load. */
#include "image_io.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jpeglib.h>
#include <zlib.h>

/* ---------------------------------------------------------------- a PNG writer for tests */

static uint8_t *put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8),
    p[3] = (uint8_t)v;
    return p + 4;
}

static uint8_t *chunk(uint8_t *p, const char *type, const uint8_t *d, uint32_t n)
{
    p = put32(p, n);
    memcpy(p, type, 4);
    if (n)
        memcpy(p + 4, d, n);
    uint32_t crc = (uint32_t)crc32(0, p, n + 4);
    return put32(p + 4 + n, crc);
}

/* Samples per pixel of a PNG colour type. */
static int spp(int ct) { return ct == 0 || ct == 3 ? 1 : ct == 2 ? 3 : ct == 4 ? 2 : 4; }

/* Appends row y's samples x0, x0+dx, ... packed at `depth` bits (filter byte 0 first). */
static size_t pack_row(uint8_t *out, const uint16_t *s, int w, int ct, int depth, int y, int x0,
                       int dx)
{
    size_t n = 0;
    int k = spp(ct);
    out[n++] = 0;
    unsigned acc = 0, bits = 0;
    for (int x = x0; x < w; x += dx)
        for (int c = 0; c < k; c++) {
            unsigned v = s[((size_t)y * w + x) * k + c];
            if (depth == 16) {
                out[n++] = (uint8_t)(v >> 8), out[n++] = (uint8_t)v;
            } else if (depth == 8) {
                out[n++] = (uint8_t)v;
            } else {
                acc = acc << depth | v, bits += depth;
                if (bits == 8)
                    out[n++] = (uint8_t)acc, acc = bits = 0;
            }
        }
    if (bits)
        out[n++] = (uint8_t)(acc << (8 - bits));
    return n;
}

/* A whole PNG of w x h samples s (values < 2^depth); plte entries (RGB), trns bytes, Adam7. */
static uint8_t *make_png(size_t *len, int w, int h, int ct, int depth, const uint16_t *s,
                         int plte_n, const uint8_t *trns, int trns_n, int adam7)
{
    static const int p7[7][4] = {{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4},
                                 {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}};
    size_t rowmax = 1 + ((size_t)w * spp(ct) * depth + 7) / 8;
    size_t rawcap = rowmax * (size_t)h * 2 + 64;
    uint8_t *raw = malloc(rawcap), *p;
    size_t rn = 0;
    for (int pass = 0; pass < (adam7 ? 7 : 1); pass++) {
        int x0 = adam7 ? p7[pass][0] : 0, y0 = adam7 ? p7[pass][1] : 0;
        int dx = adam7 ? p7[pass][2] : 1, dy = adam7 ? p7[pass][3] : 1;
        if (x0 >= w)
            continue;
        for (int y = y0; y < h; y += dy)
            rn += pack_row(raw + rn, s, w, ct, depth, y, x0, dx);
    }
    uLongf zn = compressBound(rn);
    uint8_t *z = malloc(zn);
    compress2(z, &zn, raw, rn, 6);
    uint8_t *png = malloc(zn + 1024 + (size_t)trns_n), ihdr[13], pal[768];
    memcpy(png, "\x89PNG\r\n\x1a\n", 8);
    put32(ihdr, (uint32_t)w);
    put32(ihdr + 4, (uint32_t)h);
    ihdr[8] = (uint8_t)depth, ihdr[9] = (uint8_t)ct, ihdr[10] = ihdr[11] = 0;
    ihdr[12] = (uint8_t)adam7;
    p = chunk(png + 8, "IHDR", ihdr, 13);
    for (int i = 0; i < plte_n * 3; i++)
        pal[i] = (uint8_t)(i * 37 + 11);
    if (plte_n)
        p = chunk(p, "PLTE", pal, (uint32_t)plte_n * 3);
    if (trns_n)
        p = chunk(p, "tRNS", trns, (uint32_t)trns_n);
    p = chunk(p, "IDAT", z, (uint32_t)zn);
    p = chunk(p, "IEND", NULL, 0);
    *len = (size_t)(p - png);
    free(raw);
    free(z);
    return png;
}

/* ---------------------------------------------------------------- PNG against stb */

TEST(codec_png_pixels_match_stb_for_every_type_depth_trns_and_adam7)
{
    static const struct {
        int ct, depth;
    } kinds[] = {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {0, 16}, {2, 8}, {2, 16}, {3, 1},
                 {3, 2}, {3, 4}, {3, 8}, {4, 8}, {4, 16}, {6, 8}, {6, 16}};
    uint64_t seed = tu_seed();
    const int w = 13, h = 7;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (int trns = 0; trns <= 1; trns++)
            for (int adam7 = 0; adam7 <= 1; adam7++) {
                int ct = kinds[k].ct, depth = kinds[k].depth, n = spp(ct);
                if (trns && (ct == 4 || ct == 6))
                    continue; /* tRNS is not allowed with an alpha channel */
                int plte = ct == 3 ? 1 << (depth < 8 ? depth : 5) : 0;
                unsigned maxv = ct == 3 ? (unsigned)plte - 1 : (1u << depth) - 1;
                uint16_t *s = malloc(sizeof *s * w * h * n);
                for (int i = 0; i < w * h * n; i++)
                    s[i] = (uint16_t)(tu_rand(&seed) % (maxv + 1));
                /* tRNS: palette alphas, or the colour of pixel 0 (so that it matches somewhere) */
                uint8_t tr[64];
                int trn = 0;
                if (trns && ct == 3)
                    for (trn = 0; trn < plte && trn < 64; trn++)
                        tr[trn] = (uint8_t)(trn * 53);
                else if (trns)
                    for (int c = 0; c < n; c++, trn += 2)
                        tr[2 * c] = (uint8_t)(s[c] >> 8), tr[2 * c + 1] = (uint8_t)s[c];
                size_t len;
                uint8_t *png = make_png(&len, w, h, ct, depth, s, plte, tr, trn, adam7);
                ts_image im;
                char err[256];
                ts_status st = tsio_load_memory(png, len, NULL, &im, err, sizeof err);
                int sw, sh, sn;
                const char *why;
                void *ref = tu_stb_png(png, len, depth == 16, &sw, &sh, &sn, &why);
                CHECKF(st == TS_OK && ref, "ct %d depth %d trns %d adam7 %d: %s / %s", ct, depth,
                       trns, adam7, err, why);
                CHECKF(im.width == sw && im.height == sh && im.channels == sn &&
                           im.bytes == (depth == 16 ? 2 : 1),
                       "ct %d depth %d trns %d: %dx%d ch %d bytes %d, stb ch %d", ct, depth, trns,
                       im.width, im.height, im.channels, im.bytes, sn);
                CHECKF(memcmp(im.data, ref, im.pitch * (size_t)h) == 0,
                       "ct %d depth %d trns %d adam7 %d: pixels differ from stb's", ct, depth, trns,
                       adam7);
                tu_stb_free(ref);
                ts_image_free(&im);
                free(png);
                free(s);
            }
}

TEST(codec_png_palette_index_past_the_palette_is_black)
{
    /* Two palette entries, indices up to 255: stb 2.27 read its uninitialised stack palette.
     * libspng keeps a zeroed 256-entry palette per decoder: an index past the PLTE is black,
     * whatever was decoded before. */
    uint16_t s[16];
    for (int i = 0; i < 16; i++)
        s[i] = (uint16_t)(i * 17);
    size_t len;
    uint8_t *png = make_png(&len, 4, 4, 3, 8, s, 2, NULL, 0, 0);
    for (int round = 0; round < 2; round++) {
        ts_image im;
        char err[256];
        ts_status st = tsio_load_memory(png, len, NULL, &im, err, sizeof err);
        CHECKF(st == TS_OK && im.channels == 3, "%d '%s'", st, err);
        for (int i = 0; i < 16; i++)
            for (int c = 0; c < 3; c++) {
                unsigned want = s[i] < 2 ? (unsigned)((s[i] * 3 + c) * 37 + 11) & 255 : 0;
                CHECKF(ts_get(&im, i % 4, i / 4, c) == want, "index %u channel %d: %u", s[i], c,
                       ts_get(&im, i % 4, i / 4, c));
            }
        ts_image_free(&im);
        /* dirty the heap the way another image would before the second round */
        ts_image junk = tu_band_image(64, 64, 4, 1, 200, 255, &(uint64_t){7});
        ts_image_free(&junk);
    }
    free(png);
}

TEST(codec_png_crc_and_truncation)
{
    uint16_t s[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    size_t len;
    uint8_t *png = make_png(&len, 2, 2, 2, 8, s, 0, NULL, 0, 0);
    ts_image im;
    char err[256];
    CHECK(tsio_load_memory(png, len, NULL, &im, err, sizeof err) == TS_OK);
    ts_image_free(&im);
    png[8 + 8 + 3] ^= 1; /* a bit of IHDR's width (2 to 3): its CRC no longer matches */
    CHECK(tsio_load_memory(png, len, NULL, &im, err, sizeof err) == TS_ERR_FORMAT);
    CHECKF(strstr(err, "corrupt PNG"), "'%s'", err);
    free(png);
}

/* ---------------------------------------------------------------- JPEG */

/* A JPEG of im through libjpeg directly (arithmetic coding when arith). */
static unsigned char *jpeg_of(const ts_image *im, int arith, unsigned long *len)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    unsigned char *buf = NULL;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &buf, len);
    c.image_width = (JDIMENSION)im->width, c.image_height = (JDIMENSION)im->height;
    c.input_components = im->channels;
    c.in_color_space = im->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 85, TRUE);
    c.arith_code = arith ? TRUE : FALSE;
    jpeg_start_compress(&c, TRUE);
    for (int y = 0; y < im->height; y++) {
        JSAMPROW r = (unsigned char *)im->data + (size_t)y * im->pitch;
        jpeg_write_scanlines(&c, &r, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    return buf;
}

TEST(codec_jpeg_arithmetic_coding_decodes_as_huffman)
{
    /* The same coefficients entropy-coded two ways must give the same pixels. */
    uint64_t s = tu_seed();
    ts_image in = tu_band_image(45, 31, 3, 1, 20, 220, &s), a, b;
    unsigned long na = 0, nb = 0;
    unsigned char *ja = jpeg_of(&in, 1, &na), *jb = jpeg_of(&in, 0, &nb);
    char err[256];
    CHECKF(tsio_load_memory(ja, na, NULL, &a, err, sizeof err) == TS_OK, "%s", err);
    CHECKF(tsio_load_memory(jb, nb, NULL, &b, err, sizeof err) == TS_OK, "%s", err);
    CHECK(ts_image_equal(&a, &b));
    ts_image_free(&a);
    ts_image_free(&b);
    ts_image_free(&in);
    free(ja);
    free(jb);
}

TEST(codec_jpeg_decode_equals_opencv)
{
    /* OpenCV reads JPEG with the same libjpeg-turbo (ISLOW IDCT, fancy upsampling): the bytes
     * must be equal, 4:2:0 colour, gray and the bundled photo alike. */
    if (!tu_have_cv2())
        SKIP("/usr/bin/python3 with cv2 not available");
    char dir[] = "/tmp/tessera-codec-XXXXXX";
    CHECK(mkdtemp(dir));
    uint64_t s = tu_seed();
    static const int chans[] = {3, 1};
    char cmd[4096];
    int n = snprintf(cmd, sizeof cmd,
                     "/usr/bin/python3 -c 'import sys, numpy as np, cv2\n"
                     "bad = 0\n"
                     "for a in sys.argv[1:]:\n"
                     "    jpg, raw, w, h, ch = a.split(\",\")\n"
                     "    got = np.fromfile(raw, np.uint8).reshape(int(h), int(w), int(ch))\n"
                     "    ref = cv2.imread(jpg, cv2.IMREAD_UNCHANGED).reshape(int(h), int(w), -1)\n"
                     "    ref = ref[..., ::-1] if ref.shape[2] == 3 else ref\n"
                     "    if not np.array_equal(got, ref): print(\"differs\", jpg); bad = 1\n"
                     "sys.exit(bad)'");
    for (int i = 0; i < 3; i++) {
        char jpg[256], raw[256], err[256];
        ts_image im, got;
        if (i < 2) {
            im = tu_band_image(77, 45, chans[i], 1, 10, 240, &s);
            snprintf(jpg, sizeof jpg, "%s/t%d.jpg", dir, i);
            CHECK(tsio_save(jpg, &im, NULL, NULL, 0, err, sizeof err) == TS_OK);
            ts_image_free(&im);
        } else {
            if (access("assets/seeding_by_Clements_Engelhardt.jpg", R_OK) != 0)
                continue;
            snprintf(jpg, sizeof jpg, "assets/seeding_by_Clements_Engelhardt.jpg");
        }
        CHECKF(tsio_load(jpg, NULL, &got, err, sizeof err) == TS_OK, "%s", err);
        snprintf(raw, sizeof raw, "%s/t%d.raw", dir, i);
        FILE *f = fopen(raw, "wb");
        CHECK(f && fwrite(got.data, 1, got.pitch * (size_t)got.height, f) ==
                       got.pitch * (size_t)got.height);
        fclose(f);
        n += snprintf(cmd + n, sizeof cmd - (size_t)n, " %s,%s,%d,%d,%d", jpg, raw, got.width,
                      got.height, got.channels);
        ts_image_free(&got);
    }
    int rc = system(cmd);
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    CHECK(system(rm) == 0);
    CHECKF(rc == 0, "OpenCV decodes differently (see above)");
}

/* ---------------------------------------------------------------- metadata */

TEST(codec_metadata_kept_through_jpeg_and_png)
{
    /* EXIF (a TIFF header and a few bytes) and an ICC profile (any bytes: no colour work is
     * promised), written and read back unchanged. */
    static const unsigned char exif[] = "MM\0*\0\0\0\x08\0\0tessera exif";
    unsigned char icc[3000];
    for (size_t i = 0; i < sizeof icc; i++)
        icc[i] = (unsigned char)(i * 7);
    tsio_meta m = {(unsigned char *)exif, sizeof exif, icc, sizeof icc};
    uint64_t s = tu_seed();
    ts_image in = tu_random_image(20, 10, 3, 1, &s);
    static const char *names[] = {"/tmp/tessera-meta-%d.jpg", "/tmp/tessera-meta-%d.png"};
    for (int i = 0; i < 2; i++) {
        char path[256], err[256];
        snprintf(path, sizeof path, names[i], (int)getpid());
        tsio_save_opts so = {.meta = &m};
        CHECKF(tsio_save(path, &in, &so, NULL, 0, err, sizeof err) == TS_OK, "%s", err);
        tsio_meta got = {0}, none = {0};
        ts_image out;
        tsio_load_opts lo = {.meta = &got};
        CHECKF(tsio_load(path, &lo, &out, err, sizeof err) == TS_OK, "%s", err);
        ts_image_free(&out);
        CHECKF(got.exif_len == sizeof exif && !memcmp(got.exif, exif, sizeof exif), "%s exif %zu",
               path, got.exif_len);
        CHECKF(got.icc_len == sizeof icc && !memcmp(got.icc, icc, sizeof icc), "%s icc %zu", path,
               got.icc_len);
        tsio_meta_free(&got);
        /* Without meta in the save options nothing is written. */
        CHECK(tsio_save(path, &in, NULL, NULL, 0, err, sizeof err) == TS_OK);
        CHECK(tsio_load(path, &(tsio_load_opts){.meta = &none}, &out, err, sizeof err) == TS_OK);
        CHECK(!none.exif && !none.icc);
        ts_image_free(&out);
        unlink(path);
    }
    ts_image_free(&in);
}
