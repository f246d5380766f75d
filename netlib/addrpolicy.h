/*
 * addrpolicy.h - which addresses a fetch on behalf of a submitter may
 * connect to: the one table of refused ranges and its matching, shared by
 * the server's URL fetches (server/fetch.c) and the agent's git fetches
 * (agents/netpolicy.c).
 *
 * Refused unless allowed: unspecified, loopback, private (RFC 1918, ULA),
 * link-local, carrier-grade NAT, IETF protocol assignments, benchmarking,
 * multicast, reserved, IPv4-mapped and IPv4-compatible IPv6, NAT64,
 * discard-only and site-local.  An IPv4-mapped IPv6 address is refused as
 * such (an allowed IPv4 address is not allowed in its mapped form).
 *
 * The allow list (LOCKLAB_FETCH_ALLOW): entries separated by commas or
 * white space, each "host:port" (a name, resolved once when the list is
 * read), "[v6]:port", "addr/prefix" or "addr" (any port).  Empty by default.
 *
 * Ownership: struct addrpolicy owns its allow list; addrpolicy_init and
 * addrpolicy_release pair up (ADDRPOLICY_INIT is an empty policy).
 * Reading a policy (addrpolicy_check) from many threads is safe.
 */
#ifndef LOCKLAB_ADDRPOLICY_H
#define LOCKLAB_ADDRPOLICY_H

#include <stddef.h>
#include <sys/socket.h>

/* An address range, network byte order; port -1 is any port. */
struct addrpolicy_net {
	int family; /* AF_INET or AF_INET6 */
	unsigned char addr[16];
	int prefix; /* bits */
	int port;
};

struct addrpolicy {
	struct addrpolicy_net *allow;
	size_t nallow;
};

#define ADDRPOLICY_INIT                                                                            \
	{                                                                                          \
		NULL, 0                                                                            \
	}

/*
 * Parse the allow list allow (NULL or "": nothing extra) into p, whose old
 * list is released first.  0, or -1 with a message in err and p empty.
 */
int addrpolicy_init(struct addrpolicy *p, const char *allow, char *err, size_t errlen);
void addrpolicy_release(struct addrpolicy *p);

/*
 * 0 when p allows a connection to sa (AF_INET or AF_INET6, port included),
 * else -1 with the reason in why: "127.0.0.1 port 9 is loopback
 * (127.0.0.0/8)".  p may be NULL (the default policy).
 */
int addrpolicy_check(const struct addrpolicy *p, const struct sockaddr *sa, char *why,
                     size_t whylen);

/* The i-th refused range ("10.0.0.0/8"), NULL past the last: for tests. */
const char *addrpolicy_refused_cidr(size_t i);

#endif
