/* fuzz_pnm.c - libFuzzer target: binary PNM via stb, behind tessera's guards. */
#define FUZZ_PREFIX "P6"
#include "fuzz_format.h"
