/* kernel_file.h - the app's side of the library's purity: kernel:FILE read here (regular files
 * only, at most TS_KERNEL_FILE_MAX + 1 bytes) and handed to the library as weights, and the GPU
 * runtime's settings taken from the environment. */
#ifndef APP_KERNEL_FILE_H
#define APP_KERNEL_FILE_H

#include "tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The reader of kernel:FILE (a ts_kernel_reader): `err` says "FILE: why" on failure; a FIFO, a
 * device or a directory is refused without blocking (TS_ERR_IO), a file over 1 MiB unread past
 * its first 1 MiB + 1 byte (TS_ERR_FORMAT). */
ts_status app_kernel_read(const char *file, ts_filter *f, char *err, size_t errlen);
/* The ops a user's chain may have: one fewer than the library's TS_MAX_CHAIN, so that the op
 * that turns a photo upright by its EXIF orientation always fits (a 64-op chain used to be
 * accepted, then fail on every photo with an orientation). */
#define APP_MAX_CHAIN (TS_MAX_CHAIN - 1)
/* ts_chain_parse / ts_op_parse with the app's reader: what every part of the app calls; a chain
 * is also refused over APP_MAX_CHAIN ops. */
ts_status app_chain_parse(const char *text, ts_chain *chain, char *err, size_t errlen);
ts_status app_op_parse(const char *item, ts_op *op, char *err, size_t errlen);
/* Sets the GPU runtime's settings (ts_gpu_set) from TESSERA_DEVICE=N, TESSERA_MAX_CC=CC,
 * TESSERA_GPU_MEM_LIMIT=BYTES[K|M|G] and TESSERA_RESIZE_PLAN_CACHE=0; unset or empty ones keep
 * the defaults. Called once, before the first GPU call and before any thread starts. */
void app_gpu_env(void);

#ifdef __cplusplus
}
#endif
#endif /* APP_KERNEL_FILE_H */
