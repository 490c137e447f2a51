/* walk.h - the one directory walker of the application: a lazy iterator over the files under a
 * folder, in name order, depth first. Only the folders on the current path are held in memory
 * (each one's sorted names), never the whole tree, so a walk of a million files costs the size of
 * its largest folder.
 *
 * Bounded on any tree: every folder is entered at most once (by device and inode, so bind mounts
 * and hard-linked folders are not walked twice), a symbolic link to a folder is not followed during
 * the descent (only the root may be one: the user named it), and one folder may be left out (the
 * batch's output folder when it lies inside the input tree, so a run never reads its own outputs
 * back). `-r /proc/self/` and lattices of links to folders stay finite.
 */
#ifndef TS_WALK_H
#define TS_WALK_H

#include <sys/types.h>

typedef enum walk_kind {
    WALK_FILE,      /* anything that is not a folder (a symlink to a file included) */
    WALK_ERROR,     /* a folder that cannot be read (err); the walk goes on */
    WALK_LINK_DIR,  /* a symlink to a folder met during the descent: not followed */
    WALK_SEEN_DIR,  /* a folder already walked (same device and inode): not entered again */
    WALK_SUBDIR,    /* a subfolder (or a link to one) left out: the walk is not recursive */
} walk_kind;

typedef struct walk_entry {
    walk_kind kind;
    const char *path; /* root + "/" + rel; valid until the next walk_next */
    const char *rel;  /* the path under the root ("" for the root itself) */
    int err;          /* WALK_ERROR: an errno */
} walk_entry;

typedef struct walk_opts {
    int recursive;    /* enter subfolders (else each is a WALK_SUBDIR entry) */
    int max_depth;    /* folders deeper than this below the root are not entered; 0: 64 */
    int has_skip;     /* skip_dev/skip_ino name a folder never entered (not the root itself) */
    dev_t skip_dev;
    ino_t skip_ino;
} walk_opts;

typedef struct walk walk;

/* A walk of `root` (a folder, or a symlink to one). NULL only when memory is gone. A root that
 * cannot be read is the walk's first entry (WALK_ERROR). */
walk *walk_open(const char *root, const walk_opts *opts);
/* The next entry: 1, or 0 when the walk is over. Names starting with '.' are passed over. */
int walk_next(walk *w, walk_entry *e);
void walk_close(walk *w);

#endif
