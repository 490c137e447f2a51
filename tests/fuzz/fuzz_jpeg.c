/* fuzz_jpeg.c - libFuzzer target: JPEG via libjpeg-turbo, behind tessera's guards. */
#define FUZZ_PREFIX "\xFF\xD8"
#include "fuzz_format.h"
