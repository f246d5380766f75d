/*
 * test_mail.c - the reply headers GMime builds: encoded-words of at most 75
 * characters on folded lines, addresses outside encoded-words, threading,
 * Cc without To and From, a fresh Message-ID, a body that stays UTF-8; and
 * the envelope read back from the message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../mail.h"

static const char long_subject[] =
    "[PATCH v2 0/2] locking/mutex: hand the lock to the top waiter \xe2\x80\x94 s\xc5\x93ur "
    "\xc2\xabpickup\xc2\xbb for fr\xc3\xbch wakers, and a much longer tail than fits";

static struct mail_reply sample(void)
{
	struct mail_reply r = {
	    .from = "locklab robot <robot@lab.example.org>",
	    .to = "Waiman L\xc3\xb8ng <waiman@example.org>",
	    .cc = "LKML <linux-kernel@vger.kernel.org>, waiman@example.org, "
	          "Ingo M\xc3\xb8lnar <mingo@kernel.org>, robot@lab.example.org, "
	          "mingo@kernel.org",
	    .subject = long_subject,
	    .in_reply_to = "<cover@example.org>",
	    .references = "<v1@example.org>\n <v1-reply@example.org>",
	    .domain = "lab.example.org",
	    .body = "locklab found no change \xc2\xb1 nothing.\n",
	    .tag = 7,
	    .date = 1764547200,
	};
	return r;
}

/* The header block of msg (up to the empty line), unfolded lines kept as they are. */
static char *headers(const char *msg)
{
	const char *end = strstr(msg, "\n\n");
	size_t n = end ? (size_t)(end - msg) + 1 : strlen(msg);
	char *h = malloc(n + 1);

	assert_non_null(h);
	memcpy(h, msg, n);
	h[n] = 0;
	return h;
}

static void test_encoded_words_and_folding(void **state)
{
	struct mail_reply r = sample();
	char err[128], *id = NULL, *msg = mail_build_reply(&r, &id, err, sizeof(err));
	char *h, *p, *line;

	assert_non_null(msg);
	h = headers(msg);
	for (line = strtok(h, "\n"); line; line = strtok(NULL, "\n")) {
		assert_true(strlen(line) <= 78);
		for (p = strstr(line, "=?"); p; p = strstr(p, "=?")) {
			/* =?charset?encoding?text?= : the whole word */
			char *q = strchr(p + 2, '?');

			q = q ? strchr(q + 1, '?') : NULL;
			q = q ? strstr(q + 1, "?=") : NULL;
			assert_non_null(q);
			assert_true((size_t)(q + 2 - p) <= 75);
			p = q + 2;
		}
		for (p = line; *p; p++)
			assert_true((unsigned char)*p < 0x80);
	}
	free(h);
	assert_non_null(strstr(msg, "<waiman@example.org>"));
	assert_null(strstr(msg, "=?UTF-8?B?V2FpbWFu")); /* never the whole address encoded */
	free(msg);
	free(id);
}

static void test_threading_and_ids(void **state)
{
	struct mail_reply r = sample();
	char err[128], *id1 = NULL, *id2 = NULL;
	char *m1 = mail_build_reply(&r, &id1, err, sizeof(err));
	char *m2 = mail_build_reply(&r, &id2, err, sizeof(err));

	assert_non_null(m1);
	assert_non_null(m2);
	assert_non_null(strstr(m1, "\nIn-Reply-To: <cover@example.org>\n"));
	assert_non_null(strstr(
	    m1, "\nReferences: <v1@example.org> <v1-reply@example.org> <cover@example.org>\n"));
	assert_int_equal(strncmp(id1, "<locklab.7.", 11), 0);
	assert_non_null(strstr(id1, "@lab.example.org>"));
	assert_string_not_equal(id1, id2);
	assert_non_null(strstr(m1, "Content-Type: text/plain; charset=utf-8\n"));
	/* UTF-8 stays UTF-8: the +- sign is C2 B1 in quoted-printable */
	assert_non_null(strstr(m1, "Content-Transfer-Encoding: quoted-printable\n"));
	assert_non_null(strstr(m1, "=C2=B1"));
	free(m1);
	free(m2);
	free(id1);
	free(id2);
}

static void test_recipients(void **state)
{
	struct mail_reply r = sample();
	char err[128], *id = NULL, *msg = mail_build_reply(&r, &id, err, sizeof(err));
	char **to;

	assert_non_null(msg);
	to = mail_recipients(msg, strlen(msg));
	assert_non_null(to);
	assert_string_equal(to[0], "waiman@example.org");
	assert_string_equal(to[1], "linux-kernel@vger.kernel.org");
	assert_string_equal(to[2], "mingo@kernel.org");
	assert_null(to[3]); /* no second waiman, no robot, no second mingo */
	mail_strv_free(to);
	free(msg);
	free(id);
}

static void test_ascii_and_no_recipient(void **state)
{
	struct mail_reply r = sample();
	char err[128], *id = NULL, *msg;

	r.body = "plain ascii\n";
	r.subject = "Re: [PATCH] x";
	msg = mail_build_reply(&r, &id, err, sizeof(err));
	assert_non_null(msg);
	assert_non_null(strstr(msg, "\nSubject: Re: [PATCH] x\n"));
	assert_non_null(strstr(msg, "Content-Transfer-Encoding: 7bit\n"));
	assert_non_null(strstr(msg, "Content-Type: text/plain; charset=utf-8\n"));
	free(msg);
	free(id);
	r.to = "undisclosed";
	assert_null(mail_build_reply(&r, &id, err, sizeof(err)));
	assert_null(id);
	assert_non_null(strstr(err, "no address"));
}

static void test_find_recipients(void **state)
{
	static const char mbox[] =
	    "From a@b Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nTo: x@y\nMessage-ID: <one@b>\n"
	    "Subject: one\n\nbody\n\nFrom a@b Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\n"
	    "To: LKML <linux-kernel@vger.kernel.org>\nCc: =?UTF-8?Q?Ingo_M=C3=B8lnar?= "
	    "<mingo@kernel.org>,\n peterz@infradead.org\nMessage-ID: <two@b>\nSubject: two\n\n"
	    "body\n";
	static const char bare[] =
	    "From: A <a@b>\nTo: list@example.org\nMessage-Id: <bare@b>\n\nx\n";
	char *to, *cc;

	assert_int_equal(mail_find_recipients(mbox, strlen(mbox), "<two@b>", &to, &cc), 0);
	assert_string_equal(to, "LKML <linux-kernel@vger.kernel.org>");
	assert_string_equal(cc, "Ingo M\xc3\xb8lnar <mingo@kernel.org>, peterz@infradead.org");
	free(to);
	free(cc);
	assert_int_equal(mail_find_recipients(bare, strlen(bare), "<bare@b>", &to, &cc), 0);
	assert_string_equal(to, "list@example.org");
	assert_null(cc);
	free(to);
	assert_int_equal(mail_find_recipients(mbox, strlen(mbox), "<three@b>", &to, &cc), -1);
	assert_null(to);
}

static void test_addr_spec(void **state)
{
	char *a = mail_addr_spec("Tested \xc3\x9c. Bot <bot@example.org>");

	assert_string_equal(a, "bot@example.org");
	free(a);
	assert_null(mail_addr_spec("no address here"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_encoded_words_and_folding),
	    cmocka_unit_test(test_threading_and_ids),
	    cmocka_unit_test(test_recipients),
	    cmocka_unit_test(test_ascii_and_no_recipient),
	    cmocka_unit_test(test_find_recipients),
	    cmocka_unit_test(test_addr_spec),
	};

	mail_global_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
