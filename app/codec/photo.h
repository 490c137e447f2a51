/* photo.h - photos as people have them: EXIF orientation applied before the user's chain, and
 * the metadata (ICC profile, EXIF) carried to the output. Used by the batch and the viewer.
 *
 * The eight EXIF orientations map to tessera's geometry ops as Pillow's ImageOps.exif_transpose
 * maps them to its transposes (Pillow rotates counter-clockwise, tessera clockwise):
 *   1 -  2 flop  3 rotate:180  4 flip  5 transpose  6 rotate:90  7 transverse  8 rotate:270
 * so the orientation runs through the pipeline like any op: on the GPU with the GPU backend,
 * through the CPU reference on the CPU. tests/photos.sh checks all eight against Pillow.
 */
#ifndef TESSERA_PHOTO_H
#define TESSERA_PHOTO_H

#include "image_io.h"
#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The op text that makes an image stored with orientation o (1..8) upright; NULL for 1 or an
 * invalid o. */
const char *photo_orient_text(int o);

/* The orientation (1..8) that `m` asks for; 1 when there is no EXIF block or no valid tag. */
int photo_orientation(const tsio_meta *m);

/* The op chain prefix for `m`: fills *op and returns 1 when the image must be turned, else 0
 * (orientation 1, no EXIF, or a parse failure: -1 with ts_error_detail()). */
int photo_orient_ops(const tsio_meta *m, ts_op *op);

/* A new chain: the orientation op of `m` (when auto_orient and needed), then `user`'s ops.
 * *orientation gets the orientation applied (1 when none). Free with ts_chain_free. */
ts_status photo_chain(const tsio_meta *m, int auto_orient, const ts_chain *user, ts_chain *out,
                      int *orientation);

/* The metadata to write beside an output: nothing with `strip`; else the ICC profile as read and
 * the EXIF block, made upright (Orientation 1, thumbnail dropped) when `oriented` (the pixels were
 * turned), else without its thumbnail when `changed` (a chain changed the pixels: rotate:90 of an
 * upright photo), else as read. `out` owns copies; tsio_meta_free releases them. TS_ERR_NOMEM
 * only. */
ts_status photo_meta_out(const tsio_meta *in, int strip, int oriented, int changed,
                         tsio_meta *out);

/* The viewer's entry: turns `im` (a host image) upright in place, through pipeline `p` (the GPU's
 * geometry kernel with the GPU backend, the CPU reference on the CPU) or, with p NULL, the CPU
 * reference. *orientation gets what was applied (1: nothing to do, `im` untouched). */
ts_status photo_orient_image(ts_pipeline *p, ts_image *im, const tsio_meta *m, int *orientation);

/* A HUD line about the colour profile into buf: "ICC: Adobe RGB (1998) (not sRGB, shown
 * unconverted)" for a non-sRGB profile, "" otherwise. Returns 1 when a line was written. */
int photo_icc_hud(const tsio_meta *m, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_PHOTO_H */
