/* test_walk.c - the directory walker (app/common/walk.c): name order, depth first; bounded on
 * any tree: each folder once (device and inode), symlinks to folders not followed below the root,
 * the skipped folder (the batch's output inside its input) never entered. */
#include "testutil.h"

#include "walk.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static void mk(const char *rel, int dir)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    if (dir) {
        CHECKF(mkdir(p, 0755) == 0, "mkdir %s", p);
    } else {
        FILE *f = fopen(p, "w");
        CHECKF(f != NULL, "create %s", p);
        if (f)
            fclose(f);
    }
}

static void link_to(const char *target, const char *rel)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    CHECKF(symlink(target, p) == 0, "symlink %s", p);
}

static void fresh_root(void)
{
    snprintf(root, sizeof root, "/tmp/tessera_walk_XXXXXX");
    CHECK(mkdtemp(root) != NULL);
}

static void rm_root(void)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0);
}

/* The walk's entries as "K:rel" lines (F file, E error, L link to a folder, S seen, D a
 * subfolder left out). */
static void walk_all(const walk_opts *o, char *out, size_t cap, int *count)
{
    walk *w = walk_open(root, o);
    walk_entry e;
    size_t used = 0;
    *count = 0;
    out[0] = '\0';
    while (w && walk_next(w, &e)) {
        static const char k[] = "FELSD";
        used += (size_t)snprintf(out + used, used < cap ? cap - used : 0, "%c:%s\n", k[e.kind],
                                 e.rel);
        (*count)++;
        if (*count > 100000)
            break;
    }
    walk_close(w);
}

TEST(walk_name_order_depth_first_hidden_passed_over)
{
    fresh_root();
    mk("b", 1), mk("b/y.png", 0), mk("a.png", 0), mk("c.png", 0), mk(".hidden.png", 0);
    mk("b/a", 1), mk("b/a/z.png", 0);
    char out[4096];
    int n;
    walk_opts o = {.recursive = 1};
    walk_all(&o, out, sizeof out, &n);
    CHECKF(strcmp(out, "F:a.png\nF:b/a/z.png\nF:b/y.png\nF:c.png\n") == 0, "got\n%s", out);
    o.recursive = 0;
    walk_all(&o, out, sizeof out, &n);
    CHECKF(strcmp(out, "F:a.png\nD:b\nF:c.png\n") == 0, "without -r\n%s", out);
    rm_root();
}

TEST(walk_symlinked_folders_not_followed_lattice_bounded)
{
    /* 16 levels of two links each to the next level: a walk following links would see 2^16 */
    fresh_root();
    mk("l0", 1);
    mk("l0/x.png", 0);
    for (int i = 0; i < 16; i++) {
        char d[32], a[160], b[160], t[64];
        snprintf(d, sizeof d, "l%d", i + 1);
        mk(d, 1);
        snprintf(t, sizeof t, "x%d.png", i + 1);
        snprintf(a, sizeof a, "%s/%s", d, t);
        mk(a, 0);
        snprintf(a, sizeof a, "l%d/a", i), snprintf(b, sizeof b, "l%d/b", i);
        snprintf(t, sizeof t, "../l%d", i + 1);
        link_to(t, a), link_to(t, b);
    }
    link_to("..", "l0/up"); /* and a loop */
    link_to("l0/x.png", "file_link.png"); /* a link to a file is a file */
    char out[65536];
    int n;
    walk_opts o = {.recursive = 1};
    walk_all(&o, out, sizeof out, &n);
    /* 17 folders with one image each, the file link, and 2 x 16 + 1 folder links not followed */
    int files = 0, links = 0;
    for (const char *p = out; *p; p = strchr(p, '\n') + 1)
        files += *p == 'F', links += *p == 'L';
    CHECKF(files == 18 && links == 33, "files %d, links %d (%d entries)", files, links, n);
    rm_root();
}

TEST(walk_each_folder_once_and_the_skipped_folder_never)
{
    fresh_root();
    mk("in", 1), mk("in/a.png", 0), mk("in/out", 1), mk("in/out/a.png", 0);
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/in/out", root);
    struct stat sb;
    CHECK(stat(p, &sb) == 0);
    char out[4096];
    int n;
    walk_opts o = {.recursive = 1, .has_skip = 1, .skip_dev = sb.st_dev, .skip_ino = sb.st_ino};
    walk_all(&o, out, sizeof out, &n);
    CHECKF(strcmp(out, "F:in/a.png\n") == 0, "the output folder inside the input:\n%s", out);
    /* the skipped folder as the root is walked: the user named it */
    walk *w = walk_open(p, &o);
    walk_entry e;
    CHECK(walk_next(w, &e) == 1 && e.kind == WALK_FILE && strcmp(e.rel, "a.png") == 0);
    walk_close(w);
    rm_root();
}

TEST(walk_proc_self_is_finite)
{
    /* /proc/self/ holds links to / (root, cwd) and to every open file's folder */
    struct stat sb;
    if (stat("/proc/self/", &sb) != 0)
        SKIP("no /proc");
    walk_opts o = {.recursive = 1};
    walk *w = walk_open("/proc/self/", &o);
    walk_entry e;
    long n = 0;
    while (walk_next(w, &e) && n < 2000000)
        n++;
    walk_close(w);
    CHECKF(n > 10 && n < 2000000, "%ld entries", n);
}

TEST(walk_unreadable_root_and_file_root)
{
    fresh_root();
    mk("f.png", 0);
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/missing", root);
    walk *w = walk_open(p, NULL);
    walk_entry e;
    CHECK(walk_next(w, &e) == 1 && e.kind == WALK_ERROR && e.err != 0);
    CHECK(walk_next(w, &e) == 0);
    walk_close(w);
    snprintf(p, sizeof p, "%s/f.png", root);
    w = walk_open(p, NULL);
    CHECK(walk_next(w, &e) == 1 && e.kind == WALK_ERROR);
    walk_close(w);
    rm_root();
}
