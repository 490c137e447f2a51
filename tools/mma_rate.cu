/* mma_rate.cu - the int8 tensor-core rate of mma.sync (the resize kernels' m16n8k32) and of
 * Hopper's wgmma (m64n80k32, operands in shared memory) on this GPU: instructions a second per SM
 * and multiply-adds a second, the device's whole grid busy, nothing but the products.
 *
 * A diagnostic for tools/results/nvidia-h100-resize.md (what the resampler's tensor work costs
 * at its instruction mix), not part of the build:
 *   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o build/mma_rate tools/mma_rate.cu
 *   build/mma_rate
 */
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "diag.cuh"

__device__ __forceinline__ void imma(int (&d)[4], unsigned a0, unsigned a1, unsigned a2,
                                     unsigned a3, unsigned b0, unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9}, {%0,%1,%2,%3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/* NA independent accumulators, CH products chained on each per round (the resampler chains 6
 * on each of 3) */
template <int NA, int CH>
__global__ void __launch_bounds__(256, 2) k_mma(int iters, int *out)
{
    unsigned a = threadIdx.x * 0x01010101u, b = (threadIdx.x + 7) * 0x01030507u;
    int acc[NA][4] = {};
    for (int i = 0; i < iters; i++)
#pragma unroll
        for (int c = 0; c < CH; c++)
#pragma unroll
            for (int n = 0; n < NA; n++)
                imma(acc[n], a + n, a ^ c, a, a + c, b, b + n);
    int s = 0;
#pragma unroll
    for (int n = 0; n < NA; n++)
        s += acc[n][0] + acc[n][1] + acc[n][2] + acc[n][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define HAVE_WGMMA 1
/* shared-memory matrix descriptor, no swizzle: K-major core matrices of 8 rows x 16 bytes */
__device__ __forceinline__ unsigned long long desc(const void *p, unsigned lbo, unsigned sbo)
{
    unsigned a = (unsigned)__cvta_generic_to_shared(p);
    typedef unsigned long long u64;
    return (u64)((a >> 4) & 0x3FFF) | (u64)((lbo >> 4) & 0x3FFF) << 16 |
           (u64)((sbo >> 4) & 0x3FFF) << 32;
}
__device__ __forceinline__ void wgmma80(int (&d)[40], unsigned long long da, unsigned long long db,
                                        int scale)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %42, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n80k32.s32.u8.s8 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, "
                 "%10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "
                 "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "
                 "%30, %31, %32, %33, %34, %35, %36, %37, %38, %39"
                 "}, %40, %41, p;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]),
                   "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]),
                   "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]),
                   "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
                   "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]),
                   "+r"(d[30]), "+r"(d[31]), "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]),
                   "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39])
                 : "l"(da), "l"(db), "r"(scale));
}
#endif

/* a warpgroup: G products (k-chunks) a group on one accumulator, then commit and wait */
template <int G>
__global__ void __launch_bounds__(256, 1) k_wgmma(int iters, int *out)
{
#ifdef HAVE_WGMMA
    __shared__ __align__(128) unsigned char sa[3][2 * 64 * 16], sb[3][2 * 80 * 16];
    for (int i = threadIdx.x; i < (int)sizeof(sa); i += blockDim.x)
        (&sa[0][0])[i] = (unsigned char)(i * 7);
    for (int i = threadIdx.x; i < (int)sizeof(sb); i += blockDim.x)
        (&sb[0][0])[i] = (unsigned char)(i * 3);
    asm volatile("fence.proxy.async.shared::cta;\n");
    __syncthreads();
    int d[40];
#pragma unroll
    for (int i = 0; i < 40; i++)
        d[i] = 0;
    for (int it = 0; it < iters; it++) {
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int g = 0; g < G; g++)
            wgmma80(d, desc(sa[g % 3], 1024, 128), desc(sb[g % 3], 1280, 128), 1);
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    }
    int s = 0;
#pragma unroll
    for (int i = 0; i < 40; i++)
        s += d[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
#else
    out[blockIdx.x * blockDim.x + threadIdx.x] = iters;
#endif
}

template <class F> static float time_ms(F launch)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    launch(); /* warm */
    CK(cudaEventRecord(a));
    launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    CK(cudaGetLastError());
    return ms;
}

int main(void)
{
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    int clk = 0;
    CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0));
    const int sms = p.multiProcessorCount;
    int *out;
    CK(cudaMalloc(&out, (size_t)sms * 2 * 256 * sizeof(int)));
    printf("device: %s, %d SMs, clock %.2f GHz as read\n", p.name, sms, clk / 1e6);
    const int iters = 20000;
    struct { const char *name; float ms; double instr, macs; } r[8];
    int n = 0;
    auto mma_row = [&](const char *name, auto kern, int na, int ch) {
        float ms = time_ms([&] { kern<<<sms * 2, 256>>>(iters, out); });
        double ins = (double)sms * 2 * 8 * iters * na * ch;
        r[n++] = {name, ms, ins, ins * 16 * 8 * 32};
    };
    mma_row("mma.sync m16n8k32, 3 chains of 6 (the horizontal pass)", k_mma<3, 6>, 3, 6);
    mma_row("mma.sync m16n8k32, 4 chains of 6 (the vertical pass, paired)", k_mma<4, 6>, 4, 6);
    mma_row("mma.sync m16n8k32, 8 independent", k_mma<8, 1>, 8, 1);
    auto wg_row = [&](const char *name, auto kern, int g) {
        float ms = time_ms([&] { kern<<<sms, 256>>>(iters, out); });
        double ins = (double)sms * 2 * iters * g; /* per warpgroup */
        r[n++] = {name, ms, ins, ins * 64 * 80 * 32};
    };
    wg_row("wgmma m64n80k32 (smem A, B), 3 a commit, wait 0", k_wgmma<3>, 3);
    wg_row("wgmma m64n80k32 (smem A, B), 12 a commit, wait 0", k_wgmma<12>, 12);
    for (int i = 0; i < n; i++)
        printf("%-62s %8.3f ms  %7.2f G instr/s/SM  %7.1f T int8 MAC/s\n", r[i].name, r[i].ms,
               r[i].instr / (r[i].ms * 1e-3) / sms / 1e9, r[i].macs / (r[i].ms * 1e-3) / 1e12);
    return 0;
}
