/* batch_plan.c - the batch's plan, made as the inputs arrive and before any pixel of an input is
 * decoded: each input from the source (batch_source.h) is given its output (mirroring the input
 * tree under -o DIR), checked (two inputs, one output; an output that is an input or the report;
 * an existing output without --force), kept when it is this process's --shard, and put in the
 * ring of items (batch.h) for the workers. The --report path is checked once, at the start.
 *
 * Memory: the ring holds a fixed number of items whatever the batch's length; what grows with
 * the number of files is the claim set, 24 bytes a file (two 64-bit hashes of the output path and
 * the claimant's place), which finds an output claimed twice among a million files in O(1).
 */
#include "batch.h"
#include "batch_source.h"
#include "batch_stream.h"
#include "photo.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

item *batch_item(const batch *b, long seq)
{
    return &b->ring[seq % b->ring_cap];
}

/* ---------------------------------------------------------------- the claim set */

/* Two independent 64-bit hashes of a path: a false "claimed twice" needs both to collide
 * (~2^-128 a pair). Empty slots are all zero; h2 is never 0. */
typedef struct claim {
    uint64_t h1, h2;
    long seq; /* the claimant's item (-1: an input of another shard) */
} claim;

struct claim_set {
    claim *t;
    size_t n, cap;
};

static uint64_t hash2(const char *s)
{
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 31;
    }
    return h | 1;
}

/* Claims `path` for item `seq`: -2 when it was free, else the earlier claimant's seq (-1: one
 * of another shard), which keeps the claim. */
static long claim_path(claim_set *c, const char *path, long seq)
{
    if (2 * (c->n + 1) > c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 1024;
        claim *t = xcalloc(cap, sizeof *t);
        for (size_t i = 0; i < c->cap; i++) {
            if (!c->t[i].h2)
                continue;
            size_t j = c->t[i].h1 & (cap - 1);
            while (t[j].h2)
                j = (j + 1) & (cap - 1);
            t[j] = c->t[i];
        }
        free(c->t);
        c->t = t, c->cap = cap;
    }
    uint64_t h1 = hash_fnv1a64(path), h2 = hash2(path);
    size_t j = h1 & (c->cap - 1);
    while (c->t[j].h2) {
        if (c->t[j].h1 == h1 && c->t[j].h2 == h2)
            return c->t[j].seq;
        j = (j + 1) & (c->cap - 1);
    }
    c->t[j] = (claim){h1, h2, seq};
    c->n++;
    return -2;
}

/* ---------------------------------------------------------------- inputs from the source */

typedef struct pending {
    batch_input in[2]; /* taken ahead at the start: the first two inputs at most */
    int n, at;
} pending;

/* The next input: 1, 0 at the end, -1 when the source has none yet. */
static int pull(batch *b, batch_input *in)
{
    pending *p = b->pending;
    if (p && p->at < p->n) {
        *in = p->in[p->at++];
        return 1;
    }
    return b->src->next(b->src, in);
}

/* The output format of an input: --format, else the input's own, else PNG (with a notice). */
static tsio_format out_format(const app_options *o, const char *input, const char **why)
{
    *why = NULL;
    if (o->format != TSIO_UNKNOWN)
        return o->format;
    tsio_format f = tsio_format_from_name(input);
    if (f == TSIO_UNKNOWN) {
        *why = "cannot write this format; writing PNG";
        return TSIO_PNG;
    }
    return f;
}

/* Where an input's output goes under -o DIR: its path under its directory argument (the tree is
 * mirrored, so a/x.jpg and a/b/x.jpg stay apart), or a file argument's name. Heap. */
static char *output_of(const batch *b, const char *input, const char *key, int from_dir,
                       const char **why)
{
    const app_options *o = b->o;
    *why = NULL;
    if (b->file_mode)
        return xstrdup(o->output);
    tsio_format f = out_format(o, input, why);
    const char *rel = from_dir ? key : path_base(input);
    if (f == tsio_format_from_name(input))
        return path_join(o->output, rel); /* same format: keep the extension */
    char *renamed = path_with_ext(rel, tsio_format_ext(f));
    char *out = path_join(o->output, renamed);
    free(renamed);
    return out;
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

/* Whether the file at real path `real` is an input of this batch (given or to come). */
static int is_input(const batch *b, const char *real)
{
    return b->src->names && b->src->names(b->src, real);
}

/* The checks of one output, in the order of their messages: an output that is an input (its
 * own, or one the source gives), two inputs with one output, the report, an existing file. */
static void check_output(batch *b, item *it, long prior)
{
    char bo[PATH_MAX], bi[PATH_MAX];
    if (path_exists(it->output)) {
        const char *real_out = realpath(it->output, bo);
        const char *real_in = realpath(it->input, bi);
        if (real_out && ((real_in && strcmp(real_out, real_in) == 0) || is_input(b, real_out))) {
            item_error(it, "%s: output %s would overwrite an input", it->input, it->output);
            return;
        }
    }
    if (prior != -2) {
        const item *first = prior >= b->retired && prior < b->pulled ? batch_item(b, prior) : NULL;
        item_error(it, "%s: output %s is already written from %s (use separate -o directories)",
                   it->input, it->output, first ? first->input : "an earlier input");
        return;
    }
    if (b->report_canon &&
        strcmp(path_base(it->output), path_base(b->report_canon)) == 0) {
        char *c = canonical(it->output);
        int same = strcmp(c, b->report_canon) == 0;
        free(c);
        if (same) {
            item_error(it, "%s: output %s is the --report file", it->input, it->output);
            return;
        }
    }
    if (!b->o->force && path_exists(it->output)) {
        if (b->o->skip_existing)
            it->skipped = 1;
        else
            item_error(it, "%s: exists (use --force, or --skip-existing to leave it)", it->output);
    }
}

/* Plans one input: its output claimed (whatever its shard, so every shard fails the same files),
 * then, when it is this shard's, put in the ring (the caller made room). */
static void plan_one(batch *b, batch_input *in)
{
    const app_options *o = b->o;
    /* the key's hash alone (not its place in the list) decides, so adding or removing files
     * moves no other file to another shard */
    int mine = !o->shard_n || hash_fnv1a64(in->key) % (uint64_t)o->shard_n == (uint64_t)o->shard_k;
    const char *why = NULL;
    char *output = in->error ? NULL : output_of(b, in->path, in->key, in->from_dir, &why);
    long prior = output ? claim_path(b->claims, output, mine ? b->pulled : -1) : -2;
    if (!mine) {
        free(output);
        batch_input_free(in);
        return;
    }
    item *it = batch_item(b, b->pulled);
    memset(it, 0, sizeof *it);
    it->seq = b->pulled++;
    b->n++;
    it->input = in->path;
    it->key = in->key;
    it->from_dir = in->from_dir;
    it->error = in->error;
    memset(in, 0, sizeof *in);
    it->output = output;
    it->device = -1;
    it->decode_path = "";
    it->chain = &b->chain;
    it->orientation = 1;
    if (why)
        item_notice(it, "%s: %s", it->input, why);
    if (!it->error)
        check_output(b, it, prior);
    if (it->error || it->skipped) {
        it->state = IT_DONE;
        b->finished++;
    } else {
        it->state = IT_PLANNED;
    }
}

void batch_fill(batch *b)
{
    while (!b->src_done && b->pulled - b->retired < b->ring_cap) {
        batch_input in;
        int r = pull(b, &in);
        if (r < 0)
            break;
        if (r == 0) {
            b->src_done = 1;
            break;
        }
        plan_one(b, &in);
    }
}

/* ---------------------------------------------------------------- the start */

static int check_report(batch *b);

/* Creates and removes a temp file in folder `dir`, as every output is first written: 0, or -1
 * after saying why not. */
static int probe_writable(const char *dir)
{
    char *probe = path_join(dir, ".tessera-probe"), tmp[PATH_MAX + 64], err[256];
    int slot;
    int fd = tsio_temp_open(probe, tmp, sizeof tmp, &slot);
    int e = errno;
    if (fd >= 0) {
        close(fd);
        tsio_temp_finish(tmp, probe, 0, 0, slot, err, sizeof err);
    }
    free(probe);
    if (fd < 0) {
        app_warn("%s: cannot write there: %s", dir, strerror(e));
        return -1;
    }
    return 0;
}

int batch_start(batch *b)
{
    const app_options *o = b->o;
    size_t len = strlen(o->output);
    int names_file = !path_is_dir(o->output) && tsio_format_from_name(o->output) != TSIO_UNKNOWN &&
                     o->output[len - 1] != '/';
    if (names_file && o->format != TSIO_UNKNOWN &&
        o->format != tsio_format_from_name(o->output)) {
        app_warn("-o %s: --format %s does not match the file's extension (see tessera --help)",
                o->output, tsio_format_ext(o->format));
        return 2;
    }
    /* the output folder first: the walk of an input tree that holds it must know to leave it */
    if (!names_file && !path_is_dir(o->output)) {
        int e = path_mkdirs(o->output, &b->made_output_dir);
        if (e) {
            app_warn("%s: cannot create the output directory: %s", o->output, strerror(e));
            return 1;
        }
    }
    /* a folder that cannot take the outputs fails now, in one line, not once per image after
     * each was decoded and processed */
    if (!names_file && probe_writable(o->output) != 0)
        return 1;
    if (o->files_from && names_file) {
        app_warn("-o %s: --files-from writes into a folder: give -o a directory", o->output);
        return 2;
    }
    b->src = o->files_from ? batch_source_stream(o, &b->lock, &b->wake, 8 * o->jobs)
                           : batch_source_args(o, names_file ? NULL : o->output);
    if (!b->src)
        return 2;
    /* the first inputs (two for -o FILE: it takes one image only), waiting for a slow source */
    pending *p = xcalloc(1, sizeof *p);
    b->pending = p;
    pthread_mutex_lock(&b->lock);
    while (!o->files_from && p->n < (names_file ? 2 : 1)) { /* a stream starts before its first line */
        int r = b->src->next(b->src, &p->in[p->n]);
        if (r == 0)
            break;
        if (r > 0)
            p->n++;
        else
            pthread_cond_wait(&b->wake, &b->lock);
    }
    pthread_mutex_unlock(&b->lock);
    if (p->n == 0 && !o->files_from) {
        app_warn("no images found in the inputs");
        if (b->made_output_dir)
            rmdir(o->output);
        return 1;
    }
    if (names_file && p->n > 1) {
        app_warn("-o %s names a file, but the inputs hold several images (give -o a directory)",
                 o->output);
        return 2;
    }
    b->file_mode = names_file;
    if (b->made_output_dir && !o->quiet)
        app_warn("%s: output directory created", o->output);
    int rc = check_report(b);
    if (rc)
        return rc;
    /* room for the images in flight (2 a worker) and, well beyond them, for those done and
     * waiting for an earlier one to retire */
    b->ring_cap = 8 * o->jobs > 256 ? 8 * o->jobs : 256;
    b->ring = xcalloc((size_t)b->ring_cap, sizeof *b->ring);
    b->claims = xcalloc(1, sizeof *b->claims);
    batch_fill(b);
    return 0;
}

static int check_report(batch *b)
{
    const char *r = b->o->report;
    struct stat sb;
    char buf[PATH_MAX], fb[PATH_MAX];
    if (!r)
        return 0;
    if (!*path_base(r)) {
        app_warn("--report %s: no file name", r);
        return 2;
    }
    if (stat(r, &sb) == 0) {
        const char *real = realpath(r, buf);
        int input = real && is_input(b, real);
        for (int i = 0; i < b->o->n_inputs && real && !input; i++) {
            const char *f = realpath(b->o->inputs[i], fb);
            input = f && strcmp(f, real) == 0;
        }
        if (input) {
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
    /* the outputs of the file arguments are known now: one of them is refused before any work;
     * an image found in a folder that would land on it fails alone (check_output) */
    b->report_canon = canonical(r);
    for (int i = 0; i < b->o->n_inputs; i++) {
        const char *in = b->o->inputs[i], *why;
        if (path_is_dir(in))
            continue;
        char *out = output_of(b, in, in, 0, &why);
        char *c = canonical(out);
        int clash = strcmp(c, b->report_canon) == 0;
        free(c);
        free(out);
        if (clash) {
            app_warn("--report %s: is an output of this batch", r);
            return 2;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- chains */

ts_status batch_chain_for(batch *b, const tsio_meta *meta, item *it)
{
    int o = b->o->no_auto_orient ? 1 : photo_orientation(meta);
    it->chain = &b->chain;
    it->orientation = 1;
    if (o < 2 || o > 8 || !photo_orient_text(o))
        return TS_OK;
    ts_status st = TS_OK;
    pthread_mutex_lock(&b->chain_lock);
    if (!b->oriented[o].ops) {
        int got;
        st = photo_chain(meta, 1, &b->chain, &b->oriented[o], &got);
        if (st == TS_OK && got != o) /* cannot happen: the op is the orientation's */
            st = ts_fail(TS_ERR_INVALID, "EXIF orientation %d has no op", o);
        if (st != TS_OK)
            ts_chain_free(&b->oriented[o]);
    }
    pthread_mutex_unlock(&b->chain_lock);
    if (st == TS_OK) {
        it->chain = &b->oriented[o];
        it->orientation = o;
    }
    return st;
}

/* ---------------------------------------------------------------- the end */

static void free_item(item *it)
{
    free(it->input);
    free(it->output);
    free(it->key);
    free(it->error);
    free(it->notice);
    tsio_meta_free(&it->meta_out);
    memset(it, 0, sizeof *it);
}

void batch_end(batch *b)
{
    for (int i = 0; i < b->ring_cap; i++)
        free_item(&b->ring[i]);
    free(b->ring);
    b->ring = NULL;
    pending *p = b->pending;
    for (int i = 0; p && i < p->n; i++)
        if (i >= p->at)
            batch_input_free(&p->in[i]);
    free(p);
    b->pending = NULL;
    if (b->claims)
        free(b->claims->t);
    free(b->claims);
    b->claims = NULL;
    for (long i = 0; i < b->n_errors; i++)
        free(b->errors[i]);
    free(b->errors);
    b->errors = NULL;
    for (int o = 0; o < 9; o++)
        ts_chain_free(&b->oriented[o]);
    if (b->src)
        b->src->close(b->src);
    b->src = NULL;
    free(b->report_canon);
    b->report_canon = NULL;
    free(b->report_tmp);
    b->report_tmp = NULL;
}

void batch_item_release(item *it)
{
    free_item(it);
}
