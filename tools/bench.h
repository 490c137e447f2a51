/* bench.h - what the benchmark's files share (tools/bench*.cu, tools/bench_report.c).
 *
 * The benchmark times every variant of the one table (kernels/registry.c) on every op, pixel
 * format and size of its plan, plus vendor baselines (cuDNN, CUB, NPP) and a device-to-device copy
 * of the same bytes (the memory floor). One measured thing is one bench_row; the report turns rows
 * into the markdown table, the headline block and the CSV. Compiles as C11 and as CUDA C++.
 */
#ifndef TS_BENCH_H
#define TS_BENCH_H

#include "tessera.h"

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- plan */

/* RGB16 is not in BF_ALL: only the ops whose targets name it (3 x 65536-bin histograms) run it. */
enum { BF_GRAY8, BF_RGB8, BF_RGBA8, BF_GRAY16, BF_RGB16, BF_COUNT };
#define BF_BIT(f) (1u << (f))
#define BF_ALL (BF_BIT(BF_GRAY8) | BF_BIT(BF_RGB8) | BF_BIT(BF_RGBA8) | BF_BIT(BF_GRAY16))

typedef struct bench_format {
    const char *name; /* "gray8", "rgb8", "rgba8", "gray16", "rgb16" */
    int channels, bytes;
} bench_format;
extern const bench_format bench_formats[BF_COUNT];

typedef enum bench_data {
    BD_UNIFORM, /* every sample uniform over the depth's range */
    BD_BAND     /* samples in a band of BENCH_BAND_VALUES values (skewed data for histograms) */
} bench_data;
#define BENCH_BAND_VALUES 4000

/* One op of the plan. */
typedef struct bench_opdef {
    const char *name;  /* as reported: "gauss:5", "hist", "hist:narrow" */
    const char *text;  /* ts_op_parse() text; NULL: the histogram alone (TS_OP_HIST) */
    bench_data data;
    unsigned formats;  /* BF_BIT()s of the full run */
    unsigned quick;    /* BF_BIT()s of --quick (where the issues' targets are) */
    unsigned headline; /* BF_BIT()s shown in the headline block */
} bench_opdef;

/* ---------------------------------------------------------------- the run (bench_plan.c) */

#define BENCH_MAX_OPS 64
#define BENCH_MAX_SIZES 16

typedef struct bench_plan {
    int quick, runs, vendor, sweep, cpu, slug_only, list_only, have_seed;
    unsigned long long seed;
    const char *csv, *md;
    bench_opdef ops[BENCH_MAX_OPS];
    unsigned formats[BENCH_MAX_OPS]; /* BF_BIT()s each op runs in */
    size_t n_ops;
    int sizes[BENCH_MAX_SIZES][2];
    int n_sizes;
    char op_text[BENCH_MAX_OPS][80]; /* names of ops given as text on the command line */
} bench_plan;

/* Fills the plan from the command line; on a usage error prints why and exits 2 (--help: 0). */
void bench_plan_parse(bench_plan *p, int argc, char **argv);
/* What the plan will run (--list). */
void bench_plan_print(FILE *f, const bench_plan *p);
/* 1 when --variant lets `name` (with `param`, 0 for none) run; every name without --variant. */
int bench_wanted(const char *name, int param);
/* The job->param values to run variant `name` with on an op of `kind`, at most BENCH_MAX_PARAMS:
 * 0 (the variant's default) where wanted, the hist sweep (cluster and opt: cluster sizes 1..16)
 * when `sweep`, and every NAME/PARAM given with --variant (any family: e.g. pipe/16, a conv
 * variant's strip height). Returns how many. */
#define BENCH_MAX_PARAMS 16
int bench_params(int sweep, ts_op_kind kind, const char *name, int *out);
/* Largest difference allowed against the CPU reference: 0 for exact ops, 1 for float
 * convolution (the summation order differs). */
int bench_tolerance(const ts_op *op);
/* The ts_op of a plan entry for a format (the histogram's mode follows the format). */
ts_status bench_make_op(const bench_opdef *def, int fmt, ts_op *op, char *err, size_t errlen);
/* Histogram counts of an op on an image of `channels` channels and `bytes` bytes per sample. */
size_t bench_hist_count(const ts_op *op, int channels, int bytes);
/* "bench: message" on stderr, exit 2. */
void bench_die(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

/* ---------------------------------------------------------------- rows */

#define BENCH_TEXT 200

typedef enum bench_state {
    BS_OK,        /* timed; output checked */
    BS_WRONG,     /* timed, but its output differs beyond the op's tolerance */
    BS_UNCHECKED, /* timed; no oracle to check it against */
    BS_ERROR,     /* the run failed: not timed */
    BS_SKIPPED    /* the device or the variant cannot take this job: not run */
} bench_state;

typedef struct bench_row {
    char op[40];
    int fmt; /* BF_* */
    int width, height;
    char variant[48]; /* "tiled", "cluster/2", "cudnn", "cpu" */
    int param;        /* job->param (sweeps), 0: the variant's default */
    int vendor;       /* a vendor library baseline */
    int host;         /* a CPU row (host clock) */
    int runs;         /* timed runs behind ms */
    double ms;        /* median; < 0: not timed */
    double min_ms;
    double bytes;    /* bytes the op must move: input read once + output written once */
    double flops;    /* convolution: 2 * taps * outputs * colour channels * pixels; else 0 */
    double floor_ms; /* D2D copy of bytes / 2 in the same run; < 0: unknown */
    double naive_ms; /* `naive` of the same op, format and size; < 0: unknown */
    bench_state state;
    char check[BENCH_TEXT]; /* "ok", "WRONG: ...", "unchecked: ...", "error: ...", "skipped: ..." */
    char note[BENCH_TEXT];
} bench_row;

typedef struct bench_rows {
    bench_row *v;
    size_t n, cap;
} bench_rows;

/* A zeroed row with ms/floor/naive unknown, appended; NULL when out of memory. */
bench_row *bench_rows_add(bench_rows *r);
void bench_rows_free(bench_rows *r);
/* printf-style into a fixed text field. */
void bench_text(char *dst, size_t len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---------------------------------------------------------------- run description */

#define BENCH_MAX_NOTES 64

typedef struct bench_meta {
    ts_device dev;
    char date[40];     /* UTC */
    char slug[80];     /* file name stem from the device name */
    char command[600]; /* how to reproduce */
    char timing[300];  /* how the numbers were taken */
    char vendors[300]; /* which vendor libraries took part */
    int runs, quick;
    unsigned long long seed;
    int n_notes;
    char notes[BENCH_MAX_NOTES][BENCH_TEXT]; /* run-wide notes (skips, vendor caveats) */
} bench_meta;

/* Adds a run-wide note once (duplicates dropped). */
void bench_note(bench_meta *m, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---------------------------------------------------------------- report (bench_report.c) */

/* "nvidia-h100-80gb-hbm3" from "NVIDIA H100 80GB HBM3". */
void bench_slug(const char *device_name, char *out, size_t len);
void bench_print_meta(FILE *f, const bench_meta *m, const char *bullet);
void bench_print_table_head(FILE *f);
void bench_print_rows(FILE *f, const bench_row *rows, size_t n);
/* The headline block: per op of `ops` and each of its headline formats, at the largest size
 * measured: naive, best checked variant, best vendor, copy floor and the speedups. */
void bench_print_headline(FILE *f, const bench_rows *rows, const bench_opdef *ops, size_t n_ops);
/* 0 on success; on failure errno-style message to stderr, -1. */
int bench_write_md(const char *path, const bench_meta *m, const bench_rows *rows,
                   const bench_opdef *ops, size_t n_ops);
int bench_write_csv(const char *path, const bench_meta *m, const bench_rows *rows);

#ifdef __cplusplus
}
#endif
#endif /* TS_BENCH_H */
