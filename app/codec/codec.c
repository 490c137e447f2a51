/* codec.c - the helpers every codec shares (codec.h): error text, the pixel limit, notices,
 * metadata. Nothing here calls a codec. */
#include "codec.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

ts_status tsio_fail(char *err, size_t errlen, ts_status st, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (err && errlen)
        snprintf(err, errlen, "%s", tmp);
    return ts_fail(st, "%s", tmp);
}

/* XSI or GNU strerror_r, whichever the feature macros picked. */
const char *tsio_errtext(int e, char *buf, size_t len)
{
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
    return strerror_r(e, buf, len);
#else
    if (strerror_r(e, buf, len) != 0)
        snprintf(buf, len, "error %d", e);
    return buf;
#endif
}

ts_status tsio_check_limit(uint64_t w, uint64_t h, uint64_t max_pixels, char *err, size_t errlen)
{
    if (w == 0 || h == 0)
        return tsio_fail(err, errlen, TS_ERR_FORMAT, "image is %llux%llu (no pixels)",
                         (unsigned long long)w, (unsigned long long)h);
    if (w > TS_MAX_DIM || h > TS_MAX_DIM)
        return tsio_fail(err, errlen, TS_ERR_TOO_LARGE,
                         "image is %llux%llu, over %d pixels on a side", (unsigned long long)w,
                         (unsigned long long)h, TS_MAX_DIM);
    if (w * h > max_pixels)
        return tsio_fail(err, errlen, TS_ERR_TOO_LARGE,
                         "image is %llux%llu, over the limit of %llu pixels (--max-pixels)",
                         (unsigned long long)w, (unsigned long long)h,
                         (unsigned long long)max_pixels);
    return TS_OK;
}

void tsio_meta_free(tsio_meta *m)
{
    if (!m)
        return;
    free(m->exif);
    free(m->icc);
    memset(m, 0, sizeof *m);
}

void tsio_add_notice(char *notice, size_t len, const char *text)
{
    if (!notice || !len)
        return;
    size_t used = strlen(notice);
    snprintf(notice + used, len - used, "%s%s", used ? "; " : "", text);
}
