/* viewer.h - the SDL2 viewer (app/viewer*.c), split as nsxiv splits its own: one struct per part,
 * each owned by its file; only viewer.c's frame loop, the commands of viewer_events.c and the HUD
 * see the whole (struct viewer, viewer_app.h).
 *
 *   pure (no SDL; tests/test_viewer*.c):
 *   viewer_keys.c    key names (--keys), the one binding table (keys -> actions, also the ? help),
 *                    what op keys do to the chain, variant cycling
 *   viewer_view.c    zoom and pan (vw_view): fit, zoom ladder, zoom around a point, clamping, and
 *                    what part of the image the display texture holds at what size
 *   viewer_display.c the display conversion of host images, same texels as the GPU's, and the
 *                    resize op that zoomed-out views are resampled with
 *   viewer_stats.c   frame statistics (vw_frames) for the HUD and the exit summary
 *   viewer_files.c   the file list (vw_files): arguments, directories, dropped files
 *   viewer_run.c     the image and its chain (vw_run): loading (a large JPEG's preview first),
 *                    animation, the pipeline run, saving
 *   viewer_load.c    the full decode of a previewed JPEG on a thread (vw_load)
 *   viewer_anim.c    an animated GIF's frames (vw_anim; stb's GIF decoder under a budget)
 *   viewer_demo.c    --demo (vw_demo): each family's variants, rung by rung, timed
 *   viewer_bench.c   the speedup-over-naive measurement (vw_bench), one run per frame
 *   viewer_thumbs.c  thumbnail mode's thumbnails (vw_thumbs): made on worker threads, the cells
 *                    on screen first (a JPEG's EXIF thumbnail, else its reduced decode, then the
 *                    resize op), cached on disk; the grid's layout
 *
 *   SDL:
 *   viewer_win.c     the window (vw_win): set-up, renderer, title, fullscreen, present, pacing
 *   viewer_tex.c     the display textures (vw_tex): filling them, drawing the image
 *   viewer_text.c    text (stb_easy_font, with a '|' unlike 'l') and filled rectangles
 *   viewer_hud.c     the UI (vw_ui): the HUD panel or status line, help, messages, labels, toasts
 *   viewer_grid.c    thumbnail mode (vw_grid, -t and Enter): the grid, its textures, its line
 *   viewer_events.c  commands: keys, mouse, window events and dropped files -> the parts
 *   viewer.c         viewer_main: start, the frame loop, frame timing, the exit summary
 *
 * Calls go one way: viewer.c -> viewer_events.c -> viewer_hud.c -> the parts below; no part calls
 * back up.
 */
#ifndef TS_VIEWER_H
#define TS_VIEWER_H

#include "options.h"
#include "viewer_display.h"
#include "viewer_files.h"
#include "viewer_keys.h"
#include "viewer_stats.h"
#include "viewer_view.h"

#ifdef TS_HAVE_SDL
#include "viewer_app.h"
#endif

/* The viewer (viewer.c): the exit status. */
int viewer_main(const app_options *o);

#endif
