/*
 * test_netpolicy.c - which addresses a submitted git URL may reach: internal
 * ones refused, LOCKLAB_FETCH_ALLOW's host:port and CIDR entries honoured.
 * Address literals only: no name is looked up, nothing is connected to.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../netpolicy.h"

static int check(const char *url, const char *allow)
{
	char err[256];
	return netpolicy_check_url(url, allow, err, sizeof(err));
}

static void test_internal_refused(void **state)
{
	(void)state;
	assert_int_equal(check("git://127.0.0.1:9418/x", NULL), -1);
	assert_int_equal(check("http://127.1.2.3/x", ""), -1);
	assert_int_equal(check("https://10.0.0.1/x", ""), -1);
	assert_int_equal(check("https://172.16.5.5/x", ""), -1);
	assert_int_equal(check("https://192.168.1.1/x", ""), -1);
	assert_int_equal(check("https://169.254.169.254/latest", ""), -1);
	assert_int_equal(check("https://100.64.0.1/x", ""), -1);
	assert_int_equal(check("https://0.0.0.0/x", ""), -1);
	assert_int_equal(check("git://[::1]/x", ""), -1);
	assert_int_equal(check("git://[fe80::1]/x", ""), -1);
	assert_int_equal(check("git://[fd00::1]/x", ""), -1);
	assert_int_equal(check("http://[::ffff:127.0.0.1]/x", ""), -1);
	assert_int_equal(check("ssh://git@127.0.0.1/x", ""), -1);
	assert_int_equal(check("http://user:pw@127.0.0.1:80/x", ""), -1);
}

static void test_public_allowed(void **state)
{
	(void)state;
	assert_int_equal(check("https://93.184.216.34/x", ""), 0);
	assert_int_equal(check("git://[2001:db8::1]:9418/x", ""), 0);
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
	assert_int_equal(check("https://10.1.2.3:8443/x", "192.168.0.0/16, 10.1.0.0/16"), 0);
	assert_int_equal(check("https://10.2.0.1/x", "10.1.0.0/16"), -1);
	assert_int_equal(check("git://[fd00::5]/x", "fd00::/64"), 0);
}

static void test_bad_urls(void **state)
{
	(void)state;
	assert_int_equal(check("file:///etc", ""), -1);
	assert_int_equal(check("ext::sh -c touch% x", ""), -1);
	assert_int_equal(check("git://:9418/x", ""), -1);
	assert_int_equal(check("git://1.2.3.4:99999/x", ""), -1);
	assert_int_equal(check("git://[::1/x", ""), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_internal_refused),
	    cmocka_unit_test(test_public_allowed),
	    cmocka_unit_test(test_allow_list),
	    cmocka_unit_test(test_bad_urls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
