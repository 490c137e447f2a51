/* exif.c - see exif.h. Bounded readers of IFD0 and of an ICC profile's tag table. */
#include "exif.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TAG_ORIENTATION 0x0112
#define TYPE_SHORT 3
/* IFD0 of a camera holds a few dozen entries; more is a hostile block, not a photo. */
#define MAX_ENTRIES 1024

typedef struct tiff {
    const unsigned char *b;
    size_t len;
    int be; /* "MM": big-endian */
} tiff;

static unsigned rd16(const tiff *t, size_t at)
{
    const unsigned char *p = t->b + at;
    return t->be ? (unsigned)(p[0] << 8 | p[1]) : (unsigned)(p[1] << 8 | p[0]);
}

static uint32_t rd32(const tiff *t, size_t at)
{
    const unsigned char *p = t->b + at;
    return t->be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
                 : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static void wr16(unsigned char *p, int be, unsigned v)
{
    p[be ? 0 : 1] = (unsigned char)(v >> 8);
    p[be ? 1 : 0] = (unsigned char)v;
}

static void wr32(unsigned char *p, int be, uint32_t v)
{
    wr16(p + (be ? 2 : 0), be, v & 0xFFFF);
    wr16(p + (be ? 0 : 2), be, v >> 16);
}

/* Opens the header and IFD0: *ifd is its offset, *n its entry count, all of which (entries and
 * the next-IFD link) lie inside the block. 0 on success. */
static int open_ifd0(const unsigned char *b, size_t len, tiff *t, size_t *ifd, unsigned *n)
{
    if (len >= 6 && memcmp(b, "Exif\0\0", 6) == 0)
        b += 6, len -= 6;
    t->b = b;
    t->len = len;
    if (len < 8)
        return -1;
    if (memcmp(b, "II*\0", 4) == 0)
        t->be = 0;
    else if (memcmp(b, "MM\0*", 4) == 0)
        t->be = 1;
    else
        return -1;
    uint32_t off = rd32(t, 4);
    if (off < 8 || off > len || len - off < 2)
        return -1;
    *ifd = off;
    *n = rd16(t, off);
    if (*n > MAX_ENTRIES || (len - off - 2) / 12 < *n || len - off - 2 - 12 * (size_t)*n < 4)
        return -1;
    return 0;
}

/* Offset of the Orientation entry's value in IFD0, or 0 when there is none valid. */
static size_t orientation_at(const tiff *t, size_t ifd, unsigned n, int *value)
{
    for (unsigned i = 0; i < n; i++) {
        size_t e = ifd + 2 + 12 * (size_t)i;
        if (rd16(t, e) != TAG_ORIENTATION)
            continue;
        if (rd16(t, e + 2) != TYPE_SHORT || rd32(t, e + 4) != 1)
            return 0;
        unsigned v = rd16(t, e + 8);
        if (v < 1 || v > 8)
            return 0;
        *value = (int)v;
        return e + 8;
    }
    return 0;
}

int tsio_exif_valid(const unsigned char *exif, size_t len)
{
    tiff t;
    size_t ifd;
    unsigned n;
    return exif && open_ifd0(exif, len, &t, &ifd, &n) == 0;
}

int tsio_exif_orientation(const unsigned char *exif, size_t len)
{
    tiff t;
    size_t ifd;
    unsigned n;
    int v = 0;
    if (!exif || open_ifd0(exif, len, &t, &ifd, &n) != 0)
        return 0;
    return orientation_at(&t, ifd, n, &v) ? v : 0;
}

/* A copy of the block without its "Exif\0\0" prefix and without IFD1 (the thumbnail), with
 * Orientation set to 1 when `upright`. */
static unsigned char *copy_without_thumbnail(const unsigned char *exif, size_t len, int upright,
                                             size_t *out_len)
{
    tiff t;
    size_t ifd;
    unsigned n;
    int v = 0;
    *out_len = 0;
    if (!exif || open_ifd0(exif, len, &t, &ifd, &n) != 0)
        return NULL;
    unsigned char *c = malloc(t.len);
    if (!c)
        return NULL;
    memcpy(c, t.b, t.len);
    /* every Orientation entry to 1, not the first alone: of two entries, the second kept would
     * make a reader turn the upright pixels again */
    if (upright && orientation_at(&t, ifd, n, &v))
        for (unsigned i = 0; i < n; i++) {
            size_t e = ifd + 2 + 12 * (size_t)i;
            if (rd16(&t, e) != TAG_ORIENTATION)
                continue;
            wr16(c + e + 2, t.be, TYPE_SHORT);
            wr32(c + e + 4, t.be, 1);
            wr16(c + e + 8, t.be, 1);
            wr16(c + e + 10, t.be, 0);
        }
    memset(c + ifd + 2 + 12 * (size_t)n, 0, 4); /* no IFD1: the thumbnail is dropped */
    *out_len = t.len;
    return c;
}

unsigned char *tsio_exif_upright(const unsigned char *exif, size_t len, size_t *out_len)
{
    return copy_without_thumbnail(exif, len, 1, out_len);
}

unsigned char *tsio_exif_without_thumbnail(const unsigned char *exif, size_t len, size_t *out_len)
{
    return copy_without_thumbnail(exif, len, 0, out_len);
}

int tsio_exif_has_thumbnail(const unsigned char *exif, size_t len)
{
    tiff t;
    size_t ifd;
    unsigned n;
    return exif && open_ifd0(exif, len, &t, &ifd, &n) == 0 && rd32(&t, ifd + 2 + 12 * (size_t)n);
}

int tsio_exif_thumbnail(const unsigned char *exif, size_t len, size_t *off, size_t *thumb_len)
{
    tiff t;
    size_t ifd;
    unsigned n;
    if (!exif || open_ifd0(exif, len, &t, &ifd, &n) != 0)
        return 0;
    uint32_t ifd1 = rd32(&t, ifd + 2 + 12 * (size_t)n);
    if (ifd1 < 8 || ifd1 > t.len - 2)
        return 0;
    unsigned n1 = rd16(&t, ifd1);
    if (n1 > MAX_ENTRIES || (t.len - ifd1 - 2) / 12 < n1)
        return 0;
    uint32_t at = 0, size = 0;
    for (unsigned i = 0; i < n1; i++) { /* JPEGInterchangeFormat(Length): LONG x1 each */
        size_t e = ifd1 + 2 + 12 * (size_t)i;
        unsigned tag = rd16(&t, e);
        if ((tag == 0x0201 || tag == 0x0202) && rd16(&t, e + 2) == 4 && rd32(&t, e + 4) == 1)
            *(tag == 0x0201 ? &at : &size) = rd32(&t, e + 8);
    }
    if (at < 8 || size < 4 || at > t.len || t.len - at < size)
        return 0;
    *off = (size_t)(t.b - exif) + at;
    *thumb_len = size;
    return 1;
}

int tsio_jpeg_exif(const unsigned char *buf, size_t len, const unsigned char **exif,
                   size_t *exif_len, int *w, int *h)
{
    *exif = NULL;
    *exif_len = 0;
    *w = *h = 0;
    if (len < 4 || buf[0] != 0xFF || buf[1] != 0xD8)
        return -1;
    for (size_t i = 2; i + 4 <= len;) {
        if (buf[i] != 0xFF)
            return -1;
        unsigned m = buf[i + 1];
        if (m == 0xFF) { /* fill bytes */
            i++;
            continue;
        }
        size_t seg = (size_t)buf[i + 2] << 8 | buf[i + 3];
        if (m == 0xDA || m == 0xD9) /* the first scan (or the end): the header is over */
            return *w > 0 && *h > 0 ? 0 : -1;
        if (seg < 2 || seg > len - i - 2)
            return -1;
        const unsigned char *s = buf + i + 4;
        if (m == 0xE1 && !*exif && seg >= 8 && memcmp(s, "Exif\0\0", 6) == 0) {
            *exif = s;
            *exif_len = seg - 2;
        }
        /* SOF0..15 but DHT (C4), JPG (C8) and DAC (CC): precision, height, width */
        if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC && seg >= 7) {
            *h = s[1] << 8 | s[2];
            *w = s[3] << 8 | s[4];
        }
        i += 2 + seg;
    }
    return -1;
}

size_t tsio_exif_make(int o, unsigned char out[26])
{
    static const unsigned char head[] = {'I', 'I', 42, 0, 8, 0, 0, 0, /* IFD0 at 8 */
                                         1, 0,                          /* one entry */
                                         0x12, 0x01, 3, 0, 1, 0, 0, 0}; /* Orientation SHORT x1 */
    if (o < 1 || o > 8)
        return 0;
    memset(out, 0, 26);
    memcpy(out, head, sizeof head);
    out[18] = (unsigned char)o; /* value, then 2 pad bytes, then next-IFD 0 */
    return 26;
}

/* ---------------------------------------------------------------- ICC */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_ascii(char *out, size_t outlen, size_t *k, unsigned ch)
{
    if (*k + 1 < outlen)
        out[(*k)++] = (char)(ch >= 0x20 && ch < 0x7F ? ch : '?');
}

int tsio_icc_description(const unsigned char *icc, size_t len, char *out, size_t outlen)
{
    if (!out || !outlen)
        return 0;
    out[0] = '\0';
    if (!icc || len < 132)
        return 0;
    uint32_t count = be32(icc + 128);
    if (count > (len - 132) / 12)
        return 0;
    for (uint32_t i = 0; i < count; i++) {
        const unsigned char *e = icc + 132 + 12 * (size_t)i;
        if (memcmp(e, "desc", 4) != 0)
            continue;
        uint32_t off = be32(e + 4), size = be32(e + 8);
        if (off > len || size > len - off || size < 12)
            return 0;
        const unsigned char *d = icc + off;
        size_t k = 0;
        if (memcmp(d, "desc", 4) == 0) { /* v2: ASCII count, then the text with its NUL */
            uint32_t n = be32(d + 8);
            if (n > size - 12)
                n = size - 12;
            for (uint32_t j = 0; j < n && d[12 + j]; j++)
                put_ascii(out, outlen, &k, d[12 + j]);
        } else if (memcmp(d, "mluc", 4) == 0 && size >= 28) { /* v4: the first record */
            uint32_t rlen = be32(d + 20), roff = be32(d + 24);
            if (roff > size || rlen > size - roff)
                return 0;
            for (uint32_t j = 0; j + 1 < rlen; j += 2)
                put_ascii(out, outlen, &k, (unsigned)(d[roff + j] << 8 | d[roff + j + 1]));
        } else {
            return 0;
        }
        out[k] = '\0';
        return 1;
    }
    return 0;
}

int tsio_icc_is_non_srgb(const unsigned char *icc, size_t len)
{
    char d[256];
    if (!icc || !len)
        return 0;
    tsio_icc_description(icc, len, d, sizeof d);
    return strstr(d, "sRGB") == NULL;
}
