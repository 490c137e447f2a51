/* stb_png.c - the tests' independent PNG oracle: a private, static copy of stb_image with only its
 * PNG decoder (the program's own stb unit is guarded and built for other formats), behind the
 * two calls that testutil.h declares. */
#include "testutil.h"

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_NO_STDIO
#if defined(__GNUC__) /* not popped: the unused static declarations are reported at the end */
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wsign-compare"
#endif
#include <stb_image.h>

void *tu_stb_png(const void *png, size_t len, int sixteen, int *w, int *h, int *channels,
                 const char **why)
{
    void *p = sixteen ? (void *)stbi_load_16_from_memory(png, (int)len, w, h, channels, 0)
                      : (void *)stbi_load_from_memory(png, (int)len, w, h, channels, 0);
    if (why)
        *why = p ? "" : stbi_failure_reason();
    return p;
}

void tu_stb_free(void *pixels) { stbi_image_free(pixels); }
