/* conv_mma.cu - convolution, variants `mma`, `mmapipe` and `mmasep`: the host side (see
 * conv_mma.cuh for the kernels, the trick and the layout): which jobs the tensor cores take exactly
 * enough, and the dispatcher's launcher. The instantiations, one K and variant a file:
 * conv_mma_k3.cu, ..., conv_mmapipe_k7.cu, conv_mmasep_k5.cu, conv_mmasep_k7.cu.
 */
#include "conv_common.cuh"

#include <cuda_fp16.h>
#include <limits.h>
#include <math.h>

#define MMA_FP16_MAX_ERR 0.25 /* sum |w - fp16(w)| * maxv a float filter may have */

/* The launch of a job of filter size K (conv_mma.cuh; instantiated by conv_mma_k<K>.cu and
 * conv_mmapipe_k<K>.cu). */
template <int K, bool RING, bool SEP> ts_status mma_ch(const ts_job *job, const conv_params &p);

static float mma_fp16(float w) { return __half2float(__float2half_rn(w)); }

/* 1 when the filter's weights survive FP16: exact ones exactly (and their sums stay exact in FP32:
 * 8-bit exact filters never need int32), float ones within the bound, counting both the FP16
 * roundings, sum |w - fp16(w)| * maxv, and the FP32 accumulation's (at most 2^-22 of sum |w| maxv
 * per addition, truncating as tensor cores may: K rows of S k-steps of 16 products). */
static int mma_fp16_ok(const ts_filter *f, int nout, int maxv, int steps)
{
    const int taps = f->k * f->k;
    for (int o = 0; o < nout; o++) {
        double err = 0, sum = 0;
        for (int i = 0; i < taps; i++) {
            if (f->exact) {
                if (f->iw[o * taps + i] < -2048 || f->iw[o * taps + i] > 2048)
                    return 0;
            } else {
                float w = f->w[o * taps + i];
                err += fabs((double)w - (double)mma_fp16(w));
                sum += fabs((double)mma_fp16(w));
            }
        }
        err += sum * (f->k * steps * 16 + f->k) * ldexp(1.0, -22);
        if (!(err * maxv <= MMA_FP16_MAX_ERR)) /* NaN and inf refused too */
            return 0;
    }
    return 1;
}

extern "C" int conv_mma_supports(const ts_job *job)
{
    conv_traits t;
    if (!conv_job_traits(job, &t) || job->in.bytes != 1 || t.acc_int ||
        (t.k != 3 && t.k != 5 && t.k != 7))
        return 0;
    if ((((uintptr_t)job->in.data | job->in.pitch) & 3) || (((uintptr_t)job->out.data | job->out.pitch) & 1))
        return 0;
    if (!conv_offsets_fit_int(job))
        return 0;
    /* magnitudes as the one op that makes them (edge: an exact 3 x 3 pair); others, which only a
     * ts_filter built by hand could ask for, are left to the other variants rather than compiled
     * into tensor-core kernels that no op reaches */
    if (t.nout == 2 && (t.k != 3 || !job->op->filter.exact))
        return 0;
    const int ch = job->in.channels, h = t.k / 2 * ch, a = (h + 3) / 4; /* mma_geo's S */
    return mma_fp16_ok(&job->op->filter, t.nout, 255, (a + 2) / 2);
}

/* mmapipe: mma's jobs whose input rows start 16-byte aligned (the ring's 16-byte copies). */
extern "C" int conv_mmapipe_supports(const ts_job *job)
{
    return conv_mma_supports(job) && (((uintptr_t)job->in.data | job->in.pitch) & 15) == 0;
}

/* mmasep: mmapipe's float separable jobs at K = 5, 7 (gauss), with the bound of its arithmetic:
 * the row factors rounded to FP16 move a result by at most sum |r - fp16(r)| * sum |c| * maxv (the
 * column factors stay FP32), plus the FP32 roundings of S k-steps of 16 products and K scalings. */
static int mmasep_ok(const ts_filter *f, int ch, int maxv)
{
    const int k = f->k, h = k / 2 * ch, a = (h + 3) / 4, steps = (a + 2) / 2;
    double er = 0, sr = 0, sc = 0;
    for (int i = 0; i < k; i++) {
        er += fabs((double)f->row[i] - (double)mma_fp16(f->row[i]));
        sr += fabs((double)mma_fp16(f->row[i]));
        sc += fabs((double)f->col[i]);
    }
    const double err = er * sc + sr * sc * (steps * 16 + 2 * k) * ldexp(1.0, -22);
    return err * maxv <= MMA_FP16_MAX_ERR;
}

/* Only windows of two k-steps (S = 2: K = 5 on 3-4 channels, K = 7 on 2-4), where K S products
 * become S and 4 K FMAs; with one k-step (gray) mmapipe's K products are cheaper (H100, 8K gray8
 * gauss:7: mmapipe 0.0401 ms, this 0.0466; rgb8 0.1254 against 0.1069). */
extern "C" int conv_mmasep_supports(const ts_job *job)
{
    conv_traits t;
    if (!conv_mmapipe_supports(job) || !conv_job_traits(job, &t) || !t.sep_ok || t.nout != 1 ||
        job->op->filter.exact || (t.k != 5 && t.k != 7))
        return 0;
    const int ch = job->in.channels, a = (t.k / 2 * ch + 3) / 4; /* mma_geo's A, S = (A + 2) / 2 */
    if ((a + 2) / 2 < 2)
        return 0;
    return mmasep_ok(&job->op->filter, ch, 255);
}

/* ROUND_NC trusts the float weights not to leave [0, maxv]; their FP16 roundings may add up to a
 * little more, so keep it only while the FP16 sum cannot reach maxv + 1/2. */
static void mma_fix_epi(const ts_filter *f, conv_params *p, bool sep)
{
    if (p->epi != CONV_EPI_ROUND_NC || f->exact)
        return;
    double sum = 0;
    if (sep) { /* mmasep: FP16 row factors times FP32 column factors */
        double sr = 0, sc = 0;
        for (int i = 0; i < f->k; i++)
            sr += mma_fp16(f->row[i]), sc += f->col[i];
        sum = sr * sc;
    } else {
        for (int i = 0; i < f->k * f->k; i++)
            sum += mma_fp16(f->w[i]);
    }
    if (!(sum * p->maxv * (1 + ldexp(1.0, -20)) < p->maxv + 0.25))
        p->epi = CONV_EPI_ROUND;
}

/* RING: mmapipe's ring strips (else mma's registers); SEP: mmasep (ring strips, separable). */
template <bool RING, bool SEP = false> struct mma_launcher : conv_launcher {
    static ts_status check(const ts_job *job)
    {
        const char *name = SEP ? "mmasep" : RING ? "mmapipe" : "mma";
        if (SEP && !conv_mmasep_supports(job))
            return ts_fail(TS_ERR_UNSUPPORTED, "conv mmasep: needs mmapipe's job with a float "
                                               "separable filter of K 5 or 7 whose FP16 row factors "
                                               "stay within %.2f of a step", MMA_FP16_MAX_ERR);
        if (!(RING ? conv_mmapipe_supports(job) : conv_mma_supports(job)))
            return ts_fail(TS_ERR_UNSUPPORTED, "conv %s: needs an 8-bit image, K 3, 5 or 7, weights "
                                               "that FP16 holds (exact, or within %.2f of a step), "
                                               "a magnitude only of exact 3 x 3 filters, and %s "
                                               "rows", name, MMA_FP16_MAX_ERR,
                           RING ? "16-byte aligned" : "aligned");
        if (job->dev && job->dev->cc < 80)
            return ts_fail(TS_ERR_UNSUPPORTED, "conv %s: needs sm_80 (mma.sync m16n8k16%s)", name,
                           RING ? ", cp.async" : "");
        return TS_OK;
    }
    static ts_status launch(const ts_job *job, conv_params &p)
    {
        mma_fix_epi(&job->op->filter, &p, SEP);
        if constexpr (SEP)
            return conv_by_k<5, 7>(p, [&](auto k) { return mma_ch<decltype(k)::value, true, true>(job, p); });
        else
            return conv_by_k<3, 5, 7>(p, [&](auto k) {
                return mma_ch<decltype(k)::value, RING, false>(job, p);
            });
    }
};

extern "C" ts_status conv_mma(const ts_job *job) { return conv_run<mma_launcher<false>>(job); }
extern "C" ts_status conv_mmapipe(const ts_job *job) { return conv_run<mma_launcher<true>>(job); }
extern "C" ts_status conv_mmasep(const ts_job *job) { return conv_run<mma_launcher<true, true>>(job); }
