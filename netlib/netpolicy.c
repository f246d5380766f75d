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

#include "addrpolicy.h"
#include "strutil.h"

/* Whether host is an address literal already (nothing to pin). */
static bool netpolicy_literal(const char *host)
{
	unsigned char buf[16];
	return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

/*
 * Fill pin for url, whose host (as written, ending at hend in url) resolved
 * to the checked addrs; 0, or -1 with err when the result would not fit.
 */
static int netpolicy_pin(struct netpolicy_pin *pin, const char *url, const char *host,
                         const char *hend, int port, char addrs[][INET6_ADDRSTRLEN + 2],
                         size_t naddr, char *err, size_t errlen)
{
	size_t used;
	pin->resolve[0] = 0;
	pin->ssh[0] = 0;
	if (strlen(url) >= sizeof(pin->url)) {
		strutil_errf(err, errlen, "the URL is too long");
		return -1;
	}
	strcpy(pin->url, url);
	if (netpolicy_literal(host))
		return 0;
	if (!strncasecmp(url, "ssh://", 6)) {
		/* ssh takes the address bare, without the brackets of a v6 one */
		const char *a = addrs[0];
		size_t alen = strlen(a);

		if (a[0] == '[') {
			a++;
			alen -= 2;
		}
		snprintf(pin->ssh, sizeof(pin->ssh), "%s %.*s", host, (int)alen, a);
		return 0;
	}
	if (!strncasecmp(url, "git://", 6)) {
		/* the host as written, up to hend, becomes the first checked address */
		const char *hstart = hend - strlen(host);
		int n = snprintf(pin->url, sizeof(pin->url), "%.*s%s%s", (int)(hstart - url), url,
		                 addrs[0], hend);
		if (n < 0 || (size_t)n >= sizeof(pin->url)) {
			strutil_errf(err, errlen, "the URL is too long");
			return -1;
		}
		return 0;
	}
	used = (size_t)snprintf(pin->resolve, sizeof(pin->resolve), "%s:%d:", host, port);
	for (size_t i = 0; i < naddr && used < sizeof(pin->resolve); i++)
		used += (size_t)snprintf(pin->resolve + used, sizeof(pin->resolve) - used, "%s%s",
		                         i ? "," : "", addrs[i]);
	if (used >= sizeof(pin->resolve)) {
		strutil_errf(err, errlen, "too many addresses for %s", host);
		return -1;
	}
	return 0;
}

int netpolicy_check_url(const char *url, const char *allow, struct netpolicy_pin *pin, char *err,
                        size_t errlen)
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
	struct addrpolicy policy = ADDRPOLICY_INIT;
	char perr[256];
	if (addrpolicy_init(&policy, allow, perr, sizeof(perr))) {
		strutil_errf(err, errlen, "LOCKLAB_FETCH_ALLOW: %s", perr);
		return -1;
	}
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
	int gai = getaddrinfo(host, portstr, &hints, &res);
	if (gai) {
		strutil_errf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(gai));
		addrpolicy_release(&policy);
		return -1;
	}
	int rc = 0;
	size_t naddr = 0;
	char addrs[8][INET6_ADDRSTRLEN + 2]; /* the checked addresses, v6 in brackets */
	for (struct addrinfo *ai = res; ai && !rc; ai = ai->ai_next) {
		char shown[INET6_ADDRSTRLEN] = "?", why[256];
		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		if (ai->ai_family == AF_INET)
			inet_ntop(AF_INET, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, shown,
			          sizeof(shown));
		else
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, shown,
			          sizeof(shown));
		if (addrpolicy_check(&policy, ai->ai_addr, why, sizeof(why)) == 0) {
			bool seen = false;
			char a[INET6_ADDRSTRLEN + 2];
			snprintf(a, sizeof(a), ai->ai_family == AF_INET6 ? "[%s]" : "%s", shown);
			for (size_t i = 0; i < naddr; i++)
				seen = seen || !strcmp(addrs[i], a);
			if (!seen && naddr < sizeof(addrs) / sizeof(addrs[0]))
				strcpy(addrs[naddr++], a);
			continue;
		}
		/* never what the name resolved to: that would tell internal names apart */
		strutil_errf(err, errlen,
		             "%s port %d: refused by the fetch policy (an internal address, not in "
		             "LOCKLAB_FETCH_ALLOW)",
		             host, port);
		rc = -1;
	}
	freeaddrinfo(res);
	addrpolicy_release(&policy);
	if (rc == 0 && naddr == 0) {
		strutil_errf(err, errlen, "%s has no IP address", host);
		rc = -1;
	}
	if (rc == 0 && pin)
		rc = netpolicy_pin(pin, url, host, hend, port, addrs, naddr, err, errlen);
	return rc;
}

size_t netpolicy_git_args(struct netpolicy_pin *pin, const char **argv)
{
	size_t n = 0;

	snprintf(pin->option, sizeof(pin->option), "http.curloptResolve=%s", pin->resolve);
	argv[n++] = "-c";
	argv[n++] = "http.followRedirects=false";
	argv[n++] = "-c";
	argv[n++] = pin->option;
	argv[n++] = "-c";
	argv[n++] = "ssh.variant=ssh";
	return n;
}
