/*
 * mail.h - outgoing mail built with GMime 3: a reply that threads to the
 * mail it answers, headers folded and encoded by GMime (RFC 2047 words of
 * at most 75 characters, addresses left readable, names encoded), a
 * text/plain; charset=utf-8 body with a transfer encoding valid for its
 * bytes (7bit when ASCII, else quoted-printable).  And the way back: the
 * envelope recipients of a stored message.
 *
 * mail_global_init must run once before any other call (g_mime_init is
 * not thread-safe); afterwards every function may be called from any
 * thread.
 */
#ifndef LOCKLAB_SERVER_MAIL_H
#define LOCKLAB_SERVER_MAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

void mail_global_init(void);
void mail_global_cleanup(void);

/* Everything borrowed; NULL or "" leaves a header out. */
struct mail_reply {
	const char *from;        /* "Name <addr>" */
	const char *to;          /* address list, UTF-8 names allowed */
	const char *cc;          /* address list; To and From addresses are dropped from it */
	const char *subject;     /* the answered subject; "Re: " is added unless it has one */
	const char *in_reply_to; /* "<id>" of the answered mail */
	const char *references;  /* the answered mail's own References, or NULL */
	const char *domain;      /* right-hand side of the new Message-ID */
	const char *body;        /* UTF-8 text, LF line ends */
	long long tag;           /* goes into the Message-ID beside random bytes */
	bool new_thread;         /* a first mail (an alert): the subject as it is, no "Re: " */
	time_t date;
};

/*
 * The reply as message text with LF line ends (new string), its new
 * Message-ID "<...>" in *msgid (new string): "locklab.<tag>.<16 random
 * bytes in hex>@domain", unique across deployments and restarts.  NULL
 * with a reason in err when the message cannot be built (no usable To
 * address, no randomness).
 */
char *mail_build_reply(const struct mail_reply *r, char **msgid, char *err, size_t errlen);

/* "Re: " + subject unless it starts with "Re:" already; new string. */
char *mail_reply_subject(const char *subject);

/*
 * The addr-specs of every To, Cc and Bcc mailbox of message (len bytes),
 * groups flattened, duplicates dropped: a new NULL-terminated array (free
 * with mail_strv_free), NULL when the message cannot be parsed.
 */
char **mail_recipients(const char *message, size_t len);
void mail_strv_free(char **v);

/*
 * The To and Cc address lists (decoded, "Name <a@b>, ...") of the message
 * whose Message-ID is msgid ("<...>") in buf (an mbox, or one message
 * when it does not start with "From "): new strings in *to and *cc, NULL
 * when the header is missing.  Returns 0, or -1 when no such message.
 */
int mail_find_recipients(const char *buf, size_t len, const char *msgid, char **to, char **cc);

/* The addr-spec of the first mailbox in an address list ("Name <a@b>" -> "a@b"); new or NULL. */
char *mail_addr_spec(const char *addresses);

#endif
