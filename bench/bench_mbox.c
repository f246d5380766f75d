/*
 * bench_mbox.c - `make bench-server` / `make bench-mail`: how fast the
 * server reads mail, on this machine, one core.
 *
 *   bench-mbox [N]   parse an mbox of N messages (default 20,000) made here:
 *                    threads of a cover letter, five patches (~3 KB each,
 *                    a diff of 40 lines) and four replies, the series taken
 *                    chosen among them; then one series of N patches, each
 *                    replying to the one before (format-patch
 *                    --chain-reply-to), the file in reverse order: the
 *                    deepest threading, quadratic and worse before the hash.
 *                    Prints messages per second for each and the machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "../server/mbox.h"

/* CPU seconds of this process: the rate on one core, whatever else runs */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Patch k of n in thread t; it replies to <parent> (NULL: the cover, t.p0). */
static void patch_mail(GString *b, int t, int k, int n, const char *parent)
{
	int i;

	g_string_append_printf(b,
	                       "From mboxrd@z Thu Jan  1 00:00:00 1970\n"
	                       "From: Dev %d <dev%d@example.org>\n"
	                       "To: locking@vger.example.org\n"
	                       "Cc: Peter Zijlstra <peterz@example.org>, Ingo Molnar "
	                       "<mingo@example.org>\n"
	                       "Date: Mon, 30 Nov 2026 10:00:%02d +0000\n"
	                       "Subject: [PATCH v2 %d/%d] locking/t%d: part %d\n"
	                       "Message-ID: <t%d.p%d@example.org>\n",
	                       t, t, k % 60, k, n, t, k, t, k);
	if (k && parent)
		g_string_append_printf(b, "In-Reply-To: %s\nReferences: %s\n", parent, parent);
	else if (k)
		g_string_append_printf(b,
		                       "In-Reply-To: <t%d.p0@example.org>\n"
		                       "References: <t%d.p0@example.org>\n",
		                       t, t);
	g_string_append(b, "MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\n"
	                   "Content-Transfer-Encoding: 8bit\n\n");
	if (!k) {
		g_string_append(b,
		                "This series hands the lock to the top waiter.\n\n-- \n2.39.5\n\n");
		return;
	}
	g_string_append_printf(
	    b,
	    "Hand the lock to the top waiter when it has waited for too long,\n"
	    "so that a spinner cannot starve it.\n\n"
	    "Signed-off-by: Dev %d <dev%d@example.org>\n---\n"
	    " kernel/locking/t%d.c | 40 ++++++++++++++++++++--------------------\n"
	    " 1 file changed, 20 insertions(+), 20 deletions(-)\n\n"
	    "diff --git a/kernel/locking/t%d.c b/kernel/locking/t%d.c\n"
	    "index 1111111..2222222 100644\n"
	    "--- a/kernel/locking/t%d.c\n+++ b/kernel/locking/t%d.c\n"
	    "@@ -1,40 +1,40 @@\n",
	    t, t, t, t, t, t, t);
	for (i = 0; i < 20; i++)
		g_string_append_printf(
		    b,
		    "-\tatomic_long_set(&lock->owner, (unsigned long)owner%d);\n"
		    "+\tatomic_long_set_release(&lock->owner, (unsigned long)o%d);\n",
		    i, i);
	g_string_append(b, "-- \n2.39.5\n\n");
}

static void reply_mail(GString *b, int t, int r, const char *parent)
{
	g_string_append_printf(b,
	                       "From mboxrd@z Thu Jan  1 00:00:00 1970\n"
	                       "From: Reviewer <r%d@example.org>\n"
	                       "Subject: Re: [PATCH v2 1/5] locking/t%d: part 1\n"
	                       "Message-ID: <t%d.r%d@example.org>\n"
	                       "In-Reply-To: %s\nReferences: <t%d.p0@example.org> %s\n\n"
	                       "> Hand the lock to the top waiter\n\nLooks right to me.\n\n"
	                       "Reviewed-by: Reviewer <r%d@example.org>\n\n",
	                       r, t, t, r, parent, t, parent, r);
}

/* 0, or 1 when the parser refused the mbox (a refusal is not a rate) */
static int run(const char *what, const GString *b, size_t n)
{
	struct mbox_series s;
	char err[256] = "";
	double t0, t1;
	int rc;

	mbox_series_init(&s);
	t0 = now();
	rc = mbox_parse(b->str, b->len, &s, err, sizeof(err));
	t1 = now();
	printf("mbox %-28s: %zu messages (%.1f MB) in %.2f CPU s = %.0f messages/s%s%s\n", what, n,
	       b->len / 1e6, t1 - t0, n / (t1 - t0), rc ? ", refused: " : "", rc ? err : "");
	mbox_series_release(&s);
	return rc != 0;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000, i;
	int failed = 0;
	GString *b = g_string_new(NULL);
	char model[256] = "unknown";
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (f) {
		char line[512];

		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
				snprintf(model, sizeof(model), "%s", strchr(line, ':') + 2);
				model[strcspn(model, "\n")] = '\0';
				break;
			}
		fclose(f);
	}
	printf("machine: %s, %ld cpus online, one core used\n", model,
	       sysconf(_SC_NPROCESSORS_ONLN));
	/* the server's limits (--max-mbox-messages, --max-series-patches) at its sizes */
	mbox_set_limits(&(struct mbox_limits){n, n, MBOX_MAX_PATCH_BYTES});

	for (i = 0; i < n; i++) {
		int t = (int)(i / 10), k = (int)(i % 10);

		if (k <= 5) {
			patch_mail(b, t, k, 5, NULL);
		} else {
			char parent[64];

			snprintf(parent, sizeof(parent), "<t%d.p1@example.org>", t);
			reply_mail(b, t, k, parent);
		}
	}
	failed |= run("threads of 10 (cover+5+4)", b, n);

	g_string_truncate(b, 0);
	for (i = n; i >= 1; i--) {
		char parent[64];

		snprintf(parent, sizeof(parent), "<t0.p%zu@example.org>", i - 1);
		patch_mail(b, 0, (int)i, (int)n, i > 1 ? parent : NULL);
	}
	failed |= run("chained series, reversed", b, n);
	g_string_free(b, TRUE);
	return failed;
}
