/* resize_mmai.cuh - what the interleaved tensor-core resampler (resize_mmai.cu) shares with its
 * plan cache (resize_mmai_cache.cu): the launch geometry, its construction from a plan, and the
 * launcher of the kernel built for a geometry. Internal to kernels/; sm_80 and newer.
 */
#ifndef TS_RESIZE_MMAI_CUH
#define TS_RESIZE_MMAI_CUH

#include "resize_gpu.cuh"

/* Launch geometry (host-computed, passed to the kernels by value). */
struct mi_geom {
    int C, S;          /* channels, samples per output row (ow * C) */
    int U;             /* bytes a horizontal unit: C on pixels (mi_px_able), else 1 */
    int nkh, nkv;      /* k-chunks per n-tile and per 16-row band (1, 2 or 4 each) */
    int nt, ntp;       /* n-tiles (8 units) of a row, padded to whole blocks */
    int nm, nmr, nmp;  /* 16-row bands: a tile's (2, 4 or 8), of the image, whole tiles */
    int gx, nty;       /* blocks across, tiles down */
    int nch, rb, mr;   /* staged 16-byte chunks a row, raw row stride, intermediate stride */
    size_t off_mid, off_wv, smem;          /* shared memory (the stages at 0) */
    unsigned char *frag;                   /* device: kbh, fh, vb + vend, fv */
    size_t off_fh, off_vb, off_fv, frag_bytes;
};

/* The geometry of a launch on this plan (tables built: rs_plan_make), g->frag left NULL for the
 * caller to point at a cache slot or the job's scratch; -1 where the kernel does not apply. */
int mi_geom_pick(const rs_plan *p, int C, const ts_job *job, mi_geom *g);

/* Launches the fragment build (prep; then records ready, if given) and the resampler, on
 * *blocks blocks (0: one per resident slot, found here and written back). */
typedef ts_status (*mi_launcher)(const rs_args &a, const ts_job *job, const mi_geom &g, int prep,
                                 cudaEvent_t ready, int *blocks);
/* The launcher of the kernel built for the geometry's channels, k-chunks and units. */
mi_launcher mi_pick(const mi_geom &g);

/* The plan cache (resize_mmai_cache.cu): runs the job from the device-resident fragments of its
 * geometry, building them into a slot on a miss. *done 1: launched. Otherwise *geom says what
 * was learnt: 1 the geometry was made into *g (the cache was off for it or had no room: the
 * caller builds the fragments in scratch), -1 the kernel does not apply, 0 nothing tried (the
 * cache is off for this job). */
ts_status mi_cache_run(rs_plan *p, const ts_job *job, mi_geom *g, int *geom, int *done);
/* Whether a slot holds the job's geometry (then it applies). */
int mi_cache_holds(const rs_plan *p, const ts_job *job);

#endif /* TS_RESIZE_MMAI_CUH */
