/* Size parsing, hex output, name extensions, ARRAY_SIZE, the stats.json helpers and the edit
 * distance behind "did you mean". */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/registry.h"
#include "tracemount/stats_json.h"
#include "tracemount/util.h"

START_TEST(test_parse_size_ok)
{
	static const struct {
		const char *s;
		uint64_t v;
	} rows[] = {
	    {"0", 0},
	    {"4096", 4096},
	    {"64K", 64ull << 10},
	    {"64k", 64ull << 10},
	    {"64M", 64ull << 20},
	    {"1G", 1ull << 30},
	    {"2T", 2ull << 40},
	    {"1Mi", 1ull << 20},
	    {"1MB", 1ull << 20},
	    {"1MiB", 1ull << 20},
	    {"3g", 3ull << 30},
	    {"16777215T", 16777215ull << 40},
	    {"18446744073709551615", UINT64_MAX},
	    {"007", 7},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t v = 12345;
		ck_assert_msg(tm_parse_size(rows[i].s, &v) == 0, "\"%s\" rejected", rows[i].s);
		ck_assert_msg(v == rows[i].v, "\"%s\" is %llu, expected %llu", rows[i].s,
			      (unsigned long long)v, (unsigned long long)rows[i].v);
	}
}
END_TEST

START_TEST(test_parse_size_bad)
{
	static const char *const rows[] = {
	    "",
	    "x",
	    "12Q",
	    "-1",
	    "+1",
	    " 1",
	    "1 ",
	    "K",
	    "1KK",
	    "1.5G",
	    "0x10",
	    "1i",
	    "18446744073709551616", /* 2^64 */
	    "16777216T",	    /* 2^64 bytes */
	    "17179869184G",	    /* 2^64 bytes */
	    "99999999999999999999999",
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t v = 12345;
		ck_assert_msg(tm_parse_size(rows[i], &v) == -EINVAL, "\"%s\" accepted", rows[i]);
		ck_assert_msg(v == 12345, "\"%s\": output written on error", rows[i]);
	}
	uint64_t v;
	ck_assert_int_eq(tm_parse_size(NULL, &v), -EINVAL);
}
END_TEST

START_TEST(test_put_hex)
{
	static const struct {
		uint64_t v;
		unsigned digits;
	} rows[] = {
	    {0xdeadbeef, 8}, {0, 8},	      {0x1234, 2},	{0xab, 2},
	    {0, 1},	     {0xf, 1},	      {UINT64_MAX, 16}, {0x0123456789abcdefull, 16},
	    {0x10, 4},	     {0x12345678, 3},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char out[32], want[32];
		uint64_t mask =
		    rows[i].digits >= 16 ? UINT64_MAX : (1ull << (4 * rows[i].digits)) - 1;
		snprintf(want, sizeof(want), "%0*llx", (int)rows[i].digits,
			 (unsigned long long)(rows[i].v & mask));
		memset(out, '#', sizeof(out));
		char *end = tm_put_hex(out, rows[i].v, rows[i].digits);
		ck_assert_ptr_eq(end, out + rows[i].digits);
		ck_assert_int_eq(out[rows[i].digits], '#');
		out[rows[i].digits] = '\0';
		ck_assert_str_eq(out, want);
	}
}
END_TEST

START_TEST(test_be32)
{
	const uint8_t b[4] = {0x12, 0x34, 0xab, 0xcd};
	ck_assert_uint_eq(tm_be32(b), 0x1234abcd);
	const uint8_t f[4] = {0xff, 0, 0, 0x01};
	ck_assert_uint_eq(tm_be32(f), 0xff000001u);
}
END_TEST

START_TEST(test_name_has_extension)
{
	static const char *const ext[] = {"tt6", "bb", NULL};
	ck_assert(tm_name_has_extension("a.tt6", ext));
	ck_assert(tm_name_has_extension("x.y.bb", ext));
	ck_assert(!tm_name_has_extension("a.tt6e", ext));
	ck_assert(!tm_name_has_extension("tt6", ext)); /* no dot */
	ck_assert(!tm_name_has_extension("att6", ext));
	ck_assert(!tm_name_has_extension("a.tt6", NULL));
	int a[7];
	ck_assert_uint_eq(ARRAY_SIZE(a), 7);
	ck_assert_uint_eq(ARRAY_SIZE(ext), 3);
}
END_TEST

/* The first failure stays in err; a NULL value or object is one; a JSON null is not. */
START_TEST(test_json_add)
{
	json_object *obj = json_object_new_object();
	int err = 0;
	ck_assert_int_eq(tm_json_add_int(obj, "n", 7, &err), 0);
	ck_assert_int_eq(tm_json_add_or_null(obj, "none", false, json_object_new_int(1), &err), 0);
	ck_assert_int_eq(tm_json_add_or_null(obj, "some", true, json_object_new_int(2), &err), 0);
	ck_assert_str_eq(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN),
			 "{\"n\":7,\"none\":null,\"some\":2}");
	ck_assert_int_eq(tm_json_add(obj, "lost", NULL, &err), -ENOMEM); /* a new_* that failed */
	ck_assert(!json_object_object_get_ex(obj, "lost", NULL));
	ck_assert_int_eq(tm_json_add_int(obj, "after", 1, &err), -ENOMEM); /* kept */
	ck_assert_int_eq(json_object_object_length(obj), 4);
	err = 0;
	ck_assert_int_eq(tm_json_add(NULL, "k", json_object_new_int(1), &err), -ENOMEM);
	err = 0;
	ck_assert_int_eq(tm_json_add_or_null(NULL, "k", false, NULL, &err), -ENOMEM);
	json_object_put(obj);
}
END_TEST

START_TEST(test_edit_distance)
{
	static const struct {
		const char *a, *b;
		unsigned d;
	} rows[] = {
	    {"", "", 0},	{"ls", "ls", 0},	 {"lss", "ls", 1},	   {"ls", "lss", 1},
	    {"byuu", "byu", 1}, {"memroy", "memory", 2}, {"kitten", "sitting", 3}, {"", "cat", 3},
	    {"cat", "", 3},	{"abc", "xyz", 3},	 {"tt6", "tt6e", 1},
	};
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		ck_assert_msg(tm_edit_distance(rows[i].a, rows[i].b) == rows[i].d, "%s -> %s",
			      rows[i].a, rows[i].b);
	char long_a[80], long_b[80];
	memset(long_a, 'a', 79), long_a[79] = '\0';
	memcpy(long_b, long_a, 80), long_b[0] = 'b';
	ck_assert_uint_eq(tm_edit_distance(long_a, long_a), 0);
	ck_assert_uint_eq(tm_edit_distance(long_a, long_b), UINT_MAX);
}
END_TEST

START_TEST(test_nearest)
{
	static const char *const commands[] = {"cat", "ls", "index", "help", NULL};
	ck_assert_str_eq(tm_nearest("lss", commands), "ls");
	ck_assert_str_eq(tm_nearest("indx", commands), "index");
	ck_assert_str_eq(tm_nearest("cat", commands), "cat");
	ck_assert_ptr_null(tm_nearest("mount", commands)); /* 3 edits from every one: too far */
	ck_assert_ptr_null(tm_nearest("xy", commands));
	static const char *const options[] = {"cache", "memory", "format", "nonempty", NULL};
	ck_assert_str_eq(tm_nearest("memroy", options), "memory"); /* 2 edits of 6 letters */
	ck_assert_str_eq(tm_nearest("nonemtpy", options), "nonempty");
	ck_assert_ptr_null(tm_nearest("nosuchopt", options));
	static const char *const none[] = {NULL};
	ck_assert_ptr_null(tm_nearest("cat", none));
}
END_TEST

START_TEST(test_format_suggest)
{
	char buf[1024];
	tm_format_suggest("byuu", buf, sizeof(buf));
	ck_assert_msg(strncmp(buf, "the formats: byu, byu12, ", 25) == 0, "%s", buf);
	ck_assert_msg(strstr(buf, "; nearest: byu") && !strstr(buf, "; nearest: byu12"), "%s", buf);
	tm_format_suggest("nothinglikeit", buf, sizeof(buf));
	ck_assert_msg(!strstr(buf, "nearest"), "%s", buf);
	tm_format_suggest("byuu", buf, 20); /* cut, still a string */
	ck_assert_uint_eq(strlen(buf), 19);
}
END_TEST

static Suite *util_suite(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("util");
	tcase_add_test(tc, test_parse_size_ok);
	tcase_add_test(tc, test_parse_size_bad);
	tcase_add_test(tc, test_put_hex);
	tcase_add_test(tc, test_be32);
	tcase_add_test(tc, test_name_has_extension);
	tcase_add_test(tc, test_json_add);
	tcase_add_test(tc, test_edit_distance);
	tcase_add_test(tc, test_nearest);
	tcase_add_test(tc, test_format_suggest);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(util_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
