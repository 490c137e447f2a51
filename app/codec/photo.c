/* photo.c - see photo.h. */
#include "photo.h"

#include "exif.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *photo_orient_text(int o)
{
    static const char *const text[9] = {NULL,        NULL,        "flop",     "rotate:180", "flip",
                                        "transpose", "rotate:90", "transverse", "rotate:270"};
    return o >= 2 && o <= 8 ? text[o] : NULL;
}

int photo_orientation(const tsio_meta *m)
{
    int o = m && m->exif ? tsio_exif_orientation(m->exif, m->exif_len) : 0;
    return o ? o : 1;
}

int photo_orient_ops(const tsio_meta *m, ts_op *op)
{
    const char *t = photo_orient_text(photo_orientation(m));
    if (!t)
        return 0;
    char err[128];
    return ts_op_parse(t, op, err, sizeof err) == TS_OK ? 1 : -1;
}

ts_status photo_chain(const tsio_meta *m, int auto_orient, const ts_chain *user, ts_chain *out,
                      int *orientation)
{
    memset(out, 0, sizeof *out);
    *orientation = 1;
    ts_op *op = malloc(sizeof *op); /* a ts_op holds filter banks: too big for the stack */
    if (!op)
        return ts_fail(TS_ERR_NOMEM, "out of memory");
    ts_status st = TS_OK;
    int r = auto_orient ? photo_orient_ops(m, op) : 0;
    if (r < 0)
        st = TS_ERR_INVALID;
    else if (r > 0 && (st = ts_chain_append(out, op)) == TS_OK)
        *orientation = photo_orientation(m);
    for (int i = 0; st == TS_OK && user && i < user->n; i++)
        st = ts_chain_append(out, &user->ops[i]);
    free(op);
    if (st != TS_OK) {
        ts_chain_free(out);
        *orientation = 1;
    }
    return st;
}

static unsigned char *dup_bytes(const unsigned char *b, size_t n)
{
    unsigned char *c = malloc(n ? n : 1);
    if (c)
        memcpy(c, b, n);
    return c;
}

ts_status photo_meta_out(const tsio_meta *in, int strip, int oriented, int changed,
                         tsio_meta *out)
{
    memset(out, 0, sizeof *out);
    if (strip || !in)
        return TS_OK;
    if (in->icc && in->icc_len) {
        if (!(out->icc = dup_bytes(in->icc, in->icc_len)))
            return ts_fail(TS_ERR_NOMEM, "out of memory");
        out->icc_len = in->icc_len;
    }
    if (in->exif && in->exif_len) {
        /* A malformed block is dropped rather than carried (a reader could trip on it). */
        if (oriented) {
            out->exif = tsio_exif_upright(in->exif, in->exif_len, &out->exif_len);
        } else if (changed) { /* the thumbnail shows the pixels as read */
            out->exif = tsio_exif_without_thumbnail(in->exif, in->exif_len, &out->exif_len);
        } else if (tsio_exif_valid(in->exif, in->exif_len)) { /* as read, thumbnail included */
            /* less a leading "Exif\0\0" (some PNG writers add it): the JPEG writer adds its own */
            size_t skip = in->exif_len >= 6 && memcmp(in->exif, "Exif\0\0", 6) == 0 ? 6 : 0;
            if ((out->exif = dup_bytes(in->exif + skip, in->exif_len - skip)))
                out->exif_len = in->exif_len - skip;
        }
        if (!out->exif && tsio_exif_valid(in->exif, in->exif_len)) {
            tsio_meta_free(out);
            return ts_fail(TS_ERR_NOMEM, "out of memory");
        }
    }
    return TS_OK;
}

ts_status photo_orient_image(ts_pipeline *p, ts_image *im, const tsio_meta *m, int *orientation)
{
    *orientation = 1;
    ts_op *op = malloc(sizeof *op);
    if (!op)
        return ts_fail(TS_ERR_NOMEM, "out of memory");
    int r = photo_orient_ops(m, op);
    ts_status st = r < 0 ? TS_ERR_INVALID : TS_OK;
    if (r > 0) {
        ts_image turned;
        ts_chain one = {1, op};
        ts_run_report rep;
        st = p ? ts_pipeline_run(p, &one, im, &turned, &rep) : ts_ref_op(op, im, &turned);
        if (st == TS_OK) {
            ts_image_free(im);
            *im = turned;
            *orientation = photo_orientation(m);
        }
    }
    free(op);
    return st;
}

int photo_icc_hud(const tsio_meta *m, char *buf, size_t len)
{
    if (!buf || !len)
        return 0;
    buf[0] = '\0';
    if (!m || !tsio_icc_is_non_srgb(m->icc, m->icc_len))
        return 0;
    char d[96];
    if (!tsio_icc_description(m->icc, m->icc_len, d, sizeof d) || !d[0])
        snprintf(d, sizeof d, "unnamed profile");
    snprintf(buf, len, "ICC: %s (not sRGB, shown unconverted)", d);
    return 1;
}
