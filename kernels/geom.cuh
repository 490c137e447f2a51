/* geom.cuh - what geom.cu and geom_opt.cu share (internal to kernels/): the seven geometry ops as
 * three flags, the checks every launcher makes on a job, and the grid-height clamp.
 *
 * Every op is "maybe swap the axes, then maybe mirror the source x and/or y" (ref.c's geom_into):
 *   swap:    out(x, y) = in(fx ? W-1-y : y,  fy ? H-1-x : x)   rotate:90 (fy), rotate:270 (fx),
 *                                                               transpose, transverse (fx, fy)
 *   no swap: out(x, y) = in(fx ? W-1-x : x,  fy ? H-1-y : y)   rotate:180 (fx, fy), flip (fy),
 *                                                               flop (fx)
 * so one kernel per strategy serves all seven ops, the flags being uniform per launch.
 */
#ifndef TS_GEOM_CUH
#define TS_GEOM_CUH

#include "gpu_util.cuh"

#include <stdint.h>

struct geom_map {
    int swap; /* output axes are the input's, swapped (output is H x W) */
    int fx;   /* source x is mirrored */
    int fy;   /* source y is mirrored */
};

/* Largest gridDim.y; kernels loop over the rows of tiles beyond it (a 1 x 1048576 image). */
#define GEOM_MAX_GRID_Y 65535u

static inline unsigned geom_grid_y(size_t tiles)
{
    return tiles < GEOM_MAX_GRID_Y ? (unsigned)tiles : GEOM_MAX_GRID_Y;
}

/* Validates a job (shapes, depths, output size) and turns its op into flags. */
static inline ts_status geom_check(const ts_job *job, geom_map *m)
{
    static const geom_map maps[] = {
        /* ROT90 */ {1, 0, 1}, /* ROT180 */ {0, 1, 1}, /* ROT270 */ {1, 1, 0},
        /* TRANSPOSE */ {1, 0, 0}, /* TRANSVERSE */ {1, 1, 1}, /* FLIP */ {0, 0, 1},
        /* FLOP */ {0, 1, 0},
    };
    if (!job || !job->op || job->op->kind != TS_OP_GEOM)
        return ts_fail(TS_ERR_INVALID, "geom: not a geometry op");
    int g = (int)job->op->geom;
    if (g < 0 || g >= (int)(sizeof maps / sizeof maps[0]))
        return ts_fail(TS_ERR_INVALID, "geom: bad geometry op %d", g);
    const ts_image *in = &job->in, *out = &job->out;
    if (!in->data || !out->data || in->width < 1 || in->height < 1 || in->width > TS_MAX_DIM ||
        in->height > TS_MAX_DIM || in->channels < 1 || in->channels > 4 || in->bytes < 1 ||
        in->bytes > 2)
        return ts_fail(TS_ERR_INVALID, "%s: bad input image", job->op->text);
    int ow, oh;
    ts_geom_size(job->op->geom, in->width, in->height, &ow, &oh);
    if (out->width != ow || out->height != oh || out->channels != in->channels ||
        out->bytes != in->bytes)
        return ts_fail(TS_ERR_INVALID, "%s: output image has the wrong shape", job->op->text);
    if (in->pitch < ts_row_bytes(in) || out->pitch < ts_row_bytes(out))
        return ts_fail(TS_ERR_INVALID, "%s: pitch shorter than a row", job->op->text);
    *m = maps[g];
    return TS_OK;
}

/* 1 when both images' rows start at multiples of `align` bytes. */
static inline int geom_aligned(const ts_job *job, size_t align)
{
    uintptr_t bits = (uintptr_t)job->in.data | (uintptr_t)job->out.data |
                     (uintptr_t)job->in.pitch | (uintptr_t)job->out.pitch;
    return bits % align == 0;
}

#endif /* TS_GEOM_CUH */
