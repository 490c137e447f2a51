/* fuzz_psd.c - libFuzzer target: PSD via stb, behind tessera's guards. */
#define FUZZ_PREFIX "8BPS"
#include "fuzz_format.h"
