/*
 * fsutil.h - the agent's file operations in C (no rm, cp or mv processes):
 * trees it removes may have been written by submitted code, so nothing here
 * follows a symbolic link or crosses into another mount.
 */
#ifndef LOCKLAB_AGENT_FSUTIL_H
#define LOCKLAB_AGENT_FSUTIL_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* mkdir -p; 0 or -1 with errno. */
int fs_mkdirs(const char *path);

/*
 * rm -rf without following symbolic links or leaving the file system of
 * path; a missing path is success.  0 or -1 with errno.
 */
int fs_remove_tree(const char *path);

/*
 * Copy the regular file from to to (mode 0755), through to.tmp and a
 * rename, so a reader never sees half a file.  0 or -1 with errno.
 */
int fs_copy_file(const char *from, const char *to);

/*
 * cp -a of the tree from into to (which must not exist): folders, regular
 * files and symbolic links with their modes and modification times (make
 * compares them), never following a link or leaving from's file system.
 * 0 or -1 with errno (what was copied stays: the caller removes it).
 */
int fs_copy_tree(const char *from, const char *to);

/*
 * Give path and everything under it to uid:gid (symbolic links themselves,
 * never what they point to): what a sandbox that drops root may write.
 */
int fs_chown_tree(const char *path, uid_t uid, gid_t gid);

/*
 * Set the modification and access time of each path in the NUL-separated
 * list (as `git ls-files -z` prints it), relative to dir, without following
 * a symbolic link at the end; when = NULL means now.  Returns how many could
 * not be dated.
 */
int fs_date_paths(const char *dir, const char *list, size_t len, const struct timespec *when);

/*
 * Set the modification and access time of path and everything under it to
 * when, never following a symbolic link or leaving path's file system.  0
 * or -1 with errno.
 */
int fs_date_tree(const char *path, const struct timespec *when);

/*
 * Whether dir takes files now: one can be created (it is removed again) and
 * its file system has size bytes free for this user.  0, or -1 with errno
 * (ENOSPC less than size free, EROFS, EACCES, EDQUOT).
 */
int fs_probe_space(const char *dir, size_t size);

#endif
