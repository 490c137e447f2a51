/* test_gpu_conv.c - convolution: every GPU variant of the table against ts_ref_conv, and, without a
 * GPU, the table's conv rows and the integer epilogue arithmetic the kernels rely on.
 *
 * Tolerance: exact filters (integer weights: box, Sobel edge, emboss, sharpen, integer kernel files)
 * must match the reference bit for bit; float filters (gauss, sharpen:0.5, float kernel files) may
 * differ by one step of the output depth (the summation order differs). Each failure names the
 * variant, op, shape, tolerance and the worst sample (x, y, c, got, want).
 */
#include "conv_math.h"
#include "tessera.h"
#include "testutil.h"
#include "tst.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- filters under test */

/* An op from kernel-file text (the grammar's kernel:FILE, without the file). */
static ts_op kernel_op(const char *name, const char *text)
{
    ts_op op;
    char err[200];
    memset(&op, 0, sizeof op);
    op.kind = TS_OP_CONV;
    snprintf(op.text, sizeof op.text, "kernel:%s", name);
    if (ts_filter_parse(text, strlen(text), &op.filter, err, sizeof err) != TS_OK) {
        fprintf(stderr, "test: bad kernel %s: %s\n", name, err);
        abort();
    }
    return op;
}

/* K*K integer weights in [lo, hi] and an optional divisor, as kernel-file text. */
static ts_op random_int_kernel(const char *name, int k, int lo, int hi, int divisor, uint64_t *st)
{
    static char text[TS_MAX_K * TS_MAX_K * 8 + 64];
    size_t n = 0;
    for (int i = 0; i < k * k; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%d ",
                              lo + (int)(tu_rand(st) % (uint64_t)(hi - lo + 1)));
    if (divisor)
        snprintf(text + n, sizeof text - n, "\ndivisor: %d\n", divisor);
    return kernel_op(name, text);
}

static ts_op random_float_kernel(const char *name, int k, uint64_t *st)
{
    static char text[TS_MAX_K * TS_MAX_K * 16];
    size_t n = 0;
    for (int i = 0; i < k * k; i++) /* in (-1, 1) / K^2 * 4: sums stay in range, signs mixed */
        n += (size_t)snprintf(text + n, sizeof text - n, "%.6f ",
                              ((double)(tu_rand(st) % 2000001) / 1e6 - 0.8) * 4.0 / (k * k));
    return kernel_op(name, text);
}

#define MAX_FILTERS 32

/* The filters every small size goes through: each K of the issue, each epilogue path (float,
 * exact divisor 1, odd and even divisors, divisor past the fast path, int32 accumulation,
 * magnitude), separable and not. */
static int small_filters(ts_op *ops)
{
    static const char *const named[] = {
        "box:1",   "box:3",   "box:5",   "box:7",   "box:15",      "box:31",     "gauss:3",
        "gauss:5", "gauss:7", "gauss:15", "gauss:31", "gauss:5:0.3", "sharpen",    "sharpen:0.5",
        "sharpen:3", "emboss", "edge"};
    uint64_t st = tu_seed() ^ 0xC0FFEEu;
    int n = 0;
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        ops[n++] = tu_op(named[i]);
    ops[n++] = kernel_op("k1-ties", "3 / 2");
    ops[n++] = kernel_op("k3-even", "1 2 1 2 4 2 1 2 1 / 2");
    ops[n++] = kernel_op("k3-bigdiv", "100 200 300 400 500 600 700 800 900 / 16384");
    ops[n++] = random_int_kernel("k5-neg-div8", 5, -9, 9, 8, &st);
    ops[n++] = random_int_kernel("k7-wide", 7, -60, 60, 0, &st); /* int32 accumulation at 16 bits */
    ops[n++] = random_int_kernel("k15-div37", 15, 0, 9, 37, &st);
    ops[n++] = random_float_kernel("k3-float", 3, &st);
    ops[n++] = random_float_kernel("k31-float", 31, &st);
    /* mma's FP16 bound: 3 * 0.0001 * 255 = 0.08 steps (taken), 3 * 0.0004 * 255 = 0.31 (refused) */
    ops[n++] = kernel_op("k3-fp16-near", "1.0001 0 0  0 1.0001 0  0 0 -1.0001");
    ops[n++] = kernel_op("k3-fp16-far", "1.0004 0 0  0 1.0004 0  0 0 -1.0004");
    ops[n++] = kernel_op("k5-int2048", "2048 0 0 0 0  0 0 0 0 0  0 0 -2048 0 0  0 0 0 0 0  0 0 0 0 1"
                                       " / 4096");
    return n;
}

/* The filters a TESSERA_SANITIZE_QUICK run keeps: each K (1, 3, 5, 7, 15, 31; the halos and
 * tiles differ), float and exact, int32 accumulation, the magnitude, a divisor past the fast path. */
static const char *const quick_keep[] = {"box:1",  "box:3",    "gauss:5",          "kernel:k7-wide",
                                         "box:15", "gauss:31", "edge",             "sharpen",
                                         "kernel:k3-bigdiv",   "kernel:k3-float"};
#define N_QUICK (sizeof quick_keep / sizeof quick_keep[0])

static int quick_filter(const char *text)
{
    for (size_t i = 0; i < N_QUICK; i++)
        if (!strcmp(text, quick_keep[i]))
            return 1;
    return 0;
}

/* ---------------------------------------------------------------- comparing one run */

/* Runs variant v on `in` and compares with `want`. Returns 1 if it ran and matched, 0 if it was
 * skipped (a specialized variant that does not take the job), -1 after reporting a failure. */
static int check_variant(const ts_variant *v, const ts_op *op, const ts_image *in,
                         const ts_image *want, int param)
{
    ts_image got;
    ts_status st = tu_gpu_run(v, op, in, &got, param);
    if (st == TS_ERR_UNSUPPORTED && strcmp(v->name, "naive") && strcmp(v->name, "gemm") &&
        strcmp(v->name, "tiled"))
        return 0;
    if (st != TS_OK) {
        tst_fail(__FILE__, __LINE__, "conv %s/%d on %s %dx%dx%d %d-bit: %s: %s", v->name, param,
                 op->text, in->width, in->height, in->channels, 8 * in->bytes, ts_status_str(st),
                 ts_error_detail());
        return -1;
    }
    int x = 0, y = 0, c = 0;
    long tol = op->filter.exact ? 0 : 1;
    long d = tu_max_diff(&got, want, &x, &y, &c);
    int ok = d >= 0 && d <= tol;
    if (!ok)
        tst_fail(__FILE__, __LINE__,
                 "conv %s/%d on %s %dx%dx%d %d-bit: %s tolerance (%s) broken: max diff %ld at "
                 "x=%d y=%d c=%d: got %u, want %u (TESSERA_SEED=%llu)",
                 v->name, param, op->text, in->width, in->height, in->channels, 8 * in->bytes,
                 tol ? "float filter" : "exact filter", tol ? "<= 1 step" : "bit-exact", d, x, y,
                 c, ts_get(&got, x, y, c), ts_get(want, x, y, c), (unsigned long long)tu_seed());
    ts_image_free(&got);
    return ok ? 1 : -1;
}

/* Every runnable GPU conv variant (those with `only` in their name when only != NULL). */
static int gpu_conv_variants(const ts_device *dev, const ts_variant **out, const char *const *only)
{
    int n = 0;
    for (size_t i = 0; i < ts_variant_count(); i++) {
        const ts_variant *v = ts_variant_at(i);
        if (v->family != TS_FAM_CONV || !ts_variant_is_gpu(v) || !tu_variant_selected(v->name))
            continue;
        if (only) {
            int want = 0;
            for (const char *const *o = only; *o; o++)
                want = want || strcmp(*o, v->name) == 0;
            if (!want)
                continue;
        }
        if (!ts_variant_runnable(v, dev)) {
            printf("# conv %s skipped: needs compute capability %d.%d, the device has %d.%d\n",
                   v->name, v->min_cc / 10, v->min_cc % 10, dev->cc / 10, dev->cc % 10);
            continue;
        }
        out[n++] = v;
    }
    return n;
}

/* One shape: a fresh random image, the reference once, then each variant. */
static int check_shape(const ts_variant *const *vs, int nv, const ts_op *op, int w, int h, int ch,
                       int bytes, uint64_t *st, int *ran)
{
    ts_image in = tu_random_image(w, h, ch, bytes, st), want;
    if (ts_ref_conv(op, &in, &want) != TS_OK) {
        tst_fail(__FILE__, __LINE__, "reference failed on %s: %s", op->text, ts_error_detail());
        ts_image_free(&in);
        return -1;
    }
    int res = 0;
    for (int i = 0; i < nv && res == 0; i++) {
        int r = check_variant(vs[i], op, &in, &want, 0);
        if (r < 0)
            res = -1;
        else
            ran[i] += r;
    }
    ts_image_free(&in);
    ts_image_free(&want);
    return res;
}

/* ---------------------------------------------------------------- GPU tests */

TEST(gpu_conv_small_sizes_every_filter)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *vs[64];
    int nv = gpu_conv_variants(dev, vs, NULL), ran[64] = {0};
    ts_op ops[MAX_FILTERS];
    int nf = small_filters(ops);
    uint64_t st = tu_seed();
    CHECKF(nv > 0, "no GPU conv variant in the table");
    /* TESSERA_SANITIZE_QUICK (racecheck, which instruments every shared access): 1x1, 33x17 and
     * 4097x3 only, and one filter per K and accumulation path; every channel count, depth and
     * variant still runs */
    static const int quick[] = {0, 3, 4};
    int quick_only = getenv("TESSERA_SANITIZE_QUICK") != NULL;
    int ns = quick_only ? 3 : tu_n_small_sizes;
    for (int f = 0; f < nf; f++) {
        if (quick_only && !quick_filter(ops[f].text))
            continue;
        for (int i = 0; i < ns; i++)
            for (int ch = 1; ch <= 4; ch++)
                for (int bytes = 1; bytes <= 2; bytes++) {
                    int s = quick_only ? quick[i] : i;
                    if (check_shape(vs, nv, &ops[f], tu_odd_sizes[s][0], tu_odd_sizes[s][1], ch,
                                    bytes, &st, ran) < 0)
                        return;
                }
    }
    for (int i = 0; i < nv; i++)
        printf("# conv %s: %d small-image runs matched\n", vs[i]->name, ran[i]);
}

TEST(gpu_conv_1080p)
{
    TU_GPU_OR_SKIP(dev);
    if (tu_n_odd_sizes <= tu_n_small_sizes)
        SKIP("TESSERA_SMALL_ONLY: large images left out");
    const ts_variant *vs[64];
    int nv = gpu_conv_variants(dev, vs, NULL), ran[64] = {0};
    uint64_t st = tu_seed() + 1, kst = tu_seed() ^ 0x5EEDu;
    ts_op ops[5] = {tu_op("box:3"), tu_op("gauss:5"), tu_op("sharpen"), tu_op("edge"),
                    random_int_kernel("k7-wide", 7, -60, 60, 0, &kst)};
    for (int f = 0; f < 5; f++)
        for (int ch = 3; ch <= 4; ch++)
            for (int bytes = 1; bytes <= 2; bytes++)
                if (check_shape(vs, nv, &ops[f], 1920, 1080, ch, bytes, &st, ran) < 0)
                    return;
}

TEST(gpu_conv_8k)
{
    TU_GPU_OR_SKIP(dev);
    if (tu_n_odd_sizes <= tu_n_small_sizes)
        SKIP("TESSERA_SMALL_ONLY: large images left out");
    static const char *const fast[] = {"tiled", "sep",    "roll",   "pipe", "mma",
                                       "mmapipe", "mmasep", "runsum", NULL};
    const ts_variant *all[64], *vs[64];
    int na = gpu_conv_variants(dev, all, NULL), nv = gpu_conv_variants(dev, vs, fast);
    int ran[64] = {0};
    uint64_t st = tu_seed() + 2;
    const int w = tu_odd_sizes[tu_n_odd_sizes - 1][0], h = tu_odd_sizes[tu_n_odd_sizes - 1][1];
    ts_op box = tu_op("box:3"), gauss = tu_op("gauss:5");
    if (check_shape(all, na, &box, w, h, 3, 1, &st, ran) < 0) /* the benchmark's image */
        return;
    check_shape(vs, nv, &gauss, w, h, 4, 1, &st, ran);
}

/* The row kernels' strips take one of three paths: border (samples past a row's side), steady
 * (mmapipe: inside the image, rows a multiple of its ring) and general (the rest: clamped top or
 * bottom rows, a short last strip, other heights). An image wide and tall enough for all three on
 * every channel count, at the default strip height (param 0) and at heights that move strips
 * between the paths (6: steady at K = 3; 14: at K = 7; 20: at K = 5; 7: general everywhere). */
TEST(gpu_conv_strip_paths)
{
    TU_GPU_OR_SKIP(dev);
    static const char *const rows_kernels[] = {"mma", "mmapipe", "pipe", "roll", NULL};
    static const int params[] = {0, 6, 7, 14, 20};
    const ts_variant *vs[64];
    int nv = gpu_conv_variants(dev, vs, rows_kernels);
    uint64_t st = tu_seed() + 3, kst = tu_seed() ^ 0x57121Bu;
    ts_op ops[7] = {tu_op("gauss:3"), tu_op("box:3"), tu_op("sharpen"), tu_op("edge"),
                    tu_op("gauss:5"), random_int_kernel("k7-wide", 7, -60, 60, 0, &kst),
                    random_float_kernel("k3-float", 3, &kst)};
    for (int ch = 1; ch <= 4; ch++) {
        int ran[64] = {0};
        ts_image in = tu_random_image(1101, 101, ch, 1, &st);
        for (int f = 0; f < 7; f++) {
            ts_image want;
            if (ts_ref_conv(&ops[f], &in, &want) != TS_OK) {
                tst_fail(__FILE__, __LINE__, "reference failed on %s: %s", ops[f].text,
                         ts_error_detail());
                ts_image_free(&in);
                return;
            }
            int bad = 0;
            for (int i = 0; i < nv && !bad; i++)
                for (size_t k = 0; k < sizeof params / sizeof params[0] && !bad; k++) {
                    int r = check_variant(vs[i], &ops[f], &in, &want, params[k]);
                    bad = r < 0;
                    ran[i] += r > 0;
                }
            ts_image_free(&want);
            if (bad) {
                ts_image_free(&in);
                return;
            }
        }
        ts_image_free(&in);
        for (int i = 0; i < nv; i++) /* each of these takes 8-bit K = 3 on any channel count */
            CHECKF(ran[i] > 0, "conv %s ran no job on %d channels", vs[i]->name, ch);
    }
}

/* Variant v on `op` over `in` at each job->param of params[0..np) against the reference; 0 when
 * every run matched, -1 after saying what failed (a refusal too). */
static int check_params(const ts_variant *v, const ts_op *op, const ts_image *in,
                        const int *params, size_t np)
{
    ts_image want;
    if (ts_ref_conv(op, in, &want) != TS_OK) {
        tst_fail(__FILE__, __LINE__, "reference failed on %s: %s", op->text, ts_error_detail());
        return -1;
    }
    int bad = 0;
    for (size_t k = 0; k < np && !bad; k++) {
        int r = check_variant(v, op, in, &want, params[k]);
        if (r == 0)
            tst_fail(__FILE__, __LINE__, "%s refused %s on %d ch %d-bit", v->name, op->text,
                     in->channels, 8 * in->bytes);
        bad = r <= 0;
    }
    ts_image_free(&want);
    return bad ? -1 : 0;
}

/* mmasep's strips take mmapipe's three paths (border, steady, general) with its separable rows:
 * gauss:5 and gauss:7 (and a wide sigma) on the channel counts it takes, at the default strip
 * height and at heights that move strips between the paths (10, 20: steady at K = 5; 14, 28: at
 * K = 7; 7: general). */
TEST(gpu_conv_mmasep_strip_paths)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *v = ts_variant_find(TS_FAM_CONV, "mmasep");
    if (!v || !ts_variant_runnable(v, dev) || !tu_variant_selected("mmasep"))
        SKIP("mmasep not in the table, not runnable or not selected");
    static const int params[] = {0, 7, 10, 14, 20, 28};
    uint64_t st = tu_seed() + 6;
    ts_op ops[3] = {tu_op("gauss:5"), tu_op("gauss:7"), tu_op("gauss:7:3")};
    for (int ch = 2; ch <= 4; ch++) {
        ts_image in = tu_random_image(1101, 101, ch, 1, &st);
        for (int f = 0; f < 3; f++) {
            if (ch == 2 && f == 0)
                continue; /* gauss:5 on 2 channels: one k-step, refused */
            if (check_params(v, &ops[f], &in, params, sizeof params / sizeof params[0])) {
                ts_image_free(&in);
                return;
            }
        }
        ts_image_free(&in);
    }
}

static const char *const mmasep2_rows[] = {"mmasep2", "mmasep2b"};

/* The mmasep2 row `name` if it runs here and is selected, else NULL (after saying why). */
static const ts_variant *mmasep2_row(const ts_device *dev, const char *name)
{
    const ts_variant *v = ts_variant_find(TS_FAM_CONV, name);
    if (!v || !ts_variant_runnable(v, dev) || !tu_variant_selected(name)) {
        printf("# %s not in the table, not runnable or not selected\n", name);
        return NULL;
    }
    return v;
}

/* mmasep2's and mmasep2b's strips: border (the ring row sticks out of the image row: the first and
 * last strips or groups of strips of a row, 1101 samples wide being no multiple of either; in
 * mmasep2b's last group, warps wholly past the row's end) and inside (the output blocks staged in
 * shared memory), rows clamped at the top and the bottom, a short last strip; gauss:5, gauss:7 and
 * a wide sigma on 1 and 3 channels, at the default strip height and at heights of 1 to 8 row
 * blocks (job->param). */
TEST(gpu_conv_mmasep2_strip_paths)
{
    TU_GPU_OR_SKIP(dev);
    static const int params[] = {0, 8, 16, 24, 40, 64};
    ts_op ops[3] = {tu_op("gauss:5"), tu_op("gauss:7"), tu_op("gauss:7:3")};
    for (int k = 0; k < 2; k++) {
        const ts_variant *v = mmasep2_row(dev, mmasep2_rows[k]);
        if (!v)
            continue;
        uint64_t st = tu_seed() + 7;
        for (int ch = 1; ch <= 3; ch += 2) {
            ts_image in = tu_random_image(1101, 101, ch, 1, &st);
            for (int f = 0; f < 3; f++)
                if (check_params(v, &ops[f], &in, params, sizeof params / sizeof params[0])) {
                    ts_image_free(&in);
                    return;
                }
            ts_image_free(&in);
        }
    }
}

/* Variant v against the reference on 8-bit gray and RGB at the odd sizes (1x1 .. 257x129, and
 * 1080p unless TESSERA_SMALL_ONLY), each of ops[0 .. nops - 1] at the default param, then ops[big]
 * on the benchmark's 8K RGB8 image (unless TESSERA_SMALL_ONLY). -1 at the first failure. */
static int check_sizes_gray_rgb(const ts_variant *v, const ts_op *ops, int nops, int big, uint64_t *st)
{
    static const int param0[] = {0};
    const int large = tu_n_odd_sizes > tu_n_small_sizes; /* 1080p and 8K */
    for (int i = 0; i < tu_n_small_sizes + large; i++)
        for (int ch = 1; ch <= 3; ch += 2) {
            ts_image in = tu_random_image(tu_odd_sizes[i][0], tu_odd_sizes[i][1], ch, 1, st);
            for (int f = 0; f < nops; f++)
                if (check_params(v, &ops[f], &in, param0, 1)) {
                    ts_image_free(&in);
                    return -1;
                }
            ts_image_free(&in);
        }
    if (!large)
        return 0;
    const int w = tu_odd_sizes[tu_n_odd_sizes - 1][0], h = tu_odd_sizes[tu_n_odd_sizes - 1][1];
    ts_image in = tu_random_image(w, h, 3, 1, st);
    const int bad = check_params(v, &ops[big], &in, param0, 1);
    ts_image_free(&in);
    return bad ? -1 : 0;
}

/* Overwrites image *im with a pattern whose box sums reach the extremes the arithmetic must hold
 * exactly: 0 everywhere (kind 0: the most negative row sums), 255 (kind 1), blocks of 0 and 255
 * of 7 x 5 pixels (kind 2: every sum between). */
static void fill_extreme(ts_image *im, int kind)
{
    for (int y = 0; y < im->height; y++) {
        unsigned char *row = (unsigned char *)im->data + (size_t)y * im->pitch;
        for (int x = 0; x < im->width * im->channels; x++)
            row[x] = kind == 0 ? 0 : kind == 1 ? 255 : ((x / im->channels / 7 + y / 5) & 1) * 255;
    }
}

/* mmabox, bit for bit against the reference: every K 3 .. 31 (each of its 14 kernel shapes: the
 * row pass's 1, 2 or 3 halo chunks in C1 k32 steps and a k16 one or, shifted, C1 alone; 2 to 5
 * row blocks an output block; the row sums in one FP16 part or two) on gray and RGB, on random
 * samples and on the extremes (all 0, all 255, blocks of both), 1101 x 101: the border strips (the
 * ring row sticks out of the image row) and the inside ones (staged stores), rows clamped at the
 * top and the bottom, at the default strip height and at 8, 24 and 40 rows (job->param). Under
 * TESSERA_SMALL_ONLY: K 3, 7, 11, 13, 17, 19, 23, 27, 31 (every shape still), the default height
 * and 24. */
TEST(gpu_conv_mmabox_every_k)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *v = ts_variant_find(TS_FAM_CONV, "mmabox");
    if (!v || !ts_variant_runnable(v, dev) || !tu_variant_selected("mmabox"))
        SKIP("mmabox not in the table, not runnable or not selected");
    const int small = tu_n_odd_sizes == tu_n_small_sizes;
    static const int params[] = {0, 24, 8, 40};
    static const int small_k[] = {3, 7, 11, 13, 17, 19, 23, 27, 31};
    uint64_t st = tu_seed() + 9;
    for (int ch = 1; ch <= 3; ch += 2)
        for (int kind = -1; kind < 3; kind++) {
            ts_image in = tu_random_image(1101, 101, ch, 1, &st);
            if (kind >= 0)
                fill_extreme(&in, kind);
            for (int i = 0; i < (small ? 9 : 15); i++) {
                char text[16];
                snprintf(text, sizeof text, "box:%d", small ? small_k[i] : 3 + 2 * i);
                ts_op op = tu_op(text);
                if (check_params(v, &op, &in, params, small ? 2 : 4)) {
                    ts_image_free(&in);
                    return;
                }
            }
            ts_image_free(&in);
        }
}

/* mmabox at the odd sizes (1x1, 1xN, Nx1, 33x17, 4097x3, ...; 1080p unless TESSERA_SMALL_ONLY),
 * gray and RGB, K 3, 9, 11, 17 and 31, and box:17 on the benchmark's 8K RGB8 image (the split row
 * sums, two halo chunks, the staged stores of the inside strips). */
TEST(gpu_conv_mmabox_sizes)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *v = ts_variant_find(TS_FAM_CONV, "mmabox");
    if (!v || !ts_variant_runnable(v, dev) || !tu_variant_selected("mmabox"))
        SKIP("mmabox not in the table, not runnable or not selected");
    ts_op ops[5] = {tu_op("box:3"), tu_op("box:9"), tu_op("box:11"), tu_op("box:17"), tu_op("box:31")};
    uint64_t st = tu_seed() + 10;
    check_sizes_gray_rgb(v, ops, 5, 3, &st);
}

/* mmasep2 and mmasep2b on every format they take (8-bit gray and RGB) at the odd sizes (1x1, 1xN,
 * Nx1, 33x17, 4097x3, ...; 1080p unless TESSERA_SMALL_ONLY), gauss:5 and gauss:7, and gauss:7 on
 * the benchmark's 8K RGB8 image (whose interior strips take the staged stores). */
TEST(gpu_conv_mmasep2_sizes)
{
    TU_GPU_OR_SKIP(dev);
    ts_op ops[2] = {tu_op("gauss:5"), tu_op("gauss:7")};
    for (int k = 0; k < 2; k++) {
        const ts_variant *v = mmasep2_row(dev, mmasep2_rows[k]);
        uint64_t st = tu_seed() + 8;
        if (v && check_sizes_gray_rgb(v, ops, 2, 1, &st))
            return;
    }
}

/* runsum (box filters by running sums): segment heights (job->param, rows) that cut the image
 * into many segments, from one row (most of a group past the segment) to more than a group,
 * several strips side by side with a partial last run, K up to 31 on every format (8-bit: K <= 15
 * the packed row pass, 17 and 31 the 32-bit one; RGB8 up to 17 double-buffered), a kernel file
 * of ones whose divisor is even and saturates (the general rounding) and one whose divisor is odd
 * and above the taps (the multiply-high with its bias). */
TEST(gpu_conv_runsum_segments)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *v = ts_variant_find(TS_FAM_CONV, "runsum");
    if (!v || !ts_variant_runnable(v, dev) || !tu_variant_selected("runsum"))
        SKIP("runsum not in the table or not selected");
    static const int params[] = {0, 1, 3, 8, 11, 17, 40, 72};
    uint64_t st = tu_seed() + 4;
    ts_op ops[7] = {tu_op("box:3"), tu_op("box:7"), tu_op("box:15"), tu_op("box:17"), tu_op("box:31"),
                    kernel_op("k5-ones-div2", "1 1 1 1 1  1 1 1 1 1  1 1 1 1 1  1 1 1 1 1  1 1 1 1 1"
                                              " / 2"),
                    kernel_op("k3-ones-div101", "1 1 1  1 1 1  1 1 1 / 101")};
    for (int ch = 1; ch <= 4; ch++)
        for (int bytes = 1; bytes <= 2; bytes++) {
            ts_image in = tu_random_image(1101, 61, ch, bytes, &st);
            for (int f = 0; f < 7; f++) {
                if (check_params(v, &ops[f], &in, params, sizeof params / sizeof params[0])) {
                    ts_image_free(&in);
                    return;
                }
            }
            ts_image_free(&in);
        }
}

/* runsum's double-buffered pair kernel (RGB8 at K <= 25 with the multiply-high rounding: the
 * default) against the single-buffered one it replaced there (job->param 512 + segment rows;
 * elsewhere 512 + S is S): every format, the odd sizes, box:3 .. 31 (8-bit: packed and 32-bit
 * row passes, K = 25 the double buffer's last, 27 past it), the kernel file of ones whose divisor
 * the multiply-high takes, at the default segments and at heights of one row, under a group, one
 * group and a part, several groups. Under TESSERA_SMALL_ONLY (the sanitizers) RGB8 alone (the
 * one format whose kernel the param picks), box:3 and box:17 (packed and 32-bit) at the default
 * heights on 1x1 .. 4097x3 and at 17 rows on 700x40, both kernels. */
TEST(gpu_conv_runsum_double_buffer)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *v = ts_variant_find(TS_FAM_CONV, "runsum");
    if (!v || !ts_variant_runnable(v, dev) || !tu_variant_selected("runsum"))
        SKIP("runsum not in the table or not selected");
    const int small = tu_n_odd_sizes == tu_n_small_sizes;
    static const int params[] = {0, 512, 1, 512 + 1, 3, 17, 512 + 17, 40, 512 + 72};
    const size_t np = small ? 2 : sizeof params / sizeof params[0];
    static const int tall[] = {0, 512, 17, 512 + 17};
    uint64_t st = tu_seed() + 7;
    ts_op ops[7] = {tu_op("box:3"),  tu_op("box:17"), tu_op("box:15"), tu_op("box:25"),
                    tu_op("box:27"), tu_op("box:31"), kernel_op("k3-ones-div101", "1 1 1  1 1 1  1 1 1 / 101")};
    const int nops = small ? 2 : 7;
    for (int ch = 1; ch <= 4; ch++)
        for (int bytes = 1; bytes <= 2; bytes++) {
            if (small && (ch != 3 || bytes != 1))
                continue;
            for (int s = 0; s < tu_n_small_sizes && (!small || s < 5); s++) {
                ts_image in = tu_random_image(tu_odd_sizes[s][0], tu_odd_sizes[s][1], ch, bytes, &st);
                for (int f = 0; f < nops; f++)
                    if (check_params(v, &ops[f], &in, params, np)) {
                        ts_image_free(&in);
                        return;
                    }
                ts_image_free(&in);
            }
            /* several strips and groups */
            ts_image in = tu_random_image(small ? 700 : 1101, small ? 40 : 100, ch, bytes, &st);
            for (int f = 0; f < nops; f++)
                if (check_params(v, &ops[f], &in, small ? tall : params,
                                 small ? sizeof tall / sizeof tall[0] : np)) {
                    ts_image_free(&in);
                    return;
                }
            ts_image_free(&in);
        }
}

/* Both RGB8 kernels at 8K (the benchmark's image: default segments of several groups, many
 * tiles a block), box:3 and box:17. */
TEST(gpu_conv_runsum_double_buffer_8k)
{
    TU_GPU_OR_SKIP(dev);
    if (tu_n_odd_sizes <= tu_n_small_sizes)
        SKIP("TESSERA_SMALL_ONLY: large images left out");
    const ts_variant *v = ts_variant_find(TS_FAM_CONV, "runsum");
    if (!v || !ts_variant_runnable(v, dev) || !tu_variant_selected("runsum"))
        SKIP("runsum not in the table or not selected");
    static const int params[] = {0, 512};
    uint64_t st = tu_seed() + 8;
    ts_op ops[2] = {tu_op("box:3"), tu_op("box:17")};
    const int w = tu_odd_sizes[tu_n_odd_sizes - 1][0], h = tu_odd_sizes[tu_n_odd_sizes - 1][1];
    ts_image in = tu_random_image(w, h, 3, 1, &st);
    int bad = 0;
    for (int f = 0; f < 2 && !bad; f++)
        bad = check_params(v, &ops[f], &in, params, sizeof params / sizeof params[0]);
    ts_image_free(&in);
}

/* runsum on rows that are not 16-byte aligned (a view one pixel into a device image): the
 * sample-by-sample loads and stores, checked against the reference of the same view; the pixel
 * left of the view must keep its poison. */
TEST(gpu_conv_runsum_unaligned_rows)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *v = ts_variant_find(TS_FAM_CONV, "runsum");
    if (!v || !ts_variant_runnable(v, dev) || !tu_variant_selected("runsum"))
        SKIP("runsum not in the table or not selected");
    uint64_t st = tu_seed() + 5;
    ts_op op = tu_op("box:5");
    for (int ch = 1; ch <= 4; ch++)
        for (int bytes = 1; bytes <= 2; bytes++) {
            const int W = 301, H = 23, sh = ch * bytes;
            ts_image in = tu_random_image(W, H, ch, bytes, &st), view = in, want = {0}, got;
            view.data = (unsigned char *)in.data + sh;
            view.width = W - 1;
            ts_job job;
            memset(&job, 0, sizeof job);
            memset(&got, 0, sizeof got);
            ts_status s = ts_ref_conv(&op, &view, &want);
            ts_image d_in = {0}, d_out = {0};
            job.op = &op;
            job.dev = dev;
            if (s == TS_OK)
                s = ts_gpu_stream_create(&job.stream);
            if (s == TS_OK && (s = ts_gpu_image_alloc(&d_in, W, H, ch, bytes)) == TS_OK &&
                (s = ts_gpu_image_alloc(&d_out, W, H, ch, bytes)) == TS_OK &&
                (s = ts_gpu_upload(&d_in, &in, job.stream)) == TS_OK &&
                (s = ts_gpu_image_fill(&d_out, 0xA5, job.stream)) == TS_OK) {
                job.in = d_in;
                job.out = d_out;
                job.in.data = (unsigned char *)d_in.data + sh;
                job.out.data = (unsigned char *)d_out.data + sh;
                job.in.width = job.out.width = W - 1;
                if ((s = tu_job_run(v, &job)) == TS_OK &&
                    (s = ts_image_alloc(&got, W, H, ch, bytes)) == TS_OK &&
                    (s = ts_gpu_download(&got, &d_out, job.stream)) == TS_OK)
                    s = ts_gpu_sync(job.stream);
            }
            CHECKF(s == TS_OK, "runsum on an unaligned view, %d ch %d-bit: %s: %s", ch, 8 * bytes,
                   ts_status_str(s), ts_error_detail());
            if (s == TS_OK) {
                ts_image gv = got;
                gv.data = (unsigned char *)got.data + sh;
                gv.width = W - 1;
                int x = 0, y = 0, c = 0;
                long d = tu_max_diff(&gv, &want, &x, &y, &c);
                CHECKF(d == 0, "runsum on an unaligned view, %d ch %d-bit: max diff %ld at x=%d "
                       "y=%d c=%d (TESSERA_SEED=%llu)", ch, 8 * bytes, d, x, y, c,
                       (unsigned long long)tu_seed());
                unsigned poison = bytes == 1 ? 0xA5u : 0xA5A5u;
                for (int yy = 0; yy < H; yy++)
                    CHECKF(ts_get(&got, 0, yy, 0) == poison, "runsum wrote left of the view (y=%d)",
                           yy);
            }
            ts_image_free(&got);
            ts_image_free(&want);
            ts_image_free(&in);
            ts_gpu_image_free(&d_in);
            ts_gpu_image_free(&d_out);
            if (job.stream)
                ts_gpu_stream_destroy(job.stream);
        }
}

/* ---------------------------------------------------------------- CPU tests */

/* Every conv row: unique name, a reason, a run function; naive, gemm and tiled take every job
 * (they must: they are the fallbacks); gemm's scratch stays within its bound. */
TEST(conv_variant_rows_well_formed)
{
    const char *names[64];
    int n = 0, have_cpu = 0;
    for (size_t i = 0; i < ts_variant_count(); i++) {
        const ts_variant *v = ts_variant_at(i);
        if (v->family != TS_FAM_CONV)
            continue;
        CHECKF(v->name && *v->name, "conv row %zu has no name", i);
        CHECKF(v->why && *v->why, "conv %s has no why", v->name);
        CHECKF(v->run != NULL, "conv %s has no run function", v->name);
        CHECKF(!ts_variant_is_gpu(v) || v->min_cc >= 75, "conv %s: min_cc %d below 75", v->name,
               v->min_cc);
        for (int j = 0; j < n; j++)
            CHECKF(strcmp(names[j], v->name) != 0, "conv %s listed twice", v->name);
        CHECK(n < 64);
        names[n++] = v->name;
        have_cpu = have_cpu || !ts_variant_is_gpu(v);
    }
    CHECKF(have_cpu, "conv has no cpu row");
    if (!ts_gpu_compiled())
        return;
    static const char *const fallbacks[] = {"naive", "gemm", "tiled"};
    for (int i = 0; i < 3; i++)
        CHECKF(ts_variant_find(TS_FAM_CONV, fallbacks[i]), "conv %s missing", fallbacks[i]);

    /* shapes only: the variants' supports and scratch functions must not touch the pixels */
    ts_job job;
    ts_op op;
    memset(&job, 0, sizeof job);
    job.op = &op;
    for (int k = 1; k <= TS_MAX_K; k += 2)
        for (int ch = 1; ch <= 4; ch++)
            for (int bytes = 1; bytes <= 2; bytes++) {
                char text[32];
                snprintf(text, sizeof text, "box:%d", k);
                op = tu_op(text);
                job.in = (ts_image){NULL, 0, 16384, 16384, ch, bytes};
                job.out = job.in;
                for (int i = 0; i < 3; i++) {
                    const ts_variant *v = ts_variant_find(TS_FAM_CONV, fallbacks[i]);
                    CHECKF(!v->supports || v->supports(&job),
                           "conv %s refuses K=%d, %d channels, %d-bit", v->name, k, ch, 8 * bytes);
                }
            }
    const ts_variant *gemm = ts_variant_find(TS_FAM_CONV, "gemm");
    CHECKF(gemm->scratch, "conv gemm has no scratch function");
    op = tu_op("box:31");
    job.in = (ts_image){NULL, 0, 16384, 16384, 4, 2};
    job.out = job.in;
    size_t big = gemm->scratch(&job);
    CHECKF(big > 0 && big <= ((size_t)256 << 20), "gemm scratch for 16384^2 RGBA16 K=31: %zu bytes",
           big);
    op = tu_op("box:3");
    job.in = (ts_image){NULL, 0, 5, 3, 3, 1};
    job.out = job.in;
    CHECKF(gemm->scratch(&job) == (size_t)9 * 15 * 3 * 4, "gemm scratch for 5x3 RGB K=3: %zu bytes",
           gemm->scratch(&job));
}

/* Each filter a sanitizer run keeps is one of the small-image filters (a renamed filter would
 * silently leave its path out of racecheck). */
TEST(conv_sanitize_quick_filters_exist)
{
    ts_op ops[MAX_FILTERS];
    int nf = small_filters(ops), kept = 0;
    for (int f = 0; f < nf; f++)
        kept += quick_filter(ops[f].text);
    CHECKF(kept == (int)N_QUICK, "%d of the %d quick filters are among the small-image filters",
           kept, (int)N_QUICK);
}

/* Whether variant `name` takes `op` on a 1000x500 image of this shape (shapes only). */
static int takes_op(const char *name, const ts_op *op, int ch, int bytes, size_t pitch)
{
    const ts_variant *v = ts_variant_find(TS_FAM_CONV, name);
    ts_job job;
    memset(&job, 0, sizeof job);
    job.op = op;
    job.in = (ts_image){NULL, pitch, 1000, 500, ch, bytes};
    job.out = job.in;
    return v && v->supports && v->supports(&job);
}

static int variant_takes(const char *name, const char *optext, int ch, int bytes, size_t pitch)
{
    ts_op op = tu_op(optext);
    return takes_op(name, &op, ch, bytes, pitch);
}

/* Whether mma takes a job: shapes and weights only (8-bit, K 3/5/7, weights FP16 holds). */
static int mma_takes(const char *optext, int k_text, int ch, int bytes, size_t pitch)
{
    ts_op op = k_text ? kernel_op("k", optext) : tu_op(optext);
    return takes_op("mma", &op, ch, bytes, pitch);
}

/* The ring variants copy 16-byte chunks: they need 16-byte aligned rows; pipe takes 16-bit and
 * float filters (FP32 sums), mmapipe 8-bit only (FP16 operands), both K 3, 5, 7 (K = 1 is roll's:
 * no halo rows for a ring to keep). */
TEST(conv_ring_variants_supports)
{
    if (!ts_gpu_compiled())
        SKIP("built without CUDA");
    for (int ch = 1; ch <= 4; ch++) {
        CHECKF(variant_takes("pipe", "gauss:3", ch, 1, 4096), "pipe refuses gauss:3 on %d ch", ch);
        CHECKF(variant_takes("pipe", "sharpen", ch, 2, 8192), "pipe refuses 16-bit sharpen");
        CHECKF(variant_takes("mmapipe", "gauss:7", ch, 1, 4096), "mmapipe refuses gauss:7 on %d ch",
               ch);
    }
    CHECKF(!variant_takes("pipe", "gauss:3", 3, 1, 4100), "pipe takes rows 4-byte aligned only");
    CHECKF(!variant_takes("mmapipe", "gauss:3", 3, 1, 4100),
           "mmapipe takes rows 4-byte aligned only");
    CHECKF(variant_takes("mma", "gauss:3", 3, 1, 4100), "mma refuses rows 4-byte aligned");
    CHECKF(!variant_takes("mmapipe", "gauss:3", 3, 2, 8192), "mmapipe takes a 16-bit image");
    CHECKF(!variant_takes("pipe", "gauss:9", 3, 1, 4096), "pipe takes K = 9");
    CHECKF(!variant_takes("mmapipe", "box:1", 3, 1, 4096), "mmapipe takes K = 1");
    for (int ch = 1; ch <= 4; ch++)
        for (int b = 1; b <= 2; b++) {
            CHECKF(variant_takes("roll", "box:1", ch, b, 8192), "roll refuses box:1 on %d ch", ch);
            CHECKF(!variant_takes("pipe", "box:1", ch, b, 8192), "pipe takes box:1 (roll's job)");
        }
    CHECKF(!variant_takes("pipe", "edge", 3, 1, 4096), "pipe takes a magnitude (two filters)");
    CHECKF(variant_takes("mmapipe", "edge", 3, 1, 4096), "mmapipe refuses edge");
}

/* mmasep takes mmapipe's float separable jobs at K = 5 and 7 (gauss) whose window needs two
 * k-steps (K = 5 on 3-4 channels, K = 7 on 2-4), nothing exact, no K = 3, no gray. */
TEST(conv_mmasep_supports)
{
    if (!ts_gpu_compiled())
        SKIP("built without CUDA");
    for (int ch = 3; ch <= 4; ch++)
        CHECKF(variant_takes("mmasep", "gauss:5", ch, 1, 4096), "mmasep refuses gauss:5 on %d ch", ch);
    for (int ch = 2; ch <= 4; ch++)
        CHECKF(variant_takes("mmasep", "gauss:7", ch, 1, 4096), "mmasep refuses gauss:7 on %d ch", ch);
    CHECKF(!variant_takes("mmasep", "gauss:5", 1, 1, 4096), "mmasep takes gray gauss:5");
    CHECKF(!variant_takes("mmasep", "gauss:7", 1, 1, 4096), "mmasep takes gray gauss:7");
    CHECKF(!variant_takes("mmasep", "gauss:5", 2, 1, 4096), "mmasep takes 2-channel gauss:5");
    CHECKF(!variant_takes("mmasep", "gauss:3", 3, 1, 4096), "mmasep takes K = 3");
    CHECKF(!variant_takes("mmasep", "gauss:9", 3, 1, 4096), "mmasep takes K = 9");
    CHECKF(!variant_takes("mmasep", "gauss:5", 3, 2, 8192), "mmasep takes a 16-bit image");
    CHECKF(!variant_takes("mmasep", "gauss:5", 3, 1, 4100), "mmasep takes unaligned rows");
    CHECKF(!variant_takes("mmasep", "box:5", 3, 1, 4096), "mmasep takes an exact filter");
    CHECKF(!variant_takes("mmasep", "sharpen", 3, 1, 4096), "mmasep takes sharpen");
}

/* mmasep2 takes mmapipe's float separable jobs at K = 5 and 7 on 1 and 3 channels (no alpha)
 * whose arithmetic stays within 0.25 of a step (the float filters' 1-step rule). */
TEST(conv_mmasep2_supports)
{
    if (!ts_gpu_compiled())
        SKIP("built without CUDA");
    for (int ch = 1; ch <= 3; ch += 2) {
        CHECKF(variant_takes("mmasep2", "gauss:5", ch, 1, 4096), "mmasep2 refuses gauss:5 on %d ch", ch);
        CHECKF(variant_takes("mmasep2", "gauss:7", ch, 1, 4096), "mmasep2 refuses gauss:7 on %d ch", ch);
    }
    CHECKF(!variant_takes("mmasep2", "gauss:7", 2, 1, 4096), "mmasep2 takes 2 channels");
    CHECKF(!variant_takes("mmasep2", "gauss:7", 4, 1, 4096), "mmasep2 takes 4 channels");
    CHECKF(!variant_takes("mmasep2", "gauss:3", 3, 1, 4096), "mmasep2 takes K = 3");
    CHECKF(!variant_takes("mmasep2", "gauss:9", 3, 1, 4096), "mmasep2 takes K = 9");
    CHECKF(!variant_takes("mmasep2", "gauss:7", 3, 2, 8192), "mmasep2 takes a 16-bit image");
    CHECKF(!variant_takes("mmasep2", "gauss:7", 3, 1, 4100), "mmasep2 takes unaligned rows");
    CHECKF(!variant_takes("mmasep2", "box:7", 3, 1, 4096), "mmasep2 takes an exact filter");
    for (int ch = 1; ch <= 4; ch++) /* mmasep2b: the same jobs */
        CHECKF(variant_takes("mmasep2b", "gauss:7", ch, 1, 4096) == (ch == 1 || ch == 3),
               "mmasep2b and mmasep2 differ on gauss:7 on %d ch", ch);
}

/* mmabox takes box filters K 3 .. 31 on 8-bit gray and RGB with 16-byte aligned rows, images
 * below 2^31 bytes (32-bit offsets), and no other filter of ones (its epilogue divides by K^2). */
TEST(conv_mmabox_supports)
{
    if (!ts_gpu_compiled())
        SKIP("built without CUDA");
    for (int k = 3; k <= 31; k += 2) {
        char text[16];
        snprintf(text, sizeof text, "box:%d", k);
        for (int ch = 1; ch <= 4; ch++)
            CHECKF(variant_takes("mmabox", text, ch, 1, 4096) == (ch == 1 || ch == 3),
                   "mmabox and %s on %d ch", text, ch);
        CHECKF(!variant_takes("mmabox", text, 3, 2, 8192), "mmabox takes 16-bit %s", text);
        CHECKF(!variant_takes("mmabox", text, 3, 1, 4100), "mmabox takes unaligned rows (%s)", text);
    }
    CHECKF(!variant_takes("mmabox", "box:1", 1, 1, 4096), "mmabox takes box:1");
    CHECKF(variant_takes("mmabox", "box:5", 1, 1, 4294960), "mmabox refuses 2 GB less a row");
    CHECKF(!variant_takes("mmabox", "box:5", 1, 1, 4294976), "mmabox takes past 2^31 bytes (32-bit offsets)");
    CHECKF(!variant_takes("mmabox", "gauss:5", 1, 1, 4096), "mmabox takes gauss:5");
    ts_op ones = kernel_op("k3-ones-div101", "1 1 1  1 1 1  1 1 1 / 101");
    CHECKF(!takes_op("mmabox", &ones, 1, 1, 4096), "mmabox takes ones over 101");
}

/* auto on an sm_90 device: mmasep2b where it was measured fastest (gauss:5 and gauss:7 on gray and
 * RGB), mmasep on RGBA (mmasep2b does not take it), mmapipe on gauss:3; mmabox on every gray and
 * RGB box, runsum on RGBA box (mmabox does not take it). */
TEST(conv_mmasep2b_auto_jobs)
{
    if (!ts_gpu_compiled())
        SKIP("built without CUDA");
    static const struct {
        const char *op;
        int ch;
        const char *want;
    } cases[] = {{"gauss:7", 3, "mmasep2b"}, {"gauss:5", 3, "mmasep2b"}, {"gauss:7", 1, "mmasep2b"},
                 {"gauss:5", 1, "mmasep2b"}, {"gauss:7", 4, "mmasep"},  {"gauss:3", 3, "mmapipe"},
                 {"box:3", 1, "mmabox"},     {"box:3", 3, "mmabox"},    {"box:5", 1, "mmabox"},
                 {"box:7", 3, "mmabox"},     {"box:17", 1, "mmabox"},   {"box:31", 3, "mmabox"},
                 {"box:15", 4, "runsum"}};
    ts_device dev;
    memset(&dev, 0, sizeof dev);
    dev.cc = 90;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ts_op op = tu_op(cases[i].op);
        ts_job job;
        memset(&job, 0, sizeof job);
        job.op = &op;
        job.in = (ts_image){NULL, 4096, 1000, 500, cases[i].ch, 1};
        job.out = job.in;
        const ts_variant *v = ts_variant_auto(&job, &dev);
        CHECKF(v && strcmp(v->name, cases[i].want) == 0, "auto on %s, %d ch: %s, want %s", cases[i].op,
               cases[i].ch, v ? v->name : "none", cases[i].want);
    }
}

/* runsum takes box filters (one exact output, every weight 1, any divisor) of any K, channel
 * count and depth, and nothing else. */
TEST(conv_runsum_supports)
{
    if (!ts_gpu_compiled())
        SKIP("built without CUDA");
    for (int ch = 1; ch <= 4; ch++)
        for (int b = 1; b <= 2; b++) {
            CHECKF(variant_takes("runsum", "box:1", ch, b, 8192), "runsum refuses box:1");
            CHECKF(variant_takes("runsum", "box:3", ch, b, 8192), "runsum refuses box:3");
            CHECKF(variant_takes("runsum", "box:31", ch, b, 8190), "runsum refuses box:31");
        }
    ts_op ones = kernel_op("ones", "1 1 1 1 1 1 1 1 1 / 4"), twos = kernel_op("twos", "2 2 2 2 2 2 2 2 2");
    CHECKF(takes_op("runsum", &ones, 3, 1, 4096), "runsum refuses a kernel file of ones");
    CHECKF(!takes_op("runsum", &twos, 3, 1, 4096), "runsum takes weights 2");
    CHECKF(!variant_takes("runsum", "gauss:3", 1, 1, 4096), "runsum takes gauss");
    CHECKF(!variant_takes("runsum", "sharpen", 1, 1, 4096), "runsum takes sharpen");
    CHECKF(!variant_takes("runsum", "edge", 1, 1, 4096), "runsum takes edge");
}

/* mma's supports: exact filters only with weights FP16 holds exactly (|w| <= 2048), float filters
 * only while sum |w - fp16(w)| * 255 <= 0.25 (then within 1 step of the reference), 8-bit only. */
TEST(conv_mma_fp16_bound)
{
    if (!ts_gpu_compiled())
        SKIP("built without CUDA");
    const ts_variant *v = ts_variant_find(TS_FAM_CONV, "mma");
    CHECKF(v && v->supports, "conv mma missing or without supports");
    if (!v || !v->supports)
        return;
    static const char *const taken[] = {"gauss:3", "gauss:5", "gauss:7", "sharpen", "sharpen:0.5",
                                        "edge", "box:3", "box:7", "emboss", "gauss:5:0.3"};
    for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++)
        for (int ch = 1; ch <= 4; ch++)
            CHECKF(mma_takes(taken[i], 0, ch, 1, 4096), "mma refuses %s on %d channels", taken[i], ch);
    static const char *const refused[] = {"box:1", "box:9", "gauss:15", "gauss:31"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        CHECKF(!mma_takes(refused[i], 0, 3, 1, 4096), "mma takes %s (K outside 3, 5, 7)", refused[i]);
    CHECKF(!mma_takes("gauss:3", 0, 3, 2, 8192), "mma takes a 16-bit image");
    CHECKF(!mma_takes("gauss:3", 0, 3, 1, 4098), "mma takes rows that are not 4-byte aligned");
    CHECKF(mma_takes("1.0001 0 0 0 1.0001 0 0 0 -1.0001", 1, 3, 1, 4096),
           "mma refuses a float filter 0.08 steps from its FP16 rounding");
    CHECKF(!mma_takes("1.0004 0 0 0 1.0004 0 0 0 -1.0004", 1, 3, 1, 4096),
           "mma takes a float filter 0.31 steps from its FP16 rounding (bound 0.25)");
    CHECKF(mma_takes("2048 0 0 0 1 0 0 0 -2048 / 4096", 1, 3, 1, 4096),
           "mma refuses integer weights of 2048 (exact in FP16)");
    CHECKF(!mma_takes("2049 0 0 0 1 0 0 0 0 / 4096", 1, 3, 1, 4096),
           "mma takes an integer weight of 2049 (not exact in FP16)");
    char big[49 * 7 + 1] = "";
    for (int i = 0; i < 49; i++) /* past KM_EXACT_WEIGHT_SUM: a float filter, sums near 2^24 */
        strcat(big, i % 2 ? "2000 " : "-2000 ");
    CHECKF(!mma_takes(big, 1, 1, 1, 4096),
           "mma takes a float filter whose FP32 sums of 98000 * 255 cannot stay within 0.25");
}

/* The tensor-core variants take a magnitude only as edge makes it (an exact 3 x 3 pair): their
 * kernels for other pairs are not compiled, so a pair built by hand must go to another variant. */
TEST(conv_mma_magnitude_only_exact_3x3)
{
    if (!ts_gpu_compiled())
        SKIP("built without CUDA");
    static const char *const mma[] = {"mma", "mmapipe"};
    for (int i = 0; i < 2; i++) {
        ts_op op = tu_op("edge");
        CHECKF(takes_op(mma[i], &op, 3, 1, 4096), "%s refuses edge", mma[i]);
        op.filter.exact = 0; /* the same pair in float weights (w holds them too) */
        CHECKF(!takes_op(mma[i], &op, 3, 1, 4096), "%s takes a float magnitude", mma[i]);
        ts_op big = tu_op("edge"); /* a 5 x 5 exact pair */
        ts_filter *f = &big.filter;
        memset(f->iw, 0, sizeof f->iw);
        memset(f->w, 0, sizeof f->w);
        f->k = 5;
        f->iw[12] = 1, f->iw[25 + 13] = 1, f->w[12] = 1, f->w[25 + 13] = 1;
        CHECKF(!takes_op(mma[i], &big, 1, 1, 4096), "%s takes a 5 x 5 magnitude", mma[i]);
        CHECKF(takes_op("roll", &big, 1, 1, 4096) || takes_op("tiled", &big, 1, 1, 4096),
               "no fast variant left for a 5 x 5 magnitude");
    }
}

/* conv_div_round_sat (the GPU's multiply-high division) against km_round_sat_i. */
TEST(conv_divisor_magic_matches_reference)
{
    static const int32_t big[] = {961, 1000, 1023, 1024, 1025, 4095, 16383, 16384, 16385,
                                  65535, 65536, 999999, 1000000};
    uint64_t st = tu_seed() ^ 0xD1Du;
    for (int m = 0; m < 2; m++) {
        int maxv = m ? 65535 : 255;
        for (int i = 0; i < 300 + (int)(sizeof big / sizeof big[0]); i++) {
            int32_t d = i < 300 ? i + 1 : big[i - 300];
            conv_div v = conv_div_make(d, maxv);
            int64_t top = (int64_t)maxv * d;
            /* around each rounding boundary of the first and last quotients, then at random */
            for (int64_t q = 0; q <= maxv; q = q < 4 ? q + 1 : q < maxv - 4 ? maxv - 4 : q + 1)
                for (int64_t e = -2; e <= 2; e++) {
                    int64_t a = q * d + d / 2 + e;
                    CHECKF(conv_div_round_sat(a, &v, maxv) == km_round_sat_i(a, d, maxv),
                           "d=%d maxv=%d a=%lld: %u, want %u", d, maxv, (long long)a,
                           conv_div_round_sat(a, &v, maxv), km_round_sat_i(a, d, maxv));
                }
            for (int j = 0; j < 2000; j++) {
                int64_t a = (int64_t)(tu_rand(&st) % (uint64_t)(top + 2 * d + 1)) - d;
                if (j & 1)
                    a = (int64_t)(tu_rand(&st) % 4294967296u) - 2147483648LL; /* any int32 */
                CHECKF(conv_div_round_sat(a, &v, maxv) == km_round_sat_i(a, d, maxv),
                       "d=%d maxv=%d a=%lld: %u, want %u", d, maxv, (long long)a,
                       conv_div_round_sat(a, &v, maxv), km_round_sat_i(a, d, maxv));
            }
        }
    }
}

/* conv_mag_exact (float square root plus integer fix-up) against km_magnitude_i. */
TEST(conv_magnitude_matches_reference)
{
    uint64_t st = tu_seed() ^ 0x3A6u;
    for (int64_t a = -1100; a <= 1100; a++) /* every 8-bit Sobel pair in a band */
        for (int64_t b = -1100; b <= 1100; b += 37)
            CHECKF(conv_mag_exact(a, b, 255) == km_magnitude_i(a, b, 255), "a=%lld b=%lld",
                   (long long)a, (long long)b);
    for (int j = 0; j < 2000000; j++) {
        int64_t lim = j % 3 == 0 ? 70000 : j % 3 == 1 ? 262140 : 2147483647;
        int64_t a = (int64_t)(tu_rand(&st) % (uint64_t)(2 * lim + 1)) - lim;
        int64_t b = (int64_t)(tu_rand(&st) % (uint64_t)(2 * lim + 1)) - lim;
        int maxv = j & 1 ? 65535 : 255;
        CHECKF(conv_mag_exact(a, b, maxv) == km_magnitude_i(a, b, maxv),
               "a=%lld b=%lld maxv=%d: %u, want %u", (long long)a, (long long)b, maxv,
               conv_mag_exact(a, b, maxv), km_magnitude_i(a, b, maxv));
    }
}

/* The float division of the DIVF epilogue: floor(fma(a, 1/d, 1/2)) is round-half-even(a / d)
 * for odd d with d (2 maxv + 1) < 2^23, every a in [0, maxv d] (the bound conv.cu relies on). */
TEST(conv_float_division_is_exact)
{
    static const int32_t ds[] = {3, 9, 25, 49, 63, 81, 121, 225, 961, 16383};
    for (int m = 0; m < 2; m++) {
        int maxv = m ? 65535 : 255;
        for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
            int32_t d = ds[i];
            if ((double)d * (2.0 * maxv + 1) >= 8388608.0)
                continue;
            float inv = (float)(1.0 / d);
            int64_t top = (int64_t)maxv * d, step = top > 3000000 ? 7 : 1;
            for (int64_t a = 0; a <= top; a += step) {
                unsigned got = (unsigned)floorf(fmaf((float)a, inv, 0.5f));
                CHECKF(got == km_round_sat_i(a, d, maxv), "d=%d maxv=%d a=%lld: %u, want %u", d,
                       maxv, (long long)a, got, km_round_sat_i(a, d, maxv));
            }
        }
    }
}
