/* test_gpu_clahe.c - the `clahe` family of the variant table (kernels/clahe*.cu).
 *
 * On the CPU (always): the family's rows in ladder order and what each refuses.
 * On the GPU (skipped without one): every runnable GPU clahe variant against the CPU reference,
 * exact (the blend's float steps are spelled out without fused multiply-adds, kernels/clahe.h), on
 * the odd sizes, random and narrow-band data (hot bins: the clip limit bites), every channel
 * count and depth, several clip limits and tile grids (padded and not); the cluster variant at
 * each cluster size 1..16. Outputs and scratch are poisoned before each run (testutil).
 */
#include "testutil.h"

#include "clahe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ops[] = {"clahe", "clahe:2:3x5", "clahe:0:1x1", "clahe:4:16x16",
                                  "clahe:1000:7x2"};
#define N_OPS (sizeof ops / sizeof ops[0])

/* Variant v (param) against the reference on `in`; 1 when equal, -1 when refused and `may_refuse`. */
static int same_as_ref(const ts_variant *v, const char *text, const ts_image *in, int param,
                       const char *what, int may_refuse)
{
    ts_op op = tu_op(text);
    ts_image want, got;
    if (ts_ref_op(&op, in, &want) != TS_OK) {
        tst_fail(__FILE__, __LINE__, "reference %s: %s", text, ts_error_detail());
        return 0;
    }
    ts_status st = tu_gpu_run(v, &op, in, &got, param);
    if (st == TS_ERR_UNSUPPORTED && may_refuse) {
        ts_image_free(&want);
        return -1;
    }
    int ok = st == TS_OK;
    if (!ok) {
        tst_fail(__FILE__, __LINE__, "clahe %s/%d %s on %s %dx%d %dch %d-bit: %s: %s", v->name,
                 param, text, what, in->width, in->height, in->channels, in->bytes * 8,
                 ts_status_str(st), ts_error_detail());
    } else {
        int x = 0, y = 0, c = 0;
        long d = tu_max_diff(&want, &got, &x, &y, &c);
        if (d != 0) {
            tst_fail(__FILE__, __LINE__, "clahe %s/%d %s on %s %dx%d %dch %d-bit: differs by %ld at "
                     "(%d, %d) channel %d: got %u want %u", v->name, param, text, what, in->width,
                     in->height, in->channels, in->bytes * 8, d, x, y, c,
                     d < 0 ? 0 : ts_get(&got, x, y, c), d < 0 ? 0 : ts_get(&want, x, y, c));
            ok = 0;
        }
        ts_image_free(&got);
    }
    ts_image_free(&want);
    return ok;
}

TEST(clahe_table_rows)
{
    static const char *const want[] = {"cpu", "naive", "shared", "cluster", "opt"};
    size_t k = 0;
    for (size_t i = 0; i < ts_variant_count(); i++) {
        const ts_variant *v = ts_variant_at(i);
        if (v->family != TS_FAM_CLAHE)
            continue;
        CHECKF(k < 5 && strcmp(v->name, want[k]) == 0, "row %zu is %s", k, v->name);
        CHECK(v->why && v->why[0] && v->run);
        k++;
    }
    CHECKF(k == (ts_gpu_compiled() ? 5u : 1u), "%zu rows", k);
    if (!ts_gpu_compiled())
        return;
    /* opt takes 8-bit only; the rest take every format */
    ts_op op = tu_op("clahe");
    ts_job job;
    memset(&job, 0, sizeof job);
    job.op = &op;
    job.in.width = job.in.height = 64;
    job.in.channels = 3;
    job.in.bytes = 2;
    const ts_variant *opt = ts_variant_find(TS_FAM_CLAHE, "opt");
    const ts_variant *naive = ts_variant_find(TS_FAM_CLAHE, "naive");
    CHECK(opt && naive && !opt->supports(&job) && naive->supports(&job));
    job.in.bytes = 1;
    CHECK(opt->supports(&job));
}

TEST(gpu_clahe_matches_the_reference)
{
    TU_GPU_OR_SKIP(dev);
    uint64_t rng = tu_seed();
    int n = 0, small = tu_n_odd_sizes == tu_n_small_sizes;
    for (size_t i = 0; i < ts_variant_count(); i++) {
        const ts_variant *v = ts_variant_at(i);
        if (v->family != TS_FAM_CLAHE || !ts_variant_is_gpu(v) || !tu_variant_selected(v->name))
            continue;
        if (!ts_variant_runnable(v, dev)) {
            printf("# clahe %s needs sm_%d: skipped\n", v->name, v->min_cc);
            continue;
        }
        for (int s = 0; s < tu_n_small_sizes; s++)
            for (int ch = 1; ch <= 4; ch++)
                for (int b = 1; b <= 2; b++) {
                    if (b == 2 && !strcmp(v->name, "opt"))
                        continue;
                    int w = tu_odd_sizes[s][0], h = tu_odd_sizes[s][1];
                    /* under a sanitizer (small sizes only): 1x1, 33x17, 257x129; gray8, gray16,
                     * RGB16, RGBA8; clahe:2:3x5 (clipped, padded) */
                    if (small && (!(w == 1 || w == 33 || w == 257) ||
                                  !((ch == 1) || (ch == 3 && b == 2) || (ch == 4 && b == 1))))
                        continue;
                    ts_image r = tu_random_image(w, h, ch, b, &rng);
                    ts_image nb = tu_band_image(w, h, ch, b, 60, 90, &rng);
                    for (size_t o = small; o < (small ? 2 : N_OPS); o++) {
                        n += same_as_ref(v, ops[o], &r, 0, "random", 0);
                        if (!small)
                            n += same_as_ref(v, ops[o], &nb, 0, "band", 0);
                    }
                    ts_image_free(&r);
                    ts_image_free(&nb);
                }
    }
    printf("# clahe: %d runs equal to the reference\n", n);
}

TEST(gpu_clahe_cluster_sizes)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *v = ts_variant_find(TS_FAM_CLAHE, "cluster");
    if (!v || !ts_variant_runnable(v, dev) || !tu_variant_selected("cluster"))
        SKIP("no cluster variant on this device");
    uint64_t rng = tu_seed();
    static const int ks[] = {1, 2, 4, 8, 16};
    int small = tu_n_odd_sizes == tu_n_small_sizes; /* a sanitizer run: gray only */
    for (int b = 1; b <= 2; b++) {
        ts_image in = tu_random_image(small ? 33 : 257, small ? 17 : 129, 1, b, &rng);
        ts_image lum = tu_band_image(97, 61, 4, b, 0, b == 2 ? 65535 : 255, &rng);
        for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++) {
            if (small && ks[k] != 2 && ks[k] != 4)
                continue;
            int r = same_as_ref(v, "clahe", &in, ks[k], "random", 1);
            CHECKF(r != -1 || (b == 2 && ks[k] == 1), "cluster/%d refused %d-bit: %s", ks[k],
                   8 * b, ts_error_detail());
            if (r == -1)
                printf("# clahe cluster/%d on %d-bit refused: %s\n", ks[k], 8 * b, ts_error_detail());
            if (!small)
                same_as_ref(v, "clahe:3:5x3", &lum, ks[k], "rgba", 1);
        }
        ts_image_free(&in);
        ts_image_free(&lum);
    }
}

/* The gray8 blend's FMA form (kernels/clahe_common.cuh): the product of a LUT byte b and a
 * weight w rounded once, taken as fma(1 + b * 2^-23, W, -W) with W = w * 2^23, equals b * w
 * rounded as a float, for every byte and for the weights of every pixel of 8 tiles 1..64 wide
 * and of the tile widths of common sizes (the axis of clahe.h), and of 2^16 random floats in
 * [0, 1]. */
static int fma_form_differs(float w)
{
    const float big = w * 8388608.0f;
    for (unsigned b = 0; b < 256; b++) {
        uint32_t bits = 0x3F800000u | b;
        float one_b;
        memcpy(&one_b, &bits, sizeof one_b);
        float want = (float)b * w, got = fmaf(one_b, big, -big);
        if (memcmp(&want, &got, sizeof want) != 0)
            return (int)b + 1;
    }
    return 0;
}

TEST(clahe_fma_form_is_the_product)
{
    static const int wide[] = {135, 240, 270, 480, 540, 960, 1024};
    long n = 0;
    for (int t = 1; t <= 64 + (int)(sizeof wide / sizeof wide[0]); t++) {
        const int tw = t <= 64 ? t : wide[t - 65];
        const float inv = 1.0f / (float)tw;
        for (int x = 0; x < 8 * tw; x++) {
            clahe_axis ax = clahe_axis_of(x, inv, 8);
            const float w[2] = {ax.a, 1.0f - ax.a};
            for (int k = 0; k < 2; k++) {
                int b = fma_form_differs(w[k]);
                CHECKF(b == 0, "tile %d x %d weight %a byte %d", tw, x, (double)w[k], b - 1);
                if (b)
                    return;
                n++;
            }
        }
    }
    uint64_t rng = tu_seed();
    for (int i = 0; i < 65536; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        float w = (float)(rng >> 40) / 16777216.0f;
        int b = fma_form_differs(w);
        CHECKF(b == 0, "weight %a byte %d", (double)w, b - 1);
        if (b)
            return;
        n++;
    }
    printf("# clahe: the FMA form equals the product for %ld weights x 256 bytes\n", n);
}

/* opt's gray8 blend at both widths a thread (param 8 and 16; 0, by width, is the other tests')
 * against the reference: odd sizes, tall and wide images (many rows a band, segments across cell
 * rows, strips across cell columns), bands inside the image and across its padded bottom. */
TEST(gpu_clahe_opt_blends)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *v = ts_variant_find(TS_FAM_CLAHE, "opt");
    if (!v || !ts_variant_runnable(v, dev) || !tu_variant_selected("opt"))
        SKIP("no opt variant on this device");
    uint64_t rng = tu_seed();
    static const int sizes[][2] = {{1, 1},     {33, 17},   {257, 129}, {4097, 3},
                                   {17, 3001}, {4096, 130}, {1920, 1080}};
    static const int params[] = {8, 16};
    int small = tu_n_odd_sizes == tu_n_small_sizes, n = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        if (small && (sizes[s][0] * sizes[s][1] > 40000 || sizes[s][0] == 1))
            continue; /* under a sanitizer: 33x17, 257x129, 4097x3 */
        ts_image r = tu_random_image(sizes[s][0], sizes[s][1], 1, 1, &rng);
        ts_image nb = tu_band_image(sizes[s][0], sizes[s][1], 1, 1, 60, 90, &rng);
        for (size_t p = 0; p < sizeof params / sizeof params[0]; p++)
            for (size_t o = 0; o < (small ? 2 : N_OPS); o++) {
                n += same_as_ref(v, ops[o], &r, params[p], "random", 0);
                n += same_as_ref(v, ops[o], &nb, params[p], "band", 0);
            }
        ts_image_free(&r);
        ts_image_free(&nb);
    }
    printf("# clahe opt blends: %d runs equal to the reference\n", n);
}

/* opt/param on `in` with the device cut to `sms` SMs (opt sizes its waves by dev->sms: on one SM a
 * band of a 1024-wide tile is ~170 rows, ~21 a thread in the pipelined count, on a small image
 * that sanitizers run quickly), against the reference; 1 when equal. */
static int opt_on_few_sms(const ts_variant *v, const ts_device *dev, int sms, const char *text,
                          const ts_image *in, int param)
{
    ts_device few = *dev;
    ts_op op = tu_op(text);
    ts_image want, got;
    ts_job job;
    ts_status st;
    int ok = 0, x = 0, y = 0, c = 0;
    few.sms = sms;
    memset(&job, 0, sizeof job);
    memset(&got, 0, sizeof got);
    if (ts_ref_op(&op, in, &want) != TS_OK) {
        tst_fail(__FILE__, __LINE__, "reference %s: %s", text, ts_error_detail());
        return 0;
    }
    job.op = &op;
    job.dev = &few;
    job.param = param;
    const int w = in->width, h = in->height, ch = in->channels, b = in->bytes;
    if ((st = ts_gpu_stream_create(&job.stream)) == TS_OK &&
        (st = ts_gpu_image_alloc(&job.in, w, h, ch, b)) == TS_OK &&
        (st = ts_gpu_upload(&job.in, in, job.stream)) == TS_OK &&
        (st = ts_gpu_image_alloc(&job.out, w, h, ch, b)) == TS_OK &&
        (st = ts_gpu_image_fill(&job.out, 0xA5, job.stream)) == TS_OK &&
        (st = tu_job_run(v, &job)) == TS_OK &&
        (st = ts_image_alloc(&got, w, h, ch, b)) == TS_OK &&
        (st = ts_gpu_download(&got, &job.out, job.stream)) == TS_OK)
        st = ts_gpu_sync(job.stream);
    if (st != TS_OK) {
        tst_fail(__FILE__, __LINE__, "clahe opt/%d %s %dx%d on %d SMs: %s: %s", param, text,
                 in->width, in->height, sms, ts_status_str(st), ts_error_detail());
    } else {
        long d = tu_max_diff(&want, &got, &x, &y, &c);
        if (d != 0)
            tst_fail(__FILE__, __LINE__, "clahe opt/%d %s %dx%d on %d SMs: differs by %ld at "
                     "(%d, %d)", param, text, w, h, sms, d, x, y);
        ok = d == 0;
    }
    ts_image_free(&got);
    ts_image_free(&want);
    ts_gpu_free(job.scratch);
    ts_gpu_image_free(&job.in);
    ts_gpu_image_free(&job.out);
    ts_gpu_stream_destroy(job.stream);
    return ok;
}

/* opt's default (the overlapped launches) and its candidate behind the parameter's hundreds
 * (kernels/clahe.cu: 1 the pipelined count, gray's) against the reference: the odd sizes at every
 * 8-bit channel count (colour takes the default's count; 100 falls back to it); gray bands read
 * row-wise with fewer rows a thread than the count's ring of 4 (1024x512), with more (8K: ~11;
 * 4096x4096 as one tile: ~5; 1024x600 on a device cut to 1 SM: ~21), bands across the padded
 * bottom (4096x130) and right edge (1000x600); the blend at 8 and 16 pixels a thread. And the
 * parameters opt refuses (the bits 2 and 4 of earlier candidates among them). */
TEST(gpu_clahe_opt_candidates)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *v = ts_variant_find(TS_FAM_CLAHE, "opt");
    if (!v || !ts_variant_runnable(v, dev) || !tu_variant_selected("opt"))
        SKIP("no opt variant on this device");
    uint64_t rng = tu_seed();
    static const int params[] = {0, 100, 108, 116};
    static const int extra[][2] = {{1024, 512}, {4096, 130}, {1000, 600}, {4096, 4096}};
    const int small = tu_n_odd_sizes == tu_n_small_sizes;
    const int n_sizes = tu_n_odd_sizes + (int)(sizeof extra / sizeof extra[0]);
    int n = 0;
    for (int s = 0; s < n_sizes; s++) {
        const int w = s < tu_n_odd_sizes ? tu_odd_sizes[s][0] : extra[s - tu_n_odd_sizes][0];
        const int h = s < tu_n_odd_sizes ? tu_odd_sizes[s][1] : extra[s - tu_n_odd_sizes][1];
        const int big = (long)w * h > 3000000, mid = (long)w * h > 1000000;
        /* under a sanitizer: random data on 1x1, 1x97, 97x1, 33x17, 4097x3, 257x129, 1024x512
         * (gray), 33x17 and 4097x3 (RGBA8) */
        if (small && ((long)w * h > 524288 || w == 3 || w == 31))
            continue;
        for (int ch = 1; ch <= 4; ch++) {
            if ((big && ch > 1) || (small && ch != 1 && (ch != 4 || (w != 33 && w != 4097))))
                continue;
            ts_image r = tu_random_image(w, h, ch, 1, &rng);
            ts_image nb = tu_band_image(w, h, ch, 1, 60, 90, &rng);
            for (size_t p = 0; p < sizeof params / sizeof params[0]; p++) {
                if ((ch > 1 || small) && params[p] != 0 && params[p] != 100 && params[p] != 108)
                    continue;
                if (big && params[p] != 0 && params[p] != 100)
                    continue;
                const size_t n_ops = small || big ? 1 : mid || ch > 1 ? 2 : N_OPS;
                for (size_t o = 0; o < n_ops; o++) {
                    /* 4096x4096: clahe:0:1x1 (one tile) reads ~5 rows a thread */
                    const char *text = w == 4096 && h == 4096 ? ops[2] : ops[o];
                    n += same_as_ref(v, text, &r, params[p], "random", 0);
                    if (!small && (!big || o == 0))
                        n += same_as_ref(v, text, &nb, params[p], "band", 0);
                }
            }
            ts_image_free(&r);
            ts_image_free(&nb);
        }
    }
    /* many rows a thread on a small image: the device cut to 1 SM (under a sanitizer 1024x304:
     * ~12 rows a thread in one tile, ~9 in 2x2) */
    ts_image lone = tu_random_image(1024, small ? 304 : 600, 1, 1, &rng);
    for (size_t p = 0; p < sizeof params / sizeof params[0]; p++) {
        if (small && params[p] != 0 && params[p] != 100)
            continue;
        n += opt_on_few_sms(v, dev, 1, "clahe:0:1x1", &lone, params[p]);
        n += opt_on_few_sms(v, dev, 1, "clahe:2:2x2", &lone, params[p]);
    }
    ts_image_free(&lone);
    static const int bad[] = {-1, 7, 32, 200, 300, 400, 700, 800, 1016, 108 + 1};
    ts_image one = tu_random_image(33, 17, 1, 1, &rng);
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        ts_op op = tu_op("clahe");
        ts_image got;
        ts_status st = tu_gpu_run(v, &op, &one, &got, bad[b]);
        CHECKF(st == TS_ERR_UNSUPPORTED, "opt/%d: %s", bad[b], ts_status_str(st));
        if (st == TS_OK)
            ts_image_free(&got);
    }
    ts_image_free(&one);
    printf("# clahe opt candidates: %d runs equal to the reference\n", n);
}

/* The large sizes apart, so sanitizer runs (TESSERA_SMALL_ONLY=1) can leave them out. */
TEST(gpu_clahe_large)
{
    TU_GPU_OR_SKIP(dev);
    if (tu_n_odd_sizes == tu_n_small_sizes)
        SKIP("TESSERA_SMALL_ONLY");
    uint64_t rng = tu_seed();
    ts_image g8 = tu_band_image(1920, 1080, 1, 1, 20, 200, &rng);
    ts_image c16 = tu_random_image(1920, 1080, 3, 2, &rng);
    for (size_t i = 0; i < ts_variant_count(); i++) {
        const ts_variant *v = ts_variant_at(i);
        if (v->family != TS_FAM_CLAHE || !ts_variant_is_gpu(v) || !ts_variant_runnable(v, dev) ||
            !tu_variant_selected(v->name))
            continue;
        same_as_ref(v, "clahe", &g8, 0, "band", 0);
        if (strcmp(v->name, "opt") != 0)
            same_as_ref(v, "clahe", &c16, 0, "random", 0);
    }
    ts_image_free(&g8);
    ts_image_free(&c16);
}
