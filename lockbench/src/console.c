/*
 * console.c - reading a kernel's serial console (console.h): lockups,
 * splats, locktorture's figures, the guest's document.  No I/O here.
 */
#include "console.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One line (modified in place) without '\r' and the printk time stamp. */
static char *clean_line(char *line)
{
	for (char *r; (r = strchr(line, '\r'));)
		memmove(r, r + 1, strlen(r));
	if (line[0] == '[') {
		char *close = strchr(line, ']');
		if (close && close - line < 20)
			line = close[1] == ' ' ? close + 2 : close + 1;
	}
	return line;
}

char **console_lines(char *text, size_t *n)
{
	char **v = NULL;
	size_t cap = 0;
	*n = 0;
	if (!text)
		return NULL;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		line = clean_line(line);
		if (*n + 1 >= cap) {
			cap = cap ? cap * 2 : 256;
			v = strutil_xreallocarray(v, cap, sizeof(*v));
		}
		v[(*n)++] = line;
	}
	return v;
}

/* ---- lockups -------------------------------------------------------- */

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

const char *console_lockup_kind(const char *line)
{
	if (strstr(line, "INFO: task ") && strstr(line, "blocked for more than"))
		return "hung-task";
	if (strstr(line, "BUG: soft lockup"))
		return "soft-lockup";
	if (strstr(line, "BUG: workqueue lockup"))
		return "workqueue-lockup";
	if (strstr(line, "rcu: INFO: ") && strstr(line, "stall"))
		return "rcu-stall";
	if (strstr(line, "Kernel panic"))
		return "panic";
	/* the task that hit these is killed: whatever it held stays held */
	if (strstr(line, "Oops: ") || strstr(line, "general protection fault") ||
	    strstr(line, "BUG: unable to handle") ||
	    strstr(line, "BUG: kernel NULL pointer dereference") || strstr(line, "kernel BUG at "))
		return "oops";
	return NULL;
}

bool console_torture_failed(const char *line)
{
	const char *f;
	if (!strstr(line, "Writes:") && !strstr(line, "Reads :"))
		return false;
	if (strstr(line, "!!!"))
		return true;
	f = strstr(line, "Fail: ");
	return f && atoi(f + 6) > 0;
}

/* ---- splats --------------------------------------------------------- */

/* The reports whose first lines are keys of their own, as LKP counts them. */
static const char *const splat_prefixes[] = {
    "WARNING: ",
    "BUG: ",
    "UBSAN: ",
    "kernel BUG at ",
    "Oops: ",
    "Oops",
    "INFO: task ",
    "INFO: possible ",
    "INFO: inconsistent ",
    "INFO: rcu_",
    "rcu: INFO: ",
    "general protection fault",
    "Kernel panic - not syncing",
    NULL,
};

/* Cut s at the first of the separators that comes after from. */
static void cut_at(char *s, size_t from, const char *const *seps)
{
	for (int i = 0; seps[i]; i++) {
		char *p = strstr(s + from, seps[i]);
		if (p)
			*p = 0;
	}
}

/* Drop "+0x1f/0x80" symbol offsets and a " [module]" suffix. */
static void drop_offsets(char *s)
{
	for (char *p = s; (p = strstr(p, "+0x"));) {
		char *q = p + 3;
		while (isxdigit((unsigned char)*q))
			q++;
		if (!strncmp(q, "/0x", 3)) {
			q += 3;
			while (isxdigit((unsigned char)*q))
				q++;
			memmove(p, q, strlen(q) + 1);
		} else {
			p++;
		}
	}
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/*
 * LKP's common_error_id: hex and decimal numbers at a word start become '#',
 * blanks are dropped next to punctuation and become '_' between words,
 * trailing punctuation goes.
 */
static void normalise(const char *in, char *out, size_t len)
{
	char tmp[1024];
	size_t k = 0;

	for (size_t i = 0; in[i] && k + 1 < sizeof(tmp);) {
		bool at_word = i == 0 || !word_char(in[i - 1]);
		if (at_word && in[i] == '0' && in[i + 1] == 'x' &&
		    isxdigit((unsigned char)in[i + 2])) {
			i += 2;
			while (isxdigit((unsigned char)in[i]))
				i++;
			tmp[k++] = '#';
		} else if (at_word && isdigit((unsigned char)in[i])) {
			while (isdigit((unsigned char)in[i]) || in[i] == '.')
				i++;
			tmp[k++] = '#';
		} else {
			tmp[k++] = in[i] == '\t' ? ' ' : in[i];
			i++;
		}
	}
	tmp[k] = 0;
	k = 0;
	for (size_t i = 0; tmp[i] && k + 1 < len; i++) {
		if (tmp[i] != ' ') {
			out[k++] = tmp[i];
			continue;
		}
		size_t j = i;
		while (tmp[j + 1] == ' ')
			j++;
		char before = k ? out[k - 1] : 0, after = tmp[j + 1];
		i = j;
		if (!before || !after || !isalnum((unsigned char)before) ||
		    !isalpha((unsigned char)after))
			continue; /* blanks next to punctuation or a number go */
		out[k++] = '_';
	}
	out[k] = 0;
	while (k && strchr("-_.,;:#![(", out[k - 1]))
		out[--k] = 0;
}

bool console_splat_key(const char *line, char *key, size_t keylen)
{
	char s[1024];
	int which = -1;

	while (*line == ' ' || *line == '\t')
		line++;
	for (int i = 0; splat_prefixes[i]; i++)
		if (starts(line, splat_prefixes[i])) {
			which = i;
			break;
		}
	if (which < 0 || !keylen)
		return false;
	snprintf(s, sizeof(s), "%s", line);
	drop_offsets(s);
	if (starts(s, "Oops")) {
		if (s[4] && s[4] != ':')
			return false; /* "Oopsie" is no report */
		snprintf(key, keylen, "Oops");
		return true;
	}
	if (starts(s, "general protection fault")) {
		snprintf(key, keylen, "general_protection_fault");
		return true;
	}
	if (starts(s, "rcu: "))
		memmove(s, s + 5, strlen(s + 5) + 1);
	if (starts(s, "WARNING: CPU: ")) {
		/* "WARNING: CPU: 0 PID: 1 at kernel/x.c:12 func+0x1/0x2 [mod]" */
		char *at = strstr(s, " at ");
		if (!at)
			return false;
		memmove(s + 8, at, strlen(at) + 1); /* "WARNING: at kernel/x.c:12 func" */
		static const char *const seps[] = {" [", NULL};
		cut_at(s, 8, seps);
	} else if (starts(s, "INFO: task ")) {
		/* "INFO: task lockbench:123 blocked for more than 3 seconds." */
		char *rest = strstr(s, " blocked for more than");
		if (!rest)
			return false;
		memmove(s + 10, rest, strlen(rest) + 1);
	} else if (starts(s, "BUG: ")) {
		size_t from = 5;
		if (starts(s + 5, "KASAN: ") || starts(s + 5, "KFENCE: ") ||
		    starts(s + 5, "KCSAN: ") || starts(s + 5, "KMSAN: "))
			from = strchr(s + 5, ':') - s + 2;
		/* the task, the address or the CPU state after the words */
		static const char *const seps[] = {": ", ", ", " [", " in process ", NULL};
		cut_at(s, from, seps);
	} else if (starts(s, "kernel BUG at ")) {
		static const char *const seps[] = {"!", NULL};
		cut_at(s, 14, seps);
	} else if (starts(s, "Kernel panic")) {
		/* keep the reason: "Kernel panic - not syncing: hung_task: blocked tasks" */
	} else {
		static const char *const seps[] = {" [", NULL};
		cut_at(s, 6, seps);
	}
	normalise(s, key, keylen);
	return *key != 0;
}

/* The line closes a report: the end of its call trace or its end marker. */
static bool splat_closes(const char *line, bool in_trace)
{
	return (in_trace && strstr(line, "</TASK>")) || strstr(line, "---[ end trace") ||
	       strstr(line, "---[ end Kernel panic");
}

size_t console_find_splats(char **lines, size_t n, struct console_splats *out)
{
	char key[256], other[256];
	size_t added = 0;

	for (size_t i = 0; i < n; i++) {
		if (!console_splat_key(lines[i], key, sizeof(key)))
			continue;
		bool seen = false;
		for (size_t k = 0; k < out->n && !seen; k++)
			seen = !strcmp(out->v[k].key, key);
		struct strutil_buf body = STRUTIL_BUF_INIT;
		bool in_trace = false;
		size_t j = i + 1;
		for (size_t kept = 0; j < n && kept < CONSOLE_SPLAT_LINES; j++) {
			const char *l = lines[j];
			if (!strncmp(l, "LOCKLAB-", 8) || strstr(l, "reboot: Power down"))
				continue;
			if (console_splat_key(l, other, sizeof(other)))
				break; /* the next report */
			strutil_buf_addf(&body, "%s\n", l);
			kept++;
			if (strstr(l, "Call Trace:"))
				in_trace = true;
			if (splat_closes(l, in_trace)) {
				j++;
				break;
			}
		}
		if (!seen) {
			out->v = strutil_xreallocarray(out->v, out->n + 1, sizeof(*out->v));
			struct console_splat *s = &out->v[out->n++];
			s->key = strutil_xstrdup(key);
			s->message = strutil_xstrdup(lines[i]);
			s->lines = strutil_buf_detach(&body);
			added++;
		}
		strutil_buf_release(&body);
		i = j - 1;
	}
	return added;
}

void console_splats_release(struct console_splats *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].key);
		free(s->v[i].message);
		free(s->v[i].lines);
	}
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* ---- lockups, figures, the guest's document ------------------------- */

/* What a kernel detector's or locktorture's failure line says, or NULL. */
static const char *detector_kind(const char *line)
{
	const char *k = console_lockup_kind(line);
	return k ? k : console_torture_failed(line) ? "locktorture-fail" : NULL;
}

bool console_detect_lockup(char **lines, size_t n, const struct console_end *end, const char **kind,
                           char *msg, size_t msglen, struct strutil_buf *stacks)
{
	size_t at = 0;

	*kind = NULL;
	for (size_t i = 0; i < n && !*kind; i++) {
		*kind = detector_kind(lines[i]);
		at = i;
	}
	if (!*kind && !end->ended) {
		*kind = end->timed_out ? "deadline" : "crash";
		if (!end->timed_out)
			snprintf(msg, msglen,
			         "the guest stopped after %.0f s without an end of test",
			         end->secs);
		else if (!end->progress_rule)
			snprintf(msg, msglen, "no end of test after %.0f s (deadline)", end->secs);
		else if (end->capped)
			snprintf(msg, msglen,
			         "no end of test after %.0f s (deadline: the boot's cap; last "
			         "progress %.0f s before)",
			         end->secs, end->since_progress_s);
		else
			snprintf(msg, msglen,
			         "no end of test after %.0f s (deadline: no progress for %.0f s)",
			         end->secs, end->since_progress_s);
		/* the last lines say where it stopped */
		for (size_t i = n > 30 ? n - 30 : 0; i < n; i++)
			strutil_buf_addf(stacks, "%s\n", lines[i]);
		return true;
	}
	if (!*kind)
		return false;
	snprintf(msg, msglen, "%.*s", (int)msglen - 1, lines[at]);
	for (size_t i = at + 1, k = 0; i < n && k < CONSOLE_STACK_LINES; i++) {
		if (!strncmp(lines[i], "LOCKLAB-", 8) || strstr(lines[i], "reboot: Power down"))
			continue;
		strutil_buf_addf(stacks, "%s\n", lines[i]);
		k++;
	}
	return true;
}

struct torture_line {
	long long total;
	long max, min;
	int fail;
};

static bool parse_torture_line(const char *line, const char *tag, struct torture_line *t)
{
	char fmt[64];
	const char *p = strstr(line, tag);
	if (!p)
		return false;
	snprintf(fmt, sizeof(fmt), "%s Total: %%lld Max/Min: %%ld/%%ld", tag);
	if (sscanf(p, fmt, &t->total, &t->max, &t->min) != 3)
		return false;
	const char *f = strstr(p, "Fail: ");
	t->fail = f ? atoi(f + 6) : 0;
	return true;
}

/*
 * locktorture prints cumulative "Writes:" lines every stat_interval seconds
 * and a last one at the end of test.  The figure is the mean per-interval
 * rate, and it is one sample: the seconds of one boot are not independent
 * repetitions (a slow host slows them all), so samples for a verdict come
 * from rounds.  Fairness is min/max per-thread acquisitions over the test.
 */
void console_add_torture_metrics(struct lb_run *run, char **lines, size_t n, const char *tag,
                                 const char *name, const char *unit, int interval, int secs)
{
	struct torture_line t, last = {0};
	double *rates = NULL;
	size_t nrates = 0, seen = 0;
	long long prev = 0;

	for (size_t i = 0; i < n; i++) {
		if (!parse_torture_line(lines[i], tag, &t))
			continue;
		/* the end-of-test line follows "End of test" closely; it is not periodic */
		/* the last line comes just before "End of test" (rwsem: Writes, Reads, End) */
		bool is_final = (i + 1 < n && strstr(lines[i + 1], "End of test")) ||
		                (i + 2 < n && strstr(lines[i + 1], "Reads :") &&
		                 strstr(lines[i + 2], "End of test"));
		if (!is_final) {
			rates = strutil_xreallocarray(rates, nrates + 1, sizeof(*rates));
			rates[nrates++] = (double)(t.total - prev) / interval;
			prev = t.total;
		}
		last = t;
		seen++;
	}
	if (!seen)
		goto out;
	double value = 0;
	if (nrates) {
		for (size_t i = 0; i < nrates; i++)
			value += rates[i];
		value /= (double)nrates;
	} else {
		value = (double)last.total / secs;
	}
	struct lb_metric *m = run_add_metric(run, name, unit, true, value);
	metric_add_sample(m, value);
	if (!strcmp(tag, "Writes:")) {
		double fair = last.max > 0 ? (double)last.min / (double)last.max : 0;
		m = run_add_metric(run, "fairness", "min/max", true, fair);
		metric_add_sample(m, fair);
	}
out:
	free(rates);
}

void console_note_guest(struct lb_result *res, char **lines, size_t n, const char *accel)
{
	for (size_t i = 0; i < n; i++) {
		const char *k = strstr(lines[i], "LOCKLAB-GUEST kernel=");
		if (!k)
			continue;
		char rel[128];
		int cpus = 0;
		if (sscanf(k, "LOCKLAB-GUEST kernel=%127s cpus=%d", rel, &cpus) == 2) {
			free(res->machine.kernel);
			res->machine.kernel = strutil_xstrdup(rel);
			if (cpus > 0)
				res->machine.cpus = cpus;
			if (!strstr(res->machine.model, "QEMU")) {
				char model[512];
				snprintf(model, sizeof(model), "QEMU %s guest on %.400s", accel,
				         res->machine.model);
				free(res->machine.model);
				res->machine.model = strutil_xstrdup(model);
			}
		}
		return;
	}
}

char *console_guest_json(char **lines, size_t n, int *lb_rc)
{
	struct strutil_buf j = STRUTIL_BUF_INIT;
	bool in = false;
	*lb_rc = -1;
	for (size_t i = 0; i < n; i++) {
		if (strstr(lines[i], "LOCKLAB-JSON-BEGIN")) {
			in = true;
			continue;
		}
		const char *e = strstr(lines[i], "LOCKLAB-JSON-END");
		if (e) {
			const char *r = strstr(e, "rc=");
			*lb_rc = r ? atoi(r + 3) : -1;
			return strutil_buf_detach(&j);
		}
		if (in)
			strutil_buf_addf(&j, "%s\n", lines[i]);
	}
	strutil_buf_release(&j);
	return NULL;
}

size_t console_guest_memory(char **lines, size_t n, long *min_avail_kb, long *total_kb)
{
	size_t seen = 0;
	for (size_t i = 0; i < n; i++) {
		const char *m = strstr(lines[i], "LOCKLAB-MEM ");
		long avail, total;
		if (!m ||
		    sscanf(m, "LOCKLAB-MEM available_kb=%ld total_kb=%ld", &avail, &total) != 2 ||
		    avail < 0 || total <= 0)
			continue;
		if (!seen || avail < *min_avail_kb)
			*min_avail_kb = avail;
		*total_kb = total;
		seen++;
	}
	return seen;
}

/* ---- the guest's table, for a boot that locked up -------------------- */

static bool all_in(const char *s, const char *set)
{
	return *s && strspn(s, set) == strlen(s);
}

#define LOWER_DIGITS "abcdefghijklmnopqrstuvwxyz0123456789"

/*
 * "duration_ms=200,users=2000" into run's params (run NULL: only checked);
 * false when it is no params key.
 */
static bool parse_params_key(const char *key, struct lb_run *run)
{
	char buf[512];
	if (!strchr(key, '=') || !all_in(key, LOWER_DIGITS "_=,.-+/:") ||
	    strlen(key) >= sizeof(buf))
		return false;
	snprintf(buf, sizeof(buf), "%s", key);
	char *save = NULL;
	for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq || eq == kv || !eq[1])
			return false;
		*eq = 0;
		const char *v = eq + 1;
		if (!run)
			continue;
		if (all_in(v[0] == '-' ? v + 1 : v, "0123456789"))
			run_set_param_num(run, kv, atoll(v));
		else
			run_set_param_str(run, kv, v);
	}
	return true;
}

/* "27,637" or "12.5" or "0.250": the number lockbench's table printed. */
static bool parse_table_number(const char *s, double *v)
{
	char digits[64];
	size_t k = 0;
	if (!all_in(s, "0123456789,.-"))
		return false;
	for (; *s && k + 1 < sizeof(digits); s++)
		if (*s != ',')
			digits[k++] = *s;
	digits[k] = 0;
	char *end;
	*v = strtod(digits, &end);
	return end != digits && !*end;
}

static bool lower_is_better(const char *unit)
{
	return !strcmp(unit, "ms") || !strcmp(unit, "us") || !strcmp(unit, "ns") ||
	       !strcmp(unit, "s");
}

/*
 * One line of the guest's table into res (lockbench's print_run: workload,
 * lock, params key, then the first metric or "LOCKUP (kind): message");
 * res NULL: only whether it is one.
 */
static bool parse_table_line(const char *line, struct lb_result *res, char **last_key)
{
	char buf[1024], *tok[8], *save = NULL;
	size_t nt = 0;
	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok_r(buf, " \t", &save); t && nt < 8; t = strtok_r(NULL, " \t", &save))
		tok[nt++] = t;
	if (nt < 5 || !all_in(tok[0], LOWER_DIGITS "-") || !all_in(tok[1], LOWER_DIGITS "_-"))
		return false;
	bool lockup = !strcmp(tok[3], "LOCKUP");
	double v = 0;
	if (lockup) {
		/* "LOCKUP (stall): message": kind and message from the line itself */
		const char *k = strstr(line, " LOCKUP (");
		if (!k || !strstr(k, "): "))
			return false;
	} else if (nt < 8 || !all_in(tok[3], "abcdefghijklmnopqrstuvwxyz_") ||
	           !parse_table_number(tok[4], &v) || strncmp(tok[6], "\xc2\xb1", 2) ||
	           strncmp(tok[7], "n=", 2) || !all_in(tok[7] + 2, "0123456789")) {
		return false;
	}
	if (!parse_params_key(tok[2], NULL))
		return false;
	if (!res)
		return true;
	struct lb_run *run = result_add_run(res, tok[0], tok[1]);
	parse_params_key(tok[2], run);
	if (lockup) {
		const char *k = strstr(line, " LOCKUP (") + 9;
		const char *close = strstr(k, "): ");
		char kind[64];
		snprintf(kind, sizeof(kind), "%.*s", (int)(close - k), k);
		run_set_lockup(run, kind, close + 3, NULL);
	} else {
		run_add_metric(run, tok[3], tok[5], !lower_is_better(tok[5]), v);
	}
	if (last_key) {
		free(*last_key);
		size_t len = strlen(tok[0]) + strlen(tok[1]) + strlen(tok[2]) + 3;
		*last_key = strutil_xmalloc(len);
		snprintf(*last_key, len, "%s %s %s", tok[0], tok[1], tok[2]);
	}
	return true;
}

size_t console_guest_table_runs(char **lines, size_t n, struct lb_result *res, char **last_key)
{
	size_t added = 0;
	bool in = false;
	if (last_key)
		*last_key = NULL;
	for (size_t i = 0; i < n; i++) {
		if (strstr(lines[i], "LOCKLAB-JSON-BEGIN ttyS1")) {
			in = true;
			continue;
		}
		if (strstr(lines[i], "LOCKLAB-JSON-END"))
			break;
		if (in && parse_table_line(lines[i], res, last_key))
			added++;
	}
	return added;
}

bool console_torture_progress(const char *line)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", line);
	const char *l = clean_line(buf);
	/* the guest init's own lines (a timer's LOCKLAB-MEM) say nothing of the kernel */
	l += strspn(l, " \t");
	return *l && strncmp(l, "LOCKLAB-", 8) != 0;
}

bool console_silent_deadline(char **lines, size_t n, bool ended, bool timed_out)
{
	if (ended || !timed_out)
		return false;
	for (size_t i = 0; i < n; i++)
		if (detector_kind(lines[i]))
			return false;
	return true;
}

bool console_guest_progress(const char *line)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", line);
	const char *l = clean_line(buf);
	/* the guest lockbench's own words: its suite starts, a point failed */
	if (!strncmp(l, "lockbench: ", 11))
		return true;
	return parse_table_line(l, NULL, NULL);
}
