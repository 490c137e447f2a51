/* bench_vendor.cu - vendor baselines as extra rows of each group, on the same input in the same
 * process, timed by the same harness as the variants (bench_gpu.cu):
 *   - cub: CUB DeviceHistogram (header-only, always built): HistogramEven on gray8 (256 bins)
 *     and gray16 (65536 bins, uniform and narrow-band data), MultiHistogramEven<3,3> on RGB8 and
 *     <4,3> on RGBA8; temporary storage sized and allocated outside the timing.
 *   - cudnn: bench_cudnn.cu (fp32 depthwise convolution); npp: bench_npp.cu (filters, transpose,
 *     mirror, histograms). Each is compiled in only where its headers and libraries were found
 *     (TS_HAVE_CUDNN, TS_HAVE_NPP); without them its rows are absent and the header says so.
 * Every vendor row is checked like a variant: against the group's gold output (the first variant
 * that passed the CPU check), so a misused library call shows as WRONG rather than as a speedup.
 */
#include "bench_vendor.cuh"
#include "gpu_util.cuh"

#include <cub/device/device_histogram.cuh>
#include <cub/version.cuh>
#include <cuda/std/array>
#include <cuda_runtime.h>

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- shared steps */

bench_row *bv_row(const bench_group *grp, bench_rows *rows, const char *name)
{
    bench_row *r = bench_group_row(grp, rows, name);
    r->vendor = 1;
    return r;
}

void bv_error(bench_row *r, const char *what)
{
    r->state = BS_ERROR;
    bench_text(r->check, sizeof r->check, "error: %s%s%s", what, *what ? ": " : "",
               ts_error_detail());
}

ts_image *bv_output(bench_vendor *v, const bench_group *grp, bench_row *r)
{
    const bench_format *f = &bench_formats[grp->fmt];
    int ow = grp->width, oh = grp->height;
    if (grp->op->kind != TS_OP_HIST) /* geometry and resize change the size */
        ts_op_out_size(grp->op, grp->width, grp->height, &ow, &oh);
    ts_status st = bg_image_reserve(&v->d_out, &v->out_cap, ow, oh, f->channels, f->bytes);
    if (st == TS_OK)
        st = ts_gpu_image_fill(&v->d_out, 0xA5, v->env->stream);
    if (st != TS_OK) {
        bv_error(r, "output");
        return NULL;
    }
    return &v->d_out;
}

void bv_check_image(bench_vendor *v, const bench_group *grp, bench_row *r, const ts_image *out,
                    int channels, int tol, const char *what)
{
    if (!grp->d_gold) {
        r->state = BS_UNCHECKED;
        bench_text(r->check, sizeof r->check, "unchecked: no checked variant to compare with");
        return;
    }
    unsigned d = 0;
    if (bg_max_diff(v->env->g, out, grp->d_gold, channels, &d) != TS_OK) {
        r->state = BS_UNCHECKED;
        bench_text(r->check, sizeof r->check, "unchecked: compare failed: %s", ts_error_detail());
    } else if ((int)d > tol) {
        r->state = BS_WRONG;
        bench_text(r->check, sizeof r->check, "WRONG: differs from %s by up to %u (tolerance %d)",
                   grp->gold_name, d, tol);
    } else {
        r->state = BS_OK;
        bench_text(r->check, sizeof r->check, "ok%s%s (max diff %u vs %s)", *what ? ": " : "", what,
                   d, grp->gold_name);
    }
}

void bv_check_hist(bench_vendor *v, const bench_group *grp, bench_row *r, const uint32_t *d_hist)
{
    if (!grp->d_gold_hist) {
        r->state = BS_UNCHECKED;
        bench_text(r->check, sizeof r->check, "unchecked: no checked variant to compare with");
        return;
    }
    size_t n = grp->hist_n, bad = 0;
    uint32_t *a = (uint32_t *)malloc(n * sizeof *a), *b = (uint32_t *)malloc(n * sizeof *b);
    ts_status st = a && b ? TS_OK : ts_fail(TS_ERR_NOMEM, "out of memory");
    if (st == TS_OK)
        st = ts_gpu_copy_to_host(a, d_hist, n * sizeof *a, v->env->stream);
    if (st == TS_OK)
        st = ts_gpu_copy_to_host(b, grp->d_gold_hist, n * sizeof *b, v->env->stream);
    if (st == TS_OK)
        st = bg_sync(v->env->g);
    for (size_t i = 0; st == TS_OK && i < n; i++)
        bad += a[i] != b[i];
    free(a);
    free(b);
    if (st != TS_OK) {
        r->state = BS_UNCHECKED;
        bench_text(r->check, sizeof r->check, "unchecked: compare failed: %s", ts_error_detail());
    } else if (bad) {
        r->state = BS_WRONG;
        bench_text(r->check, sizeof r->check, "WRONG: %zu of %zu bins differ from %s", bad, n,
                   grp->gold_name);
    } else {
        r->state = BS_OK;
        bench_text(r->check, sizeof r->check, "ok (exact vs %s)", grp->gold_name);
    }
}

void bv_time(bench_vendor *v, bench_row *r, bg_run_fn fn, void *arg)
{
    bg_timing t;
    if (bg_context_lost())
        return;
    if (bg_time(v->env->g, fn, arg, v->env->runs, &t) != TS_OK) {
        bv_error(r, "");
        return;
    }
    r->ms = t.median_ms;
    r->min_ms = t.min_ms;
    r->runs = t.runs;
    if (t.note[0]) {
        size_t n = strlen(r->note);
        bench_text(r->note + n, sizeof r->note - n, "%s%s", n ? "; " : "", t.note);
    }
}

/* ---------------------------------------------------------------- CUB */

typedef struct cub_job {
    const ts_image *in;
    int fmt;
    uint32_t *d_hist;
    void *d_temp;
    size_t temp_bytes; /* 0 with d_temp NULL: ask CUB for the size */
    cudaStream_t stream;
} cub_job;

/* The histogram of the bench's histogram op in CUB's words: bins [0, 256) or [0, 65536), per
 * colour channel for colour images (the counts of channel c start at c * bins, as tessera's). */
static cudaError_t cub_call(cub_job *j)
{
    const ts_image *in = j->in;
    int w = in->width, h = in->height;
    size_t pitch = in->pitch;
    unsigned *hist = j->d_hist;
    switch (j->fmt) {
    case BF_GRAY8:
        return cub::DeviceHistogram::HistogramEven(j->d_temp, j->temp_bytes,
                                                   (const unsigned char *)in->data, hist, 257, 0,
                                                   256, w, h, pitch, j->stream);
    case BF_GRAY16:
        return cub::DeviceHistogram::HistogramEven(j->d_temp, j->temp_bytes,
                                                   (const unsigned short *)in->data, hist, 65537,
                                                   0, 65536, w, h, pitch, j->stream);
    case BF_RGB8:
    case BF_RGBA8: {
        ::cuda::std::array<unsigned *, 3> hists = {hist, hist + 256, hist + 512};
        ::cuda::std::array<int, 3> levels = {257, 257, 257};
        ::cuda::std::array<int, 3> lower = {0, 0, 0};
        ::cuda::std::array<int, 3> upper = {256, 256, 256};
        if (j->fmt == BF_RGB8)
            return cub::DeviceHistogram::MultiHistogramEven<3, 3>(
                j->d_temp, j->temp_bytes, (const unsigned char *)in->data, hists, levels, lower,
                upper, w, h, pitch, j->stream);
        return cub::DeviceHistogram::MultiHistogramEven<4, 3>(
            j->d_temp, j->temp_bytes, (const unsigned char *)in->data, hists, levels, lower, upper,
            w, h, pitch, j->stream);
    }
    default:
        return cudaErrorInvalidValue;
    }
}

static ts_status cub_run(void *p)
{
    CUDA_TRY(cub_call((cub_job *)p));
    return TS_OK;
}

static void cub_rows(bench_vendor *v, const bench_group *grp, bench_rows *rows)
{
    if (grp->op->kind != TS_OP_HIST || !v->env->wanted("cub", 0))
        return;
    bench_row *r = bv_row(grp, rows, "cub");
    cub_job j;
    memset(&j, 0, sizeof j);
    j.in = &grp->d_in;
    j.fmt = grp->fmt;
    j.stream = (cudaStream_t)v->env->stream;
    bench_text(r->note, sizeof r->note, "CUB %d.%d.%d %s", CUB_MAJOR_VERSION, CUB_MINOR_VERSION,
               CUB_SUBMINOR_VERSION,
               grp->fmt == BF_RGB8    ? "MultiHistogramEven<3,3>"
               : grp->fmt == BF_RGBA8 ? "MultiHistogramEven<4,3>"
                                      : "HistogramEven");
    cudaError_t e = cub_call(&j); /* size query: no work is done */
    if (e != cudaSuccess) {
        cudaGetLastError();
        ts_fail(TS_ERR_CUDA, "%s", cudaGetErrorString(e));
        bv_error(r, "temporary storage size");
        return;
    }
    size_t need = j.temp_bytes;
    if (bg_reserve(&v->d_temp, &v->temp_cap, need) != TS_OK ||
        bg_reserve((void **)&v->d_hist, &v->hist_cap, grp->hist_n * sizeof(uint32_t)) != TS_OK) {
        bv_error(r, "allocation");
        return;
    }
    j.d_temp = v->d_temp;
    j.temp_bytes = need;
    j.d_hist = v->d_hist;
    ts_status st = ts_gpu_memset(v->d_hist, 0xA5, grp->hist_n * sizeof(uint32_t), v->env->stream);
    if (st == TS_OK && (st = cub_run(&j)) == TS_OK)
        st = bg_sync(v->env->g);
    if (st != TS_OK) {
        bv_error(r, "");
        return;
    }
    bv_check_hist(v, grp, r, v->d_hist);
    bv_time(v, r, cub_run, &j);
}

/* ---------------------------------------------------------------- dispatch */

bench_vendor *bv_open(const bench_env *env)
{
    bench_vendor *v = (bench_vendor *)calloc(1, sizeof *v);
    if (v)
        v->env = env;
    return v;
}

void bv_close(bench_vendor *v)
{
    if (!v)
        return;
    bv_cudnn_close(v);
    bv_npp_close(v);
    bg_image_release(&v->d_out, &v->out_cap);
    cudaFree(v->d_hist);
    cudaFree(v->d_temp);
    free(v);
}

void bv_describe(char *out, size_t len)
{
    char dnn[120], npp[120];
    bv_cudnn_describe(dnn, sizeof dnn);
    bv_npp_describe(npp, sizeof npp);
    bench_text(out, len, "%s; CUB %d.%d.%d; %s", dnn, CUB_MAJOR_VERSION, CUB_MINOR_VERSION,
               CUB_SUBMINOR_VERSION, npp);
}

void bv_rows(bench_vendor *v, const bench_group *grp, bench_rows *rows)
{
    if (!v)
        return;
    bv_cudnn_rows(v, grp, rows);
    if (!bg_context_lost())
        cub_rows(v, grp, rows);
    if (!bg_context_lost())
        bv_npp_rows(v, grp, rows);
}
