/* Distinct-member counting against a count made here by sorting: members, blocks (the callers'
 * caps count them) and groups, for runs, random 32-bit addresses, keys that share a slot, block
 * edges and the ends of the range. */
#include <check.h>
#include <stdlib.h>

#include "tracemount/footprint.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The number of distinct (v[i] >> shift). */
static uint64_t reference_count_shifted(const uint64_t *v, size_t n, unsigned shift)
{
	uint64_t *s = malloc((n + 1) * sizeof(*s));
	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < n; i++)
		s[i] = v[i] >> shift;
	qsort(s, n, sizeof(*s), cmp_u64);
	uint64_t d = 0;
	for (size_t i = 0; i < n; i++)
		d += i == 0 || s[i] != s[i - 1];
	free(s);
	return d;
}

static uint64_t reference_count(const uint64_t *v, size_t n)
{
	return reference_count_shifted(v, n, 0);
}

/* The blocks made and every group count, against the reference. */
static void check_groups(struct tm_footprint *f, const uint64_t *v, size_t n)
{
	ck_assert_uint_eq(f->n_blocks, reference_count_shifted(v, n, TM_FOOTPRINT_BLOCK_BITS));
	ck_assert_uint_eq(tm_footprint_count_groups64(f), reference_count_shifted(v, n, 6));
	static const unsigned shifts[] = {0, 1, 4, 6, 7, 10, TM_FOOTPRINT_BLOCK_BITS};
	for (size_t k = 0; k < sizeof(shifts) / sizeof(shifts[0]); k++)
		ck_assert_uint_eq(tm_footprint_count_groups(f, shifts[k]),
				  reference_count_shifted(v, n, shifts[k]));
}

static void check(const uint64_t *v, size_t n)
{
	struct tm_footprint f;
	tm_footprint_init(&f);
	ck_assert_uint_eq(tm_footprint_count(&f), 0);
	ck_assert_uint_eq(tm_footprint_count_groups(&f, 10), 0);
	for (size_t i = 0; i < n; i++)
		tm_footprint_add(&f, v[i]);
	ck_assert_int_eq(f.err, 0);
	uint64_t want = reference_count(v, n), got = tm_footprint_count(&f);
	ck_assert_msg(got == want, "%llu distinct, expected %llu", (unsigned long long)got,
		      (unsigned long long)want);
	check_groups(&f, v, n);
	/* adding everything again changes nothing */
	for (size_t i = 0; i < n; i++)
		tm_footprint_add(&f, v[n - 1 - i]);
	ck_assert_uint_eq(tm_footprint_count(&f), want);
	check_groups(&f, v, n);
	tm_footprint_free(&f);
}

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

START_TEST(test_sequential)
{
	size_t n = 200000;
	uint64_t *v = malloc(n * sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = i;
	check(v, n);
	for (size_t i = 0; i < n; i++) /* across a block edge, not starting at one */
		v[i] = 12345 + i;
	check(v, n);
	free(v);
}
END_TEST

START_TEST(test_repeated)
{
	size_t n = 50000;
	uint64_t *v = malloc(n * sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = (i * 7) % 1000;
	check(v, n);
	for (size_t i = 0; i < n; i++)
		v[i] = 42;
	check(v, n);
	check(v, 0);
	free(v);
}
END_TEST

START_TEST(test_sparse)
{
	size_t n = 3000;
	uint64_t *v = malloc(n * sizeof(*v));
	/* one member per block: a new block each time, power-of-two strides */
	for (size_t i = 0; i < n; i++)
		v[i] = (uint64_t)i << 20;
	check(v, n);
	for (size_t i = 0; i < n; i++)
		v[i] = ((uint64_t)(i % 100) << 15) + i % 7; /* 100 blocks, 7 members each */
	check(v, n);
	free(v);
}
END_TEST

START_TEST(test_huge_members)
{
	size_t n = 2000;
	uint64_t *v = malloc(n * sizeof(*v)), x = 88172645463325252ull;
	for (size_t i = 0; i < n; i++)
		v[i] = next(&x); /* anywhere in 64 bits */
	check(v, n);
	for (size_t i = 0; i < n; i++)
		v[i] = UINT64_MAX - i % 1500; /* the top of the range */
	check(v, n);
	for (size_t i = 0; i < n; i++)
		v[i] = i % 2 ? UINT64_MAX - i : i; /* both ends */
	check(v, n);
	free(v);
}
END_TEST

START_TEST(test_mixed_random)
{
	/* clustered like a trace's lines: a few regions, random offsets */
	size_t n = 300000;
	uint64_t *v = malloc(n * sizeof(*v)), x = 7;
	for (size_t i = 0; i < n; i++) {
		uint64_t r = next(&x);
		v[i] = ((r >> 60) << 40) + (r >> 8) % 200000;
	}
	check(v, n);
	free(v);
}
END_TEST

START_TEST(test_random32)
{
	/* the 64-byte lines of uniformly random 32-bit addresses: every block of 2^26 lines */
	size_t n = 1000000;
	uint64_t *v = malloc(n * sizeof(*v)), x = 12345;
	for (size_t i = 0; i < n; i++)
		v[i] = (next(&x) >> 32) >> 6;
	check(v, n);
	for (size_t i = 0; i < n; i++) /* and dense: every line of 2^14 pages, shuffled */
		v[i] = (next(&x) >> 32) % ((size_t)1 << 20);
	check(v, n);
	free(v);
}
END_TEST

START_TEST(test_block_edges)
{
	size_t n = 0;
	uint64_t *v = malloc(6000 * sizeof(*v));
	for (uint64_t k = 1; k < 1000; k++) { /* either side of each edge, and the words there */
		uint64_t edge = k << TM_FOOTPRINT_BLOCK_BITS;
		v[n++] = edge - 1;
		v[n++] = edge;
		v[n++] = edge + 63;
		v[n++] = edge + 64;
	}
	static const uint64_t ends[] = {0,
					1,
					63,
					64,
					UINT64_MAX,
					UINT64_MAX - 1,
					UINT64_MAX - ((1ull << TM_FOOTPRINT_BLOCK_BITS) - 1),
					UINT64_MAX - (1ull << TM_FOOTPRINT_BLOCK_BITS)};
	for (size_t k = 0; k < sizeof(ends) / sizeof(ends[0]); k++)
		v[n++] = ends[k];
	check(v, n);
	free(v);
}
END_TEST

/* Whether key's Fibonacci hash has the same top 16 bits as key 0's (0): the same first slot at
 * every table size up to 2^16 slots. */
static int collides_with_0(uint64_t key)
{
	return (key * 0x9e3779b97f4a7c15ull) >> 48 == 0;
}

START_TEST(test_colliding_keys)
{
	/* 300 blocks whose keys share their first slot: long probe runs, through every growth */
	size_t n = 0;
	uint64_t *v = malloc(3000 * sizeof(*v));
	for (uint64_t key = 0; n < 3000; key++) {
		if (!collides_with_0(key))
			continue;
		for (unsigned m = 0; m < 10; m++)
			v[n++] = (key << TM_FOOTPRINT_BLOCK_BITS) + m * 977;
	}
	check(v, n);
	free(v);
}
END_TEST

START_TEST(test_cap)
{
	/* a caller's cap on blocks (tarmac_stats.c, cis501_stats.c) stops all inserts once
	 * n_blocks reaches it: n_blocks must count exactly the blocks made so far */
	enum { CAP = 40, N = 20000 };
	uint64_t *v = malloc(N * sizeof(*v)), keys[CAP + 1], x = 3;
	size_t n_keys = 0, n = 0;
	struct tm_footprint f;
	tm_footprint_init(&f);
	for (; n < N && n_keys < CAP; n++) {
		v[n] = next(&x) % (100ull << TM_FOOTPRINT_BLOCK_BITS); /* 100 blocks */
		uint64_t key = v[n] >> TM_FOOTPRINT_BLOCK_BITS;
		size_t k = 0;
		while (k < n_keys && keys[k] != key)
			k++;
		if (k == n_keys)
			keys[n_keys++] = key;
		ck_assert_uint_lt(f.n_blocks, CAP);
		tm_footprint_add(&f, v[n]);
		ck_assert_uint_eq(f.n_blocks, n_keys);
	}
	ck_assert_uint_eq(f.n_blocks, CAP);
	ck_assert_uint_eq(tm_footprint_count(&f), reference_count(v, n));
	check_groups(&f, v, n);
	tm_footprint_free(&f);
	free(v);
}
END_TEST

static Suite *footprint_suite(void)
{
	Suite *s = suite_create("footprint");
	TCase *tc = tcase_create("count");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_sequential);
	tcase_add_test(tc, test_repeated);
	tcase_add_test(tc, test_sparse);
	tcase_add_test(tc, test_huge_members);
	tcase_add_test(tc, test_mixed_random);
	tcase_add_test(tc, test_random32);
	tcase_add_test(tc, test_block_edges);
	tcase_add_test(tc, test_colliding_keys);
	tcase_add_test(tc, test_cap);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(footprint_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
