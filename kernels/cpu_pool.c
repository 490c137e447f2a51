/* cpu_pool.c - the fast CPU variants' threads: tasks (row bands) from a shared counter on up to
 * ts_ref_threads() threads, the caller's among them. Threads are started per call: an op on a
 * large image takes milliseconds, a thread start microseconds. */
#include "cpu_common.h"

#include <pthread.h>
#include <stdatomic.h>

#define CPU_MAX_THREADS 64

typedef struct pool_run {
    cpu_task_fn fn;
    void *ctx;
    int ntasks;
    atomic_int next;
} pool_run;

typedef struct pool_arg {
    pool_run *run;
    int thread;
} pool_arg;

static void *pool_worker(void *p)
{
    pool_arg *a = p;
    for (int t; (t = atomic_fetch_add(&a->run->next, 1)) < a->run->ntasks;)
        a->run->fn(a->run->ctx, t, a->thread);
    return NULL;
}

int cpu_threads(int ntasks)
{
    int n = ts_ref_threads();
    n = n < ntasks ? n : ntasks;
    n = n > CPU_MAX_THREADS ? CPU_MAX_THREADS : n;
    return n < 1 ? 1 : n;
}

int cpu_band_rows(int rows, int min_rows)
{
    int nt = ts_ref_threads();
    if (nt <= 1)
        return rows < 1 ? 1 : rows; /* one band: no halo recomputed */
    int band = (rows + 4 * nt - 1) / (4 * nt);
    band = band < min_rows ? min_rows : band;
    return band < 1 ? 1 : band;
}

void cpu_for(int ntasks, cpu_task_fn fn, void *ctx)
{
    pool_run run = {.fn = fn, .ctx = ctx, .ntasks = ntasks};
    atomic_init(&run.next, 0);
    int nt = cpu_threads(ntasks), started = 0;
    pthread_t tid[CPU_MAX_THREADS];
    pool_arg args[CPU_MAX_THREADS];
    for (int i = 0; i < nt; i++)
        args[i] = (pool_arg){&run, i};
    for (; started < nt - 1; started++)
        if (pthread_create(&tid[started], NULL, pool_worker, &args[started + 1]) != 0)
            break; /* fewer threads: the caller still takes every remaining task */
    pool_worker(&args[0]);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
}
