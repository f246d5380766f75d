/*
 * test_auth.c - the SHA-256 that token hashes rely on (FIPS 180-4 vectors)
 * and token generation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../auth.h"

static void test_sha256_vectors(void **state)
{
	char out[65];
	char *million;

	sha256_hex("", 0, out);
	assert_string_equal(out,
	                    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha256_hex("abc", 3, out);
	assert_string_equal(out,
	                    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, out);
	assert_string_equal(out,
	                    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	million = malloc(1000000);
	assert_non_null(million);
	memset(million, 'a', 1000000);
	sha256_hex(million, 1000000, out);
	assert_string_equal(out,
	                    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(million);
	/* 55 and 64 bytes: the padding edge cases */
	memset(out, 0, sizeof(out));
	sha256_hex("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 55, out);
	assert_string_equal(out,
	                    "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
	sha256_hex("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 64, out);
	assert_string_equal(out,
	                    "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

static void test_tokens_differ(void **state)
{
	char a[65], b[65];
	size_t i;

	assert_int_equal(auth_new_token(a), 0);
	assert_int_equal(auth_new_token(b), 0);
	assert_int_equal(strlen(a), 64);
	for (i = 0; i < 64; i++)
		assert_non_null(strchr("0123456789abcdef", a[i]));
	assert_string_not_equal(a, b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sha256_vectors),
	    cmocka_unit_test(test_tokens_differ),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
