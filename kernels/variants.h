/* variants.h - launchers of the GPU variants, for registry.c's table (internal to kernels/).
 * Each launcher runs one job asynchronously on job->stream and returns TS_OK or an error code
 * (cudaGetLastError() after every launch). Supports/scratch functions follow the ts_variant
 * contract in tessera.h. Sections per kernel file; keep each in step with its .cu file.
 * A conv variant is two lines here (supports, run), its run being conv_run<its launcher> on
 * conv_common.cuh's dispatcher.
 */
#ifndef TS_VARIANTS_H
#define TS_VARIANTS_H

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* conv.cu (naive, gemm), conv_tiled.cu, conv_sep.cu, conv_roll.cu, conv_pipe.cu, conv_mma.cu (mma,
 * mmapipe, mmasep), conv_mmasep2.cu (mmasep2, mmasep2b, mmabox): conv as a matmul; conv_runsum.cu
 * (runsum): box filters by running sums */
ts_status conv_naive(const ts_job *job);
size_t conv_gemm_scratch(const ts_job *job);
ts_status conv_gemm(const ts_job *job);
int conv_tiled_supports(const ts_job *job);
ts_status conv_tiled(const ts_job *job);
int conv_sep_supports(const ts_job *job);
ts_status conv_sep(const ts_job *job);
int conv_roll_supports(const ts_job *job);
ts_status conv_roll(const ts_job *job);
int conv_pipe_supports(const ts_job *job);
ts_status conv_pipe(const ts_job *job);
int conv_mma_supports(const ts_job *job);
ts_status conv_mma(const ts_job *job);
int conv_mmapipe_supports(const ts_job *job);
ts_status conv_mmapipe(const ts_job *job);
int conv_mmasep_supports(const ts_job *job);
ts_status conv_mmasep(const ts_job *job);
int conv_mmasep2_supports(const ts_job *job);
ts_status conv_mmasep2(const ts_job *job);
ts_status conv_mmasep2b(const ts_job *job);
int conv_mmabox_supports(const ts_job *job);
ts_status conv_mmabox(const ts_job *job);
int conv_runsum_supports(const ts_job *job);
ts_status conv_runsum(const ts_job *job);

/* geom.cu, geom_opt.cu: transpose, rotation, flips (every op, pixel size and image size) */
ts_status geom_naive(const ts_job *job);
ts_status geom_shared(const ts_job *job);
ts_status geom_padded(const ts_job *job);
ts_status geom_opt(const ts_job *job);

/* hist.cu, hist_opt.cu, hist_equalize.cu: histogram and equalization (the plans are in
 * hist_plan.h). supports/scratch of naive serve shared and cluster too, with their own checks. */
int hist_supports(const ts_job *job);
size_t hist_scratch(const ts_job *job);
ts_status hist_naive(const ts_job *job);
int hist_shared_supports(const ts_job *job);
ts_status hist_shared(const ts_job *job);
int hist_cluster_supports(const ts_job *job);
ts_status hist_cluster(const ts_job *job);
size_t hist_cluster_scratch(const ts_job *job);
/* hist_eq16_cluster.cu: the cluster rung's RGB16 per-channel equalize (hist.cu hands it over) */
int hist_eq16_cluster_takes(const ts_job *job);
int hist_eq16_cluster_supports(const ts_job *job);
size_t hist_eq16_cluster_scratch(const ts_job *job);
ts_status hist_eq16_cluster(const ts_job *job);
int hist_opt_supports(const ts_job *job);
size_t hist_opt_scratch(const ts_job *job);
ts_status hist_opt(const ts_job *job);

/* resize.cu (naive, tiled), resize_opt.cu (fused, opt), resize_mma.cu, resize_mmai.cu,
 * resize_direct.cu: resize, thumbnail, crop (weights from resize.h, shared scratch) */
size_t resize_scratch(const ts_job *job);
ts_status resize_naive(const ts_job *job);
int resize_tiled_supports(const ts_job *job);
ts_status resize_tiled(const ts_job *job);
int resize_fused_supports(const ts_job *job);
ts_status resize_fused(const ts_job *job);
int resize_mma_supports(const ts_job *job);
ts_status resize_mma(const ts_job *job);
int resize_mmai_supports(const ts_job *job);
ts_status resize_mmai(const ts_job *job);
int resize_direct_supports(const ts_job *job);
ts_status resize_direct(const ts_job *job);
int resize_opt_supports(const ts_job *job);
ts_status resize_opt(const ts_job *job);

/* clahe.cu (naive, shared, opt), clahe_cluster.cu: CLAHE (the arithmetic in clahe.h) */
int clahe_supports(const ts_job *job);
size_t clahe_scratch(const ts_job *job);
ts_status clahe_naive(const ts_job *job);
ts_status clahe_shared(const ts_job *job);
int clahe_cluster_supports(const ts_job *job);
size_t clahe_cluster_scratch(const ts_job *job);
ts_status clahe_cluster(const ts_job *job);
int clahe_opt_supports(const ts_job *job);
ts_status clahe_opt(const ts_job *job);

#ifdef __cplusplus
}
#endif
#endif /* TS_VARIANTS_H */
