/* viewer_files.c - the viewer's file list. Directories are read here; loading is viewer_run.c's. */
#include "viewer_files.h"
#include "image_io.h"
#include "util.h"

#include <dirent.h>
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

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_dir_or_file(vw_files *f, const char *path, int recursive, int depth);

void vw_files_add(vw_files *f, const char *path, int recursive)
{
    add_dir_or_file(f, path, recursive, 0);
}

static void add_dir_or_file(vw_files *f, const char *path, int recursive, int depth)
{
    struct stat st;
    if (depth == 0 && stat(path, &st) != 0 && errno == ENOENT) { /* others show in the window */
        app_warn("%s: %s", path, strerror(errno));
        f->missing++;
        return;
    }
    if (!path_is_dir(path)) {
        add_file(f, path);
        return;
    }
    DIR *d = opendir(path);
    if (!d) {
        add_file(f, path); /* shows the error when opened */
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *full = path_join(path, e->d_name);
        int dir = path_is_dir(full);
        if (dir ? !recursive : !tsio_is_image_name(e->d_name)) {
            f->skipped_dirs += dir;
            free(full);
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(names, cap * sizeof *grown);
            if (!grown) {
                app_warn("out of memory");
                exit(1);
            }
            names = grown;
        }
        names[n++] = full;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (!path_is_dir(names[i]))
            add_file(f, names[i]);
        else if (recursive && depth < 64) /* a symlink loop ends here */
            add_dir_or_file(f, names[i], 1, depth + 1);
        free(names[i]);
    }
    free(names);
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
