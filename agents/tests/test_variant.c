/*
 * test_variant.c - a kept binary's image is hashed once (variant_hash) and
 * reused every round while the file is the one hashed (variant_image); a
 * file that changed, even with its size and mtime put back, is hashed again.
 * The binary is a copy of this test's own executable in a scratch folder.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../fsutil.h"
#include "../job.h"
#include "elfimage.h"

/* an image no file has: seen back only when variant_image did not hash */
static const char sentinel[ELFIMAGE_LEN] =
    "sha256:0000000000000000000000000000000000000000000000000000000000000000";

static struct job job = {.id = 1};
static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s", "/tmp/locklab-test-variant-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return fs_remove_tree(dir);
}

/* v: a copy of this executable, kept and hashed as build.c does */
static void kept(struct variant *v)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "patched");
	snprintf(v->bin, sizeof(v->bin), "%s/lockbench", dir);
	assert_true(n > 0);
	self[n] = 0;
	assert_int_equal(fs_copy_file(self, v->bin), 0);
	variant_hash(&job, v);
}

static void test_hashed_once(void **state)
{
	struct variant v;
	char image[ELFIMAGE_LEN], err[256], want[ELFIMAGE_LEN];

	(void)state;
	kept(&v);
	assert_true(elfimage_valid(v.image));
	assert_int_equal(elfimage_sha256(v.bin, want, err, sizeof(err)), 0);
	assert_string_equal(v.image, want);
	/* every round: the kept image, not a new hash (the sentinel comes back) */
	memcpy(v.image, sentinel, sizeof(sentinel));
	for (int round = 0; round < 3; round++) {
		assert_int_equal(variant_image(&job, &v, image, err, sizeof(err)), 0);
		assert_string_equal(image, sentinel);
	}
}

static void test_changed_file_hashed_again(void **state)
{
	struct variant v;
	char image[ELFIMAGE_LEN], err[256], want[ELFIMAGE_LEN];
	FILE *f;

	(void)state;
	kept(&v);
	memcpy(want, v.image, sizeof(want));
	memcpy(v.image, sentinel, sizeof(sentinel));
	/* a byte more past the sections: a new size, the same loaded image */
	f = fopen(v.bin, "ab");
	assert_non_null(f);
	fputc(0, f);
	fclose(f);
	assert_int_equal(variant_image(&job, &v, image, err, sizeof(err)), 0);
	assert_string_equal(image, want);
}

static void test_mtime_put_back_hashed_again(void **state)
{
	struct variant v;
	char image[ELFIMAGE_LEN], err[256], want[ELFIMAGE_LEN];
	struct timespec tick = {0, 50 * 1000 * 1000};
	struct stat st;
	FILE *f;
	int c;

	(void)state;
	kept(&v);
	memcpy(want, v.image, sizeof(want));
	memcpy(v.image, sentinel, sizeof(sentinel));
	assert_int_equal(stat(v.bin, &st), 0);
	/* past the file system's timestamp granularity, so the write moves ctime */
	nanosleep(&tick, NULL);
	/* the first byte written back as it was, then size and mtime as they were */
	f = fopen(v.bin, "r+b");
	assert_non_null(f);
	c = fgetc(f);
	rewind(f);
	fputc(c, f);
	fclose(f);
	struct timespec times[2] = {st.st_atim, st.st_mtim};
	assert_int_equal(utimensat(AT_FDCWD, v.bin, times, 0), 0);
	assert_int_equal(variant_image(&job, &v, image, err, sizeof(err)), 0);
	assert_string_equal(image, want);
}

static void test_missing_file(void **state)
{
	struct variant v;
	char image[ELFIMAGE_LEN], err[256] = "";

	(void)state;
	kept(&v);
	assert_int_equal(unlink(v.bin), 0);
	assert_int_equal(variant_image(&job, &v, image, err, sizeof(err)), -1);
	assert_non_null(strstr(err, v.bin));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hashed_once),
	    cmocka_unit_test(test_changed_file_hashed_again),
	    cmocka_unit_test(test_mtime_put_back_hashed_again),
	    cmocka_unit_test(test_missing_file),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
