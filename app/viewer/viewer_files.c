/* viewer_files.c - the viewer's file list: arguments, folders (through app/common/walk.h), stdin and
 * dropped files. Loading is viewer_run.c's. */
#include "viewer_files.h"
#include "image_io.h"
#include "util.h"
#include "walk.h"

#include <errno.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void add_file(vw_files *f, const char *path)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 32;
        char **grown = realloc(f->path, (size_t)f->cap * sizeof *grown);
        if (!grown) {
            app_warn("out of memory");
            exit(1);
        }
        f->path = grown;
    }
    f->path[f->n++] = xstrdup(path);
}

/* A folder's images through the one walker (app/common/walk.h): name order, depth first, each
 * folder once and no link to a folder followed below the root, so a tree of links to itself
 * ends. */
static void add_dir(vw_files *f, const char *path, int recursive)
{
    walk_opts wo = {.recursive = recursive};
    walk *w = walk_open(path, &wo);
    walk_entry e;
    if (!w) {
        app_warn("out of memory");
        exit(1);
    }
    while (walk_next(w, &e)) {
        switch (e.kind) {
        case WALK_FILE:
            if (tsio_is_image_name(e.path))
                add_file(f, e.path);
            break;
        case WALK_SUBDIR: f->skipped_dirs++; break;
        case WALK_ERROR:
            if (!e.rel[0])
                add_file(f, path); /* the folder itself: its error shows when opened */
            else
                app_warn("%s: %s", e.path, strerror(e.err));
            break;
        default: break; /* a link to a folder, or a folder already walked: not entered */
        }
    }
    walk_close(w);
}

void vw_files_add(vw_files *f, const char *path, int recursive)
{
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT) { /* other errors show in the window */
        app_warn("%s: %s", path, strerror(errno));
        f->missing++;
    } else if (path_is_dir(path))
        add_dir(f, path, recursive);
    else
        add_file(f, path);
}

void vw_files_add_default(vw_files *f)
{
    char exe[PATH_MAX];
    if (path_is_dir("assets")) {
        vw_files_add(f, "assets", 0);
        return;
    }
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 16);
    if (n <= 0)
        return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return;
    strcpy(slash, "/../assets"); /* build/tessera -> build/../assets */
    if (path_is_dir(exe))
        vw_files_add(f, exe, 0);
}

int vw_files_add_lines(vw_files *f, FILE *in, int recursive)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int before = f->n;
    while ((len = getline(&line, &cap, in)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len > 0)
            vw_files_add(f, line, recursive);
    }
    free(line);
    return f->n - before;
}

int vw_files_wrap(const vw_files *f, int i)
{
    return f->n ? (i % f->n + f->n) % f->n : -1;
}

void vw_files_free(vw_files *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->path[i]);
    free(f->path);
    f->path = NULL;
    f->n = f->cap = 0;
}
