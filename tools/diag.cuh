/* diag.cuh - what the standalone diagnostics in tools/*.cu share (each still builds with the one
 * nvcc line its header gives: this file is found beside it): a CUDA call checked, and the L2
 * flush the benchmark reads before each timed run. */
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

/* Reads b[0, n) past L1 (a buffer of 3x the L2 or more evicts what a timed run would find there);
 * the XOR of the words never equals the magic in practice, so the loads stay and *sink is not
 * written. */
__global__ void diag_flush_kernel(const uint4 *b, size_t n, unsigned *sink)
{
    unsigned a = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint4 q = __ldcg(b + i);
        a ^= q.x ^ q.y ^ q.z ^ q.w;
    }
    if (a == 0x9876543u)
        *sink = a;
}

#endif /* TOOLS_DIAG_CUH */
