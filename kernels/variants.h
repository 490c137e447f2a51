/* variants.h - launchers of the GPU variants, for registry.c's table (internal to kernels/).
 * Each launcher runs one job asynchronously on job->stream and returns TS_OK or an error code
 * (cudaGetLastError() after every launch). Supports/scratch functions follow the ts_variant
 * contract in tessera.h. Sections per kernel file; keep each in step with its .cu file.
 */
#ifndef TS_VARIANTS_H
#define TS_VARIANTS_H

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* conv.cu: convolution as a matrix product */

/* geom.cu: transpose, rotation, flips */

/* hist.cu: histogram and equalization */

#ifdef __cplusplus
}
#endif
#endif /* TS_VARIANTS_H */
