/* gpu_util.cuh - helpers shared by the .cu files (internal to kernels/): the CUDA error check that
 * turns a failed call into TS_ERR_CUDA with a message, the launch check, and the device pitch. */
#ifndef TS_GPU_UTIL_CUH
#define TS_GPU_UTIL_CUH

#include "tessera.h"
#include "ts_math.h"

#include <cuda_runtime.h>
#include <stdio.h>

/* Evaluates a CUDA call; on failure clears the sticky-free error state and returns TS_ERR_CUDA
 * from the enclosing function, naming the call. */
#define TS_CUDA_TRY(call)                                                                          \
    do {                                                                                           \
        cudaError_t ts__e = (call);                                                                \
        if (ts__e != cudaSuccess) {                                                                \
            cudaGetLastError();                                                                    \
            return ts_fail(TS_ERR_CUDA, "%s: %s", #call, cudaGetErrorString(ts__e));              \
        }                                                                                          \
    } while (0)

/* After a <<<>>> launch: reports a bad configuration (or an earlier asynchronous fault). */
#define TS_LAUNCH_CHECK(kernel_name)                                                               \
    do {                                                                                           \
        cudaError_t ts__e = cudaGetLastError();                                                    \
        if (ts__e != cudaSuccess)                                                                  \
            return ts_fail(TS_ERR_CUDA, "launch of %s: %s", kernel_name,                          \
                           cudaGetErrorString(ts__e));                                             \
    } while (0)


static inline unsigned ts_div_up(size_t a, unsigned b) { return (unsigned)((a + b - 1) / b); }

#endif /* TS_GPU_UTIL_CUH */
