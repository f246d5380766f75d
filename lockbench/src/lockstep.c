/* lockstep.c - two sides taking turns through a shared file (lockstep.h). */
#include "lockstep.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* The shared page: whose turn it is, and which sides are done. */
struct lockstep_page {
	_Atomic int turn; /* 0 or 1; a fresh (zeroed) file starts with side 0 */
	_Atomic int done[2];
};

/*
 * This side's own figures, in an anonymous shared page: the points run in
 * forked children, and the parent reads what they counted.  The other side
 * never sees it.
 */
struct lockstep_own {
	_Atomic long turns, alone;
	_Atomic int broken; /* a BROKEN_ reason: every later wait fails at once */
};

enum { BROKEN_NOT, BROKEN_WAIT, BROKEN_TURN };

struct lockstep {
	struct lockstep_page *pg;
	struct lockstep_own *own;
	int side;
};

struct lockstep *lockstep_open(const char *path, int side, char *err, size_t errlen)
{
	struct lockstep *ls = calloc(1, sizeof(*ls));
	int fd = -1;
	struct stat st;

	if (!ls) {
		errno = ENOMEM;
		goto fail;
	}
	ls->pg = MAP_FAILED;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	/* both sides may grow it at once: the same size either way */
	if (fd < 0 || fstat(fd, &st) ||
	    (st.st_size < (off_t)sizeof(struct lockstep_page) &&
	     ftruncate(fd, (off_t)sizeof(struct lockstep_page))))
		goto fail;
	ls->pg =
	    mmap(NULL, sizeof(struct lockstep_page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ls->pg == MAP_FAILED)
		goto fail;
	ls->own = mmap(NULL, sizeof(struct lockstep_own), PROT_READ | PROT_WRITE,
	               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ls->own == MAP_FAILED)
		goto fail;
	close(fd);
	ls->side = side;
	return ls;
fail:
	snprintf(err, errlen, "--lockstep %s: %s", path, strerror(errno));
	if (ls && ls->pg != MAP_FAILED)
		munmap(ls->pg, sizeof(struct lockstep_page));
	if (fd >= 0)
		close(fd);
	free(ls);
	return NULL;
}

int lockstep_wait(struct lockstep *ls, atomic_ulong *beat, char *err, size_t errlen)
{
	uint64_t deadline = lb_now_ns() + (uint64_t)LOCKSTEP_WAIT_MS * 1000000;
	int other = !ls->side, broken;

	while (!(broken = atomic_load(&ls->own->broken))) {
		int t = atomic_load(&ls->pg->turn);
		if (t == ls->side) {
			atomic_fetch_add(&ls->own->turns, 1);
			return 0;
		}
		/* done, or anything but a turn number: the other side is not taking turns */
		if (atomic_load(&ls->pg->done[other]) || (t != 0 && t != 1)) {
			atomic_fetch_add(&ls->own->turns, 1);
			atomic_fetch_add(&ls->own->alone, 1);
			return 1;
		}
		uint64_t now = lb_now_ns();
		if (now >= deadline) {
			atomic_store(&ls->own->broken, BROKEN_WAIT);
			continue;
		}
		/* waiting on the other side is not a stall of this one (runner.c) */
		if (beat)
			atomic_fetch_add_explicit(beat, 1, memory_order_relaxed);
		/* wake at least every 100 ms to look at done[] and the deadline */
		uint64_t ns = deadline - now;
		lb_futex_wait_ns(&ls->pg->turn, t, ns < 100000000u ? ns : 100000000u, true);
	}
	if (broken == BROKEN_TURN)
		snprintf(err, errlen,
		         "lockstep: this side takes no more turns after a turn failed");
	else
		snprintf(err, errlen, "lockstep: the other side did not pass the turn within %d ms",
		         LOCKSTEP_WAIT_MS);
	return -1;
}

void lockstep_pass(struct lockstep *ls)
{
	atomic_store(&ls->pg->turn, !ls->side);
	lb_futex_wake_shared(&ls->pg->turn, 1);
}

int lockstep_hot_slice_us(int threads, int ncpus)
{
	if (ncpus <= 0 || threads <= 2 * ncpus)
		return LOCKSTEP_HOT_SLICE_US;
	long us = (long)LOCKSTEP_HOT_SLICE_US * threads / ncpus;
	return us < LOCKSTEP_HOT_SLICE_MAX_US ? (int)us : LOCKSTEP_HOT_SLICE_MAX_US;
}

void lockstep_stop(struct lockstep *ls)
{
	atomic_store(&ls->own->broken, BROKEN_TURN);
}

int lockstep_take_turns(struct lockstep *ls, long n, atomic_ulong *beat, lockstep_slice_fn *slice,
                        void *arg, uint64_t *waited, char *err, size_t errlen)
{
	uint64_t w = 0;

	for (long k = 0; k < (n > 0 ? n : 1); k++) {
		uint64_t w0 = lb_now_ns();
		if (ls && lockstep_wait(ls, beat, err, errlen) < 0)
			return -1;
		uint64_t t0 = lb_now_ns();
		w += t0 - w0;
		if (slice(arg, t0, err, errlen)) {
			if (ls)
				lockstep_stop(ls);
			return -1;
		}
		if (ls)
			lockstep_pass(ls);
	}
	if (waited)
		*waited = w;
	return 0;
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
