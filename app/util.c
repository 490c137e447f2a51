/* util.c - see util.h. */
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void ts_warn(const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", TS_PROG, buf); /* one call: lines of threads do not interleave */
}

static void oom(size_t n)
{
    fprintf(stderr, "%s: out of memory (%zu bytes)\n", TS_PROG, n);
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

int cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}
