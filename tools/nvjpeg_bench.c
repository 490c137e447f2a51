/* nvjpeg_bench.c - the nvJPEG module (app/codec/gpu_jpeg.c) alone on a corpus, before any pipeline:
 * files read into memory once, then
 *   decode auto    gj_decode_batch with the engines (baseline colour) and the decoupled path;
 *   decode cuda    the same with the engines off: the decoupled path on every host thread;
 *   decode host-huffman / gpu-huffman   the decoupled path with every baseline file's Huffman
 *                  decoded on the host / on the GPU (auto: the GPU from 1 MP up);
 *   encode         each decoded image back to JPEG (quality Q, 4:2:0), bitstream to the host;
 *   check          (--check) nvJPEG's decode against libjpeg-turbo's, largest sample difference.
 * Each timed stage runs the whole corpus --repeat times in batches of --batch files, after one
 * untimed pass. Prints images/s, MP/s, host CPU ms per image (getrusage: every thread), path
 * counts, host RSS and GPU memory peaks, and first the set-up's parts (context, nvJPEG handle,
 * decoders, warm-up, a worker's context); --csv appends one row per stage.
 * NVJPEG_BENCH_FIRST_HANDLE=BACKEND times the process's first handle (its allocations, a second
 * handle; NVJPEG_BENCH_HANDLE_LOOP=N more), NVJPEG_BENCH_OVERLAP=1|v1 the first handle made beside
 * the CUDA context on a thread of its own. Usage: nvjpeg_bench [--threads N] [--batch B] [--repeat R] [--quality Q]
 * [--check] [--csv FILE] [--name NAME] DIR|FILE...
 */
#include "../tests/jpeg_ref.h"
#include "kernel_file.h"
#include "gpu_jpeg.h"
#include "gpu_jpeg_int.h" /* the library's table: the batched-API experiment calls it directly */
#include "tessera.h"

#include <cuda_runtime.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h> /* before jpeglib.h, which uses FILE */
#include <jpeglib.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct file {
    char path[1024];
    unsigned char *data;
    size_t len;
} file;

static file *files;
static int nfiles, capfiles;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int is_jpeg_name(const char *p)
{
    const char *dot = strrchr(p, '.');
    return dot && (!strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg"));
}

static void add_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "nvjpeg_bench: %s: cannot open\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (nfiles == capfiles) {
        capfiles = capfiles ? capfiles * 2 : 64;
        files = realloc(files, (size_t)capfiles * sizeof *files);
    }
    file *x = &files[nfiles++];
    snprintf(x->path, sizeof x->path, "%s", path);
    x->len = n > 0 ? (size_t)n : 0;
    x->data = malloc(x->len ? x->len : 1);
    if (!files || !x->data || fread(x->data, 1, x->len, f) != x->len) {
        fprintf(stderr, "nvjpeg_bench: %s: cannot read\n", path);
        exit(1);
    }
    fclose(f);
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_path(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "nvjpeg_bench: %s: no such file or directory\n", path);
        exit(1);
    }
    if (!S_ISDIR(sb.st_mode)) {
        add_file(path);
        return;
    }
    DIR *d = opendir(path);
    struct dirent *e;
    char *names[4096];
    int n = 0;
    while (d && (e = readdir(d)) && n < 4096)
        if (is_jpeg_name(e->d_name))
            names[n++] = strdup(e->d_name);
    if (d)
        closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_name);
    for (int i = 0; i < n; i++) {
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", path, names[i]);
        add_file(p);
        free(names[i]);
    }
}

/* ---------------------------------------------------------------- stages */

typedef struct stats {
    double s;
    double cpu_ms; /* process CPU over the stage */
    long images;
    double mpix;
    int paths[4];
    size_t bytes;
} stats;

static double proc_cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 + ru.ru_stime.tv_sec * 1e3 +
           ru.ru_stime.tv_usec / 1e3;
}

static size_t gpu_used(void)
{
    size_t fr = 0, tot = 0;
    cudaMemGetInfo(&fr, &tot);
    return tot - fr;
}

static size_t gpu_peak, gpu_base;

static void note_gpu(void)
{
    size_t u = gpu_used();
    if (u > gpu_peak)
        gpu_peak = u;
}

/* One pass over the corpus in batches; keeps the last batch's results in res (batch entries). */
static int decode_pass(gj_ctx *ctx, int batch, gj_result *res, stats *st,
                       void (*each)(gj_result *r, int file_index, void *arg), void *arg)
{
    const unsigned char **d = malloc((size_t)batch * sizeof *d);
    size_t *l = malloc((size_t)batch * sizeof *l);
    for (int b = 0; b < nfiles; b += batch) {
        int n = nfiles - b < batch ? nfiles - b : batch;
        for (int k = 0; k < n; k++)
            d[k] = files[b + k].data, l[k] = files[b + k].len;
        if (gj_decode_batch(ctx, d, l, n, res) != TS_OK) {
            fprintf(stderr, "nvjpeg_bench: decode: %s\n", ts_error_detail());
            free(d), free(l);
            return -1;
        }
        note_gpu();
        for (int k = 0; k < n; k++) {
            if (st) {
                st->paths[res[k].path]++;
                st->images++;
                if (res[k].status == TS_OK)
                    st->mpix += (double)res[k].d_im.width * res[k].d_im.height / 1e6;
            }
            if (each)
                each(&res[k], b + k, arg);
        }
    }
    free(d), free(l);
    return 0;
}

typedef struct enc_arg {
    gj_ctx *ctx;
    int quality;
    stats *st;
    int fail;
} enc_arg;

static void encode_one(gj_result *r, int fi, void *arg)
{
    enc_arg *a = arg;
    if (r->status != TS_OK)
        return;
    unsigned char *out = NULL;
    size_t len = 0;
    char err[256];
    gj_encode_opts eo = {a->quality, 420};
    double t0 = now_s();
    if (gj_encode(a->ctx, &r->d_im, &eo, &out, &len, err, sizeof err) != TS_OK) {
        fprintf(stderr, "nvjpeg_bench: encode %s: %s\n", files[fi].path, err);
        a->fail = 1;
        return;
    }
    a->st->s += now_s() - t0;
    a->st->images++;
    a->st->mpix += (double)r->d_im.width * r->d_im.height / 1e6;
    a->st->bytes += len;
    free(out);
}

typedef struct check_arg {
    ts_stream s;
    long worst;
    char worst_file[1024];
    int checked, cpu;
} check_arg;

static void check_one(gj_result *r, int fi, void *arg)
{
    check_arg *a = arg;
    if (r->status != TS_OK) {
        a->cpu++;
        printf("  %s: CPU fallback: %s\n", files[fi].path, r->err);
        return;
    }
    ts_image want, got;
    if (jpeg_ref_decode(files[fi].data, files[fi].len, &want, NULL) != 0) {
        printf("  %s: libjpeg cannot decode it\n", files[fi].path);
        return;
    }
    if (ts_image_alloc(&got, r->d_im.width, r->d_im.height, r->d_im.channels, 1) != TS_OK ||
        ts_gpu_download(&got, &r->d_im, a->s) != TS_OK || ts_gpu_sync(a->s) != TS_OK) {
        printf("  %s: download failed: %s\n", files[fi].path, ts_error_detail());
        ts_image_free(&want);
        return;
    }
    long worst = -1;
    double sum = 0;
    if (got.width == want.width && got.height == want.height && got.channels == want.channels) {
        worst = 0;
        for (int y = 0; y < got.height; y++)
            for (int x = 0; x < got.width; x++)
                for (int c = 0; c < got.channels; c++) {
                    long d = (long)ts_get(&got, x, y, c) - (long)ts_get(&want, x, y, c);
                    d = d < 0 ? -d : d;
                    sum += (double)d;
                    if (d > worst)
                        worst = d;
                }
    }
    double mean = worst >= 0 ? sum / ((double)got.width * got.height * got.channels) : 0;
    printf("  %s: %s, %dx%dx%d, max |nvJPEG - libjpeg| %ld, mean %.3f\n", files[fi].path,
           gj_path_name(r->path), got.width, got.height, got.channels, worst, mean);
    if (worst < 0 || worst > a->worst) {
        a->worst = worst < 0 ? 999 : worst;
        snprintf(a->worst_file, sizeof a->worst_file, "%s", files[fi].path);
    }
    a->checked++;
    ts_image_free(&got);
    ts_image_free(&want);
}

static void report(const char *name, const char *stage, const stats *st, FILE *csv,
                   const char *corpus, int threads, int batch)
{
    double ips = st->s > 0 ? st->images / st->s : 0, mps = st->s > 0 ? st->mpix / st->s : 0;
    printf("%-19s %6ld images %8.3f s %9.1f images/s %8.1f MP/s %8.3f ms/image, host CPU %.2f "
           "ms/image", stage, st->images, st->s, ips, mps, st->images ? 1e3 * st->s / st->images : 0,
           st->images ? st->cpu_ms / st->images : 0);
    if (st->paths[GJ_PATH_ENGINE] + st->paths[GJ_PATH_CUDA] + st->paths[GJ_PATH_CPU])
        printf("  paths: engine %d, cuda %d, cpu %d", st->paths[GJ_PATH_ENGINE],
               st->paths[GJ_PATH_CUDA], st->paths[GJ_PATH_CPU]);
    if (st->bytes)
        printf("  %.2f bytes/pixel", (double)st->bytes / (st->mpix * 1e6));
    printf("\n");
    if (csv)
        fprintf(csv, "%s,%s,%s,%d,%d,%ld,%.4f,%.2f,%.2f,%d,%d,%d,%zu,%.3f\n", name, corpus, stage,
                threads, batch, st->images, st->s, ips, mps, st->paths[GJ_PATH_ENGINE],
                st->paths[GJ_PATH_CUDA], st->paths[GJ_PATH_CPU], st->bytes,
                st->images ? st->cpu_ms / st->images : 0);
}

/* ---------------------------------------------------------------- the batched API, raw */

/* nvjpegDecodeBatched on a handle of one backend: `threads` host threads, each with its own state
 * and stream, each decoding batches of `batch` files (the corpus cycled) into buffers of its own.
 * Measures images/s and the process's CPU per image: is the batched API's host work lighter
 * than the decoupled path's? */
typedef struct bx_arg {
    nvjpegHandle_t h;
    int batch, rounds, first, fail;
    size_t cap, pitch;
} bx_arg;

static void *bx_thread(void *p)
{
    bx_arg *a = p;
    cudaStream_t st;
    nvjpegJpegState_t js = NULL;
    const unsigned char **d = calloc((size_t)a->batch, sizeof *d);
    size_t *l = calloc((size_t)a->batch, sizeof *l);
    nvjpegImage_t *out = calloc((size_t)a->batch, sizeof *out);
    cudaSetDevice(0);
    if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess ||
        NV.nvjpegJpegStateCreate(a->h, &js) != NVJPEG_STATUS_SUCCESS ||
        NV.nvjpegDecodeBatchedInitialize(a->h, js, a->batch, 1, NVJPEG_OUTPUT_RGBI) !=
            NVJPEG_STATUS_SUCCESS) {
        a->fail = 1;
        return NULL;
    }
    for (int k = 0; k < a->batch; k++) {
        if (cudaMalloc((void **)&out[k].channel[0], a->cap) != cudaSuccess) {
            a->fail = 1;
            return NULL;
        }
    }
    for (int r = 0; r < a->rounds && !a->fail; r++) {
        for (int k = 0; k < a->batch; k++) {
            file *f = &files[(a->first + r * a->batch + k) % nfiles];
            d[k] = f->data, l[k] = f->len;
            out[k].pitch[0] = a->pitch; /* the corpus' widest file */
        }
        if (NV.nvjpegDecodeBatched(a->h, js, d, l, out, st) != NVJPEG_STATUS_SUCCESS ||
            cudaStreamSynchronize(st) != cudaSuccess)
            a->fail = 1;
    }
    for (int k = 0; k < a->batch; k++)
        cudaFree(out[k].channel[0]);
    NV.nvjpegJpegStateDestroy(js);
    cudaStreamDestroy(st);
    free(d), free(l), free(out);
    return NULL;
}

static void batched_api(const char *label, nvjpegBackend_t backend, int batch, int threads,
                        int images)
{
    nvjpegHandle_t h = NULL;
    double t0 = now_s();
    if (NV.nvjpegCreateEx(backend, NULL, NULL, 0, &h) != NVJPEG_STATUS_SUCCESS) {
        printf("batched %-11s batch %3d threads %d: no handle\n", label, batch, threads);
        return;
    }
    double t_handle = now_s() - t0;
    unsigned maxh = 0, maxw = 0;
    nvjpegJpegStream_t js;
    NV.nvjpegJpegStreamCreate(h, &js);
    for (int f = 0; f < nfiles; f++) {
        unsigned w = 0, hh = 0;
        if (NV.nvjpegJpegStreamParseHeader(h, files[f].data, files[f].len, js) ==
                NVJPEG_STATUS_SUCCESS &&
            NV.nvjpegJpegStreamGetFrameDimensions(js, &w, &hh) == NVJPEG_STATUS_SUCCESS) {
            maxh = hh > maxh ? hh : maxh;
            maxw = w > maxw ? w : maxw;
        }
    }
    NV.nvjpegJpegStreamDestroy(js);
    pthread_t tid[16];
    bx_arg a[16];
    threads = threads > 16 ? 16 : threads;
    int rounds = images / (batch * threads) > 0 ? images / (batch * threads) : 1;
    for (int pass = 0; pass < 2; pass++) { /* an untimed pass, then the timed one */
        double c0 = proc_cpu_ms(), w0 = now_s();
        int fail = 0;
        for (int t = 0; t < threads; t++) {
            a[t] = (bx_arg){h, batch, pass ? rounds : 1, t * batch, 0, (size_t)3 * maxw * maxh,
                            (size_t)3 * maxw};
            pthread_create(&tid[t], NULL, bx_thread, &a[t]);
        }
        for (int t = 0; t < threads; t++) {
            pthread_join(tid[t], NULL);
            fail |= a[t].fail;
        }
        double s = now_s() - w0, cpu = proc_cpu_ms() - c0;
        long n = (long)rounds * batch * threads;
        if (fail)
            printf("batched %-11s batch %3d threads %d: failed\n", label, batch, threads);
        else if (pass)
            printf("batched %-11s batch %3d threads %d: %5ld images %7.3f s %8.1f images/s, "
                   "host CPU %.2f ms/image (handle %.0f ms, threads' states included)\n",
                   label, batch, threads, n, s, n / s, cpu / n, 1e3 * t_handle);
        if (fail)
            break;
    }
    NV.nvjpegDestroy(h);
}

static double overlap_t0, overlap_times[2];
static const char *overlap_status = "-";
static void *overlap_handle(void *arg)
{
    (void)arg;
    nvjpegHandle_t h;
    overlap_times[0] = now_s() - overlap_t0;
    const char *how = getenv("NVJPEG_BENCH_OVERLAP");
    nvjpegStatus_t e;
    if (how && strcmp(how, "v1") == 0) { /* the library's own allocators: no CUDA call of ours */
        e = NV.nvjpegCreateEx(NVJPEG_BACKEND_DEFAULT, NULL, NULL, 0, &h);
    } else {
        gj_alloc_init();
        e = NV.nvjpegCreateExV2(NVJPEG_BACKEND_DEFAULT, &gj_dev_alloc, &gj_pinned_alloc, 0, &h);
    }
    overlap_times[1] = now_s() - overlap_t0;
    overlap_status = gj_nvj_str(e);
    return NULL;
}

static void usage(void)
{
    fprintf(stderr, "usage: nvjpeg_bench [--threads N] [--batch B] [--repeat R] [--quality Q] "
                    "[--check] [--csv FILE] [--name NAME] DIR|FILE...\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int threads = 0, batch = 16, repeat = 3, quality = 90, check = 0;
    const char *csv_path = NULL, *name = "corpus";
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--check"))
            check = 1;
        else if (i + 1 >= argc)
            usage();
        else if (!strcmp(a, "--threads"))
            threads = atoi(argv[++i]);
        else if (!strcmp(a, "--batch"))
            batch = atoi(argv[++i]);
        else if (!strcmp(a, "--repeat"))
            repeat = atoi(argv[++i]);
        else if (!strcmp(a, "--quality"))
            quality = atoi(argv[++i]);
        else if (!strcmp(a, "--csv"))
            csv_path = argv[++i];
        else if (!strcmp(a, "--name"))
            name = argv[++i];
        else
            usage();
    }
    if (i >= argc || batch < 1 || repeat < 1 || threads < 0 || quality < 1 || quality > 100)
        usage();
    for (; i < argc; i++)
        add_path(argv[i]);
    if (!nfiles) {
        fprintf(stderr, "nvjpeg_bench: no JPEG files given\n");
        return 1;
    }
    char why[512];
    if (gj_load(why, sizeof why) != TS_OK) {
        fprintf(stderr, "nvjpeg_bench: nvJPEG %s\n", why);
        return 1;
    }
    ts_device dev;
    app_gpu_env();
    /* NVJPEG_BENCH_OVERLAP=1: the first handle made on a thread of its own while this one makes
     * the CUDA context, each timed from the same start (then exit) */
    if (getenv("NVJPEG_BENCH_OVERLAP")) {
        overlap_t0 = now_s();
        pthread_t th;
        pthread_create(&th, NULL, overlap_handle, NULL);
        ts_status cs = ts_gpu_open(&dev);
        double tc = now_s() - overlap_t0;
        pthread_join(th, NULL);
        printf("overlap: context %.1f ms (%s); handle on its own thread from %.1f to %.1f ms "
               "(%s); both done at %.1f ms\n", 1e3 * tc, cs == TS_OK ? "ok" : "failed",
               1e3 * overlap_times[0], 1e3 * overlap_times[1], overlap_status,
               1e3 * (now_s() - overlap_t0));
        return 0;
    }
    double t0 = now_s();
    if (ts_gpu_open(&dev) != TS_OK) {
        fprintf(stderr, "nvjpeg_bench: %s\n", ts_error_detail());
        return 1;
    }
    double t_ctx = now_s() - t0;
    const char *fh = getenv("NVJPEG_BENCH_FIRST_HANDLE");
    if (fh) { /* the process's first handle on one backend, and what it can make (then exit) */
        static const struct {
            const char *name;
            nvjpegBackend_t b;
        } be[] = {{"default", NVJPEG_BACKEND_DEFAULT}, {"hybrid", NVJPEG_BACKEND_HYBRID},
                  {"gpu-hybrid", NVJPEG_BACKEND_GPU_HYBRID}, {"hardware", NVJPEG_BACKEND_HARDWARE}};
        for (size_t q = 0; q < sizeof be / sizeof be[0]; q++) {
            if (strcmp(fh, be[q].name) != 0)
                continue;
            nvjpegHandle_t h;
            nvjpegJpegDecoder_t d1, d2;
            nvjpegEncoderState_t es;
            cudaStream_t st;
            cudaStreamCreate(&st);
            gj_alloc_init();
            gj_alloc_counts m0, m1;
            gj_alloc_counts_get(&m0);
            double a = now_s();
            nvjpegStatus_t e0 = NV.nvjpegCreateExV2(be[q].b, &gj_dev_alloc, &gj_pinned_alloc,
                                                    NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION, &h);
            double b = now_s();
            gj_alloc_counts_get(&m1);
            printf("first handle %s: its allocations: device %ld (%.1f MB, %.1f ms), pinned %ld "
                   "(%.1f MB, %.1f ms)\n", fh, m1.n[0][0] - m0.n[0][0],
                   (m1.bytes[0] - m0.bytes[0]) / 1e6, m1.ms[0][0] - m0.ms[0][0],
                   m1.n[1][0] - m0.n[1][0], (m1.bytes[1] - m0.bytes[1]) / 1e6,
                   m1.ms[1][0] - m0.ms[1][0]);
            nvjpegHandle_t h2;
            double a2 = now_s();
            nvjpegStatus_t e5 = NV.nvjpegCreateExV2(be[q].b, &gj_dev_alloc, &gj_pinned_alloc, 0, &h2);
            printf("first handle %s: a second handle %.1f ms (%s)\n", fh, 1e3 * (now_s() - a2),
                   gj_nvj_str(e5));
            if (e5 == NVJPEG_STATUS_SUCCESS)
                NV.nvjpegDestroy(h2);
            /* NVJPEG_BENCH_HANDLE_LOOP=N: N more handles made and destroyed, each timed (a
             * long enough run to sample where the time goes) */
            const char *loop = getenv("NVJPEG_BENCH_HANDLE_LOOP");
            for (int k = 0, n = loop ? atoi(loop) : 0; k < n; k++) {
                double t = now_s();
                if (NV.nvjpegCreateExV2(be[q].b, &gj_dev_alloc, &gj_pinned_alloc, 0, &h2) ==
                    NVJPEG_STATUS_SUCCESS)
                    NV.nvjpegDestroy(h2);
                printf("handle %d: %.1f ms\n", k, 1e3 * (now_s() - t));
            }
            nvjpegStatus_t e1 = NV.nvjpegDecoderCreate(h, NVJPEG_BACKEND_HYBRID, &d1);
            nvjpegStatus_t e2 = NV.nvjpegDecoderCreate(h, NVJPEG_BACKEND_GPU_HYBRID, &d2);
            double c = now_s();
            nvjpegStatus_t e3 = NV.nvjpegEncoderStateCreate(h, &es, st);
            double d = now_s();
            printf("first handle %s: CUDA context %.1f ms, handle %.1f ms (%s), decoders %.1f ms "
                   "(%s, %s), encoder state %.1f ms (%s)\n", fh, 1e3 * t_ctx, 1e3 * (b - a),
                   gj_nvj_str(e0), 1e3 * (c - b), gj_nvj_str(e1), gj_nvj_str(e2), 1e3 * (d - c),
                   gj_nvj_str(e3));
        }
        return 0;
    }
    gpu_base = gpu_used();
    if (threads == 0)
        threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    ts_stream s;
    gj_ctx *ctx = NULL, *ctx_cuda = NULL, *ctx_hh = NULL, *ctx_gh = NULL;
    gj_dev *gd = NULL;
    gj_opts o = {.host_threads = threads}, oc = {.host_threads = threads, .no_engine = 1};
    gj_opts oh = oc, og = oc;
    oh.huffman = GJ_HUFFMAN_HOST, og.huffman = GJ_HUFFMAN_GPU;
    /* the set-up's parts, as the batch makes them: the device part without engines, its warm-up,
     * one worker's context of `threads` host threads */
    t0 = now_s();
    if (ts_gpu_stream_create(&s) != TS_OK || gj_dev_open(&gd, &oc, why, sizeof why) != TS_OK) {
        fprintf(stderr, "nvjpeg_bench: %s\n", why[0] ? why : ts_error_detail());
        return 1;
    }
    double t_dev = now_s() - t0;
    t0 = now_s();
    if (gj_dev_warm_up(gd, why, sizeof why) != TS_OK) {
        fprintf(stderr, "nvjpeg_bench: warm-up: %s\n", why);
        return 1;
    }
    double t_warm = now_s() - t0;
    t0 = now_s();
    if (gj_ctx_create_on(&ctx_cuda, gd, s, &oc, why, sizeof why) != TS_OK) {
        fprintf(stderr, "nvjpeg_bench: %s\n", why);
        return 1;
    }
    double t_wctx = now_s() - t0;
    gj_setup_times su;
    gj_dev_setup_times(gd, &su);
    printf("set-up: CUDA context %.1f ms; nvJPEG device part %.1f ms (decode handle %.1f, "
           "decoders %.1f, encode handle %.1f); warm-up %.1f ms; a context of %d host threads "
           "%.1f ms\n", 1e3 * t_ctx, 1e3 * t_dev, su.handle_ms, su.decoders_ms, su.encoder_ms,
           1e3 * t_warm, threads, 1e3 * t_wctx);
    t0 = now_s();
    if (gj_ctx_create(&ctx, s, &o, why, sizeof why) != TS_OK ||
        gj_ctx_create_on(&ctx_hh, gd, s, &oh, why, sizeof why) != TS_OK ||
        gj_ctx_create_on(&ctx_gh, gd, s, &og, why, sizeof why) != TS_OK) {
        fprintf(stderr, "nvjpeg_bench: %s\n", why[0] ? why : ts_error_detail());
        return 1;
    }
    printf("set-up: a device part with the engines and its context %.1f ms\n",
           1e3 * (now_s() - t0));
    size_t bytes = 0;
    for (int f = 0; f < nfiles; f++)
        bytes += files[f].len;
    printf("nvjpeg_bench: %s, %d files (%.1f MiB), %d host threads, batches of %d, %d repeats, "
           "engines: %s\n", dev.name, nfiles, bytes / 1048576.0, threads, batch, repeat,
           gj_ctx_has_engine(ctx) ? "yes" : "no");
    FILE *csv = NULL;
    if (csv_path) {
        int fresh = access(csv_path, F_OK) != 0;
        csv = fopen(csv_path, "a");
        if (csv && fresh)
            fprintf(csv, "name,corpus,stage,threads,batch,images,seconds,images_per_s,mp_per_s,"
                         "engine,cuda,cpu,bytes,host_cpu_ms_per_image\n");
    }
    gj_result *res = calloc((size_t)batch, sizeof *res);
    /* untimed pass: buffers grow to the corpus' sizes, the library warms up */
    gj_ctx *dctx[] = {ctx, ctx_cuda, ctx_hh, ctx_gh};
    const char *dname[] = {"decode-auto", "decode-cuda", "decode-host-huffman",
                           "decode-gpu-huffman"};
    enum { ND = sizeof dctx / sizeof dctx[0] };
    for (int k = 0; k < ND; k++)
        if (decode_pass(dctx[k], batch, res, NULL, NULL, NULL))
            return 1;
    stats dst[ND], enc_st = {0};
    memset(dst, 0, sizeof dst);
    double prof0[ND][GJ_PROF_COUNT], prof1[ND][GJ_PROF_COUNT];
    for (int k = 0; k < ND; k++)
        gj_ctx_decode_profile(dctx[k], prof0[k]);
    for (int r = 0; r < repeat; r++)
        for (int k = 0; k < ND; k++) {
            double t1 = now_s(), c1 = proc_cpu_ms();
            if (decode_pass(dctx[k], batch, res, &dst[k], NULL, NULL))
                return 1;
            dst[k].s += now_s() - t1;
            dst[k].cpu_ms += proc_cpu_ms() - c1;
        }
    /* encode alone: the decodes' CPU taken out (measured on a decode-only pass just before) */
    enc_arg ea = {ctx_cuda, quality, &enc_st, 0};
    for (int r = 0; r < repeat; r++) {
        stats dec_only = {0};
        double c1 = proc_cpu_ms();
        if (decode_pass(ctx_cuda, batch, res, &dec_only, NULL, NULL))
            return 1;
        double dec_cpu = proc_cpu_ms() - c1;
        c1 = proc_cpu_ms();
        if (decode_pass(ctx_cuda, batch, res, NULL, encode_one, &ea))
            return 1;
        enc_st.cpu_ms += proc_cpu_ms() - c1 - dec_cpu;
    }
    if (getenv("NVJPEG_BENCH_BATCHED")) {
        static const struct {
            const char *name;
            nvjpegBackend_t b;
        } be[] = {{"gpu-hybrid", NVJPEG_BACKEND_GPU_HYBRID},
                  {"hybrid", NVJPEG_BACKEND_HYBRID},
                  {"hardware", NVJPEG_BACKEND_HARDWARE}};
        static const int bs[][2] = {{16, 1}, {64, 1}, {16, 4}, {64, 4}, {32, 8}};
        for (size_t q = 0; q < sizeof be / sizeof be[0]; q++)
            for (size_t z = 0; z < sizeof bs / sizeof bs[0]; z++)
                batched_api(be[q].name, be[q].b, bs[z][0], bs[z][1], 512);
    }
    for (int k = 0; k < ND; k++) {
        report(name, dname[k], &dst[k], csv, name, threads, batch);
        gj_ctx_decode_profile(dctx[k], prof1[k]);
        static const char *const pn[GJ_PROF_COUNT] = {"parse and set-up", "host stage",
                                                      "transfer", "device stage", "wait"};
        if (prof1[k][GJ_PROF_HOST] > prof0[k][GJ_PROF_HOST]) {
            printf("    decoupled calls, host CPU ms/image:");
            for (int q = 0; q < GJ_PROF_COUNT; q++)
                printf("%s %s %.2f", q ? "," : "", pn[q],
                       (prof1[k][q] - prof0[k][q]) / (double)dst[k].images);
            printf("\n");
        }
    }
    report(name, "encode", &enc_st, csv, name, threads, batch);
    if (check) {
        check_arg ca = {s, 0, "", 0, 0};
        printf("check: nvJPEG (engines where they take the file) vs libjpeg-turbo %s:\n",
               JPEG_LIB_VERSION >= 80 ? "(libjpeg 8 API)" : "(libjpeg 6b API)");
        if (decode_pass(ctx, batch, res, NULL, check_one, &ca))
            return 1;
        printf("check: %d files compared, %d CPU fallbacks, largest difference %ld (%s)\n",
               ca.checked, ca.cpu, ca.worst, ca.worst_file);
        ca.worst = 0, ca.checked = 0, ca.cpu = 0;
        printf("check: decoupled path only:\n");
        if (decode_pass(ctx_cuda, batch, res, NULL, check_one, &ca))
            return 1;
        printf("check: %d files compared, %d CPU fallbacks, largest difference %ld (%s)\n",
               ca.checked, ca.cpu, ca.worst, ca.worst_file);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("memory: host peak RSS %.1f MiB, GPU peak %.1f MiB over the %.1f MiB in use at start "
           "(device-wide, cudaMemGetInfo after each batch)\n", ru.ru_maxrss / 1024.0,
           (gpu_peak > gpu_base ? gpu_peak - gpu_base : 0) / 1048576.0, gpu_base / 1048576.0);
    gj_results_free(res, batch);
    free(res);
    gj_ctx_destroy(ctx);
    gj_ctx_destroy(ctx_cuda);
    gj_ctx_destroy(ctx_hh);
    gj_ctx_destroy(ctx_gh);
    gj_dev_close(gd);
    ts_gpu_stream_destroy(s);
    if (csv)
        fclose(csv);
    for (int f = 0; f < nfiles; f++)
        free(files[f].data);
    free(files);
    return ea.fail;
}
