/*
 * mail.c - outgoing mail with GMime 3 (see mail.h).  GMime does the MIME:
 * header folding and RFC 2047 encoding, address lists, the body's charset
 * and transfer encoding; this file only says what goes where.
 */
#include "mail.h"

#include <gmime/gmime.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "strutil.h"

void mail_global_init(void)
{
	g_mime_init();
}

void mail_global_cleanup(void)
{
	g_mime_shutdown();
}

static bool mail_has_addr(GPtrArray *seen, const char *addr)
{
	for (guint i = 0; i < seen->len; i++)
		if (strcasecmp(g_ptr_array_index(seen, i), addr) == 0)
			return true;
	return false;
}

/*
 * Append the mailboxes of text (an address list) to dst, groups flattened,
 * skipping addresses already in seen and adding the new ones to it.
 */
static void mail_add_list(InternetAddressList *dst, InternetAddressList *src, GPtrArray *seen)
{
	int n = src ? internet_address_list_length(src) : 0;

	for (int i = 0; i < n; i++) {
		InternetAddress *a = internet_address_list_get_address(src, i);

		if (INTERNET_ADDRESS_IS_GROUP(a)) {
			mail_add_list(dst,
			              internet_address_group_get_members((InternetAddressGroup *)a),
			              seen);
			continue;
		}
		if (!INTERNET_ADDRESS_IS_MAILBOX(a))
			continue;
		const char *addr = internet_address_mailbox_get_addr((InternetAddressMailbox *)a);
		if (!addr || !strchr(addr, '@') || mail_has_addr(seen, addr))
			continue;
		g_ptr_array_add(seen, g_strdup(addr));
		if (dst)
			internet_address_list_add(dst, a);
	}
}

static void mail_add_text(InternetAddressList *dst, const char *text, GPtrArray *seen)
{
	InternetAddressList *l;

	if (!text || !*text)
		return;
	l = internet_address_list_parse(NULL, text);
	mail_add_list(dst, l, seen);
	if (l)
		g_object_unref(l);
}

/* "<a> <b>" of refs, then "<extra>"; new */
static char *mail_references(const char *refs, const char *extra)
{
	GMimeReferences *r = g_mime_references_parse(NULL, refs ? refs : "");
	GMimeReferences *e = g_mime_references_parse(NULL, extra ? extra : "");
	struct strutil_buf out = STRUTIL_BUF_INIT;

	if (!r)
		r = g_mime_references_new();
	for (int i = 0; e && i < g_mime_references_length(e); i++)
		g_mime_references_append(r, g_mime_references_get_message_id(e, i));
	for (int i = 0; i < g_mime_references_length(r); i++)
		strutil_buf_addf(&out, "%s<%s>", i ? " " : "",
		                 g_mime_references_get_message_id(r, i));
	g_mime_references_free(r);
	if (e)
		g_mime_references_free(e);
	return strutil_buf_detach(&out);
}

char *mail_reply_subject(const char *subject)
{
	const char *s = subject ? subject : "";
	size_t n = strlen(s) + 5;
	char *out = malloc(n);

	if (out)
		snprintf(out, n, "%s%s", strncasecmp(s, "re:", 3) == 0 ? "" : "Re: ", s);
	return out;
}

char *mail_build_reply(const struct mail_reply *r, char **msgid, char *err, size_t errlen)
{
	GMimeMessage *m = NULL;
	GMimePart *text = NULL;
	GMimeStream *stream = NULL;
	GMimeDataWrapper *content = NULL;
	GMimeContentEncoding encoding;
	GMimeFormatOptions *fo = NULL;
	GPtrArray *seen = g_ptr_array_new_with_free_func(g_free);
	GDateTime *date = NULL;
	unsigned char rnd[16];
	char id[512], *subject = NULL, *refs = NULL, *out = NULL, *s = NULL;
	size_t k;

	*msgid = NULL;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		snprintf(err, errlen, "no random bytes for a Message-ID");
		goto out;
	}
	k = (size_t)snprintf(id, sizeof(id), "locklab.%lld.", r->tag);
	for (size_t i = 0; i < sizeof(rnd) && k + 3 < sizeof(id); i++)
		k += (size_t)snprintf(id + k, sizeof(id) - k, "%02x", rnd[i]);
	snprintf(id + k, sizeof(id) - k, "@%s", r->domain && *r->domain ? r->domain : "localhost");

	m = g_mime_message_new(TRUE);
	mail_add_text(g_mime_message_get_addresses(m, GMIME_ADDRESS_TYPE_FROM), r->from, seen);
	g_ptr_array_set_size(seen, 0); /* a reply to oneself still goes To oneself */
	mail_add_text(g_mime_message_get_addresses(m, GMIME_ADDRESS_TYPE_TO), r->to, seen);
	if (seen->len == 0) {
		snprintf(err, errlen, "no address to send to in '%s'", r->to ? r->to : "");
		goto out;
	}
	mail_add_text(NULL, r->from, seen); /* Cc: neither the To nor ourselves again */
	mail_add_text(g_mime_message_get_addresses(m, GMIME_ADDRESS_TYPE_CC), r->cc, seen);

	subject =
	    r->new_thread ? strdup(r->subject ? r->subject : "") : mail_reply_subject(r->subject);
	if (!subject) {
		snprintf(err, errlen, "out of memory building the mail");
		goto out;
	}
	g_mime_message_set_subject(m, subject, "utf-8");
	date = g_date_time_new_from_unix_utc((gint64)r->date);
	g_mime_message_set_date(m, date);
	g_mime_message_set_message_id(m, id);
	if (r->in_reply_to && *r->in_reply_to) {
		refs = mail_references(NULL, r->in_reply_to);
		if (*refs)
			g_mime_object_set_header(GMIME_OBJECT(m), "In-Reply-To", refs, NULL);
		free(refs);
		refs = mail_references(r->references, r->in_reply_to);
		if (*refs)
			g_mime_object_set_header(GMIME_OBJECT(m), "References", refs, NULL);
	}

	/*
	 * The body stays UTF-8 (g_mime_text_part_set_text would convert it to
	 * the smallest charset); 7bit when it is ASCII, else quoted-printable,
	 * since libcurl does not ask the server for 8BITMIME.
	 */
	text = g_mime_part_new_with_type("text", "plain");
	g_mime_object_set_content_type_parameter(GMIME_OBJECT(text), "charset", "utf-8");
	stream = g_mime_stream_mem_new_with_buffer(r->body ? r->body : "",
	                                           r->body ? strlen(r->body) : 0);
	content = g_mime_data_wrapper_new_with_stream(stream, GMIME_CONTENT_ENCODING_DEFAULT);
	g_mime_part_set_content(text, content);
	encoding = g_mime_part_get_best_content_encoding(text, GMIME_ENCODING_CONSTRAINT_7BIT);
	/* said, not left to the default */
	g_mime_part_set_content_encoding(text, encoding == GMIME_CONTENT_ENCODING_DEFAULT
	                                           ? GMIME_CONTENT_ENCODING_7BIT
	                                           : encoding);
	g_mime_message_set_mime_part(m, GMIME_OBJECT(text));

	fo = g_mime_format_options_new();
	g_mime_format_options_set_newline_format(fo, GMIME_NEWLINE_FORMAT_UNIX);
	s = g_mime_object_to_string(GMIME_OBJECT(m), fo);
	out = s ? strdup(s) : NULL;
	if (out && asprintf(msgid, "<%s>", id) < 0)
		*msgid = NULL;
	if (!out || !*msgid) {
		free(out);
		free(*msgid);
		out = NULL;
		*msgid = NULL;
		snprintf(err, errlen, "out of memory building the mail");
	}
out:
	g_free(s);
	free(subject);
	free(refs);
	if (fo)
		g_mime_format_options_free(fo);
	if (date)
		g_date_time_unref(date);
	if (content)
		g_object_unref(content);
	if (stream)
		g_object_unref(stream);
	if (text)
		g_object_unref(text);
	if (m)
		g_object_unref(m);
	g_ptr_array_free(seen, TRUE);
	return out;
}

char **mail_recipients(const char *message, size_t len)
{
	GMimeStream *st = g_mime_stream_mem_new_with_buffer(message, len);
	GMimeParser *p = g_mime_parser_new_with_stream(st);
	GMimeMessage *m = g_mime_parser_construct_message(p, NULL);
	GPtrArray *seen = g_ptr_array_new_with_free_func(g_free);
	char **out = NULL;

	if (m) {
		static const GMimeAddressType types[] = {
		    GMIME_ADDRESS_TYPE_TO, GMIME_ADDRESS_TYPE_CC, GMIME_ADDRESS_TYPE_BCC};

		for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
			mail_add_list(NULL, g_mime_message_get_addresses(m, types[t]), seen);
		out = calloc(seen->len + 1, sizeof(*out));
		for (guint i = 0; out && i < seen->len; i++) {
			out[i] = strdup(g_ptr_array_index(seen, i));
			if (!out[i]) {
				mail_strv_free(out);
				out = NULL;
			}
		}
		g_object_unref(m);
	}
	g_ptr_array_free(seen, TRUE);
	g_object_unref(p);
	g_object_unref(st);
	return out;
}

/* The list as "Name <a@b>, ..." (decoded), new; NULL when empty. */
static char *mail_list_text(InternetAddressList *l)
{
	char *g, *out;

	if (!l || internet_address_list_length(l) == 0)
		return NULL;
	g = internet_address_list_to_string(l, NULL, FALSE);
	out = g ? strdup(g) : NULL;
	g_free(g);
	return out;
}

int mail_find_recipients(const char *buf, size_t len, const char *msgid, char **to, char **cc)
{
	GMimeStream *st;
	GMimeParser *p;
	size_t idlen;
	int rc = -1;

	*to = *cc = NULL;
	if (!msgid || *msgid != '<' || (idlen = strlen(msgid)) < 3)
		return -1;
	st = g_mime_stream_mem_new_with_buffer(buf, len);
	p = g_mime_parser_new_with_stream(st);
	g_mime_parser_set_format(
	    p, len >= 5 && memcmp(buf, "From ", 5) == 0 ? GMIME_FORMAT_MBOX : GMIME_FORMAT_MESSAGE);
	while (rc != 0 && !g_mime_parser_eos(p)) {
		GMimeMessage *m = g_mime_parser_construct_message(p, NULL);
		const char *id;

		if (!m)
			break;
		id = g_mime_message_get_message_id(m); /* without the angle brackets */
		if (id && strlen(id) == idlen - 2 && strncmp(id, msgid + 1, idlen - 2) == 0) {
			*to =
			    mail_list_text(g_mime_message_get_addresses(m, GMIME_ADDRESS_TYPE_TO));
			*cc =
			    mail_list_text(g_mime_message_get_addresses(m, GMIME_ADDRESS_TYPE_CC));
			rc = 0;
		}
		g_object_unref(m);
	}
	g_object_unref(p);
	g_object_unref(st);
	return rc;
}

void mail_strv_free(char **v)
{
	if (!v)
		return;
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

char *mail_addr_spec(const char *addresses)
{
	GPtrArray *seen = g_ptr_array_new_with_free_func(g_free);
	char *out = NULL;

	mail_add_text(NULL, addresses, seen);
	if (seen->len)
		out = strdup(g_ptr_array_index(seen, 0));
	g_ptr_array_free(seen, TRUE);
	return out;
}
