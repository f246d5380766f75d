/*
 * elfimage.h - the SHA-256 of what an ELF executable loads (elfimage.c):
 * the identity of the code a lockbench run measured with.
 */
#ifndef LOCKLAB_ELFIMAGE_H
#define LOCKLAB_ELFIMAGE_H

#include <stdbool.h>
#include <stddef.h>

/* "sha256:" and 64 hex digits and a NUL */
#define ELFIMAGE_LEN 72

/*
 * The image of the 64-bit ELF file at path as "sha256:<hex>" in out:
 * every allocated section (code, read-only data, data, relocations, symbol
 * tables, .bss by its size) by name, type, address, size and contents.
 * Notes are left out, because the build ID is a hash of the whole file and
 * so changes with debug information, and nothing that is not loaded
 * (debug sections, the section names) counts.  Two builds with one image
 * run the same machine code on the same data: a patch that changes only
 * comments, whitespace or files the binary is not built from leaves it as
 * it was.  Returns 0, or -1 with a reason in err.
 */
int elfimage_sha256(const char *path, char out[ELFIMAGE_LEN], char *err, size_t errlen);

/* True when s has the form elfimage_sha256 writes. */
bool elfimage_valid(const char *s);

#endif
