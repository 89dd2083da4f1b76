/* The LRU cache of decoded chunks: references, eviction order, duplicates, forgetting a
 * trace, the byte count, and many threads at once. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tracemount/chunk_cache.h"

#define RAW   1000
#define RECS  10
#define RSIZE 16

static struct tm_cached_chunk *make(uint8_t fill)
{
	struct tm_cached_chunk *c = tm_cached_chunk_new(RAW, RECS, RSIZE);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->chunk.raw_len, RAW);
	ck_assert_uint_eq(c->chunk.record_size, RSIZE);
	/* the budget counts at least the records and the trace bytes */
	ck_assert_uint_ge(c->mem, RAW + RECS * RSIZE);
	memset((void *)c->chunk.raw, fill, RAW);
	memset(c->chunk.records, fill, RECS * RSIZE);
	return c;
}

static size_t one_mem(void)
{
	struct tm_cached_chunk *c = make(0);
	size_t m = c->mem;
	tm_cached_chunk_free(c);
	return m;
}

static size_t used_of(struct tm_chunk_cache *cc)
{
	size_t used, budget;
	tm_chunk_cache_usage(cc, &used, &budget);
	return used;
}

/* Puts (uid, index) and releases it at once; returns the entry. */
static struct tm_cached_chunk *put_released(struct tm_chunk_cache *cc, uint64_t uid, uint64_t index)
{
	struct tm_cached_chunk *c = tm_chunk_cache_put(cc, uid, index, make((uint8_t)index));
	ck_assert_ptr_nonnull(c);
	tm_chunk_cache_release(cc, c);
	return c;
}

static int present(struct tm_chunk_cache *cc, uint64_t uid, uint64_t index)
{
	struct tm_cached_chunk *c = tm_chunk_cache_get(cc, uid, index);
	if (!c)
		return 0;
	ck_assert_uint_eq(((const uint8_t *)c->chunk.raw)[RAW - 1], (uint8_t)index);
	tm_chunk_cache_release(cc, c);
	return 1;
}

START_TEST(test_get_put_release)
{
	struct tm_chunk_cache *cc;
	size_t used, budget;
	ck_assert_int_eq(tm_chunk_cache_new(1u << 20, &cc), 0);
	tm_chunk_cache_usage(cc, &used, &budget);
	ck_assert_uint_eq(used, 0);
	ck_assert_uint_eq(budget, 1u << 20);
	ck_assert_ptr_null(tm_chunk_cache_get(cc, 1, 0));

	struct tm_cached_chunk *c = make(7);
	struct tm_cached_chunk *got = tm_chunk_cache_put(cc, 1, 0, c);
	ck_assert_ptr_eq(got, c);
	ck_assert_uint_eq(c->refs, 1);
	ck_assert_uint_eq(c->trace_uid, 1);
	ck_assert_uint_eq(c->index, 0);
	ck_assert_uint_eq(used_of(cc), c->mem);

	struct tm_cached_chunk *again = tm_chunk_cache_get(cc, 1, 0);
	ck_assert_ptr_eq(again, c);
	ck_assert_uint_eq(c->refs, 2);
	tm_chunk_cache_release(cc, again);
	tm_chunk_cache_release(cc, c);
	ck_assert_uint_eq(c->refs, 0);

	/* other keys: other uid, other index */
	ck_assert_ptr_null(tm_chunk_cache_get(cc, 2, 0));
	ck_assert_ptr_null(tm_chunk_cache_get(cc, 1, 1));
	/* still cached after the last release while within budget */
	got = tm_chunk_cache_get(cc, 1, 0);
	ck_assert_ptr_eq(got, c);
	ck_assert_uint_eq(((const uint8_t *)got->chunk.raw)[0], 7);
	tm_chunk_cache_release(cc, got);
	tm_chunk_cache_free(cc);
}
END_TEST

START_TEST(test_duplicate_put)
{
	struct tm_chunk_cache *cc;
	ck_assert_int_eq(tm_chunk_cache_new(1u << 20, &cc), 0);
	struct tm_cached_chunk *first = tm_chunk_cache_put(cc, 3, 9, make(1));
	size_t used = used_of(cc);
	/* the second copy is freed (LeakSanitizer would see it otherwise) */
	struct tm_cached_chunk *second = tm_chunk_cache_put(cc, 3, 9, make(2));
	ck_assert_ptr_eq(second, first);
	ck_assert_uint_eq(first->refs, 2);
	ck_assert_uint_eq(((const uint8_t *)first->chunk.raw)[0], 1);
	ck_assert_uint_eq(used_of(cc), used);
	tm_chunk_cache_release(cc, first);
	tm_chunk_cache_release(cc, second);
	tm_chunk_cache_free(cc);
}
END_TEST

START_TEST(test_lru_order)
{
	size_t m = one_mem();
	struct tm_chunk_cache *cc;
	ck_assert_int_eq(tm_chunk_cache_new(3 * m, &cc), 0); /* room for three */
	put_released(cc, 1, 1);
	put_released(cc, 1, 2);
	put_released(cc, 1, 3);
	ck_assert_uint_eq(used_of(cc), 3 * m);
	/* touch 1: 2 is now the least recently used */
	ck_assert(present(cc, 1, 1));
	put_released(cc, 1, 4);
	ck_assert_uint_eq(used_of(cc), 3 * m);
	ck_assert(!present(cc, 1, 2));
	/* order now, oldest first: 3, 1, 4 (present() above touched 1 and only that) */
	put_released(cc, 1, 5);
	ck_assert(!present(cc, 1, 3));
	ck_assert(present(cc, 1, 1)); /* 4, 5, 1 */
	put_released(cc, 1, 6);	      /* evicts 4 */
	ck_assert(!present(cc, 1, 4));
	ck_assert(present(cc, 1, 5));
	ck_assert(present(cc, 1, 6));
	ck_assert(present(cc, 1, 1));
	ck_assert_uint_eq(used_of(cc), 3 * m);
	tm_chunk_cache_free(cc);
}
END_TEST

START_TEST(test_referenced_not_evicted)
{
	size_t m = one_mem();
	struct tm_chunk_cache *cc;
	ck_assert_int_eq(tm_chunk_cache_new(2 * m, &cc), 0); /* room for two */
	struct tm_cached_chunk *held = tm_chunk_cache_put(cc, 1, 1, make(1));
	put_released(cc, 1, 2);
	put_released(cc, 1, 3); /* 1 is the oldest but held: 2 goes */
	ck_assert_uint_eq(((const uint8_t *)held->chunk.raw)[0], 1);
	ck_assert(!present(cc, 1, 2));
	ck_assert(present(cc, 1, 3));
	struct tm_cached_chunk *c1 = tm_chunk_cache_get(cc, 1, 1);
	ck_assert_ptr_eq(c1, held);
	tm_chunk_cache_release(cc, c1);

	/* everything held: the cache goes over budget rather than free a chunk in use */
	struct tm_cached_chunk *h3 = tm_chunk_cache_get(cc, 1, 3);
	struct tm_cached_chunk *h4 = tm_chunk_cache_put(cc, 1, 4, make(4));
	ck_assert_uint_eq(used_of(cc), 3 * m);
	memset((void *)held->chunk.raw, 0x11, RAW); /* still ours to use */
	memset((void *)h3->chunk.raw, 0x13, RAW);
	/* releases bring it back within budget */
	tm_chunk_cache_release(cc, held);
	ck_assert_uint_le(used_of(cc), 2 * m);
	tm_chunk_cache_release(cc, h3);
	tm_chunk_cache_release(cc, h4);
	ck_assert_uint_le(used_of(cc), 2 * m);
	ck_assert(present(cc, 1, 4));
	tm_chunk_cache_free(cc);
}
END_TEST

START_TEST(test_evicted_while_held)
{
	size_t m = one_mem();
	struct tm_chunk_cache *cc;
	ck_assert_int_eq(tm_chunk_cache_new(m, &cc), 0);
	struct tm_cached_chunk *a = tm_chunk_cache_put(cc, 1, 1, make(0xa));
	struct tm_cached_chunk *b = tm_chunk_cache_put(cc, 1, 2, make(0xb));
	tm_chunk_cache_release(cc, a); /* a is unreferenced and over budget: gone */
	ck_assert(!present(cc, 1, 1));
	ck_assert_uint_eq(((const uint8_t *)b->chunk.raw)[0], 0xb);
	tm_chunk_cache_release(cc, b);
	ck_assert_uint_eq(used_of(cc), m);
	tm_chunk_cache_free(cc); /* frees b */
}
END_TEST

START_TEST(test_forget)
{
	struct tm_chunk_cache *cc;
	ck_assert_int_eq(tm_chunk_cache_new(1u << 20, &cc), 0);
	size_t m = one_mem();
	for (uint64_t i = 0; i < 5; i++) {
		put_released(cc, 1, i);
		put_released(cc, 2, i);
	}
	struct tm_cached_chunk *held = tm_chunk_cache_get(cc, 1, 3);
	ck_assert_uint_eq(used_of(cc), 10 * m);
	tm_chunk_cache_forget(cc, 1);
	/* the held chunk stays (it is in use); the others of trace 1 go */
	ck_assert_uint_eq(used_of(cc), 6 * m);
	for (uint64_t i = 0; i < 5; i++) {
		ck_assert(present(cc, 2, i));
		if (i != 3)
			ck_assert(!present(cc, 1, i));
	}
	tm_chunk_cache_release(cc, held);
	tm_chunk_cache_forget(cc, 1);
	ck_assert(!present(cc, 1, 3));
	ck_assert_uint_eq(used_of(cc), 5 * m);
	tm_chunk_cache_forget(cc, 99); /* unknown trace: nothing happens */
	ck_assert_uint_eq(used_of(cc), 5 * m);
	tm_chunk_cache_forget(cc, 2);
	ck_assert_uint_eq(used_of(cc), 0);
	tm_chunk_cache_free(cc);
}
END_TEST

START_TEST(test_many_entries)
{
	/* many keys across traces, some in the same hash bucket, no eviction */
	struct tm_chunk_cache *cc;
	ck_assert_int_eq(tm_chunk_cache_new((size_t)1 << 30, &cc), 0);
	struct tm_cached_chunk *probe = tm_cached_chunk_new(8, 1, 8);
	size_t m = probe->mem;
	tm_cached_chunk_free(probe);
	for (uint64_t uid = 1; uid <= 4; uid++)
		for (uint64_t i = 0; i < 3000; i++) {
			struct tm_cached_chunk *c = tm_cached_chunk_new(8, 1, 8);
			ck_assert_ptr_nonnull(c);
			memcpy((void *)c->chunk.raw, &i, 8);
			memcpy(c->chunk.records, &uid, 8);
			tm_chunk_cache_release(cc, tm_chunk_cache_put(cc, uid, i, c));
		}
	for (uint64_t uid = 1; uid <= 4; uid++)
		for (uint64_t i = 0; i < 3000; i++) {
			struct tm_cached_chunk *c = tm_chunk_cache_get(cc, uid, i);
			ck_assert_ptr_nonnull(c);
			uint64_t a, b;
			memcpy(&a, c->chunk.raw, 8);
			memcpy(&b, c->chunk.records, 8);
			ck_assert_uint_eq(a, i);
			ck_assert_uint_eq(b, uid);
			tm_chunk_cache_release(cc, c);
		}
	ck_assert_uint_eq(used_of(cc), 12000 * m);
	tm_chunk_cache_free(cc);
}
END_TEST

struct loader_arg {
	unsigned calls; /* counted atomically */
	int fail;	/* returned instead of loading (after allocating, to check cleanup) */
	long delay_ms;
	uint8_t tag;
};

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Loads 100 bytes of a->tag as a rendered chunk. */
static int loader(void *arg, struct tm_cached_chunk *c)
{
	struct loader_arg *a = arg;
	__atomic_add_fetch(&a->calls, 1, __ATOMIC_SEQ_CST);
	if (a->delay_ms)
		sleep_ms(a->delay_ms);
	c->bytes = malloc(100);
	if (!c->bytes)
		return -ENOMEM;
	if (a->fail)
		return a->fail; /* the cache frees what was allocated */
	memset(c->bytes, a->tag, 100);
	c->len = 100;
	c->mem = sizeof(*c) + 100;
	return 0;
}

START_TEST(test_load)
{
	struct tm_chunk_cache *cc;
	struct loader_arg a = {.tag = 0x5a};
	struct tm_cached_chunk *c = NULL, *c2 = NULL;
	ck_assert_int_eq(tm_chunk_cache_new(1u << 20, &cc), 0);

	ck_assert_int_eq(tm_chunk_cache_load(cc, 5, 1, loader, &a, &c), 0);
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->len, 100);
	ck_assert_uint_eq((uint8_t)c->bytes[99], 0x5a);
	ck_assert_uint_eq(c->refs, 1);
	ck_assert_uint_eq(used_of(cc), sizeof(*c) + 100);

	/* loaded once per key */
	ck_assert_int_eq(tm_chunk_cache_load(cc, 5, 1, loader, &a, &c2), 0);
	ck_assert_ptr_eq(c2, c);
	ck_assert_uint_eq(a.calls, 1);
	ck_assert_uint_eq(c->refs, 2);
	struct tm_cached_chunk *g = tm_chunk_cache_get(cc, 5, 1);
	ck_assert_ptr_eq(g, c);
	tm_chunk_cache_release(cc, g);
	tm_chunk_cache_release(cc, c2);
	tm_chunk_cache_release(cc, c);
	/* another index, another load */
	ck_assert_int_eq(tm_chunk_cache_load(cc, 5, 2, loader, &a, &c), 0);
	ck_assert_uint_eq(a.calls, 2);
	tm_chunk_cache_release(cc, c);
	ck_assert_uint_eq(used_of(cc), 2 * (sizeof(*c) + 100));

	/* a failed load leaves nothing behind, and the next call tries again */
	struct loader_arg bad = {.fail = -EIO, .tag = 1};
	c = NULL;
	ck_assert_int_eq(tm_chunk_cache_load(cc, 6, 0, loader, &bad, &c), -EIO);
	ck_assert_ptr_null(c);
	ck_assert_ptr_null(tm_chunk_cache_get(cc, 6, 0));
	ck_assert_uint_eq(used_of(cc), 2 * (sizeof(*c) + 100));
	bad.fail = 0;
	ck_assert_int_eq(tm_chunk_cache_load(cc, 6, 0, loader, &bad, &c), 0);
	ck_assert_uint_eq(bad.calls, 2);
	ck_assert_uint_eq((uint8_t)c->bytes[0], 1);
	tm_chunk_cache_release(cc, c);
	tm_chunk_cache_free(cc);
}
END_TEST

START_TEST(test_load_evicts)
{
	struct tm_chunk_cache *cc;
	struct loader_arg a = {.tag = 3};
	struct tm_cached_chunk *c;
	size_t m = sizeof(struct tm_cached_chunk) + 100;
	ck_assert_int_eq(tm_chunk_cache_new(2 * m, &cc), 0);
	for (uint64_t i = 0; i < 5; i++) {
		ck_assert_int_eq(tm_chunk_cache_load(cc, 1, i, loader, &a, &c), 0);
		tm_chunk_cache_release(cc, c);
		ck_assert_uint_le(used_of(cc), 2 * m);
	}
	/* 3 and 4 stay, 0 was evicted and loads again */
	ck_assert_uint_eq(a.calls, 5);
	ck_assert_int_eq(tm_chunk_cache_load(cc, 1, 4, loader, &a, &c), 0);
	tm_chunk_cache_release(cc, c);
	ck_assert_uint_eq(a.calls, 5);
	ck_assert_int_eq(tm_chunk_cache_load(cc, 1, 0, loader, &a, &c), 0);
	tm_chunk_cache_release(cc, c);
	ck_assert_uint_eq(a.calls, 6);
	tm_chunk_cache_free(cc);
}
END_TEST

struct load_thread {
	struct tm_chunk_cache *cc;
	struct loader_arg *a;
	struct tm_cached_chunk *got;
	int ret;
};

static void *load_thread(void *p)
{
	struct load_thread *t = p;
	t->ret = tm_chunk_cache_load(t->cc, 9, 9, loader, t->a, &t->got);
	return NULL;
}

static void *get_thread(void *p)
{
	struct load_thread *t = p;
	t->got = tm_chunk_cache_get(t->cc, 9, 9);
	return NULL;
}

/* Threads asking for a key being loaded wait for that one load. */
START_TEST(test_load_concurrent)
{
	struct tm_chunk_cache *cc;
	struct loader_arg a = {.delay_ms = 100, .tag = 0x77};
	struct load_thread t[8];
	pthread_t th[8];
	ck_assert_int_eq(tm_chunk_cache_new(1u << 20, &cc), 0);
	for (int i = 0; i < 8; i++) {
		t[i] = (struct load_thread){.cc = cc, .a = &a};
		ck_assert_int_eq(
		    pthread_create(&th[i], NULL, i == 7 ? get_thread : load_thread, &t[i]), 0);
		if (i == 0)
			sleep_ms(
			    20); /* the first claims the key; the others arrive during its load */
	}
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	ck_assert_uint_eq(a.calls, 1);
	for (int i = 0; i < 8; i++) {
		ck_assert_int_eq(t[i].ret, 0);
		ck_assert_ptr_eq(t[i].got, t[0].got);
		ck_assert_uint_eq((uint8_t)t[i].got->bytes[50], 0x77);
	}
	ck_assert_uint_eq(t[0].got->refs, 8);
	for (int i = 0; i < 8; i++)
		tm_chunk_cache_release(cc, t[i].got);

	/* a load that fails: the waiters do not see a half-made entry */
	struct loader_arg bad = {.delay_ms = 100, .fail = -EIO};
	tm_chunk_cache_forget(cc, 9);
	for (int i = 0; i < 3; i++) {
		t[i] = (struct load_thread){.cc = cc, .a = &bad};
		ck_assert_int_eq(
		    pthread_create(&th[i], NULL, i == 2 ? get_thread : load_thread, &t[i]), 0);
		if (i == 0)
			sleep_ms(20);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	ck_assert_int_eq(t[0].ret, -EIO);
	ck_assert_ptr_null(t[2].got);
	/* the second loader either waited and loaded again, or failed the same way */
	ck_assert(t[1].ret == -EIO);
	ck_assert_uint_eq(bad.calls, 2);
	ck_assert_uint_eq(used_of(cc), 0);
	tm_chunk_cache_free(cc);
}
END_TEST

START_TEST(test_owner_keys)
{
	struct tm_chunk_cache *cc;
	struct loader_arg a = {.tag = 1};
	struct tm_cached_chunk *c;
	ck_assert_int_eq(tm_chunk_cache_new(1u << 20, &cc), 0);
	/* a view's rendered chunks and the trace's decoded chunks are distinct keys */
	ck_assert_uint_ne(tm_cache_owner(1, 0), 1);
	ck_assert_uint_ne(tm_cache_owner(1, 0), tm_cache_owner(1, 1));
	ck_assert_uint_ne(tm_cache_owner(1, 0), tm_cache_owner(2, 0));
	put_released(cc, 1, 0);
	put_released(cc, 2, 0);
	for (unsigned v = 0; v < 3; v++) {
		ck_assert_int_eq(tm_chunk_cache_load(cc, tm_cache_owner(1, v), 0, loader, &a, &c),
				 0);
		tm_chunk_cache_release(cc, c);
		ck_assert_int_eq(tm_chunk_cache_load(cc, tm_cache_owner(2, v), 0, loader, &a, &c),
				 0);
		tm_chunk_cache_release(cc, c);
	}
	ck_assert_uint_eq(a.calls, 6);
	/* forgetting trace 1 drops its decoded and rendered chunks, and nothing of trace 2 */
	tm_chunk_cache_forget(cc, 1);
	ck_assert(!present(cc, 1, 0));
	ck_assert(present(cc, 2, 0));
	for (unsigned v = 0; v < 3; v++) {
		ck_assert_ptr_null(tm_chunk_cache_get(cc, tm_cache_owner(1, v), 0));
		c = tm_chunk_cache_get(cc, tm_cache_owner(2, v), 0);
		ck_assert_ptr_nonnull(c);
		tm_chunk_cache_release(cc, c);
	}
	tm_chunk_cache_free(cc);
}
END_TEST

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
		struct tm_cached_chunk *c = tm_chunk_cache_get(h->cc, uid, index);
		if (!c) {
			struct tm_cached_chunk *n = tm_cached_chunk_new(512, 4, 16);
			if (!n) {
				h->bad = 1;
				break;
			}
			memset((void *)n->chunk.raw, tag, 512);
			c = tm_chunk_cache_put(h->cc, uid, index, n);
		}
		const uint8_t *raw = c->chunk.raw;
		if (raw[0] != tag || raw[511] != tag || c->trace_uid != uid || c->index != index)
			h->bad = 1;
		if (x % 97 == 0)
			tm_chunk_cache_forget(h->cc, uid);
		tm_chunk_cache_release(h->cc, c);
		/* the same keys' rendered chunks, through the loader */
		struct loader_arg a = {.tag = tag};
		if (tm_chunk_cache_load(h->cc, tm_cache_owner(uid, 0), index, loader, &a, &c) !=
			0 ||
		    c->len != 100 || (uint8_t)c->bytes[99] != tag)
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
	struct tm_cached_chunk *probe = tm_cached_chunk_new(512, 4, 16);
	size_t m = probe->mem;
	tm_cached_chunk_free(probe);
	ck_assert_int_eq(tm_chunk_cache_new(20 * m, &cc), 0); /* fewer than the 120 keys */
	for (int i = 0; i < 8; i++) {
		h[i] = (struct hammer){.cc = cc, .seed = 0x1234567 + (uint64_t)i * 7919};
		ck_assert_int_eq(pthread_create(&th[i], NULL, hammer_thread, &h[i]), 0);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		ck_assert_msg(!h[i].bad, "thread %d saw a wrong chunk", i);
	}
	size_t used, budget;
	tm_chunk_cache_usage(cc, &used, &budget);
	ck_assert_uint_le(used, budget);
	tm_chunk_cache_free(cc);
}
END_TEST

static Suite *chunk_cache_suite(void)
{
	Suite *s = suite_create("chunk_cache");
	TCase *tc = tcase_create("cache");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_get_put_release);
	tcase_add_test(tc, test_duplicate_put);
	tcase_add_test(tc, test_lru_order);
	tcase_add_test(tc, test_referenced_not_evicted);
	tcase_add_test(tc, test_evicted_while_held);
	tcase_add_test(tc, test_forget);
	tcase_add_test(tc, test_many_entries);
	tcase_add_test(tc, test_load);
	tcase_add_test(tc, test_load_evicts);
	tcase_add_test(tc, test_load_concurrent);
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
