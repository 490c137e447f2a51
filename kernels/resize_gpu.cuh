/* resize_gpu.cuh - what the resize variants (resize*.cu) share: the plan of a job
 * (weight tables uploaded into the job's scratch, the intermediate image), the premultiplying
 * pixel load and the unpremultiplying store. Internal to kernels/.
 *
 * Every variant computes exactly the reference's sums (ref_resize.c): the same integer weights
 * (built on the host by rs_coeffs_make and copied up), the horizontal pass over the rows the
 * vertical pass reads, each pass rounded to the depth. 8-bit sums in int32 (as Pillow), 16-bit in
 * int64, so the GPU output equals the CPU's bit for bit.
 */
#ifndef TS_RESIZE_GPU_CUH
#define TS_RESIZE_GPU_CUH

#include "gpu_util.cuh"
#include "resize.h"

#include <math.h>
#include <stdint.h>

/* Shared-memory budget of the tiled and fused kernels: the default per-block limit, so no opt-in
 * attribute (and no runtime call that may synchronize) is needed; tiles shrink to fit it. */
#define RS_SMEM_BUDGET (48 * 1024)

/* 8-bit: Pillow's int32 sums; 16-bit: int64 (29-bit weights times 16-bit samples). */
template <typename T> struct rs_acc { typedef int type; };
template <> struct rs_acc<uint16_t> { typedef long long type; };

/* What a kernel needs of a job (passed by value). */
struct rs_args {
    const unsigned char *in;  /* input image */
    size_t in_pitch;
    unsigned char *out;       /* output image */
    size_t out_pitch;
    unsigned char *tmp;       /* intermediate: rows [first, last) of the vertical pass, ow wide */
    size_t tmp_pitch;
    /* Per axis: bounds [out][2] (first input, count), the weight row of each output and the
     * distinct weight rows [n][ks] (a 2x or 4x reduction has one row away from the edges, so the
     * upload per launch is kilobytes, not a table of out x ks weights). */
    const int *bh, *rh;
    const int32_t *kh;
    const int *bv, *rv;       /* vertical: input rows */
    const int32_t *kv;
    int iw, ih, ow, oh, ksh, ksv;
    int first, last;          /* input rows read by the vertical pass */
};

/* A prepared job: args plus the host tables (for tile sizing), which live in resize.cu's cache
 * of recent tables and stay valid (the cache locked) until rs_plan_free. */
struct rs_plan {
    rs_args a;
    const rs_coeffs *ch, *cv;
    unsigned char *frag; /* scratch for resize_mmai.cu's weight fragments (NULL: none) */
    size_t frag_bytes;
    const int32_t *up_h, *up_v; /* the host tables (the cache's, locked) and their bytes */
    size_t up_h_bytes, up_v_bytes;
    int uploaded; /* rs_plan_upload done */
    int locked;
};

/* Builds the weights (or finds them in the cache: a lanczos3 table of 8K -> 4K costs ~10^5 sin
 * calls, milliseconds, against a kernel of tens of microseconds) and fills the plan; the upload
 * into job->scratch is rs_plan_upload's. A crop or an unchanged size is done right here (a 2-D
 * copy) and *done is set. After TS_OK, rs_plan_free releases the cache (a failure has released
 * it). */
ts_status rs_plan_make(const ts_job *job, rs_plan *p, int *done);
/* Copies the host tables into the job's scratch (a.bh, a.bv), once; every launcher calls it
 * before kernels that read them (a cached resize_mmai.cu plan needs none). */
ts_status rs_plan_upload(rs_plan *p, const ts_job *job);
void rs_plan_free(rs_plan *p);
typedef ts_status (*rs_launcher)(rs_plan *p, const ts_job *job);
/* Plans the job, runs launch on the plan (unless rs_plan_make did the job itself) and releases
 * it: the body of every resize entry point. */
ts_status rs_run(const ts_job *job, rs_launcher launch);
/* The kernels opt plans among (resize_opt.cu), each also a row of its own:
 * resize_mma.cu, channel planes on the tensor cores: 8-bit samples, sm_80+, aligned images.
 * usable says whether the job's format and device allow it, fits whether the default tile fits
 * (from bounds, before the tables exist), applies whether it does on the planned job; run
 * launches it and sets *done, or leaves *done 0 (and returns TS_OK) where the plan's bands are
 * too wide. */
int rs_mma_usable(const ts_job *job);
int rs_mma_fits(const ts_job *job);
int rs_mma_applies(const rs_plan *p, const ts_job *job);
ts_status rs_mma_run(const rs_plan *p, const ts_job *job, int *done);
/* resize_mmai.cu, interleaved samples on the tensor cores (8-bit, sm_80+, aligned images):
 * applies says whether its geometry takes the planned job (a geometry in the plan cache, or one
 * made from the tables); launch runs it (TS_ERR_UNSUPPORTED where it does not apply).
 * frag_bound: the scratch its weight fragments may need. */
int rs_mmai_applies(rs_plan *p, const ts_job *job);
ts_status rs_mmai_launch(rs_plan *p, const ts_job *job);
size_t rs_mmai_frag_bound(int ow, int oh, int C);
/* resize_direct.cu, the interp filter with its taps computed in the kernel (no tables);
 * rs_direct_even: whether its whole-factor kernel takes the job (8K -> 4K, -> 1080p). */
ts_status rs_direct_launch(rs_plan *p, const ts_job *job);
int rs_direct_even(const rs_args &a, int bytes);
/* resize_direct_even.cu: that kernel on a job rs_direct_even takes (param: direct's 0, 6..10). */
ts_status rs_direct_even_launch(const rs_args &a, int bytes, int channels, int param,
                                const ts_device *dev, ts_stream stream);
/* The widest k-chunk count (32 inputs) a band of n outputs may span: a bound from the sizes,
 * for supports() (the launch computes the exact one). */
#define RS_MMA_NK 4 /* k-chunks of 32 inputs that one band of 8 or 16 outputs may span */
static inline int rs_mma_chunks_bound(int in, int out, int ksize, int n)
{
    double s = ceil((double)(n - 1) * in / out) + ksize + 2 + 3;
    return (int)ceil(s / 32);
}
/* launcher<T, C> for the job's depth and channel count. */
#define RS_PICK(launcher, job)                                                                     \
    ((job)->in.bytes == 2                                                                          \
         ? ((job)->in.channels == 1   ? &launcher<uint16_t, 1>                                      \
            : (job)->in.channels == 2 ? &launcher<uint16_t, 2>                                      \
            : (job)->in.channels == 3 ? &launcher<uint16_t, 3>                                      \
                                      : &launcher<uint16_t, 4>)                                     \
         : ((job)->in.channels == 1   ? &launcher<uint8_t, 1>                                       \
            : (job)->in.channels == 2 ? &launcher<uint8_t, 2>                                       \
            : (job)->in.channels == 3 ? &launcher<uint8_t, 3>                                       \
                                      : &launcher<uint8_t, 4>))

/* Pixel x of a row, each colour sample premultiplied by alpha when the image has one. */
template <typename T, int C>
__device__ __forceinline__ void rs_load(const unsigned char *row, int x, unsigned v[C])
{
    const T *p = (const T *)row + (size_t)x * C;
#pragma unroll
    for (int c = 0; c < C; c++)
        v[c] = __ldg(p + c);
    if (C == 2 || C == 4) {
#pragma unroll
        for (int c = 0; c < C - 1; c++)
            v[c] = rs_premul(v[c], v[C - 1], (int)sizeof(T));
    }
}

/* (sum >> prec) clamped to the depth: Pillow's clip8 after a floor shift. */
template <typename T>
__device__ __forceinline__ unsigned rs_round(typename rs_acc<T>::type acc)
{
    const int prec = sizeof(T) == 2 ? RS_PREC16 : RS_PREC8;
    const long long max = sizeof(T) == 2 ? 65535 : 255;
    long long v = (long long)(acc >> prec);
    return (unsigned)(v < 0 ? 0 : v > max ? max : v);
}

template <typename T>
__device__ __forceinline__ typename rs_acc<T>::type rs_half()
{
    return (typename rs_acc<T>::type)1 << ((sizeof(T) == 2 ? RS_PREC16 : RS_PREC8) - 1);
}

/* The interp filter's two taps (resize_direct.cu, resize_direct_even.cu): both premultiplied by
 * their alpha where the image has one. */
template <typename T, int C>
__device__ __forceinline__ void di_premul(unsigned (&s)[2][C])
{
    if (C == 2 || C == 4) {
#pragma unroll
        for (int t = 0; t < 2; t++)
#pragma unroll
            for (int c = 0; c < C - 1; c++)
                s[t][c] = rs_premul(s[t][c], s[t][C - 1], (int)sizeof(T));
    }
}

/* One sample of a pass: (w0 a + w1 b + half) >> prec, clamped, as the reference rounds. */
template <typename T>
__device__ __forceinline__ unsigned di_lerp(unsigned a, unsigned b, int32_t w0, int32_t w1)
{
    typedef typename rs_acc<T>::type acc_t;
    return rs_round<T>(rs_half<T>() + (acc_t)a * w0 + (acc_t)b * w1);
}

/* Stores an output pixel, unpremultiplied when the image has alpha. */
template <typename T, int C>
__device__ __forceinline__ void rs_store(unsigned char *row, int x, unsigned v[C])
{
    if (C == 2 || C == 4) {
#pragma unroll
        for (int c = 0; c < C - 1; c++)
            v[c] = rs_unpremul(v[c], v[C - 1], (int)sizeof(T));
    }
    T *p = (T *)row + (size_t)x * C;
#pragma unroll
    for (int c = 0; c < C; c++)
        p[c] = (T)v[c];
}

#endif /* TS_RESIZE_GPU_CUH */
