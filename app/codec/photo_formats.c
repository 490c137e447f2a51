/* photo_formats.c - see photo_io.h: the signatures of the formats added for photos. */
#include "photo_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int at(const unsigned char *b, size_t len, size_t off, const char *s, size_t n)
{
    return len >= off + n && memcmp(b + off, s, n) == 0;
}

/* The ISO base media file formats (HEIF family): "ftyp" then the major brand. */
static const char *bmff_name(const unsigned char *b, size_t len)
{
    static const struct {
        const char *brand, *name;
    } brands[] = {{"heic", "HEIC"}, {"heix", "HEIC"}, {"hevc", "HEIC"}, {"heim", "HEIC"},
                  {"heis", "HEIC"}, {"mif1", "HEIF"}, {"msf1", "HEIF"}, {"avif", "AVIF"},
                  {"avis", "AVIF"}, {"jp2 ", "JPEG 2000"}, {"jpx ", "JPEG 2000"}};
    if (!at(b, len, 4, "ftyp", 4) || len < 12)
        return NULL;
    for (size_t i = 0; i < sizeof brands / sizeof brands[0]; i++)
        if (memcmp(b + 8, brands[i].brand, 4) == 0)
            return brands[i].name;
    return NULL;
}

static const char *unsupported_name(const unsigned char *b, size_t len)
{
    const char *n = bmff_name(b, len);
    if (n)
        return n;
    if (at(b, len, 0, "\xFF\x0A", 2) || at(b, len, 0, "\0\0\0\x0CJXL \r\n\x87\n", 12))
        return "JPEG XL";
    if (at(b, len, 0, "\0\0\0\x0CjP  \r\n\x87\n", 12) || at(b, len, 0, "\xFF\x4F\xFF\x51", 4))
        return "JPEG 2000";
    return NULL;
}

static size_t skip_sub_blocks(const unsigned char *b, size_t len, size_t i)
{
    while (i < len && b[i] != 0)
        i += 1 + (size_t)b[i];
    return i < len ? i + 1 : 0;
}

int tsio_gif_frames(const unsigned char *b, size_t len)
{
    if (len < 13 || !(at(b, len, 0, "GIF87a", 6) || at(b, len, 0, "GIF89a", 6)))
        return 0;
    size_t i = 13;
    if (b[10] & 0x80)
        i += (size_t)3 << ((b[10] & 7) + 1);
    int frames = 0;
    /* Every step moves i forward by at least 1, so the walk is linear in the file. */
    while (i < len && b[i] != 0x3B) {
        if (b[i] == 0x21) {
            if (i + 2 > len || !(i = skip_sub_blocks(b, len, i + 2)))
                break;
        } else if (b[i] == 0x2C) {
            if (len - i < 11)
                break;
            size_t j = i + 10 + ((b[i + 9] & 0x80) ? (size_t)3 << ((b[i + 9] & 7) + 1) : 0);
            if (j >= len || !(i = skip_sub_blocks(b, len, j + 1)))
                break;
            frames++;
        } else {
            break;
        }
    }
    return frames;
}

ts_status tsio_photo_load(const unsigned char *buf, size_t len, uint64_t max_pixels,
                          tsio_meta *meta, ts_image *out, char *notice, size_t noticelen,
                          int *taken, char *err, size_t errlen)
{
    *taken = 1;
    if (at(buf, len, 0, "RIFF", 4) && at(buf, len, 8, "WEBP", 4))
        return tsio_webp_decode(buf, len, max_pixels, meta, out, notice, noticelen, err, errlen);
    if (at(buf, len, 0, "II*\0", 4) || at(buf, len, 0, "MM\0*", 4) ||
        at(buf, len, 0, "II+\0", 4) || at(buf, len, 0, "MM\0+", 4))
        return tsio_tiff_decode(buf, len, max_pixels, meta, out, err, errlen);
    const char *name = unsupported_name(buf, len);
    if (name)
        return tsio_fail(err, errlen, TS_ERR_UNSUPPORTED, "%s is not supported", name);
    *taken = 0;
    int frames = tsio_gif_frames(buf, len);
    if (frames > 1) {
        char msg[80];
        snprintf(msg, sizeof msg, "animated GIF: first of %d frames", frames);
        tsio_add_notice(notice, noticelen, msg);
    }
    return TS_OK;
}

/* ---------------------------------------------------------------- JPEG markers */

#define ICC_TAG "ICC_PROFILE"
#define ICC_HEAD 14 /* "ICC_PROFILE\0", sequence number, chunk count */

static unsigned char *put_segment(unsigned char *p, int marker, const unsigned char *head,
                                  size_t headlen, const unsigned char *data, size_t len)
{
    size_t seglen = 2 + headlen + len;
    *p++ = 0xFF;
    *p++ = (unsigned char)marker;
    *p++ = (unsigned char)(seglen >> 8);
    *p++ = (unsigned char)seglen;
    memcpy(p, head, headlen);
    p += headlen;
    memcpy(p, data, len);
    return p + len;
}

#define SEG_MAX 65533 /* a segment's payload after its two length bytes */

ts_status tsio_jpeg_add_meta(const unsigned char *jpg, size_t n, const tsio_meta *meta,
                             unsigned char **out, size_t *outn)
{
    *out = NULL;
    *outn = 0;
    if (n < 4 || jpg[0] != 0xFF || jpg[1] != 0xD8)
        return TS_ERR_INVALID;
    size_t keep = 2; /* SOI, then an APP0 (JFIF) stays first as readers expect */
    if (n >= 6 && jpg[2] == 0xFF && jpg[3] == 0xE0) {
        size_t l = ((size_t)jpg[4] << 8) | jpg[5];
        if (4 + l <= n)
            keep = 4 + l;
    }
    int exif = meta && meta->exif && meta->exif_len && meta->exif_len + 6 <= SEG_MAX;
    size_t icc_chunk = SEG_MAX - ICC_HEAD;
    size_t chunks = meta && meta->icc && meta->icc_len ? (meta->icc_len + icc_chunk - 1) / icc_chunk
                                                       : 0;
    if (chunks > 255)
        chunks = 0; /* more than the format can number: left out */
    size_t total = n + (exif ? 4 + 6 + meta->exif_len : 0) +
                   (chunks ? chunks * (4 + ICC_HEAD) + meta->icc_len : 0);
    unsigned char *o = malloc(total), *p = o;
    if (!o)
        return TS_ERR_NOMEM;
    memcpy(p, jpg, keep);
    p += keep;
    if (exif)
        p = put_segment(p, 0xE1, (const unsigned char *)"Exif\0\0", 6, meta->exif,
                        meta->exif_len);
    for (size_t c = 0; c < chunks; c++) {
        unsigned char head[ICC_HEAD];
        memcpy(head, "ICC_PROFILE", 12);
        head[12] = (unsigned char)(c + 1);
        head[13] = (unsigned char)chunks;
        size_t at = c * icc_chunk, len = meta->icc_len - at < icc_chunk ? meta->icc_len - at
                                                                          : icc_chunk;
        p = put_segment(p, 0xE2, head, ICC_HEAD, meta->icc + at, len);
    }
    memcpy(p, jpg + keep, n - keep);
    p += n - keep;
    *out = o;
    *outn = (size_t)(p - o);
    return TS_OK;
}

ts_status tsio_jpeg_meta_scan(const unsigned char *b, size_t len, tsio_meta *meta)
{
    /* Where each ICC chunk's data lies: at most 255 chunks (the count is one byte). */
    size_t off[256] = {0}, n[256] = {0};
    int count = 0, bad = 0;
    if (len < 4 || b[0] != 0xFF || b[1] != 0xD8)
        return TS_OK;
    size_t i = 2;
    while (i + 4 <= len) {
        if (b[i] != 0xFF)
            break; /* not a marker: stop, what was found stays */
        while (i + 1 < len && b[i + 1] == 0xFF) /* fill bytes */
            i++;
        if (i + 4 > len)
            break;
        unsigned m = b[i + 1];
        if (m == 0xDA || m == 0xD9) /* the first scan or the end: metadata comes before */
            break;
        if (m == 0x01 || (m >= 0xD0 && m <= 0xD7)) { /* markers without a length */
            i += 2;
            continue;
        }
        size_t seg = (size_t)b[i + 2] << 8 | b[i + 3];
        if (seg < 2 || seg > len - i - 2)
            break;
        const unsigned char *p = b + i + 4;
        size_t plen = seg - 2;
        if (m == 0xE1 && plen > 6 && memcmp(p, "Exif\0\0", 6) == 0 && !meta->exif) {
            if (!(meta->exif = malloc(plen - 6)))
                return tsio_fail(NULL, 0, TS_ERR_NOMEM, "out of memory reading EXIF");
            memcpy(meta->exif, p + 6, plen - 6);
            meta->exif_len = plen - 6;
        } else if (m == 0xE2 && plen > ICC_HEAD && memcmp(p, ICC_TAG, sizeof ICC_TAG) == 0) {
            int seq = p[12], cnt = p[13];
            if (seq < 1 || cnt < 1 || seq > cnt || (count && cnt != count) || n[seq])
                bad = 1;
            else {
                count = cnt;
                off[seq] = (size_t)(p - b) + ICC_HEAD;
                n[seq] = plen - ICC_HEAD;
            }
        }
        i += 2 + seg;
    }
    if (!count || bad || meta->icc)
        return TS_OK;
    size_t total = 0;
    for (int s = 1; s <= count; s++) {
        if (!n[s])
            return TS_OK; /* a chunk is missing: no profile rather than a broken one */
        total += n[s];
    }
    if (!(meta->icc = malloc(total)))
        return tsio_fail(NULL, 0, TS_ERR_NOMEM, "out of memory reading an ICC profile");
    size_t at = 0;
    for (int s = 1; s <= count; s++) {
        memcpy(meta->icc + at, b + off[s], n[s]);
        at += n[s];
    }
    meta->icc_len = total;
    return TS_OK;
}
