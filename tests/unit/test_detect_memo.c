/* Detection's memo (src/core/detect_memo.c): an entry holds while the file's attributes stay. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/detect_memo.h"
#include "tracemount/registry.h"

static bool head_test(const char *name, const uint8_t *head, size_t len)
{
	(void)name, (void)head;
	return len > 0;
}

static bool other_test(const char *name, const uint8_t *head, size_t len)
{
	(void)name, (void)head, (void)len;
	return false;
}

static struct stat file_stat(ino_t ino, off_t size, time_t mtime, time_t ctime)
{
	struct stat st = {0};
	st.st_dev = 7;
	st.st_ino = ino;
	st.st_size = size;
	st.st_mtim.tv_sec = mtime;
	st.st_ctim.tv_sec = ctime;
	return st;
}

START_TEST(an_entry_holds_while_the_attributes_stay)
{
	struct tm_detect_memo *m;
	ck_assert_int_eq(tm_detect_memo_new(&m), 0);
	const struct tm_format *fmt = tm_format_find("byu");
	ck_assert_ptr_nonnull(fmt);
	struct stat st = file_stat(10, 600, 100, 100);
	struct tm_detect_result r = {.fmt = fmt, .also = head_test}, got = {.also = head_test};
	ck_assert(!tm_detect_memo_find(m, "a/t.byu", &st, &got));
	tm_detect_memo_store(m, "a/t.byu", &st, &r);
	ck_assert(tm_detect_memo_find(m, "a/t.byu", &st, &got));
	ck_assert_ptr_eq(got.fmt, fmt);
	ck_assert(!got.matched);
	/* another path, another `also` test, and each attribute changed: not found */
	got.also = head_test;
	ck_assert(!tm_detect_memo_find(m, "b/t.byu", &st, &got));
	got.also = other_test;
	ck_assert(!tm_detect_memo_find(m, "a/t.byu", &st, &got));
	struct stat changed[] = {file_stat(11, 600, 100, 100), file_stat(10, 601, 100, 100),
				 file_stat(10, 600, 101, 100), file_stat(10, 600, 100, 101)};
	for (size_t i = 0; i < sizeof(changed) / sizeof(changed[0]); i++) {
		got.also = head_test;
		ck_assert_msg(!tm_detect_memo_find(m, "a/t.byu", &changed[i], &got), "change %zu",
			      i);
	}
	struct stat other_dev = st;
	other_dev.st_dev = 8;
	ck_assert(!tm_detect_memo_find(m, "a/t.byu", &other_dev, &got));
	st.st_mtim.tv_nsec = 1;
	ck_assert(!tm_detect_memo_find(m, "a/t.byu", &st, &got));
	/* stored again with new attributes and a new answer: the new one replaces the old */
	struct tm_detect_result none = {.fmt = NULL, .also = head_test, .matched = true};
	tm_detect_memo_store(m, "a/t.byu", &st, &none);
	got = (struct tm_detect_result){.also = head_test};
	ck_assert(tm_detect_memo_find(m, "a/t.byu", &st, &got));
	ck_assert_ptr_null(got.fmt);
	ck_assert(got.matched);
	st.st_mtim.tv_nsec = 0;
	ck_assert(!tm_detect_memo_find(m, "a/t.byu", &st, &got));
	tm_detect_memo_free(m);
}
END_TEST

START_TEST(many_paths)
{
	struct tm_detect_memo *m;
	ck_assert_int_eq(tm_detect_memo_new(&m), 0);
	char path[64];
	struct tm_detect_result r = {.also = head_test};
	for (unsigned i = 0; i < 50000; i++) {
		struct stat st = file_stat(i, i, i, i);
		snprintf(path, sizeof(path), "d%u/t%u.byu", i % 97, i);
		r.matched = i % 2;
		tm_detect_memo_store(m, path, &st, &r);
	}
	for (unsigned i = 0; i < 50000; i++) {
		struct stat st = file_stat(i, i, i, i);
		snprintf(path, sizeof(path), "d%u/t%u.byu", i % 97, i);
		struct tm_detect_result got = {.also = head_test};
		ck_assert(tm_detect_memo_find(m, path, &st, &got));
		ck_assert_int_eq(got.matched, i % 2);
	}
	tm_detect_memo_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("detect_memo");
	TCase *tc = tcase_create("memo");
	tcase_add_test(tc, an_entry_holds_while_the_attributes_stay);
	tcase_add_test(tc, many_paths);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
