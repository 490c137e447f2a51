/* fuzz_gif.c - libFuzzer target: GIF via stb, behind tessera's guards. */
#define FUZZ_PREFIX "GIF89a"
#include "fuzz_format.h"
