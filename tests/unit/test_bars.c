/* The bar renderer of plots/hot.svg (src/plots/bars.c): the ranking and its ties, the bars
 * kept, names cut to their column and escaped, the message of a chart without bars, the same
 * bytes twice, and well-formed XML (by xmllint where it is installed). */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plots/bars.h"
#include "svg_check.h"

static const struct tm_bars_chart chart = {
    .title = "Hottest <things> & more",
    .things = "functions",
    .desc = "bars",
    .x_label = "instructions executed",
    .y_label = "function, hottest first",
    .value_name = "self instructions",
    .total_name = "total, with callees",
    .extra_name = "calls",
    .empty = "no calls: the trace ran no instructions",
    .whole = 1000,
    .has_total = true,
};

/* What tm_plot_bars writes for bar[0 .. n), NUL-terminated. */
static char *draw(const struct tm_bars_chart *c, struct tm_bar *bar, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(tm_plot_bars(f, c, bar, n), 0);
	fclose(f);
	return buf;
}

static void check_well_formed(const char *svg)
{
	ck_assert_ptr_null(strstr(svg, "<script"));
	ck_assert_ptr_null(strstr(svg, "href"));
	ck_assert_ptr_nonnull(strstr(svg, "</svg>\n"));
	svg_check_well_formed(svg, "the bars");
}

/* The names of the bars drawn, in order, joined by spaces. */
static char *drawn_names(const char *svg)
{
	static char names[4096];
	names[0] = '\0';
	for (const char *p = svg; (p = strstr(p, "data-name=\"")) != NULL;) {
		p += strlen("data-name=\"");
		size_t n = strcspn(p, "\"");
		if (names[0])
			strcat(names, " ");
		strncat(names, p, n);
	}
	return names;
}

START_TEST(test_rank)
{
	/* equal values go by total, equal totals by key, whatever the order given */
	struct tm_bar given[] = {
	    {.name = "d", .value = 5, .total = 9, .key = 7},
	    {.name = "a", .value = 9, .total = 9, .key = 3},
	    {.name = "c", .value = 5, .total = 9, .key = 2},
	    {.name = "b", .value = 5, .total = 20, .key = 9},
	    {.name = "zero", .value = 0, .total = 50, .key = 1},
	};
	const size_t n = sizeof(given) / sizeof(given[0]);
	char *first = NULL;
	for (size_t shift = 0; shift < n; shift++) {
		struct tm_bar bar[sizeof(given) / sizeof(given[0])];
		for (size_t i = 0; i < n; i++)
			bar[i] = given[(i + shift) % n];
		tm_bars_rank(bar, n);
		ck_assert_str_eq(bar[0].name, "a");
		ck_assert_str_eq(bar[1].name, "b");
		ck_assert_str_eq(bar[2].name, "c");
		ck_assert_str_eq(bar[3].name, "d");
		ck_assert_str_eq(bar[4].name, "zero");
		char *svg = draw(&chart, bar, n);
		/* a bar of value 0 is not drawn; the same bytes from any order */
		ck_assert_str_eq(drawn_names(svg), "a b c d");
		ck_assert_ptr_nonnull(strstr(svg,
					     "data-rank=\"1\" data-name=\"a\" data-value=\"9\" "
					     "data-total=\"9\" data-extra=\"0\""));
		ck_assert_ptr_nonnull(strstr(svg, ">all 4 functions, by self instructions<"));
		if (first)
			ck_assert_str_eq(svg, first);
		else
			check_well_formed(first = strdup(svg));
		free(svg);
	}
	free(first);
}
END_TEST

START_TEST(test_top)
{
	struct tm_bar bar[25];
	char name[25][16];
	for (size_t i = 0; i < 25; i++) {
		snprintf(name[i], sizeof(name[i]), "f%zu", i);
		bar[i] = (struct tm_bar){.name = name[i], .value = 10 + i, .total = 40, .key = i};
	}
	char *svg = draw(&chart, bar, 25);
	check_well_formed(svg);
	ck_assert_ptr_nonnull(strstr(drawn_names(svg), "f24 f23 f22"));
	ck_assert_ptr_nonnull(strstr(drawn_names(svg), " f5"));
	ck_assert_ptr_null(strstr(drawn_names(svg), " f4"));
	/* the five left out: 10 + 11 + 12 + 13 + 14 instructions, 6.0% of 1000 */
	ck_assert_ptr_nonnull(strstr(svg, ">the 20 hottest of 25 functions, by self instructions; "
					  "the other 5: 6.0% (60)<"));
	/* x reaches the largest bar, the total of 40: ticks of 5 */
	ck_assert_ptr_nonnull(strstr(svg, ">40</text>"));
	ck_assert_ptr_null(strstr(svg, ">45</text>"));
	free(svg);

	struct tm_bars_chart three = chart;
	three.top = 3;
	three.others = 2;
	three.others_value = 100;
	svg = draw(&three, bar, 25);
	ck_assert_str_eq(drawn_names(svg), "f24 f23 f22");
	ck_assert_ptr_nonnull(strstr(svg, "the 3 hottest of 27 functions"));
	free(svg);
}
END_TEST

START_TEST(test_cut_and_escaped)
{
	char long_name[300];
	memset(long_name, 'W', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	struct tm_bar bar[] = {
	    {.name = long_name, .value = 4, .total = 4, .key = 0},
	    {.name = "a<b>&\"c'\x01\xff", .value = 3, .total = 3, .key = 1, .detail = "at <0x10>"},
	};
	char *svg = draw(&chart, bar, 2);
	check_well_formed(svg);
	/* data-name holds the whole name; the label is cut to the column, "..." at its end */
	ck_assert_ptr_nonnull(strstr(svg, long_name));
	const char *label = strstr(svg, "text-anchor=\"end\">WWW");
	ck_assert_ptr_nonnull(label);
	ck_assert_ptr_nonnull(strstr(label, "W...</text>"));
	ck_assert_int_lt(strstr(label, "...") - label, 100);
	ck_assert_ptr_nonnull(
	    strstr(svg, "data-name=\"a&lt;b&gt;&amp;&quot;c&apos;\xef\xbf\xbd\xef\xbf\xbd\""));
	ck_assert_ptr_nonnull(strstr(svg, "; at &lt;0x10&gt;</title>"));
	ck_assert_ptr_nonnull(strstr(svg, "<title>Hottest &lt;things&gt; &amp; more</title>"));
	/* the share and count beside each bar */
	ck_assert_ptr_nonnull(strstr(svg, ">0.4% (4), total 0.4%</text>"));
	free(svg);
}
END_TEST

START_TEST(test_empty)
{
	struct tm_bar zero = {.name = "idle", .value = 0, .total = 7, .key = 0};
	for (size_t n = 0; n < 2; n++) {
		char *svg = draw(&chart, &zero, n);
		check_well_formed(svg);
		ck_assert_ptr_null(strstr(svg, "class=\"bar\""));
		/* a one-line note, not an empty chart */
		ck_assert_ptr_nonnull(
		    strstr(svg, "data-note=\"no calls: the trace ran no instructions\""));
		ck_assert_ptr_nonnull(strstr(svg, "height=\"40\""));
		free(svg);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bars");
	TCase *tc = tcase_create("bars");
	tcase_add_test(tc, test_rank);
	tcase_add_test(tc, test_top);
	tcase_add_test(tc, test_cut_and_escaped);
	tcase_add_test(tc, test_empty);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
