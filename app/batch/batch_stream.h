/* batch_stream.h - the batch as a warm worker: --files-from reads input paths as they arrive (a
 * thread of its own, so a worker never blocks on the pipe), --jsonl writes one JSON record per
 * image as it finishes. Internal to app/batch. */
#ifndef TS_BATCH_STREAM_H
#define TS_BATCH_STREAM_H

#include "batch.h"
#include "batch_source.h"

#include <pthread.h>
#include <stdio.h>

/* The longest path a line may hold; a longer line is reported, not cut. */
#define STREAM_MAX_LINE 4096

/* One line taken from the input: a path to convert, or a bad line with its reason. */
typedef struct stream_line {
    char *path;  /* heap: the line as given (a bad line: its start, for the record's "input") */
    char *error; /* heap: why the line is not a path (NUL in a line, too long); NULL: a path */
    long no;     /* 1-based line number */
} stream_line;

/* The reader: a thread that splits FILE (or stdin for "-") into lines and queues at most `cap` of
 * them, so a slow batch holds back the writer of the pipe instead of buffering without bound. */
typedef struct stream_in stream_in;

/* Opens `name` ("-": stdin) and starts the reader; NULL after saying why. `wake` is signalled
 * (under `lock`, the batch's) whenever a line or the end arrives. */
stream_in *stream_open(const char *name, int nul, int cap, pthread_mutex_t *lock,
                       pthread_cond_t *wake);
/* With `lock` held: 1 and the next line in *ln (the caller owns its strings), 0 when none is
 * queued yet (wait on `wake`), -1 at the end of input (every line taken). */
int stream_take(stream_in *s, stream_line *ln);
/* 0, or the read error that ended the input early (an errno; said once by the caller). */
int stream_error(const stream_in *s);
/* Stops the reader (it may be blocked on a pipe that never closes) and frees. */
void stream_close(stream_in *s);

/* The output path of a --files-from line under -o DIR, without the extension change: a relative
 * path without ".." is mirrored (photos/a.jpg -> DIR/photos/a.jpg, as `rsync --files-from`
 * does), an absolute one or one that climbs keeps its name alone. Heap. */
char *stream_output_key(const char *line);

/* One --jsonl record, written whole with a single write and flushed: {"input", "output", "status"
 * ("ok", "error", "skipped"), "error", "ms", "device"}; output, error and device may be NULL
 * (JSON null). Strings are JSON-escaped; bytes that are not UTF-8 become \udcXX (Python's
 * surrogateescape: os.fsencode gives the path's bytes back). The caller serializes calls. */
void stream_write_record(FILE *f, const char *input, const char *output, const char *status,
                         const char *error, double ms, const char *device);

/* The batch's hooks. --files-from as the batch's source (batch_source.h): each line an input whose
 * output mirrors stream_output_key under -o DIR; a bad line an input that fails with its reason.
 * next() never blocks: -1 while no line is queued (the reader signals `wake`). At most `queue`
 * lines wait read ahead. NULL after saying why. */
batch_source *batch_source_stream(const app_options *o, pthread_mutex_t *lock,
                                  pthread_cond_t *wake, int queue);
/* --jsonl: the record of an item as it retires (written, or failed with its reason). */
void batch_jsonl_item(const batch *b, const item *it);

#endif
