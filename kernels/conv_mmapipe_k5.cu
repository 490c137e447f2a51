/* conv_mmapipe_k5.cu - the K = 5 instantiations of the conv variant `mmapipe` (conv_mma.cuh), a
 * file of their own so that make compiles the K and the two variants in parallel. */
#include "conv_mma.cuh"

template ts_status mma_ch<5, true, false>(const ts_job *job, const conv_params &p);
