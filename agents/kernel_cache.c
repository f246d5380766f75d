/* kernel_cache.c - see kernel_cache.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "kernel_cache.h"
#include "sha256.h"
#include "strutil.h"

int kcache_key(const char *rev, const char *fragment, size_t fraglen, const char *variant,
               char *out, size_t len)
{
	char hex[65];
	sha256_hex(fragment, fraglen, hex);
	hex[12] = 0;
	int n = snprintf(out, len, "%s-%s%s%s", rev, hex, variant && *variant ? "-" : "",
	                 variant ? variant : "");
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int kcache_fragment(const char *lockbench, char *out, size_t len)
{
	const char *env = getenv("LOCKLAB_KERNEL_DIR");
	char dir[4096];
	if (env) {
		snprintf(out, len, "%s/locklab.config", env);
		if (!access(out, R_OK))
			return 0;
	}
	snprintf(dir, sizeof(dir), "%s", lockbench);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	snprintf(out, len, "%s/../lockbench/kernel/locklab.config", dir);
	if (!access(out, R_OK))
		return 0;
	snprintf(out, len, "%s/locklab.config", dir);
	return access(out, R_OK) ? -1 : 0;
}

char *kcache_debug_fragment(const char *fragment)
{
	char dbg[4200];
	const char *slash = strrchr(fragment, '/');
	int dirlen = slash ? (int)(slash - fragment + 1) : 0;
	if (snprintf(dbg, sizeof(dbg), "%.*slocklab-debug.config", dirlen, fragment) >=
	    (int)sizeof(dbg))
		return NULL;
	char *a = strutil_file_text(fragment), *b = strutil_file_text(dbg), *both = NULL;
	if (a && b && (both = malloc(strlen(a) + strlen(b) + 1)))
		strcat(strcpy(both, a), b);
	free(a);
	free(b);
	return both;
}

int kcache_lock_until(const char *dir, const char *key, bool (*give_up)(void *), void *arg,
                      bool *waited)
{
	char path[4200];
	*waited = false;
	if (snprintf(path, sizeof(path), "%s/%s.lock", dir, key) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -1;
	for (;;) {
		if (!flock(fd, give_up ? LOCK_EX | LOCK_NB : LOCK_EX))
			return fd;
		if (errno != EINTR && errno != EWOULDBLOCK)
			break;
		if (errno == EWOULDBLOCK)
			*waited = true;
		if (give_up && give_up(arg)) {
			errno = ECANCELED;
			break;
		}
		if (give_up)
			nanosleep(&(struct timespec){.tv_nsec = 200 * 1000 * 1000}, NULL);
	}
	int e = errno;
	close(fd);
	errno = e;
	return -1;
}

int kcache_lock(const char *dir, const char *key, bool *waited)
{
	return kcache_lock_until(dir, key, NULL, NULL, waited);
}

int kcache_keep(const char *built, const char *dest)
{
	char tmp[4200];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", dest) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (fs_remove_tree(tmp))
		return -1;
	if (rename(built, tmp)) {
		if (errno != EXDEV)
			return -1;
		if (fs_copy_tree(built, tmp)) {
			int e = errno;
			fs_remove_tree(tmp);
			errno = e;
			return -1;
		}
		fs_remove_tree(built);
	}
	return rename(tmp, dest);
}
