/* test_viewer_load.c - a large JPEG's first paint: the reduced-size decode (codec_jpeg.c,
 * tsio_jpeg_decode_reduced: the scale it picks for a box, its pixels against the full decode, the
 * full decode's guards) and the decode thread of the viewer (viewer_load.c: only the file asked
 * for last is handed over, a running decode is waited for when freed). No display needed. */
#include "image_io.h"
#include "testutil.h"
#include "util.h"
#include "viewer_load.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A smooth w x h image (gradients plus a little noise) as JPEG bytes (quality 90). */
static unsigned char *jpeg_bytes(int w, int h, int ch, uint64_t *seed, size_t *len)
{
    ts_image im;
    if (ts_image_alloc(&im, w, h, ch, 1) != TS_OK)
        abort();
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < ch; c++)
                ts_put(&im, x, y, c,
                       (unsigned)((x * 200 / w + y * 50 / h + c * 30 + tu_rand(seed) % 5) & 255));
    FILE *f = tmpfile();
    char notice[128], err[128];
    if (!f || tsio_jpeg_encode(f, &im, 90, NULL, notice, sizeof notice, err, sizeof err) != TS_OK)
        abort();
    *len = (size_t)ftell(f);
    unsigned char *b = xmalloc(*len);
    rewind(f);
    if (fread(b, 1, *len, f) != *len)
        abort();
    fclose(f);
    ts_image_free(&im);
    return b;
}

/* Mean |reduced - box mean of the full decode over denom x denom cells| over all samples. */
static double mean_diff_to_box(const ts_image *red, const ts_image *full, int d)
{
    double sum = 0;
    for (int y = 0; y < red->height; y++)
        for (int x = 0; x < red->width; x++)
            for (int c = 0; c < red->channels; c++) {
                unsigned s = 0, n = 0;
                for (int yy = y * d; yy < (y + 1) * d && yy < full->height; yy++)
                    for (int xx = x * d; xx < (x + 1) * d && xx < full->width; xx++, n++)
                        s += ts_get(full, xx, yy, c);
                sum += abs((int)ts_get(red, x, y, c) - (int)((s + n / 2) / n));
            }
    return sum / ((double)red->width * red->height * red->channels);
}

TEST(jpeg_reduced_decode_picks_the_scale_and_keeps_the_guards)
{
    uint64_t seed = tu_seed();
    size_t len;
    unsigned char *b = jpeg_bytes(1001, 601, 3, &seed, &len);
    ts_image full, red;
    tsio_reduced info;
    char err[256];
    CHECK(tsio_load_memory(b, len, NULL, &full, err, sizeof err) == TS_OK);
    /* box -> the strongest scale whose fit is not magnified */
    static const struct { int bw, bh, denom, w, h; } cases[] = {
        {0, 0, 1, 1001, 601},     {1001, 601, 1, 1001, 601}, {2000, 2000, 1, 1001, 601},
        {500, 300, 2, 501, 301},  {501, 301, 2, 501, 301},   {130, 80, 4, 251, 151},
        {100, 60, 8, 126, 76},    {10, 10, 8, 126, 76},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECKF(tsio_jpeg_decode_reduced(b, len, 0, cases[i].bw, cases[i].bh, NULL, &info, &red,
                                        err, sizeof err) == TS_OK, "%s", err);
        CHECKF(info.denom == cases[i].denom && red.width == cases[i].w &&
                   red.height == cases[i].h && red.channels == 3 && info.full_w == 1001 &&
                   info.full_h == 601,
               "box %dx%d: 1/%d, %dx%d", cases[i].bw, cases[i].bh, info.denom, red.width,
               red.height);
        if (info.denom == 1)
            CHECK(ts_image_equal(&red, &full)); /* the full decode itself */
        else /* the scaled IDCT: about the mean of each denom x denom cell */
            CHECKF(mean_diff_to_box(&red, &full, info.denom) < 2.0, "1/%d: mean diff %.2f",
                   info.denom, mean_diff_to_box(&red, &full, info.denom));
        ts_image_free(&red);
    }
    /* the full decode's guards: the pixel limit on the file's own size, truncation, not a JPEG */
    CHECK(tsio_jpeg_decode_reduced(b, len, 1000 * 600, 100, 60, NULL, &info, &red, err,
                                   sizeof err) == TS_ERR_TOO_LARGE && red.data == NULL);
    CHECK(tsio_jpeg_decode_reduced(b, len / 2, 0, 100, 60, NULL, &info, &red, err, sizeof err) ==
              TS_ERR_FORMAT && strstr(err, "truncated") && red.data == NULL);
    static const unsigned char png[] = {0x89, 'P', 'N', 'G', 13, 10, 26, 10};
    CHECK(tsio_jpeg_decode_reduced(png, sizeof png, 0, 100, 60, NULL, &info, &red, err,
                                   sizeof err) == TS_ERR_FORMAT);
    ts_image_free(&full);
    free(b);
    /* gray stays one channel */
    b = jpeg_bytes(333, 222, 1, &seed, &len);
    CHECK(tsio_jpeg_decode_reduced(b, len, 0, 80, 50, NULL, &info, &red, err, sizeof err) ==
              TS_OK && info.denom == 4 && red.channels == 1 && red.width == 84 && red.height == 56);
    ts_image_free(&red);
    free(b);
}

static int wakes;
static void count_wake(void) { __atomic_add_fetch(&wakes, 1, __ATOMIC_SEQ_CST); }

static char *write_temp(const unsigned char *b, size_t len)
{
    char *path = xstrdup("/tmp/tessera-load-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, b, len) != (ssize_t)len)
        abort();
    close(fd);
    return path;
}

/* Polls until the result for `token` arrives (at most 20 s); 1 when it did. */
static int wait_for(vw_load *l, unsigned token, ts_image *im, tsio_meta *meta, ts_status *st,
                    char *err, size_t len)
{
    double ms, end = now_ms() + 20000;
    while (now_ms() < end) {
        if (vw_load_poll(l, token, im, meta, st, err, len, &ms))
            return 1;
        nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
    return 0;
}

TEST(load_thread_hands_over_only_the_file_asked_for_last)
{
    uint64_t seed = tu_seed();
    size_t la, lb;
    unsigned char *a = jpeg_bytes(900, 700, 3, &seed, &la), *b = jpeg_bytes(640, 480, 3, &seed, &lb);
    char *pa = write_temp(a, la), *pb = write_temp(b, lb), err[256];
    ts_image want_b, im;
    tsio_meta meta;
    ts_status st;
    CHECK(tsio_load_memory(b, lb, NULL, &want_b, err, sizeof err) == TS_OK);
    vw_load l = {0};
    l.wake = count_wake;
    wakes = 0;
    /* A, then B at once (A runs on, B waits for it): only B comes out, under B's token */
    vw_load_start(&l, pa, 0, 1);
    vw_load_start(&l, pb, 0, 2);
    CHECK(vw_load_busy(&l));
    CHECK(wait_for(&l, 2, &im, &meta, &st, err, sizeof err));
    CHECK(st == TS_OK && ts_image_equal(&im, &want_b));
    CHECK(!vw_load_busy(&l) && __atomic_load_n(&wakes, __ATOMIC_SEQ_CST) >= 1);
    ts_image_free(&im);
    tsio_meta_free(&meta);
    /* a result for a token no longer wanted is dropped, never handed over */
    vw_load_start(&l, pa, 0, 3);
    int handed = 0;
    double ms, end = now_ms() + 20000;
    while (vw_load_busy(&l) && now_ms() < end) {
        handed |= vw_load_poll(&l, 4, &im, &meta, &st, err, sizeof err, &ms);
        nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
    CHECK(!handed && !vw_load_busy(&l));
    /* a failure comes back with its reason */
    vw_load_start(&l, "/nonexistent/x.jpg", 0, 5);
    CHECK(wait_for(&l, 5, &im, &meta, &st, err, sizeof err));
    CHECK(st == TS_ERR_IO && err[0] && im.data == NULL);
    /* freed while decoding: waits for the thread, frees its result */
    vw_load_start(&l, pa, 0, 6);
    vw_load_free(&l);
    CHECK(!vw_load_busy(&l));
    ts_image_free(&want_b);
    remove(pa);
    remove(pb);
    free(pa);
    free(pb);
    free(a);
    free(b);
}
