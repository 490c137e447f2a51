/* clahe_blend8.cuh - the gray8 CLAHE blend from the cells in shared memory (opt's and cluster's
 * gray8 blend): a strip of columns by a band of rows a block, launched as a dependent of the
 * histogram kernel on sm_90. Included by clahe_common.cuh after the helpers it uses (clahe_smem,
 * clahe_row). Internal to kernels/.
 */
#ifndef CLAHE_BLEND8_CUH
#define CLAHE_BLEND8_CUH

#define CLAHE_BAND_THREADS 256 /* the most threads a strip */

/* Programmatic dependent launch (sm_90): the blend is launched while the histogram kernel still
 * drains (that kernel releases it at its start) and waits here, before its first read of
 * anything that kernel wrote, until it has finished and its writes are visible. Compiled out
 * below sm_90, where the host never launches that way (clahe_pdl_ok). */
__device__ __forceinline__ void clahe_wait_primary()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void clahe_release_dependents()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* Whether kernel k may be launched as a dependent: the device has it (sm_90) and k was compiled
 * for sm_90 (its wait is there). */
static inline bool clahe_pdl_ok(const void *k, const ts_device *dev)
{
    cudaFuncAttributes a;
    return dev && dev->cc >= 90 && cudaFuncGetAttributes(&a, k) == cudaSuccess && a.ptxVersion >= 90;
}

/* The gray8 blend from the cells in shared memory, clahe.h's float steps at fewer instructions:
 *  - A LUT byte b and a weight w: the product b * w rounded once is fma(1 + b * 2^-23, W, -W)
 *    with W = w * 2^23 (1 + b * 2^-23 is the float of bits 0x3F8000bb, one byte permute; W is
 *    exact, a power of two apart from w; the fma's exact value (1 + b * 2^-23) * W - W is b * w,
 *    rounded once): __fmul_rn((float)b, w) bit for bit (tests: clahe_fma_form_is_the_product),
 *    in one permute and one FFMA where the 2^23 trick took a permute, an FADD and an FMUL.
 *  - The result rounds by adding 1.5 * 2^23: the low byte of the sum's bits is rint(r); r never
 *    reaches 255.5 (a convex blend of bytes, each step off by an ulp at most), so it needs no
 *    clamp, and three byte permutes pack four results.
 *  - A block is a strip of columns (a column group of PX pixels a thread, its weights and cell
 *    addresses in registers) by a band of rows; it stages the cells of the strip's cell columns
 *    and the band's cell rows, and a row table (ya, 1 - ya, cell row, segment end) so that the
 *    rows of a segment (one cell row) share each pixel's cell address: a lookup is a permute, a
 *    shift-add and one LDS.
 * PX pixels a thread (one PX-byte load and store), R rows' loads in flight, MB blocks an SM. */
template <int PX> struct clahe_vec;
template <> struct clahe_vec<8> {
    typedef uint2 type;
    static __device__ __forceinline__ unsigned word(const type &v, int i) { return i ? v.y : v.x; }
    static __device__ __forceinline__ void set(type &v, int i, unsigned w)
    {
        if (i)
            v.y = w;
        else
            v.x = w;
    }
};
template <> struct clahe_vec<16> {
    typedef uint4 type;
    static __device__ __forceinline__ unsigned word(const type &v, int i)
    {
        return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
    }
    static __device__ __forceinline__ void set(type &v, int i, unsigned w)
    {
        if (i == 0)
            v.x = w;
        else if (i == 1)
            v.y = w;
        else if (i == 2)
            v.z = w;
        else
            v.w = w;
    }
};

__device__ __forceinline__ unsigned clahe_lds(unsigned addr)
{
    unsigned v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr));
    return v;
}

/* One pixel from its cell entry e: the float bits of rint(result) + 1.5 * 2^23 (the low byte is
 * the result). w1 = (1 - xa) * 2^23, w2 = xa * 2^23. */
__device__ __forceinline__ unsigned clahe_fma_px(unsigned e, float w1, float w2, float ya, float ya1)
{
    const float l11 = __uint_as_float(__byte_perm(e, 0x3F800000u, 0x7650u));
    const float l12 = __uint_as_float(__byte_perm(e, 0x3F800000u, 0x7651u));
    const float l21 = __uint_as_float(__byte_perm(e, 0x3F800000u, 0x7652u));
    const float l22 = __uint_as_float(__byte_perm(e, 0x3F800000u, 0x7653u));
    const float top = __fadd_rn(__fmaf_rn(l11, w1, -w1), __fmaf_rn(l12, w2, -w2));
    const float bot = __fadd_rn(__fmaf_rn(l21, w1, -w1), __fmaf_rn(l22, w2, -w2));
    const float r = __fadd_rn(__fmul_rn(top, ya1), __fmul_rn(bot, ya));
    return __float_as_uint(__fadd_rn(r, 12582912.0f));
}

/* Four pixels of word p (bytes k0..k0+3 of the thread's PX): base[k] is the shared address of
 * the cell entry 0 of pixel k's cell in this segment. */
__device__ __forceinline__ unsigned clahe_fma_word(unsigned p, const unsigned *base, const float *w1,
                                                   const float *w2, float ya, float ya1)
{
    unsigned q[4];
#pragma unroll
    for (int b = 0; b < 4; b++) {
        const unsigned v = __byte_perm(p, 0u, 0x4440u | (unsigned)b);
        q[b] = clahe_fma_px(clahe_lds(base[b] + v * 4u), w1[b], w2[b], ya, ya1);
    }
    return __byte_perm(__byte_perm(q[0], q[1], 0x0040u), __byte_perm(q[2], q[3], 0x0040u), 0x5410u);
}

/* E 1 (opt, launched as a dependent) builds the row table and its segments before the wait (they
 * need nothing the histogram kernel writes; a block resident early does it while that kernel
 * drains); E 0 (cluster, launched after its histogram kernel) stages the cells first. */
template <int PX, int R, int MB, int E>
static __global__ void __launch_bounds__(CLAHE_BAND_THREADS, MB)
    clahe_blend_fma_kernel(ts_image in, ts_image out, clahe_geom g, const uint32_t *cells, int rows,
                           int wrows, int cpb, int wcols)
{
    typedef typename clahe_vec<PX>::type vec;
    uint32_t *win = clahe_smem<uint32_t>();
    const int cw = g.tx + 1, y0 = blockIdx.y * rows, y1 = y0 + rows < g.h ? y0 + rows : g.h;
    const int nc = (g.w + PX - 1) / PX, c0 = blockIdx.x * cpb, c1 = c0 + cpb < nc ? c0 + cpb : nc;
    if (y0 >= g.h || c0 >= nc)
        return;
    const int n = y1 - y0;
    /* the window: the cells of the band's cell rows and the strip's cell columns, [ncy][ncx][256] */
    const int last = c1 * PX < g.w ? c1 * PX - 1 : g.w - 1;
    const int cx0 = clahe_axis_of(c0 * PX, g.inv_tw, g.tx).cell;
    int ncx = clahe_axis_of(last, g.inv_tw, g.tx).cell - cx0 + 1;
    ncx = ncx < wcols ? ncx : wcols; /* never clamps: the host sized wcols for `cpb` */
    int4 *rt = (int4 *)(win + (size_t)wrows * wcols * 256); /* a row: ya, 1 - ya, cell row, segment end */
    const int cy0 = clahe_axis_of(y0, g.inv_th, g.ty).cell;
    int ncy = clahe_axis_of(y1 - 1, g.inv_th, g.ty).cell - cy0 + 1;
    ncy = ncy < wrows ? ncy : wrows; /* never clamps: the host sized wrows for `rows` */
    auto stage = [&]() { /* after the wait: the cells are the histogram kernel's */
        clahe_wait_primary();
        for (int e = threadIdx.x; e < ncy * ncx * 64; e += blockDim.x) {
            const int cy = e / (ncx * 64), rest = e - cy * ncx * 64;
            ((uint4 *)win)[e] = ((const uint4 *)(cells + ((size_t)(cy0 + cy) * cw + cx0) * 256))[rest];
        }
    };
    if (!E)
        stage();
    for (int r = threadIdx.x; r < n; r += blockDim.x) {
        clahe_axis ay = clahe_axis_of(y0 + r, g.inv_th, g.ty);
        rt[r] = make_int4(__float_as_int(ay.a), __float_as_int(__fsub_rn(1.0f, ay.a)),
                          (ay.cell - cy0) * ncx * 1024, 0);
    }
    __syncthreads();
    if (threadIdx.x == 0) /* cells only grow down the band: a segment ends where its cell row does */
        for (int r = n - 1, end = n; r >= 0; r--) {
            if (r + 1 < n && rt[r + 1].z != rt[r].z)
                end = r + 1;
            rt[r].w = end;
        }
    if (E) /* the window lies before the row table: thread 0 and the others write apart */
        stage();
    __syncthreads();
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(win);
    const bool vec_ok = (((size_t)in.data | (size_t)out.data | in.pitch | out.pitch) & (PX - 1)) == 0;
    for (int c = c0 + threadIdx.x; c < c1; c += blockDim.x) {
        const int x0 = c * PX;
        unsigned co[PX];
        float w1[PX], w2[PX];
#pragma unroll
        for (int k = 0; k < PX; k++) {
            clahe_axis ax = clahe_axis_of(x0 + k < g.w ? x0 + k : g.w - 1, g.inv_tw, g.tx);
            co[k] = sbase + (unsigned)(ax.cell - cx0) * 1024u;
            w1[k] = __fmul_rn(__fsub_rn(1.0f, ax.a), 8388608.0f);
            w2[k] = __fmul_rn(ax.a, 8388608.0f);
        }
        if (vec_ok && x0 + PX <= g.w) {
            for (int s = 0; s < n;) {
                const int4 t0 = rt[s];
                const int se = t0.w;
                unsigned base[PX];
#pragma unroll
                for (int k = 0; k < PX; k++)
                    base[k] = co[k] + (unsigned)t0.z;
                for (; s < se; s = s + R < se ? s + R : se) {
                    vec p[R];
#pragma unroll
                    for (int r = 0; r < R; r++)
                        if (s + r < se)
                            p[r] = __ldcs((const vec *)(clahe_row<uint8_t>(in, y0 + s + r) + x0));
#pragma unroll
                    for (int r = 0; r < R; r++) {
                        if (s + r >= se)
                            break;
                        const int4 t = rt[s + r];
                        const float ya = __int_as_float(t.x), ya1 = __int_as_float(t.y);
                        vec q;
#pragma unroll
                        for (int i = 0; i < PX / 4; i++)
                            clahe_vec<PX>::set(q, i, clahe_fma_word(clahe_vec<PX>::word(p[r], i),
                                                                    base + 4 * i, w1 + 4 * i,
                                                                    w2 + 4 * i, ya, ya1));
                        __stcs((vec *)((uint8_t *)out.data + (size_t)(y0 + s + r) * out.pitch + x0), q);
                    }
                }
            }
            continue;
        }
        for (int r = 0; r < n; r++) { /* the image's last pixels, or rows not PX-byte aligned */
            const int4 t = rt[r];
            const float ya = __int_as_float(t.x), ya1 = __int_as_float(t.y);
            const uint8_t *row = clahe_row<uint8_t>(in, y0 + r);
            uint8_t *orow = (uint8_t *)out.data + (size_t)(y0 + r) * out.pitch;
#pragma unroll
            for (int k = 0; k < PX; k++) {
                if (x0 + k >= g.w)
                    break;
                const unsigned e = clahe_lds(co[k] + (unsigned)t.z + row[x0 + k] * 4u);
                orow[x0 + k] = (uint8_t)clahe_fma_px(e, w1[k], w2[k], ya, ya1);
            }
        }
    }
}

#endif /* CLAHE_BLEND8_CUH */
