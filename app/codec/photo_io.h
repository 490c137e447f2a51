/* photo_io.h - the formats added for photos (WebP, TIFF, formats named but not read, GIF frame
 * counts), shared by image_io.c's one hook and the codec_webp.c / codec_tiff.c decoders. */
#ifndef TESSERA_PHOTO_IO_H
#define TESSERA_PHOTO_IO_H

#include "image_io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The loader's hook, called on every buffer before stb's formats: decodes WebP and TIFF, refuses
 * HEIC, AVIF, JPEG XL and JPEG 2000 by name, and for a GIF adds "animated GIF: first of N frames"
 * to the notice. *taken is 1 when the call decided the result (returned), 0 when the loader goes
 * on with the buffer. `notice` may be NULL. */
ts_status tsio_photo_load(const unsigned char *buf, size_t len, uint64_t max_pixels,
                          tsio_meta *meta, ts_image *out, char *notice, size_t noticelen,
                          int *taken, char *err, size_t errlen);

/* Frames of a GIF counted by walking its blocks (bounded by the file; no decoding); 0 when the
 * structure breaks before the first image. */
int tsio_gif_frames(const unsigned char *buf, size_t len);

/* The EXIF block (APP1 "Exif\0\0") and the ICC profile (APP2 "ICC_PROFILE" chunks joined in
 * sequence order; absent unless every chunk is there) of a JPEG, from its markers alone: for a
 * decoder that does not go through libjpeg (the GPU's). Walks the markers up to the first scan,
 * bounded by the buffer. Fills only what `meta` lacks; TS_ERR_NOMEM only. */
ts_status tsio_jpeg_meta_scan(const unsigned char *buf, size_t len, tsio_meta *meta);

/* A copy of the JPEG `jpg` with the EXIF block (APP1) and the ICC profile (APP2 chunks) of `meta`
 * after its SOI and any APP0 (JFIF): for an encoder that writes no metadata (the GPU's). An EXIF
 * block over one segment is left out. *out is malloc'ed; TS_ERR_NOMEM, or TS_ERR_INVALID when
 * `jpg` does not start with SOI. */
ts_status tsio_jpeg_add_meta(const unsigned char *jpg, size_t n, const tsio_meta *meta,
                             unsigned char **out, size_t *outn);

ts_status tsio_webp_decode(const unsigned char *buf, size_t len, uint64_t max_pixels,
                           tsio_meta *meta, ts_image *out, char *notice, size_t noticelen,
                           char *err, size_t errlen);
ts_status tsio_tiff_decode(const unsigned char *buf, size_t len, uint64_t max_pixels,
                           tsio_meta *meta, ts_image *out, char *err, size_t errlen);
/* WebP: lossy at quality 1..100, or lossless; ICC and EXIF from meta as ICCP/EXIF chunks. */
ts_status tsio_webp_encode(FILE *f, const ts_image *im, int quality, int lossless,
                           const tsio_meta *meta, char *notice, size_t noticelen, char *err,
                           size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_PHOTO_IO_H */
