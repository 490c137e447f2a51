/* exif.h - the little of EXIF and ICC that tessera needs to show photos as taken.
 *
 * EXIF: the TIFF-structured block (what JPEG APP1 holds after "Exif\0\0", PNG eXIf, WebP EXIF;
 * a leading "Exif\0\0" is tolerated). Only IFD0 is read: it holds Orientation (0x0112) and the
 * link to IFD1, the thumbnail. Every offset is checked against the block, nothing recurses, and
 * the one IFD is read once, so a hostile block costs at most its own length.
 *
 * ICC: the profile description ('desc' tag, v2 textDescriptionType or v4 mluc) to say whether a
 * profile is sRGB. No colour conversion is done anywhere.
 */
#ifndef TESSERA_EXIF_H
#define TESSERA_EXIF_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the block's header and IFD0 are well-formed. */
int tsio_exif_valid(const unsigned char *exif, size_t len);
/* Orientation 1..8 of an EXIF block; 0 when the block is malformed or has no valid tag. */
int tsio_exif_orientation(const unsigned char *exif, size_t len);

/* A malloc'ed copy of the block as an upright image's: Orientation set to 1 (when present) and
 * IFD0's link to IFD1 cleared, so the thumbnail (stored as taken, unrotated) is dropped: readers
 * no longer see it, its bytes stay unreferenced in the block, as moving the IFDs would mean
 * rewriting every offset. A leading "Exif\0\0" is removed. NULL (and *out_len 0) when the block is
 * malformed (it is then not written) or on OOM. */
unsigned char *tsio_exif_upright(const unsigned char *exif, size_t len, size_t *out_len);
/* The same with Orientation kept as stored: for pixels changed by a chain but not turned upright
 * (the thumbnail would no longer match them). */
unsigned char *tsio_exif_without_thumbnail(const unsigned char *exif, size_t len, size_t *out_len);
/* 1 when IFD0 links to an IFD1 (a thumbnail). */
int tsio_exif_has_thumbnail(const unsigned char *exif, size_t len);

/* The thumbnail IFD1 holds (JPEGInterchangeFormat and its length): *off (from the block's start,
 * a leading "Exif\0\0" included) and *thumb_len, both inside the block. 1 when there is one. */
int tsio_exif_thumbnail(const unsigned char *exif, size_t len, size_t *off, size_t *thumb_len);
/* A JPEG's EXIF block (APP1 "Exif\0\0", prefix included; NULL and 0 when absent) and its size
 * from the frame header, read from the markers before the first scan and nothing after: 0 on
 * success, -1 for a malformed marker sequence or no frame header before the scan. */
int tsio_jpeg_exif(const unsigned char *buf, size_t len, const unsigned char **exif,
                   size_t *exif_len, int *w, int *h);

/* A minimal little-endian EXIF block holding only Orientation `o` (1..8): how a TIFF's own
 * orientation tag is carried in tsio_meta. Writes 26 bytes into out; returns 26 (0 for a bad o). */
size_t tsio_exif_make(int o, unsigned char out[26]);

/* The profile description (ASCII, at most len-1 bytes; non-ASCII as '?'): 1 when found, else 0
 * and out = "". */
int tsio_icc_description(const unsigned char *icc, size_t len, char *out, size_t outlen);
/* 1 when a profile is present and its description does not say "sRGB" (the viewer's HUD line);
 * 0 for sRGB or no profile. */
int tsio_icc_is_non_srgb(const unsigned char *icc, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_EXIF_H */
