/* codec_png.c - PNG decoding through libspng (see image_io.h); the encoder is app/codec/png_write.c.
 *
 * Why libspng: a small, fuzzed, maintained decoder with 8 and 16-bit support, host-endian 16-bit
 * samples out, image and chunk-size limits, CRC and Adler-32 checks, on the system zlib.
 *
 * Decoding keeps the channels stb_image gave (the pixels of every colour type, depth, Adam7 and
 * tRNS case are the same; tests/test_codecs.c checks them against stb): gray stays gray (1, 2
 * and 4-bit scaled to 8), palette becomes RGB, a tRNS chunk adds an alpha channel (palette to
 * RGBA, gray to gray+alpha, RGB to RGBA), 16-bit stays 16-bit. A palette index past the PLTE
 * reads black: libspng's palette is a zeroed 256-entry table in each new decoder.
 */
#include "codec.h"

#include <stdlib.h>
#include <string.h>

#include <spng.h>

/* Ancillary chunks (ICC profiles, text) that a decode may hold in memory: the fixed part of a
 * PNG decode's memory beyond the image. */
#define PNG_CHUNK_LIMIT ((size_t)64 << 20)

static ts_status png_failed(int rc, char *err, size_t errlen)
{
    if (rc == SPNG_EMEM)
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory decoding a PNG");
    if (rc == SPNG_IO_EOF || rc == SPNG_EOF)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated PNG");
    return tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt PNG (%s)", spng_strerror(rc));
}

/* The output format and channel count that keep stb_image's channels for this header. */
static void pick_format(const struct spng_ihdr *h, int trns, int *fmt, int *flags, int *ch,
                        int *bytes)
{
    int deep = h->bit_depth == 16;
    *flags = 0;
    *bytes = deep ? 2 : 1;
    switch (h->color_type) {
    case SPNG_COLOR_TYPE_GRAYSCALE:
        *ch = trns ? 2 : 1;
        *fmt = trns ? (deep ? SPNG_FMT_GA16 : SPNG_FMT_GA8) : deep ? SPNG_FMT_PNG : SPNG_FMT_G8;
        break;
    case SPNG_COLOR_TYPE_TRUECOLOR:
        *ch = trns ? 4 : 3;
        *fmt = trns ? (deep ? SPNG_FMT_RGBA16 : SPNG_FMT_RGBA8) : deep ? SPNG_FMT_PNG : SPNG_FMT_RGB8;
        break;
    case SPNG_COLOR_TYPE_INDEXED:
        *ch = trns ? 4 : 3;
        *fmt = trns ? SPNG_FMT_RGBA8 : SPNG_FMT_RGB8;
        break;
    case SPNG_COLOR_TYPE_GRAYSCALE_ALPHA: *ch = 2, *fmt = SPNG_FMT_PNG; break;
    default: *ch = 4, *fmt = SPNG_FMT_PNG; break; /* RGBA */
    }
    if (trns)
        *flags = SPNG_DECODE_TRNS;
}

static void read_meta(spng_ctx *ctx, tsio_meta *meta)
{
    struct spng_iccp iccp;
    struct spng_exif exif;
    if (spng_get_iccp(ctx, &iccp) == 0 && iccp.profile_len && (meta->icc = malloc(iccp.profile_len))) {
        memcpy(meta->icc, iccp.profile, iccp.profile_len);
        meta->icc_len = iccp.profile_len;
    }
    if (spng_get_exif(ctx, &exif) == 0 && exif.length && (meta->exif = malloc(exif.length))) {
        memcpy(meta->exif, exif.data, exif.length);
        meta->exif_len = exif.length;
    }
}

ts_status tsio_png_decode(const unsigned char *buf, size_t len, uint64_t max_pixels,
                          tsio_meta *meta, ts_image *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    spng_ctx *ctx = spng_ctx_new(0);
    if (!ctx)
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory decoding a PNG");
    ts_status st = TS_OK;
    struct spng_ihdr h;
    struct spng_trns trns_chunk;
    int rc, fmt, flags, ch, bytes;
    size_t need = 0;
    spng_set_image_limits(ctx, TS_MAX_DIM, TS_MAX_DIM);
    spng_set_chunk_limits(ctx, PNG_CHUNK_LIMIT, PNG_CHUNK_LIMIT);
    if ((rc = spng_set_png_buffer(ctx, buf, len)) != 0 || (rc = spng_get_ihdr(ctx, &h)) != 0) {
        st = png_failed(rc, err, errlen);
        goto done;
    }
    if ((st = tsio_check_limit(h.width, h.height, max_pixels, err, errlen)) != TS_OK)
        goto done;
    rc = spng_get_trns(ctx, &trns_chunk);
    if (rc != 0 && rc != SPNG_ECHUNKAVAIL) {
        st = png_failed(rc, err, errlen);
        goto done;
    }
    pick_format(&h, rc == 0, &fmt, &flags, &ch, &bytes);
    if ((rc = spng_decoded_image_size(ctx, fmt, &need)) != 0) {
        st = png_failed(rc, err, errlen);
        goto done;
    }
    if ((st = ts_image_alloc(out, (int)h.width, (int)h.height, ch, bytes)) != TS_OK) {
        st = tsio_fail(err, errlen, st, "%s", ts_error_detail());
        goto done;
    }
    if (need != out->pitch * (size_t)out->height) { /* a format pick that does not match */
        st = tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt PNG (unexpected decoded size)");
        goto done;
    }
    if ((rc = spng_decode_image(ctx, out->data, need, fmt, flags)) != 0) {
        st = png_failed(rc, err, errlen);
        goto done;
    }
    if (meta)
        read_meta(ctx, meta);
done:
    spng_ctx_free(ctx);
    if (st != TS_OK) {
        ts_image_free(out);
        tsio_meta_free(meta);
    }
    return st;
}
