/*
 * kernel_workloads.c - see kernel_workloads.h.  The one table of which
 * kernel paths drive which guest workloads (lockbench/src/workload_kernel.c
 * names the kernel lock each takes) and locktorture types.
 */
#include <stdio.h>
#include <string.h>

#include "kernel_workloads.h"

/* What every kernel job runs, whatever it touches. */
static const struct kw_rule {
	const char *prefix;    /* a touched path starting with this chooses the rule */
	const char *workloads; /* guest workloads, comma-separated ("" none) */
	const char *types;     /* locktorture types ("" none) */
	const char *what;      /* the reason, after the path */
} core = {"", "hot,futex-wake,vfs-creat-unlink", "mutex_lock,rwsem_lock,spin_lock",
          "the core every kernel job runs"};

static const struct kw_rule rules[] = {
    {"fs/pipe.c", "pipe-mutex", "", "pipe_read/pipe_write take pipe->mutex"},
    {"fs/eventpoll.c", "epoll-ctl", "", "epoll_ctl takes ep->mtx"},
    {"fs/seq_file.c", "seq-read", "", "seq_read takes the seq_file's m->lock"},
    {"kernel/locking/mutex", "pipe-mutex,epoll-ctl,seq-read", "mutex_lock,ww_mutex_lock",
     "struct mutex"},
    {"include/linux/mutex", "pipe-mutex,epoll-ctl,seq-read", "mutex_lock,ww_mutex_lock",
     "struct mutex"},
    {"kernel/locking/ww_mutex", "", "ww_mutex_lock", "ww_mutex"},
    {"include/linux/ww_mutex", "", "ww_mutex_lock", "ww_mutex"},
    {"kernel/locking/rwsem", "vfs-creat-unlink", "rwsem_lock", "rw_semaphore (i_rwsem)"},
    {"include/linux/rwsem", "vfs-creat-unlink", "rwsem_lock", "rw_semaphore (i_rwsem)"},
    {"kernel/locking/percpu-rwsem", "", "percpu_rwsem_lock", "percpu_rw_semaphore"},
    {"kernel/locking/spinlock", "", "spin_lock,spin_lock_irq,rw_lock,rw_lock_irq", "spinlocks"},
    {"kernel/locking/qspinlock", "", "spin_lock,spin_lock_irq", "queued spinlocks"},
    {"kernel/locking/qrwlock", "", "rw_lock,rw_lock_irq", "queued rwlocks"},
    {"include/linux/spinlock", "", "spin_lock,spin_lock_irq,rw_lock,rw_lock_irq", "spinlocks"},
    {"include/linux/rwlock", "", "rw_lock,rw_lock_irq", "rwlocks"},
    {"include/asm-generic/qspinlock", "", "spin_lock,spin_lock_irq", "queued spinlocks"},
    {"include/asm-generic/qrwlock", "", "rw_lock,rw_lock_irq", "queued rwlocks"},
    {"kernel/locking/rtmutex", "futex-wake", "rtmutex_lock", "rt_mutex (PI futexes)"},
    {"kernel/futex/", "futex-wake,futex-hash", "", "futexes"},
    {"include/linux/futex", "futex-wake,futex-hash", "", "futexes"},
};

void kw_init(struct kw_choice *c)
{
	memset(c, 0, sizeof(*c));
	kw_add_path(c, NULL);
}

/* Append name to the comma list l (size len) unless it is there. */
static int list_add(char *l, size_t len, const char *name)
{
	char hay[300], needle[64];
	snprintf(hay, sizeof(hay), ",%s,", l);
	snprintf(needle, sizeof(needle), ",%s,", name);
	if (strstr(hay, needle))
		return 0;
	if (strlen(l) + strlen(name) + 2 > len)
		return -1;
	if (*l)
		strcat(l, ",");
	strcat(l, name);
	return 1;
}

/* Note that path (NULL: the core) chose name for rule r. */
static void note(struct kw_choice *c, const char *name, const struct kw_rule *r, const char *path)
{
	for (int i = 0; i < c->n; i++) {
		struct kw_why *w = &c->why[i];
		if (strcmp(w->name, name))
			continue;
		if (!path || w->paths++)
			return; /* the first path speaks for the rest (counted) */
		char core_why[sizeof(w->why)];
		snprintf(core_why, sizeof(core_why), "%s", w->why);
		snprintf(w->why, sizeof(w->why), "%.40s; and %.80s (%s)", core_why, path, r->what);
		return;
	}
	if (c->n == KW_MAX)
		return;
	struct kw_why *w = &c->why[c->n++];
	snprintf(w->name, sizeof(w->name), "%s", name);
	w->paths = path ? 1 : 0;
	if (path)
		snprintf(w->why, sizeof(w->why), "%.100s (%s)", path, r->what);
	else
		snprintf(w->why, sizeof(w->why), "%s", r->what);
}

/* Every entry of the comma list names of rule r, into l and the reasons. */
static void apply(struct kw_choice *c, const struct kw_rule *r, const char *names, char *l,
                  size_t len, const char *prefix, const char *path)
{
	char buf[256], *save = NULL;
	snprintf(buf, sizeof(buf), "%s", names);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char name[48];
		if (list_add(l, len, t) < 0)
			continue;
		snprintf(name, sizeof(name), "%s%s", prefix, t);
		note(c, name, r, path);
	}
}

void kw_add_path(struct kw_choice *c, const char *path)
{
	for (size_t i = 0; i < (path ? sizeof(rules) / sizeof(rules[0]) : 1); i++) {
		const struct kw_rule *r = path ? &rules[i] : &core;
		if (path && strncmp(path, r->prefix, strlen(r->prefix)))
			continue;
		apply(c, r, r->workloads, c->workloads, sizeof(c->workloads), "", path);
		apply(c, r, r->types, c->types, sizeof(c->types), "locktorture:", path);
	}
}

void kw_choose(struct kw_choice *c, const char *paths, size_t len)
{
	kw_init(c);
	for (size_t off = 0; paths && off < len; off += strlen(paths + off) + 1)
		if (paths[off])
			kw_add_path(c, paths + off);
}

void kw_line(const struct kw_choice *c, int i, char *out, size_t outlen)
{
	const struct kw_why *w = &c->why[i];
	if (w->paths > 1)
		snprintf(out, outlen, "%s: %s, +%d more touched paths", w->name, w->why,
		         w->paths - 1);
	else
		snprintf(out, outlen, "%s: %s", w->name, w->why);
}
