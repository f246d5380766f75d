/*
 * kernel_cache.h - the machine's build caches: a kernel built once per
 * commit, configuration fragment and variant serves every job of every agent
 * on the machine (--kernel-cache, default /var/cache/locklab/kernels), and so
 * does a base lockbench (--base-cache).  An entry is a folder, KEY; a build
 * takes KEY.lock (flock) first, builds in its own tree, and moves the folder
 * in through KEY.tmp, so a reader sees a whole build or none and two agents
 * never build one KEY together.  build.c uses it for both caches; the keys
 * are its own (kcache_key names kernel builds, measuring and debug).
 */
#ifndef LOCKLAB_AGENT_KERNEL_CACHE_H
#define LOCKLAB_AGENT_KERNEL_CACHE_H

#include <stdbool.h>
#include <stddef.h>

/* the default cache folder, and the per-agent one when that cannot be made */
#define KCACHE_DEFAULT "/var/cache/locklab/kernels"

/*
 * KEY of a build: "REV-CFG" with CFG the first 12 hex digits of the SHA-256
 * of the fragment's text, "-VARIANT" after it unless variant is NULL or "".
 * 0, or -1 when out is too small.
 */
int kcache_key(const char *rev, const char *fragment, size_t fraglen, const char *variant,
               char *out, size_t len);
/*
 * The fragment `lockbench kernel build` of lockbench merges (its own lookup:
 * $LOCKLAB_KERNEL_DIR, then beside the program's checkout) into out; 0 or -1.
 */
int kcache_fragment(const char *lockbench, char *out, size_t len);
/*
 * The debug variant's fragment text: the file fragment, then
 * locklab-debug.config beside it (what `kernel build --debug` merges), for
 * its key.  A new string, or NULL when either cannot be read.
 */
char *kcache_debug_fragment(const char *fragment);
/*
 * Hold the lock of KEY in dir: an open descriptor to close when done, or -1
 * with errno.  *waited says whether another holder made it wait.  While
 * another holds it, give_up(arg) is asked every 200 ms; true ends the wait
 * (-1, errno ECANCELED).  kcache_lock waits for as long as it takes.
 */
int kcache_lock_until(const char *dir, const char *key, bool (*give_up)(void *), void *arg,
                      bool *waited);
int kcache_lock(const char *dir, const char *key, bool *waited);
/*
 * Move the built folder to dest through dest.tmp (a copy, then the
 * original removed, when they are on different file systems).  0 or -1
 * with errno.
 */
int kcache_keep(const char *built, const char *dest);

#endif
