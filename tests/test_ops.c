/* test_ops.c - the op grammar, filter construction and kernel files. */
#include "op_table.h"
#include "kernel_file.h"
#include "testutil.h"
#include "ts_math.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static ts_status parse(const char *text, ts_chain *c, char *err)
{
    return ts_chain_parse(text, c, err, 256);
}

TEST(chain_parses_every_op)
{
    ts_chain c;
    char err[256];
    CHECKF(parse(" box:5, gauss:7:1.5 ,sharpen,sharpen:0.5,emboss,edge,rotate:90,rotate:180,"
                 "rotate:270,transpose,transverse,flip,flop,equalize,equalize:rgb,equalize:luma",
                 &c, err) == TS_OK,
           "%s", err);
    CHECK(c.n == 16);
    static const char *want[] = {"box:5",      "gauss:7:1.5", "sharpen",  "sharpen:0.5",
                                 "emboss",     "edge",        "rotate:90", "rotate:180",
                                 "rotate:270", "transpose",   "transverse", "flip",
                                 "flop",       "equalize",    "equalize:rgb", "equalize"};
    for (int i = 0; i < c.n; i++)
        CHECKF(strcmp(c.ops[i].text, want[i]) == 0, "op %d is '%s', want '%s'", i, c.ops[i].text,
               want[i]);
    CHECK(c.ops[0].kind == TS_OP_CONV && c.ops[6].kind == TS_OP_GEOM);
    CHECK(c.ops[6].geom == TS_GEOM_ROT90 && c.ops[8].geom == TS_GEOM_ROT270);
    CHECK(c.ops[13].kind == TS_OP_EQUALIZE && c.ops[13].hist_mode == TS_HIST_LUMA);
    CHECK(c.ops[14].hist_mode == TS_HIST_CHANNELS);
    ts_chain_free(&c);
}

TEST(empty_chain_is_valid)
{
    ts_chain c;
    char err[256];
    CHECK(parse("", &c, err) == TS_OK && c.n == 0);
    CHECK(parse("   ", &c, err) == TS_OK && c.n == 0);
}

TEST(malformed_chains_are_refused_with_a_reason)
{
    static const struct {
        const char *text, *reason;
    } bad[] = {
        {"gauss:4", "odd"},          {"box:0", "1 to 31"},        {"box:33", "1 to 31"},
        {"box:-3", "1 to 31"},       {"box:x", "odd integer"},     {"box:3.0", "odd integer"},
        {"box:99999999999999999999", "odd integer"},               {"gauss:5,", "empty"},
        {",gauss:5", "empty"},       {"gauss:5,,flip", "empty"},   {"blur", "unknown"},
        {"rotate:45", "90, 180"},    {"rotate", "90, 180"},        {"flip:1", "no argument"},
        {"gauss:5:0", "SIGMA"},      {"gauss:5:nan", "SIGMA"},     {"gauss:5:inf", "SIGMA"},
        {"gauss:5:", "empty"},       {"sharpen:1e9", "A must"},    {"equalize:hsv", "luma or rgb"},
        {"kernel", "needs a file"},  {"box:3:1:2:3", "too many"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ts_chain c;
        char err[256] = "";
        ts_status st = parse(bad[i].text, &c, err);
        CHECKF(st == TS_ERR_INVALID, "'%s' gave %s", bad[i].text, ts_status_str(st));
        CHECKF(strstr(err, bad[i].reason) != NULL, "'%s': error '%s' lacks '%s'", bad[i].text, err,
               bad[i].reason);
        CHECK(c.n == 0 && c.ops == NULL);
    }
}

TEST(chain_length_is_bounded)
{
    char text[TS_MAX_CHAIN * 6 + 16] = "";
    for (int i = 0; i <= TS_MAX_CHAIN; i++)
        strcat(text, i ? ",flip" : "flip");
    ts_chain c;
    char err[256];
    CHECK(parse(text, &c, err) != TS_OK);
    CHECK(strstr(err, "more than") != NULL);
}

TEST(gauss_weights_follow_opencv_rule)
{
    ts_op op = tu_op("gauss:5");
    const ts_filter *f = &op.filter;
    double sigma = 0.3 * ((5 - 1) * 0.5 - 1) + 0.8, g[5], s = 0, sum = 0;
    for (int i = 0; i < 5; i++)
        s += g[i] = exp(-(i - 2) * (i - 2) / (2 * sigma * sigma));
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 5; x++) {
            CHECK(fabs(f->w[y * 5 + x] - g[y] * g[x] / (s * s)) < 1e-7);
            CHECK(fabs(f->w[y * 5 + x] - f->col[y] * f->row[x]) < 1e-7); /* separable */
            sum += f->w[y * 5 + x];
        }
    CHECK(fabs(sum - 1) < 1e-6);
    CHECK(!f->exact && f->separable && f->k == 5 && f->outputs == 1);
    CHECK(tu_op("gauss:1").filter.w[0] == 1.0f);
}

TEST(integer_filters_are_exact)
{
    ts_op box = tu_op("box:7"), edge = tu_op("edge"), sh = tu_op("sharpen:2"),
          shf = tu_op("sharpen:0.5"), em = tu_op("emboss");
    CHECK(box.filter.exact && box.filter.divisor == 49 && box.filter.iw[48] == 1);
    CHECK(edge.filter.exact && edge.filter.outputs == 2 && edge.filter.magnitude);
    CHECK(edge.filter.iw[2] == 1 && edge.filter.iw[9 + 7] == 2);
    CHECK(sh.filter.exact && sh.filter.iw[4] == 9 && sh.filter.iw[1] == -2);
    CHECK(!shf.filter.exact && shf.filter.w[4] == 3.0f && shf.filter.w[1] == -0.5f);
    CHECK(em.filter.exact && em.filter.iw[0] == -2 && em.filter.iw[8] == 2);
}

static ts_status kparse(const char *text, ts_filter *f, char *err)
{
    return ts_filter_parse(text, strlen(text), f, err, 256);
}

TEST(kernel_file_text)
{
    ts_filter f;
    char err[256];
    CHECKF(kparse("# blur\n1 2 1\n2 4 2\n1 2 1\ndivisor: 16\n", &f, err) == TS_OK, "%s", err);
    CHECK(f.k == 3 && f.exact && f.divisor == 16 && f.iw[4] == 4 && f.w[4] == 0.25f);
    CHECKF(kparse("0,0,0; 0,1,0; 0,0,0", &f, err) == TS_OK, "%s", err);
    CHECK(f.exact && f.divisor == 1 && f.iw[4] == 1);
    CHECKF(kparse("0.5\n", &f, err) == TS_OK, "%s", err);
    CHECK(f.k == 1 && !f.exact && f.w[0] == 0.5f);
    CHECKF(kparse("1 1 1 1 1 1 1 1 1\n/ -9\n", &f, err) == TS_OK, "%s", err);
    CHECK(f.exact && f.divisor == 9 && f.iw[0] == -1);
    CHECKF(kparse("1 1 1 1 1 1 1 1 1\ndivisor 2.5\n", &f, err) == TS_OK, "%s", err);
    CHECK(!f.exact && f.w[0] == 0.4f);
}

TEST(kernel_file_rejects)
{
    static const struct {
        const char *text, *reason;
    } bad[] = {
        {"", "no weights"},
        {"1 2 3 4 5 6 7 8", "not a square"},
        {"1 2 3 4", "even"},
        {"1 nan 1 1 1 1 1 1 1", "finite"},
        {"1 1 1 1 inf 1 1 1 1", "finite"},
        {"1 1 1 1 1 1 1 1 1\ndivisor: 0", "zero"},
        {"1 1 1 1 1 1 1 1 1\ndivisor: 2\ndivisor: 3", "second divisor"},
        {"1 1 1\ndivisor: 2\n1 1 1 1 1 1", "after the divisor"},
        {"1 x 1 1 1 1 1 1 1", "not a number"},
        {"1e300 1 1 1 1 1 1 1 1", "out of range"},
        {"5 / .00000000000000000000000000000000000000000000000000000000000005", "out of range"},
        {"1 1 1 1 2e8 1 1 1 1\ndivisor: 0.01", "divisor"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ts_filter f;
        char err[256] = "";
        CHECKF(kparse(bad[i].text, &f, err) == TS_ERR_FORMAT, "'%s' accepted", bad[i].text);
        CHECKF(strstr(err, bad[i].reason), "'%s': error '%s' lacks '%s'", bad[i].text, err,
               bad[i].reason);
    }
    /* 33 x 33 weights: K over 31 */
    char *big = malloc(33 * 33 * 2 + 1);
    for (int i = 0; i < 33 * 33; i++)
        memcpy(big + 2 * i, "1 ", 2);
    big[33 * 33 * 2] = '\0';
    ts_filter f;
    char err[256];
    CHECK(kparse(big, &f, err) == TS_ERR_FORMAT);
    free(big);
    /* 1 MB of garbage */
    size_t n = 1 << 20;
    char *junk = malloc(n);
    uint64_t s = tu_seed();
    for (size_t i = 0; i < n; i++)
        junk[i] = (char)(tu_rand(&s) & 0xff);
    CHECK(ts_filter_parse(junk, n, &f, err, sizeof err) == TS_ERR_FORMAT);
    free(junk);
}

TEST(kernel_file_op_reads_the_file)
{
    char path[] = "/tmp/tessera-kXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    const char *text = "1 2 1\n2 4 2\n1 2 1\n/ 16\n";
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    char item[300];
    snprintf(item, sizeof item, "kernel:%s", path);
    ts_op op;
    char err[256];
    CHECKF(app_op_parse(item, &op, err, sizeof err) == TS_OK, "%s", err);
    CHECK(op.filter.k == 3 && op.filter.exact && op.filter.divisor == 16);
    unlink(path);
    CHECK(app_op_parse(item, &op, err, sizeof err) == TS_ERR_IO);
    CHECK(strstr(err, path) != NULL);
    CHECK(app_op_parse("kernel:/tmp", &op, err, sizeof err) == TS_ERR_IO);
    CHECKF(strstr(err, "directory") != NULL, "%s", err);
}

/* The library opens no files: without the app's reader kernel:FILE is refused, even for a
 * file that exists, and the parse reads nothing. */
TEST(kernel_file_needs_the_callers_reader)
{
    ts_op op;
    ts_chain c;
    char err[256];
    CHECK(ts_op_parse("kernel:/etc/hostname", &op, err, sizeof err) == TS_ERR_UNSUPPORTED);
    CHECKF(strstr(err, "read by the caller") != NULL, "%s", err);
    CHECK(ts_chain_parse("box:3,kernel:/etc/hostname", &c, err, sizeof err) == TS_ERR_UNSUPPORTED);
    CHECK(c.n == 0);
    CHECK(ts_chain_parse_with("box:3", NULL, &c, err, sizeof err) == TS_OK && c.n == 1);
    ts_chain_free(&c);
}

/* A FIFO with no writer: opening it for reading used to wait forever. */
TEST(kernel_file_that_is_a_fifo_is_refused_at_once)
{
    char dir[] = "/tmp/tessera-fifoXXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[300], item[320], err[256];
    snprintf(path, sizeof path, "%s/k.fifo", dir);
    CHECK(mkfifo(path, 0600) == 0);
    snprintf(item, sizeof item, "kernel:%s", path);
    ts_op op;
    alarm(10); /* a hang fails the run instead of stalling it */
    CHECK(app_op_parse(item, &op, err, sizeof err) == TS_ERR_IO);
    alarm(0);
    CHECKF(strstr(err, path) != NULL && strstr(err, "FIFO") != NULL, "%s", err);
    CHECK(app_op_parse("kernel:/dev/null", &op, err, sizeof err) == TS_ERR_IO);
    CHECKF(strstr(err, "device") != NULL, "%s", err);
    unlink(path);
    rmdir(dir);
}

TEST(op_table_keeps_its_rules)
{
    const char *why = op_table_check();
    CHECKF(why[0] == '\0', "%s", why);
    CHECK(ts_op_count() == 16);
    CHECK(ts_op_info_at(-1) == NULL && ts_op_info_at(ts_op_count()) == NULL);
    CHECK(ts_op_find("hist") < 0); /* hidden: not in the grammar */
}

/* Every op of the table parses from its name (with its first choice where it needs one), its
 * canonical text names its row, and the lists carry it. */
TEST(every_row_parses_and_is_listed)
{
    char names[512], usage[2048], syn[128], text[160], err[256];
    ts_op_names(-1, names, sizeof names);
    ts_op_usage(usage, sizeof usage);
    ts_op op;
    for (int i = 0; i < ts_op_count(); i++) {
        const ts_op_info *in = ts_op_info_at(i);
        CHECKF(in && in->help && in->help[0], "row %d", i);
        CHECK(ts_op_find(in->name) == i);
        ts_family f;
        CHECK(ts_family_from_name(in->name, &f) && f == in->family);
        CHECKF(strstr(names, in->name) != NULL, "%s", in->name);
        ts_op_synopsis(i, syn, sizeof syn);
        CHECKF(strncmp(syn, in->name, strlen(in->name)) == 0 && strstr(usage, syn), "%s", syn);
        if (strcmp(in->name, "kernel") == 0)
            continue; /* reads a file: kernel_file_op_reads_the_file */
        /* NAME, or NAME:FIRST for a required argument with choices (rotate:90); a geometry is
         * free text that its synopsis only names */
        static const char *const geometry[][2] = {
            {"resize", "resize:WxH"}, {"thumbnail", "thumbnail:N"}, {"crop", "crop:WxH+X+Y"}};
        static const char *const example[] = {"resize:64x48", "thumbnail:256", "crop:8x8+1+2"};
        const char *colon = strchr(syn, ':');
        int g = 0;
        while (g < 3 && strcmp(in->name, geometry[g][0]) != 0)
            g++;
        if (g < 3) {
            CHECKF(strncmp(syn, geometry[g][1], strlen(geometry[g][1])) == 0, "%s", syn);
            snprintf(text, sizeof text, "%s", example[g]);
        } else if (colon && syn[strlen(in->name)] == ':')
            snprintf(text, sizeof text, "%s:%.*s", in->name, (int)strcspn(colon + 1, "|"),
                     colon + 1);
        else
            snprintf(text, sizeof text, "%s", in->name);
        CHECKF(ts_op_parse(text, &op, err, sizeof err) == TS_OK, "%s: %s", text, err);
        CHECKF(ts_op_index(&op) == i, "%s", text);
        CHECK(ts_op_family(op.kind) == in->family);
    }
}

TEST(help_and_lists_are_derived_from_the_table)
{
    char buf[2048];
    ts_op_usage(buf, sizeof buf);
    CHECKF(strcmp(buf, "  box[:K]  gauss[:K[:SIGMA]]  sharpen[:A]  emboss  edge  kernel:FILE\n"
                      "  rotate:90|180|270  transpose  transverse  flip  flop  "
                      "equalize[:luma|rgb]\n"
                      "  resize:WxH|W|xH|N%[:box|triangle|cubic|lanczos3|interp]\n"
                      "  thumbnail:N[:box|triangle|cubic|lanczos3|interp]  crop:WxH+X+Y\n"
                      "  clahe[:CLIP[:TXxTY]]\n"
                      "  K is odd, 1..31 (box 3, gauss 5 by default).\n") == 0,
           "%s", buf);
    ts_op_names(TS_FAM_GEOM, buf, sizeof buf);
    CHECKF(strcmp(buf, "rotate transpose transverse flip flop") == 0, "%s", buf);
    /* a short buffer is cut, terminated, and the whole length still reported */
    char small[8];
    size_t n = ts_op_names(-1, small, sizeof small);
    CHECK(strlen(small) == 7 && n > 60);
    ts_chain c;
    CHECK(ts_chain_parse("blur", &c, buf, sizeof buf) == TS_ERR_INVALID);
    CHECKF(strstr(buf, "(known: box gauss sharpen emboss edge kernel rotate transpose transverse "
                       "flip flop equalize resize thumbnail crop clahe)") != NULL,
           "%s", buf);
}

TEST(output_shape_follows_the_row)
{
    ts_op op;
    char err[256];
    int w, h;
    static const struct {
        const char *text;
        int w, h;
    } want[] = {{"rotate:90", 17, 33}, {"rotate:180", 33, 17}, {"transverse", 17, 33},
                {"flop", 33, 17},      {"gauss:5", 33, 17},    {"equalize", 33, 17},
                {"resize:10x3", 10, 3}, {"thumbnail:11", 11, 6},  {"crop:40x5+30+1", 3, 5}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CHECK(ts_op_parse(want[i].text, &op, err, sizeof err) == TS_OK);
        CHECK(ts_op_out_size(&op, 33, 17, &w, &h) == TS_OK);
        CHECKF(w == want[i].w && h == want[i].h, "%s: %dx%d", want[i].text, w, h);
    }
    /* a shape rule can fail: a crop box that misses the image leaves nothing */
    CHECK(ts_op_parse("crop:4x4+33+0", &op, err, sizeof err) == TS_OK);
    CHECK(ts_op_out_size(&op, 33, 17, &w, &h) == TS_ERR_INVALID);
    CHECKF(strstr(ts_error_detail(), "outside") != NULL, "%s", ts_error_detail());
}

TEST(rounding_helpers)
{
    CHECK(km_div_round_even(5, 2) == 2 && km_div_round_even(7, 2) == 4);
    CHECK(km_div_round_even(-5, 2) == -2 && km_div_round_even(-7, 2) == -4);
    CHECK(km_div_round_even(10, 4) == 2 && km_div_round_even(11, 4) == 3);
    CHECK(km_div_round_even(-11, 4) == -3 && km_div_round_even(0, 7) == 0);
    CHECK(km_round_sat_f(2.5f, 255) == 2 && km_round_sat_f(3.5f, 255) == 4);
    CHECK(km_round_sat_f(-3.0f, 255) == 0 && km_round_sat_f(300.0f, 255) == 255);
    CHECK(km_round_sat_f(NAN, 255) == 0 && km_round_sat_f(70000.0f, 65535) == 65535);
    CHECK(km_round_sat_i(-30, 1, 255) == 0 && km_round_sat_i(1000, 3, 255) == 255);
    CHECK(km_magnitude_i(3, 4, 255) == 5 && km_magnitude_i(1000, 0, 255) == 255);
    CHECK(km_luma_apply(10, 10000, 10, 255) == 10);        /* unchanged luma: no change */
    CHECK(km_luma_apply(10, 9500, 10, 255) == 11);         /* +0.5 rounds away from zero */
    CHECK(km_luma_apply(10, 10500, 10, 255) == 9);         /* -0.5 likewise */
    CHECK(km_luma_apply(250, 250000, 255, 255) == 255);    /* saturates */
}

TEST(family_names)
{
    ts_family f;
    CHECK(ts_family_from_name("gauss", &f) && f == TS_FAM_CONV);
    CHECK(ts_family_from_name("rotate", &f) && f == TS_FAM_GEOM);
    CHECK(ts_family_from_name("equalize", &f) && f == TS_FAM_HIST);
    CHECK(!ts_family_from_name("bogus", &f));
    for (int i = 0; i < TS_FAM_COUNT; i++)
        CHECK(ts_variant_find((ts_family)i, "cpu") != NULL);
    char names[256], tiny[6];
    size_t n = ts_variant_names(TS_FAM_CONV, names, sizeof names);
    CHECKF(strncmp(names, "auto cpu", 8) == 0 && n == strlen(names), "%s", names);
    CHECK(ts_variant_names(TS_FAM_CONV, tiny, sizeof tiny) == n && strcmp(tiny, "auto ") == 0);
}

TEST(variant_table_is_well_formed)
{
    for (size_t i = 0; i < ts_variant_count(); i++) {
        const ts_variant *v = ts_variant_at(i);
        CHECKF(v->name && *v->name && v->why && *v->why && v->run, "row %zu", i);
        CHECKF(ts_variant_find(v->family, v->name) == v, "%s/%s is not unique",
               ts_family_name(v->family), v->name);
        /* the ladder: rows of a family stand together */
        if (i > 0 && ts_variant_at(i - 1)->family != v->family)
            for (size_t j = 0; j + 1 < i; j++)
                CHECKF(ts_variant_at(j)->family != v->family, "family %s split",
                       ts_family_name(v->family));
    }
}

TEST(clahe_grammar_and_canonical_text)
{
    char err[256];
    ts_op op;
    CHECKF(ts_op_parse("clahe", &op, err, sizeof err) == TS_OK, "%s", err);
    CHECK(op.kind == TS_OP_CLAHE && op.clahe.clip == 40 && op.clahe.tiles_x == 8 &&
          op.clahe.tiles_y == 8 && strcmp(op.text, "clahe:40:8x8") == 0);
    CHECK(ts_op_family(op.kind) == TS_FAM_CLAHE);
    CHECK(ts_op_parse("clahe:2.5:16x4", &op, err, sizeof err) == TS_OK);
    CHECK(op.clahe.clip == 2.5 && op.clahe.tiles_x == 16 && op.clahe.tiles_y == 4);
    CHECKF(strcmp(op.text, "clahe:2.5:16x4") == 0, "%s", op.text);
    CHECK(ts_op_parse("clahe:0:4", &op, err, sizeof err) == TS_OK);
    CHECK(op.clahe.clip == 0 && op.clahe.tiles_x == 4 && op.clahe.tiles_y == 4);
    static const char *const bad[] = {"clahe:-1", "clahe:x", "clahe:40:0x8", "clahe:40:33",
                                      "clahe:40:8x", "clahe:40:8x8x8", "clahe:40:8y8", "clahe:1:2:3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECKF(ts_op_parse(bad[i], &op, err, sizeof err) == TS_ERR_INVALID && err[0], "%s", bad[i]);
}

TEST(family_table_has_a_row_per_family)
{
    char err[256];
    ts_op op;
    for (int f = 0; f < TS_FAM_COUNT; f++) {
        const ts_family_info *fi = ts_family_info_of((ts_family)f);
        CHECKF(fi && fi->name && fi->note && fi->demo_op, "family %d", f);
        CHECK(strcmp(ts_family_name((ts_family)f), fi->name) == 0);
        CHECKF(ts_op_parse(fi->demo_op, &op, err, sizeof err) == TS_OK, "%s", err);
        CHECKF(ts_op_family(op.kind) == (ts_family)f, "%s", fi->demo_op);
    }
    CHECK(ts_family_info_of(TS_FAM_COUNT) == NULL);
}
