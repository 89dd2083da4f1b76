/* The LRU cache of decoded chunks, through tm_chunk_cache_load as the product uses it, with test
 * loaders that count their calls, fail, or block until released: one load per key, references,
 * eviction order, the bytes counted against the budget, failed loads, threads waiting for a
 * load, contains, forgetting a trace, owner keys, and many threads at once. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tracemount/chunk_cache.h"

#define RAW	 1000
#define RECS	 10
#define RSIZE	 16
#define RENDERED 100

/* Holds loaders until the test opens it, counting those that reached it. */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	unsigned arrived;
	bool open;
};
#define GATE_INIT                                                                                  \
	{                                                                                          \
		PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false                      \
	}

static void gate_pass(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->arrived++;
	pthread_cond_broadcast(&g->changed);
	while (!g->open)
		pthread_cond_wait(&g->changed, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

static void gate_wait_arrivals(struct gate *g, unsigned n)
{
	pthread_mutex_lock(&g->lock);
	while (g->arrived < n)
		pthread_cond_wait(&g->changed, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

static unsigned gate_arrivals(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	unsigned n = g->arrived;
	pthread_mutex_unlock(&g->lock);
	return n;
}

static void gate_open(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->open = true;
	pthread_cond_broadcast(&g->changed);
	pthread_mutex_unlock(&g->lock);
}

/* What a test loader does, and how many times it was called. */
struct loader {
	unsigned calls;		   /* counted atomically */
	uint8_t tag;		   /* the value of every byte it loads */
	int fail;		   /* returned after allocating (the cache must free it) */
	size_t raw_len, n_records; /* a decoded chunk's size: RAW and RECS unless set */
	struct gate *gate;	   /* passed before loading, when set */
};

static void loader_start(struct loader *l)
{
	__atomic_add_fetch(&l->calls, 1, __ATOMIC_SEQ_CST);
	if (l->gate)
		gate_pass(l->gate);
}

/* A decoded chunk, allocated as trace.c's decoder does: trace bytes and records of l->tag. */
static int decode_loader(void *arg, struct tm_cached_chunk *c)
{
	struct loader *l = arg;
	loader_start(l);
	size_t raw_len = l->raw_len ? l->raw_len : RAW, n = l->n_records ? l->n_records : RECS;
	if (tm_cached_chunk_alloc(c, raw_len, n, RSIZE) < 0)
		return -ENOMEM;
	if (l->fail)
		return l->fail;
	memset((void *)c->chunk.raw, l->tag, raw_len);
	memset(c->chunk.records, l->tag, n * RSIZE);
	c->chunk.n_records = n;
	return 0;
}

/* A view's rendered chunk, as reader.c makes one: RENDERED bytes of l->tag. Allocates before it
 * fails, as the product's loaders may: a failed entry must not count against the budget. */
static int render_loader(void *arg, struct tm_cached_chunk *c)
{
	struct loader *l = arg;
	loader_start(l);
	if (!(c->bytes = tm_cached_chunk_malloc(c, RENDERED)))
		return -ENOMEM;
	if (l->fail)
		return l->fail;
	memset(c->bytes, l->tag, RENDERED);
	c->len = RENDERED;
	return 0;
}

static const uint8_t *raw_of(const struct tm_cached_chunk *c)
{
	return c->chunk.raw;
}

/* The entry (owner, index), referenced: what tm_chunk_cache_load returns, which must succeed. */
static struct tm_cached_chunk *load(struct tm_chunk_cache *cc, uint64_t owner, uint64_t index,
				    tm_chunk_loader fn, struct loader *l)
{
	struct tm_cached_chunk *c = NULL;
	ck_assert_int_eq(tm_chunk_cache_load(cc, owner, index, fn, l, &c), 0);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->owner, owner);
	ck_assert_uint_eq(c->index, index);
	ck_assert(!c->loading);
	ck_assert_uint_ge(c->refs, 1);
	return c;
}

/* Loads the absent decoded chunk (owner, index), every byte (uint8_t)index, and releases it. */
static void add(struct tm_chunk_cache *cc, uint64_t owner, uint64_t index)
{
	struct loader l = {.tag = (uint8_t)index};
	tm_chunk_cache_release(cc, load(cc, owner, index, decode_loader, &l));
	ck_assert_uint_eq(l.calls, 1);
}

/* Whether add()'s chunk (owner, index) is cached; if it is, uses it (so it becomes the most
 * recently used) without loading it again, and checks its bytes. */
static bool touch(struct tm_chunk_cache *cc, uint64_t owner, uint64_t index)
{
	if (!tm_chunk_cache_contains(cc, owner, index))
		return false;
	struct loader l = {.tag = 0xee};
	struct tm_cached_chunk *c = load(cc, owner, index, decode_loader, &l);
	ck_assert_uint_eq(l.calls, 0);
	ck_assert_uint_eq(raw_of(c)[RAW - 1], (uint8_t)index);
	tm_chunk_cache_release(cc, c);
	return true;
}

/* How many of the keys these tests use are cached: those of traces 1 to 9 and 99, decoded or
 * rendered by views 0 to 2, chunks 0 to 63. */
static unsigned n_cached(struct tm_chunk_cache *cc)
{
	static const uint64_t uids[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 99};
	unsigned n = 0;
	for (size_t u = 0; u < sizeof(uids) / sizeof(uids[0]); u++)
		for (uint64_t index = 0; index < 64; index++) {
			n += tm_chunk_cache_contains(cc, uids[u], index);
			for (unsigned v = 0; v < 3; v++)
				n += tm_chunk_cache_contains(cc, tm_cache_owner(uids[u], v), index);
		}
	return n;
}

/* The bytes the entry fn(l) loads counts against the budget. */
static size_t mem_of(tm_chunk_loader fn, struct loader *l)
{
	struct tm_chunk_cache *cc;
	ck_assert_int_eq(tm_chunk_cache_new(1u << 20, &cc), 0);
	struct tm_cached_chunk *c = load(cc, 1, 0, fn, l);
	size_t m = c->mem;
	tm_chunk_cache_release(cc, c);
	tm_chunk_cache_free(cc);
	return m;
}

static size_t decoded_mem(void)
{
	struct loader l = {0};
	return mem_of(decode_loader, &l);
}

static size_t rendered_mem(void)
{
	struct loader l = {0};
	return mem_of(render_loader, &l);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

START_TEST(test_load_release)
{
	struct tm_chunk_cache *cc;
	ck_assert_int_eq(tm_chunk_cache_new(1u << 20, &cc), 0);
	ck_assert_uint_eq(n_cached(cc), 0);
	ck_assert(!tm_chunk_cache_contains(cc, 1, 0));

	struct loader first = {.tag = 7};
	struct tm_cached_chunk *c = load(cc, 1, 0, decode_loader, &first);
	ck_assert_uint_eq(first.calls, 1);
	ck_assert_uint_eq(c->refs, 1);
	ck_assert_uint_eq(c->chunk.raw_len, RAW);
	ck_assert_uint_eq(c->chunk.record_size, RSIZE);
	/* the budget counts at least the records and the trace bytes */
	ck_assert_uint_ge(c->mem, RAW + RECS * RSIZE);
	ck_assert_uint_eq(raw_of(c)[0], 7);
	ck_assert(tm_chunk_cache_contains(cc, 1, 0));

	/* loaded once per key: a second load, with another loader, shares the first's entry */
	struct loader second = {.tag = 8};
	struct tm_cached_chunk *again = load(cc, 1, 0, decode_loader, &second);
	ck_assert_ptr_eq(again, c);
	ck_assert_uint_eq(second.calls, 0);
	ck_assert_uint_eq(c->refs, 2);
	ck_assert_uint_eq(raw_of(c)[RAW - 1], 7);
	tm_chunk_cache_release(cc, again);
	tm_chunk_cache_release(cc, c);
	ck_assert_uint_eq(c->refs, 0);

	/* other keys: other owner, other index */
	ck_assert(!tm_chunk_cache_contains(cc, 2, 0));
	ck_assert(!tm_chunk_cache_contains(cc, 1, 1));
	/* still cached after the last release while within budget */
	again = load(cc, 1, 0, decode_loader, &second);
	ck_assert_ptr_eq(again, c);
	ck_assert_uint_eq(second.calls, 0);
	ck_assert_uint_eq(raw_of(again)[0], 7);
	tm_chunk_cache_release(cc, again);
	/* another index, another load */
	tm_chunk_cache_release(cc, load(cc, 1, 1, decode_loader, &first));
	ck_assert_uint_eq(first.calls, 2);

	/* a view's rendered chunk */
	struct loader view = {.tag = 0x5a};
	c = load(cc, tm_cache_owner(1, 0), 0, render_loader, &view);
	ck_assert_uint_eq(view.calls, 1);
	ck_assert_uint_eq(c->refs, 1);
	ck_assert_uint_eq(c->len, RENDERED);
	ck_assert_uint_eq((uint8_t)c->bytes[RENDERED - 1], 0x5a);
	tm_chunk_cache_release(cc, c);
	ck_assert_uint_eq(n_cached(cc), 3);
	tm_chunk_cache_free(cc);
}
END_TEST

/* The budget counts each entry's mem exactly, once: room for three chunks' bytes holds three,
 * a byte less holds two; a key loaded twice counts once, a failed load not at all. */
START_TEST(test_budget)
{
	size_t m = decoded_mem(), r = rendered_mem();
	struct tm_chunk_cache *cc;
	for (unsigned short_by = 0; short_by < 2; short_by++) {
		ck_assert_int_eq(tm_chunk_cache_new(3 * m - short_by, &cc), 0);
		for (uint64_t i = 0; i < 3; i++)
			add(cc, 1, i);
		ck_assert_uint_eq(n_cached(cc), 3 - short_by);
		ck_assert(tm_chunk_cache_contains(cc, 1, 0) == !short_by); /* the oldest goes */
		ck_assert(touch(cc, 1, 2));
		tm_chunk_cache_free(cc);

		/* a decoded and a rendered chunk: each counts its own mem */
		ck_assert_int_eq(tm_chunk_cache_new(m + r - short_by, &cc), 0);
		add(cc, 1, 0);
		struct loader view = {.tag = 1};
		tm_chunk_cache_release(cc, load(cc, tm_cache_owner(1, 0), 0, render_loader, &view));
		ck_assert_uint_eq(n_cached(cc), 2 - short_by);
		ck_assert(tm_chunk_cache_contains(cc, tm_cache_owner(1, 0), 0));
		tm_chunk_cache_free(cc);
	}

	ck_assert_int_eq(tm_chunk_cache_new(2 * m, &cc), 0);
	add(cc, 1, 0);
	struct loader l = {.tag = 0};
	tm_chunk_cache_release(cc, load(cc, 1, 0, decode_loader, &l));
	ck_assert_uint_eq(l.calls, 0);
	/* failures after the loaders allocated and set mem */
	struct loader bad = {.fail = -EIO};
	struct tm_cached_chunk *none = NULL;
	ck_assert_int_eq(tm_chunk_cache_load(cc, 1, 1, decode_loader, &bad, &none), -EIO);
	ck_assert_int_eq(
	    tm_chunk_cache_load(cc, tm_cache_owner(1, 0), 1, render_loader, &bad, &none), -EIO);
	ck_assert_ptr_null(none);
	add(cc, 1, 1);
	ck_assert_uint_eq(n_cached(cc), 2); /* both fit: the budget saw two entries only */
	ck_assert(touch(cc, 1, 0));
	ck_assert(touch(cc, 1, 1));
	add(cc, 1, 2); /* and a third does not */
	ck_assert_uint_eq(n_cached(cc), 2);
	ck_assert(!tm_chunk_cache_contains(cc, 1, 0));
	tm_chunk_cache_free(cc);
}
END_TEST

START_TEST(test_lru_order)
{
	size_t m = decoded_mem();
	struct tm_chunk_cache *cc;
	ck_assert_int_eq(tm_chunk_cache_new(3 * m, &cc), 0); /* room for three */
	add(cc, 1, 1);
	add(cc, 1, 2);
	add(cc, 1, 3);
	ck_assert_uint_eq(n_cached(cc), 3);
	/* touch 1: 2 is now the least recently used */
	ck_assert(touch(cc, 1, 1));
	add(cc, 1, 4);
	ck_assert_uint_eq(n_cached(cc), 3);
	ck_assert(!touch(cc, 1, 2));
	/* order now, oldest first: 3, 1, 4 (touch() above used 1 and only that) */
	add(cc, 1, 5);
	ck_assert(!touch(cc, 1, 3));
	ck_assert(touch(cc, 1, 1)); /* 4, 5, 1 */
	add(cc, 1, 6);		    /* evicts 4 */
	ck_assert(!touch(cc, 1, 4));
	ck_assert(touch(cc, 1, 5));
	ck_assert(touch(cc, 1, 6));
	ck_assert(touch(cc, 1, 1));
	ck_assert_uint_eq(n_cached(cc), 3);
	tm_chunk_cache_free(cc);
}
END_TEST

START_TEST(test_referenced_not_evicted)
{
	size_t m = decoded_mem();
	struct tm_chunk_cache *cc;
	ck_assert_int_eq(tm_chunk_cache_new(2 * m, &cc), 0); /* room for two */
	struct loader l1 = {.tag = 1};
	struct tm_cached_chunk *held = load(cc, 1, 1, decode_loader, &l1);
	add(cc, 1, 2);
	add(cc, 1, 3); /* 1 is the oldest but held: 2 goes */
	ck_assert_uint_eq(raw_of(held)[0], 1);
	ck_assert(!touch(cc, 1, 2));
	ck_assert(touch(cc, 1, 3));
	struct tm_cached_chunk *c1 = load(cc, 1, 1, decode_loader, &l1);
	ck_assert_ptr_eq(c1, held);
	ck_assert_uint_eq(l1.calls, 1);
	tm_chunk_cache_release(cc, c1);

	/* everything held: the cache goes over budget rather than free a chunk in use */
	struct loader l3 = {.tag = 3}, l4 = {.tag = 4};
	struct tm_cached_chunk *h3 = load(cc, 1, 3, decode_loader, &l3);
	struct tm_cached_chunk *h4 = load(cc, 1, 4, decode_loader, &l4);
	ck_assert_uint_eq(l3.calls, 0);
	ck_assert_uint_eq(l4.calls, 1);
	ck_assert_uint_eq(n_cached(cc), 3);
	memset((void *)held->chunk.raw, 0x11, RAW); /* still ours to use */
	memset((void *)h3->chunk.raw, 0x13, RAW);
	/* releases bring it back within budget: the least recently used, 1, goes at once */
	tm_chunk_cache_release(cc, held);
	ck_assert_uint_eq(n_cached(cc), 2);
	ck_assert(!tm_chunk_cache_contains(cc, 1, 1));
	tm_chunk_cache_release(cc, h3);
	tm_chunk_cache_release(cc, h4);
	ck_assert_uint_eq(n_cached(cc), 2);
	ck_assert(touch(cc, 1, 4));
	tm_chunk_cache_free(cc);
}
END_TEST

START_TEST(test_evicted_while_held)
{
	size_t m = decoded_mem();
	struct tm_chunk_cache *cc;
	ck_assert_int_eq(tm_chunk_cache_new(m, &cc), 0);
	struct loader la = {.tag = 0xa}, lb = {.tag = 0xb};
	struct tm_cached_chunk *a = load(cc, 1, 1, decode_loader, &la);
	struct tm_cached_chunk *b = load(cc, 1, 2, decode_loader, &lb);
	ck_assert_uint_eq(n_cached(cc), 2); /* over budget: both held */
	tm_chunk_cache_release(cc, a);	    /* a is unreferenced and over budget: gone */
	ck_assert(!tm_chunk_cache_contains(cc, 1, 1));
	ck_assert_uint_eq(raw_of(b)[0], 0xb);
	tm_chunk_cache_release(cc, b);
	ck_assert_uint_eq(n_cached(cc), 1); /* b fits the budget alone */
	ck_assert(tm_chunk_cache_contains(cc, 1, 2));
	tm_chunk_cache_free(cc); /* frees b */
}
END_TEST

/* contains takes no reference and is no use: the entry it asked about is still the oldest. */
START_TEST(test_contains)
{
	size_t m = decoded_mem();
	struct tm_chunk_cache *cc;
	ck_assert_int_eq(tm_chunk_cache_new(2 * m, &cc), 0);
	add(cc, 1, 0);
	add(cc, 1, 1);
	ck_assert(tm_chunk_cache_contains(cc, 1, 0));
	ck_assert(!tm_chunk_cache_contains(cc, 1, 2));
	add(cc, 1, 2);
	ck_assert(!tm_chunk_cache_contains(cc, 1, 0));
	ck_assert(tm_chunk_cache_contains(cc, 1, 1));
	ck_assert(tm_chunk_cache_contains(cc, 1, 2));
	struct loader l = {.tag = 1};
	struct tm_cached_chunk *c = load(cc, 1, 1, decode_loader, &l);
	ck_assert_uint_eq(c->refs, 1);
	ck_assert_uint_eq(l.calls, 0);
	tm_chunk_cache_release(cc, c);
	tm_chunk_cache_free(cc);
}
END_TEST

START_TEST(test_forget)
{
	size_t m = decoded_mem();
	struct tm_chunk_cache *cc;
	ck_assert_int_eq(tm_chunk_cache_new(10 * m, &cc), 0); /* room for ten */
	for (uint64_t i = 0; i < 5; i++) {
		add(cc, 1, i);
		add(cc, 2, i);
	}
	ck_assert_uint_eq(n_cached(cc), 10);
	struct loader l = {.tag = 3};
	struct tm_cached_chunk *held = load(cc, 1, 3, decode_loader, &l);
	tm_chunk_cache_forget(cc, 1);
	/* the held chunk stays (it is in use); the others of trace 1 go */
	ck_assert_uint_eq(n_cached(cc), 6);
	for (uint64_t i = 0; i < 5; i++) {
		ck_assert(touch(cc, 2, i));
		if (i != 3)
			ck_assert(!touch(cc, 1, i));
	}
	ck_assert_uint_eq(raw_of(held)[RAW - 1], 3);
	tm_chunk_cache_release(cc, held);
	ck_assert(touch(cc, 1, 3));
	tm_chunk_cache_forget(cc, 1);
	ck_assert(!tm_chunk_cache_contains(cc, 1, 3));
	ck_assert_uint_eq(n_cached(cc), 5);
	tm_chunk_cache_forget(cc, 99); /* unknown trace: nothing happens */
	ck_assert_uint_eq(n_cached(cc), 5);
	tm_chunk_cache_forget(cc, 2);
	ck_assert_uint_eq(n_cached(cc), 0);
	/* what was forgotten no longer counts: ten new chunks fit again */
	for (uint64_t i = 0; i < 10; i++)
		add(cc, 3, i);
	ck_assert_uint_eq(n_cached(cc), 10);
	tm_chunk_cache_free(cc);
}
END_TEST

/* A small chunk whose trace bytes hold its index and whose record holds its owner. */
struct numbered {
	uint64_t owner, index;
	unsigned calls;
};

static int numbered_loader(void *arg, struct tm_cached_chunk *c)
{
	struct numbered *k = arg;
	k->calls++;
	if (tm_cached_chunk_alloc(c, 8, 1, 8) < 0)
		return -ENOMEM;
	memcpy((void *)c->chunk.raw, &k->index, 8);
	memcpy(c->chunk.records, &k->owner, 8);
	return 0;
}

START_TEST(test_many_entries)
{
	/* many keys across traces, some in the same hash bucket, a budget they fill exactly */
	enum { N_UIDS = 4, N_INDEX = 3000 };
	struct numbered probe = {0};
	struct tm_chunk_cache *cc;
	ck_assert_int_eq(tm_chunk_cache_new(1u << 20, &cc), 0);
	struct tm_cached_chunk *c = NULL;
	ck_assert_int_eq(tm_chunk_cache_load(cc, 1, 0, numbered_loader, &probe, &c), 0);
	size_t m = c->mem;
	tm_chunk_cache_release(cc, c);
	tm_chunk_cache_free(cc);

	ck_assert_int_eq(tm_chunk_cache_new(N_UIDS * N_INDEX * m, &cc), 0);
	for (uint64_t uid = 1; uid <= N_UIDS; uid++)
		for (uint64_t i = 0; i < N_INDEX; i++) {
			struct numbered k = {uid, i, 0};
			ck_assert_int_eq(tm_chunk_cache_load(cc, uid, i, numbered_loader, &k, &c),
					 0);
			ck_assert_uint_eq(k.calls, 1);
			tm_chunk_cache_release(cc, c);
		}
	for (uint64_t uid = 1; uid <= N_UIDS; uid++)
		for (uint64_t i = 0; i < N_INDEX; i++) {
			struct numbered k = {0, 0, 0}; /* would load the wrong bytes */
			ck_assert_int_eq(tm_chunk_cache_load(cc, uid, i, numbered_loader, &k, &c),
					 0);
			ck_assert_uint_eq(k.calls, 0); /* every one still cached */
			uint64_t a, b;
			memcpy(&a, c->chunk.raw, 8);
			memcpy(&b, c->chunk.records, 8);
			ck_assert_uint_eq(a, i);
			ck_assert_uint_eq(b, uid);
			tm_chunk_cache_release(cc, c);
		}
	/* one more evicts exactly the least recently used */
	struct numbered k = {5, 0, 0};
	ck_assert_int_eq(tm_chunk_cache_load(cc, 5, 0, numbered_loader, &k, &c), 0);
	tm_chunk_cache_release(cc, c);
	ck_assert(!tm_chunk_cache_contains(cc, 1, 0));
	ck_assert(tm_chunk_cache_contains(cc, 1, 1));
	ck_assert(tm_chunk_cache_contains(cc, N_UIDS, N_INDEX - 1));
	tm_chunk_cache_free(cc);
}
END_TEST

/* A loader's error is returned as it is, nothing stays cached (what it allocated is freed:
 * LeakSanitizer and valgrind would see it), and the next call loads again. */
START_TEST(test_load_failure)
{
	struct tm_chunk_cache *cc;
	ck_assert_int_eq(tm_chunk_cache_new(1u << 20, &cc), 0);
	add(cc, 5, 0);
	const struct {
		tm_chunk_loader fn;
		uint64_t uid, owner;
		int err;
	} cases[] = {
	    {decode_loader, 6, 6, -EIO},
	    {render_loader, 6, tm_cache_owner(6, 0), -EBADMSG},
	    {decode_loader, 7, 7, -ENOMEM},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct loader bad = {.fail = cases[i].err, .tag = 1};
		struct tm_cached_chunk *c = NULL;
		ck_assert_int_eq(tm_chunk_cache_load(cc, cases[i].owner, 0, cases[i].fn, &bad, &c),
				 cases[i].err);
		ck_assert_ptr_null(c);
		ck_assert_uint_eq(bad.calls, 1);
		ck_assert(!tm_chunk_cache_contains(cc, cases[i].owner, 0));
		ck_assert_uint_eq(n_cached(cc), 1);
		bad.fail = 0;
		c = load(cc, cases[i].owner, 0, cases[i].fn, &bad);
		ck_assert_uint_eq(bad.calls, 2);
		ck_assert_uint_eq(c->bytes ? (uint8_t)c->bytes[0] : raw_of(c)[0], 1);
		tm_chunk_cache_release(cc, c);
		tm_chunk_cache_forget(cc, cases[i].uid);
	}
	ck_assert(touch(cc, 5, 0));
	tm_chunk_cache_free(cc);
}
END_TEST

START_TEST(test_load_evicts)
{
	struct tm_chunk_cache *cc;
	struct loader l = {.tag = 3};
	ck_assert_int_eq(tm_chunk_cache_new(2 * rendered_mem(), &cc), 0);
	for (uint64_t i = 0; i < 5; i++) {
		tm_chunk_cache_release(cc, load(cc, 1, i, render_loader, &l));
		ck_assert_uint_le(n_cached(cc), 2);
	}
	/* 3 and 4 stay, 0 was evicted and loads again */
	ck_assert_uint_eq(l.calls, 5);
	tm_chunk_cache_release(cc, load(cc, 1, 4, render_loader, &l));
	tm_chunk_cache_release(cc, load(cc, 1, 3, render_loader, &l));
	ck_assert_uint_eq(l.calls, 5);
	tm_chunk_cache_release(cc, load(cc, 1, 0, render_loader, &l));
	ck_assert_uint_eq(l.calls, 6);
	/* a load makes room at once, not when its entry is released: 3, the oldest, goes */
	struct tm_cached_chunk *held = load(cc, 1, 5, render_loader, &l);
	ck_assert_uint_eq(n_cached(cc), 2);
	ck_assert(!tm_chunk_cache_contains(cc, 1, 3));
	ck_assert(tm_chunk_cache_contains(cc, 1, 0));
	tm_chunk_cache_release(cc, held);
	tm_chunk_cache_free(cc);
}
END_TEST

/* A loader that allocates a rendered chunk, then looks at the cache: whether (1, 0) is still in. */
struct peek {
	struct tm_chunk_cache *cc;
	bool oldest_cached;
};

static int peek_loader(void *arg, struct tm_cached_chunk *c)
{
	struct peek *p = arg;
	if (!(c->bytes = tm_cached_chunk_malloc(c, RENDERED)))
		return -ENOMEM;
	c->len = RENDERED;
	p->oldest_cached = tm_chunk_cache_contains(p->cc, 1, 0);
	return 0;
}

START_TEST(test_loading_counts)
{
	/* a chunk being loaded counts from its allocation: room is made before it is filled */
	struct tm_chunk_cache *cc;
	struct loader l = {.tag = 3};
	ck_assert_int_eq(tm_chunk_cache_new(2 * rendered_mem(), &cc), 0);
	tm_chunk_cache_release(cc, load(cc, 1, 0, render_loader, &l));
	tm_chunk_cache_release(cc, load(cc, 1, 1, render_loader, &l));
	struct peek p = {cc, true};
	struct tm_cached_chunk *c = NULL;
	ck_assert_int_eq(tm_chunk_cache_load(cc, 1, 2, peek_loader, &p, &c), 0);
	tm_chunk_cache_release(cc, c);
	ck_assert(!p.oldest_cached);
	ck_assert(tm_chunk_cache_contains(cc, 1, 1));
	ck_assert_uint_eq(n_cached(cc), 2);
	tm_chunk_cache_free(cc);
}
END_TEST

/* A thread that loads the rendered chunk (9, 9) with its loader. */
struct load_thread {
	pthread_t thread;
	struct tm_chunk_cache *cc;
	struct loader *l;
	struct tm_cached_chunk *got;
	int ret;
	bool done; /* set atomically once load returned */
};

static void *load_thread(void *p)
{
	struct load_thread *t = p;
	t->ret = tm_chunk_cache_load(t->cc, 9, 9, render_loader, t->l, &t->got);
	__atomic_store_n(&t->done, true, __ATOMIC_SEQ_CST);
	return NULL;
}

static void start(struct load_thread *t, struct tm_chunk_cache *cc, struct loader *l)
{
	*t = (struct load_thread){.cc = cc, .l = l};
	ck_assert_int_eq(pthread_create(&t->thread, NULL, load_thread, t), 0);
}

/* Starts threads first+1 to n after thread `first`'s load reached the gate, and checks that none
 * returns, nor calls a loader, while that load is held; then lets it go and joins them all. */
static void wait_behind(struct load_thread *t, int n, struct gate *g, struct tm_chunk_cache *cc,
			struct loader *const *loaders)
{
	start(&t[0], cc, loaders[0]);
	gate_wait_arrivals(g, 1);		      /* t[0] claimed the key and is loading */
	ck_assert(tm_chunk_cache_contains(cc, 9, 9)); /* being loaded counts */
	for (int i = 1; i < n; i++)
		start(&t[i], cc, loaders[i]);
	sleep_ms(100); /* time to reach the wait */
	for (int i = 0; i < n; i++)
		ck_assert(!__atomic_load_n(&t[i].done, __ATOMIC_SEQ_CST));
	ck_assert_uint_eq(gate_arrivals(g), 1);
	gate_open(g);
	for (int i = 0; i < n; i++)
		pthread_join(t[i].thread, NULL);
}

/* Threads asking for a key being loaded wait for that one load and share its entry. */
START_TEST(test_waiters_share_one_load)
{
	struct tm_chunk_cache *cc;
	struct load_thread t[8];
	ck_assert_int_eq(tm_chunk_cache_new(1u << 20, &cc), 0);

	/* a load in progress is referenced: forgetting its trace keeps it */
	struct gate forget_gate = GATE_INIT;
	struct loader held = {.tag = 0x76, .gate = &forget_gate};
	start(&t[0], cc, &held);
	gate_wait_arrivals(&forget_gate, 1);
	tm_chunk_cache_forget(cc, 9);
	ck_assert(tm_chunk_cache_contains(cc, 9, 9));
	gate_open(&forget_gate);
	pthread_join(t[0].thread, NULL);
	ck_assert_int_eq(t[0].ret, 0);
	ck_assert_uint_eq((uint8_t)t[0].got->bytes[0], 0x76);
	tm_chunk_cache_release(cc, t[0].got);
	tm_chunk_cache_forget(cc, 9);
	ck_assert_uint_eq(n_cached(cc), 0);

	struct gate gate = GATE_INIT;
	struct loader l = {.tag = 0x77, .gate = &gate}, other = {.tag = 0x78};
	struct loader *loaders[8] = {&l, &l, &l, &l, &l, &l, &l, &other};
	wait_behind(t, 8, &gate, cc, loaders);
	ck_assert_uint_eq(l.calls, 1);
	ck_assert_uint_eq(other.calls, 0);
	for (int i = 0; i < 8; i++) {
		ck_assert_int_eq(t[i].ret, 0);
		ck_assert_ptr_eq(t[i].got, t[0].got);
		ck_assert_uint_eq((uint8_t)t[i].got->bytes[50], 0x77);
	}
	ck_assert_uint_eq(t[0].got->refs, 8);
	for (int i = 0; i < 8; i++)
		tm_chunk_cache_release(cc, t[i].got);
	tm_chunk_cache_free(cc);
}
END_TEST

/* Waiters never see a failed load's half-made entry: each loads the key again itself. */
START_TEST(test_waiters_after_failed_load)
{
	struct tm_chunk_cache *cc;
	struct load_thread t[4];
	ck_assert_int_eq(tm_chunk_cache_new(1u << 20, &cc), 0);

	/* all fail: each caller's own loader runs, once */
	struct gate gate = GATE_INIT;
	struct loader bad = {.fail = -EIO, .gate = &gate};
	struct loader *all_bad[3] = {&bad, &bad, &bad};
	wait_behind(t, 3, &gate, cc, all_bad);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(t[i].ret, -EIO);
		ck_assert_ptr_null(t[i].got);
	}
	ck_assert_uint_eq(bad.calls, 3);
	ck_assert(!tm_chunk_cache_contains(cc, 9, 9));
	ck_assert_uint_eq(n_cached(cc), 0);

	/* the first fails: one of the waiters loads it, the others share that */
	struct gate gate2 = GATE_INIT;
	struct loader bad2 = {.fail = -EIO, .gate = &gate2}, good = {.tag = 0x42};
	struct loader *then_good[4] = {&bad2, &good, &good, &good};
	wait_behind(t, 4, &gate2, cc, then_good);
	ck_assert_int_eq(t[0].ret, -EIO);
	ck_assert_ptr_null(t[0].got);
	ck_assert_uint_eq(bad2.calls, 1);
	ck_assert_uint_eq(good.calls, 1);
	for (int i = 1; i < 4; i++) {
		ck_assert_int_eq(t[i].ret, 0);
		ck_assert_ptr_eq(t[i].got, t[1].got);
		ck_assert_uint_eq(t[i].got->len, RENDERED);
		ck_assert_uint_eq((uint8_t)t[i].got->bytes[0], 0x42);
		ck_assert_uint_eq((uint8_t)t[i].got->bytes[RENDERED - 1], 0x42);
	}
	ck_assert_uint_eq(t[1].got->refs, 3);
	for (int i = 1; i < 4; i++)
		tm_chunk_cache_release(cc, t[i].got);
	tm_chunk_cache_forget(cc, 9);
	ck_assert_uint_eq(n_cached(cc), 0);
	tm_chunk_cache_free(cc);
}
END_TEST

START_TEST(test_owner_keys)
{
	struct tm_chunk_cache *cc;
	struct loader l = {.tag = 1};
	ck_assert_int_eq(tm_chunk_cache_new(1u << 20, &cc), 0);
	/* a view's rendered chunks and the trace's decoded chunks are distinct keys */
	ck_assert_uint_ne(tm_cache_owner(1, 0), 1);
	ck_assert_uint_ne(tm_cache_owner(1, 0), tm_cache_owner(1, 1));
	ck_assert_uint_ne(tm_cache_owner(1, 0), tm_cache_owner(2, 0));
	add(cc, 1, 0);
	add(cc, 2, 0);
	for (unsigned v = 0; v < 3; v++) {
		tm_chunk_cache_release(cc, load(cc, tm_cache_owner(1, v), 0, render_loader, &l));
		tm_chunk_cache_release(cc, load(cc, tm_cache_owner(2, v), 0, render_loader, &l));
	}
	ck_assert_uint_eq(l.calls, 6);
	ck_assert_uint_eq(n_cached(cc), 8);
	/* forgetting trace 1 drops its decoded and rendered chunks, and nothing of trace 2 */
	tm_chunk_cache_forget(cc, 1);
	ck_assert(!touch(cc, 1, 0));
	ck_assert(touch(cc, 2, 0));
	for (unsigned v = 0; v < 3; v++) {
		ck_assert(!tm_chunk_cache_contains(cc, tm_cache_owner(1, v), 0));
		struct tm_cached_chunk *c = load(cc, tm_cache_owner(2, v), 0, render_loader, &l);
		ck_assert_uint_eq((uint8_t)c->bytes[0], 1);
		tm_chunk_cache_release(cc, c);
	}
	ck_assert_uint_eq(l.calls, 6);
	ck_assert_uint_eq(n_cached(cc), 4);
	tm_chunk_cache_free(cc);
}
END_TEST

#define HAMMER_RAW  512
#define HAMMER_RECS 4

struct hammer {
	struct tm_chunk_cache *cc;
	uint64_t seed;
	int bad;
};

static void *hammer_thread(void *p)
{
	struct hammer *h = p;
	uint64_t x = h->seed;
	for (int i = 0; i < 20000 && !h->bad; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t uid = 1 + x % 3, index = (x >> 8) % 40;
		uint8_t tag = (uint8_t)(uid * 41 + index);
		struct loader decoded = {
		    .tag = tag, .raw_len = HAMMER_RAW, .n_records = HAMMER_RECS};
		struct tm_cached_chunk *c;
		if (tm_chunk_cache_load(h->cc, uid, index, decode_loader, &decoded, &c) != 0) {
			h->bad = 1;
			break;
		}
		const uint8_t *raw = c->chunk.raw;
		if (c->chunk.raw_len != HAMMER_RAW || raw[0] != tag || raw[HAMMER_RAW - 1] != tag ||
		    c->owner != uid || c->index != index || c->loading)
			h->bad = 1;
		if (x % 97 == 0)
			tm_chunk_cache_forget(h->cc, uid);
		tm_chunk_cache_release(h->cc, c);
		/* the same keys' rendered chunks */
		struct loader rendered = {.tag = tag};
		if (tm_chunk_cache_load(h->cc, tm_cache_owner(uid, 0), index, render_loader,
					&rendered, &c) != 0 ||
		    c->len != RENDERED || (uint8_t)c->bytes[RENDERED - 1] != tag)
			h->bad = 1;
		else
			tm_chunk_cache_release(h->cc, c);
	}
	return NULL;
}

START_TEST(test_threads)
{
	struct tm_chunk_cache *cc;
	struct hammer h[8];
	pthread_t th[8];
	struct loader probe = {.raw_len = HAMMER_RAW, .n_records = HAMMER_RECS};
	size_t m = mem_of(decode_loader, &probe), r = rendered_mem(), budget = 20 * m;
	ck_assert_int_eq(tm_chunk_cache_new(budget, &cc), 0); /* fewer than the 240 keys */
	for (int i = 0; i < 8; i++) {
		h[i] = (struct hammer){.cc = cc, .seed = 0x1234567 + (uint64_t)i * 7919};
		ck_assert_int_eq(pthread_create(&th[i], NULL, hammer_thread, &h[i]), 0);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		ck_assert_msg(!h[i].bad, "thread %d saw a wrong chunk", i);
	}
	/* every reference released: the cache is within its budget */
	size_t used = 0;
	for (uint64_t uid = 1; uid <= 3; uid++)
		for (uint64_t index = 0; index < 40; index++) {
			used += tm_chunk_cache_contains(cc, uid, index) ? m : 0;
			used += tm_chunk_cache_contains(cc, tm_cache_owner(uid, 0), index) ? r : 0;
		}
	ck_assert_uint_gt(used, 0);
	ck_assert_uint_le(used, budget);
	tm_chunk_cache_free(cc);
}
END_TEST

static Suite *chunk_cache_suite(void)
{
	Suite *s = suite_create("chunk_cache");
	TCase *tc = tcase_create("cache");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_load_release);
	tcase_add_test(tc, test_budget);
	tcase_add_test(tc, test_lru_order);
	tcase_add_test(tc, test_referenced_not_evicted);
	tcase_add_test(tc, test_evicted_while_held);
	tcase_add_test(tc, test_contains);
	tcase_add_test(tc, test_forget);
	tcase_add_test(tc, test_many_entries);
	tcase_add_test(tc, test_load_failure);
	tcase_add_test(tc, test_load_evicts);
	tcase_add_test(tc, test_loading_counts);
	tcase_add_test(tc, test_waiters_share_one_load);
	tcase_add_test(tc, test_waiters_after_failed_load);
	tcase_add_test(tc, test_owner_keys);
	tcase_add_test(tc, test_threads);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(chunk_cache_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
