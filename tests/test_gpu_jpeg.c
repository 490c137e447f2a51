/* test_gpu_jpeg.c - the nvJPEG module (app/codec/gpu_jpeg.c) against libjpeg-turbo: JPEGs written here
 * with libjpeg (baseline 4:2:0, 4:2:2, 4:4:4, gray, progressive through jpeg_simple_progression)
 * at ordinary and odd sizes (1x1, 33x17, 4097x3), decoded by nvJPEG and by libjpeg; the largest
 * sample difference must stay within the bounds below (decoders differ in IDCT and chroma
 * upsampling, so exact equality is not the contract); each file must come back on the path its
 * kind calls for (engine or CUDA; never CPU for a file nvJPEG can decode). Bad files (truncated,
 * 12-bit, arithmetic-coded, not a JPEG, scrambled entropy data) between good ones are reported one
 * by one and leave the good ones' output bit-identical to a batch without them. Encode: nvJPEG's
 * JPEG decoded by libjpeg within 40 dB PSNR of libjpeg's own encode at the same quality, gray as
 * one component. The loader's refusal of a missing library is checked on every build (CPU too).
 *
 * The bounds: DIFF_MAX_444 for 4:4:4 and gray (IDCT and colour conversion rounding only),
 * DIFF_MAX_SUB for subsampled chroma (upsampling filters differ at edges), on the smooth,
 * photo-like images made here; the measured maxima are printed on every run. A wrong channel
 * order, pitch or row would differ by tens to hundreds.
 */
#include "gpu_jpeg.h"
#include "gpu_jpeg_int.h"
#include "jpeg_ref.h"
#include "testutil.h"

#include <jpeglib.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define DIFF_MAX_444 8
#define DIFF_MAX_SUB 16
#define PSNR_MIN 40.0

/* ---------------------------------------------------------------- libjpeg helpers */

struct jerr {
    struct jpeg_error_mgr mgr;
    jmp_buf jb;
};

static void jerr_exit(j_common_ptr ci)
{
    struct jerr *e = (struct jerr *)ci->err;
    longjmp(e->jb, 1);
}

enum { SUB_444, SUB_422, SUB_420 };

/* A JPEG of `im` (8-bit, 1 or 3 channels) in memory (malloc'd). */
static unsigned char *make_jpeg(const ts_image *im, int quality, int sub, int progressive,
                                size_t *len)
{
    struct jpeg_compress_struct ci;
    struct jerr je;
    unsigned char *buf = NULL;
    unsigned long n = 0;
    ci.err = jpeg_std_error(&je.mgr);
    je.mgr.error_exit = jerr_exit;
    if (setjmp(je.jb)) {
        jpeg_destroy_compress(&ci);
        free(buf);
        return NULL;
    }
    jpeg_create_compress(&ci);
    jpeg_mem_dest(&ci, &buf, &n);
    ci.image_width = (JDIMENSION)im->width;
    ci.image_height = (JDIMENSION)im->height;
    ci.input_components = im->channels;
    ci.in_color_space = im->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&ci);
    jpeg_set_quality(&ci, quality, TRUE);
    if (im->channels == 3) {
        ci.comp_info[0].h_samp_factor = sub == SUB_444 ? 1 : 2;
        ci.comp_info[0].v_samp_factor = sub == SUB_420 ? 2 : 1;
    }
    if (progressive)
        jpeg_simple_progression(&ci);
    jpeg_start_compress(&ci, TRUE);
    while (ci.next_scanline < ci.image_height) {
        JSAMPROW row = (JSAMPROW)((unsigned char *)im->data + (size_t)ci.next_scanline * im->pitch);
        jpeg_write_scanlines(&ci, &row, 1);
    }
    jpeg_finish_compress(&ci);
    jpeg_destroy_compress(&ci);
    *len = n;
    return buf;
}

/* Smooth gradients and waves plus a little noise: what photos look like to a DCT. */
static ts_image photo_like(int w, int h, int channels, uint64_t *rng)
{
    ts_image im;
    if (ts_image_alloc(&im, w, h, channels, 1) != TS_OK)
        abort();
    double fx = 0.02 + (tu_rand(rng) % 100) / 2000.0, fy = 0.03 + (tu_rand(rng) % 100) / 3000.0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < channels; c++) {
                double v = 128 + 80 * sin(x * fx + c * 1.3) * cos(y * fy - c * 0.7) +
                           30.0 * x / (w + 1) - 15.0 * y / (h + 1) + (double)(tu_rand(rng) % 5) - 2;
                ts_put(&im, x, y, c, v < 0 ? 0 : v > 255 ? 255 : (unsigned)v);
            }
    return im;
}

static double psnr(const ts_image *a, const ts_image *b)
{
    double se = 0;
    size_t n = 0;
    for (int y = 0; y < a->height; y++)
        for (int x = 0; x < a->width; x++)
            for (int c = 0; c < a->channels; c++, n++) {
                double d = (double)ts_get(a, x, y, c) - (double)ts_get(b, x, y, c);
                se += d * d;
            }
    if (se == 0)
        return 99.0;
    return 10.0 * log10(255.0 * 255.0 / (se / (double)n));
}

/* ---------------------------------------------------------------- the loader (every build) */

TEST(gpu_jpeg_probe_missing_library)
{
    char why[512];
    ts_status st = gj_probe("libtessera-no-such-nvjpeg.so.99", why, sizeof why);
    CHECK(st == TS_ERR_UNSUPPORTED);
    CHECKF(strncmp(why, "unavailable: ", 13) == 0 && strstr(why, "libtessera-no-such-nvjpeg"),
           "reason: %s", why);
    /* A library that opens but is not nvJPEG names the first missing function. */
    st = gj_probe("libm.so.6", why, sizeof why);
    CHECK(st == TS_ERR_UNSUPPORTED);
    CHECKF(strstr(why, "has no nvjpegCreateEx") != NULL, "reason: %s", why);
}

/* gj_load's answer is made once per process, so the absent library is checked in a fresh one:
 * this binary again (exec, so nothing of this process' loader state is inherited), running only
 * gpu_jpeg_unavailable_child with TESSERA_NVJPEG_LIB naming a missing file. */
TEST(gpu_jpeg_unavailable_says_why)
{
    int fd[2];
    CHECK(pipe(fd) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        setenv("TESSERA_NVJPEG_LIB", "/nonexistent/libnvjpeg.so.13", 1);
        setenv("TESSERA_GJ_CHILD", "1", 1);
        execl("/proc/self/exe", "test_unit", "gpu_jpeg_unavailable_child", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char buf[4096] = "";
    size_t got = 0;
    ssize_t n;
    while (got < sizeof buf - 1 && (n = read(fd[0], buf + got, sizeof buf - 1 - got)) > 0)
        got += (size_t)n;
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed:\n%s", buf);
    CHECKF(strstr(buf, "ok   test_gpu_jpeg.c:gpu_jpeg_unavailable_child"), "child said:\n%s", buf);
}

TEST(gpu_jpeg_unavailable_child)
{
    if (!getenv("TESSERA_GJ_CHILD"))
        SKIP("runs in the child process of gpu_jpeg_unavailable_says_why");
    char why[512] = "", why2[512] = "";
    gj_ctx *ctx = NULL;
    CHECK(gj_load(why, sizeof why) == TS_ERR_UNSUPPORTED);
    CHECK(gj_ctx_create(&ctx, NULL, NULL, why2, sizeof why2) == TS_ERR_UNSUPPORTED);
    CHECK(ctx == NULL);
    CHECKF(strcmp(why, why2) == 0, "load: %s; context: %s", why, why2);
    CHECKF(strncmp(why, "unavailable: ", 13) == 0, "reason: %s", why);
    /* The named library is the reason, or the build (without CUDA or nvjpeg.h). */
    CHECKF(strstr(why, "/nonexistent/libnvjpeg.so.13") ||
               (strstr(why, "built without") && !strstr(why, "libnvjpeg")),
           "reason: %s", why);
    printf("# unavailable nvJPEG says: %s\n", why);
}

/* ---------------------------------------------------------------- GPU */

typedef struct gpu_env {
    ts_stream s;
    gj_ctx *ctx;
} gpu_env;

/* A context on the test GPU, or a skip (a failure with TESSERA_REQUIRE_GPU set). */
#define GJ_CTX_OR_SKIP(env, opts)                                                                  \
    TU_GPU_OR_SKIP(dev__);                                                                         \
    (void)dev__;                                                                                   \
    gpu_env env = {NULL, NULL};                                                                    \
    do {                                                                                           \
        char why__[512];                                                                           \
        if (gj_load(why__, sizeof why__) != TS_OK) {                                               \
            CHECKF(!getenv("TESSERA_REQUIRE_GPU"), "TESSERA_REQUIRE_GPU set but nvJPEG %s", why__); \
            SKIP(why__);                                                                           \
        }                                                                                          \
        CHECK(ts_gpu_stream_create(&env.s) == TS_OK);                                              \
        CHECKF(gj_ctx_create(&env.ctx, env.s, opts, why__, sizeof why__) == TS_OK, "%s", why__);  \
    } while (0)

static void env_close(gpu_env *e)
{
    gj_ctx_destroy(e->ctx);
    ts_gpu_stream_destroy(e->s);
}

/* The device image of r, downloaded (host, packed). */
static int fetch(const gj_result *r, ts_stream s, ts_image *h)
{
    if (ts_image_alloc(h, r->d_im.width, r->d_im.height, r->d_im.channels, 1) != TS_OK)
        return -1;
    if (ts_gpu_download(h, &r->d_im, s) != TS_OK || ts_gpu_sync(s) != TS_OK) {
        ts_image_free(h);
        return -1;
    }
    return 0;
}

typedef struct kind {
    const char *name;
    int channels, sub, progressive;
} kind;

static const kind kinds[] = {
    {"baseline 4:2:0", 3, SUB_420, 0}, {"baseline 4:2:2", 3, SUB_422, 0},
    {"baseline 4:4:4", 3, SUB_444, 0}, {"baseline gray", 1, SUB_444, 0},
    {"progressive 4:2:0", 3, SUB_420, 1}, {"progressive 4:4:4", 3, SUB_444, 1},
    {"progressive gray", 1, SUB_444, 1},
};
#define N_KINDS ((int)(sizeof kinds / sizeof kinds[0]))

/* The last size is left out under TESSERA_SMALL_ONLY=1 (compute-sanitizer runs). */
static const int sizes[][2] = {{640, 480}, {1, 1}, {33, 17}, {4097, 3}, {3, 4097}, {1920, 1080}};
#define N_SIZES ((int)(sizeof sizes / sizeof sizes[0]))

static int small_only(void)
{
    const char *s = getenv("TESSERA_SMALL_ONLY");
    return s && *s && *s != '0';
}

static void decode_all_kinds(const gj_opts *opts)
{
    GJ_CTX_OR_SKIP(env, opts);
    uint64_t rng = tu_seed() ^ 0x6a09e667u;
    enum { N = N_KINDS * N_SIZES };
    unsigned char *buf[N];
    size_t len[N];
    gj_result res[N];
    memset(res, 0, sizeof res);
    int n = 0, nsizes = small_only() ? N_SIZES - 1 : N_SIZES;
    for (int k = 0; k < N_KINDS; k++)
        for (int z = 0; z < N_SIZES; z++) {
            if (z >= nsizes) {
                len[n] = 0, buf[n++] = NULL; /* left out: an empty file, routed to the CPU */
                continue;
            }
            ts_image im = photo_like(sizes[z][0], sizes[z][1], kinds[k].channels, &rng);
            buf[n] = make_jpeg(&im, 92, kinds[k].sub, kinds[k].progressive, &len[n]);
            ts_image_free(&im);
            CHECK(buf[n] != NULL);
            n++;
        }
    ts_status st = gj_decode_batch(env.ctx, (const unsigned char *const *)buf, len, n, res);
    CHECKF(st == TS_OK, "%s", ts_error_detail());
    int worst[N_KINDS] = {0}, paths[4] = {0};
    for (int i = 0; i < n && !tst_failed(); i++) {
        const kind *kd = &kinds[i / N_SIZES];
        const int *sz = sizes[i % N_SIZES];
        if (!buf[i]) {
            CHECK(res[i].status != TS_OK && res[i].path == GJ_PATH_CPU);
            continue;
        }
        CHECKF(res[i].status == TS_OK, "%s %dx%d: %s", kd->name, sz[0], sz[1], res[i].err);
        CHECKF(res[i].path == GJ_PATH_ENGINE || res[i].path == GJ_PATH_CUDA, "%s: path %s",
               kd->name, gj_path_name(res[i].path));
        /* The engines take baseline only: a progressive file on them would be a routing bug. */
        CHECKF(!(kd->progressive && res[i].path == GJ_PATH_ENGINE), "%s on the engines", kd->name);
        if (opts && opts->no_engine)
            CHECK(res[i].path == GJ_PATH_CUDA);
        paths[res[i].path]++;
        ts_image got, want;
        int comps = 0;
        CHECK(fetch(&res[i], env.s, &got) == 0);
        CHECK(jpeg_ref_decode(buf[i], len[i], &want, &comps) == 0);
        CHECKF(got.width == want.width && got.height == want.height &&
                   got.channels == want.channels,
               "%s: got %dx%dx%d, want %dx%dx%d", kd->name, got.width, got.height, got.channels,
               want.width, want.height, want.channels);
        int x = 0, y = 0, c = 0;
        long d = tu_max_diff(&got, &want, &x, &y, &c);
        int bound = kd->sub == SUB_444 ? DIFF_MAX_444 : DIFF_MAX_SUB;
        CHECKF(d <= bound, "%s %dx%d (%s path): |nvJPEG - libjpeg| = %ld at (%d, %d) channel %d, "
               "bound %d (TESSERA_SEED=%llu)", kd->name, sz[0], sz[1], gj_path_name(res[i].path),
               d, x, y, c, bound, (unsigned long long)tu_seed());
        if (d > worst[i / N_SIZES])
            worst[i / N_SIZES] = (int)d;
        ts_image_free(&got);
        ts_image_free(&want);
    }
    printf("# nvJPEG vs libjpeg-turbo, largest sample difference:");
    for (int k = 0; k < N_KINDS; k++)
        printf(" %s %d;", kinds[k].name, worst[k]);
    printf(" paths: engine %d, cuda %d%s\n", paths[GJ_PATH_ENGINE], paths[GJ_PATH_CUDA],
           gj_ctx_has_engine(env.ctx) ? "" : " (no engines)");
    gj_results_free(res, n);
    for (int i = 0; i < n; i++)
        free(buf[i]);
    env_close(&env);
}

TEST(gpu_jpeg_decode_matches_libjpeg) { decode_all_kinds(NULL); }

#ifdef GJ_ENABLED
/* nvJPEG's pinned allocator keeps a freed block and hands it to a later request it fits, never
 * to one much larger; and every call is counted. */
TEST(gpu_jpeg_pinned_blocks_kept)
{
    GJ_CTX_OR_SKIP(env, NULL); /* the kept blocks live while a device part is open */
    gj_alloc_counts a0, a1;
    gj_alloc_counts_get(&a0);
    if (strcmp(a0.mode, "pool") != 0) {
        env_close(&env);
        SKIP("TESSERA_NVJPEG_ALLOC=sync: nothing is kept");
    }
    size_t n = ((size_t)3 << 20) + 12345;
    void *p = NULL, *q = NULL, *r = NULL;
    CHECK(gj_pinned_alloc.pinned_malloc(NULL, &p, n, 0) == 0 && p);
    memset(p, 0x5a, n); /* host memory, all of it */
    CHECK(gj_pinned_alloc.pinned_free(NULL, p, n, 0) == 0);
    CHECK(gj_pinned_alloc.pinned_malloc(NULL, &q, n - 345, 0) == 0);
    CHECK(q == p); /* fits: the kept block */
    CHECK(gj_pinned_alloc.pinned_malloc(NULL, &r, 8 * n, 0) == 0 && r);
    CHECK(r != p); /* larger: a new one */
    gj_alloc_counts_get(&a1);
    CHECK(a1.pinned_reused == a0.pinned_reused + 1);
    CHECK(a1.n[1][0] == a0.n[1][0] + 3 && a1.n[1][1] == a0.n[1][1] + 1);
    CHECK(gj_pinned_alloc.pinned_free(NULL, q, n - 345, 0) == 0);
    CHECK(gj_pinned_alloc.pinned_free(NULL, r, 8 * n, 0) == 0);
    /* device memory goes through the pool: a decode counts its allocations */
    uint64_t rng = tu_seed() ^ 0x3c6ef372u;
    ts_image im = photo_like(640, 480, 3, &rng);
    size_t len = 0;
    unsigned char *jpg = make_jpeg(&im, 90, SUB_420, 1, &len);
    ts_image_free(&im);
    CHECK(jpg != NULL);
    gj_result res[1];
    memset(res, 0, sizeof res);
    const unsigned char *data[1] = {jpg};
    CHECK(gj_decode_batch(env.ctx, data, &len, 1, res) == TS_OK && res[0].status == TS_OK);
    gj_alloc_counts_get(&a0);
    CHECKF(a0.n[0][0] > 0 && a0.bytes[0] > 0, "device allocations %ld", a0.n[0][0]);
    gj_results_free(res, 1);
    free(jpg);
    env_close(&env);
}
#endif

TEST(gpu_jpeg_decode_without_engines)
{
    gj_opts o = {.host_threads = 3, .no_engine = 1};
    decode_all_kinds(&o);
}

/* A copy of `src` with the SOF0 marker changed to `marker` and its precision byte to `prec`. */
static unsigned char *patch_sof(const unsigned char *src, size_t len, int marker, int prec)
{
    unsigned char *b = malloc(len);
    if (!b)
        return NULL;
    memcpy(b, src, len);
    for (size_t i = 2; i + 4 < len; i++)
        if (b[i] == 0xFF && b[i + 1] == 0xC0) {
            b[i + 1] = (unsigned char)marker;
            b[i + 4] = (unsigned char)prec;
            return b;
        }
    free(b);
    return NULL;
}

/* The start of the entropy-coded data: just past the first SOS segment. */
static size_t scan_start(const unsigned char *b, size_t len)
{
    for (size_t i = 2; i + 3 < len; i++)
        if (b[i] == 0xFF && b[i + 1] == 0xDA)
            return i + 2 + ((size_t)b[i + 2] << 8 | b[i + 3]);
    return 0;
}

static void bad_between_good(int host_threads, int no_engine)
{
    gj_opts o = {.host_threads = host_threads, .no_engine = no_engine};
    GJ_CTX_OR_SKIP(env, &o);
    uint64_t rng = tu_seed() ^ 0xbb67ae85u;
    /* good files: baseline and progressive colour, gray */
    enum { NG = 4, NB = 8, N = NG + NB };
    unsigned char *good[NG];
    size_t glen[NG];
    for (int g = 0; g < NG; g++) {
        ts_image im = photo_like(300 + 17 * g, 200 + 9 * g, g == 3 ? 1 : 3, &rng);
        good[g] = make_jpeg(&im, 90, SUB_420, g == 1 || g == 2, &glen[g]);
        ts_image_free(&im);
        CHECK(good[g]);
    }
    /* bad files, each built from a good one */
    unsigned char *bad[NB];
    size_t blen[NB];
    const char *bad_name[NB] = {"truncated header", "12-bit", "arithmetic", "not a JPEG",
                                "scrambled entropy data", "empty", "cut in the scan",
                                "more than 100 scans"};
    /* scrambled data may decode to garbage silently; a cut file must not (libjpeg refuses it:
     * it used to come out grey-filled from nvJPEG), nor a scan bomb (libjpeg's scan limit) */
    int must_fail[NB] = {1, 1, 1, 1, 0, 1, 1, 1};
    blen[0] = 150;
    bad[0] = malloc(blen[0]);
    memcpy(bad[0], good[0], blen[0]);
    bad[1] = patch_sof(good[0], glen[0], 0xC1, 12), blen[1] = glen[0];
    bad[2] = patch_sof(good[0], glen[0], 0xC9, 8), blen[2] = glen[0];
    blen[3] = 4000;
    bad[3] = malloc(blen[3]);
    for (size_t i = 0; i < blen[3]; i++)
        bad[3][i] = (unsigned char)tu_rand(&rng);
    bad[4] = malloc(glen[0]), blen[4] = glen[0];
    memcpy(bad[4], good[0], glen[0]);
    for (size_t i = scan_start(bad[4], blen[4]) + 10; i + 2 < blen[4]; i += 7)
        bad[4][i] = (unsigned char)(tu_rand(&rng) | 1); /* never 0xFF 0x00 stuffing patterns */
    bad[5] = malloc(1), blen[5] = 0;
    blen[6] = glen[0] - 300; /* the end of the entropy data and EOI cut off */
    bad[6] = malloc(blen[6]);
    memcpy(bad[6], good[0], blen[6]);
    /* the progressive file's last scan (to its EOI) repeated 120 times */
    size_t last = glen[1] - 2;
    while (last > 2 && !(good[1][last] == 0xFF && good[1][last + 1] == 0xDA))
        last--;
    size_t scan = glen[1] - 2 - last;
    blen[7] = last + 120 * scan + 2;
    bad[7] = malloc(blen[7]);
    memcpy(bad[7], good[1], last);
    for (int k = 0; k < 120; k++)
        memcpy(bad[7] + last + (size_t)k * scan, good[1] + last, scan);
    memcpy(bad[7] + blen[7] - 2, "\xFF\xD9", 2);
    for (int b = 0; b < NB; b++)
        CHECK(bad[b]);

    /* reference: the good files alone */
    gj_result alone[NG];
    memset(alone, 0, sizeof alone);
    CHECK(gj_decode_batch(env.ctx, (const unsigned char *const *)good, glen, NG, alone) == TS_OK);
    ts_image want[NG];
    for (int g = 0; g < NG; g++) {
        CHECKF(alone[g].status == TS_OK, "good file %d alone: %s", g, alone[g].err);
        CHECK(fetch(&alone[g], env.s, &want[g]) == 0);
    }
    /* good, bad, good, bad, ... twice over, so states that saw errors are reused */
    const unsigned char *in[N];
    size_t len[N];
    int who[N]; /* >= 0: good index; < 0: -1 - bad index */
    for (int round = 0; round < 2; round++) {
        int n = 0;
        for (int k = 0; k < NB; k++) {
            int g = (k + round) % NG;
            if (k < NG)
                in[n] = good[g], len[n] = glen[g], who[n++] = g;
            in[n] = bad[k], len[n] = blen[k], who[n++] = -1 - k;
        }
        gj_result res[N];
        memset(res, 0, sizeof res);
        CHECKF(gj_decode_batch(env.ctx, in, len, n, res) == TS_OK, "%s", ts_error_detail());
        for (int i = 0; i < n && !tst_failed(); i++) {
            if (who[i] < 0) {
                int b = -1 - who[i];
                if (must_fail[b] || res[i].status != TS_OK) {
                    CHECKF(res[i].status != TS_OK && res[i].path == GJ_PATH_CPU && res[i].err[0],
                           "bad file (%s): status %d, path %s", bad_name[b], res[i].status,
                           gj_path_name(res[i].path));
                    if (round == 0)
                        printf("# %s -> CPU: %s\n", bad_name[b], res[i].err);
                }
                continue;
            }
            ts_image got;
            CHECKF(res[i].status == TS_OK, "good file %d among bad ones: %s", who[i], res[i].err);
            CHECK(fetch(&res[i], env.s, &got) == 0);
            int x, y, c;
            long d = tu_max_diff(&got, &want[who[i]], &x, &y, &c);
            ts_image_free(&got);
            CHECKF(d == 0, "good file %d differs by %ld at (%d, %d) next to bad files (round %d)",
                   who[i], d, x, y, round);
        }
        gj_results_free(res, N);
    }
    gj_results_free(alone, NG);
    for (int g = 0; g < NG; g++) {
        ts_image_free(&want[g]);
        free(good[g]);
    }
    for (int b = 0; b < NB; b++)
        free(bad[b]);
    env_close(&env);
}

TEST(gpu_jpeg_bad_files_alone) { bad_between_good(0, 0); }
TEST(gpu_jpeg_bad_files_one_thread_no_engines) { bad_between_good(1, 1); }

/* Encode with nvJPEG, decode with libjpeg; compare with libjpeg's encode at the same quality. */
TEST(gpu_jpeg_encode_round_trip)
{
    GJ_CTX_OR_SKIP(env, NULL);
    uint64_t rng = tu_seed() ^ 0x3c6ef372u;
    static const int esz[][2] = {{640, 480}, {1, 1}, {33, 17}, {4097, 3}, {3, 4097}, {1999, 1333}};
    int nsz = (int)(sizeof esz / sizeof esz[0]) - (small_only() ? 1 : 0);
    for (int ch = 1; ch <= 3; ch += 2)
        for (int z = 0; z < nsz; z++) {
            ts_image im = photo_like(esz[z][0], esz[z][1], ch, &rng), d_im;
            memset(&d_im, 0, sizeof d_im);
            CHECK(ts_gpu_image_alloc(&d_im, im.width, im.height, ch, 1) == TS_OK);
            CHECK(ts_gpu_upload(&d_im, &im, env.s) == TS_OK);
            unsigned char *gpu = NULL;
            size_t glen = 0;
            char err[256];
            gj_encode_opts eo = {90, 0};
            ts_status st = gj_encode(env.ctx, &d_im, &eo, &gpu, &glen, err, sizeof err);
            CHECKF(st == TS_OK, "encode %dx%dx%d: %s", im.width, im.height, ch, err);
            size_t clen = 0;
            unsigned char *cpu = make_jpeg(&im, 90, SUB_420, 0, &clen);
            ts_image a, b;
            int comps = 0;
            CHECK(jpeg_ref_decode(gpu, glen, &a, &comps) == 0);
            CHECKF(comps == ch, "%d-channel image encoded with %d components", ch, comps);
            CHECK(jpeg_ref_decode(cpu, clen, &b, NULL) == 0);
            CHECK(a.width == im.width && a.height == im.height && a.channels == ch);
            double p = psnr(&a, &b), q = psnr(&a, &im);
            /* PSNR over a handful of pixels says little: the 1x1 image gets a sample bound. */
            if (im.width * im.height >= 64)
                CHECKF(p >= PSNR_MIN, "%dx%dx%d: nvJPEG vs libjpeg encode %.1f dB (vs source %.1f)",
                       im.width, im.height, ch, p, q);
            else
                CHECKF(tu_max_diff(&a, &b, NULL, NULL, NULL) <= DIFF_MAX_444,
                       "%dx%dx%d: nvJPEG vs libjpeg encode differ by %ld", im.width, im.height, ch,
                       tu_max_diff(&a, &b, NULL, NULL, NULL));
            if (z == 0)
                printf("# encode q90 %s %dx%d: %zu bytes (libjpeg %zu), PSNR vs libjpeg's %.1f dB, "
                       "vs source %.1f dB\n", ch == 1 ? "gray" : "RGB 4:2:0", im.width, im.height,
                       glen, clen, p, q);
            free(gpu);
            free(cpu);
            ts_image_free(&a);
            ts_image_free(&b);
            ts_image_free(&im);
            ts_gpu_image_free(&d_im);
        }
    /* Shapes nvJPEG does not encode are refused with a reason, so the caller uses the CPU. */
    ts_image d4;
    memset(&d4, 0, sizeof d4);
    CHECK(ts_gpu_image_alloc(&d4, 8, 8, 4, 1) == TS_OK);
    unsigned char *o = NULL;
    size_t olen = 0;
    char err[256] = "";
    CHECK(gj_encode(env.ctx, &d4, NULL, &o, &olen, err, sizeof err) == TS_ERR_UNSUPPORTED);
    CHECK(o == NULL && strstr(err, "4 channel") != NULL);
    ts_gpu_image_free(&d4);
    env_close(&env);
}

/* The decoupled path gives the same pixels whatever the number of host threads. */
TEST(gpu_jpeg_threads_agree)
{
    gj_opts one = {.host_threads = 1, .no_engine = 1}, many = {.host_threads = 8, .no_engine = 1};
    GJ_CTX_OR_SKIP(e1, &one);
    gpu_env e8 = {NULL, NULL};
    char why[512];
    CHECK(ts_gpu_stream_create(&e8.s) == TS_OK);
    CHECKF(gj_ctx_create(&e8.ctx, e8.s, &many, why, sizeof why) == TS_OK, "%s", why);
    uint64_t rng = tu_seed() ^ 0xa54ff53au;
    enum { N = 12 };
    unsigned char *buf[N];
    size_t len[N];
    for (int i = 0; i < N; i++) {
        ts_image im = photo_like(200 + 31 * i, 150 + 7 * i, i % 4 == 3 ? 1 : 3, &rng);
        buf[i] = make_jpeg(&im, 85, i % 3, i % 2, &len[i]);
        ts_image_free(&im);
        CHECK(buf[i]);
    }
    gj_result r1[N], r8[N];
    memset(r1, 0, sizeof r1);
    memset(r8, 0, sizeof r8);
    CHECK(gj_decode_batch(e1.ctx, (const unsigned char *const *)buf, len, N, r1) == TS_OK);
    CHECK(gj_decode_batch(e8.ctx, (const unsigned char *const *)buf, len, N, r8) == TS_OK);
    for (int i = 0; i < N && !tst_failed(); i++) {
        CHECKF(r1[i].status == TS_OK && r8[i].status == TS_OK, "file %d: %s / %s", i, r1[i].err,
               r8[i].err);
        ts_image a, b;
        CHECK(fetch(&r1[i], e1.s, &a) == 0 && fetch(&r8[i], e8.s, &b) == 0);
        CHECKF(tu_max_diff(&a, &b, NULL, NULL, NULL) == 0, "file %d differs between 1 and 8 threads",
               i);
        ts_image_free(&a);
        ts_image_free(&b);
    }
    gj_results_free(r1, N);
    gj_results_free(r8, N);
    for (int i = 0; i < N; i++)
        free(buf[i]);
    env_close(&e1);
    env_close(&e8);
}

/* Contexts made on one shared device part (gj_dev_open: what the batch gives its workers), used
 * by concurrent threads, decode and encode as a context with a device part of its own does. */
typedef struct shared_arg {
    gj_dev *dev;
    int no_engine;
    unsigned char *const *buf;
    const size_t *len;
    int n;
    ts_image *out;       /* host copies of the decodes, n of them */
    unsigned char **jpg; /* the encodes of the decodes */
    size_t *jlen;
    int ok;
} shared_arg;

static void *shared_worker(void *p)
{
    shared_arg *a = p;
    ts_stream s = NULL;
    gj_ctx *c = NULL;
    char why[512];
    gj_opts o = {.host_threads = 2, .no_engine = a->no_engine};
    gj_result *r = calloc((size_t)a->n, sizeof *r);
    a->ok = r && ts_gpu_stream_create(&s) == TS_OK &&
            gj_ctx_create_on(&c, a->dev, s, &o, why, sizeof why) == TS_OK &&
            gj_decode_batch(c, (const unsigned char *const *)a->buf, a->len, a->n, r) == TS_OK;
    for (int i = 0; a->ok && i < a->n; i++) {
        a->ok = r[i].status == TS_OK && fetch(&r[i], s, &a->out[i]) == 0;
        char err[256];
        if (a->ok && r[i].d_im.channels == 3)
            a->ok = gj_encode(c, &r[i].d_im, NULL, &a->jpg[i], &a->jlen[i], err, sizeof err) ==
                    TS_OK;
    }
    if (r)
        gj_results_free(r, a->n);
    free(r);
    gj_ctx_destroy(c);
    if (s)
        ts_gpu_stream_destroy(s);
    return NULL;
}

/* engines = 0: every file on the decoupled path, outputs equal to the private context's; 1: the
 * engine states are shared (a context finding them all taken decodes on the decoupled path, whose
 * IDCT may differ slightly: decodes within twice the bound against libjpeg-turbo, encodes not
 * compared). */
static void shared_device_part(int engines)
{
    gj_opts po = {.host_threads = 2, .no_engine = !engines};
    GJ_CTX_OR_SKIP(ref, &po);
    gj_dev *dev = NULL;
    char why[512];
    gj_opts dopt = {.no_engine = !engines, .engine_states = 1};
    CHECKF(gj_dev_open(&dev, &dopt, why, sizeof why) == TS_OK, "%s", why);
    uint64_t rng = tu_seed() ^ 0x5eedu;
    enum { N = 6, T = 4 };
    unsigned char *buf[N];
    size_t len[N];
    for (int i = 0; i < N; i++) {
        ts_image im = photo_like(120 + 37 * i, 90 + 11 * i, i == 5 ? 1 : 3, &rng);
        buf[i] = make_jpeg(&im, 88, i % 3, i % 2, &len[i]);
        ts_image_free(&im);
        CHECK(buf[i]);
    }
    /* the reference: a private context, one thread */
    gj_result r[N];
    memset(r, 0, sizeof r);
    ts_image want[N];
    unsigned char *wjpg[N] = {0};
    size_t wlen[N] = {0};
    CHECK(gj_decode_batch(ref.ctx, (const unsigned char *const *)buf, len, N, r) == TS_OK);
    for (int i = 0; i < N; i++) {
        CHECKF(r[i].status == TS_OK && fetch(&r[i], ref.s, &want[i]) == 0, "file %d: %s", i,
               r[i].err);
        char err[256];
        if (r[i].d_im.channels == 3)
            CHECKF(gj_encode(ref.ctx, &r[i].d_im, NULL, &wjpg[i], &wlen[i], err, sizeof err) ==
                       TS_OK, "%s", err);
    }
    shared_arg a[T];
    pthread_t tid[T];
    ts_image out[T][N];
    unsigned char *jpg[T][N];
    size_t jlen[T][N];
    memset(out, 0, sizeof out);
    memset(jpg, 0, sizeof jpg);
    memset(jlen, 0, sizeof jlen);
    for (int t = 0; t < T; t++) {
        a[t] = (shared_arg){dev, !engines, buf, len, N, out[t], jpg[t], jlen[t], 0};
        CHECK(pthread_create(&tid[t], NULL, shared_worker, &a[t]) == 0);
    }
    for (int t = 0; t < T; t++)
        pthread_join(tid[t], NULL);
    for (int t = 0; t < T; t++) {
        CHECKF(a[t].ok, "thread %d failed", t);
        for (int i = 0; i < N && a[t].ok; i++) {
            long d = tu_max_diff(&out[t][i], &want[i], NULL, NULL, NULL);
            CHECKF(engines ? d <= 2 * DIFF_MAX_SUB : d == 0, /* each path within DIFF_MAX_SUB */
                   "thread %d file %d: the shared device part decodes otherwise (%ld)", t, i, d);
            CHECKF(engines || (jlen[t][i] == wlen[i] &&
                               (!wlen[i] || !memcmp(jpg[t][i], wjpg[i], wlen[i]))),
                   "thread %d file %d: the shared device part encodes otherwise", t, i);
        }
        for (int i = 0; i < N; i++) {
            ts_image_free(&out[t][i]);
            free(jpg[t][i]);
        }
    }
    for (int i = 0; i < N; i++) {
        ts_image_free(&want[i]);
        free(wjpg[i]);
        free(buf[i]);
    }
    gj_results_free(r, N);
    env_close(&ref);
    gj_dev_close(dev);
}

TEST(gpu_jpeg_shared_device_part) { shared_device_part(0); }
TEST(gpu_jpeg_shared_engine_states) { shared_device_part(1); }
