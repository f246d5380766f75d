/*
 * test_netpolicy.c - which addresses a submitted git URL may reach: internal
 * ones refused, LOCKLAB_FETCH_ALLOW's host:port and CIDR entries honoured.
 * Address literals only: no name is looked up, nothing is connected to.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../netlib/tests/cidr_edges.h"
#include "addrpolicy.h"
#include "netpolicy.h"

static int check(const char *url, const char *allow)
{
	char err[256];
	return netpolicy_check_url(url, allow, NULL, err, sizeof(err));
}

/* The URL https://ADDR/x for an address (brackets for IPv6). */
static int check_addr(const char *addr, const char *allow)
{
	char url[128];
	snprintf(url, sizeof(url), strchr(addr, ':') ? "https://[%s]/x" : "https://%s/x", addr);
	return check(url, allow);
}

static bool in_internal(const char *text)
{
	struct cidr c;
	for (size_t i = 0; addrpolicy_refused_cidr(i); i++)
		if (cidr_parse(addrpolicy_refused_cidr(i), &c) && cidr_has(&c, text))
			return true;
	return false;
}

static void test_internal_refused(void **state)
{
	(void)state;
	assert_int_equal(check("git://127.0.0.1:9418/x", NULL), -1);
	assert_int_equal(check("http://127.1.2.3/x", ""), -1);
	assert_int_equal(check("git://[::1]/x", ""), -1);
	assert_int_equal(check("http://[::ffff:127.0.0.1]/x", ""), -1);
	assert_int_equal(check("ssh://git@127.0.0.1/x", ""), -1);
	assert_int_equal(check("http://user:pw@127.0.0.1:80/x", ""), -1);
}

/*
 * Every internal range, walked from the policy's own table (so no address
 * outside loopback is written here): first and last address refused, the
 * addresses just outside allowed unless another range holds them.
 */
static void test_ranges(void **state)
{
	char text[INET6_ADDRSTRLEN];
	size_t outside = 0;
	struct cidr c;

	(void)state;
	for (size_t i = 0; addrpolicy_refused_cidr(i); i++) {
		assert_true(cidr_parse(addrpolicy_refused_cidr(i), &c));
		for (int last = 0; last <= 1; last++) {
			cidr_edge(&c, last, text, sizeof(text));
			if (check_addr(text, "") != -1)
				fail_msg("%s (%s) should be refused", text,
				         addrpolicy_refused_cidr(i));
		}
		for (int below = 0; below <= 1; below++) {
			if (!cidr_outside(&c, below, text, sizeof(text)))
				continue;
			if (check_addr(text, "") != (in_internal(text) ? -1 : 0))
				fail_msg("%s next to %s", text, addrpolicy_refused_cidr(i));
			outside += !in_internal(text);
		}
	}
	assert_true(outside >= 10);
}

static void test_allow_list(void **state)
{
	(void)state;
	/* host:port names one port of one address */
	assert_int_equal(check("git://127.0.0.1:7000/x", "127.0.0.1:7000"), 0);
	assert_int_equal(check("git://127.0.0.1:7001/x", "127.0.0.1:7000"), -1);
	assert_int_equal(check("git://127.0.0.2:7000/x", "127.0.0.1:7000"), -1);
	assert_int_equal(check("https://127.0.0.1/x", "127.0.0.1:443"), 0);
	assert_int_equal(check("git://[::1]:7000/x", "[::1]:7000"), 0);
	/* CIDR: any port in the range */
	assert_int_equal(check("https://127.1.2.3:8443/x", "127.0.9.0/24, 127.1.0.0/16"), 0);
	assert_int_equal(check("https://127.2.0.1/x", "127.1.0.0/16"), -1);
	assert_int_equal(check("git://[::1]/x", "::1/128"), 0);
}

/* Names are pinned to the addresses checked; localhost is the only name used. */
static void test_pin(void **state)
{
	struct netpolicy_pin pin;
	char err[256];

	(void)state;
	assert_int_equal(netpolicy_check_url("https://localhost:7000/x.git", "127.0.0.0/8 ::1/128",
	                                     &pin, err, sizeof(err)),
	                 0);
	assert_string_equal(pin.url, "https://localhost:7000/x.git");
	assert_true(!strncmp(pin.resolve, "localhost:7000:", 15));
	assert_true(strstr(pin.resolve, "127.0.0.1") || strstr(pin.resolve, "[::1]"));
	assert_int_equal(netpolicy_check_url("git://localhost:7000/x", "127.0.0.0/8, ::1/128", &pin,
	                                     err, sizeof(err)),
	                 0);
	assert_string_equal(pin.resolve, "");
	if (strcmp(pin.url, "git://127.0.0.1:7000/x") && strcmp(pin.url, "git://[::1]:7000/x"))
		fail_msg("git:// not pinned: %s", pin.url);
	assert_int_equal(netpolicy_check_url("git://localhost/x", "127.0.0.0/8, ::1/128", &pin, err,
	                                     sizeof(err)),
	                 0);
	if (strcmp(pin.url, "git://127.0.0.1/x") && strcmp(pin.url, "git://[::1]/x"))
		fail_msg("git:// without a port not pinned: %s", pin.url);
	/* an address literal is its own pin; ssh resolves by itself */
	assert_int_equal(netpolicy_check_url("http://127.0.0.1:7000/x", "127.0.0.1:7000", &pin, err,
	                                     sizeof(err)),
	                 0);
	assert_string_equal(pin.resolve, "");
	assert_string_equal(pin.url, "http://127.0.0.1:7000/x");
	assert_int_equal(netpolicy_check_url("ssh://git@localhost:7000/x", "127.0.0.0/8 ::1/128",
	                                     &pin, err, sizeof(err)),
	                 0);
	assert_string_equal(pin.url, "ssh://git@localhost:7000/x");
	assert_string_equal(pin.resolve, "");
	/* a bad allow list is an error, not an empty list */
	assert_int_equal(
	    netpolicy_check_url("https://localhost/x", "127.0.0.0/33", &pin, err, sizeof(err)), -1);
}

static void test_bad_urls(void **state)
{
	(void)state;
	assert_int_equal(check("file:///etc", ""), -1);
	assert_int_equal(check("ext::sh -c touch% x", ""), -1);
	assert_int_equal(check("git://:9418/x", ""), -1);
	assert_int_equal(check("git://127.0.0.1:99999/x", ""), -1);
	assert_int_equal(check("git://[::1/x", ""), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_internal_refused), cmocka_unit_test(test_ranges),
	    cmocka_unit_test(test_allow_list),       cmocka_unit_test(test_pin),
	    cmocka_unit_test(test_bad_urls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
