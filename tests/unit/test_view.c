/* The view table of a trace: stems, the paths and kinds of every BYU view, lookups and
 * folder listings; and every registered format's table against the limits format.h sets, so
 * that a format over one fails here rather than at its first index pass. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byu_ref.h"
#include "tracemount/derive.h"
#include "tracemount/registry.h"
#include "tracemount/view.h"

static const struct tm_format *const F = &tm_format_byu;

START_TEST(test_stem)
{
	static const struct {
		const char *name, *stem;
	} rows[] = {
	    {"a.byu", "a"},	    {"a.b.byu", "a.b"},
	    {"x.byu.gz", "x"},	    {"noext", "noext"},
	    {".hidden", ".hidden"}, {".hidden.byu", ".hidden"},
	    {"trace.gz", "trace"},  {"a.", "a"},
	    {"gz", "gz"},	    {"long-name_1.2.3.byu", "long-name_1.2.3"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *s = tm_trace_stem(rows[i].name);
		ck_assert_ptr_nonnull(s);
		ck_assert_msg(strcmp(s, rows[i].stem) == 0, "stem of %s: %s, expected %s",
			      rows[i].name, s, rows[i].stem);
		free(s);
	}
}
END_TEST

/* The views the issue lists for BYU, and the plots every trace gets, with their kinds. */
struct expected_view {
	char path[64];
	enum tm_view_kind kind;
};

static unsigned expected_views(struct expected_view *e, const char *stem)
{
	static const char *const classes[] = {"invalid",   "int_ack",	 "special",    "io_read",
					      "io_write",  "i_fetch",	 "nc_i_fetch", "d_read",
					      "nc_d_read", "write_back", "d_write"};
	unsigned n = 0;
	e[n++] = (struct expected_view){"raw", TM_VIEW_RAW};
	e[n++] = (struct expected_view){"dump.txt", TM_VIEW_RECORDS};
	e[n++] = (struct expected_view){"stats.json", TM_VIEW_STATS};
	e[n++] = (struct expected_view){"errors.txt", TM_VIEW_ERRORS};
	for (size_t c = 0; c < sizeof(classes) / sizeof(classes[0]); c++) {
		snprintf(e[n].path, sizeof(e[n].path), "class/%s.txt", classes[c]);
		e[n++].kind = TM_VIEW_RECORDS;
		snprintf(e[n].path, sizeof(e[n].path), "class/%s.byu", classes[c]);
		e[n++].kind = TM_VIEW_RECORDS;
	}
	snprintf(e[n].path, sizeof(e[n].path), "convert/%s.din", stem);
	e[n++].kind = TM_VIEW_RECORDS;
	e[n++] = (struct expected_view){"plots/mix.svg", TM_VIEW_TABLE};
	e[n++] = (struct expected_view){"plots/footprint.svg", TM_VIEW_TABLE};
	e[n++] = (struct expected_view){"plots/addresses.svg", TM_VIEW_TABLE};
	return n;
}

START_TEST(test_byu_views)
{
	struct tm_view_table t;
	struct expected_view e[64];
	unsigned n = expected_views(e, "my.trace");

	ck_assert_int_eq(tm_view_table_init(&t, F, "my.trace.byu"), 0);
	ck_assert_str_eq(t.stem, "my.trace");
	ck_assert_uint_eq(t.n_views, n);
	unsigned records = 0, columns_seen = 0;
	for (unsigned i = 0; i < n; i++) {
		int v = tm_view_table_find(&t, e[i].path);
		ck_assert_msg(v >= 0, "no view %s", e[i].path);
		ck_assert_str_eq(t.views[v].path, e[i].path);
		ck_assert_int_eq(t.views[v].kind, e[i].kind);
		if (e[i].kind != TM_VIEW_RECORDS)
			continue;
		records++;
		ck_assert_ptr_nonnull(t.views[v].ops);
		ck_assert_uint_lt(t.views[v].column, 32);
		ck_assert_msg(!(columns_seen >> t.views[v].column & 1), "column %u twice",
			      t.views[v].column);
		columns_seen |= 1u << t.views[v].column;
		/* the class mask agrees with what the path says */
		struct byu_ref_view ref;
		ck_assert_int_eq(byu_ref_view_parse(e[i].path, &ref), 0);
		for (unsigned nib = 0; nib < 16; nib++) {
			int c = byu_ref_class_index((uint8_t)(nib << 4));
			int in_mask = (int)(t.views[v].class_mask >> c & 1);
			int want = ref.kind == BYU_REF_DUMP ? 1
				   : ref.kind == BYU_REF_DIN
				       ? byu_ref_din_label((uint8_t)(nib << 4)) >= 0
				       : (int)(ref.nibbles >> nib & 1);
			ck_assert_msg(in_mask == want, "%s: class %s in mask %d", e[i].path,
				      F->classes[c], in_mask);
		}
	}
	ck_assert_uint_eq(t.n_record_views, records);
	ck_assert_uint_eq(columns_seen, (1u << records) - 1);
	/* class streams copy the record's own bytes */
	ck_assert_ptr_eq(t.views[tm_view_table_find(&t, "class/d_read.byu")].ops, &tm_raw_copy_ops);
	ck_assert_ptr_eq(t.views[tm_view_table_find(&t, "dump.txt")].ops, F->dump);
	tm_view_table_free(&t);
}
END_TEST

START_TEST(test_find_and_is_dir)
{
	struct tm_view_table t;
	ck_assert_int_eq(tm_view_table_init(&t, F, "a.byu"), 0);
	ck_assert_int_ge(tm_view_table_find(&t, "dump.txt"), 0);
	ck_assert_int_ge(tm_view_table_find(&t, "convert/a.din"), 0);
	const char *missing[] = {
	    "",		 "class",	 "convert",	     "nope",	      "dump",
	    "dump.txt/", "class/d_read", "class/D_READ.txt", "convert/b.din", "/dump.txt"};
	for (size_t i = 0; i < sizeof(missing) / sizeof(missing[0]); i++)
		ck_assert_msg(tm_view_table_find(&t, missing[i]) == -ENOENT, "found %s",
			      missing[i]);
	ck_assert(tm_view_table_is_dir(&t, "class"));
	ck_assert(tm_view_table_is_dir(&t, "convert"));
	const char *not_dirs[] = {"",	 "clas", "classes", "dump.txt", "raw", "class/d_read.txt",
				  "conv"};
	for (size_t i = 0; i < sizeof(not_dirs) / sizeof(not_dirs[0]); i++)
		ck_assert_msg(!tm_view_table_is_dir(&t, not_dirs[i]), "%s is a folder",
			      not_dirs[i]);
	tm_view_table_free(&t);
}
END_TEST

struct listing {
	char names[64][64];
	int dirs[64];
	unsigned n;
	unsigned stop_after; /* return 1 after this many entries; 0: never */
};

static int collect(void *arg, const char *name, int is_dir, unsigned view)
{
	(void)view;
	struct listing *l = arg;
	ck_assert_uint_lt(l->n, 64);
	snprintf(l->names[l->n], sizeof(l->names[0]), "%s", name);
	l->dirs[l->n++] = is_dir;
	return l->stop_after && l->n == l->stop_after ? 7 : 0;
}

static int listed(const struct listing *l, const char *name, int is_dir)
{
	int times = 0;
	for (unsigned i = 0; i < l->n; i++)
		if (strcmp(l->names[i], name) == 0) {
			ck_assert_int_eq(l->dirs[i], is_dir);
			times++;
		}
	return times;
}

START_TEST(test_list)
{
	struct tm_view_table t;
	struct listing l = {0};
	ck_assert_int_eq(tm_view_table_init(&t, F, "a.byu"), 0);

	ck_assert_int_eq(tm_view_table_list(&t, "", collect, &l), 0);
	ck_assert_uint_eq(l.n, 7);
	ck_assert_int_eq(listed(&l, "raw", 0), 1);
	ck_assert_int_eq(listed(&l, "dump.txt", 0), 1);
	ck_assert_int_eq(listed(&l, "stats.json", 0), 1);
	ck_assert_int_eq(listed(&l, "errors.txt", 0), 1);
	ck_assert_int_eq(listed(&l, "class", 1), 1);
	ck_assert_int_eq(listed(&l, "convert", 1), 1);
	ck_assert_int_eq(listed(&l, "plots", 1), 1);

	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(tm_view_table_list(&t, "class", collect, &l), 0);
	ck_assert_uint_eq(l.n, 2 * F->n_classes);
	for (unsigned c = 0; c < F->n_classes; c++) {
		char name[64];
		snprintf(name, sizeof(name), "%s.txt", F->classes[c]);
		ck_assert_int_eq(listed(&l, name, 0), 1);
		snprintf(name, sizeof(name), "%s.byu", F->classes[c]);
		ck_assert_int_eq(listed(&l, name, 0), 1);
	}

	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(tm_view_table_list(&t, "convert", collect, &l), 0);
	ck_assert_uint_eq(l.n, 1);
	ck_assert_int_eq(listed(&l, "a.din", 0), 1);

	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(tm_view_table_list(&t, "nope", collect, &l), 0);
	ck_assert_int_eq(tm_view_table_list(&t, "dump.txt", collect, &l), 0);
	ck_assert_int_eq(tm_view_table_list(&t, "clas", collect, &l), 0);
	ck_assert_uint_eq(l.n, 0);

	/* fn's non-zero value stops the listing and is returned */
	memset(&l, 0, sizeof(l));
	l.stop_after = 3;
	ck_assert_int_eq(tm_view_table_list(&t, "class", collect, &l), 7);
	ck_assert_uint_eq(l.n, 3);
	tm_view_table_free(&t);
}
END_TEST

/* format.h's limits, for every format of the registry: the index pass refuses (-EINVAL) a
 * format over them, so a new format over one would index nothing. */
/* The views hidden when empty are those the derivers declare (hide_empty, hide_empty_streams),
 * of every stream; no other view is. */
static void check_hide_empty(const struct tm_view_table *t, const struct tm_format *fmt)
{
	unsigned hidden = 0, declared = 0;
	char path[256];
	for (unsigned v = 0; v < t->n_views; v++)
		hidden += t->views[v].hide_empty;
	for (const struct tm_deriver *const *d = tm_derivers; *d; d++) {
		for (unsigned k = 0; tm_deriver_applies(*d, fmt) && k < (*d)->n_outputs; k++) {
			snprintf(path, sizeof(path), (*d)->views[k], t->stem);
			int v = tm_view_table_find(t, path);
			ck_assert_int_ge(v, 0);
			ck_assert_int_eq(t->views[v].hide_empty, (*d)->hide_empty >> k & 1);
			declared += (*d)->hide_empty >> k & 1;
		}
		for (unsigned k = 0; tm_deriver_applies(*d, fmt) && k < (*d)->n_stream_outputs; k++)
			for (unsigned st = 0; st < TM_MAX_STREAM_VIEWS; st++) {
				snprintf(path, sizeof(path), (*d)->stream_views[k], st);
				int v = tm_view_table_find(t, path);
				ck_assert_int_ge(v, 0);
				ck_assert_int_eq(t->views[v].hide_empty,
						 (*d)->hide_empty_streams >> k & 1);
				declared += (*d)->hide_empty_streams >> k & 1;
			}
	}
	ck_assert_uint_eq(hidden, declared);
}

START_TEST(test_registered_formats_keep_the_contract)
{
	unsigned n_formats = 0;
	for (const struct tm_format *const *f = tm_formats; *f; f++, n_formats++) {
		const struct tm_format *fmt = *f;
		ck_assert_msg(fmt->name && fmt->name[0], "format %u has no name", n_formats);
		for (const struct tm_format *const *g = tm_formats; g < f; g++)
			ck_assert_msg(strcmp((*g)->name, fmt->name) != 0, "two formats named %s",
				      fmt->name);
		ck_assert_msg(fmt->description && fmt->recognition, "%s: description, recognition",
			      fmt->name);
		ck_assert_msg(fmt->n_classes <= TM_MAX_CLASSES, "%s: %u classes", fmt->name,
			      fmt->n_classes);
		ck_assert_msg(fmt->n_tags <= TM_FLAG_BITS, "%s: %u tags", fmt->name, fmt->n_tags);
		for (unsigned c = 0; c < fmt->n_classes; c++)
			for (unsigned d = 0; d < c; d++)
				ck_assert_msg(strcmp(fmt->classes[c], fmt->classes[d]) != 0,
					      "%s: two classes named %s", fmt->name,
					      fmt->classes[c]);

		/* its views: within TM_MAX_TABLES table views, no two at one path */
		struct tm_view_table t;
		ck_assert_int_eq(tm_view_table_init(&t, fmt, "trace.x"), 0);
		ck_assert_msg(t.n_tables <= TM_MAX_TABLES, "%s: %u table views", fmt->name,
			      t.n_tables);
		for (unsigned v = 0; v < t.n_views; v++) {
			ck_assert_int_eq(tm_view_table_find(&t, t.views[v].path), (int)v);
			for (unsigned w = 0; w < v; w++)
				ck_assert_msg(strcmp(t.views[v].path, t.views[w].path) != 0,
					      "%s: two views at %s", fmt->name, t.views[v].path);
		}
		/* per-stream views of streams 0 to TM_MAX_STREAM_VIEWS - 1, by stream */
		unsigned per_stream = tm_derived_stream_views(fmt), first = t.n_views;
		ck_assert_uint_eq(t.n_stream_tables, per_stream);
		for (unsigned v = 0; v < t.n_views; v++)
			if (t.views[v].kind == TM_VIEW_TABLE && t.views[v].group >= 0) {
				first = first < v ? first : v;
				ck_assert_int_eq(t.views[v].group, (int)((v - first) / per_stream));
				ck_assert_uint_eq(t.views[v].column, (v - first) % per_stream);
			}
		ck_assert_uint_eq(t.n_views - first, TM_MAX_STREAM_VIEWS * per_stream);
		check_hide_empty(&t, fmt);
		tm_view_table_free(&t);
	}
	ck_assert_uint_ge(n_formats, 2);
}
END_TEST

/* Every deriver's per-stream views: a pattern with one "%u" and no other conversion, and a
 * streams operation to say which streams have them. */
START_TEST(test_registered_derivers_keep_the_contract)
{
	for (const struct tm_deriver *const *d = tm_derivers; *d; d++) {
		ck_assert_msg(!(*d)->n_stream_outputs || (*d)->streams, "%s: no streams",
			      (*d)->name);
		/* views hidden when empty are among its views; calls/ hides folded-time.txt */
		ck_assert((*d)->n_outputs >= 64 || !((*d)->hide_empty >> (*d)->n_outputs));
		ck_assert((*d)->n_stream_outputs >= 64 ||
			  !((*d)->hide_empty_streams >> (*d)->n_stream_outputs));
		for (unsigned k = 0; strcmp((*d)->name, "calls") == 0 && k < (*d)->n_outputs; k++)
			ck_assert_int_eq((*d)->hide_empty >> k & 1,
					 strcmp((*d)->views[k], "calls/folded-time.txt") == 0);
		for (unsigned k = 0; k < (*d)->n_stream_outputs; k++) {
			const char *p = (*d)->stream_views[k], *u = strstr(p, "%u");
			ck_assert_msg(u && strchr(p, '%') == u && !strchr(u + 1, '%'),
				      "%s: per-stream view %s", (*d)->name, p);
		}
	}
}
END_TEST

static Suite *view_suite(void)
{
	Suite *s = suite_create("view");
	TCase *tc = tcase_create("table");
	tcase_add_test(tc, test_stem);
	tcase_add_test(tc, test_byu_views);
	tcase_add_test(tc, test_find_and_is_dir);
	tcase_add_test(tc, test_list);
	tcase_add_test(tc, test_registered_formats_keep_the_contract);
	tcase_add_test(tc, test_registered_derivers_keep_the_contract);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(view_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
