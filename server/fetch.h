/*
 * fetch.h - get a patch or mbox by URL with libcurl under a policy: http and
 * https only (redirects too), no proxy, every peer address checked after
 * resolution and again when each socket is opened (redirects included, so
 * DNS rebinding cannot pass), connect and total timeouts, a size cap that
 * also holds after gunzip (Content-Encoding and .gz bodies), the HTTP status
 * checked.
 *
 * The policy: public unicast addresses are allowed; loopback, link-local,
 * private, CGNAT, multicast, unspecified, reserved, IPv4-mapped and
 * -compatible IPv6, NAT64 and ULA ranges are refused unless an entry of
 * srv_cfg.fetch_allow (a comma list of "host:port" or CIDR) allows them.
 */
#ifndef LOCKLAB_SERVER_FETCH_H
#define LOCKLAB_SERVER_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* Call once from main before threads start; 0 or -1. */
int fetch_global_init(void);
void fetch_global_cleanup(void);

/*
 * Parse the allow list (srv_cfg.fetch_allow, the syntax of
 * netlib/addrpolicy.h, whose refused ranges apply: the agent's git
 * fetches use the same).  Call before threads start.  0, or -1 with a
 * message in err.  An empty or NULL list allows nothing extra.
 */
int fetch_policy_init(const char *allow, char *err, size_t errlen);
void fetch_policy_release(void);

/*
 * 0 when the policy allows a connection to sa (AF_INET or AF_INET6, port
 * included), else -1 with the reason ("127.0.0.1 port 9 is loopback
 * (127.0.0.0/8), not in --fetch-allow / LOCKLAB_FETCH_ALLOW") in why.
 */
int fetch_addr_allowed(const struct sockaddr *sa, char *why, size_t whylen);

/* True when url starts with http:// or https:// (case-insensitive). */
int fetch_url_allowed(const char *url);

enum fetch_rc {
	FETCH_OK = 0,
	FETCH_FAILED = -1,  /* the server or the transfer failed: the reason in err */
	FETCH_REFUSED = -2, /* the policy refused the URL or a peer; nothing was sent */
};

/*
 * Take one of srv_cfg.fetch_max_active fetch slots: true when one was free
 * (give it back with fetch_slot_release), false when all are busy (the
 * caller answers 503).  A fetch holds a pool thread for up to
 * --fetch-timeout; the cap keeps the others serving.
 */
bool fetch_slot_take(void);
void fetch_slot_release(void);

/*
 * GET url into *out (NUL-terminated, caller frees) of *len bytes, at most
 * srv_cfg.fetch_max_bytes after decompression, within srv_cfg.fetch_timeout
 * seconds.  Returns FETCH_OK, or FETCH_FAILED/FETCH_REFUSED with a reason in
 * err.  A URL whose host resolves to any refused address is refused before
 * a connection is made.
 */
int fetch_url(const char *url, char **out, size_t *len, char *err, size_t errlen);

#endif
