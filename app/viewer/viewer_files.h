/* viewer_files.h - the viewer's file list: what was named on the command line (a directory's
 * images in name order) or dropped on the window, and which one is current (viewer_files.c;
 * no SDL). */
#ifndef TS_VIEWER_FILES_H
#define TS_VIEWER_FILES_H

#include <stdio.h>

typedef struct vw_files {
    char **path;
    int n, cap;
    int cur; /* the file shown (or that failed to load) */
    int missing;       /* paths that do not exist (each named on stderr, left out) */
    int skipped_dirs;  /* subdirectories left out (no `recursive`) */
} vw_files;

/* A file as given (image or not, so that a bad file shows its error instead of vanishing), or a
 * directory's images in name order; `recursive`: its subdirectories' too, depth first. A path
 * that does not exist is named on stderr and left out (counted in `missing`). */
void vw_files_add(vw_files *f, const char *path, int recursive);
/* File names from a stream, one a line (`tessera -`, as nsxiv -i and feh -f); blank lines are
 * skipped. Returns how many were added. */
int vw_files_add_lines(vw_files *f, FILE *in, int recursive);
/* No arguments: the bundled assets, from the working directory or beside the binary. */
void vw_files_add_default(vw_files *f);
/* The index `i` wrapped into the list, as feh does; -1 when it is empty. */
int vw_files_wrap(const vw_files *f, int i);
void vw_files_free(vw_files *f);

#endif
