/* codec.h - the ground the image codecs stand on (app/codec_*.c, photo formats, image_io.c and
 * image_save.c): metadata, the pixel limit, error and notice helpers, and the entry points of each
 * codec. The codecs use only this; image_io.c and image_save.c dispatch to them, so calls go one
 * way (loader -> codec -> these helpers). Internal to the app. */
#ifndef TESSERA_CODEC_H
#define TESSERA_CODEC_H

#include "tessera.h"

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Metadata carried beside the pixels, as stored: `exif` is the TIFF-structured EXIF block (JPEG
 * APP1 after its "Exif\0\0" tag, PNG eXIf), `icc` the ICC profile (JPEG APP2 chunks joined, PNG
 * iCCP inflated). Both malloc'ed, NULL when absent; tsio_meta_free releases them. */
typedef struct tsio_meta {
    unsigned char *exif;
    size_t exif_len;
    unsigned char *icc;
    size_t icc_len;
} tsio_meta;

void tsio_meta_free(tsio_meta *m);

/* The formats an output can be written as (--format, an output's extension). */
typedef enum tsio_format {
    TSIO_UNKNOWN = 0,
    TSIO_PNG,
    TSIO_JPEG,
    TSIO_BMP,
    TSIO_TGA,
    TSIO_PNM,
    TSIO_WEBP,
    TSIO_TIFF
} tsio_format;

/* JPEG and WebP quality: the one default and range (--quality, the CPU and GPU encoders). */
#define TSIO_QUALITY_DEFAULT 90
#define TSIO_QUALITY_MIN 1
#define TSIO_QUALITY_MAX 100
#define TSIO_STR_(x) #x
#define TSIO_STR(x) TSIO_STR_(x)
#define TSIO_QUALITY_TEXT                                                                          \
    TSIO_STR(TSIO_QUALITY_MIN) ".." TSIO_STR(TSIO_QUALITY_MAX) " (default "                      \
    TSIO_STR(TSIO_QUALITY_DEFAULT) ")"
#define TSIO_JPEG_MAX_SIDE 65500 /* libjpeg's JPEG_MAX_DIMENSION: the CPU and GPU encoders' limit */
/* The quality an encoder uses for `asked` (0: the default); TS_ERR_INVALID outside the range. */
ts_status tsio_quality(int asked, int *quality, char *err, size_t errlen);

/* ---------------------------------------------------------------- the codec table (codec_table.c)
 * Each format is one row, as each op is one row of kernels/ops.c (and each file format one
 * class of libvips' foreign): its sniffer, the header probe that decides how many bytes of a
 * file are read, its CPU decoder (JPEG: nvJPEG too, on GPU workers, behind the same read), its
 * encoder, and for JPEG the metadata read and written beside a decoder or encoder that does
 * none (nvJPEG's). tsio_load, tsio_load_memory, tsio_save*, the batch's GPU codec and the
 * viewer find a format here and nowhere else. */
typedef struct tsio_decode_args {
    uint64_t max_pixels; /* resolved: never 0 */
    tsio_meta *meta;     /* may be NULL */
    char *notice;        /* may be NULL */
    size_t noticelen;
} tsio_decode_args;

typedef struct tsio_encode_args {
    int quality;              /* resolved (tsio_quality) */
    int level;                /* PNG: 0..9 */
    int lossless;             /* WebP */
    const tsio_meta *meta;    /* may be NULL */
} tsio_encode_args;

typedef struct tsio_codec {
    const char *name;   /* "JPEG", in messages */
    tsio_format format; /* what it is written as; TSIO_UNKNOWN: read only */
    const char *ext;    /* an output's extension ("jpg"); NULL: read only */
    const char *exts;   /* file name extensions, space separated: what a directory contributes
                           to a batch, and the names --format takes */
    /* The bytes start this format (b: the file's head, up to TSIO_HEAD_BYTES). */
    int (*sniff)(const unsigned char *b, size_t len);
    /* The header probe, on the file's head (its first len bytes): a refusal from the header
     * alone (over max_pixels), and the bytes decoding can use when fewer than the whole file
     * (*bytes comes in as the file's size). NULL: the whole file. Either way a file over what
     * max_pixels can need is refused unread (image_io.c, file_cap). */
    ts_status (*probe)(const unsigned char *head, size_t len, uint64_t size, uint64_t max_pixels,
                       size_t *bytes, char *err, size_t errlen);
    /* The CPU decoder of the whole buffer; NULL: the format is named, not read (`unsupported`). */
    ts_status (*decode)(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                        ts_image *out, char *err, size_t errlen);
    int gpu_decode;     /* nvJPEG takes it on GPU workers (gpu_jpeg*.c, app/batch/batch_gpu.c) */
    ts_status (*encode)(FILE *f, const ts_image *im, const tsio_encode_args *a, char *notice,
                        size_t noticelen, char *err, size_t errlen);
    /* Metadata of an encoded file without decoding it (for nvJPEG's decode); NULL: none. */
    ts_status (*meta_read)(const unsigned char *buf, size_t len, tsio_meta *meta);
    /* The file `enc` with meta's blocks added (for nvJPEG's encode), *out malloc'ed; what cannot
     * be stored is left out and said in `notice`. NULL: none. */
    ts_status (*meta_write)(const unsigned char *enc, size_t n, const tsio_meta *meta,
                            unsigned char **out, size_t *outn, char *notice, size_t noticelen);
    const char *unsupported; /* decode NULL: why ("HEIC is not supported") */
} tsio_codec;

#define TSIO_HEAD_BYTES ((size_t)64 << 10) /* what is read of a file before its format is known */

int tsio_codec_count(void);
const tsio_codec *tsio_codec_at(int i);
const tsio_codec *tsio_codec_sniff(const unsigned char *b, size_t len); /* NULL: unknown */
const tsio_codec *tsio_codec_of(tsio_format f); /* NULL for TSIO_UNKNOWN */
const tsio_codec *tsio_codec_jpeg(void);

/* The rows' functions, each in its codec's file. */
ts_status tsio_jpeg_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                         ts_image *out, char *err, size_t errlen);
ts_status tsio_png_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                        ts_image *out, char *err, size_t errlen);
ts_status tsio_webp_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                         ts_image *out, char *err, size_t errlen);
ts_status tsio_tiff_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                         ts_image *out, char *err, size_t errlen);
ts_status tsio_heif_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                         ts_image *out, char *err, size_t errlen);
ts_status tsio_jxl_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                        ts_image *out, char *err, size_t errlen);
ts_status tsio_tiff_save(FILE *f, const ts_image *im, const tsio_encode_args *a, char *notice,
                         size_t noticelen, char *err, size_t errlen);
/* stb's formats behind their guards (image_io.c) */
ts_status tsio_bmp_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                        ts_image *out, char *err, size_t errlen);
ts_status tsio_gif_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                        ts_image *out, char *err, size_t errlen);
ts_status tsio_psd_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                        ts_image *out, char *err, size_t errlen);
ts_status tsio_pnm_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                        ts_image *out, char *err, size_t errlen);
ts_status tsio_tga_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                        ts_image *out, char *err, size_t errlen);
ts_status tsio_jpeg_save(FILE *f, const ts_image *im, const tsio_encode_args *a, char *notice,
                         size_t noticelen, char *err, size_t errlen);
ts_status tsio_png_save(FILE *f, const ts_image *im, const tsio_encode_args *a, char *notice,
                        size_t noticelen, char *err, size_t errlen);
ts_status tsio_webp_save(FILE *f, const ts_image *im, const tsio_encode_args *a, char *notice,
                         size_t noticelen, char *err, size_t errlen);
/* image_save.c: stb_image_write's BMP and TGA, and PNM */
ts_status tsio_bmp_save(FILE *f, const ts_image *im, const tsio_encode_args *a, char *notice,
                        size_t noticelen, char *err, size_t errlen);
ts_status tsio_tga_save(FILE *f, const ts_image *im, const tsio_encode_args *a, char *notice,
                        size_t noticelen, char *err, size_t errlen);
ts_status tsio_pnm_save(FILE *f, const ts_image *im, const tsio_encode_args *a, char *notice,
                        size_t noticelen, char *err, size_t errlen);

/* JPEG metadata (jpeg_meta.c), one reader and one writer for libjpeg's path and nvJPEG's: the
 * EXIF block (APP1 "Exif\0\0") and the ICC profile (APP2 "ICC_PROFILE" chunks joined in
 * sequence order; absent unless every chunk is there), from the markers before the first scan,
 * bounded by the buffer; fills only what `meta` lacks; TS_ERR_NOMEM only. */
ts_status tsio_jpeg_meta_scan(const unsigned char *buf, size_t len, tsio_meta *meta);
/* The APP segments that store `meta` in a JPEG, each handed to put(ctx, marker, data, len) in
 * file order: an EXIF block over one segment, or an ICC profile that needs more than the 255
 * chunks a JPEG can number, is left out and said in `notice` (never written broken). */
void tsio_jpeg_meta_segments(const tsio_meta *meta, void (*put)(void *ctx, int marker,
                             const unsigned char *data, size_t len), void *ctx, char *notice,
                             size_t noticelen);
/* A copy of the JPEG `jpg` with meta's segments after its SOI and any APP0 (JFIF): for an encoder
 * that writes no metadata (nvJPEG's). *out is malloc'ed; TS_ERR_NOMEM, or TS_ERR_INVALID when
 * `jpg` does not start with SOI. */
ts_status tsio_jpeg_add_meta(const unsigned char *jpg, size_t n, const tsio_meta *meta,
                             unsigned char **out, size_t *outn, char *notice, size_t noticelen);
/* What nvJPEG decodes must be sound as libjpeg's strict decode sees it, or libjpeg decides (its
 * error is then the file's, on either backend): SOI, every segment inside the file, at most
 * TSIO_JPEG_MAX_SCANS scans each after a frame header, restart markers in order, and an end of
 * image (a cut file has none). Linear in the file, no decoding: corrupt Huffman data inside a
 * complete scan is not seen here. TS_ERR_FORMAT with the reason in `why`. */
ts_status tsio_jpeg_check(const unsigned char *b, size_t len, char *why, size_t whylen);
/* The one JPEG sniffer: SOI followed by a marker (FF D8 FF), what libjpeg and nvJPEG accept. */
int tsio_is_jpeg(const unsigned char *b, size_t len);

/* Scans a JPEG may have: each is a pass over the coefficients, so this bounds decode time to a
 * fixed multiple of the pixels (a real progressive JPEG has about 10). */
#define TSIO_JPEG_MAX_SCANS 100

/* Decoders: `buf` holds the whole file, already sniffed as the format; the image is refused over
 * max_pixels before any pixel memory is taken. `meta` may be NULL. */
ts_status tsio_jpeg_decode(const unsigned char *buf, size_t len, uint64_t max_pixels,
                           tsio_meta *meta, ts_image *out, char *err, size_t errlen);
ts_status tsio_png_decode(const unsigned char *buf, size_t len, uint64_t max_pixels,
                          tsio_meta *meta, ts_image *out, char *err, size_t errlen);
/* Encoders to a stream. A failed write is TS_ERR_IO; buffered errors show at fflush/fclose, which
 * the caller checks. The JPEG encoder adds its conversions (alpha dropped, 16 to 8-bit) to
 * `notice`. `level`: 0 (stored) .. 9 (app/codec/png_write.c). */
ts_status tsio_jpeg_encode(FILE *f, const ts_image *im, int quality, const tsio_meta *meta,
                           char *notice, size_t noticelen, char *err, size_t errlen);
ts_status tsio_png_encode(FILE *f, const ts_image *im, int level, const tsio_meta *meta,
                          char *err, size_t errlen);
/* Checks before stb decodes (app/codec/codec_guard.c): the data a header promises is in the file
 * ("truncated ..."), headers that stb 2.27 parses unsafely are parsed here first. */
typedef struct tsio_pnm_head { /* a binary PNM header as stb parses it */
    unsigned w, h, maxval, comp;
    size_t data; /* offset of the samples */
} tsio_pnm_head;
ts_status tsio_guard_pnm(const unsigned char *b, size_t len, tsio_pnm_head *ph, char *err,
                         size_t errlen);
ts_status tsio_guard_bmp(const unsigned char *b, size_t len, char *err, size_t errlen);
ts_status tsio_guard_gif(const unsigned char *b, size_t len, char *err, size_t errlen);
ts_status tsio_guard_tga(const unsigned char *b, size_t len, uint64_t max_pixels, char *err,
                         size_t errlen);
/* A PSD with alpha goes to stb as a copy that declares 3 channels; its alpha (raw samples in the
 * file, or a decoded RLE plane, every 4th byte) is put back by tsio_psd_unmatte. */
typedef struct tsio_psd_alpha {
    int active;                /* the copy is to be decoded and tsio_psd_unmatte applied */
    unsigned char *copy;       /* the 3-channel copy for stb */
    size_t copy_len;
    const unsigned char *raw;  /* raw alpha samples (big-endian when raw16), or NULL */
    int raw16;
    unsigned char *plane;      /* RLE alpha, 8-bit, stride 4 */
} tsio_psd_alpha;
ts_status tsio_guard_psd(const unsigned char *b, size_t len, tsio_psd_alpha *pa, char *err,
                         size_t errlen);
void tsio_psd_unmatte(ts_image *im, const tsio_psd_alpha *pa);
void tsio_psd_alpha_free(tsio_psd_alpha *pa);
/* The bytes could be a TGA header stb decodes (TGA has no signature: the table tries it last). */
int tsio_tga_sniff(const unsigned char *b, size_t len);
/* The most bytes of a file whose head (len >= 18 bytes) is a TGA header that decoding can use,
 * at most cap; cap when the head is not a TGA header, len when its image is over max_pixels. */
size_t tsio_tga_bytes(const unsigned char *head, size_t len, uint64_t max_pixels, size_t cap);
/* Appends "; text" (or text) to a notice buffer. */
void tsio_add_notice(char *notice, size_t len, const char *text);
/* Checks a w x h image against TS_MAX_DIM and max_pixels (the one message for every format). */
ts_status tsio_check_limit(uint64_t w, uint64_t h, uint64_t max_pixels, char *err, size_t errlen);

/* Formats the reason into err (when err and errlen) and into ts_error_detail(); returns st. */
ts_status tsio_fail(char *err, size_t errlen, ts_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* strerror of e, safe from several threads; returns buf or a static string. */
const char *tsio_errtext(int e, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_CODEC_H */
