/*
 * mbox.h - patch mails out of an mbox (mboxrd or mboxo, one message or a
 * whole thread) and a series put together from them.
 *
 * Every message is parsed by GMime 3: header folding and RFC 2047 words,
 * transfer encodings (base64, quoted-printable), multipart bodies (a patch
 * sent as an attachment), the body's charset (converted to UTF-8).  What is
 * locklab's own stays here: the "[PATCH v2 3/7]" prefixes, the commit
 * message / diff split, the author as `git am` reads it (an in-body From:
 * wins; a DMARC-munged "Name via list" sender gives way to
 * X-Original-From or Reply-To), and the series: cover letter (0/N), patches
 * in number order, chosen by thread (a hash of Message-IDs, linear time).
 *
 * Ownership: struct mbox_series owns everything below it;
 * mbox_series_init/mbox_series_release pair up, and so do
 * mbox_mail_parse/mbox_mail_release.
 */
#ifndef LOCKLAB_SERVER_MBOX_H
#define LOCKLAB_SERVER_MBOX_H

#include <stdbool.h>
#include <stddef.h>

struct mbox_mail {
	char *message_id;  /* "<...>"; NULL when missing */
	char *in_reply_to; /* "<...>", the first id; NULL when missing */
	char *references;  /* "<a> <b> ...", NULL when missing */
	char *from;        /* the author, decoded "Name <address>" ("" when none) */
	char *date;
	char *subject; /* decoded, whole */
	char *title;   /* subject without "Re:" and "[...]" prefixes */
	char *cc;      /* decoded address list of Cc:, NULL when none */
	char *list;    /* the list's address (List-Post, else the first To:) */
	int index;     /* N of "N/M", 0 when unnumbered or a cover letter */
	int total;     /* M of "N/M", 0 when unnumbered */
	int version;   /* v2 -> 2; 1 when not given */
	bool numbered;
	bool is_reply;      /* subject starts with "Re:" */
	bool patch_prefix;  /* a "[PATCH ...]" / "[RFC ...]" prefix is there */
	char *body;         /* message text before the diff (the commit message) */
	char *diff;         /* the patch, NULL when the mail has none */
	char *pull_url;     /* a pull request's repository (git request-pull's "are
	                       available in the Git repository at:"), NULL when none */
	char *pull_ref;     /* and its branch or tag ("HEAD" when it names none) */
	const char *defect; /* static text: what GMime could not read (a text part's
	                       base64 is not base64), NULL when none */
	char *raw;          /* the message as sent (headers and body) */
	size_t raw_len;
};

/*
 * A patch mail of the chosen series that is not tested: a part past the
 * numbering (3/2), or the earlier copy of a part sent again while the
 * series was open (the later copy is the tested patch).  Kept with the
 * submission and shown, never dropped in silence.
 */
struct mbox_aside {
	struct mbox_mail mail;
	bool replaced; /* an earlier copy; false: past the numbering */
};

struct mbox_series {
	struct mbox_mail *cover; /* NULL when the series has no cover letter */
	struct mbox_mail *patches;
	size_t npatches; /* patches[i].index == i + 1 */
	int version;
	/* a pull request: cover is its mail and there are no patches (an inline
	 * diff in it is not a patch); borrowed from cover, NULL otherwise */
	const char *pull_url, *pull_ref;
	struct mbox_aside *aside; /* in the order they were met */
	size_t naside;
};

void mbox_series_init(struct mbox_series *s);
void mbox_series_release(struct mbox_series *s);

/*
 * What one mbox may hold: messages (counted as they are split, so a flood
 * of empty mails stops early), patches in the series taken, bytes of one
 * patch's diff.  The server sets them from --max-mbox-messages,
 * --max-series-patches and --max-patch-bytes; these are the defaults.
 */
#define MBOX_MAX_MESSAGES    5000
#define MBOX_MAX_PATCHES     500
#define MBOX_MAX_PATCH_BYTES (4u << 20)
struct mbox_limits {
	size_t max_messages, max_patches, max_patch_bytes;
};
void mbox_set_limits(const struct mbox_limits *l);
/* mbox_parse_thread's return when a limit was passed (err names it). */
#define MBOX_TOO_LARGE (-2)
/*
 * Parse buf (len bytes, need not be NUL-terminated) into out, which must be
 * initialised.  want_id ("<...>" or NULL) names a message of the series to
 * take when the mbox holds several (a URL's message-id); without it a pull
 * request (the first) wins, then the newest version, a complete series
 * before one missing parts, a series with a cover letter before one
 * without, a threaded one before strays.  Returns 0, or -1
 * with a reason in err: no message with a diff, want_id not in the mbox, a
 * series with missing parts, numbering that disagrees; MBOX_TOO_LARGE past a
 * limit.  On failure out is left empty.
 */
int mbox_parse_thread(const char *buf, size_t len, const char *want_id, struct mbox_series *out,
                      char *err, size_t errlen);

/* mbox_parse_thread without a message-id. */
int mbox_parse(const char *buf, size_t len, struct mbox_series *out, char *err, size_t errlen);

/*
 * Call fn(raw, raw_len, arg) for each message of the mbox buf, in order:
 * From_ lines (with a time and a year, after a blank line, before a header)
 * split, ">From " unquoted once (mboxrd), CRLF made LF.  A buffer without a
 * From_ line is one message.  Stops at fn's first non-zero return and
 * returns it; 0 when every message was given, -1 when out of memory.
 */
int mbox_split(const char *buf, size_t len, int (*fn)(const char *raw, size_t len, void *arg),
               void *arg);

/*
 * Parse one message (no From_ line) into m (zeroed by the caller); m->raw
 * is a copy of it.  Returns 0, or -1 with a reason in err (out of memory,
 * no headers); m is released on failure.
 */
int mbox_mail_parse(const char *raw, size_t len, struct mbox_mail *m, char *err, size_t errlen);
void mbox_mail_release(struct mbox_mail *m);

/*
 * Choose one series among mails[0..n) as mbox_parse_thread does and move
 * its mails into out (their slots in mails are zeroed; the caller still
 * releases every mails[i]).  Returns 0 or -1 with a reason in err.
 */
int mbox_assemble(struct mbox_mail *mails, size_t n, const char *want_id, struct mbox_series *out,
                  char *err, size_t errlen);

/*
 * The series candidates among mails[0..n) (patches and cover letters, not
 * replies), grouped by thread (or, unthreaded, by author and numbering) and
 * version as mbox_assemble groups them (an unnumbered patch in the thread of
 * a numbered series is a group of its own): group_of[i] (n entries, filled) is
 * the group of mails[i] or (size_t)-1.  Returns the number of groups.
 */
size_t mbox_group(struct mbox_mail *mails, size_t n, size_t *group_of);

/*
 * Read the "Re:" and "[PATCH v2 3/7]"-style prefixes of m->subject into
 * index, total, version, numbered, is_reply and patch_prefix, and set
 * m->title (new) to what follows them.
 */
void mbox_parse_subject(struct mbox_mail *m);

/* RFC 2047 decoding of a header value into new UTF-8.  Caller frees. */
char *mbox_decode_header(const char *value);

#endif
