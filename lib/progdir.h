/*
 * progdir.h - files found next to the running program.
 *
 * `make install` puts the programs in PREFIX/bin and their data in
 * PREFIX/share/locklab, so a program finds its data from where it runs,
 * whatever PREFIX and DESTDIR were: no path is compiled in, and a copy of
 * the tree staged under DESTDIR runs as it will once moved.
 */
#ifndef LOCKLAB_PROGDIR_H
#define LOCKLAB_PROGDIR_H

#include <stdbool.h>
#include <stddef.h>

/*
 * rel made absolute against the folder of the running executable
 * (/proc/self/exe) into buf.  Returns buf, or NULL when that folder cannot
 * be read or the path does not fit.
 */
const char *progdir_path(const char *rel, char *buf, size_t len);

/* progdir_path when that path exists, else NULL. */
const char *progdir_existing(const char *rel, char *buf, size_t len);

#endif
