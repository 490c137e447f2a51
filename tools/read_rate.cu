/* read_rate.cu - how fast a kernel can only read N bytes from DRAM on this GPU, against a copy of
 * the same traffic: the floor of the read-heavy passes (a histogram's count, equalize's and
 * CLAHE's first pass), which the benchmark's "% of copy bandwidth" compares with a copy.
 * Timed as the benchmark times (a 3 x L2 flush read before each run, CUDA events, median of 20)
 * at the byte counts of 8K gray8 (33.2 MB), gray16 (66.4 MB) and RGB8 (99.5 MB):
 *   memcpy half   cudaMemcpyAsync device-to-device of N / 2 bytes: N bytes of traffic, half
 *                 read, half written (the benchmark's copy floor of an op that reads N bytes)
 *   grid-stride   16-byte loads, U in flight a thread, T threads a block, B blocks an SM,
 *                 XOR-folded so the loads stay (no arithmetic worth the name)
 *   chunk         the same, each block reading one contiguous range
 *   copy kernel   a grid-stride copy of N / 2 bytes
 * A diagnostic outside the build (results: tools/results/nvidia-h100-headroom-2026-11-27d.md):
 *   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -o build/read_rate tools/read_rate.cu
 *   build/read_rate
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>

#include "diag.cuh"

#define RUNS 20

/* XOR-folds the 16-byte units of b[0, n): CHUNK, each block its contiguous range of n / gridDim.x
 * units, its threads striding it; else the grid stride. U loads in flight a thread. */
template <int U, bool CHUNK>
__global__ void read_kernel(const uint4 *b, size_t n, unsigned *sink)
{
    const size_t per = (n + gridDim.x - 1) / gridDim.x, lo = CHUNK ? blockIdx.x * per : 0;
    const size_t hi = CHUNK ? (lo + per < n ? lo + per : n) : n;
    const size_t stride = CHUNK ? blockDim.x : (size_t)gridDim.x * blockDim.x;
    size_t i = lo + (CHUNK ? 0 : blockIdx.x * (size_t)blockDim.x) + threadIdx.x;
    unsigned a = 0;
    for (; i + (U - 1) * stride < hi; i += U * stride) {
        uint4 q[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            q[u] = __ldg(b + i + u * stride);
#pragma unroll
        for (int u = 0; u < U; u++)
            a ^= q[u].x ^ q[u].y ^ q[u].z ^ q[u].w;
    }
    for (; i < hi; i += stride) {
        uint4 q = __ldg(b + i);
        a ^= q.x ^ q.y ^ q.z ^ q.w;
    }
    if (a == 0x9876543u)
        *sink = a;
}

/* CLAHE's count pattern: a 8-bit image of `w` x `h` bytes (rows back to back) in tiles of tw x th,
 * each tile cut into `bands` bands of rows; block (tile, band) reads its band's row segments of tw
 * bytes in 16-byte chunks, 4 rows in flight a thread (tw / 16 chunks a row, blockDim / (tw / 16)
 * rows at a time) */
__global__ void read_bands_kernel(const unsigned char *img, int w, int tx, int tw, int th, int bands,
                                  unsigned *sink)
{
    const int tile = blockIdx.x / bands, band = blockIdx.x % bands, i = tile % tx, j = tile / tx;
    const int r0 = th * band / bands, r1 = th * (band + 1) / bands, n16 = tw / 16;
    const int per = blockDim.x / n16, rr = threadIdx.x / n16;
    unsigned a = 0;
    if (rr < per) {
        const unsigned char *p = img + (size_t)(j * th + r0 + rr) * w + i * tw + 16 * (threadIdx.x % n16);
        const size_t step = (size_t)per * w;
        int r = r0 + rr;
        for (; r + 3 * per < r1; r += 4 * per) {
            uint4 q[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                q[u] = __ldg((const uint4 *)p);
                p += step;
            }
#pragma unroll
            for (int u = 0; u < 4; u++)
                a ^= q[u].x ^ q[u].y ^ q[u].z ^ q[u].w;
        }
        for (; r < r1; r += per) {
            uint4 q = __ldg((const uint4 *)p);
            a ^= q.x ^ q.y ^ q.z ^ q.w;
            p += step;
        }
    }
    if (a == 0x9876543u)
        *sink = a;
}

__global__ void copy_kernel(const uint4 *s, uint4 *d, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        d[i] = s[i];
}

int main()
{
    int sms;
    cudaDeviceProp p;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaGetDeviceProperties(&p, 0));
    printf("device %s, %d SMs, L2 %d MB\n", p.name, sms, p.l2CacheSize >> 20);
    const size_t fb = (size_t)3 * p.l2CacheSize, maxb = (size_t)100 << 20;
    uint4 *fl, *buf, *dst;
    unsigned *sink;
    CK(cudaMalloc(&fl, fb));
    CK(cudaMemset(fl, 1, fb));
    CK(cudaMalloc(&buf, maxb));
    CK(cudaMalloc(&dst, maxb));
    CK(cudaMemset(buf, 2, maxb));
    CK(cudaMalloc(&sink, 4));
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    cudaEvent_t e0[RUNS + 1], e1[RUNS + 1];
    for (int i = 0; i <= RUNS; i++) {
        CK(cudaEventCreate(&e0[i]));
        CK(cudaEventCreate(&e1[i]));
    }
    /* microseconds, the median of RUNS after one warm-up, each run after a flush */
    auto timeit = [&](auto fn) {
        std::vector<float> t;
        for (int i = 0; i <= RUNS; i++) {
            diag_flush_kernel<<<sms * 4, 512, 0, st>>>(fl, fb / 16, 1u, sink);
            CK(cudaEventRecord(e0[i], st));
            fn();
            CK(cudaEventRecord(e1[i], st));
        }
        CK(cudaStreamSynchronize(st));
        for (int i = 1; i <= RUNS; i++) {
            float ms;
            CK(cudaEventElapsedTime(&ms, e0[i], e1[i]));
            t.push_back(ms * 1000);
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    };
    static const size_t sizes[] = {33177600, 66355200, 99532800};
    for (size_t bytes : sizes) {
        const size_t n = bytes / 16;
        printf("\n%.1f MB\n", bytes / 1e6);
        float c = timeit([&] { CK(cudaMemcpyAsync(dst, buf, bytes / 2, cudaMemcpyDeviceToDevice, st)); });
        printf("  memcpy half                 %7.2f us  %5.0f GB/s of traffic\n", c, bytes / c / 1e3);
#define READ(U, T, B, CHUNK)                                                                       \
    do {                                                                                           \
        float x_ = timeit([&] { read_kernel<U, CHUNK><<<sms * B, T, 0, st>>>(buf, n, sink); });   \
        printf("  %-11s U%d T%-4d B%d      %7.2f us  %5.0f GB/s\n", CHUNK ? "chunk" : "grid-stride", U, T, B, \
               x_, bytes / x_ / 1e3);                                                              \
    } while (0)
        READ(1, 1024, 1, false);
        READ(2, 1024, 1, false);
        READ(4, 1024, 1, false);
        READ(8, 1024, 1, false);
        READ(2, 512, 4, false);
        READ(4, 512, 4, false);
        READ(4, 256, 8, false);
        READ(2, 1024, 2, false);
        READ(4, 512, 4, true);
        READ(4, 1024, 2, true);
        float y = timeit([&] { copy_kernel<<<sms * 4, 512, 0, st>>>(buf, dst, n / 2); });
        printf("  copy kernel of half         %7.2f us  %5.0f GB/s of traffic\n", y, bytes / y / 1e3);
        if (bytes == 33177600) { /* 8K gray8 in CLAHE's 8 x 8 tiles: bands of 960-byte row segments */
            static const int shapes[][3] = {{6, 512, 8}, {3, 512, 8}, {12, 256, 8}, {6, 512, 4}, {6, 512, 2}};
            for (auto &sh : shapes) {
                const int bands = sh[0], T = sh[1], tx = sh[2], tw = 7680 / tx;
                float x = timeit([&] {
                    read_bands_kernel<<<tx * 8 * bands, T, 0, st>>>((const unsigned char *)buf, 7680, tx, tw, 540,
                                                                    bands, sink);
                });
                printf("  bands: %d a tile, %d threads, %d tiles across (%4d-byte segments) %7.2f us  %5.0f GB/s\n",
                       bands, T, tx, tw, x, bytes / x / 1e3);
            }
        }
    }
    return 0;
}
