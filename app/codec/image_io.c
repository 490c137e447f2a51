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

/* The message for a failed stb call on bytes of format `name` (TGA: bytes nothing else took). */
static ts_status stb_failed(const char *name, int w, int h, char *err, size_t errlen)
{
    const char *why = stbi_failure_reason();
    if (stb_over_budget)
        return tsio_fail(err, errlen, TS_ERR_FORMAT,
                         "corrupt %s (decoding needs more memory than a %dx%d image may)",
                         name, w, h);
    if (why && strcmp(why, "outofmem") == 0)
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory decoding a %dx%d %s", w, h,
                         name);
    if (why && strcmp(why, "too large") == 0)
        return tsio_fail(err, errlen, TS_ERR_TOO_LARGE, "image is over %d pixels on a side",
                         TS_MAX_DIM);
    if (strcmp(name, "TGA") == 0) /* no signature: a header stb refuses is no TGA at all */
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "not an image (unknown format)");
    return tsio_fail(err, errlen, TS_ERR_FORMAT, "corrupt %s (%s)", name, why ? why : "?");
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

static ts_status decode_stb(const char *name, const unsigned char *buf, size_t len,
                            uint64_t max_pixels, const tsio_pnm_head *ph, ts_image *out,
                            char *err, size_t errlen);

/* ---------------------------------------------------------------- the rows' decoders */

ts_status tsio_png_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                        ts_image *out, char *err, size_t errlen)
{
    ts_status st = guard_png(buf, len, a->max_pixels, err, errlen);
    return st != TS_OK ? st : tsio_png_decode(buf, len, a->max_pixels, a->meta, out, err, errlen);
}

ts_status tsio_jpeg_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                         ts_image *out, char *err, size_t errlen)
{
    return tsio_jpeg_decode(buf, len, a->max_pixels, a->meta, out, err, errlen);
}

ts_status tsio_bmp_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                        ts_image *out, char *err, size_t errlen)
{
    ts_status st = tsio_guard_bmp(buf, len, err, errlen);
    return st != TS_OK ? st : decode_stb("BMP", buf, len, a->max_pixels, NULL, out, err, errlen);
}

ts_status tsio_gif_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                        ts_image *out, char *err, size_t errlen)
{
    ts_status st = tsio_guard_gif(buf, len, err, errlen);
    if (st == TS_OK)
        st = decode_stb("GIF", buf, len, a->max_pixels, NULL, out, err, errlen);
    int frames = st == TS_OK ? tsio_gif_frames(buf, len) : 0;
    if (frames > 1) {
        char msg[80];
        snprintf(msg, sizeof msg, "animated GIF: first of %d frames", frames);
        tsio_add_notice(a->notice, a->noticelen, msg);
    }
    return st;
}

ts_status tsio_pnm_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                        ts_image *out, char *err, size_t errlen)
{
    tsio_pnm_head ph = {0};
    ts_status st = tsio_guard_pnm(buf, len, &ph, err, errlen);
    return st != TS_OK ? st : decode_stb("PNM", buf, len, a->max_pixels, &ph, out, err, errlen);
}

ts_status tsio_tga_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                        ts_image *out, char *err, size_t errlen)
{
    ts_status st = tsio_guard_tga(buf, len, a->max_pixels, err, errlen);
    return st != TS_OK ? st : decode_stb("TGA", buf, len, a->max_pixels, NULL, out, err, errlen);
}

ts_status tsio_psd_load(const unsigned char *buf, size_t len, const tsio_decode_args *a,
                        ts_image *out, char *err, size_t errlen)
{
    tsio_psd_alpha pa;
    ts_status st = tsio_guard_psd(buf, len, &pa, err, errlen);
    if (st != TS_OK || !pa.active)
        return st != TS_OK ? st
                           : decode_stb("PSD", buf, len, a->max_pixels, NULL, out, err, errlen);
    st = decode_stb("PSD", pa.copy, pa.copy_len, a->max_pixels, NULL, out, err, errlen);
    if (st == TS_OK && out->channels == 4)
        tsio_psd_unmatte(out, &pa);
    tsio_psd_alpha_free(&pa);
    return st;
}

ts_status tsio_load_memory(const unsigned char *buf, size_t len, const tsio_load_opts *o,
                           ts_image *out, char *err, size_t errlen)
{
    tsio_decode_args a = {o && o->max_pixels ? o->max_pixels : TS_DEFAULT_MAX_PIXELS,
                          o ? o->meta : NULL, o ? o->notice : NULL, o ? o->noticelen : 0};
    memset(out, 0, sizeof *out);
    clear(err, errlen);
    if (!buf || len == 0)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "empty file");
    const tsio_codec *c = tsio_codec_sniff(buf, len);
    if (!c)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "not an image (unknown format)");
    if (!c->decode)
        return tsio_fail(err, errlen, TS_ERR_UNSUPPORTED, "%s", c->unsupported);
    return c->decode(buf, len, &a, out, err, errlen);
}

/* stb's formats, guards passed: measure, check the limit, decode within the budget. */
static ts_status decode_stb(const char *name, const unsigned char *buf, size_t len,
                            uint64_t max_pixels, const tsio_pnm_head *ph, ts_image *out,
                            char *err, size_t errlen)
{
    if (len > INT_MAX) /* stb takes an int length */
        return tsio_fail(err, errlen, TS_ERR_TOO_LARGE, "file is over 2 GiB");
    ts_status st;
    int w = 0, h = 0, n = 0;
    budget_set(BUDGET_INFO);
    int ok = stbi_info_from_memory(buf, (int)len, &w, &h, &n);
    int is16 = ok && stbi_is_16_bit_from_memory(buf, (int)len);
    budget_end();
    /* stb 2.27 never reports a PSD as 16-bit (its check skips fields with sizeof): read the
     * depth field itself. */
    if (ok && strcmp(name, "PSD") == 0 && len >= 24)
        is16 = (buf[22] << 8 | buf[23]) == 16;
    /* stb 2.27's BMP info passes a top-down image's negative height through. */
    if (ok && strcmp(name, "BMP") == 0 && h < 0 && h != INT_MIN)
        h = -h;
    if (!ok)
        return stb_failed(name, w, h, err, errlen);
    if ((st = tsio_check_limit((uint64_t)w, (uint64_t)h, max_pixels, err, errlen)) != TS_OK)
        return st;

    int bytes = is16 ? 2 : 1;
    budget_set(decode_budget(w, h, bytes, len));
    void *data = is16 ? (void *)stbi_load_16_from_memory(buf, (int)len, &w, &h, &n, 0)
                      : (void *)stbi_load_from_memory(buf, (int)len, &w, &h, &n, 0);
    budget_end();
    if (!data)
        return stb_failed(name, w, h, err, errlen);
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
    if (ph)
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

/* The one guarded read (see image_io.h): size first, then the head, then only what the format's
 * probe allows. */
ts_status tsio_read_file(const char *path, uint64_t max_pixels, const tsio_codec *only,
                         unsigned char **out, size_t *outlen, const tsio_codec **codec, char *err,
                         size_t errlen)
{
    char eb[128];
    *out = NULL;
    *outlen = 0;
    if (codec)
        *codec = NULL;
    if (!max_pixels)
        max_pixels = TS_DEFAULT_MAX_PIXELS;
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
    uint64_t fsize = (uint64_t)sb.st_size;
    size_t head = fsize < TSIO_HEAD_BYTES ? (size_t)fsize : TSIO_HEAD_BYTES, got = 0, want = 0;
    unsigned char *buf = malloc(head);
    if (!buf) {
        close(fd);
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory reading %zu bytes", head);
    }
    st = read_fd(fd, buf, head, &got, err, errlen);
    const tsio_codec *c = st == TS_OK ? tsio_codec_sniff(buf, got) : NULL;
    if (st == TS_OK && !c) { /* nothing more is read of a file no format takes */
        st = tsio_fail(err, errlen, TS_ERR_FORMAT, "not an image (unknown format)");
    } else if (st == TS_OK && only && c != only) {
        st = tsio_fail(err, errlen, TS_ERR_UNSUPPORTED, "not %s but %s", only->name, c->name);
    } else if (st == TS_OK && !c->decode) {
        st = tsio_fail(err, errlen, TS_ERR_UNSUPPORTED, "%s", c->unsupported);
    } else if (st == TS_OK) {
        want = fsize > SIZE_MAX ? SIZE_MAX : (size_t)fsize;
        if (c->probe)
            st = c->probe(buf, got, fsize, max_pixels, &want, err, errlen);
        if (st == TS_OK && want > cap)
            st = tsio_fail(err, errlen, TS_ERR_TOO_LARGE,
                           "file is %llu bytes, over the %zu that --max-pixels %llu allows",
                           (unsigned long long)fsize, cap, (unsigned long long)max_pixels);
    }
    if (st == TS_OK && got == head && want > got) {
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
    if (st != TS_OK) {
        free(buf);
        return st;
    }
    *out = buf;
    *outlen = got;
    if (codec)
        *codec = c;
    return TS_OK;
}

ts_status tsio_load(const char *path, const tsio_load_opts *o, ts_image *out, char *err,
                    size_t errlen)
{
    unsigned char *buf;
    size_t len;
    memset(out, 0, sizeof *out);
    clear(err, errlen);
    ts_status st = tsio_read_file(path, o ? o->max_pixels : 0, NULL, &buf, &len, NULL, err, errlen);
    if (st != TS_OK)
        return st;
    st = tsio_load_memory(buf, len, o, out, err, errlen);
    free(buf);
    return st;
}
