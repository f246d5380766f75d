/*
 * mbox.h - patch mails out of an mbox (mboxrd or mboxo, one message or a
 * whole thread): headers unfolded and RFC 2047 decoded, "[PATCH v2 3/7]"
 * prefixes read, and a series put together: cover letter (0/N), patches in
 * number order, the thread followed by In-Reply-To/References.
 *
 * Ownership: struct mbox_series owns everything below it;
 * mbox_series_init/mbox_series_release pair up.
 */
#ifndef LOCKLAB_SERVER_MBOX_H
#define LOCKLAB_SERVER_MBOX_H

#include <stdbool.h>
#include <stddef.h>

struct mbox_mail {
	char *message_id;  /* as written, "<...>"; NULL when missing */
	char *in_reply_to; /* NULL when missing */
	char *references;  /* unfolded; NULL when missing */
	char *from;        /* decoded "Name <address>" */
	char *date;
	char *subject; /* decoded, whole */
	char *title;   /* subject without "Re:" and "[...]" prefixes */
	int index;     /* N of "N/M", 0 when unnumbered or a cover letter */
	int total;     /* M of "N/M", 0 when unnumbered */
	int version;   /* v2 -> 2; 1 when not given */
	bool numbered;
	bool is_reply; /* subject starts with "Re:" */
	char *body;    /* message text before the diff (the commit message) */
	char *diff;    /* the patch, NULL when the mail has none */
};

struct mbox_series {
	struct mbox_mail *cover; /* NULL when the series has no cover letter */
	struct mbox_mail *patches;
	size_t npatches; /* patches[i].index == i + 1 */
	int version;
};

void mbox_series_init(struct mbox_series *s);
void mbox_series_release(struct mbox_series *s);

/*
 * Parse buf (len bytes, need not be NUL-terminated) into out, which must be
 * initialised.  Returns 0, or -1 with a reason in err: no message with a
 * diff, a series with missing parts, numbering that disagrees.  On failure
 * out is left empty.
 */
int mbox_parse(const char *buf, size_t len, struct mbox_series *out, char *err, size_t errlen);

/*
 * Read the "Re:" and "[PATCH v2 3/7]"-style prefixes of m->subject into
 * index, total, version, numbered and is_reply, and set m->title (new) to
 * what follows them.
 */
void mbox_parse_subject(struct mbox_mail *m);

/* RFC 2047 decoding of a header value (B and Q; utf-8, us-ascii,
 * iso-8859-1 and whatever iconv knows) into new UTF-8.  Caller frees. */
char *mbox_decode_header(const char *value);

#endif
