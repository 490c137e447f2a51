/* test_cpu.c - the fast CPU variants (kernels/cpu_*.c) against the reference, and the CPU
 * pipeline's fused paths against the same variants run op by op.
 *
 * Every CPU row of the variant table but the reference runs every op of its family on odd sizes
 * (1x1, 1xN, Nx1, 33x17, 4097x3, 3x4097, 31x33, 257x129 and 1920x1080), random data, 1-4
 * channels, 8 and 16 bits, a pitched input, the output poisoned first, at 1 and 3 threads.
 * Tolerance as the README promises: bit for bit, but one step for float filters.
 */
#include "tessera.h"
#include "testutil.h"
#include "tst.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A copy of `in` whose rows lie further apart than they need (the variants must read the pitch). */
static ts_image pitched(const ts_image *in)
{
    ts_image p = *in;
    p.pitch = ts_row_bytes(in) + 6;
    p.data = malloc(p.pitch * (size_t)in->height);
    if (!p.data)
        abort();
    memset(p.data, 0x3C, p.pitch * (size_t)in->height);
    for (int y = 0; y < in->height; y++)
        memcpy((char *)p.data + (size_t)y * p.pitch, (const char *)in->data + (size_t)y * in->pitch,
               ts_row_bytes(in));
    return p;
}

/* Runs op with CPU variant v into a new, poisoned output (or hist). */
static ts_status run_variant(const ts_variant *v, const ts_op *op, const ts_image *in,
                             ts_image *out, uint32_t *hist)
{
    int w, h;
    ts_status st = ts_op_out_size(op, in->width, in->height, &w, &h);
    memset(out, 0, sizeof *out);
    if (st != TS_OK || (st = ts_image_alloc(out, w, h, in->channels, in->bytes)) != TS_OK)
        return st;
    memset(out->data, 0xA5, out->pitch * (size_t)h);
    ts_job job = {.op = op, .in = *in, .out = *out, .hist = hist};
    if (v->supports && !v->supports(&job))
        return TS_ERR_UNSUPPORTED;
    return v->run(&job);
}

/* The fast CPU rows of a family (all CPU rows but the reference). */
static int fast_rows(ts_family f, const ts_variant **vs)
{
    int n = 0;
    for (size_t i = 0; i < ts_variant_count(); i++) {
        const ts_variant *v = ts_variant_at(i);
        if (v->family == f && !ts_variant_is_gpu(v) && strcmp(v->name, "cpu") != 0)
            vs[n++] = v;
    }
    return n;
}

/* One op on one image: the reference once, each fast row at 1 and 3 threads on the image and on
 * a pitched copy. Returns the runs that matched, -1 after a failure. */
static int check_op(ts_family fam, const ts_op *op, const ts_image *in, long tol)
{
    const ts_variant *vs[8];
    int nv = fast_rows(fam, vs), ran = 0;
    ts_image want;
    int w, h;
    if (ts_op_out_size(op, in->width, in->height, &w, &h) != TS_OK)
        return 0; /* a crop box outside this image: an error for every variant */
    if (ts_ref_op(op, in, &want) != TS_OK) {
        tst_fail(__FILE__, __LINE__, "reference failed on %s: %s", op->text, ts_error_detail());
        return -1;
    }
    ts_image pin = pitched(in);
    for (int i = 0; i < nv; i++)
        for (int t = 0; t < 4; t++) {
            ts_image got;
            ts_ref_set_threads(t % 2 ? 3 : 1);
            ts_status st = run_variant(vs[i], op, t < 2 ? in : &pin, &got, NULL);
            ts_ref_set_threads(1);
            if (st == TS_ERR_UNSUPPORTED) {
                ts_image_free(&got);
                continue;
            }
            int x = 0, y = 0, c = 0;
            long d = st == TS_OK ? tu_max_diff(&got, &want, &x, &y, &c) : -2;
            if (st != TS_OK || d < 0 || d > tol) {
                tst_fail(__FILE__, __LINE__,
                         "%s %s on %s %dx%dx%d %d-bit (%s, %d threads): %s, max diff %ld (tol %ld) "
                         "at x=%d y=%d c=%d: got %u want %u (TESSERA_SEED=%llu)",
                         ts_family_name(fam), vs[i]->name, op->text, in->width, in->height,
                         in->channels, 8 * in->bytes, t < 2 ? "packed" : "pitched", t % 2 ? 3 : 1,
                         ts_status_str(st), d, tol, x, y, c, st == TS_OK ? ts_get(&got, x, y, c) : 0,
                         ts_get(&want, x, y, c), (unsigned long long)tu_seed());
                ts_image_free(&got);
                ts_image_free(&want);
                free(pin.data);
                return -1;
            }
            ts_image_free(&got);
            ran++;
        }
    ts_image_free(&want);
    free(pin.data);
    return ran;
}

/* Every op of `texts` on every size, channel count and depth; counts printed per family. */
static void check_family(ts_family fam, const char *const *texts, int nt, int large)
{
    uint64_t st = tu_seed() ^ (0x51D0u + fam);
    long runs = 0;
    int nsizes = large ? tu_n_small_sizes + 1 : tu_n_small_sizes;
    if (nsizes > tu_n_odd_sizes)
        nsizes = tu_n_odd_sizes;
    for (int o = 0; o < nt; o++) {
        ts_op op = tu_op(texts[o]);
        for (int s = 0; s < nsizes; s++)
            for (int ch = 1; ch <= 4; ch++)
                for (int bytes = 1; bytes <= 2; bytes++) {
                    ts_image in = tu_random_image(tu_odd_sizes[s][0], tu_odd_sizes[s][1], ch,
                                                  bytes, &st);
                    long tol = op.kind == TS_OP_CONV && !op.filter.exact ? 1 : 0;
                    int r = check_op(fam, &op, &in, tol);
                    ts_image_free(&in);
                    if (r < 0)
                        return;
                    runs += r;
                }
    }
    CHECKF(runs > 0, "%s: no fast CPU variant ran", ts_family_name(fam));
    printf("# %s: %ld fast CPU runs matched the reference\n", ts_family_name(fam), runs);
}

/* The families of issue 32 (clahe's CPU side is the reference alone so far). */
TEST(cpu_every_family_has_a_fast_row)
{
    static const ts_family fams[] = {TS_FAM_CONV, TS_FAM_GEOM, TS_FAM_HIST, TS_FAM_RESIZE};
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++) {
        ts_family f = fams[i];
        const ts_variant *vs[8];
        CHECKF(fast_rows((ts_family)f, vs) >= 1, "%s has no fast CPU row",
               ts_family_name((ts_family)f));
        CHECKF(vs[0]->auto_rank > ts_variant_find((ts_family)f, "cpu")->auto_rank,
               "%s: auto must prefer %s to the reference", ts_family_name((ts_family)f),
               vs[0]->name);
    }
}

TEST(cpu_conv_matches_reference)
{
    static const char *const ops[] = {"box:1",     "box:3",   "box:5",   "box:7",  "box:15",
                                      "box:31",    "gauss:3", "gauss:5", "gauss:7", "gauss:15",
                                      "gauss:31",  "gauss:5:0.3", "sharpen", "sharpen:0.5",
                                      "sharpen:3", "emboss",  "edge"};
    check_family(TS_FAM_CONV, ops, (int)(sizeof ops / sizeof ops[0]), 0);
}

TEST(cpu_conv_large)
{
    static const char *const ops[] = {"gauss:5", "box:3", "sharpen", "edge"};
    uint64_t st = tu_seed() ^ 0xB16u;
    for (int o = 0; o < 4; o++) {
        ts_op op = tu_op(ops[o]);
        for (int ch = 3; ch <= 4; ch++) {
            ts_image in = tu_random_image(1920, 1080, ch, 1, &st);
            int r = check_op(TS_FAM_CONV, &op, &in, op.filter.exact ? 0 : 1);
            ts_image_free(&in);
            CHECK(r > 0);
        }
    }
}

/* Kernel files: integer weights with divisors (odd, even, ties, negative sums), the int32 bound,
 * float weights, K past the unrolled sizes. */
TEST(cpu_conv_kernel_files)
{
    static const char *const texts[] = {
        "3 / 2",
        "1 2 1 2 4 2 1 2 1 / 2",
        "100 200 300 400 500 600 700 800 900 / 16384",
        "-3 1 -2 5 0 -1 2 -7 4 / 3",
        "0.11 -0.25 0.3 0.05 0.9 -0.12 0.2 0.01 -0.07",
        "1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 "
        "1 1 1 1 / 7",
        "2048 0 0 0 0  0 0 0 0 0  0 0 -2048 0 0  0 0 0 0 0  0 0 0 0 1 / 4096",
    };
    uint64_t st = tu_seed() ^ 0xF11Eu;
    long runs = 0;
    for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
        ts_op op;
        char err[200];
        memset(&op, 0, sizeof op);
        op.kind = TS_OP_CONV;
        snprintf(op.text, sizeof op.text, "kernel:t%zu", t);
        CHECKF(ts_filter_parse(texts[t], strlen(texts[t]), &op.filter, err, sizeof err) == TS_OK,
               "kernel %zu: %s", t, err);
        for (int s = 0; s < tu_n_small_sizes; s++)
            for (int ch = 1; ch <= 4; ch++)
                for (int bytes = 1; bytes <= 2; bytes++) {
                    ts_image in = tu_random_image(tu_odd_sizes[s][0], tu_odd_sizes[s][1], ch,
                                                  bytes, &st);
                    int r = check_op(TS_FAM_CONV, &op, &in, op.filter.exact ? 0 : 1);
                    ts_image_free(&in);
                    if (r < 0)
                        return;
                    runs += r;
                }
    }
    printf("# conv kernel files: %ld fast CPU runs matched the reference\n", runs);
}

TEST(cpu_geom_matches_reference)
{
    static const char *const ops[] = {"rotate:90", "rotate:180", "rotate:270", "transpose",
                                      "transverse", "flip", "flop"};
    check_family(TS_FAM_GEOM, ops, (int)(sizeof ops / sizeof ops[0]), 1);
}

TEST(cpu_equalize_matches_reference)
{
    static const char *const ops[] = {"equalize", "equalize:rgb"};
    check_family(TS_FAM_HIST, ops, 2, 1);
}

/* Skewed data (few values: the LUT's first-bin and one-value cases) and the histogram op. */
TEST(cpu_hist_counts_match_reference)
{
    const ts_variant *vs[8];
    int nv = fast_rows(TS_FAM_HIST, vs);
    uint64_t st = tu_seed() ^ 0x4157u;
    long runs = 0;
    for (int mode = 0; mode < 2; mode++)
        for (int s = 0; s < tu_n_small_sizes + 1 && s < tu_n_odd_sizes; s++)
            for (int ch = 1; ch <= 4; ch++)
                for (int bytes = 1; bytes <= 2; bytes++) {
                    ts_image in = s % 2 ? tu_band_image(tu_odd_sizes[s][0], tu_odd_sizes[s][1], ch,
                                                        bytes, 3, 9, &st)
                                        : tu_random_image(tu_odd_sizes[s][0], tu_odd_sizes[s][1],
                                                          ch, bytes, &st);
                    ts_op op = tu_op(mode ? "equalize:rgb" : "equalize");
                    size_t len = (size_t)ts_hist_count(op.hist_mode, ch) * ts_hist_bins(bytes);
                    uint32_t *want = malloc(len * 4), *got = malloc(len * 4);
                    CHECK(want && got);
                    ts_ref_hist(&in, op.hist_mode, want);
                    int bad = check_op(TS_FAM_HIST, &op, &in, 0) < 0;
                    op.kind = TS_OP_HIST;
                    for (int i = 0; i < nv && !bad; i++)
                        for (int t = 1; t <= 3 && !bad; t += 2) {
                            ts_image none;
                            memset(got, 0xA5, len * 4);
                            ts_ref_set_threads(t);
                            ts_job job = {.op = &op, .in = in, .hist = got};
                            ts_status rs = vs[i]->run(&job);
                            ts_ref_set_threads(1);
                            memset(&none, 0, sizeof none);
                            bad = rs != TS_OK || memcmp(got, want, len * 4) != 0;
                            if (bad)
                                tst_fail(__FILE__, __LINE__,
                                         "hist %s %s on %dx%dx%d %d-bit, %d threads: counts differ",
                                         vs[i]->name, mode ? "rgb" : "luma", in.width, in.height,
                                         ch, 8 * bytes, t);
                            runs++;
                        }
                    free(want);
                    free(got);
                    ts_image_free(&in);
                    if (bad)
                        return;
                }
    printf("# hist: %ld fast CPU histogram runs matched the reference\n", runs);
}

TEST(cpu_resize_matches_reference)
{
    static const char *const ops[] = {"resize:50%",         "resize:200%",      "resize:37x13",
                                      "resize:50%:box",     "resize:3x5:triangle",
                                      "resize:150%:cubic",  "resize:x7",        "thumbnail:16",
                                      "crop:5x3+1+1",       "crop:40x40-3-3",   "resize:33%"};
    check_family(TS_FAM_RESIZE, ops, (int)(sizeof ops / sizeof ops[0]), 0);
}

TEST(cpu_resize_large_reduction)
{
    static const char *const ops[] = {"resize:25%", "resize:640x360:box", "resize:1%"};
    uint64_t st = tu_seed() ^ 0x2E5u;
    for (int o = 0; o < 3; o++) {
        ts_op op = tu_op(ops[o]);
        for (int ch = 3; ch <= 4; ch++) {
            ts_image in = tu_random_image(1920, 1080, ch, 1 + (o == 2), &st);
            int r = check_op(TS_FAM_RESIZE, &op, &in, 0);
            ts_image_free(&in);
            CHECK(r > 0);
        }
    }
}

/* ---------------------------------------------------------------- fusion */

/* The chain through the CPU pipeline (fused where it can) against its ops run one by one with
 * the same variants (ts_pipeline_run_op: no fusion): bit for bit. */
static int check_chain(ts_pipeline *p, const char *text, const ts_image *in)
{
    ts_chain c;
    char err[200];
    if (ts_chain_parse(text, &c, err, sizeof err) != TS_OK) {
        tst_fail(__FILE__, __LINE__, "%s: %s", text, err);
        return -1;
    }
    ts_image fused, step;
    ts_run_report rep;
    ts_status st = ts_pipeline_run(p, &c, in, &fused, &rep);
    int ok = st == TS_OK;
    ts_image cur = *in;
    int owned = 0;
    for (int i = 0; i < c.n && ok; i++) {
        ok = ts_pipeline_run_op(p, &c.ops[i], rep.op[i].variant, &cur, &step, NULL) == TS_OK;
        if (owned)
            ts_image_free(&cur);
        cur = step;
        owned = 1;
    }
    int x = 0, y = 0, ch = 0;
    long d = ok ? tu_max_diff(&fused, &cur, &x, &y, &ch) : -2;
    if (!ok || d != 0)
        tst_fail(__FILE__, __LINE__,
                 "chain %s on %dx%dx%d %d-bit: fused differs from op by op (%s, diff %ld at "
                 "x=%d y=%d c=%d, TESSERA_SEED=%llu)",
                 text, in->width, in->height, in->channels, 8 * in->bytes, ts_error_detail(), d, x,
                 y, ch, (unsigned long long)tu_seed());
    if (st == TS_OK)
        ts_image_free(&fused);
    if (owned)
        ts_image_free(&cur);
    ts_chain_free(&c);
    return ok && d == 0 ? 1 : -1;
}

TEST(cpu_fused_chains_match_op_by_op)
{
    static const char *const chains[] = {
        "gauss:5,equalize,rotate:90", "box:3,equalize:rgb,flip", "edge,equalize,transpose",
        "sharpen,equalize",           "equalize,rotate:270",     "equalize:rgb,flop",
        "emboss,equalize:rgb,rotate:180,transverse", "equalize,equalize,rotate:90"};
    ts_pipeline *p;
    CHECK(ts_pipeline_create(&p, TS_BACKEND_CPU, NULL, 0) == TS_OK);
    uint64_t st = tu_seed() ^ 0xF05Eu;
    long runs = 0;
    for (size_t k = 0; k < sizeof chains / sizeof chains[0]; k++)
        for (int s = 0; s < tu_n_small_sizes; s++)
            for (int ch = 1; ch <= 4; ch++)
                for (int bytes = 1; bytes <= 2; bytes++) {
                    ts_image in = tu_random_image(tu_odd_sizes[s][0], tu_odd_sizes[s][1], ch,
                                                  bytes, &st);
                    ts_ref_set_threads(1 + (s & 1) * 2);
                    int r = check_chain(p, chains[k], &in);
                    ts_ref_set_threads(1);
                    ts_image_free(&in);
                    if (r < 0) {
                        ts_pipeline_destroy(p);
                        return;
                    }
                    runs++;
                }
    /* a photo-sized image: the equalization's table path (large images) inside the rotation */
    for (int ch = 3; ch <= 4; ch++) {
        ts_image in = tu_random_image(1920, 1080, ch, 1, &st);
        int r = check_chain(p, "gauss:5,equalize,rotate:90", &in);
        ts_image_free(&in);
        if (r < 0) {
            ts_pipeline_destroy(p);
            return;
        }
        runs++;
    }
    ts_pipeline_destroy(p);
    printf("# fusion: %ld fused chains matched op by op\n", runs);
}

/* Exact chains fused on the CPU equal the reference chain (float filters may differ by a step
 * before the equalization spreads it, so only exact ones are compared to the oracle). */
TEST(cpu_fused_exact_chain_matches_reference)
{
    static const char *const chains[] = {"box:3,equalize,rotate:90", "edge,equalize:rgb,flop"};
    ts_pipeline *p;
    CHECK(ts_pipeline_create(&p, TS_BACKEND_CPU, NULL, 0) == TS_OK);
    uint64_t st = tu_seed() ^ 0xE8AC7u;
    for (size_t k = 0; k < 2; k++)
        for (int ch = 1; ch <= 4; ch++)
            for (int bytes = 1; bytes <= 2; bytes++) {
                ts_image in = tu_random_image(257, 129, ch, bytes, &st), got, a, b;
                ts_chain c;
                char err[200];
                CHECK(ts_chain_parse(chains[k], &c, err, sizeof err) == TS_OK);
                CHECK(ts_pipeline_run(p, &c, &in, &got, NULL) == TS_OK);
                CHECK(ts_ref_op(&c.ops[0], &in, &a) == TS_OK);
                CHECK(ts_ref_op(&c.ops[1], &a, &b) == TS_OK);
                ts_image_free(&a);
                CHECK(ts_ref_op(&c.ops[2], &b, &a) == TS_OK);
                CHECKF(ts_image_equal(&got, &a), "%s on %d channels %d-bit differs from the "
                       "reference chain", chains[k], ch, 8 * bytes);
                ts_image_free(&a);
                ts_image_free(&b);
                ts_image_free(&got);
                ts_image_free(&in);
                ts_chain_free(&c);
            }
    ts_pipeline_destroy(p);
}

/* auto on the CPU takes the fast rows; a chain naming the reference runs it (and no fusion). */
TEST(cpu_auto_takes_fast_rows)
{
    ts_pipeline *p;
    CHECK(ts_pipeline_create(&p, TS_BACKEND_CPU, NULL, 0) == TS_OK);
    uint64_t st = tu_seed() ^ 0xA070u;
    ts_image in = tu_random_image(64, 48, 3, 1, &st), out;
    ts_chain c;
    char err[200];
    CHECK(ts_chain_parse("gauss:5,equalize,rotate:90,resize:50%", &c, err, sizeof err) == TS_OK);
    ts_run_report rep;
    CHECK(ts_pipeline_run(p, &c, &in, &out, &rep) == TS_OK);
    for (int i = 0; i < c.n; i++)
        CHECKF(rep.op[i].variant && strcmp(rep.op[i].variant->name, "cpu") != 0,
               "%s ran %s", c.ops[i].text, rep.op[i].variant ? rep.op[i].variant->name : "none");
    ts_image_free(&out);
    for (int f = 0; f < TS_FAM_COUNT; f++)
        CHECK(ts_pipeline_select(p, (ts_family)f, "cpu") == TS_OK);
    CHECK(ts_pipeline_run(p, &c, &in, &out, &rep) == TS_OK);
    for (int i = 0; i < c.n; i++)
        CHECKF(rep.op[i].variant && strcmp(rep.op[i].variant->name, "cpu") == 0,
               "%s ran %s with cpu selected", c.ops[i].text, rep.op[i].variant->name);
    ts_image_free(&out);
    ts_image_free(&in);
    ts_chain_free(&c);
    ts_pipeline_destroy(p);
}
