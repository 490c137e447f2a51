/* codec_heif.c - HEIC/HEIF and AVIF reading through libheif, from memory, the primary image.
 *
 * Guards, in the order the other formats use them: the file was sniffed by its "ftyp" brand and
 * read within the loader's size cap; every box fits in its parent (heif_coded.c); the primary
 * image's size comes from the container's header ('ispe') and is checked against the pixel limit
 * before anything is decoded; libheif's own limit
 * (heif_context_set_maximum_image_size_limit) refuses a tile grid or an item larger than
 * TS_MAX_DIM on a side inside the codec. The HEVC (libde265) or AV1 (dav1d, aom) decoder allocates
 * the planes of the coded image by the size its bitstream gives (checked first against the
 * container's: heif_coded.c), then libheif converts them to interleaved RGB(A); a decode costs
 * about three times the image's bytes besides the file.
 *
 * The transformations in the container (rotation 'irot', mirror 'imir', crop 'clap') are applied
 * by libheif, as the format requires, so the EXIF block is carried with Orientation 1: a HEIC's
 * EXIF orientation repeats what 'irot' did and must not be applied again. 8-bit images come out
 * 8-bit; 10 and 12-bit ones 16-bit (v * 65535 / (2^bits - 1), rounded). Monochrome images come out
 * RGB. The ICC profile ('colr' prof/rICC) and the EXIF block are kept.
 */
#include "photo_io.h"

#include "exif.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TS_HAVE_HEIF
#include <libheif/heif.h>

static ts_status heif_failed(struct heif_error e, const char *name, const char *what, char *err,
                             size_t errlen)
{
    /* a security limit (a part larger than the image says it is) is a corrupt file */
    ts_status st = e.subcode == heif_suberror_Security_limit_exceeded ? TS_ERR_FORMAT
                   : e.code == heif_error_Memory_allocation_error     ? TS_ERR_NOMEM
                   : e.code == heif_error_Unsupported_feature ||
                           e.code == heif_error_Unsupported_filetype ||
                           e.code == heif_error_Plugin_loading_error
                       ? TS_ERR_UNSUPPORTED
                       : TS_ERR_FORMAT;
    /* libheif's message may end in a newline; the reason is one line */
    char msg[160];
    snprintf(msg, sizeof msg, "%s", e.message && e.message[0] ? e.message : "no reason given");
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 0x20)
            *p = ' ';
    for (size_t n = strlen(msg); n > 0 && msg[n - 1] == ' '; n--)
        msg[n - 1] = '\0';
    return tsio_fail(err, errlen, st, "%s %s (%s: %s)",
                     st == TS_ERR_FORMAT ? "corrupt"
                     : st == TS_ERR_NOMEM ? "out of memory in"
                                          : "unsupported",
                     name, what, msg);
}

/* The EXIF block of the handle (after the 4-byte offset to its TIFF header), made upright. */
static void read_exif(const struct heif_image_handle *h, tsio_meta *meta)
{
    heif_item_id id;
    if (heif_image_handle_get_list_of_metadata_block_IDs(h, "Exif", &id, 1) < 1)
        return;
    size_t n = heif_image_handle_get_metadata_size(h, id);
    if (n < 4 || n > ((size_t)64 << 20))
        return;
    unsigned char *b = malloc(n);
    if (b && heif_image_handle_get_metadata(h, id, b).code == heif_error_Ok) {
        size_t skip = 4 + ((size_t)b[0] << 24 | (size_t)b[1] << 16 | (size_t)b[2] << 8 | b[3]);
        if (skip < n)
            meta->exif = tsio_exif_upright(b + skip, n - skip, &meta->exif_len);
    }
    free(b);
}

static void read_icc(const struct heif_image_handle *h, tsio_meta *meta)
{
    enum heif_color_profile_type t = heif_image_handle_get_color_profile_type(h);
    if (t != heif_color_profile_type_prof && t != heif_color_profile_type_rICC)
        return;
    size_t n = heif_image_handle_get_raw_color_profile_size(h);
    if (!n || n > ((size_t)64 << 20) || !(meta->icc = malloc(n)))
        return;
    if (heif_image_handle_get_raw_color_profile(h, meta->icc).code != heif_error_Ok) {
        free(meta->icc);
        meta->icc = NULL;
        return;
    }
    meta->icc_len = n;
}

/* Copies libheif's interleaved plane into `out`: 8-bit as is, 10/12-bit (little-endian words of
 * `bits` bits) widened to 16. */
static void copy_plane(const uint8_t *p, int stride, int bits, ts_image *out)
{
    size_t n = (size_t)out->width * (size_t)out->channels;
    uint32_t maxv = (1u << bits) - 1;
    for (int y = 0; y < out->height; y++) {
        const uint8_t *s = p + (size_t)y * (size_t)stride;
        unsigned char *d = (unsigned char *)out->data + (size_t)y * out->pitch;
        if (out->bytes == 1) {
            memcpy(d, s, n);
            continue;
        }
        uint16_t *d16 = (uint16_t *)(void *)d;
        for (size_t i = 0; i < n; i++) {
            uint32_t v = (uint32_t)s[2 * i] | (uint32_t)s[2 * i + 1] << 8;
            if (v > maxv)
                v = maxv;
            d16[i] = (uint16_t)((v * 65535u + maxv / 2) / maxv);
        }
    }
}

/* floor(sqrt(v)) by bisection, v < 2^62 */
static uint64_t sqrt_u64(uint64_t v)
{
    uint64_t lo = 0, hi = (uint64_t)1 << 31;
    while (lo < hi) {
        uint64_t mid = (lo + hi + 1) / 2;
        if (mid * mid <= v)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

ts_status tsio_heif_decode(const unsigned char *buf, size_t len, const char *name,
                           uint64_t max_pixels, tsio_meta *meta, ts_image *out, char *err,
                           size_t errlen)
{
    memset(out, 0, sizeof *out);
    uint64_t ispe_max;
    if (!tsio_heif_boxes_fit(buf, len, &ispe_max))
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt %s (a box runs past its end: cut "
                         "or damaged file)", name);
    struct heif_context *ctx = heif_context_alloc();
    struct heif_image_handle *h = NULL;
    struct heif_image *img = NULL;
    struct heif_decoding_options *opt = NULL;
    ts_status st = TS_OK;
    if (!ctx)
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory opening a %s file", name);
    heif_context_set_maximum_image_size_limit(ctx, TS_MAX_DIM);
    struct heif_error e = heif_context_read_from_memory_without_copy(ctx, buf, len, NULL);
    if (e.code != heif_error_Ok) {
        st = heif_failed(e, name, "container", err, errlen);
        goto done;
    }
    if ((e = heif_context_get_primary_image_handle(ctx, &h)).code != heif_error_Ok) {
        st = heif_failed(e, name, "primary image", err, errlen);
        goto done;
    }
    int w = heif_image_handle_get_width(h), ht = heif_image_handle_get_height(h);
    if (w <= 0 || ht <= 0) { /* no 'ispe' (a 749-byte file: 0x0, then 5 GB in libheif) */
        st = tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt %s (the image has no size)", name);
        goto done;
    }
    if ((st = tsio_check_limit(w > 0 ? (uint64_t)w : 0, ht > 0 ? (uint64_t)ht : 0, max_pixels,
                               err, errlen)) != TS_OK)
        goto done;
    /* No item may be much larger than the image it makes: a grid's tiles are smaller than the
     * grid (a 1x1 grid's one tile may overhang it a little). */
    if (ispe_max > max_pixels || ispe_max > 4 * (uint64_t)w * (uint64_t)ht + (1u << 20)) {
        st = tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt %s (an item of %llu pixels in an "
                       "image of %dx%d)", name, (unsigned long long)ispe_max, w, ht);
        goto done;
    }
    /* The decoders size their pictures by the bitstream's own headers, not by 'ispe': a 304-byte
     * AVIF saying 16x12 made dav1d allocate 649 MB for a frame (fuzz_heif). */
    char why[160] = "";
    int fit = tsio_heif_coded_fit(buf, len, (uint64_t)w, (uint64_t)ht, why, sizeof why);
    if (fit != 0) {
        st = tsio_fail(err, errlen, fit == -2 ? TS_ERR_NOMEM : TS_ERR_FORMAT, "%s %s (%s)",
                       fit == -2 ? "out of memory checking" : "corrupt", name, why);
        goto done;
    }
    /* libheif bounds what a grid's own header may claim by a side only (below: the primary's
     * longer side), so a long thin primary lets a grid claim that side squared: a 749-byte file
     * of fuzz_heif said 16x53772 with 64x64 tiles, libheif 1.15 took 5.3 GB and tessera crashed
     * (signal 11). That square is held to 4x the pixel limit: a side of at most 32768 by default. */
    uint64_t side = (uint64_t)(w > ht ? w : ht);
    if (side * side > 4 * max_pixels) {
        st = tsio_fail(err, errlen, TS_ERR_TOO_LARGE, "%s is %dx%d: a side over %llu is refused "
                       "for HEIF (twice the square root of the pixel limit)", name, w, ht,
                       (unsigned long long)(2 * sqrt_u64(max_pixels)));
        goto done;
    }
    /* Nothing decoded may be wider or taller than the primary image says it is ('ispe'): a grid
     * whose own header claims more (a 749-byte file: 16x12 by 'ispe', 4096x3072 by its grid)
     * made libheif 1.15 take 5 GB and crash in heif_decode_image (fuzz_heif). libheif refuses a
     * side >= the limit. */
    heif_context_set_maximum_image_size_limit(ctx, (w > ht ? w : ht) + 1);
    int alpha = heif_image_handle_has_alpha_channel(h);
    int bits = heif_image_handle_get_luma_bits_per_pixel(h);
    int deep = bits > 8;
    if (bits < 1 || bits > 16) {
        st = tsio_fail(err, errlen, TS_ERR_UNSUPPORTED, "%s with %d-bit samples is not supported",
                       name, bits);
        goto done;
    }
    /* Luma and chroma of different depths (14 and 15 bits in a 749-byte file of fuzz_heif):
     * libheif 1.15 converted them with a 543 MB buffer a plane, 5 GB in all, and crashed. Real
     * cameras and encoders write one depth for both. */
    int cbits = heif_image_handle_get_chroma_bits_per_pixel(h);
    if (cbits > 0 && cbits != bits) {
        st = tsio_fail(err, errlen, TS_ERR_UNSUPPORTED, "%s with %d-bit luma and %d-bit chroma "
                       "is not supported", name, bits, cbits);
        goto done;
    }
    enum heif_chroma chroma = deep ? (alpha ? heif_chroma_interleaved_RRGGBBAA_LE
                                            : heif_chroma_interleaved_RRGGBB_LE)
                                   : (alpha ? heif_chroma_interleaved_RGBA
                                            : heif_chroma_interleaved_RGB);
    if (!(opt = heif_decoding_options_alloc())) {
        st = tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory decoding a %s file", name);
        goto done;
    }
    opt->ignore_transformations = 0; /* irot, imir, clap: part of the image */
    if ((e = heif_decode_image(h, &img, heif_colorspace_RGB, chroma, opt)).code != heif_error_Ok) {
        st = heif_failed(e, name, "image data", err, errlen);
        goto done;
    }
    int iw = heif_image_get_width(img, heif_channel_interleaved);
    int ih = heif_image_get_height(img, heif_channel_interleaved);
    int stride = 0;
    const uint8_t *p = heif_image_get_plane_readonly(img, heif_channel_interleaved, &stride);
    int plane_bits = heif_image_get_bits_per_pixel_range(img, heif_channel_interleaved);
    if (!p || iw <= 0 || ih <= 0 || stride <= 0 ||
        (st = tsio_check_limit((uint64_t)iw, (uint64_t)ih, max_pixels, err, errlen)) != TS_OK) {
        if (st == TS_OK)
            st = tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt %s (no decoded image)", name);
        goto done;
    }
    if ((st = ts_image_alloc(out, iw, ih, alpha ? 4 : 3, deep ? 2 : 1)) != TS_OK) {
        st = tsio_fail(err, errlen, st, "out of memory decoding a %dx%d %s", iw, ih, name);
        goto done;
    }
    copy_plane(p, stride, deep ? (plane_bits > 8 && plane_bits <= 16 ? plane_bits : bits) : 8, out);
    if (meta) {
        if (!meta->exif)
            read_exif(h, meta);
        if (!meta->icc)
            read_icc(h, meta);
    }
done:
    if (img)
        heif_image_release(img);
    if (opt)
        heif_decoding_options_free(opt);
    if (h)
        heif_image_handle_release(h);
    heif_context_free(ctx);
    return st;
}

#else /* built without libheif */

ts_status tsio_heif_decode(const unsigned char *buf, size_t len, const char *name,
                           uint64_t max_pixels, tsio_meta *meta, ts_image *out, char *err,
                           size_t errlen)
{
    memset(out, 0, sizeof *out);
    return tsio_fail(err, errlen, TS_ERR_UNSUPPORTED,
                     "%s is not supported (tessera was built without libheif)", name);
}

#endif
