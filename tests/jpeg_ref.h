/* jpeg_ref.h - libjpeg's own decode of a JPEG in memory, the reference that nvJPEG's output is
 * measured against (tests/test_gpu_jpeg.c, tools/nvjpeg_bench.c --check). */
#ifndef JPEG_REF_H
#define JPEG_REF_H

#include "tessera.h"

#include <stddef.h>

/* Decodes as the CPU path does (fancy upsampling, islow IDCT) into a new 8-bit gray or RGB image.
 * 0 on success, -1 on a bad file (out left empty). *components (if not NULL) gets the file's
 * component count. */
int jpeg_ref_decode(const unsigned char *buf, size_t len, ts_image *out, int *components);

#endif
