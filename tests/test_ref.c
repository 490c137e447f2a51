/* test_ref.c - the CPU reference on hand-computed cases and properties. */
#include "kernel_file.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ts_math.h"

static ts_image run(const char *op_text, const ts_image *in)
{
    ts_op op = tu_op(op_text);
    ts_image out;
    if (ts_ref_op(&op, in, &out) != TS_OK) {
        fprintf(stderr, "%s: %s\n", op_text, ts_error_detail());
        abort();
    }
    return out;
}

static ts_image from_values(int w, int h, int ch, int bytes, const unsigned *v)
{
    ts_image im;
    if (ts_image_alloc(&im, w, h, ch, bytes) != TS_OK)
        abort();
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < ch; c++)
                ts_put(&im, x, y, c, v[((size_t)y * w + x) * ch + c]);
    return im;
}

TEST(box3_by_hand_with_replicated_border)
{
    /* 3x2 gray: 0 9 18 / 27 36 45. Box 3x3 at (0,0) sees rows {0,0,1} and columns {0,0,1}:
     * (0+0+9)*2 + (27+27+36) = 18 + 90 = 108, /9 = 12. At (2,1): columns {1,2,2} rows {0,1,1}:
     * (9+18+18) + 2*(36+45+45) = 45 + 252 = 297, /9 = 33. */
    static const unsigned v[] = {0, 9, 18, 27, 36, 45};
    ts_image in = from_values(3, 2, 1, 1, v), out = run("box:3", &in);
    CHECKF(ts_get(&out, 0, 0, 0) == 12, "got %u", ts_get(&out, 0, 0, 0));
    CHECKF(ts_get(&out, 2, 1, 0) == 33, "got %u", ts_get(&out, 2, 1, 0));
    ts_image_free(&in);
    ts_image_free(&out);
}

TEST(rounding_is_half_to_even)
{
    /* box:1x... use a 3x3 box on a 1x1 image: all taps replicate one value; sum 9v / 9 = v.
     * For the tie, a kernel with divisor 2: value 1 -> 0.5 -> 0; value 3 -> 1.5 -> 2. */
    ts_op op;
    char err[256];
    char path[] = "/tmp/tessera-halfXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(write(fd, "1\n/ 2\n", 6) == 6);
    close(fd);
    char item[300];
    snprintf(item, sizeof item, "kernel:%s", path);
    CHECKF(app_op_parse(item, &op, err, sizeof err) == TS_OK, "%s", err);
    unlink(path);
    static const unsigned v[] = {1, 3, 5, 7};
    ts_image in = from_values(4, 1, 1, 1, v), out;
    CHECK(ts_ref_op(&op, &in, &out) == TS_OK);
    CHECK(ts_get(&out, 0, 0, 0) == 0 && ts_get(&out, 1, 0, 0) == 2);
    CHECK(ts_get(&out, 2, 0, 0) == 2 && ts_get(&out, 3, 0, 0) == 4);
    ts_image_free(&in);
    ts_image_free(&out);
}

TEST(sobel_edge_by_hand)
{
    /* A vertical step 0 | 100 in a 4x3 image: at x=1 gx = (100-0)*(1+2+1) = 400 -> saturates. */
    static const unsigned v[] = {0, 0, 100, 100, 0, 0, 100, 100, 0, 0, 100, 100};
    ts_image in = from_values(4, 3, 1, 1, v), out = run("edge", &in);
    CHECK(ts_get(&out, 0, 1, 0) == 0 && ts_get(&out, 1, 1, 0) == 255);
    ts_image_free(&out);
    ts_image in16 = from_values(4, 3, 1, 2, v), o16 = run("edge", &in16);
    CHECK(ts_get(&o16, 1, 1, 0) == 400 && ts_get(&o16, 2, 1, 0) == 400);
    CHECK(ts_get(&o16, 3, 0, 0) == 0);
    ts_image_free(&in);
    ts_image_free(&in16);
    ts_image_free(&o16);
}

TEST(geometry_properties)
{
    uint64_t s = tu_seed();
    static const int sizes[][2] = {{1, 1}, {1, 7}, {7, 1}, {33, 17}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int ch = 1; ch <= 4; ch++)
            for (int bytes = 1; bytes <= 2; bytes++) {
                ts_image in = tu_random_image(sizes[i][0], sizes[i][1], ch, bytes, &s);
                ts_image a = run("rotate:90", &in), b = run("rotate:90", &a),
                         c = run("rotate:90", &b), d = run("rotate:90", &c);
                CHECK(ts_image_equal(&in, &d));
                ts_image r180 = run("rotate:180", &in);
                CHECK(ts_image_equal(&r180, &b));
                ts_image r270 = run("rotate:270", &in);
                CHECK(ts_image_equal(&r270, &c));
                ts_image t = run("transpose", &in), tt = run("transpose", &t);
                CHECK(ts_image_equal(&tt, &in));
                ts_image tf = run("flop", &t); /* rotate:90 = transpose, then flop */
                CHECK(ts_image_equal(&tf, &a));
                ts_image tv = run("transverse", &in), r180t = run("transpose", &r180);
                CHECK(ts_image_equal(&tv, &r180t));
                ts_image fl = run("flip", &in), flop = run("flop", &fl);
                CHECK(ts_image_equal(&flop, &r180));
                ts_image *all[] = {&in, &a, &b, &c, &d, &r180, &r270, &t, &tt, &tf, &tv, &r180t,
                                   &fl, &flop};
                for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
                    ts_image_free(all[k]);
            }
}

TEST(rotate90_moves_corners_clockwise)
{
    /* 2x1 image [a b] becomes a 1x2 column [a; b] under rotate:90 (a on top). */
    static const unsigned v[] = {10, 20};
    ts_image in = from_values(2, 1, 1, 1, v), out = run("rotate:90", &in);
    CHECK(out.width == 1 && out.height == 2);
    CHECK(ts_get(&out, 0, 0, 0) == 10 && ts_get(&out, 0, 1, 0) == 20);
    ts_image_free(&out);
    /* 1x2 column [a; b] becomes [b a] (the bottom-left goes to the top-left). */
    ts_image col = from_values(1, 2, 1, 1, v), r = run("rotate:90", &col);
    CHECK(r.width == 2 && ts_get(&r, 0, 0, 0) == 20 && ts_get(&r, 1, 0, 0) == 10);
    ts_image_free(&in);
    ts_image_free(&col);
    ts_image_free(&r);
}

TEST(identity_kernels_change_nothing)
{
    uint64_t s = tu_seed();
    for (int ch = 1; ch <= 4; ch++)
        for (int bytes = 1; bytes <= 2; bytes++) {
            ts_image in = tu_random_image(13, 7, ch, bytes, &s);
            const char *ops[] = {"box:1", "gauss:1", "sharpen:0"};
            for (int i = 0; i < 3; i++) {
                ts_image out = run(ops[i], &in);
                CHECKF(ts_image_equal(&in, &out), "%s changed the image", ops[i]);
                ts_image_free(&out);
            }
            ts_image_free(&in);
        }
}

TEST(box_of_constant_is_constant_and_alpha_passes)
{
    for (int bytes = 1; bytes <= 2; bytes++) {
        ts_image in;
        CHECK(ts_image_alloc(&in, 19, 11, 4, bytes) == TS_OK);
        uint64_t s = tu_seed();
        for (int y = 0; y < 11; y++)
            for (int x = 0; x < 19; x++) {
                ts_put(&in, x, y, 0, 77);
                ts_put(&in, x, y, 1, 3);
                ts_put(&in, x, y, 2, bytes == 2 ? 60000 : 250);
                ts_put(&in, x, y, 3, (unsigned)(tu_rand(&s) % 256));
            }
        const char *ops[] = {"box:7", "box:31", "gauss:9", "gauss:31:20"};
        for (int i = 0; i < 4; i++) {
            ts_image out = run(ops[i], &in);
            for (int y = 0; y < 11; y++)
                for (int x = 0; x < 19; x++) {
                    CHECKF(ts_get(&out, x, y, 0) == 77 && ts_get(&out, x, y, 1) == 3,
                           "%s at %d,%d", ops[i], x, y);
                    CHECK(ts_get(&out, x, y, 2) == ts_get(&in, x, y, 2));
                    CHECK(ts_get(&out, x, y, 3) == ts_get(&in, x, y, 3));
                }
            ts_image_free(&out);
        }
        ts_image edge = run("edge", &in);
        CHECK(ts_get(&edge, 5, 5, 0) == 0 && ts_get(&edge, 5, 5, 3) == ts_get(&in, 5, 5, 3));
        ts_image_free(&edge);
        ts_image_free(&in);
    }
}

/* Applies the 1-D factor of a separable filter along x or y as a K x K bank. */
static ts_image one_pass(const ts_image *in, const ts_filter *f, int along_y)
{
    ts_op op = tu_op("gauss:1");
    op.filter.k = f->k;
    memset(op.filter.w, 0, sizeof op.filter.w);
    for (int i = 0; i < f->k; i++) {
        int mid = f->k / 2;
        op.filter.w[along_y ? i * f->k + mid : mid * f->k + i] = along_y ? f->col[i] : f->row[i];
    }
    ts_image out;
    if (ts_ref_op(&op, in, &out) != TS_OK)
        abort();
    return out;
}

TEST(gauss_is_separable)
{
    uint64_t s = tu_seed();
    ts_image in = tu_random_image(40, 30, 3, 1, &s);
    for (int k = 3; k <= 9; k += 2) {
        char text[32];
        snprintf(text, sizeof text, "gauss:%d", k);
        ts_op op = tu_op(text);
        ts_image full = run(text, &in), h = one_pass(&in, &op.filter, 0),
                 hv = one_pass(&h, &op.filter, 1);
        int x, y, c;
        long d = tu_max_diff(&full, &hv, &x, &y, &c);
        /* two passes round twice: at most one step apart */
        CHECKF(d <= 1, "%s: 2-D and two 1-D passes differ by %ld at %d,%d,%d", text, d, x, y, c);
        ts_image_free(&full);
        ts_image_free(&h);
        ts_image_free(&hv);
    }
    ts_image_free(&in);
}

TEST(general_bank_mixes_channels)
{
    /* One output = R - B through W[0][c], a non-depthwise bank the ops never build. */
    static const unsigned v[] = {200, 0, 50, 10, 0, 30};
    ts_image in = from_values(2, 1, 3, 1, v);
    float w[3] = {1, 0, -1};
    float out[2];
    CHECK(ts_ref_filter_bank(&in, w, 1, 1, out) == TS_OK);
    CHECK(out[0] == 150 && out[1] == -20);
    int32_t iw[6] = {1, 1, 1, 0, 0, 1}; /* two outputs: R+G+B and B */
    int64_t io[4];
    CHECK(ts_ref_filter_bank_int(&in, iw, 2, 1, io) == TS_OK);
    CHECK(io[0] == 250 && io[1] == 40 && io[2] == 50 && io[3] == 30);
    ts_image_free(&in);
}

TEST(equalize_lut_by_hand)
{
    /* 4 pixels: values 10, 10, 20, 30 (8-bit). h0 = 2, N - h0 = 2; cdf: 10->2, 20->3, 30->4.
     * lut[10] = 0, lut[20] = round(1 * 255 / 2) = round(127.5) = 128 (even), lut[30] = 255. */
    uint32_t hist[256] = {0};
    uint16_t lut[256];
    hist[10] = 2, hist[20] = 1, hist[30] = 1;
    ts_equalize_lut(hist, 256, 4, lut);
    CHECK(lut[10] == 0 && lut[20] == 128 && lut[30] == 255 && lut[0] == 0 && lut[255] == 255);
    /* one value: unchanged */
    memset(hist, 0, sizeof hist);
    hist[42] = 9;
    ts_equalize_lut(hist, 256, 9, lut);
    CHECK(lut[42] == 42 && lut[7] == 7);
}

TEST(equalize_lut_is_monotone_and_spans_the_range)
{
    uint64_t s = tu_seed();
    for (int bytes = 1; bytes <= 2; bytes++) {
        ts_image in = tu_band_image(101, 57, 1, bytes, 1000 % ts_max_value(bytes),
                                    (bytes == 2 ? 5000u : 140u), &s);
        ts_image out = run("equalize", &in);
        unsigned lo = 70000, hi = 0;
        for (int y = 0; y < 57; y++)
            for (int x = 0; x < 101; x++) {
                unsigned v = ts_get(&out, x, y, 0);
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
                for (int x2 = 0; x2 < 101; x2 += 7) /* order preserved */
                    if (ts_get(&in, x, y, 0) < ts_get(&in, x2, 0, 0))
                        CHECK(v <= ts_get(&out, x2, 0, 0));
            }
        CHECKF(lo == 0 && hi == (unsigned)ts_max_value(bytes), "range %u..%u", lo, hi);
        ts_image_free(&in);
        ts_image_free(&out);
    }
}

TEST(luma_equalize_of_gray_rgb_equals_gray_equalize)
{
    /* R = G = B = v gives S = 1000 v, y = v, and each channel becomes lut[v] exactly. */
    uint64_t s = tu_seed();
    for (int bytes = 1; bytes <= 2; bytes++) {
        ts_image g = tu_band_image(64, 33, 1, bytes, 20, 200, &s), rgb;
        CHECK(ts_image_alloc(&rgb, 64, 33, 4, bytes) == TS_OK);
        for (int y = 0; y < 33; y++)
            for (int x = 0; x < 64; x++) {
                for (int c = 0; c < 3; c++)
                    ts_put(&rgb, x, y, c, ts_get(&g, x, y, 0));
                ts_put(&rgb, x, y, 3, 123);
            }
        ts_image ge = run("equalize", &g), re = run("equalize", &rgb), rr = run("equalize:rgb", &rgb);
        for (int y = 0; y < 33; y++)
            for (int x = 0; x < 64; x++)
                for (int c = 0; c < 3; c++) {
                    CHECK(ts_get(&re, x, y, c) == ts_get(&ge, x, y, 0));
                    CHECK(ts_get(&rr, x, y, c) == ts_get(&ge, x, y, 0));
                    CHECK(ts_get(&re, x, y, 3) == 123);
                }
        ts_image_free(&g);
        ts_image_free(&rgb);
        ts_image_free(&ge);
        ts_image_free(&re);
        ts_image_free(&rr);
    }
}

TEST(histograms_count_every_pixel)
{
    uint64_t s = tu_seed();
    ts_image in = tu_random_image(37, 23, 4, 2, &s);
    uint32_t *h = malloc(3 * 65536 * sizeof *h);
    CHECK(ts_ref_hist(&in, TS_HIST_CHANNELS, h) == TS_OK);
    for (int c = 0; c < 3; c++) {
        uint64_t n = 0;
        for (int b = 0; b < 65536; b++)
            n += h[c * 65536 + b];
        CHECK(n == 37 * 23);
    }
    CHECK(h[ts_get(&in, 5, 5, 1) + 65536] >= 1);
    CHECK(ts_ref_hist(&in, TS_HIST_LUMA, h) == TS_OK);
    unsigned y = km_luma_of_sum(km_luma_sum(ts_get(&in, 0, 0, 0), ts_get(&in, 0, 0, 1),
                                            ts_get(&in, 0, 0, 2)));
    CHECK(h[y] >= 1);
    free(h);
    ts_image_free(&in);
}

/* The reference convolution in parallel bands gives the bytes of the single-threaded one, for
 * sizes below, at and across the 64-row bands, every channel count and depth, float, exact and
 * magnitude filters. */
TEST(ref_conv_threads_give_the_same_bytes)
{
    static const int sizes[][2] = {{1, 1}, {33, 17}, {4097, 3}, {70, 129}, {31, 200}, {5, 64}};
    static const char *const ops[] = {"gauss:5", "sharpen", "edge", "box:7"};
    uint64_t st = tu_seed() ^ 0x7E4Du;
    int saved = ts_ref_threads();
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int ch = 1; ch <= 4; ch++)
            for (int bytes = 1; bytes <= 2; bytes++) {
                ts_image in = tu_random_image(sizes[s][0], sizes[s][1], ch, bytes, &st);
                for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
                    ts_op op = tu_op(ops[i]);
                    ts_image one, many;
                    ts_ref_set_threads(1);
                    CHECK(ts_ref_conv(&op, &in, &one) == TS_OK);
                    ts_ref_set_threads(5);
                    CHECK(ts_ref_conv(&op, &in, &many) == TS_OK);
                    int x = 0, y = 0, c = 0;
                    long d = tu_max_diff(&one, &many, &x, &y, &c);
                    CHECKF(d == 0, "%s on %dx%dx%d %d-bit: 5 threads differ from 1 by %ld at "
                           "x=%d y=%d c=%d", ops[i], sizes[s][0], sizes[s][1], ch, 8 * bytes, d,
                           x, y, c);
                    ts_image_free(&one);
                    ts_image_free(&many);
                }
                ts_image_free(&in);
            }
    ts_ref_set_threads(saved);
    ts_ref_set_threads(0);
    CHECKF(ts_ref_threads() == 1, "0 threads must mean 1, got %d", ts_ref_threads());
    ts_ref_set_threads(1000);
    CHECKF(ts_ref_threads() == 64, "1000 threads must mean 64, got %d", ts_ref_threads());
    ts_ref_set_threads(saved);
}

TEST(clahe_by_hand_on_a_flat_image)
{
    /* 64x64 of 100, 8x8 tiles of 8x8 = 64 pixels: clip limit max(1, (int)(40 * 64 / 256)) = 10,
     * so 54 counts are clipped: batch 0, residual 54, step 256 / 54 = 4: bins 0, 4, ..., 212 get
     * one more. cdf(100) = 10 + 26 (bins 0..100 step 4) = 36; lut = rint(36 * 255 / 64 =
     * 143.4375) = 143 in every tile, so every pixel. */
    ts_image in;
    CHECK(ts_image_alloc(&in, 64, 64, 1, 1) == TS_OK);
    memset(in.data, 100, in.pitch * 64);
    ts_image out = run("clahe", &in);
    int all = 1;
    for (int y = 0; y < 64; y++)
        for (int x = 0; x < 64; x++)
            all &= ts_get(&out, x, y, 0) == 143;
    CHECKF(all, "got %u", ts_get(&out, 0, 0, 0));
    ts_image_free(&out);
    /* no clip: cdf(100) = 64, lut = 255 */
    out = run("clahe:0", &in);
    CHECKF(ts_get(&out, 5, 7, 0) == 255, "got %u", ts_get(&out, 5, 7, 0));
    ts_image_free(&out);
    ts_image_free(&in);
}
