/* viewer_events.h - the viewer's commands: what keys (through the binding table of
 * viewer_keys.c), the mouse, window events and dropped files do to its parts
 * (viewer_events.c). */
#ifndef TS_VIEWER_EVENTS_H
#define TS_VIEWER_EVENTS_H

#ifdef TS_HAVE_SDL
#include "viewer_app.h"
#include "viewer_keys.h"

/* Thumbnail mode, `sel` selected: the grid's thumbnails start being made the first time. */
void vw_events_thumbnails(viewer *v, int sel);
/* Handles the events waiting in SDL's queue; returns how many there were. */
int vw_events_poll(viewer *v);
/* One key's action; (ax, ay) is the point a zoom keeps in place (the cursor). */
void vw_events_key(viewer *v, vw_key k, double ax, double ay);
/* Shows files[index]: loads it (its error is shown on failure), fits it, and starts the figures
 * again. */
void vw_open(viewer *v, int index);
/* Changes that come with time (the slideshow); call once a frame. */
void vw_events_timers(viewer *v);
/* When vw_events_timers has work next (now_ms time); 0: never. */
double vw_events_due(const viewer *v);
/* The HUD by default follows the chain (vw_ui_follow): the view keeps its place when the area
 * changes with it. Call once a frame, after the keys. */
void vw_events_follow_hud(viewer *v);
/* The image shown changed size (new file, a rotation toggled): refit or re-clamp. */
void vw_sync_view(viewer *v);

#endif /* TS_HAVE_SDL */
#endif
