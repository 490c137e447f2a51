/* headless.c - `tessera --headless`: batch conversion with a chain of ops.
 *
 * Plan first, then work (batch_plan.c): every input is expanded and given its output path before
 * any pixel is decoded. Then --jobs workers share the images through one scheduler (sched): an
 * image goes through three stages, decode, ops and encode (each a function, each timed), and
 * between them waits in a bounded queue; any worker takes any stage's work, so a slow image
 * never stalls the others and at most 2 x --jobs images are in memory. Each worker is bound to a
 * device slot, whose op chain it runs: on the GPU the slot's pipeline is shared (one worker at a
 * time; the others decode and encode meanwhile); on the CPU every worker has its own pipeline.
 * With several GPUs (--devices) there is one slot per GPU, workers dealt round-robin to them;
 * inputs are taken from the one shared list by whichever worker is free, and an image stays on
 * the device that decoded it (its own queues per slot) until it is written.
 * The codecs behind the decode and encode stages are in batch_codec.c; the GPU path (nvJPEG,
 * device buffers, pinned staging) in batch_gpu.c; the device slots in batch_devices.c.
 *
 * Outputs are written to a temp file and renamed (image_save.c). Signals are handled by a thread
 * of their own (sigwait), so removing the temp files never races with a worker creating one.
 * Failures are collected and printed in input order at the end, one line each.
 */
#include "batch.h"
#include "batch_source.h"
#include "photo.h"
#include "kernel_file.h"
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- the stages of one image */

static void append_notice(item *it, const char *who, const char *text)
{
    if (!text[0])
        return;
    char *old = it->notice;
    it->notice = old ? app_format("%s\n%s: %s", old, who, text) : app_format("%s: %s", who, text);
    free(old);
}

/* Decodes n files (batch_decode); those that fail carry their error. */
static void stage_decode(batch *b, gpu_worker *w, decode_slot *slots, int n)
{
    batch_decode(b, w, slots, n);
    for (int k = 0; k < n; k++) {
        item *it = slots[k].it;
        if (slots[k].st != TS_OK) {
            item_error(it, "%s: %s", it->input, slots[k].err);
            tsio_meta_free(&slots[k].meta);
            continue;
        }
        if (slots[k].notice[0])
            append_notice(it, it->input, slots[k].notice);
        /* the EXIF orientation's op goes before the user's chain; metadata for the output */
        ts_status st = batch_chain_for(b, &slots[k].meta, it);
        if (st == TS_OK)
            st = photo_meta_out(&slots[k].meta, b->o->strip, it->orientation != 1, b->chain.n > 0,
                                &it->meta_out);
        tsio_meta_free(&slots[k].meta);
        if (st != TS_OK) {
            item_error(it, "%s: %s", it->input, ts_error_detail());
            ts_image_free(&slots[k].im);
            slots[k].st = st;
            continue;
        }
        it->width = slots[k].im.width, it->height = slots[k].im.height;
        it->channels = slots[k].im.channels, it->bytes = slots[k].im.bytes;
    }
}

/* Frees an image between stages: a device one goes back to its slot's pool. */
static void drop_image(device_slot *d, ts_image *im, size_t *cap, int on_device)
{
    if (on_device)
        batch_gpu_give(d, im, cap);
    else
        ts_image_free(im);
}

/* The chain on a GPU worker: the input (device, or host from the CPU decoder) in, the result
 * left on the device and taken into a pool buffer (*out, *out_cap), no download. */
static ts_status run_on_device(const batch *b, item *it, device_slot *d, ts_pipeline *p,
                               ts_image *in, size_t *in_cap, int in_on_device, ts_image *out,
                               size_t *out_cap)
{
    ts_run_opts ro = {.keep_output = 1};
    ts_image shape;
    memset(&shape, 0, sizeof shape);
    memset(out, 0, sizeof *out);
    *out_cap = 0;
    pthread_mutex_lock(&d->lock);
    ts_status st = in_on_device ? ts_pipeline_run_dev(p, it->chain, in, &shape, &it->rep, &ro)
                                : ts_pipeline_run_ex(p, it->chain, in, &shape, &it->rep, &ro);
    if (st == TS_OK) {
        if (in_on_device) { /* the input's buffer is free now: the pipeline takes it in exchange */
            *out = *in, *out_cap = *in_cap;
            memset(in, 0, sizeof *in), *in_cap = 0;
        } else {
            batch_gpu_take(d, out, out_cap);
        }
        st = ts_pipeline_take_result(p, out, out_cap);
    }
    pthread_mutex_unlock(&d->lock);
    if (st != TS_OK) /* out, when taken, holds no result */
        drop_image(d, out, out_cap, 1);
    return st;
}

static int stage_ops(const batch *b, item *it, device_slot *d, ts_pipeline *p, gpu_worker *w,
                     ts_image *in, size_t *cap, int *on_device, ts_image *out, size_t *out_cap)
{
    ts_status st;
    *out_cap = 0;
    if (w) {
        st = run_on_device(b, it, d, p, in, cap, *on_device, out, out_cap);
        drop_image(d, in, cap, *on_device);
        *on_device = st == TS_OK;
    } else if (d->shared) {
        pthread_mutex_lock(&d->lock);
        st = ts_pipeline_run(p, it->chain, in, out, &it->rep);
        pthread_mutex_unlock(&d->lock);
        ts_image_free(in);
    } else {
        st = ts_pipeline_run(p, it->chain, in, out, &it->rep);
        ts_image_free(in);
    }
    if (st != TS_OK) {
        item_error(it, "%s: %s", it->input, ts_error_detail());
        return -1;
    }
    it->ms[ST_UPLOAD] = it->rep.upload_ms;
    it->ms[ST_DOWNLOAD] = it->rep.download_ms;
    double ops = it->rep.total_ms - it->rep.upload_ms - it->rep.download_ms;
    it->ms[ST_OPS] = ops > 0 ? ops : 0;
    return 0;
}

static int stage_encode(const batch *b, item *it, gpu_worker *w, device_slot *d, ts_image *out,
                        size_t *cap, int on_device)
{
    char err[1024], notice[256];
    /* -r mirrors the input tree: the output's folder may be new */
    const char *base = path_base(it->output);
    if (it->from_dir && base != it->output) {
        char *dir = app_format("%.*s", (int)(base - it->output), it->output);
        int made, e = path_mkdirs(dir, &made);
        free(dir);
        if (e) {
            char eb[128];
            item_error(it, "%s: cannot create its folder: %s", it->output,
                       tsio_errtext(e, eb, sizeof eb));
            drop_image(d, out, cap, on_device);
            return -1;
        }
    }
    ts_status st = batch_encode(b, w, it, out, on_device, notice, sizeof notice, err, sizeof err);
    drop_image(d, out, cap, on_device);
    tsio_meta_free(&it->meta_out); /* written (or failed): the output's metadata is not needed */
    if (st != TS_OK) {
        item_error(it, "%s: %s", it->output, err);
        return -1;
    }
    append_notice(it, it->output, notice);
    return 0;
}

/* ---------------------------------------------------------------- workers */

static void draw_progress(batch *b, const char *name)
{
    /* while the source is still giving inputs, the total is "so far" (a '+' after it) */
    int width = 30, filled = b->n ? (int)(b->finished * width / b->n) : width;
    char *shown = app_escape(name);
    fprintf(stderr, "\r\033[K[%.*s%*s] %ld/%ld%s %.40s", filled, "##############################",
            width - filled, "", b->finished, b->n, b->src_done ? "" : "+", shown);
    fflush(stderr);
    free(shown);
}

/* An image between two stages: decoded and waiting for its device, or processed and waiting for
 * the encoder. */
typedef struct staged {
    item *it;
    ts_image im;
    size_t cap;    /* on_device: the pool buffer's bytes */
    int on_device; /* im lies on its slot's device */
} staged;

/* A FIFO of at most `cap` images; the batch lock guards it. */
typedef struct stage_queue {
    staged *q;
    int head, count, cap;
} stage_queue;

static void push(stage_queue *s, staged x)
{
    s->q[(s->head + s->count++) % s->cap] = x;
}

static staged pop(stage_queue *s)
{
    staged x = s->q[s->head];
    s->head = (s->head + 1) % s->cap;
    s->count--;
    return x;
}

/* The scheduler of the workers. Images in flight (decoded, not yet written) are at most `cap`,
 * so memory stays bounded whatever the batch's length; a worker takes, in this order, an image
 * to encode (frees memory first), an image for its device when that device is free, or the next
 * inputs to decode. On the GPU a worker whose device is busy decodes or encodes meanwhile instead
 * of waiting, so reads, codecs and the op chain of different images overlap. Inputs are planned
 * into the ring as it frees (batch_fill) and retired from it in input order (batch_retire). */
typedef struct sched {
    stage_queue *to_ops, *to_encode; /* per device slot: an image stays where it was decoded */
    int in_flight, cap;
} sched;

#define MAX_STEP 256 /* files of one decode step (batch_decode_step's largest) */

typedef struct worker_arg {
    batch *b;
    sched *s;
    int id;   /* the worker's own CPU pipeline */
    int slot; /* its device slot: the one whose op chain it runs */
    gpu_worker *gpu; /* its nvJPEG context and staging (GPU slots), made in its thread */
    item *step[MAX_STEP]; /* the inputs of its decode step */
} worker_arg;

enum { W_DONE, W_DECODE, W_OPS, W_ENCODE };

/* Retires what is done and plans new inputs into the slots that frees, until neither moves. */
static void feed(batch *b)
{
    long before;
    do {
        before = b->retired + b->pulled;
        batch_retire(b);
        batch_fill(b);
    } while (b->retired + b->pulled != before);
}

/* The next planned item to decode (those that failed at planning are passed: they are done and
 * retire in their turn); NULL when none is planned yet. */
static item *next_planned(batch *b)
{
    for (;;) {
        if (b->dispatched == b->pulled)
            feed(b);
        if (b->dispatched == b->pulled)
            return NULL;
        item *it = batch_item(b, b->dispatched);
        if (it->state == IT_PLANNED)
            return it;
        b->dispatched++;
    }
}

/* Picks the next piece of work (the batch lock held); waits while there is none yet. W_DECODE
 * takes `*n_decode` inputs into w->step (as many as the codecs batch and the memory bound
 * allow). */
static int next_work(batch *b, sched *s, worker_arg *w, staged *job, int *n_decode)
{
    int slot = w->slot;
    device_slot *d = &b->devs[slot];
    for (;;) {
        if (s->to_encode[slot].count) {
            *job = pop(&s->to_encode[slot]);
            return W_ENCODE;
        }
        if (s->to_ops[slot].count && !d->busy) {
            *job = pop(&s->to_ops[slot]);
            d->busy = d->shared != NULL; /* a CPU slot runs one chain per worker */
            return W_OPS;
        }
        item *it;
        if (s->in_flight < s->cap && (it = next_planned(b)) != NULL) {
            int step = batch_decode_step(b, it->input);
            if (step > MAX_STEP)
                step = MAX_STEP;
            *n_decode = 0;
            while (*n_decode < step && s->in_flight < s->cap && (it = next_planned(b)) != NULL) {
                /* a file that is not batched is a step of its own */
                if (*n_decode > 0 && batch_decode_step(b, it->input) < 2)
                    break;
                it->state = IT_WORKING;
                w->step[(*n_decode)++] = it;
                s->in_flight++;
                b->dispatched++;
            }
            return W_DECODE;
        }
        if (b->src_done && b->dispatched == b->pulled && s->in_flight == 0) {
            feed(b);
            return W_DONE;
        }
        pthread_cond_wait(&b->wake, &b->lock);
    }
}

/* An image is finished (written or failed): its figures, the progress bar, and every image now
 * at the head of the ring is retired. Lock held. */
static void finish(batch *b, sched *s, item *it)
{
    s->in_flight--;
    b->finished++;
    it->state = IT_DONE;
    if (it->ok && !b->first_written)
        b->first_written = now_ms() - b->t0;
    if (it->ok) {
        device_slot *d = &b->devs[it->device];
        d->images++;
        d->mpix += (double)it->width * it->height / 1e6;
    }
    if (b->progress)
        draw_progress(b, path_base(it->input));
    feed(b);
}

/* Decodes the step's n inputs (the lock not held), then queues what decoded and finishes what
 * did not (the lock held on return). */
static void decode_step(batch *b, sched *s, worker_arg *w, int n)
{
    decode_slot *slots = xcalloc((size_t)n, sizeof *slots);
    double t0 = now_ms();
    for (int k = 0; k < n; k++) {
        slots[k].it = w->step[k];
        slots[k].it->t_start = t0;
    }
    stage_decode(b, w->gpu, slots, n);
    pthread_mutex_lock(&b->lock);
    if (!b->first_decoded)
        b->first_decoded = now_ms() - b->t0;
    for (int k = 0; k < n; k++) {
        if (slots[k].st == TS_OK)
            push(&s->to_ops[w->slot],
                 (staged){slots[k].it, slots[k].im, slots[k].cap, slots[k].on_device});
        else
            finish(b, s, slots[k].it);
    }
    free(slots);
}

static void *worker(void *arg)
{
    worker_arg *w = arg;
    batch *b = w->b;
    sched *s = w->s;
    device_slot *d = &b->devs[w->slot];
    ts_pipeline *p = d->shared ? d->shared : b->own[w->id];
    w->gpu = batch_gpu_worker_create(b, d); /* in this thread: it makes the device current */
    pthread_mutex_lock(&b->lock);
    for (;;) {
        staged job;
        int n_decode = 0;
        int kind = next_work(b, s, w, &job, &n_decode);
        if (kind == W_DONE)
            break;
        pthread_mutex_unlock(&b->lock);
        if (kind == W_DECODE) {
            decode_step(b, s, w, n_decode); /* returns with the lock held */
            pthread_cond_broadcast(&b->wake);
            continue;
        }
        item *it = job.it;
        ts_image out;
        size_t out_cap;
        int failed;
        if (kind == W_OPS) {
            it->device = w->slot;
            double c0 = thread_cpu_ms();
            failed = stage_ops(b, it, d, p, w->gpu, &job.im, &job.cap, &job.on_device, &out,
                               &out_cap);
            it->cpu[ST_OPS] += thread_cpu_ms() - c0;
            job.im = out;
            job.cap = out_cap;
        } else {
            failed = stage_encode(b, it, w->gpu, d, &job.im, &job.cap, job.on_device);
            if (!failed) {
                it->total_ms = now_ms() - it->t_start;
                append_notice(it, it->input, it->rep.notice);
                it->ok = 1;
            }
        }
        pthread_mutex_lock(&b->lock);
        if (kind == W_OPS)
            d->busy = 0;
        if (failed || kind == W_ENCODE)
            finish(b, s, it);
        else
            push(&s->to_encode[w->slot], job);
        pthread_cond_broadcast(&b->wake);
    }
    pthread_cond_broadcast(&b->wake);
    pthread_mutex_unlock(&b->lock);
    batch_gpu_worker_destroy(w->gpu);
    w->gpu = NULL;
    return NULL;
}

/* ---------------------------------------------------------------- signals */

static sigset_t stop_signals;

/* The only thread that sees SIGINT/SIGTERM/SIGHUP (every other one blocks them). It is not a
 * handler, so it may take the temp-file lock: it waits for any half-created temp file to be
 * registered, removes them all, keeps new ones from being made, then ends the process. */
static void *signal_thread(void *arg)
{
    (void)arg;
    int sig = 0;
    while (sigwait(&stop_signals, &sig) != 0) {
    }
    /* the batch's end cancels this thread: not once it has begun, or the temp lock stays held
     * and the process would end without the message and the status */
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    tsio_remove_temps_final();
    static const char msg[] = "\ntessera: interrupted; temporary files removed\n";
    if (write(2, msg, sizeof msg - 1) < 0) {
        /* nothing more to do */
    }
    _exit(128 + sig);
}

/* Blocks the stop signals in this thread and every thread started after (the workers and the
 * GPU runtime's), then starts the thread that handles them. */
static int start_signal_thread(pthread_t *t)
{
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    if (pthread_create(t, NULL, signal_thread, NULL) != 0) {
        pthread_sigmask(SIG_UNBLOCK, &stop_signals, NULL);
        app_warn("cannot start the signal thread: Ctrl+C ends the batch without cleaning up");
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- the batch */

static void run_workers(batch *b, int workers)
{
    pthread_t *tid = xcalloc((size_t)workers, sizeof *tid);
    worker_arg *args = xcalloc((size_t)workers, sizeof *args);
    sched s;
    memset(&s, 0, sizeof s);
    /* two images in flight per worker: one being worked on, one waiting in a queue */
    s.cap = 2 * workers;
    s.to_ops = xcalloc((size_t)b->n_devs, sizeof *s.to_ops);
    s.to_encode = xcalloc((size_t)b->n_devs, sizeof *s.to_encode);
    for (int d = 0; d < b->n_devs; d++) {
        s.to_ops[d] = (stage_queue){xcalloc((size_t)s.cap, sizeof(staged)), 0, 0, s.cap};
        s.to_encode[d] = (stage_queue){xcalloc((size_t)s.cap, sizeof(staged)), 0, 0, s.cap};
    }
    double t0 = now_ms();
    for (int w = 0; w < workers; w++) {
        args[w].b = b, args[w].s = &s, args[w].id = w, args[w].slot = w % b->n_devs;
        if (w > 0 && pthread_create(&tid[w], NULL, worker, &args[w]) != 0) {
            app_warn("cannot start thread %d: running with %d", w, w);
            workers = w;
            break;
        }
    }
    worker(&args[0]); /* the main thread works too */
    for (int w = 1; w < workers; w++)
        pthread_join(tid[w], NULL);
    b->secs = (now_ms() - t0) / 1000;
    for (int d = 0; d < b->n_devs; d++) {
        free(s.to_ops[d].q);
        free(s.to_encode[d].q);
    }
    free(s.to_ops);
    free(s.to_encode);
    free(tid);
    free(args);
}

static double tv_ms(struct timeval t)
{
    return t.tv_sec * 1e3 + t.tv_usec / 1e3;
}

static int run_batch(const app_options *o)
{
    batch b;
    char err[512];
    memset(&b, 0, sizeof b);
    b.o = o;
    b.t0 = now_ms();
    pthread_mutex_init(&b.lock, NULL);
    pthread_mutex_init(&b.chain_lock, NULL);
    pthread_cond_init(&b.wake, NULL);
    int rc = 0;
    if (app_chain_parse(o->ops, &b.chain, err, sizeof err) != TS_OK) {
        app_warn("--ops: %s", err);
        rc = 2;
    }
    if (!rc)
        rc = batch_start(&b);
    if (rc)
        goto out;
    batch_mark(&b, "plan: the first inputs named and checked", -1, 0, now_ms() - b.t0);
    /* a batch known to be shorter than --jobs needs no more workers than images */
    int workers = b.src_done && b.n < o->jobs ? (b.n > 0 ? (int)b.n : 1) : o->jobs;
    b.workers = workers;
    /* the CPU reference's convolution shares what the workers leave: all of --jobs for one image */
    ts_ref_set_threads(o->jobs / workers);
    /* Not done, measured (H100 host, 2026-11-26; tools/results/nvidia-h100-batch-2026-11-26b.md):
     * a short batch on the CPU alone (30 photos 0.62 s against 0.92 s) and the first inputs on
     * the CPU while the GPU starts (slower: 120 photos 1.03 s against 0.92 s). Both choose the
     * CPU for an image by the batch's length or position, so a file's bytes would depend on the
     * batch it came in, and --shard's shards would no longer add up to the one-process run. */
    double t_open = now_ms();
    if (batch_open_pipelines(&b, workers) != 0) {
        batch_close_pipelines(&b);
        rc = 1;
        goto out;
    }
    b.setup_open_ms = now_ms() - t_open;
    batch_gpu_open(&b);
    if (o->report && batch_report_open(&b) != 0) {
        batch_gpu_close(&b);
        batch_close_pipelines(&b);
        rc = 1;
        goto out;
    }
    b.progress = !o->quiet && isatty(2) && !(b.src_done && b.n <= 1);
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    run_workers(&b, workers);
    getrusage(RUSAGE_SELF, &r1);
    b.host_cpu_ms = (tv_ms(r1.ru_utime) - tv_ms(r0.ru_utime)) + (tv_ms(r1.ru_stime) - tv_ms(r0.ru_stime));
    b.skipped = b.src->skipped;
    b.skipped_dirs = b.src->subdirs_skipped;
    b.dirs_skipped = b.src->dirs_skipped;
    if (b.progress)
        fprintf(stderr, "\r\033[K");
    for (long i = 0; i < b.n_errors; i++) /* failures last, in input order, one line each */
        app_warn("%s", b.errors[i]);
    if (o->timings)
        batch_print_timings(&b);
    int report_bad = o->report && batch_report_close(&b) != 0;
    if (!o->quiet)
        batch_print_summary(&b);
    double t_close = now_ms();
    int on_gpu = b.n_devs > 0 && b.devs[0].id >= 0;
    batch_gpu_close(&b);
    batch_close_pipelines(&b);
    if (o->timings && on_gpu)
        printf("teardown: nvJPEG, pools and pipelines closed in %.1f ms (%.1f ms from the start)\n",
               now_ms() - t_close, now_ms() - b.t0);
    rc = b.failed || report_bad ? 1 : 0;
out:
    batch_end(&b);
    ts_chain_free(&b.chain);
    pthread_cond_destroy(&b.wake);
    pthread_mutex_destroy(&b.chain_lock);
    pthread_mutex_destroy(&b.lock);
    return rc;
}

int batch_main(const app_options *o)
{
    pthread_t sig_tid;
    int have_sig = start_signal_thread(&sig_tid) == 0; /* before any thread, CUDA's included */
    int rc = run_batch(o);
    if (have_sig) {
        pthread_cancel(sig_tid);
        pthread_join(sig_tid, NULL);
    }
    return rc;
}
