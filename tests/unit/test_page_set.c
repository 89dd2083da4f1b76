/* The page set of plots/footprint.svg (src/plots/page_set.c): every insert's answer (new or not)
 * against one made here by sorting, for runs, random 32-bit addresses, pages anywhere below
 * 2^52, slots' and the window's edges and groups that share a first slot, each in the window
 * and in the slots; and the slots' memory, no more than a slot a page at most half full. */
#include <check.h>
#include <stdlib.h>

#include "plots/plots.h"

struct numbered {
	uint64_t page;
	size_t i;
};

static int cmp_numbered(const void *a, const void *b)
{
	const struct numbered *x = a, *y = b;
	if (x->page != y->page)
		return x->page < y->page ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* new[i]: whether v[i] is not among v[0..i). Returns the number of distinct pages. */
static uint64_t reference_new(const uint64_t *v, size_t n, unsigned char *new)
{
	struct numbered *s = malloc((n + 1) * sizeof(*s));
	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < n; i++)
		s[i] = (struct numbered){v[i], i};
	qsort(s, n, sizeof(*s), cmp_numbered);
	uint64_t d = 0;
	for (size_t k = 0; k < n; k++) {
		new[s[k].i] = k == 0 || s[k].page != s[k - 1].page;
		d += new[s[k].i];
	}
	free(s);
	return d;
}

/* The number of distinct groups of slots that the pages of v outside the window from base
 * take. */
static uint64_t groups_outside(const uint64_t *v, size_t n, uint64_t base)
{
	struct numbered *s = malloc((n + 1) * sizeof(*s));
	ck_assert_ptr_nonnull(s);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i] - base >= TM_PAGE_SET_WINDOW)
			s[m++] = (struct numbered){v[i] / TM_PAGE_SET_GROUP, i};
	qsort(s, m, sizeof(*s), cmp_numbered);
	uint64_t d = 0;
	for (size_t k = 0; k < m; k++)
		d += k == 0 || s[k].page != s[k - 1].page;
	free(s);
	return d;
}

/* Adds v[0..n) after decoy, a page not among them, when there is one (0: none): the window is
 * then the decoy's, and the pages far from it go to the slots. */
static void check_after(const uint64_t *v, size_t n, uint64_t decoy)
{
	unsigned char *want = malloc(n + 1);
	ck_assert_ptr_nonnull(want);
	uint64_t distinct = reference_new(v, n, want);
	struct tm_page_set p = {0}; /* as the plots' state has it: no init */
	if (decoy) {
		ck_assert_int_eq(tm_page_set_add(&p, decoy), 1);
		distinct++;
	}
	for (size_t i = 0; i < n; i++) { /* no ck_assert a page: each writes a mark */
		int got = tm_page_set_add(&p, v[i]);
		if (got != want[i])
			ck_abort_msg("insert %zu of page 0x%llx: %d, expected %d", i,
				     (unsigned long long)v[i], got, want[i]);
	}
	ck_assert_int_eq(p.err, 0);
	ck_assert_uint_eq(p.n, distinct);
	uint64_t base = (decoy ? decoy : n ? v[0] : 0) & ~(uint64_t)(TM_PAGE_SET_WINDOW - 1);
	ck_assert_uint_eq(p.n_used, groups_outside(v, n, base));
	ck_assert(p.n_slots <= 1024 || p.n_slots < 4 * p.n_used);
	size_t again = 0;
	for (size_t i = 0; i < n; i++) /* everything again, backwards: nothing is new */
		again += (size_t)tm_page_set_add(&p, v[n - 1 - i]);
	ck_assert_uint_eq(again, 0);
	ck_assert_uint_eq(p.n, distinct);
	tm_page_set_free(&p);
	ck_assert_ptr_null(p.slot);
	ck_assert_ptr_null(p.window);
	ck_assert_uint_eq(p.n, 0);
	free(want);
}

/* v in the window of its first page, then with the window far away. */
static void check(const uint64_t *v, size_t n)
{
	uint64_t decoy = 0x8765432109876; /* below 2^52, far from the tests' pages */
	size_t hits = 0;
	for (size_t i = 0; i < n; i++)
		hits += v[i] == decoy;
	ck_assert_uint_eq(hits, 0);
	check_after(v, n, 0);
	check_after(v, n, decoy);
}

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

START_TEST(test_runs)
{
	size_t n = 100000;
	uint64_t *v = malloc(n * sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = (0x400000 + i * 64) >> TM_PAGE_SHIFT; /* a run of code, 64 fetches a page */
	check(v, n);
	for (size_t i = 0; i < n; i++) /* stack and heap, alternating */
		v[i] = i % 3 ? 0x7fff0 - i % 50 : 0x400 + i % 7000;
	check(v, n);
	check(v, 0);
	free(v);
}
END_TEST

START_TEST(test_random32)
{
	/* the pages of uniformly random 32-bit addresses: all 2^20, many times over */
	size_t n = 3000000;
	uint64_t *v = malloc(n * sizeof(*v)), x = 99;
	for (size_t i = 0; i < n; i++)
		v[i] = (next(&x) >> 32) >> TM_PAGE_SHIFT;
	check(v, n);
	free(v);
}
END_TEST

START_TEST(test_scattered)
{
	/* anywhere below 2^52, mostly one page a slot: the most memory a page */
	size_t n = 200000;
	uint64_t *v = malloc(n * sizeof(*v)), x = 5;
	for (size_t i = 0; i < n; i++)
		v[i] = i % 4 || !i ? next(&x) >> 12 : v[i / 2]; /* and some again */
	check(v, n);
	free(v);
}
END_TEST

START_TEST(test_edges)
{
	size_t n = 0;
	uint64_t *v = malloc(40000 * sizeof(*v)), x = 11;
	for (uint64_t g = 0; g < 1000; g++) { /* either side of slots' edges, out of order */
		uint64_t edge = g * TM_PAGE_SET_GROUP;
		v[n++] = edge + TM_PAGE_SET_GROUP - 1;
		v[n++] = edge;
		v[n++] = edge + 1;
		v[n++] = edge + TM_PAGE_SET_GROUP;
	}
	for (size_t i = 0; i < 20000; i++) /* the 16 pages of 100 groups, shuffled */
		v[n++] = (next(&x) % 100) * 1000003 * TM_PAGE_SET_GROUP + next(&x) % 16;
	static const uint64_t ends[] = {
	    0, 1, 15, 16, (1ull << 52) - 1, (1ull << 52) - 16, (1ull << 52) - 17, (1ull << 51)};
	for (size_t k = 0; k < sizeof(ends) / sizeof(ends[0]); k++)
		v[n++] = ends[k];
	check(v, n);
	free(v);
}
END_TEST

START_TEST(test_window_edges)
{
	/* the window is the first page's 2^20 pages: either side of both its ends, a group of
	 * slots a page outside, and far below */
	const uint64_t first = 0x123c5678, base = first & ~(uint64_t)(TM_PAGE_SET_WINDOW - 1);
	size_t n = 0;
	uint64_t *v = malloc(4000 * sizeof(*v));
	v[n++] = first;
	for (uint64_t k = 0; k < 500; k++) {
		uint64_t step = k % 40 * TM_PAGE_SET_GROUP;
		v[n++] = base + TM_PAGE_SET_WINDOW - 1 - k % 40;
		v[n++] = base + TM_PAGE_SET_WINDOW + step;
		v[n++] = base - 1 - step;
		v[n++] = base + k % 40;
		v[n++] = k % 20; /* page - base wraps round */
	}
	check_after(v, n, 0);
	free(v);
}
END_TEST

START_TEST(test_colliding_groups)
{
	/* 400 groups whose hash shares its top 16 bits with group 0's: one first slot for all at
	 * every table size up to 2^16 slots, so long probe runs through every growth */
	size_t n = 0;
	uint64_t *v = malloc(4000 * sizeof(*v));
	for (uint64_t g = 0; n < 4000; g++) {
		if ((g * 0x9e3779b97f4a7c15ull) >> 48)
			continue;
		for (unsigned k = 0; k < 10; k++)
			v[n++] = g * TM_PAGE_SET_GROUP + (k * 7) % TM_PAGE_SET_GROUP;
	}
	check(v, n);
	free(v);
}
END_TEST

static Suite *page_set_suite(void)
{
	Suite *s = suite_create("page_set");
	TCase *tc = tcase_create("new");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_runs);
	tcase_add_test(tc, test_random32);
	tcase_add_test(tc, test_scattered);
	tcase_add_test(tc, test_edges);
	tcase_add_test(tc, test_window_edges);
	tcase_add_test(tc, test_colliding_groups);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(page_set_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
