/* resize.cu - resize, thumbnail and crop on the GPU: the job plan shared by every variant, and
 * the first two rungs of the ladder (the fused one is in resize_opt.cu).
 *
 * Resampling is a matrix product out = Wy * (premultiplied image) * Wx^T with banded Wx, Wy
 * (resize.h, ref_resize.c). Both rungs run it as two passes through an intermediate image in
 * the job's scratch (ow wide, the rows the vertical pass reads), each pass rounded to the depth:
 *   naive: one thread per output pixel, every tap and every weight read from global memory;
 *   tiled: the Programming Guide's tiled product: a block stages its band of the weight matrix
 *          (TX outputs x ksize weights) and the span of input pixels that band touches in
 *          shared memory, each pixel's samples packed in one word (two for 16-bit RGB/RGBA),
 *          then sums from there: a tap is one shared load, not one global load per sample
 *          and weight. Horizontal: a thread sums one output column over RY rows, reading each
 *          weight once for all of them; vertical: a warp sums one output row of 32 columns,
 *          its weight loads broadcasts. Tile sizes shrink until they fit 48 KB.
 * A crop, or a resize to the same size, is a 2-D copy (cudaMemcpy2DAsync) in every variant.
 * Layout: pixels interleaved (1-4 channels, 8 or 16 bits), rows `pitch` bytes apart.
 */
#include "resize_gpu.cuh"
#include "variants.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <type_traits>

/* ---------------------------------------------------------------- the plan (all variants) */

/* The scratch layout: bounds and weights of both axes, then the intermediate image. */
struct rs_layout {
    size_t h, v, tmp, frag, total, tmp_pitch; /* offsets: each axis's tables, the intermediate,
                                                 resize_mmai.cu's fragments */
};

static size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

static int rs_trivial(const ts_job *job)
{
    return job->op->resize.mode == TS_RESIZE_CROP ||
           (job->out.width == job->in.width && job->out.height == job->in.height);
}

static int rs_layout_of(const ts_job *job, rs_layout *l)
{
    int ow = job->out.width, oh = job->out.height;
    int ksh = rs_coeffs_ksize(job->in.width, ow, job->op->resize.filter);
    int ksv = rs_coeffs_ksize(job->in.height, oh, job->op->resize.filter);
    if (!ksh || !ksv)
        return -1;
    l->tmp_pitch = ts_gpu_pitch((size_t)ow * ts_pixel_bytes(&job->in));
    /* an axis: bounds, row index and at most `out` distinct rows (rs_pack) */
    l->h = 0;
    l->v = l->h + align256((size_t)ow * (3 + (size_t)ksh) * sizeof(int32_t));
    l->tmp = l->v + align256((size_t)oh * (3 + (size_t)ksv) * sizeof(int32_t));
    l->frag = l->tmp + align256(l->tmp_pitch * (size_t)job->in.height); /* rows read <= input rows */
    l->total = l->frag + (job->in.bytes == 1 ? rs_mmai_frag_bound(ow, oh, job->in.channels) : 0);
    return 0;
}

extern "C" size_t resize_scratch(const ts_job *job)
{
    rs_layout l;
    if (rs_trivial(job) || rs_layout_of(job, &l) != 0)
        return 0;
    return l.total;
}

/* Recent weight tables on the host (host memory only; the device copy goes into each job's
 * scratch), least recently used replaced. The lock is held from rs_plan_make to rs_plan_free so
 * that a table in use is never replaced. */
#define RS_CACHE 8
struct rs_cache_entry {
    int in, out, filter, bytes;
    unsigned long long used;
    rs_coeffs c;
    int32_t *up;     /* what goes up: bounds [out][2], row index [out], distinct rows [n][ks] */
    size_t up_bytes;
};

/* Fills e->up from e->c: identical weight rows (same phase, away from the edges) stored once. */
static ts_status rs_pack(rs_cache_entry *e)
{
    const rs_coeffs *c = &e->c;
    int out = c->out_size, ks = c->ksize;
    size_t tsize = 16;
    while (tsize < 2 * (size_t)out)
        tsize *= 2;
    int32_t *up = (int32_t *)malloc(((size_t)out * 3 + (size_t)out * ks) * sizeof *up);
    int *slot = (int *)calloc(tsize, sizeof *slot); /* distinct row + 1, 0: empty */
    if (!up || !slot) {
        free(up);
        free(slot);
        return ts_fail(TS_ERR_NOMEM, "resize: out of memory for the weights");
    }
    int32_t *row = up + 2 * (size_t)out, *uniq = up + 3 * (size_t)out;
    int n = 0;
    memcpy(up, c->bounds, (size_t)out * 2 * sizeof *up);
    for (int i = 0; i < out; i++) {
        const int32_t *k = c->kk + (size_t)i * ks;
        uint32_t h = 2166136261u;
        for (int t = 0; t < ks; t++)
            h = (h ^ (uint32_t)k[t]) * 16777619u;
        size_t s = h & (tsize - 1);
        while (slot[s] && memcmp(uniq + (size_t)(slot[s] - 1) * ks, k, (size_t)ks * sizeof *k))
            s = (s + 1) & (tsize - 1);
        if (!slot[s]) {
            memcpy(uniq + (size_t)n * ks, k, (size_t)ks * sizeof *k);
            slot[s] = ++n;
        }
        row[i] = slot[s] - 1;
    }
    free(slot);
    e->up = up;
    e->up_bytes = ((size_t)out * 3 + (size_t)n * ks) * sizeof *up;
    return TS_OK;
}
static rs_cache_entry rs_cache[RS_CACHE];
static unsigned long long rs_cache_tick;
static pthread_mutex_t rs_cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* With the lock held: the table for (in, out, filter, bytes), built if missing. */
static ts_status rs_cache_get(int in, int out, ts_resize_filter f, int bytes,
                              const rs_cache_entry **found)
{
    rs_cache_entry *victim = &rs_cache[0];
    for (int i = 0; i < RS_CACHE; i++) {
        rs_cache_entry *e = &rs_cache[i];
        if (e->c.kk && e->in == in && e->out == out && e->filter == (int)f && e->bytes == bytes) {
            e->used = ++rs_cache_tick;
            *found = e;
            return TS_OK;
        }
        if (!e->c.kk || e->used < victim->used)
            victim = e;
    }
    rs_coeffs_free(&victim->c);
    free(victim->up);
    victim->up = NULL;
    ts_status st = rs_coeffs_make(in, out, f, bytes, &victim->c);
    if (st == TS_OK && (st = rs_pack(victim)) != TS_OK)
        rs_coeffs_free(&victim->c);
    if (st != TS_OK)
        return st;
    victim->in = in, victim->out = out, victim->filter = (int)f, victim->bytes = bytes;
    victim->used = ++rs_cache_tick;
    *found = victim;
    return TS_OK;
}

void rs_plan_free(rs_plan *p)
{
    if (p->locked)
        pthread_mutex_unlock(&rs_cache_lock);
    p->locked = 0;
}

ts_status rs_plan_make(const ts_job *job, rs_plan *p, int *done)
{
    const ts_resize *r = &job->op->resize;
    const ts_image *in = &job->in, *out = &job->out;
    memset(p, 0, sizeof *p);
    *done = 0;
    if (out->channels != in->channels || out->bytes != in->bytes)
        return ts_fail(TS_ERR_INVALID, "resize: output format differs from the input's");
    if (rs_trivial(job)) {
        int x0 = r->mode == TS_RESIZE_CROP && r->x > 0 ? (int)r->x : 0;
        int y0 = r->mode == TS_RESIZE_CROP && r->y > 0 ? (int)r->y : 0;
        if (x0 + out->width > in->width || y0 + out->height > in->height)
            return ts_fail(TS_ERR_INVALID, "crop: the box leaves the image");
        CUDA_TRY(cudaMemcpy2DAsync(out->data, out->pitch,
                                      (const char *)in->data + (size_t)y0 * in->pitch +
                                          (size_t)x0 * ts_pixel_bytes(in),
                                      in->pitch, ts_row_bytes(out), (size_t)out->height,
                                      cudaMemcpyDeviceToDevice, job->stream));
        *done = 1;
        return TS_OK;
    }
    rs_layout l;
    if (rs_layout_of(job, &l) != 0)
        return ts_fail(TS_ERR_TOO_LARGE, "resize: %dx%d -> %dx%d needs too many weights",
                       in->width, in->height, out->width, out->height);
    if (!job->scratch || job->scratch_bytes < l.total)
        return ts_fail(TS_ERR_INVALID, "resize: %zu bytes of scratch needed", l.total);
    pthread_mutex_lock(&rs_cache_lock);
    p->locked = 1;
    /* the second lookup cannot evict the first: that one is now the most recently used */
    const rs_cache_entry *eh, *ev;
    ts_status st = rs_cache_get(in->width, out->width, r->filter, in->bytes, &eh);
    if (st == TS_OK)
        st = rs_cache_get(in->height, out->height, r->filter, in->bytes, &ev);
    if (st != TS_OK) {
        rs_plan_free(p);
        return st;
    }
    p->ch = &eh->c;
    p->cv = &ev->c;
    unsigned char *s = (unsigned char *)job->scratch;
    rs_args *a = &p->a;
    a->in = (const unsigned char *)in->data;
    a->in_pitch = in->pitch;
    a->out = (unsigned char *)out->data;
    a->out_pitch = out->pitch;
    a->tmp = s + l.tmp;
    a->tmp_pitch = l.tmp_pitch;
    p->frag = l.total > l.frag ? s + l.frag : NULL;
    p->frag_bytes = l.total - l.frag;
    a->iw = in->width;
    a->ih = in->height;
    a->ow = out->width;
    a->oh = out->height;
    a->ksh = p->ch->ksize;
    a->ksv = p->cv->ksize;
    a->bh = (const int *)(s + l.h);
    a->rh = a->bh + 2 * (size_t)a->ow;
    a->kh = (const int32_t *)(a->rh + a->ow);
    a->bv = (const int *)(s + l.v);
    a->rv = a->bv + 2 * (size_t)a->oh;
    a->kv = (const int32_t *)(a->rv + a->oh);
    a->first = p->cv->first;
    a->last = p->cv->last;
    p->up_h = eh->up, p->up_v = ev->up;
    p->up_h_bytes = eh->up_bytes, p->up_v_bytes = ev->up_bytes;
    return TS_OK;
}

ts_status rs_plan_upload(rs_plan *p, const ts_job *job)
{
    if (p->uploaded)
        return TS_OK;
    /* From pageable memory the copy is staged before the call returns (the host may wait for
     * the stream to get there: a cached plan of resize_mmai.cu skips this), so the cache may
     * change right after; the upload is ordered before the kernels on the same stream. */
    cudaError_t e = cudaMemcpyAsync((void *)p->a.bh, p->up_h, p->up_h_bytes,
                                    cudaMemcpyHostToDevice, job->stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync((void *)p->a.bv, p->up_v, p->up_v_bytes, cudaMemcpyHostToDevice,
                            job->stream);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return ts_fail(TS_ERR_CUDA, "resize: weight upload: %s", cudaGetErrorString(e));
    }
    p->uploaded = 1;
    return TS_OK;
}

ts_status rs_run(const ts_job *job, rs_launcher launch)
{
    rs_plan p;
    int done;
    ts_status st = rs_plan_make(job, &p, &done);
    if (st != TS_OK || done)
        return st;
    st = launch(&p, job);
    rs_plan_free(&p);
    return st;
}

/* ---------------------------------------------------------------- naive */

/* Intermediate row r (input row first + r), output column x: all channels of one pixel. */
template <typename T, int C>
__global__ void resize_h_naive_kernel(rs_args a)
{
    typedef typename rs_acc<T>::type acc_t;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= a.ow)
        return;
    int x0 = a.bh[2 * x], n = a.bh[2 * x + 1];
    const int32_t *k = a.kh + (size_t)a.rh[x] * a.ksh;
    for (int r = blockIdx.y; r < a.last - a.first; r += gridDim.y) {
        const unsigned char *row = a.in + (size_t)(a.first + r) * a.in_pitch;
        acc_t acc[C];
#pragma unroll
        for (int c = 0; c < C; c++)
            acc[c] = rs_half<T>();
        for (int i = 0; i < n; i++) {
            unsigned v[C];
            rs_load<T, C>(row, x0 + i, v);
            acc_t w = k[i];
#pragma unroll
            for (int c = 0; c < C; c++)
                acc[c] += (acc_t)v[c] * w;
        }
        T *t = (T *)(a.tmp + (size_t)r * a.tmp_pitch) + (size_t)x * C;
#pragma unroll
        for (int c = 0; c < C; c++)
            t[c] = (T)rs_round<T>(acc[c]);
    }
}

template <typename T, int C>
__global__ void resize_v_naive_kernel(rs_args a)
{
    typedef typename rs_acc<T>::type acc_t;
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= a.ow)
        return;
    for (int y = blockIdx.y; y < a.oh; y += gridDim.y) {
        int y0 = a.bv[2 * y] - a.first, n = a.bv[2 * y + 1];
        const int32_t *k = a.kv + (size_t)a.rv[y] * a.ksv;
        acc_t acc[C];
#pragma unroll
        for (int c = 0; c < C; c++)
            acc[c] = rs_half<T>();
        for (int i = 0; i < n; i++) {
            const T *t = (const T *)(a.tmp + (size_t)(y0 + i) * a.tmp_pitch) + (size_t)x * C;
            acc_t w = k[i];
#pragma unroll
            for (int c = 0; c < C; c++)
                acc[c] += (acc_t)t[c] * w;
        }
        unsigned v[C];
#pragma unroll
        for (int c = 0; c < C; c++)
            v[c] = rs_round<T>(acc[c]);
        rs_store<T, C>(a.out + (size_t)y * a.out_pitch, x, v);
    }
}

static unsigned grid_rows(int n) { return (unsigned)(n < 65535 ? n : 65535); }

template <typename T, int C>
static ts_status naive_launch(rs_plan *p, const ts_job *job)
{
    ts_status up = rs_plan_upload(p, job);
    if (up != TS_OK)
        return up;
    const rs_args &a = p->a;
    dim3 block(128);
    dim3 gh(gpu_div_up((size_t)a.ow, 128), grid_rows(a.last - a.first));
    resize_h_naive_kernel<T, C><<<gh, block, 0, job->stream>>>(a);
    LAUNCH_CHECK("resize_h_naive_kernel");
    dim3 gv(gpu_div_up((size_t)a.ow, 128), grid_rows(a.oh));
    resize_v_naive_kernel<T, C><<<gv, block, 0, job->stream>>>(a);
    LAUNCH_CHECK("resize_v_naive_kernel");
    return TS_OK;
}

extern "C" ts_status resize_naive(const ts_job *job)
{
    return rs_run(job, RS_PICK(naive_launch, job));
}

/* ---------------------------------------------------------------- tiled */

#define TILED_THREADS 128
#define TILED_VX 32 /* columns of a vertical tile: one warp wide */
#define TILED_RY 8  /* most rows of a horizontal tile: each weight read once for all of them */

/* A staged pixel: its samples packed in one 32-bit word (8-bit, or 16-bit with 1-2 channels),
 * else in two: one shared-memory load per tap instead of one per sample. */
template <typename T, int C> struct rs_px {
    typedef typename std::conditional<sizeof(T) * C <= 4, unsigned, uint2>::type type;
};

template <typename T, int C>
__device__ __forceinline__ typename rs_px<T, C>::type rs_pack_px(const unsigned v[C])
{
    typename rs_px<T, C>::type p;
    T s[sizeof p / sizeof(T)] = {};
#pragma unroll
    for (int c = 0; c < C; c++)
        s[c] = (T)v[c];
    memcpy(&p, s, sizeof p);
    return p;
}

template <typename T, int C>
__device__ __forceinline__ void rs_unpack_px(typename rs_px<T, C>::type p, unsigned v[C])
{
    T s[sizeof p / sizeof(T)];
    memcpy(s, &p, sizeof p);
#pragma unroll
    for (int c = 0; c < C; c++)
        v[c] = s[c];
}

/* A bound on the inputs that n consecutive outputs read (see rs_coeffs_make): centres move by
 * scale per output, each output reads at most ksize inputs, the rounding adds at most 2. Used
 * where the tables are not built yet (supports); launches use the exact span. */
static int span_bound(int in, int out, int ksize, int n)
{
    double s = ceil((double)(n - 1) * in / out) + ksize + 2;
    return s > in ? in : (int)s;
}

/* Horizontal tile: TX outputs x RY rows with weights [TX][ks] and input pixels [RY][span]
 * (premultiplied, packed). Vertical tile: 32 columns x TY outputs, weights [TY][ks], pixels
 * [span][32] of the intermediate, packed. */
static size_t tiled_h_smem(int tx, int ry, int ks, int span, int px)
{
    return (size_t)tx * ks * 4 + (size_t)ry * span * px;
}
static size_t tiled_v_smem(int ty, int ks, int span, int px)
{
    return (size_t)ty * ks * 4 + (size_t)span * TILED_VX * px;
}

struct tiled_cfg {
    int tx, ry, ty;
};

/* The largest tiles that fit; -1 when none does. span(axis, n) gives the input span; px the
 * bytes of a packed pixel. */
template <typename SpanH, typename SpanV>
static int tiled_choose(int ksh, int ksv, int px, SpanH span_h, SpanV span_v, tiled_cfg *cfg)
{
    static const int txs[] = {128, 64, 32}, rys[] = {TILED_RY, 4, 2, 1},
                     tys[] = {32, 16, 8, 4, 2, 1};
    cfg->tx = 0;
    for (int i = 0; i < 3 && !cfg->tx; i++)
        for (int j = 0; j < 4 && !cfg->tx; j++)
            if (tiled_h_smem(txs[i], rys[j], ksh, span_h(txs[i]), px) <= RS_SMEM_BUDGET)
                cfg->tx = txs[i], cfg->ry = rys[j];
    cfg->ty = 0;
    for (int i = 0; i < 6 && !cfg->ty; i++)
        if (tiled_v_smem(tys[i], ksv, span_v(tys[i]), px) <= RS_SMEM_BUDGET)
            cfg->ty = tys[i];
    return cfg->tx && cfg->ty ? 0 : -1;
}

static int px_bytes(int channels, int bytes) { return channels * bytes <= 4 ? 4 : 8; }

extern "C" int resize_tiled_supports(const ts_job *job)
{
    if (rs_trivial(job))
        return 1;
    int iw = job->in.width, ih = job->in.height, ow = job->out.width, oh = job->out.height;
    ts_resize_filter f = job->op->resize.filter;
    int ksh = rs_coeffs_ksize(iw, ow, f), ksv = rs_coeffs_ksize(ih, oh, f);
    tiled_cfg cfg;
    return ksh && ksv && ih <= 65535 && oh <= 65535 && /* grid.y: one block row per <= RY rows */
           tiled_choose(
               ksh, ksv, px_bytes(job->in.channels, job->in.bytes),
               [&](int n) { return span_bound(iw, ow, ksh, n); },
               [&](int n) { return span_bound(ih, oh, ksv, n); }, &cfg) == 0;
}

/* Thread x of the block sums output column ox0 + x for all the tile's rows at once: each weight
 * is read from shared memory once per tap and serves up to TILED_RY rows; each tap of a row is
 * one packed pixel. */
template <typename T, int C>
__global__ void resize_h_tiled_kernel(rs_args a, int tx, int ry, int span)
{
    typedef typename rs_acc<T>::type acc_t;
    typedef typename rs_px<T, C>::type px_t;
    extern __shared__ __align__(16) int32_t sm[];
    int32_t *w = sm;                          /* [tx][ksh] */
    px_t *px = (px_t *)(sm + tx * a.ksh);     /* [ry][span] */
    int ox0 = blockIdx.x * tx, nx = min(tx, a.ow - ox0);
    int r0 = blockIdx.y * ry, nr = min(ry, a.last - a.first - r0);
    int in0 = a.bh[2 * ox0];
    int in1 = a.bh[2 * (ox0 + nx - 1)] + a.bh[2 * (ox0 + nx - 1) + 1];
    /* stage the band of the weight matrix and the inputs it touches */
    for (int i = threadIdx.x; i < nx * a.ksh; i += blockDim.x)
        w[i] = a.kh[(size_t)a.rh[ox0 + i / a.ksh] * a.ksh + i % a.ksh];
    /* unrolled: several pixels' loads in flight per thread, not one global latency each */
#pragma unroll 4
    for (int i = threadIdx.x; i < nr * (in1 - in0); i += blockDim.x) {
        int r = i / (in1 - in0), x = i % (in1 - in0);
        unsigned v[C];
        rs_load<T, C>(a.in + (size_t)(a.first + r0 + r) * a.in_pitch, in0 + x, v);
        px[(size_t)r * span + x] = rs_pack_px<T, C>(v);
    }
    __syncthreads();
    for (int x = threadIdx.x; x < nx; x += blockDim.x) {
        int x0 = a.bh[2 * (ox0 + x)] - in0, n = a.bh[2 * (ox0 + x) + 1];
        acc_t acc[TILED_RY][C];
#pragma unroll
        for (int r = 0; r < TILED_RY; r++)
#pragma unroll
            for (int c = 0; c < C; c++)
                acc[r][c] = rs_half<T>();
        for (int t = 0; t < n; t++) {
            acc_t wt = w[x * a.ksh + t];
#pragma unroll
            for (int r = 0; r < TILED_RY; r++) {
                if (r < nr) {
                    unsigned v[C];
                    rs_unpack_px<T, C>(px[(size_t)r * span + x0 + t], v);
#pragma unroll
                    for (int c = 0; c < C; c++)
                        acc[r][c] += (acc_t)v[c] * wt;
                }
            }
        }
#pragma unroll
        for (int r = 0; r < TILED_RY; r++) {
            if (r < nr) {
                T *o = (T *)(a.tmp + (size_t)(r0 + r) * a.tmp_pitch) + (size_t)(ox0 + x) * C;
#pragma unroll
                for (int c = 0; c < C; c++)
                    o[c] = (T)rs_round<T>(acc[r][c]);
            }
        }
    }
}

template <typename T, int C>
__global__ void resize_v_tiled_kernel(rs_args a, int ty, int span)
{
    typedef typename rs_acc<T>::type acc_t;
    typedef typename rs_px<T, C>::type px_t;
    extern __shared__ __align__(16) int32_t sm[];
    int32_t *w = sm;                       /* [ty][ksv] */
    px_t *rows = (px_t *)(sm + ty * a.ksv); /* [span][32] */
    int ox0 = blockIdx.x * TILED_VX, nx = min(TILED_VX, a.ow - ox0);
    int oy0 = blockIdx.y * ty, ny = min(ty, a.oh - oy0);
    int in0 = a.bv[2 * oy0];
    int in1 = a.bv[2 * (oy0 + ny - 1)] + a.bv[2 * (oy0 + ny - 1) + 1];
    for (int i = threadIdx.x; i < ny * a.ksv; i += blockDim.x)
        w[i] = a.kv[(size_t)a.rv[oy0 + i / a.ksv] * a.ksv + i % a.ksv];
#pragma unroll 4
    for (int i = threadIdx.x; i < (in1 - in0) * nx; i += blockDim.x) {
        int r = i / nx, x = i % nx;
        const T *s = (const T *)(a.tmp + (size_t)(in0 + r - a.first) * a.tmp_pitch) +
                     (size_t)(ox0 + x) * C;
        unsigned v[C];
#pragma unroll
        for (int c = 0; c < C; c++)
            v[c] = s[c];
        rows[(size_t)r * TILED_VX + x] = rs_pack_px<T, C>(v);
    }
    __syncthreads();
    /* a warp is one output row: its weight loads are broadcasts */
    for (int i = threadIdx.x; i < ny * TILED_VX; i += blockDim.x) {
        int y = i / TILED_VX, x = i % TILED_VX;
        if (x >= nx)
            continue;
        int y0 = a.bv[2 * (oy0 + y)] - in0, n = a.bv[2 * (oy0 + y) + 1];
        acc_t acc[C];
#pragma unroll
        for (int c = 0; c < C; c++)
            acc[c] = rs_half<T>();
        for (int t = 0; t < n; t++) {
            unsigned v[C];
            rs_unpack_px<T, C>(rows[(size_t)(y0 + t) * TILED_VX + x], v);
            acc_t wt = w[y * a.ksv + t];
#pragma unroll
            for (int c = 0; c < C; c++)
                acc[c] += (acc_t)v[c] * wt;
        }
        unsigned v[C];
#pragma unroll
        for (int c = 0; c < C; c++)
            v[c] = rs_round<T>(acc[c]);
        rs_store<T, C>(a.out + (size_t)(oy0 + y) * a.out_pitch, ox0 + x, v);
    }
}

template <typename T, int C>
static ts_status tiled_launch(rs_plan *p, const ts_job *job)
{
    ts_status up = rs_plan_upload(p, job);
    if (up != TS_OK)
        return up;
    const rs_args &a = p->a;
    tiled_cfg cfg;
    int px = px_bytes(C, (int)sizeof(T));
    if (tiled_choose(
            a.ksh, a.ksv, px, [&](int n) { return rs_coeffs_span(p->ch, n); },
            [&](int n) { return rs_coeffs_span(p->cv, n); }, &cfg) != 0)
        return ts_fail(TS_ERR_UNSUPPORTED, "resize tiled: the tiles do not fit shared memory");
    int span_h = rs_coeffs_span(p->ch, cfg.tx), span_v = rs_coeffs_span(p->cv, cfg.ty);
    int rows = a.last - a.first;
    dim3 gh(gpu_div_up((size_t)a.ow, (unsigned)cfg.tx), gpu_div_up((size_t)rows, (unsigned)cfg.ry));
    if (gh.y > 65535)
        return ts_fail(TS_ERR_UNSUPPORTED, "resize tiled: %d rows", rows);
    resize_h_tiled_kernel<T, C><<<gh, TILED_THREADS,
                                  tiled_h_smem(cfg.tx, cfg.ry, a.ksh, span_h, px), job->stream>>>(
        a, cfg.tx, cfg.ry, span_h);
    LAUNCH_CHECK("resize_h_tiled_kernel");
    dim3 gv(gpu_div_up((size_t)a.ow, TILED_VX), gpu_div_up((size_t)a.oh, (unsigned)cfg.ty));
    if (gv.y > 65535)
        return ts_fail(TS_ERR_UNSUPPORTED, "resize tiled: %d output rows", a.oh);
    resize_v_tiled_kernel<T, C><<<gv, TILED_THREADS, tiled_v_smem(cfg.ty, a.ksv, span_v, px),
                                  job->stream>>>(a, cfg.ty, span_v);
    LAUNCH_CHECK("resize_v_tiled_kernel");
    return TS_OK;
}

extern "C" ts_status resize_tiled(const ts_job *job)
{
    return rs_run(job, RS_PICK(tiled_launch, job));
}
