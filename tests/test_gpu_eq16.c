/* test_gpu_eq16.c - the cluster rung's RGB16 per-channel equalize (kernels/hist_eq16_cluster.cu).
 *
 * On the CPU: which jobs hist/cluster hands to it, the cluster sizes it takes, and that `auto`
 * picks the cluster rung for RGB16 equalize:rgb on an sm_90 device with clusters and not
 * elsewhere. On the GPU: every cluster size it takes (and param 1, the non-cluster alternative)
 * against the reference, exactly, on random and narrow-band images; and large one- and
 * two-valued images whose packed 16-bit counters wrap many times in every block (left out under
 * TESSERA_SMALL_ONLY: compute-sanitizer runs).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int eq16_params[] = {1, 3, 6, 9, 12, 15};
#define N_PARAMS ((int)(sizeof eq16_params / sizeof eq16_params[0]))

static ts_device made_up_device(int cc, size_t optin)
{
    ts_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "made-up sm_%d", cc);
    d.cc = d.cc_real = cc;
    d.sms = 132;
    d.smem_per_block = 48 * 1024;
    d.smem_per_block_optin = optin;
    d.smem_per_sm = optin + 1024;
    d.cluster_launch = cc >= 90;
    return d;
}

static ts_job shape_job(const ts_op *op, int ch, int bytes, const ts_device *dev, int param)
{
    ts_job job;
    memset(&job, 0, sizeof job);
    job.op = op;
    job.in.width = 7680, job.in.height = 4320, job.in.channels = ch, job.in.bytes = bytes;
    job.out = job.in;
    job.dev = dev;
    job.param = param;
    return job;
}

TEST(eq16_cluster_jobs_and_auto)
{
    if (!ts_gpu_compiled())
        SKIP("built without CUDA");
    const ts_variant *cl = ts_variant_find(TS_FAM_HIST, "cluster");
    CHECK(cl != NULL);
    ts_device h100 = made_up_device(90, 232448), a100 = made_up_device(80, 166912);
    ts_op rgb = tu_op("equalize:rgb"), luma = tu_op("equalize");
    ts_job j = shape_job(&rgb, 3, 2, &h100, 0);
    CHECKF(ts_variant_auto(&j, &h100) == cl, "auto took %s", ts_variant_auto(&j, &h100)->name);
    for (int k = 0; k <= 16; k++) {
        j.param = k;
        int want = k == 0 || k == 1 || k % 3 == 0;
        CHECKF(cl->supports(&j) == want, "cluster param %d: supports %d", k, !want);
    }
    /* below sm_90: refused, and auto takes another rung */
    j = shape_job(&rgb, 3, 2, &a100, 0);
    CHECK(!cl->supports(&j) && ts_variant_auto(&j, &a100) != cl);
    /* other shapes keep the ranks (opt) */
    static const int shapes[][2] = {{3, 1}, {4, 2}, {1, 2}};
    for (int s = 0; s < 3; s++) {
        j = shape_job(&rgb, shapes[s][0], shapes[s][1], &h100, 0);
        CHECKF(ts_variant_auto(&j, &h100) != cl, "auto took cluster for %dx%d", shapes[s][0],
               shapes[s][1]);
    }
    j = shape_job(&luma, 3, 2, &h100, 0);
    CHECK(ts_variant_auto(&j, &h100) != cl);
}

static int equal_at(const ts_variant *v, const ts_image *in, const ts_image *want, int param,
                    const char *what)
{
    ts_op op = tu_op("equalize:rgb");
    ts_image got;
    int x = 0, y = 0, c = 0;
    ts_status st = tu_gpu_run(v, &op, in, &got, param);
    if (st != TS_OK) {
        tst_fail(__FILE__, __LINE__, "cluster/%d on %dx%d %s: %s: %s", param, in->width,
                 in->height, what, ts_status_str(st), ts_error_detail());
        return 0;
    }
    long diff = tu_max_diff(&got, want, &x, &y, &c);
    if (diff != 0)
        tst_fail(__FILE__, __LINE__, "cluster/%d on %dx%d %s: differs by %ld at (%d, %d) channel "
                 "%d: %u, want %u", param, in->width, in->height, what, diff, x, y, c,
                 diff > 0 ? ts_get(&got, x, y, c) : 0, diff > 0 ? ts_get(want, x, y, c) : 0);
    ts_image_free(&got);
    return diff == 0;
}

static const ts_variant *cluster_or_skip(const ts_device *dev)
{
    const ts_variant *v = ts_variant_find(TS_FAM_HIST, "cluster");
    if (!v || !ts_variant_runnable(v, dev) || !dev->cluster_launch)
        return NULL;
    return v;
}

TEST(gpu_eq16_cluster_sizes)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *v = cluster_or_skip(dev);
    if (!v)
        SKIP("the device cannot launch thread-block clusters (sm_90)");
    uint64_t rng = tu_seed() ^ 0x4531;
    static const int sizes[][2] = {{33, 17}, {1, 1}, {257, 129}, {640, 480}, {4097, 3}};
    /* under compute-sanitizer (TESSERA_SMALL_ONLY): 33x17 and 1x1, random, K = 1, 3 and 15 */
    int small = getenv("TESSERA_SMALL_ONLY") != NULL, nz = small ? 2 : 5;
    for (int z = 0; z < nz; z++)
        for (int kind = 0; kind < 2 - small; kind++) {
            int w = sizes[z][0], h = sizes[z][1];
            ts_image in = kind ? tu_band_image(w, h, 3, 2, 40, 4039, &rng)
                               : tu_random_image(w, h, 3, 2, &rng);
            ts_op op = tu_op("equalize:rgb");
            ts_image want;
            CHECK(ts_ref_op(&op, &in, &want) == TS_OK);
            int ok = 1;
            for (int k = 0; k < N_PARAMS && ok; k++)
                if (!small || eq16_params[k] == 1 || eq16_params[k] == 3 || eq16_params[k] == 15)
                    ok = equal_at(v, &in, &want, eq16_params[k], kind ? "band" : "random");
            ts_image_free(&want);
            ts_image_free(&in);
            if (!ok)
                return;
        }
}

/* Millions of equal samples a channel: every count block's counters wrap, the low counter's
 * carry into its neighbour (even values next to an odd one that also wraps) included. */
TEST(gpu_eq16_cluster_wraps)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *v = cluster_or_skip(dev);
    if (!v)
        SKIP("the device cannot launch thread-block clusters (sm_90)");
    if (getenv("TESSERA_SMALL_ONLY"))
        SKIP("large images: left out under TESSERA_SMALL_ONLY");
    uint64_t rng = tu_seed() ^ 0x4557;
    static const unsigned bands[][2] = {{1000, 1001}, {1001, 1001}, {0, 0}, {65534, 65535},
                                        {7, 8}};
    for (int b = 0; b < 5; b++) {
        ts_image in = tu_band_image(4096, 2050, 3, 2, bands[b][0], bands[b][1], &rng);
        ts_op op = tu_op("equalize:rgb");
        ts_image want;
        CHECK(ts_ref_op(&op, &in, &want) == TS_OK);
        int ok = equal_at(v, &in, &want, 0, "band") && equal_at(v, &in, &want, 1, "band");
        ts_image_free(&want);
        ts_image_free(&in);
        if (!ok)
            return;
    }
}
