/* image_io.h - loading and saving images (stb_image behind tessera's own guards).
 *
 * Loading keeps the file's channel count (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA) and depth (16-bit
 * PNG, PNM and PSD as bytes=2, everything else bytes=1). Before stb sees a byte, tessera reads the
 * header, refuses images over the pixel limit, and walks PNG chunks and JPEG markers to reject the
 * inputs that Debian's stb_image 2.27 mishandles (a PNG chunk length past the end of the file, a
 * JPEG Huffman table of more than 256 codes); every stb allocation is charged to a per-decode
 * budget derived from the image's size.
 *
 * Saving (app/image_save.c) picks the format from the extension (or tsio_save_opts.format): PNG
 * 8/16-bit (own writer on stbi_zlib_compress, app/png16.c), JPEG, BMP, TGA (stb_image_write), PNM
 * 8/16-bit (own). tsio_save_atomic writes a temp file beside the target and renames it, so a
 * failure or a signal never leaves a partial file.
 *
 * Nothing here prints or exits: functions return a ts_status, write a short reason without path or
 * newline into `err`, and also set ts_error_detail().
 */
#ifndef TESSERA_IMAGE_IO_H
#define TESSERA_IMAGE_IO_H

#include "tessera.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tsio_format {
    TSIO_UNKNOWN = 0,
    TSIO_PNG,
    TSIO_JPEG,
    TSIO_BMP,
    TSIO_TGA,
    TSIO_PNM
} tsio_format;

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
} tsio_load_opts;

/* Loads a file into a new host image (packed rows; free with ts_image_free). `o` may be NULL.
 * Formats: PNG, JPEG, BMP, TGA, GIF (first frame), PSD, binary PNM (P5/P6; a maxval other than 255
 * or 65535 is scaled to the full range). GIF and PSD come back as RGBA, as stb decodes them.
 * Returns TS_ERR_IO (open/read), TS_ERR_FORMAT (not an image, truncated, corrupt),
 * TS_ERR_TOO_LARGE (over --max-pixels), TS_ERR_UNSUPPORTED (HDR) or TS_ERR_NOMEM. */
ts_status tsio_load(const char *path, const tsio_load_opts *o, ts_image *out, char *err,
                    size_t errlen);
/* The same from memory (the fuzz target's entry point). */
ts_status tsio_load_memory(const unsigned char *buf, size_t len, const tsio_load_opts *o,
                           ts_image *out, char *err, size_t errlen);

typedef struct tsio_save_opts {
    tsio_format format; /* TSIO_UNKNOWN: from the path's extension */
    int quality;        /* JPEG 1..100; 0: 90 */
} tsio_save_opts;

/* Writes exactly to `path` (replacing it). `o` may be NULL. 16-bit to an 8-bit-only format (JPEG,
 * BMP, TGA) is converted with round(v / 257), and alpha dropped where the format has none (JPEG,
 * PNM); both are said in `notice` ("" when nothing to say). On failure a regular file that the call
 * wrote is removed. Channels on disk: PNG, TGA and PNM (alpha aside) keep them; BMP stores gray as
 * RGB and gray+alpha as RGBA; JPEG is always 3-component YCbCr (stb_image_write), so it reloads as
 * RGB. */
ts_status tsio_save(const char *path, const ts_image *im, const tsio_save_opts *o, char *notice,
                    size_t noticelen, char *err, size_t errlen);
/* Safe save: refuses an existing target unless `force` (TS_ERR_IO, "exists (use --force)") and a
 * target that is not a regular file; writes ".NAME.XXXXXX.tmp" in the target's directory, checks
 * every write and the close, then renames it over the target. The temp file is removed on any
 * failure, and tsio_remove_temps() can remove it while it exists. */
ts_status tsio_save_atomic(const char *path, const ts_image *im, const tsio_save_opts *o, int force,
                           char *notice, size_t noticelen, char *err, size_t errlen);
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

/* Encodes a PNG (8 or 16-bit, 1-4 channels) to a stream (app/png16.c). A failed fwrite is
 * TS_ERR_IO; buffered errors show at fflush/fclose, which the caller checks. */
ts_status tsio_write_png(FILE *f, const ts_image *im, char *err, size_t errlen);

/* ---- shared by the module's files (image_io.c, image_save.c, png16.c) */
/* Formats the reason into err (when err and errlen) and into ts_error_detail(); returns st. */
ts_status tsio_fail(char *err, size_t errlen, ts_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* strerror of e, safe from several threads; returns buf or a static string. */
const char *tsio_errtext(int e, char *buf, size_t len);

/* ---- test hooks (tests/test_io.c only; not thread-safe) */
/* While set, the data of tsio_save/tsio_save_atomic goes to this device (e.g. "/dev/full") instead
 * of the file, which is still created: simulates a full disk. NULL: off. */
void tsio_test_set_write_device(const char *path);
/* Filtered PNG data above this many bytes is written as stored (uncompressed) deflate blocks;
 * 0: the default (1 GiB, under stbi_zlib_compress's int sizes). */
void tsio_test_set_png_compress_limit(size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_IMAGE_IO_H */
