/*
 * strutil.h - internal helpers of the result library: allocation that
 * aborts on out-of-memory (a benchmark or server that cannot allocate a few
 * bytes has nothing sensible left to do) and a growing string buffer.
 *
 * The one string buffer and file reader of the tree: lockbench, the server
 * (mbox.c, db.c) and the agent use these rather than copies of their own.
 */
#ifndef LOCKLAB_STRUTIL_H
#define LOCKLAB_STRUTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

void *strutil_xmalloc(size_t n);
void *strutil_xcalloc(size_t n, size_t size);
/* Grows *p to hold n elements of size bytes, checking the product. */
void *strutil_xreallocarray(void *p, size_t n, size_t size);
/* strdup that aborts on OOM; NULL in gives NULL out. */
char *strutil_xstrdup(const char *s);

/* A NUL-terminated string that grows; STRUTIL_BUF_INIT ... strutil_buf_release. */
struct strutil_buf {
	char *buf;
	size_t len;
	size_t cap;
};

/* clang-format off */
#define STRUTIL_BUF_INIT {NULL, 0, 0}
/* clang-format on */

void strutil_buf_addf(struct strutil_buf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void strutil_buf_vaddf(struct strutil_buf *sb, const char *fmt, va_list ap);
void strutil_buf_add(struct strutil_buf *sb, const char *s);
/* Appends n bytes that may hold NULs (a cpio archive, a console); stays NUL-terminated. */
void strutil_buf_addlen(struct strutil_buf *sb, const void *s, size_t n);
void strutil_buf_addch(struct strutil_buf *sb, char c, size_t count);
/* The string (never NULL; "" when empty), owned by sb. */
const char *strutil_buf_str(const struct strutil_buf *sb);
/* Hands the string to the caller (never NULL) and re-initialises sb. */
char *strutil_buf_detach(struct strutil_buf *sb);
void strutil_buf_release(struct strutil_buf *sb);
/* Cuts the string to its first len bytes (len <= sb->len); the memory is kept. */
void strutil_buf_truncate(struct strutil_buf *sb, size_t len);

/*
 * A buffer that will not grow past max bytes: the target of a libcurl
 * transfer.  Zero it, set max; release .buf with strutil_buf_release.
 */
struct strutil_capped {
	struct strutil_buf buf;
	size_t max;
	bool too_big; /* set when a write would have passed max */
};

/*
 * Appends size * n bytes of p to arg (a struct strutil_capped) and returns
 * their count, or 0 with too_big set when they would pass max (libcurl then
 * ends the transfer with CURLE_WRITE_ERROR).  The signature is libcurl's
 * CURLOPT_WRITEFUNCTION; the server's fetches and IMAP intake use it.
 */
size_t strutil_capped_write(char *p, size_t size, size_t n, void *arg);

/*
 * Appends the whole file at path to sb (binary-safe; sb->buf is never NULL
 * afterwards, even for an empty file).  Returns 0, or -1 with errno set when
 * the file cannot be opened or read (what was read stays in sb).
 */
int strutil_read_file(const char *path, struct strutil_buf *sb);

/* The whole file at path as a new string (caller frees), or NULL with errno set. */
char *strutil_file_text(const char *path);

/* snprintf into err when err is not NULL. */
void strutil_errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
