/* bench_vendor.cuh - shared by the vendor baseline files (internal to tools/bench_vendor.cu,
 * bench_cudnn.cu, bench_npp.cu): the vendor state and the steps every vendor row takes
 * (poisoned output, one checked run, timing with the same harness as the variants). */
#ifndef TS_BENCH_VENDOR_CUH
#define TS_BENCH_VENDOR_CUH

#include "bench_gpu.cuh"

typedef struct bv_cudnn bv_cudnn; /* bench_cudnn.cu */
typedef struct bv_npp bv_npp;     /* bench_npp.cu */

struct bench_vendor {
    const bench_env *env;
    ts_image d_out; /* a vendor's output image */
    size_t out_cap;
    uint32_t *d_hist; /* a vendor's histogram */
    size_t hist_cap;
    void *d_temp; /* CUB temporary storage, NPP scratch buffers */
    size_t temp_cap;
    bv_cudnn *cudnn; /* NULL until the first convolution */
    bv_npp *npp;     /* NULL until first used */
};

/* A vendor row of the group. */
bench_row *bv_row(const bench_group *grp, bench_rows *rows, const char *name);
/* The output image (the op's output shape) poisoned with 0xA5 bytes; NULL on failure (the row
 * then says why). */
ts_image *bv_output(bench_vendor *v, const bench_group *grp, bench_row *r);
/* After one run into bv_output(): compares the first `channels` channels with the group's gold
 * (within `tol`) and sets the row's state. `what` qualifies an "ok". */
void bv_check_image(bench_vendor *v, const bench_group *grp, bench_row *r, const ts_image *out,
                    int channels, int tol, const char *what);
/* The same for a histogram of grp->hist_n counts. */
void bv_check_hist(bench_vendor *v, const bench_group *grp, bench_row *r, const uint32_t *d_hist);
/* Times `fn` into the row (or marks it an error). */
void bv_time(bench_vendor *v, bench_row *r, bg_run_fn fn, void *arg);
/* Marks the row an error with ts_error_detail(). */
void bv_error(bench_row *r, const char *what);

void bv_cudnn_rows(bench_vendor *v, const bench_group *grp, bench_rows *rows);
void bv_cudnn_close(bench_vendor *v);
void bv_cudnn_describe(char *out, size_t len);

void bv_npp_rows(bench_vendor *v, const bench_group *grp, bench_rows *rows);
void bv_npp_close(bench_vendor *v);
void bv_npp_describe(char *out, size_t len);

#endif /* TS_BENCH_VENDOR_CUH */
