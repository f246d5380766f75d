/*
 * fuzz_mbox.c - libFuzzer target: the mail intake's parser (server/mbox.c,
 * GMime 3) on any bytes, as a fetched URL or a Maildir/IMAP message gives it.
 *
 * The input is an mbox.  It goes through mbox_parse_thread twice: without a
 * message-id (the newest series wins) and with the first "<...>" found in
 * the input as the wanted id, so the thread selection by id is reached too.
 * Each series found must hold patches numbered 1..n in order (mbox.h's
 * promise); anything else aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../server/mbox.h"

/* The first "<...>" of at most 200 bytes in data, as a new string, or NULL. */
static char *fuzz_first_id(const uint8_t *data, size_t size)
{
	const uint8_t *lt = memchr(data, '<', size), *gt;
	char *id;

	if (!lt)
		return NULL;
	gt = memchr(lt, '>', size - (size_t)(lt - data));
	if (!gt || gt - lt > 200)
		return NULL;
	id = strndup((const char *)lt, (size_t)(gt - lt) + 1);
	return id;
}

static void fuzz_check(const struct mbox_series *s)
{
	for (size_t i = 0; i < s->npatches; i++)
		if (s->patches[i].index != (int)i + 1 || !s->patches[i].raw)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mbox_series s;
	char err[256];
	char *id;

	mbox_series_init(&s);
	if (mbox_parse_thread((const char *)data, size, NULL, &s, err, sizeof(err)) == 0)
		fuzz_check(&s);
	mbox_series_release(&s);

	id = fuzz_first_id(data, size);
	if (id) {
		mbox_series_init(&s);
		if (mbox_parse_thread((const char *)data, size, id, &s, err, sizeof(err)) == 0)
			fuzz_check(&s);
		mbox_series_release(&s);
		free(id);
	}
	return 0;
}
