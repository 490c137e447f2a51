/* diag.cuh - what the benchmark (bench_gpu.cu) and the standalone .cu diagnostics in tools/ share
 * (each diagnostic still builds with the one nvcc line its header gives: this file is found
 * beside it): a CUDA call checked, and the L2 flush read before each timed run. */
#ifndef TOOLS_DIAG_CUH
#define TOOLS_DIAG_CUH

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

/* x, a CUDA runtime call: on an error, the file, the call and the error on stderr, exit 1 */
#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s: %s: %s\n", __FILE__, #x, cudaGetErrorString(e_));                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* The L2 flush before a timed run: reads b[0, n) (3x the L2 or more evicts what the run would
 * find there). Callers fill b with equal bytes, so every uint4 XORs to 0 and the accumulator never
 * equals a nonzero magic, which the compiler cannot know: the loads stay, *sink is not written. */
__global__ void diag_flush_kernel(const uint4 *__restrict__ b, size_t n, unsigned magic, unsigned *sink)
{
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint4 v = b[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == magic)
        *sink = acc;
}

#endif /* TOOLS_DIAG_CUH */
