/* bench_cpu.c - times every CPU variant of the table (the reference and the fast rows) on one
 * image, per op and for chains, on a given number of threads; tools/bench_cpu.py runs it beside
 * OpenCV's calls and writes the tables.
 *
 *   bench_cpu IMAGE.ppm THREADS REPEATS OP_OR_CHAIN... [--no-ref]
 *
 * IMAGE.ppm: binary PPM (P6, 8-bit RGB) or PGM (P5). Each argument is an op ("gauss:5") or a
 * chain ("gauss:5,equalize,rotate:90"). For an op, every CPU variant of its family is timed
 * (ts_pipeline_run_op); a chain runs through the CPU pipeline with auto (the fast rows and
 * fusion) and with every family set to the reference. Prints one line per run:
 *   OP<TAB>VARIANT<TAB>median ms<TAB>min ms
 * --no-ref leaves the reference out. The reference is run fewer times on the slow ops (at most 3 runs, or REPEATS when smaller).
 * With THREADS 1 the clock is the thread's CPU time, else wall time.
 */
#include "tessera.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One thread: the thread's CPU time (user + system, page faults included), so that other
 * processes on a shared machine do not count; more threads: wall time. */
static int use_cpu_clock;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(use_cpu_clock ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int read_pnm(const char *path, ts_image *im)
{
    FILE *f = fopen(path, "rb");
    char magic[3] = "";
    int w, h, maxv, ch;
    if (!f)
        return -1;
    if (fscanf(f, "%2s %d %d %d", magic, &w, &h, &maxv) != 4 || maxv != 255 ||
        (strcmp(magic, "P6") && strcmp(magic, "P5"))) {
        fclose(f);
        return -1;
    }
    fgetc(f);
    ch = magic[1] == '6' ? 3 : 1;
    if (ts_image_alloc(im, w, h, ch, 1) != TS_OK ||
        fread(im->data, 1, (size_t)w * h * ch, f) != (size_t)w * h * ch) {
        fclose(f);
        return -1;
    }
    fclose(f);
    return 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Times `reps` runs of the chain on pipeline p (one untimed warm-up). */
static int time_chain(ts_pipeline *p, const ts_chain *c, const ts_image *in, int reps,
                      double *med, double *min)
{
    double t[64];
    reps = reps > 64 ? 64 : reps;
    for (int r = -1; r < reps; r++) {
        ts_image out;
        double t0 = now_ms();
        if (ts_pipeline_run(p, c, in, &out, NULL) != TS_OK)
            return -1;
        if (r >= 0)
            t[r] = now_ms() - t0;
        ts_image_free(&out);
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp_d);
    *med = t[reps / 2];
    *min = t[0];
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: bench_cpu IMAGE.ppm THREADS REPEATS OP_OR_CHAIN...\n");
        return 2;
    }
    ts_image in;
    if (read_pnm(argv[1], &in)) {
        fprintf(stderr, "bench_cpu: cannot read %s (binary 8-bit PPM or PGM)\n", argv[1]);
        return 1;
    }
    int threads = atoi(argv[2]), reps = atoi(argv[3]);
    ts_ref_set_threads(threads);
    use_cpu_clock = threads == 1;
    ts_pipeline *p;
    if (ts_pipeline_create(&p, TS_BACKEND_CPU, NULL, 0) != TS_OK)
        return 1;
    int no_ref = 0;
    for (int a = 4; a < argc; a++)
        no_ref |= strcmp(argv[a], "--no-ref") == 0;
    for (int a = 4; a < argc; a++) {
        ts_chain c;
        if (strcmp(argv[a], "--no-ref") == 0)
            continue;
        char err[256];
        if (ts_chain_parse(argv[a], &c, err, sizeof err) != TS_OK) {
            fprintf(stderr, "bench_cpu: %s\n", err);
            return 1;
        }
        double med, min;
        if (c.n == 1) {
            ts_family f = ts_op_family(c.ops[0].kind);
            for (size_t i = 0; i < ts_variant_count(); i++) {
                const ts_variant *v = ts_variant_at(i);
                if (v->family != f || ts_variant_is_gpu(v) || (no_ref && !strcmp(v->name, "cpu")))
                    continue;
                c.ops[0].variant = v;
                int n = strcmp(v->name, "cpu") == 0 && reps > 3 ? 3 : reps;
                if (time_chain(p, &c, &in, n, &med, &min)) {
                    fprintf(stderr, "bench_cpu: %s [%s]: %s\n", argv[a], v->name,
                            ts_error_detail());
                    return 1;
                }
                printf("%s\t%s\t%.3f\t%.3f\n", argv[a], v->name, med, min);
                fflush(stdout);
            }
        } else {
            for (int ref = 0; ref < 2 - no_ref; ref++) {
                for (int f = 0; f < TS_FAM_COUNT; f++)
                    ts_pipeline_select(p, (ts_family)f, ref ? "cpu" : NULL);
                if (time_chain(p, &c, &in, ref && reps > 3 ? 3 : reps, &med, &min)) {
                    fprintf(stderr, "bench_cpu: %s: %s\n", argv[a], ts_error_detail());
                    return 1;
                }
                printf("%s\t%s\t%.3f\t%.3f\n", argv[a], ref ? "cpu" : "auto", med, min);
                fflush(stdout);
            }
            for (int f = 0; f < TS_FAM_COUNT; f++)
                ts_pipeline_select(p, (ts_family)f, NULL);
        }
        ts_chain_free(&c);
    }
    ts_pipeline_destroy(p);
    ts_image_free(&in);
    return 0;
}
