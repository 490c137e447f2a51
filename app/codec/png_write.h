/* png_write.h - test hook of the PNG encoder (app/codec/png_write.c; tsio_png_encode is in codec.h). */
#ifndef TESSERA_PNG_WRITE_H
#define TESSERA_PNG_WRITE_H

#include <stddef.h>

/* tests/test_codecs.c only (not thread-safe): images whose filtered rows exceed `bytes` take the
 * streamed zlib path instead of the whole-buffer libdeflate one, so that both are tested on
 * small images. 0: the built-in limit (256 MiB). */
void tsio_png_test_set_whole_limit(size_t bytes);

#endif /* TESSERA_PNG_WRITE_H */
