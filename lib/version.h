/*
 * version.h - the version every program prints with --version.
 *
 * The Makefile defines LOCKLAB_VERSION when it compiles version.c: `git
 * describe --always --dirty --tags` of the checkout, else the first line of
 * a VERSION file (a tarball), else "unknown".
 */
#ifndef LOCKLAB_VERSION_H
#define LOCKLAB_VERSION_H

#include <stdio.h>

/* The version text (static storage, never NULL). */
const char *version_text(void);

/* Print "<prog> <version>" and a newline on out (what --version prints). */
void version_print(FILE *out, const char *prog);

#endif
