/* disturb.c - a sample's disturbance from /proc and getrusage (disturb.h). */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "disturb.h"
#include "util.h"

/* Read a small /proc file whole; "" when it cannot be read. */
static void read_proc(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
}

/* steal and the sum of every field of the "cpuN " line of /proc/stat */
static void read_steal(int cpu, uint64_t *steal, uint64_t *total)
{
	char buf[8192], name[32];
	char *line;

	*steal = *total = 0;
	read_proc("/proc/stat", buf, sizeof(buf));
	if (cpu >= 0)
		snprintf(name, sizeof(name), "\ncpu%d ", cpu);
	else
		snprintf(name, sizeof(name), "cpu ");
	line = cpu >= 0 ? strstr(buf, name) : (strncmp(buf, "cpu ", 4) ? NULL : buf);
	if (!line)
		return;
	line += strlen(name);
	/* user nice system idle iowait irq softirq steal guest guest_nice */
	for (int i = 0; i < 8; i++) {
		char *end;
		unsigned long long v = strtoull(line, &end, 10);
		if (end == line)
			return;
		*total += v;
		if (i == 7)
			*steal = v;
		line = end;
	}
}

static long read_migrations(void)
{
	char buf[4096];
	read_proc("/proc/thread-self/sched", buf, sizeof(buf));
	char *p = strstr(buf, "se.nr_migrations");
	p = p ? strchr(p, ':') : NULL;
	return p ? strtol(p + 1, NULL, 10) : 0;
}

void disturb_mark(struct disturb_mark *m, int cpu)
{
	char buf[128];
	struct rusage ru;
	unsigned long long run = 0, delay = 0;

	m->cpu = cpu >= 0 ? cpu : sched_getcpu();
	read_proc("/proc/thread-self/schedstat", buf, sizeof(buf));
	if (sscanf(buf, "%llu %llu", &run, &delay) != 2)
		run = delay = 0;
	m->run_ns = run;
	m->delay_ns = delay;
	m->nivcsw = getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_nivcsw;
	m->migrations = read_migrations();
	read_steal(m->cpu, &m->steal_jiffies, &m->total_jiffies);
	m->wall_ns = lb_now_ns();
}

static double share_pct(double part, double whole)
{
	double x = whole > 0 ? 100.0 * part / whole : 0;
	return x < 0 ? 0 : x > 100 ? 100 : x;
}

void disturb_between(const struct disturb_mark *a, const struct disturb_mark *b,
                     struct lb_disturb *out)
{
	double wall = (double)(b->wall_ns - a->wall_ns);

	memset(out, 0, sizeof(*out));
	if (b->total_jiffies > a->total_jiffies && b->steal_jiffies >= a->steal_jiffies)
		out->steal_pct = share_pct((double)(b->steal_jiffies - a->steal_jiffies),
		                           (double)(b->total_jiffies - a->total_jiffies));
	if (b->delay_ns >= a->delay_ns)
		out->delay_pct = share_pct((double)(b->delay_ns - a->delay_ns), wall);
	if (b->run_ns > a->run_ns)
		out->lost_pct = share_pct(wall - (double)(b->run_ns - a->run_ns), wall);
	out->nivcsw = b->nivcsw > a->nivcsw ? (double)(b->nivcsw - a->nivcsw) : 0;
	out->migrations =
	    b->migrations > a->migrations ? (double)(b->migrations - a->migrations) : 0;
}

bool disturb_exceeds(const struct lb_disturb *d, double limit_pct)
{
	if (!(limit_pct > 0))
		return false;
	double lost = d->lost_pct > 0 ? d->lost_pct : d->steal_pct + d->delay_pct;
	return lost > limit_pct;
}
