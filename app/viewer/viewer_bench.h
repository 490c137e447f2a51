/* viewer_bench.h - the speedup measurement behind the HUD's bars (viewer_bench.c; no SDL): per
 * op, naive and the chain's variant, best of VW_BENCH_REPS runs each, on the op's real input (the
 * chain's intermediate image), one run per frame so the viewer stays responsive. */
#ifndef TS_VIEWER_BENCH_H
#define TS_VIEWER_BENCH_H

#include "viewer_run.h"

#define VW_BENCH_REPS 3

typedef struct vw_bench {
    int running, op, step;
    ts_image in;                         /* input of op `op` (host) */
    const ts_variant *cur[TS_MAX_CHAIN]; /* the variant the chain used */
    double naive_ms[TS_MAX_CHAIN], cur_ms[TS_MAX_CHAIN];
    int state[TS_MAX_CHAIN];             /* 0 pending, 1 measured, -1 naive cannot take it */
    /* the last finished measurement, kept on screen while the next one runs */
    double res_naive[TS_MAX_CHAIN], res_cur[TS_MAX_CHAIN];
    int res_state[TS_MAX_CHAIN];
    int valid;                           /* res_* belong to the current chain and image */
    int failed;                          /* no retry until the chain or image changes */
    double at;                           /* when it last finished (ms) */
    char note[200];
} vw_bench;

/* The chain or the image changed: the figures no longer apply. */
void vw_bench_reset(vw_bench *b);
/* The B key: measure again as soon as the result is fresh. */
void vw_bench_request(vw_bench *b, const vw_run *r);
/* Once a frame, after the display texture is filled (a speedup run reuses the GPU's buffers):
 * starts a measurement after a change (and every 10 s in live mode) and makes one run of it.
 * Returns 1 when it ran one (a frame kept out of the statistics). */
int vw_bench_tick(vw_bench *b, vw_run *r);
/* A measurement is under way or due (the loop must not wait for events). */
int vw_bench_pending(const vw_bench *b, const vw_run *r);
void vw_bench_free(vw_bench *b);

#endif
