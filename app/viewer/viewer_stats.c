/* viewer_stats.c - frame statistics, the one set of figures that both the HUD and the exit
 * summary print: median and 95th percentile of the frame interval (present to present) and of the
 * frame's work (everything but waiting for the next refresh), and FPS as steady frames over the
 * time they took, over the steady frames since the last change (at most the last VW_FRAMES).
 * Frames that did something else than showing the chain are counted apart and named, not mixed
 * in: start-up (loading, the upload of the input, the first frame), speedup measurement steps and
 * the screenshot. Pure C: tests/test_viewer.c checks it. */
#include "viewer_stats.h"

#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char *const skip_names[VW_SKIP_KINDS] = {"start-up", "measuring speedups",
                                                      "screenshot", "after a pause"};

void vw_frames_reset(vw_frames *f) { memset(f, 0, sizeof *f); }

void vw_frames_add(vw_frames *f, const vw_frame *fr)
{
    f->ring[f->next] = *fr;
    f->next = (f->next + 1) % VW_FRAMES;
    f->n += f->n < VW_FRAMES;
    f->steady++;
}

void vw_frames_skip(vw_frames *f, int why)
{
    if (why >= 0 && why < VW_SKIP_KINDS)
        f->skipped[why]++;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

double vw_percentile(float *v, int n, double p)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_float);
    /* nearest rank: the smallest value with at least p of the values at or below it */
    double r = p * n;
    int k = (int)r;
    k = (double)k < r ? k + 1 : k;
    k = k < 1 ? 1 : k > n ? n : k;
    return v[k - 1];
}

/* Median, and with p95 the 95th percentile, of one field of the held frames. */
static double field(const vw_frames *f, size_t off, double *p95)
{
    float v[VW_FRAMES];
    for (int i = 0; i < f->n; i++)
        v[i] = *(const float *)(const void *)((const char *)&f->ring[i] + off);
    double med = vw_percentile(v, f->n, 0.5);
    if (p95)
        *p95 = vw_percentile(v, f->n, 0.95); /* v is sorted now: cheap */
    return med;
}

void vw_frames_stats(const vw_frames *f, double period_ms, vw_frame_stats *s)
{
    memset(s, 0, sizeof *s);
    s->n = f->n;
    s->period = period_ms;
    for (int i = 0; i < VW_SKIP_KINDS; i++)
        s->skipped += f->skipped[i];
    if (f->n == 0)
        return;
    double sum = 0;
    for (int i = 0; i < f->n; i++)
        sum += f->ring[i].interval;
    s->fps = sum > 0 ? f->n * 1000.0 / sum : 0;
    s->interval_med = field(f, offsetof(vw_frame, interval), &s->interval_p95);
    s->work_med = field(f, offsetof(vw_frame, work), &s->work_p95);
    s->run_med = field(f, offsetof(vw_frame, run), NULL);
    s->display_med = field(f, offsetof(vw_frame, display), NULL);
    s->draw_med = field(f, offsetof(vw_frame, draw), NULL);
    /* a frame later than the period (5% for timer jitter) is a missed refresh, and so is a frame
     * whose work alone takes longer: where tessera paces itself the interval cannot show it */
    s->measured = f->n >= VW_FRAMES_MIN;
    s->holding = s->measured && s->interval_p95 <= period_ms * 1.05 && s->work_p95 <= period_ms;
}

int vw_frames_skipped_text(const vw_frames *f, char *buf, size_t len)
{
    size_t used = 0;
    int any = 0;
    buf[0] = '\0';
    for (int i = 0; i < VW_SKIP_KINDS && used < len; i++) {
        if (!f->skipped[i])
            continue;
        int w = snprintf(buf + used, len - used, "%s%ld %s", any ? ", " : "", f->skipped[i],
                         skip_names[i]);
        if (w < 0)
            break;
        used += (size_t)w;
        any = 1;
    }
    return any;
}

void vw_stat_add(vw_stat *s, double v)
{
    s->last = v;
    s->avg = s->n ? s->avg + 0.1 * (v - s->avg) : v; /* about the last 10 frames */
    s->n++;
}

void vw_frames_text(const vw_frames *f, const vw_frame_stats *s, int hz, int paced, char *figures,
                    size_t flen, char *basis, size_t blen, char *verdict, size_t vlen)
{
    char left[160];
    if (s->n == 0)
        snprintf(figures, flen, "-- FPS   no steady frame yet");
    else
        snprintf(figures, flen, "%.1f FPS   interval median %.2f / p95 %.2f ms   work median "
                 "%.2f / p95 %.2f ms", s->fps, s->interval_med, s->interval_p95, s->work_med,
                 s->work_p95);
    int any = vw_frames_skipped_text(f, left, sizeof left);
    snprintf(basis, blen, "over %d steady frames since the last change; left out: %s", s->n,
             any ? left : "none");
    snprintf(verdict, vlen, "%d Hz %s: %s", hz, paced ? "(paced by tessera)" : "vsync",
             !s->measured                          ? "measuring"
             : s->holding                          ? "holding it (p95 within the refresh period)"
             : s->interval_p95 > s->period * 1.05 ? "not holding it (p95 interval past the period)"
                                                  : "not holding it (p95 work past the period)");
}
