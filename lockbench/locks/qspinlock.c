/*
 * qspinlock.c - a userspace port of the kernel's queued spinlock
 * (kernel/locking/qspinlock.c, Waiman Long and Peter Zijlstra, v4.2 onwards).
 *
 * One 32-bit word: bits 0-7 the locked byte, 8-15 the pending byte, 16-17
 * the tail index (nesting level), 18-31 the tail "CPU" + 1.  Uncontended:
 * one CAS 0 -> locked.  The first contender sets pending and spins on the
 * locked byte (no queue node touched); anyone later queues on an MCS node,
 * the queue head spins on locked+pending, then sets locked and passes MCS
 * headship on.  Unlock is a release store of 0 to the locked byte.  As in the
 * kernel (x86, NR_CPUS < 16K), the byte and halfword fields are accessed
 * with byte/halfword atomics overlapping the 32-bit word.
 *
 * Departures: the kernel's CPU number becomes a per-thread index
 * (lb_thread_id, up to LB_MAX_THREADS live threads) and its per-CPU nodes a
 * static table indexed by it; a thread without an index, or nested deeper
 * than MAX_NODES, spins on trylock as the kernel does past MAX_NODES.
 * Userspace has no interrupts, so the node index is 0 in practice.
 */
#include "lock_internal.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "qspinlock.c assumes the little-endian field layout"
#endif

#define Q_LOCKED_VAL          1u
#define Q_PENDING_VAL         (1u << 8)
#define Q_LOCKED_MASK         0x000000ffu
#define Q_PENDING_MASK        0x0000ff00u
#define Q_LOCKED_PENDING_MASK 0x0000ffffu
#define Q_TAIL_OFFSET         16
#define Q_TAIL_IDX_OFFSET     16
#define Q_TAIL_IDX_MASK       0x00030000u
#define Q_TAIL_CPU_OFFSET     18
#define Q_TAIL_MASK           0xffff0000u
#define MAX_NODES             4

/* How long to wait out a pending -> locked hand-over (x86 value) */
#define Q_PENDING_LOOPS (1 << 9)

_Static_assert(LB_MAX_THREADS + 1 <= (1 << (32 - Q_TAIL_CPU_OFFSET)), "tail cannot encode threads");

struct qspinlock {
	union {
		atomic_uint val;
		struct {
			_Atomic uint8_t locked;
			_Atomic uint8_t pending;
		};
		struct {
			_Atomic uint16_t locked_pending;
			_Atomic uint16_t tail;
		};
	};
};

struct qnode {
	_Atomic(struct qnode *) next;
	atomic_int locked; /* set to 1 by the predecessor: we are queue head */
	int count;         /* nodes in use, in node[0] only, owner thread only */
};

/* One cache line per thread, as the kernel's per-CPU qnodes[MAX_NODES] */
struct qnode_set {
	_Alignas(LB_CACHELINE) struct qnode node[MAX_NODES];
};

static struct qnode_set qnodes[LB_MAX_THREADS];

static unsigned int encode_tail(int tid, int idx)
{
	return (unsigned int)(tid + 1) << Q_TAIL_CPU_OFFSET | (unsigned int)idx
	                                                          << Q_TAIL_IDX_OFFSET;
}

static struct qnode *decode_tail(unsigned int tail)
{
	int tid = (int)(tail >> Q_TAIL_CPU_OFFSET) - 1;
	int idx = (int)((tail & Q_TAIL_IDX_MASK) >> Q_TAIL_IDX_OFFSET);

	return &qnodes[tid].node[idx];
}

static int qspin_init(void *p)
{
	struct qspinlock *lock = p;

	atomic_init(&lock->val, 0);
	return 0;
}

static bool qspin_trylock(void *p)
{
	struct qspinlock *lock = p;
	unsigned int val = atomic_load_explicit(&lock->val, memory_order_relaxed);

	if (val)
		return false;
	/* acquire: pairs with the release store in qspin_unlock */
	return atomic_compare_exchange_strong_explicit(&lock->val, &val, Q_LOCKED_VAL,
	                                               memory_order_acquire, memory_order_relaxed);
}

static void qspin_lock_slowpath(struct qspinlock *lock, unsigned int val)
{
	struct qnode *node, *prev, *next;
	unsigned int old, tail;
	int tid, idx;

	/* wait for an in-progress pending -> locked hand-over (bounded) */
	if (val == Q_PENDING_VAL) {
		int cnt = Q_PENDING_LOOPS;

		for (;;) {
			val = atomic_load_explicit(&lock->val, memory_order_relaxed);
			if (val != Q_PENDING_VAL || !cnt--)
				break;
			cpu_relax();
		}
	}

	/* any contention beyond the owner: queue */
	if (val & ~Q_LOCKED_MASK)
		goto queue;

	/* 0,0,* -> 0,1,*: become the pending waiter */
	val = atomic_fetch_or_explicit(&lock->val, Q_PENDING_VAL, memory_order_acquire);
	if (val & ~Q_LOCKED_MASK) {
		/* lost the race; undo pending if we were the one to set it */
		if (!(val & Q_PENDING_MASK))
			atomic_store_explicit(&lock->pending, 0, memory_order_relaxed);
		goto queue;
	}

	/* we are pending: wait for the owner to go away */
	if (val & Q_LOCKED_MASK) {
		/* acquire: pairs with the release store in qspin_unlock */
		while (atomic_load_explicit(&lock->locked, memory_order_acquire))
			cpu_relax();
	}

	/* 0,1,0 -> 0,0,1: clear_pending_set_locked */
	atomic_store_explicit(&lock->locked_pending, Q_LOCKED_VAL, memory_order_relaxed);
	return;

queue:
	tid = lb_thread_id();
	if (tid < 0) {
		while (!qspin_trylock(lock))
			cpu_relax();
		return;
	}
	node = &qnodes[tid].node[0];
	idx = node->count++;
	tail = encode_tail(tid, idx);

	if (idx >= MAX_NODES) {
		while (!qspin_trylock(lock))
			cpu_relax();
		goto release;
	}

	node = &qnodes[tid].node[idx];
	atomic_store_explicit(&node->locked, 0, memory_order_relaxed);
	atomic_store_explicit(&node->next, NULL, memory_order_relaxed);

	/* the lock may have gone free while we set up the node */
	if (qspin_trylock(lock))
		goto release;

	/*
	 * Publish the tail.  release: publishes the node's initialisation (the
	 * kernel's smp_wmb); acquire: makes the previous tail's node visible.
	 */
	old = (unsigned int)atomic_exchange_explicit(&lock->tail, (uint16_t)(tail >> Q_TAIL_OFFSET),
	                                             memory_order_acq_rel)
	      << Q_TAIL_OFFSET;
	next = NULL;

	if (old & Q_TAIL_MASK) {
		prev = decode_tail(old);
		/* release: pairs with the acquire loads of next below */
		atomic_store_explicit(&prev->next, node, memory_order_release);
		/* acquire: pairs with the release store that makes us queue head */
		while (!atomic_load_explicit(&node->locked, memory_order_acquire))
			cpu_relax();
		next = atomic_load_explicit(&node->next, memory_order_acquire);
	}

	/* queue head: wait for owner and pending to go away */
	for (;;) {
		/* acquire: pairs with the release store in qspin_unlock */
		val = atomic_load_explicit(&lock->val, memory_order_acquire);
		if (!(val & Q_LOCKED_PENDING_MASK))
			break;
		cpu_relax();
	}

	/* last in the queue: take the lock and clear the tail at once */
	if ((val & Q_TAIL_MASK) == tail) {
		if (atomic_compare_exchange_strong_explicit(
		        &lock->val, &val, Q_LOCKED_VAL, memory_order_relaxed, memory_order_relaxed))
			goto release;
	}

	/* others queued behind us: set locked, then pass headship on */
	atomic_store_explicit(&lock->locked, Q_LOCKED_VAL, memory_order_relaxed);
	while (!next) {
		next = atomic_load_explicit(&node->next, memory_order_acquire);
		if (!next)
			cpu_relax();
	}
	/* release: pairs with the successor's acquire spin on its node */
	atomic_store_explicit(&next->locked, 1, memory_order_release);

release:
	qnodes[tid].node[0].count--;
}

static void qspin_lock(void *p)
{
	struct qspinlock *lock = p;
	unsigned int val = 0;

	/* acquire: pairs with the release store in qspin_unlock */
	if (__builtin_expect(atomic_compare_exchange_strong_explicit(&lock->val, &val, Q_LOCKED_VAL,
	                                                             memory_order_acquire,
	                                                             memory_order_relaxed),
	                     1))
		return;
	qspin_lock_slowpath(lock, val);
}

static void qspin_unlock(void *p)
{
	struct qspinlock *lock = p;

	atomic_store_explicit(&lock->locked, 0, memory_order_release);
}

static void qspin_destroy(void *p)
{
}

const struct lock_ops lock_qspinlock_ops = {
    .name = "qspinlock",
    .description = "kernel queued spinlock: locked byte, pending byte, MCS tail",
    .size = LB_LOCK_SIZE(struct qspinlock),
    .init = qspin_init,
    .lock = qspin_lock,
    .trylock = qspin_trylock,
    .unlock = qspin_unlock,
    .destroy = qspin_destroy,
};
