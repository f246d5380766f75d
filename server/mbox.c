/*
 * mbox.c - the mbox parser behind every submission: GMime reads each
 * message, locklab reads its prefixes, body and diff, and mbox_split cuts
 * an mbox into messages; mbox_series.c makes series of them.
 *
 * Strings built here come from strutil_buf (lib/strutil.h) and
 * GLib (g_strdup); since GLib 2.46 g_malloc is the system malloc, so
 * callers free() them like any other.
 */
#include "mbox.h"
#include "strutil.h"

#include <ctype.h>
#include <gmime/gmime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static pthread_once_t mbox_once = PTHREAD_ONCE_INIT;
static GMimeParserOptions *mbox_popts;

/* GMime is set up once per process, whichever thread parses first. */
static void mbox_gmime_start(void)
{
	static const char *fallback[] = {"utf-8", "iso-8859-1", NULL};

	g_mime_init();
	mbox_popts = g_mime_parser_options_new();
	g_mime_parser_options_set_fallback_charsets(mbox_popts, fallback);
	/* a broken header or part is read as well as it can be, never refused */
	g_mime_parser_options_set_rfc2047_compliance_mode(mbox_popts, GMIME_RFC_COMPLIANCE_LOOSE);
}

void mbox_mail_release(struct mbox_mail *m)
{
	free(m->message_id);
	free(m->in_reply_to);
	free(m->references);
	free(m->from);
	free(m->date);
	free(m->subject);
	free(m->title);
	free(m->cc);
	free(m->list);
	free(m->body);
	free(m->diff);
	free(m->pull_url);
	free(m->pull_ref);
	free(m->raw);
	memset(m, 0, sizeof(*m));
}

void mbox_series_init(struct mbox_series *s)
{
	memset(s, 0, sizeof(*s));
}

void mbox_series_release(struct mbox_series *s)
{
	size_t i;

	if (s->cover) {
		mbox_mail_release(s->cover);
		free(s->cover);
	}
	for (i = 0; i < s->npatches; i++)
		mbox_mail_release(&s->patches[i]);
	free(s->patches);
	for (i = 0; i < s->naside; i++)
		mbox_mail_release(&s->aside[i].mail);
	free(s->aside);
	mbox_series_init(s);
}

char *mbox_decode_header(const char *v)
{
	pthread_once(&mbox_once, mbox_gmime_start);
	return g_mime_utils_header_decode_text(mbox_popts, v);
}

static char *dup_trim(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return g_strndup(s, n);
}

/* "v2", "PATCHv2", "RFCv2", "-v2", "PATCH-v2" -> 2; else 0. */
static int prefix_version(const char *tok)
{
	size_t n = strlen(tok), i = n;
	int v;
	char tail;

	while (i && isdigit((unsigned char)tok[i - 1]))
		i--;
	if (i == n || i == 0 || (tok[i - 1] != 'v' && tok[i - 1] != 'V'))
		return 0;
	if (sscanf(tok + i, "%d%c", &v, &tail) != 1 || v < 1)
		return 0;
	i--; /* the 'v' */
	if (i && tok[i - 1] == '-')
		i--;
	if (i == 0 || (i == 5 && !strncasecmp(tok, "PATCH", 5)) ||
	    (i == 3 && !strncasecmp(tok, "RFC", 3)))
		return v;
	return 0;
}

void mbox_parse_subject(struct mbox_mail *m)
{
	const char *s = m->subject;

	m->version = 1;
	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!strncasecmp(s, "re:", 3) || !strncasecmp(s, "aw:", 3)) {
			m->is_reply = true;
			s += 3;
			continue;
		}
		if (*s == '[') {
			const char *close = strchr(s, ']');
			char group[256];
			char *tok, *save = NULL;
			size_t n;

			if (!close)
				break;
			n = (size_t)(close - s - 1);
			if (n >= sizeof(group))
				n = sizeof(group) - 1;
			memcpy(group, s + 1, n);
			group[n] = '\0';
			int num = -1;    /* a number just read: Mercurial's "[PATCH 1 of 2]" */
			bool of = false; /* and "of" after it */

			for (tok = strtok_r(group, " \t,", &save); tok;
			     tok = strtok_r(NULL, " \t,", &save)) {
				int a, b, v;
				char tail;
				bool digits = *tok && strspn(tok, "0123456789") == strlen(tok);

				if (digits && of && num >= 0 && atoi(tok) > 0) {
					m->index = num;
					m->total = atoi(tok);
					m->numbered = true;
				}
				of = num >= 0 && !of && !strcasecmp(tok, "of");
				num = digits && strlen(tok) < 6 && !of ? atoi(tok) : of ? num : -1;
				if (sscanf(tok, "%d/%d%c", &a, &b, &tail) == 2 && a >= 0 && b > 0) {
					m->index = a;
					m->total = b;
					m->numbered = true;
				} else if ((v = prefix_version(tok)) > 0) {
					m->version = v;
				}
				if (!strncasecmp(tok, "PATCH", 5) || !strcasecmp(tok, "RFC") ||
				    (!strncasecmp(tok, "RFC", 3) && prefix_version(tok)))
					m->patch_prefix = true;
			}
			s = close + 1;
			continue;
		}
		break;
	}
	m->title = dup_trim(s, strlen(s));
}

static bool line_is(const char *p, const char *prefix)
{
	return strncmp(p, prefix, strlen(prefix)) == 0;
}

static const char *next_line(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl ? nl + 1 : end;
}

/* Where the diff starts in body [p, end), or NULL. */
static const char *find_diff(const char *p, const char *end)
{
	while (p < end) {
		const char *n = next_line(p, end);

		if (line_is(p, "diff --git ") || line_is(p, "diff -"))
			return p;
		if (line_is(p, "--- ") && n < end && line_is(n, "+++ "))
			return p;
		if (line_is(p, "Index: ") && n < end && line_is(n, "===="))
			return p;
		p = n;
	}
	return NULL;
}

/*
 * Append bytes in charset cs (NULL: undeclared) to b as UTF-8: a declared
 * charset is converted; bytes that are still not UTF-8 are read as Latin-1
 * when nothing was declared, else invalid sequences become U+FFFD.  NUL
 * bytes go (PostgreSQL text cannot hold them).
 */
static void add_text(struct strutil_buf *b, const char *cs, const char *p, size_t n)
{
	gchar *conv = NULL, *valid = NULL;
	gsize outlen = 0;
	size_t i, start = b->len;

	if (cs && g_ascii_strcasecmp(cs, "utf-8") && g_ascii_strcasecmp(cs, "utf8") &&
	    g_ascii_strcasecmp(cs, "us-ascii"))
		conv = g_convert(p, (gssize)n, "UTF-8", cs, NULL, &outlen, NULL);
	if (conv) {
		p = conv;
		n = outlen;
	}
	if (!g_utf8_validate(p, (gssize)n, NULL)) {
		if (!cs || !g_ascii_strcasecmp(cs, "us-ascii") ||
		    (!conv && g_ascii_strcasecmp(cs, "utf-8")))
			valid = g_convert(p, (gssize)n, "UTF-8", "ISO-8859-1", NULL, &outlen, NULL);
		else
			valid = g_utf8_make_valid(p, (gssize)n), outlen = strlen(valid);
		if (valid) {
			p = valid;
			n = outlen;
		}
	}
	strutil_buf_addlen(b, p, n);
	g_free(conv);
	g_free(valid);
	for (i = start; i < b->len; i++)
		if (b->buf[i] == '\0')
			b->buf[i] = ' ';
	if (b->len && b->buf[b->len - 1] != '\n')
		strutil_buf_addch(b, '\n', 1);
}

static bool name_ends(const char *fn, const char *ext)
{
	size_t a = strlen(fn), b = strlen(ext);

	return a >= b && !strcasecmp(fn + a - b, ext);
}

/*
 * Whether a base64 part holds bytes base64 has no use for (GMime skips
 * them and decodes the rest into garbage): anything but the alphabet,
 * '=' and white space.
 */
static bool base64_broken(GMimeDataWrapper *dw)
{
	GMimeStream *raw = g_mime_data_wrapper_get_stream(dw), *mem;
	GByteArray *bytes;
	bool broken = false;

	if (g_mime_data_wrapper_get_encoding(dw) != GMIME_CONTENT_ENCODING_BASE64 || !raw)
		return false;
	mem = g_mime_stream_mem_new();
	g_mime_stream_reset(raw);
	g_mime_stream_write_to_stream(raw, mem);
	g_mime_stream_reset(raw);
	bytes = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem));
	for (guint i = 0; i < bytes->len && !broken; i++) {
		unsigned char c = bytes->data[i];

		broken = !g_ascii_isalnum(c) && !strchr("+/= \t\r\n", c);
	}
	g_object_unref(mem);
	return broken;
}

/*
 * The text of a leaf part, decoded and in UTF-8, appended to b when it is
 * text (not HTML) or a .patch/.diff attachment; other attachments (images,
 * tarballs, a 50 MB blob) are skipped without being decoded.  A text part
 * whose base64 is broken sets *defect.
 */
static void part_text(GMimePart *part, struct strutil_buf *b, const char **defect)
{
	GMimeObject *obj = GMIME_OBJECT(part);
	GMimeContentType *ct = g_mime_object_get_content_type(obj);
	const char *fn = g_mime_part_get_filename(part);
	GMimeDataWrapper *dw;
	GMimeStream *mem;
	GByteArray *bytes;
	bool is_text = !ct || g_mime_content_type_is_type(ct, "text", "*");

	if (ct && g_mime_content_type_is_type(ct, "text", "html"))
		return;
	if (!is_text && !(fn && (name_ends(fn, ".patch") || name_ends(fn, ".diff"))))
		return;
	dw = g_mime_part_get_content(part);
	if (!dw)
		return;
	if (base64_broken(dw))
		*defect = "a text part's base64 holds bytes that are not base64";
	mem = g_mime_stream_mem_new();
	g_mime_data_wrapper_write_to_stream(dw, mem);
	bytes = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem));
	add_text(b, g_mime_object_get_content_type_parameter(obj, "charset"),
	         (const char *)bytes->data, bytes->len);
	g_object_unref(mem);
}

/* Every text part of obj in order; of a multipart/alternative the first. */
static void body_text(GMimeObject *obj, struct strutil_buf *b, int depth, const char **defect)
{
	if (depth > 8)
		return;
	if (GMIME_IS_MULTIPART(obj)) {
		GMimeMultipart *mp = GMIME_MULTIPART(obj);
		GMimeContentType *ct = g_mime_object_get_content_type(obj);
		bool alt = ct && g_mime_content_type_is_type(ct, "multipart", "alternative");
		int i, n = g_mime_multipart_get_count(mp);

		for (i = 0; i < n; i++) {
			size_t before = b->len;

			body_text(g_mime_multipart_get_part(mp, i), b, depth + 1, defect);
			if (alt && b->len > before)
				break;
		}
	} else if (GMIME_IS_PART(obj)) {
		part_text(GMIME_PART(obj), b, defect);
	}
	/* a forwarded message/rfc822 is not this mail's text */
}

/* "<a> <b>" of a References/In-Reply-To value; NULL when it holds none. */
static char *msgid_list(const char *value, bool first_only)
{
	GMimeReferences *refs;
	struct strutil_buf b = STRUTIL_BUF_INIT;
	int i, n;

	if (!value)
		return NULL;
	refs = g_mime_references_parse(mbox_popts, value);
	n = refs ? g_mime_references_length(refs) : 0;
	if (n == 0) {
		if (refs)
			g_mime_references_free(refs);
		return NULL;
	}
	for (i = 0; i < n && !(first_only && i); i++)
		strutil_buf_addf(&b, "%s<%s>", i ? " " : "",
		                 g_mime_references_get_message_id(refs, i));
	g_mime_references_free(refs);
	return strutil_buf_detach(&b);
}

static char *addresses(InternetAddressList *l)
{
	if (!l || internet_address_list_length(l) == 0)
		return NULL;
	return internet_address_list_to_string(l, NULL, FALSE);
}

/* The first mailbox of l, or NULL. */
static InternetAddress *first_address(InternetAddressList *l)
{
	if (!l || internet_address_list_length(l) == 0)
		return NULL;
	return internet_address_list_get_address(l, 0);
}

/*
 * The author: From:, unless a list rewrote it for DMARC ("Name via lkml"
 * <list@...>): then X-Original-From, else a Reply-To that is not the list.
 */
static char *mail_author(GMimeMessage *msg)
{
	InternetAddressList *from = g_mime_message_get_from(msg);
	InternetAddress *a = first_address(from);
	const char *name = a ? internet_address_get_name(a) : NULL;
	const char *orig;
	char *who = NULL;

	if (!a)
		return g_strdup("");
	if (name && strstr(name, " via ")) {
		orig = g_mime_object_get_header(GMIME_OBJECT(msg), "X-Original-From");
		if (orig) {
			InternetAddressList *l = internet_address_list_parse(mbox_popts, orig);

			who = addresses(l);
			if (l)
				g_object_unref(l);
		}
		if (!who) {
			InternetAddress *r = first_address(g_mime_message_get_reply_to(msg));

			if (r && INTERNET_ADDRESS_IS_MAILBOX(r) && INTERNET_ADDRESS_IS_MAILBOX(a) &&
			    g_ascii_strcasecmp(
			        internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(r)),
			        internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(a))))
				who = internet_address_to_string(r, NULL, FALSE);
		}
	}
	return who ? who : addresses(from);
}

/* The list's address: List-Post's mailto:, else the first To:. */
static char *mail_list(GMimeMessage *msg)
{
	const char *post = g_mime_object_get_header(GMIME_OBJECT(msg), "List-Post");
	InternetAddress *to;

	if (post) {
		const char *m = strstr(post, "mailto:");

		if (m) {
			size_t n;

			m += 7;
			n = strcspn(m, ">? \t");
			if (n)
				return g_strndup(m, n);
		}
	}
	to = first_address(g_mime_message_get_addresses(msg, GMIME_ADDRESS_TYPE_TO));
	if (to && INTERNET_ADDRESS_IS_MAILBOX(to))
		return g_strdup(internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(to)));
	return NULL;
}

/*
 * In-body "From:", "Subject:" and "Date:" lines opening the body, as git's
 * mailinfo reads them: the author (From) and the title (Subject) of the
 * commit.  Returns where the commit message starts.
 */
static const char *inbody_headers(struct mbox_mail *m, const char *b, const char *end)
{
	const char *p = b, *n;
	bool any = false;

	while (p < end && *p == '\n')
		p++;
	for (; p < end; p = n) {
		char *v;

		n = next_line(p, end);
		if (line_is(p, "From: ")) {
			v = dup_trim(p + 6, (size_t)(n - p - 6));
			free(m->from);
			m->from = mbox_decode_header(v);
			g_free(v);
		} else if (line_is(p, "Subject: ")) {
			struct mbox_mail t = {0};
			char *d;

			v = dup_trim(p + 9, (size_t)(n - p - 9));
			d = mbox_decode_header(v);
			t.subject = d;
			mbox_parse_subject(&t);
			free(m->title);
			m->title = t.title;
			free(d);
			g_free(v);
		} else if (!line_is(p, "Date: ")) {
			break;
		}
		any = true;
	}
	if (!any)
		return b;
	while (p < end && *p == '\n')
		p++;
	return p;
}

/* The commit message and the diff out of the decoded body text. */
/* Runs of white space (a folded header's tab) made one space, in place. */
static void squeeze_space(char *s)
{
	char *w = s;
	bool space = false;

	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') {
			space = true;
			continue;
		}
		if (space)
			*w++ = ' ';
		space = false;
		*w++ = *s;
	}
	*w = '\0';
}

static void split_body(struct mbox_mail *m, const char *b, size_t len)
{
	const char *bend = b + len, *diff, *sep = NULL, *q, *sig = NULL;

	b = inbody_headers(m, b, bend);
	diff = find_diff(b, bend);
	if (diff) {
		/* the commit message ends at the "---" line before the diffstat */
		for (q = b; q < diff; q = next_line(q, diff))
			if ((line_is(q, "---\n") || line_is(q, "--- \n")) && !sep)
				sep = q;
		/*
		 * the diff ends at a "-- " signature line (format-patch version)
		 * or at a list's footer ("____" then the list's name): no diff
		 * line starts with '_'
		 */
		for (q = diff; q < bend; q = next_line(q, bend))
			if (line_is(q, "-- \n") || (bend - q == 3 && line_is(q, "-- ")) ||
			    line_is(q, "____")) {
				sig = q;
				break;
			}
		{
			/*
			 * Only blank lines are dropped at the end: a context line of
			 * an empty line is a single space, and trimming it breaks
			 * the hunk ("corrupt patch" in git am).
			 */
			size_t dl = (size_t)((sig ? sig : bend) - diff);

			while (dl && diff[dl - 1] == '\n')
				dl--;
			m->diff = g_malloc(dl + 2);
			memcpy(m->diff, diff, dl);
			m->diff[dl] = '\n'; /* the final newline git am wants */
			m->diff[dl + 1] = '\0';
		}
	}
	m->body = dup_trim(b, (size_t)((sep ? sep : diff ? diff : bend) - b));
}

/* The next line of text after p (at its NUL when none). */
static const char *line_after(const char *p)
{
	const char *e = strchr(p, '\n');

	return e ? e + 1 : p + strlen(p);
}

/* A repository URL as git request-pull writes it: scheme:// or user@host:. */
static bool pull_url_ok(const char *w, size_t n)
{
	size_t i = 0;

	while (i < n && (isalnum((unsigned char)w[i]) || w[i] == '+' || w[i] == '-'))
		i++;
	return i && i + 3 < n && (!strncmp(w + i, "://", 3) || (w[i] == '@' && memchr(w, ':', n)));
}

/*
 * git request-pull's text: "The following changes since commit ..." and,
 * further on, "are available in the Git repository at:", blank lines, then
 * "  URL REF" (the ref may be wrapped onto the next line, or missing: the
 * remote's HEAD).  Sets m->pull_url and m->pull_ref (git+ssh:// is ssh://).
 */
static void pull_request(struct mbox_mail *m, const char *text)
{
	static const char intro[] = "the following changes since commit";
	static const char at[] = "are available in the git repository at:";
	const char *p = text, *w, *e;
	bool since = false;
	size_t n;

	for (; *p; p = line_after(p)) {
		if (!strncasecmp(p, intro, sizeof(intro) - 1))
			since = true;
		else if (since && !strncasecmp(p, at, sizeof(at) - 1))
			break;
	}
	if (!*p)
		return;
	for (p = line_after(p); *p && strspn(p, " \t\r") == strcspn(p, "\n"); p = line_after(p))
		;
	w = p + strspn(p, " \t");
	n = strcspn(w, " \t\r\n");
	if (!pull_url_ok(w, n))
		return;
	if (!strncasecmp(w, "git+ssh://", 10))
		m->pull_url = g_strdup_printf("ssh://%.*s", (int)(n - 10), w + 10);
	else
		m->pull_url = g_strndup(w, n);
	e = w + n + strspn(w + n, " \t\r");
	if (*e == '\n' && e[1] && !isspace((unsigned char)e[1]))
		e++; /* the ref wrapped onto a line of its own */
	n = strcspn(e, " \t\r\n");
	m->pull_ref = n ? g_strndup(e, n) : g_strdup("HEAD");
}

int mbox_mail_parse(const char *raw, size_t len, struct mbox_mail *m, char *err, size_t errlen)
{
	GMimeStream *stream = NULL;
	GMimeParser *parser = NULL;
	GMimeMessage *msg = NULL;
	GMimeObject *obj;
	struct strutil_buf body = STRUTIL_BUF_INIT;
	const char *v;
	int ret = -1;

	pthread_once(&mbox_once, mbox_gmime_start);
	m->raw = g_malloc(len + 1);
	memcpy(m->raw, raw, len);
	m->raw[len] = '\0';
	m->raw_len = len;
	stream = g_mime_stream_mem_new_with_buffer(raw, len);
	parser = g_mime_parser_new_with_stream(stream);
	g_mime_parser_set_format(parser, GMIME_FORMAT_MESSAGE);
	msg = g_mime_parser_construct_message(parser, mbox_popts);
	if (!msg) {
		strutil_errf(err, errlen, "not a mail message");
		goto out;
	}
	obj = GMIME_OBJECT(msg);
	if (!g_mime_object_get_header(obj, "From") && !g_mime_object_get_header(obj, "Subject") &&
	    !g_mime_object_get_header(obj, "Message-ID")) {
		strutil_errf(err, errlen,
		             "not a mail message: no From, Subject or Message-ID header");
		goto out;
	}
	if ((v = g_mime_message_get_message_id(msg)) && *v)
		m->message_id = g_strdup_printf("<%s>", v);
	m->in_reply_to = msgid_list(g_mime_object_get_header(obj, "In-Reply-To"), true);
	m->references = msgid_list(g_mime_object_get_header(obj, "References"), false);
	if ((v = g_mime_object_get_header(obj, "Date")))
		m->date = dup_trim(v, strlen(v));
	v = g_mime_message_get_subject(msg);
	m->subject = dup_trim(v ? v : "", strlen(v ? v : ""));
	squeeze_space(m->subject);
	m->from = mail_author(msg);
	m->cc = addresses(g_mime_message_get_addresses(msg, GMIME_ADDRESS_TYPE_CC));
	m->list = mail_list(msg);
	mbox_parse_subject(m);

	if (g_mime_message_get_mime_part(msg))
		body_text(g_mime_message_get_mime_part(msg), &body, 0, &m->defect);
	split_body(m, strutil_buf_str(&body), body.len);
	pull_request(m, strutil_buf_str(&body));
	ret = 0;
out:
	strutil_buf_release(&body);
	if (msg)
		g_object_unref(msg);
	if (parser)
		g_object_unref(parser);
	if (stream)
		g_object_unref(stream);
	if (ret)
		mbox_mail_release(m);
	return ret;
}

/*
 * A From_ line starts a message when it opens the buffer or follows a
 * blank line, carries a time and a year ("From x Mon Sep 17 00:00:00
 * 2001", as git's mailsplit wants), and a header follows it.  A sentence
 * beginning "From " in an mboxo commit message is none of these.
 */
static bool is_from_line(const char *start, const char *p, const char *end)
{
	const char *n, *colon, *c;
	bool time = false;

	if (end - p < 5 || strncmp(p, "From ", 5) != 0)
		return false;
	if (p != start && !(p - start >= 2 && p[-1] == '\n' &&
	                    (p[-2] == '\n' || (p - start >= 3 && p[-2] == '\r' && p[-3] == '\n'))))
		return false;
	n = next_line(p, end);
	for (c = p + 5; c + 2 < n; c++)
		if (c[0] == ':' && isdigit((unsigned char)c[-1]) && isdigit((unsigned char)c[1]) &&
		    isdigit((unsigned char)c[2]))
			time = true;
	if (!time)
		return false;
	{
		const char *e = n;
		int digits = 0;

		while (e > p && isspace((unsigned char)e[-1]))
			e--;
		/* the year, perhaps followed by a zone: " 2001" or " 2001 +0000" */
		for (c = p + 5; c < e; c++) {
			if (isdigit((unsigned char)*c)) {
				digits++;
			} else {
				if (digits == 4 && (*c == ' ' || *c == '\r'))
					break;
				digits = 0;
			}
		}
		if (digits != 4)
			return false;
	}
	if (n >= end)
		return false;
	colon = memchr(n, ':', (size_t)(next_line(n, end) - n));
	return colon && colon > n && !memchr(n, ' ', (size_t)(colon - n));
}

/* Copy [p, end) to b with CRLF -> LF and one '>' of ">From " lines removed. */
static void unquote(struct strutil_buf *b, const char *p, const char *end)
{
	while (p < end) {
		const char *n = next_line(p, end), *q = p;
		size_t len = (size_t)(n - p);

		while (q < n && *q == '>')
			q++;
		if (q > p && n - q >= 5 && strncmp(q, "From ", 5) == 0)
			p++, len--;
		if (len >= 2 && p[len - 1] == '\n' && p[len - 2] == '\r') {
			strutil_buf_addlen(b, p, len - 2);
			strutil_buf_addch(b, '\n', 1);
		} else {
			strutil_buf_addlen(b, p, len);
		}
		p = n;
	}
}

int mbox_split(const char *buf, size_t len, int (*fn)(const char *raw, size_t len, void *arg),
               void *arg)
{
	const char *p = buf, *end = buf + len;
	struct strutil_buf b = STRUTIL_BUF_INIT;
	int rc = 0;

	while (p < end && rc == 0) {
		const char *mstart, *q;

		if (is_from_line(buf, p, end))
			p = next_line(p, end);
		mstart = p;
		for (q = p; q < end; q = next_line(q, end))
			if (q != mstart && *q == 'F' && is_from_line(buf, q, end))
				break;
		strutil_buf_truncate(&b, 0);
		unquote(&b, mstart, q);
		if (b.len)
			rc = fn(b.buf, b.len, arg);
		p = q;
	}
	strutil_buf_release(&b);
	return rc;
}
