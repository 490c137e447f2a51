/* viewer_anim.h - the frames of an animated GIF for the viewer (viewer_anim.c; no SDL). */
#ifndef TS_VIEWER_ANIM_H
#define TS_VIEWER_ANIM_H

#include <stddef.h>
#include <stdint.h>

typedef struct vw_anim {
    int n, w, h;          /* n frames of w x h RGBA8, one after the other in px */
    unsigned char *px;
    int *delay_ms;        /* each frame's time on screen */
} vw_anim;

/* The frames of `path` when it is a GIF with more than one; w * h * n may not pass max_pixels
 * (nor 1 << 28). Returns the frame count (0: not a GIF or a still one, nothing kept), or -1 with
 * the reason in err. */
int vw_anim_load(const char *path, uint64_t max_pixels, vw_anim *a, char *err, size_t errlen);
void vw_anim_free(vw_anim *a);

#endif
