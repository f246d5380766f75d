/*
 * test_kernel_workloads.c - the kernel paths a series touches choose the
 * guest workloads and locktorture types a kernel job runs, beside the core,
 * each with the reason it runs (kernel_workloads.c's table).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../kernel_workloads.h"

#define CORE_W "hot,futex-wake,vfs-creat-unlink"
#define CORE_T "mutex_lock,rwsem_lock,spin_lock"

/* c's reason line for name, or "" */
static const char *line_of(const struct kw_choice *c, const char *name, char *buf, size_t len)
{
	buf[0] = 0;
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->why[i].name, name))
			kw_line(c, i, buf, len);
	return buf;
}

static void test_core_only(void **state)
{
	(void)state;
	struct kw_choice c;
	char l[256];
	const char p[] = "Documentation/locking/mutex-design.rst\0drivers/net/foo.c";
	kw_choose(&c, p, sizeof(p));
	assert_string_equal(c.workloads, CORE_W);
	assert_string_equal(c.types, CORE_T);
	assert_int_equal(c.n, 6);
	assert_string_equal(line_of(&c, "hot", l, sizeof(l)),
	                    "hot: the core every kernel job runs");
	assert_string_equal(line_of(&c, "locktorture:spin_lock", l, sizeof(l)),
	                    "locktorture:spin_lock: the core every kernel job runs");
	kw_choose(&c, NULL, 0);
	assert_string_equal(c.workloads, CORE_W);
}

static void test_pipe(void **state)
{
	(void)state;
	struct kw_choice c;
	char l[256];
	const char p[] = "fs/pipe.c";
	kw_choose(&c, p, sizeof(p));
	assert_string_equal(c.workloads, CORE_W ",pipe-mutex");
	assert_string_equal(c.types, CORE_T);
	assert_string_equal(line_of(&c, "pipe-mutex", l, sizeof(l)),
	                    "pipe-mutex: fs/pipe.c (pipe_read/pipe_write take pipe->mutex)");
}

static void test_mutex(void **state)
{
	(void)state;
	struct kw_choice c;
	char l[256];
	const char p[] = "kernel/locking/mutex.c\0kernel/locking/mutex.h\0include/linux/mutex.h";
	kw_choose(&c, p, sizeof(p));
	assert_string_equal(c.workloads, CORE_W ",pipe-mutex,epoll-ctl,seq-read");
	assert_string_equal(c.types, CORE_T ",ww_mutex_lock");
	assert_string_equal(
	    line_of(&c, "epoll-ctl", l, sizeof(l)),
	    "epoll-ctl: kernel/locking/mutex.c (struct mutex), +2 more touched paths");
	/* a core type the patch also chose says both */
	assert_string_equal(line_of(&c, "locktorture:mutex_lock", l, sizeof(l)),
	                    "locktorture:mutex_lock: the core every kernel job runs; and "
	                    "kernel/locking/mutex.c (struct mutex), +2 more touched paths");
}

static void test_each_rule(void **state)
{
	(void)state;
	struct kw_choice c;
	static const struct {
		const char *path, *workloads, *types;
	} cases[] = {
	    {"kernel/locking/rwsem.c", CORE_W, CORE_T},
	    {"kernel/locking/percpu-rwsem.c", CORE_W, CORE_T ",percpu_rwsem_lock"},
	    {"kernel/locking/spinlock.c", CORE_W, CORE_T ",spin_lock_irq,rw_lock,rw_lock_irq"},
	    {"kernel/locking/qspinlock.c", CORE_W, CORE_T ",spin_lock_irq"},
	    {"include/linux/spinlock.h", CORE_W, CORE_T ",spin_lock_irq,rw_lock,rw_lock_irq"},
	    {"kernel/futex/core.c", CORE_W ",futex-hash", CORE_T},
	    {"kernel/futex/waitwake.c", CORE_W ",futex-hash", CORE_T},
	    {"kernel/locking/rtmutex.c", CORE_W, CORE_T ",rtmutex_lock"},
	    {"fs/eventpoll.c", CORE_W ",epoll-ctl", CORE_T},
	    {"fs/seq_file.c", CORE_W ",seq-read", CORE_T},
	    /* a prefix names a file or folder, not any path that contains it */
	    {"drivers/fs/pipe.c", CORE_W, CORE_T},
	    {"kernel/futex.c", CORE_W, CORE_T},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		kw_choose(&c, cases[i].path, strlen(cases[i].path) + 1);
		assert_string_equal(c.workloads, cases[i].workloads);
		assert_string_equal(c.types, cases[i].types);
	}
}

static void test_rwsem_reason(void **state)
{
	(void)state;
	struct kw_choice c;
	char l[256];
	const char p[] = "kernel/locking/rwsem.c";
	kw_choose(&c, p, sizeof(p));
	assert_string_equal(line_of(&c, "vfs-creat-unlink", l, sizeof(l)),
	                    "vfs-creat-unlink: the core every kernel job runs; and "
	                    "kernel/locking/rwsem.c (rw_semaphore (i_rwsem))");
}

static void test_many_paths_stay_bounded(void **state)
{
	(void)state;
	struct kw_choice c;
	char paths[8192];
	size_t len = 0;
	static const char *const all[] = {"fs/pipe.c",
	                                  "fs/eventpoll.c",
	                                  "fs/seq_file.c",
	                                  "kernel/locking/mutex.c",
	                                  "kernel/locking/rwsem.c",
	                                  "kernel/locking/percpu-rwsem.c",
	                                  "kernel/locking/spinlock.c",
	                                  "kernel/locking/rtmutex.c",
	                                  "kernel/futex/core.c",
	                                  "kernel/locking/ww_mutex.h",
	                                  "kernel/locking/qrwlock.c"};
	for (int r = 0; r < 20; r++)
		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
			size_t l = strlen(all[i]) + 1;
			memcpy(paths + len, all[i], l);
			len += l;
		}
	kw_choose(&c, paths, len);
	assert_true(c.n <= KW_MAX);
	assert_string_equal(c.workloads, CORE_W ",pipe-mutex,epoll-ctl,seq-read,futex-hash");
	assert_string_equal(c.types, CORE_T ",ww_mutex_lock,percpu_rwsem_lock,spin_lock_irq,"
	                                    "rw_lock,rw_lock_irq,rtmutex_lock");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_core_only),    cmocka_unit_test(test_pipe),
	    cmocka_unit_test(test_mutex),        cmocka_unit_test(test_each_rule),
	    cmocka_unit_test(test_rwsem_reason), cmocka_unit_test(test_many_paths_stay_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
