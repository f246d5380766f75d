/* childenv.c - see childenv.h. */
#include "childenv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"

const char *const childenv_pass[] = {
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "SSH_AUTH_SOCK",
    /* sanitizer builds (make asan) report where the tests look */
    "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS",
    /* the trusted lockbench's kernel files and the tests' stand-in KVM device */
    "LOCKLAB_KERNEL_DIR", "LOCKLAB_KVM_DEVICE", NULL};

char **childenv_make(const char *const *extra)
{
	size_t n = 0, k = 0;
	while (childenv_pass[n])
		n++;
	for (size_t i = 0; extra && extra[i]; i++)
		n++;
	char **envp = strutil_xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; childenv_pass[i]; i++) {
		const char *v = getenv(childenv_pass[i]);
		if (!v)
			continue;
		size_t l = strlen(childenv_pass[i]) + strlen(v) + 2;
		envp[k] = strutil_xmalloc(l);
		snprintf(envp[k++], l, "%s=%s", childenv_pass[i], v);
	}
	for (size_t i = 0; extra && extra[i]; i++)
		envp[k++] = strutil_xstrdup(extra[i]);
	envp[k] = NULL;
	return envp;
}

void childenv_free(char **envp)
{
	for (size_t i = 0; envp && envp[i]; i++)
		free(envp[i]);
	free(envp);
}
