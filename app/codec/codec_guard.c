/* codec_guard.c - checks on BMP, GIF, PNM, TGA and PSD files before stb_image 2.27 decodes them
 * (see image_io.h), and the number of bytes worth reading for the image a header declares.
 *
 * stb reads past the end of the data as zeros, so a cut TGA or PSD came out with a black part
 * and no error: here the data the header promises must be in the file (walking RLE packets
 * where the image is run-length coded). stb's PSD loader also "removes the white matte" of an
 * image with alpha by converting M - (M - v) * M / a, computed in float, to an integer: undefined
 * behaviour when a colour lies under its alpha's matte (negative) and, in 16-bit with a small
 * alpha, when float rounding lands past 65535. So stb is given a copy of a PSD with alpha that
 * declares 3 channels (it never runs that code), and tessera removes the matte itself, with the
 * same float arithmetic, clamped to the sample range.
 */
#include "codec.h"
#include "photo_io.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static unsigned le16(const unsigned char *p) { return p[0] | (unsigned)p[1] << 8; }
static unsigned be16(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }
static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---------------------------------------------------------------- BMP, GIF, PNM */

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static int pnm_space(int c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

ts_status tsio_guard_pnm(const unsigned char *b, size_t len, tsio_pnm_head *ph, char *err,
                         size_t errlen)
{
    size_t pos = 2;
    int c = pos < len ? b[pos++] : 0;
    unsigned v[3];
    ph->comp = b[1] == '6' ? 3 : 1;
    for (int k = 0; k < 3; k++) {
        if (pos >= len)
            return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated PNM");
        for (;;) { /* whitespace and comments, as stbi__pnm_skip_whitespace */
            while (pos < len && pnm_space(c))
                c = b[pos++];
            if (pos >= len || c != '#')
                break;
            while (pos < len && c != '\n' && c != '\r')
                c = b[pos++];
        }
        v[k] = 0;
        while (pos < len && c >= '0' && c <= '9') {
            if (v[k] > (unsigned)INT_MAX / 10 - 1)
                return tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt PNM (number too large)");
            v[k] = v[k] * 10 + (unsigned)(c - '0');
            c = b[pos++];
        }
        if (c >= '0' && c <= '9') /* the file ends inside a number */
            return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated PNM");
    }
    ph->w = v[0], ph->h = v[1], ph->maxval = v[2], ph->data = pos;
    if (ph->maxval == 0 || ph->maxval > 65535)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt PNM (maxval %u)", ph->maxval);
    if (ph->w > TS_MAX_DIM || ph->h > TS_MAX_DIM)
        return TS_OK; /* refused with the size limit */
    uint64_t need = (uint64_t)ph->w * ph->h * ph->comp * (ph->maxval > 255 ? 2 : 1);
    if (need > len - pos)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated PNM");
    return TS_OK;
}

/* Uncompressed BMP rows that the file is too short to hold (stb would read zeros). */
ts_status tsio_guard_bmp(const unsigned char *b, size_t len, char *err, size_t errlen)
{
    if (len < 18)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated BMP");
    uint32_t off = le32(b + 10), hsz = le32(b + 14);
    if (hsz != 12 && hsz != 40 && hsz != 56 && hsz != 108 && hsz != 124)
        return TS_OK; /* not a header stb reads: stb refuses it */
    if (len < 14 + (size_t)hsz)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated BMP");
    int32_t w, h;
    unsigned bpp;
    uint32_t comp = 0;
    if (hsz == 12) { /* OS/2 1.x: 16-bit sizes, always stored rows (a fuzzer's 36-byte file
                        declared 256x63984) */
        w = (int32_t)le16(b + 18), h = (int32_t)le16(b + 20);
        bpp = le16(b + 24);
    } else {
        w = (int32_t)le32(b + 18), h = (int32_t)le32(b + 22);
        bpp = b[28] | (unsigned)b[29] << 8;
        comp = le32(b + 30);
    }
    /* stb refuses RLE (1, 2) and decodes every other compression value as stored rows (3 and 6
     * with bit masks), so those rows must be there (a fuzzer's 63-byte file declared 16 MP of
     * compression 0xffff0000) */
    if (w <= 0 || h == 0 || bpp == 0 || comp == 1 || comp == 2)
        return TS_OK;
    uint64_t start = off > 14 + (uint64_t)hsz ? off : 14 + (uint64_t)hsz;
    uint64_t row = ((uint64_t)w * bpp + 31) / 32 * 4;
    uint64_t rows = h < 0 ? (uint64_t)(-(int64_t)h) : (uint64_t)h;
    if (start > len || rows > (len - start) / row)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated BMP");
    return TS_OK;
}

/* Skips GIF data sub-blocks (length byte, bytes) up to the empty one; returns the index after it,
 * or 0 when the file ends first. */
static size_t gif_skip_blocks(const unsigned char *b, size_t len, size_t i)
{
    while (i < len && b[i] != 0)
        i += 1 + (size_t)b[i];
    return i < len ? i + 1 : 0;
}

/* The first frame must be complete: stb decodes a GIF cut inside it without complaint, the rest
 * of the picture left blank. Later frames are never read. */
ts_status tsio_guard_gif(const unsigned char *b, size_t len, char *err, size_t errlen)
{
    size_t i = 13; /* signature and logical screen descriptor */
    if (len >= 13 && (b[10] & 0x80))
        i += (size_t)3 << ((b[10] & 7) + 1); /* global colour table */
    while (i < len) {
        if (b[i] == 0x21) { /* extension: label, then sub-blocks */
            if (i + 2 > len || !(i = gif_skip_blocks(b, len, i + 2)))
                break;
        } else if (b[i] == 0x2C) { /* image: descriptor, local table, LZW size, sub-blocks */
            if (len - i < 11)
                break;
            size_t j = i + 10 + ((b[i + 9] & 0x80) ? (size_t)3 << ((b[i + 9] & 7) + 1) : 0);
            if (j >= len || !gif_skip_blocks(b, len, j + 1))
                break;
            return TS_OK;
        } else {
            return TS_OK; /* a trailer or junk: stb's call */
        }
    }
    return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated GIF");
}

static int at(const unsigned char *b, size_t len, size_t off, const char *s, size_t n)
{
    return len >= off + n && memcmp(b + off, s, n) == 0;
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

/* ---------------------------------------------------------------- TGA */

typedef struct tga_head {
    size_t data;      /* offset of the pixel data */
    uint64_t pixels;  /* w * h */
    unsigned pb;      /* bytes per stored pixel (or colour-map index) */
    int rle;
} tga_head;

/* 0 when the header is not one stb would decode (stb then decides, and refuses). */
static int tga_parse(const unsigned char *b, size_t len, tga_head *t)
{
    if (len < 18)
        return 0;
    unsigned type = b[2], bpp = b[16];
    if (!(type == 1 || type == 2 || type == 3 || type == 9 || type == 10 || type == 11))
        return 0;
    if (bpp != 8 && bpp != 15 && bpp != 16 && bpp != 24 && bpp != 32)
        return 0;
    unsigned cmap_entry = b[1] ? (b[7] == 15 ? 2 : (unsigned)(b[7] + 7) / 8) : 0;
    t->data = 18 + (size_t)b[0] + (size_t)le16(b + 5) * cmap_entry;
    t->pixels = (uint64_t)le16(b + 12) * le16(b + 14);
    t->pb = bpp == 15 ? 2 : bpp / 8;
    t->rle = type >= 9;
    return 1;
}

int tsio_tga_sniff(const unsigned char *b, size_t len)
{
    unsigned char head[18] = {0};
    tga_head t;
    if (len >= 18)
        return tga_parse(b, len, &t);
    memcpy(head, b, len); /* stb reads a header cut short as if zeros followed */
    return len >= 3 && tga_parse(head, 18, &t);
}

ts_status tsio_guard_tga(const unsigned char *b, size_t len, uint64_t max_pixels, char *err,
                         size_t errlen)
{
    tga_head t;
    if (len < 18) {
        /* stb reads a header cut short as if zeros followed: one it would decode is truncated
         * (a fuzzer's 17-byte file came out as a 14 MP black image) */
        unsigned char head[18] = {0};
        memcpy(head, b, len);
        if (tga_parse(head, 18, &t) && t.pixels > 0)
            return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated TGA");
        return TS_OK;
    }
    if (!tga_parse(b, len, &t) || t.pixels == 0 || t.pixels > max_pixels)
        return TS_OK; /* stb refuses it, or the pixel limit does */
    if (t.data > len)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated TGA");
    if (!t.rle) {
        if (t.pixels * t.pb > len - t.data)
            return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated TGA");
        return TS_OK;
    }
    /* RLE packets: a header byte, then one pixel (a run) or count pixels (literals). */
    size_t i = t.data;
    for (uint64_t done = 0; done < t.pixels;) {
        if (i >= len)
            return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated TGA");
        unsigned h = b[i++], count = (h & 127) + 1;
        size_t body = (size_t)t.pb * (h & 128 ? 1 : count);
        if (body > len - i)
            return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated TGA");
        i += body;
        done += count;
    }
    return TS_OK;
}

/* ---------------------------------------------------------------- PSD */

typedef struct psd_head {
    unsigned channels, depth, compression;
    uint64_t w, h;
    size_t data; /* offset after the compression field */
} psd_head;

/* 0: not a header stb decodes (it refuses it itself); -1: cut before the image data. */
static int psd_parse(const unsigned char *b, size_t len, psd_head *p)
{
    if (len < 26)
        return -1;
    p->channels = be16(b + 12);
    p->h = be32(b + 14);
    p->w = be32(b + 18);
    p->depth = be16(b + 22);
    if (be16(b + 4) != 1 || p->channels > 16 || (p->depth != 8 && p->depth != 16) ||
        be16(b + 24) != 3)
        return 0;
    size_t i = 26;
    for (int s = 0; s < 3; s++) { /* colour mode data, image resources, layers and masks */
        if (len - i < 4)
            return -1;
        uint32_t n = be32(b + i);
        i += 4;
        if (n > len - i)
            return -1;
        i += n;
    }
    if (len - i < 2)
        return -1;
    p->compression = be16(b + i);
    p->data = i + 2;
    return p->compression <= 1 ? 1 : 0;
}

/* PackBits as stb reads it: one channel of n samples into out (every 4th byte when out). */
static int psd_unpack(const unsigned char *b, size_t len, size_t *pos, uint64_t n,
                      unsigned char *out)
{
    size_t i = *pos;
    for (uint64_t count = 0; count < n;) {
        if (i >= len)
            return -1;
        unsigned c = b[i++];
        if (c == 128)
            continue;
        uint64_t run = c < 128 ? c + 1u : 257u - c;
        if (run > n - count)
            return 0; /* stb: "bad RLE data" */
        if (c < 128) {
            if (run > len - i)
                return -1;
            if (out)
                for (uint64_t k = 0; k < run; k++)
                    out[(count + k) * 4] = b[i + k];
            i += run;
        } else {
            if (i >= len)
                return -1;
            if (out)
                for (uint64_t k = 0; k < run; k++)
                    out[(count + k) * 4] = b[i];
            i++;
        }
        count += run;
    }
    *pos = i;
    return 1;
}

ts_status tsio_guard_psd(const unsigned char *b, size_t len, tsio_psd_alpha *pa, char *err,
                         size_t errlen)
{
    psd_head p;
    memset(pa, 0, sizeof *pa);
    int r = psd_parse(b, len, &p);
    if (r < 0)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated PSD");
    if (r == 0 || p.w == 0 || p.h == 0 || p.w > TS_MAX_DIM || p.h > TS_MAX_DIM)
        return TS_OK; /* stb refuses it, or the size limit does */
    uint64_t px = p.w * p.h;
    unsigned planes = p.channels < 4 ? p.channels : 4;
    if (p.compression == 0) {
        unsigned sb = p.depth / 8;
        if (px * planes * sb > len - p.data)
            return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated PSD");
        if (planes == 4) {
            pa->raw = b + p.data + 3 * px * sb;
            pa->raw16 = sb == 2;
        }
    } else {
        /* RLE: a table of row sizes, which stb skips, then each channel as one PackBits
         * stream; stb decodes them as 8-bit samples whatever the depth. */
        uint64_t table = p.h * p.channels * 2;
        if (table > len - p.data)
            return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated PSD");
        size_t pos = p.data + (size_t)table;
        for (unsigned c = 0; c < planes; c++) {
            unsigned char *out = NULL;
            if (c == 3 && !(out = pa->plane = calloc(px, 4)))
                return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory reading a PSD");
            r = psd_unpack(b, len, &pos, px, out);
            if (r <= 0) {
                free(pa->plane);
                pa->plane = NULL;
                return tsio_fail(err, errlen, TS_ERR_FORMAT,
                                 r < 0 ? "truncated PSD" : "corrupt PSD (bad RLE data)");
            }
        }
    }
    if (planes < 4)
        return TS_OK;
    /* The copy stb reads: channel count 3 and, for RLE, a row-size table of 3 channels. */
    size_t keep = p.compression ? (size_t)(p.h * 3 * 2) : 0, drop = p.compression ? (size_t)(p.h * (p.channels - 3) * 2) : 0;
    pa->copy_len = len - drop;
    if (!(pa->copy = malloc(pa->copy_len))) {
        free(pa->plane);
        memset(pa, 0, sizeof *pa);
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory reading a PSD");
    }
    memcpy(pa->copy, b, p.data + keep);
    memcpy(pa->copy + p.data + keep, b + p.data + keep + drop, len - p.data - keep - drop);
    pa->copy[12] = 0, pa->copy[13] = 3;
    pa->active = 1;
    return TS_OK;
}

void tsio_psd_alpha_free(tsio_psd_alpha *pa)
{
    free(pa->copy);
    free(pa->plane);
    memset(pa, 0, sizeof *pa);
}

/* stb's matte removal for one colour sample, in its float arithmetic, clamped to 0..m. */
static unsigned unmatte(unsigned v, unsigned a, float m)
{
    float fa = (float)a / m, ra = 1.0f / fa, inv = m * (1 - ra);
    float r = (float)v * ra + inv;
    return r <= 0.0f ? 0u : r >= m ? (unsigned)m : (unsigned)r;
}

void tsio_psd_unmatte(ts_image *im, const tsio_psd_alpha *pa)
{
    /* stb's output: RGBA, 16-bit for raw 16-bit data, else 8-bit (widened by 257 when the
     * header said 16-bit). Alpha was filled opaque; it becomes the file's. */
    size_t px = (size_t)im->width * (size_t)im->height;
    int wide = im->bytes == 2 && !pa->raw16; /* 8-bit values times 257 */
    unsigned m = pa->raw16 ? 65535 : 255;
    for (size_t i = 0; i < px; i++) {
        unsigned a = pa->raw ? (pa->raw16 ? be16(pa->raw + 2 * i) : pa->raw[i]) : pa->plane[4 * i];
        if (im->bytes == 2) {
            uint16_t *q = (uint16_t *)im->data + 4 * i;
            for (int c = 0; c < 3 && a != 0 && a != m; c++)
                q[c] = (uint16_t)(wide ? unmatte(q[c] / 257, a, 255.0f) * 257
                                       : unmatte(q[c], a, 65535.0f));
            q[3] = (uint16_t)(wide ? a * 257 : a);
        } else {
            unsigned char *q = (unsigned char *)im->data + 4 * i;
            for (int c = 0; c < 3 && a != 0 && a != m; c++)
                q[c] = (unsigned char)unmatte(q[c], a, 255.0f);
            q[3] = (unsigned char)a;
        }
    }
}

/* ---------------------------------------------------------------- read sizes */

size_t tsio_tga_bytes(const unsigned char *b, size_t len, uint64_t max_pixels, size_t cap)
{
    /* Nothing after a TGA's pixels is read (its optional footer and extension area carry no
     * pixels): the header's size bounds the bytes, run-length packets at worst one header byte
     * a pixel. */
    tga_head t;
    if (!tga_parse(b, len, &t))
        return cap;
    if (t.pixels > max_pixels)
        return len; /* refused from the header alone */
    uint64_t need = t.data + t.pixels * (t.pb + (t.rle ? 1 : 0));
    return need < cap ? (size_t)need : cap;
}
