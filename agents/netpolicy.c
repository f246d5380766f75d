/* netpolicy.c - see netpolicy.h. */
#include "netpolicy.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "strutil.h"

/* Whether the first bits of a and b (16-byte or 4-byte) agree. */
static bool prefix_match(const unsigned char *a, const unsigned char *b, int bits)
{
	int full = bits / 8, rest = bits % 8;
	if (memcmp(a, b, (size_t)full))
		return false;
	if (!rest)
		return true;
	unsigned char mask = (unsigned char)(0xff << (8 - rest));
	return (a[full] & mask) == (b[full] & mask);
}

/* An address as 16 bytes (IPv4 mapped into ::ffff:0:0/96). */
static void as16(const struct sockaddr *sa, unsigned char out[16])
{
	memset(out, 0, 16);
	if (sa->sa_family == AF_INET) {
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else {
		memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

static bool in_cidr(const unsigned char a[16], const char *cidr)
{
	char net[64];
	unsigned char n[16] = {0};
	const char *slash = strchr(cidr, '/');
	int bits;
	if (!slash || (size_t)(slash - cidr) >= sizeof(net))
		return false;
	memcpy(net, cidr, (size_t)(slash - cidr));
	net[slash - cidr] = 0;
	bits = atoi(slash + 1);
	if (inet_pton(AF_INET, net, n + 12) == 1) {
		n[10] = n[11] = 0xff;
		bits += 96;
	} else if (inet_pton(AF_INET6, net, n) != 1) {
		return false;
	}
	return bits >= 0 && bits <= 128 && prefix_match(a, n, bits);
}

/* Addresses that reach the machine itself or its networks. */
/* the server's refused ranges (server/fetch.c), IPv4 ones mapped by as16 */
static const char *const internal[] = {"0.0.0.0/8",      "10.0.0.0/8",
                                       "100.64.0.0/10",  "127.0.0.0/8",
                                       "169.254.0.0/16", "172.16.0.0/12",
                                       "192.0.0.0/24",   "192.168.0.0/16",
                                       "198.18.0.0/15",  "224.0.0.0/4",
                                       "240.0.0.0/4",    "::/128",
                                       "::1/128",        "::/96",
                                       "64:ff9b::/96",   "64:ff9b:1::/48",
                                       "100::/64",       "fc00::/7",
                                       "fe80::/10",      "fec0::/10",
                                       "ff00::/8",       NULL};

const char *netpolicy_internal_cidr(size_t i)
{
	return i < sizeof(internal) / sizeof(internal[0]) ? internal[i] : NULL;
}

static bool is_internal(const unsigned char a[16])
{
	for (int i = 0; internal[i]; i++)
		if (in_cidr(a, internal[i]))
			return true;
	return false;
}

/* Whether an allow entry names this host, address and port. */
static bool allowed(const char *allow, const char *host, const unsigned char a[16], int port)
{
	char *list = strutil_xstrdup(allow ? allow : ""), *save = NULL;
	bool ok = false;
	for (char *e = strtok_r(list, ", \t\n", &save); e && !ok;
	     e = strtok_r(NULL, ", \t\n", &save)) {
		if (strchr(e, '/')) {
			ok = in_cidr(a, e);
			continue;
		}
		char *colon = strrchr(e, ':');
		if (!colon)
			continue;
		*colon = 0;
		char *h = e;
		size_t hl = strlen(h);
		if (h[0] == '[' && hl > 1 && h[hl - 1] == ']') {
			h[hl - 1] = 0;
			h++;
		}
		if (atoi(colon + 1) != port)
			continue;
		unsigned char n[16] = {0};
		if (!strcasecmp(h, host))
			ok = true;
		else if (inet_pton(AF_INET, h, n + 12) == 1) {
			n[10] = n[11] = 0xff;
			ok = !memcmp(n, a, 16);
		} else if (inet_pton(AF_INET6, h, n) == 1)
			ok = !memcmp(n, a, 16);
	}
	free(list);
	return ok;
}

int netpolicy_check_url(const char *url, const char *allow, char *err, size_t errlen)
{
	static const struct {
		const char *scheme;
		int port;
	} schemes[] = {{"https://", 443}, {"http://", 80}, {"git://", 9418}, {"ssh://", 22}};
	char host[256], portstr[16];
	const char *p = NULL;
	int port = 0;
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		if (!strncasecmp(url, schemes[i].scheme, strlen(schemes[i].scheme))) {
			p = url + strlen(schemes[i].scheme);
			port = schemes[i].port;
		}
	if (!p) {
		strutil_errf(err, errlen, "only http, https, git and ssh URLs");
		return -1;
	}
	size_t auth_len = strcspn(p, "/?#");
	const char *at = memchr(p, '@', auth_len);
	if (at) {
		auth_len -= (size_t)(at + 1 - p);
		p = at + 1;
	}
	const char *hend, *portp = NULL;
	if (*p == '[') {
		hend = memchr(p, ']', auth_len);
		if (!hend) {
			strutil_errf(err, errlen, "a bad IPv6 address in the URL");
			return -1;
		}
		p++;
		if (hend[1] == ':')
			portp = hend + 2;
	} else {
		hend = memchr(p, ':', auth_len);
		if (hend)
			portp = hend + 1;
		else
			hend = p + auth_len;
	}
	if (hend == p || (size_t)(hend - p) >= sizeof(host)) {
		strutil_errf(err, errlen, "no host in the URL");
		return -1;
	}
	memcpy(host, p, (size_t)(hend - p));
	host[hend - p] = 0;
	if (portp) {
		char *end;
		long v = strtol(portp, &end, 10);
		if (end == portp || v < 1 || v > 65535 || (*end && !strchr("/?#", *end))) {
			strutil_errf(err, errlen, "a bad port in the URL");
			return -1;
		}
		port = (int)v;
	}
	snprintf(portstr, sizeof(portstr), "%d", port);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
	int gai = getaddrinfo(host, portstr, &hints, &res);
	if (gai) {
		strutil_errf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(gai));
		return -1;
	}
	int rc = 0;
	for (struct addrinfo *ai = res; ai && !rc; ai = ai->ai_next) {
		unsigned char a[16];
		char shown[INET6_ADDRSTRLEN] = "?";
		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		as16(ai->ai_addr, a);
		if (!is_internal(a) || allowed(allow, host, a, port))
			continue;
		if (ai->ai_family == AF_INET)
			inet_ntop(AF_INET, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, shown,
			          sizeof(shown));
		else
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, shown,
			          sizeof(shown));
		strutil_errf(err, errlen,
		             "%s port %d is %s, an internal address; not in LOCKLAB_FETCH_ALLOW",
		             host, port, shown);
		rc = -1;
	}
	freeaddrinfo(res);
	return rc;
}
