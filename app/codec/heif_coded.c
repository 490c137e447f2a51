/* heif_coded.c - the checks of a HEIF/AVIF file that tessera makes itself, before libheif: every
 * box fits its parent (libheif 1.15 sizes its buffers by a box's declared size: a 200-byte file
 * whose 'idat' said 4 GB made it allocate 4 GB, fuzz_heif), and the size each coded picture gives
 * itself in its own bitstream against the size the container gives it.
 *
 * The decoders allocate their pictures by the bitstream's header, not by the container's: libde265
 * by the HEVC sequence parameter set (SPS), dav1d by the AV1 sequence header (and, with
 * frame_size_override, by any size its bit widths allow). A 304-byte AVIF whose 'ispe' says 16x12
 * and whose sequence header says far more made dav1d 1.0 allocate 649 MB for one frame (fuzz_heif,
 * CI: 2.2 GB over the fuzzer's limit). So for every item coded as HEVC ('hvc1') or AV1 ('av01'):
 * the primary, a grid's tiles, alpha planes, thumbnails:
 *   - its data (the extents of 'iloc', in the file or in 'idat') is read as libheif reads it: the
 *     NAL units of 'hvcC' then the item's 4-byte-length NAL units (HEVC), or the OBUs of 'av1C'
 *     then the item's OBUs (AV1); each SPS or sequence header found gives a coded size, and the
 *     largest frame an AV1 header allows is 2^bits on a side;
 *   - that size may exceed the item's own 'ispe' (the primary image's size where it has none) by
 *     at most 2x + 64 on a side: HEVC pads to its coding blocks (up to 64), AV1 encoders write the
 *     fewest bits that hold the size (libaom: the highest bit of width - 1), under 2x the size;
 *   - an item's extents may not add up to more than the file (or 'idat') holds, nor all coded
 *     items' together: a valid file stores each byte once, libheif allocates an item's sum, and
 *     this check reads each (thousands of 'iloc' entries naming the whole file would read it
 *     thousands of times);
 *   - an HEVC item holds one picture (slices that start a picture), an AV1 item at most 4 frames
 *     (frame and frame header OBUs): the decoders decode every picture they are given (a
 *     2048x2048 HEIC holding its slice 40 times took 1.04 s against 0.25 s).
 * Pure parsing, no library: decoded by nothing, bounded by the file (each step moves on).
 */
#include "photo_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rd(const unsigned char *p, int n) /* n big-endian bytes, n <= 4 */
{
    uint32_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* ---------------------------------------------------------------- boxes */

typedef struct {
    const unsigned char *b;
    size_t pos, end;
} box_iter;

/* The next box of [pos, end): its type, and its body as [*body, *bend). 0 at the end or where a
 * box does not fit its parent. */
static int box_next(box_iter *it, const unsigned char **type, size_t *body, size_t *bend)
{
    if (it->pos >= it->end || it->end - it->pos < 8)
        return 0;
    const unsigned char *p = it->b + it->pos;
    uint64_t size = rd(p, 4);
    size_t head = 8;
    if (size == 1) {
        if (it->end - it->pos < 16)
            return 0;
        size = (uint64_t)rd(p + 8, 4) << 32 | rd(p + 12, 4);
        head = 16;
    } else if (size == 0) {
        size = it->end - it->pos;
    }
    if (size < head || size > it->end - it->pos)
        return 0;
    *type = p + 4;
    *body = it->pos + head;
    *bend = it->pos + (size_t)size;
    it->pos = *bend;
    return 1;
}

static int is4(const unsigned char *t, const char *s) { return memcmp(t, s, 4) == 0; }

/* 1 when every box of [start, end) fits in its parent, down to the item boxes in 'meta' and the
 * property boxes in 'iprp'/'ipco' (and 'dinf'); depth bounded. *ispe_max: the largest width x
 * height any 'ispe' declares. */
static int boxes_fit(const unsigned char *b, size_t start, size_t end, int depth,
                     uint64_t *ispe_max)
{
    box_iter it = {b, start, end};
    const unsigned char *t;
    size_t body, bend;
    while (box_next(&it, &t, &body, &bend)) {
        if (is4(t, "ispe") && bend - body >= 12) { /* version and flags, width, height */
            uint64_t area = (uint64_t)rd(b + body + 4, 4) * rd(b + body + 8, 4);
            *ispe_max = area > *ispe_max ? area : *ispe_max;
        }
        int parent = is4(t, "meta") || is4(t, "iprp") || is4(t, "ipco") || is4(t, "dinf");
        size_t kids = is4(t, "meta") ? 4 : 0; /* 'meta' is a full box: version and flags */
        if (parent && depth < 3 &&
            (bend - body < kids || !boxes_fit(b, body + kids, bend, depth + 1, ispe_max)))
            return 0;
    }
    return it.pos == end; /* else a box ran past its parent */
}

int tsio_heif_boxes_fit(const unsigned char *buf, size_t len, uint64_t *ispe_max)
{
    *ispe_max = 0;
    return boxes_fit(buf, 0, len, 0, ispe_max);
}

/* ---------------------------------------------------------------- bitstreams */

typedef struct {
    const unsigned char *p;
    size_t nbits, pos;
    int over; /* read past the end */
} bits;

static uint32_t getb(bits *g, int n)
{
    uint32_t v = 0;
    for (int i = 0; i < n; i++) {
        if (g->pos >= g->nbits) {
            g->over = 1;
            return 0;
        }
        v = v << 1 | ((g->p[g->pos >> 3] >> (7 - (g->pos & 7))) & 1);
        g->pos++;
    }
    return v;
}

static uint32_t getue(bits *g) /* Exp-Golomb, as HEVC codes it */
{
    int zeros = 0;
    while (!g->over && getb(g, 1) == 0)
        if (++zeros > 31) {
            g->over = 1;
            return 0;
        }
    return zeros ? (uint32_t)((1ull << zeros) - 1 + getb(g, zeros)) : 0;
}

/* An HEVC SPS (NAL unit type 33, header included): its luma size, 0 if it cannot be read (then
 * libde265 cannot read it either and keeps no picture size from it). */
static int hevc_sps_size(const unsigned char *nal, size_t n, uint64_t *w, uint64_t *h)
{
    unsigned char rbsp[192]; /* the size comes within 2 + 1 + 12 + 7 * 12 + 16 bytes */
    size_t k = 0, zeros = 0;
    for (size_t i = 2; i < n && k < sizeof rbsp; i++) { /* drop emulation prevention bytes */
        if (zeros >= 2 && nal[i] == 3) {
            zeros = 0;
            continue;
        }
        zeros = nal[i] == 0 ? zeros + 1 : 0;
        rbsp[k++] = nal[i];
    }
    bits g = {rbsp, k * 8, 0, 0};
    getb(&g, 4);                  /* sps_video_parameter_set_id */
    uint32_t sub = getb(&g, 3);   /* sps_max_sub_layers_minus1 */
    getb(&g, 1);                  /* temporal_id_nesting */
    getb(&g, 32), getb(&g, 32);   /* general profile: space, tier, idc (8 bits), compatibility */
    getb(&g, 24), getb(&g, 8);    /* flags (32), constraint flags (48), general_level_idc (8) */
    uint32_t prof[8] = {0}, lev[8] = {0};
    for (uint32_t i = 0; i < sub; i++)
        prof[i] = getb(&g, 1), lev[i] = getb(&g, 1);
    if (sub > 0)
        for (uint32_t i = sub; i < 8; i++)
            getb(&g, 2);
    for (uint32_t i = 0; i < sub; i++) {
        if (prof[i])
            getb(&g, 32), getb(&g, 32), getb(&g, 24);
        if (lev[i])
            getb(&g, 8);
    }
    getue(&g);                    /* sps_seq_parameter_set_id */
    if (getue(&g) == 3)           /* chroma_format_idc */
        getb(&g, 1);              /* separate_colour_plane_flag */
    *w = getue(&g);
    *h = getue(&g);
    return !g.over;
}

/* An AV1 sequence header OBU's payload: the largest frame it allows, 0 if it cannot be read. A
 * frame header may override the size with any value of width_bits x height_bits bits (dav1d 1.0
 * takes it unchecked), so that is the bound: 2^bits on a side. */
static int av1_seq_size(const unsigned char *p, size_t n, uint64_t *w, uint64_t *h)
{
    bits g = {p, n * 8, 0, 0};
    getb(&g, 3);                        /* seq_profile */
    getb(&g, 1);                        /* still_picture */
    if (getb(&g, 1)) {                  /* reduced_still_picture_header */
        getb(&g, 5);                    /* seq_level_idx[0] */
    } else {
        int dmi = 0, delay_len = 0;
        if (getb(&g, 1)) {              /* timing_info_present_flag */
            getb(&g, 32), getb(&g, 32); /* num_units_in_display_tick, time_scale */
            if (getb(&g, 1)) {          /* equal_picture_interval: num_ticks_per_picture_minus_1 */
                int lz = 0;             /* uvlc */
                while (!g.over && getb(&g, 1) == 0)
                    if (++lz >= 32) {
                        g.over = 1;
                        break;
                    }
                getb(&g, lz < 32 ? lz : 0);
            }
            if ((dmi = (int)getb(&g, 1))) { /* decoder_model_info_present_flag */
                delay_len = (int)getb(&g, 5) + 1;
                getb(&g, 32), getb(&g, 5), getb(&g, 5);
            }
        }
        int idp = (int)getb(&g, 1);     /* initial_display_delay_present_flag */
        uint32_t ops = getb(&g, 5) + 1;
        for (uint32_t i = 0; i < ops && !g.over; i++) {
            getb(&g, 12);               /* operating_point_idc */
            if (getb(&g, 5) > 7)        /* seq_level_idx */
                getb(&g, 1);            /* seq_tier */
            if (dmi && getb(&g, 1))     /* decoder_model_present_for_this_op */
                getb(&g, delay_len), getb(&g, delay_len), getb(&g, 1);
            if (idp && getb(&g, 1))
                getb(&g, 4);
        }
    }
    uint32_t wb = getb(&g, 4) + 1, hb = getb(&g, 4) + 1;
    getb(&g, (int)wb), getb(&g, (int)hb); /* max_frame_{width,height}_minus_1: under 2^bits */
    *w = (uint64_t)1 << wb;
    *h = (uint64_t)1 << hb;
    return !g.over;
}

/* ---------------------------------------------------------------- items */

enum { CODEC_NONE, CODEC_HEVC, CODEC_AV1 };

typedef struct {
    uint32_t id;
    int codec;
    uint32_t iw, ih;       /* its 'ispe', 0 when it has none */
    size_t cfg, cfg_end;   /* its 'hvcC' or 'av1C' body, cfg == cfg_end when none */
} item;

typedef struct { /* a child of 'ipco': property index i + 1 */
    const unsigned char *type;
    size_t body, end;
} prop;

typedef struct {
    const unsigned char *b;
    size_t len;
    item *items; /* sorted by id */
    size_t n;
    prop *props;
    size_t np;
    size_t idat, idat_end;
    size_t iloc, iloc_end, ipco, ipco_end;
    size_t iprp, iprp_end;
    uint64_t w, h;               /* the primary image's size */
    size_t read;                 /* bytes of coded items' data read so far */
    int pictures;                /* in the item being read */
    char *why;
    size_t whylen;
} scan;

static int by_id(const void *a, const void *b)
{
    uint32_t x = ((const item *)a)->id, y = ((const item *)b)->id;
    return (x > y) - (x < y);
}

/* The first item of that id in sorted order (the same one for 'ipma' and 'iloc' when ids repeat):
 * a file may hold millions of items, each looked up once an entry. */
static item *find_item(scan *s, uint32_t id)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->items[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->items[lo].id == id ? &s->items[lo] : NULL;
}

/* 'iinf': the items coded as HEVC or AV1 (an 'infe' of version 2 or 3 names the item's type). */
static int read_iinf(scan *s, size_t p, size_t end)
{
    if (end - p < 4)
        return 0;
    size_t head = s->b[p] == 0 ? 6 : 8; /* version and flags, then a 16 or 32-bit count */
    if (end - p < head)
        return 0;
    size_t cap = (end - p) / 8 + 1;
    if (!(s->items = calloc(cap, sizeof *s->items)))
        return -1;
    box_iter it = {s->b, p + head, end};
    const unsigned char *t;
    size_t body, bend;
    while (box_next(&it, &t, &body, &bend) && s->n < cap) {
        if (!is4(t, "infe") || bend - body < 4)
            continue;
        int v = s->b[body];
        size_t q = body + 4, idn = v == 3 ? 4 : 2;
        if (v < 2 || bend - q < idn + 2 + 4)
            continue;
        const unsigned char *type = s->b + q + idn + 2;
        int codec = is4(type, "hvc1") ? CODEC_HEVC : is4(type, "av01") ? CODEC_AV1 : CODEC_NONE;
        if (codec != CODEC_NONE)
            s->items[s->n++] = (item){.id = rd(s->b + q, (int)idn), .codec = codec};
    }
    qsort(s->items, s->n, sizeof *s->items, by_id);
    return 0;
}

/* 'ipco': its children in order, once for every 'ipma'. 0: no memory. */
static int read_ipco(scan *s)
{
    size_t cap = (s->ipco_end - s->ipco) / 8 + 1;
    if (!(s->props = malloc(cap * sizeof *s->props)))
        return 0;
    box_iter it = {s->b, s->ipco, s->ipco_end};
    prop *x = s->props;
    while (s->np < cap && box_next(&it, &x[s->np].type, &x[s->np].body, &x[s->np].end))
        s->np++;
    return 1;
}

/* 'ipma': each coded item's 'ispe' (the smallest, if it has several) and its 'hvcC' or 'av1C'. */
static void read_ipma(scan *s, size_t p, size_t end)
{
    if (end - p >= 8) {
        int v = s->b[p], wide = s->b[p + 3] & 1;
        uint32_t count = rd(s->b + p + 4, 4);
        size_t q = p + 8, idn = v < 1 ? 2 : 4, an = wide ? 2 : 1;
        for (uint32_t e = 0; e < count && end - q >= idn + 1; e++) {
            item *im = find_item(s, rd(s->b + q, (int)idn));
            unsigned na = s->b[q + idn];
            q += idn + 1;
            if ((size_t)(end - q) < na * an)
                break;
            for (unsigned a = 0; a < na; a++, q += an) {
                uint32_t idx = rd(s->b + q, (int)an) & (wide ? 0x7fff : 0x7f);
                if (!im || idx == 0 || idx > s->np)
                    continue;
                const prop *x = &s->props[idx - 1];
                if (is4(x->type, "ispe") && x->end - x->body >= 12) {
                    uint32_t w = rd(s->b + x->body + 4, 4), h = rd(s->b + x->body + 8, 4);
                    if (!im->iw || (uint64_t)w * h < (uint64_t)im->iw * im->ih)
                        im->iw = w, im->ih = h;
                } else if ((is4(x->type, "hvcC") && im->codec == CODEC_HEVC) ||
                           (is4(x->type, "av1C") && im->codec == CODEC_AV1)) {
                    im->cfg = x->body, im->cfg_end = x->end;
                }
            }
        }
    }
}

/* Checks one coded size against the item's own (its sides within 2x + 64) and against the
 * primary image (its area within 4 (W + 64)(H + 64)), which bounds the decoder's picture whatever
 * an item's 'ispe' claims. */
static int size_fits(scan *s, const item *im, uint64_t cw, uint64_t ch)
{
    uint64_t iw = im->iw ? im->iw : s->w, ih = im->ih ? im->ih : s->h;
    if (cw <= 2 * iw + 64 && ch <= 2 * ih + 64 && cw * ch <= 4 * (s->w + 64) * (s->h + 64))
        return 1;
    snprintf(s->why, s->whylen, "its %s %llux%llu for an image of %llux%llu",
             im->codec == CODEC_HEVC ? "HEVC stream codes a picture of"
                                     : "AV1 stream allows frames of up to",
             (unsigned long long)cw, (unsigned long long)ch, (unsigned long long)iw,
             (unsigned long long)ih);
    return 0;
}

/* One picture an HEVC item, up to 4 frames an AV1 one (a layered image: AVIF's 'a1lx' describes
 * at most 4 layers): the decoders decode every picture they are given, each up to the size
 * checked above, and keep it while it may be referenced; libheif takes the first. */
enum { HEVC_MAX_PICTURES = 1, AV1_MAX_FRAMES = 4 };

static int count_fits(scan *s, const item *im)
{
    int max = im->codec == CODEC_HEVC ? HEVC_MAX_PICTURES : AV1_MAX_FRAMES;
    if (s->pictures <= max)
        return 1;
    snprintf(s->why, s->whylen, "its %s stream holds more than %d %s%s: an image item is one",
             im->codec == CODEC_HEVC ? "HEVC" : "AV1", max,
             im->codec == CODEC_HEVC ? "picture" : "frame", max > 1 ? "s" : "");
    return 0;
}

static int hevc_nal_fits(scan *s, const item *im, const unsigned char *nal, size_t n)
{
    uint64_t w, h;
    if (n < 2)
        return 1;
    unsigned type = (nal[0] >> 1) & 0x3f;
    if (type < 32) { /* a slice: first_slice_segment_in_pic_flag starts a picture */
        s->pictures += n > 2 && (nal[2] & 0x80);
        return count_fits(s, im);
    }
    if (type != 33 || !hevc_sps_size(nal, n, &w, &h))
        return 1;
    return size_fits(s, im, w, h);
}

/* OBUs of [p, end): each sequence header's bound. */
static int av1_obus_fit(scan *s, const item *im, const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned hdr = p[i];
        size_t q = i + 1 + ((hdr >> 2) & 1); /* the extension byte */
        if (q > n)
            return 1;
        size_t size = n - q;
        if (hdr & 2) { /* obu_has_size_field: leb128 */
            uint64_t v = 0;
            int k = 0;
            for (;; k++) {
                if (q >= n || k == 8)
                    return 1;
                v |= (uint64_t)(p[q] & 0x7f) << (7 * k);
                if (!(p[q++] & 0x80))
                    break;
            }
            if (v > n - q)
                return 1; /* dav1d stops at an OBU past the end of the data */
            size = (size_t)v;
        }
        uint64_t w, h;
        unsigned type = (hdr >> 3) & 15;
        if (type == 1 && av1_seq_size(p + q, size, &w, &h) && !size_fits(s, im, w, h))
            return 0;
        s->pictures += type == 3 || type == 6; /* OBU_FRAME_HEADER, OBU_FRAME */
        if (!count_fits(s, im))
            return 0;
        i = q + size;
    }
    return 1;
}

/* The bytes of one item's data, as its 'iloc' entry gives them, into *out (malloc'd). 0: the data
 * is not all there (libheif fails to read it, nothing is decoded), 1: read, -1: refused, -2: no
 * memory. */
static int item_data(scan *s, const unsigned char *e, size_t elen, int v, int osz, int lsz,
                     int bsz, int isz, unsigned char **out, size_t *outlen)
{
    size_t q = 0;
    int method = 0;
    if (v >= 1) {
        if (elen < 2)
            return 0;
        method = e[1] & 15;
        q = 2;
    }
    if (elen - q < 2 + (size_t)bsz + 2)
        return 0;
    q += 2; /* data_reference_index: libheif 1.15 reads this file whatever it says */
    uint64_t base = bsz == 8 ? (uint64_t)rd(e + q, 4) << 32 | rd(e + q + 4, 4) : rd(e + q, bsz);
    q += (size_t)bsz;
    unsigned ne = (unsigned)rd(e + q, 2);
    q += 2;
    const unsigned char *src = s->b;
    size_t srclen = s->len;
    if (method == 1)
        src = s->b + s->idat, srclen = s->idat_end - s->idat;
    else if (method != 0)
        return 0;
    size_t per = (size_t)((v >= 1 ? isz : 0) + osz + lsz), total = 0;
    if (elen - q < per * ne)
        return 0;
    for (unsigned k = 0; k < ne; k++) { /* first the sum: no more than the source holds */
        const unsigned char *x = e + q + per * k + (v >= 1 ? isz : 0) + osz;
        uint64_t l = lsz == 8 ? (uint64_t)rd(x, 4) << 32 | rd(x + 4, 4) : rd(x, lsz);
        if (l == 0) /* to the end of the source: at most all of it */
            l = srclen;
        if (l > srclen || (total += (size_t)l) > srclen) {
            snprintf(s->why, s->whylen, "an item's data adds up to more than the file holds");
            return -1;
        }
    }
    if ((s->read += total) > s->len) { /* all items' together: each is read once here */
        snprintf(s->why, s->whylen, "the items' data add up to more than the file holds");
        return -1;
    }
    unsigned char *d = malloc(total ? total : 1);
    if (!d)
        return -2;
    size_t at = 0;
    for (unsigned k = 0; k < ne; k++) {
        const unsigned char *x = e + q + per * k + (v >= 1 ? isz : 0);
        uint64_t off = osz == 8 ? (uint64_t)rd(x, 4) << 32 | rd(x + 4, 4) : rd(x, osz);
        x += osz;
        uint64_t l = lsz == 8 ? (uint64_t)rd(x, 4) << 32 | rd(x + 4, 4) : rd(x, lsz);
        off += base;
        if (off < base || off > srclen)
            continue; /* libheif fails to read it: nothing is decoded */
        if (l == 0 || l > srclen - off)
            l = srclen - off; /* to the end, or cut there: at most what is there */
        memcpy(d + at, src + off, (size_t)l);
        at += (size_t)l;
    }
    *out = d;
    *outlen = at;
    return 1;
}

/* Up to `count` NAL units of [p, p + n), each after a big-endian size of `lsz` bytes; *used: the
 * bytes walked (a unit past the end stops the walk: libheif fails there, the decoder is not run
 * on what follows). 0 when one is refused. */
static int hevc_nals_fit(scan *s, const item *im, const unsigned char *p, size_t n, int lsz,
                         size_t count, size_t *used)
{
    size_t q = 0;
    for (size_t k = 0; k < count && n - q >= (size_t)lsz; k++) {
        size_t l = rd(p + q, lsz);
        if (n - q - (size_t)lsz < l)
            break;
        if (!hevc_nal_fits(s, im, p + q + lsz, l))
            return 0;
        q += (size_t)lsz + l;
    }
    *used = q;
    return 1;
}

/* One coded item: its configuration's headers, then its data, as libheif hands them to the
 * decoder. 1 fits, 0 refused. */
static int item_fits(scan *s, const item *im, const unsigned char *d, size_t n)
{
    const unsigned char *c = s->b + im->cfg;
    size_t cn = im->cfg_end - im->cfg, used;
    s->pictures = 0;
    if (im->codec == CODEC_AV1) {
        if (cn > 4 && !av1_obus_fit(s, im, c + 4, cn - 4))
            return 0;
        return av1_obus_fit(s, im, d, n);
    }
    /* hvcC: 22 bytes, numOfArrays, then per array: type, count, NAL units after 2-byte sizes */
    for (size_t a = 0, q = 23; cn >= 23 && a < c[22] && cn - q >= 3; a++, q += used) {
        if (!hevc_nals_fit(s, im, c + q + 3, cn - q - 3, 2, rd(c + q + 1, 2), &used))
            return 0;
        used += 3;
    }
    /* the item's data: NAL units after 4-byte sizes */
    return hevc_nals_fit(s, im, d, n, 4, (size_t)-1, &used);
}

/* 'iloc': each coded item's data, checked. 1 all fit, -1 refused, -2 no memory. */
static int read_iloc(scan *s)
{
    const unsigned char *b = s->b;
    size_t p = s->iloc, end = s->iloc_end;
    if (end - p < 6)
        return 1;
    int v = b[p];
    int osz = b[p + 4] >> 4, lsz = b[p + 4] & 15, bsz = b[p + 5] >> 4, isz = b[p + 5] & 15;
    int ok_sz = (osz == 0 || osz == 4 || osz == 8) && (lsz == 0 || lsz == 4 || lsz == 8) &&
                (bsz == 0 || bsz == 4 || bsz == 8) && (isz == 0 || isz == 4 || isz == 8);
    if (v > 2 || !ok_sz)
        return 1; /* libheif refuses the box */
    size_t q = p + 6, cn = v < 2 ? 2 : 4;
    if (end - q < cn)
        return 1;
    uint32_t count = rd(b + q, (int)cn);
    q += cn;
    size_t per = (size_t)((v >= 1 ? isz : 0) + osz + lsz);
    for (uint32_t k = 0; k < count; k++) {
        size_t idn = v < 2 ? 2 : 4, fixed = idn + (v >= 1 ? 2 : 0) + 2 + (size_t)bsz + 2;
        if (end - q < fixed)
            return 1;
        uint32_t id = rd(b + q, (int)idn);
        unsigned ne = (unsigned)rd(b + q + fixed - 2, 2);
        size_t elen = fixed - idn + per * ne;
        if (end - q - idn < elen)
            return 1;
        const item *im = find_item(s, id);
        if (im) {
            unsigned char *d = NULL;
            size_t n = 0;
            int r = item_data(s, b + q + idn, elen, v, osz, lsz, bsz, isz, &d, &n);
            if (r == 1) { /* 0: not all there, nothing decoded from it */
                r = item_fits(s, im, d, n) ? 1 : -1;
                free(d);
            }
            if (r == -2)
                snprintf(s->why, s->whylen, "out of memory");
            if (r < 0)
                return r;
        }
        q += idn + elen;
    }
    return 1;
}

int tsio_heif_coded_fit(const unsigned char *b, size_t len, uint64_t w, uint64_t h, char *why,
                        size_t whylen)
{
    scan s = {.b = b, .len = len, .w = w, .h = h, .why = why, .whylen = whylen};
    box_iter top = {b, 0, len};
    const unsigned char *t;
    size_t body, bend, meta = 0, meta_end = 0;
    while (box_next(&top, &t, &body, &bend))
        if (is4(t, "meta") && bend - body >= 4) {
            meta = body + 4, meta_end = bend;
            break;
        }
    if (!meta)
        return 0;
    box_iter it = {b, meta, meta_end};
    size_t iinf = 0, iinf_end = 0;
    while (box_next(&it, &t, &body, &bend)) {
        if (is4(t, "iinf") && !iinf)
            iinf = body, iinf_end = bend;
        else if (is4(t, "iloc") && !s.iloc)
            s.iloc = body, s.iloc_end = bend;
        else if (is4(t, "idat") && !s.idat)
            s.idat = body, s.idat_end = bend;
        else if (is4(t, "iprp") && !s.iprp)
            s.iprp = body, s.iprp_end = bend;
    }
    box_iter ip = {b, s.iprp, s.iprp_end};
    while (s.iprp && box_next(&ip, &t, &body, &bend))
        if (is4(t, "ipco")) {
            s.ipco = body, s.ipco_end = bend;
            break;
        }
    int r = 1;
    if (iinf && read_iinf(&s, iinf, iinf_end) < 0) {
        snprintf(why, whylen, "out of memory");
        return -2;
    }
    if (s.n && s.iloc) {
        if (s.ipco && !read_ipco(&s)) {
            snprintf(why, whylen, "out of memory");
            r = -2;
        }
        ip.pos = s.iprp; /* every 'ipma' (a file may split them) */
        while (s.ipco && r == 1 && box_next(&ip, &t, &body, &bend))
            if (is4(t, "ipma"))
                read_ipma(&s, body, bend);
        if (r == 1)
            r = read_iloc(&s);
    }
    free(s.props);
    free(s.items);
    return r == 1 ? 0 : r;
}
