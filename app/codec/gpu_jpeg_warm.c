/* gpu_jpeg_warm.c - gj_dev_warm_up (gpu_jpeg.h): one small image through the encoder and each
 * decode path of a device part, in a file of its own because it uses both halves of the module
 * (gpu_jpeg.c's contexts and encoder, gpu_jpeg_decode.c's decode), which do not call each other
 * the other way.
 */
#include "gpu_jpeg_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GJ_ENABLED

/* One 64x48 image encoded, then decoded by each path the device has: the library loads its
 * kernels (CUDA loads modules at their first launch) and sizes its buffers here, once. */
ts_status gj_dev_warm_up(gj_dev *d, char *why, size_t len)
{
    gj_ctx *c = NULL;
    ts_stream s = NULL;
    ts_image im;
    memset(&im, 0, sizeof im);
    gj_result r[1];
    memset(r, 0, sizeof r);
    unsigned char *jpg = NULL;
    size_t n = 0;
    gj_opts one = {.host_threads = 1};
    ts_status st = ts_gpu_stream_create(&s);
    if (st == TS_OK)
        st = gj_ctx_create_on(&c, d, s, &one, why, len);
    if (st == TS_OK && (st = ts_gpu_image_alloc(&im, 64, 48, 3, 1)) == TS_OK)
        st = ts_gpu_image_fill(&im, 0x80, s);
    if (st == TS_OK)
        st = gj_encode(c, &im, NULL, &jpg, &n, why, len);
    for (int pass = 0; st == TS_OK && pass < 1 + c->has_engine; pass++) {
        if (pass == 1)
            c->has_engine = 0; /* the second pass: the decoupled path */
        const unsigned char *data = jpg;
        st = gj_decode_batch(c, &data, &n, 1, r);
        if (st == TS_OK && r[0].status != TS_OK)
            st = tsio_fail(why, len, TS_ERR_CUDA, "nvJPEG cannot decode its own JPEG: %s",
                             r[0].err);
    }
    if (st == TS_OK)
        st = ts_gpu_sync(s);
    if (st != TS_OK && why && !why[0])
        snprintf(why, len, "%s", ts_error_detail());
    free(jpg);
    gj_results_free(r, 1);
    ts_gpu_image_free(&im);
    gj_ctx_destroy(c);
    if (s)
        ts_gpu_stream_destroy(s);
    return st;
}

#else

ts_status gj_dev_warm_up(gj_dev *d, char *why, size_t len)
{
    (void)d;
    return gj_load(why, len);
}

#endif
