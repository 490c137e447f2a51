/* codec_jxl.c - JPEG XL reading through libjxl, from memory, the first frame.
 *
 * Guards, in the order the other formats use them: the file was sniffed by its signature (a bare
 * codestream FF 0A or the container's "JXL " box) and read within the loader's size cap; the
 * image's size comes from the codestream header (JXL_DEC_BASIC_INFO) and is checked against the
 * pixel limit before any pixel is decoded or any pixel memory is taken. libjxl then decodes in
 * float planes (about 12 bytes a pixel and channel besides the output, on one thread: the batch
 * runs images in parallel). The whole file is given at once; where the decoder asks for more
 * input, the file ended: "truncated" before the first frame, the end of the boxes after it. (The
 * input is not closed: libjxl would then print a debug line on stderr for a cut file.)
 *
 * Orientation is applied by libjxl (the codestream's, which the format makes normative), so an
 * EXIF box is carried with Orientation 1. 8-bit images come out 8-bit, deeper ones 16-bit (libjxl
 * scales to the full 16-bit range); gray stays gray, alpha is kept. The ICC profile is kept when
 * the file carries one (not when its colour space is an enumerated one such as sRGB); the EXIF
 * box (possibly Brotli-compressed, "brob") is kept. An animation gives its first frame.
 */
#include "photo_io.h"

#include "exif.h"

#include <stdlib.h>
#include <string.h>

#ifdef TS_HAVE_JXL
#include <jxl/decode.h>

#define MAX_BOX ((size_t)64 << 20) /* metadata boxes larger than this are left out */

typedef struct box {
    unsigned char *b;
    size_t cap;
    int open; /* an Exif box is being filled */
} box;

/* Ends the Exif box being filled: its bytes (after the 4-byte offset to the TIFF header) become
 * the EXIF block, made upright. */
static void box_close(JxlDecoder *dec, box *x, tsio_meta *meta)
{
    if (!x->open)
        return;
    size_t left = JxlDecoderReleaseBoxBuffer(dec), n = x->cap - left;
    x->open = 0;
    if (meta && !meta->exif && n > 4) {
        size_t skip = 4 + ((size_t)x->b[0] << 24 | (size_t)x->b[1] << 16 |
                           (size_t)x->b[2] << 8 | x->b[3]);
        if (skip < n)
            meta->exif = tsio_exif_upright(x->b + skip, n - skip, &meta->exif_len);
    }
}

/* More room for the box being filled; 0 when it is too large (it is then dropped). */
static int box_grow(JxlDecoder *dec, box *x)
{
    size_t left = JxlDecoderReleaseBoxBuffer(dec), used = x->cap - left;
    size_t cap = x->cap * 2;
    unsigned char *b = cap <= MAX_BOX ? realloc(x->b, cap) : NULL;
    if (!b) {
        x->open = 0;
        return 0;
    }
    x->b = b;
    x->cap = cap;
    return JxlDecoderSetBoxBuffer(dec, b + used, cap - used) == JXL_DEC_SUCCESS;
}

static void read_icc(JxlDecoder *dec, tsio_meta *meta)
{
    JxlColorEncoding enc;
    size_t n = 0;
    if (JxlDecoderGetColorAsEncodedProfile(dec, NULL, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &enc) ==
        JXL_DEC_SUCCESS)
        return; /* an enumerated colour space (sRGB, Display P3, ...): no profile in the file */
    if (JxlDecoderGetICCProfileSize(dec, NULL, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &n) !=
            JXL_DEC_SUCCESS ||
        !n || n > MAX_BOX || !(meta->icc = malloc(n)))
        return;
    if (JxlDecoderGetColorAsICCProfile(dec, NULL, JXL_COLOR_PROFILE_TARGET_ORIGINAL, meta->icc,
                                       n) != JXL_DEC_SUCCESS) {
        free(meta->icc);
        meta->icc = NULL;
        return;
    }
    meta->icc_len = n;
}

/* 1 when a container (ISO BMFF boxes after the 12-byte signature box) holds a codestream box
 * ("jxlc", or "jxlp" parts): libjxl prints a debug line on stderr for a container without one.
 * A bare codestream (FF 0A) is 1. Each step moves on by at least 8 bytes. */
static int has_codestream(const unsigned char *b, size_t len)
{
    if (len < 2 || (b[0] == 0xFF && b[1] == 0x0A))
        return 1;
    size_t i = 12;
    while (i + 8 <= len) {
        uint64_t size = (uint64_t)b[i] << 24 | (uint64_t)b[i + 1] << 16 | (uint64_t)b[i + 2] << 8 |
                        b[i + 3];
        if (memcmp(b + i + 4, "jxlc", 4) == 0 || memcmp(b + i + 4, "jxlp", 4) == 0)
            return 1;
        if (size == 1 && i + 16 <= len) { /* a 64-bit size follows the type */
            size = 0;
            for (int k = 0; k < 8; k++)
                size = size << 8 | b[i + 8 + k];
        } else if (size == 0) { /* the box runs to the end */
            return 0;
        }
        if (size < 8 || size > len - i)
            return 0;
        i += (size_t)size;
    }
    return 0;
}

ts_status tsio_jxl_decode(const unsigned char *buf, size_t len, uint64_t max_pixels,
                          tsio_meta *meta, ts_image *out, char *notice, size_t noticelen,
                          char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!has_codestream(buf, len))
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated JPEG XL (no codestream)");
    JxlDecoder *dec = JxlDecoderCreate(NULL);
    if (!dec)
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory opening a JPEG XL file");
    box x = {0};
    JxlBasicInfo info;
    JxlPixelFormat fmt = {0, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    ts_status st = TS_OK;
    int have_info = 0, done = 0, have_image = 0;
    int events = JXL_DEC_BASIC_INFO | JXL_DEC_COLOR_ENCODING | JXL_DEC_FULL_IMAGE |
                 (meta ? JXL_DEC_BOX : 0);
    if (JxlDecoderSubscribeEvents(dec, events) != JXL_DEC_SUCCESS ||
        JxlDecoderSetDecompressBoxes(dec, JXL_TRUE) != JXL_DEC_SUCCESS ||
        JxlDecoderSetInput(dec, buf, len) != JXL_DEC_SUCCESS) {
        st = tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory opening a JPEG XL file");
        goto end;
    }
    /* input not closed: a cut file then asks for more (JXL_DEC_NEED_MORE_INPUT: "truncated")
     * instead of failing with a debug line on stderr */
    while (!done && st == TS_OK) {
        JxlDecoderStatus s = JxlDecoderProcessInput(dec);
        switch (s) {
        case JXL_DEC_BASIC_INFO:
            if (JxlDecoderGetBasicInfo(dec, &info) != JXL_DEC_SUCCESS) {
                st = tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt JPEG XL (header)");
                break;
            }
            if ((st = tsio_check_limit(info.xsize, info.ysize, max_pixels, err, errlen)) != TS_OK)
                break;
            have_info = 1;
            fmt.num_channels = (info.num_color_channels == 1 ? 1 : 3) + (info.alpha_bits ? 1 : 0);
            fmt.data_type = info.bits_per_sample > 8 ? JXL_TYPE_UINT16 : JXL_TYPE_UINT8;
            if (info.have_animation)
                tsio_add_notice(notice, noticelen, "animated JPEG XL: first frame");
            break;
        case JXL_DEC_COLOR_ENCODING:
            if (meta && !meta->icc)
                read_icc(dec, meta);
            break;
        case JXL_DEC_NEED_IMAGE_OUT_BUFFER: {
            size_t need = 0;
            /* the oriented size: libjxl turns the image before it hands it over */
            uint32_t w = info.xsize, h = info.ysize;
            if (info.orientation >= 5) {
                uint32_t t = w;
                w = h, h = t;
            }
            if (out->data) { /* one frame only */
                done = 1;
                break;
            }
            if (!have_info ||
                (st = ts_image_alloc(out, (int)w, (int)h, (int)fmt.num_channels,
                                     fmt.data_type == JXL_TYPE_UINT16 ? 2 : 1)) != TS_OK) {
                st = tsio_fail(err, errlen, have_info ? st : TS_ERR_FORMAT,
                               "%s decoding a JPEG XL", have_info ? "out of memory" : "no header");
                break;
            }
            fmt.align = out->pitch; /* rows at the image's pitch */
            if (JxlDecoderImageOutBufferSize(dec, &fmt, &need) != JXL_DEC_SUCCESS ||
                need > out->pitch * (size_t)out->height ||
                JxlDecoderSetImageOutBuffer(dec, &fmt, out->data,
                                            out->pitch * (size_t)out->height) != JXL_DEC_SUCCESS)
                st = tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt JPEG XL (output size)");
            break;
        }
        case JXL_DEC_FULL_IMAGE:
            have_image = 1;
            if (!meta) {
                done = 1; /* the first frame is all that is needed */
                break;
            }
            /* go on for the boxes after the codestream (EXIF may follow it), not for more
             * frames: the next frame's buffer request ends the loop */
            JxlDecoderSkipFrames(dec, (size_t)-1 >> 1);
            break;
        case JXL_DEC_BOX: {
            JxlBoxType type;
            box_close(dec, &x, meta);
            if (JxlDecoderGetBoxType(dec, type, JXL_TRUE) == JXL_DEC_SUCCESS &&
                memcmp(type, "Exif", 4) == 0 && meta && !meta->exif) {
                if (!x.b && !(x.b = malloc(x.cap = 65536)))
                    break;
                x.open = JxlDecoderSetBoxBuffer(dec, x.b, x.cap) == JXL_DEC_SUCCESS;
            }
            break;
        }
        case JXL_DEC_BOX_NEED_MORE_OUTPUT:
            if (!box_grow(dec, &x))
                JxlDecoderReleaseBoxBuffer(dec);
            break;
        case JXL_DEC_SUCCESS:
            box_close(dec, &x, meta);
            done = 1;
            break;
        case JXL_DEC_NEED_MORE_INPUT: /* the whole file was given: the end of it */
            box_close(dec, &x, meta);
            if (have_image)
                done = 1;
            else
                st = tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated JPEG XL");
            break;
        default: /* JXL_DEC_ERROR and anything unexpected */
            st = tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt JPEG XL%s",
                           have_info ? " (image data)" : " (header)");
            break;
        }
    }
    if (st == TS_OK && !out->data)
        st = tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt JPEG XL (no image)");
end:
    if (st != TS_OK)
        ts_image_free(out);
    free(x.b);
    JxlDecoderDestroy(dec);
    return st;
}

#else /* built without libjxl */

ts_status tsio_jxl_decode(const unsigned char *buf, size_t len, uint64_t max_pixels,
                          tsio_meta *meta, ts_image *out, char *notice, size_t noticelen,
                          char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    return tsio_fail(err, errlen, TS_ERR_UNSUPPORTED,
                     "JPEG XL is not supported (tessera was built without libjxl)");
}

#endif
