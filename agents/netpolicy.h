/*
 * netpolicy.h - which addresses a submitted git URL may make the agent
 * connect to; the same rule as the server's fetches (LOCKLAB_FETCH_ALLOW).
 *
 * A URL's host is resolved and every address checked: loopback, private
 * (RFC 1918, fc00::/7), link-local, shared (100.64/10), unspecified and
 * multicast addresses are refused unless an entry of the allow list names
 * them: "host:port" (the URL's host as written, or an address, and its port)
 * or a CIDR ("10.1.0.0/16", "::1/128", any port).  Entries are separated
 * by commas or white space; the list is empty by default.
 *
 * Only submitted URLs are checked (http, https, git, ssh).  Tree URLs come
 * from an admin (POST /api/v1/trees, admin token): a local path or file://
 * is allowed there, and is how a lab points at its own mirrors.
 *
 * Not done: git resolves the name again when it connects, so a name whose
 * answer changes between the check and the connection (DNS rebinding) is
 * not caught for git URLs; the server pins its own fetches.
 */
#ifndef LOCKLAB_AGENT_NETPOLICY_H
#define LOCKLAB_AGENT_NETPOLICY_H

#include <stdbool.h>
#include <stddef.h>

/* 0 when url may be fetched under allow (NULL: empty); -1 with err why not. */
/* The i-th internal range ("10.0.0.0/8"), NULL past the last: for tests. */
const char *netpolicy_internal_cidr(size_t i);

int netpolicy_check_url(const char *url, const char *allow, char *err, size_t errlen);

#endif
