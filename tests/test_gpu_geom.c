/* test_gpu_geom.c - the GPU geometry variants (geom.cu, geom_opt.cu) against the CPU reference:
 * every variant of the table, every op, every pixel size (1 to 8 bytes), the odd sizes, bit-exact,
 * outputs poisoned before each run; round trips (rotate:90 four times, transpose twice); images
 * with odd alignments and pitch padding that must stay untouched. GPU tests skip without a GPU;
 * the table test runs everywhere.
 */
#include "tessera.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const geom_ops[] = {"rotate:90", "rotate:180", "rotate:270", "transpose",
                                       "transverse", "flip",      "flop"};
#define N_OPS ((int)(sizeof geom_ops / sizeof geom_ops[0]))

/* {channels, bytes}: pixels of 1, 2, 3, 4 (8-bit) and 2, 4, 6, 8 bytes (16-bit) */
static const int formats[][2] = {{1, 1}, {2, 1}, {3, 1}, {4, 1}, {1, 2}, {2, 2}, {3, 2}, {4, 2}};
#define N_FORMATS ((int)(sizeof formats / sizeof formats[0]))

#define MAX_VARIANTS 16
#define MSG 512

/* The geom GPU variants this device runs; the others are named and skipped. */
static int geom_variants(const ts_device *dev, const ts_variant **v)
{
    int n = 0;
    for (size_t i = 0; i < ts_variant_count(); i++) {
        const ts_variant *x = ts_variant_at(i);
        if (x->family != TS_FAM_GEOM || !ts_variant_is_gpu(x) || !tu_variant_selected(x->name))
            continue;
        if (!ts_variant_runnable(x, dev)) {
            printf("# geom %s skipped: needs compute capability %d.%d, device has %d.%d\n", x->name,
                   x->min_cc / 10, x->min_cc % 10, dev->cc / 10, dev->cc % 10);
            continue;
        }
        if (n < MAX_VARIANTS)
            v[n++] = x;
    }
    return n;
}

static void describe(char *msg, size_t len, const ts_variant *v, const ts_op *op, const ts_image *in)
{
    snprintf(msg, len, "geom %s, %s, %dx%d, %d channel(s) of %d bits (TESSERA_SEED=%llu)", v->name,
             op->text, in->width, in->height, in->channels, 8 * in->bytes,
             (unsigned long long)tu_seed());
}

/* Where `got` first differs from `want`, appended to msg. */
static void where(char *msg, size_t len, const ts_image *got, const ts_image *want)
{
    int x = 0, y = 0, c = 0;
    long d = tu_max_diff(got, want, &x, &y, &c);
    size_t n = strlen(msg);
    if (d < 0)
        snprintf(msg + n, len - n, ": output is %dx%d, want %dx%d", got->width, got->height,
                 want->width, want->height);
    else
        snprintf(msg + n, len - n, ": at (%d, %d) channel %d got %u, want %u", x, y, c,
                 ts_get(got, x, y, c), ts_get(want, x, y, c));
}

/* Runs `op` on `in` with each variant and compares with the reference; 0 when all match. */
static int check_variants(const ts_variant *const *v, int nv, const ts_op *op, const ts_image *in,
                          char *msg, size_t len)
{
    ts_image want;
    if (ts_ref_op(op, in, &want) != TS_OK) {
        snprintf(msg, len, "reference %s failed: %s", op->text, ts_error_detail());
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < nv && !bad; i++) {
        ts_image got;
        ts_status st = tu_gpu_run(v[i], op, in, &got, 0);
        describe(msg, len, v[i], op, in);
        if (st != TS_OK) {
            size_t n = strlen(msg);
            snprintf(msg + n, len - n, ": %s: %s", ts_status_str(st), ts_error_detail());
            bad = 1;
            continue;
        }
        if (!ts_image_equal(&got, &want)) {
            where(msg, len, &got, &want);
            bad = 1;
        }
        ts_image_free(&got);
    }
    ts_image_free(&want);
    return bad;
}

TEST(geom_table_rows_are_well_formed)
{
    int n_gpu = 0, prev_rank = 0;
    for (size_t i = 0; i < ts_variant_count(); i++) {
        const ts_variant *v = ts_variant_at(i);
        if (v->family != TS_FAM_GEOM)
            continue;
        CHECKF(v->name && v->name[0], "geom variant %zu has no name", i);
        CHECKF(v->why && v->why[0], "geom %s: empty `why`", v->name);
        CHECKF(v->run != NULL, "geom %s: no run function", v->name);
        CHECKF(ts_variant_find(TS_FAM_GEOM, v->name) == v, "geom %s: name not unique", v->name);
        if (!ts_variant_is_gpu(v))
            continue;
        CHECKF(v->min_cc == 75, "geom %s: min_cc %d, want 75", v->name, v->min_cc);
        CHECKF(v->auto_rank > prev_rank, "geom %s: auto_rank %d breaks the ladder order", v->name,
               v->auto_rank);
        CHECKF(v->scratch == NULL, "geom %s: geometry needs no scratch", v->name);
        prev_rank = v->auto_rank;
        n_gpu++;
    }
    CHECK(ts_variant_find(TS_FAM_GEOM, "cpu") != NULL);
#ifdef TS_HAVE_CUDA
    static const char *const ladder[] = {"naive", "shared", "padded", "opt"};
    for (int i = 0; i < 4; i++)
        CHECKF(ts_variant_find(TS_FAM_GEOM, ladder[i]) != NULL, "geom %s missing", ladder[i]);
    CHECK(n_gpu == 4);
    /* auto takes the top of the ladder on any device that runs it */
    ts_device dev;
    memset(&dev, 0, sizeof dev);
    dev.cc = dev.cc_real = 75;
    ts_op op = tu_op("rotate:90");
    ts_job job;
    memset(&job, 0, sizeof job);
    job.op = &op;
    job.in.width = 7, job.in.height = 5, job.in.channels = 3, job.in.bytes = 1;
    job.out = job.in;
    job.out.width = 5, job.out.height = 7;
    const ts_variant *a = ts_variant_auto(&job, &dev);
    CHECK(a != NULL && strcmp(a->name, "opt") == 0);
#else
    CHECK(n_gpu == 0);
#endif
}

/* Every variant, op and format on the small odd sizes (fresh data per size and format). */
TEST(gpu_geom_every_op_and_pixel_size_small)
{
    TU_GPU_OR_SKIP(dev);
    const ts_variant *v[MAX_VARIANTS];
    int nv = geom_variants(dev, v);
    uint64_t rng = tu_seed() ^ 0x6e0;
    char msg[MSG];
    for (int s = 0; s < tu_n_small_sizes; s++)
        for (int f = 0; f < N_FORMATS; f++) {
            ts_image in = tu_random_image(tu_odd_sizes[s][0], tu_odd_sizes[s][1], formats[f][0],
                                          formats[f][1], &rng);
            int bad = 0;
            for (int o = 0; o < N_OPS && !bad; o++) {
                ts_op op = tu_op(geom_ops[o]);
                bad = check_variants(v, nv, &op, &in, msg, sizeof msg);
            }
            ts_image_free(&in);
            CHECKF(!bad, "%s", msg);
        }
}

/* The large sizes: 1920x1080 in full, 7680x4320 for one format per op (every pixel size once)
 * so that the test stays near half a minute. */
TEST(gpu_geom_large_sizes)
{
    TU_GPU_OR_SKIP(dev);
    static const struct {
        const char *op;
        int channels, bytes;
    } big[] = {{"rotate:90", 4, 1}, {"transpose", 1, 1}, {"rotate:270", 3, 1},
               {"transverse", 4, 2}, {"flop", 3, 2},     {"rotate:180", 2, 1},
               {"flip", 1, 2}};
    const ts_variant *v[MAX_VARIANTS];
    int nv = geom_variants(dev, v);
    uint64_t rng = tu_seed() ^ 0xb16;
    char msg[MSG];
    for (int s = tu_n_small_sizes; s < tu_n_odd_sizes; s++) {
        int w = tu_odd_sizes[s][0], h = tu_odd_sizes[s][1];
        int huge = (long)w * h > 4000000;
        for (int f = 0; f < N_FORMATS; f++)
            for (int o = 0; o < N_OPS; o++) {
                if (huge) {
                    int want = 0;
                    for (size_t b = 0; b < sizeof big / sizeof big[0]; b++)
                        want |= strcmp(big[b].op, geom_ops[o]) == 0 &&
                                big[b].channels == formats[f][0] && big[b].bytes == formats[f][1];
                    if (!want)
                        continue;
                }
                ts_image in = tu_random_image(w, h, formats[f][0], formats[f][1], &rng);
                ts_op op = tu_op(geom_ops[o]);
                int bad = check_variants(v, nv, &op, &in, msg, sizeof msg);
                ts_image_free(&in);
                CHECKF(!bad, "%s", msg);
            }
    }
}

/* Applies `text` n times with variant v on the GPU (host round trip between runs) and checks
 * that the image comes back unchanged. */
static int round_trip(const ts_variant *v, const char *text, int n, const ts_image *in, char *msg,
                      size_t len)
{
    ts_op op = tu_op(text);
    ts_image cur = *in, next;
    int owned = 0;
    for (int i = 0; i < n; i++) {
        ts_status st = tu_gpu_run(v, &op, &cur, &next, 0);
        if (owned)
            ts_image_free(&cur);
        if (st != TS_OK) {
            describe(msg, len, v, &op, in);
            size_t k = strlen(msg);
            snprintf(msg + k, len - k, ": run %d: %s: %s", i + 1, ts_status_str(st),
                     ts_error_detail());
            return 1;
        }
        cur = next;
        owned = 1;
    }
    int bad = !ts_image_equal(&cur, in);
    if (bad) {
        describe(msg, len, v, &op, in);
        size_t k = strlen(msg);
        snprintf(msg + k, len - k, " applied %d times is not the identity", n);
        where(msg, len, &cur, in);
    }
    ts_image_free(&cur);
    return bad;
}

static void identity_test(const char *text, int n)
{
    TU_GPU_OR_SKIP(dev);
    static const int sizes[][2] = {{1, 1}, {1, 97}, {33, 17}, {4097, 3}, {257, 129}};
    const ts_variant *v[MAX_VARIANTS];
    int nv = geom_variants(dev, v);
    uint64_t rng = tu_seed() ^ (uint64_t)n;
    char msg[MSG];
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int f = 0; f < N_FORMATS; f++) {
            ts_image in = tu_random_image(sizes[s][0], sizes[s][1], formats[f][0], formats[f][1],
                                          &rng);
            int bad = 0;
            for (int i = 0; i < nv && !bad; i++)
                bad = round_trip(v[i], text, n, &in, msg, sizeof msg);
            ts_image_free(&in);
            CHECKF(!bad, "%s", msg);
        }
}

TEST(gpu_geom_rotate90_four_times_is_identity) { identity_test("rotate:90", 4); }

TEST(gpu_geom_transpose_twice_is_identity) { identity_test("transpose", 2); }

/* A device image `align` bytes into a poisoned buffer, rows `align` bytes longer than needed
 * (rounded up to `align`): data and pitch are multiples of `align` and of nothing larger. */
static ts_status odd_device_image(ts_image *d, void **base, size_t *len, int w, int h, int ch,
                                  int bytes, size_t align, ts_stream s)
{
    size_t row = (size_t)w * ch * bytes;
    size_t pitch = (row + align - 1) / align * align + align;
    *len = align + pitch * (size_t)h;
    ts_status st = ts_gpu_malloc(base, *len);
    if (st != TS_OK)
        return st;
    d->data = (unsigned char *)*base + align;
    d->pitch = pitch;
    d->width = w, d->height = h, d->channels = ch, d->bytes = bytes;
    return ts_gpu_memset(*base, 0xA5, *len, s);
}

/* Runs op with v between odd device images; checks the pixels against `want` and that every
 * other byte of the output buffer still holds the poison. */
static int check_odd_layout(const ts_device *dev, const ts_variant *v, const ts_op *op,
                            const ts_image *in, const ts_image *want, size_t align, char *msg,
                            size_t len)
{
    ts_job job;
    void *in_base = NULL, *out_base = NULL;
    unsigned char *h = NULL;
    size_t in_len = 0, out_len = 0;
    int mismatch = 0;
    ts_status st;
    memset(&job, 0, sizeof job);
    job.op = op;
    job.dev = dev;
    describe(msg, len, v, op, in);
    size_t k = strlen(msg);
    snprintf(msg + k, len - k, ", rows aligned to %zu bytes", align);
    if ((st = ts_gpu_stream_create(&job.stream)) != TS_OK)
        goto done;
    if ((st = odd_device_image(&job.in, &in_base, &in_len, in->width, in->height, in->channels,
                               in->bytes, align, job.stream)) != TS_OK ||
        (st = odd_device_image(&job.out, &out_base, &out_len, want->width, want->height,
                               in->channels, in->bytes, align, job.stream)) != TS_OK ||
        (st = ts_gpu_upload(&job.in, in, job.stream)) != TS_OK || (st = v->run(&job)) != TS_OK)
        goto done;
    h = malloc(out_len);
    if (!h) {
        st = ts_fail(TS_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((st = ts_gpu_copy_to_host(h, out_base, out_len, job.stream)) != TS_OK ||
        (st = ts_gpu_sync(job.stream)) != TS_OK)
        goto done;
    size_t row = ts_row_bytes(want);
    for (size_t i = 0; i < out_len; i++) {
        size_t at = i < align ? 0 : (i - align) % job.out.pitch;
        size_t y = i < align ? 0 : (i - align) / job.out.pitch;
        int pixel = i >= align && at < row;
        unsigned expect = pixel ? ((const unsigned char *)want->data)[y * want->pitch + at] : 0xA5;
        if (h[i] != expect) {
            k = strlen(msg);
            snprintf(msg + k, len - k, ": byte %zu %s row %zu is %u, want %u",
                     i < align ? i : at, i < align ? "before" : pixel ? "of" : "of the padding of",
                     y, h[i], expect);
            mismatch = 1;
            break;
        }
    }
done:
    free(h);
    ts_gpu_free(in_base);
    ts_gpu_free(out_base);
    if (job.stream)
        ts_gpu_stream_destroy(job.stream);
    if (st != TS_OK) {
        k = strlen(msg);
        snprintf(msg + k, len - k, ": %s: %s", ts_status_str(st), ts_error_detail());
        return 1;
    }
    return mismatch;
}

/* Rows starting at odd addresses (fallback paths), at 16 but not 256 bytes (opt's vector path
 * with another pitch), and writes confined to the pixels: pitch padding stays poisoned. */
TEST(gpu_geom_odd_alignment_and_padding_untouched)
{
    TU_GPU_OR_SKIP(dev);
    static const int sizes[][2] = {{1, 1}, {33, 17}, {1, 97}, {97, 1}, {67, 35}};
    static const size_t aligns[] = {1, 2, 4, 16};
    const ts_variant *v[MAX_VARIANTS];
    int nv = geom_variants(dev, v);
    uint64_t rng = tu_seed() ^ 0xa11;
    char msg[MSG];
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int f = 0; f < N_FORMATS; f++) {
            ts_image in = tu_random_image(sizes[s][0], sizes[s][1], formats[f][0], formats[f][1],
                                          &rng);
            int bad = 0;
            for (int o = 0; o < N_OPS && !bad; o++) {
                ts_op op = tu_op(geom_ops[o]);
                ts_image want;
                if (ts_ref_op(&op, &in, &want) != TS_OK) {
                    snprintf(msg, sizeof msg, "reference failed: %s", ts_error_detail());
                    bad = 1;
                    break;
                }
                for (int i = 0; i < nv && !bad; i++)
                    for (size_t a = 0; a < sizeof aligns / sizeof aligns[0] && !bad; a++)
                        bad = check_odd_layout(dev, v[i], &op, &in, &want, aligns[a], msg,
                                               sizeof msg);
                ts_image_free(&want);
            }
            ts_image_free(&in);
            CHECKF(!bad, "%s", msg);
        }
}
