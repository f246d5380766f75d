/*
 * fetch.h - get a patch or mbox by URL with libcurl: http and https only
 * (redirects too), connect and total timeouts, a size cap, gzip undone
 * (Content-Encoding and .gz bodies), the HTTP status checked.
 */
#ifndef LOCKLAB_SERVER_FETCH_H
#define LOCKLAB_SERVER_FETCH_H

#include <stddef.h>

/* Call once from main before threads start; 0 or -1. */
int fetch_global_init(void);
void fetch_global_cleanup(void);

/* True when url starts with http:// or https:// (case-insensitive). */
int fetch_url_allowed(const char *url);

/*
 * GET url into *out (NUL-terminated, caller frees) of *len bytes, at most
 * srv_cfg.fetch_max_bytes after decompression, within srv_cfg.fetch_timeout
 * seconds.  Returns 0, or -1 with a reason in err.
 */
int fetch_url(const char *url, char **out, size_t *len, char *err, size_t errlen);

#endif
