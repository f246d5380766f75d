/*
 * version.c - the version the Makefile compiled in (version.h).
 */
#include "version.h"

#ifndef LOCKLAB_VERSION
#define LOCKLAB_VERSION "unknown"
#endif

const char *version_text(void)
{
	return LOCKLAB_VERSION;
}

void version_print(FILE *out, const char *prog)
{
	fprintf(out, "%s %s\n", prog, LOCKLAB_VERSION);
}
