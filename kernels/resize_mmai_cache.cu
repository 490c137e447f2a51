/* resize_mmai_cache.cu - the plan cache of the interleaved tensor-core resampler
 * (resize_mmai.cu): the weight fragments of recent geometries stay on the device, as an FFT
 * library keeps a plan, so a repeat of a geometry (a batch of photos of one size, the
 * benchmark's runs) launches the resampler alone, without the tables' upload and mi_prep_kernel.
 *
 * Slots per device, least recently used rewritten, and only after the launches that read it are
 * done (an event per stream that used it); a launch from another stream than the build's waits
 * for the build's event. The GPU settings' resize_plan_cache_off turns the cache off (first-call
 * timings). Host code only.
 */
#include "resize_mmai.cuh"

#include <pthread.h>

#define MI_DEVS 16  /* devices with a cache (ids past it run without) */
#define MI_SLOTS 6  /* geometries kept per device */
#define MI_USERS 4  /* streams tracked per slot */
struct mi_slot {
    int iw, ih, ow, oh, filter, C; /* the key; C 0: empty */
    unsigned long long used;
    unsigned char *buf; /* fragments, on this slot's device */
    size_t cap;
    mi_geom g;          /* g.frag == buf */
    int blocks;
    cudaEvent_t ready;  /* recorded after the build */
    cudaStream_t user[MI_USERS];
    cudaEvent_t done[MI_USERS]; /* recorded after the last launch from user[i] */
    int nuser;
};
static mi_slot mi_slots[MI_DEVS][MI_SLOTS];
static unsigned long long mi_tick;
static pthread_mutex_t mi_lock = PTHREAD_MUTEX_INITIALIZER;

static int mi_cache_on(void) { return !ts_gpu_get()->resize_plan_cache_off; }

/* Waits for every launch that read the slot (before it is rewritten). */
static ts_status mi_slot_drain(mi_slot *s)
{
    for (int i = 0; i < s->nuser; i++)
        CUDA_TRY(cudaEventSynchronize(s->done[i]));
    return TS_OK;
}

/* Marks a launch on stream st as reading the slot. */
static ts_status mi_slot_used(mi_slot *s, cudaStream_t st)
{
    int i = 0;
    while (i < s->nuser && s->user[i] != st)
        i++;
    if (i == s->nuser) {
        if (s->nuser < MI_USERS) {
            CUDA_TRY(cudaEventCreateWithFlags(&s->done[i], cudaEventDisableTiming));
            s->nuser++;
        } else { /* more streams than events: reuse the oldest stream's, once it is done */
            i = (int)(mi_tick % MI_USERS);
            CUDA_TRY(cudaEventSynchronize(s->done[i]));
        }
        s->user[i] = st;
    }
    CUDA_TRY(cudaEventRecord(s->done[i], st));
    return TS_OK;
}

/* With mi_lock held: the job from the slot of its geometry, built into the least recently used
 * slot when missing. On a miss the geometry is made into *g and *geom says how it went (1 made,
 * -1 the kernel does not apply; 0: a hit, not made). *done 0 with *geom 1: the slot could not
 * be had (the caller goes on without the cache, with *g). */
static ts_status mi_cached(rs_plan *p, const ts_job *job, mi_slot *set, mi_geom *g, int *geom,
                           int *done)
{
    const int C = job->in.channels, f = (int)job->op->resize.filter;
    mi_slot *victim = &set[0];
    for (int i = 0; i < MI_SLOTS; i++) {
        mi_slot *s = &set[i];
        if (s->C == C && s->iw == p->a.iw && s->ih == p->a.ih && s->ow == p->a.ow &&
            s->oh == p->a.oh && s->filter == f) {
            s->used = ++mi_tick;
            CUDA_TRY(cudaStreamWaitEvent(job->stream, s->ready, 0));
            ts_status st = mi_pick(s->g)(p->a, job, s->g, 0, NULL, &s->blocks);
            if (st == TS_OK)
                st = mi_slot_used(s, job->stream);
            *done = st == TS_OK;
            return st;
        }
        if (!s->C || s->used < victim->used)
            victim = s;
    }
    *geom = mi_geom_pick(p, C, job, g) == 0 ? 1 : -1;
    if (*geom < 0)
        return TS_OK;
    mi_slot *s = victim;
    ts_status st = mi_slot_drain(s);
    if (st != TS_OK)
        return st;
    s->C = 0; /* empty until built */
    if (s->cap < g->frag_bytes) {
        cudaFree(s->buf); /* drained: nothing reads it */
        s->buf = NULL;
        s->cap = 0;
        if (cudaMalloc(&s->buf, g->frag_bytes) != cudaSuccess) {
            cudaGetLastError();
            s->buf = NULL;
            return TS_OK; /* no room: the scratch path */
        }
        s->cap = g->frag_bytes;
    }
    if (!s->ready)
        CUDA_TRY(cudaEventCreateWithFlags(&s->ready, cudaEventDisableTiming));
    if ((st = rs_plan_upload(p, job)) != TS_OK)
        return st;
    g->frag = s->buf;
    s->blocks = 0;
    if ((st = mi_pick(*g)(p->a, job, *g, 1, s->ready, &s->blocks)) != TS_OK ||
        (st = mi_slot_used(s, job->stream)) != TS_OK)
        return st;
    s->g = *g;
    s->iw = p->a.iw, s->ih = p->a.ih, s->ow = p->a.ow, s->oh = p->a.oh, s->filter = f;
    s->C = C;
    s->used = ++mi_tick;
    *done = 1;
    return TS_OK;
}

int mi_cache_holds(const rs_plan *p, const ts_job *job)
{
    int cur = -1, found = 0;
    if (!mi_cache_on() || job->dev->id < 0 || job->dev->id >= MI_DEVS ||
        cudaGetDevice(&cur) != cudaSuccess || cur != job->dev->id)
        return 0;
    const int C = job->in.channels, f = (int)job->op->resize.filter;
    pthread_mutex_lock(&mi_lock);
    for (int i = 0; i < MI_SLOTS && !found; i++) {
        const mi_slot *s = &mi_slots[cur][i];
        found = s->C == C && s->iw == p->a.iw && s->ih == p->a.ih && s->ow == p->a.ow &&
                s->oh == p->a.oh && s->filter == f;
    }
    pthread_mutex_unlock(&mi_lock);
    return found;
}

ts_status mi_cache_run(rs_plan *p, const ts_job *job, mi_geom *g, int *geom, int *done)
{
    int cur = -1;
    *done = 0;
    *geom = 0;
    if (!mi_cache_on() || job->dev->id < 0 || job->dev->id >= MI_DEVS ||
        cudaGetDevice(&cur) != cudaSuccess || cur != job->dev->id)
        return TS_OK;
    pthread_mutex_lock(&mi_lock);
    ts_status st = mi_cached(p, job, mi_slots[cur], g, geom, done);
    pthread_mutex_unlock(&mi_lock);
    return st;
}
