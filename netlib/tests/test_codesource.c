/*
 * test_codesource.c - where code may come from (codesource.h): network URLs
 * pass to the caller's further checks, a local path only where local trees
 * are allowed and, for a job's git URL, only its own tree's path; the words
 * of a refusal are the server's and the agent's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "codesource.h"

static void test_network(void **state)
{
	const char *ok[] = {"https://h/l.git", "HTTP://h/l.git", "git://127.0.0.1:9/x",
	                    "ssh://git@h/l.git"};
	char why[256];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(codesource_check(ok[i], NULL, false, why, sizeof(why)),
		                 CODESOURCE_NETWORK);
		assert_int_equal(codesource_check(ok[i], "/srv/t", true, why, sizeof(why)),
		                 CODESOURCE_NETWORK);
	}
}

static void test_refused(void **state)
{
	const char *bad[] = {"--upload-pack=touch /tmp/x",
	                     "ext::sh -c touch% /tmp/x",
	                     "tree",
	                     "../tree",
	                     "ftp://h/l.git",
	                     "",
	                     "h:l.git"};
	char why[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(codesource_check(bad[i], NULL, true, why, sizeof(why)),
		                 CODESOURCE_REFUSED);
		assert_string_equal(why, "is not an http, https, git or ssh URL");
	}
	assert_int_equal(codesource_check("https://h/l.git\n-x", NULL, true, why, sizeof(why)),
	                 CODESOURCE_REFUSED);
	assert_string_equal(why, "holds control characters");
	assert_int_equal(codesource_check("/srv/t\r", "/srv/t\r", true, why, sizeof(why)),
	                 CODESOURCE_REFUSED);
}

static void test_local(void **state)
{
	char why[512], longpath[CODESOURCE_PATH_MAX + 2];

	(void)state;
	assert_true(codesource_is_local("/srv/t"));
	assert_true(codesource_is_local("FILE:///srv/t"));
	assert_false(codesource_is_local("srv/t"));
	/* not allowed: the words of a URL refused, and the option that allows it */
	assert_int_equal(codesource_check("/srv/t", NULL, false, why, sizeof(why)),
	                 CODESOURCE_REFUSED);
	assert_string_equal(why, "is not an http, https, git or ssh URL (local trees need "
	                         "--allow-local-trees)");
	assert_int_equal(
	    codesource_check("file:///srv/t", "file:///srv/t", false, why, sizeof(why)),
	    CODESOURCE_REFUSED);
	assert_non_null(strstr(why, "--allow-local-trees"));
	/* allowed: a tree's own, and a job's git URL that is its tree's */
	assert_int_equal(codesource_check("/srv/t", NULL, true, why, sizeof(why)),
	                 CODESOURCE_LOCAL);
	assert_int_equal(codesource_check("file:///srv/t", NULL, true, why, sizeof(why)),
	                 CODESOURCE_LOCAL);
	assert_int_equal(codesource_check("/srv/t", "/srv/t", true, why, sizeof(why)),
	                 CODESOURCE_LOCAL);
	/* a job's git URL naming another path than its tree's */
	assert_int_equal(codesource_check("/root/secret", "/srv/t", true, why, sizeof(why)),
	                 CODESOURCE_REFUSED);
	assert_non_null(strstr(why, "other than its tree's (/srv/t)"));
	assert_int_equal(codesource_check("/srv/t", "https://h/l.git", true, why, sizeof(why)),
	                 CODESOURCE_REFUSED);
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	assert_int_equal(codesource_check(longpath, NULL, true, why, sizeof(why)),
	                 CODESOURCE_REFUSED);
	assert_non_null(strstr(why, "more than 2048 bytes"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_network),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_local),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
