/*
 * elfimage.c - the SHA-256 of the sections an ELF executable loads
 * (elfimage.h).  lockbench run records its own (/proc/self/exe) in every
 * result document; compare says when base and patched share it.
 */
#include "elfimage.h"

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sha256.h"
#include "strutil.h"

static void add_u64(struct strutil_buf *sb, uint64_t v)
{
	unsigned char b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	strutil_buf_addlen(sb, b, sizeof(b));
}

/* True when [off, off + len) lies inside a file of size bytes. */
static bool inside(uint64_t off, uint64_t len, size_t size)
{
	return off <= size && len <= size - off;
}

int elfimage_sha256(const char *path, char out[ELFIMAGE_LEN], char *err, size_t errlen)
{
	struct strutil_buf file = STRUTIL_BUF_INIT, img = STRUTIL_BUF_INIT;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	char hex[65];
	int rc = -1;

	if (strutil_read_file(path, &file)) {
		strutil_errf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	eh = (const Elf64_Ehdr *)file.buf;
	if (file.len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64) {
		strutil_errf(err, errlen, "%s: not a 64-bit ELF file", path);
		goto out;
	}
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum == 0 ||
	    !inside(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), file.len) ||
	    eh->e_shstrndx >= eh->e_shnum) {
		strutil_errf(err, errlen, "%s: no section table", path);
		goto out;
	}
	sh = (const Elf64_Shdr *)(file.buf + eh->e_shoff);
	const Elf64_Shdr *names = &sh[eh->e_shstrndx];
	if (!inside(names->sh_offset, names->sh_size, file.len)) {
		strutil_errf(err, errlen, "%s: section names outside the file", path);
		goto out;
	}
	for (size_t i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *s = &sh[i];
		bool bits = s->sh_type != SHT_NOBITS;

		if (!(s->sh_flags & SHF_ALLOC) || s->sh_type == SHT_NOTE)
			continue;
		if (s->sh_name >= names->sh_size ||
		    (bits && !inside(s->sh_offset, s->sh_size, file.len))) {
			strutil_errf(err, errlen, "%s: section %zu outside the file", path, i);
			goto out;
		}
		const char *name = file.buf + names->sh_offset + s->sh_name;
		strutil_buf_addlen(&img, name, strnlen(name, names->sh_size - s->sh_name));
		strutil_buf_addch(&img, '\0', 1);
		add_u64(&img, s->sh_type);
		add_u64(&img, s->sh_addr);
		add_u64(&img, s->sh_size);
		if (bits)
			strutil_buf_addlen(&img, file.buf + s->sh_offset, s->sh_size);
	}
	if (!img.len) {
		strutil_errf(err, errlen, "%s: no loaded section", path);
		goto out;
	}
	sha256_hex(img.buf, img.len, hex);
	snprintf(out, ELFIMAGE_LEN, "sha256:%s", hex);
	rc = 0;
out:
	strutil_buf_release(&img);
	strutil_buf_release(&file);
	return rc;
}

bool elfimage_valid(const char *s)
{
	if (!s || strncmp(s, "sha256:", 7) || strlen(s) != ELFIMAGE_LEN - 1)
		return false;
	for (const char *p = s + 7; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}
