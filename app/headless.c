/* headless.c - `tessera --headless`: batch conversion with a chain of ops.
 *
 * Plan first, then work: every input is expanded (directories, -r) and given its output path
 * before any pixel is decoded, so collisions (two inputs, one output; an output that is an input)
 * fail the later file up front. Then --jobs threads decode, process and encode; the GPU pipeline
 * is shared behind a mutex (it is faster than the codecs), CPU pipelines are per thread.
 * Outputs are written to a temp file and renamed (image_io.c); SIGINT/SIGTERM remove temp files.
 * Failures are collected and printed in input order at the end, one line each.
 */
#include "cli.h"
#include "image_io.h"
#include "photo.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct item {
    char *input, *output;
    char *real_input;   /* realpath, to catch an output that is an input */
    char error[512];    /* "PATH: reason"; "" when fine */
    char notice[512];
    int done, ok;
    int width, height, channels, bytes;
    int orientation;    /* photos: EXIF orientation applied (1: none): rep.op[0] when not 1 */
    double load_ms, save_ms;
    ts_run_report rep;
} item;

typedef struct batch {
    const ts_options *o;
    ts_chain chain;
    item *items;
    int n, cap;
    int next, finished;     /* guarded by lock */
    pthread_mutex_t lock;   /* next, finished, progress output */
    pthread_mutex_t gpu;    /* the shared GPU pipeline */
    ts_pipeline *shared;    /* GPU: one for all; CPU: NULL */
    ts_pipeline **own;      /* CPU: one per worker */
    int n_own;
    int progress;           /* draw a progress bar on stderr */
} batch;

static item *add_item(batch *b, const char *path)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        item *grown = realloc(b->items, (size_t)b->cap * sizeof *grown);
        if (!grown) {
            ts_warn("out of memory");
            exit(1);
        }
        b->items = grown;
    }
    item *it = &b->items[b->n++];
    memset(it, 0, sizeof *it);
    it->input = xstrdup(path);
    return it;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the images of a directory in name order; subdirectories with -r. */
static void add_dir(batch *b, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d) {
        item *it = add_item(b, dir);
        snprintf(it->error, sizeof it->error, "%s: %s", dir, strerror(errno));
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = realloc(names, cap * sizeof *names);
            if (!names) {
                ts_warn("out of memory");
                exit(1);
            }
        }
        names[n++] = xstrdup(e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        char *p = path_join(dir, names[i]);
        if (path_is_dir(p)) {
            if (b->o->recursive && depth < 64)
                add_dir(b, p, depth + 1);
        } else if (tsio_is_image_name(p)) {
            add_item(b, p);
        }
        free(p);
        free(names[i]);
    }
    free(names);
}

/* The output format of an input: --format, else the input's own, else PNG (with a notice). */
static tsio_format out_format(const ts_options *o, const item *it, const char **why)
{
    *why = NULL;
    if (o->format != TSIO_UNKNOWN)
        return o->format;
    tsio_format f = tsio_format_from_name(it->input);
    if (f == TSIO_UNKNOWN) {
        *why = "cannot write this format; writing PNG";
        return TSIO_PNG;
    }
    return f;
}

/* Gives every item its output path; marks collisions. Returns -1 on a fatal error (printed). */
static int plan_outputs(batch *b)
{
    const ts_options *o = b->o;
    int file_mode = b->n == 1 && !path_is_dir(o->output) &&
                    tsio_format_from_name(o->output) != TSIO_UNKNOWN &&
                    o->output[strlen(o->output) - 1] != '/';
    if (!file_mode && !path_is_dir(o->output)) {
        ts_warn("%s: output directory does not exist%s", o->output,
                b->n > 1 ? "" : " (or give -o a file name with an image extension)");
        return -1;
    }
    for (int i = 0; i < b->n; i++) {
        item *it = &b->items[i];
        char buf[PATH_MAX];
        if (realpath(it->input, buf))
            it->real_input = xstrdup(buf);
        if (it->error[0])
            continue;
        if (file_mode) {
            it->output = xstrdup(o->output);
            continue;
        }
        const char *why;
        tsio_format f = out_format(o, it, &why);
        const char *name = path_base(it->input);
        if (f == tsio_format_from_name(it->input)) {
            it->output = path_join(o->output, name); /* same format: keep the extension */
        } else {
            char *renamed = path_with_ext(name, tsio_format_ext(f));
            it->output = path_join(o->output, renamed);
            free(renamed);
        }
        if (why)
            snprintf(it->notice, sizeof it->notice, "%s: %s", it->input, why);
    }
    /* collisions: an output that is an input, or an output claimed by an earlier item */
    for (int i = 0; i < b->n; i++) {
        item *it = &b->items[i];
        if (it->error[0] || !it->output)
            continue;
        char buf[PATH_MAX];
        const char *real_out = realpath(it->output, buf) ? buf : NULL;
        for (int j = 0; j < b->n && real_out; j++)
            if (b->items[j].real_input && strcmp(b->items[j].real_input, real_out) == 0) {
                snprintf(it->error, sizeof it->error, "%s: output %s would overwrite an input",
                         it->input, it->output);
                break;
            }
        for (int j = 0; j < i && !it->error[0]; j++)
            if (b->items[j].output && strcmp(b->items[j].output, it->output) == 0)
                snprintf(it->error, sizeof it->error,
                         "%s: output %s is already written from %s (use separate -o directories)",
                         it->input, it->output, b->items[j].input);
        if (!it->error[0] && !o->force && path_exists(it->output))
            snprintf(it->error, sizeof it->error, "%s: exists (use --force)", it->output);
    }
    return 0;
}

static void draw_progress(batch *b, const char *name)
{
    int width = 30, filled = b->n ? b->finished * width / b->n : width;
    fprintf(stderr, "\r\033[K[%.*s%*s] %d/%d %.40s", filled, "##############################",
            width - filled, "", b->finished, b->n, name);
    fflush(stderr);
}

static void process(batch *b, item *it, ts_pipeline *p)
{
    const ts_options *o = b->o;
    /* ---- photos: metadata read, orientation op prefixed to the chain, metadata written */
    tsio_meta meta = {0}, meta_out = {0};
    char load_notice[200] = "";
    ts_chain chain = {0};
    int orientation = 1;
    tsio_load_opts lo = {.max_pixels = o->max_pixels, .meta = &meta, .notice = load_notice,
                         .noticelen = sizeof load_notice};
    /* ---- end photos */
    char err[400];
    ts_image in, out;
    double t0 = now_ms();
    if (tsio_load(it->input, &lo, &in, err, sizeof err) != TS_OK) {
        snprintf(it->error, sizeof it->error, "%s: %s", it->input, err);
        it->notice[0] = '\0'; /* photos: no "writing PNG" notice before the error */
        tsio_meta_free(&meta);
        return;
    }
    /* ---- photos */
    if (load_notice[0])
        snprintf(it->notice, sizeof it->notice, "%s: %s", it->input, load_notice);
    if (photo_chain(&meta, !o->no_auto_orient, &b->chain, &chain, &orientation) != TS_OK ||
        photo_meta_out(&meta, o->strip, orientation != 1, &meta_out) != TS_OK) {
        snprintf(it->error, sizeof it->error, "%s: %s", it->input, ts_error_detail());
        ts_image_free(&in);
        tsio_meta_free(&meta);
        return;
    }
    tsio_meta_free(&meta);
    it->orientation = orientation;
    /* ---- end photos */
    it->load_ms = now_ms() - t0;
    it->width = in.width, it->height = in.height, it->channels = in.channels, it->bytes = in.bytes;
    ts_status st;
    if (b->shared) {
        pthread_mutex_lock(&b->gpu);
        st = ts_pipeline_run(p, &chain, &in, &out, &it->rep);
        pthread_mutex_unlock(&b->gpu);
    } else {
        st = ts_pipeline_run(p, &chain, &in, &out, &it->rep);
    }
    ts_image_free(&in);
    ts_chain_free(&chain);
    if (st != TS_OK) {
        snprintf(it->error, sizeof it->error, "%s: %s", it->input, ts_error_detail());
        tsio_meta_free(&meta_out);
        return;
    }
    tsio_save_opts so = {.format = o->format, .quality = o->quality, .meta = &meta_out,
                         .lossless = o->lossless};
    if (so.format == TSIO_UNKNOWN)
        so.format = tsio_format_from_name(it->output);
    char notice[256];
    t0 = now_ms();
    st = tsio_save_atomic(it->output, &out, &so, o->force, notice, sizeof notice, err, sizeof err);
    it->save_ms = now_ms() - t0;
    ts_image_free(&out);
    tsio_meta_free(&meta_out);
    if (st != TS_OK) {
        snprintf(it->error, sizeof it->error, "%s: %s", it->output, err);
        return;
    }
    size_t used = strlen(it->notice);
    if (notice[0])
        snprintf(it->notice + used, sizeof it->notice - used, "%s%s: %s", used ? "\n" : "",
                 it->output, notice);
    if (it->rep.notice[0]) {
        used = strlen(it->notice);
        snprintf(it->notice + used, sizeof it->notice - used, "%s%s: %s", used ? "\n" : "",
                 it->input, it->rep.notice);
    }
    it->ok = 1;
}

typedef struct worker_arg {
    batch *b;
    int id;
} worker_arg;

static void *worker(void *arg)
{
    worker_arg *w = arg;
    batch *b = w->b;
    ts_pipeline *p = b->shared ? b->shared : b->own[w->id];
    for (;;) {
        pthread_mutex_lock(&b->lock);
        int i = b->next < b->n ? b->next++ : -1;
        pthread_mutex_unlock(&b->lock);
        if (i < 0)
            break;
        item *it = &b->items[i];
        if (!it->error[0])
            process(b, it, p);
        pthread_mutex_lock(&b->lock);
        it->done = 1;
        b->finished++;
        if (b->progress)
            draw_progress(b, path_base(it->input));
        pthread_mutex_unlock(&b->lock);
    }
    return NULL;
}

/* photos: the text of op k of an item's run (the orientation op comes first when applied). */
static const char *run_op_text(const batch *b, const item *it, int k)
{
    int shift = it->orientation != 1;
    if (shift && k == 0)
        return photo_orient_text(it->orientation);
    return k - shift < b->chain.n ? b->chain.ops[k - shift].text : "?";
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static int write_report(const batch *b, const char *path, ts_pipeline *p)
{
    char *tmp = path_with_ext(path, "json.tmp");
    FILE *f = fopen(tmp, "w");
    if (!f) {
        ts_warn("%s: %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    const ts_device *dev = ts_pipeline_device(p);
    fprintf(f, "{\n  \"tool\": \"tessera %s\",\n  \"backend\": \"%s\",\n  \"device\": ", TS_VERSION,
            dev ? "gpu" : "cpu");
    json_str(f, dev ? dev->name : "CPU");
    fprintf(f, ",\n  \"ops\": ");
    json_str(f, b->o->ops);
    fprintf(f, ",\n  \"images\": [");
    for (int i = 0; i < b->n; i++) {
        const item *it = &b->items[i];
        fprintf(f, "%s\n    {\"input\": ", i ? "," : "");
        json_str(f, it->input);
        fprintf(f, ", \"output\": ");
        json_str(f, it->ok ? it->output : NULL);
        fprintf(f, ", \"ok\": %s", it->ok ? "true" : "false");
        if (!it->ok) {
            fprintf(f, ", \"error\": ");
            json_str(f, it->error);
            fprintf(f, "}");
            continue;
        }
        fprintf(f, ", \"width\": %d, \"height\": %d, \"channels\": %d, \"bits\": %d", it->width,
                it->height, it->channels, it->bytes * 8);
        fprintf(f, ", \"load_ms\": %.3f, \"save_ms\": %.3f, \"upload_ms\": %.3f, "
                   "\"download_ms\": %.3f, \"total_ms\": %.3f, \"ops\": [",
                it->load_ms, it->save_ms, it->rep.upload_ms, it->rep.download_ms,
                it->rep.total_ms);
        for (int k = 0; k < it->rep.n; k++) {
            const ts_variant *v = it->rep.op[k].variant;
            fprintf(f, "%s{\"op\": ", k ? ", " : "");
            json_str(f, run_op_text(b, it, k));
            fprintf(f, ", \"variant\": ");
            json_str(f, v ? v->name : "?");
            fprintf(f, ", \"backend\": \"%s\", \"ms\": %.4f}",
                    v && ts_variant_is_gpu(v) ? "gpu" : "cpu", it->rep.op[k].ms);
        }
        fprintf(f, "]}");
    }
    fprintf(f, "\n  ]\n}\n");
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        ts_warn("%s: cannot write the report: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

static void print_timings(const batch *b)
{
    for (int i = 0; i < b->n; i++) {
        const item *it = &b->items[i];
        if (!it->ok)
            continue;
        printf("%s  %dx%d %dch %d-bit:", it->input, it->width, it->height, it->channels,
               it->bytes * 8);
        for (int k = 0; k < it->rep.n; k++)
            printf("  %s [%s] %.3f ms", run_op_text(b, it, k),
                   it->rep.op[k].variant ? it->rep.op[k].variant->name : "?", it->rep.op[k].ms);
        if (it->rep.upload_ms > 0)
            printf("  (upload %.3f, download %.3f ms)", it->rep.upload_ms, it->rep.download_ms);
        printf("\n");
    }
}

static void on_signal(int sig)
{
    static const char msg[] = "\ntessera: interrupted; temporary files removed\n";
    tsio_remove_temps();
    if (write(2, msg, sizeof msg - 1) < 0) {
        /* nothing more to do */
    }
    _exit(128 + sig);
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

static int open_pipelines(batch *b, int workers)
{
    const ts_options *o = b->o;
    ts_pipeline *first = ts_open_pipeline(o);
    if (!first)
        return -1;
    if (ts_pipeline_on_gpu(first)) {
        b->shared = first;
        return 0;
    }
    b->own = xcalloc((size_t)workers, sizeof *b->own);
    b->own[0] = first;
    b->n_own = workers;
    for (int w = 1; w < workers; w++) {
        char msg[256];
        if (ts_pipeline_create(&b->own[w], TS_BACKEND_CPU, msg, sizeof msg) != TS_OK) {
            ts_warn("%s", ts_error_detail());
            return -1;
        }
        for (int f = 0; f < TS_FAM_COUNT; f++) {
            const ts_variant *v = ts_pipeline_selected(first, (ts_family)f);
            ts_pipeline_select(b->own[w], (ts_family)f, v ? v->name : NULL);
        }
    }
    return 0;
}

int ts_headless(const ts_options *o)
{
    batch b;
    char err[512];
    memset(&b, 0, sizeof b);
    b.o = o;
    if (ts_chain_parse(o->ops, &b.chain, err, sizeof err) != TS_OK) {
        ts_warn("--ops: %s", err);
        return 2;
    }
    for (int i = 0; i < o->n_inputs; i++) {
        const char *in = o->inputs[i];
        if (path_is_dir(in)) {
            int before = b.n;
            add_dir(&b, in, 0);
            if (b.n == before)
                snprintf(add_item(&b, in)->error, sizeof b.items[0].error,
                         "%s: a directory without images%s", in,
                         o->recursive ? "" : " (-r descends into subdirectories)");
        } else {
            item *it = add_item(&b, in);
            if (!path_exists(in))
                snprintf(it->error, sizeof it->error, "%s: %s", in, strerror(ENOENT));
        }
    }
    if (b.n == 0) {
        ts_warn("no images found in the inputs");
        ts_chain_free(&b.chain);
        return 1;
    }
    if (plan_outputs(&b) != 0) {
        ts_chain_free(&b.chain);
        return 1;
    }
    int workers = o->jobs < b.n ? o->jobs : b.n;
    /* the CPU reference's convolution shares what the workers leave: all of --jobs for one image */
    ts_ref_set_threads(o->jobs / workers);
    if (open_pipelines(&b, workers) != 0)
        return 1;
    install_signals();
    pthread_mutex_init(&b.lock, NULL);
    pthread_mutex_init(&b.gpu, NULL);
    b.progress = !o->quiet && isatty(2) && b.n > 1;
    double t0 = now_ms();
    pthread_t *tid = xcalloc((size_t)workers, sizeof *tid);
    worker_arg *args = xcalloc((size_t)workers, sizeof *args);
    for (int w = 0; w < workers; w++) {
        args[w].b = &b;
        args[w].id = w;
        if (w > 0 && pthread_create(&tid[w], NULL, worker, &args[w]) != 0) {
            ts_warn("cannot start thread %d: running with %d", w, w);
            workers = w;
            break;
        }
    }
    worker(&args[0]); /* the main thread works too */
    for (int w = 1; w < workers; w++)
        pthread_join(tid[w], NULL);
    double secs = (now_ms() - t0) / 1000;
    if (b.progress)
        fprintf(stderr, "\r\033[K");

    int failed = 0;
    for (int i = 0; i < b.n; i++) {
        item *it = &b.items[i];
        if (it->notice[0] && !o->quiet)
            ts_warn("%s", it->notice);
        if (it->error[0])
            failed++;
    }
    for (int i = 0; i < b.n; i++)
        if (b.items[i].error[0])
            ts_warn("%s", b.items[i].error);
    if (o->timings)
        print_timings(&b);
    ts_pipeline *p = b.shared ? b.shared : b.own[0];
    int report_bad = o->report && write_report(&b, o->report, p) != 0;
    if (!o->quiet) {
        const ts_device *dev = ts_pipeline_device(p);
        if (failed)
            ts_warn("%d of %d images failed", failed, b.n);
        ts_warn("%d image%s written to %s in %.2f s (%s%s)", b.n - failed, b.n - failed == 1 ? "" : "s",
                o->output, secs, dev ? "GPU " : "CPU", dev ? dev->name : "");
    }
    if (b.shared)
        ts_pipeline_destroy(b.shared);
    for (int w = 0; w < b.n_own; w++)
        ts_pipeline_destroy(b.own[w]);
    for (int i = 0; i < b.n; i++) {
        free(b.items[i].input);
        free(b.items[i].output);
        free(b.items[i].real_input);
    }
    free(b.own);
    free(b.items);
    free(tid);
    free(args);
    ts_chain_free(&b.chain);
    return failed || report_bad ? 1 : 0;
}
