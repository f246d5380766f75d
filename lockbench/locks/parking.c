/*
 * parking.c - `parking`, WebKit's WTF::Lock (Filip Pizlo, "Locking in WebKit",
 * 2016; Source/WTF/wtf/LockAlgorithm.h and ParkingLot.cpp), the design Rust's
 * parking_lot also follows.
 *
 * The lock is one byte: IS_HELD and HAS_PARKED.  Lock: CAS 0 -> IS_HELD;
 * else spin up to 40 times with sched_yield while nobody is parked, then set
 * HAS_PARKED and park.  Parking happens on a global parking lot: a hash
 * table of buckets keyed by lock address, each a small lock and a FIFO of
 * parked threads, each sleeping on its own futex word.  park validates the
 * byte under the bucket lock, and unlock changes the byte under it, so no
 * wakeup is lost.  Unlock with HAS_PARKED unparks one thread: normally it
 * releases the byte (keeping HAS_PARKED if more are parked) and lets the
 * woken thread barge; but when the bucket's fair time has come (a random
 * 0-1 ms after the last fair unlock, 0.5 ms on average, as WebKit) it hands
 * the lock directly to the woken thread: eventual fairness.
 *
 * Departure: WebKit grows its table with the thread count; this one has a
 * fixed PARKING_BUCKETS buckets.
 */
#include "lock_internal.h"

#define IS_HELD    0x1u
#define HAS_PARKED 0x2u

#define PARKING_SPIN_LIMIT 40
#define PARKING_BUCKETS    1024 /* power of two */
#define PARKING_FAIR_NS    1000000u

enum unpark_token {
	TOKEN_BARGING_OPPORTUNITY,
	TOKEN_DIRECT_HANDOFF,
};

struct parking_lock {
	atomic_uchar byte;
};

struct parked_thread {
	const void *address;
	struct parked_thread *next;
	enum unpark_token token; /* written by the unparker before unparked */
	atomic_uint unparked;    /* futex word: 0 parked, 1 unparked */
};

struct parking_bucket {
	_Alignas(LB_CACHELINE) struct lb_spinlock lock;
	struct parked_thread *head, *tail; /* FIFO, under lock */
	uint64_t next_fair_ns;             /* under lock */
	uint64_t random;                   /* xorshift state, under lock */
};

static struct parking_bucket parking_lot[PARKING_BUCKETS];

static struct parking_bucket *bucket_for(const void *address)
{
	uint64_t h = (uint64_t)(uintptr_t)address * 0x9e3779b97f4a7c15ull;

	return &parking_lot[(h >> 32) & (PARKING_BUCKETS - 1)];
}

static uint64_t bucket_random(struct parking_bucket *b)
{
	uint64_t x = b->random ? b->random : (uint64_t)(uintptr_t)b | 1;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	b->random = x;
	return x;
}

/*
 * Park on address while *byte == expected.  Returns false when the byte
 * had already changed; true once unparked, with the unparker's token.
 */
static bool parking_compare_and_park(atomic_uchar *byte, unsigned char expected,
                                     enum unpark_token *token)
{
	struct parking_bucket *b = bucket_for(byte);
	struct parked_thread me = {.address = byte};

	atomic_init(&me.unparked, 0);
	lb_spin_lock(&b->lock);
	if (atomic_load_explicit(byte, memory_order_relaxed) != expected) {
		lb_spin_unlock(&b->lock);
		return false;
	}
	if (b->tail)
		b->tail->next = &me;
	else
		b->head = &me;
	b->tail = &me;
	lb_spin_unlock(&b->lock);

	/* acquire: pairs with the release in parking_unlock_slow */
	while (!atomic_load_explicit(&me.unparked, memory_order_acquire))
		futex_wait(&me.unparked, 0);
	*token = me.token;
	return true;
}

/* Unlock with HAS_PARKED set: unpark one thread, release or hand over. */
static void parking_unlock_slow(atomic_uchar *byte)
{
	struct parking_bucket *b = bucket_for(byte);
	struct parked_thread *t, *prev = NULL, *q;
	bool more = false, fair = false;

	lb_spin_lock(&b->lock);
	for (t = b->head; t; prev = t, t = t->next)
		if (t->address == byte)
			break;
	if (t) {
		if (prev)
			prev->next = t->next;
		else
			b->head = t->next;
		if (b->tail == t)
			b->tail = prev;
		for (q = t->next; q; q = q->next) {
			if (q->address == byte) {
				more = true;
				break;
			}
		}
		uint64_t now = lb_now_ns();

		if (now > b->next_fair_ns) {
			fair = true;
			b->next_fair_ns = now + bucket_random(b) % PARKING_FAIR_NS;
		}
	}

	/*
	 * Only the holder clears IS_HELD and only an unlocker under the bucket
	 * lock clears HAS_PARKED, so the byte is IS_HELD|HAS_PARKED here and
	 * plain stores suffice.
	 */
	if (t && fair) {
		/* direct handoff: the lock is never released */
		atomic_store_explicit(byte, IS_HELD | (more ? HAS_PARKED : 0),
		                      memory_order_relaxed);
		t->token = TOKEN_DIRECT_HANDOFF;
	} else {
		/* release: pairs with the acquire CAS of the next owner */
		atomic_store_explicit(byte, more ? HAS_PARKED : 0, memory_order_release);
		if (t)
			t->token = TOKEN_BARGING_OPPORTUNITY;
	}
	/* release: pairs with the parked thread's acquire load (and hands over the lock) */
	if (t)
		atomic_store_explicit(&t->unparked, 1, memory_order_release);
	lb_spin_unlock(&b->lock);
	/* t may have returned already (spurious wakeup): the wake is then harmless */
	if (t)
		futex_wake(&t->unparked, 1);
}

static int parking_init(void *p)
{
	struct parking_lock *lock = p;

	atomic_init(&lock->byte, 0);
	return 0;
}

static void parking_lock_slow(struct parking_lock *lock)
{
	unsigned int spins = 0;

	for (;;) {
		unsigned char v = atomic_load_explicit(&lock->byte, memory_order_relaxed);
		enum unpark_token token;

		if (!(v & IS_HELD)) {
			/* barging; acquire: pairs with the release in unlock */
			if (atomic_compare_exchange_weak_explicit(&lock->byte, &v, v | IS_HELD,
			                                          memory_order_acquire,
			                                          memory_order_relaxed))
				return;
			continue;
		}
		if (!(v & HAS_PARKED) && spins < PARKING_SPIN_LIMIT) {
			spins++;
			sched_yield();
			continue;
		}
		if (!(v & HAS_PARKED) && !atomic_compare_exchange_weak_explicit(
		                             &lock->byte, &v, v | HAS_PARKED, memory_order_relaxed,
		                             memory_order_relaxed))
			continue;
		if (parking_compare_and_park(&lock->byte, IS_HELD | HAS_PARKED, &token) &&
		    token == TOKEN_DIRECT_HANDOFF)
			return;
	}
}

static void parking_lock(void *p)
{
	struct parking_lock *lock = p;
	unsigned char v = 0;

	/* acquire: pairs with the release in unlock */
	if (atomic_compare_exchange_weak_explicit(&lock->byte, &v, IS_HELD, memory_order_acquire,
	                                          memory_order_relaxed))
		return;
	parking_lock_slow(lock);
}

static bool parking_trylock(void *p)
{
	struct parking_lock *lock = p;
	unsigned char v = atomic_load_explicit(&lock->byte, memory_order_relaxed);

	while (!(v & IS_HELD)) {
		/* acquire: pairs with the release in unlock */
		if (atomic_compare_exchange_weak_explicit(
		        &lock->byte, &v, v | IS_HELD, memory_order_acquire, memory_order_relaxed))
			return true;
	}
	return false;
}

static void parking_unlock(void *p)
{
	struct parking_lock *lock = p;
	unsigned char v = IS_HELD;

	/* release: pairs with the acquire CAS of the next owner */
	if (atomic_compare_exchange_strong_explicit(&lock->byte, &v, 0, memory_order_release,
	                                            memory_order_relaxed))
		return;
	parking_unlock_slow(&lock->byte);
}

static void parking_destroy(void *p)
{
}

const struct lock_ops lock_parking_ops = {
    .name = "parking",
    .description = "WebKit WTF::Lock / parking_lot: two bits, brief spin, parking lot, "
                   "eventual fairness",
    .size = LB_LOCK_SIZE(struct parking_lock),
    .sleeps = true,
    .init = parking_init,
    .lock = parking_lock,
    .trylock = parking_trylock,
    .unlock = parking_unlock,
    .destroy = parking_destroy,
};
