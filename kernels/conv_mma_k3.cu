/* conv_mma_k3.cu - the K = 3 instantiations of the conv variant `mma` (conv_mma.cuh), a file of
 * their own so that make compiles the K and the two variants in parallel. */
#include "conv_mma.cuh"

template ts_status mma_ch<3, false, false>(const ts_job *job, const conv_params &p);
