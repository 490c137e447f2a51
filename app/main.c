#include "tessera.h"
#include <stdio.h>
int main(void) { printf("%zu variants\n", ts_variant_count()); return 0; }
