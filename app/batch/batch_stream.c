/* batch_stream.c - --files-from and --jsonl: the batch as a warm process that a worker (a Ray
 * actor, Spark's rdd.pipe, xargs, GNU parallel --pipe) feeds paths for its whole life.
 *
 * The input is read by a thread of its own: a read(2) on a pipe blocks until the writer sends
 * more, and the batch's workers must go on converting (and a worker that waited for a line
 * holding the batch lock would stall the others). The thread splits the bytes into lines
 * (newline, or NUL with -0) and queues at most `cap` of them; the workers take them through
 * stream_take under the batch lock and are woken on the batch's condition variable.
 *
 * Every line gets exactly one record on stdout (a worker counts on it to match its requests):
 * a bad line (a NUL byte in a newline-separated list, longer than STREAM_MAX_LINE) is reported,
 * never fatal; empty lines are skipped without a record.
 */
#include "batch_stream.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct stream_in {
    int fd, own_fd, nul;
    int stop_r, stop_w; /* a pipe: stream_close writes a byte to wake a reader waiting in poll */
    pthread_t thread;
    int started;
    pthread_mutex_t *lock;
    pthread_cond_t *wake, room; /* room: the reader waits for space in the queue */
    stream_line *q;
    int head, count, cap;
    int done;    /* the reader reached the end (or an error) */
    int stop;    /* stream_close asks the reader to end */
    int err;     /* errno of a failed read */
    long lines;  /* lines read so far */
};

/* Queues one line, waiting for room (the lock taken here). 0, or -1 when asked to stop. */
static int enqueue(stream_in *s, char *path, char *error)
{
    pthread_mutex_lock(s->lock);
    while (s->count == s->cap && !s->stop)
        pthread_cond_wait(&s->room, s->lock);
    if (s->stop) {
        pthread_mutex_unlock(s->lock);
        free(path);
        free(error);
        return -1;
    }
    s->q[(s->head + s->count++) % s->cap] = (stream_line){path, error, ++s->lines};
    pthread_cond_broadcast(s->wake);
    pthread_mutex_unlock(s->lock);
    return 0;
}

/* A line of `len` bytes (more than `keep` when it was too long, only `keep` of them kept). */
static int emit(stream_in *s, const char *buf, size_t keep, size_t len, int has_nul)
{
    if (len == 0)
        return 0; /* an empty line: nothing asked, nothing answered */
    if (len > STREAM_MAX_LINE)
        return enqueue(s, app_format("%.*s...", 200, buf),
                       app_format("line of %zu bytes: a path is at most %d", len,
                                  STREAM_MAX_LINE));
    if (has_nul) /* the path is cut at its NUL: say so rather than open another file */
        return enqueue(s, app_format("%.*s", (int)keep, buf),
                       xstrdup("a NUL byte in the line (-0 reads NUL-separated paths)"));
    return enqueue(s, app_format("%.*s", (int)len, buf), NULL);
}

static void *reader(void *arg)
{
    stream_in *s = arg;
    char chunk[65536], line[STREAM_MAX_LINE + 1];
    size_t len = 0;   /* bytes of the current line seen, kept or not */
    int has_nul = 0;
    char delim = s->nul ? '\0' : '\n';
    for (;;) {
        /* a pipe whose writer never closes: wait for data or for stream_close's byte */
        struct pollfd pf[2] = {{s->fd, POLLIN, 0}, {s->stop_r, POLLIN, 0}};
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            s->err = errno;
            break;
        }
        if (pf[1].revents)
            return NULL; /* asked to stop */
        ssize_t got = read(s->fd, chunk, sizeof chunk);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got <= 0) {
            if (got < 0)
                s->err = errno;
            break;
        }
        for (ssize_t i = 0; i < got; i++) {
            char c = chunk[i];
            if (c == delim) {
                if (emit(s, line, len < STREAM_MAX_LINE ? len : STREAM_MAX_LINE, len, has_nul))
                    return NULL;
                len = 0;
                has_nul = 0;
                continue;
            }
            if (c == '\0')
                has_nul = 1;
            if (len < STREAM_MAX_LINE)
                line[len] = c;
            len++;
        }
    }
    if (len) /* the last line without its newline */
        emit(s, line, len < STREAM_MAX_LINE ? len : STREAM_MAX_LINE, len, has_nul);
    pthread_mutex_lock(s->lock);
    s->done = 1;
    pthread_cond_broadcast(s->wake);
    pthread_mutex_unlock(s->lock);
    return NULL;
}

stream_in *stream_open(const char *name, int nul, int cap, pthread_mutex_t *lock,
                       pthread_cond_t *wake)
{
    stream_in *s = xcalloc(1, sizeof *s);
    s->nul = nul;
    s->lock = lock;
    s->wake = wake;
    s->cap = cap > 0 ? cap : 1;
    s->q = xcalloc((size_t)s->cap, sizeof *s->q);
    pthread_cond_init(&s->room, NULL);
    s->stop_r = s->stop_w = -1;
    int pfd[2];
    if (pipe(pfd) != 0) {
        app_warn("--files-from: %s", strerror(errno));
        stream_close(s);
        return NULL;
    }
    s->stop_r = pfd[0], s->stop_w = pfd[1];
    if (strcmp(name, "-") == 0) {
        s->fd = 0;
    } else {
        s->fd = open(name, O_RDONLY | O_CLOEXEC);
        if (s->fd < 0) {
            app_warn("--files-from %s: %s", name, strerror(errno));
            stream_close(s);
            return NULL;
        }
        s->own_fd = 1;
    }
    if (pthread_create(&s->thread, NULL, reader, s) != 0) {
        app_warn("--files-from: cannot start the reader thread");
        stream_close(s);
        return NULL;
    }
    s->started = 1;
    return s;
}

int stream_take(stream_in *s, stream_line *ln)
{
    if (s->count) {
        *ln = s->q[s->head];
        s->head = (s->head + 1) % s->cap;
        s->count--;
        pthread_cond_signal(&s->room);
        return 1;
    }
    return s->done ? -1 : 0;
}

int stream_error(const stream_in *s)
{
    return s->err;
}

void stream_close(stream_in *s)
{
    if (!s)
        return;
    if (s->started) {
        pthread_mutex_lock(s->lock);
        s->stop = 1;
        pthread_cond_broadcast(&s->room);
        pthread_mutex_unlock(s->lock);
        /* a reader waiting in poll on a pipe whose writer never closes wakes on this byte */
        if (write(s->stop_w, "x", 1) < 0) {
            /* the pipe is ours and empty: cannot fail */
        }
        pthread_join(s->thread, NULL);
    }
    if (s->stop_r >= 0)
        close(s->stop_r), close(s->stop_w);
    if (s->own_fd)
        close(s->fd);
    for (int i = 0; i < s->count; i++) {
        free(s->q[(s->head + i) % s->cap].path);
        free(s->q[(s->head + i) % s->cap].error);
    }
    pthread_cond_destroy(&s->room);
    free(s->q);
    free(s);
}

char *stream_output_key(const char *line)
{
    const char *p = line;
    if (p[0] == '/')
        return xstrdup(path_base(line));
    for (const char *c = p; *c;) { /* any ".." component: keep the name alone */
        size_t n = strcspn(c, "/");
        if (n == 2 && c[0] == '.' && c[1] == '.')
            return xstrdup(path_base(line));
        c += n;
        while (*c == '/')
            c++;
    }
    while (p[0] == '.' && p[1] == '/') { /* ./a.jpg -> a.jpg */
        p += 2;
        while (*p == '/')
            p++;
    }
    return xstrdup(p);
}

/* ---------------------------------------------------------------- JSON */

typedef struct sbuf {
    char *s;
    size_t len, cap;
} sbuf;

static void put(sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *grown = realloc(b->s, cap);
        if (!grown) {
            app_warn("out of memory");
            exit(1);
        }
        b->s = grown, b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void puts_(sbuf *b, const char *s)
{
    put(b, s, strlen(s));
}

/* The length of a valid UTF-8 sequence at s (1..4), or 0 when the bytes there are not one
 * (overlong forms, surrogates and values past U+10FFFF included). */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    int n;
    unsigned min, v;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, min = 0x80, v = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, min = 0x800, v = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, min = 0x10000, v = c & 0x07;
    else
        return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    return n;
}

static void put_string(sbuf *b, const char *s)
{
    if (!s) {
        puts_(b, "null");
        return;
    }
    puts_(b, "\"");
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        char esc[16];
        int n = utf8_len(p);
        if (n == 0) { /* a byte that is not UTF-8: Python's surrogateescape form */
            snprintf(esc, sizeof esc, "\\udc%02x", *p);
            puts_(b, esc);
            p++;
            continue;
        }
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\', esc[1] = (char)*p;
            put(b, esc, 2);
        } else if (*p < 0x20 || *p == 0x7f) {
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            puts_(b, esc);
        } else {
            put(b, (const char *)p, (size_t)n);
        }
        p += n;
    }
    puts_(b, "\"");
}

void stream_write_record(FILE *f, const char *input, const char *output, const char *status,
                         const char *error, double ms, const char *device)
{
    sbuf b = {0};
    char num[64];
    puts_(&b, "{\"input\": ");
    put_string(&b, input);
    puts_(&b, ", \"output\": ");
    put_string(&b, output);
    puts_(&b, ", \"status\": ");
    put_string(&b, status);
    puts_(&b, ", \"error\": ");
    put_string(&b, error);
    snprintf(num, sizeof num, ", \"ms\": %.2f, \"device\": ", ms >= 0 ? ms : 0.0);
    puts_(&b, num);
    put_string(&b, device);
    puts_(&b, "}\n");
    fwrite(b.s, 1, b.len, f);
    fflush(f);
    free(b.s);
}

/* ---------------------------------------------------------------- the batch's hooks */

typedef struct stream_source {
    batch_source s;
    stream_in *in;
    int said_error;
} stream_source;

/* A line as the batch's input: its output mirrors stream_output_key under -o DIR. */
static int stream_next(batch_source *src, batch_input *in)
{
    stream_source *ss = (stream_source *)src;
    stream_line ln;
    int r = stream_take(ss->in, &ln);
    if (r <= 0) {
        if (r < 0 && stream_error(ss->in) && !ss->said_error) {
            ss->said_error = 1;
            app_warn("--files-from: reading stopped: %s", strerror(stream_error(ss->in)));
        }
        return r < 0 ? 0 : -1;
    }
    memset(in, 0, sizeof *in);
    in->path = ln.path;
    in->key = stream_output_key(ln.path);
    in->from_dir = 1;
    if (ln.error) {
        in->error = app_format("%s: line %ld: %s", ln.path, ln.no, ln.error);
        free(ln.error);
    } else if (path_is_dir(ln.path)) {
        in->error = app_format("%s: a folder (--files-from takes image files, one a line)",
                               ln.path);
    }
    return 1;
}

static void stream_source_close(batch_source *src)
{
    stream_source *ss = (stream_source *)src;
    stream_close(ss->in);
    free(ss);
}

batch_source *batch_source_stream(const app_options *o, pthread_mutex_t *lock,
                                  pthread_cond_t *wake, int queue)
{
    stream_in *in = stream_open(o->files_from, o->files_nul, queue, lock, wake);
    if (!in)
        return NULL;
    stream_source *ss = xcalloc(1, sizeof *ss);
    ss->s.next = stream_next;
    ss->s.close = stream_source_close;
    ss->in = in;
    return &ss->s;
}

void batch_jsonl_item(const batch *b, const item *it)
{
    /* --skip-existing: the output is there, whole, from an earlier run */
    const char *status = it->skipped ? "skipped" : it->ok ? "ok" : "error";
    char dev[32];
    const char *device = NULL;
    if (it->device >= 0 && it->device < b->n_devs) {
        int id = b->devs[it->device].id;
        if (id < 0)
            snprintf(dev, sizeof dev, "cpu");
        else
            snprintf(dev, sizeof dev, "cuda:%d", id);
        device = dev;
    }
    /* the error without the "INPUT: " its line starts with: the record names the input */
    const char *err = it->ok || it->skipped ? NULL : it->error ? it->error : "not done";
    size_t n = strlen(it->input);
    if (err && strncmp(err, it->input, n) == 0 && err[n] == ':' && err[n + 1] == ' ')
        err += n + 2;
    stream_write_record(stdout, it->input, it->ok || it->skipped ? it->output : NULL, status, err,
                        it->total_ms, device);
}
