/* codesource.c - where code may come from (codesource.h) */
#include "codesource.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define CODESOURCE_NOT_NETWORK "is not an http, https, git or ssh URL"

bool codesource_is_local(const char *url)
{
	return url[0] == '/' || strncasecmp(url, "file://", 7) == 0;
}

static bool codesource_is_network(const char *url)
{
	return !strncasecmp(url, "https://", 8) || !strncasecmp(url, "http://", 7) ||
	       !strncasecmp(url, "git://", 6) || !strncasecmp(url, "ssh://", 6);
}

/* No byte git or a log line could take for more than a path's: controls and DEL. */
static bool codesource_clean(const char *url)
{
	for (const unsigned char *p = (const unsigned char *)url; *p; p++)
		if (*p < ' ' || *p == 0x7f)
			return false;
	return true;
}

enum codesource_kind codesource_check(const char *url, const char *tree_url, bool allow_local,
                                      char *why, size_t len)
{
	if (!codesource_clean(url)) {
		snprintf(why, len, "holds control characters");
		return CODESOURCE_REFUSED;
	}
	if (codesource_is_network(url))
		return CODESOURCE_NETWORK;
	if (!codesource_is_local(url)) {
		snprintf(why, len, CODESOURCE_NOT_NETWORK);
		return CODESOURCE_REFUSED;
	}
	if (!allow_local) {
		snprintf(why, len,
		         CODESOURCE_NOT_NETWORK " (local trees need --allow-local-trees)");
		return CODESOURCE_REFUSED;
	}
	if (strlen(url) > CODESOURCE_PATH_MAX) {
		snprintf(why, len, "is a local path of more than %d bytes", CODESOURCE_PATH_MAX);
		return CODESOURCE_REFUSED;
	}
	if (tree_url && strcmp(url, tree_url) != 0) {
		snprintf(why, len,
		         "is a local path other than its tree's (%.300s): only a tree's own path "
		         "is fetched locally",
		         tree_url);
		return CODESOURCE_REFUSED;
	}
	return CODESOURCE_LOCAL;
}
