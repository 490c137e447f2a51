/* fuzz_png.c - libFuzzer target: PNG via libspng, behind tessera's guards. */
#define FUZZ_PREFIX "\x89PNG\r\n\x1a\n"
#include "fuzz_format.h"
