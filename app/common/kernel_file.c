/* kernel_file.c - kernel:FILE read by the app and handed to the library as weights, and the
 * GPU runtime's settings from the environment: the library (kernels/) opens no files and reads
 * no environment, so both happen here. */
#include "kernel_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
ts_status app_kernel_read(const char *path, ts_filter *f, char *err, size_t errlen)
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
    } else if (!(buf = malloc(TS_KERNEL_FILE_MAX + 1))) {
        st = TS_ERR_NOMEM;
        snprintf(why, sizeof why, "out of memory");
    } else {
        /* one byte past the limit, so ts_filter_parse can say the file is too large */
        ssize_t len = read_upto(fd, buf, TS_KERNEL_FILE_MAX + 1);
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

ts_status app_chain_parse(const char *text, ts_chain *chain, char *err, size_t errlen)
{
    ts_status st = ts_chain_parse_with(text, app_kernel_read, chain, err, errlen);
    if (st == TS_OK && chain->n > APP_MAX_CHAIN) {
        ts_chain_free(chain);
        if (err && errlen)
            snprintf(err, errlen, "more than %d operations (one more is kept for the EXIF "
                     "orientation)", APP_MAX_CHAIN);
        return ts_fail(TS_ERR_TOO_LARGE, "more than %d operations", APP_MAX_CHAIN);
    }
    return st;
}

ts_status app_op_parse(const char *item, ts_op *op, char *err, size_t errlen)
{
    return ts_op_parse_with(item, app_kernel_read, op, err, errlen);
}

static const char *env(const char *name)
{
    const char *s = getenv(name);
    return s && *s ? s : NULL;
}

void app_gpu_env(void)
{
    ts_gpu_settings g = {0};
    const char *s;
    if ((s = env("TESSERA_DEVICE"))) {
        char *end;
        long id = strtol(s, &end, 10);
        g.device_set = 1;
        g.device = *end || id < 0 || id > 1 << 20 ? -1 : (int)id; /* -1: refused on open */
    }
    if ((s = env("TESSERA_MAX_CC")))
        g.max_cc = atoi(s);
    if ((s = env("TESSERA_GPU_MEM_LIMIT"))) {
        char *end;
        double v = strtod(s, &end);
        double unit = *end == 'K'   ? 1024.0
                      : *end == 'M' ? 1048576.0
                      : *end == 'G' ? 1073741824.0
                                    : 1.0;
        g.mem_limit = v > 0 && v * unit < 1e18 ? (size_t)(v * unit) : 0;
    }
    if ((s = env("TESSERA_RESIZE_PLAN_CACHE")))
        g.resize_plan_cache_off = strcmp(s, "0") == 0;
    ts_gpu_set(&g);
}
