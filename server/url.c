/*
 * url.c - the check of submitted URLs (url.h), on libcurl's URL parser.
 */
#include "url.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *name;
	unsigned mask;
} url_schemes[] = {
    {"http", URL_HTTP},
    {"https", URL_HTTP},
    {"git", URL_GIT},
    {"ssh", URL_SSH},
};

/* "http, https and git" for the schemes of mask, into buf. */
static const char *url_scheme_list(unsigned mask, char *buf, size_t len)
{
	size_t i, n = 0, k = 0;

	for (i = 0; i < sizeof(url_schemes) / sizeof(url_schemes[0]); i++)
		if (mask & url_schemes[i].mask)
			n++;
	buf[0] = '\0';
	for (i = 0; i < sizeof(url_schemes) / sizeof(url_schemes[0]); i++) {
		size_t used = strlen(buf);

		if (!(mask & url_schemes[i].mask))
			continue;
		k++;
		snprintf(buf + used, len - used, "%s%s",
		         k == 1   ? ""
		         : k == n ? " and "
		                  : ", ",
		         url_schemes[i].name);
	}
	return buf;
}

int url_check(const char *url, unsigned schemes, char *err, size_t errlen)
{
	char list[64];
	CURLU *u = NULL;
	char *scheme = NULL, *host = NULL, *user = NULL, *password = NULL;
	unsigned mask = 0;
	size_t i, len = strlen(url);
	int ret = -1;

	url_scheme_list(schemes, list, sizeof(list));
	if (len == 0 || len > URL_MAX) {
		snprintf(err, errlen, "a URL of 1 to %d bytes", URL_MAX);
		return -1;
	}
	for (i = 0; i < len; i++)
		if ((unsigned char)url[i] <= ' ' || url[i] == 0x7f) {
			snprintf(err, errlen, "a URL may not hold whitespace or control bytes");
			return -1;
		}
	u = curl_url();
	if (!u) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host) {
		snprintf(err, errlen, "not a URL with a scheme and a host (only %s URLs)", list);
		goto out;
	}
	for (i = 0; i < sizeof(url_schemes) / sizeof(url_schemes[0]); i++)
		if (strcasecmp(scheme, url_schemes[i].name) == 0)
			mask = url_schemes[i].mask;
	if (!(mask & schemes)) {
		snprintf(err, errlen, "only %s URLs, not %s://", list, scheme);
		goto out;
	}
	curl_url_get(u, CURLUPART_USER, &user, 0);
	curl_url_get(u, CURLUPART_PASSWORD, &password, 0);
	if (password || (user && mask != URL_SSH)) {
		snprintf(err, errlen,
		         "credentials in a URL are refused: it is stored, listed publicly and "
		         "logged; give a URL that needs none%s",
		         mask == URL_SSH ? " (an ssh user name alone is fine)" : "");
		goto out;
	}
	ret = 0;
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(user);
	curl_free(password);
	curl_url_cleanup(u);
	return ret;
}
