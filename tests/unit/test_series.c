/* The series of plots/processors.svg and plots/sync.svg (src/plots/series.c): events counted
 * over an axis in at most 256 slices, against a brute-force count of the same events; the
 * columns of the first ids and the others; the plot's lanes and the data they carry, well-formed
 * (by xmllint where it is installed), the same bytes twice, no script or external resource. */
#include <check.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plots/series.h"
#include "svg_check.h"

/* xorshift64: the same events every run */
static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* The slices' counts equal a count of the events by (x - origin) >> shift, shift the least
 * that puts the highest x in the 256th slice or before, whatever order the events came in. */
static void check_against_brute_force(uint64_t origin, uint64_t span, bool ordered, uint64_t seed)
{
	enum { N = 20000 };
	static uint64_t xs[N];
	static unsigned cols[N];
	struct tm_series s;
	ck_assert_int_eq(tm_series_init(&s), 0);
	uint64_t x = seed, last = 0;
	for (unsigned i = 0; i < N; i++) {
		xs[i] = ordered ? origin + span * i / N : origin + next(&x) % span;
		if (i == 0)
			xs[i] = origin; /* the origin is the first value counted */
		cols[i] = (unsigned)(next(&x) % 3);
		tm_series_add(&s, xs[i], cols[i], 1);
		if (xs[i] - origin > last)
			last = xs[i] - origin;
	}
	unsigned shift = 0;
	while (last >> shift >= TM_SERIES_SLICES)
		shift++;
	ck_assert_uint_eq(s.origin, origin);
	ck_assert_uint_eq(s.shift, shift);
	ck_assert_uint_eq(tm_series_used(&s), (unsigned)(last >> shift) + 1);
	static uint64_t want[TM_SERIES_SLICES][3];
	memset(want, 0, sizeof(want));
	for (unsigned i = 0; i < N; i++)
		want[(xs[i] - origin) >> shift][cols[i]]++;
	for (unsigned j = 0; j < TM_SERIES_SLICES; j++)
		for (unsigned c = 0; c < 3; c++)
			ck_assert_uint_eq(s.v[j][c], want[j][c]);
	tm_series_free(&s);
}

START_TEST(test_slices)
{
	check_against_brute_force(0, 1000000, true, 1);
	check_against_brute_force(0, 1000000, false, 2);
	check_against_brute_force(5000, 100, false, 3);		     /* no merge */
	check_against_brute_force(1ull << 40, 1ull << 50, false, 4); /* ps over long runs */
	check_against_brute_force(7, 256, true, 5);		     /* exactly 256 slices */
}
END_TEST

START_TEST(test_edges)
{
	struct tm_series s;
	ck_assert_int_eq(tm_series_init(&s), 0);
	ck_assert_uint_eq(tm_series_used(&s), 0);
	tm_series_add(&s, 1000, 0, 1);
	tm_series_add(&s, 10, 0, 2); /* below the origin: at the origin */
	ck_assert_uint_eq(tm_series_used(&s), 1);
	ck_assert_uint_eq(s.v[0][0], 3);
	tm_series_reach(&s, 1000 + 256); /* the 257th unit: slices of 2 */
	ck_assert_uint_eq(s.shift, 1);
	ck_assert_uint_eq(tm_series_used(&s), 129);
	tm_series_add(&s, UINT64_MAX, 1, 1); /* the highest value: still in a slice */
	ck_assert_uint_le(tm_series_used(&s), TM_SERIES_SLICES);
	ck_assert_uint_eq(s.v[tm_series_used(&s) - 1][1], 1);
	ck_assert_uint_eq(s.v[0][0], 3);
	tm_series_free(&s);
	tm_series_free(&s); /* twice: nothing */
}
END_TEST

START_TEST(test_columns)
{
	struct tm_series s;
	ck_assert_int_eq(tm_series_init(&s), 0);
	/* ids 100, 99, ..., 91: the first TM_SERIES_MAX their own, the rest the others' */
	for (unsigned k = 0; k < TM_SERIES_MAX + 2; k++) {
		unsigned col = tm_series_column(&s, 100 - k);
		ck_assert_uint_eq(col, k < TM_SERIES_MAX ? k : TM_SERIES_OTHERS);
		tm_series_add(&s, k, col, 100 - k);
	}
	ck_assert_uint_eq(tm_series_column(&s, 100), 0); /* found again */
	ck_assert_uint_eq(tm_series_column(&s, 95), 5);
	ck_assert_uint_eq(tm_series_column(&s, 5), TM_SERIES_OTHERS);
	tm_series_sort_ids(&s);
	for (unsigned k = 0; k < TM_SERIES_MAX; k++) {
		ck_assert_uint_eq(s.id[k], 100 - TM_SERIES_MAX + 1 + k);
		ck_assert_uint_eq(s.v[TM_SERIES_MAX - 1 - k][k], 100 - (TM_SERIES_MAX - 1 - k));
		ck_assert_uint_eq(tm_series_column(&s, s.id[k]), k);
	}
	ck_assert_uint_eq(s.v[TM_SERIES_MAX][TM_SERIES_OTHERS], 100 - TM_SERIES_MAX);
	tm_series_free(&s);
}
END_TEST

static char *plot(const struct tm_series *s, const struct tm_series_style *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	tm_series_plot(f, s, st);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

/* What every plot is: well-formed, self-contained, the same bytes from the same data. */
static char *check_plot(const struct tm_series *s, const struct tm_series_style *st)
{
	char *svg = plot(s, st), *again = plot(s, st);
	ck_assert_str_eq(svg, again);
	free(again);
	svg_check_well_formed(svg, "the plot");
	ck_assert_ptr_null(strstr(svg, "<script"));
	ck_assert_ptr_null(strstr(svg, "href"));
	ck_assert_ptr_null(strstr(svg, "url("));
	ck_assert_ptr_nonnull(strstr(svg, "<title>"));
	return svg;
}

static unsigned occurrences(const char *s, const char *what)
{
	unsigned n = 0;
	for (const char *p = s; (p = strstr(p, what)); p++)
		n++;
	return n;
}

START_TEST(test_plot)
{
	struct tm_series s;
	ck_assert_int_eq(tm_series_init(&s), 0);
	struct tm_series_style st = {
	    .title = "Instructions <per> processor",
	    .desc = "hand-made",
	    .axis = "time",
	    .unit = "clk",
	    .counted = "instructions",
	    .empty = "the trace has no instructions",
	    .names = {"cpu 0", "cpu 1 & co", "cpu 2"},
	};
	char *svg = check_plot(&s, &st);
	/* nothing to show: a one-line note */
	ck_assert_ptr_nonnull(strstr(svg, "data-note=\"the trace has no instructions\""));
	ck_assert_ptr_nonnull(strstr(svg, "height=\"40\""));
	ck_assert_uint_eq(occurrences(svg, "<text"), 1);
	ck_assert_uint_eq(occurrences(svg, "<path"), 0);
	free(svg);

	/* cpu 0 busy all along, cpu 1 stalls in the middle, cpu 2 never runs */
	for (uint64_t t = 100; t < 100 + 1024; t++) {
		tm_series_add(&s, t, 0, 1);
		if (t < 400 || t >= 800)
			tm_series_add(&s, t, 1, 2);
	}
	svg = check_plot(&s, &st);
	ck_assert_ptr_null(strstr(svg, "the trace has no instructions"));
	ck_assert_uint_eq(occurrences(svg, "<path"), 2); /* a lane per series with events */
	ck_assert_ptr_nonnull(strstr(svg, "data-origin=\"100\" data-slice-width=\"4\" "
					  "data-slices=\"256\""));
	ck_assert_ptr_nonnull(strstr(svg, "data-series=\"cpu 0\" data-total=\"1024\" "
					  "data-counts=\"4 4 4 "));
	ck_assert_ptr_nonnull(strstr(svg, "data-series=\"cpu 1 &amp; co\" data-total=\"1248\" "
					  "data-counts=\"8 8 "));
	ck_assert_ptr_nonnull(strstr(svg, " 8 0 0 0 ")); /* the stall */
	ck_assert_ptr_null(strstr(svg, "data-series=\"cpu 2\""));
	ck_assert_ptr_nonnull(strstr(svg, ">time since 100 clk (clk)</text>"));
	ck_assert_ptr_nonnull(strstr(svg, ">instructions per 4 clk, 0 to 8 in each lane</text>"));
	ck_assert_ptr_nonnull(strstr(svg, "Instructions &lt;per&gt; processor"));
	ck_assert_ptr_nonnull(strstr(svg, ">cpu 1 &amp; co: 1248</text>"));
	free(svg);
	tm_series_free(&s);
}
END_TEST

/* One series alone: at a steady rate a note that gives it (a lane would be a solid block);
 * at a varying one a line on the rate's own axis, not a filled lane. */
START_TEST(test_alone)
{
	struct tm_series s;
	ck_assert_int_eq(tm_series_init(&s), 0);
	struct tm_series_style st = {
	    .title = "Instructions",
	    .desc = "hand-made",
	    .axis = "time",
	    .unit = "clk",
	    .counted = "instructions",
	    .empty = "none",
	    .names = {"cpu 0"},
	};
	for (uint64_t t = 0; t < 1000; t++) /* the last slice's count is its own */
		tm_series_add(&s, t, 0, 1);
	char *svg = check_plot(&s, &st);
	ck_assert_ptr_nonnull(
	    strstr(svg, "data-note=\"only cpu 0, at a steady rate of 1 instructions per clk\""));
	ck_assert_uint_eq(occurrences(svg, "<path"), 0);
	free(svg);

	tm_series_add(&s, 500, 0, 40); /* a burst */
	svg = check_plot(&s, &st);
	ck_assert_ptr_null(strstr(svg, "data-note"));
	ck_assert_uint_eq(occurrences(svg, "<path"), 1);
	ck_assert_ptr_nonnull(strstr(svg, "fill=\"none\""));
	ck_assert_ptr_nonnull(strstr(svg, ">instructions per 4 clk</text>"));
	free(svg);

	st.note = "said instead";
	svg = check_plot(&s, &st);
	ck_assert_ptr_nonnull(strstr(svg, "data-note=\"said instead\""));
	free(svg);
	tm_series_free(&s);
}
END_TEST

static Suite *series_suite(void)
{
	Suite *s = suite_create("series");
	TCase *tc = tcase_create("series");
	tcase_add_test(tc, test_slices);
	tcase_add_test(tc, test_edges);
	tcase_add_test(tc, test_columns);
	tcase_add_test(tc, test_plot);
	tcase_add_test(tc, test_alone);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(series_suite());
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
