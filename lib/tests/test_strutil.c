/*
 * test_strutil.c - the tree's one string buffer and file reader
 * (strutil.h): appends, truncation, the capped libcurl sink, whole files.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "strutil.h"

static void test_buf(void **state)
{
	struct strutil_buf b = STRUTIL_BUF_INIT;
	char *s;

	(void)state;
	assert_string_equal(strutil_buf_str(&b), "");
	strutil_buf_add(&b, "owner");
	strutil_buf_addf(&b, " %d waiters", 3);
	strutil_buf_addlen(&b, "\0x", 2);
	assert_int_equal(b.len, 17);
	assert_memory_equal(b.buf, "owner 3 waiters\0x", 18);
	strutil_buf_truncate(&b, 5);
	assert_string_equal(strutil_buf_str(&b), "owner");
	strutil_buf_truncate(&b, 99); /* longer than the string: nothing */
	assert_int_equal(b.len, 5);
	strutil_buf_addch(&b, '!', 2);
	s = strutil_buf_detach(&b);
	assert_string_equal(s, "owner!!");
	assert_null(b.buf);
	free(s);
}

/* As libcurl calls it: chunks until one would pass max, which is refused whole. */
static void test_capped(void **state)
{
	struct strutil_capped c = {STRUTIL_BUF_INIT, 10, false};
	char chunk[8] = "abcdefg";

	(void)state;
	assert_int_equal(strutil_capped_write(chunk, 1, 4, &c), 4);
	assert_int_equal(strutil_capped_write(chunk, 2, 3, &c), 6);
	assert_false(c.too_big);
	assert_int_equal(c.buf.len, 10);
	assert_int_equal(strutil_capped_write(chunk, 1, 1, &c), 0);
	assert_true(c.too_big);
	assert_int_equal(c.buf.len, 10);
	assert_string_equal(c.buf.buf, "abcdabcdef");
	c.too_big = false;
	assert_int_equal(strutil_capped_write(chunk, SIZE_MAX / 2 + 1, 2, &c), 0); /* overflow */
	assert_true(c.too_big);
	strutil_buf_release(&c.buf);
}

static void test_files(void **state)
{
	char path[] = "/tmp/locklab-strutil.XXXXXX";
	struct strutil_buf b = STRUTIL_BUF_INIT;
	int fd = mkstemp(path);
	char *s;

	(void)state;
	assert_true(fd >= 0);
	s = strutil_file_text(path);
	assert_non_null(s); /* an empty file is "" */
	assert_string_equal(s, "");
	free(s);
	assert_int_equal(write(fd, "a\0b\n", 4), 4);
	close(fd);
	assert_int_equal(strutil_read_file(path, &b), 0);
	assert_int_equal(b.len, 4);
	assert_memory_equal(b.buf, "a\0b\n", 5);
	strutil_buf_release(&b);
	unlink(path);
	errno = 0;
	assert_null(strutil_file_text(path));
	assert_int_equal(errno, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_buf),
	    cmocka_unit_test(test_capped),
	    cmocka_unit_test(test_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
