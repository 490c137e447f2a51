/* test_viewer_display.c - what the viewer's display texture holds: the visible part of the image
 * at its on-screen size (vw_display_for_view), the host conversion (box cells, rounding, 16-bit,
 * alpha over the checkerboard) by hand and against a direct sum, zoomed-out views as the resize
 * op's lanczos3 output, and on a GPU the same texels from kernels/display.cu and from the resize
 * op's GPU variant (the viewer's GPU route). */
#include "testutil.h"
#include "util.h"
#include "viewer_display.h"
#include "viewer_view.h"

#include <stdlib.h>
#include <string.h>

static int map_is(const vw_display *d, int gw, int gh, int gx0, int gy0, int tw, int th)
{
    const ts_display_map *m = &d->map;
    return m->gw == gw && m->gh == gh && m->gx0 == gx0 && m->gy0 == gy0 && m->tw == tw &&
           m->th == th;
}

TEST(display_texture_is_the_visible_part_at_screen_size)
{
    vw_view v;
    vw_display d;
    /* 4K fitted into 1920x1080: 1920x1080 texels, copied 1:1 */
    vw_view_fit(&v, 3840, 2160, 1920, 1080);
    CHECK(vw_display_for_view(&v, 3840, 2160, 0, 0, 1920, 1080, &d));
    CHECK(map_is(&d, 1920, 1080, 0, 0, 1920, 1080) && d.scale == 1 && d.x == 0 && d.y == 0);
    /* rotated (2160x3840): 608x1080 on screen, centred */
    vw_view_fit(&v, 2160, 3840, 1920, 1080);
    CHECK(vw_display_for_view(&v, 2160, 3840, 0, 0, 1920, 1080, &d));
    CHECKF(map_is(&d, 608, 1080, 0, 0, 608, 1080) && d.scale == 1, "%dx%d", d.map.gw, d.map.gh);
    CHECK(d.x == v.ox && d.x == 656 && d.y == 0);
    /* 1:1 of 4K: only the window's 1920x1080 pixels, from where the view starts */
    vw_view_zoom_at(&v, 1, 960, 540, 3840, 2160, 1920, 1080);
    v.ox = -1000, v.oy = -500;
    CHECK(vw_display_for_view(&v, 3840, 2160, 0, 0, 1920, 1080, &d));
    CHECK(map_is(&d, 3840, 2160, 1000, 500, 1920, 1080) && d.scale == 1);
    CHECK(d.x == 0 && d.y == 0);
    /* magnified x3: image pixels, repeated by the renderer; partly visible cells included */
    v.zoom = 3, v.ox = -301, v.oy = 0;
    CHECK(vw_display_for_view(&v, 1000, 500, 0, 0, 800, 600, &d));
    CHECK(map_is(&d, 1000, 500, 100, 0, 267, 200) && d.scale == 3);
    CHECK(d.x == -1 && d.y == 0);
    /* 75% of 4K, panned: screen-sized texels within the 2880x1620 grid */
    v.zoom = 0.75, v.ox = -100, v.oy = -50;
    CHECK(vw_display_for_view(&v, 3840, 2160, 0, 0, 1920, 1080, &d));
    CHECK(map_is(&d, 2880, 1620, 100, 50, 1920, 1080) && d.scale == 1);
    /* the right half of the window only (before|after) */
    vw_view_fit(&v, 3840, 2160, 1920, 1080);
    CHECK(vw_display_for_view(&v, 3840, 2160, 960, 0, 1920, 1080, &d));
    CHECK(map_is(&d, 1920, 1080, 960, 0, 960, 1080) && d.x == 960);
    /* out of sight */
    v.ox = 5000;
    CHECK(!vw_display_for_view(&v, 3840, 2160, 0, 0, 1920, 1080, &d));
    for (double z = VW_ZOOM_MIN; z <= VW_ZOOM_MAX; z = vw_zoom_step(z, 1)) {
        vw_view_zoom_at(&v, z, 400, 300, 4000, 3000, 800, 600);
        CHECKF(vw_display_for_view(&v, 4000, 3000, 0, 0, 800, 600, &d), "zoom %g", z);
        CHECKF(vw_display_check(&d.map, 4000, 3000) == 0, "zoom %g", z);
        CHECKF(d.map.tw * d.scale <= 800 + 2 * d.scale && d.map.th * d.scale <= 600 + 2 * d.scale,
               "zoom %g: %dx%d", z, d.map.tw, d.map.th);
        if (z == VW_ZOOM_MAX)
            break;
    }
}

static uint32_t texel(const uint32_t *px, int tw, int x, int y) { return px[(size_t)y * tw + x]; }

/* The texel a cell of 8-bit values v[] (ch channels) should give at grid cell (gx, gy): gray as
 * R = G = B, alpha over the 8x8 checkerboard of 0x66 and 0x99, written out by hand. */
static uint32_t want_texel(const unsigned *v, int ch, int gx, int gy)
{
    unsigned r = v[0], g = ch >= 3 ? v[1] : v[0], b = ch >= 3 ? v[2] : v[0];
    unsigned a = ch == 4 ? v[3] : ch == 2 ? v[1] : 255;
    unsigned bg = ((gx >> 3) ^ (gy >> 3)) & 1 ? 0x99 : 0x66;
    r = (r * a + bg * (255 - a) + 127) / 255;
    g = (g * a + bg * (255 - a) + 127) / 255;
    b = (b * a + bg * (255 - a) + 127) / 255;
    return 0xff000000u | r << 16 | g << 8 | b;
}

TEST(display_conversion_averages_cells)
{
    /* RGB8 4x2 into 2x1 cells of 2x2: means rounded half up */
    static const unsigned char rgb[] = {0, 10, 255, 1, 11, 255, 100, 0, 0, 101, 0, 0,
                                        0, 11, 254, 2, 11, 254, 102, 0, 1, 103, 1, 1};
    ts_image im = {(void *)rgb, 12, 4, 2, 3, 1};
    uint32_t px[8];
    ts_display_map m = {2, 1, 0, 0, 2, 1};
    CHECK(vw_display_convert(&im, &m, px, 8, 4) == 0);
    CHECKF(px[0] == 0xff010bffu, "%08x", px[0]); /* (0+1+0+2+2)/4 = 1, (43+2)/4 = 11, 1018/4 */
    CHECKF(px[1] == 0xff660001u, "%08x", px[1]); /* 406/4 = 101.5 -> 102, 1/4 -> 0, 2/4 -> 1 */
    /* 1:1, the visible part only */
    ts_display_map one = {4, 2, 1, 1, 3, 1};
    CHECK(vw_display_convert(&im, &one, px, 12, 1) == 0);
    CHECK(px[0] == 0xff020bfeu && px[1] == 0xff660001u && px[2] == 0xff670101u);
    /* 16-bit gray+alpha: round(v / 257), alpha over the checkerboard of cells */
    uint16_t ga[4] = {65535, 65535, 257 * 200, 0};
    ts_image g = {ga, 8, 2, 1, 2, 2};
    ts_display_map gm = {2, 1, 0, 0, 2, 1};
    CHECK(vw_display_convert(&g, &gm, px, 8, 1) == 0);
    CHECK(px[0] == 0xffffffffu && px[1] == 0xff666666u); /* transparent: the 0x66 square */
    /* maps that do not fit */
    ts_display_map bad = {5, 2, 0, 0, 5, 2};
    CHECK(vw_display_convert(&im, &bad, px, 32, 1) == -1);
    ts_display_map off = {4, 2, 3, 0, 2, 1};
    CHECK(vw_display_convert(&im, &off, px, 32, 1) == -1);
    CHECK(vw_display_check(&(ts_display_map){1, 1, 0, 0, 1, 1}, 257, 256) == -1); /* > 65536 */
    CHECK(vw_display_check(&(ts_display_map){1, 1, 0, 0, 1, 1}, 256, 256) == 0);
}

/* Odd sizes and every layout: cells of varying size (a 3:2 ratio) agree with a direct sum, and
 * the threaded bands with one band. */
TEST(display_conversion_matches_a_direct_sum)
{
    uint64_t seed = tu_seed();
    for (int ch = 1; ch <= 4; ch++)
        for (int bytes = 1; bytes <= 2; bytes++) {
            ts_image im = tu_random_image(301, 203, ch, bytes, &seed);
            ts_display_map m = {200, 135, 7, 5, 180, 120};
            uint32_t *a = xmalloc((size_t)m.tw * m.th * 4), *b = xmalloc((size_t)m.tw * m.th * 4);
            CHECK(vw_display_convert(&im, &m, a, (size_t)m.tw * 4, 1) == 0);
            CHECK(vw_display_convert(&im, &m, b, (size_t)m.tw * 4, 8) == 0);
            CHECK(memcmp(a, b, (size_t)m.tw * m.th * 4) == 0);
            int bad = 0;
            for (int y = 0; y < m.th && !bad; y += 7)
                for (int x = 0; x < m.tw && !bad; x += 5) {
                    int gx = m.gx0 + x, gy = m.gy0 + y;
                    int x0 = gx * 301 / 200, x1 = (gx + 1) * 301 / 200;
                    int y0 = gy * 203 / 135, y1 = (gy + 1) * 203 / 135;
                    unsigned v[4] = {0, 0, 0, 0}, cnt = (unsigned)((x1 - x0) * (y1 - y0));
                    for (int c = 0; c < ch; c++) {
                        unsigned sum = 0;
                        for (int sy = y0; sy < y1; sy++)
                            for (int sx = x0; sx < x1; sx++)
                                sum += ts_get(&im, sx, sy, c);
                        v[c] = (sum + cnt / 2) / cnt;
                        if (bytes == 2)
                            v[c] = (v[c] * 255 + 32767) / 65535;
                    }
                    uint32_t want = want_texel(v, ch, gx, gy);
                    bad = texel(a, m.tw, x, y) != want;
                    CHECKF(!bad, "ch %d bytes %d texel (%d,%d): %08x, want %08x", ch, bytes, x, y,
                           texel(a, m.tw, x, y), want);
                }
            free(a);
            free(b);
            ts_image_free(&im);
        }
}

/* A zoomed-out view is the resize op's output (lanczos3) at the view's grid size, converted 1:1:
 * the texels equal the reference resize's pixels (alpha over the checkerboard); 1:1, magnified
 * and over-budget views stay box cells. */
TEST(display_zoomed_out_is_the_resize_op)
{
    uint64_t seed = tu_seed();
    ts_display_map fit = {150, 101, 0, 0, 150, 101}, part = {200, 135, 7, 5, 180, 120};
    ts_display_map one = {301, 203, 0, 0, 301, 203}, wide = {301, 101, 0, 0, 301, 101};
    CHECK(vw_display_resampled(&fit, 301, 203, 3, 1) && vw_display_resampled(&wide, 301, 203, 3, 1));
    CHECK(!vw_display_resampled(&one, 301, 203, 3, 1));
    ts_display_map huge = {8192, 8192, 0, 0, 800, 600}; /* 64 M texels: boxed */
    CHECK(!vw_display_resampled(&huge, 16384, 16384, 1, 0));
    ts_display_map big = {600, 600, 0, 0, 600, 600}; /* 268 M samples: the host boxes, the GPU not */
    CHECK(!vw_display_resampled(&big, 16384, 16384, 1, 1) && vw_display_resampled(&big, 16384, 16384, 1, 0));
    for (int ch = 1; ch <= 4; ch++)
        for (int bytes = 1; bytes <= 2; bytes++) {
            ts_image im = tu_random_image(301, 203, ch, bytes, &seed), rs, ref;
            ts_op op;
            char err[128];
            CHECK(vw_display_resample(&im, part.gw, part.gh, &rs) == TS_OK);
            CHECK(ts_op_parse("resize:200x135:lanczos3", &op, err, sizeof err) == TS_OK);
            CHECK(ts_ref_op(&op, &im, &ref) == TS_OK && ts_image_equal(&rs, &ref));
            uint32_t *px = xmalloc((size_t)part.tw * part.th * 4), *box = xmalloc((size_t)part.tw * part.th * 4);
            CHECK(vw_display_convert(&rs, &part, px, (size_t)part.tw * 4, 2) == 0);
            CHECK(vw_display_convert(&im, &part, box, (size_t)part.tw * 4, 2) == 0);
            int bad = 0;
            for (int y = 0; y < part.th && !bad; y++)
                for (int x = 0; x < part.tw && !bad; x++) {
                    unsigned v[4];
                    for (int c = 0; c < ch; c++) {
                        unsigned s = ts_get(&ref, part.gx0 + x, part.gy0 + y, c);
                        v[c] = bytes == 2 ? (s * 255u + 32767u) / 65535u : s;
                    }
                    uint32_t want = want_texel(v, ch, part.gx0 + x, part.gy0 + y);
                    bad = texel(px, part.tw, x, y) != want;
                    CHECKF(!bad, "ch %d bytes %d texel (%d,%d): %08x, want %08x", ch, bytes, x, y,
                           texel(px, part.tw, x, y), want);
                }
            /* random pixels: lanczos3's lobes make it differ from the box mean somewhere */
            CHECK(memcmp(px, box, (size_t)part.tw * part.th * 4) != 0);
            free(px);
            free(box);
            ts_image_free(&rs);
            ts_image_free(&ref);
            ts_image_free(&im);
        }
}

/* The viewer's GPU route for a zoomed-out view (viewer_tex.c): the resize op's GPU variant on a
 * display pipeline, from a host image (kept uploaded) and from a device image (the chain's
 * result), result kept there, then ts_display_convert 1:1: the host route's texels exactly. */
TEST(gpu_display_resampled_matches_the_host)
{
    TU_GPU_OR_SKIP(dev);
    (void)dev;
    uint64_t seed = tu_seed();
    static const ts_display_map maps[] = {
        {150, 101, 0, 0, 150, 101}, {200, 135, 7, 5, 180, 120}, {37, 20, 3, 2, 30, 17},
        {300, 13, 0, 0, 300, 13},
    };
    ts_pipeline *p;
    char msg[256];
    CHECK(ts_pipeline_create(&p, TS_BACKEND_GPU, msg, sizeof msg) == TS_OK);
    ts_stream s = ts_pipeline_stream(p);
    for (int ch = 1; ch <= 4; ch++)
        for (int bytes = 1; bytes <= 2; bytes++) {
            ts_image im = tu_random_image(301, 203, ch, bytes, &seed), d_im;
            CHECK(ts_gpu_image_alloc(&d_im, 301, 203, ch, bytes) == TS_OK);
            CHECK(ts_gpu_upload(&d_im, &im, s) == TS_OK && ts_gpu_sync(s) == TS_OK);
            for (size_t k = 0; k < sizeof maps / sizeof maps[0]; k++)
                for (int from_dev = 0; from_dev < 2; from_dev++) {
                    const ts_display_map *m = &maps[k];
                    CHECK(vw_display_resampled(m, 301, 203, ch, 0));
                    size_t pitch = (size_t)m->tw * 4, n = pitch * (size_t)m->th;
                    unsigned char *want = xmalloc(n), *got = xmalloc(n);
                    ts_image rs, out = {0};
                    ts_op op;
                    CHECK(vw_display_resample(&im, m->gw, m->gh, &rs) == TS_OK);
                    CHECK(vw_display_convert(&rs, m, want, pitch, 2) == 0);
                    CHECK(vw_display_resize_op(m->gw, m->gh, &op) == TS_OK);
                    ts_chain c = {1, &op};
                    ts_run_opts host = {1, k > 0, 0, 1}, devo = {0, 0, 0, 1};
                    ts_status st = from_dev ? ts_pipeline_run_dev(p, &c, &d_im, &out, NULL, &devo)
                                            : ts_pipeline_run_ex(p, &c, &im, &out, NULL, &host);
                    CHECKF(st == TS_OK, "%s", ts_error_detail());
                    const ts_image *d = ts_pipeline_result(p);
                    CHECK(d && d->width == m->gw && d->height == m->gh);
                    void *d_out;
                    CHECK(ts_gpu_malloc(&d_out, n) == TS_OK);
                    CHECK(ts_gpu_memset(d_out, 0xA5, n, s) == TS_OK);
                    CHECKF(ts_display_convert(d, m, d_out, pitch, s) == TS_OK, "%s", ts_error_detail());
                    CHECK(ts_gpu_copy_to_host(got, d_out, n, s) == TS_OK && ts_gpu_sync(s) == TS_OK);
                    CHECKF(memcmp(want, got, n) == 0, "ch %d bytes %d map %zu from %s differs", ch,
                           bytes, k, from_dev ? "device" : "host");
                    ts_gpu_free(d_out);
                    ts_image_free(&out);
                    ts_image_free(&rs);
                    free(want);
                    free(got);
                }
            ts_gpu_image_free(&d_im);
            ts_image_free(&im);
        }
    ts_pipeline_destroy(p);
}

/* The GPU's conversion (kernels/display.cu) gives the host's texels, for every layout, at 1:1,
 * at 50% and at an odd ratio, for a visible part; and the pipeline leaves the result there. */
TEST(gpu_display_convert_matches_the_host)
{
    TU_GPU_OR_SKIP(dev);
    (void)dev;
    uint64_t seed = tu_seed();
    static const ts_display_map maps[] = {
        {301, 203, 0, 0, 301, 203}, {150, 101, 0, 0, 150, 101}, {200, 135, 7, 5, 180, 120},
        {37, 20, 3, 2, 30, 17},     {301, 203, 100, 50, 64, 33},
    };
    ts_stream s;
    CHECK(ts_gpu_stream_create(&s) == TS_OK);
    for (int ch = 1; ch <= 4; ch++)
        for (int bytes = 1; bytes <= 2; bytes++) {
            ts_image im = tu_random_image(301, 203, ch, bytes, &seed), d_im;
            CHECK(ts_gpu_image_alloc(&d_im, 301, 203, ch, bytes) == TS_OK);
            CHECK(ts_gpu_upload(&d_im, &im, s) == TS_OK);
            for (size_t k = 0; k < sizeof maps / sizeof maps[0]; k++) {
                const ts_display_map *m = &maps[k];
                size_t pitch = (size_t)m->tw * 4 + 12, n = pitch * (size_t)m->th; /* padded */
                void *d_out;
                unsigned char *want = xmalloc(n), *got = xmalloc(n);
                memset(want, 0xA5, n);
                memset(got, 0xA5, n);
                CHECK(vw_display_convert(&im, m, want, pitch, 4) == 0);
                CHECK(ts_gpu_malloc(&d_out, n) == TS_OK);
                CHECK(ts_gpu_memset(d_out, 0xA5, n, s) == TS_OK);
                CHECKF(ts_display_convert(&d_im, m, d_out, pitch, s) == TS_OK, "%s",
                       ts_error_detail());
                CHECK(ts_gpu_copy_to_host(got, d_out, n, s) == TS_OK && ts_gpu_sync(s) == TS_OK);
                CHECKF(memcmp(want, got, n) == 0, "ch %d bytes %d map %zu differs", ch, bytes, k);
                ts_gpu_free(d_out);
                free(want);
                free(got);
            }
            ts_display_map bad = {302, 203, 0, 0, 302, 203};
            CHECK(ts_display_convert(&d_im, &bad, NULL, 302 * 4, s) == TS_ERR_INVALID);
            ts_gpu_image_free(&d_im);
            ts_image_free(&im);
        }
    ts_gpu_stream_destroy(s);
    /* keep_output: the result stays on the device, with the host run's pixels */
    ts_image in = tu_random_image(97, 61, 3, 1, &seed), ref, out = {0}, back;
    ts_chain c;
    ts_pipeline *p;
    char err[256], msg[256];
    CHECK(ts_chain_parse("gauss:5,equalize,rotate:90", &c, err, sizeof err) == TS_OK);
    CHECK(ts_pipeline_create(&p, TS_BACKEND_GPU, msg, sizeof msg) == TS_OK);
    CHECK(ts_pipeline_run(p, &c, &in, &ref, NULL) == TS_OK);
    CHECK(ts_pipeline_result(p) == NULL);
    ts_run_opts keep = {1, 0, 1, 1};
    CHECK(ts_pipeline_run_ex(p, &c, &in, &out, NULL, &keep) == TS_OK);
    const ts_image *d = ts_pipeline_result(p);
    CHECK(d && out.data == NULL && out.width == 61 && out.height == 97 && d->width == 61);
    CHECK(ts_image_alloc(&back, d->width, d->height, d->channels, d->bytes) == TS_OK);
    CHECK(ts_gpu_download(&back, d, ts_pipeline_stream(p)) == TS_OK);
    CHECK(ts_gpu_sync(ts_pipeline_stream(p)) == TS_OK && ts_image_equal(&back, &ref));
    ts_image tmp;
    CHECK(ts_pipeline_run_op(p, &c.ops[0], NULL, &in, &tmp, NULL) == TS_OK);
    CHECK(ts_pipeline_result(p) == NULL); /* another run has overwritten it */
    ts_image_free(&tmp);
    ts_image_free(&back);
    ts_image_free(&ref);
    ts_image_free(&in);
    ts_chain_free(&c);
    ts_pipeline_destroy(p);
}
