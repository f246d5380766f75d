/*
 * paths.c - paths and command lines built whole, file and folder tests (paths.h).
 */
#include "paths.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void lb_pathf(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "lockbench: name too long: %.60s...\n", out);
		exit(1);
	}
}

bool lb_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool lb_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void lb_exe_dir(char *out, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", out, len - 1);
	if (n <= 0) {
		lb_pathf(out, len, ".");
		return;
	}
	out[n] = 0;
	char *slash = strrchr(out, '/');
	if (slash && slash != out)
		*slash = 0;
}
