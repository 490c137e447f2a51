/* batch.h - the parts of `tessera --headless` shared by its files (headless.c runs the batch,
 * batch_plan.c expands inputs and names outputs, batch_codec.c holds the codecs of the decode and
 * encode stages, batch_report.c writes --report, --timings and the summary). Internal to the app. */
#ifndef TS_BATCH_H
#define TS_BATCH_H

#include "options.h"
#include "image_io.h"

#include <pthread.h>

/* The stages of one image, in order. A codec that does two in one call (the CPU codec reads and
 * decodes in tsio_load, encodes and writes in tsio_save_atomic) reports them merged. The GPU
 * codec (batch_gpu.c) times them apart: on its path pixels stay on the device from decode to
 * encode, so upload and download are 0 unless the CPU decoded or encodes the image. */
typedef enum {
    ST_READ, ST_DECODE, ST_UPLOAD, ST_OPS, ST_DOWNLOAD, ST_ENCODE, ST_WRITE, ST_COUNT
} batch_stage;
const char *batch_stage_name(batch_stage s);

typedef struct item {
    char *input, *output;
    char *key;          /* the path relative to its input argument: the shard hash and the
                           output's place under -o DIR */
    char *real_input;   /* realpath, to catch an output that is an input */
    char *error;        /* "PATH: reason" (heap); NULL when fine */
    char *notice;       /* said only when the image is written (heap); NULL: none */
    int from_dir;       /* found under a directory argument: the output mirrors `key` */
    int ok;
    int device;         /* index into batch.devs of the worker that did it; -1: none */
    int width, height, channels, bytes;
    const char *decode_path; /* "cpu" (the nvJPEG codec: "engine", "cuda") */
    double ms[ST_COUNT];
    unsigned merged;    /* bit s: stage s was timed together with stage s + 1 */
    double t_start;     /* when its read began (now_ms) */
    double total_ms;    /* from the first read to the renamed output, waits between stages
                           included */
    ts_run_report rep;
    /* Photos: the chain this image runs (its EXIF orientation's op, then the user's; see
     * photo_chain), the orientation applied (1: none), the metadata its output carries. */
    ts_chain chain;
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

typedef struct batch {
    const app_options *o;
    ts_chain chain;
    item *items;
    int n, cap;
    int skipped;            /* files under directories that are not images by name */
    int skipped_dirs;       /* subfolders of DIR inputs left without -r */
    int dirs_skipped;       /* symlinks to folders and folders seen before: not entered */
    int made_output_dir;
    int next, finished;     /* guarded by lock */
    pthread_mutex_t lock;   /* next, finished, device figures, progress output */
    device_slot *devs;
    int n_devs;
    ts_pipeline **own;      /* CPU: one per worker */
    int n_own;
    int progress;           /* draw a progress bar on stderr */
    int gpu_codec;          /* nvJPEG loaded: GPU workers decode and encode JPEG with it */
    int gpu_warned;         /* the one notice about nvJPEG was given (guarded by lock) */
    double secs;            /* wall time of the work */
    /* --timings' setup line, ms: opening the devices and their pipelines; loading nvJPEG, its
     * handles and their warm-up (every device); the slowest worker's context */
    double setup_open_ms, setup_load_ms, setup_codec_ms, setup_warm_ms, setup_worker_ms;
} batch;

/* batch_devices.c */
/* Opens the slots and their pipelines (the first through app_open_pipeline: its messages and
 * --variant choices, copied to the others). 0, or -1 after saying why. */
int batch_open_pipelines(batch *b, int workers);
void batch_close_pipelines(batch *b);

/* batch_plan.c */
/* item->error/notice setters: printf into a new heap string (an older one is freed). */
void item_error(item *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void item_notice(item *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Expands the inputs into items; 0, or an exit status (printed). */
int batch_collect(batch *b);
/* Names every output (creating a missing -o DIR), marks collisions, checks the --report path
 * (never an input, an output of this run, an existing file without --force, or anything but a
 * regular file), then keeps this process's --shard. 0 or an exit status (printed). */
int batch_plan(batch *b);
void batch_free_items(batch *b);

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
 * says once why JPEG stays on the CPU; gives every GPU slot its buffer pool. */
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
int batch_write_report(const batch *b, const char *path);
void batch_print_timings(const batch *b);
void batch_print_summary(const batch *b, int failed);

/* The headless batch (headless.c): the exit status. */
int batch_main(const app_options *o);

#endif
