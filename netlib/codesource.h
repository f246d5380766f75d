/*
 * codesource.h - where code may come from: the one rule for a git source,
 * applied by the server when a tree is registered (server/trees.c) and each
 * time the tracker fetches it (server/track.c), and by the agent to every
 * job's git URL (agents/build.c), tracked commits included.
 *
 * A network URL (http, https, git or ssh) is a source; the programs check
 * it further (the server's url.c, the addresses: netpolicy.h).  A local
 * path ("/srv/git/linux") or file:// URL is one only where the program runs
 * with --allow-local-trees (a lab whose server and agents share a
 * filesystem), and a job's git URL only when it is its own tree's URL: a
 * tracked tree's commits are fetched from the tree itself, and no
 * submission names another path.  Anything else (an option, ext::, a
 * relative path, control characters) is refused with the same words on
 * both sides: "is not an http, https, git or ssh URL", naming
 * --allow-local-trees for a local path.
 */
#ifndef LOCKLAB_CODESOURCE_H
#define LOCKLAB_CODESOURCE_H

#include <stdbool.h>
#include <stddef.h>

/* The longest local path taken, as the server's URL_MAX. */
#define CODESOURCE_PATH_MAX 2048

enum codesource_kind {
	CODESOURCE_REFUSED = -1,
	CODESOURCE_NETWORK, /* http, https, git or ssh: checked further by the caller */
	CODESOURCE_LOCAL,   /* a local path or file:// URL, allowed here */
};

/* A local path ("/...") or file:// URL, allowed or not. */
bool codesource_is_local(const char *url);

/*
 * What url is as a git source where local trees are allowed (allow_local)
 * or not.  tree_url NULL: url is a tree's own; else url is a job's git URL
 * on the tree at tree_url (a local one must be that same URL).
 * CODESOURCE_REFUSED with why (to follow the URL in a sentence: "is not an
 * http, https, git or ssh URL ...") when it may not be fetched.
 */
enum codesource_kind codesource_check(const char *url, const char *tree_url, bool allow_local,
                                      char *why, size_t len);

#endif
