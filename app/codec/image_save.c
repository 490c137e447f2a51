/* image_save.c - see image_io.h: encoding by format, the plain save, and the safe save through a
 * registered temp file.
 *
 * Every write goes through a FILE* whose errors are checked (fwrite, fflush, ferror, fclose), so a
 * full disk is an error; a failed save removes the file it wrote. The safe save creates
 * ".NAME.XXXXXX.tmp" beside the target (O_EXCL, a random name), registered in a lock-free table
 * that a signal handler can walk (tsio_remove_temps) under a lock that a signal-handling thread
 * takes (tsio_remove_temps_final), and renames it over the target at the end (link() first when
 * not forced, so that a file that appeared meanwhile is never replaced).
 */
#include "image_io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Declarations only: image_io.c compiles the implementation. */
#include <stb_image_write.h>

static void clear(char *buf, size_t len)
{
    if (buf && len)
        buf[0] = '\0';
}

/* ---------------------------------------------------------------- encoding */


/* A packed 8-bit copy with out_ch channels taken from source channels map[] (16-bit rounded to
 * round(v / 257)); NULL on OOM. */
static unsigned char *pack8(const ts_image *im, int out_ch, const int *map)
{
    size_t n = (size_t)im->width * (size_t)out_ch;
    unsigned char *dst = malloc(n * (size_t)im->height);
    if (!dst)
        return NULL;
    unsigned char *d = dst;
    for (int y = 0; y < im->height; y++)
        for (int x = 0; x < im->width; x++)
            for (int c = 0; c < out_ch; c++) {
                unsigned v = ts_get(im, x, y, map[c]);
                *d++ = (unsigned char)(im->bytes == 2 ? (v + 128) / 257 : v);
            }
    return dst;
}

typedef struct sink {
    FILE *f;
    int err; /* errno of the first failed write */
} sink;

static void sink_write(void *ctx, void *data, int size)
{
    sink *s = ctx;
    errno = 0;
    if (!s->err && size > 0 && fwrite(data, 1, (size_t)size, s->f) != (size_t)size)
        s->err = errno ? errno : EIO;
}

/* BMP and TGA through stb_image_write (8-bit only, packed rows, int sizes). */
static ts_status encode_stb(FILE *f, tsio_format fmt, const ts_image *im, char *notice,
                            size_t noticelen, char *err, size_t errlen);

ts_status tsio_bmp_save(FILE *f, const ts_image *im, const tsio_encode_args *a, char *notice,
                        size_t noticelen, char *err, size_t errlen)
{
    return encode_stb(f, TSIO_BMP, im, notice, noticelen, err, errlen);
}

ts_status tsio_tga_save(FILE *f, const ts_image *im, const tsio_encode_args *a, char *notice,
                        size_t noticelen, char *err, size_t errlen)
{
    return encode_stb(f, TSIO_TGA, im, notice, noticelen, err, errlen);
}

static ts_status encode_stb(FILE *f, tsio_format fmt, const ts_image *im, char *notice,
                            size_t noticelen, char *err, size_t errlen)
{
    static const int id[4] = {0, 1, 2, 3}, ga_to_rgba[4] = {0, 0, 0, 1};
    int ch = im->channels;
    const int *map = id;
    if (fmt == TSIO_BMP && ch == 2) { /* stb's BMP has no gray+alpha: RGBA keeps the alpha */
        ch = 4;
        map = ga_to_rgba;
    }
    if (im->bytes == 2)
        tsio_add_notice(notice, noticelen,
                        fmt == TSIO_BMP ? "16-bit converted to 8-bit (BMP is 8-bit)"
                                        : "16-bit converted to 8-bit (TGA is 8-bit)");
    int side = fmt == TSIO_BMP ? INT_MAX : 65535; /* TGA stores 16-bit sides */
    if (im->width > side || im->height > side ||
        (uint64_t)im->width * (uint64_t)im->height * 4 > (uint64_t)INT_MAX - 1024)
        return tsio_fail(err, errlen, TS_ERR_TOO_LARGE, "image is %dx%d, too large for %s",
                         im->width, im->height, fmt == TSIO_BMP ? "BMP" : "TGA");
    unsigned char *tmp = NULL;
    const void *data = im->data;
    if (im->bytes != 1 || map != id || im->pitch != ts_row_bytes(im)) {
        if (!(tmp = pack8(im, ch, map)))
            return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory converting for %s",
                             tsio_format_ext(fmt));
        data = tmp;
    }
    sink s = {f, 0};
    int ok = fmt == TSIO_BMP
                 ? stbi_write_bmp_to_func(sink_write, &s, im->width, im->height, ch, data)
                 : stbi_write_tga_to_func(sink_write, &s, im->width, im->height, ch, data);
    free(tmp);
    char eb[128];
    if (s.err)
        return tsio_fail(err, errlen, TS_ERR_IO, "write failed: %s",
                         tsio_errtext(s.err, eb, sizeof eb));
    if (!ok)
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "the %s encoder failed (out of memory?)",
                         tsio_format_ext(fmt));
    return TS_OK;
}

/* Binary PNM: P5 for 1-2 channels, P6 for 3-4 (alpha dropped), maxval 255 or 65535 big-endian. */
ts_status tsio_pnm_save(FILE *f, const ts_image *im, const tsio_encode_args *a, char *notice,
                        size_t noticelen, char *err, size_t errlen)
{
    int out_ch = ts_color_channels(im->channels);
    if (ts_has_alpha(im->channels))
        tsio_add_notice(notice, noticelen, "alpha dropped (PNM has no alpha)");
    size_t rowlen = (size_t)im->width * (size_t)out_ch * (size_t)im->bytes;
    unsigned char *row = malloc(rowlen);
    if (!row)
        return tsio_fail(err, errlen, TS_ERR_NOMEM, "out of memory writing PNM");
    char eb[128];
    errno = 0;
    int bad = fprintf(f, "P%c\n%d %d\n%d\n", out_ch == 1 ? '5' : '6', im->width, im->height,
                      ts_max_value(im->bytes)) < 0;
    for (int y = 0; !bad && y < im->height; y++) {
        unsigned char *d = row;
        for (int x = 0; x < im->width; x++)
            for (int c = 0; c < out_ch; c++) {
                unsigned v = ts_get(im, x, y, c);
                if (im->bytes == 2)
                    *d++ = (unsigned char)(v >> 8);
                *d++ = (unsigned char)v;
            }
        bad = fwrite(row, 1, rowlen, f) != rowlen;
    }
    free(row);
    if (bad)
        return tsio_fail(err, errlen, TS_ERR_IO, "write failed: %s",
                         tsio_errtext(errno ? errno : EIO, eb, sizeof eb));
    return TS_OK;
}

/* The row a save writes with, its arguments, and a check of the image, before any file is
 * touched. */
static ts_status save_prepare(const char *path, const ts_image *im, const tsio_save_opts *o,
                              const tsio_codec **codec, tsio_encode_args *a, char *err,
                              size_t errlen)
{
    tsio_format fmt = o && o->format != TSIO_UNKNOWN ? o->format : tsio_format_from_name(path);
    *codec = tsio_codec_of(fmt);
    if (!*codec || !(*codec)->encode)
        return tsio_fail(err, errlen, TS_ERR_INVALID,
                         "unknown output format (use .png, .jpg, .webp, .bmp, .tga, .pnm, .ppm or .pgm)");
    memset(a, 0, sizeof *a);
    ts_status st = tsio_quality(o ? o->quality : 0, &a->quality, err, errlen);
    if (st != TS_OK)
        return st;
    if (o && o->png_level != TSIO_PNG_LEVEL_STORE && (o->png_level < 0 || o->png_level > 9))
        return tsio_fail(err, errlen, TS_ERR_INVALID, "PNG compression level %d is not in 0..9",
                         o->png_level);
    int level = o && o->png_level ? o->png_level : TSIO_PNG_DEFAULT_LEVEL;
    a->level = level == TSIO_PNG_LEVEL_STORE ? 0 : level;
    a->lossless = o && o->lossless;
    a->meta = o ? o->meta : NULL;
    if (!im || !im->data)
        return tsio_fail(err, errlen, TS_ERR_INVALID, "no image to save");
    st = ts_image_geometry(im->width, im->height, im->channels, im->bytes, NULL, NULL);
    if (st == TS_OK && im->pitch < ts_row_bytes(im))
        st = ts_fail(TS_ERR_INVALID, "pitch %zu is under the row size", im->pitch);
    if (st != TS_OK)
        return tsio_fail(err, errlen, st, "%s", ts_error_detail());
    return TS_OK;
}

/* What tsio_save and tsio_save_atomic write: the row's encoder. */
typedef struct encode_job {
    const tsio_codec *codec;
    const ts_image *im;
    const tsio_encode_args *a;
    char *notice;
    size_t noticelen;
} encode_job;

static ts_status encode_to(FILE *f, void *ctx, char *err, size_t errlen)
{
    const encode_job *j = ctx;
    return j->codec->encode(f, j->im, j->a, j->notice, j->noticelen, err, errlen);
}

static const char *test_device; /* tsio_test_set_write_device */

void tsio_test_set_write_device(const char *path) { test_device = path; }

/* Writes into an open descriptor and closes it; every write and the close are checked. */
static ts_status write_fd(int fd, tsio_writer write, void *ctx, char *err, size_t errlen)
{
    char eb[128];
    if (test_device) {
        int d = open(test_device, O_WRONLY | O_CLOEXEC);
        if (d >= 0) {
            dup2(d, fd);
            close(d);
        }
    }
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        int e = errno;
        close(fd);
        return tsio_fail(err, errlen, TS_ERR_IO, "%s", tsio_errtext(e, eb, sizeof eb));
    }
    ts_status st = write(f, ctx, err, errlen);
    errno = 0;
    if (st == TS_OK && (fflush(f) != 0 || ferror(f)))
        st = tsio_fail(err, errlen, TS_ERR_IO, "write failed: %s",
                       tsio_errtext(errno ? errno : EIO, eb, sizeof eb));
    errno = 0;
    if (fclose(f) != 0 && st == TS_OK)
        st = tsio_fail(err, errlen, TS_ERR_IO, "write failed: %s",
                       tsio_errtext(errno ? errno : EIO, eb, sizeof eb));
    return st;
}

ts_status tsio_save(const char *path, const ts_image *im, const tsio_save_opts *o, char *notice,
                    size_t noticelen, char *err, size_t errlen)
{
    const tsio_codec *c;
    tsio_encode_args a;
    char eb[128];
    clear(notice, noticelen);
    clear(err, errlen);
    ts_status st = save_prepare(path, im, o, &c, &a, err, errlen);
    if (st != TS_OK)
        return st;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd < 0)
        return tsio_fail(err, errlen, TS_ERR_IO, "%s", tsio_errtext(errno, eb, sizeof eb));
    struct stat sb;
    int regular = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
    encode_job j = {c, im, &a, notice, noticelen};
    st = write_fd(fd, encode_to, &j, err, errlen);
    if (st != TS_OK && regular) /* never a partial file; but a device (/dev/full) stays */
        unlink(path);
    return st;
}

/* ---------------------------------------------------------------- temp files */

#define TEMP_SLOTS 256
#define TEMP_PATH 4096

/* Slots for the temp files being written: 0 free, 1 being filled, 2 holds a path to unlink. */
static struct {
    atomic_int state;
    char path[TEMP_PATH];
} temps[TEMP_SLOTS];

_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "signal handlers need lock-free atomics");

/* Held while a temp file is created and registered, so that tsio_remove_temps_final never runs
 * between the open() and the registration (the file would be left behind). */
static pthread_mutex_t temp_lock = PTHREAD_MUTEX_INITIALIZER;

void tsio_remove_temps(void)
{
    for (int i = 0; i < TEMP_SLOTS; i++)
        if (atomic_load(&temps[i].state) == 2)
            unlink(temps[i].path);
}

void tsio_remove_temps_final(void)
{
    pthread_mutex_lock(&temp_lock); /* never released: the process is about to end */
    tsio_remove_temps();
}

/* Registers `path` in a free slot (*slot stays -1 when all are taken). */
static void temp_register(int *slot, const char *path)
{
    for (int i = 0; i < TEMP_SLOTS && *slot < 0; i++) {
        int expect = 0;
        if (atomic_compare_exchange_strong(&temps[i].state, &expect, 1))
            *slot = i;
    }
    if (*slot < 0)
        return; /* all busy: the file is still removed on errors, just not on a signal */
    snprintf(temps[*slot].path, TEMP_PATH, "%s", path);
    atomic_store(&temps[*slot].state, 2);
}

static void temp_unregister(int slot)
{
    if (slot >= 0)
        atomic_store(&temps[slot].state, 0);
}

/* Six characters nobody can predict (getrandom), so no one can place a symlink at the name first;
 * O_EXCL refuses one anyway. */
static void temp_random(char rnd[7])
{
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    static atomic_uint counter;
    unsigned char b[6];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) { /* no entropy source: still distinct */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t r = (uint64_t)ts.tv_nsec ^ (uint64_t)getpid() << 32 ^
                     (uint64_t)atomic_fetch_add(&counter, 1) * 0x9E3779B97F4A7C15ull;
        for (int i = 0; i < 6; i++, r >>= 8)
            b[i] = (unsigned char)r;
    }
    for (int i = 0; i < 6; i++)
        rnd[i] = digits[b[i] % 62];
    rnd[6] = '\0';
}

/* ".NAME.XXXXXX.tmp" beside the target, created with O_EXCL (0666 less the umask, as the target
 * would be) and registered under temp_lock, so no moment leaves an existing file unregistered and
 * a name that someone else's file holds (EEXIST) is never registered. */
static int temp_create(const char *path, char *tmp, size_t tmplen, int *slot)
{
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    const char *base = slash ? slash + 1 : path;
    for (int attempt = 0; attempt < 100; attempt++) {
        char rnd[7];
        temp_random(rnd);
        /* NAME is cut to 200 bytes so that the temp name stays under NAME_MAX. */
        int n = snprintf(tmp, tmplen, "%.*s.%.200s.%s.tmp", dirlen, path, base, rnd);
        if (n < 0 || (size_t)n >= tmplen) {
            errno = ENAMETOOLONG;
            return -1;
        }
        pthread_mutex_lock(&temp_lock);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW, 0666);
        int e = errno;
        if (fd >= 0)
            temp_register(slot, tmp);
        pthread_mutex_unlock(&temp_lock);
        errno = e;
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* Puts the finished temp file in place: rename() with force, else link() so that a file that
 * appeared meanwhile is never replaced (rename when the file system has no hard links). */
static ts_status temp_commit(const char *tmp, const char *path, int force, char *err, size_t errlen)
{
    char eb[128];
    struct stat sb;
    if (!force) {
        if (link(tmp, path) == 0) {
            unlink(tmp);
            return TS_OK;
        }
        if (errno == EEXIST)
            return tsio_fail(err, errlen, TS_ERR_IO, "exists (use --force)");
        if (lstat(path, &sb) == 0)
            return tsio_fail(err, errlen, TS_ERR_IO, "exists (use --force)");
    }
    if (rename(tmp, path) != 0)
        return tsio_fail(err, errlen, TS_ERR_IO, "%s", tsio_errtext(errno, eb, sizeof eb));
    return TS_OK;
}

ts_status tsio_write_atomic(const char *path, int force, tsio_writer write, void *ctx, char *err,
                            size_t errlen)
{
    int slot = -1;
    char eb[128], tmp[TEMP_PATH];
    struct stat sb;
    const char *slash = strrchr(path, '/');
    if (!*(slash ? slash + 1 : path))
        return tsio_fail(err, errlen, TS_ERR_INVALID, "no file name");
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            return tsio_fail(err, errlen, TS_ERR_IO, "is a directory");
        if (!S_ISREG(sb.st_mode)) /* renaming over /dev/null would replace the device */
            return tsio_fail(err, errlen, TS_ERR_IO, "not a regular file");
        if (!force)
            return tsio_fail(err, errlen, TS_ERR_IO, "exists (use --force)");
    } else if (errno != ENOENT) {
        return tsio_fail(err, errlen, TS_ERR_IO, "%s", tsio_errtext(errno, eb, sizeof eb));
    }
    int fd = temp_create(path, tmp, sizeof tmp, &slot);
    if (fd < 0) {
        ts_status st = tsio_fail(err, errlen, TS_ERR_IO,
                                 "cannot create a file in the output directory: %s",
                                 tsio_errtext(errno, eb, sizeof eb));
        temp_unregister(slot);
        return st;
    }
    ts_status st = write_fd(fd, write, ctx, err, errlen);
    if (st == TS_OK)
        st = temp_commit(tmp, path, force, err, errlen);
    if (st != TS_OK)
        unlink(tmp);
    temp_unregister(slot);
    return st;
}

ts_status tsio_save_atomic(const char *path, const ts_image *im, const tsio_save_opts *o, int force,
                           char *notice, size_t noticelen, char *err, size_t errlen)
{
    const tsio_codec *c;
    tsio_encode_args a;
    clear(notice, noticelen);
    clear(err, errlen);
    ts_status st = save_prepare(path, im, o, &c, &a, err, errlen);
    if (st != TS_OK)
        return st;
    encode_job j = {c, im, &a, notice, noticelen};
    return tsio_write_atomic(path, force, encode_to, &j, err, errlen);
}

typedef struct bytes_job {
    const void *buf;
    size_t len;
} bytes_job;

static ts_status write_bytes(FILE *f, void *ctx, char *err, size_t errlen)
{
    const bytes_job *j = ctx;
    char eb[128];
    errno = 0;
    if (j->len && fwrite(j->buf, 1, j->len, f) != j->len)
        return tsio_fail(err, errlen, TS_ERR_IO, "write failed: %s",
                         tsio_errtext(errno ? errno : EIO, eb, sizeof eb));
    return TS_OK;
}

ts_status tsio_save_bytes(const char *path, const void *buf, size_t len, int force, char *err,
                          size_t errlen)
{
    bytes_job j = {buf, len};
    clear(err, errlen);
    return tsio_write_atomic(path, force, write_bytes, &j, err, errlen);
}

int tsio_temp_open(const char *path, char *tmp, size_t tmplen, int *slot)
{
    *slot = -1;
    return temp_create(path, tmp, tmplen, slot);
}

ts_status tsio_temp_finish(const char *tmp, const char *path, int ok, int force, int slot,
                           char *err, size_t errlen)
{
    ts_status st = ok ? temp_commit(tmp, path, force, err, errlen) : TS_ERR_IO;
    if (st != TS_OK)
        unlink(tmp);
    temp_unregister(slot);
    return st;
}
