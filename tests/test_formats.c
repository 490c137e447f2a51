/* test_formats.c - TIFF writing, HEIC/AVIF (libheif) and JPEG XL (libjxl) reading.
 *
 * TIFF: every depth and channel count written and read back exactly (libtiff reads it); the ICC
 * profile and an EXIF block (IFD0 tags, EXIF and GPS sub-IFDs, both byte orders) read back with
 * libtiff's own EXIF reader. HEIC, AVIF and JPEG XL: files made by the test with the reference
 * encoders (heif-enc, cjxl) from images the test writes, decoded by tessera and by the reference
 * decoders (heif-convert, djxl) to PNG: the pixels must be equal. Each skips when its tool or
 * library is missing. Also: the pixel limit before decoding, cut files refused, orientation
 * applied once. */
#include "codec.h"
#include "exif.h"
#include "image_io.h"
#include "photo.h"
#include "testutil.h"
#include "tst.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>
#include <unistd.h>

static int have_tool(const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
    return system(cmd) == 0;
}

static char *tmpdir(void)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/tessera-formats-XXXXXX");
    return mkdtemp(dir);
}

static void rmdir_all(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "# could not remove %s\n", dir);
}

static int same(const ts_image *a, const ts_image *b)
{
    int x, y, c;
    return a->width == b->width && a->height == b->height && a->channels == b->channels &&
           a->bytes == b->bytes && tu_max_diff(a, b, &x, &y, &c) == 0;
}

/* A smooth image with some texture (codecs behave on it as on photos). */
static ts_image photo_like(int w, int h, int ch, int bytes, uint64_t *s)
{
    ts_image im = tu_random_image(w, h, ch, bytes, s);
    unsigned max = bytes == 2 ? 65535u : 255u;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < ch; c++) {
                unsigned v = (unsigned)((x * 3 + y * 2 + c * 40) % 256) * max / 255;
                unsigned noise = ts_get(&im, x, y, c) % 8 * (max / 255);
                ts_put(&im, x, y, c, c == 3 ? max - (unsigned)(x % 64) * (max / 255) : (v + noise) % (max + 1));
            }
    return im;
}

/* ---------------------------------------------------------------- TIFF writing */

TEST(tiff_write_round_trip_every_depth_and_channel_count)
{
    char *dir = tmpdir(), path[128], err[256];
    CHECK(dir);
    uint64_t s = tu_seed();
    static const int sizes[][2] = {{1, 1}, {97, 41}, {300, 257}}; /* 300x257: several strips */
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        for (int bytes = 1; bytes <= 2; bytes++)
            for (int ch = 1; ch <= 4; ch++) {
                ts_image im = tu_random_image(sizes[k][0], sizes[k][1], ch, bytes, &s), back;
                snprintf(path, sizeof path, "%s/t%zu%d%d.tif", dir, k, bytes, ch);
                CHECKF(tsio_save(path, &im, NULL, NULL, 0, err, sizeof err) == TS_OK, "%s", err);
                CHECKF(tsio_load(path, NULL, &back, err, sizeof err) == TS_OK, "%s: %s", path, err);
                CHECKF(same(&im, &back), "%s differs", path);
                ts_image_free(&back);
                ts_image_free(&im);
            }
    rmdir_all(dir);
}

/* An EXIF block: IFD0 Make "cam" and Orientation, an EXIF sub-IFD with DateTimeOriginal, a GPS
 * sub-IFD with GPSLatitudeRef "N", an IFD1 link. Returns its length. */
static size_t exif_block(unsigned char *b, int be, unsigned orientation)
{
#define P16(at, v) (be ? (b[at] = (unsigned char)((v) >> 8), b[(at) + 1] = (unsigned char)(v)) \
                       : (b[at] = (unsigned char)(v), b[(at) + 1] = (unsigned char)((v) >> 8)))
#define P32(at, v) (be ? (P16(at, (v) >> 16), P16((at) + 2, (v) & 0xFFFF)) \
                       : (P16(at, (v) & 0xFFFF), P16((at) + 2, (v) >> 16)))
#define ENT(at, tag, type, count, val) (P16(at, tag), P16((at) + 2, type), P32((at) + 4, count), \
                                        P32((at) + 8, val))
    memset(b, 0, 160);
    memcpy(b, be ? "MM\0*" : "II*\0", 4);
    P32(4, 8u);
    P16(8, 4u);                        /* IFD0 at 8: 4 entries, next at 10 + 48 = 58 */
    ENT(10, 0x010Fu, 2u, 4u, 0u);      /* Make "cam" inline */
    memcpy(b + 18, "cam", 4);
    ENT(22, 0x0112u, 3u, 1u, 0u);
    P16(30, orientation);
    ENT(34, 0x8769u, 4u, 1u, 62u);     /* EXIF IFD at 62 */
    ENT(46, 0x8825u, 4u, 1u, 100u);    /* GPS IFD at 100 */
    P32(58, 120u);                     /* IFD1 at 120 */
    P16(62, 1u);                       /* EXIF IFD: DateTimeOriginal, 20 bytes at 80 */
    ENT(64, 0x9003u, 2u, 20u, 80u);
    P32(76, 0u);
    memcpy(b + 80, "2024:01:02 03:04:05", 20);
    P16(100, 1u);                      /* GPS IFD: GPSLatitudeRef "N" */
    ENT(102, 0x0001u, 2u, 2u, 0u);
    memcpy(b + 110, "N", 2);
    P32(114, 0u);
    P16(120, 1u);                      /* IFD1: Compression 6 (a thumbnail's) */
    ENT(122, 0x0103u, 3u, 1u, 0u);
    P16(130, 6u);
    P32(134, 0u);
    return 138;
#undef ENT
#undef P16
#undef P32
}

TEST(tiff_write_keeps_icc_and_exif)
{
    char *dir = tmpdir(), path[128], err[256];
    CHECK(dir);
    uint64_t s = tu_seed();
    unsigned char icc[600], block[160];
    size_t icc_len = tu_make_icc(icc, "Adobe RGB (1998)", 0);
    for (int be = 0; be <= 1; be++) {
        size_t n = exif_block(block, be, 1);
        tsio_meta m = {.exif = block, .exif_len = n, .icc = icc, .icc_len = icc_len};
        tsio_save_opts so = {.meta = &m};
        ts_image im = photo_like(40, 30, 3, 1, &s);
        snprintf(path, sizeof path, "%s/meta%d.tiff", dir, be);
        CHECKF(tsio_save(path, &im, &so, NULL, 0, err, sizeof err) == TS_OK, "%s", err);
        ts_image_free(&im);
        TIFF *tif = TIFFOpen(path, "r");
        CHECK(tif);
        uint32_t len = 0;
        void *p = NULL;
        char *make = NULL, *date = NULL, *ref = NULL;
        uint16_t orient = 0;
        toff_t off = 0;
        CHECK(TIFFIsBigEndian(tif) == be); /* the block's byte order */
        CHECK(TIFFGetField(tif, TIFFTAG_ICCPROFILE, &len, &p) && len == icc_len &&
              memcmp(p, icc, len) == 0);
        CHECK(TIFFGetField(tif, TIFFTAG_MAKE, &make) && strcmp(make, "cam") == 0);
        CHECK(TIFFGetField(tif, TIFFTAG_ORIENTATION, &orient) && orient == 1);
        CHECK(TIFFGetField(tif, TIFFTAG_GPSIFD, &off) && off > 0);
        CHECK(TIFFGetField(tif, TIFFTAG_EXIFIFD, &off) && off > 0);
        CHECK(TIFFReadEXIFDirectory(tif, off));
        CHECK(TIFFGetField(tif, EXIFTAG_DATETIMEORIGINAL, &date) &&
              strcmp(date, "2024:01:02 03:04:05") == 0);
        TIFFSetDirectory(tif, 0);
        CHECK(TIFFGetField(tif, TIFFTAG_GPSIFD, &off) && TIFFReadGPSDirectory(tif, off));
        CHECK(TIFFGetField(tif, GPSTAG_LATITUDEREF, &ref) && strcmp(ref, "N") == 0);
        CHECK(!TIFFReadDirectory(tif) || TIFFNumberOfDirectories(tif) == 1);
        TIFFClose(tif);
        /* tessera reads the file back with its profile */
        tsio_meta back = {0};
        tsio_load_opts lo = {.meta = &back};
        ts_image b2;
        CHECKF(tsio_load(path, &lo, &b2, err, sizeof err) == TS_OK, "%s", err);
        CHECK(back.icc_len == icc_len);
        ts_image_free(&b2);
        tsio_meta_free(&back);
    }
    rmdir_all(dir);
}

TEST(tiff_write_is_read_by_pillow)
{
    if (access("/usr/bin/python3", X_OK) != 0 ||
        system("/usr/bin/python3 -c 'import PIL, numpy' >/dev/null 2>&1") != 0)
        SKIP("/usr/bin/python3 with Pillow and numpy not available");
    char *dir = tmpdir(), path[128], raw[128], cmd[512], err[256];
    CHECK(dir);
    uint64_t s = tu_seed();
    for (int ch = 1; ch <= 4; ch++) { /* Pillow holds 8-bit TIFF in every layout */
        ts_image im = tu_random_image(61, 23, ch, 1, &s);
        snprintf(path, sizeof path, "%s/p%d.tif", dir, ch);
        snprintf(raw, sizeof raw, "%s/p%d.raw", dir, ch);
        CHECKF(tsio_save(path, &im, NULL, NULL, 0, err, sizeof err) == TS_OK, "%s", err);
        FILE *f = fopen(raw, "wb");
        CHECK(f && fwrite(im.data, 1, im.pitch * (size_t)im.height, f) ==
                       im.pitch * (size_t)im.height && fclose(f) == 0);
        CHECK(im.pitch == (size_t)im.width * (size_t)ch);
        snprintf(cmd, sizeof cmd,
                 "/usr/bin/python3 -c \"import sys, numpy as np; from PIL import Image; "
                 "a = np.asarray(Image.open('%s')).reshape(-1); "
                 "b = np.fromfile('%s', dtype=np.uint8); sys.exit(0 if np.array_equal(a, b) else 1)\"",
                 path, raw);
        CHECKF(system(cmd) == 0, "Pillow reads %s differently", path);
        ts_image_free(&im);
    }
    rmdir_all(dir);
}

/* ---------------------------------------------------------------- HEIC, AVIF, JPEG XL */

/* Writes `im` as PNG, runs `encode` (printf format: input, output) and `decode` (output, ref.png),
 * and compares tessera's decode of the encoded file with the reference decoder's PNG. */
static void against_reference_bits(const char *dir, const char *tag, const ts_image *im,
                                   const char *encode, const char *ext, const char *decode,
                                   int ref_bits)
{
    char png[160], enc[160], ref[160], cmd[600], err[256];
    snprintf(png, sizeof png, "%s/%s.png", dir, tag);
    snprintf(enc, sizeof enc, "%s/%s.%s", dir, tag, ext);
    snprintf(ref, sizeof ref, "%s/%s.ref.png", dir, tag);
    CHECKF(tsio_save(png, im, NULL, NULL, 0, err, sizeof err) == TS_OK, "%s", err);
    int n = snprintf(cmd, sizeof cmd, encode, png, enc);
    snprintf(cmd + n, sizeof cmd - (size_t)n, " >/dev/null 2>&1");
    CHECKF(system(cmd) == 0, "%s failed", cmd);
    n = snprintf(cmd, sizeof cmd, decode, enc, ref);
    snprintf(cmd + n, sizeof cmd - (size_t)n, " >/dev/null 2>&1");
    CHECKF(system(cmd) == 0, "%s failed", cmd);
    ts_image ours, theirs;
    tsio_meta meta = {0};
    tsio_load_opts lo = {.meta = &meta};
    CHECKF(tsio_load(enc, &lo, &ours, err, sizeof err) == TS_OK, "%s: %s", enc, err);
    CHECKF(tsio_load(ref, NULL, &theirs, err, sizeof err) == TS_OK, "%s: %s", ref, err);
    /* heif-convert writes B-bit samples as v << (16 - B); tessera scales them to the full range */
    uint32_t maxv = ref_bits ? (1u << ref_bits) - 1 : 0;
    for (int yy = 0; ref_bits && yy < theirs.height; yy++)
        for (int xx = 0; xx < theirs.width; xx++)
            for (int cc = 0; cc < theirs.channels; cc++) {
                uint32_t v = ts_get(&theirs, xx, yy, cc) >> (16 - ref_bits);
                ts_put(&theirs, xx, yy, cc, (v * 65535u + maxv / 2) / maxv);
            }
    int x = 0, y = 0, c = 0;
    long d = ours.channels == theirs.channels ? tu_max_diff(&ours, &theirs, &x, &y, &c) : -1;
    CHECKF(ours.width == theirs.width && ours.height == theirs.height &&
               ours.channels == theirs.channels && ours.bytes == theirs.bytes && d == 0,
           "%s: tessera %dx%d %dch %d-bit, reference %dx%d %dch %d-bit, max diff %ld at %d,%d,%d",
           tag, ours.width, ours.height, ours.channels, ours.bytes * 8, theirs.width,
           theirs.height, theirs.channels, theirs.bytes * 8, d, x, y, c);
    CHECKF(photo_orientation(&meta) == 1, "%s: the EXIF orientation is applied once", tag);
    ts_image_free(&ours);
    ts_image_free(&theirs);
    tsio_meta_free(&meta);
}

static void against_reference(const char *dir, const char *tag, const ts_image *im,
                              const char *encode, const char *ext, const char *decode)
{
    against_reference_bits(dir, tag, im, encode, ext, decode, 0);
}

/* The file cut to half, and read with a pixel limit under its size: refused, with the limit's
 * message for the second (checked from the header, before decoding). */
static void refused(const char *path, const char *name)
{
    char err[256];
    FILE *f = fopen(path, "rb");
    CHECK(f);
    unsigned char *b = malloc(1 << 20);
    size_t n = fread(b, 1, 1 << 20, f);
    fclose(f);
    ts_image im;
    tsio_load_opts lo = {.max_pixels = 100};
    ts_status st = tsio_load_memory(b, n, &lo, &im, err, sizeof err);
    CHECKF(st == TS_ERR_TOO_LARGE && strstr(err, "--max-pixels"), "%s over the limit: %s",
           name, err);
    for (size_t cut = n / 2; cut > 16; cut /= 3) {
        st = tsio_load_memory(b, cut, NULL, &im, err, sizeof err);
        if (st == TS_OK)
            ts_image_free(&im);
        CHECKF(st == TS_ERR_FORMAT || st == TS_ERR_UNSUPPORTED, "%s cut to %zu bytes: %d %s",
               name, cut, (int)st, err);
    }
    free(b);
}

TEST(heic_and_avif_decode_as_heif_convert)
{
    if (!have_tool("heif-enc") || !have_tool("heif-convert"))
        SKIP("heif-enc or heif-convert not installed (Debian: libheif-examples)");
    char probe[256];
    ts_image dummy;
    static const unsigned char heic_head[] = {0, 0, 0, 24, 'f', 't', 'y', 'p', 'h', 'e', 'i', 'c'};
    if (tsio_load_memory(heic_head, sizeof heic_head, NULL, &dummy, probe, sizeof probe) ==
            TS_ERR_UNSUPPORTED &&
        strstr(probe, "without libheif"))
        SKIP("tessera built without libheif");
    char *dir = tmpdir(), path[160];
    CHECK(dir);
    uint64_t s = tu_seed();
    ts_image rgb = photo_like(67, 45, 3, 1, &s), rgba = photo_like(64, 48, 4, 1, &s),
             rgb16 = photo_like(40, 24, 3, 2, &s);
    against_reference_bits(dir, "rgb10", &rgb16, "heif-enc -b 10 -q 60 -o %2$s %1$s", "heic",
                           "heif-convert %s %s", 10);
    ts_image_free(&rgb16);
    against_reference(dir, "rgb", &rgb, "heif-enc -q 60 -o %2$s %1$s", "heic", "heif-convert %s %s");
    against_reference(dir, "rgba", &rgba, "heif-enc -q 60 -o %2$s %1$s", "heic", "heif-convert %s %s");
    against_reference(dir, "rgb-avif", &rgb, "heif-enc -A -q 60 -o %2$s %1$s", "avif",
                      "heif-convert %s %s");
    snprintf(path, sizeof path, "%s/rgb.heic", dir);
    refused(path, "HEIC");
    snprintf(path, sizeof path, "%s/rgb-avif.avif", dir);
    refused(path, "AVIF");
    ts_image_free(&rgb);
    ts_image_free(&rgba);
    rmdir_all(dir);
}

TEST(jpeg_xl_decodes_as_djxl)
{
    if (!have_tool("cjxl") || !have_tool("djxl"))
        SKIP("cjxl or djxl not installed (Debian: libjxl-tools)");
    char probe[256];
    ts_image dummy;
    static const unsigned char jxl_head[] = {0xFF, 0x0A, 0, 0};
    if (tsio_load_memory(jxl_head, sizeof jxl_head, NULL, &dummy, probe, sizeof probe) ==
            TS_ERR_UNSUPPORTED &&
        strstr(probe, "without libjxl"))
        SKIP("tessera built without libjxl");
    char *dir = tmpdir(), path[160];
    CHECK(dir);
    uint64_t s = tu_seed();
    ts_image rgb = photo_like(67, 45, 3, 1, &s), rgba = photo_like(64, 48, 4, 1, &s),
             gray = photo_like(33, 20, 1, 1, &s), rgb16 = photo_like(40, 24, 3, 2, &s);
    against_reference(dir, "rgb", &rgb, "cjxl %s %s -d 1", "jxl", "djxl %s %s");
    against_reference(dir, "rgb-lossless", &rgb, "cjxl %s %s -d 0", "jxl", "djxl %s %s");
    against_reference(dir, "rgba", &rgba, "cjxl %s %s -d 1", "jxl", "djxl %s %s");
    against_reference(dir, "gray", &gray, "cjxl %s %s -d 0", "jxl", "djxl %s %s");
    against_reference(dir, "rgb16", &rgb16, "cjxl %s %s -d 0", "jxl", "djxl %s %s");
    snprintf(path, sizeof path, "%s/rgb.jxl", dir);
    refused(path, "JPEG XL");
    ts_image_free(&rgb);
    ts_image_free(&rgba);
    ts_image_free(&gray);
    ts_image_free(&rgb16);
    rmdir_all(dir);
}

TEST(heic_grid_larger_than_its_image_is_refused)
{
    /* fuzz_heif's find: 'ispe' says 16x12, the grid's header 4096x3072 and its tile more; libheif
     * 1.15 took 5 GB and crashed decoding it. Refused before decoding. */
    char err[256];
    ts_image im;
    ts_status st = tsio_load("tests/fuzz/seeds/heif/grid-past-ispe.heic", NULL, &im, err, sizeof err);
    if (st == TS_ERR_UNSUPPORTED && strstr(err, "without libheif"))
        SKIP("tessera built without libheif");
    if (st == TS_OK)
        ts_image_free(&im);
    /* its hvcC also says 14-bit luma and 15-bit chroma, refused first since (test below) */
    CHECKF((st == TS_ERR_FORMAT || st == TS_ERR_UNSUPPORTED) && strstr(err, "HEIC"), "%d %s",
           (int)st, err);
}

TEST(heic_odd_depths_and_no_size_are_refused)
{
    /* fuzz_heif's finds after the one above: a grid whose hvcC says 14-bit luma and 15-bit
     * chroma (one with no 'ispe' at all), and a primary grid of 16x53772 with 64x64 tiles whose
     * own header may then claim 53772 squared: libheif 1.15 took 5.3 GB and crashed in
     * heif_decode_image. Refused before decoding now (the first two by their long side since
     * the third: 16x53772, 16x393228). */
    const char *files[] = {"tests/fuzz/seeds/heif/depths-14-15.heic",
                           "tests/fuzz/seeds/heif/no-ispe-depths-14-15.heic",
                           "tests/fuzz/seeds/heif/tall-primary-grid.heic"};
    for (int i = 0; i < 3; i++) {
        char err[256];
        ts_image im;
        ts_status st = tsio_load(files[i], NULL, &im, err, sizeof err);
        if (st == TS_ERR_UNSUPPORTED && strstr(err, "without libheif"))
            SKIP("tessera built without libheif");
        if (st == TS_OK)
            ts_image_free(&im);
        CHECKF(st == TS_ERR_UNSUPPORTED || st == TS_ERR_FORMAT || st == TS_ERR_TOO_LARGE, "%s: %d %s",
               files[i], (int)st, err);
        CHECKF(strstr(err, "HEIC") != NULL, "%s: %s", files[i], err);
    }
}
