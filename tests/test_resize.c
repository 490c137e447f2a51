/* test_resize.c - resize, thumbnail and crop on the CPU: the grammar, the output sizes, samples
 * worked out by hand, 16-bit against an exact double-precision resample (+-1), alpha, copies,
 * and the size change flowing through a pipeline chain. Pillow itself is the oracle of
 * tests/resize_pillow.py (8-bit, every filter); these run without it.
 */
#include "tessera.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static ts_image run_op(const char *text, const ts_image *in, ts_status *st)
{
    ts_op op = tu_op(text);
    ts_image out;
    memset(&out, 0, sizeof out);
    *st = ts_ref_op(&op, in, &out);
    return out;
}

static ts_image gray_row(int bytes, const unsigned *v, int n)
{
    ts_image im;
    if (ts_image_alloc(&im, n, 1, 1, bytes) != TS_OK)
        abort();
    for (int i = 0; i < n; i++)
        ts_put(&im, i, 0, 0, v[i]);
    return im;
}

TEST(resize_grammar)
{
    static const struct {
        const char *in, *canon;
    } good[] = {{"resize:640x480", "resize:640x480"},
                {"resize:640x480:lanczos3", "resize:640x480"},
                {"resize:640X480:triangle", "resize:640x480:triangle"},
                {"resize:640:bilinear", "resize:640:triangle"},
                {"resize:x200:cubic", "resize:x200:cubic"},
                {"resize:50%:box", "resize:50%:box"},
                {"resize:12.5%", "resize:12.5%"},
                {"thumbnail:256", "thumbnail:256"},
                {"thumbnail:64:triangle", "thumbnail:64:triangle"},
                {"crop:10x20+3+4", "crop:10x20+3+4"},
                {"crop:10x20-3+4", "crop:10x20-3+4"},
                {"crop:7x9", "crop:7x9+0+0"}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        ts_op op;
        char err[200];
        CHECKF(ts_op_parse(good[i].in, &op, err, sizeof err) == TS_OK, "%s: %s", good[i].in, err);
        CHECKF(op.kind == TS_OP_RESIZE && strcmp(op.text, good[i].canon) == 0, "%s -> %s",
               good[i].in, op.text);
        CHECK(ts_op_family(op.kind) == TS_FAM_RESIZE);
        /* the canonical text parses to the same op */
        ts_op again;
        CHECK(ts_op_parse(op.text, &again, err, sizeof err) == TS_OK);
        CHECK(strcmp(again.text, op.text) == 0 && again.resize.w == op.resize.w &&
              again.resize.h == op.resize.h && again.resize.filter == op.resize.filter);
    }
    static const struct {
        const char *in, *why;
    } bad[] = {{"resize", "GEOMETRY"},          {"resize:0x10", "WxH"},
               {"resize:10x", "WxH"},           {"resize:x", "WxH"},
               {"resize:10x10:sinc", "FILTER"}, {"resize:-5", "WxH"},
               {"resize:0%", "N%"},             {"resize:abc%", "N%"},
               {"resize:10x10:box:1", "resize takes"}, {"resize:2000000", "WxH"},
               {"thumbnail", "thumbnail takes"}, {"thumbnail:0", "thumbnail takes N"},
               {"thumbnail:12x", "thumbnail takes N"}, {"crop", "crop takes"},
               {"crop:10", "crop takes"},       {"crop:10x10+1", "crop takes"},
               {"crop:10x10+1+2+3", "crop takes"}, {"crop:0x10+1+1", "crop takes"},
               {"crop:10x10:box", "crop takes"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ts_op op;
        char err[200] = "";
        CHECKF(ts_op_parse(bad[i].in, &op, err, sizeof err) == TS_ERR_INVALID, "%s accepted",
               bad[i].in);
        CHECKF(strstr(err, bad[i].why) != NULL, "%s: '%s' does not say '%s'", bad[i].in, err,
               bad[i].why);
    }
    ts_family f;
    CHECK(ts_family_from_name("resize", &f) && f == TS_FAM_RESIZE);
    CHECK(ts_family_from_name("crop", &f) && f == TS_FAM_RESIZE);
    CHECK(strcmp(ts_family_name(TS_FAM_RESIZE), "resize") == 0);
}

static int size_of(const char *text, int w, int h, int *ow, int *oh)
{
    ts_op op = tu_op(text);
    return ts_op_out_size(&op, w, h, ow, oh) == TS_OK;
}

TEST(resize_output_sizes)
{
    static const struct {
        const char *op;
        int w, h, ow, oh;
    } c[] = {{"resize:640", 1920, 1080, 640, 360},   {"resize:x360", 1920, 1080, 640, 360},
             {"resize:100", 3, 2, 100, 67},          /* 66.67 rounds to 67 */
             {"resize:x1", 1000, 3, 333, 1},         {"resize:1", 3, 1000, 1, 333},
             {"resize:1", 1, 1000, 1, 1000},         {"resize:50%", 33, 17, 17, 9},
             {"resize:50%", 1, 1, 1, 1},             {"resize:1600%", 33, 17, 528, 272},
             {"resize:7x9", 1, 1, 7, 9},             {"thumbnail:256", 4000, 3000, 256, 192},
             {"thumbnail:256", 3000, 4000, 192, 256}, {"thumbnail:256", 200, 100, 200, 100},
             {"thumbnail:256", 256, 256, 256, 256},  {"thumbnail:10", 4097, 3, 10, 1},
             {"thumbnail:100", 150, 150, 100, 100},  {"crop:10x20+3+4", 100, 100, 10, 20},
             {"crop:10x20+95+90", 100, 100, 5, 10},  {"crop:50x50-10-20", 100, 100, 40, 30},
             {"crop:500x500-10-10", 33, 17, 33, 17}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        int ow = 0, oh = 0;
        CHECKF(size_of(c[i].op, c[i].w, c[i].h, &ow, &oh), "%s of %dx%d: %s", c[i].op, c[i].w,
               c[i].h, ts_error_detail());
        CHECKF(ow == c[i].ow && oh == c[i].oh, "%s of %dx%d gave %dx%d, want %dx%d", c[i].op,
               c[i].w, c[i].h, ow, oh, c[i].ow, c[i].oh);
    }
    int ow, oh;
    CHECK(!size_of("crop:10x10+100+0", 100, 100, &ow, &oh));
    CHECK(strstr(ts_error_detail(), "outside") != NULL);
    CHECK(!size_of("crop:10x10-10+0", 100, 100, &ow, &oh));
    CHECK(!size_of("crop:10x10+0+100", 100, 100, &ow, &oh));
}

/* Pillow's numbers worked by hand (see ref_resize.c): box halves average pairs, with the 22-bit
 * fixed point rounding 35.5 up; triangle doubling weighs 3/4 and 1/4 at the centres. */
TEST(resize_samples_by_hand)
{
    ts_status st;
    static const unsigned a[] = {10, 20, 30, 41};
    ts_image in = gray_row(1, a, 4);
    ts_image out = run_op("resize:2x1:box", &in, &st);
    CHECK(st == TS_OK && out.width == 2 && out.height == 1);
    CHECKF(ts_get(&out, 0, 0, 0) == 15 && ts_get(&out, 1, 0, 0) == 36, "got %u %u",
           ts_get(&out, 0, 0, 0), ts_get(&out, 1, 0, 0));
    ts_image_free(&in);
    ts_image_free(&out);

    static const unsigned b[] = {0, 255};
    in = gray_row(1, b, 2);
    out = run_op("resize:4x1:triangle", &in, &st);
    CHECK(st == TS_OK);
    unsigned want[4] = {0, 64, 191, 255};
    for (int i = 0; i < 4; i++)
        CHECKF(ts_get(&out, i, 0, 0) == want[i], "x=%d got %u want %u", i, ts_get(&out, i, 0, 0),
               want[i]);
    ts_image_free(&out);
    /* lanczos3 overshoots at an edge and is clamped; the mean stays in range */
    out = run_op("resize:8x1", &in, &st);
    CHECK(st == TS_OK && ts_get(&out, 0, 0, 0) == 0 && ts_get(&out, 7, 0, 0) == 255);
    for (int i = 1; i < 8; i++)
        CHECK(ts_get(&out, i, 0, 0) >= ts_get(&out, i - 1, 0, 0) || ts_get(&out, i, 0, 0) == 0);
    ts_image_free(&out);
    ts_image_free(&in);
}

/* ---- an exact double-precision resample, per pass rounded half up, to check 16-bit */

static double f_eval(int f, double x)
{
    double ax = fabs(x);
    switch (f) {
    case 0: return x > -0.5 && x <= 0.5;
    case 1: return ax < 1 ? 1 - ax : 0;
    case 2: return ax < 1 ? (1.5 * ax - 2.5) * ax * ax + 1 : ax < 2 ? (((ax - 5) * ax + 8) * ax - 4) * -0.5 : 0;
    default: {
        if (!(x >= -3 && x < 3))
            return 0;
        double p = M_PI * x;
        return x == 0 ? 1 : 3 * sin(p) * sin(p / 3) / (p * p);
    }
    }
}

/* One axis: out[i] from in[] (stride 1) with Pillow's bounds and normalized double weights. */
static void axis(const double *in, int n_in, double *out, int n_out, int f)
{
    static const double sup[] = {0.5, 1, 2, 3};
    double scale = (double)n_in / n_out, fs = scale < 1 ? 1 : scale, support = sup[f] * fs;
    for (int i = 0; i < n_out; i++) {
        if (n_in == n_out) {
            out[i] = in[i];
            continue;
        }
        double c = (i + 0.5) * scale, ww = 0, s = 0;
        int lo = (int)(c - support + 0.5), hi = (int)(c + support + 0.5);
        lo = lo < 0 ? 0 : lo;
        hi = hi > n_in ? n_in : hi;
        for (int x = lo; x < hi; x++) {
            double w = f_eval(f, (x - c + 0.5) / fs);
            ww += w;
            s += w * in[x];
        }
        double v = floor((ww != 0 ? s / ww : s) + 0.5);
        out[i] = v < 0 ? 0 : v > 65535 ? 65535 : v;
    }
}

/* interp samples at (i + 0.5) * in / out - 0.5 with two taps whatever the scale (OpenCV's
 * INTER_LINEAR, no antialiasing): a 4x reduction reads inputs 1, 2 and 5, 6 (half each, the
 * 22-bit sums of 15.5 and 55.5 floored after the half is added: 15 and 55), where triangle would
 * weigh 8 inputs; an enlargement clamps at the edges as OpenCV does. */
TEST(resize_interp_by_hand)
{
    ts_status st;
    static const unsigned a[] = {0, 10, 20, 30, 40, 50, 60, 70};
    ts_image in = gray_row(1, a, 8);
    ts_image out = run_op("resize:2x1:interp", &in, &st);
    CHECK(st == TS_OK && out.width == 2 && out.height == 1);
    CHECKF(ts_get(&out, 0, 0, 0) == 15 && ts_get(&out, 1, 0, 0) == 55, "got %u %u",
           ts_get(&out, 0, 0, 0), ts_get(&out, 1, 0, 0));
    ts_image_free(&out);
    out = run_op("resize:2x1:triangle", &in, &st); /* the antialiased filter differs */
    CHECK(st == TS_OK && ts_get(&out, 0, 0, 0) != 15);
    ts_image_free(&in);
    ts_image_free(&out);

    static const unsigned b[] = {0, 100};
    in = gray_row(1, b, 2);
    out = run_op("resize:4x1:interp", &in, &st);
    CHECK(st == TS_OK);
    unsigned want[4] = {0, 25, 75, 100};
    for (int i = 0; i < 4; i++)
        CHECKF(ts_get(&out, i, 0, 0) == want[i], "x=%d got %u want %u", i, ts_get(&out, i, 0, 0),
               want[i]);
    ts_image_free(&in);
    ts_image_free(&out);
    /* the same positions on the other axis, and the canonical text */
    CHECK(ts_image_alloc(&in, 1, 8, 1, 1) == TS_OK);
    for (int y = 0; y < 8; y++)
        ts_put(&in, 0, y, 0, a[y]);
    out = run_op("resize:1x2:interp", &in, &st);
    CHECK(st == TS_OK && out.height == 2 && ts_get(&out, 0, 0, 0) == 15 &&
          ts_get(&out, 0, 1, 0) == 55);
    ts_image_free(&in);
    ts_image_free(&out);
    ts_op op = tu_op("resize:50%:interp");
    CHECK(strcmp(op.text, "resize:50%:interp") == 0);
}

TEST(resize_16bit_within_one_of_exact_double)
{
    static const char *const filters[] = {"box", "triangle", "cubic", "lanczos3"};
    static const int sizes[][4] = {{33, 17, 16, 9}, {33, 17, 80, 41}, {17, 1, 5, 1}, {1, 19, 1, 64},
                                   {50, 40, 3, 97}, {7, 5, 112, 80}};
    uint64_t rng = tu_seed() ^ 0x16b;
    long exact = 0, total = 0;
    for (int f = 0; f < 4; f++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            int iw = sizes[s][0], ih = sizes[s][1], ow = sizes[s][2], oh = sizes[s][3];
            long worst = 0;
            ts_image in = tu_random_image(iw, ih, 1, 2, &rng);
            char text[64];
            snprintf(text, sizeof text, "resize:%dx%d:%s", ow, oh, filters[f]);
            ts_status st;
            ts_image out = run_op(text, &in, &st);
            CHECKF(st == TS_OK, "%s: %s", text, ts_error_detail());
            double *row = malloc(sizeof(double) * (size_t)(iw > ih ? iw : ih) * 2);
            double *mid = malloc(sizeof(double) * (size_t)ow * ih);
            double *col = malloc(sizeof(double) * (size_t)(ih > oh ? ih : oh) * 2);
            for (int y = 0; y < ih; y++) {
                for (int x = 0; x < iw; x++)
                    row[x] = ts_get(&in, x, y, 0);
                axis(row, iw, mid + (size_t)y * ow, ow, f);
            }
            for (int x = 0; x < ow; x++) {
                for (int y = 0; y < ih; y++)
                    col[y] = mid[(size_t)y * ow + x];
                axis(col, ih, col + ih, oh, f);
                for (int y = 0; y < oh; y++) {
                    long d = labs((long)ts_get(&out, x, y, 0) - (long)col[ih + y]);
                    worst = d > worst ? d : worst;
                    exact += d == 0;
                    total++;
                }
            }
            free(row);
            free(mid);
            free(col);
            ts_image_free(&in);
            ts_image_free(&out);
            /* One axis: within one step. Both axes: the first pass's rounding, where fixed point
             * and double fall on either side of a near-tie (1 step), is carried through the second
             * pass's weights, whose absolute sum exceeds 1 for cubic and lanczos3 (negative lobes),
             * so the result may differ by 2 (seen: lanczos3 7x5 -> 112x80). */
            long bound = (iw != ow && ih != oh) ? 2 : 1;
            CHECKF(worst <= bound, "%s of %dx%d: 16-bit differs by %ld from the double resample",
                   text, iw, ih, worst);
        }
    /* 29-bit weights: a difference needs a sum within ~1e-5 of a rounding tie */
    CHECKF(exact * 1000 >= total * 999, "only %ld of %ld samples exact", exact, total);
}

TEST(resize_alpha_is_premultiplied)
{
    /* a transparent red pixel beside an opaque blue one: halving gives pure blue at half alpha
     * (premultiplied: the red of an invisible pixel does not bleed) */
    for (int bytes = 1; bytes <= 2; bytes++) {
        unsigned max = (unsigned)ts_max_value(bytes);
        ts_image in;
        CHECK(ts_image_alloc(&in, 2, 1, 4, bytes) == TS_OK);
        unsigned px[2][4] = {{max, 0, 0, 0}, {0, 0, max, max}};
        for (int x = 0; x < 2; x++)
            for (int c = 0; c < 4; c++)
                ts_put(&in, x, 0, c, px[x][c]);
        ts_status st;
        ts_image out = run_op("resize:1x1:box", &in, &st);
        CHECK(st == TS_OK);
        CHECKF(ts_get(&out, 0, 0, 0) == 0 && ts_get(&out, 0, 0, 1) == 0 &&
                   ts_get(&out, 0, 0, 2) >= max - 1 &&
                   ts_get(&out, 0, 0, 3) == (max + 1) / 2,
               "%d-bit: got %u %u %u %u", 8 * bytes, ts_get(&out, 0, 0, 0), ts_get(&out, 0, 0, 1),
               ts_get(&out, 0, 0, 2), ts_get(&out, 0, 0, 3));
        ts_image_free(&out);
        ts_image_free(&in);
    }
}

TEST(resize_same_size_and_crop_are_copies)
{
    uint64_t rng = tu_seed() ^ 0xc0;
    for (int ch = 1; ch <= 4; ch++)
        for (int bytes = 1; bytes <= 2; bytes++) {
            ts_image in = tu_random_image(33, 17, ch, bytes, &rng);
            ts_status st;
            ts_image out = run_op("resize:33x17:cubic", &in, &st);
            CHECK(st == TS_OK && ts_image_equal(&in, &out));
            ts_image_free(&out);
            out = run_op("thumbnail:40", &in, &st);
            CHECK(st == TS_OK && ts_image_equal(&in, &out));
            ts_image_free(&out);
            out = run_op("crop:10x5+30-2", &in, &st);
            CHECK(st == TS_OK && out.width == 3 && out.height == 3);
            for (int y = 0; y < 3; y++)
                for (int x = 0; x < 3; x++)
                    for (int c = 0; c < ch; c++)
                        CHECK(ts_get(&out, x, y, c) == ts_get(&in, 30 + x, y, c));
            ts_image_free(&out);
            out = run_op("crop:10x5+40+0", &in, &st);
            CHECK(st == TS_ERR_INVALID && out.data == NULL);
            ts_image_free(&in);
        }
}

/* The size change flows through a chain: each op sees the previous op's output size. */
TEST(resize_in_a_cpu_chain)
{
    ts_pipeline *p;
    char msg[200];
    CHECK(ts_pipeline_create(&p, TS_BACKEND_CPU, msg, sizeof msg) == TS_OK);
    uint64_t rng = tu_seed() ^ 0xc4a;
    ts_image in = tu_random_image(120, 80, 3, 1, &rng);
    ts_chain c;
    char err[200];
    CHECK(ts_chain_parse("resize:60,rotate:90,crop:20x30+5+5,thumbnail:10,gauss:3", &c, err,
                         sizeof err) == TS_OK);
    ts_image out;
    ts_run_report rep;
    CHECKF(ts_pipeline_run(p, &c, &in, &out, &rep) == TS_OK, "%s", ts_error_detail());
    /* 120x80 -> 60x40 -> 40x60 -> 20x30 -> 7x10 */
    CHECKF(out.width == 7 && out.height == 10, "got %dx%d", out.width, out.height);
    CHECK(rep.op[0].variant && rep.op[0].variant->family == TS_FAM_RESIZE);
    ts_image_free(&out);
    ts_chain_free(&c);
    /* a crop that misses the image after a resize fails with the op's name */
    CHECK(ts_chain_parse("resize:10x10,crop:5x5+20+20", &c, err, sizeof err) == TS_OK);
    CHECK(ts_pipeline_run(p, &c, &in, &out, &rep) == TS_ERR_INVALID);
    CHECKF(strstr(ts_error_detail(), "crop:5x5+20+20") != NULL, "%s", ts_error_detail());
    ts_chain_free(&c);
    ts_image_free(&in);
    ts_pipeline_destroy(p);
}
