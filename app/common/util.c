/* util.c - see util.h. */
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Bytes that app_escape writes for c (without the terminator). */
static size_t escape_len(unsigned char c)
{
    if (c >= 0x20 && c != 0x7f)
        return 1;
    return strchr("\a\b\t\n\v\f\r", c) && c ? 2 : 4;
}

char *app_escape(const char *s)
{
    static const char letters[] = "\a\b\t\n\v\f\r", names[] = "abtnvfr";
    size_t n = 1;
    for (const char *p = s; *p; p++)
        n += escape_len((unsigned char)*p);
    char *out = xmalloc(n), *o = out;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        const char *l = *p ? strchr(letters, *p) : NULL;
        if (escape_len(*p) == 1) {
            *o++ = (char)*p;
        } else if (l) {
            *o++ = '\\';
            *o++ = names[l - letters];
        } else { /* ESC is \033, as in C */
            *o++ = '\\';
            *o++ = (char)('0' + (*p >> 6));
            *o++ = (char)('0' + (*p >> 3 & 7));
            *o++ = (char)('0' + (*p & 7));
        }
    }
    *o = '\0';
    return out;
}

char *app_vformat(const char *fmt, va_list ap)
{
    char small[256]; /* most messages fit; a larger one is formatted again at its length */
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0)
        n = 0, small[0] = '\0';
    char *s;
    if ((size_t)n < sizeof small) {
        s = xstrdup(small);
    } else {
        s = xmalloc((size_t)n + 1);
        vsnprintf(s, (size_t)n + 1, fmt, again);
    }
    va_end(again);
    return s;
}

char *app_format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = app_vformat(fmt, ap);
    va_end(ap);
    return s;
}

void app_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *raw = app_vformat(fmt, ap);
    va_end(ap);
    /* Every message passes here, so a file name with a newline or ESC cannot forge a line or
     * drive the terminal, whichever message carries it; no length limit cuts the reason off. */
    char *line = app_escape(raw);
    fprintf(stderr, "%s: %s\n", APP_PROG, line); /* one call: lines of threads do not interleave */
    free(line);
    free(raw);
}

static void oom(size_t n)
{
    fprintf(stderr, "%s: out of memory (%zu bytes)\n", APP_PROG, n);
    exit(1);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

const char *path_base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

const char *path_ext(const char *path)
{
    const char *base = path_base(path), *dot = strrchr(base, '.');
    return dot && dot != base ? dot + 1 : "";
}

char *path_join(const char *dir, const char *name)
{
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    size_t n = dl + 1 + strlen(name) + 1;
    char *s = xmalloc(n);
    snprintf(s, n, "%.*s/%s", (int)dl, dir, name);
    return s;
}

char *path_with_ext(const char *name, const char *ext)
{
    const char *base = path_base(name), *dot = strrchr(base, '.');
    size_t stem = dot && dot != base ? (size_t)(dot - name) : strlen(name);
    size_t n = stem + 1 + strlen(ext) + 1;
    char *s = xmalloc(n);
    snprintf(s, n, "%.*s.%s", (int)stem, name, ext);
    return s;
}

int path_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int path_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int path_stat_errno(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? 0 : errno;
}

int path_mkdirs(const char *path, int *created)
{
    char *p = xstrdup(path);
    int rc = 0;
    *created = 0;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char keep = *s;
        *s = '\0';
        if (mkdir(p, 0777) == 0)
            *created = 1;
        else if (errno != EEXIST || !path_is_dir(p))
            rc = errno == EEXIST ? ENOTDIR : errno;
        *s = keep;
        if (rc || !keep)
            break;
    }
    free(p);
    return rc;
}

uint64_t hash_fnv1a64(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cpu_n;
static void cpu_count_once(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_n = n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

/* Asked once (glibc reads /sys for it on every call; the batch asks per decode step). */
int cpu_count(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, cpu_count_once);
    return cpu_n;
}
