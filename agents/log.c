/* log.c - see log.h. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "log.h"

void agent_log(const char *level, long long job, const char *fmt, ...)
{
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;
	va_list ap;
	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(stderr, "%s level=%s", ts, level);
	if (job > 0)
		fprintf(stderr, " job=%lld", job);
	fprintf(stderr, " msg=\"");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\"\n");
}
