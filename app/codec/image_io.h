/* image_io.h - loading and saving images.
 *
 * Codecs: JPEG through libjpeg-turbo (app/codec/codec_jpeg.c), PNG read through libspng
 * (app/codec/codec_png.c), BMP, TGA, GIF, PSD and PNM through stb_image behind tessera's own guards
 * (app/codec/image_io.c).
 * Loading keeps the file's channel count (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA) and depth (16-bit
 * PNG, PNM and PSD as bytes=2, everything else bytes=1). Before a decoder sees a byte, tessera
 * reads the header, refuses images over the pixel limit and, for stb's formats, checks that the
 * file holds the data the header promises; every stb allocation is zeroed and charged to a
 * per-decode budget derived from the image's size.
 *
 * Saving (app/codec/image_save.c) picks the format from the extension (or tsio_save_opts.format): PNG
 * 8/16-bit (app/codec/png_write.c, libdeflate), JPEG (libjpeg-turbo), BMP, TGA (stb_image_write), PNM
 * 8/16-bit (own).
 * tsio_save_atomic writes a temp file beside the target and renames it, so a failure or a signal
 * never leaves a partial file.
 *
 * Nothing here prints or exits: functions return a ts_status, write a short reason without path or
 * newline into `err`, and also set ts_error_detail().
 */
#ifndef TESSERA_IMAGE_IO_H
#define TESSERA_IMAGE_IO_H

#include "tessera.h"
#include "codec.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* By extension, case-insensitive: .png .jpg .jpeg .bmp .tga .pnm .ppm .pgm; else TSIO_UNKNOWN.
 * Also a bare name ("png", "jpg", "jpeg", "bmp", "tga", "pnm", "ppm", "pgm") for --format. */
tsio_format tsio_format_from_name(const char *path_or_name);
/* 1 when a file name's extension is one of the formats tessera reads (png jpg jpeg bmp tga gif psd
 * pnm ppm pgm, any case, plus hdr and pic so that they are reported as unsupported, not skipped):
 * what a directory of images contributes to a batch or to the viewer. */
int tsio_is_image_name(const char *path);
/* Short name: "png", "jpg", "bmp", "tga", "pnm"; "" for TSIO_UNKNOWN. */
const char *tsio_format_ext(tsio_format f);
/* Extension of an output file: tsio_format_ext's, but PNM is "pgm" for 1-2 channels, else "ppm". */
const char *tsio_output_ext(tsio_format f, int channels);


typedef struct tsio_load_opts {
    uint64_t max_pixels; /* 0: TS_DEFAULT_MAX_PIXELS */
    tsio_meta *meta;     /* filled (JPEG, PNG) when not NULL; NULL: metadata is not kept */
    /* photos: notices of a successful load ("animated GIF: first of 12 frames"); may be NULL */
    char *notice;
    size_t noticelen;
} tsio_load_opts;

/* Loads a file into a new host image (packed rows; free with ts_image_free). `o` may be NULL.
 * Formats: PNG, JPEG, BMP, TGA, GIF (first frame), PSD, binary PNM (P5/P6; a maxval other than 255
 * or 65535 is scaled to the full range). GIF and PSD come back as RGBA, as stb decodes them.
 * Only the bytes that the header's format and size can need are read (a huge or sparse file with
 * a small header costs what its image does). Decode work is linear in the pixels (a JPEG may have
 * at most TSIO_JPEG_MAX_SCANS scans) and memory is the image plus a bounded per-format overhead
 * (docs/codecs-section.md). Returns TS_ERR_IO (open/read), TS_ERR_FORMAT (not an image,
 * truncated, corrupt), TS_ERR_TOO_LARGE (over --max-pixels), TS_ERR_UNSUPPORTED (HDR, ASCII PNM,
 * 12-bit or lossless JPEG) or TS_ERR_NOMEM. */
ts_status tsio_load(const char *path, const tsio_load_opts *o, ts_image *out, char *err,
                    size_t errlen);
/* The one guarded read that every path takes (tsio_load, the batch's nvJPEG decode, the viewer's
 * previews and animations): a regular file only (a FIFO or a device is refused without blocking),
 * its size first (a file over what max_pixels can need is refused unread), then its head
 * (TSIO_HEAD_BYTES: 64 KB), whose format the codec table names: a file of no known format is
 * refused after its head, as is one of a format named but not read; then only the bytes the
 * format's probe allows (a header over max_pixels refuses the file before the rest is read).
 * `only`: a file of another format is TS_ERR_UNSUPPORTED after its head. *buf is malloc'ed;
 * `codec` may be NULL. max_pixels 0: TS_DEFAULT_MAX_PIXELS. */
ts_status tsio_read_file(const char *path, uint64_t max_pixels, const tsio_codec *only,
                         unsigned char **buf, size_t *len, const tsio_codec **codec, char *err,
                         size_t errlen);
/* The same from memory (the fuzz target's entry point). */
ts_status tsio_load_memory(const unsigned char *buf, size_t len, const tsio_load_opts *o,
                           ts_image *out, char *err, size_t errlen);

/* A reduced-size JPEG decode, for a viewer's first paint while the full decode runs
 * (app/codec/codec_jpeg.c): libjpeg-turbo's IDCT scaling by 1/2, 1/4 or 1/8 (several times faster than
 * the full decode), the strongest whose output, fitted into box_w x box_h (shrinking only), is
 * still not magnified; 1/1 (the full decode, the same pixels as tsio_load's) when none is. `buf`
 * holds the whole file (a JPEG: TS_ERR_FORMAT otherwise); the guards are the full decode's: the
 * pixel limit on the image's own size, the scan limit, strict errors. EXIF orientation is not
 * applied (nor by tsio_load): the caller turns it upright from `meta` as it does the full image.
 * `meta` may be NULL; `info` gets the divisor and the image's own size. */
typedef struct tsio_reduced {
    int denom;          /* 1, 2, 4 or 8: each side is ceil(side / denom) */
    int full_w, full_h; /* the image's own size */
} tsio_reduced;
ts_status tsio_jpeg_decode_reduced(const unsigned char *buf, size_t len, uint64_t max_pixels,
                                   int box_w, int box_h, tsio_meta *meta, tsio_reduced *info,
                                   ts_image *out, char *err, size_t errlen);

/* The PNG compression level when tsio_save_opts.png_level is 0. Levels 1-3 filter each row with
 * sub or up, levels 4-9 with the best of all five; level N is libdeflate's (zlib's for 8-bit gray
 * at 1-3 and for the largest images: app/codec/png_write.c). Level 1 writes smaller files than OpenCV's
 * default (sub alone, zlib level 1) in less time than it (tools/results/cpu-codecs.md). */
#define TSIO_PNG_DEFAULT_LEVEL 1
#define TSIO_PNG_LEVEL_STORE (-1) /* png_level for level 0: stored, no compression */

typedef struct tsio_save_opts {
    tsio_format format;     /* TSIO_UNKNOWN: from the path's extension */
    int quality;            /* JPEG and WebP, TSIO_QUALITY_MIN..MAX; 0: TSIO_QUALITY_DEFAULT */
    int png_level;          /* level 1..9, TSIO_PNG_LEVEL_STORE; 0: TSIO_PNG_DEFAULT_LEVEL */
    const tsio_meta *meta;  /* written into JPEG and PNG when not NULL (EXIF, ICC profile) */
    int lossless;           /* photos: WebP lossless (else lossy at quality) */
} tsio_save_opts;

/* Writes exactly to `path` (replacing it). `o` may be NULL. 16-bit to an 8-bit-only format (JPEG,
 * BMP, TGA) is converted with round(v / 257), and alpha dropped where the format has none (JPEG,
 * PNM); both are said in `notice` ("" when nothing to say). On failure a regular file that the call
 * wrote is removed. Channels on disk: PNG, TGA and PNM (alpha aside) keep them; BMP stores gray as
 * RGB and gray+alpha as RGBA; JPEG is 1-component for gray (and gray+alpha), else YCbCr 4:2:0. */
ts_status tsio_save(const char *path, const ts_image *im, const tsio_save_opts *o, char *notice,
                    size_t noticelen, char *err, size_t errlen);
/* Safe save: refuses an existing target unless `force` (TS_ERR_IO, "exists (use --force)") and a
 * target that is not a regular file; writes ".NAME.XXXXXX.tmp" in the target's directory, checks
 * every write and the close, then renames it over the target. The temp file is removed on any
 * failure, and tsio_remove_temps() can remove it while it exists. */
ts_status tsio_save_atomic(const char *path, const ts_image *im, const tsio_save_opts *o, int force,
                           char *notice, size_t noticelen, char *err, size_t errlen);
/* The one atomic write: what tsio_save_atomic does (the target's directory and regular-file
 * checks, a registered temp file beside it, every write and the close checked, link or rename
 * into place), with the bytes written by write(f, ctx, err, errlen). */
typedef ts_status (*tsio_writer)(FILE *f, void *ctx, char *err, size_t errlen);
ts_status tsio_write_atomic(const char *path, int force, tsio_writer write, void *ctx, char *err,
                            size_t errlen);
/* tsio_write_atomic of `len` bytes (an encoded file: nvJPEG's). */
ts_status tsio_save_bytes(const char *path, const void *buf, size_t len, int force, char *err,
                          size_t errlen);
/* Async-signal-safe: unlinks every temp file being written now (for SIGINT/SIGTERM handlers).
 * A file another thread is creating at that moment can escape it: see tsio_remove_temps_final. */
void tsio_remove_temps(void);
/* For a thread that handles the signal (sigwait) and then ends the process: waits until no temp
 * file is half-created, unlinks every one, and keeps new ones from being created (for good). */
void tsio_remove_temps_final(void);
/* The temp file of tsio_save_atomic for any other output (the batch report): a new descriptor of
 * ".NAME.XXXXXX.tmp" beside `path`, created exclusively and registered; -1 with errno. Finish
 * with tsio_temp_finish: when `ok` it is put in place as tsio_save_atomic does (never over an
 * existing file unless `force`); otherwise, or if that fails, it is removed. */
int tsio_temp_open(const char *path, char *tmp, size_t tmplen, int *slot);
ts_status tsio_temp_finish(const char *tmp, const char *path, int ok, int force, int slot,
                           char *err, size_t errlen);

/* ---- test hooks (tests/test_io.c only; not thread-safe) */
/* While set, the data of tsio_save/tsio_save_atomic goes to this device (e.g. "/dev/full") instead
 * of the file, which is still created: simulates a full disk. NULL: off. */
void tsio_test_set_write_device(const char *path);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_IMAGE_IO_H */
