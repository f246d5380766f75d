/*
 * paths.h - paths and command lines built whole, file and folder tests (paths.c).
 */
#ifndef LOCKBENCH_PATHS_H
#define LOCKBENCH_PATHS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * snprintf that refuses to truncate: paths and command lines must be whole.
 * On truncation it says so on stderr and exits 1.
 */
void lb_pathf(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
bool lb_is_file(const char *path);
bool lb_is_dir(const char *path);
/* The folder this program lives in (build/), "." when unknown. */
void lb_exe_dir(char *out, size_t len);

#endif
