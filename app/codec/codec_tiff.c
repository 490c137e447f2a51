/* codec_tiff.c - TIFF reading through libtiff, from memory, first page.
 *
 * Gray, gray+alpha, RGB and RGBA at 8 or 16 bits, interleaved, in strips or tiles, are read with
 * TIFFReadEncodedStrip/Tile (any compression libtiff was built with: none, LZW, Deflate,
 * PackBits, JPEG, ...) and keep their depth and channels. Everything else libtiff can turn into
 * 8-bit RGBA (palette, 1-bit, YCbCr, CMYK, separate planes at 8 bits) goes through
 * TIFFReadRGBAImageOriented; 16-bit in those layouts is refused by name.
 * The size is checked against the pixel limit before any pixel memory; libtiff's own allocations
 * are capped (TIFFOpenOptionsSetMaxSingleMemAlloc) and its messages are routed into the one-line
 * reason through per-file handlers (thread-safe), never to stderr.
 * The ICC profile tag goes into tsio_meta.icc; the Orientation tag becomes a minimal EXIF block
 * (tsio_exif_make) on both paths (the RGBA one reads the pixels as stored), so that it is applied
 * like a JPEG's. Tiles are held to a budget (tile_budget) before any is read.
 */
#include "photo_io.h"

#include "exif.h"

#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

typedef struct mem {
    const unsigned char *b;
    toff_t len, pos;
    char msg[200]; /* the first error libtiff reported */
} mem;

static tmsize_t m_read(thandle_t h, void *dst, tmsize_t n)
{
    mem *m = (mem *)h;
    if (n < 0)
        return -1;
    toff_t left = m->pos < m->len ? m->len - m->pos : 0;
    size_t k = (toff_t)n < left ? (size_t)n : (size_t)left;
    memcpy(dst, m->b + m->pos, k);
    m->pos += k;
    return (tmsize_t)k;
}

static tmsize_t m_write(thandle_t h, void *src, tmsize_t n) { return -1; }

static toff_t m_seek(thandle_t h, toff_t off, int whence)
{
    mem *m = (mem *)h;
    toff_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? m->pos : m->len;
    if (off > UINT64_MAX - base)
        return (toff_t)-1;
    m->pos = base + off; /* past the end reads nothing */
    return m->pos;
}

static int m_close(thandle_t h) { return 0; }
static toff_t m_size(thandle_t h) { return ((mem *)h)->len; }

static int on_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    mem *m = user;
    if (!m->msg[0])
        vsnprintf(m->msg, sizeof m->msg, fmt, ap);
    return 1; /* handled: nothing reaches stderr */
}

static int on_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    return 1; /* warnings (unknown tags, ...) are not failures and not printed */
}

static ts_status fail_tiff(mem *m, char *err, size_t errlen, const char *what)
{
    /* libtiff's messages may hold newlines; the reason is one line */
    for (char *p = m->msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt TIFF (%s%s%s)", what,
                     m->msg[0] ? ": " : "", m->msg);
}

/* Copies a w x h block of packed samples (row bytes `src_row`) into the image at (x0, y0),
 * clipped; MINISWHITE is inverted. */
static void put_block(ts_image *im, const unsigned char *src, size_t src_row, uint32_t x0,
                      uint32_t y0, uint32_t w, uint32_t h, int invert)
{
    size_t px = (size_t)im->channels * (size_t)im->bytes;
    uint32_t cw = (uint64_t)x0 + w > (uint64_t)im->width ? (uint32_t)im->width - x0 : w;
    for (uint32_t y = 0; y < h && y0 + y < (uint32_t)im->height; y++) {
        unsigned char *d = (unsigned char *)im->data + (size_t)(y0 + y) * im->pitch + x0 * px;
        memcpy(d, src + (size_t)y * src_row, cw * px);
        if (invert)
            for (size_t i = 0; i < cw * px; i++)
                d[i] = (unsigned char)~d[i]; /* both bytes of a 16-bit sample: 65535 - v */
    }
}

static ts_status read_direct(TIFF *tif, mem *m, ts_image *im, int invert, char *err,
                             size_t errlen)
{
    size_t px = (size_t)im->channels * (size_t)im->bytes;
    if (TIFFIsTiled(tif)) {
        uint32_t tw = 0, th = 0;
        TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
        TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
        tmsize_t ts = TIFFTileSize(tif);
        if (tw == 0 || th == 0 || ts <= 0 || (uint64_t)tw * px > (uint64_t)ts ||
            th > (uint64_t)ts / ((uint64_t)tw * px))
            return fail_tiff(m, err, errlen, "tile size");
        unsigned char *tile = malloc((size_t)ts);
        if (!tile)
            return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory reading a TIFF tile");
        for (uint32_t y = 0; y < (uint32_t)im->height; y += th)
            for (uint32_t x = 0; x < (uint32_t)im->width; x += tw) {
                if (TIFFReadTile(tif, tile, x, y, 0, 0) < 0) {
                    free(tile);
                    return fail_tiff(m, err, errlen, "tile data");
                }
                put_block(im, tile, tw * px, x, y, tw, th, invert);
            }
        free(tile);
        return TS_OK;
    }
    uint32_t rps = 0;
    if (!TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rps) || rps == 0)
        return fail_tiff(m, err, errlen, "rows per strip");
    if (rps > (uint32_t)im->height)
        rps = (uint32_t)im->height;
    size_t row = (size_t)im->width * px;
    unsigned char *strip = malloc(row * rps);
    if (!strip)
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory reading a TIFF strip");
    for (uint32_t y = 0; y < (uint32_t)im->height; y += rps) {
        uint32_t rows = (uint32_t)im->height - y < rps ? (uint32_t)im->height - y : rps;
        tmsize_t got = TIFFReadEncodedStrip(tif, TIFFComputeStrip(tif, y, 0), strip,
                                            (tmsize_t)(row * rows));
        if (got < 0 || (size_t)got < row * rows) {
            free(strip);
            return fail_tiff(m, err, errlen, "strip data");
        }
        put_block(im, strip, row, 0, y, (uint32_t)im->width, rows, invert);
    }
    free(strip);
    return TS_OK;
}

/* The tile budget of every path (direct and RGBA): tiles may overhang the image (their sides are
 * multiples of 16), but the pixels of all the tiles that cover it may be at most 4 times the
 * image's plus 16 M: a 1x1048576 image in 8192x8192 tiles decoded 530 MB in 6 s, a 1x1 palette
 * image in one 24576x24576 tile took 600 MB through libtiff's RGBA reader. */
static ts_status tile_budget(TIFF *tif, uint32_t w, uint32_t h, char *err, size_t errlen)
{
    uint32_t tw = 0, th = 0;
    if (!TIFFIsTiled(tif))
        return TS_OK;
    TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
    TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
    if (tw == 0 || th == 0)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt TIFF (tiles of %ux%u)", tw, th);
    /* sides <= TS_MAX_DIM (checked before): the padded sides fit 33 bits, their product 66 */
    uint64_t pw = ((uint64_t)w + tw - 1) / tw * tw, ph = ((uint64_t)h + th - 1) / th * th;
    uint64_t budget = 4 * (uint64_t)w * h + ((uint64_t)1 << 24);
    if (pw > budget || ph > budget / pw)
        return tsio_fail(err, errlen, TS_ERR_FORMAT,
                         "corrupt TIFF (tiles of %ux%u for a %ux%u image: over the tile budget)",
                         tw, th, w, h);
    return TS_OK;
}

/* libtiff's RGBA reader only flips: asked for top-left, an Orientation of 5-8 (rows and columns
 * swapped) came out mirrored, not turned. So the raster is asked for in the file's own
 * orientation (no flip: the pixels as stored), and the orientation is applied by the app like
 * a JPEG's, on every path. */
static ts_status read_rgba(TIFF *tif, mem *m, ts_image *im, int alpha, uint16_t orient, char *err,
                           size_t errlen)
{
    char emsg[1024] = "";
    if (!TIFFRGBAImageOK(tif, emsg))
        return tsio_fail(err, errlen, TS_ERR_UNSUPPORTED, "this TIFF layout is not supported (%s)",
                         emsg);
    uint32_t *raster = malloc((size_t)im->width * (size_t)im->height * 4);
    if (!raster)
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory decoding a TIFF");
    if (!TIFFReadRGBAImageOriented(tif, (uint32_t)im->width, (uint32_t)im->height, raster,
                                   orient >= 1 && orient <= 8 ? orient : ORIENTATION_TOPLEFT, 1)) {
        free(raster);
        return fail_tiff(m, err, errlen, "image data");
    }
    unsigned char *d = im->data;
    for (size_t i = 0, n = (size_t)im->width * (size_t)im->height; i < n; i++) {
        uint32_t p = raster[i];
        *d++ = (unsigned char)TIFFGetR(p);
        *d++ = (unsigned char)TIFFGetG(p);
        *d++ = (unsigned char)TIFFGetB(p);
        if (alpha)
            *d++ = (unsigned char)TIFFGetA(p);
    }
    free(raster);
    return TS_OK;
}

static ts_status decode_page(TIFF *tif, mem *m, uint64_t max_pixels, tsio_meta *meta,
                             ts_image *out, char *err, size_t errlen)
{
    uint32_t w = 0, h = 0;
    uint16_t bps = 1, spp = 1, photo = 0, planar = PLANARCONFIG_CONTIG, fmt = SAMPLEFORMAT_UINT;
    uint16_t orient = ORIENTATION_TOPLEFT, nextra = 0, *extra = NULL;
    if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h))
        return fail_tiff(m, err, errlen, "no image size");
    ts_status st = tsio_check_limit(w, h, max_pixels, err, errlen);
    if (st != TS_OK)
        return st;
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bps);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &fmt);
    TIFFGetFieldDefaulted(tif, TIFFTAG_ORIENTATION, &orient);
    TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, &nextra, &extra);
    if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photo))
        photo = spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
    if (fmt != SAMPLEFORMAT_UINT)
        return tsio_fail(err, errlen, TS_ERR_UNSUPPORTED,
                         "TIFF with %s samples is not supported",
                         fmt == SAMPLEFORMAT_IEEEFP ? "floating-point" : "signed");
    int gray = photo == PHOTOMETRIC_MINISBLACK || photo == PHOTOMETRIC_MINISWHITE;
    int direct = planar == PLANARCONFIG_CONTIG && (bps == 8 || bps == 16) &&
                 ((gray && spp <= 2) || (photo == PHOTOMETRIC_RGB && (spp == 3 || spp == 4)));
    if (!direct && bps > 8)
        return tsio_fail(err, errlen, TS_ERR_UNSUPPORTED,
                         "%u-bit TIFF in this layout (photometric %u, %u samples, %s) is not "
                         "supported",
                         bps, photo, spp, planar == PLANARCONFIG_CONTIG ? "interleaved" : "planar");
    if ((st = tile_budget(tif, w, h, err, errlen)) != TS_OK)
        return st;
    int alpha = direct ? 0 : nextra > 0;
    st = direct ? ts_image_alloc(out, (int)w, (int)h, spp, bps / 8)
                : ts_image_alloc(out, (int)w, (int)h, alpha ? 4 : 3, 1);
    if (st != TS_OK)
        return tsio_fail(err, errlen, st, "out of memory decoding a %ux%u TIFF", w, h);
    st = direct ? read_direct(tif, m, out, photo == PHOTOMETRIC_MINISWHITE && spp == 1, err, errlen)
                : read_rgba(tif, m, out, alpha, orient, err, errlen);
    if (st != TS_OK) {
        ts_image_free(out);
        return st;
    }
    if (meta) {
        uint32_t icc_len = 0;
        void *icc = NULL;
        if (!meta->icc && TIFFGetField(tif, TIFFTAG_ICCPROFILE, &icc_len, &icc) && icc &&
            icc_len && (meta->icc = malloc(icc_len))) {
            memcpy(meta->icc, icc, icc_len);
            meta->icc_len = icc_len;
        }
        unsigned char block[26];
        if (!meta->exif && orient > 1 && orient <= 8 && tsio_exif_make(orient, block) &&
            (meta->exif = malloc(sizeof block))) {
            memcpy(meta->exif, block, sizeof block);
            meta->exif_len = sizeof block;
        }
    }
    return TS_OK;
}

ts_status tsio_tiff_decode(const unsigned char *buf, size_t len, uint64_t max_pixels,
                           tsio_meta *meta, ts_image *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    mem *m = calloc(1, sizeof *m);
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
    if (!m || !opts) {
        free(m);
        TIFFOpenOptionsFree(opts);
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory opening a TIFF");
    }
    m->b = buf;
    m->len = len;
    /* One allocation of libtiff's: a strip or tile, a tag array. A legitimate one is at most a
     * strip of the largest image allowed; a hostile header asks for gigabytes. */
    uint64_t cap = ((uint64_t)256 << 20) + (max_pixels < ((uint64_t)1 << 40) ? max_pixels * 8 : 0);
    TIFFOpenOptionsSetMaxSingleMemAlloc(opts, (tmsize_t)(cap > INT64_MAX ? INT64_MAX : cap));
    TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error, m);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, m);
    /* "rm": read-only, no memory mapping (there is no file) */
    TIFF *tif = TIFFClientOpenExt("tiff", "rm", (thandle_t)m, m_read, m_write, m_seek, m_close,
                                  m_size, NULL, NULL, opts);
    TIFFOpenOptionsFree(opts);
    ts_status st = tif ? decode_page(tif, m, max_pixels, meta, out, err, errlen)
                       : fail_tiff(m, err, errlen, "header");
    if (tif)
        TIFFClose(tif);
    free(m);
    return st;
}
