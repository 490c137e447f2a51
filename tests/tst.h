/* tst.h - the smallest test framework that does the job: TEST(name) registers a function,
 * CHECK fails it with the expression and location, SKIP marks it skipped with a reason.
 * build/test_unit [SUBSTRING...] runs the tests whose "file:name" contains any SUBSTRING and ends
 * with "N passed, N failed, N skipped". */
#ifndef TST_H
#define TST_H

#include <stdio.h>

typedef void (*tst_fn)(void);
void tst_register(const char *file, const char *name, tst_fn fn);
void tst_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tst_skip(const char *why);
int tst_failed(void); /* the current test has failed */

#define TEST(name)                                                                                 \
    static void name(void);                                                                        \
    __attribute__((constructor)) static void tst_reg_##name(void)                                  \
    {                                                                                              \
        tst_register(__FILE__, #name, name);                                                       \
    }                                                                                              \
    static void name(void)

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            tst_fail(__FILE__, __LINE__, "%s", #cond);                                             \
            return;                                                                                \
        }                                                                                          \
    } while (0)

/* CHECK with a printf-style explanation. */
#define CHECKF(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            tst_fail(__FILE__, __LINE__, __VA_ARGS__);                                             \
            return;                                                                                \
        }                                                                                          \
    } while (0)

#define SKIP(why)                                                                                  \
    do {                                                                                           \
        tst_skip(why);                                                                             \
        return;                                                                                    \
    } while (0)

#endif
