/* codec_jpeg.c - JPEG through libjpeg-turbo's libjpeg API (see image_io.h).
 *
 * Why the libjpeg API rather than TurboJPEG: errors come back through setjmp/longjmp with the
 * library's own message (every decode has a fresh decompressor, so nothing of one file can leak
 * into the next), warnings can be made fatal, a progress monitor bounds the number of scans, and
 * markers (APP1 EXIF, APP2 ICC) are kept on request. The pixels go through the same SIMD code as
 * TurboJPEG's.
 *
 * Decoding is strict: libjpeg "warnings" about corrupt data (a premature end of the file, a bad
 * Huffman code, data cut by a marker) would otherwise let it fill the rest of the image with grey
 * and return success; here they are errors, except the harmless ones (stray bytes between
 * segments, an unknown JFIF revision or Adobe transform, a malformed ICC chunk). Output: 1 channel
 * for a 1-component JPEG, RGB for YCbCr/RGB, and CMYK/YCCK converted to RGB as stb_image did
 * (Adobe's inverted CMYK: R = C * K / 255). A reduced decode (a viewer's first paint) lets the
 * IDCT scale by 1/2, 1/4 or 1/8, with every guard of the full one.
 */
#include "codec.h"
#include "image_io.h" /* tsio_jpeg_decode_reduced is the app's, declared there */

#include <errno.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

_Static_assert(TSIO_JPEG_MAX_SIDE == JPEG_MAX_DIMENSION, "libjpeg's limit");

typedef struct jerr {
    struct jpeg_error_mgr pub;
    jmp_buf jb;
    int code;      /* libjpeg's message code of the failure */
    int write_err; /* errno at a failed write (encoder) */
    char msg[JMSG_LENGTH_MAX];
} jerr;

static void on_error(j_common_ptr c)
{
    jerr *e = (jerr *)(void *)c->err;
    e->code = c->err->msg_code;
    e->write_err = errno;
    c->err->format_message(c, e->msg);
    longjmp(e->jb, 1);
}

/* Warnings (level -1) about the data are fatal; trace messages (level >= 0) are dropped. */
static void on_message(j_common_ptr c, int level)
{
    if (level >= 0)
        return;
    switch (c->err->msg_code) {
    case JWRN_EXTRANEOUS_DATA:
    case JWRN_JFIF_MAJOR:
    case JWRN_ADOBE_XFORM:
    case JWRN_BOGUS_ICC: c->err->num_warnings++; return;
    default: on_error(c);
    }
}

static void jerr_init(j_common_ptr c, jerr *e)
{
    c->err = jpeg_std_error(&e->pub);
    e->pub.error_exit = on_error;
    e->pub.emit_message = on_message;
    e->code = 0;
    e->write_err = 0;
    e->msg[0] = '\0';
}

typedef struct scan_limit {
    struct jpeg_progress_mgr pub;
    jerr *e;
} scan_limit;

/* Called at least once an iMCU row of every scan: a file of thousands of (empty) scans stops at
 * the limit instead of repeating passes over the whole coefficient array. */
static void on_progress(j_common_ptr c)
{
    j_decompress_ptr d = (j_decompress_ptr)c;
    if (d->input_scan_number > TSIO_JPEG_MAX_SCANS) {
        jerr *e = (jerr *)(void *)c->err;
        e->code = -1;
        snprintf(e->msg, sizeof e->msg, "more than %d scans", TSIO_JPEG_MAX_SCANS);
        longjmp(e->jb, 1);
    }
}

/* The message for a decoder failure: unsupported kinds of JPEG by name, a cut file as truncated,
 * the rest as corrupt with libjpeg's reason. */
static ts_status decode_failed(const jerr *e, j_decompress_ptr d, char *err, size_t errlen)
{
    switch (e->code) {
    case JERR_BAD_PRECISION:
        return tsio_fail(err, errlen, TS_ERR_UNSUPPORTED, "%d-bit JPEG is not supported",
                         d->data_precision);
    case JERR_ARITH_NOTIMPL:
    case JERR_NOT_COMPILED:
        return tsio_fail(err, errlen, TS_ERR_UNSUPPORTED, "JPEG is not supported (%s)", e->msg);
    case JERR_SOF_UNSUPPORTED: {
        int sof = e->pub.msg_parm.i[0];
        const char *what = sof == 0xC3 || sof == 0xC7 || sof == 0xCB || sof == 0xCF ? "lossless"
                           : sof >= 0xC5 && sof <= 0xCF && sof != 0xC8 && sof != 0xCC
                               ? "hierarchical"
                               : "this kind of";
        return tsio_fail(err, errlen, TS_ERR_UNSUPPORTED, "%s JPEG is not supported (SOF%d)", what,
                         sof & 15);
    }
    case JERR_OUT_OF_MEMORY:
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory decoding a JPEG");
    case JWRN_JPEG_EOF:
    case JERR_INPUT_EOF:
    case JERR_INPUT_EMPTY: return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated JPEG");
    default: return tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt JPEG (%s)", e->msg);
    }
}

typedef struct dec {
    struct jpeg_decompress_struct d;
    jerr e;
    scan_limit sl;
    unsigned char *cmyk; /* one row of 4 samples per pixel, for CMYK/YCCK */
} dec;

/* Adobe's inverted CMYK to RGB, with stb_image's rounding of x * k / 255. */
static void cmyk_row(const unsigned char *s, unsigned char *d, int w)
{
    for (int x = 0; x < w; x++, s += 4, d += 3)
        for (int c = 0; c < 3; c++) {
            unsigned t = (unsigned)s[c] * s[3] + 128;
            d[c] = (unsigned char)((t + (t >> 8)) >> 8);
        }
}

static ts_status decode_rows(dec *j, ts_image *out)
{
    j_decompress_ptr d = &j->d;
    unsigned char *base = out->data;
    while (d->output_scanline < d->output_height) {
        unsigned char *row = base + (size_t)d->output_scanline * out->pitch;
        if (j->cmyk) {
            JSAMPROW r = j->cmyk;
            if (jpeg_read_scanlines(d, &r, 1) == 1)
                cmyk_row(j->cmyk, row, out->width);
            continue;
        }
        JSAMPROW rows[16];
        JDIMENSION n = d->output_height - d->output_scanline;
        n = n < 16 ? n : 16;
        for (JDIMENSION k = 0; k < n; k++)
            rows[k] = row + (size_t)k * out->pitch;
        jpeg_read_scanlines(d, rows, n);
    }
    return TS_OK;
}

/* The largest of 8, 4 and 2 whose 1/denom decode of a w x h image, fitted into box_w x box_h
 * (shrinking only), is not magnified; 1 when none is (or no box). libjpeg-turbo's IDCT scales by
 * N/8, and 1/2, 1/4 and 1/8 have its fastest paths. */
static int reduce_denom(unsigned w, unsigned h, int box_w, int box_h)
{
    if (box_w < 1 || box_h < 1)
        return 1;
    double z = (double)box_w / w < (double)box_h / h ? (double)box_w / w : (double)box_h / h;
    for (unsigned d = 8; d >= 2; d /= 2) /* the fitted size at most the decoded ceil(side / d) */
        if ((w + d - 1) / d >= w * z - 1e-9 && (h + d - 1) / d >= h * z - 1e-9)
            return (int)d;
    return 1;
}

/* The decoder behind both entry points: box 0 x 0 is the full decode. */
static ts_status decode(const unsigned char *buf, size_t len, uint64_t max_pixels,
                        tsio_meta *meta, int box_w, int box_h, tsio_reduced *info, ts_image *out,
                        char *err, size_t errlen)
{
    dec *j = calloc(1, sizeof *j); /* off the stack: longjmp leaves no stale locals to worry about */
    if (!j)
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory decoding a JPEG");
    ts_status st = TS_OK;
    memset(out, 0, sizeof *out);
    jerr_init((j_common_ptr)&j->d, &j->e);
    if (setjmp(j->e.jb)) {
        st = decode_failed(&j->e, &j->d, err, errlen);
        goto done;
    }
    jpeg_create_decompress(&j->d);
    j->sl.pub.progress_monitor = on_progress;
    j->sl.e = &j->e;
    j->d.progress = &j->sl.pub;
    jpeg_mem_src(&j->d, buf, (unsigned long)len);
    jpeg_read_header(&j->d, TRUE);
    /* the metadata from the markers, by the reader nvJPEG's path uses too (jpeg_meta.c) */
    if (meta && (st = tsio_jpeg_meta_scan(buf, len, meta)) != TS_OK) {
        st = tsio_fail(err, errlen, st, "out of memory reading the JPEG's metadata");
        goto done;
    }
    if ((st = tsio_check_limit(j->d.image_width, j->d.image_height, max_pixels, err, errlen)) !=
        TS_OK)
        goto done;
    int ch;
    switch (j->d.jpeg_color_space) {
    case JCS_GRAYSCALE: j->d.out_color_space = JCS_GRAYSCALE, ch = 1; break;
    case JCS_YCbCr:
    case JCS_RGB: j->d.out_color_space = JCS_RGB, ch = 3; break;
    case JCS_CMYK:
    case JCS_YCCK: j->d.out_color_space = JCS_CMYK, ch = 3; break;
    default:
        st = tsio_fail(err, errlen, TS_ERR_UNSUPPORTED, "JPEG of %d components is not supported",
                       j->d.num_components);
        goto done;
    }
    int denom = reduce_denom(j->d.image_width, j->d.image_height, box_w, box_h);
    if (denom > 1) { /* left alone otherwise: the full decode's settings stay libjpeg's own */
        j->d.scale_num = 1;
        j->d.scale_denom = (unsigned)denom;
    }
    if (info)
        *info = (tsio_reduced){denom, (int)j->d.image_width, (int)j->d.image_height};
    jpeg_start_decompress(&j->d);
    if ((st = ts_image_alloc(out, (int)j->d.output_width, (int)j->d.output_height, ch, 1)) !=
        TS_OK) {
        st = tsio_fail(err, errlen, st, "%s", ts_error_detail());
        goto done;
    }
    if (j->d.out_color_space == JCS_CMYK &&
        !(j->cmyk = malloc((size_t)j->d.output_width * 4))) {
        st = tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory decoding a JPEG");
        goto done;
    }
    decode_rows(j, out);
    jpeg_finish_decompress(&j->d);
done:
    jpeg_destroy_decompress(&j->d);
    free(j->cmyk);
    free(j);
    if (st != TS_OK) {
        ts_image_free(out);
        tsio_meta_free(meta);
    }
    return st;
}

ts_status tsio_jpeg_decode(const unsigned char *buf, size_t len, uint64_t max_pixels,
                           tsio_meta *meta, ts_image *out, char *err, size_t errlen)
{
    return decode(buf, len, max_pixels, meta, 0, 0, NULL, out, err, errlen);
}

ts_status tsio_jpeg_decode_reduced(const unsigned char *buf, size_t len, uint64_t max_pixels,
                                   int box_w, int box_h, tsio_meta *meta, tsio_reduced *info,
                                   ts_image *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!buf || len < 3 || buf[0] != 0xFF || buf[1] != 0xD8 || buf[2] != 0xFF)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "not a JPEG");
    return decode(buf, len, max_pixels ? max_pixels : TS_DEFAULT_MAX_PIXELS, meta, box_w, box_h,
                  info, out, err, errlen);
}

/* ---------------------------------------------------------------- encoding */

typedef struct enc {
    struct jpeg_compress_struct c;
    jerr e;
    unsigned char *row; /* converted row (16-bit, gray+alpha) */
} enc;

/* Row y as the encoder's input: 8-bit gray, RGB or RGBX, converted only where needed. */
static const unsigned char *enc_row(enc *j, const ts_image *im, int y, int in_ch)
{
    const unsigned char *src = (const unsigned char *)im->data + (size_t)y * im->pitch;
    if (im->bytes == 1 && in_ch == im->channels)
        return src;
    unsigned char *d = j->row;
    for (int x = 0; x < im->width; x++)
        for (int c = 0; c < in_ch; c++) {
            unsigned v = ts_get(im, x, y, c);
            *d++ = (unsigned char)(im->bytes == 2 ? (v + 128) / 257 : v);
        }
    return j->row;
}

static void put_marker(void *ctx, int marker, const unsigned char *data, size_t len)
{
    jpeg_write_marker(ctx, marker, data, (unsigned)len);
}

ts_status tsio_jpeg_encode(FILE *f, const ts_image *im, int quality, const tsio_meta *meta,
                           char *notice, size_t noticelen, char *err, size_t errlen)
{
    if (ts_has_alpha(im->channels))
        tsio_add_notice(notice, noticelen, "alpha dropped (JPEG has no alpha)");
    if (im->bytes == 2)
        tsio_add_notice(notice, noticelen, "16-bit converted to 8-bit (JPEG is 8-bit)");
    if (im->width > TSIO_JPEG_MAX_SIDE || im->height > TSIO_JPEG_MAX_SIDE)
        return tsio_fail(err, errlen, TS_ERR_TOO_LARGE, "image is %dx%d, too large for JPEG",
                         im->width, im->height);
    enc *j = calloc(1, sizeof *j);
    if (!j)
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory encoding a JPEG");
    ts_status st = TS_OK;
    /* 8-bit RGBA goes in as RGBX (libjpeg-turbo skips the fourth byte); gray+alpha and 16-bit
     * are converted a row at a time. */
    int in_ch = im->channels <= 2 ? 1 : im->bytes == 1 && im->channels == 4 ? 4 : 3;
    jerr_init((j_common_ptr)&j->c, &j->e);
    if (setjmp(j->e.jb)) {
        char eb[128];
        st = j->e.code == JERR_FILE_WRITE
                 ? tsio_fail(err, errlen, TS_ERR_IO, "write failed: %s",
                             tsio_errtext(j->e.write_err ? j->e.write_err : EIO, eb, sizeof eb))
             : j->e.code == JERR_OUT_OF_MEMORY
                 ? tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory encoding a JPEG")
                 : tsio_fail(err, errlen, TS_ERR_INVALID, "JPEG encoder: %s", j->e.msg);
        goto done;
    }
    jpeg_create_compress(&j->c);
    if (in_ch != im->channels || im->bytes != 1) {
        j->row = malloc((size_t)im->width * (size_t)in_ch);
        if (!j->row) {
            st = tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory encoding a JPEG");
            goto done;
        }
    }
    jpeg_stdio_dest(&j->c, f);
    j->c.image_width = (JDIMENSION)im->width;
    j->c.image_height = (JDIMENSION)im->height;
    j->c.input_components = in_ch == 4 ? 4 : in_ch;
    j->c.in_color_space = in_ch == 1 ? JCS_GRAYSCALE : in_ch == 4 ? JCS_EXT_RGBX : JCS_RGB;
    jpeg_set_defaults(&j->c); /* YCbCr 4:2:0 for colour, as libjpeg's cjpeg and OpenCV */
    jpeg_set_quality(&j->c, quality, TRUE);
    jpeg_start_compress(&j->c, TRUE);
    if (meta) /* the segments nvJPEG's files get too (jpeg_meta.c) */
        tsio_jpeg_meta_segments(meta, put_marker, &j->c, notice, noticelen);
    for (int y = 0; y < im->height; y++) {
        JSAMPROW r = (JSAMPROW)(uintptr_t)enc_row(j, im, y, in_ch);
        jpeg_write_scanlines(&j->c, &r, 1);
    }
    jpeg_finish_compress(&j->c);
done:
    jpeg_destroy_compress(&j->c);
    free(j->row);
    free(j);
    return st;
}

ts_status tsio_jpeg_save(FILE *f, const ts_image *im, const tsio_encode_args *a, char *notice,
                         size_t noticelen, char *err, size_t errlen)
{
    return tsio_jpeg_encode(f, im, a->quality, a->meta, notice, noticelen, err, errlen);
}
