/* The views of calls/ (src/calls/calls_render.c, flamegraph.c), byte for byte where the
 * format is decided (doc/calls.md), from programs of known structure, one of them named by
 * the symbols of a C++ object; the flame graph's XML checked by xmllint where it is
 * installed. */
#include <check.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "calls_programs.h"
#include "svg_check.h"

static int folded_insns(const struct tm_calls *t, FILE *out)
{
	return tm_calls_write_folded(t, false, out);
}

static int folded_time(const struct tm_calls *t, FILE *out)
{
	return tm_calls_write_folded(t, true, out);
}

static int flamegraph(const struct tm_calls *t, FILE *out)
{
	return tm_calls_write_flamegraph(t, "calls of \"a.out\" <1> & more", out);
}

static int hot(const struct tm_calls *t, FILE *out)
{
	return tm_calls_write_hot(t, "Hottest of \"a.out\"", out);
}

static void expect_view(const struct tm_calls *t, int (*write)(const struct tm_calls *, FILE *),
			const char *want)
{
	char *got = render(t, write);
	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(test_tree_with_times)
{
	struct program p = {0};
	nested(&p);
	add_times(&p);
	struct tm_calls *t = track(&p, NULL, 0);
	expect_view(t, tm_calls_write_tree,
		    "# call tree: FUNCTION  #ENTRY @PC [tTIME] -> #EXIT @PC [tTIME]  [MARKS]\n"
		    "0x1000  #1 @0x1000 t10 -> #8 @0x1008 t80  [root]\n"
		    "  0x2000  #3 @0x2000 t30 -> #7 @0x2008 t70\n"
		    "    0x3000  #5 @0x3000 t50 -> #6 @0x3004 t60\n");
	tm_calls_free(t);
}
END_TEST

START_TEST(test_tree_marks)
{
	struct program p = {0};
	tail_call(&p);
	at(&p, 0x100c, C); /* one that never returns */
	at(&p, 0x4000, J);
	struct tm_calls_config cfg = {.limits = {.max_tree_calls = 4}};
	struct tm_calls *t = track(&p, &cfg, 0);
	expect_view(t, tm_calls_write_tree,
		    "# call tree: FUNCTION  #ENTRY @PC [tTIME] -> #EXIT @PC [tTIME]  [MARKS]\n"
		    "0x1000  #1 @0x1000 -> #9 @0x4000  [root]\n"
		    "  0x3000  #2 @0x3000 -> #2 @0x3000\n"
		    "  0x2000  #4 @0x2000 -> #5 @0x2004  [tail-called-out]\n"
		    "  0x3000  #6 @0x3000 -> #6 @0x3000  [tail-call]\n"
		    "# 1 more calls not listed\n");
	tm_calls_free(t);

	struct program q = {0};
	longjmp_like(&q);
	struct tm_calls_config sp = {.check_sp = true};
	t = track(&q, &sp, 0);
	expect_view(t, tm_calls_write_tree,
		    "# call tree: FUNCTION  #ENTRY @PC [tTIME] -> #EXIT @PC [tTIME]  [MARKS]\n"
		    "0x1000  #1 @0x1000 -> #7 @0x1014  [root]\n"
		    "  0x2000  #2 @0x2000 -> #5 @0x3004  [unwound]\n"
		    "    0x3000  #4 @0x3000 -> #5 @0x3004  [unwound]\n");
	tm_calls_free(t);

	t = track(&q, NULL, 0);
	expect_view(t, tm_calls_write_tree,
		    "# call tree: FUNCTION  #ENTRY @PC [tTIME] -> #EXIT @PC [tTIME]  [MARKS]\n"
		    "0x1000  #1 @0x1000 -> #7 @0x1014  [root]\n"
		    "  0x2000  #2 @0x2000 -> #7 @0x1014  [no-return]\n"
		    "    0x3000  #4 @0x3000 -> #7 @0x1014  [no-return]\n");
	tm_calls_free(t);
}
END_TEST

/* Recursion: f's inclusive cost is its outermost call's, its calls all three. */
START_TEST(test_profile)
{
	struct program p = {0};
	recursion(&p);
	struct tm_calls *t = track(&p, NULL, 0);
	expect_view(t, tm_calls_write_profile,
		    "# 12 instructions, 2 functions, by inclusive instructions\n"
		    "#    inclusive      exclusive      calls  function\n"
		    "            12              2          1  0x1000\n"
		    "            10             10          3  0x2000\n");
	tm_calls_free(t);

	struct program q = {0};
	nested(&q);
	add_times(&q);
	t = track(&q, NULL, 0);
	expect_view(
	    t, tm_calls_write_profile,
	    "# 8 instructions, 3 functions, by inclusive instructions\n"
	    "#    inclusive      exclusive      calls      incl_time      excl_time  function\n"
	    "             8              3          1             70             20  0x1000\n"
	    "             5              3          1             50             30  0x2000\n"
	    "             2              2          1             20             20  0x3000\n");
	tm_calls_free(t);
}
END_TEST

static int64_t int_of(json_object *obj, const char *key)
{
	json_object *v;
	ck_assert_msg(json_object_object_get_ex(obj, key, &v), "no \"%s\"", key);
	return json_object_get_int64(v);
}

START_TEST(test_profile_json)
{
	struct program p = {0};
	nested(&p);
	add_times(&p);
	struct tm_calls *t = track(&p, NULL, 0);
	char *text = render(t, tm_calls_write_profile_json);
	json_object *root = json_tokener_parse(text);
	ck_assert_ptr_nonnull(root);
	ck_assert_int_eq(int_of(root, "instructions"), 8);
	json_object *list, *has_time;
	ck_assert(json_object_object_get_ex(root, "has_time", &has_time));
	ck_assert(json_object_get_boolean(has_time));
	ck_assert(json_object_object_get_ex(root, "functions", &list));
	ck_assert_uint_eq(json_object_array_length(list), 3);
	static const struct {
		const char *name;
		int64_t calls, incl, excl, incl_time, excl_time;
	} want[] = {
	    {"0x1000", 1, 8, 3, 70, 20},
	    {"0x2000", 1, 5, 3, 50, 30},
	    {"0x3000", 1, 2, 2, 20, 20},
	};
	for (size_t i = 0; i < 3; i++) {
		json_object *f = json_object_array_get_idx(list, i), *v;
		ck_assert(json_object_object_get_ex(f, "name", &v));
		ck_assert_str_eq(json_object_get_string(v), want[i].name);
		ck_assert(json_object_object_get_ex(f, "address", &v));
		ck_assert_str_eq(json_object_get_string(v), want[i].name);
		ck_assert_int_eq(int_of(f, "calls"), want[i].calls);
		ck_assert_int_eq(int_of(f, "inclusive_instructions"), want[i].incl);
		ck_assert_int_eq(int_of(f, "exclusive_instructions"), want[i].excl);
		ck_assert_int_eq(int_of(f, "inclusive_time"), want[i].incl_time);
		ck_assert_int_eq(int_of(f, "exclusive_time"), want[i].excl_time);
	}
	json_object_put(root);
	free(text);
	tm_calls_free(t);

	/* no time: no time keys */
	struct program q = {0};
	nested(&q);
	t = track(&q, NULL, 0);
	json_object *obj;
	ck_assert_int_eq(tm_calls_profile_json(t, &obj), 0);
	json_object *f = json_object_array_get_idx(json_object_object_get(obj, "functions"), 0);
	ck_assert(!json_object_object_get_ex(f, "inclusive_time", NULL));
	json_object_put(obj);
	tm_calls_free(t);
}
END_TEST

START_TEST(test_folded)
{
	struct program p = {0};
	recursion(&p);
	struct tm_calls *t = track(&p, NULL, 0);
	expect_view(t, folded_insns,
		    "0x1000 2\n"
		    "0x1000;0x2000 4\n"
		    "0x1000;0x2000;0x2000 4\n"
		    "0x1000;0x2000;0x2000;0x2000 2\n");
	expect_view(t, folded_time, ""); /* the trace has no time */
	tm_calls_free(t);

	/* callees by name, each after its caller */
	struct program r = {0};
	tail_call(&r);
	at(&r, 0x100c, C);
	at(&r, 0x2000, C);
	at(&r, 0x3000, R);
	at(&r, 0x2004, R);
	at(&r, 0x1010, P);
	t = track(&r, NULL, 0);
	expect_view(t, folded_insns,
		    "0x1000 5\n"
		    "0x1000;0x2000 4\n"
		    "0x1000;0x2000;0x3000 1\n"
		    "0x1000;0x3000 2\n");
	tm_calls_free(t);

	struct program q = {0};
	nested(&q);
	add_times(&q);
	t = track(&q, NULL, 0);
	expect_view(t, folded_time,
		    "0x1000 20\n"
		    "0x1000;0x2000 30\n"
		    "0x1000;0x2000;0x3000 20\n");
	tm_calls_free(t);
}
END_TEST

/* The functions beyond max_functions are one, "[other]": their stacks are one line. */
START_TEST(test_folded_merges_equal_stacks)
{
	struct program p = {0};
	at(&p, 0x1000, C);
	at(&p, 0x2000, R);
	at(&p, 0x1004, C);
	at(&p, 0x3000, P);
	at(&p, 0x3004, R);
	at(&p, 0x1008, P);
	struct tm_calls_config cfg = {.limits = {.max_functions = 1}};
	struct tm_calls *t = track(&p, &cfg, 0);
	expect_view(t, folded_insns, "0x1000 3\n0x1000;[other] 3\n");
	tm_calls_free(t);
}
END_TEST

START_TEST(test_flamegraph)
{
	struct program p = {0};
	nested(&p);
	struct tm_calls *t = track(&p, NULL, 0);
	char *svg = render(t, flamegraph);
	svg_check_well_formed(svg, "the flame graph");
	ck_assert_ptr_nonnull(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	ck_assert_ptr_nonnull(strstr(svg, "</svg>\n"));
	/* self-contained: no script, no link, no other resource */
	ck_assert_ptr_null(strstr(svg, "<script"));
	ck_assert_ptr_null(strstr(svg, "href"));
	ck_assert_ptr_null(strstr(svg, "url("));
	ck_assert_ptr_nonnull(
	    strstr(svg, "<title>calls of &quot;a.out&quot; &lt;1&gt; &amp; more</title>"));
	/* a frame per stack, as wide as its instructions */
	ck_assert_ptr_nonnull(strstr(svg, "<title>all (8 instructions, 100.00%)</title>"));
	ck_assert_ptr_nonnull(strstr(svg, "<title>0x2000 (5 instructions, 62.50%)</title>"));
	ck_assert_ptr_nonnull(strstr(svg, "<title>0x3000 (2 instructions, 25.00%)</title>"
					  "<rect x=\"10.0\" y=\"50.0\" width=\"295.0\""));
	free(svg);
	tm_calls_free(t);
}
END_TEST

/* Frames too narrow to see are left out; siblings stand side by side in order of name. */
START_TEST(test_flamegraph_layout)
{
	struct program p = {0};
	at(&p, 0x1000, C); /* 0x3000 first, drawn second */
	at(&p, 0x3000, R);
	at(&p, 0x1004, C);
	at(&p, 0x2000, R);
	for (int i = 0; i < 200; i++)
		at(&p, 0x1008 + 4 * (uint64_t)i, P);
	struct tm_calls *t = track(&p, NULL, 0);
	char *svg = render(t, flamegraph);
	svg_check_well_formed(svg, "the flame graph");
	/* 204 instructions over 1180 pixels: each call 5.8 pixels, 0x2000's first */
	ck_assert_ptr_nonnull(strstr(svg, "<title>0x2000 (1 instructions, 0.49%)</title>"
					  "<rect x=\"10.0\" y=\"50.0\" width=\"5.8\""));
	ck_assert_ptr_nonnull(strstr(svg, "<title>0x3000 (1 instructions, 0.49%)</title>"
					  "<rect x=\"15.8\" y=\"50.0\" width=\"5.8\""));
	free(svg);
	tm_calls_free(t);
}
END_TEST

/* plots/hot.svg: the functions by self instructions, ties by inclusive ones, each bar with its
 * self and inclusive instructions and calls, its entry in the tooltip. */
START_TEST(test_hot)
{
	struct program p = {0};
	nested(&p);
	struct tm_calls *t = track(&p, NULL, 0);
	char *svg = render(t, hot);
	svg_check_well_formed(svg, "the flame graph");
	ck_assert_ptr_nonnull(strstr(svg, "<title>Hottest of &quot;a.out&quot;</title>"));
	/* 0x1000 and 0x2000 ran 3 of their own each: 0x1000, of 8 in all, first */
	const char *one = strstr(svg, "data-rank=\"1\" data-name=\"0x1000\" data-value=\"3\" "
				      "data-total=\"8\" data-extra=\"1\"");
	const char *two = strstr(svg, "data-rank=\"2\" data-name=\"0x2000\" data-value=\"3\" "
				      "data-total=\"5\" data-extra=\"1\"");
	const char *three = strstr(svg, "data-rank=\"3\" data-name=\"0x3000\" data-value=\"2\" "
					"data-total=\"2\" data-extra=\"1\"");
	ck_assert_ptr_nonnull(one);
	ck_assert_ptr_nonnull(two);
	ck_assert_ptr_nonnull(three);
	ck_assert_ptr_nonnull(strstr(svg, "<title>0x2000: self instructions 3 (37.5%), total, with "
					  "callees 5 (62.5%), calls 1; entry 0x2000</title>"));
	ck_assert_ptr_nonnull(strstr(svg, ">37.5% (3), total 62.5%</text>"));
	ck_assert_ptr_null(strstr(svg, "data-rank=\"4\""));
	free(svg);
	tm_calls_free(t);
}
END_TEST

/* A C++ object the C++ compiler builds here (never skipped): its functions named by their
 * symbols, demangled in the text views and the drawings, mangled in profile.json's "name" and
 * beside the demangled name in the tooltips. */
static const char cxx_source[] =
    "namespace shapes {\n"
    "struct Circle { int r; int area(int) const; };\n"
    "int Circle::area(int s) const { return r * s; }\n"
    "bool operator<(const Circle &a, const Circle &b) { return a.r < b.r; }\n"
    "}\n"
    "extern \"C\" int entry(int x)\n"
    "{\n"
    "	shapes::Circle c{x}, d{x + 1};\n"
    "	return c.area(x) + (c < d);\n"
    "}\n";
#define AREA	    "shapes::Circle::area(int) const"
#define LESS	    "shapes::operator<(shapes::Circle const&, shapes::Circle const&)"
#define AREA_SYMBOL "_ZNK6shapes6Circle4areaEi"
#define LESS_SYMBOL "_ZN6shapesltERKNS_6CircleES2_"

static uint64_t address_of(const struct tm_symbols *s, const char *name)
{
	for (size_t i = 0; i < tm_symbols_count(s); i++)
		if (strcmp(tm_symbols_at(s, i)->name, name) == 0)
			return tm_symbols_at(s, i)->addr;
	ck_abort_msg("no symbol %s", name);
	return 0;
}

static struct tm_symbols *compile_cxx(void)
{
	char dir[] = "/tmp/tm-calls-render-XXXXXX", path[64], cmd[256];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/shapes.cc", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(cxx_source, f);
	ck_assert_int_eq(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "cd '%s' && g++ -c -O0 -fno-function-sections shapes.cc", dir);
	ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
	struct tm_symbols *s;
	ck_assert_int_eq(tm_symbols_new(&s), 0);
	snprintf(path, sizeof(path), "%s/shapes.o", dir);
	ck_assert_int_eq(tm_symbols_load_elf(s, path, 0), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	return s;
}

static void expect_in(const char *text, const char *want, const char *view)
{
	ck_assert_msg(strstr(text, want), "%s lacks \"%s\":\n%.1500s", view, want, text);
}

START_TEST(test_demangled_names)
{
	struct tm_symbols *s = compile_cxx();
	uint64_t entry = address_of(s, "entry"), area = address_of(s, AREA_SYMBOL),
		 less = address_of(s, LESS_SYMBOL);
	struct program p = {0};
	at(&p, entry + 8, C); /* entry calls area, then operator< */
	at(&p, area, R);
	at(&p, entry + 12, C);
	at(&p, less, P);
	at(&p, less + 4, R);
	at(&p, entry + 16, P);
	struct tm_calls_config cfg = {.symbols = s};
	struct tm_calls *t = track(&p, &cfg, 0);

	char *text = render(t, tm_calls_write_tree);
	expect_in(text, "\n  " AREA "  #2 ", "tree.txt");
	expect_in(text, "\n  " LESS "  #4 ", "tree.txt");
	free(text);
	text = render(t, tm_calls_write_profile);
	expect_in(text, "          1  " LESS "\n", "profile.txt");
	free(text);
	text = render(t, folded_insns);
	expect_in(text, "entry;" AREA " 1\n", "folded.txt");
	expect_in(text, "entry;" LESS " 2\n", "folded.txt");
	ck_assert_ptr_null(strstr(text, "_Z"));
	free(text);

	json_object *obj, *v;
	ck_assert_int_eq(tm_calls_profile_json(t, &obj), 0);
	json_object *list = json_object_object_get(obj, "functions");
	ck_assert_uint_eq(json_object_array_length(list), 3);
	static const char *const want[][2] = {
	    {"entry", "entry"}, {LESS_SYMBOL, LESS}, {AREA_SYMBOL, AREA}};
	for (size_t i = 0; i < 3; i++) {
		json_object *f = json_object_array_get_idx(list, i);
		ck_assert(json_object_object_get_ex(f, "name", &v));
		ck_assert_str_eq(json_object_get_string(v), want[i][0]);
		ck_assert(json_object_object_get_ex(f, "demangled", &v));
		ck_assert_str_eq(json_object_get_string(v), want[i][1]);
	}
	json_object_put(obj);

	text = render(t, hot);
	svg_check_well_formed(text, "hot.svg");
	expect_in(text,
		  "data-rank=\"2\" data-name=\"shapes::operator&lt;(shapes::Circle const&amp;, "
		  "shapes::Circle const&amp;)\"",
		  "hot.svg");
	char tooltip[256];
	snprintf(tooltip, sizeof(tooltip),
		 "calls 1; symbol " LESS_SYMBOL ", entry 0x%" PRIx64 "</title>", less);
	expect_in(text, tooltip, "hot.svg");
	expect_in(text, ">shapes::Circle::area(int) const</text>", "hot.svg");
	free(text);
	text = render(t, flamegraph);
	svg_check_well_formed(text, "the flame graph");
	expect_in(
	    text,
	    "<title>shapes::Circle::area(int) const (1 instructions, 16.67%); symbol " AREA_SYMBOL
	    "</title>",
	    "flamegraph.svg");
	expect_in(text, "<title>entry (6 instructions, 100.00%)</title>", "flamegraph.svg");
	free(text);
	tm_calls_free(t);
	tm_symbols_free(s);
}
END_TEST

START_TEST(test_empty_views)
{
	struct tm_calls *t = track(&(struct program){0}, NULL, 0);
	expect_view(t, tm_calls_write_tree,
		    "# call tree: FUNCTION  #ENTRY @PC [tTIME] -> #EXIT @PC [tTIME]  [MARKS]\n");
	expect_view(t, folded_insns, "");
	expect_view(t, tm_calls_write_profile,
		    "# 0 instructions, 0 functions, by inclusive instructions\n"
		    "#    inclusive      exclusive      calls  function\n");
	char *svg = render(t, flamegraph);
	svg_check_well_formed(svg, "the flame graph");
	free(svg);
	svg = render(t, hot);
	svg_check_well_formed(svg, "the flame graph");
	ck_assert_ptr_null(strstr(svg, "class=\"bar\""));
	ck_assert_ptr_nonnull(strstr(svg, "data-note=\"no calls: the trace ran no instructions\""));
	free(svg);
	tm_calls_free(t);
}
END_TEST

static Suite *calls_render_suite(void)
{
	Suite *s = suite_create("calls_render");
	TCase *tc = tcase_create("calls_render");
	tcase_add_test(tc, test_tree_with_times);
	tcase_add_test(tc, test_tree_marks);
	tcase_add_test(tc, test_profile);
	tcase_add_test(tc, test_profile_json);
	tcase_add_test(tc, test_folded);
	tcase_add_test(tc, test_folded_merges_equal_stacks);
	tcase_add_test(tc, test_flamegraph);
	tcase_add_test(tc, test_flamegraph_layout);
	tcase_add_test(tc, test_hot);
	tcase_add_test(tc, test_demangled_names);
	tcase_add_test(tc, test_empty_views);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(calls_render_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
