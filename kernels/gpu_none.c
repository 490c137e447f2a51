/* gpu_none.c - the GPU runtime of a build without the CUDA Toolkit: every call says so, and the
 * pipeline runs on the CPU. Keeps one set of prototypes (tessera.h) for both builds. */
#include "tessera.h"

#include <string.h>

#define NO_CUDA ts_fail(TS_ERR_NO_GPU, "tessera was built without CUDA (nvcc not found)")

int ts_gpu_compiled(void) { return 0; }
ts_status ts_gpu_open(ts_device *dev)
{
    memset(dev, 0, sizeof *dev);
    return NO_CUDA;
}
ts_status ts_gpu_open_id(ts_device *dev, int id)
{
    (void)id;
    return ts_gpu_open(dev);
}
int ts_gpu_count(void) { return 0; }
ts_status ts_gpu_use(int id)
{
    (void)id;
    return NO_CUDA;
}
ts_status ts_gpu_malloc(void **d_ptr, size_t bytes)
{
    (void)bytes;
    *d_ptr = NULL;
    return NO_CUDA;
}
void ts_gpu_free(void *d_ptr) { (void)d_ptr; }
void ts_gpu_image_free(ts_image *d_im) { (void)d_im; }
ts_status ts_gpu_upload(ts_image *d_dst, const ts_image *h_src, ts_stream s)
{
    (void)d_dst, (void)h_src, (void)s;
    return NO_CUDA;
}
ts_status ts_gpu_download(ts_image *h_dst, const ts_image *d_src, ts_stream s)
{
    (void)h_dst, (void)d_src, (void)s;
    return NO_CUDA;
}
ts_status ts_gpu_copy_to_host(void *h_dst, const void *d_src, size_t bytes, ts_stream s)
{
    (void)h_dst, (void)d_src, (void)bytes, (void)s;
    return NO_CUDA;
}
ts_status ts_gpu_copy_to_device(void *d_dst, const void *h_src, size_t bytes, ts_stream s)
{
    (void)d_dst, (void)h_src, (void)bytes, (void)s;
    return NO_CUDA;
}
ts_status ts_gpu_memset(void *d_ptr, int value, size_t bytes, ts_stream s)
{
    (void)d_ptr, (void)value, (void)bytes, (void)s;
    return NO_CUDA;
}
ts_status ts_gpu_image_fill(ts_image *d_im, int byte_value, ts_stream s)
{
    (void)d_im, (void)byte_value, (void)s;
    return NO_CUDA;
}
ts_status ts_gpu_stream_create(ts_stream *s)
{
    *s = NULL;
    return NO_CUDA;
}
void ts_gpu_stream_destroy(ts_stream s) { (void)s; }
ts_status ts_gpu_sync(ts_stream s)
{
    (void)s;
    return NO_CUDA;
}
ts_status ts_timer_create(ts_timer **t)
{
    *t = NULL;
    return NO_CUDA;
}
void ts_timer_destroy(ts_timer *t) { (void)t; }
ts_status ts_timer_start(ts_timer *t, ts_stream s)
{
    (void)t, (void)s;
    return NO_CUDA;
}
ts_status ts_timer_stop(ts_timer *t, ts_stream s)
{
    (void)t, (void)s;
    return NO_CUDA;
}
ts_status ts_timer_ms(ts_timer *t, float *ms)
{
    (void)t;
    *ms = 0;
    return NO_CUDA;
}
ts_status ts_display_convert(const ts_image *d_src, const ts_display_map *m, void *d_dst,
                             size_t dst_pitch, ts_stream s)
{
    (void)d_src, (void)m, (void)d_dst, (void)dst_pitch, (void)s;
    return NO_CUDA;
}
