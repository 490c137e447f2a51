/* test_stream.c - batch_stream.c's parts: the --files-from reader on a pipe (lines as they come,
 * NUL-separated, bad lines reported, the last line without its newline), the --jsonl writer's
 * escaping, and where a line's output goes. */
#include "batch_stream.h"
#include "tst.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Takes the next line, waiting for the reader; 1 line, -1 end. */
static int take(stream_in *s, pthread_mutex_t *lock, pthread_cond_t *wake, stream_line *ln)
{
    pthread_mutex_lock(lock);
    int r;
    while ((r = stream_take(s, ln)) == 0)
        pthread_cond_wait(wake, lock);
    pthread_mutex_unlock(lock);
    return r;
}

/* Opens a reader on a pipe (through /dev/fd, so the named-file path is the one tested). */
static stream_in *open_pipe(int fds[2], int nul, pthread_mutex_t *lock, pthread_cond_t *wake)
{
    char name[64];
    if (pipe(fds) != 0)
        return NULL;
    snprintf(name, sizeof name, "/dev/fd/%d", fds[0]);
    stream_in *s = stream_open(name, nul, 2, lock, wake);
    close(fds[0]);
    return s;
}

TEST(stream_lines_as_they_come)
{
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
    int fds[2];
    stream_in *s = open_pipe(fds, 0, &lock, &wake);
    CHECK(s);
    stream_line ln;
    /* a line arrives before the writer closes: the reader hands it over at once */
    CHECK(write(fds[1], "a/b.png\n", 8) == 8);
    CHECK(take(s, &lock, &wake, &ln) == 1);
    CHECK(strcmp(ln.path, "a/b.png") == 0 && !ln.error && ln.no == 1);
    free(ln.path);
    /* an empty line is skipped; a NUL inside a line is a bad line; the last one has no newline */
    static const char rest[] = "\nx\0y.png\nlast.jpg";
    CHECK(write(fds[1], rest, sizeof rest - 1) == (ssize_t)(sizeof rest - 1));
    close(fds[1]);
    CHECK(take(s, &lock, &wake, &ln) == 1);
    CHECK(ln.error && strstr(ln.error, "NUL") && strcmp(ln.path, "x") == 0);
    free(ln.path), free(ln.error);
    CHECK(take(s, &lock, &wake, &ln) == 1);
    CHECK(strcmp(ln.path, "last.jpg") == 0 && !ln.error && ln.no == 3);
    free(ln.path);
    CHECK(take(s, &lock, &wake, &ln) == -1);
    CHECK(stream_error(s) == 0);
    stream_close(s);
}

TEST(stream_nul_separated_and_long_lines)
{
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
    int fds[2];
    stream_in *s = open_pipe(fds, 1, &lock, &wake);
    CHECK(s);
    size_t n = STREAM_MAX_LINE + 10;
    char *buf = malloc(n + 32);
    memcpy(buf, "with\nnewline.png", 17); /* -0: a newline is part of the name, the NUL ends it */
    memset(buf + 17, 'x', n);
    buf[17 + n] = '\0';
    memcpy(buf + 18 + n, "ok.png", 7);
    /* the writer blocks on the pipe while the queue (2 lines) is full: write from here anyway,
     * the reader drains as this thread takes */
    ssize_t total = (ssize_t)(18 + n + 7);
    CHECK(write(fds[1], buf, (size_t)total) == total);
    close(fds[1]);
    free(buf);
    stream_line ln;
    CHECK(take(s, &lock, &wake, &ln) == 1);
    CHECK(strcmp(ln.path, "with\nnewline.png") == 0 && !ln.error);
    free(ln.path);
    CHECK(take(s, &lock, &wake, &ln) == 1);
    CHECKF(ln.error && strstr(ln.error, "at most"), "%s", ln.error ? ln.error : "(none)");
    CHECK(strlen(ln.path) < 300);
    free(ln.path), free(ln.error);
    CHECK(take(s, &lock, &wake, &ln) == 1);
    CHECK(strcmp(ln.path, "ok.png") == 0);
    free(ln.path);
    CHECK(take(s, &lock, &wake, &ln) == -1);
    stream_close(s);
}

TEST(stream_close_while_the_writer_is_open)
{
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
    int fds[2];
    stream_in *s = open_pipe(fds, 0, &lock, &wake);
    CHECK(s);
    CHECK(write(fds[1], "a\nb\nc\nd\n", 8) == 8); /* more than the queue holds */
    stream_close(s); /* neither blocks nor leaks */
    close(fds[1]);
}

TEST(stream_missing_file)
{
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
    CHECK(stream_open("/nonexistent/list.txt", 0, 4, &lock, &wake) == NULL);
}

TEST(stream_output_keys)
{
    static const char *const cases[][2] = {
        {"a.png", "a.png"},         {"photos/a.png", "photos/a.png"},
        {"./photos/a.png", "photos/a.png"}, {".//x/a.png", "x/a.png"},
        {"/abs/a.png", "a.png"},    {"../up/a.png", "a.png"},
        {"x/../../a.png", "a.png"}, {"x/..y/a.png", "x/..y/a.png"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *k = stream_output_key(cases[i][0]);
        CHECKF(strcmp(k, cases[i][1]) == 0, "%s -> %s, want %s", cases[i][0], k, cases[i][1]);
        free(k);
    }
}

TEST(stream_jsonl_escaping)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f);
    stream_write_record(f, "a \"q\" \\ \t\x01\xc3\xa9\xff.png", NULL, "error", "bad\n", 1.5, "cpu");
    fclose(f);
    const char *want = "{\"input\": \"a \\\"q\\\" \\\\ \\u0009\\u0001\xc3\xa9\\udcff.png\", "
                       "\"output\": null, \"status\": \"error\", \"error\": \"bad\\u000a\", "
                       "\"ms\": 1.50, \"device\": \"cpu\"}\n";
    CHECKF(strcmp(text, want) == 0, "got %s", text);
    free(text);
}
