/* png_write.c - the PNG encoder (tsio_png_encode, see codec.h): tessera's own row filtering,
 * DEFLATE by libdeflate, chunks written here.
 *
 * Why not libspng's encoder (libspng still decodes, app/codec/codec_png.c): it runs on zlib and cannot
 * take another DEFLATE library, and zlib is the larger part of a PNG save. libdeflate compresses a
 * whole buffer in one call, about 2x faster than zlib at level 1 with slightly smaller output on
 * filtered photo rows (tools/results/cpu-codecs.md). Its price is memory: the filtered image and
 * the compressed stream are both held. So an image whose filtered rows exceed PNG_WHOLE_LIMIT is
 * streamed through zlib instead, a row at a time (the same filters, so the same filtered bytes;
 * only the DEFLATE stream differs). zlib also compresses, at levels 1-3, 8-bit gray (always) and
 * small images (kept when smaller than libdeflate's): see tsio_png_encode and PNG_TRY_ZLIB.
 *
 * Levels (codec.h's `level`, 0..9): 0 stores (no filter: filtering would only cost time);
 * levels 1-3 choose per row the smaller of the sub and up filters by the sum of absolute signed
 * differences (libpng's heuristic on two filters: most of its gain on photos at a fraction of its
 * cost); levels 4-9 try all five filters per row with the same measure, as libpng. libdeflate's
 * level is the PNG level (its 10-12 are not used); zlib's (the large-image path) too, with its
 * run-length strategy at levels 1-3 as libspng's encoder was set before.
 *
 * The filter unit is the pixel (channels x bytes); 16-bit samples are written big-endian (the
 * image holds them host-endian). The hot loops use SSE2 where the compiler targets it (every
 * x86-64), with the plain loops as the fallback and the reference: both give the same bytes.
 */
#include "codec.h"
#include "png_write.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
#include <zlib.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Filtered rows up to this size are compressed in one libdeflate call (peak: the image, the
 * filtered copy and libdeflate's output bound, about twice this beyond the image); larger ones
 * are streamed through zlib with a few rows and a 1 MiB output buffer. A 16 MP RGB photo is 48 MiB
 * of filtered rows, a 16 MP RGBA16 one 128 MiB. */
#define PNG_WHOLE_LIMIT ((size_t)256 << 20)
static size_t whole_limit = PNG_WHOLE_LIMIT; /* tsio_png_test_set_whole_limit */

void tsio_png_test_set_whole_limit(size_t bytes)
{
    whole_limit = bytes ? bytes : PNG_WHOLE_LIMIT;
}

/* Images up to this many filtered bytes, at levels 1-3, are also compressed by zlib with its
 * run-length strategy and the smaller stream kept: on some small photos (a 512x512 RGB one) zlib's
 * is a few percent smaller than libdeflate's, and OpenCV's too; this costs at most ~10 ms, and
 * a large photo's stream is libdeflate's alone (zlib's would double its time). */
#define PNG_TRY_ZLIB ((size_t)1 << 20)
/* IDAT chunk size: any size decodes the same; 1 MiB keeps the write calls few and large. */
#define PNG_IDAT_MAX ((size_t)1 << 20)
/* A PNG chunk's length is at most 2^31 - 1. */
#define PNG_CHUNK_MAX ((size_t)0x7fffffff)

/* ---------------------------------------------------------------- output */

typedef struct png_out {
    FILE *f;
    int err; /* errno of the first failed write; nothing is written after it */
} png_out;

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

static void out_bytes(png_out *o, const void *p, size_t n)
{
    if (o->err || n == 0)
        return;
    errno = 0;
    if (fwrite(p, 1, n, o->f) != n)
        o->err = errno ? errno : EIO;
}

/* A chunk whose data is the concatenation of `a` (na bytes) and `b` (nb): the iCCP chunk's
 * name and its compressed profile without a copy. na + nb <= PNG_CHUNK_MAX. */
static void out_chunk2(png_out *o, const char *type, const void *a, size_t na, const void *b,
                       size_t nb)
{
    unsigned char head[8], tail[4];
    put_be32(head, (uint32_t)(na + nb));
    memcpy(head + 4, type, 4);
    uint32_t crc = libdeflate_crc32(0, head + 4, 4);
    if (na)
        crc = libdeflate_crc32(crc, a, na);
    if (nb)
        crc = libdeflate_crc32(crc, b, nb);
    put_be32(tail, crc);
    out_bytes(o, head, 8);
    out_bytes(o, a, na);
    out_bytes(o, b, nb);
    out_bytes(o, tail, 4);
}

static void out_chunk(png_out *o, const char *type, const void *d, size_t n)
{
    out_chunk2(o, type, d, n, NULL, 0);
}

static void out_idats(png_out *o, const unsigned char *z, size_t n)
{
    for (size_t at = 0; at < n && !o->err; at += PNG_IDAT_MAX)
        out_chunk(o, "IDAT", z + at, n - at < PNG_IDAT_MAX ? n - at : PNG_IDAT_MAX);
}

/* iCCP (the profile zlib-compressed, named "ICC profile") and eXIf, before the image data. An EXIF
 * block must start with a TIFF header (decoders, libspng among them, refuse the chunk otherwise)
 * and a block that PNG cannot hold is left out: the image is still written, as libspng did. */
static ts_status out_meta(png_out *o, const tsio_meta *meta, char *err, size_t errlen)
{
    /* the profile's name, its NUL and the compression method (0, deflate) */
    static const char name[13] = "ICC profile";
    if (meta->icc && meta->icc_len) {
        uLongf zn = compressBound((uLong)meta->icc_len);
        unsigned char *z = malloc(zn);
        if (!z)
            return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory writing a PNG");
        if (compress2(z, &zn, meta->icc, (uLong)meta->icc_len, Z_DEFAULT_COMPRESSION) == Z_OK &&
            zn <= PNG_CHUNK_MAX - sizeof name)
            out_chunk2(o, "iCCP", name, sizeof name, z, zn);
        free(z);
    }
    const unsigned char *e = meta->exif;
    if (e && meta->exif_len >= 4 && meta->exif_len <= PNG_CHUNK_MAX &&
        (!memcmp(e, "II*\0", 4) || !memcmp(e, "MM\0*", 4)))
        out_chunk(o, "eXIf", e, meta->exif_len);
    return TS_OK;
}

/* ---------------------------------------------------------------- filters
 *
 * Each takes the row `cur` and the row above `up` (zeros for the first row), n bytes, and writes
 * n filtered bytes; `bpp` is the pixel's size in bytes (the left neighbour's distance). */

static void filter_sub(unsigned char *out, const unsigned char *cur, size_t n, size_t bpp)
{
    size_t i = 0;
    for (; i < bpp && i < n; i++)
        out[i] = cur[i];
#if defined(__SSE2__)
    for (; i + 16 <= n; i += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(cur + i));
        __m128i l = _mm_loadu_si128((const __m128i *)(cur + i - bpp));
        _mm_storeu_si128((__m128i *)(out + i), _mm_sub_epi8(a, l));
    }
#endif
    for (; i < n; i++)
        out[i] = (unsigned char)(cur[i] - cur[i - bpp]);
}

static void filter_up(unsigned char *out, const unsigned char *cur, const unsigned char *up,
                      size_t n)
{
    size_t i = 0;
#if defined(__SSE2__)
    for (; i + 16 <= n; i += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(cur + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(up + i));
        _mm_storeu_si128((__m128i *)(out + i), _mm_sub_epi8(a, b));
    }
#endif
    for (; i < n; i++)
        out[i] = (unsigned char)(cur[i] - up[i]);
}

static void filter_avg(unsigned char *out, const unsigned char *cur, const unsigned char *up,
                       size_t n, size_t bpp)
{
    size_t i = 0;
    for (; i < bpp && i < n; i++)
        out[i] = (unsigned char)(cur[i] - (up[i] >> 1));
#if defined(__SSE2__)
    const __m128i one = _mm_set1_epi8(1);
    for (; i + 16 <= n; i += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(cur + i));
        __m128i l = _mm_loadu_si128((const __m128i *)(cur + i - bpp));
        __m128i b = _mm_loadu_si128((const __m128i *)(up + i));
        /* floor((l + b) / 2): the rounded-up average less the lost low bit */
        __m128i m = _mm_sub_epi8(_mm_avg_epu8(l, b), _mm_and_si128(_mm_xor_si128(l, b), one));
        _mm_storeu_si128((__m128i *)(out + i), _mm_sub_epi8(a, m));
    }
#endif
    for (; i < n; i++)
        out[i] = (unsigned char)(cur[i] - ((cur[i - bpp] + up[i]) >> 1));
}

static unsigned char paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return (unsigned char)(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

static void filter_paeth(unsigned char *out, const unsigned char *cur, const unsigned char *up,
                         size_t n, size_t bpp)
{
    size_t i = 0;
    for (; i < bpp && i < n; i++)
        out[i] = (unsigned char)(cur[i] - up[i]); /* a = c = 0: the predictor is b */
#if defined(__SSE2__)
    /* Encoding has every neighbour at hand (no dependency along the row, unlike decoding), so
     * 16 bytes at a time in 16-bit lanes: with pa = |b - c|, pb = |a - c|, pc = |a + b - 2c|,
     * the nearest is a if pa is the smallest, else b if pb is, else c (the same ties). */
    const __m128i zero = _mm_setzero_si128();
    for (; i + 16 <= n; i += 16) {
        __m128i a8 = _mm_loadu_si128((const __m128i *)(cur + i - bpp));
        __m128i b8 = _mm_loadu_si128((const __m128i *)(up + i));
        __m128i c8 = _mm_loadu_si128((const __m128i *)(up + i - bpp));
        __m128i half[2];
        for (int h = 0; h < 2; h++) {
            __m128i a = h ? _mm_unpackhi_epi8(a8, zero) : _mm_unpacklo_epi8(a8, zero);
            __m128i b = h ? _mm_unpackhi_epi8(b8, zero) : _mm_unpacklo_epi8(b8, zero);
            __m128i c = h ? _mm_unpackhi_epi8(c8, zero) : _mm_unpacklo_epi8(c8, zero);
            __m128i pa = _mm_sub_epi16(b, c), pb = _mm_sub_epi16(a, c);
            __m128i pc = _mm_add_epi16(pa, pb);
            pa = _mm_max_epi16(pa, _mm_sub_epi16(zero, pa));
            pb = _mm_max_epi16(pb, _mm_sub_epi16(zero, pb));
            pc = _mm_max_epi16(pc, _mm_sub_epi16(zero, pc));
            __m128i least = _mm_min_epi16(pc, _mm_min_epi16(pa, pb));
            __m128i is_a = _mm_cmpeq_epi16(pa, least), is_b = _mm_cmpeq_epi16(pb, least);
            __m128i bc = _mm_or_si128(_mm_and_si128(is_b, b), _mm_andnot_si128(is_b, c));
            half[h] = _mm_or_si128(_mm_and_si128(is_a, a), _mm_andnot_si128(is_a, bc));
        }
        __m128i pred = _mm_packus_epi16(half[0], half[1]);
        __m128i x = _mm_loadu_si128((const __m128i *)(cur + i));
        _mm_storeu_si128((__m128i *)(out + i), _mm_sub_epi8(x, pred));
    }
#endif
    for (; i < n; i++)
        out[i] = (unsigned char)(cur[i] - paeth(cur[i - bpp], up[i], up[i - bpp]));
}

/* The heuristic's cost of a filtered row: the sum of its bytes' absolute values as signed. */
static uint64_t row_cost(const unsigned char *p, size_t n)
{
    uint64_t s = 0;
    size_t i = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    __m128i acc = zero;
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        /* |(int8)v| as unsigned is min(v, -v); psadbw sums 8-byte halves into 64-bit lanes */
        __m128i m = _mm_min_epu8(v, _mm_sub_epi8(zero, v));
        acc = _mm_add_epi64(acc, _mm_sad_epu8(m, zero));
    }
    s = (uint64_t)_mm_cvtsi128_si64(acc) +
        (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(acc, acc));
#endif
    for (; i < n; i++)
        s += p[i] < 128 ? p[i] : 256u - p[i];
    return s;
}

/* A row's filter byte and n filtered bytes into out[0..n]; `tmp` holds 3 n bytes of scratch. */
static void filter_row(unsigned char *out, const unsigned char *cur, const unsigned char *up,
                       size_t n, size_t bpp, int level, unsigned char *tmp)
{
    if (level == 0) {
        out[0] = 0;
        memcpy(out + 1, cur, n);
        return;
    }
    /* sub straight into place; another filter replaces it only when cheaper. The others by
     * type (none, up, average, Paeth), so that a tie keeps the lowest type, as libpng does. */
    const unsigned char *cand[5] = {NULL, NULL, tmp, NULL, NULL};
    filter_sub(out + 1, cur, n, bpp);
    filter_up(tmp, cur, up, n);
    if (level >= 4) {
        filter_avg(tmp + n, cur, up, n, bpp);
        filter_paeth(tmp + 2 * n, cur, up, n, bpp);
        cand[0] = cur, cand[3] = tmp + n, cand[4] = tmp + 2 * n;
    }
    uint64_t best = row_cost(out + 1, n);
    int type = 1;
    for (int t = 0; t < 5; t++) {
        if (!cand[t])
            continue;
        uint64_t cost = row_cost(cand[t], n);
        if (cost < best || (cost == best && t < type)) {
            best = cost, type = t;
            memcpy(out + 1, cand[t], n);
        }
    }
    out[0] = (unsigned char)type;
}

/* Row y as PNG samples: the image's own bytes, or for 16-bit on a little-endian host its samples
 * swapped into `swap`. */
static const unsigned char *png_row(const ts_image *im, int y, size_t n, unsigned char *swap)
{
    const unsigned char *r = (const unsigned char *)im->data + (size_t)y * im->pitch;
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_BIG_ENDIAN__
    if (im->bytes == 2) {
        for (size_t i = 0; i + 1 < n; i += 2)
            swap[i] = r[i + 1], swap[i + 1] = r[i];
        return swap;
    }
#endif
    (void)n, (void)swap;
    return r;
}

/* ---------------------------------------------------------------- the two back ends */

/* The zlib stream of `in` at `level` with the run-length strategy into out[0..cap); 0 when it does
 * not fit. */
static size_t zlib_rle(const unsigned char *in, size_t n, int level, unsigned char *out,
                       size_t cap)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (n > UINT_MAX || cap > UINT_MAX ||
        deflateInit2(&zs, level, Z_DEFLATED, 15, 8, Z_RLE) != Z_OK)
        return 0;
    zs.next_in = (unsigned char *)in, zs.avail_in = (uInt)n;
    zs.next_out = out, zs.avail_out = (uInt)cap;
    size_t got = deflate(&zs, Z_FINISH) == Z_STREAM_END ? cap - zs.avail_out : 0;
    deflateEnd(&zs);
    return got;
}

/* Rows filtered into one buffer, compressed by one libdeflate call, written as IDAT chunks. */
static ts_status idat_whole(png_out *o, const ts_image *im, int level, size_t n,
                            unsigned char *rows, unsigned char *tmp, char *err, size_t errlen)
{
    size_t bpp = ts_pixel_bytes(im), flen = (n + 1) * (size_t)im->height;
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
    unsigned char *filt = malloc(flen), *z = NULL;
    size_t bound = c ? libdeflate_zlib_compress_bound(c, flen) : 0, zn = 0;
    if (c && filt && (z = malloc(bound))) {
        /* rows: the row above (zeros for the first) and the 16-bit swap buffer */
        unsigned char *prev = rows, *swap = rows + n;
        const unsigned char *up = prev;
        for (int y = 0; y < im->height; y++) {
            const unsigned char *cur = png_row(im, y, n, swap);
            filter_row(filt + (size_t)y * (n + 1), cur, up, n, bpp, level, tmp);
            if (cur == swap) { /* the swapped row becomes the one above */
                unsigned char *t = prev;
                prev = swap, swap = t;
            }
            up = cur;
        }
        zn = libdeflate_zlib_compress(c, filt, flen, z, bound);
        unsigned char *z2 = NULL;
        size_t zn2 = 0;
        if (zn > 1 && level <= 3 && flen <= PNG_TRY_ZLIB && (z2 = malloc(zn - 1)))
            zn2 = zlib_rle(filt, flen, level, z2, zn - 1);
        if (zn2) {
            free(z);
            z = z2, zn = zn2;
        } else {
            free(z2);
        }
    }
    libdeflate_free_compressor(c);
    free(filt);
    ts_status st = TS_OK;
    if (!z)
        st = tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory writing a PNG");
    else if (zn == 0) /* cannot happen with the bound's room */
        st = tsio_fail(err, errlen, TS_ERR_INVALID, "PNG encoder: output over its bound");
    else
        out_idats(o, z, zn);
    free(z);
    return st;
}

/* Rows filtered one at a time into zlib's stream; IDAT chunks written as its output fills. */
static ts_status idat_stream(png_out *o, const ts_image *im, int level, size_t n,
                             unsigned char *rows, unsigned char *tmp, char *err, size_t errlen)
{
    size_t bpp = ts_pixel_bytes(im);
    unsigned char *zbuf = malloc(PNG_IDAT_MAX), *line = malloc(n + 1);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    int zrc = Z_MEM_ERROR;
    if (zbuf && line)
        zrc = deflateInit2(&zs, level, Z_DEFLATED, 15, 8,
                           level >= 1 && level <= 3 ? Z_RLE : Z_DEFAULT_STRATEGY);
    if (zrc != Z_OK) {
        free(zbuf);
        free(line);
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory writing a PNG");
    }
    unsigned char *prev = rows, *swap = rows + n;
    const unsigned char *up = prev;
    zs.next_out = zbuf, zs.avail_out = (uInt)PNG_IDAT_MAX;
    for (int y = 0; y <= im->height && zrc == Z_OK && !o->err; y++) {
        int flush = y == im->height ? Z_FINISH : Z_NO_FLUSH;
        if (y < im->height) {
            const unsigned char *cur = png_row(im, y, n, swap);
            filter_row(line, cur, up, n, bpp, level, tmp);
            if (cur == swap) {
                unsigned char *t = prev;
                prev = swap, swap = t;
            }
            up = cur;
            zs.next_in = line, zs.avail_in = (uInt)(n + 1); /* n <= 2^17 (TS_MAX_DIM x 8) */
        }
        /* until zlib has taken the whole row (or, at the end, written the whole stream) */
        do {
            zrc = deflate(&zs, flush);
            if (zs.avail_out == 0 || zrc == Z_STREAM_END) {
                out_idats(o, zbuf, PNG_IDAT_MAX - zs.avail_out);
                zs.next_out = zbuf, zs.avail_out = (uInt)PNG_IDAT_MAX;
            }
        } while (!o->err && zrc == Z_OK && (zs.avail_in || flush == Z_FINISH));
    }
    deflateEnd(&zs);
    free(zbuf);
    free(line);
    if (!o->err && zrc != Z_STREAM_END)
        return tsio_fail(err, errlen, TS_ERR_INVALID, "PNG encoder: zlib error %d", zrc);
    return TS_OK;
}

/* ---------------------------------------------------------------- the encoder */

ts_status tsio_png_encode(FILE *f, const ts_image *im, int level, const tsio_meta *meta,
                          char *err, size_t errlen)
{
    static const unsigned char color_type[5] = {0, 0, 4, 2, 6}; /* gray, gray+alpha, RGB, RGBA */
    if (im->width < 1 || im->height < 1 || im->channels < 1 || im->channels > 4 ||
        (im->bytes != 1 && im->bytes != 2) || level < 0 || level > 9)
        return tsio_fail(err, errlen, TS_ERR_INVALID, "PNG encoder: invalid image or level");
    size_t n = ts_row_bytes(im); /* <= 2^31 x 8: size_t, never int */
    if (n + 1 > SIZE_MAX / (size_t)im->height || n > SIZE_MAX / 6 - 1)
        return tsio_fail(err, errlen, TS_ERR_TOO_LARGE, "image too large for a PNG");
    /* two rows for the 16-bit swap (zeroed: the row above the first), three of filter scratch */
    unsigned char *rows = calloc(2, n), *tmp = malloc(3 * n);
    if (!rows || !tmp) {
        free(rows);
        free(tmp);
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory writing a PNG");
    }
    png_out o = {f, 0};
    unsigned char ihdr[13];
    put_be32(ihdr, (uint32_t)im->width);
    put_be32(ihdr + 4, (uint32_t)im->height);
    ihdr[8] = (unsigned char)(8 * im->bytes), ihdr[9] = color_type[im->channels];
    ihdr[10] = ihdr[11] = ihdr[12] = 0; /* deflate, adaptive filtering, not interlaced */
    out_bytes(&o, "\x89PNG\r\n\x1a\n", 8);
    out_chunk(&o, "IHDR", ihdr, sizeof ihdr);
    ts_status st = meta ? out_meta(&o, meta, err, errlen) : TS_OK;
    /* On one-byte pixels (8-bit gray) zlib's run-length strategy (matches at distance 1 only)
     * beats libdeflate's level 1-3 matcher, whose matches elsewhere cost more bits than the small
     * residuals they replace: about 8% smaller files than libdeflate's level 1, which wrote 3-4%
     * more than OpenCV's (tools/results/cpu-codecs.md). */
    int use_zlib = (n + 1) * (size_t)im->height > whole_limit ||
                   (level >= 1 && level <= 3 && ts_pixel_bytes(im) == 1);
    if (st == TS_OK && !o.err)
        st = use_zlib ? idat_stream(&o, im, level, n, rows, tmp, err, errlen)
                      : idat_whole(&o, im, level, n, rows, tmp, err, errlen);
    if (st == TS_OK)
        out_chunk(&o, "IEND", NULL, 0);
    free(rows);
    free(tmp);
    char eb[128];
    if (o.err)
        return tsio_fail(err, errlen, TS_ERR_IO, "write failed: %s",
                         tsio_errtext(o.err, eb, sizeof eb));
    return st;
}

ts_status tsio_png_save(FILE *f, const ts_image *im, const tsio_encode_args *a, char *notice,
                        size_t noticelen, char *err, size_t errlen)
{
    return tsio_png_encode(f, im, a->level, a->meta, err, errlen);
}
