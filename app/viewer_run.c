/* viewer_run.c - the image and its chain: loading, the pipeline run, the host result, saving.
 * On the GPU the pipeline keeps the input there and the chain's result stays there too: the
 * display conversion (viewer_tex.c) reads it, and only a save brings it down in full. */
#include "viewer_run.h"
#include "image_io.h"
#include "photo.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The other frames of an animated GIF (tsio_load gave the first, as RGBA8); a failure leaves
 * the first frame shown, with the reason on stderr. */
static void load_anim(vw_run *r, const char *path, uint64_t max_pixels)
{
    char err[256];
    if (strcasecmp(path_ext(path), "gif") != 0 || r->src.channels != 4 || r->src.bytes != 1)
        return;
    if (vw_anim_load(path, max_pixels, &r->anim, err, sizeof err) < 0)
        ts_warn("%s: %s: showing the first frame", path, err);
    if (r->anim.n && (r->anim.w != r->src.width || r->anim.h != r->src.height))
        vw_anim_free(&r->anim);
    r->anim_at = r->anim.n ? now_ms() + r->anim.delay_ms[0] : 0;
}

double vw_run_anim_due(const vw_run *r) { return r->loaded && r->anim.n ? r->anim_at : 0; }

int vw_run_anim_tick(vw_run *r)
{
    double now = now_ms();
    if (!r->loaded || !r->anim.n || now < r->anim_at)
        return 0;
    r->anim_frame = (r->anim_frame + 1) % r->anim.n;
    size_t row = (size_t)r->anim.w * 4;
    const unsigned char *f = r->anim.px + (size_t)r->anim_frame * row * (size_t)r->anim.h;
    for (int y = 0; y < r->anim.h; y++)
        memcpy((char *)r->src.data + (size_t)y * r->src.pitch, f + (size_t)y * row, row);
    r->gen++; /* a new input: uploaded again, the chain runs on it */
    r->shown_gen++;
    r->dirty = 1;
    /* late frames are not made up: the next one is due a delay after this one was shown */
    r->anim_at = (now - r->anim_at > 100 ? now : r->anim_at) + r->anim.delay_ms[r->anim_frame];
    return 1;
}

void vw_run_load(vw_run *r, const char *path, uint64_t max_pixels)
{
    char err[256];
    tsio_meta meta = {0};
    tsio_load_opts lo = {.max_pixels = max_pixels, .meta = &meta};
    ts_image_free(&r->src);
    r->have_result = r->result_on_gpu = 0;
    r->loaded = 0;
    r->fresh = 1;
    r->load_err[0] = r->run_err[0] = '\0';
    vw_anim_free(&r->anim);
    r->anim_frame = 0;
    r->orientation = 1;
    r->icc_line[0] = '\0';
    if (tsio_load(path, &lo, &r->src, err, sizeof err) == TS_OK) {
        r->loaded = 1;
        /* upright as feh and nsxiv show it: the geometry kernel on the GPU, else the reference */
        if (r->auto_orient &&
            photo_orient_image(r->pipe, &r->src, &meta, &r->orientation) != TS_OK) {
            snprintf(r->load_err, sizeof r->load_err, "%s: %s", path_base(path),
                     ts_error_detail());
            r->orientation = 1;
        }
        photo_icc_hud(&meta, r->icc_line, sizeof r->icc_line);
        if (r->orientation == 1) /* GIF frames are never turned */
            load_anim(r, path, max_pixels);
    } else
        snprintf(r->load_err, sizeof r->load_err, "%s: %s", path_base(path), err);
    tsio_meta_free(&meta);
    r->gen++;
    r->shown_gen++;
    r->dirty = 1;
    memset(r->op_ms, 0, sizeof r->op_ms);
    memset(&r->up_ms, 0, sizeof r->up_ms);
    memset(&r->down_ms, 0, sizeof r->down_ms);
}

const ts_image *vw_run_displayed(const vw_run *r)
{
    if (!r->loaded)
        return NULL;
    return r->have_result ? &r->result : &r->src;
}

void vw_run_chain_changed(vw_run *r)
{
    r->dirty = 1;
    memset(r->op_ms, 0, sizeof r->op_ms);
}

int vw_run_live_work(const vw_run *r)
{
    /* after a failure, live mode waits for a change instead of failing every frame */
    return r->live && r->loaded && r->chain.n > 0 && !r->run_err[0];
}

void vw_run_process(vw_run *r)
{
    if (!r->loaded || !r->dirty)
        return;
    r->dirty = 0;
    r->run_err[0] = '\0';
    if (r->chain.n == 0) { /* nothing to run: show the image itself (live mode has no work) */
        r->shown_gen += r->have_result;
        r->have_result = 0;
        return;
    }
    /* on the GPU the result stays there: the display conversion reads it */
    ts_run_opts ro = {1, r->gen_on_gpu == r->gen, 1, !r->gpu_display_off};
    ts_status st = ts_pipeline_run_ex(r->pipe, &r->chain, &r->src, &r->result, &r->rep, &ro);
    r->shown_gen++;
    if (st != TS_OK) {
        snprintf(r->run_err, sizeof r->run_err, "%s", ts_error_detail());
        r->have_result = r->result_on_gpu = 0;
        r->gen_on_gpu = 0;
        return;
    }
    r->have_result = 1;
    r->result_on_gpu = ts_pipeline_result(r->pipe) != NULL;
    if (ts_pipeline_on_gpu(r->pipe))
        r->gen_on_gpu = r->gen;
    for (int i = 0; i < r->chain.n; i++)
        vw_stat_add(&r->op_ms[i], r->rep.op[i].ms);
    if (!r->rep.input_resident && ts_pipeline_on_gpu(r->pipe)) {
        vw_stat_add(&r->up_ms, r->rep.upload_ms);
        r->first_upload_ms = r->rep.upload_ms;
        r->fresh = 1; /* an upload: not a steady frame */
    }
    if (!r->result_on_gpu)
        vw_stat_add(&r->down_ms, r->rep.download_ms);
}

const ts_image *vw_run_host_result(vw_run *r)
{
    if (!r->have_result || !r->result_on_gpu)
        return vw_run_displayed(r);
    ts_run_opts ro = {1, r->gen_on_gpu == r->gen, 1, 0};
    if (ts_pipeline_run_ex(r->pipe, &r->chain, &r->src, &r->result, &r->rep, &ro) != TS_OK) {
        snprintf(r->run_err, sizeof r->run_err, "%s", ts_error_detail());
        r->have_result = r->result_on_gpu = 0;
        r->gen_on_gpu = 0;
        r->shown_gen++;
        return NULL;
    }
    r->result_on_gpu = 0;
    return &r->result;
}

/* DIR/NAME.tessera.png beside the original, or NAME.tessera-N.png: never an existing file. */
static char *save_path(const char *orig)
{
    const char *base = path_base(orig);
    const char *dot = strrchr(base, '.');
    int stem = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
    int dir = (int)(base - orig);
    size_t len = strlen(orig) + 32;
    char *p = xmalloc(len);
    for (int i = 0; i < 1000; i++) {
        if (i == 0)
            snprintf(p, len, "%.*s%.*s.tessera.png", dir, orig, stem, base);
        else
            snprintf(p, len, "%.*s%.*s.tessera-%d.png", dir, orig, stem, base, i);
        if (!path_exists(p))
            return p;
    }
    free(p);
    return NULL;
}

int vw_run_save(vw_run *r, const char *orig, int quiet, char *msg, size_t len)
{
    char notice[256], err[256];
    vw_run_process(r); /* a change made in this frame is saved too */
    const ts_image *im = vw_run_host_result(r);
    if (!im) {
        snprintf(msg, len, "nothing to save");
        return -1;
    }
    char *path = save_path(orig);
    if (!path) {
        snprintf(msg, len, "cannot save: too many NAME.tessera-N.png files");
        return -1;
    }
    int rc = 0;
    /* force = 0: never replaces a file, even one created since save_path looked */
    if (tsio_save_atomic(path, im, NULL, 0, notice, sizeof notice, err, sizeof err) == TS_OK) {
        snprintf(msg, len, "saved %s%s%s", path_base(path), notice[0] ? ": " : "", notice);
        if (!quiet)
            printf("tessera: saved %s\n", path);
    } else {
        snprintf(msg, len, "cannot save %s: %s", path_base(path), err);
        ts_warn("%s: %s", path, err);
        rc = -1;
    }
    fflush(stdout);
    free(path);
    return rc;
}

void vw_run_free(vw_run *r)
{
    vw_anim_free(&r->anim);
    ts_image_free(&r->src);
    ts_image_free(&r->result);
    ts_pipeline_destroy(r->pipe);
    r->pipe = NULL;
    ts_chain_free(&r->chain);
}
