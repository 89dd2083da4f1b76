/* plots/ (src/plots): the SVG writer (escaping, fitting text, ticks, numbers), the slices,
 * page sets and address heat map the plots are drawn from, the heat map's colour levels, and
 * mix.svg, footprint.svg, addresses.svg and FULL's registers.svg from hand-built data: the
 * counts they carry,
 * well-formed XML (by xmllint where it is installed), the same bytes twice, no script and no
 * external resource. */
#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/full.h"
#include "plots/heatmap.h"
#include "plots/plots.h"
#include "plots/svg.h"
#include "svg_check.h"

/* What write puts in a FILE, NUL-terminated. */
static char *capture(void (*write)(FILE *, const void *), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	write(f, arg);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

static void write_escaped(FILE *f, const void *s)
{
	tm_svg_escape(f, s);
}

START_TEST(test_escape)
{
	char *got = capture(write_escaped, "a<b>&\"c'\x01\tz\xff\xc3\xa9");
	ck_assert_str_eq(got, "a&lt;b&gt;&amp;&quot;c&apos;\xef\xbf\xbd\tz\xef\xbf\xbd\xc3\xa9");
	free(got);
	got = capture(write_escaped, "\xe0\x80\x80\xed\xa0\x80"); /* overlong, surrogate */
	ck_assert_str_eq(got, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
			      "\xef\xbf\xbd");
	free(got);
}
END_TEST

START_TEST(test_fit)
{
	char buf[64];
	ck_assert_str_eq(tm_svg_fit("short", 12, 200, buf, sizeof(buf)), "short");
	const char *lng = "a_very_long_class_name_that_cannot_fit_in_its_box";
	tm_svg_fit(lng, 12, 100, buf, sizeof(buf));
	ck_assert(tm_svg_text_width(buf, 12) <= 100);
	ck_assert_uint_gt(strlen(buf), 3);
	ck_assert_str_eq(buf + strlen(buf) - 3, "...");
	ck_assert(strncmp(buf, lng, strlen(buf) - 3) == 0);
	/* a character outside ASCII is never cut */
	tm_svg_fit("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 10, 45, buf,
		   sizeof(buf));
	ck_assert_str_eq(buf, "\xc3\xa9\xc3\xa9\xc3\xa9...");
	/* an over-estimate: wide letters count more than narrow ones */
	ck_assert(tm_svg_text_width("MMMM", 10) > tm_svg_text_width("iiii", 10));
	ck_assert(tm_svg_text_width("abcd", 10) >= 4 * 0.6 * 10);
}
END_TEST

START_TEST(test_ticks)
{
	ck_assert(tm_svg_tick_step(1000, 1) == 200);
	ck_assert(tm_svg_tick_step(100, 1) == 20);
	ck_assert(tm_svg_tick_step(7, 1) == 2);
	ck_assert(tm_svg_tick_step(3, 1) == 1); /* counts take no fractions */
	ck_assert(tm_svg_tick_step(3e9, 1) == 1e9);
	char buf[32];
	ck_assert_str_eq(tm_svg_number(0, buf, sizeof(buf)), "0");
	ck_assert_str_eq(tm_svg_number(9999, buf, sizeof(buf)), "9999");
	ck_assert_str_eq(tm_svg_number(12345, buf, sizeof(buf)), "12.3k");
	ck_assert_str_eq(tm_svg_number(4.5e6, buf, sizeof(buf)), "4.5M");
	ck_assert_str_eq(tm_svg_number(2e9, buf, sizeof(buf)), "2G");
}
END_TEST

START_TEST(test_slices)
{
	struct tm_slices s;
	ck_assert_int_eq(tm_slices_init(&s), 0);
	ck_assert_uint_eq(tm_slices_used(&s), 0);
	for (uint64_t r = 0; r < 1000; r++)
		tm_slices_row(&s, r)[r % 3]++;
	/* 1000 records: slices of 4, 250 of them, each holding its records */
	ck_assert_uint_eq(s.shift, 2);
	ck_assert_uint_eq(tm_slices_used(&s), 250);
	uint64_t total[3] = {0}, end = 0;
	for (unsigned j = 0; j < tm_slices_used(&s); j++) {
		ck_assert_uint_eq(tm_slice_start(&s, j), end);
		end = tm_slice_end(&s, j);
		ck_assert_uint_eq(s.v[j][0] + s.v[j][1] + s.v[j][2], end - tm_slice_start(&s, j));
		for (unsigned c = 0; c < 3; c++)
			total[c] += s.v[j][c];
	}
	ck_assert_uint_eq(end, 1000);
	ck_assert_uint_eq(total[0], 334);
	ck_assert_uint_eq(total[1], 333);
	ck_assert_uint_eq(total[2], 333);
	tm_slices_free(&s);

	ck_assert_int_eq(tm_slices_init(&s), 0);
	tm_slices_row(&s, 0)[0]++;
	tm_slices_row(&s, 256)[0]++; /* past the last slice: they merge */
	ck_assert_uint_eq(s.shift, 1);
	ck_assert_uint_eq(tm_slices_used(&s), 129);
	ck_assert_uint_eq(s.v[0][0], 1);
	ck_assert_uint_eq(s.v[128][0], 1);
	ck_assert_uint_eq(tm_slice_end(&s, 128), 257);
	tm_slices_free(&s);
}
END_TEST

START_TEST(test_page_set)
{
	struct tm_page_set p = {0};
	ck_assert_int_eq(tm_page_set_add(&p, 5), 1);
	ck_assert_int_eq(tm_page_set_add(&p, 5), 0);
	ck_assert_int_eq(tm_page_set_add(&p, 0), 1);
	for (uint64_t k = 0; k < 100000; k++)
		tm_page_set_add(&p, k * 7919);
	ck_assert_uint_eq(p.n, 100001); /* 0 was there; 5 is no multiple of 7919 */
	ck_assert_int_eq(tm_page_set_add(&p, 7919 * 500), 0);
	ck_assert_int_eq(p.err, 0);
	tm_page_set_free(&p);
}
END_TEST

/* The sum of the counts of kind over every slice and row. */
static uint64_t heat_total(const struct tm_addr_heat *h, unsigned kind)
{
	uint64_t sum = 0;
	for (size_t k = kind; k < (size_t)TM_PLOT_SLICES * TM_ADDR_ROWS * TM_ACCESS_KINDS;
	     k += TM_ACCESS_KINDS)
		sum += h->count[k];
	return sum;
}

/* The count of kind in slice j of the row of addr's block, or -1 when it has no row. */
static long long heat_count(const struct tm_addr_heat *h, unsigned j, uint64_t addr, unsigned kind)
{
	for (unsigned r = 0; r < h->n_rows; r++)
		if (h->block[r] == addr >> h->shift)
			return (long long)
			    h->count[((size_t)j * TM_ADDR_ROWS + r) * TM_ACCESS_KINDS + kind];
	return -1;
}

START_TEST(test_addr_heat)
{
	struct tm_addr_heat h;
	ck_assert_int_eq(tm_addr_heat_init(&h), 0);
	tm_addr_heat_add(&h, 0, 0x400010, TM_ACCESS_FETCH);
	tm_addr_heat_add(&h, 0, 0x400ff0, TM_ACCESS_FETCH); /* the same page */
	tm_addr_heat_add(&h, 3, 0x7fff0008, TM_ACCESS_WRITE);
	tm_addr_heat_add(&h, 3, 0x400000, TM_ACCESS_READ);
	ck_assert_uint_eq(h.n_rows, 2);
	ck_assert_uint_eq(h.shift, 12);
	ck_assert_int_eq(heat_count(&h, 0, 0x400000, TM_ACCESS_FETCH), 2);
	ck_assert_int_eq(heat_count(&h, 3, 0x400000, TM_ACCESS_READ), 1);
	ck_assert_int_eq(heat_count(&h, 3, 0x7fff0000, TM_ACCESS_WRITE), 1);

	/* 200 pages from 0x1000000: past 128 rows, the blocks double until they fit, and every
	 * count stays, added up by block */
	for (uint64_t p = 0; p < 200; p++)
		for (uint64_t k = 0; k <= p % 3; k++)
			tm_addr_heat_add(&h, (unsigned)(p % 7), 0x1000000 + (p << 12),
					 TM_ACCESS_READ);
	ck_assert_uint_le(h.n_rows, TM_ADDR_ROWS);
	ck_assert_uint_eq(h.shift, 13); /* 100 blocks of 8 KiB, and the two before */
	ck_assert_uint_eq(h.n_rows, 102);
	ck_assert_uint_eq(heat_total(&h, TM_ACCESS_READ), 1 + (67 * 1 + 67 * 2 + 66 * 3));
	ck_assert_uint_eq(heat_total(&h, TM_ACCESS_FETCH), 2);
	ck_assert_uint_eq(heat_total(&h, TM_ACCESS_WRITE), 1);
	/* pages 0 and 1 (0 and 1 reads, in slices 0 and 1) are the first block */
	ck_assert_int_eq(heat_count(&h, 0, 0x1000000, TM_ACCESS_READ), 1);
	ck_assert_int_eq(heat_count(&h, 1, 0x1001000, TM_ACCESS_READ), 2);
	ck_assert_int_eq(heat_count(&h, 0, 0x400000, TM_ACCESS_FETCH), 2);

	/* the slices merge in pairs, as tm_slices' do */
	tm_addr_heat_merge(&h);
	ck_assert_uint_eq(h.slice_shift, 1);
	ck_assert_int_eq(heat_count(&h, 0, 0x1000000, TM_ACCESS_READ), 3);
	ck_assert_int_eq(heat_count(&h, 1, 0x7fff0000, TM_ACCESS_WRITE), 1);
	ck_assert_uint_eq(heat_total(&h, TM_ACCESS_READ), 1 + (67 * 1 + 67 * 2 + 66 * 3));
	tm_addr_heat_free(&h);

	/* addresses all over 64 bits: the table stays bounded, the blocks grow to fit */
	ck_assert_int_eq(tm_addr_heat_init(&h), 0);
	uint64_t x = 88172645463325252ull;
	for (unsigned k = 0; k < 100000; k++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		tm_addr_heat_add(&h, k % TM_PLOT_SLICES, x, TM_ACCESS_WRITE);
	}
	tm_addr_heat_add(&h, 0, UINT64_MAX, TM_ACCESS_WRITE);
	ck_assert_uint_le(h.n_rows, TM_ADDR_ROWS);
	ck_assert_uint_le(h.shift, 57);
	ck_assert_uint_eq(heat_total(&h, TM_ACCESS_WRITE), 100001);
	tm_addr_heat_free(&h);
}
END_TEST

START_TEST(test_heat_levels)
{
	uint64_t low[TM_HEAT_LEVELS];
	ck_assert_uint_eq(tm_heat_levels(1, low), 1);
	ck_assert_uint_eq(low[0], 1);
	ck_assert_uint_eq(tm_heat_levels(5, low), 5); /* a colour per count */
	ck_assert_uint_eq(low[4], 5);
	ck_assert_uint_eq(tm_heat_levels(9, low), TM_HEAT_LEVELS);
	for (unsigned l = 1; l < TM_HEAT_LEVELS; l++)
		ck_assert_uint_gt(low[l], low[l - 1]);
	ck_assert_uint_le(low[TM_HEAT_LEVELS - 1], 9);
	/* equal steps of the logarithm: 1000^(l/8), rounded up */
	ck_assert_uint_eq(tm_heat_levels(1000, low), TM_HEAT_LEVELS);
	ck_assert_uint_eq(low[0], 1);
	ck_assert_uint_eq(low[1], 3);	/* 2.37 */
	ck_assert_uint_eq(low[3], 14);	/* 13.3 */
	ck_assert_uint_eq(low[4], 32);	/* 31.6 */
	ck_assert_uint_eq(low[7], 422); /* 421.7 */
	ck_assert_str_ne(tm_heat_colour(0), tm_heat_colour(TM_HEAT_LEVELS - 1));
}
END_TEST

static const char *const classes[] = {"load", "store & <spill>", "branch", "never"};
static const struct tm_format fmt = {.name = "hand", .classes = classes, .n_classes = 4};

/* 600 records: loads and branches alternate for the first half, then stores; code pages
 * 0 to 9 fetched in the first half, data pages 100 to 149 in the second. */
static void hand_data(struct tm_plot_data *d)
{
	memset(d, 0, sizeof(*d));
	d->fmt = &fmt;
	ck_assert_int_eq(tm_slices_init(&d->slices), 0);
	for (uint64_t r = 0; r < 600; r++) {
		uint64_t *row = tm_slices_row(&d->slices, r);
		row[r < 300 ? (r % 2 ? 2 : 0) : 1]++;
		if (r < 300 && r % 30 == 0)
			row[TM_PLOT_NEW_CODE]++;
		if (r >= 300 && r % 6 == 0)
			row[TM_PLOT_NEW_DATA]++;
	}
	d->code_pages = 10;
	d->data_pages = 50;
	d->accesses = 600;
}

static void write_mix(FILE *f, const void *d)
{
	tm_plot_mix(f, d);
}

static void write_footprint(FILE *f, const void *d)
{
	tm_plot_footprint(f, d);
}

/* The number in attribute attr="N" of the element that carries key="value", or -1. */
static long long attribute(const char *svg, const char *key, const char *value, const char *attr)
{
	char pattern[128];
	snprintf(pattern, sizeof(pattern), "%s=\"%s\"", key, value);
	const char *at = strstr(svg, pattern);
	if (!at)
		return -1;
	const char *end = strchr(at, '>');
	snprintf(pattern, sizeof(pattern), "%s=\"", attr);
	const char *a = strstr(at, pattern);
	return a && a < end ? atoll(a + strlen(pattern)) : -1;
}

/* What every plot is: well-formed, self-contained, the same bytes from the same data. */
static void check_plot(void (*write)(FILE *, const void *), const struct tm_plot_data *d,
		       char **out)
{
	char *svg = capture(write, d), *again = capture(write, d);
	ck_assert_str_eq(svg, again);
	free(again);
	svg_check_well_formed(svg, "the plot");
	ck_assert_ptr_null(strstr(svg, "<script"));
	ck_assert_ptr_null(strstr(svg, "href"));
	ck_assert_ptr_null(strstr(svg, "url("));
	ck_assert_ptr_nonnull(strstr(svg, "<title>"));
	*out = svg;
}

START_TEST(test_mix)
{
	struct tm_plot_data d;
	hand_data(&d);
	char *svg;
	check_plot(write_mix, &d, &svg);
	ck_assert_int_eq(attribute(svg, "data-class", "load", "data-records"), 150);
	ck_assert_int_eq(attribute(svg, "data-class", "branch", "data-records"), 150);
	ck_assert_int_eq(attribute(svg, "data-class", "store &amp; &lt;spill&gt;", "data-records"),
			 300);
	ck_assert_int_eq(attribute(svg, "data-class", "never", "data-records"), -1);
	ck_assert_ptr_nonnull(strstr(svg, "hand, 600 records"));
	ck_assert_ptr_nonnull(strstr(svg, ">100%</text>"));
	free(svg);
	tm_slices_free(&d.slices);
}
END_TEST

START_TEST(test_footprint)
{
	struct tm_plot_data d;
	hand_data(&d);
	char *svg;
	check_plot(write_footprint, &d, &svg);
	ck_assert_int_eq(attribute(svg, "data-series", "code", "data-pages"), 10);
	ck_assert_int_eq(attribute(svg, "data-series", "data", "data-pages"), 50);
	/* the lines end at the totals: the code line's last point is at the top (50 pages is
	 * the axis's maximum), the data line's at the top too */
	ck_assert_ptr_nonnull(strstr(svg, "code: 10 pages"));
	free(svg);

	d.accesses = d.code_pages = d.data_pages = 0;
	check_plot(write_footprint, &d, &svg);
	ck_assert_ptr_nonnull(strstr(svg, "give no addresses"));
	ck_assert_ptr_null(strstr(svg, "<polyline"));
	free(svg);
	tm_slices_free(&d.slices);

	memset(&d, 0, sizeof(d)); /* an empty trace: no format seen, no records */
	ck_assert_int_eq(tm_slices_init(&d.slices), 0);
	check_plot(write_footprint, &d, &svg);
	ck_assert_ptr_nonnull(strstr(svg, "has no records"));
	free(svg);
	check_plot(write_mix, &d, &svg);
	ck_assert_ptr_nonnull(strstr(svg, "has no records"));
	free(svg);
	tm_slices_free(&d.slices);
}
END_TEST

static void write_addresses(FILE *f, const void *d)
{
	tm_plot_addresses(f, d);
}

/* The text of attribute attr of the element that carries key="value", or "" (in buf). */
static const char *attribute_text(const char *svg, const char *key, const char *value,
				  const char *attr, char *buf, size_t len)
{
	char pattern[128];
	snprintf(pattern, sizeof(pattern), "%s=\"%s\"", key, value);
	const char *at = strstr(svg, pattern), *end = at ? strchr(at, '>') : NULL;
	snprintf(pattern, sizeof(pattern), "%s=\"", attr);
	const char *a = at ? strstr(at, pattern) : NULL;
	buf[0] = 0;
	if (a && a < end) {
		a += strlen(pattern);
		snprintf(buf, len, "%.*s", (int)(strchr(a, '"') - a), a);
	}
	return buf;
}

static size_t occurrences(const char *s, const char *what)
{
	size_t n = 0;
	for (const char *at = strstr(s, what); at; at = strstr(at + 1, what))
		n++;
	return n;
}

START_TEST(test_addresses)
{
	/* code at 0x400000 (two pages), heap at 0x10000000, stack at 0x7fff0000, over 600
	 * records in slices of 4 */
	struct tm_plot_data d;
	struct tm_addr_heat h;
	hand_data(&d);
	ck_assert_int_eq(tm_addr_heat_init(&h), 0);
	for (uint64_t r = 0; r < 600; r++) {
		tm_addr_heat_add(&h, (unsigned)(r >> d.slices.shift),
				 0x400000 + (r % 2) * 0x1000 + r % 64, TM_ACCESS_FETCH);
		if (r % 3 == 0)
			tm_addr_heat_add(&h, (unsigned)(r >> d.slices.shift), 0x10000000 + r * 4,
					 TM_ACCESS_READ);
		if (r >= 300 && r % 10 == 0)
			tm_addr_heat_add(&h, (unsigned)(r >> d.slices.shift), 0x7fff0ff0,
					 TM_ACCESS_WRITE);
	}
	d.heat = &h;
	char *svg, buf[64];
	check_plot(write_addresses, &d, &svg);
	ck_assert_int_eq(attribute(svg, "data-panel", "fetch", "data-total"), 600);
	ck_assert_int_eq(attribute(svg, "data-panel", "read", "data-total"), 200);
	ck_assert_int_eq(attribute(svg, "data-panel", "write", "data-total"), 30);
	ck_assert_str_eq(
	    attribute_text(svg, "data-row", "0x400000", "data-counts", buf, sizeof(buf)),
	    "300 0 0");
	ck_assert_str_eq(
	    attribute_text(svg, "data-row", "0x401000", "data-counts", buf, sizeof(buf)),
	    "300 0 0");
	ck_assert_str_eq(
	    attribute_text(svg, "data-row", "0x10000000", "data-counts", buf, sizeof(buf)),
	    "0 200 0");
	ck_assert_str_eq(
	    attribute_text(svg, "data-row", "0x7fff0000", "data-counts", buf, sizeof(buf)),
	    "0 0 30");
	/* rows from the highest address down; three groups, two breaks */
	const char *top = strstr(svg, "data-row=\"0x7fff0000\""),
		   *code = strstr(svg, "data-row=\"0x401000\""),
		   *bottom = strstr(svg, "data-row=\"0x400000\"");
	ck_assert(top && code && bottom && top < code && code < bottom);
	ck_assert_uint_eq(occurrences(svg, "class=\"break\""), 2);
	ck_assert_ptr_nonnull(strstr(svg, "rows of 4 KiB"));
	/* 150 slices of 4 records, drawn as 75 columns of 8: 4 fetches of each code page in
	 * each, the most of any cell; a colour for each count from 1 to 4 */
	ck_assert_int_eq(attribute(svg, "class", "heatmap", "data-columns"), 75);
	ck_assert_int_eq(attribute(svg, "class", "heatmap", "data-max"), 4);
	ck_assert_int_eq(attribute(svg, "data-level", "3", "data-from"), 4);
	ck_assert_int_eq(attribute(svg, "data-level", "4", "data-from"), -1);
	free(svg);

	/* the blocks doubled: the rows say their size */
	for (uint64_t p = 0; p < 200; p++)
		tm_addr_heat_add(&h, 0, 0x20000000 + (p << 12), TM_ACCESS_READ);
	check_plot(write_addresses, &d, &svg);
	ck_assert_ptr_nonnull(strstr(svg, "rows of 8 KiB to 32 KiB by region"));
	ck_assert_ptr_nonnull(strstr(svg, "data-region-bytes=\"8192 32768 8192 8192\""));
	ck_assert_int_eq(attribute(svg, "data-panel", "read", "data-total"), 400);
	free(svg);

	/* addresses up to the last: the top row ends there */
	for (unsigned i = 0; i < 10; i++)
		tm_addr_heat_add(&h, 0, UINT64_MAX / 9 * i, TM_ACCESS_WRITE);
	tm_addr_heat_add(&h, 0, UINT64_MAX, TM_ACCESS_WRITE);
	check_plot(write_addresses, &d, &svg);
	ck_assert_ptr_nonnull(strstr(svg, " to 0xffffffffffffffff ("));
	ck_assert_int_eq(attribute(svg, "class", "heatmap", "data-regions"), 8);
	free(svg);
	tm_addr_heat_free(&h);

	/* records without addresses, and no records */
	ck_assert_int_eq(tm_addr_heat_init(&h), 0);
	check_plot(write_addresses, &d, &svg);
	ck_assert_ptr_nonnull(strstr(svg, "give no addresses"));
	ck_assert_ptr_null(strstr(svg, "<path"));
	ck_assert_ptr_null(strstr(svg, "<polyline"));
	free(svg);
	tm_slices_free(&d.slices);
	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(tm_slices_init(&d.slices), 0);
	d.heat = &h;
	check_plot(write_addresses, &d, &svg);
	ck_assert_ptr_nonnull(strstr(svg, "has no records"));
	free(svg);
	d.heat = NULL; /* no batch came: the deriver's finish gives its table all the same */
	check_plot(write_addresses, &d, &svg);
	ck_assert_ptr_nonnull(strstr(svg, "has no records"));
	free(svg);
	tm_slices_free(&d.slices);
	tm_addr_heat_free(&h);
}
END_TEST

START_TEST(test_addr_regions)
{
	struct tm_addr_region reg[TM_ADDR_REGIONS];
	/* three runs far apart: three regions, each in rows of the table's blocks */
	const uint64_t few[] = {0x400, 0x401, 0x10000, 0x7fff0};
	ck_assert_uint_eq(tm_addr_regions(few, 4, 12, reg), 3);
	ck_assert_uint_eq(reg[0].first, 0x400);
	ck_assert_uint_eq(reg[0].last, 0x401);
	ck_assert_uint_eq(reg[0].n_rows, 2);
	ck_assert_uint_eq(reg[0].shift, 12);
	ck_assert_uint_eq(reg[2].first, 0x7fff0);
	ck_assert_uint_eq(reg[2].n_rows, 1);
	/* adjacent blocks are never cut apart */
	const uint64_t run[] = {5, 6, 7};
	ck_assert_uint_eq(tm_addr_regions(run, 3, 12, reg), 1);
	ck_assert_uint_eq(reg[0].n_rows, 3);
	ck_assert_uint_eq(tm_addr_regions(run, 0, 12, reg), 0);

	/* 50 adjacent blocks, then two far apart: three regions of at most 42 rows, the run in
	 * 25 rows of two blocks */
	uint64_t block[TM_ADDR_ROWS];
	for (unsigned i = 0; i < 50; i++)
		block[i] = i;
	block[50] = 100;
	block[51] = 1000;
	ck_assert_uint_eq(tm_addr_regions(block, 52, 12, reg), 3);
	ck_assert_uint_eq(reg[0].last, 49);
	ck_assert_uint_eq(reg[0].shift, 13);
	ck_assert_uint_eq(reg[0].n_rows, 25);
	ck_assert_uint_eq(reg[1].n_rows, 1);

	/* 40 blocks, 2 or 3 apart in turn but for gaps of 10 after the 10th, 20th and 30th:
	 * cut there and at the lowest four gaps of 3, to 8 regions */
	for (unsigned i = 0, b = 0; i < 40; i++) {
		block[i] = b;
		b += i == 9 || i == 19 || i == 29 ? 10 : i % 2 ? 3 : 2;
	}
	ck_assert_uint_eq(tm_addr_regions(block, 40, 12, reg), 8);
	ck_assert_uint_eq(reg[0].last, block[1]);
	ck_assert_uint_eq(reg[1].first, block[2]);
	ck_assert_uint_eq(reg[1].last, block[3]);
	ck_assert_uint_eq(reg[4].first, block[8]);
	ck_assert_uint_eq(reg[4].last, block[9]);
	ck_assert_uint_eq(reg[5].first, block[10]);
	ck_assert_uint_eq(reg[5].last, block[19]);
	ck_assert_uint_eq(reg[7].last, block[39]);
	/* 23 blocks in at most 16 rows: rows of 2 blocks */
	ck_assert_uint_eq(reg[5].shift, 13);
	ck_assert_uint_eq(reg[5].n_rows, 12);

	/* ten blocks equally apart over all 64 bits: the lowest seven gaps cut, the top region
	 * of three blocks in at most 16 rows, their size below 2^64 */
	for (unsigned i = 0; i < 10; i++)
		block[i] = (UINT64_MAX >> 12) / 9 * i;
	ck_assert_uint_eq(tm_addr_regions(block, 10, 12, reg), 8);
	ck_assert_uint_eq(reg[6].first, block[6]);
	ck_assert_uint_eq(reg[7].first, block[7]);
	ck_assert_uint_le(reg[7].n_rows, 16);
	ck_assert_uint_ge(reg[7].n_rows, 9);
	ck_assert_uint_le(reg[7].shift, 63);
}
END_TEST

static void write_registers(FILE *f, const void *h)
{
	ck_assert_int_eq(full_reg_heat_draw(h, f), 0);
}

START_TEST(test_registers)
{
	/* 1000 FULL records: r3 changes at every record, f31 at every tenth, ctr (the fifth
	 * special register) at the 700th */
	static struct full_record recs[1000];
	memset(recs, 0, sizeof(recs));
	for (unsigned i = 0; i < 1000; i++) {
		recs[i].gpr_changed = 1u << 3;
		recs[i].fpr_changed = i % 10 ? 0 : 1u << 31;
		recs[i].spr_changed = i == 700 ? 1u << 4 : 0;
	}
	struct full_reg_heat h;
	ck_assert_int_eq(full_reg_heat_init(&h), 0);
	for (unsigned i = 0; i < 1000; i += 250) { /* in four batches */
		struct tm_chunk c = {.first_record = i,
				     .records = recs + i,
				     .n_records = 250,
				     .record_size = sizeof(recs[0])};
		full_reg_heat_update(&h, &c);
	}
	ck_assert_uint_eq(h.records, 1000);
	ck_assert_uint_eq(h.shift, 2);
	char *svg, buf[64];
	check_plot(write_registers, (const void *)&h, &svg);
	ck_assert_int_eq(attribute(svg, "data-panel", "writes", "data-total"), 1101);
	ck_assert_str_eq(attribute_text(svg, "data-row", "r3", "data-counts", buf, sizeof(buf)),
			 "1000");
	ck_assert_str_eq(attribute_text(svg, "data-row", "f31", "data-counts", buf, sizeof(buf)),
			 "100");
	ck_assert_str_eq(attribute_text(svg, "data-row", "ctr", "data-counts", buf, sizeof(buf)),
			 "1");
	ck_assert_int_eq(attribute(svg, "data-row", "r4", "data-counts"), -1);
	/* three families, two breaks; the rows in register order */
	ck_assert_uint_eq(occurrences(svg, "class=\"break\""), 2);
	ck_assert(strstr(svg, "data-row=\"r3\"") < strstr(svg, "data-row=\"f31\""));
	ck_assert(strstr(svg, "data-row=\"f31\"") < strstr(svg, "data-row=\"ctr\""));
	ck_assert_int_eq(attribute(svg, "class", "heatmap", "data-max"), 4);
	free(svg);
	full_reg_heat_free(&h);

	ck_assert_int_eq(full_reg_heat_init(&h), 0);
	check_plot(write_registers, (const void *)&h, &svg);
	ck_assert_ptr_nonnull(strstr(svg, "has no records"));
	ck_assert_ptr_null(strstr(svg, "<path"));
	free(svg);
	full_reg_heat_free(&h);
}
END_TEST

static Suite *plots_suite(void)
{
	Suite *s = suite_create("plots");
	TCase *tc = tcase_create("plots");
	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_fit);
	tcase_add_test(tc, test_ticks);
	tcase_add_test(tc, test_slices);
	tcase_add_test(tc, test_page_set);
	tcase_add_test(tc, test_addr_heat);
	tcase_add_test(tc, test_heat_levels);
	tcase_add_test(tc, test_mix);
	tcase_add_test(tc, test_footprint);
	tcase_add_test(tc, test_addresses);
	tcase_add_test(tc, test_addr_regions);
	tcase_add_test(tc, test_registers);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(plots_suite());
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
