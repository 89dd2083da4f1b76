/* errors.txt text: line formats, notes, the truncated flag, the size limit and its last line. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/diag.h"

static void check_text(const struct tm_diag *d, const char *want)
{
	size_t len = strlen(want);
	ck_assert_msg(d->len == len && memcmp(d->text, want, len) == 0,
		      "text is \"%.*s\", expected \"%s\"", (int)d->len, d->text ? d->text : "",
		      want);
}

START_TEST(test_formats)
{
	struct tm_diag d;
	tm_diag_init(&d);
	ck_assert_uint_eq(d.len, 0);
	ck_assert_uint_eq(d.count, 0);
	ck_assert(!d.truncated);

	tm_diag_at(&d, 4096, "bad control %d", 7);
	tm_diag_line(&d, 12, "no address in \"%s\"", "zz");
	tm_diag_note(&d, "%u of %u records are INVALID", 9u, 10u);
	tm_diag_at(&d, UINT64_MAX, "end");
	char want[256];
	snprintf(want, sizeof(want),
		 "offset 4096: bad control 7\nline 12: no address in \"zz\"\n"
		 "9 of 10 records are INVALID\noffset %" PRIu64 ": end\n",
		 UINT64_MAX);
	check_text(&d, want);
	ck_assert_uint_eq(d.count, 4);
	ck_assert_uint_eq(d.dropped, 0);
	ck_assert(!d.truncated);
	ck_assert_int_eq(tm_diag_finish(&d), 0);
	check_text(&d, want); /* nothing dropped: nothing added */
	tm_diag_free(&d);
	ck_assert_ptr_null(d.text);
}
END_TEST

START_TEST(test_truncated)
{
	struct tm_diag d;
	tm_diag_init(&d);
	tm_diag_truncated(&d, 1002, "trailing partial record: %d of %d bytes", 2, 6);
	ck_assert(d.truncated);
	ck_assert_uint_eq(d.count, 1);
	check_text(&d, "offset 1002: trailing partial record: 2 of 6 bytes\n");
	tm_diag_free(&d);
}
END_TEST

START_TEST(test_long_message)
{
	struct tm_diag d;
	char big[2000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	tm_diag_init(&d);
	tm_diag_at(&d, 1, "%s", big);
	tm_diag_note(&d, "after");
	/* a long message is cut, but stays one line and the next entry follows it */
	char *nl = memchr(d.text, '\n', d.len);
	ck_assert_ptr_nonnull(nl);
	ck_assert_uint_gt((size_t)(nl - d.text), 100);
	ck_assert(strncmp(d.text, "offset 1: xxx", 13) == 0);
	ck_assert_uint_eq(d.len - (size_t)(nl + 1 - d.text), 6);
	ck_assert(memcmp(nl + 1, "after\n", 6) == 0);
	ck_assert_uint_eq(d.count, 2);
	tm_diag_free(&d);
}
END_TEST

START_TEST(test_limit)
{
	struct tm_diag d;
	char line[64];
	/* fixed-length entries: "offset 1000000: problem number NNNNNNN\n" */
	int line_len = snprintf(line, sizeof(line), "offset %d: problem number %07d\n", 1000000, 0);
	uint64_t total = 2 * TM_DIAG_MAX_BYTES / (uint64_t)line_len + 10;
	/* entries are kept while the text is shorter than the limit */
	uint64_t kept = (TM_DIAG_MAX_BYTES + (uint64_t)line_len - 1) / (uint64_t)line_len;

	tm_diag_init(&d);
	for (uint64_t i = 0; i < total; i++)
		tm_diag_at(&d, 1000000, "problem number %07d", (int)i);
	ck_assert_uint_eq(d.count, total);
	ck_assert_uint_eq(d.dropped, total - kept);
	ck_assert_uint_eq(d.len, kept * (uint64_t)line_len);
	ck_assert_uint_lt(d.len, TM_DIAG_MAX_BYTES + (uint64_t)line_len);
	/* the kept entries are the first ones, in order */
	snprintf(line, sizeof(line), "offset %d: problem number %07d\n", 1000000, (int)kept - 1);
	ck_assert(memcmp(d.text + d.len - (size_t)line_len, line, (size_t)line_len) == 0);

	ck_assert_int_eq(tm_diag_finish(&d), 0);
	char last[64];
	int ll =
	    snprintf(last, sizeof(last), "%" PRIu64 " more problems not listed\n", total - kept);
	ck_assert_uint_eq(d.len, kept * (uint64_t)line_len + (uint64_t)ll);
	ck_assert(memcmp(d.text + d.len - (size_t)ll, last, (size_t)ll) == 0);
	tm_diag_free(&d);
}
END_TEST

/* A note is a line of its own, marked, and counted apart: no problem of the trace. */
START_TEST(test_hint)
{
	struct tm_diag d;
	tm_diag_init(&d);
	tm_diag_hint(&d, "zstd: one frame: recompress with `%s`", "pzstd");
	tm_diag_at(&d, 8, "bad");
	check_text(&d, "note: zstd: one frame: recompress with `pzstd`\noffset 8: bad\n");
	ck_assert_uint_eq(d.count, 1);
	ck_assert_uint_eq(d.notes, 1);
	ck_assert_int_eq(tm_diag_finish(&d), 0);
	tm_diag_free(&d);

	/* past the text limit a note is counted, not kept, and is no problem not listed */
	tm_diag_init(&d);
	while (d.len < TM_DIAG_MAX_BYTES)
		tm_diag_at(&d, 1, "problem");
	uint64_t problems = d.count;
	tm_diag_hint(&d, "late");
	ck_assert_uint_eq(d.notes, 1);
	ck_assert_uint_eq(d.count, problems);
	ck_assert_uint_eq(d.dropped, 0);
	tm_diag_free(&d);
}
END_TEST

START_TEST(test_null_diag)
{
	tm_diag_at(NULL, 1, "x %d", 1);
	tm_diag_truncated(NULL, 2, "y");
	tm_diag_line(NULL, 3, "z");
	tm_diag_note(NULL, "w");
	tm_diag_hint(NULL, "v");
}
END_TEST

static Suite *diag_suite(void)
{
	Suite *s = suite_create("diag");
	TCase *tc = tcase_create("text");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_formats);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_long_message);
	tcase_add_test(tc, test_limit);
	tcase_add_test(tc, test_hint);
	tcase_add_test(tc, test_null_diag);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(diag_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
