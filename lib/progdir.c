/*
 * progdir.c - paths relative to the running program's folder (progdir.h).
 */
#include "progdir.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *progdir_path(const char *rel, char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;
	int w;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	w = snprintf(buf, len, "%s/%s", exe, rel);
	return w >= 0 && (size_t)w < len ? buf : NULL;
}

const char *progdir_existing(const char *rel, char *buf, size_t len)
{
	const char *p = progdir_path(rel, buf, len);

	return p && access(p, F_OK) == 0 ? p : NULL;
}
