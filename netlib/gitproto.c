/* gitproto.c - the protocols a git fetch may use (gitproto.h) */
#include "gitproto.h"

size_t gitproto_args(const char **argv, bool allow_file)
{
	static const char *const policy[GITPROTO_ARGC - 2] = {
	    "-c", "protocol.allow=never",       "-c", "protocol.https.allow=always",
	    "-c", "protocol.http.allow=always", "-c", "protocol.git.allow=always",
	    "-c", "protocol.ssh.allow=always",
	};
	size_t n;

	for (n = 0; n < GITPROTO_ARGC - 2; n++)
		argv[n] = policy[n];
	argv[n++] = "-c";
	argv[n++] = allow_file ? "protocol.file.allow=always" : "protocol.file.allow=never";
	return n;
}
