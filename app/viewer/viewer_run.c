/* viewer_run.c - the image and its chain: loading (a large JPEG as a reduced-size preview first,
 * its full decode on a thread: viewer_load.c), the pipeline run, the host result, saving.
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
        app_warn("%s: %s: showing the first frame", path, err);
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

/* Turns src upright by the file's EXIF orientation (the GPU's geometry kernel, else the
 * reference) and names its colour profile: the same for a preview and for the full image. */
static void upright(vw_run *r, const tsio_meta *meta)
{
    r->orientation = 1;
    if (r->auto_orient && photo_orient_image(r->pipe, &r->src, meta, &r->orientation) != TS_OK) {
        snprintf(r->load_err, sizeof r->load_err, "%s: %s", r->name, ts_error_detail());
        r->orientation = 1;
    }
    photo_icc_hud(meta, r->icc_line, sizeof r->icc_line);
}

/* A large JPEG: its reduced-size decode as src now, the full decode started on the thread.
 * 1 when src holds an image (the preview, or the full image when no reduction applies: the same
 * decode as tsio_load's); 0: load it the ordinary way (not a JPEG, or it failed: tsio_load then
 * gives the reason). */
static int load_preview(vw_run *r, const char *path, uint64_t max_pixels)
{
    unsigned char *buf;
    size_t len;
    char err[256];
    tsio_meta meta = {0};
    tsio_reduced info;
    if (r->preview_box_w < 1 || r->preview_box_h < 1 ||
        tsio_read_file(path, max_pixels, tsio_codec_jpeg(), &buf, &len, NULL, err,
                       sizeof err) != TS_OK)
        return 0;
    ts_status st = tsio_jpeg_decode_reduced(buf, len, max_pixels, r->preview_box_w,
                                            r->preview_box_h, &meta, &info, &r->src, err,
                                            sizeof err);
    free(buf);
    if (st != TS_OK) {
        tsio_meta_free(&meta);
        return 0;
    }
    r->loaded = 1;
    upright(r, &meta);
    tsio_meta_free(&meta);
    int turned = r->orientation >= 5; /* 5-8 swap the sides */
    r->full_w = turned ? info.full_h : info.full_w;
    r->full_h = turned ? info.full_w : info.full_h;
    r->first_ms = now_ms() - r->opened_at;
    if (info.denom > 1) {
        r->preview = 1;
        r->preview_denom = info.denom;
        free(r->decode_path);
        r->decode_path = xstrdup(path);
        r->decode_max_pixels = max_pixels;
    } else
        r->full_ms = r->first_ms;
    return 1;
}

void vw_run_start_decode(vw_run *r)
{
    if (!r->decode_path)
        return;
    vw_load_start(&r->load, r->decode_path, r->decode_max_pixels, r->load_token);
    free(r->decode_path);
    r->decode_path = NULL;
}

int vw_run_loading(const vw_run *r) { return r->preview; }

double vw_run_file_scale(const vw_run *r)
{
    return r->preview && r->full_w > 0 ? (double)r->src.width / r->full_w : 1;
}

int vw_run_poll_load(vw_run *r)
{
    ts_image im;
    tsio_meta meta;
    ts_status st;
    char err[256];
    double ms;
    if (!vw_load_poll(&r->load, r->load_token, &im, &meta, &st, err, sizeof err, &ms))
        return 0;
    if (!r->preview) { /* not waited for (the token names only a previewed file) */
        ts_image_free(&im);
        tsio_meta_free(&meta);
        return 0;
    }
    r->preview = 0;
    r->full_ms = now_ms() - r->opened_at;
    ts_image_free(&r->src);
    if (st == TS_OK) {
        r->src = im;
        upright(r, &meta);
        r->swapped = 1;
    } else {
        r->loaded = 0;
        snprintf(r->load_err, sizeof r->load_err, "%.250s: %.250s", r->name, err);
    }
    tsio_meta_free(&meta);
    r->gen++;
    r->shown_gen++;
    r->dirty = 1;
    r->fresh = 1;
    return 1;
}

void vw_run_load(vw_run *r, const char *path, uint64_t max_pixels)
{
    char err[256];
    tsio_meta meta = {0};
    tsio_load_opts lo = {.max_pixels = max_pixels, .meta = &meta};
    r->opened_at = now_ms();
    r->load_token++; /* a decode still running for the file before is no longer wanted */
    r->preview = r->swapped = 0;
    r->first_ms = r->full_ms = 0;
    free(r->decode_path); /* the file before's decode, not started yet: no longer wanted */
    r->decode_path = NULL;
    snprintf(r->name, sizeof r->name, "%s", path_base(path));
    ts_image_free(&r->src);
    r->have_result = r->result_on_gpu = 0;
    r->loaded = 0;
    r->fresh = 1;
    r->load_err[0] = r->run_err[0] = '\0';
    vw_anim_free(&r->anim);
    r->anim_frame = 0;
    r->orientation = 1;
    r->icc_line[0] = '\0';
    if (load_preview(r, path, max_pixels)) {
        /* the preview, or a JPEG small enough to have been decoded in full */
    } else if (tsio_load(path, &lo, &r->src, err, sizeof err) == TS_OK) {
        r->loaded = 1;
        upright(r, &meta);
        r->full_w = r->src.width;
        r->full_h = r->src.height;
        r->first_ms = r->full_ms = now_ms() - r->opened_at;
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
    return r->live && r->loaded && !r->preview && r->chain.n > 0 && !r->run_err[0];
}

void vw_run_process(vw_run *r)
{
    if (!r->loaded || !r->dirty || r->preview) /* ops run on the full image only */
        return;
    int rerun = r->rerun && r->have_result;
    r->dirty = r->rerun = 0;
    r->run_err[0] = '\0';
    if (r->chain.n == 0) { /* nothing to run: show the image itself (live mode has no work) */
        r->shown_gen += r->have_result;
        r->have_result = 0;
        return;
    }
    /* on the GPU the result stays there: the display conversion reads it */
    ts_run_opts ro = {1, r->gen_on_gpu == r->gen, 1, !r->gpu_display_off};
    ts_status st = ts_pipeline_run_ex(r->pipe, &r->chain, &r->src, &r->result, &r->rep, &ro);
    /* a live re-run on the host gives the same pixels: the texture (and its resampling, made
       a frame later) stays; on the GPU the display conversion reads the new result */
    if (!(rerun && st == TS_OK && !ts_pipeline_on_gpu(r->pipe)))
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
    if (r->preview) {
        snprintf(msg, len, "still decoding the full image: save in a moment");
        return -1;
    }
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
        app_warn("%s: %s", path, err);
        rc = -1;
    }
    fflush(stdout);
    free(path);
    return rc;
}

void vw_run_free(vw_run *r)
{
    vw_load_free(&r->load); /* waits for a running decode */
    free(r->decode_path);
    r->decode_path = NULL;
    vw_anim_free(&r->anim);
    ts_image_free(&r->src);
    ts_image_free(&r->result);
    ts_pipeline_destroy(r->pipe);
    r->pipe = NULL;
    ts_chain_free(&r->chain);
}
