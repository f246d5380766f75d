/*
 * mbox.c - the mbox parser behind every submission: GMime reads each
 * message, locklab reads the prefixes, the diff and the series.
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
	free(s->set_aside);
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

struct collect {
	struct mbox_mail *mails;
	size_t n, cap;
	char *err;
	size_t errlen;
	size_t seen; /* messages split off, parsed or not */
};

static struct mbox_limits limits = {MBOX_MAX_MESSAGES, MBOX_MAX_PATCHES, MBOX_MAX_PATCH_BYTES};

void mbox_set_limits(const struct mbox_limits *l)
{
	limits = *l;
}

static int collect_one(const char *raw, size_t len, void *arg)
{
	struct collect *c = arg;
	char why[160];

	if (++c->seen > limits.max_messages)
		return 1; /* past --max-mbox-messages: nothing more is parsed */
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->mails = g_realloc_n(c->mails, c->cap, sizeof(*c->mails));
	}
	memset(&c->mails[c->n], 0, sizeof(c->mails[c->n]));
	if (mbox_mail_parse(raw, len, &c->mails[c->n], why, sizeof(why)) == 0)
		c->n++;
	/* a fragment that is no message is not part of any series */
	return 0;
}

static int cmp_index(const void *a, const void *b)
{
	const struct mbox_mail *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

/* One series candidate: the mails of a thread (or of strays) and a version. */
struct group {
	char *key;
	int version;
	size_t first; /* where it starts in the mbox */
	bool cover, threaded;
	bool numbered; /* a member is numbered (a cover letter or n/m) */
	bool complete; /* unnumbered, or every part 1..M (M > 0) is there */
	int copy;      /* 1, 2, ...: a whole series sent again (grouping_copies) */
};

/* The candidate a message belongs to: a patch, or a cover letter (0/N). */
static bool is_candidate(const struct mbox_mail *m)
{
	return !m->is_reply && (m->diff || m->pull_url || (m->numbered && m->index == 0));
}

/* The first id of "<a> <b>" (new), or NULL. */
static char *first_id(const char *list)
{
	const char *e;

	if (!list || !(e = strchr(list, '>')))
		return NULL;
	return g_strndup(list, (size_t)(e - list + 1));
}

/*
 * Thread tops: top[i] is the earliest ancestor of i in the mbox, found
 * through In-Reply-To (else the last of References) and a hash of
 * Message-IDs: linear in the number of mails.
 */
static void thread_tops(struct mbox_mail *mails, size_t n, GHashTable *ids, size_t *top)
{
	size_t *parent = g_new(size_t, n), i;
	size_t *path = g_new(size_t, n);

	for (i = 0; i < n; i++) {
		const char *pid = mails[i].in_reply_to;
		char *last = NULL;
		gpointer v = NULL;

		if (!pid && mails[i].references) {
			const char *l = strrchr(mails[i].references, '<');

			pid = last = l ? g_strdup(l) : NULL;
		}
		parent[i] = i;
		if (pid && g_hash_table_lookup_extended(ids, pid, NULL, &v))
			parent[i] = GPOINTER_TO_SIZE(v);
		g_free(last);
		top[i] = (size_t)-1;
	}
	for (i = 0; i < n; i++) {
		size_t k = i, depth = 0, j;

		/* climb until a known top, a root, or a loop (depth > n) */
		while (top[k] == (size_t)-1 && parent[k] != k && depth < n) {
			path[depth++] = k;
			top[k] = (size_t)-2; /* on the path: a loop stops here */
			k = parent[k];
		}
		if (top[k] == (size_t)-1 || top[k] == (size_t)-2)
			top[k] = k;
		for (j = 0; j < depth; j++)
			top[path[j]] = top[k];
	}
	g_free(parent);
	g_free(path);
}

/* The series candidates of an mbox: grouping_make/grouping_release pair up. */
struct grouping {
	GHashTable *ids;  /* Message-ID -> index of its first mail (borrowed keys) */
	GHashTable *keys; /* group key -> group index (keys owned by groups) */
	size_t *top;      /* the thread top of each mail */
	size_t *gof;      /* the group of each mail, (size_t)-1 for none */
	struct group *groups;
	size_t ngroups;
};

/* A cover letter (0/N) that could head a series of total parts. */
static bool is_cover_of(const struct mbox_mail *c, int total)
{
	return !c->is_reply && !c->diff && c->numbered && c->index == 0 && c->total == total;
}

/*
 * The version mails[i] belongs to: its own, but an unversioned part under a
 * versioned cover of its numbering ("[PATCH net-next v3 0/4]" over
 * "[PATCH 1/4]", as netdev sends them) takes the cover's.
 */
static int series_version(const struct mbox_mail *mails, const struct grouping *g, size_t i)
{
	const struct mbox_mail *m = &mails[i], *top = &mails[g->top[i]];
	gpointer v;

	if (m->version != 1 || !m->numbered || m->index == 0)
		return m->version;
	if (m->in_reply_to && g_hash_table_lookup_extended(g->ids, m->in_reply_to, NULL, &v) &&
	    is_cover_of(&mails[GPOINTER_TO_SIZE(v)], m->total))
		return mails[GPOINTER_TO_SIZE(v)].version;
	if (is_cover_of(top, m->total))
		return top->version;
	return m->version;
}

/*
 * An unnumbered patch in the thread of a numbered series ("This is an
 * orphaned patch!" replying to a "[PATCH 0/2]") is no part of it: a
 * series of its own, as Patchwork makes it.
 */
static void grouping_orphans(struct mbox_mail *mails, size_t n, struct grouping *g)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct group *gr;

		if (g->gof[i] == (size_t)-1 || !mails[i].diff || mails[i].numbered ||
		    !g->groups[g->gof[i]].numbered)
			continue;
		gr = &g->groups[g->ngroups];
		gr->key = g_strdup_printf("orphan %zu", i);
		gr->version = mails[i].version;
		gr->first = i;
		gr->threaded = g->groups[g->gof[i]].threaded;
		g->gof[i] = g->ngroups++;
	}
}

/* The numbering M of each group's parts (new, g->ngroups entries). */
static int *grouping_totals(const struct mbox_mail *mails, size_t n, const struct grouping *g)
{
	int *total = g_new0(int, g->ngroups ? g->ngroups : 1);
	size_t i;

	for (i = 0; i < n; i++)
		if (g->gof[i] != (size_t)-1 && mails[i].diff && mails[i].numbered &&
		    mails[i].total > total[g->gof[i]])
			total[g->gof[i]] = mails[i].total;
	return total;
}

/* a part of a group, for grouping_copies' sort */
struct part_copy {
	size_t group, mail;
	int index;
	gint64 date; /* its Date: in seconds, 0 when unreadable */
};

static int cmp_part_copy(const void *a, const void *b)
{
	const struct part_copy *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	if (x->date != y->date)
		return x->date < y->date ? -1 : 1;
	return (x->mail > y->mail) - (x->mail < y->mail);
}

/*
 * A whole numbered series sent again in its thread or among the same
 * strays (every part 1..M twice or more, a resend without a version label)
 * is C series, C the fewest copies of a part: the copies of each part in
 * the order of their Date: (then of the mbox), the k-th to copy k and
 * later ones to the last (where they replace).  One part sent again is no
 * new series: the later copy replaces the earlier.
 */
static void grouping_copies(const struct mbox_mail *mails, size_t n, struct grouping *g)
{
	size_t ng = g->ngroups, np = 0, i, j, k;
	int *total = grouping_totals(mails, n, g), *copies = g_new0(int, ng ? ng : 1);
	size_t *base = g_new0(size_t, ng ? ng : 1), *have = g_new0(size_t, ng ? ng : 1);
	struct part_copy *pc = g_new(struct part_copy, n ? n : 1);

	for (i = 0; i < n; i++) {
		size_t gi = g->gof[i];
		GDateTime *d;

		if (gi == (size_t)-1 || !mails[i].diff || !mails[i].numbered ||
		    mails[i].index < 1 || mails[i].index > total[gi])
			continue;
		d = mails[i].date ? g_mime_utils_header_decode_date(mails[i].date) : NULL;
		pc[np++] =
		    (struct part_copy){gi, i, mails[i].index, d ? g_date_time_to_unix(d) : 0};
		if (d)
			g_date_time_unref(d);
	}
	qsort(pc, np, sizeof(*pc), cmp_part_copy);
	/* the fewest copies of any part 1..M of each group */
	for (i = 0; i < ng; i++)
		copies[i] = total[i] ? INT_MAX : 0;
	for (i = 0; i < np; i = j) {
		for (j = i; j < np && pc[j].group == pc[i].group && pc[j].index == pc[i].index; j++)
			;
		copies[pc[i].group] = MIN(copies[pc[i].group], (int)(j - i));
		have[pc[i].group]++;
	}
	for (i = 0; i < ng; i++) {
		if (have[i] != (size_t)total[i])
			copies[i] = 1; /* a part is missing: one series */
		base[i] = g->ngroups;
		for (k = 2; k <= (size_t)copies[i] && copies[i] != INT_MAX; k++) {
			struct group *ngr = &g->groups[g->ngroups++];

			*ngr = g->groups[i];
			ngr->key = g_strdup_printf("%s copy %zu", g->groups[i].key, k);
			ngr->copy = (int)k - 1;
			ngr->cover = false;
		}
	}
	for (i = 0; i < np; i = j) {
		size_t gi = pc[i].group;

		for (j = i; j < np && pc[j].group == gi && pc[j].index == pc[i].index; j++)
			if (j > i && copies[gi] > 1)
				g->gof[pc[j].mail] =
				    base[gi] + MIN(j - i, (size_t)copies[gi] - 1) - 1;
	}
	g_free(pc);
	g_free(total);
	g_free(copies);
	g_free(base);
	g_free(have);
}

/* Which groups hold every part of their numbering (a hash of parts: linear). */
static void grouping_complete(const struct mbox_mail *mails, size_t n, struct grouping *g)
{
	GHashTable *parts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	int *total = grouping_totals(mails, n, g);
	size_t *have = g_new0(size_t, g->ngroups ? g->ngroups : 1), i;

	for (i = 0; i < n; i++) {
		size_t k = g->gof[i];
		char *key;

		if (k == (size_t)-1 || !mails[i].diff || !mails[i].numbered || mails[i].index < 1 ||
		    mails[i].index > total[k])
			continue;
		key = g_strdup_printf("%zu %d", k, mails[i].index);
		if (g_hash_table_add(parts, key))
			have[k]++;
	}
	for (i = 0; i < g->ngroups; i++)
		g->groups[i].complete =
		    !g->groups[i].numbered || (total[i] && have[i] == (size_t)total[i]);
	g_hash_table_destroy(parts);
	g_free(total);
	g_free(have);
}

static void grouping_make(struct mbox_mail *mails, size_t n, struct grouping *g)
{
	size_t *children, i;

	g->ids = g_hash_table_new(g_str_hash, g_str_equal);
	g->keys = g_hash_table_new(g_str_hash, g_str_equal);
	g->ngroups = 0;
	for (i = 0; i < n; i++)
		if (mails[i].message_id && !g_hash_table_contains(g->ids, mails[i].message_id))
			g_hash_table_insert(g->ids, mails[i].message_id, GSIZE_TO_POINTER(i));
	g->top = g_new(size_t, n ? n : 1);
	g->gof = g_new(size_t, n ? n : 1);
	g->groups = g_new0(struct group, n ? n : 1);
	children = g_new0(size_t, n ? n : 1);
	thread_tops(mails, n, g->ids, g->top);
	for (i = 0; i < n; i++)
		if (is_candidate(&mails[i]) && g->top[i] != i)
			children[g->top[i]]++;

	/* every candidate into the group of its thread (or of its strays) and version */
	for (i = 0; i < n; i++) {
		const struct mbox_mail *m = &mails[i], *t = &mails[g->top[i]];
		char *root, *key;
		gpointer v;
		bool threaded = true;
		int version;

		g->gof[i] = (size_t)-1;
		if (!is_candidate(m))
			continue;
		root = first_id(t->references);
		if (!root)
			root = first_id(t->in_reply_to);
		if (!root && (g->top[i] != i || children[i]) && t->message_id)
			root = g_strdup(t->message_id);
		if (!root) {
			/* unthreaded: strays of one author and one numbering go together */
			root = g_strdup_printf("stray %s %d", m->from, m->total);
			threaded = false;
		}
		version = series_version(mails, g, i);
		key = g_strdup_printf("%s v%d", root, version);
		g_free(root);
		if (g_hash_table_lookup_extended(g->keys, key, NULL, &v)) {
			g->gof[i] = GPOINTER_TO_SIZE(v);
			g_free(key);
		} else {
			struct group *gr = &g->groups[g->ngroups];

			g->gof[i] = g->ngroups;
			gr->key = key;
			gr->version = version;
			gr->first = i;
			gr->threaded = threaded;
			g_hash_table_insert(g->keys, key, GSIZE_TO_POINTER(g->ngroups));
			g->ngroups++;
		}
		if (!m->diff)
			g->groups[g->gof[i]].cover = true;
		if (m->numbered)
			g->groups[g->gof[i]].numbered = true;
	}
	grouping_orphans(mails, n, g);
	grouping_copies(mails, n, g);
	grouping_complete(mails, n, g);
	g_free(children);
}

static void grouping_release(struct grouping *g)
{
	size_t i;

	for (i = 0; i < g->ngroups; i++)
		g_free(g->groups[i].key);
	g_free(g->groups);
	g_free(g->gof);
	g_free(g->top);
	g_hash_table_destroy(g->keys);
	g_hash_table_destroy(g->ids);
}

size_t mbox_group(struct mbox_mail *mails, size_t n, size_t *group_of)
{
	struct grouping g;
	size_t ngroups;

	grouping_make(mails, n, &g);
	memcpy(group_of, g.gof, n * sizeof(*group_of));
	ngroups = g.ngroups;
	grouping_release(&g);
	return ngroups;
}

int mbox_assemble(struct mbox_mail *mails, size_t n, const char *want_id, struct mbox_series *out,
                  char *err, size_t errlen)
{
	struct grouping g;
	struct strutil_buf aside = STRUTIL_BUF_INIT;
	size_t *top, *gof, i, npatches = 0;
	struct group *groups;
	bool *seen = NULL;
	int ret = -1, version = 0, total = 0, cover = -1;
	long chosen = -1;
	bool numbered = false;

	grouping_make(mails, n, &g);
	top = g.top;
	gof = g.gof;
	groups = g.groups;

	/* a pull request (the one named, else the first): the pulled range is the patch */
	for (i = 0; i < n; i++) {
		if (!mails[i].pull_url || mails[i].is_reply ||
		    (want_id && (!mails[i].message_id || strcmp(want_id, mails[i].message_id))))
			continue;
		out->cover = g_new(struct mbox_mail, 1);
		*out->cover = mails[i];
		memset(&mails[i], 0, sizeof(mails[i]));
		out->pull_url = out->cover->pull_url;
		out->pull_ref = out->cover->pull_ref;
		out->version = out->cover->version;
		ret = 0;
		goto out;
	}

	if (want_id) {
		gpointer v;
		size_t w;

		if (!g_hash_table_lookup_extended(g.ids, want_id, NULL, &v)) {
			strutil_errf(err, errlen, "the mbox does not hold message %s", want_id);
			goto out;
		}
		w = GPOINTER_TO_SIZE(v);
		if (gof[w] != (size_t)-1) {
			chosen = (long)gof[w];
		} else {
			/* a reply or review named: the newest series of its thread */
			for (i = 0; i < n; i++)
				if (gof[i] != (size_t)-1 && top[i] == top[w] &&
				    (chosen < 0 || groups[gof[i]].version > groups[chosen].version))
					chosen = (long)gof[i];
			if (chosen < 0) {
				strutil_errf(err, errlen, "no patch found in the thread of %s",
				             want_id);
				goto out;
			}
		}
	} else {
		for (i = 0; i < g.ngroups; i++) {
			const struct group *gr = &groups[i],
			                   *c = chosen >= 0 ? &groups[chosen] : NULL;

			if (!c || gr->version > c->version ||
			    (gr->version == c->version &&
			     (gr->complete > c->complete ||
			      (gr->complete == c->complete &&
			       (gr->cover > c->cover ||
			        (gr->cover == c->cover &&
			         (gr->threaded > c->threaded ||
			          (gr->threaded == c->threaded && gr->copy > c->copy))))))))
				chosen = (long)i;
		}
		if (chosen >= 0) {
			bool any_patch = false;

			for (i = 0; i < n; i++)
				any_patch =
				    any_patch || (gof[i] == (size_t)chosen && mails[i].diff);
			if (!any_patch)
				chosen = -1;
		}
		if (chosen < 0) {
			/* only cover letters among the candidates: pick any group with a patch */
			for (i = 0; i < n && chosen < 0; i++)
				if (gof[i] != (size_t)-1 && mails[i].diff)
					chosen = (long)gof[i];
		}
	}
	if (chosen < 0) {
		strutil_errf(err, errlen, "no patch found: none of the %zu message(s) holds a diff",
		             n);
		goto out;
	}
	version = groups[chosen].version;

	for (i = 0; i < n; i++) {
		if (gof[i] != (size_t)chosen)
			continue;
		if (!mails[i].diff) {
			if (cover < 0)
				cover = (int)i;
			continue;
		}
		npatches++;
		numbered = numbered || mails[i].numbered;
	}
	if (!npatches) {
		strutil_errf(err, errlen, "no patch found: the series of %s holds no diff",
		             mails[cover].message_id ? mails[cover].message_id
		                                     : "its cover letter");
		goto out;
	}
	if (numbered) {
		/* a numbered series: unnumbered strays are not part of it */
		for (i = 0; i < n; i++) {
			if (gof[i] != (size_t)chosen || !mails[i].diff)
				continue;
			if (!mails[i].numbered) {
				gof[i] = (size_t)-1;
				npatches--;
				continue;
			}
			if (total && mails[i].total != total) {
				strutil_errf(err, errlen,
				             "series numbering disagrees: %d/%d next to n/%d",
				             mails[i].index, mails[i].total, total);
				goto out;
			}
			total = mails[i].total;
		}
		if (cover >= 0 && mails[cover].total != total) {
			strutil_errf(err, errlen, "cover letter says 0/%d but the patches say n/%d",
			             mails[cover].total, total);
			goto out;
		}
	}

	out->patches = g_new0(struct mbox_mail, npatches ? npatches : 1);
	seen = g_new0(bool, numbered ? (size_t)total + 1 : 1);
	for (i = 0; i < n; i++) {
		if (gof[i] != (size_t)chosen || !mails[i].diff)
			continue;
		if (numbered) {
			if (mails[i].index < 1 || mails[i].index > total) {
				/* a stray part (3/2): set aside, the rest is the series */
				strutil_buf_addf(&aside, "%s%d/%d", aside.len ? ", " : "",
				                 mails[i].index, total);
				continue;
			}
			if (seen[mails[i].index]) {
				/* a resend of the same part: the later copy replaces the earlier */
				size_t k;

				for (k = 0; k < out->npatches; k++)
					if (out->patches[k].index == mails[i].index)
						break;
				mbox_mail_release(&out->patches[k]);
				out->patches[k] = mails[i];
				memset(&mails[i], 0, sizeof(mails[i]));
				out->replaced++;
				continue;
			}
			seen[mails[i].index] = true;
		} else {
			mails[i].index = (int)out->npatches + 1;
			mails[i].total = (int)npatches;
		}
		out->patches[out->npatches++] = mails[i];
		memset(&mails[i], 0, sizeof(mails[i]));
	}
	qsort(out->patches, out->npatches, sizeof(*out->patches), cmp_index);
	if (numbered) {
		int want;

		for (want = 1; want <= total; want++)
			if ((size_t)want > out->npatches || out->patches[want - 1].index != want) {
				strutil_errf(err, errlen,
				             "series incomplete: patch %d/%d is missing", want,
				             total);
				goto out;
			}
	}
	if (cover >= 0) {
		out->cover = g_new(struct mbox_mail, 1);
		*out->cover = mails[cover];
		memset(&mails[cover], 0, sizeof(mails[cover]));
	}
	out->version = version;
	out->set_aside = aside.len ? strutil_buf_detach(&aside) : NULL;
	ret = 0;
out:
	if (ret != 0)
		mbox_series_release(out);
	strutil_buf_release(&aside);
	g_free(seen);
	grouping_release(&g);
	return ret;
}

int mbox_parse_thread(const char *buf, size_t len, const char *want_id, struct mbox_series *out,
                      char *err, size_t errlen)
{
	struct collect c = {NULL, 0, 0, err, errlen, 0};
	size_t i;
	int ret = -1, split;

	if (memchr(buf, '\0', len)) {
		strutil_errf(err, errlen, "not a text mbox: it holds NUL bytes");
		return -1;
	}
	split = mbox_split(buf, len, collect_one, &c);
	if (split == 1) {
		strutil_errf(err, errlen,
		             "the mbox holds more than %zu messages, the limit of this server "
		             "(--max-mbox-messages)",
		             limits.max_messages);
		ret = MBOX_TOO_LARGE;
		goto out;
	}
	if (split != 0) {
		strutil_errf(err, errlen, "out of memory");
		goto out;
	}
	ret = mbox_assemble(c.mails, c.n, want_id, out, err, errlen);
	if (ret == 0 && out->npatches > limits.max_patches) {
		strutil_errf(err, errlen,
		             "the series has %zu patches, more than %zu, the limit of this server "
		             "(--max-series-patches)",
		             out->npatches, limits.max_patches);
		ret = MBOX_TOO_LARGE;
	}
	for (i = 0; ret == 0 && i < out->npatches; i++) {
		size_t bytes = out->patches[i].diff ? strlen(out->patches[i].diff) : 0;
		if (bytes > limits.max_patch_bytes) {
			strutil_errf(
			    err, errlen,
			    "patch %zu is %zu bytes, more than %zu, the limit of this server "
			    "(--max-patch-bytes)",
			    i + 1, bytes, limits.max_patch_bytes);
			ret = MBOX_TOO_LARGE;
		}
	}
	if (ret == MBOX_TOO_LARGE) {
		mbox_series_release(out);
		mbox_series_init(out);
	}
out:
	for (i = 0; i < c.n; i++)
		mbox_mail_release(&c.mails[i]);
	g_free(c.mails);
	return ret;
}

int mbox_parse(const char *buf, size_t len, struct mbox_series *out, char *err, size_t errlen)
{
	return mbox_parse_thread(buf, len, NULL, out, err, errlen);
}
