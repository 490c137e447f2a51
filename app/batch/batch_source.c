/* batch_source.c - the command line's inputs as a source (batch_source.h): file arguments as
 * named, folder arguments walked one entry at a time (walk.h). */
#include "batch_source.h"
#include "image_io.h"
#include "util.h"
#include "walk.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

typedef struct args_source {
    batch_source s;
    const app_options *o;
    int arg;         /* the next argument */
    walk *w;         /* the folder argument being walked; NULL: none */
    int found;       /* inputs the current folder argument gave */
    walk_opts wo;
    char *skip_real; /* the skipped folder's real path; NULL: none */
} args_source;

void batch_input_free(batch_input *in)
{
    free(in->path);
    free(in->key);
    free(in->error);
    memset(in, 0, sizeof *in);
}

/* Extensions of image formats that tessera does not read: named in an error rather than skipped
 * without a word, since the user surely meant them. */
static const char *unreadable_format(const char *name)
{
    static const char *const known[][2] = {
        {"webp", "WebP"}, {"tif", "TIFF"},  {"tiff", "TIFF"}, {"heic", "HEIC"},
        {"heif", "HEIF"}, {"avif", "AVIF"}, {"jxl", "JPEG XL"}, {"jp2", "JPEG 2000"},
        {"j2k", "JPEG 2000"}, {"ico", "ICO"}, {"svg", "SVG"}, {"exr", "OpenEXR"},
        {"dng", "DNG raw"}, {"cr2", "Canon raw"}, {"nef", "Nikon raw"}, {"arw", "Sony raw"}};
    const char *ext = path_ext(name);
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcasecmp(ext, known[i][0]) == 0)
            return known[i][1];
    return NULL;
}

static void set_input(batch_input *in, const char *path, const char *key, int from_dir)
{
    memset(in, 0, sizeof *in);
    in->path = xstrdup(path);
    in->key = xstrdup(key);
    in->from_dir = from_dir;
}

/* The next input of the folder being walked: 1, or 0 when its walk is over. */
static int next_in_dir(args_source *a, batch_input *in)
{
    walk_entry e;
    while (walk_next(a->w, &e)) {
        const char *fmt;
        switch (e.kind) {
        case WALK_ERROR:
            set_input(in, e.path, e.rel, 1);
            in->error = app_format("%s: %s", e.path, strerror(e.err));
            return 1;
        case WALK_SUBDIR:
            a->s.subdirs_skipped++;
            continue;
        case WALK_LINK_DIR:
        case WALK_SEEN_DIR:
            a->s.dirs_skipped++;
            continue;
        case WALK_FILE:
            if (tsio_is_image_name(e.path)) {
                set_input(in, e.path, e.rel, 1);
                return 1;
            }
            if ((fmt = unreadable_format(e.path)) != NULL) {
                set_input(in, e.path, e.rel, 1);
                in->error = app_format("%s: %s is not supported", e.path, fmt);
                return 1;
            }
            a->s.skipped++;
            continue;
        }
    }
    return 0;
}

static int args_next(batch_source *s, batch_input *in)
{
    args_source *a = (args_source *)s;
    const app_options *o = a->o;
    for (;;) {
        if (a->w) {
            if (next_in_dir(a, in)) {
                a->found++;
                return 1;
            }
            walk_close(a->w);
            a->w = NULL;
            if (!a->found) {
                const char *dir = o->inputs[a->arg - 1];
                set_input(in, dir, dir, 0);
                in->error = app_format("%s: a directory without images%s", dir,
                                       o->recursive ? "" : " (-r descends into subdirectories)");
                return 1;
            }
        }
        if (a->arg >= o->n_inputs)
            return 0;
        const char *path = o->inputs[a->arg++];
        if (path_is_dir(path)) {
            a->w = walk_open(path, &a->wo);
            if (!a->w) {
                app_warn("out of memory");
                exit(1);
            }
            a->found = 0;
            continue;
        }
        set_input(in, path, path, 0);
        int e = path_stat_errno(path); /* ELOOP for a symlink loop, not "No such file" */
        if (e)
            in->error = app_format("%s: %s", path, strerror(e));
        return 1;
    }
}

/* An argument names `real` when it is that file, or a folder above it (its top level only
 * without -r) and `real` is an image by name. */
static int args_names(batch_source *s, const char *real)
{
    args_source *a = (args_source *)s;
    char buf[PATH_MAX];
    if (!tsio_is_image_name(real))
        return 0;
    if (a->skip_real) { /* the output folder is never walked */
        size_t n = strlen(a->skip_real);
        if (strncmp(a->skip_real, real, n) == 0 && real[n] == '/')
            return 0;
    }
    for (int i = 0; i < a->o->n_inputs; i++) {
        const char *r = realpath(a->o->inputs[i], buf);
        if (!r)
            continue;
        size_t n = strlen(r);
        if (strcmp(r, real) == 0)
            return 1;
        const char *rest = n == 1 ? real + 1 : real + n + 1; /* the root "/" ends in its slash */
        if (path_is_dir(r) && strncmp(r, real, n) == 0 && (real[n] == '/' || n == 1) &&
            (a->o->recursive || !strchr(rest, '/')))
            return 1;
    }
    return 0;
}

static void args_close(batch_source *s)
{
    args_source *a = (args_source *)s;
    if (a) {
        walk_close(a->w);
        free(a->skip_real);
    }
    free(a);
}

batch_source *batch_source_args(const app_options *o, const char *skip_dir)
{
    args_source *a = xcalloc(1, sizeof *a);
    a->s.next = args_next;
    a->s.close = args_close;
    a->s.names = args_names;
    a->o = o;
    a->wo.recursive = o->recursive;
    struct stat sb;
    if (skip_dir && stat(skip_dir, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        a->wo.has_skip = 1;
        a->wo.skip_dev = sb.st_dev;
        a->wo.skip_ino = sb.st_ino;
        char buf[PATH_MAX];
        if (realpath(skip_dir, buf))
            a->skip_real = xstrdup(buf);
    }
    return &a->s;
}
