/* codec_webp.c - WebP through libwebp (decode, encode), libwebpdemux (chunks, animation) and
 * libwebpmux (ICC and EXIF chunks on write).
 *
 * Decoding: the size comes from WebPGetFeatures and is checked against the pixel limit before any
 * pixel memory; a still image decodes straight into the output (RGB, or RGBA when it has alpha);
 * an animation gives its first frame composed on the canvas (WebPAnimDecoder), with a notice
 * naming the frame count. ICCP and EXIF chunks go into tsio_meta.
 * Encoding: 8-bit RGB or RGBA (gray is expanded to RGB and 16-bit rounded: WebP holds neither, the
 * notice says so), lossy at `quality` or lossless; the metadata is muxed in as ICCP/EXIF chunks.
 */
#include "photo_io.h"

#include <stdlib.h>
#include <string.h>
#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>
#include <webp/mux.h>

/* WebP's own limit on a side (VP8L stores 14 bits). */
#define WEBP_MAX_SIDE 16383

static void take_chunk(WebPDemuxer *dmx, const char *fourcc, unsigned char **to, size_t *to_len)
{
    WebPChunkIterator it;
    if (!WebPDemuxGetChunk(dmx, fourcc, 1, &it))
        return;
    if (it.chunk.size && (*to = malloc(it.chunk.size))) {
        memcpy(*to, it.chunk.bytes, it.chunk.size);
        *to_len = it.chunk.size;
    }
    WebPDemuxReleaseChunkIterator(&it);
}

/* First frame of an animation, composed on the canvas (RGBA). */
static ts_status decode_anim(const WebPData *data, ts_image *out, int frames, char *notice,
                             size_t noticelen, char *err, size_t errlen)
{
    WebPAnimDecoderOptions opt;
    if (!WebPAnimDecoderOptionsInit(&opt))
        return tsio_fail(err, errlen, TS_ERR_UNSUPPORTED, "libwebp version mismatch");
    opt.color_mode = MODE_RGBA;
    opt.use_threads = 0;
    WebPAnimDecoder *dec = WebPAnimDecoderNew(data, &opt);
    if (!dec)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt WebP (animation)");
    WebPAnimInfo info;
    uint8_t *px = NULL;
    int ts = 0;
    ts_status st = TS_OK;
    if (!WebPAnimDecoderGetInfo(dec, &info) || !WebPAnimDecoderGetNext(dec, &px, &ts) || !px)
        st = tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt WebP (first frame)");
    else if ((int)info.canvas_width != out->width || (int)info.canvas_height != out->height)
        st = tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt WebP (canvas size)");
    else if ((st = ts_image_alloc(out, out->width, out->height, 4, 1)) == TS_OK) {
        memcpy(out->data, px, (size_t)out->width * 4 * (size_t)out->height);
        char msg[96];
        snprintf(msg, sizeof msg, "animated WebP: first of %d frames", frames);
        tsio_add_notice(notice, noticelen, msg);
    } else {
        st = tsio_fail(err, errlen, st, "out of memory decoding a %dx%d WebP", out->width,
                       out->height);
    }
    WebPAnimDecoderDelete(dec);
    return st;
}

ts_status tsio_webp_decode(const unsigned char *buf, size_t len, uint64_t max_pixels,
                           tsio_meta *meta, ts_image *out, char *notice, size_t noticelen,
                           char *err, size_t errlen)
{
    WebPBitstreamFeatures f;
    memset(out, 0, sizeof *out);
    if (WebPGetFeatures(buf, len, &f) != VP8_STATUS_OK)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt WebP (header)");
    ts_status st = tsio_check_limit((uint64_t)f.width, (uint64_t)f.height, max_pixels, err, errlen);
    if (st != TS_OK)
        return st;
    WebPData data = {buf, len};
    WebPDemuxer *dmx = WebPDemux(&data);
    if (!dmx)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt WebP (chunks)");
    int frames = (int)WebPDemuxGetI(dmx, WEBP_FF_FRAME_COUNT);
    if (meta) {
        if (!meta->icc)
            take_chunk(dmx, "ICCP", &meta->icc, &meta->icc_len);
        if (!meta->exif)
            take_chunk(dmx, "EXIF", &meta->exif, &meta->exif_len);
    }
    WebPDemuxDelete(dmx);
    out->width = f.width;
    out->height = f.height;
    if (f.has_animation) {
        st = decode_anim(&data, out, frames, notice, noticelen, err, errlen);
    } else {
        int ch = f.has_alpha ? 4 : 3;
        if ((st = ts_image_alloc(out, f.width, f.height, ch, 1)) != TS_OK)
            st = tsio_fail(err, errlen, st, "out of memory decoding a %dx%d WebP", f.width,
                           f.height);
        else {
            size_t size = out->pitch * (size_t)out->height;
            uint8_t *ok = ch == 4 ? WebPDecodeRGBAInto(buf, len, out->data, size, (int)out->pitch)
                                  : WebPDecodeRGBInto(buf, len, out->data, size, (int)out->pitch);
            if (!ok)
                st = tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt WebP (image data)");
        }
    }
    if (st != TS_OK) {
        ts_image_free(out);
        memset(out, 0, sizeof *out);
    }
    return st;
}

/* ---------------------------------------------------------------- encoding */

static int write_all(FILE *f, const uint8_t *p, size_t n) { return fwrite(p, 1, n, f) == n; }

/* The packed 8-bit RGB(A) that WebP takes. */
static unsigned char *to_rgb8(const ts_image *im, int *ch)
{
    *ch = ts_has_alpha(im->channels) ? 4 : 3;
    size_t n = (size_t)im->width * (size_t)*ch;
    unsigned char *dst = malloc(n * (size_t)im->height), *d = dst;
    if (!dst)
        return NULL;
    int gray = im->channels <= 2;
    for (int y = 0; y < im->height; y++)
        for (int x = 0; x < im->width; x++)
            for (int c = 0; c < *ch; c++) {
                int src = c == 3 ? im->channels - 1 : gray ? 0 : c;
                unsigned v = ts_get(im, x, y, src);
                *d++ = (unsigned char)(im->bytes == 2 ? (v + 128) / 257 : v);
            }
    return dst;
}

static ts_status mux_meta(const uint8_t *bits, size_t n, const tsio_meta *meta, WebPData *out,
                          char *err, size_t errlen)
{
    WebPData img = {bits, n};
    WebPMux *mux = WebPMuxNew();
    int ok = mux && WebPMuxSetImage(mux, &img, 0) == WEBP_MUX_OK;
    if (ok && meta->icc && meta->icc_len) {
        WebPData icc = {meta->icc, meta->icc_len};
        ok = WebPMuxSetChunk(mux, "ICCP", &icc, 0) == WEBP_MUX_OK;
    }
    if (ok && meta->exif && meta->exif_len) {
        WebPData exif = {meta->exif, meta->exif_len};
        ok = WebPMuxSetChunk(mux, "EXIF", &exif, 0) == WEBP_MUX_OK;
    }
    WebPDataInit(out);
    ok = ok && WebPMuxAssemble(mux, out) == WEBP_MUX_OK;
    WebPMuxDelete(mux);
    return ok ? TS_OK : tsio_fail(err, errlen, TS_ERR_NOMEM, "WebP metadata could not be added");
}

ts_status tsio_webp_encode(FILE *f, const ts_image *im, int quality, int lossless,
                           const tsio_meta *meta, char *notice, size_t noticelen, char *err,
                           size_t errlen)
{
    if (im->width > WEBP_MAX_SIDE || im->height > WEBP_MAX_SIDE)
        return tsio_fail(err, errlen, TS_ERR_TOO_LARGE, "image is %dx%d, over WebP's %d a side",
                         im->width, im->height, WEBP_MAX_SIDE);
    if (im->channels <= 2)
        tsio_add_notice(notice, noticelen, "gray stored as RGB (WebP has no gray)");
    if (im->bytes == 2)
        tsio_add_notice(notice, noticelen, "16-bit converted to 8-bit (WebP is 8-bit)");
    int ch;
    unsigned char *px = to_rgb8(im, &ch);
    if (!px)
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory converting for WebP");
    uint8_t *bits = NULL;
    int stride = im->width * ch;
    size_t n = lossless ? (ch == 4 ? WebPEncodeLosslessRGBA(px, im->width, im->height, stride, &bits)
                                   : WebPEncodeLosslessRGB(px, im->width, im->height, stride, &bits))
                        : (ch == 4 ? WebPEncodeRGBA(px, im->width, im->height, stride,
                                                    (float)quality, &bits)
                                   : WebPEncodeRGB(px, im->width, im->height, stride,
                                                   (float)quality, &bits));
    free(px);
    if (!n || !bits) {
        WebPFree(bits);
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "the WebP encoder failed");
    }
    ts_status st = TS_OK;
    int wrote;
    if (meta && ((meta->icc && meta->icc_len) || (meta->exif && meta->exif_len))) {
        WebPData all;
        st = mux_meta(bits, n, meta, &all, err, errlen);
        wrote = st == TS_OK && write_all(f, all.bytes, all.size);
        if (st == TS_OK)
            WebPDataClear(&all);
    } else {
        wrote = write_all(f, bits, n);
    }
    WebPFree(bits);
    if (st == TS_OK && !wrote)
        st = tsio_fail(err, errlen, TS_ERR_IO, "write failed");
    return st;
}
