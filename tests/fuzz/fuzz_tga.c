/* fuzz_tga.c - libFuzzer target: TGA via stb (no signature), behind tessera's guards. */
#define FUZZ_PREFIX ""
#include "fuzz_format.h"
