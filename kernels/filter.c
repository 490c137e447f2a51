/* filter.c - the filter banks of the conv ops and kernel files.
 *
 * Filters are built here once, so every backend gets the same float weights (and, where the
 * weights are integers, the same exact integer weights and divisor). A kernel file is K*K weights
 * (K odd, 1..31) and an optional divisor; the loader reads only regular files, so a FIFO or a
 * device named by kernel:FILE is refused instead of blocking the batch.
 */
#include "op_table.h"
#include "ts_math.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* Sets exact integer weights (one output per call) and derives the float weights. */
static void filter_set_int(ts_filter *f, int o, const int32_t *iw)
{
    int taps = f->k * f->k;
    for (int t = 0; t < taps; t++) {
        f->iw[o * taps + t] = iw[t];
        f->w[o * taps + t] = (float)((double)iw[t] / f->divisor);
    }
}

void filter_box(ts_filter *f, int k)
{
    int32_t iw[TS_MAX_K * TS_MAX_K];
    memset(f, 0, sizeof *f);
    f->k = k;
    f->outputs = 1;
    f->exact = 1;
    f->divisor = k * k;
    f->separable = 1;
    for (int i = 0; i < k * k; i++)
        iw[i] = 1;
    for (int i = 0; i < k; i++)
        f->row[i] = f->col[i] = 1.0f; /* integer factors; the divisor applies to their product */
    filter_set_int(f, 0, iw);
}

void filter_gauss(ts_filter *f, int k, double sigma)
{
    double g[TS_MAX_K], sum = 0;
    int r = (k - 1) / 2;
    memset(f, 0, sizeof *f);
    f->k = k;
    f->outputs = 1;
    f->separable = 1;
    for (int i = 0; i < k; i++) {
        double x = i - r;
        g[i] = exp(-(x * x) / (2 * sigma * sigma));
        sum += g[i];
    }
    for (int i = 0; i < k; i++) {
        g[i] /= sum;
        f->row[i] = f->col[i] = (float)g[i];
    }
    for (int y = 0; y < k; y++)
        for (int x = 0; x < k; x++)
            f->w[y * k + x] = (float)(g[y] * g[x]);
}

void filter_3x3(ts_filter *f, int outputs, const int32_t *iw, int magnitude)
{
    memset(f, 0, sizeof *f);
    f->k = 3;
    f->outputs = outputs;
    f->exact = 1;
    f->divisor = 1;
    f->magnitude = magnitude;
    for (int o = 0; o < outputs; o++)
        filter_set_int(f, o, iw + 9 * o);
}

void filter_sharpen(ts_filter *f, double a)
{
    if (a == floor(a) && fabs(a) <= 1000) {
        int32_t ia = (int32_t)a;
        int32_t iw[9] = {0, -ia, 0, -ia, 1 + 4 * ia, -ia, 0, -ia, 0};
        filter_3x3(f, 1, iw, 0);
        return;
    }
    float fa = (float)a;
    float w[9] = {0, -fa, 0, -fa, 1 + 4 * fa, -fa, 0, -fa, 0};
    memset(f, 0, sizeof *f);
    f->k = 3;
    f->outputs = 1;
    memcpy(f->w, w, sizeof w);
}

/* Keeps a filter exact only while int32 accumulation of 16-bit samples cannot overflow. */
static void filter_check_exact(ts_filter *f)
{
    if (!f->exact)
        return;
    int taps = f->k * f->k;
    for (int o = 0; o < f->outputs; o++) {
        int64_t s = 0;
        for (int t = 0; t < taps; t++)
            s += llabs((long long)f->iw[o * taps + t]);
        if (s > TS_EXACT_WEIGHT_SUM)
            f->exact = 0; /* the float weights are already set */
    }
}

ts_status ts_filter_parse(const char *text, size_t len, ts_filter *f, char *err, size_t errlen)
{
    double v[TS_MAX_K * TS_MAX_K];
    int n = 0, have_div = 0;
    double div = 1;
    size_t i = 0;
    int line = 1;
    memset(f, 0, sizeof *f);
#define KF_FAIL(...)                                                                               \
    do {                                                                                           \
        if (err && errlen)                                                                         \
            snprintf(err, errlen, __VA_ARGS__);                                                    \
        return ts_fail(TS_ERR_FORMAT, __VA_ARGS__);                                                \
    } while (0)
    if (len > KERNEL_FILE_MAX)
        KF_FAIL("kernel file is larger than %u bytes", KERNEL_FILE_MAX);
    while (i < len) {
        char c = text[i];
        if (c == '\n') {
            line++;
            i++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == ',' || c == ';') {
            i++;
            continue;
        }
        if (c == '#') {
            while (i < len && text[i] != '\n')
                i++;
            continue;
        }
        int is_div = 0;
        if (c == '/') {
            is_div = 1;
            i++;
        } else if (len - i >= 7 && strncmp(text + i, "divisor", 7) == 0) {
            is_div = 1;
            i += 7;
            while (i < len && (text[i] == ' ' || text[i] == '\t'))
                i++;
            if (i < len && (text[i] == ':' || text[i] == '='))
                i++;
        }
        while (is_div && i < len && (text[i] == ' ' || text[i] == '\t'))
            i++;
        /* one token: up to the next separator */
        char tok[64];
        size_t tl = 0;
        while (i < len && !strchr(" \t\r\n,;#", text[i])) {
            if (tl + 1 >= sizeof tok)
                KF_FAIL("line %d: number too long", line);
            if (text[i] == '\0')
                KF_FAIL("line %d: NUL byte in kernel file", line);
            tok[tl++] = text[i++];
        }
        tok[tl] = '\0';
        double x;
        if (tl == 0 || ops_parse_float(tok, &x) != 0) {
            if (tl && (strstr(tok, "nan") || strstr(tok, "NAN") || strstr(tok, "inf") ||
                       strstr(tok, "INF") || strstr(tok, "Inf") || strstr(tok, "NaN")))
                KF_FAIL("line %d: '%s' is not a finite number", line, tok);
            KF_FAIL("line %d: '%s' is not a number", line, tl ? tok : (is_div ? "divisor" : "?"));
        }
        if (fabs(x) > 1e9)
            KF_FAIL("line %d: %s is out of range (|w| <= 1e9)", line, tok);
        if (is_div) {
            if (have_div)
                KF_FAIL("line %d: second divisor", line);
            if (x == 0)
                KF_FAIL("line %d: divisor is zero", line);
            have_div = 1;
            div = x;
            continue;
        }
        if (have_div)
            KF_FAIL("line %d: weights after the divisor line", line);
        if (n == TS_MAX_K * TS_MAX_K)
            KF_FAIL("more than %d weights (K is at most %d)", TS_MAX_K * TS_MAX_K, TS_MAX_K);
        v[n++] = x;
    }
    if (n == 0)
        KF_FAIL("no weights in kernel file");
    int k = (int)lround(sqrt((double)n));
    if (k * k != n)
        KF_FAIL("%d weights is not a square K x K", n);
    if (k % 2 == 0)
        KF_FAIL("%d weights make K = %d, which is even (K must be odd)", n, k);
    for (int t = 0; t < n; t++) /* a tiny divisor takes a weight past float (found by fuzzing) */
        if (!(fabs(v[t] / div) <= 1e9))
            KF_FAIL("weight %g / divisor %g is out of range (|w| <= 1e9)", v[t], div);
#undef KF_FAIL
    f->k = k;
    f->outputs = 1;
    int integral = div == floor(div) && fabs(div) <= 1e6;
    for (int t = 0; t < n; t++)
        integral = integral && v[t] == floor(v[t]) && fabs(v[t]) <= TS_EXACT_WEIGHT_SUM;
    if (integral) {
        int32_t iw[TS_MAX_K * TS_MAX_K];
        int sign = div < 0 ? -1 : 1;
        f->exact = 1;
        f->divisor = (int32_t)(div * sign);
        for (int t = 0; t < n; t++)
            iw[t] = (int32_t)v[t] * sign;
        filter_set_int(f, 0, iw);
        filter_check_exact(f);
    } else {
        for (int t = 0; t < n; t++)
            f->w[t] = (float)(v[t] / div);
    }
    return TS_OK;
}


/* Why a file that is not a regular file cannot be a kernel file. */
static const char *not_regular(mode_t m)
{
    return S_ISDIR(m)    ? "is a directory"
           : S_ISFIFO(m) ? "is a FIFO (a kernel file must be a regular file)"
           : S_ISSOCK(m) ? "is a socket (a kernel file must be a regular file)"
                         : "is a device (a kernel file must be a regular file)";
}

/* Reads at most `max` bytes (a file that grows while read is cut there); -1 on a read error. */
static ssize_t read_upto(int fd, char *buf, size_t max)
{
    size_t len = 0;
    while (len < max) {
        ssize_t n = read(fd, buf + len, max - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        len += (size_t)n;
    }
    return (ssize_t)len;
}

/* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever; fstat on the
 * open descriptor then refuses everything but a regular file (no race with a rename). */
ts_status filter_load(const char *path, ts_filter *f, char *err, size_t errlen)
{
    char why[200];
    ts_status st = TS_ERR_IO;
    char *buf = NULL;
    struct stat sb;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &sb) != 0) {
        snprintf(why, sizeof why, "%s", strerror(errno));
    } else if (!S_ISREG(sb.st_mode)) {
        snprintf(why, sizeof why, "%s", not_regular(sb.st_mode));
    } else if (!(buf = malloc(KERNEL_FILE_MAX + 1))) {
        st = TS_ERR_NOMEM;
        snprintf(why, sizeof why, "out of memory");
    } else {
        /* one byte past the limit, so ts_filter_parse can say the file is too large */
        ssize_t len = read_upto(fd, buf, KERNEL_FILE_MAX + 1);
        if (len < 0)
            snprintf(why, sizeof why, "cannot read: %s", strerror(errno));
        else
            st = ts_filter_parse(buf, (size_t)len, f, why, sizeof why);
    }
    if (fd >= 0)
        close(fd);
    free(buf);
    if (st == TS_OK)
        return TS_OK;
    if (err && errlen)
        snprintf(err, errlen, "%s: %s", path, why);
    return ts_fail(st, "%s: %s", path, why);
}
