/*
 * netpolicy.h - which addresses a git URL may make the agent (a submitted
 * URL) or the server's tracker (a tracked tree's URL) connect to, and the
 * address git is then held to.  The rule is the
 * server's (netlib/addrpolicy.h: one table of refused ranges, the
 * LOCKLAB_FETCH_ALLOW list of "host:port" and CIDR entries).
 *
 * A URL's host is resolved and every address checked; then the fetch is
 * pinned to what was checked, so a name whose answer changes between the
 * check and git's connection (DNS rebinding) cannot move git elsewhere:
 *   http, https: git's http.curloptResolve ("host:port:addr,...", libcurl's
 *                CURLOPT_RESOLVE: TLS still checks the certificate of the
 *                name), redirects off (http.followRedirects=false);
 *   git://:      the URL with its host replaced by the checked address.
 *   ssh://:      ssh given the checked address as its HostName and the name
 *                as its HostKeyAlias (the host key is still checked against
 *                the name): "NAME ADDRESS" in ssh, for the ssh wrapper
 *                of the agent and the server (sshpin.h).
 *
 * Network URLs are checked (http, https, git, ssh): the agent's submitted
 * ones and the tracker's tree URLs.  A tree's local path or file:// URL
 * (POST /api/v1/trees with --allow-local-trees, how a lab points at its
 * own mirrors) is no network fetch and is not checked.
 */
#ifndef LOCKLAB_NETPOLICY_H
#define LOCKLAB_NETPOLICY_H

#include <stdbool.h>
#include <stddef.h>

/* What git is to be held to: fetch url, and with resolve set, -c http.curloptResolve=resolve. */
struct netpolicy_pin {
	char url[2048];
	char resolve[1024]; /* "" when nothing to pin (an address literal, ssh) */
	char ssh[300];      /* "NAME ADDRESS" for an ssh:// URL with a name, else "" */
	char option[1100];  /* "http.curloptResolve=..." (netpolicy_git_args) */
};

/* How many argv entries netpolicy_git_args writes. */
#define NETPOLICY_GIT_ARGC 6

/*
 * Writes the NETPOLICY_GIT_ARGC entries ("-c", ...) that hold a git fetch
 * to pin: no redirects, http(s) names resolved to the checked addresses
 * only, ssh spoken in OpenSSH's manner (the ssh wrapper reads the pin,
 * sshpin.h).  Call it once pin is filled; the entries point
 * into pin.  Returns NETPOLICY_GIT_ARGC.
 */
size_t netpolicy_git_args(struct netpolicy_pin *pin, const char **argv);

/*
 * 0 when url may be fetched under allow (NULL: empty), with pin (may be
 * NULL) filled; -1 with err why not.
 */
int netpolicy_check_url(const char *url, const char *allow, struct netpolicy_pin *pin, char *err,
                        size_t errlen);

#endif
