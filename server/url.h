/*
 * url.h - the one check of a URL a client submits (a patch URL, a git URL, a
 * tree): its scheme among those allowed, a host, at most URL_MAX bytes, no
 * whitespace or control bytes, and no credentials.
 *
 * Credentials are refused, not stripped: a URL is stored, listed publicly,
 * sent to agents and written in logs, and a stripped one would not fetch
 * what needs them anyway.  A user name alone is let through for ssh (key
 * authentication; "git@" is no secret); a password never is.
 */
#ifndef LOCKLAB_SERVER_URL_H
#define LOCKLAB_SERVER_URL_H

#include <stddef.h>

#define URL_MAX 2048

enum url_scheme {
	URL_HTTP = 1 << 0, /* http and https */
	URL_GIT = 1 << 1,  /* git:// */
	URL_SSH = 1 << 2,  /* ssh:// */
};

/*
 * 0 when url passes with one of the schemes (a mask of enum url_scheme),
 * else -1 with the reason in err ("only http, https and git URLs",
 * "credentials in a URL are refused ...").
 */
int url_check(const char *url, unsigned schemes, char *err, size_t errlen);

#endif
