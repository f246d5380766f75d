/* fsutil.c - see fsutil.h. */
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

int fs_mkdirs(const char *path)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = 0;
			if (mkdir(tmp, 0755) && errno != EEXIST)
				return -1;
			*p = '/';
		}
	}
	return mkdir(tmp, 0755) && errno != EEXIST ? -1 : 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP || flag == FTW_D || flag == FTW_DNR)
		return rmdir(path) && errno != ENOENT ? -1 : 0;
	return unlink(path) && errno != ENOENT ? -1 : 0;
}

int fs_remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	return nftw(path, remove_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

static uid_t chown_uid;
static gid_t chown_gid;

static int chown_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)flag;
	(void)ftw;
	if (st->st_uid == chown_uid && st->st_gid == chown_gid)
		return 0;
	return lchown(path, chown_uid, chown_gid) && errno != ENOENT ? -1 : 0;
}

int fs_chown_tree(const char *path, uid_t uid, gid_t gid)
{
	chown_uid = uid;
	chown_gid = gid;
	return nftw(path, chown_one, 32, FTW_PHYS | FTW_MOUNT);
}

int fs_copy_file(const char *from, const char *to)
{
	char tmp[4200], buf[65536];
	int in = -1, out = -1, rc = -1;
	ssize_t r;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", to) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	in = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (in < 0)
		goto out;
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0755);
	if (out < 0)
		goto out;
	while ((r = read(in, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0; off < r;) {
			ssize_t w = write(out, buf + off, (size_t)(r - off));
			if (w <= 0)
				goto out;
			off += w;
		}
	if (r < 0 || close(out)) {
		out = -1;
		goto out;
	}
	out = -1;
	rc = rename(tmp, to);
out:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (rc)
		unlink(tmp);
	return rc;
}

static const char *copy_from, *copy_to;
static bool copy_dirs_only;

/* Set dst's modification and access times to st's. */
static int copy_times(const char *dst, const struct stat *st)
{
	struct timespec ts[2] = {st->st_atim, st->st_mtim};
	return utimensat(AT_FDCWD, dst, ts, AT_SYMLINK_NOFOLLOW);
}

static int copy_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	char dst[8192], link[4096];
	(void)ftw;
	if (snprintf(dst, sizeof(dst), "%s%s", copy_to, path + strlen(copy_from)) >=
	    (int)sizeof(dst)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (flag == FTW_DP) /* the second pass: a folder's time after what went into it */
		return chmod(dst, st->st_mode & 07777) || copy_times(dst, st) ? -1 : 0;
	if (copy_dirs_only)
		return 0;
	if (flag == FTW_D)
		return mkdir(dst, 0700);
	if (flag == FTW_SL) {
		ssize_t n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			return -1;
		link[n] = 0;
		return symlink(link, dst) || copy_times(dst, st) ? -1 : 0;
	}
	if (flag != FTW_F || !S_ISREG(st->st_mode))
		return 0; /* sockets, fifos, devices: nothing a build keeps */
	if (fs_copy_file(path, dst) || chmod(dst, st->st_mode & 07777))
		return -1;
	return copy_times(dst, st);
}

int fs_copy_tree(const char *from, const char *to)
{
	copy_from = from;
	copy_to = to;
	copy_dirs_only = false;
	if (nftw(from, copy_one, 32, FTW_PHYS | FTW_MOUNT))
		return -1;
	copy_dirs_only = true;
	return nftw(from, copy_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

static struct timespec date_to[2];

static int date_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return utimensat(AT_FDCWD, path, date_to, AT_SYMLINK_NOFOLLOW) && errno != ENOENT ? -1 : 0;
}

int fs_date_tree(const char *path, const struct timespec *when)
{
	date_to[0] = *when;
	date_to[1] = *when;
	return nftw(path, date_one, 32, FTW_PHYS | FTW_MOUNT);
}

int fs_date_paths(const char *dir, const char *list, size_t len, const struct timespec *when)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), bad = 0;
	struct timespec ts[2];
	if (dfd < 0)
		return 1;
	if (when) {
		ts[0] = *when;
		ts[1] = *when;
	} else {
		ts[0].tv_sec = ts[1].tv_sec = 0;
		ts[0].tv_nsec = ts[1].tv_nsec = UTIME_NOW;
	}
	for (size_t off = 0; off < len;) {
		const char *p = list + off;
		size_t l = strnlen(p, len - off);
		if (l && utimensat(dfd, p, ts, AT_SYMLINK_NOFOLLOW) && errno != ENOENT)
			bad++;
		off += l + 1;
	}
	close(dfd);
	return bad;
}

int fs_probe_space(const char *dir, size_t size)
{
	char path[4200];
	struct statvfs vfs;
	int fd;

	/* writable: a file can be made (EROFS, EACCES); nothing is written, so
	 * an idle agent asking before each claim costs the disk nothing */
	snprintf(path, sizeof(path), "%s/.locklab-space-probe", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	close(fd);
	unlink(path);
	if (statvfs(dir, &vfs))
		return -1;
	if ((unsigned long long)vfs.f_bavail * vfs.f_frsize < size) {
		errno = ENOSPC;
		return -1;
	}
	return 0;
}
