/* test_hostile.c - crafted decoder inputs, each file made here: JPEG tables that are never
 * defined (state must not come from an earlier file), scan-count bombs, 12-bit and lossless
 * JPEG named unsupported, palette indices past a BMP palette, top-down BMP, sparse and truncated
 * TGA, truncated PSD and a PSD colour under its alpha's matte, a 16384x16384 RGBA16 PNG. */
#include "image_io.h"
#include "exif.h"
#include "kernel_file.h"
#include "photo.h"
#include "util.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <tiffio.h>
#include <zlib.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Loads crafted bytes; with TESSERA_SEED_DIR set, also leaves them there as a fuzz seed named
 * by a counter and the format's extension (tests/fuzz/run.sh sorts them by extension). */
static ts_status load(const void *p, size_t n, ts_image *im, char *err)
{
    const char *dir = getenv("TESSERA_SEED_DIR");
    if (dir && n <= 65536) {
        static int count;
        const unsigned char *b = p;
        const char *ext = n > 2 && b[0] == 0xFF && b[1] == 0xD8 ? "jpg"
                          : n > 4 && !memcmp(b, "\x89PNG", 4) ? "png"
                          : n > 2 && !memcmp(b, "BM", 2)     ? "bmp"
                          : n > 4 && !memcmp(b, "8BPS", 4)   ? "psd"
                          : n > 3 && !memcmp(b, "GIF", 3)    ? "gif"
                                                              : "tga";
        char path[4096];
        snprintf(path, sizeof path, "%s/hostile%03d.%s", dir, count++, ext);
        FILE *f = fopen(path, "wb");
        if (f) {
            fwrite(p, 1, n, f);
            fclose(f);
        }
    }
    return tsio_load_memory(p, n, NULL, im, err, 256);
}

/* ---------------------------------------------------------------- JPEG */

/* Appends bytes. */
#define PUT(...)                                                                                   \
    do {                                                                                           \
        static const uint8_t put_[] = {__VA_ARGS__};                                               \
        memcpy(b + n, put_, sizeof put_);                                                          \
        n += sizeof put_;                                                                          \
    } while (0)

/* An 8x8 one-component JPEG of SOF type `sof` and `precision` whose Huffman tables hold one
 * code each (symbol 0: DC difference 0, AC end of block), so that every scan is one byte. For
 * SOF2 (progressive): a DC scan, then for each of `bands` AC coefficients a first scan and a
 * refinement scan: 1 + 2 * bands scans, a legal progression. `extra` more DC refinement scans
 * follow (an illegal progression). */
static size_t tiny_jpeg(uint8_t *b, int sof, int precision, int w, int h, int bands, int extra)
{
    size_t n = 0;
    PUT(0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x43, 0x00);
    memset(b + n, 1, 64);
    n += 64;
    uint8_t sofseg[] = {0xFF, (uint8_t)(0xC0 + sof), 0x00, 0x0B, (uint8_t)precision,
                        (uint8_t)(h >> 8), (uint8_t)h, (uint8_t)(w >> 8), (uint8_t)w,
                        0x01, 0x01, 0x11, 0x00};
    memcpy(b + n, sofseg, sizeof sofseg);
    n += sizeof sofseg;
    for (int t = 0; t < 2; t++) {
        uint8_t dht[22] = {0xFF, 0xC4, 0x00, 0x14, (uint8_t)(t << 4), 1}; /* symbol 0 */
        memcpy(b + n, dht, sizeof dht);
        n += sizeof dht;
    }
#define SCAN(ss, se, ahal, data)                                                                   \
    do {                                                                                           \
        uint8_t s_[] = {0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, (ss), (se), (ahal), (data)};     \
        memcpy(b + n, s_, sizeof s_);                                                              \
        n += sizeof s_;                                                                            \
    } while (0)
    if (sof != 2) {
        SCAN(0, 63, 0x00, 0x3F); /* DC 0, end of block: bits 00, padded with ones */
    } else {
        SCAN(0, 0, 0x01, 0x7F);
        for (int k = 1; k <= bands; k++) {
            SCAN(k, k, 0x01, 0x7F);
            SCAN(k, k, 0x10, 0x7F);
        }
        SCAN(0, 0, 0x10, 0x7F); /* DC refinement: legal once */
        for (int i = 0; i < extra; i++)
            SCAN(0, 0, 0x10, 0x7F);
    }
#undef SCAN
    PUT(0xFF, 0xD9);
    return n;
}

TEST(hostile_jpeg_scan_count_is_bounded)
{
    uint8_t *b = malloc(300000);
    ts_image im;
    char err[256];
    /* 100 scans (1 + 2 * 49 + the DC refinement): a legal file at the limit decodes. */
    size_t n = tiny_jpeg(b, 2, 8, 8, 8, 49, 0);
    CHECKF(load(b, n, &im, err) == TS_OK, "%s", err);
    CHECK(im.width == 8 && im.channels == 1);
    ts_image_free(&im);
    /* 128 scans, still a legal progression: refused by the limit. */
    n = tiny_jpeg(b, 2, 8, 8, 8, 63, 0);
    CHECKF(load(b, n, &im, err) == TS_ERR_FORMAT && strstr(err, "more than 100 scans"), "'%s'",
           err);
    /* The reported bomb: a 16384x16384 progressive frame, one DC scan of a few bytes, 20,000
     * refinement scans; refused at once (the data ends in the first scan; the progression is
     * illegal; the scan limit), not after minutes. */
    double t0 = now_s();
    n = tiny_jpeg(b, 2, 8, 16384, 16384, 0, 20000);
    ts_status st = load(b, n, &im, err);
    double dt = now_s() - t0;
    CHECKF(st == TS_ERR_FORMAT && strstr(err, "JPEG"), "%d '%s'", st, err);
    CHECKF(dt < 2.0, "took %.2f s", dt);
    /* The same on an 8x8 frame, where each scan has its data: the progression check stops it. */
    n = tiny_jpeg(b, 2, 8, 8, 8, 0, 20000);
    CHECKF(load(b, n, &im, err) == TS_ERR_FORMAT, "'%s'", err);
    free(b);
}

TEST(hostile_jpeg_12_bit_and_lossless_are_unsupported)
{
    uint8_t b[512];
    ts_image im;
    char err[256];
    size_t n = tiny_jpeg(b, 0, 8, 8, 8, 0, 0);
    CHECKF(load(b, n, &im, err) == TS_OK, "baseline: %s", err); /* the builder is right */
    ts_image_free(&im);
    n = tiny_jpeg(b, 1, 12, 8, 8, 0, 0);
    CHECKF(load(b, n, &im, err) == TS_ERR_UNSUPPORTED && strstr(err, "12-bit JPEG"), "'%s'", err);
    n = tiny_jpeg(b, 3, 8, 8, 8, 0, 0);
    CHECKF(load(b, n, &im, err) == TS_ERR_UNSUPPORTED && strstr(err, "lossless JPEG"), "'%s'",
           err);
}

/* A copy of a JPEG without its segments of marker m (DHT 0xC4, DQT 0xDB) before the scan. */
static uint8_t *without(const uint8_t *j, size_t n, unsigned m, size_t *out_n)
{
    uint8_t *o = malloc(n);
    size_t i = 2, k = 2;
    memcpy(o, j, 2);
    while (i + 4 <= n && j[i] == 0xFF && j[i + 1] != 0xDA) {
        size_t len = 2 + ((size_t)j[i + 2] << 8 | j[i + 3]);
        if (j[i + 1] != m) {
            memcpy(o + k, j + i, len);
            k += len;
        }
        i += len;
    }
    memcpy(o + k, j + i, n - i);
    *out_n = k + n - i;
    return o;
}

static uint8_t *jpeg_bytes(const ts_image *im, size_t *n)
{
    char path[64], err[256];
    snprintf(path, sizeof path, "/tmp/tessera-hostile-%d.jpg", (int)getpid());
    if (tsio_save(path, im, NULL, NULL, 0, err, sizeof err) != TS_OK)
        return NULL;
    FILE *f = fopen(path, "rb");
    uint8_t *b = malloc(1 << 20);
    *n = fread(b, 1, 1 << 20, f);
    fclose(f);
    unlink(path);
    return b;
}

TEST(hostile_jpeg_undefined_tables_do_not_depend_on_earlier_files)
{
    /* stb kept decoder state between files: a table the file never defines was whatever an
     * earlier file (30 KB of 0xFF) had left. Now every decode has a fresh decompressor: with
     * no DHT libjpeg-turbo uses the standard tables (which the encoder used: same image), with
     * no DQT the file is refused; the same either way after any earlier input. */
    uint64_t s = tu_seed();
    ts_image in = tu_band_image(48, 32, 3, 1, 30, 220, &s), ref, got;
    size_t n, nh, nq;
    uint8_t *j = jpeg_bytes(&in, &n), *ff = malloc(30000);
    CHECK(j);
    memset(ff, 0xFF, 30000);
    char err[256];
    CHECK(load(j, n, &ref, err) == TS_OK);
    uint8_t *noh = without(j, n, 0xC4, &nh), *noq = without(j, n, 0xDB, &nq);
    CHECK(nh < n && nq < n);
    for (int round = 0; round < 3; round++) {
        ts_image junk;
        load(ff, 20000 + 5000 * (size_t)round, &junk, err); /* refused; leaves what it leaves */
        CHECKF(load(noh, nh, &got, err) == TS_OK, "no DHT: %s", err);
        CHECK(ts_image_equal(&ref, &got));
        ts_image_free(&got);
        CHECK(load(noq, nq, &got, err) == TS_ERR_FORMAT);
        CHECKF(strstr(err, "Quantization table 0x00 was not defined"), "'%s'", err);
    }
    ts_image_free(&ref);
    ts_image_free(&in);
    free(noh);
    free(noq);
    free(ff);
    free(j);
}

/* ---------------------------------------------------------------- BMP */

static size_t le32put(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
    return 4;
}

TEST(hostile_bmp_palette_index_past_the_palette_is_black)
{
    /* An 8-bit BMP with 2 palette entries and pixels 0, 1, 200, 255: stb 2.27 looks the last
     * two up in its uninitialised stack palette (zeroed here: black). */
    uint8_t b[14 + 40 + 8 + 4] = {'B', 'M'};
    le32put(b + 2, sizeof b);
    le32put(b + 10, 14 + 40 + 8);
    le32put(b + 14, 40);
    le32put(b + 18, 4);
    le32put(b + 22, 1);
    b[26] = 1, b[28] = 8;
    le32put(b + 34, 4);
    le32put(b + 46, 2); /* colours used */
    memcpy(b + 54, "\x0a\x14\x1e\x00\x28\x32\x3c\x00", 8);
    memcpy(b + 62, "\x00\x01\xc8\xff", 4);
    for (int round = 0; round < 2; round++) {
        ts_image im;
        char err[256];
        CHECKF(load(b, sizeof b, &im, err) == TS_OK, "%s", err);
        CHECK(im.width == 4 && im.height == 1 && im.channels == 3);
        static const unsigned want[4][3] = {{30, 20, 10}, {60, 50, 40}, {0, 0, 0}, {0, 0, 0}};
        for (int x = 0; x < 4; x++)
            for (int c = 0; c < 3; c++)
                CHECKF(ts_get(&im, x, 0, c) == want[x][c], "pixel %d channel %d: %u", x, c,
                       ts_get(&im, x, 0, c));
        ts_image_free(&im);
    }
}

/* Found by fuzzing: a 63-byte BMP declaring 63247x257 8-bit pixels with compression 0xffff0000,
 * which stb decodes as stored rows: reading zeros past the end, 16 MP of black. */
TEST(hostile_bmp_unknown_compression_truncated)
{
    uint8_t b[63] = {'B', 'M'};
    le32put(b + 2, sizeof b);
    le32put(b + 10, 62);
    le32put(b + 14, 40);
    le32put(b + 18, 63247);
    le32put(b + 22, 257);
    b[26] = 1, b[28] = 8;
    le32put(b + 30, 0xffff0000u);
    ts_image im;
    char err[256];
    CHECKF(load(b, sizeof b, &im, err) == TS_ERR_FORMAT && strstr(err, "truncated BMP"), "'%s'",
           err);
}

/* Found by fuzzing: a 36-byte OS/2 1.x BMP (12-byte header) declaring 256x63984 1-bit pixels. */
TEST(hostile_bmp_os2_header_truncated)
{
    uint8_t b[36] = {'B', 'M'};
    le32put(b + 2, sizeof b);
    le32put(b + 10, 32);
    le32put(b + 14, 12);
    b[18] = 0x00, b[19] = 0x01; /* width 256 */
    b[20] = 0xf0, b[21] = 0xf9; /* height 63984 */
    b[22] = 1, b[24] = 1;       /* planes, bits per pixel */
    ts_image im;
    char err[256];
    CHECKF(load(b, sizeof b, &im, err) == TS_ERR_FORMAT && strstr(err, "truncated BMP"), "'%s'",
           err);
}

TEST(hostile_bmp_top_down_loads_upright)
{
    uint64_t s = tu_seed();
    ts_image in = tu_random_image(5, 3, 3, 1, &s), got;
    char path[64], err[256];
    snprintf(path, sizeof path, "/tmp/tessera-hostile-%d.bmp", (int)getpid());
    CHECK(tsio_save(path, &in, NULL, NULL, 0, err, sizeof err) == TS_OK);
    FILE *f = fopen(path, "rb");
    uint8_t b[512], t[512];
    size_t n = fread(b, 1, sizeof b, f);
    fclose(f);
    unlink(path);
    uint32_t off = b[10] | (uint32_t)b[11] << 8, row = 16; /* 5 * 3 bytes padded to 4 */
    CHECK(n == off + 3 * row && b[22] == 3);
    le32put(b + 22, (uint32_t)-3); /* top-down: rows stored first to last */
    memcpy(t, b + off, 3 * row);
    for (int y = 0; y < 3; y++)
        memcpy(b + off + y * row, t + (2 - y) * row, row);
    CHECKF(load(b, n, &got, err) == TS_OK, "%s", err);
    CHECKF(got.width == 5 && got.height == 3, "%dx%d", got.width, got.height);
    CHECK(ts_image_equal(&in, &got));
    ts_image_free(&got);
    ts_image_free(&in);
}

/* ---------------------------------------------------------------- TGA */

static size_t tga_raw(uint8_t *b, int w, int h, uint64_t *s)
{
    memset(b, 0, 18);
    b[2] = 2, b[12] = (uint8_t)w, b[13] = (uint8_t)(w >> 8), b[14] = (uint8_t)h;
    b[15] = (uint8_t)(h >> 8), b[16] = 24, b[17] = 0x20;
    for (int i = 0; i < w * h * 3; i++)
        b[18 + i] = (uint8_t)tu_rand(s);
    return 18 + (size_t)w * h * 3;
}

static long maxrss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

TEST(hostile_tga_sparse_file_reads_only_its_image)
{
    /* A 64x64 TGA padded (sparsely) to 2 GB: only its 12 KB are read. */
    uint64_t s = tu_seed();
    uint8_t *b = malloc(18 + 64 * 64 * 3);
    size_t n = tga_raw(b, 64, 64, &s);
    char path[64], err[256];
    snprintf(path, sizeof path, "/tmp/tessera-sparse-%d.tga", (int)getpid());
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(b, 1, n, f) == n);
    fclose(f);
    CHECK(truncate(path, 2000000000) == 0);
    long before = maxrss_mb();
    double t0 = now_s();
    ts_image im, ref;
    ts_status st = tsio_load(path, NULL, &im, err, sizeof err);
    double dt = now_s() - t0;
    long grew = maxrss_mb() - before;
    unlink(path);
    CHECKF(st == TS_OK, "%s", err);
    CHECK(load(b, n, &ref, err) == TS_OK && ts_image_equal(&im, &ref));
    CHECKF(dt < 1.0 && grew < 100, "%.2f s, peak memory grew by %ld MB", dt, grew);
    ts_image_free(&im);
    ts_image_free(&ref);
    free(b);
}

TEST(hostile_tga_truncated)
{
    uint64_t s = tu_seed();
    uint8_t *b = malloc(18 + 40 * 30 * 3);
    size_t n = tga_raw(b, 40, 30, &s);
    ts_image im, in = tu_random_image(40, 30, 3, 1, &s);
    char err[256];
    CHECK(load(b, n, &im, err) == TS_OK);
    ts_image_free(&im);
    size_t cuts[] = {17, 18, 100, n / 2, n - 1}; /* 17: the header itself cut (found by fuzzing) */
    for (size_t k = 0; k < 5; k++)
        CHECKF(load(b, cuts[k], &im, err) == TS_ERR_FORMAT && strstr(err, "truncated TGA"),
               "raw cut %zu: '%s'", cuts[k], err);
    /* stb_image_write's TGA is run-length coded: the packet walk finds the cut. */
    char path[64];
    snprintf(path, sizeof path, "/tmp/tessera-hostile-%d.tga", (int)getpid());
    CHECK(tsio_save(path, &in, NULL, NULL, 0, err, sizeof err) == TS_OK);
    FILE *f = fopen(path, "rb");
    uint8_t *r = malloc(1 << 16);
    size_t rn = fread(r, 1, 1 << 16, f);
    fclose(f);
    unlink(path);
    CHECK(r[2] == 10 && load(r, rn, &im, err) == TS_OK && ts_image_equal(&im, &in));
    ts_image_free(&im);
    size_t rcuts[] = {17, 18, 19, rn / 2, rn - 1};
    for (size_t k = 0; k < 5; k++)
        CHECKF(load(r, rcuts[k], &im, err) == TS_ERR_FORMAT && strstr(err, "truncated TGA"),
               "RLE cut %zu of %zu: '%s'", rcuts[k], rn, err);
    ts_image_free(&in);
    free(r);
    free(b);
}

/* ---------------------------------------------------------------- PSD */

/* An RGB PSD (depth 8 or 16) of ch channels, raw or PackBits (one literal run per channel, so
 * at most 128 pixels), samples v[c * px + i]. */
static size_t psd(uint8_t *p, int w, int h, int ch, int depth, int rle, const unsigned *v)
{
    size_t n = 0, px = (size_t)w * h;
    memcpy(p, "8BPS\0\1\0\0\0\0\0\0", 12);
    n = 12;
    p[n++] = 0, p[n++] = (uint8_t)ch;
    p[n++] = 0, p[n++] = 0, p[n++] = (uint8_t)(h >> 8), p[n++] = (uint8_t)h;
    p[n++] = 0, p[n++] = 0, p[n++] = (uint8_t)(w >> 8), p[n++] = (uint8_t)w;
    p[n++] = 0, p[n++] = (uint8_t)depth, p[n++] = 0, p[n++] = 3;
    memset(p + n, 0, 12);
    n += 12;
    p[n++] = 0, p[n++] = (uint8_t)rle;
    if (rle) {
        memset(p + n, 0, (size_t)h * ch * 2); /* row sizes: stb skips them */
        n += (size_t)h * ch * 2;
    }
    for (int c = 0; c < ch; c++) {
        if (rle)
            p[n++] = (uint8_t)(px - 1);
        for (size_t i = 0; i < px; i++) {
            unsigned x = v[c * px + i];
            if (depth == 16 && !rle)
                p[n++] = (uint8_t)(x >> 8);
            p[n++] = (uint8_t)x;
        }
    }
    return n;
}

TEST(hostile_psd_truncated)
{
    unsigned v[3 * 12];
    for (int i = 0; i < 36; i++)
        v[i] = (unsigned)i * 7;
    for (int rle = 0; rle <= 1; rle++) {
        uint8_t b[512];
        size_t n = psd(b, 4, 3, 3, 8, rle, v);
        ts_image im;
        char err[256];
        CHECKF(load(b, n, &im, err) == TS_OK, "rle %d: %s", rle, err);
        CHECK(ts_get(&im, 1, 0, 0) == 7 && ts_get(&im, 1, 0, 1) == 7 * 13);
        ts_image_free(&im);
        size_t cuts[] = {10, 25, 30, 40, n / 2, n - 1};
        for (size_t k = 0; k < 6; k++)
            CHECKF(load(b, cuts[k], &im, err) == TS_ERR_FORMAT && strstr(err, "truncated PSD"),
                   "rle %d cut %zu of %zu: '%s'", rle, cuts[k], n, err);
    }
}

/* stb's matte removal on one sample, clamped (the result tessera promises). */
static unsigned unmatte_ref(unsigned v, unsigned a, unsigned m)
{
    if (a == 0 || a == m)
        return v;
    float fa = (float)a / (float)m, ra = 1.0f / fa, inv = (float)m * (1 - ra);
    float r = (float)v * ra + inv;
    return r <= 0 ? 0 : r >= (float)m ? m : (unsigned)r;
}

TEST(hostile_psd_matte_removal_stays_in_range)
{
    /* stb converts M - (M - v) * M / alpha, in float, to an integer: negative when v is under
     * M - alpha, past 65535 by rounding for a small 16-bit alpha; undefined either way. tessera
     * does that step itself, clamped; alpha comes through. 5 channels: the 5th is ignored. */
    for (int depth = 8; depth <= 16; depth += 8)
        for (int rle = 0; rle <= (depth == 8); rle++) {
            unsigned m = depth == 16 ? 65535 : 255, a = m / 2 + 1;
            unsigned v[15] = {m - a + 60, m, 3,  m, m, 3, m - a + 60, m, 3,
                              a,          m, 1,  7, 7, 7};
            uint8_t b[256];
            size_t n = psd(b, 3, 1, 5, depth, rle, v);
            ts_image im;
            char err[256];
            CHECKF(load(b, n, &im, err) == TS_OK, "depth %d rle %d: %s", depth, rle, err);
            CHECK(im.channels == 4 && im.bytes == depth / 8);
            for (int x = 0; x < 3; x++) {
                CHECKF(ts_get(&im, x, 0, 3) == v[9 + x], "alpha %d: %u", x, ts_get(&im, x, 0, 3));
                for (int c = 0; c < 3; c++) {
                    unsigned want = unmatte_ref(v[c * 3 + x], v[9 + x], m);
                    CHECKF(ts_get(&im, x, 0, c) == want, "depth %d rle %d pixel %d channel %d: "
                           "%u, want %u", depth, rle, x, c, ts_get(&im, x, 0, c), want);
                }
            }
            ts_image_free(&im);
        }
}

/* ---------------------------------------------------------------- PNG at the pixel limit */

static long mem_available_mb(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb / 1024;
}

TEST(hostile_png_16384_square_rgba16_loads)
{
    /* 16384 x 16384 RGBA 16-bit is the default pixel limit exactly: 2 GiB of samples, which
     * stb refused (int sizes). Rows of zeros, compressed here as they are produced. */
    if (mem_available_mb() < 6000)
        SKIP("under 6 GB of memory available");
    const uint32_t w = 16384, h = 16384;
    size_t rowlen = (size_t)w * 8 + 1;
    const size_t zcap = (size_t)64 << 20; /* zlib level 1 packs these zeros about 200:1 */
    uint8_t *row = calloc(1, rowlen), *z = malloc(zcap), *png = malloc(zcap + 64);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    CHECK(row && z && png && deflateInit(&zs, 1) == Z_OK);
    zs.next_out = z;
    zs.avail_out = (uInt)zcap;
    for (uint32_t y = 0; y < h; y++) {
        zs.next_in = row;
        zs.avail_in = (uInt)rowlen;
        CHECK(deflate(&zs, y + 1 == h ? Z_FINISH : Z_NO_FLUSH) != Z_STREAM_ERROR);
    }
    size_t zn = zs.total_out;
    CHECK(zs.avail_out > 0);
    deflateEnd(&zs);
    uint8_t ihdr[25] = {0, 0, 0, 13, 'I', 'H', 'D', 'R', 0, 0, 0x40, 0, 0, 0, 0x40, 0, 16, 6};
    uint32_t crc = (uint32_t)crc32(0, ihdr + 4, 17);
    ihdr[21] = (uint8_t)(crc >> 24), ihdr[22] = (uint8_t)(crc >> 16);
    ihdr[23] = (uint8_t)(crc >> 8), ihdr[24] = (uint8_t)crc;
    size_t n = 0;
    memcpy(png, "\x89PNG\r\n\x1a\n", 8);
    memcpy(png + 8, ihdr, 25);
    n = 33;
    png[n++] = (uint8_t)(zn >> 24), png[n++] = (uint8_t)(zn >> 16);
    png[n++] = (uint8_t)(zn >> 8), png[n++] = (uint8_t)zn;
    memcpy(png + n, "IDAT", 4);
    memcpy(png + n + 4, z, zn);
    crc = (uint32_t)crc32(0, png + n, (uInt)zn + 4);
    n += 4 + zn;
    png[n++] = (uint8_t)(crc >> 24), png[n++] = (uint8_t)(crc >> 16);
    png[n++] = (uint8_t)(crc >> 8), png[n++] = (uint8_t)crc;
    memcpy(png + n, "\0\0\0\0IEND\xae\x42\x60\x82", 12);
    n += 12;
    ts_image im;
    char err[256];
    ts_status st = load(png, n, &im, err);
    CHECKF(st == TS_OK, "%s", err);
    CHECK(im.width == 16384 && im.height == 16384 && im.channels == 4 && im.bytes == 2);
    CHECK(ts_get(&im, 16383, 16383, 3) == 0 && ts_get(&im, 0, 0, 0) == 0);
    ts_image_free(&im);
    free(row);
    free(z);
    free(png);
}

/* gauss:3:1e-200: 2 sigma^2 underflows to 0, and the centre weight was exp(-0/0) = NaN (a black
 * image); OpenCV gives the identity, and so does tessera now. */
TEST(hostile_gauss_sigma_underflow_is_the_identity)
{
    ts_op op = tu_op("gauss:3:1e-200");
    CHECK(op.filter.row[0] == 0 && op.filter.row[1] == 1 && op.filter.row[2] == 0);
    uint64_t s = tu_seed();
    ts_image in = tu_random_image(7, 5, 3, 1, &s), out;
    CHECK(ts_ref_op(&op, &in, &out) == TS_OK);
    CHECK(ts_image_equal(&in, &out));
    ts_image_free(&in);
    ts_image_free(&out);
}

/* --max-pixels bounds op outputs too: resize:65536x65536 of a 1x1 image allocated 12.9 GB; now
 * the pipeline refuses it before allocating (the default limit, and the one the app sets). */
TEST(hostile_op_output_over_the_pixel_limit_is_refused)
{
    ts_pipeline *p;
    CHECK(ts_pipeline_create(&p, TS_BACKEND_CPU, NULL, 0) == TS_OK);
    ts_chain c;
    char err[256];
    CHECK(app_chain_parse("resize:65536x65536", &c, err, sizeof err) == TS_OK);
    ts_image in, out = {0};
    CHECK(ts_image_alloc(&in, 1, 1, 3, 1) == TS_OK);
    memset(in.data, 7, 3);
    double t0 = now_ms();
    CHECK(ts_pipeline_run(p, &c, &in, &out, NULL) == TS_ERR_TOO_LARGE);
    CHECKF(strstr(ts_error_detail(), "over the limit") != NULL, "%s", ts_error_detail());
    CHECK(now_ms() - t0 < 1000 && out.data == NULL);
    ts_chain_free(&c);
    /* a limit set by the app: 100 pixels */
    ts_pipeline_set_max_pixels(p, 100);
    CHECK(app_chain_parse("resize:10x10", &c, err, sizeof err) == TS_OK);
    CHECK(ts_pipeline_run(p, &c, &in, &out, NULL) == TS_OK);
    ts_image_free(&out);
    ts_chain_free(&c);
    CHECK(app_chain_parse("resize:11x10", &c, err, sizeof err) == TS_OK);
    CHECK(ts_pipeline_run(p, &c, &in, &out, NULL) == TS_ERR_TOO_LARGE);
    ts_chain_free(&c);
    ts_image_free(&in);
    ts_pipeline_destroy(p);
}

/* A 64-op chain was accepted, then failed on every photo with an EXIF orientation (its op made
 * 65): the app's limit keeps one place for it. */
TEST(hostile_chain_leaves_room_for_the_orientation_op)
{
    char text[64 * 8 + 1] = "", err[256];
    ts_chain c, full;
    for (int i = 0; i < APP_MAX_CHAIN + 1; i++)
        strcat(text, i ? ",flip" : "flip");
    CHECK(app_chain_parse(text, &c, err, sizeof err) == TS_ERR_TOO_LARGE);
    CHECKF(strstr(err, "more than 63") != NULL, "%s", err);
    text[strlen(text) - 5] = '\0'; /* 63 ops */
    CHECKF(app_chain_parse(text, &c, err, sizeof err) == TS_OK, "%s", err);
    CHECK(c.n == APP_MAX_CHAIN);
    /* EXIF (little-endian TIFF) with Orientation 6 */
    static const unsigned char exif[] = {'I', 'I', 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 1, 3, 0, 1, 0,
                                         0, 0, 6, 0, 0, 0, 0, 0, 0, 0};
    tsio_meta m = {.exif = (unsigned char *)exif, .exif_len = sizeof exif};
    int o = 0;
    CHECK(photo_chain(&m, 1, &c, &full, &o) == TS_OK);
    CHECK(full.n == TS_MAX_CHAIN && o == 6);
    ts_chain_free(&full);
    ts_chain_free(&c);
}

/* The soundness check in front of nvJPEG (tsio_jpeg_check): what libjpeg's strict decode refuses
 * structurally goes to libjpeg: a cut file, more than 100 scans, restarts out of order. */
TEST(hostile_jpeg_structure_check_for_the_gpu)
{
    uint8_t *b = malloc(300000);
    char why[128];
    size_t n = tiny_jpeg(b, 2, 8, 8, 8, 49, 0); /* 100 scans: legal */
    CHECKF(tsio_jpeg_check(b, n, why, sizeof why) == TS_OK, "%s", why);
    for (size_t cut = 3; cut < n; cut += 7) /* every cut is caught */
        CHECKF(tsio_jpeg_check(b, cut, why, sizeof why) == TS_ERR_FORMAT, "cut at %zu", cut);
    n = tiny_jpeg(b, 2, 8, 8, 8, 63, 0); /* 128 scans */
    CHECK(tsio_jpeg_check(b, n, why, sizeof why) == TS_ERR_FORMAT);
    CHECKF(strstr(why, "more than 100 scans") != NULL, "%s", why);
    n = tiny_jpeg(b, 2, 8, 16384, 16384, 0, 20000); /* the bomb */
    CHECK(tsio_jpeg_check(b, n, why, sizeof why) == TS_ERR_FORMAT);
    free(b);
    /* a restart marker out of sequence inside the scan */
    static const unsigned char rst[] = {0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8, 0, 8, 0, 8, 1, 1, 0x11, 0,
                                        0xFF, 0xDA, 0, 8, 1, 1, 0, 0, 63, 0, 0x12, 0xFF, 0xD0,
                                        0x34, 0xFF, 0xD2, 0x56, 0xFF, 0xD9};
    CHECK(tsio_jpeg_check(rst, sizeof rst, why, sizeof why) == TS_ERR_FORMAT);
    CHECKF(strstr(why, "restart") != NULL, "%s", why);
}

/* Two Orientation entries in EXIF: the first was applied and reset, the second kept, so readers
 * turned the upright output again. Every entry is reset now. */
TEST(hostile_exif_two_orientation_entries)
{
    static const unsigned char exif[] = {'I', 'I', 42, 0, 8, 0, 0, 0, 2, 0,
                                         0x12, 1, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0,
                                         0x12, 1, 3, 0, 1, 0, 0, 0, 3, 0, 0, 0,
                                         0, 0, 0, 0};
    CHECK(tsio_exif_orientation(exif, sizeof exif) == 6);
    size_t n = 0;
    unsigned char *up = tsio_exif_upright(exif, sizeof exif, &n);
    CHECK(up && n == sizeof exif);
    CHECK(tsio_exif_orientation(up, n) == 1);
    CHECK(up[18] == 1 && up[19] == 0 && up[30] == 1 && up[31] == 0); /* both entries */
    free(up);
}

/* An ICC profile that needs more than 255 APP2 segments was written with wrapped sequence numbers
 * (every reader drops it) on the CPU and left out silently on the GPU: both drop it now, with
 * the same notice, and the file is whole. */
TEST(hostile_icc_over_255_jpeg_segments_is_dropped_with_a_notice)
{
    size_t big = (size_t)256 * 65519;
    tsio_meta m = {.icc = calloc(1, big), .icc_len = big};
    CHECK(m.icc != NULL);
    tu_make_icc(m.icc, "big", 0);
    ts_image im;
    CHECK(ts_image_alloc(&im, 8, 8, 3, 1) == TS_OK);
    memset(im.data, 100, im.pitch * (size_t)im.height);
    const char *path = "/tmp/tessera-icc-big.jpg";
    tsio_save_opts so = {.meta = &m};
    char notice[256], err[256];
    unlink(path);
    CHECKF(tsio_save_atomic(path, &im, &so, 1, notice, sizeof notice, err, sizeof err) == TS_OK,
           "%s", err);
    CHECKF(strstr(notice, "ICC profile dropped") != NULL, "'%s'", notice);
    tsio_meta back = {0};
    tsio_load_opts lo = {.meta = &back};
    ts_image got;
    CHECKF(tsio_load(path, &lo, &got, err, sizeof err) == TS_OK, "%s", err);
    CHECK(back.icc == NULL);
    ts_image_free(&got);
    tsio_meta_free(&back);
    /* the GPU path's metadata writer: the same notice, the same file structure */
    static const unsigned char plain[] = {0xFF, 0xD8, 0xFF, 0xD9};
    unsigned char *with = NULL;
    size_t wn = 0;
    notice[0] = '\0';
    CHECK(tsio_jpeg_add_meta(plain, sizeof plain, &m, &with, &wn, notice, sizeof notice) == TS_OK);
    CHECK(wn == sizeof plain && strstr(notice, "ICC profile dropped") != NULL);
    free(with);
    /* 255 segments still fit, on both */
    m.icc_len = (size_t)255 * 65519;
    notice[0] = '\0';
    CHECK(tsio_jpeg_add_meta(plain, sizeof plain, &m, &with, &wn, notice, sizeof notice) == TS_OK);
    CHECK(notice[0] == '\0' && wn == sizeof plain + m.icc_len + 255 * 18);
    memset(&back, 0, sizeof back);
    CHECK(tsio_jpeg_meta_scan(with, wn, &back) == TS_OK && back.icc_len == m.icc_len);
    tsio_meta_free(&back);
    free(with);
    unlink(path);
    ts_image_free(&im);
    free(m.icc);
}

/* A TIFF written by libtiff: w x h, `spp` 8-bit samples (palette when spp is 0), tiles of tw x th
 * (0: one strip) holding junk (the tile budget refuses before any is read), orientation `o`;
 * the pixels of a strip image are row-major indices. Returns the file's bytes. */
static unsigned char *make_tiff(uint32_t w, uint32_t h, int spp, uint32_t tw, uint32_t th, int o,
                                size_t *len)
{
    const char *path = "/tmp/tessera-hostile.tif";
    TIFF *t = TIFFOpen(path, "w");
    if (!t)
        return NULL;
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, w);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, h);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 8);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, spp ? spp : 1);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(t, TIFFTAG_ORIENTATION, o);
    TIFFSetField(t, TIFFTAG_COMPRESSION, tw ? COMPRESSION_ADOBE_DEFLATE : COMPRESSION_NONE);
    static uint16_t r[256], g[256], b[256];
    for (int i = 0; i < 256; i++)
        r[i] = (uint16_t)(i * 257), g[i] = (uint16_t)((255 - i) * 257), b[i] = (uint16_t)(i * 100);
    if (spp) {
        TIFFSetField(t, TIFFTAG_PHOTOMETRIC, spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
    } else {
        TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_PALETTE);
        TIFFSetField(t, TIFFTAG_COLORMAP, r, g, b);
    }
    if (tw) {
        TIFFSetField(t, TIFFTAG_TILEWIDTH, tw);
        TIFFSetField(t, TIFFTAG_TILELENGTH, th);
        uint32_t n = TIFFNumberOfTiles(t);
        for (uint32_t i = 0; i < n; i++)
            TIFFWriteRawTile(t, i, "junk-junk", 9);
    } else {
        TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, h);
        size_t row = (size_t)w * (size_t)(spp ? spp : 1);
        unsigned char *px = malloc(row * h);
        for (size_t i = 0; i < row * h; i++)
            px[i] = (unsigned char)i;
        TIFFWriteEncodedStrip(t, 0, px, (tmsize_t)(row * h));
        free(px);
    }
    TIFFClose(t);
    FILE *f = fopen(path, "rb");
    unsigned char *buf = malloc((size_t)1 << 20);
    *len = f ? fread(buf, 1, (size_t)1 << 20, f) : 0;
    if (f)
        fclose(f);
    unlink(path);
    return buf;
}

/* TIFF tiles far larger than the image: refused by the tile budget before any tile is read, on
 * the direct path (gray) and the RGBA path (palette: libtiff's RGBA reader had no guard). */
TEST(hostile_tiff_tiles_over_the_budget)
{
    struct { uint32_t w, h, tw, th; int spp; } bad[] = {
        {1, 1048576, 8192, 8192, 1}, /* 530 MB and 6 s before */
        {1, 1, 24576, 24576, 0},     /* 600 MB through the RGBA path */
        {1, 1, 8192, 8192, 3},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t len;
        unsigned char *b = make_tiff(bad[i].w, bad[i].h, bad[i].spp, bad[i].tw, bad[i].th, 1, &len);
        CHECK(b && len > 8);
        ts_image im;
        char err[256];
        double t0 = now_ms();
        CHECK(load(b, len, &im, err) == TS_ERR_FORMAT);
        CHECKF(strstr(err, "tile budget") != NULL, "%ux%u in %ux%u tiles: %s", bad[i].w, bad[i].h,
               bad[i].tw, bad[i].th, err);
        CHECK(now_ms() - t0 < 500);
        free(b);
    }
    /* ordinary tiles pass the budget (and then fail on the junk data, not on the budget) */
    size_t len;
    unsigned char *b = make_tiff(100, 100, 1, 256, 256, 1, &len);
    ts_image im;
    char err[256];
    CHECK(load(b, len, &im, err) != TS_OK && strstr(err, "tile budget") == NULL);
    free(b);
}

/* TIFF Orientation 5-8 on the RGBA path (palette here) came out mirrored: libtiff's RGBA reader
 * only flips. Now both paths give the pixels as stored and report the orientation, which the
 * app applies (turned, as a JPEG's). */
TEST(hostile_tiff_rgba_path_orientation_is_turned)
{
    for (int o = 1; o <= 8; o++) {
        size_t len, dlen;
        unsigned char *b = make_tiff(3, 2, 0, 0, 0, o, &len);  /* palette: the RGBA path */
        unsigned char *d = make_tiff(3, 2, 1, 0, 0, o, &dlen); /* gray: the direct path */
        ts_image pal, gray;
        tsio_meta pm = {0}, gm = {0};
        char err[256];
        tsio_load_opts po = {.meta = &pm}, go = {.meta = &gm};
        CHECKF(tsio_load_memory(b, len, &po, &pal, err, sizeof err) == TS_OK, "%s", err);
        CHECKF(tsio_load_memory(d, dlen, &go, &gray, err, sizeof err) == TS_OK, "%s", err);
        /* stored order on both: palette index i is red i */
        CHECK(pal.width == 3 && pal.height == 2 && gray.width == 3);
        for (int i = 0; i < 6; i++)
            CHECKF(((unsigned char *)pal.data)[i * pal.channels] == i, "o=%d: pixel %d", o, i);
        int po_ = photo_orientation(&pm), go_ = photo_orientation(&gm);
        CHECKF(po_ == go_ && (o == 1 ? po_ <= 1 : po_ == o), "o=%d: %d vs %d", o, po_, go_);
        ts_image_free(&pal);
        ts_image_free(&gray);
        tsio_meta_free(&pm);
        tsio_meta_free(&gm);
        free(b);
        free(d);
    }
}
