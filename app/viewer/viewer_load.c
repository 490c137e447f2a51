/* viewer_load.c - the full decode of a previewed JPEG, on a thread (viewer_load.h).
 *
 * Why a thread and not a decode split into slices: libjpeg decodes a whole image in one call
 * sequence that cannot yield to the frame loop without rows-at-a-time bookkeeping, and a 24 MP
 * decode takes 0.2-0.5 s, long enough for keys to queue up. The thread owns only its job and its
 * result; the frame loop reads them once `done` is set (an acquire that pairs with the thread's
 * release), joins, and throws away results for files no longer shown. Quitting waits for a
 * running decode: bounded by one image, and nothing is left behind for the sanitizers to find.
 */
#include "viewer_load.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *run(void *arg)
{
    vw_load *l = arg;
    double t0 = now_ms();
    tsio_load_opts lo = {.max_pixels = l->job.max_pixels, .meta = &l->meta};
    l->st = tsio_load(l->job.path, &lo, &l->im, l->err, sizeof l->err);
    l->ms = now_ms() - t0;
    void (*wake)(void) = l->wake;
    atomic_store_explicit(&l->done, 1, memory_order_release);
    if (wake)
        wake();
    return NULL;
}

static void job_free(vw_job *j)
{
    free(j->path);
    j->path = NULL;
}

static void begin(vw_load *l)
{
    l->job = l->next;
    l->next = (vw_job){0};
    memset(&l->im, 0, sizeof l->im);
    memset(&l->meta, 0, sizeof l->meta);
    l->err[0] = '\0';
    l->st = TS_OK;
    atomic_store(&l->done, 0);
    l->started = pthread_create(&l->tid, NULL, run, l) == 0;
    if (!l->started) /* no thread to be had: decode here, as without a preview */
        run(l);
}

/* Joins a finished thread; its result stays for the caller to take or drop. */
static void finish(vw_load *l)
{
    if (l->started) {
        pthread_join(l->tid, NULL);
        l->started = 0;
    }
}

static void drop_result(vw_load *l)
{
    ts_image_free(&l->im);
    tsio_meta_free(&l->meta);
    job_free(&l->job);
}

void vw_load_start(vw_load *l, const char *path, uint64_t max_pixels, unsigned token)
{
    job_free(&l->next);
    l->next = (vw_job){xstrdup(path), max_pixels, token};
    if (l->started && !atomic_load_explicit(&l->done, memory_order_acquire))
        return; /* runs when this one ends (vw_load_poll) */
    finish(l);
    drop_result(l); /* a result nobody took */
    begin(l);
}

int vw_load_poll(vw_load *l, unsigned token, ts_image *im, tsio_meta *meta, ts_status *st,
                 char *err, size_t errlen, double *ms)
{
    if (!l->job.path || !atomic_load_explicit(&l->done, memory_order_acquire))
        return 0;
    finish(l);
    int mine = l->job.token == token;
    if (mine) {
        *im = l->im;
        *meta = l->meta;
        *st = l->st;
        *ms = l->ms;
        snprintf(err, errlen, "%s", l->err);
        memset(&l->im, 0, sizeof l->im);
        memset(&l->meta, 0, sizeof l->meta);
    }
    drop_result(l);
    if (l->next.path)
        begin(l);
    return mine;
}

int vw_load_busy(const vw_load *l) { return l->job.path != NULL || l->next.path != NULL; }

void vw_load_free(vw_load *l)
{
    finish(l);
    drop_result(l);
    job_free(&l->next);
}
