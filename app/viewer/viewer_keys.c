/* viewer_keys.c - the viewer's keys: names (for --keys and the help), the one binding table that
 * both the event loop and the ? help read, and what the op keys do to the chain. No SDL here:
 * events are turned into vw_key in viewer.c, so all of this is unit-tested without a display. */
#include "viewer_keys.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
    const char *name;
    int code;
} names[] = {
    {"Left", VK_LEFT},         {"Right", VK_RIGHT},         {"Up", VK_UP},
    {"Down", VK_DOWN},         {"Home", VK_HOME},           {"End", VK_END},
    {"PageUp", VK_PAGEUP},     {"PageDown", VK_PAGEDOWN},   {"Tab", VK_TAB},
    {"Shift+Tab", VK_BACKTAB}, {"BackSpace", VK_BACKSPACE}, {"Delete", VK_DELETE},
    {"Escape", VK_ESCAPE},     {"Esc", VK_ESCAPE},          {"Return", VK_RETURN},
    {"Enter", VK_RETURN},      {"F1", VK_F1},               {"WheelUp", VK_WHEELUP},
    {"WheelDown", VK_WHEELDOWN},
    /* characters that a comma-separated list or a shell makes awkward */
    {"Space", ' '},            {"plus", '+'},               {"minus", '-'},
    {"comma", ','},
};

/* The binding table, in help order: the ? overlay lists each action once with all its keys. */
static const struct {
    vw_key key;
    vw_action action;
} bindings[] = {
    {{'n', 0}, VA_NEXT},           {{' ', 0}, VA_NEXT},          {{VK_PAGEDOWN, 0}, VA_NEXT},
    {{'p', 0}, VA_PREV},           {{VK_BACKSPACE, 0}, VA_PREV}, {{VK_PAGEUP, 0}, VA_PREV},
    {{'g', 0}, VA_FIRST},          {{VK_HOME, 0}, VA_FIRST},
    {{'G', 0}, VA_LAST},           {{VK_END, 0}, VA_LAST},
    {{'r', 0}, VA_RELOAD},         {{'S', 0}, VA_SLIDESHOW},
    {{'+', 0}, VA_ZOOM_IN},        {{VK_WHEELUP, 0}, VA_ZOOM_IN},
    {{'-', 0}, VA_ZOOM_OUT},       {{VK_WHEELDOWN, 0}, VA_ZOOM_OUT},
    {{'w', 0}, VA_FIT},            {{'=', 0}, VA_ONE},
    {{VK_LEFT, 0}, VA_PAN_LEFT},   {{'h', 0}, VA_PAN_LEFT},
    {{VK_DOWN, 0}, VA_PAN_DOWN},   {{'j', 0}, VA_PAN_DOWN},
    {{VK_UP, 0}, VA_PAN_UP},       {{'k', 0}, VA_PAN_UP},
    {{VK_RIGHT, 0}, VA_PAN_RIGHT}, {{'l', 0}, VA_PAN_RIGHT},
    {{'f', 0}, VA_FULLSCREEN},
    {{'b', 0}, VA_OP_BLUR},        {{'s', 0}, VA_OP_SHARPEN},    {{'d', 0}, VA_OP_EDGE},
    {{'e', 0}, VA_OP_EQUALIZE},    {{'>', 0}, VA_OP_ROT_CW},     {{'<', 0}, VA_OP_ROT_CCW},
    {{'t', 0}, VA_OP_TRANSPOSE},   {{'|', 0}, VA_OP_FLOP},       {{'_', 0}, VA_OP_FLIP},
    {{VK_TAB, 0}, VA_SELECT_NEXT}, {{VK_BACKTAB, 0}, VA_SELECT_PREV},
    {{']', 0}, VA_VARIANT_NEXT},   {{'[', 0}, VA_VARIANT_PREV},
    {{'x', 0}, VA_REMOVE},         {{VK_DELETE, 0}, VA_REMOVE},
    {{'c', 0}, VA_COMPARE},        {{'i', 0}, VA_HUD},
    /* hjkl pans, so live mode is on L (with B, the other demo key) */
    {{'L', 0}, VA_LIVE},           {{'B', 0}, VA_BENCH},
    {{VK_RETURN, 0}, VA_THUMBS},   /* as nsxiv's Return */
    {{'s', 1}, VA_SAVE},
    {{'?', 0}, VA_HELP},           {{VK_F1, 0}, VA_HELP},
    {{VK_ESCAPE, 0}, VA_ESCAPE},   {{'q', 0}, VA_QUIT},
};

static const struct {
    vw_action action;
    const char *what;
    const char *op; /* op keys: the op they toggle */
} actions[] = {
    {VA_NEXT, "next image", NULL},
    {VA_PREV, "previous image", NULL},
    {VA_FIRST, "first image", NULL},
    {VA_LAST, "last image", NULL},
    {VA_RELOAD, "reload the file from disk", NULL},
    {VA_SLIDESHOW, "slideshow on/off (-S SECONDS; default 3 s)", NULL},
    {VA_ZOOM_IN, "zoom in at the cursor", NULL},
    {VA_ZOOM_OUT, "zoom out at the cursor", NULL},
    {VA_FIT, "fit to window", NULL},
    {VA_ONE, "1:1 (100%)", NULL},
    {VA_PAN_LEFT, "pan left (or drag)", NULL},
    {VA_PAN_DOWN, "pan down", NULL},
    {VA_PAN_UP, "pan up", NULL},
    {VA_PAN_RIGHT, "pan right", NULL},
    {VA_FULLSCREEN, "fullscreen", NULL},
    {VA_OP_BLUR, "toggle gauss:5 blur", "gauss:5"},
    {VA_OP_SHARPEN, "toggle sharpen", "sharpen"},
    {VA_OP_EDGE, "toggle edges (Sobel)", "edge"},
    {VA_OP_EQUALIZE, "toggle equalize", "equalize"},
    {VA_OP_ROT_CW, "toggle rotate:90 (cw)", "rotate:90"},
    {VA_OP_ROT_CCW, "toggle rotate:270 (ccw)", "rotate:270"},
    {VA_OP_TRANSPOSE, "toggle transpose", "transpose"},
    {VA_OP_FLOP, "toggle flop (mirror)", "flop"},
    {VA_OP_FLIP, "toggle flip (upside down)", "flip"},
    {VA_SELECT_NEXT, "select the next op", NULL},
    {VA_SELECT_PREV, "select the previous op", NULL},
    {VA_VARIANT_NEXT, "its next variant", NULL},
    {VA_VARIANT_PREV, "its previous variant", NULL},
    {VA_REMOVE, "remove the selected op", NULL},
    {VA_COMPARE, "split view before | after", NULL},
    {VA_HUD, "HUD: status line, info panel, off", NULL},
    {VA_LIVE, "live: re-run every frame (HUD shown)", NULL},
    {VA_BENCH, "measure speedups now", NULL},
    {VA_SAVE, "save NAME.tessera.png", NULL},
    {VA_THUMBS, "thumbnails; there: open the selected image", NULL},
    {VA_HELP, "this help", NULL},
    {VA_ESCAPE, "close this help, else quit", NULL},
    {VA_QUIT, "quit", NULL},
};

#define COUNT(a) (sizeof (a) / sizeof (a)[0])

/* Decodes one UTF-8 character of s[0..len); returns its length, 0 if malformed. */
static size_t utf8_decode(const char *s, size_t len, int *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = u[0] < 0x80 ? 1 : (u[0] >> 5) == 6 ? 2 : (u[0] >> 4) == 14 ? 3 : (u[0] >> 3) == 30 ? 4 : 0;
    if (n == 0 || n > len)
        return 0;
    int c = n == 1 ? u[0] : u[0] & (0x7f >> n);
    for (size_t i = 1; i < n; i++) {
        if ((u[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (u[i] & 0x3f);
    }
    *cp = c;
    return n;
}

static size_t utf8_encode(int c, char *out)
{
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xc0 | (c >> 6));
        out[1] = (char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xe0 | (c >> 12));
        out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        out[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (c >> 18));
    out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
    out[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

int vw_key_parse(const char *name, size_t len, vw_key *k)
{
    k->code = 0;
    k->ctrl = 0;
    if (len > 5 && strncasecmp(name, "Ctrl+", 5) == 0) {
        k->ctrl = 1;
        name += 5;
        len -= 5;
    }
    if (len == 0)
        return -1;
    for (size_t i = 0; i < COUNT(names); i++)
        if (strlen(names[i].name) == len && strncasecmp(names[i].name, name, len) == 0) {
            k->code = names[i].code;
            return 0;
        }
    int cp;
    if (utf8_decode(name, len, &cp) != len || cp < 0x20 || cp == 0x7f || cp == ',')
        return -1;
    /* Ctrl folds case, as SDL reports Ctrl+S and Ctrl+s alike */
    k->code = k->ctrl && cp >= 'A' && cp <= 'Z' ? cp - 'A' + 'a' : cp;
    return 0;
}

int vw_keys_parse(const char *list, vw_key **keys, char *err, size_t errlen)
{
    size_t cap = 1;
    for (const char *p = list; *p; p++)
        cap += *p == ',';
    *keys = xcalloc(cap, sizeof **keys);
    int n = 0;
    const char *p = list;
    for (;;) {
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        const char *a = p, *b = end;
        while (a < b && (*a == ' ' || *a == '\t'))
            a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
            b--;
        if (vw_key_parse(a, (size_t)(b - a), &(*keys)[n]) != 0) {
            snprintf(err, errlen, "key %d '%.*s': %s", n + 1, (int)(b - a), a,
                     a == b ? "empty (write a comma as 'comma')"
                            : "unknown (a character, Tab, Left, Ctrl+s, plus, ... see --help)");
            free(*keys);
            *keys = NULL;
            return -1;
        }
        n++;
        if (!*end)
            return n;
        p = end + 1;
    }
}

int vw_key_from_text(const char *utf8, vw_key *k)
{
    int cp;
    size_t len = strlen(utf8);
    if (!len || !utf8_decode(utf8, len, &cp) || cp < 0x20 || cp == 0x7f)
        return -1;
    k->code = cp;
    k->ctrl = 0;
    return 0;
}

void vw_key_name(vw_key k, char *buf, size_t len)
{
    char name[16];
    const char *s = NULL;
    int named = k.code >= VK_SPECIAL || k.code == ' ' || k.code == '+' || k.code == '-' ||
                k.code == ',';
    for (size_t i = 0; i < COUNT(names) && named && !s; i++)
        if (names[i].code == k.code)
            s = names[i].name;
    if (!s && k.code > 0 && k.code < VK_SPECIAL) {
        name[utf8_encode(k.code, name)] = '\0';
        s = name;
    }
    snprintf(buf, len, "%s%s", k.ctrl ? "Ctrl+" : "", s ? s : "?");
}

vw_action vw_key_action(vw_key k)
{
    for (size_t i = 0; i < COUNT(bindings); i++)
        if (bindings[i].key.code == k.code && bindings[i].key.ctrl == (k.ctrl != 0))
            return bindings[i].action;
    return VA_NONE;
}

int vw_help_line(int i, char *keys, size_t klen, const char **what)
{
    if (i < 0 || (size_t)i >= COUNT(actions))
        return 0;
    keys[0] = '\0';
    for (size_t b = 0; b < COUNT(bindings); b++) {
        if (bindings[b].action != actions[i].action)
            continue;
        char name[32];
        vw_key_name(bindings[b].key, name, sizeof name);
        size_t used = strlen(keys);
        snprintf(keys + used, klen - used, "%s%s", used ? " " : "", name);
    }
    *what = actions[i].what;
    return 1;
}

const char *vw_action_op(vw_action a)
{
    for (size_t i = 0; i < COUNT(actions); i++)
        if (actions[i].action == a)
            return actions[i].op;
    return NULL;
}

/* "gauss:5:1.1" -> "gauss" */
static void op_name(const char *text, char *name, size_t len)
{
    size_t n = strcspn(text, ":");
    snprintf(name, len, "%.*s", (int)n, text);
}

/* The same kind of op for a toggle key: same name; rotations must also have the same angle. */
static int same_kind(const ts_op *a, const ts_op *b)
{
    char na[32], nb[32];
    op_name(a->text, na, sizeof na);
    op_name(b->text, nb, sizeof nb);
    if (strcmp(na, nb) != 0)
        return 0;
    return strcmp(na, "rotate") != 0 || strcmp(a->text, b->text) == 0;
}

int vw_chain_toggle(ts_chain *c, const char *op_text, int *sel)
{
    char err[256];
    ts_op *op = xmalloc(sizeof *op); /* ~16 KB: the filter weights */
    int added = -1;
    if (ts_op_parse(op_text, op, err, sizeof err) != TS_OK) {
        ts_fail(TS_ERR_INVALID, "%s", err);
        goto done;
    }
    for (int i = c->n - 1; i >= 0; i--)
        if (same_kind(&c->ops[i], op)) {
            ts_chain_remove(c, i);
            if (*sel > i)
                (*sel)--;
            if (*sel >= c->n)
                *sel = c->n - 1;
            added = 0;
            goto done;
        }
    if (ts_chain_append(c, op) == TS_OK) {
        *sel = c->n - 1;
        added = 1;
    }
done:
    free(op);
    return added;
}

static int runs_here(const ts_variant *v, const ts_device *dev)
{
    return dev ? ts_variant_is_gpu(v) && ts_variant_runnable(v, dev) : !ts_variant_is_gpu(v);
}

const ts_variant *vw_variant_cycle(const ts_op *op, const ts_device *dev, int dir)
{
    const ts_variant *list[64];
    int n = 0, cur = 0;
    ts_family f = ts_op_family(op->kind);
    list[n++] = NULL; /* auto */
    for (size_t i = 0; i < ts_variant_count() && n < (int)COUNT(list); i++) {
        const ts_variant *v = ts_variant_at(i);
        if (v->family == f && runs_here(v, dev)) {
            if (v == op->variant)
                cur = n;
            list[n++] = v;
        }
    }
    return list[((cur + (dir < 0 ? -1 : 1)) % n + n) % n];
}
