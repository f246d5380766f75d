/*
 * test_mbox.c - the mbox parser: mboxrd quoting, folded headers, RFC 2047,
 * subject prefixes, cover letters, ordering, threading and missing parts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>

#include "../mbox.h"

static const char diff1[] = "diff --git a/kernel/locking/mutex.c b/kernel/locking/mutex.c\n"
                            "index 1111111..2222222 100644\n"
                            "--- a/kernel/locking/mutex.c\n"
                            "+++ b/kernel/locking/mutex.c\n"
                            "@@ -1 +1,2 @@\n"
                            " int owner;\n"
                            "+int handoff;\n";

/* One format-patch style mail; returns a new string. */
static char *mail(const char *from_line, const char *headers, const char *body, const char *diff)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	if (from_line)
		fprintf(f, "%s\n", from_line);
	fprintf(f, "%s\n%s\n", headers, body);
	if (diff)
		fprintf(f, "---\n mutex.c | 1 +\n\n%s-- \n2.39.5\n", diff);
	fprintf(f, "\n");
	fclose(f);
	return out;
}

static int parse(const char *text, struct mbox_series *s, char *err, size_t errlen)
{
	mbox_series_init(s);
	return mbox_parse(text, strlen(text), s, err, errlen);
}

static void test_single_patch(void **state)
{
	char *m = mail("From 1234 Mon Sep 17 00:00:00 2001",
	               "From: Peter Zijlstra <peterz@infradead.org>\n"
	               "Date: Tue, 23 Aug 2016 14:46:17 +0200\n"
	               "Subject: [PATCH] locking/mutex: Rewrite basic mutex\n"
	               "Message-ID: <20160823124617.015645861@infradead.org>\n",
	               "Make the owner word carry the state.\n", diff1);
	struct mbox_series s;
	char err[256] = "";

	assert_int_equal(parse(m, &s, err, sizeof(err)), 0);
	assert_int_equal(s.npatches, 1);
	assert_null(s.cover);
	assert_int_equal(s.patches[0].index, 1);
	assert_int_equal(s.patches[0].total, 1);
	assert_string_equal(s.patches[0].message_id, "<20160823124617.015645861@infradead.org>");
	assert_string_equal(s.patches[0].from, "Peter Zijlstra <peterz@infradead.org>");
	assert_string_equal(s.patches[0].title, "locking/mutex: Rewrite basic mutex");
	assert_string_equal(s.patches[0].subject, "[PATCH] locking/mutex: Rewrite basic mutex");
	assert_string_equal(s.patches[0].body, "Make the owner word carry the state.");
	/* the diff ends before the "-- " signature and keeps its last newline */
	assert_string_equal(s.patches[0].diff, diff1);
	mbox_series_release(&s);
	free(m);
}

static void test_mboxrd_from_quoting(void **state)
{
	char *m = mail("From mboxrd@z Thu Jan  1 00:00:00 1970",
	               "From: a <a@example.org>\nSubject: [PATCH] x\nMessage-ID: <q@x>\n",
	               "Quoted lines:\n>From the start the owner spins.\n>>From here too.\n"
	               "> a quote stays\n",
	               diff1);
	struct mbox_series s;
	char err[256] = "";

	assert_int_equal(parse(m, &s, err, sizeof(err)), 0);
	assert_int_equal(s.npatches, 1);
	assert_string_equal(s.patches[0].body, "Quoted lines:\nFrom the start the owner spins.\n"
	                                       ">From here too.\n> a quote stays");
	mbox_series_release(&s);
	free(m);
}

static void test_folded_headers_and_crlf(void **state)
{
	const char *text =
	    "From 1 Mon Sep 17 00:00:00 2001\r\n"
	    "From: Jason Low\r\n <jason.low2@hpe.com>\r\n"
	    "Subject: [PATCH 1/1] futex: Allow lockless empty check of hashbucket\r\n"
	    " plist in futex_wake()\r\n"
	    "Message-ID:\r\n\t<folded@example.org>\r\n"
	    "\r\n"
	    "Body.\r\n"
	    "---\r\n"
	    "diff --git a/f b/f\r\n--- a/f\r\n+++ b/f\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n";
	struct mbox_series s;
	char err[256] = "";

	assert_int_equal(parse(text, &s, err, sizeof(err)), 0);
	assert_int_equal(s.npatches, 1);
	assert_string_equal(
	    s.patches[0].title,
	    "futex: Allow lockless empty check of hashbucket plist in futex_wake()");
	assert_string_equal(s.patches[0].from, "Jason Low <jason.low2@hpe.com>");
	assert_string_equal(s.patches[0].message_id, "<folded@example.org>");
	assert_string_equal(s.patches[0].diff,
	                    "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n");
	mbox_series_release(&s);
}

static void test_rfc2047(void **state)
{
	char *v;

	v = mbox_decode_header("=?UTF-8?q?Ingo=20Moln=C3=A1r?= <mingo@elte.hu>");
	assert_string_equal(v, "Ingo Molnár <mingo@elte.hu>");
	free(v);
	v = mbox_decode_header("=?iso-8859-1?Q?Andr=E9_Almeida?= <andre@example.org>");
	assert_string_equal(v, "André Almeida <andre@example.org>");
	free(v);
	v = mbox_decode_header("=?utf-8?B?V2FpbWFuIEzDuG5n?=");
	assert_string_equal(v, "Waiman Løng");
	free(v);
	/* whitespace between two encoded words goes, around plain text it stays */
	v = mbox_decode_header("[PATCH] =?utf-8?q?locking=3A?= =?utf-8?q?_mutex?= fix");
	assert_string_equal(v, "[PATCH] locking: mutex fix");
	free(v);
	v = mbox_decode_header("=?latin1?B?Q2Fm6Q==?=");
	assert_string_equal(v, "Café");
	free(v);
	/* not an encoded word: left as it is */
	v = mbox_decode_header("a =?broken b ?= c");
	assert_string_equal(v, "a =?broken b ?= c");
	free(v);
}

static void test_subject_prefixes(void **state)
{
	static const struct {
		const char *subject;
		int index, total, version;
		const char *title;
	} cases[] = {
	    {"[PATCH v2 3/7] locking/mutex: add handoff", 3, 7, 2, "locking/mutex: add handoff"},
	    {"[RFC][PATCH 0/3] locking/mutex: Rewrite basic mutex", 0, 3, 1,
	     "locking/mutex: Rewrite basic mutex"},
	    {"[PATCH -v4 0/8] locking/mutex: Rewrite basic mutex", 0, 8, 4,
	     "locking/mutex: Rewrite basic mutex"},
	    {"[PATCH RFC v3 2/2] futex: x", 2, 2, 3, "futex: x"},
	    {"[PATCH tip/locking/core v5 10/12] y", 10, 12, 5, "y"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mbox_mail m;

		memset(&m, 0, sizeof(m));
		m.subject = (char *)cases[i].subject;
		mbox_parse_subject(&m);
		assert_int_equal(m.index, cases[i].index);
		assert_int_equal(m.total, cases[i].total);
		assert_int_equal(m.version, cases[i].version);
		assert_true(m.numbered);
		assert_false(m.is_reply);
		assert_string_equal(m.title, cases[i].title);
		free(m.title);
	}
	{
		struct mbox_mail m;

		memset(&m, 0, sizeof(m));
		m.subject = (char *)"Re: [PATCH] locking: x";
		mbox_parse_subject(&m);
		assert_true(m.is_reply);
		assert_false(m.numbered);
		assert_int_equal(m.version, 1);
		assert_string_equal(m.title, "locking: x");
		free(m.title);
	}
	/* a reply is not a patch, even when it quotes one */
	{
		char *m = mail(NULL, "From: a <a@b.c>\nSubject: Re: [PATCH] x\nMessage-ID: <r@x>\n",
		               "> quoted\n", diff1);
		struct mbox_series s;
		char err[256] = "";

		assert_int_equal(parse(m, &s, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "no patch found"));
		free(m);
	}
}

/* A v<version> series of total patches (indexes listed), with a cover. */
static char *series(int version, int total, const int *idx, size_t n, bool cover,
                    const char *thread_root)
{
	char *out = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	if (cover) {
		char h[512];
		char *m;

		snprintf(h, sizeof(h),
		         "From: Peter Zijlstra <peterz@infradead.org>\n"
		         "Subject: [PATCH v%d 0/%d] locking/mutex: Rewrite basic mutex\n"
		         "Message-ID: <cover.v%d@x>\n",
		         version, total, version);
		m = mail("From 0 Mon Sep 17 00:00:00 2001", h, "Hi all,\n\nplease test.\n", NULL);
		fputs(m, f);
		free(m);
	}
	for (i = 0; i < n; i++) {
		char h[512];
		char *m;

		snprintf(h, sizeof(h),
		         "From: Peter Zijlstra <peterz@infradead.org>\n"
		         "Subject: [PATCH v%d %d/%d] locking/mutex: part %d\n"
		         "Message-ID: <p%d.v%d@x>\n"
		         "In-Reply-To: %s\nReferences: %s\n",
		         version, idx[i], total, idx[i], idx[i], version, thread_root, thread_root);
		m = mail("From 0 Mon Sep 17 00:00:00 2001", h, "part\n", diff1);
		fputs(m, f);
		free(m);
	}
	fclose(f);
	return out;
}

static void test_cover_letter_and_order(void **state)
{
	static const int idx[] = {3, 1, 2};
	char *m = series(4, 3, idx, 3, true, "<cover.v4@x>");
	struct mbox_series s;
	char err[256] = "";

	assert_int_equal(parse(m, &s, err, sizeof(err)), 0);
	assert_non_null(s.cover);
	assert_string_equal(s.cover->message_id, "<cover.v4@x>");
	assert_string_equal(s.cover->title, "locking/mutex: Rewrite basic mutex");
	assert_null(s.cover->diff);
	assert_int_equal(s.version, 4);
	assert_int_equal(s.npatches, 3);
	assert_int_equal(s.patches[0].index, 1);
	assert_int_equal(s.patches[1].index, 2);
	assert_int_equal(s.patches[2].index, 3);
	assert_string_equal(s.patches[0].title, "locking/mutex: part 1");
	assert_string_equal(s.patches[2].message_id, "<p3.v4@x>");
	assert_int_equal(s.patches[1].total, 3);
	assert_int_equal(s.patches[1].version, 4);
	mbox_series_release(&s);
	free(m);
}

static void test_missing_part(void **state)
{
	static const int idx[] = {1, 3};
	char *m = series(1, 3, idx, 2, true, "<cover.v1@x>");
	struct mbox_series s;
	char err[256] = "";

	assert_int_equal(parse(m, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "series incomplete: patch 2/3 is missing");
	assert_int_equal(s.npatches, 0);
	assert_null(s.cover);
	free(m);
}

static void test_no_diff(void **state)
{
	char *m = mail("From 0 Mon Sep 17 00:00:00 2001",
	               "From: a <a@b.c>\nSubject: [PATCH] words only\nMessage-ID: <w@x>\n",
	               "There is no diff here.\n--- not a diff either\n", NULL);
	struct mbox_series s;
	char err[256] = "";

	assert_int_equal(parse(m, &s, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no patch found"));
	free(m);
	assert_int_equal(parse("", &s, err, sizeof(err)), -1);
}

static void test_threading_and_versions(void **state)
{
	static const int idx[] = {1, 2};
	char *v1 = series(1, 2, idx, 2, true, "<cover.v1@x>");
	char *v2 = series(2, 2, idx, 2, true, "<cover.v2@x>");
	/* a stray patch of another thread, numbered like the series */
	char *stray = mail("From 0 Mon Sep 17 00:00:00 2001",
	                   "From: b <b@b.c>\nSubject: [PATCH v2 2/2] other: thing\n"
	                   "Message-ID: <stray@x>\nIn-Reply-To: <elsewhere@x>\n"
	                   "References: <elsewhere@x>\n",
	                   "other\n", diff1);
	/* a reply in the thread that carries a fixup diff */
	char *reply = mail("From 0 Mon Sep 17 00:00:00 2001",
	                   "From: c <c@b.c>\nSubject: Re: [PATCH v2 1/2] locking/mutex: part 1\n"
	                   "Message-ID: <reply@x>\nIn-Reply-To: <p1.v2@x>\n",
	                   "Try this:\n", diff1);
	size_t n = strlen(v1) + strlen(v2) + strlen(stray) + strlen(reply) + 1;
	char *all = malloc(n);
	struct mbox_series s;
	char err[256] = "";

	assert_non_null(all);
	snprintf(all, n, "%s%s%s%s", v1, stray, v2, reply);
	assert_int_equal(parse(all, &s, err, sizeof(err)), 0);
	assert_int_equal(s.version, 2);
	assert_string_equal(s.cover->message_id, "<cover.v2@x>");
	assert_int_equal(s.npatches, 2);
	assert_string_equal(s.patches[0].message_id, "<p1.v2@x>");
	assert_string_equal(s.patches[1].message_id, "<p2.v2@x>");
	mbox_series_release(&s);
	free(all);
	free(v1);
	free(v2);
	free(stray);
	free(reply);
}

static void test_prefix_parsing_in_series(void **state)
{
	const char *text = "From 0 Mon Sep 17 00:00:00 2001\n"
	                   "From: a <a@b.c>\nSubject: [RFC][PATCH -v4 2/2] b\nMessage-ID: <b@x>\n\n"
	                   "b\n---\ndiff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n\n"
	                   "From 0 Mon Sep 17 00:00:00 2001\n"
	                   "From: a <a@b.c>\nSubject: [RFC][PATCH -v4 1/2] a\nMessage-ID: <a@x>\n\n"
	                   "a\n---\ndiff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n";
	struct mbox_series s;
	char err[256] = "";

	assert_int_equal(parse(text, &s, err, sizeof(err)), 0);
	assert_int_equal(s.npatches, 2);
	assert_int_equal(s.version, 4);
	assert_string_equal(s.patches[0].title, "a");
	assert_string_equal(s.patches[1].title, "b");
	assert_false(s.patches[0].is_reply);
	mbox_series_release(&s);
}

static void test_quoted_printable_body(void **state)
{
	const char *text = "From: a <a@b.c>\nSubject: [PATCH] qp\nMessage-ID: <qp@x>\n"
	                   "Content-Transfer-Encoding: quoted-printable\n\n"
	                   "Spin =3D wait.\n---\ndiff --git a/f b/f\n--- a/f\n+++ b/f\n"
	                   "@@ -1 +1 @@\n-a=3Db\n+a=3D=\nc\n";
	struct mbox_series s;
	char err[256] = "";

	assert_int_equal(parse(text, &s, err, sizeof(err)), 0);
	assert_string_equal(s.patches[0].body, "Spin = wait.");
	assert_string_equal(s.patches[0].diff,
	                    "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a=b\n+a=c\n");
	mbox_series_release(&s);
}

/* A hunk whose last context line is an empty line: that line is one space. */
static void test_diff_keeps_trailing_space_context(void **state)
{
	const char *diff = "diff --git a/futex3.c b/futex3.c\n"
	                   "--- a/futex3.c\n"
	                   "+++ b/futex3.c\n"
	                   "@@ -1,3 +1,3 @@\n"
	                   "-\tfutex_wake(w, 1);\n"
	                   "+\t(void)0;\n"
	                   " }\n"
	                   " \n";
	char *m = mail("From 1234 Mon Sep 17 00:00:00 2001",
	               "From: Dev <dev@example.org>\n"
	               "Subject: [PATCH] futex3: lose a wakeup\n"
	               "Message-ID: <x@example.org>\n",
	               "Lose it.\n", diff);
	struct mbox_series s;
	char err[256] = "";

	assert_int_equal(parse(m, &s, err, sizeof(err)), 0);
	assert_string_equal(s.patches[0].diff, diff);
	mbox_series_release(&s);
	free(m);
}

static const char diff_latin[] = "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n";

/* A patch mail whose whole body is base64 (utf-8 text with a diff). */
static void test_base64_body(void **state)
{
	const char *plain = "Fix the waiter's wakeup \xe2\x80\x94 no lost handoff.\n"
	                    "\nSigned-off-by: J\xc3\xb6rg <j@x>\n---\n f | 2 +-\n\n"
	                    "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n";
	gchar *b64 = g_base64_encode((const guchar *)plain, strlen(plain));
	char *text = g_strdup_printf("From: J\xc3\xb6rg <j@x>\nSubject: [PATCH] f: b64\n"
	                             "Message-ID: <b64@x>\nMIME-Version: 1.0\n"
	                             "Content-Type: text/plain; charset=utf-8\n"
	                             "Content-Transfer-Encoding: base64\n\n%s\n",
	                             b64);
	struct mbox_series s;
	char err[256] = "";

	assert_int_equal(parse(text, &s, err, sizeof(err)), 0);
	assert_int_equal(s.npatches, 1);
	assert_string_equal(s.patches[0].body, "Fix the waiter's wakeup \xe2\x80\x94 no lost "
	                                       "handoff.\n\nSigned-off-by: J\xc3\xb6rg <j@x>");
	assert_string_equal(s.patches[0].diff, diff_latin);
	/* the message as sent is kept for git am, base64 and all */
	assert_int_equal(s.patches[0].raw_len, strlen(text));
	assert_memory_equal(s.patches[0].raw, text, strlen(text));
	mbox_series_release(&s);
	g_free(b64);
	g_free(text);
}

/* The commit message inline, the patch attached (base64 or 7bit). */
static void test_multipart_attachment(void **state)
{
	const char *patch = "---\n f | 2 +-\n\n"
	                    "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n";
	int base64;

	for (base64 = 0; base64 <= 1; base64++) {
		gchar *enc = base64 ? g_base64_encode((const guchar *)patch, strlen(patch))
		                    : g_strdup(patch);
		char *text = g_strdup_printf(
		    "From: a <a@x>\nSubject: [PATCH] f: attached\nMessage-ID: <att%d@x>\n"
		    "MIME-Version: 1.0\n"
		    "Content-Type: multipart/mixed; boundary=\"=_bound\"\n\n"
		    "This is a multi-part message in MIME format.\n"
		    "--=_bound\nContent-Type: text/plain; charset=us-ascii\n"
		    "Content-Transfer-Encoding: 7bit\n\n"
		    "Make f say b.\n\nSigned-off-by: a <a@x>\n\n"
		    "--=_bound\nContent-Type: text/x-patch; name=\"0001-f.patch\"\n"
		    "Content-Disposition: attachment; filename=\"0001-f.patch\"\n"
		    "Content-Transfer-Encoding: %s\n\n%s\n--=_bound--\n",
		    base64, base64 ? "base64" : "7bit", enc);
		struct mbox_series s;
		char err[256] = "";

		assert_int_equal(parse(text, &s, err, sizeof(err)), 0);
		assert_int_equal(s.npatches, 1);
		assert_string_equal(s.patches[0].body, "Make f say b.\n\nSigned-off-by: a <a@x>");
		assert_string_equal(s.patches[0].diff, diff_latin);
		assert_null(strstr(s.patches[0].body, "Content-"));
		assert_null(strstr(s.patches[0].diff, "=_bound"));
		mbox_series_release(&s);
		g_free(enc);
		g_free(text);
	}
}

/* A Latin-1 body (declared, and undeclared 8bit) comes out as UTF-8. */
static void test_latin1_body(void **state)
{
	static const char *ctype[] = {"Content-Type: text/plain; charset=iso-8859-1\n", ""};
	size_t i;

	for (i = 0; i < 2; i++) {
		char *text = g_strdup_printf("From: Andr\xe9 <andre@x>\nSubject: [PATCH] caf\xe9\n"
		                             "Message-ID: <l1-%zu@x>\n%s"
		                             "Content-Transfer-Encoding: 8bit\n\n"
		                             "R\xe9veille le waiter.\n---\n%s",
		                             i, ctype[i], diff_latin);
		struct mbox_series s;
		char err[256] = "";

		assert_int_equal(parse(text, &s, err, sizeof(err)), 0);
		assert_string_equal(s.patches[0].body, "R\xc3\xa9veille le waiter.");
		assert_true(g_utf8_validate(s.patches[0].from, -1, NULL));
		assert_string_equal(s.patches[0].from, "Andr\xc3\xa9 <andre@x>");
		assert_string_equal(s.patches[0].title, "caf\xc3\xa9");
		mbox_series_release(&s);
		g_free(text);
	}
}

static void test_subject_forms(void **state)
{
	static const struct {
		const char *subject;
		int index, total, version;
		bool numbered, prefix;
	} cases[] = {
	    {"[PATCHv2 1/2] a", 1, 2, 2, true, true},
	    {"[PATCH -v4 0/8] a", 0, 8, 4, true, true},
	    {"[RFC PATCH net-next v2 01/10] a", 1, 10, 2, true, true},
	    {"[PATCH RESEND] a", 0, 0, 1, false, true},
	    {"[RFCv3 2/3] a", 2, 3, 3, true, true},
	    {"[PATCH-v5 3/4] a", 3, 4, 5, true, true},
	    {"[GIT PULL] locking fixes", 0, 0, 1, false, false},
	    {"Re: [PATCH v2 1/2] a", 1, 2, 2, true, true},
	    {"lock: words", 0, 0, 1, false, false},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mbox_mail m;

		memset(&m, 0, sizeof(m));
		m.subject = (char *)cases[i].subject;
		mbox_parse_subject(&m);
		assert_int_equal(m.index, cases[i].index);
		assert_int_equal(m.total, cases[i].total);
		assert_int_equal(m.version, cases[i].version);
		assert_int_equal(m.numbered, cases[i].numbered);
		assert_int_equal(m.patch_prefix, cases[i].prefix);
		free(m.title);
	}
}

/* A thread holding v1 and "[PATCHv2 n/2]" tests v2. */
static void test_patchv2_no_space(void **state)
{
	static const int idx[] = {1, 2};
	char *v1 = series(1, 2, idx, 2, true, "<cover.v1@x>");
	char *v2 = series(2, 2, idx, 2, true, "<cover.v2@x>");
	char **pieces = g_strsplit(v2, "[PATCH v2", -1);
	char *v2b, *all;
	struct mbox_series s;
	char err[256] = "";

	/* series() writes "[PATCH v2 n/2]": make it "[PATCHv2 n/2]" */
	v2b = g_strjoinv("[PATCHv2", pieces);
	g_strfreev(pieces);
	all = g_strconcat(v1, v2b, NULL);
	assert_int_equal(parse(all, &s, err, sizeof(err)), 0);
	assert_int_equal(s.version, 2);
	assert_string_equal(s.patches[0].message_id, "<p1.v2@x>");
	mbox_series_release(&s);
	free(v1);
	free(v2);
	g_free(v2b);
	g_free(all);
}

/* 70 patches: every one of them, in order. */
static void test_long_series(void **state)
{
	enum { N = 70 };
	int idx[N], i;
	char *m;
	struct mbox_series s;
	char err[256] = "";

	for (i = 0; i < N; i++)
		idx[i] = N - i;
	m = series(1, N, idx, N, true, "<cover.v1@x>");
	assert_int_equal(parse(m, &s, err, sizeof(err)), 0);
	assert_int_equal(s.npatches, N);
	for (i = 0; i < N; i++)
		assert_int_equal(s.patches[i].index, i + 1);
	mbox_series_release(&s);
	free(m);
}

/* One numbered mail of series tag (threaded under root, or a stray when NULL). */
static char *part(const char *tag, int k, int n, const char *root)
{
	char h[512];

	snprintf(h, sizeof(h),
	         "From: %s <%s@x>\nSubject: [PATCH %d/%d] %s: part %d\n"
	         "Message-ID: <%s%d@x>\n%s%s%s%s%s",
	         tag, tag, k, n, tag, k, tag, k, root ? "In-Reply-To: " : "", root ? root : "",
	         root ? "\nReferences: " : "", root ? root : "", root ? "\n" : "");
	return mail("From 0 Mon Sep 17 00:00:00 2001", h, k ? "part\n" : "cover\n",
	            k ? diff1 : NULL);
}

/* U 1/2, X 0/2, X 1/2, U 2/2, X 2/2: X is threaded, U a stray. */
static void test_interleaved_stray(void **state)
{
	char *m[5] = {part("U", 1, 2, NULL), part("X", 0, 2, NULL), part("X", 1, 2, "<X0@x>"),
	              part("U", 2, 2, NULL), part("X", 2, 2, "<X0@x>")};
	char *all = g_strconcat(m[0], m[1], m[2], m[3], m[4], NULL);
	struct mbox_series s;
	char err[256] = "";
	int i;

	assert_int_equal(parse(all, &s, err, sizeof(err)), 0);
	assert_non_null(s.cover);
	assert_string_equal(s.cover->message_id, "<X0@x>");
	assert_int_equal(s.npatches, 2);
	assert_string_equal(s.patches[0].message_id, "<X1@x>");
	assert_string_equal(s.patches[1].message_id, "<X2@x>");
	mbox_series_release(&s);
	/* the URL names U's first patch: U it is, both parts, no cover */
	mbox_series_init(&s);
	assert_int_equal(mbox_parse_thread(all, strlen(all), "<U1@x>", &s, err, sizeof(err)), 0);
	assert_null(s.cover);
	assert_int_equal(s.npatches, 2);
	assert_string_equal(s.patches[0].message_id, "<U1@x>");
	assert_string_equal(s.patches[1].message_id, "<U2@x>");
	mbox_series_release(&s);
	for (i = 0; i < 5; i++)
		free(m[i]);
	g_free(all);
}

/* Two threaded series interleaved: the URL's message-id decides. */
static void test_interleaved_threads_by_id(void **state)
{
	char *m[6] = {part("A", 0, 2, NULL),     part("B", 0, 2, NULL),
	              part("A", 1, 2, "<A0@x>"), part("B", 1, 2, "<B0@x>"),
	              part("B", 2, 2, "<B0@x>"), part("A", 2, 2, "<A0@x>")};
	char *all = g_strconcat(m[0], m[1], m[2], m[3], m[4], m[5], NULL);
	struct mbox_series s;
	char err[256] = "";
	int i;

	mbox_series_init(&s);
	assert_int_equal(mbox_parse_thread(all, strlen(all), "<B2@x>", &s, err, sizeof(err)), 0);
	assert_string_equal(s.cover->message_id, "<B0@x>");
	assert_string_equal(s.patches[0].message_id, "<B1@x>");
	assert_string_equal(s.patches[1].message_id, "<B2@x>");
	mbox_series_release(&s);
	mbox_series_init(&s);
	assert_int_equal(mbox_parse_thread(all, strlen(all), "<nope@x>", &s, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "<nope@x>"));
	for (i = 0; i < 6; i++)
		free(m[i]);
	g_free(all);
}

/* mboxo: an unescaped "From " sentence after a blank line is not a new mail. */
static void test_mboxo_from_in_body(void **state)
{
	char *m = mail("From 1 Mon Sep 17 00:00:00 2001",
	               "From: a <a@x>\nSubject: [PATCH] lock: spin less\nMessage-ID: <o@x>\n",
	               "Spin less.\n\nFrom the owner's side nothing changes.\n"
	               "Signed-off-by: a <a@x>\n",
	               diff1);
	struct mbox_series s;
	char err[256] = "";

	assert_int_equal(parse(m, &s, err, sizeof(err)), 0);
	assert_int_equal(s.npatches, 1);
	assert_string_equal(s.patches[0].body, "Spin less.\n\nFrom the owner's side nothing "
	                                       "changes.\nSigned-off-by: a <a@x>");
	assert_string_equal(s.patches[0].from, "a <a@x>");
	mbox_series_release(&s);
	free(m);
}

/* The author as git am reads it: in-body From; a DMARC-munged sender gives way. */
static void test_author(void **state)
{
	static const struct {
		const char *headers, *body, *author;
	} cases[] = {
	    {"From: Sender <sender@x>\nSubject: [PATCH] a\nMessage-ID: <ib@x>\n",
	     "From: Real Author <real@x>\n\nThe change.\n", "Real Author <real@x>"},
	    {"From: \"'Jane Dev' via locking\" <locking@googlegroups.com>\n"
	     "X-Original-From: Jane Dev <jane@x>\nReply-To: locking@googlegroups.com\n"
	     "Subject: [PATCH] a\nMessage-ID: <dm1@x>\n",
	     "The change.\n", "Jane Dev <jane@x>"},
	    {"From: Jane Dev via lkml <lkml@vger.example>\nReply-To: Jane Dev <jane@x>\n"
	     "Subject: [PATCH] a\nMessage-ID: <dm2@x>\n",
	     "The change.\n", "Jane Dev <jane@x>"},
	    {"From: Jane Dev via lkml <lkml@vger.example>\nSubject: [PATCH] a\n"
	     "Message-ID: <dm3@x>\n",
	     "From: Jane Dev <jane@x>\n\nThe change.\n", "Jane Dev <jane@x>"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *m = mail(NULL, cases[i].headers, cases[i].body, diff1);
		struct mbox_series s;
		char err[256] = "";

		assert_int_equal(parse(m, &s, err, sizeof(err)), 0);
		assert_string_equal(s.patches[0].from, cases[i].author);
		assert_string_equal(s.patches[0].body, "The change.");
		mbox_series_release(&s);
		free(m);
	}
}

/* What a reply needs: References, Cc and the list address. */
static void test_reply_headers(void **state)
{
	char *m = mail(NULL,
	               "From: a <a@x>\nTo: linux-kernel@vger.kernel.org\n"
	               "Cc: Peter Zijlstra <peterz@infradead.org>, =?utf-8?q?Ingo_Moln=C3=A1r?= "
	               "<mingo@x>\nSubject: [PATCH] a\nMessage-ID: <r1@x>\n"
	               "In-Reply-To: <q@x>\nReferences: <p@x>\n <q@x>\n",
	               "Text.\n", diff1);
	struct mbox_series s;
	char err[256] = "";

	assert_int_equal(parse(m, &s, err, sizeof(err)), 0);
	assert_string_equal(s.patches[0].references, "<p@x> <q@x>");
	assert_string_equal(s.patches[0].in_reply_to, "<q@x>");
	assert_string_equal(s.patches[0].list, "linux-kernel@vger.kernel.org");
	assert_non_null(strstr(s.patches[0].cc, "Peter Zijlstra <peterz@infradead.org>"));
	assert_non_null(strstr(s.patches[0].cc, "Ingo Moln\xc3\xa1r <mingo@x>"));
	mbox_series_release(&s);
	free(m);
}

/* Broken encodings are read as well as they can be, always as valid UTF-8. */
static void test_broken_encodings(void **state)
{
	static const char *const cases[] = {
	    /* an unknown charset */
	    "Content-Type: text/plain; charset=x-no-such-charset\n"
	    "Content-Transfer-Encoding: 8bit\n\nCaf\xe9 au lait.\n",
	    /* utf-8 declared, Latin-1 sent */
	    "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n"
	    "Caf\xe9 au lait.\n",
	    /* base64 with junk in it */
	    "Content-Transfer-Encoding: base64\n\nQ2Fm6SBhdSBsYWl0Lgo*!*=\n",
	    /* a multipart without its closing boundary */
	    "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\n"
	    "Caf\xe9 au lait.\n",
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = g_strdup_printf("From: a <a@x>\nSubject: [PATCH] broken %zu\n"
		                             "Message-ID: <broken%zu@x>\nMIME-Version: 1.0\n%s",
		                             i, i, cases[i]);
		struct mbox_mail m;
		char err[256] = "";

		memset(&m, 0, sizeof(m));
		assert_int_equal(mbox_mail_parse(text, strlen(text), &m, err, sizeof(err)), 0);
		assert_true(g_utf8_validate(m.body, -1, NULL));
		assert_non_null(strstr(m.body, "Caf"));
		assert_non_null(strstr(m.body, "au lait."));
		mbox_mail_release(&m);
		g_free(text);
	}
}

/* msg: one mail of a series with a From_ line; subject and ids given */
static char *series_mail(const char *subject, const char *id, const char *reply, bool with_diff)
{
	char headers[512];

	snprintf(headers, sizeof(headers),
	         "From: Dev Eloper <dev@example.org>\nSubject: %s\nMessage-ID: %s\n%s%s%s", subject,
	         id, reply ? "In-Reply-To: " : "", reply ? reply : "", reply ? "\n" : "");
	return mail("From 0 Mon Sep 17 00:00:00 2001", headers, "The waiter spins.\n",
	            with_diff ? diff1 : NULL);
}

/* parts[0..n) joined into one mbox (the parts freed) */
static char *join(char **parts, size_t n)
{
	GString *b = g_string_new(NULL);
	size_t i;

	for (i = 0; i < n; i++) {
		g_string_append(b, parts[i]);
		free(parts[i]);
	}
	return g_string_free(b, FALSE);
}

/* parse the mbox of parts[0..n) (freed) into s; parse's result */
static int parse_parts(char **parts, size_t n, struct mbox_series *s)
{
	char *m = join(parts, n), err[256] = "";
	int rc = parse(m, s, err, sizeof(err));

	g_free(m);
	return rc;
}

/* a netdev cover "[PATCH net-next v3 0/2]" over unversioned parts: one v3 series */
static void test_versioned_cover_unversioned_parts(void **state)
{
	char *p[] = {series_mail("[PATCH net-next v3 0/2] locking: handoff", "<c@x>", NULL, false),
	             series_mail("[PATCH 1/2] locking: add handoff", "<p1@x>", "<c@x>", true),
	             series_mail("[PATCH 2/2] locking: add pickup", "<p2@x>", "<p1@x>", true)};
	struct mbox_series s;

	(void)state;
	assert_int_equal(parse_parts(p, 3, &s), 0);
	assert_non_null(s.cover);
	assert_string_equal(s.cover->message_id, "<c@x>");
	assert_int_equal(s.version, 3);
	assert_int_equal(s.npatches, 2);
	mbox_series_release(&s);
}

/* Mercurial's "[PATCH 1 of 2]" numbering, cover "0 of 2" included */
static void test_mercurial_numbering(void **state)
{
	char *p[] = {series_mail("[PATCH 2 of 2] locking: add pickup", "<h2@x>", "<h0@x>", true),
	             series_mail("[PATCH 0 of 2] locking: handoff", "<h0@x>", NULL, false),
	             series_mail("[PATCH 1 of 2] locking: add handoff", "<h1@x>", "<h0@x>", true)};
	struct mbox_series s;

	(void)state;
	assert_int_equal(parse_parts(p, 3, &s), 0);
	assert_non_null(s.cover);
	assert_int_equal(s.npatches, 2);
	assert_string_equal(s.patches[0].message_id, "<h1@x>");
	assert_int_equal(s.patches[1].total, 2);
	assert_string_equal(s.patches[1].title, "locking: add pickup");
	mbox_series_release(&s);
}

/* a part past the numbering (3/2) is set aside; the rest is the series */
static void test_stray_part_set_aside(void **state)
{
	char *p[] = {series_mail("[PATCH 0/2] locking: handoff", "<s0@x>", NULL, false),
	             series_mail("[PATCH 1/2] locking: add handoff", "<s1@x>", "<s0@x>", true),
	             series_mail("[PATCH 2/2] locking: add pickup", "<s2@x>", "<s0@x>", true),
	             series_mail("[PATCH 3/2] locking: one more", "<s3@x>", "<s0@x>", true)};
	struct mbox_series s;

	(void)state;
	assert_int_equal(parse_parts(p, 4, &s), 0);
	assert_int_equal(s.npatches, 2);
	assert_int_equal(s.naside, 1);
	assert_false(s.aside[0].replaced);
	assert_string_equal(s.aside[0].mail.message_id, "<s3@x>");
	assert_int_equal(s.aside[0].mail.index, 3);
	assert_int_equal(s.aside[0].mail.total, 2);
	mbox_series_release(&s);
}

/* a part sent again in the same series: the later copy is the one taken */
static void test_resent_part_replaces(void **state)
{
	char *p[] = {series_mail("[PATCH 1/2] locking: add handoff", "<r1@x>", NULL, true),
	             series_mail("[PATCH 2/2] locking: add pickup", "<r2@x>", "<r1@x>", true),
	             series_mail("[PATCH 1/2] locking: add handoff", "<r1b@x>", "<r1@x>", true)};
	struct mbox_series s;

	(void)state;
	assert_int_equal(parse_parts(p, 3, &s), 0);
	assert_int_equal(s.npatches, 2);
	assert_string_equal(s.patches[0].message_id, "<r1b@x>");
	assert_string_equal(s.patches[1].message_id, "<r2@x>");
	/* the earlier copy is kept aside, not dropped */
	assert_int_equal(s.naside, 1);
	assert_true(s.aside[0].replaced);
	assert_string_equal(s.aside[0].mail.message_id, "<r1@x>");
	assert_int_equal(s.aside[0].mail.index, 1);
	mbox_series_release(&s);
}

/* the messages of an mbox, parsed one by one (mbox_split's callback) */
struct split_mails {
	struct mbox_mail mails[8];
	size_t n;
};

static int split_collect(const char *raw, size_t len, void *arg)
{
	struct split_mails *om = arg;

	if (om->n == 8)
		return 1;
	return mbox_mail_parse(raw, len, &om->mails[om->n++], NULL, 0);
}

/*
 * An unnumbered patch replying to a numbered series' cover is a series of
 * its own: grouped apart, and the one chosen while the numbered series
 * lacks a part; with every part there the numbered series is chosen.
 */
static void test_orphan_unnumbered_patch(void **state)
{
	char *p[] = {series_mail("[PATCH 0/2] locking: handoff", "<o0@x>", NULL, false),
	             series_mail("[PATCH 1/2] locking: add handoff", "<o1@x>", "<o0@x>", true),
	             series_mail("locking: an orphaned fix", "<or@x>", "<o0@x>", true),
	             series_mail("[PATCH 2/2] locking: add pickup", "<o2@x>", "<o0@x>", true)};
	char *m = join(p, 3), err[256] = "";
	struct split_mails om = {{{0}}, 0};
	size_t gof[3], i;
	struct mbox_series s;

	(void)state;
	assert_int_equal(mbox_split(m, strlen(m), split_collect, &om), 0);
	assert_int_equal(om.n, 3);
	assert_int_equal(mbox_group(om.mails, 3, gof), 2);
	assert_int_equal(gof[0], gof[1]);
	assert_true(gof[2] != gof[0] && gof[2] != (size_t)-1);
	for (i = 0; i < 3; i++)
		mbox_mail_release(&om.mails[i]);
	/* 2/2 missing: the orphan is the complete series */
	assert_int_equal(parse(m, &s, err, sizeof(err)), 0);
	assert_null(s.cover);
	assert_int_equal(s.npatches, 1);
	assert_string_equal(s.patches[0].message_id, "<or@x>");
	mbox_series_release(&s);
	g_free(m);
	/* every part there: the numbered series, without the orphan */
	p[0] = series_mail("[PATCH 0/2] locking: handoff", "<o0@x>", NULL, false);
	p[1] = series_mail("[PATCH 1/2] locking: add handoff", "<o1@x>", "<o0@x>", true);
	p[2] = series_mail("locking: an orphaned fix", "<or@x>", "<o0@x>", true);
	assert_int_equal(parse_parts(p, 4, &s), 0);
	assert_non_null(s.cover);
	assert_int_equal(s.npatches, 2);
	assert_string_equal(s.patches[1].message_id, "<o2@x>");
	mbox_series_release(&s);
}

/*
 * A whole series sent again in its thread without a version label: two
 * series, the later copy chosen; one part sent again stays a replacement
 * (test_resent_part_replaces).
 */
static void test_whole_series_resent(void **state)
{
	char *p[] = {series_mail("[PATCH 1/2] locking: add handoff", "<w1@x>", NULL, true),
	             series_mail("[PATCH 2/2] locking: add pickup", "<w2@x>", "<w1@x>", true),
	             series_mail("[PATCH 1/2] locking: add handoff", "<w1b@x>", "<w1@x>", true),
	             series_mail("[PATCH 2/2] locking: add pickup", "<w2b@x>", "<w1b@x>", true)};
	char *m = join(p, 4), err[256] = "";
	struct split_mails om = {{{0}}, 0};
	struct mbox_series s;
	size_t gof[4], i;

	(void)state;
	assert_int_equal(mbox_split(m, strlen(m), split_collect, &om), 0);
	assert_int_equal(om.n, 4);
	assert_int_equal(mbox_group(om.mails, 4, gof), 2);
	assert_int_equal(gof[0], gof[1]);
	assert_int_equal(gof[2], gof[3]);
	assert_true(gof[0] != gof[2]);
	for (i = 0; i < 4; i++)
		mbox_mail_release(&om.mails[i]);
	assert_int_equal(parse(m, &s, err, sizeof(err)), 0);
	assert_int_equal(s.npatches, 2);
	assert_string_equal(s.patches[0].message_id, "<w1b@x>");
	assert_string_equal(s.patches[1].message_id, "<w2b@x>");
	assert_int_equal(s.naside, 0);
	mbox_series_release(&s);
	g_free(m);
}

/* a pull request (git request-pull's text): URL and ref, its inline diff no patch */
static void test_pull_request(void **state)
{
	static const char *const at[] = {
	    "  git://git.example.org/locking.git locking-core-2026\n\nfor you to fetch.\n",
	    "  https://git.example.org/locking.git/\ntags/locking-v2\n\nfor you.\n",
	    "  git+ssh://git.example.org/locking.git \n\n",
	};
	static const char *const url[] = {"git://git.example.org/locking.git",
	                                  "https://git.example.org/locking.git/",
	                                  "ssh://git.example.org/locking.git"};
	static const char *const ref[] = {"locking-core-2026", "tags/locking-v2", "HEAD"};
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		char *body =
		    g_strdup_printf("Hi, please pull.\n\nThe following changes since commit "
		                    "0123456789abcdef:\n\n  locking: base (2026-11-30)\n\n"
		                    "are available in the Git repository at:\n\n%s",
		                    at[i]);
		char *m = mail("From 0 Mon Sep 17 00:00:00 2001",
		               "From: Maint <maint@example.org>\nSubject: [GIT PULL] locking for "
		               "next\nMessage-ID: <pull@x>\n",
		               body, i == 0 ? diff1 : NULL);
		struct mbox_series s;
		char err[256] = "";

		assert_int_equal(parse(m, &s, err, sizeof(err)), 0);
		assert_non_null(s.pull_url);
		assert_string_equal(s.pull_url, url[i]);
		assert_string_equal(s.pull_ref, ref[i]);
		assert_non_null(s.cover);
		assert_int_equal(s.npatches, 0);
		mbox_series_release(&s);
		free(m);
		g_free(body);
	}
}

/* a folded subject's tab is one space; a list's footer is not part of the diff */
static void test_folded_subject_and_list_footer(void **state)
{
	char *body = g_strdup_printf("The waiter spins.\n---\n mutex.c | 1 +\n\n%s"
	                             "_______________________________________________\n"
	                             "locking mailing list\nlocking@lists.example.org\n",
	                             diff1);
	char *m = mail("From 0 Mon Sep 17 00:00:00 2001",
	               "From: Dev <dev@example.org>\nSubject: [PATCH] locking/mutex: hand off\n"
	               "\tto the first waiter\nMessage-ID: <fold@x>\n",
	               body, NULL);
	struct mbox_series s;
	char err[256] = "";

	(void)state;
	assert_int_equal(parse(m, &s, err, sizeof(err)), 0);
	assert_string_equal(s.patches[0].subject,
	                    "[PATCH] locking/mutex: hand off to the first waiter");
	assert_string_equal(s.patches[0].diff, diff1);
	mbox_series_release(&s);
	free(m);
	g_free(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_single_patch),
	    cmocka_unit_test(test_mboxrd_from_quoting),
	    cmocka_unit_test(test_folded_headers_and_crlf),
	    cmocka_unit_test(test_rfc2047),
	    cmocka_unit_test(test_subject_prefixes),
	    cmocka_unit_test(test_cover_letter_and_order),
	    cmocka_unit_test(test_missing_part),
	    cmocka_unit_test(test_no_diff),
	    cmocka_unit_test(test_threading_and_versions),
	    cmocka_unit_test(test_prefix_parsing_in_series),
	    cmocka_unit_test(test_quoted_printable_body),
	    cmocka_unit_test(test_diff_keeps_trailing_space_context),
	    cmocka_unit_test(test_base64_body),
	    cmocka_unit_test(test_multipart_attachment),
	    cmocka_unit_test(test_latin1_body),
	    cmocka_unit_test(test_subject_forms),
	    cmocka_unit_test(test_patchv2_no_space),
	    cmocka_unit_test(test_long_series),
	    cmocka_unit_test(test_interleaved_stray),
	    cmocka_unit_test(test_interleaved_threads_by_id),
	    cmocka_unit_test(test_mboxo_from_in_body),
	    cmocka_unit_test(test_author),
	    cmocka_unit_test(test_reply_headers),
	    cmocka_unit_test(test_broken_encodings),
	    cmocka_unit_test(test_versioned_cover_unversioned_parts),
	    cmocka_unit_test(test_mercurial_numbering),
	    cmocka_unit_test(test_stray_part_set_aside),
	    cmocka_unit_test(test_resent_part_replaces),
	    cmocka_unit_test(test_orphan_unnumbered_patch),
	    cmocka_unit_test(test_whole_series_resent),
	    cmocka_unit_test(test_pull_request),
	    cmocka_unit_test(test_folded_subject_and_list_footer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
