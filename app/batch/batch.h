/* batch.h - the parts of `tessera --headless` shared by its files (headless.c runs the batch,
 * batch_plan.c expands inputs and names outputs, batch_codec.c holds the codecs of the decode and
 * encode stages, batch_report.c writes --report, --timings and the summary). Internal to the app. */
#ifndef TS_BATCH_H
#define TS_BATCH_H

#include "options.h"
#include "image_io.h"

#include <pthread.h>
#include <stdio.h>

/* The stages of one image, in order. A codec that does two in one call (the CPU codec reads and
 * decodes in tsio_load, encodes and writes in tsio_save_atomic) reports them merged. The GPU
 * codec (batch_gpu.c) times them apart: on its path pixels stay on the device from decode to
 * encode, so upload and download are 0 unless the CPU decoded or encodes the image. */
typedef enum {
    ST_READ, ST_DECODE, ST_UPLOAD, ST_OPS, ST_DOWNLOAD, ST_ENCODE, ST_WRITE, ST_COUNT
} batch_stage;
const char *batch_stage_name(batch_stage s);

/* One input on its way through the batch. Items live in a ring of a fixed size (batch.ring): an
 * input is planned into the ring when the source gives it (its output named, checked), taken by
 * a worker, and retired in input order once it is done (its notice said, its --report and
 * --timings record written, an error kept for the end), after which the slot is reused. So
 * memory follows --jobs, never the batch's length; what stays per file is the claim set
 * (batch_plan.c: 24 bytes a file, for outputs claimed twice). */
typedef enum { IT_FREE, IT_PLANNED, IT_WORKING, IT_DONE } item_state;

typedef struct item {
    long seq;           /* place in the input order (0-based, this shard's inputs) */
    item_state state;
    char *input, *output;
    char *key;          /* the path relative to its input argument: the shard hash and the
                           output's place under -o DIR */
    char *error;        /* "PATH: reason" (heap); NULL when fine */
    char *notice;       /* said only when the image is written (heap); NULL: none */
    int from_dir;       /* found under a directory argument: the output mirrors `key` */
    int ok;
    int skipped;        /* --skip-existing: its output exists; neither written nor failed */
    int device;         /* index into batch.devs of the worker that did it; -1: none */
    int width, height, channels, bytes;
    const char *decode_path; /* "cpu" (the nvJPEG codec: "engine", "cuda") */
    double ms[ST_COUNT];
    double cpu[ST_COUNT]; /* host CPU time of each stage (thread clocks; summed over retries) */
    unsigned merged;    /* bit s: stage s was timed together with stage s + 1 */
    double t_start;     /* when its read began (now_ms) */
    double total_ms;    /* from the first read to the renamed output, waits between stages
                           included */
    ts_run_report rep;
    /* Photos: the chain this image runs (shared: the batch's, or the batch's copy with its EXIF
     * orientation's op first; see batch_chain_for), the orientation applied (1: none), the
     * metadata its output carries (freed once it is written). */
    const ts_chain *chain;
    int orientation;
    tsio_meta meta_out;
} item;

typedef struct gpu_pool gpu_pool;     /* batch_gpu.c: a device's spare image buffers */
typedef struct gj_dev gj_dev;         /* gpu_jpeg.h: a device's nvJPEG handles */
typedef struct gpu_worker gpu_worker; /* batch_gpu.c: a worker's nvJPEG context and staging */

/* The worker threads of one device share its pipeline and its figures. */
typedef struct device_slot {
    int id;              /* CUDA device number; -1: the CPU */
    gpu_pool *pool;      /* GPU: device buffers of images between stages; NULL on the CPU */
    gj_dev *gj;          /* GPU: nvJPEG's handles, shared by the device's workers; NULL: none */
    ts_pipeline *shared; /* GPU: one pipeline behind `lock`; CPU: NULL (one per worker) */
    pthread_mutex_t lock;
    int busy;            /* a worker runs its chain now (guarded by the batch lock) */
    int images;          /* guarded by the batch lock */
    double mpix;
} device_slot;

/* One span of the start-up: `what` on device `dev` (-1: none), from t_begin to t_end, ms from
 * the batch's start. */
typedef struct batch_event {
    const char *what;
    int dev;
    double t_begin, t_end;
} batch_event;
#define BATCH_MAX_EVENTS 160

typedef struct batch_source batch_source; /* batch_source.h */
typedef struct claim_set claim_set;       /* the outputs claimed so far (batch_plan.c) */

typedef struct batch {
    const app_options *o;
    ts_chain chain;
    /* the chain behind each EXIF orientation's op (index 2..8), made when an image first needs
     * it, under chain_lock; every image of that orientation runs the one copy */
    ts_chain oriented[9];
    pthread_mutex_t chain_lock;
    /* the inputs: a source (batch_source.h), planned lazily into the ring */
    batch_source *src;
    int src_done;           /* the source has no more inputs */
    void *pending;          /* inputs taken from the source ahead, at the start */
    item *ring;
    int ring_cap;
    long pulled;            /* items planned into the ring (the next one's seq) */
    long dispatched;        /* items handed to the workers or done at planning */
    long retired;           /* items retired (their slots free again) */
    long n;                 /* items of this run (this shard's), so far */
    long failed, written, skipped_existing;
    char **errors;          /* the failures' lines, in input order, said at the end */
    long n_errors, cap_errors;
    claim_set *claims;
    int file_mode;          /* -o names the one output file */
    char *report_canon;     /* --report's canonical path: no output may be it */
    int skipped;            /* files under directories that are not images by name */
    int skipped_dirs;       /* subfolders of DIR inputs left without -r */
    int dirs_skipped;       /* symlinks to folders and folders seen before: not entered */
    int made_output_dir;
    long finished;          /* guarded by lock */
    pthread_mutex_t lock;   /* the ring, the source, device figures, progress, messages */
    pthread_cond_t wake;    /* work may be there: an image changed stage, an input arrived */
    device_slot *devs;
    int n_devs;
    int workers;            /* worker threads (at most --jobs; fewer for a shorter batch) */
    ts_pipeline **own;      /* CPU: one per worker */
    int n_own;
    int progress;           /* draw a progress bar on stderr */
    int gpu_codec;          /* nvJPEG loaded: GPU workers decode and encode JPEG with it */
    int gpu_warned;         /* the one notice about nvJPEG was given (guarded by lock) */
    double secs;            /* wall time of the work */
    /* --report, written as images retire: the temp file beside it, renamed at the end */
    FILE *report;
    char *report_tmp;
    int report_slot, report_count;
    /* --timings' setup line, ms: opening the devices and their pipelines; loading nvJPEG, its
     * handles and their warm-up (every device); the slowest worker's context */
    double setup_open_ms, setup_load_ms, setup_codec_ms, setup_warm_ms, setup_worker_ms;
    /* --timings' start-up timeline: what ran when, ms from the batch's start (t0) */
    double t0;
    batch_event events[BATCH_MAX_EVENTS];
    int n_events;
    double first_decoded, first_written; /* ms from t0; 0: none yet (guarded by lock) */
    double host_cpu_ms;                  /* user + system CPU time of the work (getrusage) */
    double stage_cpu_ms[ST_COUNT];       /* the written images' it->cpu, summed at retire */
    const char *cuda_sync;               /* how host threads wait for the GPUs ("block", ...) */
} batch;

/* A span of the start-up, for --timings' timeline (batch_report.c). Thread-safe. */
void batch_mark(batch *b, const char *what, int dev, double t_begin, double t_end);

/* batch_devices.c */
/* Opens the slots and their pipelines (the first through app_open_pipeline: its messages and
 * --variant choices, copied to the others). 0, or -1 after saying why. */
int batch_open_pipelines(batch *b, int workers);
void batch_close_pipelines(batch *b);

/* batch_plan.c */
/* item->error/notice setters: printf into a new heap string (an older one is freed). */
void item_error(item *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void item_notice(item *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Before any pixel: the output folder made (or -o FILE taken when the inputs hold one image),
 * the source opened and its first inputs looked at, the --report path checked (never an input,
 * an output of this run, an existing file without --force, or anything but a regular file), the
 * ring made and filled. 0 or an exit status (printed). */
int batch_start(batch *b);
/* Plans inputs from the source into the free slots of the ring (the lock held, or before the
 * workers start): each is named its output, checked (an output claimed twice, an output that is
 * an input or the report, an existing output without --force) and kept when it is this
 * --shard's. An item that fails here is done at once. Never waits for a slow source. */
void batch_fill(batch *b);
/* The item of sequence number seq. */
item *batch_item(const batch *b, long seq);
/* The chain an image runs: the batch's, or the shared copy with its orientation's op first. */
ts_status batch_chain_for(batch *b, const tsio_meta *meta, item *it);
/* Frees what an item holds and empties its slot. */
void batch_item_release(item *it);
void batch_end(batch *b);

/* One file of a decode call: the codec fills `im` (host memory), the item's read/decode times,
 * `merged` bits and decode_path, and sets `st`: TS_OK, TS_ERR_UNSUPPORTED for a file it does not
 * take (the next codec is tried), or a final failure with the reason in `err`. */
typedef struct decode_slot {
    item *it;
    ts_image im;
    tsio_meta meta;     /* EXIF and ICC as read (the decoder fills what it finds) */
    char notice[200];   /* a successful load's notice ("first of 12 frames"); "" when none */
    size_t cap;     /* on_device: bytes behind im.data (a pool buffer) */
    int on_device;  /* im is a device image on the worker's device (ts_gpu_pitch rows) */
    ts_status st;
    char err[1024];
} decode_slot;

/* batch_codec.c */
/* Decodes n files: each codec in turn gets those the ones before it did not take, in calls of at
 * most its batch size; slots[k].st says which decoded (TS_OK), the others carry their reason. */
void batch_decode(const batch *b, gpu_worker *w, decode_slot *slots, int n);
/* Encodes and writes `im` to it->output through a temp file (the first codec that takes it). A
 * device image (on_device) that no GPU codec takes is downloaded through the worker's pinned
 * staging buffer for the CPU codec. */
ts_status batch_encode(const batch *b, gpu_worker *w, item *it, const ts_image *im, int on_device,
                       char *notice, size_t noticelen, char *err, size_t errlen);
/* The most files a decode step holding this input takes (1: a step of its own): several only for
 * JPEG files (by name) when nvJPEG is loaded, as many as batch_gpu_decode_batch says. */
int batch_decode_step(const batch *b, const char *path);

/* batch_gpu.c: the nvJPEG codec and what the GPU path keeps per device and per worker. Without
 * CUDA or nvJPEG every function is a no-op that leaves the work to the CPU codec. */
/* After the pipelines are open: loads nvJPEG when a slot is on the GPU (b->gpu_codec), else
 * says once why JPEG stays on the CPU; gives every GPU slot its buffer pool. nvJPEG's set-up
 * is not begun beside the context's: measured on an H100 host (2026-11-26), its decoders then
 * waited for the context and 120 photos took 1.07 s against 0.92 s one after the other. */
void batch_gpu_open(batch *b);
void batch_gpu_close(batch *b);
/* In the worker's own thread (its device made current first): its nvJPEG context, stream and
 * staging; NULL on the CPU or when nvJPEG is not usable (said once). */
gpu_worker *batch_gpu_worker_create(batch *b, device_slot *d);
void batch_gpu_worker_destroy(gpu_worker *w);
/* A spare device buffer of the slot's pool (zeroed when none) and its return. */
void batch_gpu_take(device_slot *d, ts_image *im, size_t *cap);
void batch_gpu_give(device_slot *d, ts_image *im, size_t *cap);
/* The nvJPEG codec (batch_codec.c's table): decode of JPEG files into pool buffers, encode of
 * 8-bit gray/RGB device images to JPEG. */
void gpu_codec_decode(const batch *b, gpu_worker *w, decode_slot *const *slots, int n);
/* JPEG files one nvJPEG decode step should take (1..8). */
int batch_gpu_decode_batch(const batch *b);
ts_status gpu_codec_encode(const batch *b, gpu_worker *w, item *it, const ts_image *im,
                           int on_device, char *notice, size_t noticelen, char *err,
                           size_t errlen);
/* A device image into the worker's pinned staging buffer (reused; grown when needed): *h views
 * it (not to be freed); the download time goes to it->ms[ST_DOWNLOAD]. */
ts_status batch_gpu_download(gpu_worker *w, item *it, const ts_image *d_im, ts_image *h, char *err,
                             size_t errlen);

/* batch_report.c */
/* The text of op k of an item's run (its orientation op first when one was applied). */
const char *batch_op_text(const batch *b, const item *it, int k);
/* --report: opens its temp file and writes the head (after the pipelines are open); each image's
 * record as it retires; the tail and the rename at the end (0, or -1 after saying why). */
int batch_report_open(batch *b);
void batch_report_item(batch *b, const item *it);
int batch_report_close(batch *b);
/* Retires the done items at the head of the ring, in input order (the lock held): a written
 * image's notices said, its --report record and --timings line written, a failure's line kept
 * for the end; the slot freed. */
void batch_retire(batch *b);
/* --timings: an image's line as it retires; the set-up at the end. */
void batch_print_item_timings(const batch *b, const item *it);
void batch_print_timings(const batch *b);
void batch_print_summary(const batch *b);

/* The headless batch (headless.c): the exit status. */
int batch_main(const app_options *o);

#endif
