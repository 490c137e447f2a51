/* batch_source.h - where the batch's inputs come from. A source hands them out one at a time
 * (next), so the batch holds only the inputs it is working on, never the whole list; a new kind
 * of input list (a file of paths, a pipe) is one more source. Internal to the app. */
#ifndef TS_BATCH_SOURCE_H
#define TS_BATCH_SOURCE_H

#include "options.h"

/* One input, as its source names it. The taker owns the strings. */
typedef struct batch_input {
    char *path;   /* heap */
    char *key;    /* heap: the path relative to its argument: the shard hash, and the output's
                     place under -o DIR when from_dir */
    int from_dir; /* found under a folder argument: the output mirrors `key` */
    char *error;  /* heap "PATH: reason" when the input fails as it is named (a folder that cannot
                     be read, a format tessera does not read); NULL */
} batch_input;

typedef struct batch_source batch_source;
struct batch_source {
    /* The next input: 1; 0 when there are no more; -1 when none has come yet (a source reading
     * a pipe: it signals the batch's `wake` when one arrives). Called with the batch's lock held,
     * so it must not block. */
    int (*next)(batch_source *s, batch_input *in);
    /* 1 when the file at real path `real` is (or will be) one of this source's inputs: an
     * output that would overwrite it is refused. NULL: the source cannot tell (a stream). */
    int (*names)(batch_source *s, const char *real);
    void (*close)(batch_source *s);
    /* for the summary */
    int skipped;      /* files under folders that are not images by name */
    int dirs_skipped; /* symlinks to folders and folders already walked: not entered */
    int subdirs_skipped; /* subfolders of folder arguments left out without -r */
};

/* The command line's inputs, in order: a file as named, a folder walked lazily (walk.h; -r enters
 * subfolders) for its images by name; `skip_dir` (NULL, or an output folder that may not exist)
 * is never entered. NULL when memory is gone. */
batch_source *batch_source_args(const app_options *o, const char *skip_dir);
void batch_input_free(batch_input *in);

#endif
