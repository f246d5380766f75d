/*
 * addrpolicy.c - the refused ranges and the allow list (addrpolicy.h).
 */
#include "addrpolicy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Refused unless allowed; the first match names the reason. */
static const struct {
	const char *cidr, *what;
} addrpolicy_refused[] = {
    {"0.0.0.0/8", "unspecified"},
    {"10.0.0.0/8", "private"},
    {"100.64.0.0/10", "carrier-grade NAT"},
    {"127.0.0.0/8", "loopback"},
    {"169.254.0.0/16", "link-local"},
    {"172.16.0.0/12", "private"},
    {"192.0.0.0/24", "IETF protocol assignments"},
    {"192.168.0.0/16", "private"},
    {"198.18.0.0/15", "benchmarking"},
    {"224.0.0.0/4", "multicast"},
    {"240.0.0.0/4", "reserved or broadcast"},
    {"::/128", "unspecified"},
    {"::1/128", "loopback"},
    {"::ffff:0:0/96", "IPv4-mapped IPv6"},
    {"::/96", "IPv4-compatible IPv6"},
    {"64:ff9b::/96", "NAT64"},
    {"64:ff9b:1::/48", "NAT64 local use"},
    {"100::/64", "discard-only"},
    {"fc00::/7", "unique local (ULA)"},
    {"fe80::/10", "link-local"},
    {"fec0::/10", "site-local"},
    {"ff00::/8", "multicast"},
};
#define ADDRPOLICY_NREFUSED (sizeof(addrpolicy_refused) / sizeof(addrpolicy_refused[0]))

static struct addrpolicy_net addrpolicy_refused_nets[ADDRPOLICY_NREFUSED];
static pthread_once_t addrpolicy_once = PTHREAD_ONCE_INIT;

const char *addrpolicy_refused_cidr(size_t i)
{
	return i < ADDRPOLICY_NREFUSED ? addrpolicy_refused[i].cidr : NULL;
}

/* "addr" or "addr/prefix" into n (any port); 0 or -1. */
static int addrpolicy_parse_net(const char *text, struct addrpolicy_net *n)
{
	char buf[INET6_ADDRSTRLEN + 8];
	char *slash, *end;
	long bits;

	if (strlen(text) >= sizeof(buf))
		return -1;
	strcpy(buf, text);
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	memset(n, 0, sizeof(*n));
	n->port = -1;
	if (inet_pton(AF_INET, buf, n->addr) == 1)
		n->family = AF_INET;
	else if (inet_pton(AF_INET6, buf, n->addr) == 1)
		n->family = AF_INET6;
	else
		return -1;
	n->prefix = n->family == AF_INET ? 32 : 128;
	if (slash) {
		errno = 0;
		bits = strtol(slash + 1, &end, 10);
		if (errno || end == slash + 1 || *end || bits < 0 || bits > n->prefix)
			return -1;
		n->prefix = (int)bits;
	}
	return 0;
}

static void addrpolicy_refused_init(void)
{
	/* the table is literal: a range that does not parse is a bug, caught by tests */
	for (size_t i = 0; i < ADDRPOLICY_NREFUSED; i++)
		if (addrpolicy_parse_net(addrpolicy_refused[i].cidr, &addrpolicy_refused_nets[i]) !=
		    0)
			abort();
}

static bool addrpolicy_match(const struct addrpolicy_net *n, int family, const unsigned char *a,
                             int port)
{
	int full = n->prefix / 8, rest = n->prefix % 8;

	if (n->family != family || (n->port >= 0 && n->port != port))
		return false;
	if (memcmp(n->addr, a, (size_t)full) != 0)
		return false;
	return !rest || !((n->addr[full] ^ a[full]) & (0xff << (8 - rest)) & 0xff);
}

static int addrpolicy_add(struct addrpolicy *p, const struct addrpolicy_net *n, char *err,
                          size_t errlen)
{
	struct addrpolicy_net *na = realloc(p->allow, (p->nallow + 1) * sizeof(*na));

	if (!na) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	p->allow = na;
	p->allow[p->nallow++] = *n;
	return 0;
}

/* One "host:port" entry: an address literal, or a name resolved now. */
static int addrpolicy_host_port(struct addrpolicy *p, const char *host, const char *port, char *err,
                                size_t errlen)
{
	struct addrinfo hints = {0}, *ai = NULL, *q;
	struct addrpolicy_net n;
	char *end;
	long pn;
	int gerr, rc = 0;

	errno = 0;
	pn = strtol(port, &end, 10);
	if (errno || end == port || *end || pn < 1 || pn > 65535) {
		snprintf(err, errlen, "bad port '%s'", port);
		return -1;
	}
	if (addrpolicy_parse_net(host, &n) == 0) {
		n.port = (int)pn;
		return addrpolicy_add(p, &n, err, errlen);
	}
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	gerr = getaddrinfo(host, NULL, &hints, &ai);
	if (gerr) {
		snprintf(err, errlen, "cannot resolve '%s': %s", host, gai_strerror(gerr));
		return -1;
	}
	for (q = ai; q && rc == 0; q = q->ai_next) {
		memset(&n, 0, sizeof(n));
		n.family = q->ai_family;
		n.port = (int)pn;
		if (q->ai_family == AF_INET) {
			memcpy(n.addr, &((struct sockaddr_in *)q->ai_addr)->sin_addr, 4);
			n.prefix = 32;
		} else if (q->ai_family == AF_INET6) {
			memcpy(n.addr, &((struct sockaddr_in6 *)q->ai_addr)->sin6_addr, 16);
			n.prefix = 128;
		} else {
			continue;
		}
		rc = addrpolicy_add(p, &n, err, errlen);
	}
	freeaddrinfo(ai);
	return rc;
}

/* One entry of the allow list; 0 or -1 with err. */
static int addrpolicy_entry(struct addrpolicy *p, char *e, char *err, size_t errlen)
{
	struct addrpolicy_net n;
	char *colon, *close;

	if (strchr(e, '/') || addrpolicy_parse_net(e, &n) == 0) {
		if (addrpolicy_parse_net(e, &n) != 0) {
			snprintf(err, errlen, "bad CIDR '%s'", e);
			return -1;
		}
		return addrpolicy_add(p, &n, err, errlen);
	}
	if (e[0] == '[') {
		close = strchr(e, ']');
		if (!close || close[1] != ':') {
			snprintf(err, errlen, "'%s': want [address]:port", e);
			return -1;
		}
		*close = '\0';
		return addrpolicy_host_port(p, e + 1, close + 2, err, errlen);
	}
	colon = strrchr(e, ':');
	if (!colon || colon == e || strchr(e, ':') != colon) {
		snprintf(err, errlen, "'%s': want host:port, [address]:port or a CIDR", e);
		return -1;
	}
	*colon = '\0';
	return addrpolicy_host_port(p, e, colon + 1, err, errlen);
}

int addrpolicy_init(struct addrpolicy *p, const char *allow, char *err, size_t errlen)
{
	char *copy, *save = NULL, *tok;
	int ret = 0;

	pthread_once(&addrpolicy_once, addrpolicy_refused_init);
	addrpolicy_release(p);
	if (!allow || !*allow)
		return 0;
	copy = strdup(allow);
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (tok = strtok_r(copy, ", \t\n", &save); tok && ret == 0;
	     tok = strtok_r(NULL, ", \t\n", &save)) {
		if (strlen(tok) >= 300) {
			snprintf(err, errlen, "entry too long");
			ret = -1;
		} else {
			ret = addrpolicy_entry(p, tok, err, errlen);
		}
	}
	if (ret != 0)
		addrpolicy_release(p);
	free(copy);
	return ret;
}

void addrpolicy_release(struct addrpolicy *p)
{
	free(p->allow);
	p->allow = NULL;
	p->nallow = 0;
}

int addrpolicy_check(const struct addrpolicy *p, const struct sockaddr *sa, char *why,
                     size_t whylen)
{
	char text[INET6_ADDRSTRLEN] = "?";
	const unsigned char *a;
	int family = sa->sa_family, port;
	size_t i;

	if (family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		a = (const unsigned char *)&s4->sin_addr;
		port = ntohs(s4->sin_port);
	} else if (family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

		a = (const unsigned char *)&s6->sin6_addr;
		port = ntohs(s6->sin6_port);
	} else {
		snprintf(why, whylen, "not an IP address (family %d)", family);
		return -1;
	}
	pthread_once(&addrpolicy_once, addrpolicy_refused_init);
	for (i = 0; p && i < p->nallow; i++)
		if (addrpolicy_match(&p->allow[i], family, a, port))
			return 0;
	for (i = 0; i < ADDRPOLICY_NREFUSED; i++)
		if (addrpolicy_match(&addrpolicy_refused_nets[i], family, a, port)) {
			inet_ntop(family, a, text, sizeof(text));
			snprintf(why, whylen, "%s port %d is %s (%s)", text, port,
			         addrpolicy_refused[i].what, addrpolicy_refused[i].cidr);
			return -1;
		}
	return 0;
}
