/* viewer_demo.h - `tessera --demo`: each family stepped through its variants, the shared-memory
 * ladder (naive, shared, padded, opt...; conv through tiled, mma, mmapipe), on the current image:
 * each rung is shown (the chain runs it) and timed, best of VW_DEMO_REPS after a warm-up, one
 * run a frame, with its speedup over the family's first rung (viewer_demo.c; no SDL). */
#ifndef TS_VIEWER_DEMO_H
#define TS_VIEWER_DEMO_H

#include "viewer_run.h"

#define VW_DEMO_REPS 3
#define VW_DEMO_MAX 48

typedef struct vw_rung {
    ts_family family;
    const char *op;          /* the op the family is shown with ("gauss:9") */
    const ts_variant *var;   /* NULL: the CPU backend's own (auto) */
    double ms;               /* best time */
    int state;               /* 0 pending, 1 measured, -1 cannot run this op */
} vw_rung;

typedef struct vw_demo {
    int on, done;
    vw_rung rung[VW_DEMO_MAX];
    int n, cur, runs;        /* the rung being measured and its runs so far */
    double dwell_ms;         /* how long each measured rung stays on screen */
    double next_at;          /* when the next rung starts (now_ms) */
    ts_op op;                /* the current rung's op, parsed */
    char note[200];
} vw_demo;

/* Builds the ladder for this backend and shows its first rung. On the CPU backend there is no
 * ladder: each family's CPU reference is timed once, and `note` says the GPU is needed. */
void vw_demo_start(vw_demo *d, vw_run *r, double dwell_ms);
/* One step a frame: shows and times the current rung, moves on after dwell_ms. Returns 1 when
 * it ran something (a frame kept out of the statistics). */
int vw_demo_tick(vw_demo *d, vw_run *r);
/* The speedup of rung i over its family's first measured rung; 0 when unknown. */
double vw_demo_speedup(const vw_demo *d, int i);

#endif
