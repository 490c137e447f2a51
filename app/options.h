/* options.h - what the command line decided, handed to the parts (batch, viewer): the options
 * struct and the pipeline every part opens from it. The parts include this, never cli.h. */
#ifndef TS_OPTIONS_H
#define TS_OPTIONS_H

#include "image_io.h"
#include "tessera.h"

#define APP_MAX_VARIANT_ARGS 16
#define APP_MAX_DEVICES 64

typedef struct app_variant_arg {
    ts_family family;
    const char *name;
} app_variant_arg;

typedef struct app_options {
    int headless, list, help, version;
    const char *output;   /* -o DIR|FILE */
    const char *ops;      /* --ops text ("" when absent) */
    tsio_format format;   /* --format; TSIO_UNKNOWN: the input's */
    int quality;          /* --quality 1..100 (JPEG) */
    int force, recursive, quiet, timings;
    int skip_existing;    /* --skip-existing: an input whose output exists is left, not failed */
    int jobs;             /* --jobs 1..64 */
    int no_auto_orient;   /* photos: --no-auto-orient */
    int strip;            /* photos: --strip (no metadata written) */
    int lossless;         /* photos: --lossless (WebP) */
    int png_level;        /* --png-level: tsio_save_opts.png_level (0: the default level) */
    ts_backend backend;   /* --backend */
    const char *report;   /* --report FILE.json */
    uint64_t max_pixels;  /* --max-pixels */
    app_variant_arg variants[APP_MAX_VARIANT_ARGS];
    int n_variants;
    int shard_k, shard_n;   /* --shard K/N, K 0-based; shard_n 0: no sharding */
    int devices_given;      /* --devices was on the command line */
    int n_devices;          /* --devices 0,1,...: the list; 0: all usable GPUs */
    int devices[APP_MAX_DEVICES];
    const char *files_from; /* --files-from FILE|-: input paths read as they come (batch_stream.c) */
    int files_nul;          /* -0: those paths are NUL-separated, not one a line */
    int jsonl;              /* --jsonl: one JSON line per image on stdout as it finishes */
    /* viewer */
    const char *keys;       /* --keys "e,b,]" replayed at start */
    int frames;             /* --frames N: render N frames, then quit (0: run until closed) */
    const char *screenshot; /* --screenshot FILE: save the window when done, then quit */
    int fullscreen;         /* -f, --fullscreen */
    const char *geometry;   /* -g, --geometry WxH: the window's initial size */
    int slideshow_ms;       /* -S, --slideshow SECONDS: next image every SECONDS (0: off) */
    int thumbs;             /* -t: the viewer opens on the thumbnail grid */
    int hud;                /* --hud off|line|full: 0, 1, 2; -1 (default): the line, the full
                               panel while a chain is on and in --demo */
    int demo;               /* --demo: step each family through its variants */
    char **inputs;
    int n_inputs;
} app_options;

/* Applies --backend and --variant to a new pipeline; prints the CPU-fallback line (unless quiet)
 * and "skipped" notices for variants this machine cannot run. NULL on failure (printed). */
ts_pipeline *app_open_pipeline(const app_options *o);

#endif
