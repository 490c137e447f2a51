/* batch_plan.c - the batch's plan, made before any pixel is decoded: the inputs expanded
 * (directories, -r), every output named (mirroring the input tree under -o DIR), collisions
 * failed up front (two inputs, one output; an output that is an input), then this process's share
 * of the list kept (--shard), and the --report path checked like an image output.
 */
#include "batch.h"
#include "batch_source.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void item_error(item *it, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    free(it->error);
    it->error = app_vformat(fmt, ap);
    va_end(ap);
}

void item_notice(item *it, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    free(it->notice);
    it->notice = app_vformat(fmt, ap);
    va_end(ap);
}

static item *add_item(batch *b, const char *path, const char *key, int from_dir)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        item *grown = realloc(b->items, (size_t)b->cap * sizeof *grown);
        if (!grown) {
            app_warn("out of memory");
            exit(1);
        }
        b->items = grown;
    }
    item *it = &b->items[b->n++];
    memset(it, 0, sizeof *it);
    it->input = xstrdup(path);
    it->key = xstrdup(key);
    it->from_dir = from_dir;
    it->device = -1;
    it->decode_path = "";
    return it;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int batch_collect(batch *b)
{
    batch_source *src = batch_source_args(b->o, b->o->output);
    batch_input in;
    while (src->next(src, &in)) {
        item *it = add_item(b, in.path, in.key, in.from_dir);
        it->error = in.error, in.error = NULL;
        batch_input_free(&in);
    }
    b->skipped = src->skipped;
    b->dirs_skipped = src->dirs_skipped;
    b->skipped_dirs = src->subdirs_skipped;
    src->close(src);
    if (b->n == 0) {
        app_warn("no images found in the inputs");
        return 1;
    }
    return 0;
}

/* The output format of an input: --format, else the input's own, else PNG (with a notice). */
static tsio_format out_format(const app_options *o, const item *it, const char **why)
{
    *why = NULL;
    if (o->format != TSIO_UNKNOWN)
        return o->format;
    tsio_format f = tsio_format_from_name(it->input);
    if (f == TSIO_UNKNOWN) {
        *why = "cannot write this format; writing PNG";
        return TSIO_PNG;
    }
    return f;
}

/* Where an item's output goes under -o DIR: its path under its directory argument (the tree is
 * mirrored, so a/x.jpg and a/b/x.jpg stay apart), or a file argument's name. */
static void name_output(const app_options *o, item *it)
{
    const char *why;
    tsio_format f = out_format(o, it, &why);
    const char *rel = it->from_dir ? it->key : path_base(it->input);
    if (f == tsio_format_from_name(it->input)) {
        it->output = path_join(o->output, rel); /* same format: keep the extension */
    } else {
        char *renamed = path_with_ext(rel, tsio_format_ext(f));
        it->output = path_join(o->output, renamed);
        free(renamed);
    }
    if (why)
        item_notice(it, "%s: %s", it->input, why);
}

static int batch_check_report(const batch *b);

static const batch *sort_batch; /* qsort has no context argument; planning is single-threaded */

static int cmp_output(const void *a, const void *b)
{
    const item *x = &sort_batch->items[*(const int *)a], *y = &sort_batch->items[*(const int *)b];
    int c = strcmp(x->output, y->output);
    return c ? c : *(const int *)a - *(const int *)b;
}

/* Marks collisions in n log n (10,000-file folders): an output that is an input, and an output
 * that an earlier item already claims. */
static void mark_collisions(batch *b)
{
    char **inputs = xcalloc((size_t)b->n, sizeof *inputs);
    int *order = xcalloc((size_t)b->n, sizeof *order);
    int n_in = 0, n_out = 0;
    for (int i = 0; i < b->n; i++) {
        if (b->items[i].real_input)
            inputs[n_in++] = b->items[i].real_input;
        if (!b->items[i].error && b->items[i].output)
            order[n_out++] = i;
    }
    qsort(inputs, (size_t)n_in, sizeof *inputs, cmp_str);
    sort_batch = b;
    qsort(order, (size_t)n_out, sizeof *order, cmp_output);
    for (int k = 0; k < n_out; k++) {
        item *it = &b->items[order[k]];
        char buf[PATH_MAX];
        const char *real_out = realpath(it->output, buf);
        if (real_out && bsearch(&real_out, inputs, (size_t)n_in, sizeof *inputs, cmp_str))
            item_error(it, "%s: output %s would overwrite an input", it->input, it->output);
        else if (k > 0 && strcmp(b->items[order[k - 1]].output, it->output) == 0) {
            int first = k - 1;
            while (first > 0 && strcmp(b->items[order[first - 1]].output, it->output) == 0)
                first--;
            item_error(it, "%s: output %s is already written from %s (use separate -o directories)",
                       it->input, it->output, b->items[order[first]].input);
        }
    }
    for (int i = 0; i < b->n; i++) {
        item *it = &b->items[i];
        if (!it->error && it->output && !b->o->force && path_exists(it->output))
            item_error(it, "%s: exists (use --force)", it->output);
    }
    free(inputs);
    free(order);
}

static void free_item(item *it)
{
    free(it->input);
    free(it->output);
    free(it->key);
    free(it->real_input);
    free(it->error);
    free(it->notice);
    ts_chain_free(&it->chain);
    tsio_meta_free(&it->meta_out);
}

/* Keeps the items whose key hashes to this shard. The hash of the key alone (not its place in the
 * list) decides, so adding or removing files moves no other file to another shard. */
static void keep_shard(batch *b)
{
    const app_options *o = b->o;
    int kept = 0;
    for (int i = 0; i < b->n; i++) {
        if (hash_fnv1a64(b->items[i].key) % (uint64_t)o->shard_n == (uint64_t)o->shard_k)
            b->items[kept++] = b->items[i];
        else
            free_item(&b->items[i]);
    }
    b->n = kept;
}

int batch_plan(batch *b)
{
    const app_options *o = b->o;
    size_t len = strlen(o->output);
    int names_file = !path_is_dir(o->output) && tsio_format_from_name(o->output) != TSIO_UNKNOWN &&
                     o->output[len - 1] != '/';
    int file_mode = names_file && b->n == 1;
    if (names_file && b->n > 1) {
        app_warn("-o %s names a file, but the inputs hold %d images (give -o a directory)",
                o->output, b->n);
        return 2;
    }
    if (file_mode && o->format != TSIO_UNKNOWN && o->format != tsio_format_from_name(o->output)) {
        app_warn("-o %s: --format %s does not match the file's extension (see tessera --help)",
                o->output, tsio_format_ext(o->format));
        return 2;
    }
    if (!file_mode && !path_is_dir(o->output)) {
        int e = path_mkdirs(o->output, &b->made_output_dir);
        if (e) {
            app_warn("%s: cannot create the output directory: %s", o->output, strerror(e));
            return 1;
        }
        if (b->made_output_dir && !o->quiet)
            app_warn("%s: output directory created", o->output);
    }
    for (int i = 0; i < b->n; i++) {
        item *it = &b->items[i];
        char buf[PATH_MAX];
        if (realpath(it->input, buf))
            it->real_input = xstrdup(buf);
        if (it->error)
            continue;
        if (file_mode)
            it->output = xstrdup(o->output);
        else
            name_output(o, it);
    }
    mark_collisions(b); /* over the whole list, so every shard fails the same files */
    int rc = batch_check_report(b);
    if (rc)
        return rc;
    if (o->shard_n)
        keep_shard(b);
    return 0;
}

/* realpath of the directory + the last name: one spelling for a file that may not exist yet. */
static char *canonical(const char *path)
{
    char buf[PATH_MAX];
    const char *base = path_base(path);
    char *dir = base == path ? xstrdup(".") : app_format("%.*s", (int)(base - path), path);
    char *out = realpath(dir, buf) ? path_join(buf, base) : xstrdup(path);
    free(dir);
    return out;
}

static int batch_check_report(const batch *b)
{
    const char *r = b->o->report;
    struct stat sb;
    char buf[PATH_MAX];
    if (!r)
        return 0;
    if (!*path_base(r)) {
        app_warn("--report %s: no file name", r);
        return 2;
    }
    if (stat(r, &sb) == 0) {
        const char *real = realpath(r, buf);
        for (int i = 0; i < b->n && real; i++)
            if (b->items[i].real_input && strcmp(b->items[i].real_input, real) == 0) {
                app_warn("--report %s: is an input of this batch", r);
                return 2;
            }
        if (!S_ISREG(sb.st_mode)) {
            app_warn("--report %s: not a regular file", r);
            return 2;
        }
        if (!b->o->force) {
            app_warn("--report %s: exists (use --force)", r);
            return 2;
        }
    } else if (errno != ENOENT) {
        app_warn("--report %s: %s", r, strerror(errno));
        return 2;
    } else {
        /* its folder must be there now, not found missing once the whole batch has run */
        const char *base = path_base(r);
        char *dir = base == r ? xstrdup(".") : app_format("%.*s", (int)(base - r), r);
        int e = path_stat_errno(dir), is_dir = path_is_dir(dir);
        free(dir);
        if (e || !is_dir) {
            app_warn("--report %s: %s", r, strerror(e ? e : ENOTDIR));
            return 2;
        }
    }
    char *want = canonical(r);
    int clash = 0;
    for (int i = 0; i < b->n && !clash; i++)
        if (b->items[i].output) {
            char *out = canonical(b->items[i].output);
            clash = strcmp(out, want) == 0;
            free(out);
        }
    free(want);
    if (clash) {
        app_warn("--report %s: is an output of this batch", r);
        return 2;
    }
    return 0;
}

void batch_free_items(batch *b)
{
    for (int i = 0; i < b->n; i++)
        free_item(&b->items[i]);
    free(b->items);
    b->items = NULL;
    b->n = 0;
}
