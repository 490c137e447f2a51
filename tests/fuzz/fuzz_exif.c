/* fuzz_exif.c - libFuzzer target: the EXIF reader and rewriter (app/codec/exif.c) on any bytes, the
 * ICC description reader, and the JPEG marker scan (jpeg_meta.c); the rewritten block must
 * read back as upright and well-formed. */
#include "exif.h"
#include "photo_io.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int o = tsio_exif_orientation(data, size);
    if (o < 0 || o > 8)
        abort();
    size_t n = 0;
    unsigned char *up = tsio_exif_upright(data, size, &n);
    if (up) {
        /* what tessera writes must read back as orientation 1 (or none) and be valid */
        int o2 = tsio_exif_orientation(up, n);
        if (!tsio_exif_valid(up, n) || (o && o2 != 1))
            abort();
        free(up);
    } else if (tsio_exif_valid(data, size)) {
        abort(); /* a valid block is never dropped (short of OOM) */
    }
    char d[64];
    tsio_icc_description(data, size, d, sizeof d);
    if (strlen(d) >= sizeof d)
        abort();
    (void)tsio_icc_is_non_srgb(data, size);
    tsio_meta m = {0};
    tsio_jpeg_meta_scan(data, size, &m);
    if (m.exif_len > size || m.icc_len > size)
        abort();
    tsio_meta_free(&m);
    return 0;
}
