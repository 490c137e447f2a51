/* test_pipeline_dev.c - the pipeline's entry points for a batch whose images stay on the GPU:
 * ts_pipeline_run_dev (a device input), ts_pipeline_take_result (the result's buffer handed over,
 * the caller's taken in exchange), ts_pipeline_create_on (a chosen device) and the per-thread
 * device binding. On the CPU: the refusals. On the GPU: results equal to the host-input run
 * (hence to the CPU reference, which the other tests hold the GPU to), odd sizes, 8/16-bit,
 * 1-4 channels; a taken result survives the next runs; an empty chain gives the input back; a
 * pipeline used from a thread that never chose a device still runs on its own device.
 */
#include "testutil.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

TEST(pipeline_dev_cpu_refuses_device_input)
{
    ts_pipeline *p;
    CHECK(ts_pipeline_create_on(&p, TS_BACKEND_CPU, 3, NULL, 0) == TS_OK);
    CHECK(!ts_pipeline_on_gpu(p));
    uint64_t seed = tu_seed();
    ts_image in = tu_random_image(9, 4, 3, 1, &seed), out;
    ts_chain c;
    char err[256];
    CHECK(ts_chain_parse("flip", &c, err, sizeof err) == TS_OK);
    memset(&out, 0, sizeof out);
    CHECK(ts_pipeline_run_dev(p, &c, &in, &out, NULL, NULL) == TS_ERR_INVALID);
    CHECK(out.data == NULL);
    ts_image d;
    size_t cap = 0;
    memset(&d, 0, sizeof d);
    CHECK(ts_pipeline_take_result(p, &d, &cap) == TS_ERR_INVALID);
    CHECK(ts_pipeline_run(p, &c, &in, &out, NULL) == TS_OK); /* the host path is unchanged */
    ts_image_free(&out);
    ts_image_free(&in);
    ts_chain_free(&c);
    ts_pipeline_destroy(p);
}

TEST(pipeline_dev_open_missing_device)
{
    ts_pipeline *p = NULL;
    int n = ts_gpu_count();
    CHECK(n >= 0);
    ts_status st = ts_pipeline_create_on(&p, TS_BACKEND_GPU, n, NULL, 0);
    CHECKF(st == TS_ERR_NO_GPU && p == NULL, "device %d of %d opened (status %d)", n, n, st);
    /* auto falls back to the CPU, saying why */
    char msg[256];
    CHECK(ts_pipeline_create_on(&p, TS_BACKEND_AUTO, n, msg, sizeof msg) == TS_OK);
    CHECK(!ts_pipeline_on_gpu(p) && msg[0]);
    ts_pipeline_destroy(p);
}

/* The chain on `in` through the host path and through the device path (upload here, run_dev
 * with keep_output, take, download): the same bytes. */
static void same_as_host(ts_pipeline *p, const char *ops, const ts_image *in, size_t *cap,
                         ts_image *d_taken)
{
    ts_chain c;
    char err[256];
    CHECK(ts_chain_parse(ops, &c, err, sizeof err) == TS_OK);
    ts_image want, shape, d_in, got;
    memset(&want, 0, sizeof want);
    CHECK(ts_pipeline_run(p, &c, in, &want, NULL) == TS_OK);
    CHECK(ts_gpu_image_alloc(&d_in, in->width, in->height, in->channels, in->bytes) == TS_OK);
    CHECK(ts_gpu_upload(&d_in, in, ts_pipeline_stream(p)) == TS_OK);
    CHECK(ts_gpu_sync(ts_pipeline_stream(p)) == TS_OK);
    ts_run_opts ro = {.keep_output = 1};
    ts_run_report rep;
    CHECK(ts_pipeline_run_dev(p, &c, &d_in, &shape, &rep, &ro) == TS_OK);
    CHECK(rep.input_resident && rep.upload_ms == 0 && shape.data == NULL);
    CHECK(shape.width == want.width && shape.height == want.height);
    CHECK(ts_pipeline_take_result(p, d_taken, cap) == TS_OK);
    CHECK(ts_pipeline_take_result(p, d_taken, cap) == TS_ERR_INVALID); /* taken once */
    /* another run must not write into the taken buffer */
    ts_image junk;
    memset(&junk, 0, sizeof junk);
    CHECK(ts_pipeline_run(p, &c, in, &junk, NULL) == TS_OK);
    CHECK(ts_pipeline_run_dev(p, &c, &d_in, &junk, NULL, NULL) == TS_OK); /* downloaded */
    long dj = tu_max_diff(&junk, &want, NULL, NULL, NULL);
    ts_image_free(&junk);
    CHECKF(dj == 0, "%s: run_dev with a download differs by %ld", ops, dj);
    CHECK(ts_image_alloc(&got, shape.width, shape.height, shape.channels, shape.bytes) == TS_OK);
    CHECK(ts_gpu_download(&got, d_taken, ts_pipeline_stream(p)) == TS_OK);
    CHECK(ts_gpu_sync(ts_pipeline_stream(p)) == TS_OK);
    long d = tu_max_diff(&got, &want, NULL, NULL, NULL);
    CHECKF(d == 0, "%s on %dx%d %dch %d-bit: device path differs by %ld", ops, in->width,
           in->height, in->channels, in->bytes * 8, d);
    ts_image_free(&got);
    ts_image_free(&want);
    ts_gpu_image_free(&d_in);
    ts_chain_free(&c);
}

TEST(pipeline_dev_matches_host_path)
{
    TU_GPU_OR_SKIP(dev);
    ts_pipeline *p;
    CHECK(ts_pipeline_create_on(&p, TS_BACKEND_GPU, dev->id, NULL, 0) == TS_OK);
    CHECK(ts_pipeline_device(p)->id == dev->id);
    static const int sizes[][2] = {{1, 1}, {1, 37}, {33, 17}, {4097, 3}, {640, 480}};
    static const char *const chains[] = {"gauss:5,equalize,rotate:90", "sharpen,flip",
                                         "rotate:270,box:3"};
    uint64_t seed = tu_seed();
    ts_image taken;
    size_t cap = 0;
    memset(&taken, 0, sizeof taken);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0] && !tst_failed(); s++)
        for (int ch = 1; ch <= 4 && !tst_failed(); ch++)
            for (int bytes = 1; bytes <= 2 && !tst_failed(); bytes++) {
                ts_image in = tu_random_image(sizes[s][0], sizes[s][1], ch, bytes, &seed);
                same_as_host(p, chains[(s + (size_t)ch) % 3], &in, &cap, &taken);
                ts_image_free(&in);
            }
    ts_gpu_image_free(&taken);
    ts_pipeline_destroy(p);
}

TEST(pipeline_dev_empty_chain_gives_the_input)
{
    TU_GPU_OR_SKIP(dev);
    ts_pipeline *p;
    CHECK(ts_pipeline_create_on(&p, TS_BACKEND_GPU, dev->id, NULL, 0) == TS_OK);
    uint64_t seed = tu_seed();
    ts_image in = tu_random_image(33, 17, 3, 1, &seed), d_in, shape;
    CHECK(ts_gpu_image_alloc(&d_in, 33, 17, 3, 1) == TS_OK);
    CHECK(ts_gpu_upload(&d_in, &in, ts_pipeline_stream(p)) == TS_OK);
    CHECK(ts_gpu_sync(ts_pipeline_stream(p)) == TS_OK);
    ts_chain c = {0, NULL};
    ts_run_opts ro = {.keep_output = 1};
    CHECK(ts_pipeline_run_dev(p, &c, &d_in, &shape, NULL, &ro) == TS_OK);
    void *before = d_in.data;
    size_t cap = 0;
    CHECK(ts_pipeline_take_result(p, &d_in, &cap) == TS_OK);
    CHECK(d_in.data == before && cap == 0); /* nothing swapped: the input is the result */
    ts_gpu_image_free(&d_in);
    ts_image_free(&in);
    ts_pipeline_destroy(p);
}

struct thread_run {
    ts_pipeline *p;
    const ts_image *in;
    ts_image out;
    ts_status st;
};

static void *run_in_thread(void *arg)
{
    struct thread_run *t = arg;
    ts_chain c;
    char err[128];
    t->st = ts_chain_parse("box:3,rotate:90", &c, err, sizeof err);
    if (t->st == TS_OK)
        t->st = ts_pipeline_run(t->p, &c, t->in, &t->out, NULL);
    ts_chain_free(&c);
    return NULL;
}

/* Every device in turn, each pipeline used from a new thread (whose current device is 0 until
 * told otherwise): the results equal the CPU's. */
TEST(pipeline_dev_every_device_from_threads)
{
    TU_GPU_OR_SKIP(dev);
    (void)dev;
    uint64_t seed = tu_seed();
    ts_image in = tu_random_image(129, 65, 3, 1, &seed), want;
    ts_pipeline *cpu;
    ts_chain c;
    char err[128];
    CHECK(ts_pipeline_create(&cpu, TS_BACKEND_CPU, NULL, 0) == TS_OK);
    CHECK(ts_chain_parse("box:3,rotate:90", &c, err, sizeof err) == TS_OK);
    CHECK(ts_pipeline_run(cpu, &c, &in, &want, NULL) == TS_OK);
    ts_chain_free(&c);
    ts_pipeline_destroy(cpu);
    int n = ts_gpu_count();
    printf("# %d device(s)\n", n);
    for (int id = 0; id < n && !tst_failed(); id++) {
        struct thread_run t = {NULL, &in, {0}, TS_OK};
        CHECK(ts_pipeline_create_on(&t.p, TS_BACKEND_GPU, id, NULL, 0) == TS_OK);
        CHECK(ts_pipeline_device(t.p)->id == id);
        pthread_t tid;
        CHECK(pthread_create(&tid, NULL, run_in_thread, &t) == 0);
        pthread_join(tid, NULL);
        CHECKF(t.st == TS_OK, "device %d: %s", id, ts_error_detail());
        long d = tu_max_diff(&t.out, &want, NULL, NULL, NULL);
        CHECKF(d == 0, "device %d: differs from the CPU by %ld", id, d);
        ts_image_free(&t.out);
        ts_pipeline_destroy(t.p);
    }
    ts_image_free(&want);
    ts_image_free(&in);
}
