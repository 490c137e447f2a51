/* conv_mmapipe_k3.cu - the K = 3 instantiations of the conv variant `mmapipe` (conv_mma.cuh), a
 * file of their own so that make compiles the K and the two variants in parallel. */
#include "conv_mma.cuh"

template ts_status mma_ch<3, true, false>(const ts_job *job, const conv_params &p);
