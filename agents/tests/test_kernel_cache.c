/*
 * test_kernel_cache.c - the machine's kernel build cache: keys by commit,
 * fragment and variant; a key's lock held by one holder at a time; a build
 * kept through KEY.tmp; and fs_copy_tree (the move across file systems)
 * keeping modes, times and links, which make's incremental build reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../fsutil.h"
#include "../kernel_cache.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s", "/tmp/locklab-test-kcache-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return fs_remove_tree(dir);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void test_key(void **state)
{
	(void)state;
	char a[256], b[256], c[256];
	const char *rev = "0123456789abcdef0123456789abcdef01234567";
	assert_int_equal(kcache_key(rev, "CONFIG_A=y\n", 11, NULL, a, sizeof(a)), 0);
	/* sha256("CONFIG_A=y\n"), its first 12 hex digits */
	assert_int_equal(strlen(a), 40 + 1 + 12);
	assert_memory_equal(a, rev, 40);
	assert_int_equal(kcache_key(rev, "CONFIG_A=y\n", 11, "", b, sizeof(b)), 0);
	assert_string_equal(a, b);
	assert_int_equal(kcache_key(rev, "CONFIG_A=n\n", 11, NULL, b, sizeof(b)), 0);
	assert_string_not_equal(a, b);
	assert_int_equal(kcache_key(rev, "CONFIG_A=y\n", 11, "debug", c, sizeof(c)), 0);
	assert_memory_equal(c, a, strlen(a));
	assert_string_equal(c + strlen(a), "-debug");
	assert_int_equal(kcache_key(rev, "x", 1, NULL, c, 20), -1);
}

static void test_fragment(void **state)
{
	(void)state;
	char lb[256], out[4200];
	snprintf(lb, sizeof(lb), "%s/build", dir);
	assert_int_equal(fs_mkdirs(lb), 0);
	snprintf(lb, sizeof(lb), "%s/lockbench/kernel", dir);
	assert_int_equal(fs_mkdirs(lb), 0);
	snprintf(out, sizeof(out), "%s/locklab.config", lb);
	put(out, "CONFIG_LOCK_TORTURE_TEST=y\n");
	unsetenv("LOCKLAB_KERNEL_DIR");
	snprintf(lb, sizeof(lb), "%s/build/lockbench", dir);
	assert_int_equal(kcache_fragment(lb, out, sizeof(out)), 0);
	char want[4200];
	snprintf(want, sizeof(want), "%s/build/../lockbench/kernel/locklab.config", dir);
	assert_string_equal(out, want);
	snprintf(lb, sizeof(lb), "%s/elsewhere/lockbench", dir);
	assert_int_equal(kcache_fragment(lb, out, sizeof(out)), -1);
}

static void test_lock(void **state)
{
	(void)state;
	char path[256];
	bool waited = true;
	int fd = kcache_lock(dir, "k1", &waited);
	assert_true(fd >= 0);
	assert_false(waited);
	/* another holder (its own open file) cannot take it meanwhile */
	snprintf(path, sizeof(path), "%s/k1.lock", dir);
	int other = open(path, O_RDWR);
	assert_true(other >= 0);
	assert_int_equal(flock(other, LOCK_EX | LOCK_NB), -1);
	assert_int_equal(errno, EWOULDBLOCK);
	/* another key is another lock */
	int fd2 = kcache_lock(dir, "k2", &waited);
	assert_true(fd2 >= 0);
	close(fd);
	assert_int_equal(flock(other, LOCK_EX | LOCK_NB), 0);
	close(other);
	close(fd2);
}

static int asked;

static bool give_up_third(void *arg)
{
	(void)arg;
	return ++asked >= 3;
}

/* a wait that may end: asked while another holds the key, never otherwise */
static void test_lock_until(void **state)
{
	(void)state;
	bool waited = false;
	int fd = kcache_lock(dir, "k3", &waited);
	assert_true(fd >= 0);
	asked = 0;
	assert_int_equal(kcache_lock_until(dir, "k3", give_up_third, NULL, &waited), -1);
	assert_int_equal(errno, ECANCELED);
	assert_true(waited);
	assert_int_equal(asked, 3);
	close(fd);
	asked = 0;
	int again = kcache_lock_until(dir, "k3", give_up_third, NULL, &waited);
	assert_true(again >= 0);
	assert_false(waited);
	assert_int_equal(asked, 0);
	close(again);
}

static void test_keep(void **state)
{
	(void)state;
	char built[256], dest[256], f[300], tmp[300];
	struct stat st;
	snprintf(built, sizeof(built), "%s/tree/locklab-out", dir);
	snprintf(dest, sizeof(dest), "%s/cache/key", dir);
	assert_int_equal(fs_mkdirs(built), 0);
	snprintf(tmp, sizeof(tmp), "%s.tmp", dest);
	assert_int_equal(fs_mkdirs(tmp), 0); /* a build that died while moving in */
	snprintf(f, sizeof(f), "%s/bzImage", built);
	put(f, "kernel");
	assert_int_equal(kcache_keep(built, dest), 0);
	snprintf(f, sizeof(f), "%s/bzImage", dest);
	assert_int_equal(stat(f, &st), 0);
	assert_int_equal(stat(built, &st), -1);
	assert_int_equal(stat(tmp, &st), -1);
}

static void test_copy_tree(void **state)
{
	(void)state;
	char from[256], to[256], p[400];
	struct stat a, b;
	struct timespec old[2] = {{1000000000, 5}, {1000000000, 5}};
	snprintf(from, sizeof(from), "%s/from", dir);
	snprintf(to, sizeof(to), "%s/to", dir);
	snprintf(p, sizeof(p), "%s/sub/deeper", from);
	assert_int_equal(fs_mkdirs(p), 0);
	snprintf(p, sizeof(p), "%s/sub/main.o", from);
	put(p, "object");
	assert_int_equal(chmod(p, 0640), 0);
	assert_int_equal(utimensat(AT_FDCWD, p, old, 0), 0);
	snprintf(p, sizeof(p), "%s/source", from);
	assert_int_equal(symlink("../linux", p), 0);
	snprintf(p, sizeof(p), "%s/sub", from);
	assert_int_equal(utimensat(AT_FDCWD, p, old, 0), 0);

	assert_int_equal(fs_copy_tree(from, to), 0);
	snprintf(p, sizeof(p), "%s/sub/main.o", to);
	assert_int_equal(stat(p, &b), 0);
	assert_int_equal(b.st_mode & 07777, 0640);
	assert_int_equal(b.st_mtim.tv_sec, 1000000000);
	assert_int_equal(b.st_mtim.tv_nsec, 5);
	snprintf(p, sizeof(p), "%s/sub", to);
	assert_int_equal(stat(p, &b), 0);
	assert_int_equal(b.st_mtim.tv_sec, 1000000000);
	snprintf(p, sizeof(p), "%s/sub/deeper", from);
	assert_int_equal(stat(p, &a), 0);
	snprintf(p, sizeof(p), "%s/sub/deeper", to);
	assert_int_equal(stat(p, &b), 0);
	assert_true(S_ISDIR(b.st_mode));
	assert_int_equal(a.st_mode, b.st_mode);
	char link[64];
	snprintf(p, sizeof(p), "%s/source", to);
	ssize_t n = readlink(p, link, sizeof(link) - 1);
	assert_int_equal(n, 8);
	link[n] = 0;
	assert_string_equal(link, "../linux");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_key),  cmocka_unit_test(test_fragment),
	    cmocka_unit_test(test_lock), cmocka_unit_test(test_lock_until),
	    cmocka_unit_test(test_keep), cmocka_unit_test(test_copy_tree),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
