/* walk.c - the lazy directory walker (walk.h). A stack of open folders, each holding its names
 * (one arena, sorted pointers into it, each name's d_type), and a set of the folders entered. */
#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct frame {
    char *dir, *rel;     /* heap */
    char *arena;         /* the names, NUL-separated */
    char **names;        /* sorted, into arena; names[i][-1] is the name's d_type
                            (DT_UNKNOWN when the file system gives none) */
    size_t n, next;
    int depth;
} frame;

typedef struct seen_key {
    dev_t dev;
    ino_t ino;
} seen_key;

struct walk {
    walk_opts o;
    frame *stack;
    int depth, cap;
    seen_key *seen; /* open addressing; ino 0 and dev 0 together mark an empty slot */
    size_t n_seen, cap_seen;
    char *path, *rel; /* the last entry's, heap */
    char *root;
    int started;
};

static uint64_t key_hash(dev_t dev, ino_t ino)
{
    uint64_t h = (uint64_t)ino * 0x9E3779B97F4A7C15ull ^ (uint64_t)dev * 0xC2B2AE3D27D4EB4Full;
    return h ^ (h >> 29);
}

/* Adds (dev, ino); 1 when it was new, 0 when seen before, -1 without memory. */
static int seen_add(walk *w, dev_t dev, ino_t ino)
{
    if (dev == 0 && ino == 0)
        ino = (ino_t)-1; /* keep the empty marker free; no real folder has both 0 */
    if (2 * (w->n_seen + 1) > w->cap_seen) {
        size_t cap = w->cap_seen ? 2 * w->cap_seen : 64;
        seen_key *t = calloc(cap, sizeof *t);
        if (!t)
            return -1;
        for (size_t i = 0; i < w->cap_seen; i++) {
            seen_key k = w->seen[i];
            if (k.dev == 0 && k.ino == 0)
                continue;
            size_t j = key_hash(k.dev, k.ino) & (cap - 1);
            while (t[j].dev || t[j].ino)
                j = (j + 1) & (cap - 1);
            t[j] = k;
        }
        free(w->seen);
        w->seen = t, w->cap_seen = cap;
    }
    size_t j = key_hash(dev, ino) & (w->cap_seen - 1);
    while (w->seen[j].dev || w->seen[j].ino) {
        if (w->seen[j].dev == dev && w->seen[j].ino == ino)
            return 0;
        j = (j + 1) & (w->cap_seen - 1);
    }
    w->seen[j] = (seen_key){dev, ino};
    w->n_seen++;
    return 1;
}

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    int slash = la > 0 && a[la - 1] != '/' && lb > 0;
    char *s = malloc(la + slash + lb + 1);
    if (!s)
        return NULL;
    memcpy(s, a, la);
    if (slash)
        s[la] = '/';
    memcpy(s + la + slash, b, lb + 1);
    return s;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void frame_free(frame *f)
{
    free(f->dir);
    free(f->rel);
    free(f->arena);
    free(f->names);
    memset(f, 0, sizeof *f);
}

/* Reads a folder's names (the folder is closed again at once: a deep walk holds no descriptors)
 * and pushes its frame. Each name sits in the arena after its d_type byte. 0, or an errno. */
static int push_dir(walk *w, const char *dir, const char *rel, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno ? errno : EIO;
    char *arena = NULL;
    size_t used = 0, acap = 0, n = 0;
    int e = 0;
    struct dirent *de;
    for (;;) {
        errno = 0;
        if ((de = readdir(d)) == NULL) {
            e = errno;
            break;
        }
        if (de->d_name[0] == '.')
            continue;
        size_t len = strlen(de->d_name) + 2;
        if (used + len > acap) {
            size_t c = acap ? 2 * acap : 1024;
            while (c < used + len)
                c *= 2;
            char *a = realloc(arena, c);
            if (!a) {
                e = ENOMEM;
                break;
            }
            arena = a, acap = c;
        }
        arena[used] = (char)de->d_type;
        memcpy(arena + used + 1, de->d_name, len - 1);
        used += len;
        n++;
    }
    closedir(d);
    frame f;
    memset(&f, 0, sizeof f);
    if (!e) {
        f.names = malloc((n ? n : 1) * sizeof *f.names);
        f.dir = strdup(dir);
        f.rel = strdup(rel);
        if (!f.names || !f.dir || !f.rel)
            e = ENOMEM;
    }
    if (!e && w->depth == w->cap) {
        int c = w->cap ? 2 * w->cap : 8;
        frame *s = realloc(w->stack, (size_t)c * sizeof *s);
        if (s)
            w->stack = s, w->cap = c;
        else
            e = ENOMEM;
    }
    if (e) {
        free(arena), free(f.names), free(f.dir), free(f.rel);
        return e;
    }
    for (size_t i = 0, at = 0; i < n; i++) {
        f.names[i] = arena + at + 1;
        at += strlen(arena + at + 1) + 2;
    }
    qsort(f.names, n, sizeof *f.names, cmp_name);
    f.arena = arena;
    f.n = n;
    f.depth = depth;
    w->stack[w->depth++] = f;
    return 0;
}

walk *walk_open(const char *root, const walk_opts *opts)
{
    walk *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    if (opts)
        w->o = *opts;
    if (w->o.max_depth <= 0)
        w->o.max_depth = 64;
    w->root = strdup(root);
    if (!w->root) {
        free(w);
        return NULL;
    }
    return w;
}

static int set_entry(walk *w, walk_entry *e, walk_kind kind, char *path, char *rel, int err)
{
    free(w->path);
    free(w->rel);
    w->path = path, w->rel = rel;
    e->kind = kind;
    e->path = path;
    e->rel = rel;
    e->err = err;
    return 1;
}

int walk_next(walk *w, walk_entry *e)
{
    memset(e, 0, sizeof *e);
    if (!w->started) {
        w->started = 1;
        struct stat sb;
        int err = stat(w->root, &sb) != 0 ? errno : !S_ISDIR(sb.st_mode) ? ENOTDIR : 0;
        if (!err && seen_add(w, sb.st_dev, sb.st_ino) < 0)
            err = ENOMEM;
        if (!err)
            err = push_dir(w, w->root, "", 0);
        if (err)
            return set_entry(w, e, WALK_ERROR, strdup(w->root), strdup(""), err);
    }
    while (w->depth > 0) {
        frame *f = &w->stack[w->depth - 1];
        if (f->next == f->n) {
            frame_free(f);
            w->depth--;
            continue;
        }
        size_t i = f->next++;
        char *path = join(f->dir, f->names[i]);
        char *rel = f->rel[0] ? join(f->rel, f->names[i]) : strdup(f->names[i]);
        if (!path || !rel) {
            free(path), free(rel);
            return set_entry(w, e, WALK_ERROR, strdup(f->dir), strdup(f->rel), ENOMEM);
        }
        unsigned char t = (unsigned char)f->names[i][-1];
        int is_dir = t == DT_DIR, is_link = t == DT_LNK;
        struct stat sb;
        if (t == DT_UNKNOWN || is_dir) {
            if (lstat(path, &sb) != 0) { /* gone since the folder was read: passed over */
                free(path), free(rel);
                continue;
            }
            is_dir = S_ISDIR(sb.st_mode);
            is_link = S_ISLNK(sb.st_mode);
        }
        if (is_link) { /* a link to a folder is not followed; to anything else, it is a file */
            struct stat tb;
            if (stat(path, &tb) == 0 && S_ISDIR(tb.st_mode))
                return set_entry(w, e, w->o.recursive ? WALK_LINK_DIR : WALK_SUBDIR, path, rel, 0);
            return set_entry(w, e, WALK_FILE, path, rel, 0);
        }
        if (!is_dir)
            return set_entry(w, e, WALK_FILE, path, rel, 0);
        if (!w->o.recursive)
            return set_entry(w, e, WALK_SUBDIR, path, rel, 0);
        int depth = f->depth + 1;
        if (depth > w->o.max_depth ||
            (w->o.has_skip && sb.st_dev == w->o.skip_dev && sb.st_ino == w->o.skip_ino)) {
            free(path), free(rel);
            continue;
        }
        int fresh = seen_add(w, sb.st_dev, sb.st_ino);
        if (fresh == 0)
            return set_entry(w, e, WALK_SEEN_DIR, path, rel, 0);
        int err = fresh < 0 ? ENOMEM : push_dir(w, path, rel, depth); /* may move the stack */
        if (err)
            return set_entry(w, e, WALK_ERROR, path, rel, err);
        free(path), free(rel);
    }
    return 0;
}

void walk_close(walk *w)
{
    if (!w)
        return;
    while (w->depth > 0)
        frame_free(&w->stack[--w->depth]);
    free(w->stack);
    free(w->seen);
    free(w->path);
    free(w->rel);
    free(w->root);
    free(w);
}
