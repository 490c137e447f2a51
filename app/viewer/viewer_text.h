/* viewer_text.h - text and flat shapes on the renderer (viewer_text.c): stb_easy_font glyphs as
 * rectangles, with a '|' of its own (a broken bar reaching below the line) so that it never
 * reads as 'l'. */
#ifndef TS_VIEWER_TEXT_H
#define TS_VIEWER_TEXT_H

#ifdef TS_HAVE_SDL
#include <SDL.h>

#define VW_TEXT_LINE 11 /* pixels a line at scale 1 */

int vw_text_width(const char *s, int scale);
void vw_text(SDL_Renderer *ren, int x, int y, int scale, SDL_Color c, const char *s);
/* A filled rectangle; alpha < 255 blends. */
void vw_fill(SDL_Renderer *ren, int x, int y, int w, int h, SDL_Color c);

#endif /* TS_HAVE_SDL */
#endif
