/* test_gpu_resize.c - the GPU resize variants (resize.cu, resize_opt.cu) against the CPU
 * reference, bit for bit (they sum the same integer weights): every variant of the table, every
 * filter, every format (1-4 channels, 8 and 16 bits), the odd sizes (1x1, 1xN, Nx1, 33x17,
 * 4097x3, ...) reduced and enlarged on each axis by factors from 1/16 to 16, random data,
 * outputs and scratch poisoned before each run; thumbnail and crop; a GPU chain against the CPU
 * chain. GPU tests skip without a GPU; the table test runs everywhere.
 */
#include "tessera.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int formats[][2] = {{1, 1}, {2, 1}, {3, 1}, {4, 1}, {1, 2}, {2, 2}, {3, 2}, {4, 2}};
#define N_FORMATS ((int)(sizeof formats / sizeof formats[0]))
static const char *const filters[] = {"box", "triangle", "cubic", "lanczos3", "interp"};
#define N_FILTERS ((int)(sizeof filters / sizeof filters[0]))
#define MAX_VARIANTS 8
#define MSG 512

static int resize_variants(const ts_device *dev, const ts_variant **v)
{
    int n = 0;
    for (size_t i = 0; i < ts_variant_count(); i++) {
        const ts_variant *x = ts_variant_at(i);
        if (x->family != TS_FAM_RESIZE || !ts_variant_is_gpu(x) || !tu_variant_selected(x->name))
            continue;
        if (!ts_variant_runnable(x, dev)) {
            printf("# resize %s skipped: needs compute capability %d.%d\n", x->name,
                   x->min_cc / 10, x->min_cc % 10);
            continue;
        }
        if (n < MAX_VARIANTS)
            v[n++] = x;
    }
    return n;
}

/* Each variant on `in` against the reference; 0 when all match. A variant whose `supports`
 * refuses the job is skipped (naive takes every job, and the test checks that). */
static int check(const ts_variant *const *v, int nv, const char *text, const ts_image *in,
                 char *msg, size_t len)
{
    ts_op op = tu_op(text);
    ts_image want;
    if (ts_ref_op(&op, in, &want) != TS_OK) {
        snprintf(msg, len, "reference %s failed: %s", text, ts_error_detail());
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < nv && !bad; i++) {
        ts_image got;
        ts_status st = tu_gpu_run(v[i], &op, in, &got, 0);
        snprintf(msg, len, "resize %s, %s, %dx%d, %d channel(s) of %d bits (TESSERA_SEED=%llu)",
                 v[i]->name, text, in->width, in->height, in->channels, 8 * in->bytes,
                 (unsigned long long)tu_seed());
        size_t n = strlen(msg);
        if (st == TS_ERR_UNSUPPORTED && strcmp(v[i]->name, "naive") != 0)
            continue;
        if (st != TS_OK) {
            snprintf(msg + n, len - n, ": %s: %s", ts_status_str(st), ts_error_detail());
            bad = 1;
            continue;
        }
        int x = 0, y = 0, c = 0;
        long d = tu_max_diff(&got, &want, &x, &y, &c);
        if (d != 0) {
            if (d < 0)
                snprintf(msg + n, len - n, ": output %dx%d, want %dx%d", got.width, got.height,
                         want.width, want.height);
            else
                snprintf(msg + n, len - n, ": at (%d, %d) channel %d got %u, want %u", x, y, c,
                         ts_get(&got, x, y, c), ts_get(&want, x, y, c));
            bad = 1;
        }
        ts_image_free(&got);
    }
    ts_image_free(&want);
    return bad;
}

TEST(resize_table_rows_are_well_formed)
{
    int n_gpu = 0, prev = 0;
    CHECK(ts_variant_find(TS_FAM_RESIZE, "cpu") != NULL);
    for (size_t i = 0; i < ts_variant_count(); i++) {
        const ts_variant *v = ts_variant_at(i);
        if (v->family != TS_FAM_RESIZE || !ts_variant_is_gpu(v))
            continue;
        /* opt's kernels are rows of their own that auto reaches through opt's plan only */
        CHECKF(v->auto_rank > prev || v->auto_rank == 0, "resize %s breaks the ladder order",
               v->name);
        CHECKF(v->scratch != NULL || strcmp(v->name, "direct") == 0,
               "resize %s: the weights live in scratch", v->name);
        prev = v->auto_rank ? v->auto_rank : prev;
        n_gpu++;
    }
#ifdef TS_HAVE_CUDA
    static const char *const ladder[] = {"naive", "tiled", "fused", "mma", "mmai", "direct", "opt"};
    for (int i = 0; i < 7; i++)
        CHECKF(ts_variant_find(TS_FAM_RESIZE, ladder[i]) != NULL, "resize %s missing", ladder[i]);
    CHECK(n_gpu == 7);
    ts_device dev;
    memset(&dev, 0, sizeof dev);
    dev.cc = dev.cc_real = 75;
    ts_op op = tu_op("resize:3840x2160");
    ts_job job;
    memset(&job, 0, sizeof job);
    job.op = &op;
    job.in.width = 7680, job.in.height = 4320, job.in.channels = 3, job.in.bytes = 1;
    job.out = job.in;
    job.out.width = 3840, job.out.height = 2160;
    const ts_variant *a = ts_variant_auto(&job, &dev);
    CHECK(a != NULL && strcmp(a->name, "opt") == 0);
    /* thumbnail:256 of 12 MP: opt's short tiles would redo the horizontal pass 3.6 times */
    ts_op th = tu_op("thumbnail:256");
    job.op = &th;
    job.in.width = 4000, job.in.height = 3000;
    job.out.width = 256, job.out.height = 192;
    a = ts_variant_auto(&job, &dev);
    CHECK(a != NULL && strcmp(a->name, "tiled") == 0);
    /* the interp filter: opt (its plan takes direct), at any reduction; direct takes no other */
    ts_op ip = tu_op("thumbnail:256:interp");
    job.op = &ip;
    a = ts_variant_auto(&job, &dev);
    CHECK(a != NULL && strcmp(a->name, "opt") == 0);
    const ts_variant *d = ts_variant_find(TS_FAM_RESIZE, "direct");
    CHECK(d && d->supports && d->supports(&job));
    job.op = &th;
    CHECK(d && d->supports && !d->supports(&job));
#else
    CHECK(n_gpu == 0);
#endif
}

/* Output sizes for an input side n: 1, reductions, unchanged, enlargements up to 16x. */
static int targets(int n, int *t)
{
    int k = 0, cand[] = {1, n / 16, n / 3, n / 2, (n * 10) / 13, n, n + 1, (n * 3) / 2, 2 * n,
                         16 * n};
    for (int i = 0; i < 10; i++) {
        int v = cand[i];
        int dup = v < 1;
        for (int j = 0; j < k; j++)
            dup |= t[j] == v;
        if (!dup)
            t[k++] = v;
    }
    return k;
}

static int run_sizes(const ts_variant *const *v, int nv, int w, int h, uint64_t *rng, char *msg,
                     size_t len, int every_format)
{
    int tw[10], th[10];
    int nw = targets(w, tw), nh = targets(h, th);
    for (int f = 0; f < N_FORMATS; f++) {
        ts_image in = tu_random_image(w, h, formats[f][0], formats[f][1], rng);
        for (int i = 0; i < nw; i++)
            for (int j = 0; j < nh; j++) {
                if ((long)tw[i] * th[j] > 4000000)
                    continue;
                /* every filter on every format for the small sizes; filters cycle otherwise */
                for (int k = 0; k < N_FILTERS; k++) {
                    if (!every_format && k != (i + j + f) % N_FILTERS)
                        continue;
                    char text[80];
                    snprintf(text, sizeof text, "resize:%dx%d:%s", tw[i], th[j], filters[k]);
                    if (check(v, nv, text, &in, msg, len)) {
                        ts_image_free(&in);
                        return 1;
                    }
                }
            }
        ts_image_free(&in);
    }
    return 0;
}

TEST(gpu_resize_odd_sizes_every_filter_and_format)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *v[MAX_VARIANTS];
    int nv = resize_variants(dev, v);
    uint64_t rng = tu_seed() ^ 0x7e5;
    char msg[MSG];
    static const int sizes[][2] = {{1, 1}, {1, 17}, {17, 1}, {33, 17}, {7, 5}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        CHECKF(!run_sizes(v, nv, sizes[s][0], sizes[s][1], &rng, msg, sizeof msg, 1), "%s", msg);
}

TEST(gpu_resize_larger_sizes)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *v[MAX_VARIANTS];
    int nv = resize_variants(dev, v);
    uint64_t rng = tu_seed() ^ 0x1a7;
    char msg[MSG];
    static const int sizes[][2] = {{4097, 3}, {3, 4097}, {301, 203}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        CHECKF(!run_sizes(v, nv, sizes[s][0], sizes[s][1], &rng, msg, sizeof msg, 0), "%s", msg);
    /* the benchmark's shapes, in RGB8 and RGBA16 */
    static const struct {
        int w, h, ch, bytes;
        const char *op;
    } big[] = {{1920, 1080, 3, 1, "resize:640x360"},
               {1920, 1080, 4, 2, "resize:1280x720:cubic"},
               {7680, 4320, 3, 1, "resize:3840x2160"},
               {7680, 4320, 3, 1, "resize:1920x1080:triangle"},
               {4000, 3000, 3, 1, "thumbnail:256"},
               {640, 480, 4, 1, "resize:1600%:box"}};
    for (size_t b = 0; b < sizeof big / sizeof big[0]; b++) {
        ts_image in = tu_random_image(big[b].w, big[b].h, big[b].ch, big[b].bytes, &rng);
        int bad = check(v, nv, big[b].op, &in, msg, sizeof msg);
        ts_image_free(&in);
        CHECKF(!bad, "%s", msg);
    }
}

TEST(gpu_resize_thumbnail_and_crop)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *v[MAX_VARIANTS];
    int nv = resize_variants(dev, v);
    uint64_t rng = tu_seed() ^ 0xc20;
    char msg[MSG];
    static const char *const ops[] = {"thumbnail:16", "thumbnail:1", "thumbnail:500",
                                      "crop:10x5+3+2", "crop:1x1+32+16", "crop:100x100-5-5",
                                      "resize:100%", "resize:x17:cubic"};
    for (int f = 0; f < N_FORMATS; f++) {
        ts_image in = tu_random_image(33, 17, formats[f][0], formats[f][1], &rng);
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            int bad = check(v, nv, ops[o], &in, msg, sizeof msg);
            CHECKF(!bad, "%s", msg);
        }
        ts_image_free(&in);
    }
}

/* The interp filter (two taps an axis, no antialiasing: the direct row, and every row through
 * the tables) on the odd sizes, reduced and enlarged, every format. */
TEST(gpu_resize_interp_odd_sizes_every_format)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *v[MAX_VARIANTS];
    int nv = resize_variants(dev, v);
    uint64_t rng = tu_seed() ^ 0x1e7;
    char msg[MSG];
    static const int sizes[][2] = {{1, 1}, {1, 17}, {17, 1}, {33, 17}, {4097, 3}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const int w = sizes[s][0], h = sizes[s][1];
        const int outs[][2] = {{1, 1},         {(w + 3) / 4, (h + 3) / 4}, {(w + 1) / 2, h},
                               {w, (h + 2) / 3}, {w + 1, 2 * h},           {3 * w / 2 + 1, h + 5}};
        for (int f = 0; f < N_FORMATS; f++) {
            ts_image in = tu_random_image(w, h, formats[f][0], formats[f][1], &rng);
            for (size_t o = 0; o < sizeof outs / sizeof outs[0]; o++) {
                char text[80];
                snprintf(text, sizeof text, "resize:%dx%d:interp", outs[o][0], outs[o][1]);
                int bad = check(v, nv, text, &in, msg, sizeof msg);
                CHECKF(!bad, "%s", msg);
            }
            ts_image_free(&in);
        }
    }
    /* the benchmark's shapes: 8K -> 4K and -> 1080p (not under compute-sanitizer) */
    if (tu_odd_size_count() == tu_n_small_sizes)
        return;
    static const char *const big[] = {"resize:3840x2160:interp", "resize:1920x1080:interp"};
    for (int f = 0; f < 4; f += 2) { /* gray8, rgb8 */
        ts_image in = tu_random_image(7680, 4320, formats[f][0], formats[f][1], &rng);
        for (int b = 0; b < 2; b++) {
            int bad = check(v, nv, big[b], &in, msg, sizeof msg);
            CHECKF(!bad, "%s", msg);
        }
        ts_image_free(&in);
    }
}

/* direct's kernels by job->param (0 and 6..10: the even kernel, at whole factors, with 1 to 8
 * output rows a thread, 10 its loop form; 1..4 the staged tile, 5 the gather) at whole factors 2, 4, 8, 16 (odd
 * vertical factors read one row), at a width the even kernel refuses, every format. */
TEST(gpu_resize_direct_every_param_whole_factors)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *direct = ts_variant_find(TS_FAM_RESIZE, "direct");
    CHECK(direct != NULL);
    if (!direct || !tu_variant_selected("direct"))
        return;
    uint64_t rng = tu_seed() ^ 0xe7e2;
    static const int cases[][4] = {{64, 32, 32, 16}, {128, 12, 32, 3},  {256, 9, 32, 3},
                                   {4096, 3, 256, 3}, {48, 5, 24, 5},    {40, 8, 20, 4},
                                   {32, 6, 16, 6},    {96, 64, 24, 16}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        for (int f = 0; f < N_FORMATS; f++) {
            ts_image in = tu_random_image(cases[k][0], cases[k][1], formats[f][0], formats[f][1], &rng);
            char text[80];
            snprintf(text, sizeof text, "resize:%dx%d:interp", cases[k][2], cases[k][3]);
            ts_op op = tu_op(text);
            ts_image want;
            CHECK(ts_ref_op(&op, &in, &want) == TS_OK);
            for (int param = 0; param <= 10; param++) {
                ts_image got;
                ts_status st = tu_gpu_run(direct, &op, &in, &got, param);
                CHECKF(st == TS_OK, "direct/%d %s on %dx%dx%d/%d: %s", param, text, in.width,
                       in.height, in.channels, 8 * in.bytes, ts_error_detail());
                if (st != TS_OK)
                    continue;
                int x = 0, y = 0, c = 0;
                long d = tu_max_diff(&got, &want, &x, &y, &c);
                CHECKF(d == 0, "direct/%d %s, %d channel(s) of %d bits (TESSERA_SEED=%llu): at (%d, "
                       "%d) channel %d got %u, want %u", param, text, in.channels, 8 * in.bytes,
                       (unsigned long long)tu_seed(), x, y, c, d < 0 ? 0 : ts_get(&got, x, y, c),
                       d < 0 ? 0 : ts_get(&want, x, y, c));
                ts_image_free(&got);
            }
            ts_image_free(&want);
            ts_image_free(&in);
        }
    }
}

/* opt keeps the weight fragments of recent geometries on the device (resize_mmai.cu's plan
 * cache): each job runs twice on new pixels (the second from the cache), over more geometries
 * than the cache holds, so slots are rewritten and rebuilt on the way. */
TEST(gpu_resize_plan_cache_repeats_and_turnover)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *opt = ts_variant_find(TS_FAM_RESIZE, "opt");
    CHECK(opt != NULL);
    if (!opt || !tu_variant_selected("opt"))
        return;
    uint64_t rng = tu_seed() ^ 0xcac4e;
    char msg[MSG];
    static const char *const ops[] = {"resize:150x101",       "resize:100x67:triangle",
                                      "resize:200x150:cubic", "resize:120x90:box",
                                      "resize:151x100",       "resize:149x102",
                                      "resize:140x99",        "resize:150x101"};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (int ch = 3; ch <= 4; ch++)
            for (int rep = 0; rep < 2; rep++) {
                ts_image in = tu_random_image(301, 203, ch, 1, &rng);
                int bad = check(&opt, 1, ops[o], &in, msg, sizeof msg);
                ts_image_free(&in);
                CHECKF(!bad, "%s (run %d of the geometry)", msg, rep + 1);
            }
}

/* A chain whose sizes change at every step gives on the GPU what it gives on the CPU. */
TEST(gpu_resize_chain_matches_cpu)
{
    TU_GPU_OR_SKIP(dev);
    ts_pipeline *g, *c;
    char m[200];
    CHECK(ts_pipeline_create(&g, TS_BACKEND_GPU, m, sizeof m) == TS_OK);
    CHECK(ts_pipeline_create(&c, TS_BACKEND_CPU, m, sizeof m) == TS_OK);
    uint64_t rng = tu_seed() ^ 0xc4a1;
    ts_chain ch;
    char err[200];
    CHECK(ts_chain_parse("resize:50%,rotate:90,crop:40x30+3+7,resize:123x77:cubic,flip,"
                         "thumbnail:50",
                         &ch, err, sizeof err) == TS_OK);
    for (int f = 0; f < N_FORMATS; f++) {
        ts_image in = tu_random_image(301, 203, formats[f][0], formats[f][1], &rng), a, b;
        ts_run_report ra, rb;
        CHECKF(ts_pipeline_run(g, &ch, &in, &a, &ra) == TS_OK, "%s", ts_error_detail());
        CHECKF(ts_pipeline_run(c, &ch, &in, &b, &rb) == TS_OK, "%s", ts_error_detail());
        CHECK(a.width == 50 && a.height == 31);
        CHECK(ts_image_equal(&a, &b));
        ts_image_free(&a);
        ts_image_free(&b);
        ts_image_free(&in);
    }
    ts_chain_free(&ch);
    /* a 17x reduction: opt's tile does not fit for 16-bit RGBA, auto must take tiled (the
     * pipeline asks `supports` with the output's shape) */
    CHECK(ts_chain_parse("resize:6%", &ch, err, sizeof err) == TS_OK);
    for (int f = 0; f < N_FORMATS; f++) {
        ts_image in = tu_random_image(301, 203, formats[f][0], formats[f][1], &rng), a, b;
        ts_run_report ra, rb;
        CHECKF(ts_pipeline_run(g, &ch, &in, &a, &ra) == TS_OK, "%s", ts_error_detail());
        CHECKF(ts_pipeline_run(c, &ch, &in, &b, &rb) == TS_OK, "%s", ts_error_detail());
        CHECK(a.width == 18 && a.height == 12 && ts_image_equal(&a, &b));
        CHECK(ra.op[0].variant && ts_variant_is_gpu(ra.op[0].variant));
        ts_image_free(&a);
        ts_image_free(&b);
        ts_image_free(&in);
    }
    ts_chain_free(&ch);
    ts_pipeline_destroy(g);
    ts_pipeline_destroy(c);
}
