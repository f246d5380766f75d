/*
 * test_policy.c - the fetch policy's address ranges and allow list
 * (fetch.h) and the check of submitted URLs (url.h).  Pure functions:
 * nothing is connected to.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <netinet/in.h>

#include "../../netlib/tests/cidr_edges.h"
#include "../fetch.h"
#include "../url.h"
#include "addrpolicy.h"

/* 0 when the policy allows addr (v4 or v6 text) on port, else -1. */
static int allowed(const char *addr, int port)
{
	struct sockaddr_in s4 = {0};
	struct sockaddr_in6 s6 = {0};
	char why[256];

	if (inet_pton(AF_INET, addr, &s4.sin_addr) == 1) {
		s4.sin_family = AF_INET;
		s4.sin_port = htons((uint16_t)port);
		return fetch_addr_allowed((struct sockaddr *)&s4, why, sizeof(why));
	}
	assert_int_equal(inet_pton(AF_INET6, addr, &s6.sin6_addr), 1);
	s6.sin6_family = AF_INET6;
	s6.sin6_port = htons((uint16_t)port);
	return fetch_addr_allowed((struct sockaddr *)&s6, why, sizeof(why));
}

/* Whether text falls in any range the policy refuses by default. */
static bool in_refused(const char *text)
{
	struct cidr c;

	for (size_t i = 0; addrpolicy_refused_cidr(i); i++)
		if (cidr_parse(addrpolicy_refused_cidr(i), &c) && cidr_has(&c, text))
			return true;
	return false;
}

/*
 * Every refused range, walked from the policy's own table: its first and
 * last address refused, the addresses just outside it allowed unless another
 * range holds them.  Plus the loopback forms written out.
 */
static void test_default_policy(void **state)
{
	static const char *const loopback[] = {"127.0.0.1",        "127.255.0.9", "::1",
	                                       "::ffff:127.0.0.1", "::127.0.0.1", "::"};
	char err[256], text[INET6_ADDRSTRLEN];
	size_t i, edges = 0, outside = 0;
	struct cidr c;

	(void)state;
	assert_int_equal(fetch_policy_init("", err, sizeof(err)), 0);
	for (i = 0; i < sizeof(loopback) / sizeof(loopback[0]); i++)
		if (allowed(loopback[i], 80) != -1)
			fail_msg("%s should be refused", loopback[i]);
	for (i = 0; addrpolicy_refused_cidr(i); i++) {
		assert_true(cidr_parse(addrpolicy_refused_cidr(i), &c));
		for (int last = 0; last <= 1; last++) {
			cidr_edge(&c, last, text, sizeof(text));
			if (allowed(text, 80) != -1)
				fail_msg("%s (%s) should be refused", text,
				         addrpolicy_refused_cidr(i));
			edges++;
		}
		for (int below = 0; below <= 1; below++) {
			if (!cidr_outside(&c, below, text, sizeof(text)))
				continue;
			if (allowed(text, 443) != (in_refused(text) ? -1 : 0))
				fail_msg("%s (next to %s) is %s", text, addrpolicy_refused_cidr(i),
				         in_refused(text) ? "in another range: refused"
				                          : "in no range: allowed");
			outside += !in_refused(text);
		}
	}
	assert_true(edges >= 40); /* the table has 20 ranges and more */
	assert_true(outside >= 10);
	fetch_policy_release();
}

static void test_allow_list(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(fetch_policy_init(" 127.0.0.1:8081, 127.1.0.0/16,[::1]:9000,127.0.5.5 ",
	                                   err, sizeof(err)),
	                 0);
	assert_int_equal(allowed("127.0.0.1", 8081), 0);
	assert_int_equal(allowed("127.0.0.1", 8082), -1);
	assert_int_equal(allowed("127.0.0.2", 8081), -1);
	assert_int_equal(allowed("127.1.200.3", 5432), 0);
	assert_int_equal(allowed("127.2.0.1", 80), -1);
	assert_int_equal(allowed("::1", 9000), 0);
	assert_int_equal(allowed("::1", 9001), -1);
	assert_int_equal(allowed("127.0.5.5", 1), 0);
	assert_int_equal(allowed("127.0.5.6", 1), -1);
	/* an allowed IPv4 address is not allowed in its IPv4-mapped form */
	assert_int_equal(allowed("::ffff:127.0.0.1", 8081), -1);
	assert_int_equal(fetch_policy_init("localhost:7000", err, sizeof(err)), 0);
	assert_int_equal(allowed("127.0.0.1", 7000), 0);
	assert_int_equal(allowed("127.0.0.1", 7001), -1);
	fetch_policy_release();
	assert_int_equal(fetch_policy_init("127.0.0.0/33", err, sizeof(err)), -1);
	assert_int_equal(fetch_policy_init("127.0.0.1:65536", err, sizeof(err)), -1);
	assert_int_equal(fetch_policy_init("a:b:c", err, sizeof(err)), -1);
	assert_int_equal(allowed("127.1.200.3", 5432), -1); /* a failed init allows nothing extra */
}

static void test_url_check(void **state)
{
	char err[256];
	char big[URL_MAX + 16];

	(void)state;
	assert_int_equal(
	    url_check("https://lore.kernel.org/x/t.mbox.gz", URL_HTTP, err, sizeof(err)), 0);
	assert_int_equal(url_check("HTTP://h/x", URL_HTTP, err, sizeof(err)), 0);
	assert_int_equal(url_check("git://h/l.git", URL_HTTP, err, sizeof(err)), -1);
	assert_int_equal(url_check("git://h/l.git", URL_HTTP | URL_GIT, err, sizeof(err)), 0);
	assert_int_equal(
	    url_check("file:///etc/passwd", URL_HTTP | URL_GIT | URL_SSH, err, sizeof(err)), -1);
	assert_int_equal(url_check("https://u:p@h/x", URL_HTTP, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "credentials"));
	assert_int_equal(url_check("https://token@h/x", URL_HTTP, err, sizeof(err)), -1);
	assert_int_equal(url_check("https://h/a@b", URL_HTTP, err, sizeof(err)), 0);
	assert_int_equal(url_check("ssh://git@h/r.git", URL_SSH, err, sizeof(err)), 0);
	assert_int_equal(url_check("ssh://git:pw@h/r.git", URL_SSH, err, sizeof(err)), -1);
	assert_int_equal(url_check("https://h/a b", URL_HTTP, err, sizeof(err)), -1);
	assert_int_equal(url_check("https://", URL_HTTP, err, sizeof(err)), -1);
	assert_int_equal(url_check("not a url", URL_HTTP, err, sizeof(err)), -1);
	assert_int_equal(url_check("", URL_HTTP, err, sizeof(err)), -1);
	memset(big, 'a', sizeof(big));
	memcpy(big, "https://h/", 10);
	big[URL_MAX + 1] = '\0';
	assert_int_equal(url_check(big, URL_HTTP, err, sizeof(err)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_default_policy),
	    cmocka_unit_test(test_allow_list),
	    cmocka_unit_test(test_url_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
