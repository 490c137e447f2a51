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
