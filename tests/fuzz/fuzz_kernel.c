/* fuzz_kernel.c - libFuzzer target: the kernel-file parser (ts_filter_parse). */
#include "tessera.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts_filter f;
    char err[256];
    if (ts_filter_parse((const char *)data, size, &f, err, sizeof err) == TS_OK) {
        if (f.k < 1 || f.k > TS_MAX_K || f.k % 2 == 0)
            abort();
        for (int t = 0; t < f.k * f.k; t++)
            if (!isfinite(f.w[t]))
                abort(); /* NaN or Inf weights must never get through */
        if (f.exact && f.divisor <= 0)
            abort();
    }
    return 0;
}
