/* test_viewer.c - the viewer's pure logic, no display needed: key names and the --keys syntax,
 * the binding table, what op keys do to the chain, variant cycling, zoom and pan, the frame
 * statistics, the file list, the HUD's area and font, loading upright (the display texture's map
 * and conversion: test_viewer_display.c; the preview's decode: test_viewer_load.c). */
#include "testutil.h"
#include "util.h"
#include "viewer.h"
#include "exif.h"
#include "image_io.h"
#include "viewer_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
        {"q", VA_QUIT},          {"Escape", VA_ESCAPE},     {"n", VA_NEXT},
        {"g", VA_FIRST},         {"G", VA_LAST},            {"r", VA_RELOAD},
        {"S", VA_SLIDESHOW},
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
    /* CPU backend: auto, then the family's CPU rows in table order (cpu, simd), then auto */
    const ts_variant *v = vw_variant_cycle(&op, NULL, 1), *last = NULL;
    CHECK(v && strcmp(v->name, "cpu") == 0);
    op.variant = v;
    while (op.variant) {
        CHECK(!ts_variant_is_gpu(op.variant) && op.variant->family == TS_FAM_CONV);
        last = op.variant;
        op.variant = vw_variant_cycle(&op, NULL, 1);
    }
    CHECK(last && strcmp(last->name, "simd") == 0);
    op.variant = NULL;
    CHECK(vw_variant_cycle(&op, NULL, -1) == last);
    /* a GPU of sm_75: GPU variants of the family it can run, then back to auto */
    ts_device dev;
    memset(&dev, 0, sizeof dev);
    dev.cc = dev.cc_real = 75;
    for (int f = 0; f < TS_FAM_COUNT; f++) {
        CHECK(ts_op_parse(ts_family_info_of((ts_family)f)->demo_op, &op, err, sizeof err) == TS_OK);
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
    vw_view v = {.zoom = 1, .ox = -500, .oy = -600};
    double ax = 300, ay = 200, ix = (ax - v.ox) / v.zoom, iy = (ay - v.oy) / v.zoom;
    vw_view_zoom_at(&v, 2, ax, ay, 2000, 2000, 1000, 800);
    CHECK(v.zoom == 2 && !v.fit);
    CHECK(fabs((ax - v.ox) / v.zoom - ix) <= 0.5 && fabs((ay - v.oy) / v.zoom - iy) <= 0.5);
    CHECK(v.ox == floor(v.ox) && v.oy == floor(v.oy)); /* whole pixels */
}

TEST(view_clamps_at_the_edges)
{
    vw_view v = {.zoom = 1};
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

TEST(frame_statistics_median_p95_and_what_is_left_out)
{
    float v[] = {5, 1, 4, 2, 3};
    CHECK(vw_percentile(v, 5, 0.5) == 3 && vw_percentile(v, 5, 0.95) == 5);
    CHECK(vw_percentile(v, 5, 0) == 1 && vw_percentile(v, 0, 0.5) == 0);
    float w[20];
    for (int i = 0; i < 20; i++)
        w[i] = (float)(20 - i);
    CHECK(vw_percentile(w, 20, 0.95) == 19 && vw_percentile(w, 20, 0.5) == 10);

    static vw_frames f;
    vw_frame_stats s;
    char text[200];
    vw_frames_reset(&f);
    vw_frames_stats(&f, 1000.0 / 60, &s);
    CHECK(s.n == 0 && !s.measured && !s.holding && !vw_frames_skipped_text(&f, text, sizeof text));
    /* 100 frames 16.67 ms apart with 5 ms of work, plus 3 of 40 ms: p95 still within budget */
    for (int i = 0; i < 103; i++) {
        vw_frame fr = {i < 100 ? 16.67f : 40.0f, i < 100 ? 5.0f : 38.0f, 1, 2, 2};
        vw_frames_add(&f, &fr);
    }
    vw_frames_skip(&f, VW_SKIP_BENCH);
    vw_frames_skip(&f, VW_SKIP_BENCH);
    vw_frames_skip(&f, VW_SKIP_SHOT);
    vw_frames_stats(&f, 1000.0 / 60, &s);
    CHECK(s.n == 103 && s.skipped == 3 && s.measured && s.holding);
    CHECKF(fabs(s.interval_med - 16.67) < 1e-3 && fabs(s.work_p95 - 5) < 1e-6, "%g %g",
           s.interval_med, s.work_p95);
    CHECKF(fabs(s.fps - 103 * 1000.0 / (100 * 16.67 + 3 * 40)) < 1e-3, "%g", s.fps);
    CHECK(vw_frames_skipped_text(&f, text, sizeof text));
    CHECKF(strcmp(text, "2 measuring speedups, 1 screenshot") == 0, "%s", text);
    /* 10 slow frames among 103: p95 is a slow one, not holding */
    for (int i = 0; i < 10; i++) {
        vw_frame fr = {33.3f, 20, 1, 2, 17};
        vw_frames_add(&f, &fr);
    }
    vw_frames_stats(&f, 1000.0 / 60, &s);
    CHECK(s.measured && !s.holding && s.interval_p95 > 30);
    /* paced frames: intervals on time but work past the period is a missed refresh too */
    vw_frames_reset(&f);
    for (int i = 0; i < 50; i++) {
        vw_frame fr = {16.7f, 17.5f, 1, 2, 14};
        vw_frames_add(&f, &fr);
    }
    vw_frames_stats(&f, 1000.0 / 60, &s);
    CHECK(s.measured && !s.holding);
    /* the ring keeps the last VW_FRAMES */
    vw_frames_reset(&f);
    for (int i = 0; i < VW_FRAMES + 50; i++) {
        vw_frame fr = {i < 50 ? 100.0f : 16.0f, 1, 0, 0, 0};
        vw_frames_add(&f, &fr);
    }
    vw_frames_stats(&f, 1000.0 / 60, &s);
    CHECK(s.n == VW_FRAMES && s.interval_p95 == 16 && f.steady == VW_FRAMES + 50);
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
    ts_run_opts first = {1, 0, 1, 0}, again = {1, 1, 1, 0};
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

/* ---------------------------------------------------------------- files, HUD area, text */

TEST(files_recursive_and_from_lines)
{
    char dir[] = "/tmp/tessera-files-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char *sub = path_join(dir, "sub"), *a = path_join(dir, "a.png"), *b = path_join(sub, "b.jpg"),
         *t = path_join(dir, "notes.txt");
    CHECK(mkdir(sub, 0700) == 0);
    const char *make[] = {a, b, t};
    for (int i = 0; i < 3; i++) {
        FILE *f = fopen(make[i], "w");
        CHECK(f != NULL);
        if (f)
            fclose(f);
    }
    vw_files f = {0};
    vw_files_add(&f, dir, 0);
    CHECK(f.n == 1 && strcmp(f.path[0], a) == 0); /* images only, no subdirectory */
    vw_files_free(&f);
    vw_files_add(&f, dir, 1);
    CHECK(f.n == 2 && strcmp(f.path[0], a) == 0 && strcmp(f.path[1], b) == 0);
    CHECK(vw_files_wrap(&f, 2) == 0 && vw_files_wrap(&f, -1) == 1);
    vw_files_free(&f);
    FILE *in = tmpfile();
    CHECK(in != NULL);
    if (in) {
        fprintf(in, "%s\n\n%s\r\n", t, dir);
        rewind(in);
        CHECK(vw_files_add_lines(&f, in, 0) == 2); /* a named file as given, a directory's image */
        CHECK(f.n == 2 && strcmp(f.path[0], t) == 0 && strcmp(f.path[1], a) == 0);
        fclose(in);
    }
    vw_files_free(&f);
    CHECK(vw_files_wrap(&f, 3) == -1);
    remove(a);
    remove(b);
    remove(t);
    rmdir(sub);
    rmdir(dir);
    free(sub);
    free(a);
    free(b);
    free(t);
}

#ifdef TS_HAVE_SDL
#include "viewer_hud.h"
#include "viewer_text.h"

TEST(hud_never_covers_the_image_area)
{
    vw_win w = {0};
    w.ww = 800;
    w.wh = 600;
    vw_ui u = {0};
    u.hud = VW_HUD_OFF;
    vw_area a = vw_ui_area(&u, &w, 0);
    CHECK(a.w == 800 && a.h == 600);
    u.hud = VW_HUD_LINE;
    a = vw_ui_area(&u, &w, 1);
    CHECK(a.w == 800 && a.h < 600 && a.h > 560 && a.compare == 1);
    u.hud = VW_HUD_FULL;
    a = vw_ui_area(&u, &w, 0);
    CHECK(a.h == 600 && a.w < 800 && a.w >= 800 * 3 / 5); /* the panel takes at most 2/5 */
}

TEST(hud_picture_first_and_text_scales_with_the_window)
{
    vw_ui u = {0};
    u.hud_auto = 1;
    u.hud = VW_HUD_LINE;
    CHECK(vw_ui_follow(&u, 0, 0) == 0 && u.hud == VW_HUD_LINE); /* plain viewing: the line */
    CHECK(vw_ui_follow(&u, 1, 0) == 1 && u.hud == VW_HUD_FULL); /* a chain on: the panel */
    CHECK(vw_ui_follow(&u, 0, 0) == 1 && u.hud == VW_HUD_LINE);
    CHECK(vw_ui_follow(&u, 0, 1) == 1 && u.hud == VW_HUD_FULL); /* the demo: the panel */
    u.hud_auto = 0; /* after i: the user's choice stays */
    u.hud = VW_HUD_OFF;
    CHECK(vw_ui_follow(&u, 1, 1) == 0 && u.hud == VW_HUD_OFF);
    CHECK(vw_ui_scale(640, 480) == 1);
    CHECK(vw_ui_scale(800, 600) == 2);
    CHECK(vw_ui_scale(1632, 918) == 3);
    CHECK(vw_ui_scale(1920, 1080) == 3);
    CHECK(vw_ui_scale(3840, 2160) == 4);
    CHECK(vw_ui_scale(3000, 500) == 1); /* the short side decides */
}

/* Rows and columns lit by `s` drawn at (2, 2) on a cleared 64x20 surface. */
static void text_mask(SDL_Renderer *r, SDL_Surface *sf, const char *s, unsigned char *mask)
{
    SDL_SetRenderDrawColor(r, 0, 0, 0, 255);
    SDL_RenderClear(r);
    vw_text(r, 2, 2, 1, (SDL_Color){255, 255, 255, 255}, s);
    SDL_RenderPresent(r);
    for (int y = 0; y < sf->h; y++)
        for (int x = 0; x < sf->w; x++)
            mask[y * sf->w + x] = ((const Uint32 *)((const char *)sf->pixels + y * sf->pitch))[x] &
                                  0xff;
}

TEST(text_bar_and_l_differ)
{
    SDL_Surface *sf = SDL_CreateRGBSurfaceWithFormat(0, 64, 20, 32, SDL_PIXELFORMAT_ARGB8888);
    SDL_Renderer *r = sf ? SDL_CreateSoftwareRenderer(sf) : NULL;
    CHECK(r != NULL);
    if (!r) {
        SDL_FreeSurface(sf);
        return;
    }
    static unsigned char l[64 * 20], bar[64 * 20];
    text_mask(r, sf, "l", l);
    text_mask(r, sf, "|", bar);
    int rows_l = 0, rows_bar = 0, lit_l = 0, lit_bar = 0;
    for (int y = 0; y < 20; y++) {
        int a = 0, b = 0;
        for (int x = 0; x < 64; x++) {
            a |= l[y * 64 + x] != 0;
            b |= bar[y * 64 + x] != 0;
        }
        rows_l += a;
        rows_bar += b;
    }
    for (int i = 0; i < 64 * 20; i++) {
        lit_l += l[i] != 0;
        lit_bar += bar[i] != 0;
    }
    CHECKF(lit_l > 0 && lit_bar > 0 && memcmp(l, bar, sizeof l) != 0, "l %d, | %d", lit_l,
           lit_bar);
    CHECKF(rows_bar > rows_l, "| spans %d rows, l %d", rows_bar, rows_l);
    /* the bar keeps stb_easy_font's advance: the text after it does not move */
    static unsigned char ab[64 * 20], a_b[64 * 20];
    text_mask(r, sf, "a|b", ab);
    text_mask(r, sf, "a b", a_b);
    int bx_bar = 0, bx_space = 0;
    for (int x = 63; x >= 0 && (!bx_bar || !bx_space); x--)
        for (int y = 0; y < 20; y++) {
            bx_bar = bx_bar ? bx_bar : ab[y * 64 + x] ? x : 0;
            bx_space = bx_space ? bx_space : a_b[y * 64 + x] ? x : 0;
        }
    CHECKF(vw_text_width("a|b", 1) - vw_text_width("a b", 1) == bx_bar - bx_space,
           "b ends at %d with |, %d with a blank", bx_bar, bx_space);
    SDL_DestroyRenderer(r);
    SDL_FreeSurface(sf);
}
#endif

/* A camera JPEG stored sideways (EXIF Orientation 6) with an Adobe RGB profile: the viewer's loader
 * turns it upright (the CPU reference here) and has a HUD line for the profile; with auto-orient
 * off it keeps the stored pixels. */
TEST(viewer_load_turns_upright_and_names_the_profile)
{
    ts_image im;
    CHECK(ts_image_alloc(&im, 40, 20, 3, 1) == TS_OK);
    memset(im.data, 120, ts_row_bytes(&im) * 20);
    unsigned char exif[26], icc[512];
    size_t en = tsio_exif_make(6, exif), in = tu_make_icc(icc, "Adobe RGB (1998)", 0);
    tsio_meta m = {.exif = exif, .exif_len = en, .icc = icc, .icc_len = in};
    char path[] = "/tmp/tessera-vw-XXXXXX.jpg", err[256], notice[128];
    int fd = mkstemps(path, 4);
    CHECK(fd >= 0);
    close(fd);
    tsio_save_opts so = {.format = TSIO_JPEG, .meta = &m};
    CHECK(tsio_save(path, &im, &so, notice, sizeof notice, err, sizeof err) == TS_OK);
    ts_image_free(&im);
    vw_run r;
    memset(&r, 0, sizeof r);
    r.auto_orient = 1;
    vw_run_load(&r, path, 0);
    CHECKF(r.loaded && r.src.width == 20 && r.src.height == 40 && r.orientation == 6,
           "loaded %d, %dx%d, orientation %d: %s", r.loaded, r.src.width, r.src.height,
           r.orientation, r.load_err);
    CHECKF(strstr(r.icc_line, "Adobe RGB") != NULL, "HUD line '%s'", r.icc_line);
    ts_image cpu = r.src; /* the CPU reference's upright image */
    memset(&r.src, 0, sizeof r.src);
    r.auto_orient = 0;
    vw_run_load(&r, path, 0);
    CHECK(r.loaded && r.src.width == 40 && r.src.height == 20 && r.orientation == 1);
    vw_run_free(&r);
    /* the GPU's geometry kernel, where there is one: the same pixels */
    if (tu_gpu()) {
        memset(&r, 0, sizeof r);
        r.auto_orient = 1;
        CHECK(ts_pipeline_create(&r.pipe, TS_BACKEND_GPU, NULL, 0) == TS_OK);
        vw_run_load(&r, path, 0);
        CHECKF(r.orientation == 6 && tu_max_diff(&r.src, &cpu, NULL, NULL, NULL) == 0,
               "GPU orientation %d: %s", r.orientation, r.load_err);
        ts_pipeline_destroy(r.pipe);
        r.pipe = NULL;
        vw_run_free(&r);
    }
    ts_image_free(&cpu);
    unlink(path);
}
