/* codec_table.c - the codec table: each file format declared once (see codec.h), and what is
 * derived from it: the format of a file's bytes (the sniffers, tried in table order: TGA, which
 * has no signature, last), of a name or an extension (--format, outputs, which files a directory
 * contributes), the header probes that decide how much of a file is read, and the quality range.
 * A new format is one row here plus its codec file.
 */
#include "image_io.h"
#include "photo_io.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- sniffers */

static int at(const unsigned char *b, size_t len, size_t off, const char *s, size_t n)
{
    return len >= off + n && memcmp(b + off, s, n) == 0;
}

static int is_png(const unsigned char *b, size_t len)
{
    return at(b, len, 0, "\x89PNG\r\n\x1a\n", 8);
}
static int is_gif(const unsigned char *b, size_t len)
{
    return at(b, len, 0, "GIF87a", 6) || at(b, len, 0, "GIF89a", 6);
}
static int is_bmp(const unsigned char *b, size_t len) { return at(b, len, 0, "BM", 2); }
static int is_psd(const unsigned char *b, size_t len) { return at(b, len, 0, "8BPS", 4); }
static int is_pnm(const unsigned char *b, size_t len)
{
    return len >= 2 && b[0] == 'P' && (b[1] == '5' || b[1] == '6');
}
static int is_pnm_ascii(const unsigned char *b, size_t len)
{
    return len >= 3 && b[0] == 'P' && b[1] >= '1' && b[1] <= '4' && b[2] &&
           strchr(" \t\r\n#", b[2]);
}
static int is_hdr(const unsigned char *b, size_t len)
{
    return at(b, len, 0, "#?RADIANCE\n", 11) || at(b, len, 0, "#?RGBE\n", 7);
}
static int is_pic(const unsigned char *b, size_t len)
{
    return at(b, len, 0, "\x53\x80\xF6\x34", 4);
}
static int is_webp(const unsigned char *b, size_t len)
{
    return at(b, len, 0, "RIFF", 4) && at(b, len, 8, "WEBP", 4);
}
static int is_tiff(const unsigned char *b, size_t len)
{
    return at(b, len, 0, "II*\0", 4) || at(b, len, 0, "MM\0*", 4) || at(b, len, 0, "II+\0", 4) ||
           at(b, len, 0, "MM\0+", 4);
}

/* The ISO base media file formats (HEIF family): "ftyp" then the major brand. */
static int brand(const unsigned char *b, size_t len, const char *const *brands)
{
    if (!at(b, len, 4, "ftyp", 4) || len < 12)
        return 0;
    for (int i = 0; brands[i]; i++)
        if (memcmp(b + 8, brands[i], 4) == 0)
            return 1;
    return 0;
}
static int is_heic(const unsigned char *b, size_t len)
{
    static const char *const br[] = {"heic", "heix", "hevc", "heim", "heis", "mif1", "msf1", NULL};
    return brand(b, len, br);
}
static int is_avif(const unsigned char *b, size_t len)
{
    static const char *const br[] = {"avif", "avis", NULL};
    return brand(b, len, br);
}
static int is_jxl(const unsigned char *b, size_t len)
{
    return at(b, len, 0, "\xFF\x0A", 2) || at(b, len, 0, "\0\0\0\x0CJXL \r\n\x87\n", 12);
}
static int is_jp2(const unsigned char *b, size_t len)
{
    static const char *const br[] = {"jp2 ", "jpx ", NULL};
    return brand(b, len, br) || at(b, len, 0, "\0\0\0\x0CjP  \r\n\x87\n", 12) ||
           at(b, len, 0, "\xFF\x4F\xFF\x51", 4);
}

/* ---------------------------------------------------------------- header probes */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* PNG: IHDR is the first chunk (after Apple's CgBI, if any): the size is known from the head. */
static ts_status probe_png(const unsigned char *h, size_t len, uint64_t size, uint64_t max_pixels,
                           size_t *bytes, char *err, size_t errlen)
{
    if (len >= 24 && at(h, len, 12, "IHDR", 4))
        return tsio_check_limit(be32(h + 16), be32(h + 20), max_pixels, err, errlen);
    return TS_OK;
}

/* JPEG: the frame header (SOFn) found among the markers of the head refuses an image over the
 * limit before the rest of the file is read (the decoder checks again: the frame may lie later). */
static ts_status probe_jpeg(const unsigned char *b, size_t len, uint64_t size,
                            uint64_t max_pixels, size_t *bytes, char *err, size_t errlen)
{
    size_t i = 2;
    while (i + 4 <= len && b[i] == 0xFF) {
        while (i + 1 < len && b[i + 1] == 0xFF) /* fill bytes */
            i++;
        if (i + 4 > len)
            break;
        unsigned m = b[i + 1];
        if (m == 0xDA || m == 0xD9)
            break;
        if (m == 0x01 || (m >= 0xD0 && m <= 0xD7)) {
            i += 2;
            continue;
        }
        size_t seg = (size_t)b[i + 2] << 8 | b[i + 3];
        if (seg < 2)
            break;
        if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
            if (seg < 7 || i + 9 > len)
                break;
            unsigned hh = (unsigned)b[i + 5] << 8 | b[i + 6];
            unsigned ww = (unsigned)b[i + 7] << 8 | b[i + 8];
            return tsio_check_limit(ww, hh, max_pixels, err, errlen);
        }
        i += 2 + seg;
    }
    return TS_OK;
}

/* TGA: nothing after its pixels is read (footer and extension area hold none). */
static ts_status probe_tga(const unsigned char *h, size_t len, uint64_t size, uint64_t max_pixels,
                           size_t *bytes, char *err, size_t errlen)
{
    size_t limit = tsio_tga_bytes(h, len, max_pixels, SIZE_MAX);
    if (limit < *bytes)
        *bytes = limit;
    return TS_OK;
}

/* ---------------------------------------------------------------- row adapters */

ts_status tsio_webp_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                         ts_image *out, char *err, size_t errlen)
{
    return tsio_webp_decode(buf, len, a->max_pixels, a->meta, out, a->notice, a->noticelen, err,
                            errlen);
}

ts_status tsio_tiff_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                         ts_image *out, char *err, size_t errlen)
{
    return tsio_tiff_decode(buf, len, a->max_pixels, a->meta, out, err, errlen);
}

ts_status tsio_heif_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                         ts_image *out, char *err, size_t errlen)
{
    return tsio_heif_decode(buf, len, is_avif(buf, len) ? "AVIF" : "HEIC", a->max_pixels, a->meta,
                            out, err, errlen);
}

ts_status tsio_jxl_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                        ts_image *out, char *err, size_t errlen)
{
    return tsio_jxl_decode(buf, len, a->max_pixels, a->meta, out, a->notice, a->noticelen, err,
                           errlen);
}

ts_status tsio_tiff_save(FILE *f, const ts_image *im, const tsio_encode_args *a, char *notice,
                         size_t noticelen, char *err, size_t errlen)
{
    return tsio_tiff_encode(f, im, a->meta, err, errlen);
}

ts_status tsio_webp_save(FILE *f, const ts_image *im, const tsio_encode_args *a, char *notice,
                         size_t noticelen, char *err, size_t errlen)
{
    return tsio_webp_encode(f, im, a->quality, a->lossless, a->meta, notice, noticelen, err,
                            errlen);
}

/* ---------------------------------------------------------------- the table */

#define NAMED(nm, ex, sn, why) {.name = nm, .exts = ex, .sniff = sn, .unsupported = why}

static const tsio_codec codecs[] = {
    {.name = "JPEG", .format = TSIO_JPEG, .ext = "jpg", .exts = "jpg jpeg", .sniff = tsio_is_jpeg,
     .probe = probe_jpeg, .decode = tsio_jpeg_load, .gpu_decode = 1, .encode = tsio_jpeg_save,
     .meta_read = tsio_jpeg_meta_scan, .meta_write = tsio_jpeg_add_meta},
    {.name = "PNG", .format = TSIO_PNG, .ext = "png", .exts = "png", .sniff = is_png,
     .probe = probe_png, .decode = tsio_png_load, .encode = tsio_png_save},
    {.name = "WebP", .format = TSIO_WEBP, .ext = "webp", .exts = "webp", .sniff = is_webp,
     .decode = tsio_webp_load, .encode = tsio_webp_save},
    {.name = "TIFF", .format = TSIO_TIFF, .ext = "tiff", .exts = "tiff tif", .sniff = is_tiff,
     .decode = tsio_tiff_load, .encode = tsio_tiff_save},
    {.name = "GIF", .exts = "gif", .sniff = is_gif, .decode = tsio_gif_load},
    {.name = "BMP", .format = TSIO_BMP, .ext = "bmp", .exts = "bmp", .sniff = is_bmp,
     .decode = tsio_bmp_load, .encode = tsio_bmp_save},
    {.name = "PSD", .exts = "psd", .sniff = is_psd, .decode = tsio_psd_load},
    {.name = "PNM", .format = TSIO_PNM, .ext = "pnm", .exts = "pnm ppm pgm", .sniff = is_pnm,
     .decode = tsio_pnm_load, .encode = tsio_pnm_save},
    NAMED("ASCII PNM", "", is_pnm_ascii, "ASCII PNM (P1-P4) is not supported"),
    NAMED("HDR", "hdr", is_hdr, "HDR images are not supported"),
    NAMED("PIC", "pic", is_pic, "Softimage PIC is not supported"),
    /* read through libheif and libjxl (codec_heif.c, codec_jxl.c; without them at build time,
     * their decoders refuse the files with the reason) */
    {.name = "HEIC", .exts = "heic heif", .sniff = is_heic, .decode = tsio_heif_load},
    {.name = "AVIF", .exts = "avif", .sniff = is_avif, .decode = tsio_heif_load},
    {.name = "JPEG XL", .exts = "jxl", .sniff = is_jxl, .decode = tsio_jxl_load},
    NAMED("JPEG 2000", "", is_jp2, "JPEG 2000 is not supported"),
    /* no signature: last */
    {.name = "TGA", .format = TSIO_TGA, .ext = "tga", .exts = "tga", .sniff = tsio_tga_sniff,
     .probe = probe_tga, .decode = tsio_tga_load, .encode = tsio_tga_save},
};
#define N_CODECS ((int)(sizeof codecs / sizeof codecs[0]))

int tsio_codec_count(void) { return N_CODECS; }

const tsio_codec *tsio_codec_at(int i) { return i >= 0 && i < N_CODECS ? &codecs[i] : NULL; }

const tsio_codec *tsio_codec_sniff(const unsigned char *b, size_t len)
{
    if (!b || !len)
        return NULL;
    for (int i = 0; i < N_CODECS; i++)
        if (codecs[i].sniff(b, len))
            return &codecs[i];
    return NULL;
}

const tsio_codec *tsio_codec_of(tsio_format f)
{
    for (int i = 0; f != TSIO_UNKNOWN && i < N_CODECS; i++)
        if (codecs[i].format == f)
            return &codecs[i];
    return NULL;
}

const tsio_codec *tsio_codec_jpeg(void) { return tsio_codec_of(TSIO_JPEG); }

/* ---------------------------------------------------------------- names and extensions */

/* 1 when `ext` is one of the space-separated words of `list` (any case). */
static int in_list(const char *list, const char *ext)
{
    size_t n = strlen(ext);
    for (const char *p = list; n && *p;) {
        size_t w = strcspn(p, " ");
        if (w == n && strncasecmp(p, ext, n) == 0)
            return 1;
        p += w;
        p += strspn(p, " ");
    }
    return 0;
}

tsio_format tsio_format_from_name(const char *s)
{
    if (!s)
        return TSIO_UNKNOWN;
    const char *slash = strrchr(s, '/');
    const char *base = slash ? slash + 1 : s;
    const char *dot = strrchr(base, '.');
    const char *ext = dot ? dot + 1 : slash ? "" : s; /* no dot, no slash: a bare name */
    for (int i = 0; i < N_CODECS; i++)
        if (codecs[i].format != TSIO_UNKNOWN && in_list(codecs[i].exts, ext))
            return codecs[i].format;
    return TSIO_UNKNOWN;
}

int tsio_is_image_name(const char *path)
{
    const char *base = strrchr(path, '/'), *dot;
    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    if (!dot || dot == base)
        return 0;
    for (int i = 0; i < N_CODECS; i++)
        if (in_list(codecs[i].exts, dot + 1))
            return 1;
    return 0;
}

const char *tsio_format_ext(tsio_format f)
{
    const tsio_codec *c = tsio_codec_of(f);
    return c ? c->ext : "";
}

const char *tsio_output_ext(tsio_format f, int channels)
{
    if (f == TSIO_PNM)
        return channels <= 2 ? "pgm" : "ppm";
    return tsio_format_ext(f);
}

ts_status tsio_quality(int asked, int *quality, char *err, size_t errlen)
{
    *quality = asked ? asked : TSIO_QUALITY_DEFAULT;
    if (*quality < TSIO_QUALITY_MIN || *quality > TSIO_QUALITY_MAX)
        return tsio_fail(err, errlen, TS_ERR_INVALID, "JPEG quality %d is not in %d..%d",
                         *quality, TSIO_QUALITY_MIN, TSIO_QUALITY_MAX);
    return TS_OK;
}
