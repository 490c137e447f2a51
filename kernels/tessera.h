/* tessera.h - the one public header of tessera's kernel library.
 *
 * Compiles as C11 and as CUDA C++ (every .cu file of kernels/ and tools/ includes it).
 * Host code (app/, tools/, tests/) talks to the kernels only through this header:
 *   - ts_image: a pitched 2-D image of 1-4 channels, 8 or 16 bits, in host or device memory;
 *   - ts_op / ts_chain: parsed operations ("gauss:5,rotate:90,equalize"), and the op table
 *     (ts_op_count, ts_op_info_at) that the grammar, --help, --list and the viewer derive from;
 *   - ts_variant: the one table of implementations (cpu, naive, shared, ...) of each op family;
 *   - ts_pipeline: runs a chain on the GPU or the CPU and reports per-op times;
 *   - ts_ref_*: the CPU reference of every op (test oracle and no-GPU fallback);
 *   - ts_gpu_*: the small GPU runtime (device query, buffers, stream, event timers).
 * Nothing here prints or exits: functions return a ts_status, and ts_error_detail() holds the
 * reason of the last failure on the calling thread.
 */
#ifndef TESSERA_H
#define TESSERA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- status and errors */

typedef enum ts_status {
    TS_OK = 0,
    TS_ERR_INVALID,     /* bad argument or malformed text */
    TS_ERR_NOMEM,       /* host allocation failed */
    TS_ERR_TOO_LARGE,   /* over a limit, or size arithmetic would overflow */
    TS_ERR_UNSUPPORTED, /* this variant cannot run this job (or on this device) */
    TS_ERR_NO_GPU,      /* no usable GPU, or built without CUDA */
    TS_ERR_CUDA,        /* a CUDA call failed; ts_error_detail() names it */
    TS_ERR_IO,          /* reading or writing a file failed */
    TS_ERR_FORMAT       /* file contents are not what they must be */
} ts_status;

const char *ts_status_str(ts_status s);
/* The reason for the last failure on this thread ("" when none). */
const char *ts_error_detail(void);
/* Sets the detail (printf-style) and returns `s`, so `return ts_fail(TS_ERR_X, "...")` reads well. */
ts_status ts_fail(ts_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void ts_clear_error(void);

/* ---------------------------------------------------------------- images */

#define TS_MAX_DIM 1048576 /* a side longer than this is refused whatever the pixel limit */
#define TS_DEFAULT_MAX_PIXELS ((uint64_t)16384 * 16384)

typedef struct ts_image {
    void *data;    /* host or device memory; row y starts at (char *)data + y * pitch */
    size_t pitch;  /* bytes between rows, >= width * channels * bytes */
    int width;     /* >= 1 */
    int height;    /* >= 1 */
    int channels;  /* 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA */
    int bytes;     /* bytes per sample: 1 (8-bit) or 2 (16-bit, native endian) */
} ts_image;

/* Colour channels: the channels an op changes (alpha, channel 1 of 2 or 3 of 4, passes through). */
static inline int ts_color_channels(int channels) { return channels >= 3 ? 3 : 1; }
static inline int ts_has_alpha(int channels) { return channels == 2 || channels == 4; }
static inline size_t ts_pixel_bytes(const ts_image *im) { return (size_t)im->channels * (size_t)im->bytes; }
static inline size_t ts_row_bytes(const ts_image *im) { return (size_t)im->width * ts_pixel_bytes(im); }
static inline int ts_max_value(int bytes) { return bytes == 2 ? 65535 : 255; }

/* Checks the shape and computes packed row and total bytes with overflow checks. */
ts_status ts_image_geometry(int width, int height, int channels, int bytes, size_t *row_bytes,
                            size_t *total_bytes);
/* Host image, packed rows (pitch = row bytes), contents uninitialized. */
ts_status ts_image_alloc(ts_image *im, int width, int height, int channels, int bytes);
void ts_image_free(ts_image *im); /* host images only; safe on a zeroed struct */
/* Sample access for host code (tests, reference): value of channel c at (x, y). */
static inline unsigned ts_get(const ts_image *im, int x, int y, int c)
{
    const unsigned char *row = (const unsigned char *)im->data + (size_t)y * im->pitch;
    size_t i = (size_t)x * (size_t)im->channels + (size_t)c;
    return im->bytes == 2 ? ((const uint16_t *)row)[i] : row[i];
}
static inline void ts_put(ts_image *im, int x, int y, int c, unsigned v)
{
    unsigned char *row = (unsigned char *)im->data + (size_t)y * im->pitch;
    size_t i = (size_t)x * (size_t)im->channels + (size_t)c;
    if (im->bytes == 2)
        ((uint16_t *)row)[i] = (uint16_t)v;
    else
        row[i] = (unsigned char)v;
}
/* 1 when both host images have the same shape and the same samples. */
int ts_image_equal(const ts_image *a, const ts_image *b);

/* ---------------------------------------------------------------- operations */

#define TS_MAX_K 31       /* filters are K x K, K odd, 1..TS_MAX_K */
#define TS_MAX_OUTPUTS 2  /* filters in one bank (edge: Sobel x and y) */
#define TS_MAX_CHAIN 64   /* ops in one chain */

/* What the pipeline, the variants and the reference switch on; the ops of each kind are rows of
 * the op table (ts_op_info_at). */
typedef enum ts_op_kind {
    TS_OP_CONV,     /* a filter bank (ts_filter): blurs, sharpening, edges, kernel files */
    TS_OP_GEOM,     /* a permutation of pixels (ts_geom): rotations and mirrors */
    TS_OP_EQUALIZE, /* histogram equalization (ts_hist_mode) */
    TS_OP_HIST,     /* histogram only (tests and benchmark); not accepted by ts_chain_parse */
    TS_OP_RESIZE,   /* a resampling or a crop (ts_resize): resize, thumbnail, crop */
    TS_OP_CLAHE     /* contrast-limited adaptive histogram equalization (ts_clahe) */
} ts_op_kind;

/* The op families, each with its own ladder of variants (the variant table below). */
typedef enum ts_family {
    TS_FAM_CONV,
    TS_FAM_GEOM,
    TS_FAM_HIST,
    TS_FAM_RESIZE,
    TS_FAM_CLAHE,
    TS_FAM_COUNT
} ts_family;

typedef enum ts_geom {
    TS_GEOM_ROT90,      /* clockwise */
    TS_GEOM_ROT180,
    TS_GEOM_ROT270,
    TS_GEOM_TRANSPOSE,  /* out(x, y) = in(y, x) */
    TS_GEOM_TRANSVERSE, /* transpose about the other diagonal */
    TS_GEOM_FLIP,       /* top-bottom */
    TS_GEOM_FLOP        /* left-right */
} ts_geom;

typedef enum ts_hist_mode {
    TS_HIST_LUMA,    /* gray: the gray channel; colour: y = (299R + 587G + 114B + 500) / 1000 */
    TS_HIST_CHANNELS /* one histogram per colour channel */
} ts_hist_mode;

/* A filter bank applied to each colour channel on its own (depthwise), correlation (no flip),
 * border replicate. As a matrix product: Out[o][p] = sum_t W[o][t] * Im2col[t][p], t < k*k. */
typedef struct ts_filter {
    int k;         /* odd, 1..TS_MAX_K */
    int outputs;   /* 1, or 2 with `magnitude` */
    int exact;     /* integer weights `iw` and `divisor`: integer accumulation, one rounding */
    int magnitude; /* epilogue round(sqrt(o0^2 + o1^2)) of the two outputs (edge) */
    int separable; /* w[o][y][x] = col[y] * row[x] (gauss, box): a variant may use two passes */
    int32_t divisor;                      /* > 0 when exact */
    int32_t iw[TS_MAX_OUTPUTS * TS_MAX_K * TS_MAX_K]; /* [o][ky][kx], when exact */
    float w[TS_MAX_OUTPUTS * TS_MAX_K * TS_MAX_K];    /* [o][ky][kx]; exact: iw / divisor */
    float row[TS_MAX_K], col[TS_MAX_K];   /* the 1-D factors when separable (output 0) */
} ts_filter;

/* Resampling (Pillow's ImagingResample) or an exact crop; the grammar, the output size and the
 * reference are in kernels/ref_resize.c. */
typedef enum ts_resize_mode { TS_RESIZE_SCALE, TS_RESIZE_THUMBNAIL, TS_RESIZE_CROP } ts_resize_mode;
typedef enum ts_resize_filter {
    TS_FILTER_BOX,      /* support 0.5 */
    TS_FILTER_TRIANGLE, /* bilinear, support 1 */
    TS_FILTER_CUBIC,    /* Catmull-Rom (a = -0.5), support 2 */
    TS_FILTER_LANCZOS3, /* support 3, the default */
    TS_FILTER_INTERP    /* OpenCV's INTER_LINEAR: 2 taps, no antialiasing */
} ts_resize_filter;
typedef struct ts_resize {
    ts_resize_mode mode;
    ts_resize_filter filter;
    int w, h;       /* SCALE: 0 = keep aspect from the other side; THUMBNAIL: w = h = N; CROP: box */
    double percent; /* SCALE: > 0 for N% (then w = h = 0) */
    long x, y;      /* CROP: the box's top-left corner (may lie outside the image) */
} ts_resize;

/* CLAHE as OpenCV's createCLAHE(clip, Size(tiles_x, tiles_y)).apply() on the gray channel, or on
 * the luma of colour (chroma kept as equalize keeps it); kernels/clahe.h holds the arithmetic. */
typedef struct ts_clahe {
    double clip;           /* 0: no clipping (plain adaptive equalization); OpenCV's default 40 */
    int tiles_x, tiles_y;  /* the tile grid, 1..TS_CLAHE_MAX_TILES each; default 8 x 8 */
} ts_clahe;
#define TS_CLAHE_MAX_TILES 32

typedef struct ts_variant ts_variant;

typedef struct ts_op {
    ts_op_kind kind;
    char text[80];             /* canonical text, e.g. "gauss:5:1.1" (for HUD, report, errors) */
    ts_geom geom;              /* TS_OP_GEOM */
    ts_hist_mode hist_mode;    /* TS_OP_EQUALIZE, TS_OP_HIST */
    ts_filter filter;          /* TS_OP_CONV */
    ts_resize resize;          /* TS_OP_RESIZE */
    ts_clahe clahe;            /* TS_OP_CLAHE */
    const ts_variant *variant; /* NULL: the pipeline's choice for the family; else this one */
} ts_op;

typedef struct ts_chain {
    int n;
    ts_op *ops; /* n ops, heap */
} ts_chain;

/* The weights of kernel:FILE, read by the caller: the library opens no files. A reader fills *f
 * (with ts_filter_parse on the file's text) or returns the failure with `err` naming the file.
 * The app's reads regular files only, at most TS_KERNEL_FILE_MAX + 1 bytes. */
#define TS_KERNEL_FILE_MAX (1u << 20) /* a kernel file longer than 1 MiB is refused */
typedef ts_status (*ts_kernel_reader)(const char *file, ts_filter *f, char *err, size_t errlen);
/* Parses "gauss:5,rotate:90,equalize". An empty or all-blank string gives an empty chain.
 * On failure the chain is empty and `err` says what is wrong with which item. kernel:FILE is
 * TS_ERR_UNSUPPORTED here (no reader); ts_chain_parse_with hands FILE to `reader`.
 * Returns TS_ERR_INVALID for malformed text, the reader's status for a kernel file. */
ts_status ts_chain_parse(const char *text, ts_chain *chain, char *err, size_t errlen);
ts_status ts_chain_parse_with(const char *text, ts_kernel_reader reader, ts_chain *chain,
                              char *err, size_t errlen);
ts_status ts_chain_append(ts_chain *chain, const ts_op *op);
void ts_chain_remove(ts_chain *chain, int index);
void ts_chain_free(ts_chain *chain);
/* One op ("gauss:5"); the same grammar as an item of a chain. */
ts_status ts_op_parse(const char *item, ts_op *op, char *err, size_t errlen);
ts_status ts_op_parse_with(const char *item, ts_kernel_reader reader, ts_op *op, char *err,
                           size_t errlen);
/* Parses the text of a kernel file: K*K weights (K odd, 1..31) separated by blanks, commas or
 * newlines, '#' comments, and an optional line "divisor: D" (or "/ D"). */
ts_status ts_filter_parse(const char *text, size_t len, ts_filter *f, char *err, size_t errlen);
/* Output size of a geometry op. */
void ts_geom_size(ts_geom g, int width, int height, int *out_width, int *out_height);
/* Output size of any op for a width x height input (the row's shape rule); TS_ERR_INVALID
 * (a crop box outside the image) or TS_ERR_TOO_LARGE with a reason in ts_error_detail(). */
ts_status ts_op_out_size(const ts_op *op, int width, int height, int *out_width,
                         int *out_height);

/* The op table: each op of the grammar declared once (kernels/ops.c). Index 0..ts_op_count()-1,
 * in help order. */
typedef struct ts_op_info {
    const char *name;  /* "gauss": the text before the first ':' */
    ts_family family;  /* the variants that run it */
    const char *help;  /* one line */
} ts_op_info;
int ts_op_count(void);
const ts_op_info *ts_op_info_at(int i); /* NULL outside 0..ts_op_count()-1 */
int ts_op_find(const char *name);       /* the index of an op name, or -1 */
int ts_op_index(const ts_op *op);       /* the row of a parsed op (from its text), or -1 */
/* Text derived from the table, snprintf-style (always terminated; returns the length the whole
 * text has): the synopsis of op i ("gauss[:K[:SIGMA]]"); the names of a family's ops, space
 * separated (family -1: all); the grammar block of --help (wrapped synopses, notes). */
size_t ts_op_synopsis(int i, char *buf, size_t len);
size_t ts_op_names(int family, char *buf, size_t len);
size_t ts_op_usage(char *buf, size_t len);
/* Number of histograms (1 or 3) and bins per histogram for an image. */
int ts_hist_count(ts_hist_mode mode, int channels);
static inline int ts_hist_bins(int bytes) { return bytes == 2 ? 65536 : 256; }

/* ---------------------------------------------------------------- CPU reference */

/* General filter bank: W[outputs][channels][k][k] over all `in` channels, border replicate,
 * float accumulation; out is outputs planes of width*height floats. */
ts_status ts_ref_filter_bank(const ts_image *in, const float *w, int outputs, int k, float *out);
/* Same with integer weights and int64 accumulation (exact). */
ts_status ts_ref_filter_bank_int(const ts_image *in, const int32_t *w, int outputs, int k,
                                 int64_t *out);
/* Threads the reference convolution may use (bands of rows; the result is the same for any
 * count): 1 (the default) to 64. The CLI and the viewer set it from --jobs and the batch size. */
void ts_ref_set_threads(int n);
int ts_ref_threads(void);
/* Each op on host images; `out` is allocated by the call (host, packed). */
ts_status ts_ref_conv(const ts_op *op, const ts_image *in, ts_image *out);
ts_status ts_ref_geom(ts_geom g, const ts_image *in, ts_image *out);
/* hist: ts_hist_count() * ts_hist_bins() counts, zeroed by the call. */
ts_status ts_ref_hist(const ts_image *in, ts_hist_mode mode, uint32_t *hist);
/* The equalization LUT of one histogram of `bins` bins over n pixels (see README). */
void ts_equalize_lut(const uint32_t *hist, int bins, uint64_t n, uint16_t *lut);
ts_status ts_ref_equalize(ts_hist_mode mode, const ts_image *in, ts_image *out);
/* Runs any op (not TS_OP_HIST) with the reference; `out` is allocated by the call. */
ts_status ts_ref_op(const ts_op *op, const ts_image *in, ts_image *out);
/* The same into a host image the caller allocated with the op's output shape. */
ts_status ts_ref_op_into(const ts_op *op, const ts_image *in, ts_image *out);

/* ---------------------------------------------------------------- GPU runtime */

typedef struct CUstream_st *ts_stream; /* the same type as cudaStream_t */

typedef struct ts_device {
    int id;
    char name[256];
    int cc;                   /* compute capability * 10 (90 = sm_90), maybe lowered by the
                                 settings' max_cc to force fallbacks in tests */
    int cc_real;              /* the device's own */
    int sms;
    size_t global_mem, free_mem;
    size_t smem_per_block;        /* default limit, bytes */
    size_t smem_per_block_optin;  /* with cudaFuncSetAttribute */
    size_t smem_per_sm;
    size_t l2_bytes;
    int cluster_launch;       /* thread-block clusters usable (and cc >= 90) */
    int coop_launch;          /* cooperative launches (a grid-wide barrier) usable */
    int clock_khz, mem_clock_khz, mem_bus_bits;
    int driver_version, runtime_version;
} ts_device;

int ts_gpu_compiled(void); /* 1 when built with CUDA */
/* The runtime's settings, process-wide: the library reads no environment, so the app sets them
 * (from TESSERA_DEVICE, TESSERA_MAX_CC, ...) before its first GPU call. All zero: the defaults. */
typedef struct ts_gpu_settings {
    int device_set;            /* ts_gpu_open opens `device` instead of the first */
    int device;
    int max_cc;                /* > 0: a device reports at most this capability (cc), so tests
                                  reach the pre-sm_90 paths on an sm_90 GPU */
    size_t mem_limit;          /* > 0: any one allocation above it fails as out of GPU memory */
    int resize_plan_cache_off; /* resize's geometry is built on every call (first-call timings) */
} ts_gpu_settings;
void ts_gpu_set(const ts_gpu_settings *s); /* copies *s; NULL restores the defaults */
const ts_gpu_settings *ts_gpu_get(void);
/* Opens the first usable device (or the settings' device). TS_ERR_NO_GPU says why not. */
ts_status ts_gpu_open(ts_device *dev);
/* Opens device `id` (< 0: as ts_gpu_open) and makes it the calling thread's current device. */
ts_status ts_gpu_open_id(ts_device *dev, int id);
int ts_gpu_count(void); /* CUDA devices present; 0 without a driver or a CUDA build */
/* Makes device `id` the calling thread's current one (the CUDA runtime keeps it per thread): a
 * thread must call it before its first CUDA call on any device but 0. */
ts_status ts_gpu_use(int id);
ts_status ts_gpu_malloc(void **d_ptr, size_t bytes);
void ts_gpu_free(void *d_ptr);
/* Device rows start 256-byte aligned, so 16-byte vector loads at a row's start are aligned. */
static inline size_t ts_gpu_pitch(size_t row_bytes) { return (row_bytes + 255) & ~(size_t)255; }
/* Device image with pitched rows (ts_gpu_pitch). */
ts_status ts_gpu_image_alloc(ts_image *d_im, int width, int height, int channels, int bytes);
/* The same, reusing d_im's memory while `*capacity` bytes suffice (buffers kept across images);
 * *capacity follows the allocation. Start from a zeroed image and capacity 0. */
ts_status ts_gpu_image_reserve(ts_image *d_im, size_t *capacity, int width, int height,
                               int channels, int bytes);
void ts_gpu_image_free(ts_image *d_im);
ts_status ts_gpu_upload(ts_image *d_dst, const ts_image *h_src, ts_stream s);
ts_status ts_gpu_download(ts_image *h_dst, const ts_image *d_src, ts_stream s);
ts_status ts_gpu_copy_to_host(void *h_dst, const void *d_src, size_t bytes, ts_stream s);
ts_status ts_gpu_copy_to_device(void *d_dst, const void *h_src, size_t bytes, ts_stream s);
ts_status ts_gpu_memset(void *d_ptr, int value, size_t bytes, ts_stream s);
ts_status ts_gpu_image_fill(ts_image *d_im, int byte_value, ts_stream s); /* poisoning */
ts_status ts_gpu_stream_create(ts_stream *s);
void ts_gpu_stream_destroy(ts_stream s);
ts_status ts_gpu_sync(ts_stream s);

typedef struct ts_timer ts_timer; /* a pair of CUDA events */
ts_status ts_timer_create(ts_timer **t);
void ts_timer_destroy(ts_timer *t);
ts_status ts_timer_start(ts_timer *t, ts_stream s);
ts_status ts_timer_stop(ts_timer *t, ts_stream s);
ts_status ts_timer_ms(ts_timer *t, float *ms); /* waits for the stop event */

/* ---------------------------------------------------------------- the variant table */

/* The family table (kernels/ops.c): a new family is one row there. */
typedef struct ts_family_info {
    const char *name;    /* "conv", "geom", "hist", "resize", "clahe" */
    const char *note;    /* what --list adds after the family's ops ("" or " (histogram)") */
    const char *demo_op; /* the op the viewer's --demo and the tests show the family with */
} ts_family_info;
const ts_family_info *ts_family_info_of(ts_family f); /* NULL outside 0..TS_FAM_COUNT-1 */
const char *ts_family_name(ts_family f);      /* "conv", "geom", "hist", "resize", "clahe" */
ts_family ts_op_family(ts_op_kind k);         /* equalize and hist -> TS_FAM_HIST */
/* "conv"/"geom"/"hist", or an op name of the family ("gauss", "rotate", "equalize", ...). */
int ts_family_from_name(const char *name, ts_family *f);

/* One run of one op by one variant. For GPU variants every pointer is device memory. */
typedef struct ts_job {
    const ts_op *op;
    ts_image in;
    ts_image out;          /* allocated by the caller with the op's output size; unused for HIST */
    uint32_t *hist;        /* TS_OP_HIST: ts_hist_count * ts_hist_bins counts, zeroed by run */
    void *scratch;         /* variant->scratch(job) bytes (device or host), or NULL */
    size_t scratch_bytes;
    ts_stream stream;
    const ts_device *dev;  /* NULL for CPU variants */
    int param;             /* tuning knob for benchmark sweeps (e.g. cluster size); 0: default */
} ts_job;

struct ts_variant {
    ts_family family;
    const char *name;  /* "cpu", "naive", "shared", ... */
    const char *why;   /* one line: what makes it faster than the one before */
    int min_cc;        /* 0: runs on the CPU; else the compute capability * 10 it needs */
    int auto_rank;     /* `auto` takes the highest-ranked runnable variant that supports the job */
    int (*supports)(const ts_job *job);    /* NULL: every job; reads op and image shapes only */
    size_t (*scratch)(const ts_job *job);  /* NULL: no scratch */
    ts_status (*run)(const ts_job *job);   /* asynchronous on job->stream for GPU variants */
    int (*prefers)(const ts_job *job);     /* NULL: never; 1: `auto` takes it ahead of the ranks
                                              (a rung measured fastest on those jobs only) */
};

size_t ts_variant_count(void);
const ts_variant *ts_variant_at(size_t i);
const ts_variant *ts_variant_find(ts_family f, const char *name);
/* "auto" and the names of a family's variants, space separated, snprintf-style (for messages). */
size_t ts_variant_names(ts_family f, char *buf, size_t len);
static inline int ts_variant_is_gpu(const ts_variant *v) { return v->min_cc > 0; }
/* 1 when `v` can run on `dev` (CPU variants always; GPU variants need dev and cc >= min_cc). */
int ts_variant_runnable(const ts_variant *v, const ts_device *dev);
/* The variant `auto` picks for a job: on the GPU (dev != NULL) the best runnable GPU variant,
 * else the CPU one. NULL only if the table lacks one. */
const ts_variant *ts_variant_auto(const ts_job *job, const ts_device *dev);

/* ---------------------------------------------------------------- the pipeline */

typedef enum ts_backend { TS_BACKEND_AUTO, TS_BACKEND_GPU, TS_BACKEND_CPU } ts_backend;

typedef struct ts_op_report {
    const ts_variant *variant; /* the variant that ran */
    float ms;                  /* kernel time (CUDA events; host clock on the CPU) */
} ts_op_report;

typedef struct ts_run_report {
    int n;
    ts_op_report op[TS_MAX_CHAIN];
    float upload_ms, download_ms; /* 0 on the CPU */
    float total_ms;               /* wall time of the whole run */
    char notice[256];             /* e.g. "hist: cluster needs sm_90, used shared" ("" if none) */
    int input_resident;           /* ts_pipeline_run_ex: the input was on the GPU, no upload */
} ts_run_report;

typedef struct ts_pipeline ts_pipeline;

/* TS_BACKEND_AUTO falls back to the CPU and explains why in `msg`; TS_BACKEND_GPU fails instead. */
ts_status ts_pipeline_create(ts_pipeline **p, ts_backend want, char *msg, size_t msglen);
/* The same on CUDA device `device` (< 0: as ts_pipeline_create). Every later call on the
 * pipeline makes that device current in the calling thread first, so any thread may use it. */
ts_status ts_pipeline_create_on(ts_pipeline **p, ts_backend want, int device, char *msg,
                                size_t msglen);
void ts_pipeline_destroy(ts_pipeline *p);
/* An op whose output would be over max_pixels is refused (TS_ERR_TOO_LARGE) before anything is
 * allocated for it; 0 (the default): TS_DEFAULT_MAX_PIXELS. The app sets its --max-pixels. */
void ts_pipeline_set_max_pixels(ts_pipeline *p, uint64_t max_pixels);
int ts_pipeline_on_gpu(const ts_pipeline *p);
const ts_device *ts_pipeline_device(const ts_pipeline *p); /* NULL on the CPU */
/* The variant used for a family when an op names none: NULL or "auto" for auto. Unknown names
 * are TS_ERR_INVALID; a GPU variant on the CPU backend, or one the device cannot run, is
 * TS_ERR_UNSUPPORTED (ts_error_detail says why). */
ts_status ts_pipeline_select(ts_pipeline *p, ts_family f, const char *name);
const ts_variant *ts_pipeline_selected(const ts_pipeline *p, ts_family f); /* NULL: auto */
/* Runs the chain on a host image; `out` receives a new host image (free with ts_image_free).
 * A chosen variant that cannot take a job is replaced by auto, with a notice in the report.
 * On a failure ts_error_detail() names the op, the variant and the cause. */
ts_status ts_pipeline_run(ts_pipeline *p, const ts_chain *c, const ts_image *in, ts_image *out,
                          ts_run_report *report);
/* For a caller that runs chains on the same input again and again (the viewer's live mode).
 * All zero: ts_pipeline_run's behaviour. */
typedef struct ts_run_opts {
    int keep_input;      /* GPU: upload into a buffer that no op writes, and keep it there */
    int input_unchanged; /* with keep_input: `in` holds the pixels of the last kept upload, so the
                            upload is skipped while that copy is valid (report.input_resident) */
    int reuse_out;       /* `out` holds a host image of an earlier run (or is zeroed): its memory
                            is reused when the result has its shape, else it is freed first */
    int keep_output;     /* GPU: no download: the result stays on the device (ts_pipeline_result)
                            and `out` gets only its shape (data NULL); the CPU ignores it */
} ts_run_opts;
/* ts_pipeline_run with options (`opts` may be NULL). On failure `out` is freed and zeroed. */
ts_status ts_pipeline_run_ex(ts_pipeline *p, const ts_chain *c, const ts_image *in, ts_image *out,
                             ts_run_report *report, const ts_run_opts *opts);
/* ts_pipeline_run_ex on a device input: `d_in` lies on the pipeline's device (rows
 * ts_gpu_pitch apart, complete: no work pending on another stream); no upload, and no op writes
 * it (keep_input and input_unchanged mean nothing here). The CPU pipeline refuses it
 * (TS_ERR_INVALID). With keep_output nothing crosses to the host. */
ts_status ts_pipeline_run_dev(ts_pipeline *p, const ts_chain *c, const ts_image *d_in,
                              ts_image *out, ts_run_report *report, const ts_run_opts *opts);
/* The device image of the last run's result when that run kept it there (keep_output); NULL on
 * the CPU, after a failure, or once any other run (ts_pipeline_run_op included) has started. */
const ts_image *ts_pipeline_result(const ts_pipeline *p);
/* After a keep_output run: swaps the result's device buffer with the caller's (d_im and
 * *capacity, both zero or from ts_gpu_image_reserve on this device), so the caller owns the
 * result without a copy and the pipeline reuses the caller's memory next time. With an empty
 * chain on a device input the result is that input: nothing is swapped. TS_ERR_INVALID when
 * the last run kept no result. */
ts_status ts_pipeline_take_result(ts_pipeline *p, ts_image *d_im, size_t *capacity);
ts_stream ts_pipeline_stream(const ts_pipeline *p); /* NULL on the CPU */
/* Runs one op with one given variant (tests, viewer's speedup bars). */
ts_status ts_pipeline_run_op(ts_pipeline *p, const ts_op *op, const ts_variant *v,
                             const ts_image *in, ts_image *out, float *ms);

/* ---------------------------------------------------------------- display conversion (display.cu) */

/* What a viewer shows of an image, as 32-bit XRGB texels (0xffRRGGBB as a native uint32_t, SDL's
 * RGB888/ARGB8888). The whole image maps onto a gw x gh grid (gw <= width, gh <= height); grid
 * cell (gx, gy) is the mean of source columns [gx * width / gw, (gx + 1) * width / gw) (floors;
 * rows likewise), rounded half up. Output texel (x, y) is cell (gx0 + x, gy0 + y), so a view
 * shows only its visible part. 16-bit samples show as round(v / 257) of the mean, gray as R = G
 * = B, alpha over a checkerboard of 8x8 cells (0x66 and 0x99). Not an op: no variants. The app
 * holds the same conversion for host images (app/viewer/viewer_display.c), and tests compare the two. */
typedef struct ts_display_map {
    int gw, gh;   /* the whole image on screen, in cells */
    int gx0, gy0; /* the cell of output texel (0, 0) */
    int tw, th;   /* output size: gx0 + tw <= gw, gy0 + th <= gh */
} ts_display_map;
/* The conversion on the GPU: device image d_src into d_dst (tw x th texels, rows dst_pitch bytes
 * apart), asynchronous on stream s. A map that does not fit the image is TS_ERR_INVALID; cells of
 * more than 65536 pixels (sums past 32 bits) are TS_ERR_TOO_LARGE. */
ts_status ts_display_convert(const ts_image *d_src, const ts_display_map *m, void *d_dst,
                             size_t dst_pitch, ts_stream s);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_H */
