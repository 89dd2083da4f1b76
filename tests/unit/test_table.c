/* Table views kept deflated in pieces (src/core/table.c): what is written through the stream
 * comes back piece by piece, at every length around a piece's edge; an empty table; the checks
 * an index file's table must pass. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/table.h"

/* Bytes that deflate a little: a counter's text. */
static char *make_text(size_t len)
{
	char *t = malloc(len + 16);
	size_t n = 0;
	for (unsigned i = 0; n < len; i++)
		n += (size_t)snprintf(t + n, 16, "%u\n", i);
	return t;
}

/* Writes len bytes in writes of `step`, then reads every piece back. */
static void round_trip(size_t len, size_t step)
{
	char *text = make_text(len);
	struct tm_table t = {0};
	FILE *f = tm_table_writer(&t);
	ck_assert_ptr_nonnull(f);
	for (size_t done = 0; done < len; done += step)
		ck_assert_uint_eq(fwrite(text + done, 1, len - done < step ? len - done : step, f),
				  len - done < step ? len - done : step);
	ck_assert_int_eq(tm_table_finish(&t, f), 0);
	ck_assert_uint_eq(t.len, len);
	ck_assert_uint_eq(t.n_pieces, (len + TM_TABLE_PIECE - 1) / TM_TABLE_PIECE);
	ck_assert_ptr_null(tm_table_check(&t, t.n_pieces ? t.ends[t.n_pieces] : 0));
	uint8_t *piece = malloc(TM_TABLE_PIECE);
	size_t at = 0;
	for (uint64_t k = 0; k < t.n_pieces; k++) {
		size_t n = tm_table_piece_len(&t, k);
		ck_assert_int_eq(tm_table_inflate(&t, k, piece), 0);
		ck_assert_int_eq(memcmp(piece, text + at, n), 0);
		at += n;
	}
	ck_assert_uint_eq(at, len);
	ck_assert_uint_lt(tm_table_mem(&t), len / 2 + 4096); /* kept deflated */
	free(piece);
	tm_table_free(&t);
	free(text);
}

START_TEST(test_round_trips)
{
	const size_t lens[] = {1,
			       1000,
			       TM_TABLE_PIECE - 1,
			       TM_TABLE_PIECE,
			       TM_TABLE_PIECE + 1,
			       3 * TM_TABLE_PIECE + 12345};
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		round_trip(lens[i], 4096);
		round_trip(lens[i], 100003);
	}
}
END_TEST

START_TEST(test_empty)
{
	struct tm_table t = {0};
	FILE *f = tm_table_writer(&t);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(tm_table_finish(&t, f), 0);
	ck_assert_uint_eq(t.len, 0);
	ck_assert_uint_eq(t.n_pieces, 0);
	ck_assert_ptr_null(tm_table_check(&t, 0));
	ck_assert_ptr_nonnull(tm_table_check(&t, 10)); /* bytes no piece covers */
	tm_table_free(&t);
}
END_TEST

/* What an index file's table must hold together, and a damaged piece fails to inflate. */
START_TEST(test_checks)
{
	size_t len = 2 * TM_TABLE_PIECE + 10;
	char *text = make_text(len);
	struct tm_table t = {0};
	FILE *f = tm_table_writer(&t);
	fwrite(text, 1, len, f);
	ck_assert_int_eq(tm_table_finish(&t, f), 0);
	uint64_t z_len = t.ends[t.n_pieces];
	ck_assert_ptr_null(tm_table_check(&t, z_len));
	ck_assert_ptr_nonnull(tm_table_check(&t, z_len + 1));
	t.len += TM_TABLE_PIECE;
	ck_assert_ptr_nonnull(tm_table_check(&t, z_len)); /* a piece missing */
	t.len -= TM_TABLE_PIECE;
	struct tm_table wraps = {.len = UINT64_MAX, .n_pieces = 0};
	ck_assert_ptr_nonnull(tm_table_check(&wraps, 0)); /* not 0 pieces, whatever wraps */
	uint64_t saved = t.ends[1];
	t.ends[1] = t.ends[2] + 1;
	ck_assert_ptr_nonnull(tm_table_check(&t, z_len)); /* out of order */
	t.ends[1] = saved;
	t.z[t.ends[1] + 20] ^= 0x55;
	uint8_t *piece = malloc(TM_TABLE_PIECE);
	ck_assert_int_eq(tm_table_inflate(&t, 0, piece), 0);
	ck_assert_int_eq(tm_table_inflate(&t, 1, piece), -EIO);
	free(piece);
	tm_table_free(&t);
	free(text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("table");
	TCase *tc = tcase_create("table");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_round_trips);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_checks);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
