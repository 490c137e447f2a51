/* image_io.c - see image_io.h: loading. The only file that compiles stb_image and
 * stb_image_write (image_save.c uses the writer's BMP and TGA functions).
 *
 * Read the file's head, sniff the format and read only as many bytes as that format can need for
 * the image its header declares (regular files only), then hand JPEG to libjpeg-turbo and PNG to
 * libspng (app/codec_*.c). The formats left to stb_image 2.27 (BMP, TGA, GIF, PSD, PNM) first pass
 * guards for what stb mishandles (sizes, truncation, a PSD colour under its alpha's matte), are
 * measured with stbi_info and refused over the limit, then decoded with every stb allocation
 * zeroed and charged to a per-thread budget sized from the image. This file is built with
 * automatic variables zero-initialised (Makefile): stb reads a palette on its stack by whatever
 * index a BMP holds, and an index past the palette then gives black, not stack bytes.
 */
#include "image_io.h"
#include "photo_io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- stb, configured */

static void *tsio_stb_malloc(size_t n);
static void *tsio_stb_realloc(void *p, size_t old_n, size_t new_n);

#define STBI_MALLOC(n) tsio_stb_malloc(n)
#define STBI_REALLOC_SIZED(p, old_n, new_n) tsio_stb_realloc(p, old_n, new_n)
#define STBI_FREE(p) free(p)
#define STBI_NO_STDIO  /* tessera reads files itself (caps, directories, errno) */
#define STBI_NO_HDR    /* float HDR is refused before decoding; less code to attack */
#define STBI_NO_LINEAR /* only HDR needs it */
#define STBI_NO_PIC    /* Softimage PIC: not a format tessera promises */
#define STBI_NO_JPEG   /* libjpeg-turbo decodes JPEG (codec_jpeg.c) */
#define STBI_NO_PNG    /* libspng decodes PNG (codec_png.c) */
#define STBI_MAX_DIMENSIONS TS_MAX_DIM
#define STBI_WRITE_NO_STDIO /* writers go through tessera's checked FILE* callback */
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION

/* stb is included with -isystem, which already silences it; these cover a plain -I build. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#endif
#include <stb_image.h>
#include <stb_image_write.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/* ---------------------------------------------------------------- errors */


static void clear(char *buf, size_t len)
{
    if (buf && len)
        buf[0] = '\0';
}


/* ---------------------------------------------------------------- allocation budget */

/* Bytes the decode running on this thread may still allocate; 0 outside a decode. Frees are not
 * credited (STBI_FREE has no size): the budget bounds the sum of a decode's allocations, which for
 * stb is close to its peak. */
static _Thread_local size_t stb_budget;
static _Thread_local int stb_over_budget;

static void *tsio_stb_malloc(size_t n)
{
    if (n > stb_budget) {
        stb_over_budget = 1;
        return NULL;
    }
    void *p = calloc(1, n ? n : 1); /* zeroed: no decoder reads what another image left */
    if (p)
        stb_budget -= n;
    return p;
}

static void *tsio_stb_realloc(void *p, size_t old_n, size_t new_n)
{
    size_t grow = new_n > old_n ? new_n - old_n : 0;
    if (grow > stb_budget) {
        stb_over_budget = 1;
        return NULL;
    }
    void *q = realloc(p, new_n ? new_n : 1);
    if (q) {
        stb_budget -= grow;
        if (grow)
            memset((char *)q + old_n, 0, grow);
    }
    return q;
}

/* Starts a budget; budget_end() leaves stb_over_budget for the error message. */
static void budget_set(size_t bytes)
{
    stb_budget = bytes;
    stb_over_budget = 0;
}

static void budget_end(void) { stb_budget = 0; }

#define BUDGET_INFO ((size_t)4 << 20) /* header reads: stb's decoder structs are tens of KB */

/* What one decode of a w x h image may allocate. The largest legitimate appetites in stb 2.27 are
 * ~16 bytes per pixel (progressive 4-component JPEG: blocks, coefficients, output) and ~24 per
 * 16-bit pixel (interlaced RGBA16 PNG: inflated data, passes, output); blocks pad sides by up to
 * 32, PNG keeps the compressed stream (growing by doubling). */
static size_t decode_budget(int w, int h, int bytes, size_t file_len)
{
    uint64_t px = ((uint64_t)w + 32) * ((uint64_t)h + 32); /* sides <= 2^20: no overflow */
    uint64_t b = px * 24u * (uint64_t)bytes;
    uint64_t extra = ((uint64_t)16 << 20) + 4 * (uint64_t)file_len;
    if (b > UINT64_MAX - extra)
        return SIZE_MAX;
    b += extra;
    return b > SIZE_MAX ? SIZE_MAX : (size_t)b;
}

/* ---------------------------------------------------------------- formats by name */

tsio_format tsio_format_from_name(const char *s)
{
    static const struct {
        const char *ext;
        tsio_format f;
    } names[] = {{"png", TSIO_PNG}, {"jpg", TSIO_JPEG}, {"jpeg", TSIO_JPEG}, {"bmp", TSIO_BMP},
                 {"tga", TSIO_TGA}, {"pnm", TSIO_PNM},  {"ppm", TSIO_PNM},   {"pgm", TSIO_PNM},
                 {"webp", TSIO_WEBP}};
    if (!s)
        return TSIO_UNKNOWN;
    const char *slash = strrchr(s, '/');
    const char *base = slash ? slash + 1 : s;
    const char *dot = strrchr(base, '.');
    const char *ext = dot ? dot + 1 : slash ? "" : s; /* no dot, no slash: a bare name */
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(ext, names[i].ext) == 0)
            return names[i].f;
    return TSIO_UNKNOWN;
}

int tsio_is_image_name(const char *path)
{
    static const char *const exts[] = {"png", "jpg", "jpeg", "bmp", "tga", "gif", "psd",
                                       "pnm", "ppm", "pgm", "hdr", "pic",
                                       /* photos: read, or named as unsupported */
                                       "webp", "tif", "tiff", "heic", "heif", "avif", "jxl",
                                       NULL};
    const char *base = strrchr(path, '/'), *dot;
    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    if (!dot || dot == base)
        return 0;
    for (int i = 0; exts[i]; i++)
        if (strcasecmp(dot + 1, exts[i]) == 0)
            return 1;
    return 0;
}

const char *tsio_format_ext(tsio_format f)
{
    switch (f) {
    case TSIO_PNG: return "png";
    case TSIO_JPEG: return "jpg";
    case TSIO_BMP: return "bmp";
    case TSIO_TGA: return "tga";
    case TSIO_PNM: return "pnm";
    case TSIO_WEBP: return "webp";
    case TSIO_UNKNOWN: break;
    }
    return "";
}

const char *tsio_output_ext(tsio_format f, int channels)
{
    if (f == TSIO_PNM)
        return channels <= 2 ? "pgm" : "ppm";
    return tsio_format_ext(f);
}

/* ---------------------------------------------------------------- sniffing */

typedef enum kind { K_OTHER, K_PNG, K_JPEG, K_GIF, K_BMP, K_PSD, K_PNM, K_HDR, K_PNM_ASCII } kind;

static const char *kind_name(kind k)
{
    static const char *const n[] = {"TGA", "PNG", "JPEG", "GIF", "BMP", "PSD", "PNM", "HDR", "PNM"};
    return n[k];
}

static int has_prefix(const unsigned char *b, size_t len, const char *p)
{
    size_t n = strlen(p);
    return len >= n && memcmp(b, p, n) == 0;
}

/* The format stb would take the bytes for; K_OTHER is TGA (no signature) or nothing. */
static kind sniff(const unsigned char *b, size_t len)
{
    if (has_prefix(b, len, "\x89PNG\r\n\x1a\n"))
        return K_PNG;
    if (len >= 2 && b[0] == 0xFF) { /* stb skips fill bytes before SOI too */
        size_t i = 1;
        while (i < len && b[i] == 0xFF)
            i++;
        if (i < len && b[i] == 0xD8)
            return K_JPEG;
    }
    if (has_prefix(b, len, "GIF87a") || has_prefix(b, len, "GIF89a"))
        return K_GIF;
    if (has_prefix(b, len, "BM"))
        return K_BMP;
    if (has_prefix(b, len, "8BPS"))
        return K_PSD;
    if (len >= 2 && b[0] == 'P' && (b[1] == '5' || b[1] == '6'))
        return K_PNM;
    if (len >= 3 && b[0] == 'P' && b[1] >= '1' && b[1] <= '4' && b[2] && strchr(" \t\r\n#", b[2]))
        return K_PNM_ASCII;
    if (has_prefix(b, len, "#?RADIANCE\n") || has_prefix(b, len, "#?RGBE\n"))
        return K_HDR;
    return K_OTHER;
}

/* ---------------------------------------------------------------- guards */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}


/* stb 2.27 grows its IDAT buffer to a chunk's declared length before reading it, so a tiny file
 * can make it allocate 2 GiB: every chunk must fit in the file. Also reads IHDR's size. */
static ts_status guard_png(const unsigned char *b, size_t len, uint64_t max_pixels, char *err,
                           size_t errlen)
{
    size_t pos = 8;
    int first = 1;
    for (;;) {
        if (len - pos < 12)
            return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated PNG");
        uint32_t n = be32(b + pos);
        const unsigned char *type = b + pos + 4;
        if (n > 0x7FFFFFFFu)
            return tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt PNG (chunk length %lu)",
                             (unsigned long)n);
        if (n > len - pos - 12)
            return tsio_fail(err, errlen, TS_ERR_FORMAT, "truncated PNG");
        if (first && memcmp(type, "CgBI", 4) != 0) { /* Apple's CgBI may precede IHDR */
            if (memcmp(type, "IHDR", 4) != 0 || n != 13)
                return tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt PNG (no IHDR)");
            ts_status st = tsio_check_limit(be32(type + 4), be32(type + 8), max_pixels, err, errlen);
            if (st != TS_OK)
                return st;
            first = 0;
        }
        pos += 12 + (size_t)n;
        if (memcmp(type, "IEND", 4) == 0)
            return TS_OK;
    }
}

/* ---------------------------------------------------------------- decoding */

/* The message for a failed stb call on bytes sniffed as `k`. */
static ts_status stb_failed(kind k, int w, int h, char *err, size_t errlen)
{
    const char *why = stbi_failure_reason();
    if (k == K_OTHER)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "not an image (unknown format)");
    if (stb_over_budget)
        return tsio_fail(err, errlen, TS_ERR_FORMAT,
                         "corrupt %s (decoding needs more memory than a %dx%d image may)",
                         kind_name(k), w, h);
    if (why && strcmp(why, "outofmem") == 0)
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory decoding a %dx%d %s", w, h,
                         kind_name(k));
    if (why && strcmp(why, "too large") == 0)
        return tsio_fail(err, errlen, TS_ERR_TOO_LARGE, "image is over %d pixels on a side",
                         TS_MAX_DIM);
    return tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt %s (%s)", kind_name(k), why ? why : "?");
}

/* stb 2.27 returns 16-bit PNM samples as stored (big-endian) and maxval-relative: make them
 * native and full-range, as PNG's are. */
static void pnm_fix(const tsio_pnm_head *ph, ts_image *im)
{
    size_t n = (size_t)im->width * (size_t)im->height * (size_t)im->channels;
    uint32_t max = ph->maxval, full = (uint32_t)ts_max_value(im->bytes);
    if (im->bytes == 2) {
        uint16_t *s = im->data;
        for (size_t i = 0; i < n; i++) {
            const unsigned char *p = (const unsigned char *)&s[i];
            s[i] = (uint16_t)(p[0] << 8 | p[1]);
        }
    }
    if (max == full)
        return;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = im->bytes == 2 ? ((uint16_t *)im->data)[i] : ((unsigned char *)im->data)[i];
        v = v > max ? max : v;
        v = (v * full + max / 2) / max;
        if (im->bytes == 2)
            ((uint16_t *)im->data)[i] = (uint16_t)v;
        else
            ((unsigned char *)im->data)[i] = (unsigned char)v;
    }
}

static ts_status guard(kind k, const unsigned char *b, size_t len, uint64_t max_pixels,
                       tsio_pnm_head *ph, char *err, size_t errlen)
{
    switch (k) {
    case K_HDR: return tsio_fail(err, errlen, TS_ERR_UNSUPPORTED, "HDR images are not supported");
    case K_PNM_ASCII:
        return tsio_fail(err, errlen, TS_ERR_UNSUPPORTED, "ASCII PNM (P1-P4) is not supported");
    case K_PNG: return guard_png(b, len, max_pixels, err, errlen);
    case K_PNM: return tsio_guard_pnm(b, len, ph, err, errlen);
    case K_BMP: return tsio_guard_bmp(b, len, err, errlen);
    case K_GIF: return tsio_guard_gif(b, len, err, errlen);
    case K_PSD: return TS_OK; /* tsio_guard_psd, which also prepares stb's copy */
    default: return tsio_guard_tga(b, len, max_pixels, err, errlen); /* TGA: no signature */
    }
}

static ts_status decode_stb(kind k, const unsigned char *buf, size_t len, uint64_t max_pixels,
                            const tsio_pnm_head *ph, ts_image *out, char *err, size_t errlen);


ts_status tsio_load_memory(const unsigned char *buf, size_t len, const tsio_load_opts *o,
                           ts_image *out, char *err, size_t errlen)
{
    uint64_t max_pixels = o && o->max_pixels ? o->max_pixels : TS_DEFAULT_MAX_PIXELS;
    memset(out, 0, sizeof *out);
    clear(err, errlen);
    if (!buf || len == 0)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "empty file");
    /* ---- photos: WebP, TIFF, formats named but not read, GIF frame count (photo_formats.c) */
    int taken = 0;
    ts_status pst = tsio_photo_load(buf, len, max_pixels, o ? o->meta : NULL, out,
                                    o ? o->notice : NULL, o ? o->noticelen : 0, &taken, err,
                                    errlen);
    if (taken)
        return pst;
    /* ---- end photos */
    kind k = sniff(buf, len);
    tsio_pnm_head ph = {0};
    ts_status st = guard(k, buf, len, max_pixels, &ph, err, errlen);
    if (st != TS_OK)
        return st;
    if (k == K_JPEG)
        return tsio_jpeg_decode(buf, len, max_pixels, o ? o->meta : NULL, out, err, errlen);
    if (k == K_PNG)
        return tsio_png_decode(buf, len, max_pixels, o ? o->meta : NULL, out, err, errlen);
    if (len > INT_MAX) /* stb takes an int length */
        return tsio_fail(err, errlen, TS_ERR_TOO_LARGE, "file is over 2 GiB");
    tsio_psd_alpha pa;
    if (k == K_PSD) {
        if ((st = tsio_guard_psd(buf, len, &pa, err, errlen)) != TS_OK)
            return st;
        if (pa.active) {
            st = decode_stb(k, pa.copy, pa.copy_len, max_pixels, &ph, out, err, errlen);
            if (st == TS_OK && out->channels == 4)
                tsio_psd_unmatte(out, &pa);
            tsio_psd_alpha_free(&pa);
            return st;
        }
    }
    return decode_stb(k, buf, len, max_pixels, &ph, out, err, errlen);
}

/* stb's formats, guards passed: measure, check the limit, decode within the budget. */
static ts_status decode_stb(kind k, const unsigned char *buf, size_t len, uint64_t max_pixels,
                            const tsio_pnm_head *ph, ts_image *out, char *err, size_t errlen)
{
    ts_status st;
    int w = 0, h = 0, n = 0;
    budget_set(BUDGET_INFO);
    int ok = stbi_info_from_memory(buf, (int)len, &w, &h, &n);
    int is16 = ok && stbi_is_16_bit_from_memory(buf, (int)len);
    budget_end();
    /* stb 2.27 never reports a PSD as 16-bit (its check skips fields with sizeof): read the
     * depth field itself. */
    if (ok && k == K_PSD && len >= 24)
        is16 = (buf[22] << 8 | buf[23]) == 16;
    /* stb 2.27's BMP info passes a top-down image's negative height through. */
    if (ok && k == K_BMP && h < 0 && h != INT_MIN)
        h = -h;
    if (!ok)
        return stb_failed(k, w, h, err, errlen);
    if ((st = tsio_check_limit((uint64_t)w, (uint64_t)h, max_pixels, err, errlen)) != TS_OK)
        return st;

    int bytes = is16 ? 2 : 1;
    budget_set(decode_budget(w, h, bytes, len));
    void *data = is16 ? (void *)stbi_load_16_from_memory(buf, (int)len, &w, &h, &n, 0)
                      : (void *)stbi_load_from_memory(buf, (int)len, &w, &h, &n, 0);
    budget_end();
    if (!data)
        return stb_failed(k, w, h, err, errlen);
    /* The decoder's own idea of the size must still be one tessera can hold. */
    if ((st = tsio_check_limit((uint64_t)w, (uint64_t)h, max_pixels, err, errlen)) != TS_OK || n < 1 ||
        n > 4) {
        free(data);
        return st != TS_OK ? st : tsio_fail(err, errlen, TS_ERR_FORMAT, "%d channels", n);
    }
    out->data = data; /* a plain malloc block, as ts_image_alloc's */
    out->width = w;
    out->height = h;
    out->channels = n;
    out->bytes = bytes;
    out->pitch = (size_t)w * (size_t)n * (size_t)bytes;
    if (k == K_PNM)
        pnm_fix(ph, out);
    return TS_OK;
}

/* Largest file worth reading for a pixel limit: raw samples twice over (uncompressed formats,
 * worst-case PNG/JPEG) plus room for metadata, and never past stb's int. */
static size_t file_cap(uint64_t max_pixels)
{
    uint64_t cap = (uint64_t)64 << 20;
    if (max_pixels <= (UINT64_MAX - cap) / 16)
        cap += max_pixels * 16;
    else
        cap = UINT64_MAX;
    return cap > INT_MAX ? INT_MAX : (size_t)cap;
}

static ts_status read_fd(int fd, unsigned char *buf, size_t want, size_t *got, char *err,
                         size_t errlen)
{
    size_t n = 0;
    while (n < want) {
        ssize_t r = read(fd, buf + n, want - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            char eb[128];
            return tsio_fail(err, errlen, TS_ERR_IO, "%s", tsio_errtext(errno, eb, sizeof eb));
        }
        if (r == 0)
            break; /* shrank while reading: decode what is there */
        n += (size_t)r;
    }
    *got = n;
    return TS_OK;
}

/* The file's head: enough for every header tessera parses before deciding how much to read. */
#define HEAD_BYTES ((size_t)64 << 10)

ts_status tsio_load(const char *path, const tsio_load_opts *o, ts_image *out, char *err,
                    size_t errlen)
{
    uint64_t max_pixels = o && o->max_pixels ? o->max_pixels : TS_DEFAULT_MAX_PIXELS;
    char eb[128];
    memset(out, 0, sizeof *out);
    clear(err, errlen);
    /* O_NONBLOCK: opening a FIFO must not hang; it is refused below anyway. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return tsio_fail(err, errlen, TS_ERR_IO, "%s", tsio_errtext(errno, eb, sizeof eb));
    struct stat sb;
    ts_status st = TS_OK;
    size_t cap = file_cap(max_pixels);
    if (fstat(fd, &sb) != 0)
        st = tsio_fail(err, errlen, TS_ERR_IO, "%s", tsio_errtext(errno, eb, sizeof eb));
    else if (S_ISDIR(sb.st_mode))
        st = tsio_fail(err, errlen, TS_ERR_IO, "is a directory");
    else if (!S_ISREG(sb.st_mode))
        st = tsio_fail(err, errlen, TS_ERR_IO, "not a regular file");
    else if (sb.st_size == 0)
        st = tsio_fail(err, errlen, TS_ERR_FORMAT, "empty file");
    if (st != TS_OK) {
        close(fd);
        return st;
    }
    /* The head first: a TGA is read only as far as its header's image can reach (a sparse or
     * padded file costs what its image does); other formats up to the cap. */
    uint64_t fsize = (uint64_t)sb.st_size;
    size_t head = fsize < HEAD_BYTES ? (size_t)fsize : HEAD_BYTES, got = 0;
    unsigned char *buf = malloc(head);
    if (!buf) {
        close(fd);
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory reading %zu bytes", head);
    }
    st = read_fd(fd, buf, head, &got, err, errlen);
    size_t want = got;
    if (st == TS_OK && got == head && fsize > head) {
        size_t limit = sniff(buf, got) == K_OTHER ? tsio_tga_bytes(buf, got, max_pixels, SIZE_MAX) : SIZE_MAX;
        want = fsize < limit ? (size_t)fsize : limit;
        if (limit == SIZE_MAX && fsize > cap)
            st = tsio_fail(err, errlen, TS_ERR_TOO_LARGE,
                           "file is %llu bytes, over the %zu that --max-pixels %llu allows",
                           (unsigned long long)fsize, cap, (unsigned long long)max_pixels);
        else if (want > cap)
            want = cap;
    }
    if (st == TS_OK && want > got) {
        unsigned char *nb = realloc(buf, want);
        size_t more = 0;
        if (!nb)
            st = tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory reading %zu bytes", want);
        else {
            buf = nb;
            st = read_fd(fd, buf + got, want - got, &more, err, errlen);
            got += more;
        }
    }
    close(fd);
    if (st == TS_OK)
        st = tsio_load_memory(buf, got, o, out, err, errlen);
    free(buf);
    return st;
}
