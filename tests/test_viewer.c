/* test_viewer.c - the viewer's pure logic, no display needed: key names and the --keys syntax,
 * the binding table, what op keys do to the chain, variant cycling, zoom and pan. */
#include "testutil.h"
#include "viewer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static vw_key key(const char *name)
{
    vw_key k = {-1, -1};
    if (vw_key_parse(name, strlen(name), &k) != 0)
        k.code = -1;
    return k;
}

TEST(key_names_parse)
{
    CHECK(key("e").code == 'e' && key("e").ctrl == 0);
    CHECK(key("]").code == ']' && key(">").code == '>' && key("|").code == '|');
    CHECK(key("B").code == 'B'); /* case matters for characters */
    CHECK(key("Tab").code == VK_TAB && key("tab").code == VK_TAB);
    CHECK(key("Shift+Tab").code == VK_BACKTAB);
    CHECK(key("Right").code == VK_RIGHT && key("BackSpace").code == VK_BACKSPACE);
    CHECK(key("Esc").code == VK_ESCAPE && key("Escape").code == VK_ESCAPE);
    CHECK(key("F1").code == VK_F1 && key("WheelUp").code == VK_WHEELUP);
    CHECK(key("plus").code == '+' && key("minus").code == '-' && key("comma").code == ',');
    CHECK(key("Space").code == ' ');
    CHECK(key("Ctrl+s").code == 's' && key("Ctrl+s").ctrl == 1);
    CHECK(key("ctrl+S").code == 's' && key("ctrl+S").ctrl == 1); /* Ctrl folds case */
    CHECK(key("").code == -1 && key("Ctrl+").code == -1 && key("bogus").code == -1);
    CHECK(key(",").code == -1 && key("ab").code == -1);
}

TEST(key_lists_parse_with_reasons)
{
    vw_key *k;
    char err[256];
    CHECK(vw_keys_parse("e, b ,],Ctrl+s,Tab", &k, err, sizeof err) == 5);
    CHECK(k[0].code == 'e' && k[1].code == 'b' && k[2].code == ']');
    CHECK(k[3].code == 's' && k[3].ctrl && k[4].code == VK_TAB);
    free(k);
    CHECK(vw_keys_parse("e,,b", &k, err, sizeof err) == -1 && k == NULL);
    CHECKF(strstr(err, "key 2") && strstr(err, "comma"), "%s", err);
    CHECK(vw_keys_parse("e,nope", &k, err, sizeof err) == -1);
    CHECKF(strstr(err, "'nope'"), "%s", err);
    CHECK(vw_keys_parse("", &k, err, sizeof err) == -1);
}

TEST(key_names_round_trip)
{
    static const char *const names[] = {"e", "]", "Tab", "Shift+Tab", "Left", "Home", "plus",
                                        "minus", "comma", "Space", "Ctrl+s", "F1", "Escape",
                                        "WheelDown", "\xc3\xa9"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char buf[32];
        vw_key a = key(names[i]), b;
        CHECKF(a.code >= 0, "%s", names[i]);
        vw_key_name(a, buf, sizeof buf);
        CHECKF(strcmp(buf, names[i]) == 0, "%s named %s", names[i], buf);
        b = key(buf);
        CHECK(b.code == a.code && b.ctrl == a.ctrl);
    }
}

TEST(bindings_follow_feh_and_nsxiv)
{
    static const struct {
        const char *key;
        vw_action a;
    } want[] = {
        {"q", VA_QUIT},          {"Escape", VA_QUIT},       {"n", VA_NEXT},
        {"Space", VA_NEXT},      {"p", VA_PREV},            {"BackSpace", VA_PREV},
        {"Home", VA_FIRST},      {"End", VA_LAST},          {"plus", VA_ZOOM_IN},
        {"minus", VA_ZOOM_OUT},  {"w", VA_FIT},             {"=", VA_ONE},
        {"h", VA_PAN_LEFT},      {"j", VA_PAN_DOWN},        {"k", VA_PAN_UP},
        {"l", VA_PAN_RIGHT},     {"Left", VA_PAN_LEFT},     {"f", VA_FULLSCREEN},
        {"Ctrl+s", VA_SAVE},     {"s", VA_OP_SHARPEN},      {"b", VA_OP_BLUR},
        {"d", VA_OP_EDGE},       {"e", VA_OP_EQUALIZE},     {">", VA_OP_ROT_CW},
        {"<", VA_OP_ROT_CCW},    {"t", VA_OP_TRANSPOSE},    {"|", VA_OP_FLOP},
        {"_", VA_OP_FLIP},       {"Tab", VA_SELECT_NEXT},   {"]", VA_VARIANT_NEXT},
        {"[", VA_VARIANT_PREV},  {"c", VA_COMPARE},         {"i", VA_HUD},
        {"?", VA_HELP},          {"F1", VA_HELP},           {"L", VA_LIVE},
        {"B", VA_BENCH},         {"WheelUp", VA_ZOOM_IN},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECKF(vw_key_action(key(want[i].key)) == want[i].a, "key %s", want[i].key);
    CHECK(vw_key_action(key("Z")) == VA_NONE);
}

TEST(help_lists_every_action_once_with_keys)
{
    int seen = 0;
    char keys[128];
    const char *what;
    for (int i = 0; vw_help_line(i, keys, sizeof keys, &what); i++, seen++)
        CHECKF(keys[0] && what && what[0], "help line %d", i);
    CHECK(seen == VA_COUNT - 1);
}

TEST(op_keys_name_valid_ops)
{
    for (int a = VA_NONE + 1; a < VA_COUNT; a++) {
        const char *t = vw_action_op((vw_action)a);
        ts_op op;
        char err[256];
        if (t)
            CHECKF(ts_op_parse(t, &op, err, sizeof err) == TS_OK && strcmp(op.text, t) == 0,
                   "%s: %s", t, err);
    }
    CHECK(strcmp(vw_action_op(VA_OP_BLUR), "gauss:5") == 0);
    CHECK(strcmp(vw_action_op(VA_OP_ROT_CCW), "rotate:270") == 0);
    CHECK(vw_action_op(VA_QUIT) == NULL);
}

static int chain_is(const ts_chain *c, const char *want)
{
    char have[512] = "";
    for (int i = 0; i < c->n; i++) {
        strcat(have, i ? "," : "");
        strcat(have, c->ops[i].text);
    }
    return strcmp(have, want) == 0;
}

TEST(op_keys_toggle_ops_in_the_chain)
{
    ts_chain c;
    char err[256];
    int sel = -1;
    CHECK(ts_chain_parse("gauss:7", &c, err, sizeof err) == TS_OK);
    CHECK(vw_chain_toggle(&c, "equalize", &sel) == 1 && sel == 1);
    CHECK(vw_chain_toggle(&c, "rotate:90", &sel) == 1 && sel == 2);
    CHECK(vw_chain_toggle(&c, "rotate:270", &sel) == 1); /* another angle: another op */
    CHECK(chain_is(&c, "gauss:7,equalize,rotate:90,rotate:270"));
    CHECK(vw_chain_toggle(&c, "gauss:5", &sel) == 0); /* b removes any gauss */
    CHECK(chain_is(&c, "equalize,rotate:90,rotate:270") && sel == 2);
    CHECK(vw_chain_toggle(&c, "rotate:270", &sel) == 0 && sel == 1);
    CHECK(chain_is(&c, "equalize,rotate:90"));
    CHECK(vw_chain_toggle(&c, "equalize", &sel) == 0 && sel == 0);
    CHECK(vw_chain_toggle(&c, "rotate:90", &sel) == 0 && c.n == 0 && sel == -1);
    CHECK(vw_chain_toggle(&c, "nonsense", &sel) == -1 && c.n == 0);
    ts_chain_free(&c);
}

TEST(variant_keys_cycle_only_what_runs_here)
{
    ts_op op;
    char err[256];
    CHECK(ts_op_parse("gauss:5", &op, err, sizeof err) == TS_OK);
    op.variant = NULL;
    /* CPU backend: auto, cpu, auto */
    const ts_variant *v = vw_variant_cycle(&op, NULL, 1);
    CHECK(v && strcmp(v->name, "cpu") == 0);
    op.variant = v;
    CHECK(vw_variant_cycle(&op, NULL, 1) == NULL);
    op.variant = NULL;
    CHECK(vw_variant_cycle(&op, NULL, -1) == v);
    /* a GPU of sm_75: GPU variants of the family it can run, then back to auto */
    ts_device dev;
    memset(&dev, 0, sizeof dev);
    dev.cc = dev.cc_real = 75;
    for (int f = 0; f < TS_FAM_COUNT; f++) {
        static const char *const ops[TS_FAM_COUNT] = {"gauss:5", "rotate:90", "equalize"};
        CHECK(ts_op_parse(ops[f], &op, err, sizeof err) == TS_OK);
        op.variant = NULL;
        int n = 0;
        do {
            op.variant = vw_variant_cycle(&op, &dev, 1);
            if (op.variant) {
                CHECK(ts_variant_is_gpu(op.variant) && op.variant->min_cc <= 75);
                CHECK(op.variant->family == (ts_family)f);
            }
        } while (op.variant && ++n < 64);
        CHECK(n < 64);
    }
}

TEST(view_fit_shrinks_only_and_centres)
{
    vw_view v;
    vw_view_fit(&v, 4000, 2000, 1000, 800);
    CHECK(v.zoom == 0.25 && v.ox == 0 && v.oy == 150 && v.fit);
    vw_view_fit(&v, 101, 51, 1000, 800); /* small: 1:1, centred on whole pixels */
    CHECK(v.zoom == 1 && v.ox == 449 && v.oy == 374);
}

TEST(view_zoom_ladder)
{
    CHECK(vw_zoom_step(1, 1) == 1.5 && vw_zoom_step(1, -1) == 0.75);
    CHECK(vw_zoom_step(1.5, 1) == 2 && vw_zoom_step(2, 1) == 3);
    CHECK(vw_zoom_step(1.0 / 3, -1) == 0.25 && vw_zoom_step(1.0 / 3, 1) == 0.375);
    CHECK(vw_zoom_step(VW_ZOOM_MAX, 1) == VW_ZOOM_MAX);
    CHECK(vw_zoom_step(VW_ZOOM_MIN, -1) == VW_ZOOM_MIN);
    double z = 1;
    for (int i = 0; i < 6; i++)
        z = vw_zoom_step(z, 1);
    for (int i = 0; i < 6; i++)
        z = vw_zoom_step(z, -1);
    CHECK(z == 1); /* the ladder goes back through 1:1 exactly */
}

TEST(view_zoom_keeps_the_point_under_the_cursor)
{
    vw_view v = {1, -500, -600, 0};
    double ax = 300, ay = 200, ix = (ax - v.ox) / v.zoom, iy = (ay - v.oy) / v.zoom;
    vw_view_zoom_at(&v, 2, ax, ay, 2000, 2000, 1000, 800);
    CHECK(v.zoom == 2 && !v.fit);
    CHECK(fabs((ax - v.ox) / v.zoom - ix) <= 0.5 && fabs((ay - v.oy) / v.zoom - iy) <= 0.5);
    CHECK(v.ox == floor(v.ox) && v.oy == floor(v.oy)); /* whole pixels */
}

TEST(view_clamps_at_the_edges)
{
    vw_view v = {1, 0, 0, 0};
    vw_view_pan(&v, 300, 300, 2000, 2000, 1000, 800); /* no gap at the top-left */
    CHECK(v.ox == 0 && v.oy == 0);
    vw_view_pan(&v, -5000, -5000, 2000, 2000, 1000, 800); /* nor at the bottom-right */
    CHECK(v.ox == 1000 - 2000 && v.oy == 800 - 2000);
    vw_view_pan(&v, 0, 0, 500, 2000, 1000, 800); /* narrower than the window: centred */
    CHECK(v.ox == 250);
}

TEST(view_resize_refits_or_keeps_the_centre)
{
    vw_view v;
    vw_view_fit(&v, 4000, 2000, 1000, 800);
    vw_view_resize(&v, 4000, 2000, 1000, 800, 2000, 1600);
    CHECK(v.zoom == 0.5 && v.fit);
    vw_view_zoom_at(&v, 1, 1000, 800, 4000, 2000, 2000, 1600);
    double cx = (1000 - v.ox) / v.zoom, cy = (800 - v.oy) / v.zoom;
    vw_view_resize(&v, 4000, 2000, 2000, 1600, 1000, 800);
    CHECK(v.zoom == 1);
    CHECK(fabs((500 - v.ox) - cx) <= 1 && fabs((400 - v.oy) - cy) <= 1);
}

TEST(view_texture_level)
{
    CHECK(vw_view_level(2, 3) == 0 && vw_view_level(1, 3) == 0 && vw_view_level(0.75, 3) == 0);
    CHECK(vw_view_level(0.5, 3) == 1 && vw_view_level(1.0 / 3, 3) == 1);
    CHECK(vw_view_level(0.25, 3) == 2 && vw_view_level(0.2, 3) == 2);
    CHECK(vw_view_level(0.1, 3) == 3 && vw_view_level(0.01, 3) == 3);
    CHECK(vw_view_level(0.01, 1) == 1);
}

/* ts_pipeline_run_ex, the viewer's live-mode run: same results as ts_pipeline_run, the input kept
 * on the GPU (report.input_resident) and the host output reused, on whichever backend is here
 * ("gpu" in the name: tools/gpu_check.sh runs it on the device). */
TEST(gpu_pipeline_run_ex_keeps_the_input)
{
    uint64_t seed = tu_seed();
    ts_image in = tu_random_image(97, 61, 3, 1, &seed), other = tu_random_image(33, 20, 3, 1, &seed);
    ts_image ref, out = {0}, tmp;
    ts_chain c;
    ts_pipeline *p;
    ts_run_report rep;
    char err[256], msg[256];
    CHECK(ts_chain_parse("gauss:5,equalize,rotate:90", &c, err, sizeof err) == TS_OK);
    CHECK(ts_pipeline_create(&p, TS_BACKEND_AUTO, msg, sizeof msg) == TS_OK);
    int gpu = ts_pipeline_on_gpu(p);
    CHECK(ts_pipeline_run(p, &c, &in, &ref, NULL) == TS_OK);
    ts_run_opts first = {1, 0, 1}, again = {1, 1, 1};
    CHECK(ts_pipeline_run_ex(p, &c, &in, &out, &rep, &first) == TS_OK);
    CHECK(ts_image_equal(&out, &ref) && !rep.input_resident);
    void *kept = out.data;
    CHECK(ts_pipeline_run_ex(p, &c, &in, &out, &rep, &again) == TS_OK);
    CHECK(ts_image_equal(&out, &ref) && rep.input_resident == gpu);
    CHECK(!gpu || out.data == kept); /* the GPU path downloads into the same host image */
    /* a single-op run in between (the speedup bars) leaves the kept input alone */
    CHECK(ts_pipeline_run_op(p, &c.ops[0], NULL, &other, &tmp, NULL) == TS_OK);
    ts_image_free(&tmp);
    CHECK(ts_pipeline_run_ex(p, &c, &in, &out, &rep, &again) == TS_OK);
    CHECK(ts_image_equal(&out, &ref) && rep.input_resident == gpu);
    /* new pixels, announced: uploaded again */
    ts_put(&in, 5, 7, 1, ts_get(&in, 5, 7, 1) ^ 0x80);
    ts_image_free(&ref);
    CHECK(ts_pipeline_run(p, &c, &in, &ref, NULL) == TS_OK);
    CHECK(ts_pipeline_run_ex(p, &c, &in, &out, &rep, &first) == TS_OK);
    CHECK(ts_image_equal(&out, &ref) && !rep.input_resident);
    /* another shape is never taken for the kept input */
    ts_image_free(&ref);
    CHECK(ts_pipeline_run(p, &c, &other, &ref, NULL) == TS_OK);
    CHECK(ts_pipeline_run_ex(p, &c, &other, &out, &rep, &again) == TS_OK);
    CHECK(ts_image_equal(&out, &ref) && !rep.input_resident);
    /* an empty chain gives the input back */
    ts_chain empty = {0, NULL};
    CHECK(ts_pipeline_run_ex(p, &empty, &in, &out, &rep, &first) == TS_OK);
    CHECK(ts_image_equal(&out, &in));
    ts_image_free(&out);
    ts_image_free(&ref);
    ts_image_free(&in);
    ts_image_free(&other);
    ts_chain_free(&c);
    ts_pipeline_destroy(p);
}
