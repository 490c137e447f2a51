/* codec_tiff_write.c - TIFF writing: 8 or 16-bit gray, gray+alpha, RGB, RGBA, Deflate with the
 * horizontal predictor, the ICC profile and the EXIF block kept.
 *
 * Written here rather than through libtiff because of the EXIF block: a TIFF holds EXIF as tags of
 * its own first IFD (Make, Model, DateTime, ...) plus an EXIF sub-IFD, and libtiff writes a
 * sub-IFD only through its custom-directory API, which needs each tag re-declared with its type
 * and drops the ones it does not know. Here the output takes the block's byte order, so every
 * entry is copied as it is, with only the offsets of values and sub-IFDs (EXIF, GPS, interop)
 * moved. The image part is classic TIFF: one IFD, contiguous samples, strips of about 64 KB
 * compressed by libdeflate (zlib format, TIFF compression 8), alpha as unassociated extra sample.
 * The file is built in memory (the compressed strips, as the PNG writer holds the filtered image)
 * and written in one pass; libtiff reads it back in tests/test_formats.c, as does Pillow.
 */
#include "photo_io.h"

#include <errno.h>
#include <libdeflate.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { T_BYTE = 1, T_ASCII, T_SHORT, T_LONG, T_RATIONAL, T_SBYTE, T_UNDEFINED, T_SSHORT, T_SLONG,
       T_SRATIONAL, T_FLOAT, T_DOUBLE, T_IFD };
#define MAX_ENTRIES 1024 /* per IFD, as the EXIF reader allows */
#define STRIP_BYTES 65536
#define TAG_EXIF_IFD 34665
#define TAG_GPS_IFD 34853
#define TAG_INTEROP_IFD 40965

typedef struct buf {
    unsigned char *b;
    size_t len, cap;
    int be, oom;
} buf;

static void grow(buf *o, size_t n)
{
    if (o->oom || o->len + n <= o->cap)
        return;
    size_t cap = o->cap ? o->cap : 4096;
    while (cap < o->len + n && cap < SIZE_MAX / 2)
        cap *= 2;
    unsigned char *b = cap >= o->len + n ? realloc(o->b, cap) : NULL;
    if (!b) {
        o->oom = 1;
        return;
    }
    o->b = b;
    o->cap = cap;
}

static void put(buf *o, const void *p, size_t n)
{
    grow(o, n);
    if (!o->oom) {
        memcpy(o->b + o->len, p, n);
        o->len += n;
    }
}

static void enc16(int be, unsigned char *p, unsigned v)
{
    p[be ? 0 : 1] = (unsigned char)(v >> 8);
    p[be ? 1 : 0] = (unsigned char)v;
}

static void enc32(int be, unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[be ? 3 - i : i] = (unsigned char)(v >> (8 * i));
}

static unsigned dec16(int be, const unsigned char *p)
{
    return be ? (unsigned)(p[0] << 8 | p[1]) : (unsigned)(p[1] << 8 | p[0]);
}

static uint32_t dec32(int be, const unsigned char *p)
{
    return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
              : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static size_t type_size(unsigned t)
{
    static const unsigned char size[] = {0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8, 4};
    return t < sizeof size ? size[t] : 0;
}

/* An IFD entry being built: the value inline (<= 4 bytes) or `data` to place after the IFD. */
typedef struct entry {
    unsigned tag, type;
    uint32_t count;
    unsigned char inl[4];
    const unsigned char *data; /* NULL: inline */
    size_t size;
} entry;

typedef struct ifd {
    entry e[MAX_ENTRIES + 32];
    int n;
} ifd;

static int has_tag(const ifd *d, unsigned tag)
{
    for (int i = 0; i < d->n; i++)
        if (d->e[i].tag == tag)
            return 1;
    return 0;
}

static entry *add(ifd *d, unsigned tag, unsigned type, uint32_t count)
{
    if (has_tag(d, tag) || d->n == (int)(sizeof d->e / sizeof d->e[0]))
        return NULL;
    entry *e = &d->e[d->n++];
    memset(e, 0, sizeof *e);
    e->tag = tag, e->type = type, e->count = count;
    return e;
}

static void add_short(ifd *d, int be, unsigned tag, unsigned v)
{
    entry *e = add(d, tag, T_SHORT, 1);
    if (e)
        enc16(be, e->inl, v);
}

static void add_long(ifd *d, int be, unsigned tag, uint32_t v)
{
    entry *e = add(d, tag, T_LONG, 1);
    if (e)
        enc32(be, e->inl, v);
}

static void add_data(ifd *d, unsigned tag, unsigned type, uint32_t count, const unsigned char *p,
                     size_t size)
{
    entry *e = add(d, tag, type, count);
    if (!e)
        return;
    if (size <= 4)
        memcpy(e->inl, p, size);
    else
        e->data = p, e->size = size;
}

static int cmp_entry(const void *a, const void *b)
{
    return (int)((const entry *)a)->tag - (int)((const entry *)b)->tag;
}

/* Writes an IFD (entries sorted, then their data, word-aligned) at the end of `o`; returns its
 * offset, 0 when the file passed 4 GiB (classic TIFF's offsets). */
static uint32_t write_ifd(buf *o, ifd *d)
{
    if (o->len & 1)
        put(o, "", 1);
    qsort(d->e, (size_t)d->n, sizeof d->e[0], cmp_entry);
    size_t at = o->len, data = at + 2 + 12 * (size_t)d->n + 4;
    unsigned char b[12];
    enc16(o->be, b, (unsigned)d->n);
    put(o, b, 2);
    for (int i = 0; i < d->n; i++) {
        entry *e = &d->e[i];
        enc16(o->be, b, e->tag);
        enc16(o->be, b + 2, e->type);
        enc32(o->be, b + 4, e->count);
        if (e->data) {
            enc32(o->be, b + 8, (uint32_t)data);
            data += e->size + (e->size & 1);
        } else {
            memcpy(b + 8, e->inl, 4);
        }
        put(o, b, 12);
    }
    put(o, "\0\0\0\0", 4); /* no next IFD */
    for (int i = 0; i < d->n; i++)
        if (d->e[i].data) {
            put(o, d->e[i].data, d->e[i].size);
            if (d->e[i].size & 1)
                put(o, "", 1);
        }
    return data > UINT32_MAX ? 0 : (uint32_t)at;
}

/* ---------------------------------------------------------------- the EXIF block */

typedef struct src {
    const unsigned char *b;
    size_t len;
    int be;
} src;

/* Tags of the block's IFD0 that describe the stored image (its thumbnail's or the camera file's
 * layout, not ours): never copied. */
static int structural(unsigned tag)
{
    return (tag >= 254 && tag <= 259) || tag == 262 || tag == 263 || tag == 266 ||
           tag == 273 || (tag >= 277 && tag <= 281) || tag == 284 || tag == 317 ||
           tag == 320 || (tag >= 322 && tag <= 325) || tag == 330 || tag == 338 || tag == 339 ||
           (tag >= 513 && tag <= 532) || tag == 34675;
}

static uint32_t copy_sub_ifd(buf *o, const src *s, uint32_t off, int depth);

/* Adds the entries of the block's IFD at `off` to `d` (values point into the block; sub-IFD
 * pointers are copied first and point to the copies). Entries with a bad type, size or offset are
 * left out. */
static void copy_entries(buf *o, const src *s, uint32_t off, ifd *d, int top, int depth)
{
    if (off < 8 || off > s->len || s->len - off < 2)
        return;
    unsigned n = dec16(s->be, s->b + off);
    if (n > MAX_ENTRIES || (s->len - off - 2) / 12 < n)
        return;
    for (unsigned i = 0; i < n; i++) {
        const unsigned char *e = s->b + off + 2 + 12 * (size_t)i;
        unsigned tag = dec16(s->be, e), type = dec16(s->be, e + 2);
        uint32_t count = dec32(s->be, e + 4);
        size_t ts = type_size(type);
        if ((top && structural(tag)) || !ts || count > (1u << 24) || has_tag(d, tag))
            continue;
        size_t size = ts * count;
        if (tag == TAG_EXIF_IFD || tag == TAG_GPS_IFD || tag == TAG_INTEROP_IFD) {
            if (count != 1 || (type != T_LONG && type != T_IFD) || depth >= 2)
                continue;
            uint32_t sub = copy_sub_ifd(o, s, dec32(s->be, e + 8), depth + 1);
            if (sub)
                add_long(d, s->be, tag, sub);
            continue;
        }
        if (size <= 4) {
            add_data(d, tag, type, count, e + 8, 4);
            continue;
        }
        uint32_t at = dec32(s->be, e + 8);
        if (at > s->len || s->len - at < size)
            continue;
        add_data(d, tag, type, count, s->b + at, size);
    }
}

static uint32_t copy_sub_ifd(buf *o, const src *s, uint32_t off, int depth)
{
    ifd *d = calloc(1, sizeof *d);
    if (!d) {
        o->oom = 1;
        return 0;
    }
    copy_entries(o, s, off, d, 0, depth);
    uint32_t at = d->n ? write_ifd(o, d) : 0;
    free(d);
    return at;
}

/* The block's header: 1 and its IFD0 offset when well-formed. */
static int open_block(const tsio_meta *meta, src *s, uint32_t *ifd0)
{
    if (!meta || !meta->exif || meta->exif_len < 8)
        return 0;
    s->b = meta->exif, s->len = meta->exif_len;
    if (s->len >= 6 && memcmp(s->b, "Exif\0\0", 6) == 0)
        s->b += 6, s->len -= 6;
    if (s->len < 8 || s->len > UINT32_MAX)
        return 0;
    if (memcmp(s->b, "II*\0", 4) == 0)
        s->be = 0;
    else if (memcmp(s->b, "MM\0*", 4) == 0)
        s->be = 1;
    else
        return 0;
    *ifd0 = dec32(s->be, s->b + 4);
    return 1;
}

/* ---------------------------------------------------------------- pixels */

/* Rows y0..y0+rows of the image as TIFF samples in the file's byte order, each row differenced
 * (predictor 2: every sample minus the same channel's sample to its left, modulo 2^bits). */
static void predict_rows(const ts_image *im, int y0, int rows, int be, unsigned char *dst)
{
    int ch = im->channels;
    size_t rowlen = (size_t)im->width * (size_t)ch;
    for (int y = y0; y < y0 + rows; y++) {
        const unsigned char *row = (const unsigned char *)im->data + (size_t)y * im->pitch;
        if (im->bytes == 1) {
            for (size_t i = 0; i < rowlen; i++)
                dst[i] = (unsigned char)(row[i] - (i >= (size_t)ch ? row[i - (size_t)ch] : 0));
            dst += rowlen;
        } else {
            const uint16_t *r = (const uint16_t *)(const void *)row;
            for (size_t i = 0; i < rowlen; i++)
                enc16(be, dst + 2 * i, (uint16_t)(r[i] - (i >= (size_t)ch ? r[i - (size_t)ch] : 0)));
            dst += 2 * rowlen;
        }
    }
}

ts_status tsio_tiff_encode(FILE *f, const ts_image *im, const tsio_meta *meta, char *err,
                           size_t errlen)
{
    src s = {0};
    uint32_t block_ifd0 = 0;
    int have_exif = open_block(meta, &s, &block_ifd0);
    buf o = {.be = have_exif ? s.be : 0};
    size_t rowlen = (size_t)im->width * (size_t)im->channels * (size_t)im->bytes;
    int rps = rowlen >= STRIP_BYTES ? 1 : (int)(STRIP_BYTES / rowlen);
    if (rps > im->height)
        rps = im->height;
    uint32_t strips = (uint32_t)((im->height + rps - 1) / rps);
    uint32_t *offs = malloc(2 * (size_t)strips * sizeof *offs);
    unsigned char *raw = malloc(rowlen * (size_t)rps);
    struct libdeflate_compressor *z = libdeflate_alloc_compressor(6);
    ifd *d = calloc(1, sizeof *d);
    size_t zcap = libdeflate_zlib_compress_bound(NULL, rowlen * (size_t)rps);
    unsigned char *zb = malloc(zcap);
    ts_status st = TS_OK;
    if (!offs || !raw || !z || !d || !zb) {
        st = tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory writing TIFF");
        goto done;
    }
    uint32_t *counts = offs + strips;
    unsigned char head[8] = {0};
    memcpy(head, o.be ? "MM\0*" : "II*\0", 4);
    put(&o, head, 8); /* IFD0's offset is patched in at the end */
    for (uint32_t k = 0; k < strips && !o.oom; k++) {
        int y0 = (int)k * rps, rows = im->height - y0 < rps ? im->height - y0 : rps;
        predict_rows(im, y0, rows, o.be, raw);
        size_t n = libdeflate_zlib_compress(z, raw, rowlen * (size_t)rows, zb, zcap);
        if (!n || o.len > UINT32_MAX - n) {
            st = tsio_fail(err, errlen, TS_ERR_TOO_LARGE, "image is %dx%d, too large for TIFF",
                           im->width, im->height);
            goto done;
        }
        offs[k] = (uint32_t)o.len;
        counts[k] = (uint32_t)n;
        put(&o, zb, n);
    }
    /* IFD0: the image's tags, then what the EXIF block's IFD0 adds (its sub-IFDs first) */
    int ch = im->channels, gray = ch <= 2;
    unsigned char bps[8], extra[2], ofs_bytes[8], cnt_bytes[8];
    add_long(d, o.be, 256, (uint32_t)im->width);
    add_long(d, o.be, 257, (uint32_t)im->height);
    for (int c = 0; c < ch; c++)
        enc16(o.be, bps + 2 * c, 8u * (unsigned)im->bytes);
    add_data(d, 258, T_SHORT, (uint32_t)ch, bps, 2 * (size_t)ch);
    add_short(d, o.be, 259, 8); /* Deflate (zlib) */
    add_short(d, o.be, 262, gray ? 1 : 2); /* BlackIsZero or RGB */
    add_short(d, o.be, 277, (unsigned)ch);
    add_long(d, o.be, 278, (uint32_t)rps);
    add_short(d, o.be, 284, 1); /* contiguous */
    add_short(d, o.be, 317, 2); /* horizontal predictor */
    if (ts_has_alpha(ch)) {
        enc16(o.be, extra, 2); /* unassociated alpha */
        add_data(d, 338, T_SHORT, 1, extra, 2);
    }
    /* the strip tables: LONG arrays in the file's byte order, converted in place */
    if (strips == 1) {
        enc32(o.be, ofs_bytes, offs[0]);
        enc32(o.be, cnt_bytes, counts[0]);
        add_data(d, 273, T_LONG, 1, ofs_bytes, 4);
        add_data(d, 279, T_LONG, 1, cnt_bytes, 4);
    } else {
        for (uint32_t k = 0; k < 2 * strips; k++)
            enc32(o.be, (unsigned char *)&offs[k], offs[k]);
        add_data(d, 273, T_LONG, strips, (const unsigned char *)offs, 4 * (size_t)strips);
        add_data(d, 279, T_LONG, strips, (const unsigned char *)counts, 4 * (size_t)strips);
    }
    if (meta && meta->icc && meta->icc_len && meta->icc_len <= UINT32_MAX)
        add_data(d, 34675, T_UNDEFINED, (uint32_t)meta->icc_len, meta->icc, meta->icc_len);
    if (have_exif)
        copy_entries(&o, &s, block_ifd0, d, 1, 0);
    /* baseline TIFF's resolution, 72 dpi as cameras write it, unless the block gave its own */
    static const unsigned char r72_be[8] = {0, 0, 0, 72, 0, 0, 0, 1},
                               r72_le[8] = {72, 0, 0, 0, 1, 0, 0, 0};
    add_data(d, 282, T_RATIONAL, 1, o.be ? r72_be : r72_le, 8);
    add_data(d, 283, T_RATIONAL, 1, o.be ? r72_be : r72_le, 8);
    add_short(d, o.be, 296, 2); /* inches */
    uint32_t at = write_ifd(&o, d);
    if (o.oom) {
        st = tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory writing TIFF");
        goto done;
    }
    if (!at) {
        st = tsio_fail(err, errlen, TS_ERR_TOO_LARGE, "image is %dx%d, too large for TIFF",
                       im->width, im->height);
        goto done;
    }
    enc32(o.be, o.b + 4, at);
    errno = 0;
    if (fwrite(o.b, 1, o.len, f) != o.len) {
        char eb[128];
        st = tsio_fail(err, errlen, TS_ERR_IO, "write failed: %s",
                       tsio_errtext(errno ? errno : EIO, eb, sizeof eb));
    }
done:
    free(o.b);
    free(offs);
    free(raw);
    free(zb);
    free(d);
    if (z)
        libdeflate_free_compressor(z);
    return st;
}
