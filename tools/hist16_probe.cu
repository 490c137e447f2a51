// hist16_probe.cu - a diagnostic outside the build: where the time of `opt`'s 16-bit packed-counter
// histogram goes (8K gray16; uniform, a band of 4000 values, one value), by timing its parts and
// variants of its count in isolation: the loads alone, the count with and without the atomics'
// returned values, the INC rate, rounds with drains (what kernels/hist_opt.cu now does), the
// partial write, the reduce, the memset. Modes that claim exactness are checked against a CPU
// histogram. L2 flushed before each run, median of 10. Figures: tools/results/nvidia-h100-hist-2026-11-27.md
// (the drain threshold there was 16384 with rounds of 49152 pixels; the library's is 4096 and 61440).
//   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 tools/hist16_probe.cu -o hist16_probe
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#include "diag.cuh"

#define NONE 0xFFFFFFFFu
#define T 1024

extern __shared__ __align__(16) uint32_t smem[];

__device__ __noinline__ void packed_wrapped(uint32_t *words, uint32_t *hist, unsigned key, uint32_t old)
{
    const unsigned g = key;
    if (key & 1) { atomicAdd(&hist[g], 65536u); return; }
    atomicAdd(&hist[g], 65536u);
    if ((old >> 16) == 0xFFFFu) atomicAdd(&hist[g + 1], 65536u);
    uint32_t old2 = atomicSub(&words[key >> 1], 0x10000u);
    if ((old2 >> 16) == 0) atomicAdd(&hist[g + 1], 0u - 65536u);
}

struct U8 { uint32_t w[4]; __device__ unsigned s(int k) const { return (w[k >> 1] >> (16 * (k & 1))) & 0xFFFFu; } };

__device__ __forceinline__ U8 ld(const uint16_t *img, unsigned i)
{
    uint4 q = __ldg(reinterpret_cast<const uint4 *>(img) + i);
    U8 u; u.w[0] = q.x; u.w[1] = q.y; u.w[2] = q.z; u.w[3] = q.w; return u;
}

// MODE 0: loads only. 1: current opt (run detection, returned old, wrap check).
// 2: adds, result unused, no run detection (not exact in general: no wrap handling).
// 3: +1 to word key>>1 (INC; wrong counts: rate only). 4: returned old + wrap check, no runs.
// 5: rounds with drain (exact): adds without return, every 6 units a barrier + drain of fields >= 16384.
// 6: like 5 with the "whole unit one value" shortcut.
template <int MODE, int UNR, bool WRITE>
__global__ void __launch_bounds__(T, 1) count16(const uint16_t *img, unsigned nunits, uint32_t *hist, uint32_t *partial, uint32_t *sink)
{
    uint32_t *words = smem;
    uint4 *w4 = reinterpret_cast<uint4 *>(smem);
    for (unsigned i = threadIdx.x; i < 32768 / 4; i += T) w4[i] = make_uint4(0, 0, 0, 0);
    __syncthreads();
    const unsigned stride = gridDim.x * T;
    uint32_t acc = 0;
    if (MODE == 5 || MODE == 6) {
        // rounds of 3 pair-iterations (6 units, 48 pixels a thread, 49152 a block)
        const unsigned first0 = blockIdx.x * T; // thread 0 of the block walks the most units
        unsigned n0 = first0 < nunits ? (nunits - first0 + stride - 1) / stride : 0;
        unsigned pairs = (n0 + 1) / 2, rounds = (pairs + 2) / 3;
        unsigned i = blockIdx.x * T + threadIdx.x;
        U8 cur[2], nxt[2];
        for (int r = 0; r < 2; r++) { unsigned j = i + r * stride; if (j < nunits) cur[r] = ld(img, j); }
        for (unsigned rd = 0; rd < rounds; rd++) {
            for (int q = 0; q < 3; q++, i += 2 * stride) {
                for (int r = 0; r < 2; r++) { unsigned j = i + (2 + r) * stride; if (j < nunits) nxt[r] = ld(img, j); }
#pragma unroll
                for (int r = 0; r < 2; r++) {
                    if (i + r * stride >= nunits) continue;
                    const U8 &u = cur[r];
                    bool one = MODE == 6;
                    if (MODE == 6) {
#pragma unroll
                        for (int p = 1; p < 8; p++) one = one && u.s(p) == u.s(0);
                    }
                    if (one) {
                        unsigned k = u.s(0);
                        atomicAdd(&words[k >> 1], k & 1 ? 8u << 16 : 8u);
                    } else {
#pragma unroll
                        for (int p = 0; p < 8; p++) {
                            unsigned k = u.s(p);
                            atomicAdd(&words[k >> 1], k & 1 ? 1u << 16 : 1u);
                        }
                    }
                }
                cur[0] = nxt[0]; cur[1] = nxt[1];
            }
            __syncthreads();
            for (unsigned wi = threadIdx.x; wi < 32768; wi += T) {
                uint32_t w = words[wi];
                if (w & 0xC000C000u) {
                    uint32_t lo = w & 0xC000u, hi = (w >> 16) & 0xC000u;
                    words[wi] = w - (lo | hi << 16);
                    if (lo) atomicAdd(&hist[2 * wi], lo);
                    if (hi) atomicAdd(&hist[2 * wi + 1], hi);
                }
            }
            __syncthreads();
        }
    } else {
        for (unsigned i = blockIdx.x * T + threadIdx.x; i < nunits; i += UNR * stride) {
            U8 a[UNR];
            bool ok[UNR];
#pragma unroll
            for (int r = 0; r < UNR; r++) {
                unsigned j = i + r * stride;
                ok[r] = j < nunits;
                if (ok[r]) a[r] = ld(img, j); else a[r].w[0] = a[r].w[1] = a[r].w[2] = a[r].w[3] = 0;
            }
#pragma unroll
            for (int r = 0; r < UNR; r++) {
                if (!ok[r]) continue;
                const U8 &u = a[r];
                if (MODE == 0) { acc ^= u.w[0] ^ u.w[1] ^ u.w[2] ^ u.w[3]; continue; }
                if (MODE == 1) {
                    unsigned key[8], amt[8]; uint32_t old[8]; unsigned run = 1;
#pragma unroll
                    for (int p = 0; p < 8; p++) key[p] = u.s(p);
#pragma unroll
                    for (int p = 0; p < 8; p++) {
                        bool end = p == 7 || key[p + 1 < 8 ? p + 1 : p] != key[p];
                        amt[p] = end ? run : 0;
                        run = end ? 1 : run + 1;
                        old[p] = 0;
                        if (amt[p]) old[p] = atomicAdd(&words[key[p] >> 1], key[p] & 1 ? amt[p] << 16 : amt[p]);
                    }
#pragma unroll
                    for (int p = 0; p < 8; p++) {
                        unsigned field = key[p] & 1 ? old[p] >> 16 : old[p] & 0xFFFFu;
                        if (amt[p] && field + amt[p] > 0xFFFFu) {
                            // amt may exceed 1: generic wrap (as the library)
                            packed_wrapped(words, hist, key[p], old[p]);
                        }
                    }
                }
                if (MODE == 2) {
#pragma unroll
                    for (int p = 0; p < 8; p++) { unsigned k = u.s(p); atomicAdd(&words[k >> 1], k & 1 ? 1u << 16 : 1u); }
                }
                if (MODE == 3) {
#pragma unroll
                    for (int p = 0; p < 8; p++) { unsigned k = u.s(p); atomicAdd(&words[k >> 1], 1u); }
                }
                if (MODE == 4) {
                    uint32_t old[8]; unsigned key[8];
#pragma unroll
                    for (int p = 0; p < 8; p++) { key[p] = u.s(p); old[p] = atomicAdd(&words[key[p] >> 1], key[p] & 1 ? 1u << 16 : 1u); }
#pragma unroll
                    for (int p = 0; p < 8; p++) {
                        unsigned field = key[p] & 1 ? old[p] >> 16 : old[p] & 0xFFFFu;
                        if (field == 0xFFFFu) packed_wrapped(words, hist, key[p], old[p]);
                    }
                }
            }
        }
    }
    if (MODE == 0 && acc == 0x12345678u) sink[0] = acc;
    __syncthreads();
    if (WRITE) {
        uint4 *dst = reinterpret_cast<uint4 *>(partial + (size_t)blockIdx.x * 32768);
        for (unsigned i = threadIdx.x; i < 32768 / 4; i += T) dst[i] = w4[i];
    }
}

__global__ void __launch_bounds__(256) reduce16(const uint32_t *partial, unsigned blocks, uint32_t *hist)
{
    __shared__ uint2 part[8][32];
    const unsigned gw = blockIdx.x * 32 + threadIdx.x;
    uint32_t a = 0, b = 0;
    const uint32_t *p = partial + gw;
#pragma unroll 4
    for (unsigned j = threadIdx.y; j < blocks; j += 8) { uint32_t v = p[(size_t)j * 32768]; a += v & 0xFFFFu; b += v >> 16; }
    part[threadIdx.y][threadIdx.x] = make_uint2(a, b);
    __syncthreads();
    if (threadIdx.y == 0) {
        for (int j = 1; j < 8; j++) { a += part[j][threadIdx.x].x; b += part[j][threadIdx.x].y; }
        hist[2 * gw] += a; hist[2 * gw + 1] += b;
    }
}

static uint4 *g_flush; static size_t g_flush_n; static uint32_t *g_sink;
static void flush() { diag_flush_kernel<<<132 * 4, 512>>>(g_flush, g_flush_n, 1u, g_sink); }

typedef void (*launch_fn)(void);
static float time_it(launch_fn f, int runs = 10)
{
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    std::vector<float> t;
    flush(); f(); CK(cudaDeviceSynchronize());
    for (int r = 0; r < runs; r++) {
        flush();
        CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
        float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

static uint16_t *d_img; static uint32_t *d_hist, *d_partial; static unsigned g_units; static int g_blocks;
template <int MODE, int UNR, bool WRITE, bool RED> static void run_k()
{
    CK(cudaMemsetAsync(d_hist, 0, 65536 * 4));
    count16<MODE, UNR, WRITE><<<g_blocks, T, 131072>>>(d_img, g_units, d_hist, d_partial, g_sink);
    if (RED) reduce16<<<1024, dim3(32, 8)>>>(d_partial, g_blocks, d_hist);
}
static void run_reduce_only() { reduce16<<<1024, dim3(32, 8)>>>(d_partial, g_blocks, d_hist); }
static void run_memset_only() { CK(cudaMemsetAsync(d_hist, 0, 65536 * 4)); }

template <int MODE, int UNR, bool WRITE> static void setup()
{
    CK(cudaFuncSetAttribute(count16<MODE, UNR, WRITE>, cudaFuncAttributeMaxDynamicSharedMemorySize, 131072));
}

static bool check(const std::vector<uint32_t> &want, const char *what)
{
    std::vector<uint32_t> got(65536);
    CK(cudaMemcpy(got.data(), d_hist, 65536 * 4, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 65536; i++)
        if (got[i] != want[i]) { printf("  %s: WRONG at bin %d: %u want %u\n", what, i, got[i], want[i]); return false; }
    return true;
}

int main(int argc, char **argv)
{
    const int W = 7680, H = 4320; const size_t N = (size_t)W * H;
    int dev = 0; cudaDeviceProp pr; CK(cudaGetDeviceProperties(&pr, dev));
    printf("device %s, %d SMs, L2 %d MB\n", pr.name, pr.multiProcessorCount, pr.l2CacheSize >> 20);
    g_blocks = pr.multiProcessorCount; g_units = (unsigned)(N / 8);
    g_flush_n = (size_t)pr.l2CacheSize * 3 / 16;
    CK(cudaMalloc(&g_flush, g_flush_n * 16)); CK(cudaMemset(g_flush, 1, g_flush_n * 16));
    CK(cudaMalloc(&g_sink, 64));
    CK(cudaMalloc(&d_img, N * 2)); CK(cudaMalloc(&d_hist, 65536 * 4));
    CK(cudaMalloc(&d_partial, (size_t)g_blocks * 131072));
    setup<0, 2, false>(); setup<1, 2, false>(); setup<1, 2, true>(); setup<2, 2, false>(); setup<3, 2, false>();
    setup<4, 2, false>(); setup<1, 4, false>(); setup<2, 4, false>(); setup<5, 2, false>(); setup<5, 2, true>();
    setup<6, 2, false>(); setup<6, 2, true>();
    std::vector<uint16_t> img(N); std::vector<uint32_t> want(65536);
    const char *datas[] = {"uniform", "narrow 4000", "one value"};
    for (int d = 0; d < 3; d++) {
        uint64_t x = 88172645463325252ull + d;
        std::fill(want.begin(), want.end(), 0);
        for (size_t i = 0; i < N; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            uint16_t v = d == 0 ? (uint16_t)(x >> 32) : d == 1 ? (uint16_t)(30000 + (x >> 32) % 4000) : 1234;
            img[i] = v; want[v]++;
        }
        CK(cudaMemcpy(d_img, img.data(), N * 2, cudaMemcpyHostToDevice));
        printf("== %s (8K gray16, %d blocks x %d threads, 128 KB smem; median of 10, L2 flushed)\n", datas[d], g_blocks, T);
        printf("  copy floor ref: read-only bytes %.1f MB\n", N * 2 / 1e6);
        if (d < 2) {
            printf("  memset            %.4f ms\n", time_it(run_memset_only));
            printf("  M0 loads only     %.4f ms\n", time_it(run_k<0, 2, false, false>));
            printf("  M1 count (opt)    %.4f ms\n", time_it(run_k<1, 2, false, false>));
            printf("  M1 count UNR4     %.4f ms\n", time_it(run_k<1, 4, false, false>));
            printf("  M1 count+write    %.4f ms\n", time_it(run_k<1, 2, true, false>));
        }
        printf("  M1 full (opt)     %.4f ms", time_it(run_k<1, 2, true, true>)); run_k<1, 2, true, true>(); printf(" %s\n", check(want, "M1") ? "exact" : "");
        if (d < 2) {
            printf("  reduce only       %.4f ms\n", time_it(run_reduce_only));
            printf("  M2 add no-ret     %.4f ms\n", time_it(run_k<2, 2, false, false>));
            printf("  M2 add no-ret U4  %.4f ms\n", time_it(run_k<2, 4, false, false>));
            printf("  M3 INC (rate)     %.4f ms\n", time_it(run_k<3, 2, false, false>));
            printf("  M4 ret, no runs   %.4f ms\n", time_it(run_k<4, 2, false, false>));
            printf("  M5 rounds count   %.4f ms\n", time_it(run_k<5, 2, false, false>));
            printf("  M6 rounds+1val c  %.4f ms\n", time_it(run_k<6, 2, false, false>));
        }
        printf("  M5 rounds full    %.4f ms", time_it(run_k<5, 2, true, true>)); run_k<5, 2, true, true>(); printf(" %s\n", check(want, "M5") ? "exact" : "");
        printf("  M6 rounds+1v full %.4f ms", time_it(run_k<6, 2, true, true>)); run_k<6, 2, true, true>(); printf(" %s\n", check(want, "M6") ? "exact" : "");
    }
    return 0;
}
