/* resize_floor.cu - what bounds the interp resize of the benchmark (8K -> 4K and -> 1080p) on a
 * GPU: the time to move the bytes a two-tap resize must move, measured three ways, timed as the
 * benchmark times (an L2-sized flush read before each run, CUDA events, median of 20):
 *   copy_all   cudaMemcpyAsync device-to-device of (input + output) / 2 bytes: the benchmark's
 *              copy floor (its traffic is the input read once and the output written once)
 *   copy_must  the same for the bytes the resize must move: the input rows its taps read (at a
 *              4x reduction rows 4y + 1 and 4y + 2, half of them; at 2x all) and the output
 *   stream     one kernel that reads exactly those rows (16-byte loads, grid-stride, every SM
 *              busy) and writes the output bytes, with no arithmetic: the memory pattern of the
 *              resize alone
 * A resize kernel cannot be faster than `stream` by more than noise; `copy_must` says how far a
 * copy of the same bytes gets (copies pay the same read/write mix).
 * Build: nvcc -O3 -arch=sm_90 -o resize_floor tools/resize_floor.cu
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "diag.cuh"

#define RUNS 20

/* Reads rows r of the input where r % k is k / 2 - 1 or k / 2 (k = 1: every row), words of 16
 * bytes, and writes `out_words` 16-byte words of output. */
__global__ void stream_kernel(const uint4 *in, unsigned row_words, int rows, int k, uint4 *out,
                              unsigned out_words)
{
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
    const unsigned read_rows = k == 1 ? (unsigned)rows : (unsigned)(rows / k) * 2;
    const unsigned total = read_rows * row_words;
    const unsigned every = total / out_words > 0 ? total / out_words : 1; /* reads per write */
    uint4 acc = make_uint4(0, 0, 0, 0);
    unsigned o = tid, j = 0;
    for (unsigned i = tid; i < total; i += n, j++) {
        const unsigned rr = i / row_words, w = i - rr * row_words;
        const unsigned r = k == 1 ? rr : (rr / 2) * k + k / 2 - 1 + (rr & 1);
        uint4 v = __ldg(in + (size_t)r * row_words + w);
        acc.x ^= v.x, acc.y ^= v.y, acc.z ^= v.z, acc.w ^= v.w;
        if (j % every == 0 && o < out_words) { /* the writes spread over the reads */
            out[o] = acc;
            o += n;
        }
    }
    for (; o < out_words; o += n)
        out[o] = acc;
}

struct timer {
    cudaEvent_t a[RUNS], b[RUNS];
    const uint4 *flush;
    size_t flush_n;
    unsigned *sink;
};

static int cmp(const void *x, const void *y)
{
    float p = *(const float *)x, q = *(const float *)y;
    return p < q ? -1 : p > q;
}

template <class F> static double time_it(timer &t, F f)
{
    float ms[RUNS];
    f(); /* warm-up */
    for (int r = 0; r < RUNS; r++) {
        diag_flush_kernel<<<1024, 256>>>(t.flush, t.flush_n, 1u, t.sink);
        CK(cudaEventRecord(t.a[r]));
        f();
        CK(cudaEventRecord(t.b[r]));
    }
    CK(cudaDeviceSynchronize());
    for (int r = 0; r < RUNS; r++)
        CK(cudaEventElapsedTime(&ms[r], t.a[r], t.b[r]));
    qsort(ms, RUNS, sizeof ms[0], cmp);
    return 0.5 * (ms[RUNS / 2 - 1] + ms[RUNS / 2]);
}

int main(void)
{
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    timer t;
    for (int r = 0; r < RUNS; r++) {
        CK(cudaEventCreate(&t.a[r]));
        CK(cudaEventCreate(&t.b[r]));
    }
    const size_t flush_bytes = 3 * (size_t)p.l2CacheSize;
    uint4 *flush;
    CK(cudaMalloc(&flush, flush_bytes));
    CK(cudaMemset(flush, 1, flush_bytes));
    CK(cudaMalloc(&t.sink, 4));
    t.flush = flush, t.flush_n = flush_bytes / 16;
    const int iw = 7680, ih = 4320;
    const size_t cap = (size_t)iw * ih * 3;
    unsigned char *in, *out, *c0, *c1;
    CK(cudaMalloc(&in, cap));
    CK(cudaMalloc(&out, cap));
    CK(cudaMalloc(&c0, cap));
    CK(cudaMalloc(&c1, cap));
    CK(cudaMemset(in, 0x5a, cap));
    CK(cudaMemset(c0, 0x5a, cap));
    printf("device: %s, %d SMs, L2 %d bytes, memory bus %d bits\n", p.name, p.multiProcessorCount,
           p.l2CacheSize, p.memoryBusWidth);
    printf("| 7680x4320 -> | format | input MB | must-move MB | copy_all ms | copy_must ms | stream ms | stream GB/s |\n");
    printf("|---|---|--:|--:|--:|--:|--:|--:|\n");
    const int outs[2][2] = {{3840, 2160}, {1920, 1080}};
    const int chans[2] = {1, 3};
    int blocks = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, stream_kernel, 256, 0));
    blocks *= p.multiProcessorCount;
    for (int o = 0; o < 2; o++)
        for (int c = 0; c < 2; c++) {
            const int ow = outs[o][0], oh = outs[o][1], C = chans[c], k = ih / oh;
            const size_t in_bytes = (size_t)iw * ih * C, out_bytes = (size_t)ow * oh * C;
            const size_t rows_read = k == 1 ? ih : (size_t)(ih / k) * 2;
            const size_t row_bytes = (size_t)iw * C;
            const size_t must = rows_read * row_bytes + out_bytes;
            double all = time_it(t, [&] { CK(cudaMemcpyAsync(c1, c0, (in_bytes + out_bytes) / 2, cudaMemcpyDeviceToDevice)); });
            double mst = time_it(t, [&] { CK(cudaMemcpyAsync(c1, c0, must / 2, cudaMemcpyDeviceToDevice)); });
            double st = time_it(t, [&] {
                stream_kernel<<<blocks, 256>>>((const uint4 *)in, (unsigned)(row_bytes / 16), ih, k,
                                               (uint4 *)out, (unsigned)(out_bytes / 16));
            });
            CK(cudaGetLastError());
            printf("| %dx%d | %s | %.1f | %.1f | %.4f | %.4f | %.4f | %.0f |\n", ow, oh,
                   C == 1 ? "gray8" : "rgb8", in_bytes / 1e6, must / 1e6, all, mst, st,
                   must / 1e6 / st);
        }
    return 0;
}
