/*
 * strutil.c - allocation and string buffer helpers for lib.
 */
#include "strutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void oom(void)
{
	fputs("locklab: out of memory\n", stderr);
	abort();
}

void *strutil_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *strutil_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *strutil_xreallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		oom();
	size_t bytes = n * size;
	p = realloc(p, bytes ? bytes : 1);
	if (!p)
		oom();
	return p;
}

char *strutil_xstrdup(const char *s)
{
	char *d;
	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		oom();
	return d;
}

static void buf_grow(struct strutil_buf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;
	if (need <= sb->cap)
		return;
	size_t cap = sb->cap ? sb->cap : 64;
	while (cap < need)
		cap *= 2;
	sb->buf = strutil_xreallocarray(sb->buf, cap, 1);
	sb->cap = cap;
}

void strutil_buf_vaddf(struct strutil_buf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	buf_grow(sb, (size_t)n);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void strutil_buf_addf(struct strutil_buf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strutil_buf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void strutil_buf_add(struct strutil_buf *sb, const char *s)
{
	size_t n = strlen(s);
	buf_grow(sb, n);
	memcpy(sb->buf + sb->len, s, n + 1);
	sb->len += n;
}

void strutil_buf_addlen(struct strutil_buf *sb, const void *s, size_t n)
{
	buf_grow(sb, n);
	if (n)
		memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

size_t strutil_capped_write(char *p, size_t size, size_t n, void *arg)
{
	struct strutil_capped *c = arg;
	size_t add = size * n;

	if ((n && add / n != size) || add > c->max || c->buf.len > c->max - add) {
		c->too_big = true;
		return 0;
	}
	strutil_buf_addlen(&c->buf, p, add);
	return add;
}

int strutil_read_file(const char *path, struct strutil_buf *sb)
{
	char tmp[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	buf_grow(sb, 0);
	sb->buf[sb->len] = '\0';
	if (fd < 0)
		return -1;
	while ((n = read(fd, tmp, sizeof(tmp))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		strutil_buf_addlen(sb, tmp, (size_t)n);
	}
	close(fd);
	return 0;
}

char *strutil_file_text(const char *path)
{
	struct strutil_buf sb = STRUTIL_BUF_INIT;

	if (strutil_read_file(path, &sb) != 0) {
		int e = errno;
		strutil_buf_release(&sb);
		errno = e;
		return NULL;
	}
	return strutil_buf_detach(&sb);
}

void strutil_buf_addch(struct strutil_buf *sb, char c, size_t count)
{
	buf_grow(sb, count);
	memset(sb->buf + sb->len, c, count);
	sb->len += count;
	sb->buf[sb->len] = '\0';
}

const char *strutil_buf_str(const struct strutil_buf *sb)
{
	return sb->buf ? sb->buf : "";
}

char *strutil_buf_detach(struct strutil_buf *sb)
{
	char *s = sb->buf ? sb->buf : strutil_xstrdup("");
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	return s;
}

void strutil_buf_release(struct strutil_buf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

void strutil_buf_truncate(struct strutil_buf *sb, size_t len)
{
	if (sb->buf && len < sb->len) {
		sb->len = len;
		sb->buf[len] = '\0';
	}
}

void strutil_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
