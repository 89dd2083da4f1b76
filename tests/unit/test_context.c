/* The context: format overrides, detection, the table of traces and the status text. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byu_ref.h"
#include "mem_source.h"
#include "tracemount/context.h"
#include "tracemount/index.h"
#include "tracemount/trace.h"

static const struct tm_format *const F = &tm_format_byu;

static struct tm_context *new_ctx(void)
{
	struct tm_context *ctx = NULL;
	ck_assert_int_eq(tm_context_new(TM_DEFAULT_MEMORY, &ctx), 0);
	ck_assert_ptr_nonnull(ctx);
	return ctx;
}

/* Detection by name only: BYU does not read content, and these files do not exist. */
START_TEST(test_detect_by_extension)
{
	struct tm_context *ctx = new_ctx();
	ck_assert_ptr_eq(tm_context_detect(ctx, AT_FDCWD, "a.byu"), F);
	ck_assert_ptr_eq(tm_context_detect(ctx, AT_FDCWD, "dir/sub/a.byu"), F);
	ck_assert_ptr_null(tm_context_detect(ctx, AT_FDCWD, "a.tr"));
	ck_assert_ptr_null(tm_context_detect(ctx, AT_FDCWD, "a.byu/x"));
	ck_assert_ptr_null(tm_context_detect(ctx, AT_FDCWD, "byu"));
	tm_context_free(ctx);
}
END_TEST

START_TEST(test_override_base_name)
{
	struct tm_context *ctx = new_ctx();
	ck_assert_int_eq(tm_context_add_override(ctx, "*.tr:byu"), 0);
	ck_assert_uint_eq(ctx->n_overrides, 1);
	ck_assert_str_eq(ctx->overrides[0].glob, "*.tr");
	ck_assert_ptr_eq(ctx->overrides[0].fmt, F);
	/* a glob without '/' matches the base name, wherever the file is */
	ck_assert_ptr_eq(tm_context_detect(ctx, AT_FDCWD, "x.tr"), F);
	ck_assert_ptr_eq(tm_context_detect(ctx, AT_FDCWD, "sub/deep/x.tr"), F);
	ck_assert_ptr_null(tm_context_detect(ctx, AT_FDCWD, "x.tra"));
	ck_assert_ptr_null(tm_context_detect(ctx, AT_FDCWD, "x.tr/y"));
	tm_context_free(ctx);
}
END_TEST

START_TEST(test_override_path)
{
	struct tm_context *ctx = new_ctx();
	ck_assert_int_eq(tm_context_add_override(ctx, "sub/*.dat:byu"), 0);
	/* a glob with '/' matches the relative path, and '*' does not cross a '/' */
	ck_assert_ptr_eq(tm_context_detect(ctx, AT_FDCWD, "sub/y.dat"), F);
	ck_assert_ptr_null(tm_context_detect(ctx, AT_FDCWD, "y.dat"));
	ck_assert_ptr_null(tm_context_detect(ctx, AT_FDCWD, "sub/deep/y.dat"));
	ck_assert_ptr_null(tm_context_detect(ctx, AT_FDCWD, "other/sub/y.dat"));
	ck_assert_ptr_null(tm_context_detect(ctx, AT_FDCWD, "sub/y.dat2"));
	tm_context_free(ctx);
}
END_TEST

/* Detection given the head of a file: overrides first, then the probes. */
START_TEST(test_detect_head)
{
	struct tm_context *ctx = new_ctx();
	uint8_t head[60];
	for (int i = 0; i < 10; i++)
		byu_ref_put(head + i * 6, 0x1000 + 8 * (uint32_t)i, 0, 0x80);
	ck_assert_ptr_eq(tm_context_detect_head(ctx, "d/a.byu", head, sizeof(head)), F);
	ck_assert_ptr_eq(tm_context_detect_head(ctx, "a.byu", NULL, 0), F);
	ck_assert_ptr_null(tm_context_detect_head(ctx, "d/a.dat", head, sizeof(head)));
	ck_assert_int_eq(tm_context_add_override(ctx, "d/*.dat:byu"), 0);
	ck_assert_ptr_eq(tm_context_detect_head(ctx, "d/a.dat", head, sizeof(head)), F);
	ck_assert_ptr_eq(tm_context_detect_head(ctx, "d/a.dat", NULL, 0), F);
	ck_assert_ptr_null(tm_context_detect_head(ctx, "a.dat", head, sizeof(head)));
	tm_context_free(ctx);
}
END_TEST

START_TEST(test_bad_overrides)
{
	struct tm_context *ctx = new_ctx();
	const char *invalid[] = {"", "nocolon", ":byu", "*.x:", ":"};
	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
		ck_assert_msg(tm_context_add_override(ctx, invalid[i]) == -EINVAL, "\"%s\"",
			      invalid[i]);
	ck_assert_int_eq(tm_context_add_override(ctx, "*.x:nosuchformat"), -ENOENT);
	ck_assert_int_eq(tm_context_add_override(ctx, "*.x:BYU"), -ENOENT);
	ck_assert_uint_eq(ctx->n_overrides, 0);
	/* the last colon separates the name, so a glob may hold colons */
	ck_assert_int_eq(tm_context_add_override(ctx, "a:b*:byu"), 0);
	ck_assert_ptr_eq(tm_context_detect(ctx, AT_FDCWD, "a:b1"), F);
	tm_context_free(ctx);
}
END_TEST

START_TEST(test_trace_table)
{
	struct tm_context *ctx = new_ctx();
	struct tm_trace *a, *a2, *b;
	ck_assert_int_eq(tm_context_trace(ctx, "dir/a.byu", F, &a), 0);
	ck_assert_str_eq(a->path, "dir/a.byu");
	ck_assert_ptr_eq(a->fmt, F);
	ck_assert_str_eq(a->views.stem, "a");
	ck_assert_int_eq(a->state, TM_TRACE_NEW);
	ck_assert_uint_eq(a->refs, 1);
	ck_assert_int_eq(tm_context_trace(ctx, "dir/a.byu", F, &a2), 0);
	ck_assert_ptr_eq(a2, a);
	ck_assert_uint_eq(a->refs, 2);
	ck_assert_int_eq(tm_context_trace(ctx, "b.byu", F, &b), 0);
	ck_assert_ptr_ne(b, a);
	ck_assert_uint_ne(b->uid, a->uid);
	tm_context_trace_put(ctx, a2);
	ck_assert_uint_eq(a->refs, 1);
	tm_context_trace_put(ctx, a);
	ck_assert_uint_eq(a->refs, 0);

	/* the same path as another format: the file was replaced */
	struct tm_format other = *F;
	other.name = "other";
	struct tm_trace *x;
	ck_assert_int_eq(tm_context_trace(ctx, "b.byu", &other, &x), -ESTALE);

	/* many traces: the table grows and every one is found again */
	struct tm_trace *all[700];
	char path[64];
	for (int i = 0; i < 700; i++) {
		snprintf(path, sizeof(path), "many/t%03d.byu", i);
		ck_assert_int_eq(tm_context_trace(ctx, path, F, &all[i]), 0);
	}
	for (int i = 0; i < 700; i++) {
		snprintf(path, sizeof(path), "many/t%03d.byu", i);
		ck_assert_int_eq(tm_context_trace(ctx, path, F, &x), 0);
		ck_assert_ptr_eq(x, all[i]);
		ck_assert_str_eq(x->path, path);
		ck_assert_uint_eq(x->refs, 2);
		for (int j = 0; j < i; j += 97)
			ck_assert_uint_ne(x->uid, all[j]->uid);
		tm_context_trace_put(ctx, x);
		tm_context_trace_put(ctx, x);
	}
	ck_assert_int_eq(tm_context_trace(ctx, "dir/a.byu", F, &x), 0);
	ck_assert_ptr_eq(x, a);
	tm_context_trace_put(ctx, x);
	tm_context_trace_put(ctx, b);
	tm_context_free(ctx);
}
END_TEST

START_TEST(test_status)
{
	struct tm_context *ctx = new_ctx();
	struct tm_trace *t[4];
	const char *paths[] = {"zeta.byu", "alpha.byu", "m/inner.byu", "m.byu"};
	char *text;
	size_t len;

	static const char empty[] =
	    "# 0 traces; indexes: 0 built, 0 read from index files, 0 "
	    "index files refused, 0 index files out of date, 0 builds failed; 0 problems in the "
	    "errors.txt of 0 traces; cache none\n";
	ck_assert_int_eq(tm_context_status(ctx, &text, &len), 0);
	ck_assert_msg(len == strlen(empty) && memcmp(text, empty, len) == 0, "%.*s", (int)len,
		      text);
	free(text);

	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(tm_context_trace(ctx, paths[i], F, &t[i]), 0);

	/* index zeta.byu (10 records) and fail m.byu */
	size_t n = 10;
	uint8_t *data = byu_ref_gen(n, 0, 3, 0);
	struct mem_source src, bad;
	mem_source_init(&src, data, n * 6);
	mem_source_init(&bad, data, n * 6);
	bad.fail = -EIO;
	const struct tm_index *ix;
	ck_assert_int_eq(tm_trace_index(t[0], &src.src, &ix), 0);
	ck_assert_int_eq(tm_trace_index(t[3], &bad.src, &ix), -EIO);

	ck_assert_int_eq(tm_context_status(ctx, &text, &len), 0);
	char want[1024];
	snprintf(want, sizeof(want),
		 "alpha.byu\tbyu\tnot indexed\t-\t-\n"
		 "m.byu\tbyu\terror: %s\t-\t-\n"
		 "m/inner.byu\tbyu\tnot indexed\t-\t-\n"
		 "zeta.byu\tbyu\tindexed\t%zu\t%zu\n"
		 "# 4 traces; indexes: 1 built, 0 read from index files, 0 index files refused, "
		 "0 index files out of date, 1 builds failed; 0 problems in the errors.txt of 0 "
		 "traces; cache none\n",
		 strerror(EIO), n, tm_index_mem(t[0]->index));
	ck_assert_msg(len == strlen(want) && memcmp(text, want, len) == 0,
		      "status:\n%.*s\nexpected:\n%s", (int)len, text, want);
	free(text);

	for (int i = 0; i < 4; i++)
		tm_context_trace_put(ctx, t[i]);
	mem_source_free(&src);
	mem_source_free(&bad);
	free(data);
	tm_context_free(ctx);
}
END_TEST

static Suite *context_suite(void)
{
	Suite *s = suite_create("context");
	TCase *tc = tcase_create("context");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_detect_by_extension);
	tcase_add_test(tc, test_override_base_name);
	tcase_add_test(tc, test_override_path);
	tcase_add_test(tc, test_detect_head);
	tcase_add_test(tc, test_bad_overrides);
	tcase_add_test(tc, test_trace_table);
	tcase_add_test(tc, test_status);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(context_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
