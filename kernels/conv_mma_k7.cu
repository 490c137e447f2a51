/* conv_mma_k7.cu - the K = 7 instantiations of the conv variant `mma` (conv_mma.cuh), a file of
 * their own so that make compiles the K and the two variants in parallel. */
#include "conv_mma.cuh"

template ts_status mma_ch<7, false, false>(const ts_job *job, const conv_params &p);
