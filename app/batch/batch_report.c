/* batch_report.c - what the batch says when it is done: --report (JSON, written like an image
 * output: a temp file created exclusively beside it, then renamed), --timings (a line per image)
 * and the summary (images/s and MP/s, per device).
 */
#include "batch.h"
#include "batch_stream.h"
#include "gpu_jpeg.h"
#include "photo.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *batch_stage_name(batch_stage s)
{
    static const char *const names[ST_COUNT] = {"read",     "decode", "upload", "ops",
                                                "download", "encode", "write"};
    return (unsigned)s < ST_COUNT ? names[s] : "?";
}

/* Calls fn(ctx, name, ms) for each stage as measured: "read+decode" where a codec timed the two
 * together. */
static void each_stage(const item *it, void (*fn)(void *, const char *, double, int), void *ctx)
{
    int k = 0;
    for (int s = 0; s < ST_COUNT; s++) {
        char name[64];
        double ms = it->ms[s];
        int first = s;
        while (s + 1 < ST_COUNT && (it->merged >> s & 1u))
            ms += it->ms[++s];
        if (first == s)
            snprintf(name, sizeof name, "%s", batch_stage_name((batch_stage)s));
        else
            snprintf(name, sizeof name, "%s+%s", batch_stage_name((batch_stage)first),
                     batch_stage_name((batch_stage)s));
        fn(ctx, name, ms, k++);
    }
}

const char *batch_op_text(const batch *b, const item *it, int k)
{
    int shift = it->orientation > 1;
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
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_stage(void *ctx, const char *name, double ms, int k)
{
    FILE *f = ctx;
    fprintf(f, "%s\"%s\": %.3f", k ? ", " : "", name, ms);
}

static const char *device_label(const device_slot *d, const ts_device *dev, char *buf, size_t n)
{
    if (d->id < 0)
        return "cpu";
    snprintf(buf, n, "gpu%d%s%s", d->id, dev ? " " : "", dev ? dev->name : "");
    return buf;
}

static void report_image(FILE *f, const batch *b, const item *it)
{
    fprintf(f, "\n    {\"input\": ");
    json_str(f, it->input);
    fprintf(f, ", \"output\": ");
    json_str(f, it->ok || it->skipped ? it->output : NULL);
    if (it->skipped) { /* --skip-existing: the output is there, whole, from an earlier run */
        fprintf(f, ", \"ok\": true, \"skipped\": true}");
        return;
    }
    fprintf(f, ", \"ok\": %s", it->ok ? "true" : "false");
    if (!it->ok) {
        fprintf(f, ", \"error\": ");
        json_str(f, it->error ? it->error : "not done");
        fprintf(f, "}");
        return;
    }
    fprintf(f, ", \"device\": %d, \"decode_path\": ", it->device >= 0 ? b->devs[it->device].id : -1);
    json_str(f, it->decode_path);
    fprintf(f, ", \"width\": %d, \"height\": %d, \"channels\": %d, \"bits\": %d", it->width,
            it->height, it->channels, it->bytes * 8);
    /* the fields of earlier reports, kept: load = read + decode, save = encode + write */
    fprintf(f, ", \"load_ms\": %.3f, \"save_ms\": %.3f, \"upload_ms\": %.3f, \"download_ms\": %.3f",
            it->ms[ST_READ] + it->ms[ST_DECODE], it->ms[ST_ENCODE] + it->ms[ST_WRITE],
            it->ms[ST_UPLOAD], it->ms[ST_DOWNLOAD]);
    fprintf(f, ", \"total_ms\": %.3f, \"stages_ms\": {", it->total_ms);
    each_stage(it, json_stage, f);
    fprintf(f, "}, \"ops\": [");
    for (int k = 0; k < it->rep.n; k++) {
        const ts_variant *v = it->rep.op[k].variant;
        fprintf(f, "%s{\"op\": ", k ? ", " : "");
        json_str(f, batch_op_text(b, it, k));
        fprintf(f, ", \"variant\": ");
        json_str(f, v ? v->name : "?");
        fprintf(f, ", \"backend\": \"%s\", \"ms\": %.4f}",
                v && ts_variant_is_gpu(v) ? "gpu" : "cpu", it->rep.op[k].ms);
    }
    fprintf(f, "]}");
}

int batch_report_open(batch *b)
{
    const char *path = b->o->report;
    char tmp[PATH_MAX + 64];
    int fd = tsio_temp_open(path, tmp, sizeof tmp, &b->report_slot);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        app_warn("%s: cannot write the report: %s", path, strerror(errno));
        if (fd >= 0) {
            char err[256];
            close(fd);
            tsio_temp_finish(tmp, path, 0, 0, b->report_slot, err, sizeof err);
        }
        return -1;
    }
    b->report = f;
    b->report_tmp = xstrdup(tmp);
    const ts_device *dev = b->devs[0].shared ? ts_pipeline_device(b->devs[0].shared) : NULL;
    fprintf(f, "{\n  \"tool\": \"tessera %s\",\n  \"backend\": \"%s\",\n  \"device\": ", APP_VERSION,
            dev ? "gpu" : "cpu");
    json_str(f, dev ? dev->name : "CPU");
    fprintf(f, ",\n  \"ops\": ");
    json_str(f, b->o->ops);
    if (b->o->shard_n)
        fprintf(f, ",\n  \"shard\": {\"index\": %d, \"count\": %d}", b->o->shard_k, b->o->shard_n);
    /* the images as they retire, the run's figures after them */
    fprintf(f, ",\n  \"images\": [");
    return 0;
}

void batch_report_item(batch *b, const item *it)
{
    if (!b->report)
        return;
    if (b->report_count++)
        fputc(',', b->report);
    report_image(b->report, b, it);
}

int batch_report_close(batch *b)
{
    FILE *f = b->report;
    const char *path = b->o->report;
    char err[256];
    if (!f)
        return -1;
    b->report = NULL;
    fprintf(f, "\n  ],\n  \"seconds\": %.3f,\n  \"host_cpu_ms\": %.1f,\n  \"host_cpu_stage_ms\": {",
            b->secs, b->host_cpu_ms);
    for (int s = 0; s < ST_COUNT; s++)
        fprintf(f, "%s\"%s\": %.1f", s ? ", " : "", batch_stage_name((batch_stage)s),
                b->stage_cpu_ms[s]);
    fprintf(f, "},\n  \"devices\": [");
    for (int d = 0; d < b->n_devs; d++) {
        char label[300];
        fprintf(f, "%s{\"device\": %d, \"name\": ", d ? ", " : "", b->devs[d].id);
        const ts_device *own = b->devs[d].shared ? ts_pipeline_device(b->devs[d].shared) : NULL;
        json_str(f, device_label(&b->devs[d], own, label, sizeof label));
        fprintf(f, ", \"images\": %d, \"images_per_s\": %.3f, \"mpix_per_s\": %.3f}",
                b->devs[d].images, b->secs > 0 ? b->devs[d].images / b->secs : 0,
                b->secs > 0 ? b->devs[d].mpix / b->secs : 0);
    }
    fprintf(f, "]\n}\n");
    int bad = ferror(f) != 0;
    errno = 0;
    bad |= fclose(f) != 0;
    int e = errno ? errno : EIO;
    if (tsio_temp_finish(b->report_tmp, path, !bad, b->o->force, b->report_slot, err,
                         sizeof err) != TS_OK) {
        app_warn("%s: cannot write the report: %s", path, bad ? strerror(e) : err);
        return -1;
    }
    return 0;
}

/* --timings' stages; on the CPU, upload and download (always 0) are left out. */
typedef struct stage_line {
    int gpu, printed;
} stage_line;

/* One notice line at a time: the escaping in app_warn sees each alone. */
static void say_notices(const batch *b, const char *text)
{
    if (b->progress)
        fprintf(stderr, "\r\033[K");
    for (const char *line = text;;) {
        const char *nl = strchr(line, '\n');
        app_warn("%.*s", nl ? (int)(nl - line) : (int)strlen(line), line);
        if (!nl)
            break;
        line = nl + 1;
    }
}

void batch_retire(batch *b)
{
    while (b->retired < b->pulled) {
        item *it = batch_item(b, b->retired);
        if (it->state != IT_DONE)
            return;
        /* notices only for written images: a file that fails says its error alone */
        if (it->ok && it->notice && !b->o->quiet)
            say_notices(b, it->notice);
        batch_report_item(b, it);
        if (b->o->jsonl)
            batch_jsonl_item(b, it);
        if (b->o->timings)
            batch_print_item_timings(b, it);
        if (it->skipped) {
            b->skipped_existing++;
        } else if (it->ok) {
            b->written++;
            for (int s = 0; s < ST_COUNT; s++)
                b->stage_cpu_ms[s] += it->cpu[s];
        } else {
            b->failed++;
            if (b->n_errors == b->cap_errors) {
                b->cap_errors = b->cap_errors ? 2 * b->cap_errors : 16;
                char **grown = realloc(b->errors, (size_t)b->cap_errors * sizeof *grown);
                if (!grown) {
                    app_warn("out of memory");
                    exit(1);
                }
                b->errors = grown;
            }
            b->errors[b->n_errors++] = it->error ? it->error : app_format("%s: not done",
                                                                           it->input);
            it->error = NULL;
        }
        batch_item_release(it);
        b->retired++;
    }
}

static void print_stage(void *ctx, const char *name, double ms, int k)
{
    stage_line *l = ctx;
    (void)k;
    if (!l->gpu && (strcmp(name, "upload") == 0 || strcmp(name, "download") == 0))
        return;
    printf("%s%s %.3f", l->printed++ ? ", " : "", name, ms);
}

void batch_print_item_timings(const batch *b, const item *it)
{
    if (!it->ok)
        return;
    int gpu = it->device >= 0 && b->devs[it->device].id >= 0; /* the CPU: no device, no transfers */
    char *name = app_escape(it->input);
    printf("%s  %dx%d %dch %d-bit, decode %s", name, it->width, it->height, it->channels,
           it->bytes * 8, it->decode_path);
    if (gpu)
        printf(", device %d", b->devs[it->device].id);
    printf(":");
    free(name);
    for (int k = 0; k < it->rep.n; k++)
        printf("  %s [%s] %.3f ms", batch_op_text(b, it, k),
               it->rep.op[k].variant ? it->rep.op[k].variant->name : "?", it->rep.op[k].ms);
    stage_line line = {gpu, 0};
    printf("  (");
    each_stage(it, print_stage, &line);
    printf("; total %.3f ms)\n", it->total_ms);
}

void batch_mark(batch *b, const char *what, int dev, double t_begin, double t_end)
{
    pthread_mutex_lock(&b->lock);
    if (b->n_events < BATCH_MAX_EVENTS)
        b->events[b->n_events++] = (batch_event){what, dev, t_begin, t_end};
    pthread_mutex_unlock(&b->lock);
}

static int cmp_event(const void *x, const void *y)
{
    const batch_event *a = x, *b = y;
    if (a->t_begin != b->t_begin)
        return a->t_begin < b->t_begin ? -1 : 1;
    return a->t_end > b->t_end ? -1 : a->t_end < b->t_end; /* a span before its parts */
}

/* The start-up as a timeline: each span from .. to (ms from the batch's start), the workers'
 * contexts of a device as one span (their count, the first start, the last end). */
static void print_timeline(const batch *b)
{
    batch_event ev[BATCH_MAX_EVENTS];
    int n = 0;
    for (int i = 0; i < b->n_events; i++) {
        const batch_event *e = &b->events[i];
        int k = 0;
        if (strncmp(e->what, "worker", 6) == 0) /* merge a device's workers */
            for (k = 0; k < n; k++)
                if (ev[k].what == e->what && ev[k].dev == e->dev) {
                    ev[k].t_begin = e->t_begin < ev[k].t_begin ? e->t_begin : ev[k].t_begin;
                    ev[k].t_end = e->t_end > ev[k].t_end ? e->t_end : ev[k].t_end;
                    break;
                }
        if (k == n || strncmp(e->what, "worker", 6) != 0)
            ev[n++] = *e;
    }
    qsort(ev, (size_t)n, sizeof *ev, cmp_event);
    if (b->cuda_sync)
        printf("start-up (ms from the start; host threads wait for the GPU: %s):\n", b->cuda_sync);
    else
        printf("start-up (ms from the start):\n");
    for (int i = 0; i < n; i++) {
        char dev[32] = "";
        if (ev[i].dev >= 0)
            snprintf(dev, sizeof dev, " [gpu%d]", ev[i].dev);
        printf("  %8.1f .. %8.1f  %s%s%s\n", ev[i].t_begin, ev[i].t_end, ev[i].what, dev,
               strncmp(ev[i].what, "worker", 6) == 0 ? "s (first to last)" : "");
    }
    printf("  %8.1f             first image decoded\n", b->first_decoded);
    printf("  %8.1f             first output written\n", b->first_written);
}

void batch_print_timings(const batch *b)
{
    if (b->n_devs > 0 && b->devs[0].id >= 0) /* the CPU has no set-up to speak of */
        printf("setup: devices and pipelines %.1f ms, nvJPEG load %.1f ms, handles %.1f ms, "
               "warm-up %.1f ms, slowest worker's codec context %.1f ms\n",
               b->setup_open_ms, b->setup_load_ms, b->setup_codec_ms, b->setup_warm_ms,
               b->setup_worker_ms);
    if (b->gpu_codec) {
        gj_alloc_counts a;
        gj_alloc_counts_get(&a);
        printf("nvJPEG memory (%s): device %ld allocations, %.0f MB, %.1f ms, %ld frees %.1f ms; "
               "pinned %ld allocations (%ld reused), %.0f MB, %.1f ms, %ld frees %.1f ms\n",
               a.mode, a.n[0][0], a.bytes[0] / 1e6, a.ms[0][0], a.n[0][1], a.ms[0][1], a.n[1][0],
               a.pinned_reused, a.bytes[1] / 1e6, a.ms[1][0], a.n[1][1], a.ms[1][1]);
    }
    print_timeline(b);
    long done = b->written > 0 ? b->written : 1;
    printf("host CPU: %.0f ms over the work, %.2f ms per image written\n", b->host_cpu_ms,
           b->host_cpu_ms / (double)done);
    /* where it went, from the threads' own clocks: the rest is waiting (spinning) outside the
     * stages, the scheduler, set-up threads and the failed images' work */
    double staged = 0;
    int gpu = b->n_devs > 0 && b->devs[0].id >= 0, said = 0;
    printf("host CPU by stage, ms per image written:");
    for (int s = 0; s < ST_COUNT; s++) {
        staged += b->stage_cpu_ms[s];
        if (!gpu && (s == ST_UPLOAD || s == ST_DOWNLOAD))
            continue; /* the CPU has no transfers */
        printf("%s %s %.2f", said++ ? "," : "", batch_stage_name((batch_stage)s),
               b->stage_cpu_ms[s] / (double)done);
    }
    printf("; outside the stages %.2f\n", (b->host_cpu_ms - staged) / (double)done);
}

void batch_print_summary(const batch *b)
{
    const app_options *o = b->o;
    const ts_device *dev = b->devs[0].shared ? ts_pipeline_device(b->devs[0].shared) : NULL;
    double mpix = 0;
    for (int d = 0; d < b->n_devs; d++)
        mpix += b->devs[d].mpix;
    long done = b->written;
    double s = b->secs > 0 ? b->secs : 1e-9;
    if (b->failed)
        app_warn("%ld of %ld images failed", b->failed, b->n);
    app_warn("%ld image%s written to %s in %.2f s (%s%s): %.1f images/s, %.1f MP/s", done,
            done == 1 ? "" : "s", o->output, b->secs, dev ? "GPU " : "CPU", dev ? dev->name : "",
            done / s, mpix / s);
    for (int d = 0; d < b->n_devs && b->n_devs > 1; d++)
        app_warn("  device %d: %d images, %.1f images/s, %.1f MP/s", b->devs[d].id,
                b->devs[d].images, b->devs[d].images / s, b->devs[d].mpix / s);
    if (b->skipped)
        app_warn("%d file%s skipped: not images by name", b->skipped, b->skipped == 1 ? "" : "s");
    if (b->skipped_existing)
        app_warn("%ld image%s skipped: the output exists (--skip-existing)", b->skipped_existing,
                 b->skipped_existing == 1 ? "" : "s");
    if (b->skipped_dirs)
        app_warn("%d folder%s skipped: -r descends into subfolders", b->skipped_dirs,
                 b->skipped_dirs == 1 ? "" : "s");
    if (b->dirs_skipped)
        app_warn("%d folder%s not entered: symlinks to folders, or folders already walked",
                 b->dirs_skipped, b->dirs_skipped == 1 ? "" : "s");
}
