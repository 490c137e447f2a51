/* conv_mmasep_k7.cu - the K = 7 instantiations of the conv variant `mmasep` (conv_mma.cuh), a
 * file of their own so that make compiles them in parallel with the other K and variants. */
#include "conv_mma.cuh"

template ts_status mma_ch<7, true, true>(const ts_job *job, const conv_params &p);
