/* bench_npp.cu - the NPP baselines (built with TS_HAVE_NPP: CUDA's npp.h and the nppc, nppidei,
 * nppif, nppig, nppist libraries found at build time), all through the _Ctx entry points with an
 * NppStreamContext on the benchmark's stream:
 *   - convolution: nppiFilterBorder32f_8u_C1R / _C3R / _AC4R (alpha untouched, like tessera) and
 *     _16u_C1R with NPP_BORDER_REPLICATE and the op's float weights. NPP convolves (its kernel is
 *     "stored in reverse order"), so the weights are handed over reversed, which makes it the
 *     same correlation tessera computes. Filter banks of two outputs (edge) have no NPP row.
 *   - geometry: nppiTranspose_8u_C1R/_C3R/_C4R/_16u_C1R for transpose (and, for the bytes it
 *     moves, rotate:90, whose result differs and so is not compared); nppiMirror (same types)
 *     about the horizontal axis for flip and both axes for rotate:180.
 *   - resize: nppiResize_8u_C1R/_C3R/_C4R/_16u_C1R with NPPI_INTER_LANCZOS, _LINEAR (triangle and
 *     interp), _CUBIC (box: _SUPER); timed, not compared (NPP's weights are not Pillow's; the
 *     check column gives the max difference). NPP's linear reduction is two taps at i * in / out
 *     (tools/npp_linear_model.cu: exact on random images): interp's work (two taps an axis, the
 *     same rows read), half a pixel elsewhere, so interp's row is timed against it, not compared.
 *   - histograms: nppiHistogramEven_8u_C1R (256 bins) and _16u_C1R (65536 bins), with the
 *     buffer from nppiHistogramEvenGetBufferSize allocated outside the timing.
 * A status below NPP_NO_ERROR makes the row "error: ..."; warnings (above it) are noted.
 */
#include "bench_vendor.cuh"
#include "gpu_util.cuh"

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#ifdef TS_HAVE_NPP
#include <npp.h>

struct bv_npp {
    NppStreamContext ctx;
    int failed;
    char why[BENCH_TEXT];
    float *d_kernel;
    size_t kernel_cap;
};

typedef enum npp_kind { NK_FILTER, NK_TRANSPOSE, NK_MIRROR, NK_HIST, NK_RESIZE } npp_kind;

typedef struct npp_job {
    npp_kind kind;
    int fmt;
    const ts_image *in;
    ts_image *out;
    const float *d_kernel;
    int k;
    NppiAxis axis;
    int interp; /* NK_RESIZE: NPPI_INTER_* */
    Npp32s *d_hist;
    Npp8u *d_buffer;
    NppStreamContext ctx;
    const char *call; /* the function's name, for errors and the note */
    int warning;      /* the last positive status */
} npp_job;

static NppStatus npp_call(npp_job *j)
{
    const ts_image *in = j->in;
    NppiSize size = {in->width, in->height};
    int sp = (int)in->pitch, dp = j->out ? (int)j->out->pitch : 0;
    const void *s = in->data;
    void *d = j->out ? j->out->data : NULL;
    NppiPoint origin = {0, 0}, anchor = {j->k / 2, j->k / 2};
    NppiSize ksize = {j->k, j->k};
    switch (j->kind) {
    case NK_FILTER:
        switch (j->fmt) {
        case BF_GRAY8:
            return nppiFilterBorder32f_8u_C1R_Ctx((const Npp8u *)s, sp, size, origin, (Npp8u *)d,
                                                  dp, size, j->d_kernel, ksize, anchor,
                                                  NPP_BORDER_REPLICATE, j->ctx);
        case BF_RGB8:
            return nppiFilterBorder32f_8u_C3R_Ctx((const Npp8u *)s, sp, size, origin, (Npp8u *)d,
                                                  dp, size, j->d_kernel, ksize, anchor,
                                                  NPP_BORDER_REPLICATE, j->ctx);
        case BF_RGBA8:
            return nppiFilterBorder32f_8u_AC4R_Ctx((const Npp8u *)s, sp, size, origin, (Npp8u *)d,
                                                   dp, size, j->d_kernel, ksize, anchor,
                                                   NPP_BORDER_REPLICATE, j->ctx);
        default:
            return nppiFilterBorder32f_16u_C1R_Ctx((const Npp16u *)s, sp, size, origin,
                                                   (Npp16u *)d, dp, size, j->d_kernel, ksize,
                                                   anchor, NPP_BORDER_REPLICATE, j->ctx);
        }
    case NK_TRANSPOSE:
        switch (j->fmt) {
        case BF_GRAY8:
            return nppiTranspose_8u_C1R_Ctx((const Npp8u *)s, sp, (Npp8u *)d, dp, size, j->ctx);
        case BF_RGB8:
            return nppiTranspose_8u_C3R_Ctx((const Npp8u *)s, sp, (Npp8u *)d, dp, size, j->ctx);
        case BF_RGBA8:
            return nppiTranspose_8u_C4R_Ctx((const Npp8u *)s, sp, (Npp8u *)d, dp, size, j->ctx);
        default:
            return nppiTranspose_16u_C1R_Ctx((const Npp16u *)s, sp, (Npp16u *)d, dp, size, j->ctx);
        }
    case NK_MIRROR:
        switch (j->fmt) {
        case BF_GRAY8:
            return nppiMirror_8u_C1R_Ctx((const Npp8u *)s, sp, (Npp8u *)d, dp, size, j->axis, j->ctx);
        case BF_RGB8:
            return nppiMirror_8u_C3R_Ctx((const Npp8u *)s, sp, (Npp8u *)d, dp, size, j->axis, j->ctx);
        case BF_RGBA8:
            return nppiMirror_8u_C4R_Ctx((const Npp8u *)s, sp, (Npp8u *)d, dp, size, j->axis, j->ctx);
        default:
            return nppiMirror_16u_C1R_Ctx((const Npp16u *)s, sp, (Npp16u *)d, dp, size, j->axis,
                                          j->ctx);
        }
    case NK_RESIZE: {
        NppiSize osize = {j->out->width, j->out->height};
        NppiRect sroi = {0, 0, in->width, in->height}, droi = {0, 0, osize.width, osize.height};
        switch (j->fmt) {
        case BF_GRAY8:
            return nppiResize_8u_C1R_Ctx((const Npp8u *)s, sp, size, sroi, (Npp8u *)d, dp, osize,
                                         droi, j->interp, j->ctx);
        case BF_RGB8:
            return nppiResize_8u_C3R_Ctx((const Npp8u *)s, sp, size, sroi, (Npp8u *)d, dp, osize,
                                         droi, j->interp, j->ctx);
        case BF_RGBA8:
            return nppiResize_8u_C4R_Ctx((const Npp8u *)s, sp, size, sroi, (Npp8u *)d, dp, osize,
                                         droi, j->interp, j->ctx);
        default:
            return nppiResize_16u_C1R_Ctx((const Npp16u *)s, sp, size, sroi, (Npp16u *)d, dp,
                                          osize, droi, j->interp, j->ctx);
        }
    }
    case NK_HIST:
        if (j->fmt == BF_GRAY8)
            return nppiHistogramEven_8u_C1R_Ctx((const Npp8u *)s, sp, size, j->d_hist, 257, 0, 256,
                                                j->d_buffer, j->ctx);
        return nppiHistogramEven_16u_C1R_Ctx((const Npp16u *)s, sp, size, j->d_hist, 65537, 0,
                                             65536, j->d_buffer, j->ctx);
    }
    return NPP_NOT_SUPPORTED_MODE_ERROR;
}

static ts_status npp_run(void *p)
{
    npp_job *j = (npp_job *)p;
    NppStatus s = npp_call(j);
    if (s < NPP_NO_ERROR)
        return ts_fail(TS_ERR_CUDA, "%s: NPP status %d", j->call, (int)s);
    if (s > NPP_NO_ERROR)
        j->warning = (int)s;
    return TS_OK;
}

/* The stream context NPP's _Ctx functions want, filled from the device and the bench's stream. */
static ts_status npp_start(bench_vendor *v)
{
    NppStreamContext *c = &v->npp->ctx;
    cudaDeviceProp p;
    int dev = 0;
    unsigned flags = 0;
    memset(c, 0, sizeof *c);
    CUDA_TRY(cudaGetDevice(&dev));
    CUDA_TRY(cudaGetDeviceProperties(&p, dev));
    CUDA_TRY(cudaStreamGetFlags((cudaStream_t)v->env->stream, &flags));
    c->hStream = (cudaStream_t)v->env->stream;
    c->nCudaDeviceId = dev;
    c->nMultiProcessorCount = p.multiProcessorCount;
    c->nMaxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
    c->nMaxThreadsPerBlock = p.maxThreadsPerBlock;
    c->nSharedMemPerBlock = p.sharedMemPerBlock;
    CUDA_TRY(cudaDeviceGetAttribute(&c->nCudaDevAttrComputeCapabilityMajor,
                                       cudaDevAttrComputeCapabilityMajor, dev));
    CUDA_TRY(cudaDeviceGetAttribute(&c->nCudaDevAttrComputeCapabilityMinor,
                                       cudaDevAttrComputeCapabilityMinor, dev));
    c->nStreamFlags = flags;
    return TS_OK;
}

static const char *fmt_suffix(int fmt, int filter)
{
    switch (fmt) {
    case BF_GRAY8:
        return "8u_C1R";
    case BF_RGB8:
        return "8u_C3R";
    case BF_RGBA8:
        return filter ? "8u_AC4R" : "8u_C4R";
    default:
        return "16u_C1R";
    }
}

/* What NPP does for this group, or 0 when it has no counterpart. */
static int npp_plan(const bench_group *grp, npp_job *j, const char **compare_note)
{
    const ts_op *op = grp->op;
    *compare_note = "";
    switch (op->kind) {
    case TS_OP_CONV:
        if (op->filter.outputs != 1)
            return 0;
        j->kind = NK_FILTER;
        j->k = op->filter.k;
        j->call = "nppiFilterBorder32f";
        return 1;
    case TS_OP_GEOM:
        if (op->geom == TS_GEOM_TRANSPOSE || op->geom == TS_GEOM_ROT90) {
            j->kind = NK_TRANSPOSE;
            j->call = "nppiTranspose";
            if (op->geom == TS_GEOM_ROT90)
                *compare_note = "a transpose: the same bytes moved, not the same image";
            return 1;
        }
        if (op->geom == TS_GEOM_FLIP || op->geom == TS_GEOM_ROT180) {
            j->kind = NK_MIRROR;
            j->axis = op->geom == TS_GEOM_FLIP ? NPP_HORIZONTAL_AXIS : NPP_BOTH_AXIS;
            j->call = "nppiMirror";
            return 1;
        }
        return 0;
    case TS_OP_RESIZE:
        /* the matching interpolation; NPP's weights are its own (its LINEAR and CUBIC do not
         * widen the filter when reducing, SUPER averages areas), so the row is timed only */
        if (op->resize.mode == TS_RESIZE_CROP)
            return 0;
        j->kind = NK_RESIZE;
        j->interp = op->resize.filter == TS_FILTER_LANCZOS3   ? NPPI_INTER_LANCZOS
                    : op->resize.filter == TS_FILTER_TRIANGLE ? NPPI_INTER_LINEAR
                    : op->resize.filter == TS_FILTER_INTERP   ? NPPI_INTER_LINEAR
                    : op->resize.filter == TS_FILTER_CUBIC    ? NPPI_INTER_CUBIC
                                                              : NPPI_INTER_SUPER;
        j->call = "nppiResize";
        *compare_note = op->resize.filter == TS_FILTER_INTERP
                            ? "NPP's linear samples at i * in / out, interp at its centres: timed, "
                              "not compared"
                            : "NPP resamples with its own weights: timed, not compared";
        return 1;
    case TS_OP_HIST:
        if (grp->fmt != BF_GRAY8 && grp->fmt != BF_GRAY16)
            return 0; /* CUB covers the colour histograms */
        j->kind = NK_HIST;
        j->call = "nppiHistogramEven";
        return 1;
    default:
        return 0;
    }
}

/* Weights reversed (NPP convolves) into device memory, where NPP reads its kernels. */
static ts_status npp_kernel(bench_vendor *v, const ts_filter *f, const float **d_kernel)
{
    size_t taps = (size_t)f->k * f->k;
    float h[TS_MAX_K * TS_MAX_K];
    for (size_t t = 0; t < taps; t++)
        h[t] = f->w[taps - 1 - t];
    ts_status st = bg_reserve((void **)&v->npp->d_kernel, &v->npp->kernel_cap, taps * sizeof(float));
    if (st == TS_OK)
        st = ts_gpu_copy_to_device(v->npp->d_kernel, h, taps * sizeof(float), v->env->stream);
    if (st == TS_OK)
        st = bg_sync(v->env->g); /* h is on this stack */
    *d_kernel = v->npp->d_kernel;
    return st;
}

void bv_npp_rows(bench_vendor *v, const bench_group *grp, bench_rows *rows)
{
    npp_job j;
    const char *compare_note;
    memset(&j, 0, sizeof j);
    if (!v->env->wanted("npp", 0) || !npp_plan(grp, &j, &compare_note))
        return;
    bench_row *r = bv_row(grp, rows, "npp");
    if (!v->npp) {
        if (!(v->npp = (bv_npp *)calloc(1, sizeof(bv_npp)))) {
            ts_fail(TS_ERR_NOMEM, "out of memory");
            bv_error(r, "");
            return;
        }
        if (npp_start(v) != TS_OK) {
            v->npp->failed = 1;
            bench_text(v->npp->why, sizeof v->npp->why, "NPP stream context: %s",
                       ts_error_detail());
        }
    }
    if (v->npp->failed) {
        r->state = BS_ERROR;
        bench_text(r->check, sizeof r->check, "error: %s", v->npp->why);
        return;
    }
    j.fmt = grp->fmt;
    j.in = &grp->d_in;
    j.ctx = v->npp->ctx;
    ts_status st = TS_OK;
    bench_text(r->note, sizeof r->note, "%s_%s_Ctx%s", j.call,
               fmt_suffix(grp->fmt, j.kind == NK_FILTER),
               j.kind == NK_FILTER ? ", replicate border" : "");
    if (j.kind == NK_HIST) {
        size_t need = 0;
        NppiSize size = {grp->width, grp->height};
        NppStatus s = grp->fmt == BF_GRAY8
                          ? nppiHistogramEvenGetBufferSize_8u_C1R_Ctx(size, 257, &need, j.ctx)
                          : nppiHistogramEvenGetBufferSize_16u_C1R_Ctx(size, 65537, &need, j.ctx);
        if (s < NPP_NO_ERROR)
            st = ts_fail(TS_ERR_CUDA, "nppiHistogramEvenGetBufferSize: NPP status %d", (int)s);
        if (st == TS_OK)
            st = bg_reserve(&v->d_temp, &v->temp_cap, need);
        if (st == TS_OK)
            st = bg_reserve((void **)&v->d_hist, &v->hist_cap, grp->hist_n * sizeof(uint32_t));
        if (st == TS_OK)
            st = ts_gpu_memset(v->d_hist, 0xA5, grp->hist_n * sizeof(uint32_t), v->env->stream);
        j.d_buffer = (Npp8u *)v->d_temp;
        j.d_hist = (Npp32s *)v->d_hist;
    } else {
        if (!(j.out = bv_output(v, grp, r)))
            return;
        if (j.kind == NK_FILTER)
            st = npp_kernel(v, &grp->op->filter, &j.d_kernel);
    }
    if (st == TS_OK && (st = npp_run(&j)) == TS_OK)
        st = bg_sync(v->env->g);
    if (st != TS_OK) {
        bv_error(r, "");
        return;
    }
    if (j.kind == NK_HIST)
        bv_check_hist(v, grp, r, v->d_hist);
    else if (j.kind == NK_FILTER) /* float weights, another rounding: as a float conv variant */
        bv_check_image(v, grp, r, j.out, ts_color_channels(bench_formats[grp->fmt].channels), 2,
                       "replicate border");
    else if (*compare_note) {
        r->state = BS_UNCHECKED;
        unsigned d = 0;
        if (j.kind == NK_RESIZE && grp->d_gold &&
            bg_max_diff(v->env->g, j.out, grp->d_gold, bench_formats[grp->fmt].channels, &d) ==
                TS_OK) /* how far NPP's filter is from tessera's of the same name */
            bench_text(r->check, sizeof r->check, "n/a: %s (max diff %u vs %s)", compare_note, d,
                       grp->gold_name);
        else
            bench_text(r->check, sizeof r->check, "n/a: %s", compare_note);
    } else
        bv_check_image(v, grp, r, j.out, bench_formats[grp->fmt].channels, 0, "exact");
    bv_time(v, r, npp_run, &j);
    if (j.warning) {
        size_t n = strlen(r->note);
        bench_text(r->note + n, sizeof r->note - n, "; NPP warning %d", j.warning);
    }
}

void bv_npp_close(bench_vendor *v)
{
    if (!v->npp)
        return;
    cudaFree(v->npp->d_kernel);
    free(v->npp);
    v->npp = NULL;
}

void bv_npp_describe(char *out, size_t len)
{
    const NppLibraryVersion *lv = nppGetLibVersion();
    bench_text(out, len, "NPP %d.%d.%d (runtime %d.%d.%d)", NPP_VER_MAJOR, NPP_VER_MINOR,
               NPP_VER_PATCH, lv ? lv->major : 0, lv ? lv->minor : 0, lv ? lv->build : 0);
}

#else /* no NPP at build time */

void bv_npp_rows(bench_vendor *v, const bench_group *grp, bench_rows *rows) {}
void bv_npp_close(bench_vendor *v) {}
void bv_npp_describe(char *out, size_t len)
{
    bench_text(out, len, "NPP not built in (no npp.h and NPP libraries at build time): no npp "
               "rows");
}

#endif
