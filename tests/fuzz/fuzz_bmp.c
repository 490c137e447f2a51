/* fuzz_bmp.c - libFuzzer target: BMP via stb, behind tessera's guards. */
#define FUZZ_PREFIX "BM"
#include "fuzz_format.h"
