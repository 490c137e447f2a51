/* util.h - small helpers of the application: messages in the `tessera: ...` form, checked
 * allocation, paths. (kernels/ never prints; app/ does, through these.) */
#ifndef TS_UTIL_H
#define TS_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define APP_PROG "tessera"
#define APP_VERSION "0.1.0"

/* "tessera: message\n" on stderr, any length, control characters escaped (app_escape). */
void app_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* `s` with control characters as C escapes (\n, \t, \033, \177), heap: what every one-line
 * message and listing shows of a file name. Other bytes (UTF-8 included) pass unchanged. */
char *app_escape(const char *s);
/* printf into a new heap string of the length it needs. */
char *app_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *app_vformat(const char *fmt, va_list ap);
/* Allocation that cannot fail quietly: prints and exits with 1 when memory is gone (app/ only). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
char *xstrdup(const char *s);
/* The last component of a path ("a/b.png" -> "b.png"); a pointer into `path`. */
const char *path_base(const char *path);
/* The extension without the dot, or "" ("x.tar.gz" -> "gz"); a pointer into `path`. */
const char *path_ext(const char *path);
/* dir + "/" + name, heap. */
char *path_join(const char *dir, const char *name);
/* `name` with its extension replaced by `ext` (added when it has none), heap. */
char *path_with_ext(const char *name, const char *ext);
int path_is_dir(const char *path);
int path_exists(const char *path);
/* 0 when stat(path) succeeds, else its errno (ELOOP for a symlink loop, not ENOENT). */
int path_stat_errno(const char *path);
/* mkdir -p; *created says whether a directory was made. 0 or an errno. */
int path_mkdirs(const char *path, int *created);
/* FNV-1a, 64-bit: a stable hash of a string on every platform and run. */
uint64_t hash_fnv1a64(const char *s);
/* Strict parse of a whole decimal string into [lo, hi]; 0 on success. */
int parse_long(const char *s, long lo, long hi, long *out);
/* Monotonic clock in milliseconds. */
double now_ms(void);
/* CPU time of the calling thread (user + system), milliseconds. */
double thread_cpu_ms(void);
/* Number of online CPUs (at least 1). */
int cpu_count(void);

#endif
