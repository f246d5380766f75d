/* lockstep.c - two sides taking turns through a shared file (lockstep.h). */
#include "lockstep.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* The shared page: whose turn it is, and which sides are done. */
struct lockstep_page {
	_Atomic uint32_t turn; /* 0 or 1; a fresh (zeroed) file starts with side 0 */
	_Atomic uint32_t done[2];
};

/*
 * This side's own figures, in an anonymous shared page: the points run in
 * forked children, and the parent reads what they counted.  The other side
 * never sees it.
 */
struct lockstep_own {
	_Atomic long turns, alone;
	_Atomic int broken; /* a wait timed out: every later wait fails at once */
};

struct lockstep {
	struct lockstep_page *pg;
	struct lockstep_own *own;
	int side;
};

struct lockstep *lockstep_open(const char *path, int side, char *err, size_t errlen)
{
	struct lockstep *ls = calloc(1, sizeof(*ls));
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	struct stat st;

	if (!ls || fd < 0) {
		snprintf(err, errlen, "--lockstep %s: %s", path, strerror(ls ? errno : ENOMEM));
		goto fail;
	}
	/* both sides may grow it at once: the same size either way */
	if (fstat(fd, &st) || (st.st_size < (off_t)sizeof(struct lockstep_page) &&
	                       ftruncate(fd, (off_t)sizeof(struct lockstep_page)))) {
		snprintf(err, errlen, "--lockstep %s: %s", path, strerror(errno));
		goto fail;
	}
	ls->pg =
	    mmap(NULL, sizeof(struct lockstep_page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ls->own = mmap(NULL, sizeof(struct lockstep_own), PROT_READ | PROT_WRITE,
	               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ls->pg == MAP_FAILED || ls->own == MAP_FAILED) {
		snprintf(err, errlen, "--lockstep %s: %s", path, strerror(errno));
		if (ls->pg != MAP_FAILED)
			munmap(ls->pg, sizeof(struct lockstep_page));
		goto fail;
	}
	close(fd);
	ls->side = side;
	return ls;
fail:
	if (fd >= 0)
		close(fd);
	free(ls);
	return NULL;
}

/* A shared (not process-private) futex: the other side is another process. */
static void futex_wait(_Atomic uint32_t *w, uint32_t val, long ns)
{
	struct timespec ts = {ns / 1000000000l, ns % 1000000000l};
	syscall(SYS_futex, w, FUTEX_WAIT, val, &ts, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0);
}

int lockstep_wait(struct lockstep *ls, atomic_ulong *beat, char *err, size_t errlen)
{
	uint64_t deadline = lb_now_ns() + (uint64_t)LOCKSTEP_WAIT_MS * 1000000;
	uint32_t other = (uint32_t)!ls->side;

	for (;;) {
		uint32_t t = atomic_load(&ls->pg->turn);
		if (atomic_load(&ls->own->broken))
			break;
		if (t == (uint32_t)ls->side) {
			atomic_fetch_add(&ls->own->turns, 1);
			return 0;
		}
		/* done, or anything but a turn number: the other side is not taking turns */
		if (atomic_load(&ls->pg->done[other]) || t > 1) {
			atomic_fetch_add(&ls->own->turns, 1);
			atomic_fetch_add(&ls->own->alone, 1);
			return 1;
		}
		uint64_t now = lb_now_ns();
		if (now >= deadline) {
			atomic_store(&ls->own->broken, 1);
			break;
		}
		/* waiting on the other side is not a stall of this one (runner.c) */
		if (beat)
			atomic_fetch_add_explicit(beat, 1, memory_order_relaxed);
		/* wake at least every 100 ms to look at done[] and the deadline */
		long ns = (long)(deadline - now);
		futex_wait(&ls->pg->turn, t, ns < 100000000l ? ns : 100000000l);
	}
	snprintf(err, errlen, "lockstep: the other side did not pass the turn within %d ms",
	         LOCKSTEP_WAIT_MS);
	return -1;
}

void lockstep_pass(struct lockstep *ls)
{
	atomic_store(&ls->pg->turn, (uint32_t)!ls->side);
	futex_wake(&ls->pg->turn);
}

void lockstep_done(struct lockstep *ls)
{
	atomic_store(&ls->pg->done[ls->side], 1);
	lockstep_pass(ls);
}

long lockstep_turns(const struct lockstep *ls, long *alone)
{
	if (alone)
		*alone = atomic_load(&ls->own->alone);
	return atomic_load(&ls->own->turns);
}

void lockstep_close(struct lockstep *ls)
{
	if (!ls)
		return;
	munmap(ls->pg, sizeof(*ls->pg));
	munmap(ls->own, sizeof(*ls->own));
	free(ls);
}
