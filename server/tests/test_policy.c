/*
 * test_policy.c - the fetch policy's address ranges and allow list
 * (fetch.h), the check of submitted URLs (url.h) and the read-back rule of
 * result documents (ingest.h).  Pure functions: nothing is connected to.
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

#include "../fetch.h"
#include "../ingest.h"
#include "../url.h"

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

static void test_default_policy(void **state)
{
	static const char *const refused[] = {
	    "0.0.0.0",
	    "0.1.2.3",
	    "10.0.0.1",
	    "10.255.255.255",
	    "100.64.0.1",
	    "100.127.255.254",
	    "127.0.0.1",
	    "127.255.0.9",
	    "169.254.169.254",
	    "172.16.0.1",
	    "172.31.255.255",
	    "192.0.0.8",
	    "192.168.1.1",
	    "198.18.0.1",
	    "224.0.0.1",
	    "239.255.255.250",
	    "240.0.0.1",
	    "255.255.255.255",
	    "::",
	    "::1",
	    "::ffff:127.0.0.1",
	    "::ffff:8.8.8.8",
	    "::127.0.0.1",
	    "64:ff9b::a00:1",
	    "64:ff9b:1::1",
	    "100::1",
	    "fc00::1",
	    "fd12:3456::1",
	    "fe80::1",
	    "febf::1",
	    "fec0::1",
	    "ff02::1",
	};
	static const char *const public[] = {
	    "1.1.1.1",    "8.8.8.8",         "100.63.255.255",  "100.128.0.0", "172.15.255.255",
	    "172.32.0.0", "169.253.255.255", "223.255.255.255", "2001:db8::1", "2606:4700::1111",
	};
	size_t i;
	char err[256];

	(void)state;
	assert_int_equal(fetch_policy_init("", err, sizeof(err)), 0);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (allowed(refused[i], 80) != -1)
			fail_msg("%s should be refused", refused[i]);
	for (i = 0; i < sizeof(public) / sizeof(public[0]); i++)
		if (allowed(public[i], 443) != 0)
			fail_msg("%s should be allowed", public[i]);
	fetch_policy_release();
}

static void test_allow_list(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(fetch_policy_init(" 127.0.0.1:8081, 10.1.0.0/16,[::1]:9000,192.168.5.5 ",
	                                   err, sizeof(err)),
	                 0);
	assert_int_equal(allowed("127.0.0.1", 8081), 0);
	assert_int_equal(allowed("127.0.0.1", 8082), -1);
	assert_int_equal(allowed("127.0.0.2", 8081), -1);
	assert_int_equal(allowed("10.1.200.3", 5432), 0);
	assert_int_equal(allowed("10.2.0.1", 80), -1);
	assert_int_equal(allowed("::1", 9000), 0);
	assert_int_equal(allowed("::1", 9001), -1);
	assert_int_equal(allowed("192.168.5.5", 1), 0);
	assert_int_equal(allowed("192.168.5.6", 1), -1);
	/* an allowed IPv4 address is not allowed in its IPv4-mapped form */
	assert_int_equal(allowed("::ffff:127.0.0.1", 8081), -1);
	assert_int_equal(fetch_policy_init("localhost:7000", err, sizeof(err)), 0);
	assert_int_equal(allowed("127.0.0.1", 7000), 0);
	assert_int_equal(allowed("127.0.0.1", 7001), -1);
	fetch_policy_release();
	assert_int_equal(fetch_policy_init("10.0.0.0/33", err, sizeof(err)), -1);
	assert_int_equal(fetch_policy_init("127.0.0.1:65536", err, sizeof(err)), -1);
	assert_int_equal(fetch_policy_init("a:b:c", err, sizeof(err)), -1);
	assert_int_equal(allowed("10.1.200.3", 5432), -1); /* a failed init allows nothing extra */
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

static void test_ingest(void **state)
{
	char err[512];
	json_t *doc;

	(void)state;
	doc = json_pack("{s:[f,f,f,f], s:{s:s}}", "x", 9007199254740992.0, -0.0, 5e-324,
	                9.2233720368547748e18, "machine", "hostname", "lab1");
	assert_int_equal(ingest_check_document(doc, err, sizeof(err)), 0);
	json_array_append_new(json_object_get(doc, "x"), json_real(9223372036854775808.0));
	assert_int_equal(ingest_check_document(doc, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "x[4]"));
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_default_policy),
	    cmocka_unit_test(test_allow_list),
	    cmocka_unit_test(test_url_check),
	    cmocka_unit_test(test_ingest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
