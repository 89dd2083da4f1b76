/* Distinct-member counting against a count made here by sorting. */
#include <check.h>
#include <stdlib.h>

#include "tracemount/footprint.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t reference_count(const uint64_t *v, size_t n)
{
	uint64_t *s = malloc((n + 1) * sizeof(*s));
	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < n; i++)
		s[i] = v[i];
	qsort(s, n, sizeof(*s), cmp_u64);
	uint64_t d = 0;
	for (size_t i = 0; i < n; i++)
		d += i == 0 || s[i] != s[i - 1];
	free(s);
	return d;
}

static void check(const uint64_t *v, size_t n)
{
	struct tm_footprint f;
	tm_footprint_init(&f);
	ck_assert_uint_eq(tm_footprint_count(&f), 0);
	for (size_t i = 0; i < n; i++)
		tm_footprint_add(&f, v[i]);
	ck_assert_int_eq(f.err, 0);
	uint64_t want = reference_count(v, n), got = tm_footprint_count(&f);
	ck_assert_msg(got == want, "%llu distinct, expected %llu", (unsigned long long)got,
		      (unsigned long long)want);
	/* adding everything again changes nothing */
	for (size_t i = 0; i < n; i++)
		tm_footprint_add(&f, v[n - 1 - i]);
	ck_assert_uint_eq(tm_footprint_count(&f), want);
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
