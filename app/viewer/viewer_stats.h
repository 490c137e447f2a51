/* viewer_stats.h - frame statistics and moving averages (viewer_stats.c; no SDL: unit-tested). */
#ifndef TS_VIEWER_STATS_H
#define TS_VIEWER_STATS_H

#include <stddef.h>

#define VW_FRAMES 600    /* the statistics cover the last 600 steady frames: 10 s at 60 Hz */
#define VW_FRAMES_MIN 30 /* fewer steady frames than this: "measuring" */

/* Frames kept out of the statistics, counted by kind. */
/* IDLE: the first frame after the loop waited for an event (its interval is the wait). */
enum { VW_SKIP_START, VW_SKIP_BENCH, VW_SKIP_SHOT, VW_SKIP_IDLE, VW_SKIP_KINDS };

typedef struct vw_frame {
    float interval; /* ms from the previous present to this one */
    float work;     /* ms of the frame's own work: all but waiting for the refresh */
    float run, display, draw; /* its parts: the chain, the display texture, drawing + present */
} vw_frame;

typedef struct vw_frames {
    vw_frame ring[VW_FRAMES];
    int n, next;
    long steady;                   /* steady frames added since the reset */
    long skipped[VW_SKIP_KINDS];   /* frames left out since the reset */
} vw_frames;

typedef struct vw_frame_stats {
    int n;            /* steady frames the figures are over */
    long skipped;     /* frames left out since the reset */
    double period;    /* the refresh period, ms */
    double fps;       /* n over the sum of their intervals */
    double interval_med, interval_p95, work_med, work_p95;
    double run_med, display_med, draw_med;
    int measured;     /* at least VW_FRAMES_MIN frames */
    int holding;      /* measured, p95 interval <= 1.05 period and p95 work <= period */
} vw_frame_stats;

/* The chain, image, window or mode changed: the figures start again. */
void vw_frames_reset(vw_frames *f);
void vw_frames_add(vw_frames *f, const vw_frame *fr);
void vw_frames_skip(vw_frames *f, int why);
void vw_frames_stats(const vw_frames *f, double period_ms, vw_frame_stats *s);
/* "3 start-up, 18 measuring speedups" into buf; 0 when no frame was left out. */
int vw_frames_skipped_text(const vw_frames *f, char *buf, size_t len);
/* Nearest-rank percentile (p in [0, 1]) of n values, which it sorts; 0 when n is 0. */
double vw_percentile(float *v, int n, double p);

/* The frame statistics in words, for the HUD and the exit summary alike: the figures ("60.0 FPS
 * interval median 16.67 / p95 16.80 ms   work ..."), what they are over and what was left out,
 * and whether the display rate (hz, paced by tessera or by vsync) holds. */
void vw_frames_text(const vw_frames *f, const vw_frame_stats *s, int hz, int paced, char *figures,
                    size_t flen, char *basis, size_t blen, char *verdict, size_t vlen);

/* Moving average (exponential) and last value of a time. */
typedef struct vw_stat {
    double avg, last;
    int n;
} vw_stat;
void vw_stat_add(vw_stat *s, double v);

#endif
