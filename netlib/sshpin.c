/* sshpin.c - see sshpin.h. */
#include "sshpin.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

bool sshpin_invoked(const char *argv0)
{
	const char *base = argv0 ? strrchr(argv0, '/') : NULL;

	base = base ? base + 1 : argv0;
	return base && strcmp(base, SSHPIN_NAME) == 0;
}

static int refuse(const char *why, const char *what)
{
	fprintf(stderr, SSHPIN_NAME ": refused: %s%s%s; nothing connected\n", why, what ? ": " : "",
	        what ? what : "");
	return 255;
}

int sshpin_main(int argc, char **argv, int (*replace)(const char *const argv[]))
{
	const char *pin = getenv(SSHPIN_ENV);
	char name[256], addr[INET6_ADDRSTRLEN], opt_host[300], opt_alias[300];
	unsigned char buf[16];
	int i;

	if (!pin || sscanf(pin, "%255s %45s", name, addr) != 2)
		return refuse("no " SSHPIN_ENV " (NAME ADDRESS)", NULL);
	if (inet_pton(AF_INET, addr, buf) != 1 && inet_pton(AF_INET6, addr, buf) != 1)
		return refuse("the pinned address is not an address", addr);
	/* the destination: the first argument that is no option nor an option's value */
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		/* ssh(1)'s options that take their value in the next argument */
		if (strlen(argv[i]) == 2 && strchr("BbcDEeFIiJLlmOopQRSWw", argv[i][1]))
			i++;
	}
	if (i >= argc)
		return refuse("no destination among the arguments", NULL);
	const char *host = strrchr(argv[i], '@');

	host = host ? host + 1 : argv[i];
	if (strcasecmp(host, name) != 0)
		return refuse("the destination is not the checked host", host);
	snprintf(opt_host, sizeof(opt_host), "HostName=%s", addr);
	snprintf(opt_alias, sizeof(opt_alias), "HostKeyAlias=%s", name);

	const char *fixed[] = {"ssh",
	                       "-o",
	                       opt_host,
	                       "-o",
	                       opt_alias,
	                       "-o",
	                       "CheckHostIP=no",
	                       "-o",
	                       "ProxyCommand=none",
	                       "-o",
	                       "ProxyJump=none",
	                       "-o",
	                       "ControlMaster=no",
	                       "-o",
	                       "ControlPath=none",
	                       "-o",
	                       "BatchMode=yes"};
	size_t nfixed = sizeof(fixed) / sizeof(fixed[0]);
	char **nargv = calloc(nfixed + (size_t)argc, sizeof(*nargv));

	if (!nargv)
		return refuse("out of memory", NULL);
	for (size_t k = 0; k < nfixed; k++)
		nargv[k] = (char *)fixed[k];
	for (int k = 1; k < argc; k++)
		nargv[nfixed + (size_t)k - 1] = argv[k];
	/* git's stderr goes to the job's log: where the connection was held */
	fprintf(stderr, SSHPIN_NAME ": %s held to %s\n", name, addr);
	replace((const char *const *)nargv);
	fprintf(stderr, SSHPIN_NAME ": cannot run ssh: %s\n", strerror(errno));
	free(nargv);
	return 255;
}

int sshpin_install(const char *workdir, char *path, size_t len)
{
	char self[4096], dir[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return -1;
	self[n] = 0;
	snprintf(dir, sizeof(dir), "%s/bin", workdir);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -1;
	if ((size_t)snprintf(path, len, "%s/" SSHPIN_NAME, dir) >= len)
		return -1;
	/* a link made by an earlier start to this same program is kept as it is */
	char old[4096];
	ssize_t m = readlink(path, old, sizeof(old) - 1);

	if (m == n && memcmp(old, self, (size_t)n) == 0)
		return 0;
	if (unlink(path) && errno != ENOENT)
		return -1;
	return symlink(self, path);
}
