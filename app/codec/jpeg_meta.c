/* jpeg_meta.c - JPEG metadata, one reader and one writer for both decoders and both encoders
 * (libjpeg-turbo's in codec_jpeg.c, nvJPEG's in app/batch/batch_gpu.c): the EXIF block in APP1,
 * the ICC profile in APP2 chunks. A profile that needs more than the 255 chunks a JPEG can number
 * is left out with a notice, on both paths: written with wrapped sequence numbers, every reader
 * would drop it.
 */
#include "codec.h"

#include <stdlib.h>
#include <string.h>

#define ICC_TAG "ICC_PROFILE"
#define ICC_HEAD 14 /* "ICC_PROFILE\0", sequence number, chunk count */

#define SEG_MAX 65533 /* a segment's payload after its two length bytes */
#define ICC_CHUNK (SEG_MAX - ICC_HEAD)

void tsio_jpeg_meta_segments(const tsio_meta *meta, void (*put)(void *ctx, int marker,
                             const unsigned char *data, size_t len), void *ctx, char *notice,
                             size_t noticelen)
{
    unsigned char *seg;
    if (!meta)
        return;
    if (meta->exif && meta->exif_len) {
        if (meta->exif_len + 6 > SEG_MAX)
            tsio_add_notice(notice, noticelen, "EXIF dropped (over one JPEG segment)");
        else if ((seg = malloc(meta->exif_len + 6))) {
            memcpy(seg, "Exif\0\0", 6);
            memcpy(seg + 6, meta->exif, meta->exif_len);
            put(ctx, 0xE1, seg, meta->exif_len + 6);
            free(seg);
        }
    }
    size_t chunks = meta->icc && meta->icc_len ? (meta->icc_len + ICC_CHUNK - 1) / ICC_CHUNK : 0;
    if (chunks > 255) {
        tsio_add_notice(notice, noticelen,
                        "ICC profile dropped (over the 255 segments a JPEG can number)");
        return;
    }
    if (!chunks || !(seg = malloc(ICC_HEAD + ICC_CHUNK)))
        return;
    for (size_t c = 0; c < chunks; c++) {
        size_t at = c * ICC_CHUNK, len = meta->icc_len - at < ICC_CHUNK ? meta->icc_len - at
                                                                          : ICC_CHUNK;
        memcpy(seg, ICC_TAG, sizeof ICC_TAG); /* the tag and its NUL */
        seg[12] = (unsigned char)(c + 1);
        seg[13] = (unsigned char)chunks;
        memcpy(seg + ICC_HEAD, meta->icc + at, len);
        put(ctx, 0xE2, seg, ICC_HEAD + len);
    }
    free(seg);
}

/* Segments appended to a buffer sized for them. */
typedef struct seg_buf {
    unsigned char *p;
} seg_buf;

static void put_bytes(void *ctx, int marker, const unsigned char *data, size_t len)
{
    seg_buf *b = ctx;
    size_t seglen = 2 + len;
    *b->p++ = 0xFF;
    *b->p++ = (unsigned char)marker;
    *b->p++ = (unsigned char)(seglen >> 8);
    *b->p++ = (unsigned char)seglen;
    memcpy(b->p, data, len);
    b->p += len;
}

ts_status tsio_jpeg_add_meta(const unsigned char *jpg, size_t n, const tsio_meta *meta,
                             unsigned char **out, size_t *outn, char *notice, size_t noticelen)
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
    /* room for every segment the writer could put: EXIF and up to 255 ICC chunks */
    size_t room = (meta && meta->exif ? 4 + 6 + meta->exif_len : 0) +
                  (meta && meta->icc ? 255 * (4 + ICC_HEAD) + meta->icc_len : 0);
    unsigned char *o = malloc(n + room);
    if (!o)
        return TS_ERR_NOMEM;
    memcpy(o, jpg, keep);
    seg_buf b = {o + keep};
    tsio_jpeg_meta_segments(meta, put_bytes, &b, notice, noticelen);
    memcpy(b.p, jpg + keep, n - keep);
    b.p += n - keep;
    *out = o;
    *outn = (size_t)(b.p - o);
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

/* ---------------------------------------------------------------- structure */

int tsio_is_jpeg(const unsigned char *b, size_t len)
{
    return len >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF;
}

static ts_status unsound(char *why, size_t whylen, const char *what)
{
    if (why && whylen)
        snprintf(why, whylen, "%s", what);
    return TS_ERR_FORMAT;
}

ts_status tsio_jpeg_check(const unsigned char *b, size_t len, char *why, size_t whylen)
{
    if (!tsio_is_jpeg(b, len))
        return unsound(why, whylen, "not a JPEG");
    size_t i = 2;
    int scans = 0, frame = 0;
    for (;;) {
        while (i < len && b[i] != 0xFF) /* stray bytes between segments: libjpeg skips them */
            i++;
        while (i + 1 < len && b[i + 1] == 0xFF) /* fill bytes */
            i++;
        if (i + 1 >= len)
            return unsound(why, whylen, "truncated JPEG (no end of image)");
        unsigned m = b[i + 1];
        if (m == 0xD9)
            return scans ? TS_OK : unsound(why, whylen, "JPEG without a scan");
        if (m == 0x00 || m == 0x01 || (m >= 0xD0 && m <= 0xD7)) { /* no length */
            i += 2;
            continue;
        }
        if (len - i < 4)
            return unsound(why, whylen, "truncated JPEG (in a marker)");
        size_t seg = (size_t)b[i + 2] << 8 | b[i + 3];
        if (seg < 2 || seg > len - i - 2)
            return unsound(why, whylen, "truncated JPEG (a segment past the end)");
        frame |= m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
        i += 2 + seg;
        if (m != 0xDA)
            continue;
        if (!frame)
            return unsound(why, whylen, "corrupt JPEG (a scan before the frame header)");
        if (++scans > TSIO_JPEG_MAX_SCANS)
            return unsound(why, whylen, "more than " TSIO_STR(TSIO_JPEG_MAX_SCANS) " scans");
        /* the entropy-coded data, up to the marker after it; restarts in sequence */
        for (unsigned rst = 0;;) {
            const unsigned char *p = i < len ? memchr(b + i, 0xFF, len - i) : NULL;
            if (!p)
                return unsound(why, whylen, "truncated JPEG (in a scan)");
            i = (size_t)(p - b);
            while (i + 1 < len && b[i + 1] == 0xFF)
                i++;
            if (i + 1 >= len)
                return unsound(why, whylen, "truncated JPEG (in a scan)");
            unsigned c = b[i + 1];
            if (c == 0x00) { /* a stuffed 0xFF byte of data */
                i += 2;
                continue;
            }
            if (c >= 0xD0 && c <= 0xD7) {
                if (c != 0xD0 + rst)
                    return unsound(why, whylen, "corrupt JPEG (restart markers out of order)");
                rst = (rst + 1) & 7;
                i += 2;
                continue;
            }
            break; /* the next marker: back to the segment walk */
        }
    }
}
