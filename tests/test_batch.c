/* test_batch.c - the batch's decode steps (batch_decode_step): how many files one worker takes
 * at once. Only JPEG files are batched, and only when nvJPEG is loaded; a step is never larger
 * than the Huffman threads a worker has (or the engines' batch), so that the other workers are
 * not left waiting on the in-flight bound while one decodes its files one after the other.
 */
#include "testutil.h"

#include "batch.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static int step(int gpu_codec, int jobs, int n, const char *path)
{
    app_options o;
    memset(&o, 0, sizeof o);
    o.jobs = jobs;
    batch b;
    memset(&b, 0, sizeof b);
    b.o = &o;
    b.n = n;
    /* as headless.c sets it once the source is done: fewer workers for a shorter batch */
    b.workers = n < jobs ? (n > 0 ? n : 1) : jobs;
    b.gpu_codec = gpu_codec;
    return batch_decode_step(&b, path);
}

TEST(batch_step_one_file_without_nvjpeg_or_for_other_formats)
{
    unsetenv("TESSERA_TEST_DECODE_BATCH");
    unsetenv("TESSERA_NVJPEG_ENGINES");
    CHECK(step(0, 1, 100, "a.jpg") == 1);
    CHECK(step(1, 1, 100, "a.png") == 1);
    CHECK(step(1, 1, 100, "dir/a.tiff") == 1);
    CHECK(step(1, 1, 100, "a.webp") == 1);
}

TEST(batch_step_jpeg_as_many_as_the_worker_has_threads)
{
    unsetenv("TESSERA_TEST_DECODE_BATCH");
    unsetenv("TESSERA_NVJPEG_ENGINES");
    int cores = cpu_count();
    int want = cores > 8 ? 8 : cores;
    CHECKF(step(1, 1, 100, "a.jpg") == want, "1 worker on %d cores: %d", cores,
           step(1, 1, 100, "a.JPEG"));
    CHECK(step(1, 1, 100, "A.JPEG") == want);
    /* as many workers as cores: one file a step */
    CHECK(step(1, cores, 100, "a.jpg") == 1);
    CHECK(step(1, 64, 100, "a.jpg") == 1);
    /* a batch shorter than --jobs has as many workers as files */
    int few = cores >= 2 ? 2 : 1;
    int per = cores / few > 8 ? 8 : cores / few > 1 ? cores / few : 1;
    CHECK(step(1, 64, few, "a.jpg") == per);
}

TEST(batch_step_engines_take_eight_and_tests_may_force)
{
    unsetenv("TESSERA_TEST_DECODE_BATCH");
    setenv("TESSERA_NVJPEG_ENGINES", "1", 1);
    int engines = step(1, 64, 100, "a.jpg");
    int png = step(1, 64, 100, "a.png");
    unsetenv("TESSERA_NVJPEG_ENGINES");
    CHECK(engines == 8);
    CHECK(png == 1);
    setenv("TESSERA_TEST_DECODE_BATCH", "3", 1);
    int forced = step(0, 64, 100, "a.png");
    unsetenv("TESSERA_TEST_DECODE_BATCH");
    CHECK(forced == 3);
}
