/*
 * cidr_edges.h - for the address-policy unit tests: the first and last
 * address of a range and the addresses just outside it, computed from the
 * policy's own table, so the tests name no address outside loopback.
 * Header-only (static functions), included by test files alone.
 */
#ifndef LOCKLAB_TESTS_CIDR_EDGES_H
#define LOCKLAB_TESTS_CIDR_EDGES_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct cidr {
	int family; /* AF_INET or AF_INET6 */
	unsigned char addr[16];
	int len; /* 4 or 16 bytes */
	int prefix;
};

static bool cidr_parse(const char *text, struct cidr *c)
{
	char buf[64];
	const char *slash = strchr(text, '/');
	size_t n = slash ? (size_t)(slash - text) : strlen(text);

	if (n >= sizeof(buf))
		return false;
	memcpy(buf, text, n);
	buf[n] = 0;
	memset(c, 0, sizeof(*c));
	if (inet_pton(AF_INET, buf, c->addr) == 1)
		c->family = AF_INET, c->len = 4;
	else if (inet_pton(AF_INET6, buf, c->addr) == 1)
		c->family = AF_INET6, c->len = 16;
	else
		return false;
	c->prefix = slash ? atoi(slash + 1) : c->len * 8;
	return true;
}

/* out = the range's first (last = false) or last address, as text */
static void cidr_edge(const struct cidr *c, bool last, char *out, size_t outlen)
{
	unsigned char a[16];

	memcpy(a, c->addr, 16);
	for (int bit = c->prefix; bit < c->len * 8; bit++) {
		unsigned char m = (unsigned char)(0x80 >> (bit % 8));
		a[bit / 8] =
		    last ? (unsigned char)(a[bit / 8] | m) : (unsigned char)(a[bit / 8] & ~m);
	}
	inet_ntop(c->family, a, out, (socklen_t)outlen);
}

/*
 * out = the address one below the range's first (below = true) or one above
 * its last; false when there is none (the range starts or ends the space).
 */
static bool cidr_outside(const struct cidr *c, bool below, char *out, size_t outlen)
{
	unsigned char a[16];
	int i;

	memcpy(a, c->addr, 16);
	for (int bit = c->prefix; bit < c->len * 8; bit++) {
		unsigned char m = (unsigned char)(0x80 >> (bit % 8));
		a[bit / 8] =
		    below ? (unsigned char)(a[bit / 8] & ~m) : (unsigned char)(a[bit / 8] | m);
	}
	for (i = c->len - 1; i >= 0; i--) {
		if (below ? a[i]-- != 0 : a[i]++ != 0xff)
			break;
	}
	if (i < 0)
		return false;
	inet_ntop(c->family, a, out, (socklen_t)outlen);
	return true;
}

/* Whether text (an address) falls inside c. */
static bool cidr_has(const struct cidr *c, const char *text)
{
	struct cidr x;

	if (!cidr_parse(text, &x) || x.family != c->family)
		return false;
	for (int bit = 0; bit < c->prefix; bit++) {
		unsigned char m = (unsigned char)(0x80 >> (bit % 8));
		if ((x.addr[bit / 8] & m) != (c->addr[bit / 8] & m))
			return false;
	}
	return true;
}

#endif
