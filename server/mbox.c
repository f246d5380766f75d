/*
 * mbox.c - the mbox parser behind every submission.
 */
#include "mbox.h"

#include <ctype.h>
#include <iconv.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A growable string; sb_release frees. */
struct sb {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void sb_add(struct sb *b, const char *p, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		char *nb;

		while (cap < b->len + n + 1)
			cap *= 2;
		nb = realloc(b->buf, cap);
		if (!nb) {
			b->oom = true;
			return;
		}
		b->buf = nb;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

static void sb_addc(struct sb *b, char c)
{
	sb_add(b, &c, 1);
}

/* The string (owned by the caller), "" when empty, NULL when out of memory. */
static char *sb_take(struct sb *b)
{
	char *s;

	if (b->oom) {
		free(b->buf);
		return NULL;
	}
	s = b->buf ? b->buf : strdup("");
	b->buf = NULL;
	b->len = b->cap = 0;
	return s;
}

static void mail_release(struct mbox_mail *m)
{
	free(m->message_id);
	free(m->in_reply_to);
	free(m->references);
	free(m->from);
	free(m->date);
	free(m->subject);
	free(m->title);
	free(m->body);
	free(m->diff);
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
		mail_release(s->cover);
		free(s->cover);
	}
	for (i = 0; i < s->npatches; i++)
		mail_release(&s->patches[i]);
	free(s->patches);
	mbox_series_init(s);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static size_t b64_decode(const char *in, size_t n, unsigned char *out)
{
	unsigned acc = 0;
	int bits = 0;
	size_t o = 0, i;

	for (i = 0; i < n; i++) {
		int c = in[i], v;

		if (c >= 'A' && c <= 'Z')
			v = c - 'A';
		else if (c >= 'a' && c <= 'z')
			v = c - 'a' + 26;
		else if (c >= '0' && c <= '9')
			v = c - '0' + 52;
		else if (c == '+')
			v = 62;
		else if (c == '/')
			v = 63;
		else
			continue; /* '=' padding and stray whitespace */
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	return o;
}

/* Append bytes of charset cs to b as UTF-8. */
static void add_charset(struct sb *b, const char *cs, const unsigned char *p, size_t n)
{
	size_t i;

	if (!strcasecmp(cs, "utf-8") || !strcasecmp(cs, "utf8") || !strcasecmp(cs, "us-ascii")) {
		sb_add(b, (const char *)p, n);
		return;
	}
	if (!strcasecmp(cs, "iso-8859-1") || !strcasecmp(cs, "latin1") ||
	    !strcasecmp(cs, "iso8859-1")) {
		for (i = 0; i < n; i++) {
			if (p[i] < 0x80) {
				sb_addc(b, (char)p[i]);
			} else {
				sb_addc(b, (char)(0xc0 | (p[i] >> 6)));
				sb_addc(b, (char)(0x80 | (p[i] & 0x3f)));
			}
		}
		return;
	}
	{
		iconv_t cd = iconv_open("UTF-8", cs);
		char out[1024];

		if (cd == (iconv_t)-1) {
			sb_add(b, (const char *)p, n);
			return;
		}
		{
			char *in = (char *)p;
			size_t left = n;

			while (left) {
				char *o = out;
				size_t room = sizeof(out);

				if (iconv(cd, &in, &left, &o, &room) == (size_t)-1 && o == out) {
					/* undecodable byte: keep it and go on */
					sb_addc(b, *in++);
					left--;
					continue;
				}
				sb_add(b, out, (size_t)(o - out));
			}
		}
		iconv_close(cd);
	}
}

/*
 * One "=?cs?E?text?=" at s; on success appends the decoded text and
 * returns the length consumed, else 0.
 */
static size_t decode_word(struct sb *b, const char *s)
{
	const char *cs, *q1, *q2, *end;
	char charset[64];
	unsigned char *tmp;
	size_t n = 0, i, tlen;
	char enc;

	if (s[0] != '=' || s[1] != '?')
		return 0;
	cs = s + 2;
	q1 = strchr(cs, '?');
	if (!q1 || q1 - cs >= (long)sizeof(charset) || !q1[1] || q1[2] != '?')
		return 0;
	enc = (char)toupper((unsigned char)q1[1]);
	if (enc != 'B' && enc != 'Q')
		return 0;
	q2 = q1 + 3;
	end = strstr(q2, "?=");
	if (!end)
		return 0;
	for (i = 0; q2 + i < end; i++)
		if (q2[i] == ' ' || q2[i] == '\t' || q2[i] == '\n')
			return 0;
	memcpy(charset, cs, (size_t)(q1 - cs));
	charset[q1 - cs] = '\0';
	{
		char *star = strchr(charset, '*'); /* RFC 2231 language suffix */

		if (star)
			*star = '\0';
	}
	tlen = (size_t)(end - q2);
	tmp = malloc(tlen + 1);
	if (!tmp) {
		b->oom = true;
		return 0;
	}
	if (enc == 'B') {
		n = b64_decode(q2, tlen, tmp);
	} else {
		for (i = 0; i < tlen; i++) {
			if (q2[i] == '_') {
				tmp[n++] = ' ';
			} else if (q2[i] == '=' && i + 2 < tlen + 1 && hexval(q2[i + 1]) >= 0 &&
			           hexval(q2[i + 2]) >= 0) {
				tmp[n++] =
				    (unsigned char)(hexval(q2[i + 1]) * 16 + hexval(q2[i + 2]));
				i += 2;
			} else {
				tmp[n++] = (unsigned char)q2[i];
			}
		}
	}
	add_charset(b, charset, tmp, n);
	free(tmp);
	return (size_t)(end + 2 - s);
}

char *mbox_decode_header(const char *v)
{
	struct sb b = {0};
	const char *p = v;
	bool last_encoded = false;

	while (*p) {
		size_t used = decode_word(&b, p);

		if (used) {
			p += used;
			last_encoded = true;
			continue;
		}
		/* whitespace between two encoded words is dropped */
		if (last_encoded && (*p == ' ' || *p == '\t')) {
			const char *q = p;

			while (*q == ' ' || *q == '\t')
				q++;
			if (q[0] == '=' && q[1] == '?') {
				struct sb probe = {0};
				size_t ok = decode_word(&probe, q);

				free(probe.buf);
				if (ok) {
					p = q;
					continue;
				}
			}
		}
		sb_addc(&b, *p++);
		last_encoded = false;
	}
	return sb_take(&b);
}

static char *dup_trim(const char *s, size_t n)
{
	char *r;

	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	r = malloc(n + 1);
	if (r) {
		memcpy(r, s, n);
		r[n] = '\0';
	}
	return r;
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
			for (tok = strtok_r(group, " \t,", &save); tok;
			     tok = strtok_r(NULL, " \t,", &save)) {
				int a, b;
				char tail;

				if (sscanf(tok, "%d/%d%c", &a, &b, &tail) == 2 && a >= 0 && b > 0) {
					m->index = a;
					m->total = b;
					m->numbered = true;
				} else if ((tok[0] == 'v' || tok[0] == 'V') &&
				           sscanf(tok + 1, "%d%c", &a, &tail) == 1 && a > 0) {
					m->version = a;
				} else if (tok[0] == '-' && (tok[1] == 'v' || tok[1] == 'V') &&
				           sscanf(tok + 2, "%d%c", &a, &tail) == 1 && a > 0) {
					m->version = a;
				}
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

/* Quoted-printable body decoding (soft line breaks, =XX). */
static char *qp_decode(const char *p, size_t n)
{
	struct sb b = {0};
	size_t i;

	for (i = 0; i < n; i++) {
		if (p[i] == '=' && i + 1 < n && p[i + 1] == '\n') {
			i++;
		} else if (p[i] == '=' && i + 2 < n && hexval(p[i + 1]) >= 0 &&
		           hexval(p[i + 2]) >= 0) {
			sb_addc(&b, (char)(hexval(p[i + 1]) * 16 + hexval(p[i + 2])));
			i += 2;
		} else {
			sb_addc(&b, p[i]);
		}
	}
	return sb_take(&b);
}

/* A header's value: trimmed, RFC 2047 decoded when asked. */
static char *header_value(const char *v, bool decode)
{
	char *t = dup_trim(v, strlen(v)), *d;

	if (!t || !decode)
		return t;
	d = mbox_decode_header(t);
	free(t);
	return d;
}

static char **header_slot(struct mbox_mail *m, const char *name, size_t n, bool *decode)
{
	static const struct {
		const char *name;
		size_t off;
		bool decode;
	} hs[] = {
	    {"message-id", offsetof(struct mbox_mail, message_id), false},
	    {"in-reply-to", offsetof(struct mbox_mail, in_reply_to), false},
	    {"references", offsetof(struct mbox_mail, references), false},
	    {"from", offsetof(struct mbox_mail, from), true},
	    {"date", offsetof(struct mbox_mail, date), false},
	    {"subject", offsetof(struct mbox_mail, subject), true},
	};
	size_t i;

	for (i = 0; i < sizeof(hs) / sizeof(hs[0]); i++)
		if (strlen(hs[i].name) == n && strncasecmp(name, hs[i].name, n) == 0) {
			*decode = hs[i].decode;
			return (char **)((char *)m + hs[i].off);
		}
	return NULL;
}

/* Parse one message [p, end) whose From_ line is already gone. */
static int parse_mail(const char *p, const char *end, struct mbox_mail *m)
{
	struct sb val = {0}, body = {0};
	char **slot = NULL;
	bool decode = false, qp = false, cte = false;
	const char *b, *diff, *sep, *bend;

	/* headers: "Name: value" lines with folded continuations */
	while (p < end) {
		const char *n = next_line(p, end);
		size_t len = (size_t)(n - p);

		if (len && p[len - 1] == '\n')
			len--;
		if (len == 0) {
			p = n;
			break;
		}
		if ((*p == ' ' || *p == '\t')) {
			if (slot || cte)
				sb_add(&val, p, len); /* unfold: keep the whitespace */
		} else {
			const char *colon = memchr(p, ':', len);

			if (slot && !*slot) {
				char *v = sb_take(&val);

				if (!v)
					return -1;
				*slot = header_value(v, decode);
				free(v);
			} else if (cte) {
				char *v = sb_take(&val);

				qp = v && strcasestr(v, "quoted-printable");
				free(v);
			}
			free(val.buf);
			memset(&val, 0, sizeof(val));
			slot = NULL;
			cte = false;
			if (!colon) {
				/* not a header: the headers ended without a blank line */
				break;
			}
			slot = header_slot(m, p, (size_t)(colon - p), &decode);
			cte = (size_t)(colon - p) == 25 &&
			      !strncasecmp(p, "content-transfer-encoding", 25);
			if (slot || cte)
				sb_add(&val, colon + 1, len - (size_t)(colon + 1 - p));
		}
		p = n;
	}
	if (slot && !*slot) {
		char *v = sb_take(&val);

		if (v)
			*slot = header_value(v, decode);
		free(v);
	} else if (cte) {
		char *v = sb_take(&val);

		qp = v && strcasestr(v, "quoted-printable");
		free(v);
	}
	free(val.buf);

	/* body with mboxrd ">From " unquoting */
	while (p < end) {
		const char *n = next_line(p, end);
		const char *q = p;

		while (q < n && *q == '>')
			q++;
		if (q > p && n - q >= 5 && strncmp(q, "From ", 5) == 0)
			p++;
		sb_add(&body, p, (size_t)(n - p));
		p = n;
	}
	if (body.oom) {
		free(body.buf);
		return -1;
	}
	if (!body.buf)
		sb_add(&body, "", 0);
	if (qp) {
		char *d = qp_decode(body.buf, body.len);

		free(body.buf);
		if (!d)
			return -1;
		body.buf = d;
		body.len = strlen(d);
	}

	if (!m->subject)
		m->subject = strdup("");
	if (!m->from)
		m->from = strdup("");
	mbox_parse_subject(m);

	b = body.buf;
	bend = b + body.len;
	diff = find_diff(b, bend);
	sep = NULL;
	if (diff) {
		const char *q = b, *sig = NULL;

		/* the commit message ends at the "---" line before the diffstat */
		while (q < diff) {
			if ((line_is(q, "---\n") || line_is(q, "--- \n")) && !sep)
				sep = q;
			q = next_line(q, diff);
		}
		/* the diff ends at a "-- " signature line (format-patch version) */
		for (q = diff; q < bend; q = next_line(q, bend))
			if (line_is(q, "-- \n") || (strcmp(q, "-- ") == 0)) {
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
			m->diff = malloc(dl + 2);
			if (m->diff) {
				memcpy(m->diff, diff, dl);
				m->diff[dl] = '\n'; /* the final newline git am wants */
				m->diff[dl + 1] = '\0';
			}
		}
	}
	m->body = dup_trim(b, (size_t)((sep ? sep : diff ? diff : bend) - b));
	free(body.buf);
	if (!m->subject || !m->from || !m->title || !m->body || (diff && !m->diff))
		return -1;
	return 0;
}

/* A From_ line starts a message when it opens the file or follows a blank line. */
static bool is_from_line(const char *start, const char *p, const char *end)
{
	const char *n, *colon;

	if (end - p < 5 || strncmp(p, "From ", 5) != 0)
		return false;
	if (p != start && !(p - start >= 2 && p[-1] == '\n' && p[-2] == '\n'))
		return false;
	/* and the next line is a header */
	n = next_line(p, end);
	if (n >= end)
		return false;
	colon = memchr(n, ':', (size_t)(next_line(n, end) - n));
	return colon && colon > n && !memchr(n, ' ', (size_t)(colon - n));
}

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static bool mentions(const struct mbox_mail *m, const char *id)
{
	return id && ((m->in_reply_to && strstr(m->in_reply_to, id)) ||
	              (m->references && strstr(m->references, id)));
}

static int cmp_index(const void *a, const void *b)
{
	const struct mbox_mail *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

int mbox_parse(const char *buf, size_t len, struct mbox_series *out, char *err, size_t errlen)
{
	char *text = NULL;
	const char *p, *end, *start;
	struct mbox_mail *mails = NULL;
	size_t nmails = 0, cap = 0, i, j;
	bool *keep = NULL;
	int ret = -1, version = 0, total = 0, cover = -1;
	size_t npatches = 0, numbered = 0;
	const char *root_id;
	bool changed;

	/* CRLF -> LF, so that every line ends in "\n" alone */
	text = malloc(len + 1);
	if (!text) {
		seterr(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0, j = 0; i < len; i++)
		if (!(buf[i] == '\r' && i + 1 < len && buf[i + 1] == '\n'))
			text[j++] = buf[i];
	text[j] = '\0';
	if (memchr(text, '\0', j)) {
		seterr(err, errlen, "not a text mbox: it holds NUL bytes");
		goto out;
	}
	p = start = text;
	end = text + j;

	/* split into messages */
	while (p < end) {
		const char *mstart, *q;

		if (is_from_line(start, p, end))
			p = next_line(p, end);
		mstart = p;
		for (q = p; q < end; q = next_line(q, end))
			if (q != mstart && is_from_line(start, q, end))
				break;
		if (nmails == cap) {
			struct mbox_mail *nm =
			    realloc(mails, (cap = cap ? 2 * cap : 8) * sizeof(*nm));

			if (!nm) {
				seterr(err, errlen, "out of memory");
				goto out;
			}
			mails = nm;
		}
		memset(&mails[nmails], 0, sizeof(mails[nmails]));
		if (parse_mail(mstart, q, &mails[nmails]) != 0) {
			mail_release(&mails[nmails]);
			seterr(err, errlen, "out of memory");
			goto out;
		}
		nmails++;
		p = q;
	}

	/* the newest version of the series among the non-replies */
	for (i = 0; i < nmails; i++)
		if (!mails[i].is_reply && mails[i].diff && mails[i].version > version)
			version = mails[i].version;
	if (!version) {
		seterr(err, errlen, "no patch found: none of the %zu message(s) holds a diff",
		       nmails);
		goto out;
	}
	keep = calloc(nmails, sizeof(*keep));
	if (!keep) {
		seterr(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < nmails; i++) {
		struct mbox_mail *m = &mails[i];

		if (m->is_reply || m->version != version)
			continue;
		if (m->diff)
			keep[i] = true;
		else if (m->numbered && m->index == 0 && cover < 0)
			cover = (int)i;
	}

	/* follow the thread from the cover letter, else from the first patch */
	root_id = NULL;
	if (cover >= 0)
		root_id = mails[cover].message_id;
	for (i = 0; !root_id && i < nmails; i++)
		if (keep[i] && (!mails[i].numbered || mails[i].index == 1))
			root_id = mails[i].message_id;
	if (root_id) {
		bool *in = calloc(nmails, sizeof(*in));

		if (!in) {
			seterr(err, errlen, "out of memory");
			goto out;
		}
		for (i = 0; i < nmails; i++)
			in[i] = keep[i] && (!mails[i].in_reply_to && !mails[i].references);
		for (i = 0; i < nmails; i++)
			if (mails[i].message_id && strcmp(mails[i].message_id, root_id) == 0)
				in[i] = true;
		do {
			changed = false;
			for (i = 0; i < nmails; i++) {
				if (in[i] || !keep[i])
					continue;
				if (mentions(&mails[i], root_id))
					in[i] = changed = true;
				for (j = 0; !in[i] && j < nmails; j++)
					if (in[j] && mails[j].message_id && mails[i].in_reply_to &&
					    strstr(mails[i].in_reply_to, mails[j].message_id))
						in[i] = changed = true;
			}
		} while (changed);
		for (i = 0; i < nmails; i++)
			keep[i] = keep[i] && in[i];
		free(in);
	}

	for (i = 0; i < nmails; i++) {
		if (!keep[i])
			continue;
		npatches++;
		if (mails[i].numbered)
			numbered++;
	}
	if (numbered) {
		/* a numbered series: unnumbered strays are not part of it */
		for (i = 0; i < nmails; i++) {
			if (!keep[i])
				continue;
			if (!mails[i].numbered) {
				keep[i] = false;
				npatches--;
				continue;
			}
			if (total && mails[i].total != total) {
				seterr(err, errlen,
				       "series numbering disagrees: %d/%d next to n/%d",
				       mails[i].index, mails[i].total, total);
				goto out;
			}
			total = mails[i].total;
		}
		if (cover >= 0 && mails[cover].total != total) {
			seterr(err, errlen, "cover letter says 0/%d but the patches say n/%d",
			       mails[cover].total, total);
			goto out;
		}
	}

	out->patches = calloc(npatches ? npatches : 1, sizeof(*out->patches));
	if (!out->patches) {
		seterr(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < nmails; i++) {
		if (!keep[i])
			continue;
		if (numbered) {
			size_t k;
			bool dup = false;

			if (mails[i].index < 1 || mails[i].index > total) {
				seterr(err, errlen, "patch %d/%d is out of range", mails[i].index,
				       total);
				goto out;
			}
			for (k = 0; k < out->npatches; k++)
				dup = dup || out->patches[k].index == mails[i].index;
			if (dup) /* a resend of the same part: the first one counts */
				continue;
		} else {
			mails[i].index = (int)out->npatches + 1;
			mails[i].total = (int)npatches;
		}
		out->patches[out->npatches++] = mails[i];
		memset(&mails[i], 0, sizeof(mails[i]));
		keep[i] = false;
	}
	qsort(out->patches, out->npatches, sizeof(*out->patches), cmp_index);
	if (numbered) {
		int want;

		for (want = 1; want <= total; want++)
			if ((size_t)want > out->npatches || out->patches[want - 1].index != want) {
				seterr(err, errlen, "series incomplete: patch %d/%d is missing",
				       want, total);
				goto out;
			}
	}
	if (cover >= 0) {
		out->cover = malloc(sizeof(*out->cover));
		if (!out->cover) {
			seterr(err, errlen, "out of memory");
			goto out;
		}
		*out->cover = mails[cover];
		memset(&mails[cover], 0, sizeof(mails[cover]));
	}
	out->version = version;
	ret = 0;
out:
	if (ret != 0)
		mbox_series_release(out);
	for (i = 0; i < nmails; i++)
		mail_release(&mails[i]);
	free(mails);
	free(keep);
	free(text);
	return ret;
}
