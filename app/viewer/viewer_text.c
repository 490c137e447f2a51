/* viewer_text.c - text (stb_easy_font) and flat shapes. Glyphs are axis-aligned quads, drawn as
 * one SDL_RenderFillRectsF batch per string (cheaper than triangles through SDL_RenderGeometry,
 * which matters in the software renderer). stb_easy_font draws '|' and 'l' alike (one stroke
 * of the same height), so '|' is drawn here: two strokes with a gap between them, from above
 * the capitals to below the baseline. Buffers are static: nothing is allocated per frame. */
#include "viewer_text.h"
#include "viewer_win.h"

#ifdef TS_HAVE_SDL

#include <stb_easy_font.h>
#include <string.h>

#define MAX_TEXT 480                 /* characters per string */
#define MAX_QUADS 12000              /* stb_easy_font: at most ~25 quads a character */

/* Printable ASCII only: stb_easy_font indexes its table by the character. */
static void sanitize(const char *s, char *out, size_t len)
{
    size_t i = 0;
    for (; s[i] && i + 1 < len; i++)
        out[i] = s[i] >= 32 && s[i] < 127 ? s[i] : '?';
    out[i] = '\0';
}

int vw_text_width(const char *s, int scale)
{
    char buf[MAX_TEXT];
    sanitize(s, buf, sizeof buf);
    return stb_easy_font_width(buf) * scale;
}

void vw_text(SDL_Renderer *ren, int x, int y, int scale, SDL_Color c, const char *s)
{
    static struct {
        float x, y, z;
        unsigned char rgba[4];
    } vtx[MAX_QUADS * 4];
    static SDL_FRect rects[MAX_QUADS];
    char buf[MAX_TEXT], bar[2] = "|";
    sanitize(s, buf, sizeof buf);
    int quads = 0, bar_w = stb_easy_font_width(bar);
    float at = 0; /* the segments between bars, each where the whole string would put it */
    for (char *seg = buf; seg && quads < MAX_QUADS - 2;) {
        char *end = strchr(seg, '|');
        if (end)
            *end = '\0';
        int room = (int)sizeof vtx - quads * 4 * (int)sizeof vtx[0];
        int n = stb_easy_font_print(0, 0, seg, NULL, vtx + 4 * quads, room);
        for (int q = quads; q < quads + n; q++) { /* vertices 0 and 2 are opposite corners */
            const float *a = &vtx[4 * q].x, *b = &vtx[4 * q + 2].x;
            rects[q] = (SDL_FRect){x + (at + a[0]) * scale, y + a[1] * scale,
                                   (b[0] - a[0]) * scale, (b[1] - a[1]) * scale};
        }
        quads += n;
        at += stb_easy_font_width(seg);
        if (!end)
            break;
        /* the bar: two strokes with a gap, 11 rows from above the capitals ('l' is 7) */
        rects[quads++] = (SDL_FRect){x + at * scale, y - 1.0f * scale, scale, 5.0f * scale};
        rects[quads++] = (SDL_FRect){x + at * scale, y + 6.0f * scale, scale, 5.0f * scale};
        at += bar_w;
        seg = end + 1;
    }
    if (vw_sdl(SDL_SetRenderDrawColor(ren, c.r, c.g, c.b, c.a), "SDL_SetRenderDrawColor") == 0)
        vw_sdl(SDL_RenderFillRectsF(ren, rects, quads), "SDL_RenderFillRectsF");
}

void vw_fill(SDL_Renderer *ren, int x, int y, int w, int h, SDL_Color c)
{
    SDL_Rect r = {x, y, w, h};
    int blend = c.a < 255;
    if (blend && vw_sdl(SDL_SetRenderDrawBlendMode(ren, SDL_BLENDMODE_BLEND),
                        "SDL_SetRenderDrawBlendMode"))
        return;
    if (vw_sdl(SDL_SetRenderDrawColor(ren, c.r, c.g, c.b, c.a), "SDL_SetRenderDrawColor") == 0)
        vw_sdl(SDL_RenderFillRect(ren, &r), "SDL_RenderFillRect");
    if (blend)
        vw_sdl(SDL_SetRenderDrawBlendMode(ren, SDL_BLENDMODE_NONE), "SDL_SetRenderDrawBlendMode");
}

#else
typedef int vw_text_unused; /* ISO C wants a declaration in every file */
#endif /* TS_HAVE_SDL */
