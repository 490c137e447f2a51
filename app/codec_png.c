/* codec_png.c - PNG through libspng (see image_io.h).
 *
 * Why libspng: a small, fuzzed, maintained decoder and encoder with 8 and 16-bit support, host-
 * endian 16-bit samples in and out, image and chunk-size limits, CRC and Adler-32 checks, and
 * row-at-a-time encoding (no copy of a pitched image, no int-sized buffers), on the system zlib.
 *
 * Decoding keeps the channels stb_image gave (the pixels of every colour type, depth, Adam7 and
 * tRNS case are the same; tests/test_codecs.c checks them against stb): gray stays gray (1, 2
 * and 4-bit scaled to 8), palette becomes RGB, a tRNS chunk adds an alpha channel (palette to
 * RGBA, gray to gray+alpha, RGB to RGBA), 16-bit stays 16-bit. A palette index past the PLTE
 * reads black: libspng's palette is a zeroed 256-entry table in each new decoder.
 */
#include "codec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <spng.h>
#include <zlib.h>

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

/* ---------------------------------------------------------------- encoding */

typedef struct png_sink {
    FILE *f;
    int err; /* errno of the first failed write */
} png_sink;

static int sink_write(spng_ctx *ctx, void *user, void *data, size_t n)
{
    (void)ctx;
    png_sink *s = user;
    errno = 0;
    if (fwrite(data, 1, n, s->f) != n) {
        s->err = errno ? errno : EIO;
        return SPNG_IO_ERROR;
    }
    return 0;
}

static void write_meta(spng_ctx *ctx, const tsio_meta *meta)
{
    /* libspng refuses an EXIF block that does not start with a TIFF header: then none is
     * written rather than failing the image. */
    if (meta->icc && meta->icc_len) {
        struct spng_iccp iccp;
        memset(&iccp, 0, sizeof iccp);
        memcpy(iccp.profile_name, "ICC profile", 12);
        iccp.profile_len = meta->icc_len;
        iccp.profile = (char *)meta->icc;
        spng_set_iccp(ctx, &iccp);
    }
    if (meta->exif && meta->exif_len) {
        struct spng_exif exif = {meta->exif_len, (char *)meta->exif};
        spng_set_exif(ctx, &exif);
    }
}

ts_status tsio_png_encode(FILE *f, const ts_image *im, int level, const tsio_meta *meta,
                          char *err, size_t errlen)
{
    static const unsigned char color_type[5] = {0, SPNG_COLOR_TYPE_GRAYSCALE,
                                                SPNG_COLOR_TYPE_GRAYSCALE_ALPHA,
                                                SPNG_COLOR_TYPE_TRUECOLOR,
                                                SPNG_COLOR_TYPE_TRUECOLOR_ALPHA};
    spng_ctx *ctx = spng_ctx_new(SPNG_CTX_ENCODER);
    if (!ctx)
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory writing a PNG");
    png_sink s = {f, 0};
    struct spng_ihdr h = {(uint32_t)im->width, (uint32_t)im->height,
                          (uint8_t)(8 * im->bytes), color_type[im->channels], 0, 0, 0};
    size_t rowlen = ts_row_bytes(im);
    int rc = spng_set_png_stream(ctx, sink_write, &s);
    if (rc == 0)
        rc = spng_set_ihdr(ctx, &h);
    if (rc == 0)
        rc = spng_set_option(ctx, SPNG_IMG_COMPRESSION_LEVEL, level);
    /* Level 0 stores: filtering would only cost time. Levels 1-3 are the fast ones: a per-row
     * choice of the sub and up filters and zlib's run-length strategy (OpenCV's default is sub
     * alone with the same strategy: the choice of two gives 9% smaller files for 11% more CPU,
     * tools/results/cpu-codecs.md). Levels 4-9 try all five filters per row (the minimum sum of
     * absolute differences, as libpng) and zlib's full match search. */
    int filters = level == 0  ? SPNG_FILTER_CHOICE_NONE
                  : level <= 3 ? SPNG_FILTER_CHOICE_SUB | SPNG_FILTER_CHOICE_UP
                               : SPNG_FILTER_CHOICE_ALL;
    if (rc == 0)
        rc = spng_set_option(ctx, SPNG_FILTER_CHOICE, filters);
    if (rc == 0 && level >= 1 && level <= 3)
        rc = spng_set_option(ctx, SPNG_IMG_COMPRESSION_STRATEGY, Z_RLE);
    if (rc == 0 && meta)
        write_meta(ctx, meta);
    if (rc == 0)
        rc = spng_encode_image(ctx, NULL, 0, SPNG_FMT_PNG,
                               SPNG_ENCODE_PROGRESSIVE | SPNG_ENCODE_FINALIZE);
    for (int y = 0; rc == 0 && y < im->height; y++)
        rc = spng_encode_row(ctx, (const unsigned char *)im->data + (size_t)y * im->pitch, rowlen);
    if (rc == SPNG_EOI)
        rc = 0;
    spng_ctx_free(ctx);
    char eb[128];
    if (s.err)
        return tsio_fail(err, errlen, TS_ERR_IO, "write failed: %s",
                         tsio_errtext(s.err, eb, sizeof eb));
    if (rc == SPNG_EMEM)
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory writing a PNG");
    if (rc != 0)
        return tsio_fail(err, errlen, TS_ERR_INVALID, "PNG encoder: %s", spng_strerror(rc));
    return TS_OK;
}
