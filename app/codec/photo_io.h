/* photo_io.h - the decoders and encoder of the formats added for photos (WebP, TIFF), which their
 * rows of the codec table (codec_table.c) call, and GIF frame counts. */
#ifndef TESSERA_PHOTO_IO_H
#define TESSERA_PHOTO_IO_H

#include "image_io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Frames of a GIF counted by walking its blocks (bounded by the file; no decoding); 0 when the
 * structure breaks before the first image. */
int tsio_gif_frames(const unsigned char *buf, size_t len);

ts_status tsio_webp_decode(const unsigned char *buf, size_t len, uint64_t max_pixels,
                           tsio_meta *meta, ts_image *out, char *notice, size_t noticelen,
                           char *err, size_t errlen);
ts_status tsio_tiff_decode(const unsigned char *buf, size_t len, uint64_t max_pixels,
                           tsio_meta *meta, ts_image *out, char *err, size_t errlen);
/* HEIC/HEIF and AVIF through libheif (codec_heif.c), JPEG XL through libjxl (codec_jxl.c): the
 * primary image or first frame, turned as the container says (the EXIF block then says
 * Orientation 1); "not supported" when tessera was built without the library. `name` is the
 * format's name for messages. */
ts_status tsio_heif_decode(const unsigned char *buf, size_t len, const char *name,
                           uint64_t max_pixels, tsio_meta *meta, ts_image *out, char *err,
                           size_t errlen);
/* HEIF/AVIF (heif_coded.c): 1 when every box, down to the items and their properties, fits in its
 * parent; *ispe_max the largest width x height any 'ispe' declares. */
int tsio_heif_boxes_fit(const unsigned char *buf, size_t len, uint64_t *ispe_max);
/* HEIF/AVIF: 0 when the picture sizes in every HEVC or AV1 bitstream of the file (SPS, sequence
 * headers) fit the sizes the container gives (heif_coded.c; the primary image is w x h); -1 with
 * the reason in why when one does not, -2 when out of memory. Needs no libheif. */
int tsio_heif_coded_fit(const unsigned char *buf, size_t len, uint64_t w, uint64_t h, char *why,
                        size_t whylen);
ts_status tsio_jxl_decode(const unsigned char *buf, size_t len, uint64_t max_pixels,
                          tsio_meta *meta, ts_image *out, char *notice, size_t noticelen,
                          char *err, size_t errlen);
/* TIFF: 8 or 16-bit, 1-4 channels, Deflate with the horizontal predictor; the ICC profile and the
 * EXIF block (its IFD0 tags and its EXIF, GPS and interop sub-IFDs) kept (codec_tiff_write.c). */
ts_status tsio_tiff_encode(FILE *f, const ts_image *im, const tsio_meta *meta, char *err,
                           size_t errlen);
/* WebP: lossy at quality 1..100, or lossless; ICC and EXIF from meta as ICCP/EXIF chunks. */
ts_status tsio_webp_encode(FILE *f, const ts_image *im, int quality, int lossless,
                           const tsio_meta *meta, char *notice, size_t noticelen, char *err,
                           size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_PHOTO_IO_H */
