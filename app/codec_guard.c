/* codec_guard.c - checks on TGA and PSD files before stb_image 2.27 decodes them (see
 * image_io.h), and the number of bytes worth reading for the image a header declares.
 *
 * stb reads past the end of the data as zeros, so a cut TGA or PSD came out with a black part
 * and no error: here the data the header promises must be in the file (walking RLE packets
 * where the image is run-length coded). stb's PSD loader also "removes the white matte" of an
 * image with alpha by converting (v - M) / a + M to an integer, which is undefined behaviour when
 * a colour lies below its alpha's matte (the result is negative): such a file is refused.
 */
#include "image_io.h"

#include <stdlib.h>
#include <string.h>

static unsigned le16(const unsigned char *p) { return p[0] | (unsigned)p[1] << 8; }
static unsigned be16(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }
static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
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

ts_status tsio_guard_tga(const unsigned char *b, size_t len, uint64_t max_pixels, char *err,
                         size_t errlen)
{
    tga_head t;
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

/* 1 when stb's matte removal would convert a value of -1 or less: a colour v under M - alpha,
 * by more than rounding (v' = M - (M - v) * M / alpha). */
static int under_matte(unsigned v, unsigned a, unsigned m)
{
    if (a == 0 || a == m)
        return 0;
    return 2 * (uint64_t)(m - v) * m > (uint64_t)(2 * m + 1) * a;
}

ts_status tsio_guard_psd(const unsigned char *b, size_t len, char *err, size_t errlen)
{
    psd_head p;
    int r = psd_parse(b, len, &p);
    if (r < 0)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated PSD");
    if (r == 0 || p.w == 0 || p.h == 0 || p.w > TS_MAX_DIM || p.h > TS_MAX_DIM)
        return TS_OK; /* stb refuses it, or the size limit does */
    uint64_t px = p.w * p.h;
    unsigned planes = p.channels < 4 ? p.channels : 4;
    int matte = p.channels >= 4;
    if (p.compression == 0) {
        unsigned sb = p.depth / 8, m = p.depth == 16 ? 65535 : 255;
        if (px * planes * sb > len - p.data)
            return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated PSD");
        const unsigned char *alpha = b + p.data + 3 * px * sb;
        for (uint64_t i = 0; matte && i < px; i++) {
            unsigned a = sb == 2 ? be16(alpha + 2 * i) : alpha[i];
            for (unsigned c = 0; c < 3; c++) {
                const unsigned char *s = b + p.data + (c * px + i) * sb;
                if (under_matte(sb == 2 ? be16(s) : s[0], a, m))
                    return tsio_fail(err, errlen, TS_ERR_FORMAT,
                                     "corrupt PSD (a colour under its alpha's white matte)");
            }
        }
        return TS_OK;
    }
    /* RLE: a table of row sizes, which stb skips, then each channel as one PackBits stream. */
    uint64_t table = p.h * p.channels * 2;
    if (table > len - p.data)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated PSD");
    size_t pos = p.data + (size_t)table;
    unsigned char *pix = matte ? malloc(px * 4) : NULL; /* stb decodes RLE as 8-bit RGBA */
    if (matte && !pix)
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory checking a PSD");
    ts_status st = TS_OK;
    for (unsigned c = 0; c < planes && st == TS_OK; c++) {
        r = psd_unpack(b, len, &pos, px, pix ? pix + c : NULL);
        if (r < 0)
            st = tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated PSD");
        else if (r == 0)
            st = tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt PSD (bad RLE data)");
    }
    for (uint64_t i = 0; st == TS_OK && pix && i < px; i++)
        for (unsigned c = 0; c < 3; c++)
            if (under_matte(pix[4 * i + c], pix[4 * i + 3], 255)) {
                st = tsio_fail(err, errlen, TS_ERR_FORMAT,
                               "corrupt PSD (a colour under its alpha's white matte)");
                break;
            }
    free(pix);
    return st;
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
