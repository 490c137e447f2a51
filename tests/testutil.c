/* testutil.c - see testutil.h. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const int tu_odd_sizes[][2] = {{1, 1},   {1, 97},   {97, 1},   {33, 17},  {4097, 3},
                               {3, 4097}, {31, 33},  {257, 129}, {1920, 1080}, {7680, 4320}};
const int tu_n_small_sizes = (int)(sizeof tu_odd_sizes / sizeof tu_odd_sizes[0]) - 2;

int tu_odd_size_count(void)
{
    const char *small = getenv("TESSERA_SMALL_ONLY");
    if (small && *small && *small != '0')
        return tu_n_small_sizes;
    return (int)(sizeof tu_odd_sizes / sizeof tu_odd_sizes[0]);
}

int tu_variant_selected(const char *name)
{
    const char *list = getenv("TESSERA_TEST_VARIANTS");
    if (!list || !*list)
        return 1;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        if (!comma)
            break;
        p = comma + 1;
    }
    return 0;
}

uint64_t tu_seed(void)
{
    static uint64_t seed;
    static int have;
    if (!have) {
        const char *s = getenv("TESSERA_SEED");
        seed = s && *s ? strtoull(s, NULL, 10)
                       : (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)clock();
        have = 1;
        printf("# random seed %llu (TESSERA_SEED=%llu replays it)\n", (unsigned long long)seed,
               (unsigned long long)seed);
    }
    return seed;
}

uint64_t tu_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

ts_image tu_band_image(int w, int h, int channels, int bytes, unsigned lo, unsigned hi,
                       uint64_t *state)
{
    ts_image im;
    if (ts_image_alloc(&im, w, h, channels, bytes) != TS_OK) {
        fprintf(stderr, "test: cannot allocate %dx%d image: %s\n", w, h, ts_error_detail());
        abort();
    }
    uint64_t span = (uint64_t)hi - lo + 1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < channels; c++)
                ts_put(&im, x, y, c, lo + (unsigned)(tu_rand(state) % span));
    return im;
}

ts_image tu_random_image(int w, int h, int channels, int bytes, uint64_t *state)
{
    return tu_band_image(w, h, channels, bytes, 0, (unsigned)ts_max_value(bytes), state);
}

long tu_max_diff(const ts_image *a, const ts_image *b, int *px, int *py, int *pc)
{
    if (a->width != b->width || a->height != b->height || a->channels != b->channels ||
        a->bytes != b->bytes)
        return -1;
    long worst = 0;
    for (int y = 0; y < a->height; y++)
        for (int x = 0; x < a->width; x++)
            for (int c = 0; c < a->channels; c++) {
                long d = (long)ts_get(a, x, y, c) - (long)ts_get(b, x, y, c);
                if (d < 0)
                    d = -d;
                if (d > worst) {
                    worst = d;
                    if (px)
                        *px = x, *py = y, *pc = c;
                }
            }
    return worst;
}

const ts_device *tu_gpu(void)
{
    static ts_device dev;
    static int state; /* 0 unknown, 1 yes, 2 no */
    static char why[512];
    if (state == 0) {
        state = ts_gpu_open(&dev) == TS_OK ? 1 : 2;
        snprintf(why, sizeof why, "%s", ts_error_detail());
        if (state == 1)
            printf("# GPU: %s, compute capability %d.%d (device %d.%d), %d SMs\n", dev.name,
                   dev.cc / 10, dev.cc % 10, dev.cc_real / 10, dev.cc_real % 10, dev.sms);
    }
    if (state == 2)
        ts_fail(TS_ERR_NO_GPU, "%s", why);
    return state == 1 ? &dev : NULL;
}

/* A job for `v` on a copy of `in` on the device: output image (poisoned, 0xA5 bytes) for image
 * ops, a histogram of hist_n counts (poisoned) for TS_OP_HIST, scratch (poisoned 0x5A); then the
 * variant's `supports` and `run`. The caller fetches the result and calls job_close. */
static ts_status job_run(const ts_variant *v, const ts_op *op, const ts_image *in, int param,
                         size_t hist_n, ts_job *job)
{
    const ts_device *dev = tu_gpu();
    ts_status st;
    int ow = in->width, oh = in->height;
    memset(job, 0, sizeof *job);
    if (!dev)
        return TS_ERR_NO_GPU;
    if (op->kind != TS_OP_HIST && (st = ts_op_out_size(op, in->width, in->height, &ow, &oh)) != TS_OK)
        return st; /* geometry and resize change the size */
    job->op = op;
    job->dev = dev;
    job->param = param;
    if ((st = ts_gpu_stream_create(&job->stream)) != TS_OK ||
        (st = ts_gpu_image_alloc(&job->in, in->width, in->height, in->channels, in->bytes)) != TS_OK ||
        (st = ts_gpu_upload(&job->in, in, job->stream)) != TS_OK)
        return st;
    if (hist_n) {
        if ((st = ts_gpu_malloc((void **)&job->hist, hist_n * sizeof *job->hist)) != TS_OK ||
            (st = ts_gpu_memset(job->hist, 0xA5, hist_n * sizeof *job->hist, job->stream)) != TS_OK)
            return st;
    } else if ((st = ts_gpu_image_alloc(&job->out, ow, oh, in->channels, in->bytes)) != TS_OK ||
               (st = ts_gpu_image_fill(&job->out, 0xA5, job->stream)) != TS_OK) {
        return st;
    }
    return tu_job_run(v, job);
}

ts_status tu_job_run(const ts_variant *v, ts_job *job)
{
    ts_status st;
    job->scratch_bytes = v->scratch ? v->scratch(job) : 0;
    if (job->scratch_bytes &&
        ((st = ts_gpu_malloc(&job->scratch, job->scratch_bytes)) != TS_OK ||
         (st = ts_gpu_memset(job->scratch, 0x5A, job->scratch_bytes, job->stream)) != TS_OK))
        return st;
    if (v->supports && !v->supports(job))
        return ts_fail(TS_ERR_UNSUPPORTED, "%s does not support %s on %dx%d", v->name,
                       job->op->text, job->in.width, job->in.height);
    return v->run(job);
}

static void job_close(ts_job *job)
{
    ts_gpu_free(job->scratch);
    ts_gpu_free(job->hist);
    ts_gpu_image_free(&job->in);
    ts_gpu_image_free(&job->out);
    ts_gpu_stream_destroy(job->stream);
}

ts_status tu_gpu_run(const ts_variant *v, const ts_op *op, const ts_image *in, ts_image *out,
                     int param)
{
    ts_job job;
    memset(out, 0, sizeof *out);
    ts_status st = job_run(v, op, in, param, 0, &job);
    if (st == TS_OK &&
        (st = ts_image_alloc(out, job.out.width, job.out.height, in->channels, in->bytes)) == TS_OK &&
        (st = ts_gpu_download(out, &job.out, job.stream)) == TS_OK)
        st = ts_gpu_sync(job.stream);
    if (st != TS_OK)
        ts_image_free(out);
    job_close(&job);
    return st;
}

ts_status tu_gpu_hist(const ts_variant *v, const ts_op *op, const ts_image *in, uint32_t *hist,
                      int param)
{
    ts_job job;
    size_t n = (size_t)ts_hist_count(op->hist_mode, in->channels) * ts_hist_bins(in->bytes);
    ts_status st = job_run(v, op, in, param, n, &job);
    if (st == TS_OK && (st = ts_gpu_copy_to_host(hist, job.hist, n * sizeof *hist, job.stream)) == TS_OK)
        st = ts_gpu_sync(job.stream);
    job_close(&job);
    return st;
}

ts_op tu_op(const char *text)
{
    ts_op op;
    char err[256];
    if (ts_op_parse(text, &op, err, sizeof err) != TS_OK) {
        fprintf(stderr, "test: bad op '%s': %s\n", text, err);
        abort();
    }
    return op;
}

int tu_have_cv2(void)
{
    static int state; /* 0 unknown, 1 yes, 2 no */
    if (!state)
        state = access("/usr/bin/python3", X_OK) == 0 &&
                        system("/usr/bin/python3 -c 'import cv2' >/dev/null 2>&1") == 0
                    ? 1
                    : 2;
    return state == 1;
}

/* A minimal ICC profile whose description tag (v2 "desc" or v4 "mluc") reads `desc`; p holds
 * 512 bytes. Returns its length. */
size_t tu_make_icc(unsigned char *p, const char *desc, int v4)
{
    size_t len = strlen(desc), off = 144, n;
    memset(p, 0, 512);
    p[131] = 1; /* one tag */
    memcpy(p + 132, "desc", 4);
    p[139] = (unsigned char)off;
    if (!v4) {
        memcpy(p + off, "desc", 4);
        p[off + 11] = (unsigned char)(len + 1);
        memcpy(p + off + 12, desc, len);
        n = 12 + len + 1;
    } else {
        memcpy(p + off, "mluc", 4);
        p[off + 11] = 1, p[off + 15] = 12;
        memcpy(p + off + 16, "enUS", 4);
        p[off + 23] = (unsigned char)(2 * len), p[off + 27] = 28;
        for (size_t i = 0; i < len; i++)
            p[off + 28 + 2 * i + 1] = (unsigned char)desc[i];
        n = 28 + 2 * len;
    }
    p[143] = (unsigned char)n;
    return off + n;
}
