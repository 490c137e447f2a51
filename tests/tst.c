/* tst.c - runner of the TEST() functions (see tst.h). */
#include "tst.h"
#include "kernel_file.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TESTS 1024

struct tst_entry {
    const char *file, *name;
    tst_fn fn;
};
static struct tst_entry tests[MAX_TESTS];
static int n_tests, cur_failed, cur_skipped;
static char cur_msg[1024];

void tst_register(const char *file, const char *name, tst_fn fn)
{
    if (n_tests < MAX_TESTS) {
        const char *base = strrchr(file, '/');
        tests[n_tests].file = base ? base + 1 : file;
        tests[n_tests].name = name;
        tests[n_tests].fn = fn;
        n_tests++;
    }
}

void tst_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(cur_msg, sizeof cur_msg, "%s:%d: ", file, line);
    va_start(ap, fmt);
    vsnprintf(cur_msg + n, sizeof cur_msg - (size_t)n, fmt, ap);
    va_end(ap);
    cur_failed = 1;
}

void tst_skip(const char *why)
{
    snprintf(cur_msg, sizeof cur_msg, "%s", why);
    cur_skipped = 1;
}

int tst_failed(void) { return cur_failed; }

static int cmp(const void *a, const void *b)
{
    const struct tst_entry *x = a, *y = b;
    int c = strcmp(x->file, y->file);
    return c ? c : strcmp(x->name, y->name);
}

int main(int argc, char **argv)
{
    int passed = 0, failed = 0, skipped = 0;
    qsort(tests, (size_t)n_tests, sizeof tests[0], cmp);
    app_gpu_env(); /* TESSERA_MAX_CC, TESSERA_GPU_MEM_LIMIT, ... as the program takes them */
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 0; i < n_tests; i++) {
        char id[256];
        snprintf(id, sizeof id, "%s:%s", tests[i].file, tests[i].name);
        int want = argc < 2;
        for (int a = 1; a < argc; a++)
            want = want || strstr(id, argv[a]) != NULL;
        if (!want)
            continue;
        cur_failed = cur_skipped = 0;
        cur_msg[0] = '\0';
        tests[i].fn();
        if (cur_failed) {
            printf("FAIL %s  %s\n", id, cur_msg);
            failed++;
        } else if (cur_skipped) {
            printf("skip %s  (%s)\n", id, cur_msg);
            skipped++;
        } else {
            printf("ok   %s\n", id);
            passed++;
        }
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
