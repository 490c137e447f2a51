/* test_io.c - image I/O: round trips through every writer, the hostile inputs of issue 8 (each
 * with its one-line reason), the decoder guards for stb_image 2.27, and the safe save (no partial
 * or temp file left by a failure, a full disk or a signal). Files go under one mkdtemp directory
 * in /tmp, removed at exit. */
#include "image_io.h"
#include "testutil.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- helpers */

static char tmp_root[64];

static void rm_tree(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return;
    if (S_ISDIR(sb.st_mode)) {
        chmod(path, 0700);
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            rm_tree(sub);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static void rm_root(void) { rm_tree(tmp_root); }

/* tmp_root/name (the directory is made on first use). */
static const char *tpath(const char *name)
{
    static char buf[8][4096];
    static int next;
    if (!tmp_root[0]) {
        snprintf(tmp_root, sizeof tmp_root, "/tmp/tessera-io-XXXXXX");
        if (!mkdtemp(tmp_root)) {
            perror("mkdtemp");
            abort();
        }
        atexit(rm_root);
    }
    char *p = buf[next++ % 8];
    snprintf(p, 4096, "%s/%s", tmp_root, name);
    return p;
}

static int write_bytes(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    int ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static unsigned char *read_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc(len > 0 ? (size_t)len : 1);
    *n = p ? fread(p, 1, (size_t)len, f) : 0;
    fclose(f);
    return p;
}

/* Files in dir whose names end in ".tmp". */
static int count_temps(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        n += l > 4 && !strcmp(e->d_name + l - 4, ".tmp");
    }
    if (d)
        closedir(d);
    return n;
}

static int file_exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A smooth image (JPEG's tolerance is about photographs, not noise): ramps that fold back
 * instead of wrapping, since a jump from 255 to 0 is an edge that 4:2:0 chroma blurs. */
static ts_image smooth_image(int w, int h, int ch, int bytes)
{
    ts_image im;
    if (ts_image_alloc(&im, w, h, ch, bytes) != TS_OK)
        abort();
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < ch; c++) {
                unsigned t = (unsigned)(x * 3 + y * 2 + c * 40) % 510;
                unsigned v = t < 256 ? t : 509 - t;
                ts_put(&im, x, y, c, bytes == 2 ? v * 257 : v);
            }
    return im;
}

static uint32_t test_crc32(const unsigned char *p, size_t n) /* bitwise: independent of zlib */
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    return ~c;
}

static size_t put_chunk(unsigned char *dst, const char *type, const unsigned char *data,
                        uint32_t declared_len, size_t real_len)
{
    dst[0] = (unsigned char)(declared_len >> 24), dst[1] = (unsigned char)(declared_len >> 16);
    dst[2] = (unsigned char)(declared_len >> 8), dst[3] = (unsigned char)declared_len;
    memcpy(dst + 4, type, 4);
    if (real_len)
        memcpy(dst + 8, data, real_len);
    uint32_t crc = test_crc32(dst + 4, 4 + real_len);
    dst[8 + real_len] = (unsigned char)(crc >> 24), dst[9 + real_len] = (unsigned char)(crc >> 16);
    dst[10 + real_len] = (unsigned char)(crc >> 8), dst[11 + real_len] = (unsigned char)crc;
    return 12 + real_len;
}

/* A PNG signature + IHDR (8-bit gray unless told) of w x h; returns bytes written. */
static size_t png_head(unsigned char *dst, uint32_t w, uint32_t h)
{
    unsigned char ihdr[13] = {0};
    for (int k = 0; k < 4; k++) {
        ihdr[k] = (unsigned char)(w >> (24 - 8 * k));
        ihdr[4 + k] = (unsigned char)(h >> (24 - 8 * k));
    }
    ihdr[8] = 8; /* bit depth; colour type 0 (gray), no interlace */
    memcpy(dst, "\x89PNG\r\n\x1a\n", 8);
    return 8 + put_chunk(dst + 8, "IHDR", ihdr, 13, 13);
}

static ts_status load_bytes(const void *p, size_t n, ts_image *im, char *err, size_t errlen)
{
    return tsio_load_memory(p, n, NULL, im, err, errlen);
}

static ts_status save_load(const char *name, const ts_image *in, ts_image *out, char *notice,
                           size_t nlen)
{
    char err[256];
    const char *path = tpath(name);
    ts_status st = tsio_save(path, in, NULL, notice, nlen, err, sizeof err);
    if (st != TS_OK) {
        printf("# save %s: %s\n", name, err);
        return st;
    }
    st = tsio_load(path, NULL, out, err, sizeof err);
    if (st != TS_OK)
        printf("# load %s: %s\n", name, err);
    return st;
}

/* Largest |expected - got| where got channel c comes from in channel map[c], 16-bit input taken
 * to 8 bits when `to8`; -1 if the shapes differ. */
static long mapped_diff(const ts_image *in, const ts_image *got, int out_ch, const int *map,
                        int to8, double *mean)
{
    if (got->width != in->width || got->height != in->height || got->channels != out_ch)
        return -1;
    long worst = 0;
    double sum = 0;
    for (int y = 0; y < in->height; y++)
        for (int x = 0; x < in->width; x++)
            for (int c = 0; c < out_ch; c++) {
                long e = (long)ts_get(in, x, y, map[c]);
                if (to8 && in->bytes == 2)
                    e = (e + 128) / 257;
                long d = labs(e - (long)ts_get(got, x, y, c));
                worst = d > worst ? d : worst;
                sum += (double)d;
            }
    if (mean)
        *mean = sum / ((double)in->width * in->height * out_ch);
    return worst;
}

static const int sizes[][2] = {{33, 17}, {1, 1}, {257, 129}, {2, 300}};

static int expect_refused(const char *name, const void *p, size_t n, ts_status want,
                          const char *text);

/* ---------------------------------------------------------------- names */

TEST(io_format_names)
{
    CHECK(tsio_format_from_name("a/b.PNG") == TSIO_PNG);
    CHECK(tsio_format_from_name("x.jpeg") == TSIO_JPEG);
    CHECK(tsio_format_from_name("x.JPG") == TSIO_JPEG);
    CHECK(tsio_format_from_name("x.bmp") == TSIO_BMP);
    CHECK(tsio_format_from_name("x.tga") == TSIO_TGA);
    CHECK(tsio_format_from_name("x.ppm") == TSIO_PNM && tsio_format_from_name("x.pgm") == TSIO_PNM);
    CHECK(tsio_format_from_name("x.pnm") == TSIO_PNM);
    CHECK(tsio_format_from_name("jpg") == TSIO_JPEG && tsio_format_from_name("PNG") == TSIO_PNG);
    CHECK(tsio_format_from_name("x.gif") == TSIO_UNKNOWN);
    CHECK(tsio_format_from_name("dir.png/noext") == TSIO_UNKNOWN);
    CHECK(tsio_format_from_name("") == TSIO_UNKNOWN && tsio_format_from_name(NULL) == TSIO_UNKNOWN);
    CHECK(!strcmp(tsio_format_ext(TSIO_JPEG), "jpg") && !strcmp(tsio_format_ext(TSIO_PNG), "png"));
    CHECK(!strcmp(tsio_output_ext(TSIO_PNM, 1), "pgm") &&
          !strcmp(tsio_output_ext(TSIO_PNM, 2), "pgm"));
    CHECK(!strcmp(tsio_output_ext(TSIO_PNM, 3), "ppm") &&
          !strcmp(tsio_output_ext(TSIO_PNM, 4), "ppm"));
    CHECK(!strcmp(tsio_output_ext(TSIO_TGA, 4), "tga"));
}

/* ---------------------------------------------------------------- round trips */

TEST(io_png_roundtrip_exact_8_and_16_bit_all_channels)
{
    uint64_t s = tu_seed();
    for (int bytes = 1; bytes <= 2; bytes++)
        for (int ch = 1; ch <= 4; ch++)
            for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
                ts_image in = tu_random_image(sizes[k][0], sizes[k][1], ch, bytes, &s), out;
                char notice[256];
                CHECK(save_load("rt.png", &in, &out, notice, sizeof notice) == TS_OK);
                CHECKF(ts_image_equal(&in, &out), "%dx%d ch %d bytes %d differ", in.width,
                       in.height, ch, bytes);
                CHECKF(notice[0] == '\0', "notice '%s'", notice);
                ts_image_free(&in);
                ts_image_free(&out);
            }
}

TEST(io_png_compression_levels)
{
    /* Every level writes the same pixels; more effort, fewer bytes; stored is the largest. A
     * smooth image, where the filters and levels have something to find. */
    ts_image in = smooth_image(300, 200, 3, 2), out;
    static const int levels[] = {TSIO_PNG_LEVEL_STORE, 1, 0, 9};
    size_t n[4];
    char err[256];
    for (int i = 0; i < 4; i++) {
        tsio_save_opts o = {.png_level = levels[i]};
        CHECKF(tsio_save(tpath("lv.png"), &in, &o, NULL, 0, err, sizeof err) == TS_OK, "%s", err);
        free(read_bytes(tpath("lv.png"), &n[i]));
        CHECK(tsio_load(tpath("lv.png"), NULL, &out, err, sizeof err) == TS_OK);
        CHECKF(ts_image_equal(&in, &out), "level %d", levels[i]);
        ts_image_free(&out);
    }
    CHECKF(n[0] > n[1] && n[1] >= n[2] && n[2] >= n[3], "stored %zu, 1: %zu, default: %zu, 9: %zu",
           n[0], n[1], n[2], n[3]);
    CHECKF(n[0] >= 300 * 200 * 6, "stored %zu", n[0]);
    tsio_save_opts bad = {.png_level = 10};
    CHECK(tsio_save(tpath("lv2.png"), &in, &bad, NULL, 0, err, sizeof err) == TS_ERR_INVALID);
    CHECK(strstr(err, "compression level 10") && !file_exists(tpath("lv2.png")));
    ts_image_free(&in);
}

TEST(io_pnm_roundtrip_exact_gray_rgb_alpha_dropped)
{
    static const int id[4] = {0, 1, 2, 3};
    uint64_t s = tu_seed();
    for (int bytes = 1; bytes <= 2; bytes++)
        for (int ch = 1; ch <= 4; ch++) {
            ts_image in = tu_random_image(33, 17, ch, bytes, &s), out;
            char notice[256];
            const char *name = ch <= 2 ? "rt.pgm" : "rt.ppm";
            CHECK(save_load(name, &in, &out, notice, sizeof notice) == TS_OK);
            int want = ts_color_channels(ch);
            CHECKF(out.bytes == bytes, "bytes %d, want %d", out.bytes, bytes);
            CHECKF(mapped_diff(&in, &out, want, id, 0, NULL) == 0, "ch %d bytes %d differ", ch,
                   bytes);
            CHECKF(ts_has_alpha(ch) == (strstr(notice, "alpha dropped") != NULL), "notice '%s'",
                   notice);
            ts_image_free(&in);
            ts_image_free(&out);
        }
}

TEST(io_bmp_roundtrip)
{
    /* stb's BMP writer: gray becomes 24-bit RGB, RGBA is 32-bit; gray+alpha goes out as RGBA. */
    static const int maps[5][4] = {{0}, {0, 0, 0}, {0, 0, 0, 1}, {0, 1, 2}, {0, 1, 2, 3}};
    static const int out_ch[5] = {0, 3, 4, 3, 4};
    uint64_t s = tu_seed();
    for (int bytes = 1; bytes <= 2; bytes++)
        for (int ch = 1; ch <= 4; ch++) {
            ts_image in = tu_band_image(33, 17, ch, bytes, bytes == 2 ? 257 : 1,
                                        (unsigned)ts_max_value(bytes), &s),
                     out;
            char notice[256];
            CHECK(save_load("rt.bmp", &in, &out, notice, sizeof notice) == TS_OK);
            CHECK(out.bytes == 1);
            long d = mapped_diff(&in, &out, out_ch[ch], maps[ch], 1, NULL);
            CHECKF(d == 0, "ch %d bytes %d: diff %ld (channels %d)", ch, bytes, d, out.channels);
            CHECKF((bytes == 2) == (strstr(notice, "16-bit converted") != NULL), "notice '%s'",
                   notice);
            ts_image_free(&in);
            ts_image_free(&out);
        }
}

TEST(io_tga_roundtrip_exact_all_channels)
{
    static const int id[4] = {0, 1, 2, 3};
    uint64_t s = tu_seed();
    for (int bytes = 1; bytes <= 2; bytes++)
        for (int ch = 1; ch <= 4; ch++) {
            ts_image in = tu_random_image(33, 17, ch, bytes, &s), out;
            char notice[256];
            CHECK(save_load("rt.tga", &in, &out, notice, sizeof notice) == TS_OK);
            long d = mapped_diff(&in, &out, ch, id, 1, NULL);
            CHECKF(d == 0, "ch %d bytes %d: diff %ld (channels %d)", ch, bytes, d, out.channels);
            CHECKF((bytes == 2) == (notice[0] != '\0'), "notice '%s'", notice);
            ts_image_free(&in);
            ts_image_free(&out);
        }
}

TEST(io_jpeg_roundtrip_within_tolerance)
{
    /* Gray and gray+alpha are written as 1-component JPEGs, the rest as YCbCr. */
    static const int maps[5][3] = {{0}, {0}, {0}, {0, 1, 2}, {0, 1, 2}};
    for (int bytes = 1; bytes <= 2; bytes++)
        for (int ch = 1; ch <= 4; ch++) {
            ts_image in = smooth_image(64, 48, ch, bytes), out;
            char notice[256], err[256];
            tsio_save_opts o = {.quality = 95};
            CHECK(tsio_save(tpath("rt.jpg"), &in, &o, notice, sizeof notice, err, sizeof err) ==
                  TS_OK);
            CHECK(tsio_load(tpath("rt.jpg"), NULL, &out, err, sizeof err) == TS_OK);
            double mean;
            int want = ch <= 2 ? 1 : 3;
            CHECKF(out.channels == want, "ch %d: reloaded with %d channels", ch, out.channels);
            long d = mapped_diff(&in, &out, want, maps[ch], 1, &mean);
            CHECKF(d >= 0 && d <= 24 && mean < 2.0, "ch %d bytes %d: max %ld mean %.2f", ch, bytes,
                   d, mean);
            CHECKF(ts_has_alpha(ch) == (strstr(notice, "alpha dropped") != NULL), "'%s'", notice);
            CHECKF((bytes == 2) == (strstr(notice, "16-bit") != NULL), "'%s'", notice);
            ts_image_free(&in);
            ts_image_free(&out);
        }
}

TEST(io_jpeg_quality_changes_size_and_is_checked)
{
    ts_image in = smooth_image(128, 96, 3, 1);
    char err[256];
    size_t n_lo = 0, n_hi = 0;
    tsio_save_opts lo = {.format = TSIO_JPEG, .quality = 10}, hi = {.format = TSIO_JPEG, .quality = 100}, bad = {.format = TSIO_JPEG, .quality = 101};
    CHECK(tsio_save(tpath("q.out"), &in, &lo, NULL, 0, err, sizeof err) == TS_OK);
    free(read_bytes(tpath("q.out"), &n_lo));
    CHECK(tsio_save(tpath("q.out"), &in, &hi, NULL, 0, err, sizeof err) == TS_OK);
    free(read_bytes(tpath("q.out"), &n_hi));
    CHECKF(n_lo < n_hi, "quality 10: %zu bytes, 100: %zu", n_lo, n_hi);
    CHECK(tsio_save(tpath("q2.jpg"), &in, &bad, NULL, 0, err, sizeof err) == TS_ERR_INVALID);
    CHECK(!file_exists(tpath("q2.jpg")));
    ts_image_free(&in);
}

TEST(io_save_refuses_unknown_format_without_creating_a_file)
{
    ts_image in = smooth_image(4, 4, 3, 1);
    char err[256];
    CHECK(tsio_save(tpath("x.gif"), &in, NULL, NULL, 0, err, sizeof err) == TS_ERR_INVALID);
    CHECK(strstr(err, "unknown output format") != NULL);
    CHECK(!file_exists(tpath("x.gif")));
    tsio_save_opts o = {.format = TSIO_PNG}; /* --format wins over the extension */
    CHECK(tsio_save(tpath("x.gif"), &in, &o, NULL, 0, err, sizeof err) == TS_OK);
    ts_image out;
    CHECK(tsio_load(tpath("x.gif"), NULL, &out, err, sizeof err) == TS_OK);
    CHECK(ts_image_equal(&in, &out));
    ts_image_free(&out);
    ts_image_free(&in);
}

TEST(io_pitched_image_saves_its_rows)
{
    uint64_t s = tu_seed();
    ts_image in = tu_random_image(31, 9, 3, 2, &s), pitched = in, out;
    pitched.pitch = ts_row_bytes(&in) + 10;
    pitched.data = calloc(pitched.pitch, 9);
    CHECK(pitched.data);
    for (int y = 0; y < 9; y++)
        memcpy((char *)pitched.data + y * pitched.pitch, (char *)in.data + y * in.pitch, in.pitch);
    static const char *names[] = {"p.png", "p.ppm", "p.tga", "p.bmp"};
    static const int id[4] = {0, 1, 2, 3};
    for (int i = 0; i < 4; i++) {
        CHECK(save_load(names[i], &pitched, &out, NULL, 0) == TS_OK);
        CHECKF(mapped_diff(&in, &out, 3, id, out.bytes == 1, NULL) == 0, "%s", names[i]);
        ts_image_free(&out);
    }
    free(pitched.data);
    ts_image_free(&in);
}

/* ---------------------------------------------------------------- independent decoder */

TEST(io_png_is_read_by_opencv_as_written)
{
    if (!tu_have_cv2())
        SKIP("/usr/bin/python3 with cv2 not available");
    /* cv2 reads through libpng, which checks every CRC and the zlib stream's Adler-32. The raw
     * samples go beside each PNG as native-endian bytes for the script to compare. */
    static const char script[] =
        "import sys, numpy as np, cv2\n"
        "bad = 0\n"
        "for a in sys.argv[1:]:\n"
        "    png, raw, w, h, ch, by = a.split(',')\n"
        "    w, h, ch, by = int(w), int(h), int(ch), int(by)\n"
        "    want = np.fromfile(raw, dtype=np.uint16 if by == 2 else np.uint8).reshape(h, w, ch)\n"
        "    got = cv2.imread(png, cv2.IMREAD_UNCHANGED)\n"
        "    if got is None: print('unreadable', png); bad = 1; continue\n"
        "    got = got.reshape(h, w, -1)\n"
        "    if got.dtype != want.dtype: print('dtype', got.dtype, png); bad = 1; continue\n"
        "    if ch == 2: exp = np.dstack([want[..., 0]] * 3 + [want[..., 1]])\n"
        "    elif ch >= 3: exp = want[..., [2, 1, 0, 3][:ch]]\n"
        "    else: exp = want\n"
        "    if got.shape != exp.shape or not np.array_equal(got, exp):\n"
        "        print('differs', png, got.shape, exp.shape); bad = 1\n"
        "sys.exit(bad)\n";
    CHECK(write_bytes(tpath("check.py"), script, sizeof script - 1));
    char cmd[8192];
    int n = snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s", tpath("check.py"));
    uint64_t s = tu_seed();
    for (int bytes = 1; bytes <= 2; bytes++)
        for (int ch = 1; ch <= 4; ch++)
            for (int stored = 0; stored <= 1; stored++) {
                char png[64], raw[64];
                snprintf(png, sizeof png, "cv_%d_%d_%d.png", bytes, ch, stored);
                snprintf(raw, sizeof raw, "cv_%d_%d_%d.raw", bytes, ch, stored);
                ts_image in = tu_random_image(37, 23, ch, bytes, &s);
                char err[256];
                tsio_save_opts so = {.png_level = stored ? TSIO_PNG_LEVEL_STORE : 0};
                ts_status st = tsio_save(tpath(png), &in, &so, NULL, 0, err, sizeof err);
                CHECKF(st == TS_OK, "%s", err);
                CHECK(write_bytes(tpath(raw), in.data, in.pitch * (size_t)in.height));
                n += snprintf(cmd + n, sizeof cmd - (size_t)n, " %s,%s,%d,%d,%d,%d", tpath(png),
                              tpath(raw), in.width, in.height, ch, bytes);
                ts_image_free(&in);
            }
    CHECKF(system(cmd) == 0, "cv2 disagrees (see above): %s", cmd);
}

/* ---------------------------------------------------------------- other decoders */

TEST(io_gif_loads_its_first_frame)
{
    /* Two 1x1 frames over a black/white palette: first black (index 0), then white. */
    static const unsigned char gif[] = {/* screen 1x1, global palette of 2: black, white */
                                        'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0x80, 0, 0, 0, 0,
                                        0, 255, 255, 255,
                                        /* frame 1: LZW codes clear, 0, end */
                                        0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0,
                                        /* frame 2: clear, 1, end */
                                        0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x4C, 0x01, 0, 0x3B};
    ts_image im;
    char err[256];
    CHECKF(load_bytes(gif, sizeof gif, &im, err, sizeof err) == TS_OK, "%s", err);
    CHECK(im.width == 1 && im.height == 1 && im.channels == 4 && im.bytes == 1);
    CHECKF(ts_get(&im, 0, 0, 0) == 0 && ts_get(&im, 0, 0, 3) == 255, "got %u",
           ts_get(&im, 0, 0, 0));
    ts_image_free(&im);
    /* Cut inside the first frame: an error (stb alone fills the rest in blank). Cut after it:
     * the first frame is all that is read. */
    static const size_t cuts[] = {6, 13, 16, 19, 25, 29, 31, 33};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++)
        CHECKF(expect_refused("cut.gif", gif, cuts[k], TS_ERR_FORMAT, "truncated GIF"), "cut %zu",
               cuts[k]);
    CHECK(load_bytes(gif, 34, &im, err, sizeof err) == TS_OK);
    ts_image_free(&im);
}

static size_t make_psd(unsigned char *p, int w, int h, int depth, const unsigned *v)
{
    size_t n = 0;
    memcpy(p, "8BPS\0\1\0\0\0\0\0\0\0\3", 14);
    n = 14;
    p[n++] = (unsigned char)(h >> 24), p[n++] = (unsigned char)(h >> 16);
    p[n++] = (unsigned char)(h >> 8), p[n++] = (unsigned char)h;
    p[n++] = (unsigned char)(w >> 24), p[n++] = (unsigned char)(w >> 16);
    p[n++] = (unsigned char)(w >> 8), p[n++] = (unsigned char)w;
    p[n++] = 0, p[n++] = (unsigned char)depth, p[n++] = 0, p[n++] = 3; /* RGB */
    memset(p + n, 0, 14); /* colour mode data, resources, layers: empty; compression: raw */
    n += 14;
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < w * h; i++) {
            unsigned x = v[i * 3 + c];
            if (depth == 16)
                p[n++] = (unsigned char)(x >> 8);
            p[n++] = (unsigned char)x;
        }
    return n;
}

TEST(io_psd_loads_8_and_16_bit)
{
    static const unsigned v8[] = {1, 2, 3, 40,  50, 60,  200, 210, 220,
                                  7, 8, 9, 100, 0,  255, 9,   9,   9};
    static const unsigned v16[] = {1000, 2, 65535, 4000, 50, 600, 20000, 210, 22,
                                   7,    8, 9,     100,  0,  255, 9,     9,   60000};
    for (int depth = 8; depth <= 16; depth += 8) {
        unsigned char buf[256];
        const unsigned *v = depth == 8 ? v8 : v16;
        size_t n = make_psd(buf, 3, 2, depth, v);
        ts_image im;
        char err[256];
        CHECKF(load_bytes(buf, n, &im, err, sizeof err) == TS_OK, "%s", err);
        CHECKF(im.width == 3 && im.height == 2 && im.bytes == depth / 8 && im.channels >= 3,
               "depth %d: %dx%d ch %d bytes %d", depth, im.width, im.height, im.channels, im.bytes);
        for (int i = 0; i < 6; i++)
            for (int c = 0; c < 3; c++)
                CHECKF(ts_get(&im, i % 3, i / 3, c) == v[i * 3 + c], "depth %d pixel %d", depth, i);
        ts_image_free(&im);
    }
}

TEST(io_pnm_16_bit_is_big_endian_and_maxval_scales)
{
    ts_image im;
    char err[256];
    static const char p16[] = "P5\n# comment\n1 1\n65535\n\x12\x34";
    CHECKF(load_bytes(p16, sizeof p16 - 1, &im, err, sizeof err) == TS_OK, "%s", err);
    CHECKF(im.bytes == 2 && ts_get(&im, 0, 0, 0) == 0x1234, "got %#x", ts_get(&im, 0, 0, 0));
    ts_image_free(&im);
    static const char p15[] = "P5 3 1 15\n\x0f\x07\x00";
    CHECKF(load_bytes(p15, sizeof p15 - 1, &im, err, sizeof err) == TS_OK, "%s", err);
    CHECK(im.bytes == 1 && ts_get(&im, 0, 0, 0) == 255 && ts_get(&im, 1, 0, 0) == 119 &&
          ts_get(&im, 2, 0, 0) == 0);
    ts_image_free(&im);
    static const char p1023[] = "P6 1 1 1023\n\x03\xff\x01\xff\x00\x00";
    CHECKF(load_bytes(p1023, sizeof p1023 - 1, &im, err, sizeof err) == TS_OK, "%s", err);
    CHECK(im.bytes == 2 && im.channels == 3 && ts_get(&im, 0, 0, 0) == 65535 &&
          ts_get(&im, 0, 0, 1) == (511u * 65535 + 511) / 1023 && ts_get(&im, 0, 0, 2) == 0);
    ts_image_free(&im);
}

/* ---------------------------------------------------------------- hostile inputs */

/* Loads bytes written to a file named `name`; expects status `want` and `text` in the reason. */
static int expect_refused(const char *name, const void *p, size_t n, ts_status want,
                          const char *text)
{
    ts_image im;
    char err[256];
    if (p && !write_bytes(tpath(name), p, n))
        return 0;
    ts_status st = tsio_load(tpath(name), NULL, &im, err, sizeof err);
    if (st != want || !strstr(err, text) || strchr(err, '\n') || strstr(err, tmp_root)) {
        printf("# %s: status %d (%s), reason '%s'; want %d with '%s'\n", name, st,
               ts_status_str(st), err, want, text);
        if (st == TS_OK)
            ts_image_free(&im);
        return 0;
    }
    return im.data == NULL;
}

TEST(io_empty_text_directory_missing)
{
    CHECK(expect_refused("empty.png", "", 0, TS_ERR_FORMAT, "empty file"));
    static const char text[] = "hello, this is not an image\n";
    CHECK(expect_refused("text.png", text, sizeof text - 1, TS_ERR_FORMAT,
                         "not an image (unknown format)"));
    CHECK(mkdir(tpath("dir.png"), 0755) == 0);
    CHECK(expect_refused("dir.png", NULL, 0, TS_ERR_IO, "is a directory"));
    CHECK(expect_refused("missing.png", NULL, 0, TS_ERR_IO, "No such file"));
    ts_image im;
    char err[256];
    CHECK(tsio_load_memory(NULL, 0, NULL, &im, err, sizeof err) == TS_ERR_FORMAT);
    CHECK(tsio_load("/dev/null", NULL, &im, err, sizeof err) == TS_ERR_IO);
    CHECK(strstr(err, "not a regular file"));
}

TEST(io_unreadable_file)
{
    if (geteuid() == 0)
        SKIP("running as root: chmod 000 does not stop reads");
    ts_image in = smooth_image(4, 4, 1, 1);
    char err[256];
    CHECK(tsio_save(tpath("locked.png"), &in, NULL, NULL, 0, err, sizeof err) == TS_OK);
    ts_image_free(&in);
    CHECK(chmod(tpath("locked.png"), 0) == 0);
    CHECK(expect_refused("locked.png", NULL, 0, TS_ERR_IO, "Permission denied"));
}

TEST(io_hdr_and_ascii_pnm_are_refused)
{
    static const char hdr[] = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 1 +X 1\n\x80\x80\x80\x81";
    CHECK(expect_refused("x.hdr", hdr, sizeof hdr - 1, TS_ERR_UNSUPPORTED,
                         "HDR images are not supported"));
    static const char p2[] = "P2\n1 1\n255\n7\n";
    CHECK(expect_refused("x.pgm", p2, sizeof p2 - 1, TS_ERR_UNSUPPORTED, "ASCII PNM"));
}

TEST(io_huge_header_refused_before_decoding)
{
    /* 100000x100000 with a garbage IDAT: a decode would fail as corrupt, the limit comes first. */
    unsigned char buf[256];
    size_t n = png_head(buf, 100000, 100000);
    n += put_chunk(buf + n, "IDAT", (const unsigned char *)"garbage!", 8, 8);
    n += put_chunk(buf + n, "IEND", NULL, 0, 0);
    CHECK(expect_refused(
        "huge.png", buf, n, TS_ERR_TOO_LARGE,
        "image is 100000x100000, over the limit of 268435456 pixels (--max-pixels)"));
    n = png_head(buf, 2000000, 1);
    n += put_chunk(buf + n, "IEND", NULL, 0, 0);
    CHECK(expect_refused("wide.png", buf, n, TS_ERR_TOO_LARGE, "pixels on a side"));
}

TEST(io_max_pixels_option)
{
    ts_image in = smooth_image(64, 64, 3, 1), out;
    char err[256];
    static const char *names[] = {"mp.png", "mp.jpg", "mp.bmp", "mp.tga", "mp.ppm"};
    for (int i = 0; i < 5; i++) {
        CHECK(tsio_save(tpath(names[i]), &in, NULL, NULL, 0, err, sizeof err) == TS_OK);
        tsio_load_opts small = {.max_pixels = 4095}, exact = {.max_pixels = 4096};
        CHECKF(tsio_load(tpath(names[i]), &small, &out, err, sizeof err) == TS_ERR_TOO_LARGE, "%s",
               names[i]);
        CHECKF(strstr(err, "64x64, over the limit of 4095 pixels"), "%s: %s", names[i], err);
        CHECKF(tsio_load(tpath(names[i]), &exact, &out, err, sizeof err) == TS_OK, "%s: %s",
               names[i], err);
        ts_image_free(&out);
    }
    ts_image_free(&in);
}

TEST(io_zero_width_headers)
{
    unsigned char buf[128];
    size_t n = png_head(buf, 0, 5);
    n += put_chunk(buf + n, "IEND", NULL, 0, 0);
    CHECK(expect_refused("zero.png", buf, n, TS_ERR_FORMAT, "image is 0x5 (no pixels)"));
    static const char pnm[] = "P5 0 5 255\n";
    CHECK(expect_refused("zero.pgm", pnm, sizeof pnm - 1, TS_ERR_FORMAT, "no pixels"));
    /* A BMP of width 0: BITMAPINFOHEADER, 24-bit. */
    unsigned char bmp[54] = {'B', 'M', 54, 0, 0, 0, 0, 0, 0, 0, 54, 0, 0, 0, 40,
                             0,   0,   0,  0, 0, 0, 0, 5, 0, 0, 0,  1, 0, 24};
    ts_image im;
    char err[256];
    CHECK(load_bytes(bmp, sizeof bmp, &im, err, sizeof err) == TS_ERR_FORMAT);
    CHECK(err[0] != '\0');
}

static unsigned char *saved_bytes(const char *name, const ts_image *im, size_t *n)
{
    char err[256];
    if (tsio_save(tpath(name), im, NULL, NULL, 0, err, sizeof err) != TS_OK)
        return NULL;
    return read_bytes(tpath(name), n);
}

TEST(io_truncated_png_jpeg_bmp_pnm)
{
    uint64_t s = tu_seed();
    ts_image in = tu_random_image(40, 30, 3, 1, &s);
    static const struct {
        const char *name, *reason;
    } f[] = {{"t.png", "truncated PNG"},
             {"t.jpg", "truncated JPEG"},
             {"t.bmp", "truncated BMP"},
             {"t.ppm", "truncated PNM"}};
    for (int i = 0; i < 4; i++) {
        size_t n;
        unsigned char *b = saved_bytes(f[i].name, &in, &n);
        CHECK(b && n > 100);
        size_t cuts[] = {8, 20, 33, 60, n / 3, n / 2, n - 12, n - 2, n - 1};
        for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++)
            CHECKF(expect_refused("cut.bin", b, cuts[k], TS_ERR_FORMAT, f[i].reason),
                   "%s cut at %zu of %zu", f[i].name, cuts[k], n);
        CHECK(expect_refused("cut.bin", b, 1, TS_ERR_FORMAT, "not an image"));
        free(b);
    }
    ts_image_free(&in);
}

TEST(io_guard_png_chunk_length_past_the_end)
{
    /* stb 2.27 reallocs its IDAT buffer to the declared length before reading: 2 GiB from a
     * 60-byte file. The guard refuses it before stb sees the bytes. */
    unsigned char buf[128];
    static const unsigned char z[] = {0x78, 0x01, 0x01, 0x02, 0x00, 0xfd, 0xff, 0, 0};
    size_t h = png_head(buf, 1, 1), n = h + put_chunk(buf + h, "IDAT", z, 0x7FFFFFF0u, sizeof z);
    CHECK(expect_refused("lie.png", buf, n, TS_ERR_FORMAT, "truncated PNG"));
    n = h + put_chunk(buf + h, "IDAT", z, 0x80000000u, sizeof z);
    CHECK(expect_refused("lie2.png", buf, n, TS_ERR_FORMAT, "corrupt PNG (chunk length"));
    /* The same file with the honest length decodes. */
    n = h + put_chunk(buf + h, "IDAT", z, sizeof z, sizeof z);
    n += put_chunk(buf + n, "IEND", NULL, 0, 0);
    ts_image im;
    char err[256];
    CHECKF(load_bytes(buf, n, &im, err, sizeof err) == TS_OK, "%s", err);
    ts_image_free(&im);
}

/* Fixed-Huffman deflate of one literal 0 then `copies` matches of 258 bytes at distance 1. */
static unsigned char *deflate_bomb(size_t copies, size_t *len)
{
    size_t cap = copies * 13 / 8 + 64, bits = 0;
    unsigned char *p = calloc(cap, 1);
#define PUT(v, nb) /* Huffman codes go most significant bit first */ \
    for (int i_ = (nb)-1; i_ >= 0; i_--, bits++)                     \
        p[bits / 8] |= (unsigned char)((((v) >> i_) & 1) << (bits % 8));
    p[0] = 0x78, p[1] = 0x01;
    bits = 16;
    PUT(1, 1);    /* BFINAL */
    PUT(2, 2);    /* BTYPE 01 (fixed), written LSB first: bits 1 then 0 */
    PUT(0x30, 8); /* literal 0 */
    for (size_t i = 0; i < copies; i++) {
        PUT(0xC5, 8); /* length 258 (symbol 285) */
        PUT(0, 5);    /* distance 1 */
    }
    PUT(0, 7); /* end of block */
#undef PUT
    *len = (bits + 7) / 8 + 4; /* + an Adler-32 that stb does not check */
    return p;
}

TEST(io_png_zlib_bomb_costs_the_image_not_the_stream)
{
    /* A 1x1 PNG whose IDAT would inflate to 256 MB: libspng inflates only the rows the image
     * has (one), so the load is quick and small whatever the stream holds; the rest of the
     * stream is never inflated. */
    size_t zlen, n;
    unsigned char *z = deflate_bomb((size_t)1 << 20, &zlen);
    unsigned char *buf = malloc(zlen + 128);
    CHECK(z && buf);
    n = png_head(buf, 1, 1);
    n += put_chunk(buf + n, "IDAT", z, (uint32_t)zlen, zlen);
    n += put_chunk(buf + n, "IEND", NULL, 0, 0);
    ts_image im;
    char err[256];
    double t0 = now_s();
    ts_status st = load_bytes(buf, n, &im, err, sizeof err);
    double dt = now_s() - t0;
    CHECKF(st == TS_OK || st == TS_ERR_FORMAT, "%d %s", st, err);
    if (st == TS_OK)
        CHECK(im.width == 1 && im.height == 1);
    CHECKF(dt < 0.5, "took %.3f s", dt);
    ts_image_free(&im);
    free(z);
    free(buf);
}

/* The first DHT segment of a JPEG: the index of its 0xFF. */
static size_t find_marker(const unsigned char *b, size_t n, unsigned m)
{
    for (size_t i = 0; i + 1 < n; i++)
        if (b[i] == 0xFF && b[i + 1] == m)
            return i;
    return 0;
}

TEST(io_jpeg_huffman_table_over_256_codes)
{
    /* stb 2.27 wrote past size[257] while building such a table; libjpeg refuses it. */
    uint64_t s = tu_seed();
    ts_image in = tu_random_image(32, 16, 3, 1, &s);
    size_t n;
    unsigned char *b = saved_bytes("dht.jpg", &in, &n);
    ts_image_free(&in);
    CHECK(b);
    size_t d = find_marker(b, n, 0xC4);
    CHECK(d > 0);
    unsigned char saved = b[d + 20];
    b[d + 20] = 255; /* 16-bit codes of the first table: 255 more than there are */
    CHECK(expect_refused("dht_bad.jpg", b, n, TS_ERR_FORMAT, "corrupt JPEG (Bogus Huffman table"));
    b[d + 20] = saved;
    free(b);
}

TEST(io_jpeg_tables_after_the_scan)
{
    /* A DHT after the scan (as in progressive JPEGs), also past an RST marker in the entropy-
     * coded bytes (full of 0xFF00 from random data): read and checked there. */
    uint64_t s = tu_seed();
    ts_image in = tu_random_image(64, 64, 3, 1, &s), ref, out;
    size_t n;
    unsigned char *b = saved_bytes("scan.jpg", &in, &n);
    ts_image_free(&in);
    CHECK(b && n > 4 && b[n - 2] == 0xFF && b[n - 1] == 0xD9);
    char err[256];
    CHECK(load_bytes(b, n, &ref, err, sizeof err) == TS_OK);
    size_t dht = find_marker(b, n, 0xC4), sos = find_marker(b, n, 0xDA);
    CHECK(dht && sos > dht && memchr(b + sos, 0xFF, n - sos - 2) != NULL);
    size_t dlen = (size_t)b[dht + 2] << 8 | b[dht + 3];
    unsigned char *g = malloc(n + dlen + 64);
    CHECK(g);
    /* 1: a copy of the good DHT before EOI decodes to the same image. */
    memcpy(g, b, n - 2);
    memcpy(g + n - 2, b + dht, dlen + 2);
    memcpy(g + n + dlen, "\xFF\xD9", 2);
    CHECKF(load_bytes(g, n + dlen + 2, &out, err, sizeof err) == TS_OK, "%s", err);
    CHECK(ts_image_equal(&ref, &out));
    ts_image_free(&out);
    /* 2: a bad one there is refused. */
    static const unsigned char bad[] = {0xFF, 0xC4, 0, 19, 0x10, 0, 0, 0, 0,  0,  0,
                                        0,    0,    0, 0,  0,    0, 0, 0, 45, 255};
    memcpy(g + n - 2, bad, sizeof bad);
    memcpy(g + n - 2 + sizeof bad, "\xFF\xD9", 2);
    CHECK(expect_refused("late_dht.jpg", g, n + sizeof bad, TS_ERR_FORMAT, "corrupt JPEG"));
    /* 3: the same with an RST marker in the middle of the entropy-coded data. */
    size_t mid = sos + (n - sos) / 2;
    while (b[mid - 1] == 0xFF || b[mid] == 0xFF)
        mid++;
    memcpy(g, b, mid);
    memcpy(g + mid, "\xFF\xD3", 2);
    memcpy(g + mid + 2, b + mid, n - 2 - mid);
    memcpy(g + n, bad, sizeof bad);
    memcpy(g + n + sizeof bad, "\xFF\xD9", 2);
    CHECK(expect_refused("rst_dht.jpg", g, n + sizeof bad + 2, TS_ERR_FORMAT, "corrupt JPEG"));
    ts_image_free(&ref);
    free(g);
    free(b);
}

TEST(io_guard_pnm_header_integer_overflow)
{
    static const char big[] = "P5 99999999999999999999 1 255\n\x00";
    CHECK(expect_refused("big.pgm", big, sizeof big - 1, TS_ERR_FORMAT, "corrupt PNM"));
    static const char zero_max[] = "P5 1 1 0\n\x00";
    CHECK(expect_refused("max0.pgm", zero_max, sizeof zero_max - 1, TS_ERR_FORMAT, "maxval"));
}

/* ---------------------------------------------------------------- saving safely */

TEST(io_save_atomic_refuses_existing_and_overwrites_with_force)
{
    uint64_t s = tu_seed();
    ts_image a = tu_random_image(9, 7, 3, 1, &s), b = tu_random_image(9, 7, 3, 1, &s), got;
    char err[256];
    const char *p = tpath("atomic.png");
    CHECKF(tsio_save_atomic(p, &a, NULL, 0, NULL, 0, err, sizeof err) == TS_OK, "%s", err);
    CHECK(tsio_save_atomic(p, &b, NULL, 0, NULL, 0, err, sizeof err) == TS_ERR_IO);
    CHECKF(!strcmp(err, "exists (use --force)"), "'%s'", err);
    CHECK(tsio_load(p, NULL, &got, err, sizeof err) == TS_OK && ts_image_equal(&a, &got));
    ts_image_free(&got);
    CHECK(tsio_save_atomic(p, &b, NULL, 1, NULL, 0, err, sizeof err) == TS_OK);
    CHECK(tsio_load(p, NULL, &got, err, sizeof err) == TS_OK && ts_image_equal(&b, &got));
    ts_image_free(&got);
    CHECK(count_temps(tmp_root) == 0);
    /* Never renamed over something that is not a regular file. */
    tsio_save_opts png = {.format = TSIO_PNG};
    CHECK(tsio_save_atomic("/dev/null", &a, &png, 1, NULL, 0, err, sizeof err) == TS_ERR_IO);
    CHECKF(strstr(err, "not a regular file"), "'%s'", err);
    CHECK(mkdir(tpath("adir.png"), 0755) == 0);
    CHECK(tsio_save_atomic(tpath("adir.png"), &a, NULL, 1, NULL, 0, err, sizeof err) == TS_ERR_IO);
    CHECKF(strstr(err, "is a directory"), "'%s'", err);
    ts_image_free(&a);
    ts_image_free(&b);
}

TEST(io_save_atomic_missing_directory_leaves_nothing)
{
    ts_image a = smooth_image(5, 5, 1, 1);
    char err[256];
    CHECK(tsio_save_atomic(tpath("nodir/x.png"), &a, NULL, 0, NULL, 0, err, sizeof err) ==
          TS_ERR_IO);
    CHECKF(strstr(err, "No such file or directory"), "'%s'", err);
    CHECK(count_temps(tmp_root) == 0 && !file_exists(tpath("nodir")));
    ts_image_free(&a);
}

TEST(io_disk_full_leaves_no_file_and_keeps_the_old_one)
{
    if (access("/dev/full", W_OK) != 0)
        SKIP("no /dev/full");
    ts_image a = smooth_image(300, 200, 3, 2), old = smooth_image(3, 3, 1, 1), got;
    char err[256];
    const char *dir = tpath("full");
    CHECK(mkdir(dir, 0755) == 0);
    char p[4096], q[4096];
    snprintf(p, sizeof p, "%s/new.png", dir);
    snprintf(q, sizeof q, "%s/old.png", dir);
    CHECK(tsio_save(q, &old, NULL, NULL, 0, err, sizeof err) == TS_OK);
    static const char *names[] = {"new.png", "new.jpg", "new.bmp", "new.tga", "new.ppm"};
    for (int i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        tsio_test_set_write_device("/dev/full");
        ts_status st1 = tsio_save_atomic(p, &a, NULL, 0, NULL, 0, err, sizeof err);
        ts_status st2 = tsio_save_atomic(q, &a, NULL, 1, NULL, 0, err, sizeof err);
        ts_status st3 = tsio_save(p, &a, NULL, NULL, 0, err, sizeof err);
        tsio_test_set_write_device(NULL);
        CHECKF(st1 == TS_ERR_IO && st2 == TS_ERR_IO && st3 == TS_ERR_IO, "%s: %d %d %d", names[i],
               st1, st2, st3);
        CHECKF(strstr(err, "No space left on device"), "'%s'", err);
        CHECKF(!file_exists(p), "%s left behind", p);
        CHECK(count_temps(dir) == 0);
    }
    CHECK(tsio_load(q, NULL, &got, err, sizeof err) == TS_OK && ts_image_equal(&old, &got));
    ts_image_free(&got);
    /* Written straight to the device: an error, and the device is not removed. */
    CHECK(tsio_save("/dev/full", &a, &(tsio_save_opts){.format = TSIO_PNG}, NULL, 0, err, sizeof err) ==
          TS_ERR_IO);
    struct stat sb;
    CHECK(stat("/dev/full", &sb) == 0 && S_ISCHR(sb.st_mode));
    ts_image_free(&a);
    ts_image_free(&old);
}

TEST(io_paths_with_spaces_and_non_ascii)
{
    uint64_t s = tu_seed();
    ts_image a = tu_random_image(8, 8, 4, 2, &s), got;
    char err[256], p[4096];
    const char *dir = tpath("dir with spaces ünï");
    CHECK(mkdir(dir, 0755) == 0);
    snprintf(p, sizeof p, "%s/画像 été.png", dir);
    CHECKF(tsio_save_atomic(p, &a, NULL, 0, NULL, 0, err, sizeof err) == TS_OK, "%s", err);
    CHECKF(tsio_load(p, NULL, &got, err, sizeof err) == TS_OK, "%s", err);
    CHECK(ts_image_equal(&a, &got));
    CHECK(count_temps(dir) == 0);
    ts_image_free(&got);
    ts_image_free(&a);
}

typedef struct saver {
    int id;
    int failures;
} saver;

static void *save_many(void *arg)
{
    saver *sv = arg;
    uint64_t s = tu_seed() + (uint64_t)sv->id;
    for (int i = 0; i < 8; i++) {
        char path[4096], err[256]; /* not tpath(): its buffers are not per thread */
        snprintf(path, sizeof path, "%s/jobs/t%d_%d.%s", tmp_root, sv->id, i,
                 i % 2 ? "png" : "jpg");
        ts_image a = tu_random_image(40 + i, 30, 3, 1, &s), got = {0};
        if (tsio_save_atomic(path, &a, NULL, 0, NULL, 0, err, sizeof err) != TS_OK ||
            tsio_load(path, NULL, &got, err, sizeof err) != TS_OK)
            sv->failures++;
        else if (got.width != a.width)
            sv->failures++;
        ts_image_free(&got);
        ts_image_free(&a);
    }
    return NULL;
}

TEST(io_threads_save_at_once)
{
    CHECK(mkdir(tpath("jobs"), 0755) == 0);
    tu_seed(); /* set once before the threads read it */
    pthread_t t[4];
    saver sv[4];
    for (int i = 0; i < 4; i++) {
        sv[i] = (saver){i, 0};
        CHECK(pthread_create(&t[i], NULL, save_many, &sv[i]) == 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 4; i++)
        CHECKF(sv[i].failures == 0, "thread %d: %d failures", i, sv[i].failures);
    CHECK(count_temps(tpath("jobs")) == 0);
}

static void on_term(int sig)
{
    (void)sig;
    tsio_remove_temps();
    _exit(3);
}

TEST(io_signal_removes_the_temp_file)
{
    /* A child's save blocks on a FIFO (the test write device) while its temp file exists; a
     * SIGTERM handler that calls tsio_remove_temps() must leave the directory clean. */
    const char *dir = tpath("sig");
    char fifo[4096], target[4096];
    CHECK(mkdir(dir, 0755) == 0);
    snprintf(fifo, sizeof fifo, "%s/fifo", tmp_root);
    snprintf(target, sizeof target, "%s/out.png", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_term;
        sigaction(SIGTERM, &sa, NULL);
        ts_image a = smooth_image(16, 16, 3, 1);
        char err[256];
        tsio_test_set_write_device(fifo);
        tsio_save_atomic(target, &a, NULL, 0, NULL, 0, err, sizeof err);
        _exit(0);
    }
    int seen = 0;
    for (int i = 0; i < 500 && !seen; i++) { /* up to 5 s */
        seen = count_temps(dir) == 1;
        if (!seen)
            nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    kill(pid, seen ? SIGTERM : SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(seen);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 3, "child status %#x", status);
    CHECK(count_temps(dir) == 0);
    CHECK(!file_exists(target));
}

/* ---------------------------------------------------------------- the bundled assets */

TEST(io_assets_load)
{
    static const struct {
        const char *name;
        int w, h, ch, bytes;
    } a[] = {
        {"astronaut.png", 512, 512, 3, 1},
        {"camera.png", 512, 512, 1, 1},
        {"clock_motion.png", 400, 300, 1, 1},
        {"microaneurysms.png", 102, 102, 1, 1},
        {"chelsea_rgba.png", 451, 300, 4, 1},
        {"coffee_257x129.png", 257, 129, 3, 1},
        {"seeding_by_Clements_Engelhardt.jpg", 5312, 2988, 3, 1},
        {"seeding_16bit.png", 332, 186, 3, 2},
        {"basn0g16.png", 32, 32, 1, 2},
        {"basn2c16.png", 32, 32, 3, 2},
        {"basn4a16.png", 32, 32, 2, 2},
        {"basn6a16.png", 32, 32, 4, 2},
        {"basn4a08.png", 32, 32, 2, 1},
    };
    if (access("assets/README.md", R_OK) != 0)
        SKIP("run from the repository root to test assets/");
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        char p[256], err[256];
        ts_image im;
        snprintf(p, sizeof p, "assets/%s", a[i].name);
        CHECKF(tsio_load(p, NULL, &im, err, sizeof err) == TS_OK, "%s: %s", p, err);
        CHECKF(im.width == a[i].w && im.height == a[i].h && im.channels == a[i].ch &&
                   im.bytes == a[i].bytes,
               "%s: %dx%d ch %d bytes %d", p, im.width, im.height, im.channels, im.bytes);
        ts_image_free(&im);
    }
}

/* tsio_read_file, the one guarded read: a JPEG whole (across several buffer growths), a file of
 * another format when JPEG alone is asked for refused after its head, a missing file. */
TEST(io_read_file)
{
    size_t n = 200000, len = 1;
    unsigned char *data = xmalloc(n);
    for (size_t i = 0; i < n; i++)
        data[i] = (unsigned char)(i * 7 + (i >> 9));
    data[0] = 0xFF, data[1] = 0xD8, data[2] = 0xFF, data[3] = 0xFE; /* SOI, COM */
    const char *p = tpath("read_file.jpg");
    CHECK(write_bytes(p, data, n));
    char err[128] = "";
    unsigned char *got = NULL;
    const tsio_codec *c = NULL;
    CHECKF(tsio_read_file(p, 0, NULL, &got, &len, &c, err, sizeof err) == TS_OK, "%s", err);
    CHECK(got && len == n && !memcmp(got, data, n) && c == tsio_codec_jpeg());
    free(got);
    CHECK(tsio_read_file(p, 0, tsio_codec_jpeg(), &got, &len, NULL, err, sizeof err) == TS_OK);
    free(got);
    CHECK(tsio_read_file(p, 0, tsio_codec_of(TSIO_PNG), &got, &len, NULL, err, sizeof err) ==
          TS_ERR_UNSUPPORTED);
    CHECKF(!got && len == 0 && strstr(err, "not PNG but JPEG"), "'%s'", err);
    CHECK(tsio_read_file(tpath("no-such-file"), 0, NULL, &got, &len, NULL, err, sizeof err) ==
          TS_ERR_IO);
    CHECKF(!got && strstr(err, "No such file"), "'%s'", err);
    free(data);
}

/* A file of no known format is refused after its first 64 KB: a 1.5 GB sparse file of zeros used
 * to be read whole (1.47 GB peak, 4.9 s) before the refusal. */
TEST(io_unknown_format_is_read_no_further_than_its_head)
{
    const char *p = tpath("unknown.bin");
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, (off_t)1536 << 20) == 0);
    close(fd);
    unsigned char *got = NULL;
    size_t len = 0;
    char err[128];
    double t0 = now_ms();
    CHECK(tsio_read_file(p, 0, NULL, &got, &len, NULL, err, sizeof err) == TS_ERR_FORMAT);
    CHECKF(strstr(err, "unknown format") != NULL, "%s", err);
    ts_image im;
    CHECK(tsio_load(p, NULL, &im, err, sizeof err) == TS_ERR_FORMAT);
    double ms = now_ms() - t0;
    CHECKF(ms < 500, "%.0f ms: read past the head?", ms);
    unlink(p);
}


/* The codec table (codec_table.c): every row can be found by its bytes, named rows say why they
 * are not read, written formats have an encoder and an extension that names them back. */
TEST(codec_table_keeps_its_rules)
{
    int jpegs = 0;
    for (int i = 0; i < tsio_codec_count(); i++) {
        const tsio_codec *c = tsio_codec_at(i);
        CHECKF(c->name && c->sniff && c->exts, "row %d", i);
        CHECKF(c->decode || c->unsupported, "%s: no decoder and no reason", c->name);
        jpegs += c->gpu_decode;
        if (c->format != TSIO_UNKNOWN) {
            CHECKF(c->encode && c->ext && tsio_codec_of(c->format) == c, "%s", c->name);
            CHECKF(tsio_format_from_name(c->ext) == c->format, "%s", c->name);
            CHECK(strcmp(tsio_format_ext(c->format), c->ext) == 0);
        }
    }
    CHECK(jpegs == 1 && tsio_codec_jpeg()->gpu_decode);
    CHECK(tsio_codec_at(-1) == NULL && tsio_codec_at(tsio_codec_count()) == NULL);
    /* one JPEG sniffer: SOI followed by a marker, as libjpeg and nvJPEG need */
    CHECK(tsio_codec_sniff((const unsigned char *)"\xFF\xD8\xFF\xE0", 4) == tsio_codec_jpeg());
    CHECK(tsio_codec_sniff((const unsigned char *)"\xFF\xFF\xD8\xFF", 4) != tsio_codec_jpeg());
    CHECK(tsio_is_jpeg((const unsigned char *)"\xFF\xD8\xFF", 3) &&
          !tsio_is_jpeg((const unsigned char *)"\xFF\xD8", 2));
    CHECK(tsio_is_image_name("a/b.TIFF") && tsio_is_image_name("x.heic") &&
          !tsio_is_image_name("x.txt") && !tsio_is_image_name(".png"));
    int q;
    CHECK(tsio_quality(0, &q, NULL, 0) == TS_OK && q == TSIO_QUALITY_DEFAULT);
    CHECK(tsio_quality(TSIO_QUALITY_MAX + 1, &q, NULL, 0) == TS_ERR_INVALID);
}

/* The bytes of nvJPEG's encode go through the same atomic write as tsio_save_atomic: a directory
 * or a device at the target is refused (write_bytes of the GPU batch skipped both checks). */
TEST(io_save_bytes_checks_the_target)
{
    char err[256];
    const char *dir = tpath("bytes-dir");
    mkdir(dir, 0755);
    CHECK(tsio_save_bytes(dir, "x", 1, 1, err, sizeof err) == TS_ERR_IO);
    CHECKF(strstr(err, "directory") != NULL, "%s", err);
    CHECK(tsio_save_bytes("/dev/null", "x", 1, 1, err, sizeof err) == TS_ERR_IO);
    CHECKF(strstr(err, "not a regular file") != NULL, "%s", err);
    const char *p = tpath("bytes.jpg");
    unlink(p);
    CHECK(tsio_save_bytes(p, "abc", 3, 0, err, sizeof err) == TS_OK);
    CHECK(tsio_save_bytes(p, "abc", 3, 0, err, sizeof err) == TS_ERR_IO);
    CHECKF(strstr(err, "exists") != NULL, "%s", err);
    tsio_test_set_write_device("/dev/full");
    CHECK(tsio_save_bytes(p, "abcd", 4, 1, err, sizeof err) == TS_ERR_IO);
    tsio_test_set_write_device(NULL);
    struct stat sb;
    CHECK(stat(p, &sb) == 0 && sb.st_size == 3); /* the old file stays whole */
    unlink(p);
    rmdir(dir);
}
