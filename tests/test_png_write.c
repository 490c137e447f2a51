/* test_png_write.c - the PNG encoder (app/codec/png_write.c): every level, channel count, depth and odd
 * size, random and smooth data, both back ends (libdeflate whole-buffer, zlib streamed), decoded by
 * libspng (tsio_png_decode) and by a private copy of stb's PNG decoder to exactly the input; the
 * filtered rows inflated and checked against a plain reference of the filters and of the
 * per-row choice; metadata kept; write errors reported; file sizes against OpenCV's default. */
#include "image_io.h"
#include "png_write.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

/* The encoder's output in memory; NULL (and the status in *st) on failure. */
static unsigned char *encode_mem(const ts_image *im, int level, const tsio_meta *meta,
                                 size_t *len, ts_status *st, char *err, size_t errlen)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f) {
        *st = TS_ERR_IO;
        return NULL;
    }
    *st = tsio_png_encode(f, im, level, meta, err, errlen);
    if (fclose(f) != 0 && *st == TS_OK)
        *st = TS_ERR_IO;
    if (*st != TS_OK) {
        free(buf);
        return NULL;
    }
    return (unsigned char *)buf;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The IDAT chunks' data inflated: the filtered rows (want bytes), or NULL. */
static unsigned char *inflate_idat(const unsigned char *png, size_t len, size_t want)
{
    unsigned char *z = malloc(len), *out = malloc(want + 1);
    size_t zn = 0;
    for (size_t at = 8; z && at + 12 <= len;) {
        size_t n = be32(png + at);
        if (at + 12 + n > len)
            break;
        if (!memcmp(png + at + 4, "IDAT", 4))
            memcpy(z + zn, png + at + 8, n), zn += n;
        at += 12 + n;
    }
    uLongf got = (uLongf)want + 1;
    int ok = z && out && uncompress(out, &got, z, (uLong)zn) == Z_OK && got == want;
    free(z);
    if (!ok) {
        free(out);
        return NULL;
    }
    return out;
}

/* The PNG filters, written plainly from the specification (the oracle of the SSE2 ones). */
static unsigned char ref_predict(int t, const unsigned char *cur, const unsigned char *up,
                                 size_t i, size_t bpp)
{
    int a = i >= bpp ? cur[i - bpp] : 0, b = up[i], c = i >= bpp ? up[i - bpp] : 0;
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    switch (t) {
    case 1: return (unsigned char)a;
    case 2: return (unsigned char)b;
    case 3: return (unsigned char)((a + b) / 2);
    case 4: return (unsigned char)(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
    default: return 0;
    }
}

/* Row y as PNG bytes (16-bit big-endian). */
static void be_row(const ts_image *im, int y, unsigned char *dst)
{
    const unsigned char *r = (const unsigned char *)im->data + (size_t)y * im->pitch;
    size_t n = ts_row_bytes(im);
    if (im->bytes == 1) {
        memcpy(dst, r, n);
        return;
    }
    for (size_t i = 0; i < n; i += 2) {
        uint16_t v;
        memcpy(&v, r + i, 2);
        dst[i] = (unsigned char)(v >> 8), dst[i + 1] = (unsigned char)v;
    }
}

/* Whether the filtered rows are the reference's: each row's type the cheapest (sum of |signed
 * byte|, the lowest type on a tie) of those the level allows, its bytes that filter's. */
static int filters_as_reference(const ts_image *im, int level, const unsigned char *filt,
                                int *bad_row)
{
    size_t n = ts_row_bytes(im), bpp = ts_pixel_bytes(im);
    unsigned char *cur = malloc(n), *up = calloc(1, n), *want = malloc(n);
    int ok = cur && up && want;
    int lo = level == 0 ? 0 : level <= 3 ? 1 : 0, hi = level == 0 ? 0 : level <= 3 ? 2 : 4;
    for (int y = 0; ok && y < im->height; y++) {
        be_row(im, y, cur);
        uint64_t best = UINT64_MAX;
        int type = -1;
        for (int t = lo; t <= hi; t++) {
            uint64_t cost = 0;
            for (size_t i = 0; i < n; i++) {
                unsigned v = (unsigned char)(cur[i] - ref_predict(t, cur, up, i, bpp));
                cost += v < 128 ? v : 256 - v;
            }
            if (cost < best)
                best = cost, type = t;
        }
        const unsigned char *row = filt + (size_t)y * (n + 1);
        for (size_t i = 0; i < n; i++)
            want[i] = (unsigned char)(cur[i] - ref_predict(type, cur, up, i, bpp));
        if (row[0] != type || memcmp(row + 1, want, n)) {
            *bad_row = y;
            ok = 0;
        }
        memcpy(up, cur, n);
    }
    free(cur);
    free(up);
    free(want);
    return ok;
}

/* Whether `png` decodes, through libspng and through stb, to exactly `im`. */
static int decodes_to(const unsigned char *png, size_t len, const ts_image *im, char *why,
                      size_t whylen)
{
    ts_image got;
    char err[256];
    if (tsio_png_decode(png, len, TS_DEFAULT_MAX_PIXELS, NULL, &got, err, sizeof err) != TS_OK) {
        snprintf(why, whylen, "libspng: %.200s", err);
        return 0;
    }
    int same = tu_max_diff(&got, im, NULL, NULL, NULL) == 0;
    ts_image_free(&got);
    if (!same) {
        snprintf(why, whylen, "libspng decodes other pixels");
        return 0;
    }
    int w, h, ch;
    void *s = tu_stb_png(png, len, im->bytes == 2, &w, &h, &ch, NULL);
    size_t n = ts_row_bytes(im);
    same = s && w == im->width && h == im->height && ch == im->channels;
    for (int y = 0; same && y < h; y++)
        same = !memcmp((unsigned char *)s + (size_t)y * n,
                       (const unsigned char *)im->data + (size_t)y * im->pitch, n);
    tu_stb_free(s);
    if (!same)
        snprintf(why, whylen, "stb decodes other pixels");
    return same;
}

/* Smooth data: a gradient with a little noise (what photos look like to the filters). */
static ts_image smooth_image(int w, int h, int ch, int bytes, uint64_t *s)
{
    ts_image im = tu_random_image(w, h, ch, bytes, s);
    unsigned max = (unsigned)ts_max_value(bytes);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < ch; c++) {
                unsigned v = (unsigned)(x * 3 + y * 5 + c * 40) * (bytes == 2 ? 97u : 1u) +
                             (unsigned)(tu_rand(s) % 4);
                ts_put(&im, x, y, c, v % (max + 1));
            }
    return im;
}

TEST(png_write_every_level_format_and_size_decodes_exactly)
{
    static const int sizes[][2] = {{1, 1}, {1, 37}, {37, 1}, {33, 17}, {4097, 3}};
    uint64_t s = tu_seed();
    char err[256], why[256];
    for (int backend = 0; backend < 2; backend++) {
        /* 1 byte: every image takes the streamed zlib path */
        tsio_png_test_set_whole_limit(backend ? 1 : 0);
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            for (int ch = 1; ch <= 4; ch++)
                for (int bytes = 1; bytes <= 2; bytes++)
                    for (int smooth = 0; smooth < 2; smooth++) {
                        int w = sizes[k][0], h = sizes[k][1];
                        ts_image im = smooth ? smooth_image(w, h, ch, bytes, &s)
                                             : tu_random_image(w, h, ch, bytes, &s);
                        size_t raw = (ts_row_bytes(&im) + 1) * (size_t)h;
                        for (int level = 0; level <= 9; level++) {
                            size_t len = 0;
                            ts_status st;
                            unsigned char *png =
                                encode_mem(&im, level, NULL, &len, &st, err, sizeof err);
                            int bad_row = -1, dec = 0, filt_ok = 0;
                            unsigned char *filt = png ? inflate_idat(png, len, raw) : NULL;
                            if (filt)
                                filt_ok = filters_as_reference(&im, level, filt, &bad_row);
                            if (png)
                                dec = decodes_to(png, len, &im, why, sizeof why);
                            free(filt);
                            free(png);
                            if (!png || !filt || !filt_ok || !dec)
                                tsio_png_test_set_whole_limit(0);
                            CHECKF(png, "%dx%d ch %d bytes %d level %d: %s", w, h, ch, bytes,
                                   level, err);
                            CHECKF(filt, "%dx%d ch %d bytes %d level %d backend %d: IDAT does "
                                   "not inflate to the filtered rows", w, h, ch, bytes, level,
                                   backend);
                            CHECKF(filt_ok, "%dx%d ch %d bytes %d level %d backend %d smooth %d:"
                                   " row %d filtered unlike the reference", w, h, ch, bytes,
                                   level, backend, smooth, bad_row);
                            CHECKF(dec, "%dx%d ch %d bytes %d level %d backend %d smooth %d: %s",
                                   w, h, ch, bytes, level, backend, smooth, why);
                            /* level 0 stores: the file holds every filtered byte */
                            CHECK(level != 0 || len > raw);
                        }
                        ts_image_free(&im);
                    }
    }
    tsio_png_test_set_whole_limit(0);
}

TEST(png_write_levels_compress_smooth_data)
{
    /* A level that compresses must: smooth data shrinks well below its raw size at every level
     * of both back ends. (Level 9 is not always smaller than level 1 here: the minimum-sum
     * heuristic of five filters picks worse rows on such a synthetic gradient than sub/up.) */
    uint64_t s = tu_seed();
    ts_image im = smooth_image(300, 200, 3, 1, &s);
    size_t raw = (ts_row_bytes(&im) + 1) * 200, len[10];
    char err[256];
    for (int backend = 0; backend < 2; backend++) {
        tsio_png_test_set_whole_limit(backend ? 1 : 0);
        for (int level = 0; level <= 9; level++) {
            ts_status st;
            unsigned char *png = encode_mem(&im, level, NULL, &len[level], &st, err, sizeof err);
            free(png);
            if (!png)
                tsio_png_test_set_whole_limit(0);
            CHECKF(png, "%s", err);
            CHECKF(level == 0 || len[level] < raw / 2, "level %d backend %d: %zu of %zu", level,
                   backend, len[level], raw);
        }
    }
    tsio_png_test_set_whole_limit(0);
    ts_image_free(&im);
}

TEST(png_write_metadata_kept_and_exif_without_tiff_header_left_out)
{
    static const unsigned char exif[] = "II*\0\x08\0\0\0tessera exif, little-endian";
    static const unsigned char app1[] = "Exif\0\0MM\0*\0\0\0\x08"; /* a JPEG APP1's prefix */
    unsigned char icc[5000];
    for (size_t i = 0; i < sizeof icc; i++)
        icc[i] = (unsigned char)(i * 13 + i / 100);
    uint64_t s = tu_seed();
    ts_image im = tu_random_image(33, 17, 4, 2, &s);
    char err[256], why[256];
    for (int backend = 0; backend < 2; backend++)
        for (int level = 0; level <= 9; level += 3) {
            tsio_png_test_set_whole_limit(backend ? 1 : 0);
            for (int variant = 0; variant < 3; variant++) {
                /* 0: ICC and EXIF; 1: EXIF alone; 2: ICC and an EXIF with no TIFF header */
                tsio_meta m = {variant == 2 ? (unsigned char *)app1 : (unsigned char *)exif,
                               variant == 2 ? sizeof app1 : sizeof exif,
                               variant == 1 ? NULL : icc, variant == 1 ? 0 : sizeof icc};
                size_t len;
                ts_status st;
                unsigned char *png = encode_mem(&im, level, &m, &len, &st, err, sizeof err);
                tsio_meta got = {0};
                ts_image out;
                ts_status dst = png ? tsio_png_decode(png, len, TS_DEFAULT_MAX_PIXELS, &got, &out,
                                                      err, sizeof err)
                                    : st;
                int same = dst == TS_OK && tu_max_diff(&out, &im, NULL, NULL, NULL) == 0;
                int dec2 = png && decodes_to(png, len, &im, why, sizeof why);
                free(png);
                if (dst == TS_OK)
                    ts_image_free(&out);
                int exif_ok = variant == 2 ? !got.exif
                                           : got.exif_len == sizeof exif &&
                                                 !memcmp(got.exif, exif, sizeof exif);
                int icc_ok = variant == 1 ? !got.icc
                                          : got.icc_len == sizeof icc &&
                                                !memcmp(got.icc, icc, sizeof icc);
                tsio_meta_free(&got);
                tsio_png_test_set_whole_limit(0);
                CHECKF(same && dec2, "level %d backend %d variant %d: %s", level, backend,
                       variant, dst == TS_OK ? why : err);
                CHECKF(exif_ok, "level %d variant %d: EXIF", level, variant);
                CHECKF(icc_ok, "level %d variant %d: ICC", level, variant);
            }
        }
    ts_image_free(&im);
}

TEST(png_write_reports_a_failed_write)
{
    if (access("/dev/full", W_OK) != 0)
        SKIP("no /dev/full");
    /* 1.4 MB of random samples: the IDAT writes go past stdio's buffer, so the encoder itself
     * sees the failure (a small file's shows at fclose, which the caller checks). */
    uint64_t s = tu_seed();
    ts_image im = tu_random_image(700, 700, 3, 1, &s);
    char err[256];
    for (int backend = 0; backend < 2; backend++) {
        FILE *f = fopen("/dev/full", "w");
        CHECK(f);
        tsio_png_test_set_whole_limit(backend ? 1 : 0);
        ts_status st = tsio_png_encode(f, &im, 1, NULL, err, sizeof err);
        tsio_png_test_set_whole_limit(0);
        fclose(f);
        CHECKF(st == TS_ERR_IO && strstr(err, "write failed"), "backend %d: %d %s", backend, st,
               err);
    }
    ts_image_free(&im);
}

TEST(png_write_default_level_no_larger_than_opencv)
{
    if (!tu_have_cv2())
        SKIP("/usr/bin/python3 with cv2 not available");
    if (access("assets/seeding_by_Clements_Engelhardt.jpg", R_OK) != 0)
        SKIP("run from the repository root to test assets/");
    /* A 1600x1200 crop of the photo, gray and RGB(A) 8-bit, and the 16-bit asset: tessera's
     * default against cv2.imwrite's default (libpng: zlib level 1, run-length strategy, the sub
     * filter) of the same pixels, which cv2 reads back from tessera's file. */
    static const char script[] =
        "import sys, os, cv2\n"
        "bad = 0\n"
        "for p in sys.argv[1:]:\n"
        "    img = cv2.imread(p, cv2.IMREAD_UNCHANGED)\n"
        "    ok, enc = cv2.imencode('.png', img)\n"
        "    ours = os.path.getsize(p)\n"
        "    if ours > len(enc):\n"
        "        print(os.path.basename(p), ours, 'bytes; OpenCV', len(enc)); bad = 1\n"
        "sys.exit(bad)\n";
    char dir[] = "/tmp/tessera-pngsize-XXXXXX", cmd[2048], path[256], err[256];
    CHECK(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/check.py", dir);
    FILE *f = fopen(path, "w");
    CHECK(f && fwrite(script, 1, sizeof script - 1, f) == sizeof script - 1 && fclose(f) == 0);
    int n = snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s", path);
    ts_image photo, p16;
    CHECKF(tsio_load("assets/seeding_by_Clements_Engelhardt.jpg", NULL, &photo, err, sizeof err) ==
               TS_OK, "%s", err);
    CHECKF(tsio_load("assets/seeding_16bit.png", NULL, &p16, err, sizeof err) == TS_OK, "%s", err);
    int x0 = (photo.width - 1600) / 2, y0 = (photo.height - 1200) / 2;
    for (int ch = 1; ch <= 4; ch += 2) { /* gray and RGB from the photo */
        ts_image crop;
        CHECK(ts_image_alloc(&crop, 1600, 1200, ch == 1 ? 1 : 3, 1) == TS_OK);
        for (int y = 0; y < 1200; y++)
            for (int x = 0; x < 1600; x++)
                for (int c = 0; c < crop.channels; c++)
                    ts_put(&crop, x, y, c, ts_get(&photo, x0 + x, y0 + y, ch == 1 ? 1 : c));
        snprintf(path, sizeof path, "%s/crop%d.png", dir, ch);
        ts_status st = tsio_save(path, &crop, NULL, NULL, 0, err, sizeof err);
        ts_image_free(&crop);
        CHECKF(st == TS_OK, "%s", err);
        n += snprintf(cmd + n, sizeof cmd - (size_t)n, " %s", path);
    }
    snprintf(path, sizeof path, "%s/p16.png", dir);
    CHECKF(tsio_save(path, &p16, NULL, NULL, 0, err, sizeof err) == TS_OK, "%s", err);
    n += snprintf(cmd + n, sizeof cmd - (size_t)n, " %s", path);
    ts_image_free(&photo);
    ts_image_free(&p16);
    int rc = system(cmd);
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    CHECK(system(rm) == 0);
    CHECKF(rc == 0, "a default-level PNG larger than OpenCV's (sizes above)");
}

TEST(png_write_is_read_by_pillow_as_written)
{
    if (access("/usr/bin/python3", X_OK) != 0 ||
        system("/usr/bin/python3 -c 'import PIL, numpy' >/dev/null 2>&1") != 0)
        SKIP("/usr/bin/python3 with Pillow and numpy not available");
    /* Pillow has its own PNG reader (zlib only for the inflate): 8-bit gray, gray+alpha, RGB and
     * RGBA and 16-bit gray (the 16-bit colour types it cannot hold unreduced), every level's
     * kind (stored, sub/up, five filters) from both back ends, against the raw samples. */
    static const char script[] =
        "import sys, numpy as np\n"
        "from PIL import Image\n"
        "bad = 0\n"
        "for a in sys.argv[1:]:\n"
        "    png, raw, w, h, ch, by = a.split(',')\n"
        "    w, h, ch, by = int(w), int(h), int(ch), int(by)\n"
        "    want = np.fromfile(raw, dtype=np.uint16 if by == 2 else np.uint8).reshape(h, w, ch)\n"
        "    got = np.asarray(Image.open(png)).reshape(h, w, -1)\n"
        "    if got.shape != want.shape or not np.array_equal(got.astype(want.dtype), want):\n"
        "        print('differs', png, got.shape, got.dtype); bad = 1\n"
        "sys.exit(bad)\n";
    char dir[] = "/tmp/tessera-pil-XXXXXX", path[256], raw[256], cmd[16384], err[256];
    CHECK(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/check.py", dir);
    FILE *f = fopen(path, "w");
    CHECK(f && fwrite(script, 1, sizeof script - 1, f) == sizeof script - 1 && fclose(f) == 0);
    int n = snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s", path);
    static const int levels[] = {0, 1, 6};
    uint64_t s = tu_seed();
    for (int backend = 0; backend < 2; backend++)
        for (int ch = 1; ch <= 5; ch++) /* 5: 16-bit gray */
            for (size_t k = 0; k < sizeof levels / sizeof levels[0]; k++) {
                int c = ch == 5 ? 1 : ch, bytes = ch == 5 ? 2 : 1;
                ts_image im = k == 1 ? smooth_image(97, 41, c, bytes, &s)
                                     : tu_random_image(97, 41, c, bytes, &s);
                snprintf(path, sizeof path, "%s/p%d%d%zu.png", dir, backend, ch, k);
                snprintf(raw, sizeof raw, "%s/p%d%d%zu.raw", dir, backend, ch, k);
                FILE *fp = fopen(path, "wb"), *fr = fopen(raw, "wb");
                tsio_png_test_set_whole_limit(backend ? 1 : 0);
                ts_status st = fp ? tsio_png_encode(fp, &im, levels[k], NULL, err, sizeof err)
                                  : TS_ERR_IO;
                tsio_png_test_set_whole_limit(0);
                int ok = fp && fclose(fp) == 0 && fr &&
                         fwrite(im.data, 1, im.pitch * (size_t)im.height, fr) ==
                             im.pitch * (size_t)im.height;
                if (fr)
                    ok &= fclose(fr) == 0;
                ts_image_free(&im);
                CHECKF(st == TS_OK && ok, "%s: %s", path, err);
                n += snprintf(cmd + n, sizeof cmd - (size_t)n, " %s,%s,97,41,%d,%d", path, raw,
                              c, bytes);
            }
    int rc = system(cmd);
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    CHECK(system(rm) == 0);
    CHECKF(rc == 0, "Pillow reads other samples (see above)");
}
