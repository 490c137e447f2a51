/* batch_devices.c - the device slots of a batch: one per GPU that --devices names (every GPU
 * present by default), each with its own pipeline shared by the workers bound to it; on the CPU
 * one slot and a pipeline per worker (the CPU reference holds no lock).
 */
#include "batch.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>

/* The CUDA devices the batch uses: --devices' list, else every device present (TESSERA_DEVICE
 * alone: that one). At most `workers` of them: a slot needs a worker. */
static int wanted_devices(const app_options *o, int first, int workers, int *ids)
{
    int n = 0;
    if (o->devices_given && o->n_devices > 0) {
        for (int i = 0; i < o->n_devices; i++)
            ids[n++] = o->devices[i];
    } else if (!o->devices_given && getenv("TESSERA_DEVICE") && *getenv("TESSERA_DEVICE")) {
        ids[n++] = first;
    } else {
        int count = ts_gpu_count();
        for (int i = 0; i < count && i < APP_MAX_DEVICES; i++)
            ids[n++] = i;
    }
    return n < workers ? n : workers;
}

/* A pipeline on one more device, in a thread of its own: the devices' contexts come up at the
 * same time. */
typedef struct dev_open {
    batch *b;
    int id;
    ts_pipeline *p;
    ts_status st;
    char err[512];
} dev_open;

static void *open_device(void *arg)
{
    dev_open *u = arg;
    char msg[256];
    double t = now_ms();
    u->st = ts_pipeline_create_on(&u->p, TS_BACKEND_GPU, u->id, msg, sizeof msg);
    if (u->st != TS_OK)
        snprintf(u->err, sizeof u->err, "%s", ts_error_detail());
    batch_mark(u->b, "context and pipeline", u->id, t - u->b->t0, now_ms() - u->b->t0);
    return NULL;
}

/* One slot per GPU, each with its own pipeline (the first one opened by app_open_pipeline, whose
 * variant choices the others copy). A device that cannot be opened is skipped with a message. */
static int open_gpu_slots(batch *b, ts_pipeline *first, int workers)
{
    const app_options *o = b->o;
    int ids[APP_MAX_DEVICES];
    int first_id = ts_pipeline_device(first)->id, used_first = 0;
    int n = wanted_devices(o, first_id, workers, ids);
    b->devs = xcalloc((size_t)(n > 0 ? n : 1), sizeof *b->devs);
    dev_open *u = xcalloc((size_t)(n > 0 ? n : 1), sizeof *u);
    pthread_t *tid = xcalloc((size_t)(n > 0 ? n : 1), sizeof *tid);
    int *started = xcalloc((size_t)(n > 0 ? n : 1), sizeof *started);
    for (int i = 0; i < n; i++) {
        u[i] = (dev_open){.b = b, .id = ids[i]};
        if (ids[i] == first_id)
            continue;
        started[i] = pthread_create(&tid[i], NULL, open_device, &u[i]) == 0;
        if (!started[i])
            open_device(&u[i]);
    }
    for (int i = 0; i < n; i++) {
        ts_pipeline *p = first;
        if (started[i])
            pthread_join(tid[i], NULL);
        if (ids[i] == first_id) {
            used_first = 1;
        } else if (u[i].st != TS_OK) {
            if (!o->quiet)
                app_warn("--devices: GPU %d skipped: %s", ids[i], u[i].err);
            continue;
        } else {
            p = u[i].p;
            for (int f = 0; f < TS_FAM_COUNT; f++) {
                const ts_variant *v = ts_pipeline_selected(first, (ts_family)f);
                ts_pipeline_select(p, (ts_family)f, v ? v->name : NULL);
            }
            ts_pipeline_set_max_pixels(p, o->max_pixels);
        }
        device_slot *d = &b->devs[b->n_devs++];
        d->shared = p;
        d->id = ids[i];
        pthread_mutex_init(&d->lock, NULL);
    }
    free(u);
    free(tid);
    free(started);
    if (b->n_devs == 0) { /* none of the list opened: the first device still works */
        if (!o->quiet)
            app_warn("--devices: using GPU %d", first_id);
        b->devs[0].shared = first;
        b->devs[0].id = first_id;
        pthread_mutex_init(&b->devs[0].lock, NULL);
        b->n_devs = 1;
        used_first = 1;
    }
    if (!used_first)
        ts_pipeline_destroy(first);
    return 0;
}

int batch_open_pipelines(batch *b, int workers)
{
    const app_options *o = b->o;
    double t = now_ms();
    ts_pipeline *first = app_open_pipeline(o);
    if (!first)
        return -1;
    batch_mark(b, ts_pipeline_on_gpu(first) ? "context and pipeline" : "pipelines",
                ts_pipeline_on_gpu(first) ? ts_pipeline_device(first)->id : -1, t - b->t0,
                now_ms() - b->t0);
    if (ts_pipeline_on_gpu(first))
        return open_gpu_slots(b, first, workers);
    if (o->devices_given && !o->quiet)
        app_warn("--devices ignored: running on the CPU");
    b->n_devs = 1;
    b->devs = xcalloc(1, sizeof *b->devs);
    pthread_mutex_init(&b->devs[0].lock, NULL);
    if (getenv("TESSERA_TEST_SHARED_CPU")) { /* tests: the GPU's scheduling, on the CPU */
        b->devs[0].shared = first;
        b->devs[0].id = -1;
        return 0;
    }
    b->devs[0].id = -1;
    b->own = xcalloc((size_t)workers, sizeof *b->own);
    b->own[0] = first;
    b->n_own = workers;
    for (int w = 1; w < workers; w++) {
        char msg[256];
        if (ts_pipeline_create(&b->own[w], TS_BACKEND_CPU, msg, sizeof msg) != TS_OK) {
            app_warn("%s", ts_error_detail());
            return -1;
        }
        ts_pipeline_set_max_pixels(b->own[w], o->max_pixels);
        for (int f = 0; f < TS_FAM_COUNT; f++) {
            const ts_variant *v = ts_pipeline_selected(first, (ts_family)f);
            ts_pipeline_select(b->own[w], (ts_family)f, v ? v->name : NULL);
        }
    }
    return 0;
}

void batch_close_pipelines(batch *b)
{
    for (int d = 0; d < b->n_devs; d++) {
        if (b->devs[d].shared)
            ts_pipeline_destroy(b->devs[d].shared);
        pthread_mutex_destroy(&b->devs[d].lock);
    }
    for (int w = 0; w < b->n_own; w++)
        if (b->own[w])
            ts_pipeline_destroy(b->own[w]);
    free(b->own);
    free(b->devs);
}
