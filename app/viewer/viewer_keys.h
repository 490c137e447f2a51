/* viewer_keys.h - key names, the binding table and what op keys do to the chain
 * (viewer_keys.c; no SDL: unit-tested). */
#ifndef TS_VIEWER_KEYS_H
#define TS_VIEWER_KEYS_H

#include "tessera.h"

#include <stddef.h>

/* A key: a Unicode character as typed ('>' not Shift+'.'), or one of VK_*; ctrl for Ctrl+key. */
enum {
    VK_SPECIAL = 0x110000, /* past Unicode */
    VK_LEFT = VK_SPECIAL, VK_RIGHT, VK_UP, VK_DOWN, VK_HOME, VK_END, VK_PAGEUP, VK_PAGEDOWN,
    VK_TAB, VK_BACKTAB, VK_BACKSPACE, VK_DELETE, VK_ESCAPE, VK_RETURN, VK_F1,
    VK_WHEELUP, VK_WHEELDOWN, /* the wheel, at the window centre when replayed */
    VK_LAST
};

typedef struct vw_key {
    int code;
    int ctrl;
} vw_key;

typedef enum vw_action {
    VA_NONE,
    VA_QUIT, VA_HELP, VA_HUD, VA_LIVE, VA_BENCH, VA_COMPARE, VA_FULLSCREEN, VA_SAVE,
    VA_NEXT, VA_PREV, VA_FIRST, VA_LAST,
    VA_ZOOM_IN, VA_ZOOM_OUT, VA_FIT, VA_ONE,
    VA_PAN_LEFT, VA_PAN_RIGHT, VA_PAN_UP, VA_PAN_DOWN,
    VA_OP_BLUR, VA_OP_SHARPEN, VA_OP_EDGE, VA_OP_EQUALIZE, VA_OP_ROT_CW, VA_OP_ROT_CCW,
    VA_OP_TRANSPOSE, VA_OP_FLOP, VA_OP_FLIP,
    VA_SELECT_NEXT, VA_SELECT_PREV, VA_VARIANT_NEXT, VA_VARIANT_PREV, VA_REMOVE,
    VA_ESCAPE, VA_RELOAD, VA_SLIDESHOW, VA_THUMBS,
    VA_COUNT
} vw_action;

/* One key name: a printable character ("e", "]", ">"), or (case-insensitive) Tab, Shift+Tab,
 * Left, Right, Up, Down, Home, End, PageUp, PageDown, BackSpace, Delete, Escape (Esc), Return
 * (Enter), F1, Space, plus, minus, comma, WheelUp, WheelDown; "Ctrl+" in front for Ctrl.
 * Returns 0 on success. */
int vw_key_parse(const char *name, size_t len, vw_key *k);
/* A comma-separated list ("e,b,],Ctrl+s"; blanks around names ignored) into a new array
 * (free it). Returns the count, or -1 with the reason in err. */
int vw_keys_parse(const char *list, vw_key **keys, char *err, size_t errlen);
/* The key of typed text (SDL_TEXTINPUT): its first character. Returns 0 on success. */
int vw_key_from_text(const char *utf8, vw_key *k);
/* The canonical name of a key ("Ctrl+s", "Tab", "plus"). */
void vw_key_name(vw_key k, char *buf, size_t len);
vw_action vw_key_action(vw_key k);
/* Line i of the help: the keys ("n Space") and what they do; 0 past the last line. */
int vw_help_line(int i, char *keys, size_t klen, const char **what);
/* The op an op key toggles ("gauss:5"); NULL for other actions. */
const char *vw_action_op(vw_action a);
/* Toggles `op_text` in the chain: removes the last op of the same kind (same name, and for
 * rotate the same angle) or appends it. *sel follows: the appended op, or stays in range.
 * Returns 1 when added, 0 when removed, -1 on error (ts_error_detail). */
int vw_chain_toggle(ts_chain *c, const char *op_text, int *sel);
/* The next (dir 1) or previous (-1) choice for an op's variant: auto (NULL), then each variant of
 * its family that can run on this backend (dev NULL: the CPU), in table order, wrapping. */
const ts_variant *vw_variant_cycle(const ts_op *op, const ts_device *dev, int dir);

#endif
