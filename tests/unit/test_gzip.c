/* Gzip access: detection, the scan's output and access points, span decompression, and
 * multi-member, truncated, corrupt and padded streams. Compressed data is made here with
 * zlib's deflate; expectations are the original bytes. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "mem_source.h"
#include "zscan.h"
#include "tracemount/diag.h"
#include "tracemount/compress.h"

/* Appends one gzip member of data to *out (grown), at level, with deflate's memLevel: 9 makes
 * blocks twice as long as the default 8. */
static void gzip_member_ml(const uint8_t *data, size_t len, int level, int mem_level, uint8_t **out,
			   size_t *out_len)
{
	z_stream z = {0};
	ck_assert_int_eq(
	    deflateInit2(&z, level, Z_DEFLATED, 15 + 16, mem_level, Z_DEFAULT_STRATEGY), Z_OK);
	size_t bound = deflateBound(&z, len);
	*out = realloc(*out, *out_len + bound);
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	z.next_out = *out + *out_len;
	z.avail_out = (uInt)bound;
	ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	*out_len += bound - z.avail_out;
	deflateEnd(&z);
}

static void gzip_member(const uint8_t *data, size_t len, int level, uint8_t **out, size_t *out_len)
{
	gzip_member_ml(data, len, level, 8, out, out_len);
}

/* A gzip span inside a member is a span long at least; one that ends at a member a quarter. */
static uint64_t gzip_min_span(const struct tm_zpoint *next)
{
	return next->flags & TM_GZ_MEMBER ? TM_Z_SPAN / 4 : TM_Z_SPAN;
}

/* Every span decompresses on its own to the bytes the scan produced there, and none is
 * empty. */
static void check_spans(struct mem_source *file, const struct scanned *s)
{
	zscan_check_spans(file, s, gzip_min_span);
	for (uint64_t k = 0; k < s->ix->n_points; k++)
		ck_assert(s->ix->points[k + 1].out > s->ix->points[k].out || s->ix->n_points == 1);
}

START_TEST(detects_gzip_by_header_and_name)
{
	uint8_t *data = zscan_data(5000, 1), *gz = NULL;
	size_t gz_len = 0;
	gzip_member(data, 5000, 6, &gz, &gz_len);
	ck_assert(tm_gz_detect("t.byu.gz", gz, gz_len));
	ck_assert(tm_gz_detect("t.byu", gz, gz_len)); /* mislabelled: the head inflates */
	ck_assert(!tm_gz_detect("t.byu.gz", data, 5000));
	uint8_t bad[64];
	memcpy(bad, gz, sizeof(bad));
	bad[3] = 0x20; /* a reserved flag */
	ck_assert(!tm_gz_detect("t.gz", bad, sizeof(bad)));
	memset(bad + 10, 0xff, sizeof(bad) - 10); /* a header, then no deflate data */
	bad[3] = 0;
	ck_assert(!tm_gz_detect("t.byu", bad, sizeof(bad)));
	ck_assert(tm_gz_detect("t.gz", bad, sizeof(bad)));
	ck_assert(!tm_gz_detect("t.gz", gz, 3));

	uint8_t head[4096];
	size_t n = tm_gz_inflate_head(gz, 200, head, sizeof(head)); /* a cut head */
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(memcmp(head, data, n), 0);
	ck_assert_uint_eq(tm_gz_inflate_head(gz, gz_len, head, sizeof(head)), sizeof(head));
	ck_assert_int_eq(memcmp(head, data, sizeof(head)), 0);
	free(data);
	free(gz);
}
END_TEST

START_TEST(scan_recovers_data_and_places_points)
{
	size_t len = 5 * TM_Z_SPAN + 12345;
	uint8_t *data = zscan_data(len, 2), *gz = NULL;
	size_t gz_len = 0;
	gzip_member(data, len, 6, &gz, &gz_len);
	struct mem_source file;
	mem_source_init(&file, gz, gz_len);

	struct scanned s = zscan(&tm_codec_gzip, &file, 100000 - 7);
	ck_assert_uint_eq(s.len, len);
	ck_assert_int_eq(memcmp(s.out, data, len), 0);
	ck_assert_str_eq(s.report, "");
	ck_assert_uint_ge(s.ix->n_points, 4);
	ck_assert_uint_le(s.ix->n_points, 6);
	ck_assert_uint_eq(s.ix->in_size, gz_len);
	ck_assert(s.ix->points[0].flags & TM_GZ_MEMBER);
	for (uint64_t k = 1; k < s.ix->n_points; k++) /* inside the one member: windows */
		ck_assert(!(s.ix->points[k].flags & TM_GZ_MEMBER) && s.ix->points[k].window_len);
	check_spans(&file, &s);
	/* the windows are stored compressed */
	ck_assert_uint_lt(s.ix->windows_len, (s.ix->n_points - 1) * 32768 / 2);

	scanned_free(&s);
	mem_source_free(&file);
	free(data);
	free(gz);
}
END_TEST

/* Data that deflates only about 1.3:1 (a binary trace's, say) makes 32 KiB windows that
 * compress as poorly: points inside a member are spaced wider than the span, so that the
 * windows stay within 0.5% of the data, and every span still inflates to the scan's bytes. */
START_TEST(poorly_compressing_data_spaces_windows_wider)
{
	size_t len = 24 * TM_Z_SPAN;
	uint8_t *data = malloc(len), *gz = NULL;
	uint64_t x = 88172645463325252ull;
	for (size_t i = 0; i < len; i++) { /* random bytes, one in four of them zero */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		data[i] = i % 4 ? (uint8_t)x : 0;
	}
	size_t gz_len = 0;
	gzip_member(data, len, 6, &gz, &gz_len);
	ck_assert_uint_gt(gz_len, len / 2); /* it does compress poorly */
	struct mem_source file;
	mem_source_init(&file, gz, gz_len);
	struct scanned s = zscan(&tm_codec_gzip, &file, 1 << 16);
	ck_assert_uint_eq(s.len, len);
	ck_assert_int_eq(memcmp(s.out, data, len), 0);
	ck_assert_msg(s.ix->windows_len * 1000 <= len * 6, "windows %zu bytes for %zu",
		      s.ix->windows_len, len);
	ck_assert_uint_ge(s.ix->n_points, 4); /* spaced wider, not given up */
	ck_assert_uint_lt(s.ix->n_points, 24);
	check_spans(&file, &s);
	scanned_free(&s);
	mem_source_free(&file);
	free(data);
	free(gz);
}
END_TEST

/* Zeros deflate in blocks of about 8 MiB (32 Ki matches of 258 with memLevel 9): spans longer
 * than a piece. Every piece inflates on its own to the scan's bytes, pieces tile the data, and
 * a piece never holds more than TM_Z_PIECE bytes. */
START_TEST(long_spans_read_in_pieces)
{
	size_t len = 40u << 20;
	uint8_t *data = calloc(1, len), *gz = NULL;
	for (size_t i = len - 1000; i < len; i++)
		data[i] = (uint8_t)i; /* an end told from the start */
	size_t gz_len = 0;
	gzip_member_ml(data, len, 9, 9, &gz, &gz_len);
	struct mem_source file;
	mem_source_init(&file, gz, gz_len);
	struct scanned s = zscan(&tm_codec_gzip, &file, 1 << 20);
	ck_assert_uint_eq(s.len, len);
	const struct tm_zindex *ix = s.ix;
	uint64_t longest = 0;
	for (uint64_t k = 0; k < ix->n_points; k++)
		if (ix->points[k + 1].out - ix->points[k].out > longest)
			longest = ix->points[k + 1].out - ix->points[k].out;
	ck_assert_uint_gt(longest, TM_Z_PIECE); /* the case under test */
	ck_assert_uint_gt(tm_zindex_n_pieces(ix), ix->n_points);
	uint8_t *buf = malloc(TM_Z_PIECE);
	uint64_t at = 0;
	for (uint64_t p = 0; p < tm_zindex_n_pieces(ix); p++) {
		uint64_t start = tm_zindex_piece_start(ix, p),
			 end = tm_zindex_piece_start(ix, p + 1);
		ck_assert_uint_eq(start, at);
		ck_assert(end > start && end - start <= TM_Z_PIECE);
		ck_assert_uint_eq(tm_zindex_piece_of(ix, start), p);
		ck_assert_uint_eq(tm_zindex_piece_of(ix, end - 1), p);
		ck_assert_int_eq(tm_z_decompress_piece(&file.src, ix, p, buf, NULL, 0), 0);
		ck_assert_int_eq(memcmp(buf, data + start, (size_t)(end - start)), 0);
		at = end;
	}
	ck_assert_uint_eq(at, len);
	ck_assert_uint_eq(tm_zindex_piece_start(ix, tm_zindex_n_pieces(ix)), len);
	free(buf);
	scanned_free(&s);
	mem_source_free(&file);
	free(data);
	free(gz);
}
END_TEST

START_TEST(multi_member_files)
{
	size_t sizes[] = {TM_Z_SPAN + TM_Z_SPAN / 2, 10, 0, 2 * TM_Z_SPAN + 99, 3 * TM_Z_SPAN};
	size_t len = 0;
	for (unsigned i = 0; i < 5; i++)
		len += sizes[i];
	uint8_t *data = zscan_data(len, 3), *gz = NULL;
	size_t gz_len = 0, at = 0;
	for (unsigned i = 0; i < 5; i++) {
		gzip_member(data + at, sizes[i], i % 2 ? 1 : 9, &gz, &gz_len);
		at += sizes[i];
	}
	struct mem_source file;
	mem_source_init(&file, gz, gz_len);
	struct scanned s = zscan(&tm_codec_gzip, &file, 1 << 18);
	ck_assert_uint_eq(s.len, len);
	ck_assert_int_eq(memcmp(s.out, data, len), 0);
	ck_assert_str_eq(s.report, "");
	unsigned members = 0;
	for (uint64_t k = 0; k < s.ix->n_points; k++)
		members += s.ix->points[k].flags & TM_GZ_MEMBER;
	ck_assert_uint_ge(members, 2); /* a member that starts a span needs no window */
	check_spans(&file, &s);
	scanned_free(&s);
	mem_source_free(&file);
	free(data);
	free(gz);
}
END_TEST

START_TEST(truncated_streams_give_a_prefix)
{
	size_t len = 3 * TM_Z_SPAN;
	uint8_t *data = zscan_data(len, 4), *gz = NULL;
	size_t gz_len = 0;
	gzip_member(data, len, 6, &gz, &gz_len);
	size_t cuts[] = {1, 9, 10, 11, 200, gz_len / 3, gz_len / 2, gz_len - 8, gz_len - 1};
	for (unsigned i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		struct mem_source file;
		mem_source_init(&file, gz, cuts[i]);
		struct scanned s = zscan(&tm_codec_gzip, &file, 65536);
		ck_assert_uint_le(s.len, len);
		ck_assert_int_eq(memcmp(s.out, data, s.len), 0);
		char want[100];
		snprintf(want, sizeof(want), "at compressed byte %zu;", cuts[i]);
		ck_assert_msg(strstr(s.report, "truncated") && strstr(s.report, want),
			      "cut at %zu: %s", cuts[i], s.report);
		if (cuts[i] >= gz_len / 2)
			ck_assert_uint_gt(s.len, len / 3);
		check_spans(&file, &s);
		scanned_free(&s);
		mem_source_free(&file);
	}
	free(data);
	free(gz);
}
END_TEST

/* Cut anywhere, the bytes the index pass gave decompress again from their span's point: with
 * ISA-L, the last span of a cut file is read with zlib, since ISA-L holds back the last
 * symbols of input that stops inside a block (issue 42). */
START_TEST(cut_streams_read_back_at_every_cut)
{
	size_t len = TM_Z_SPAN + TM_Z_SPAN / 2;
	uint8_t *data = zscan_data(len, 8), *gz = NULL;
	size_t gz_len = 0;
	gzip_member(data, len, 9, &gz, &gz_len);
	for (size_t cut = 1000; cut < gz_len; cut += gz_len / 61) {
		struct mem_source file;
		mem_source_init(&file, gz, cut);
		struct scanned s = zscan(&tm_codec_gzip, &file, 65536);
		ck_assert_int_eq(memcmp(s.out, data, s.len), 0);
		ck_assert(s.ix->points[s.ix->n_points].flags & TM_Z_ENDS_EARLY);
		check_spans(&file, &s);
		scanned_free(&s);
		mem_source_free(&file);
	}
	free(data);
	free(gz);
}
END_TEST

/* Stored blocks damaged since indexing, read from points inside the member and from its start:
 * a flipped byte decodes to another byte, which gzip's own check, at the member's end, never
 * sees from there; the piece's CRC-32 makes it an error (issue 42). The index pass records
 * zlib's CRC-32 of every piece, whichever library computes it. */
START_TEST(damaged_stored_blocks_fail)
{
	size_t len = 5 * TM_Z_SPAN;
	uint8_t *data = zscan_data(len, 11), *gz = NULL;
	size_t gz_len = 0;
	gzip_member(data, len, 0, &gz, &gz_len);
	struct mem_source file;
	mem_source_init(&file, gz, gz_len);
	struct scanned s = zscan(&tm_codec_gzip, &file, 65536);
	ck_assert_uint_eq(s.len, len);
	ck_assert_uint_ge(s.ix->n_points, 4);
	for (uint64_t p = 0; p < tm_zindex_n_pieces(s.ix); p++) {
		uint64_t at = tm_zindex_piece_start(s.ix, p);
		size_t n = (size_t)(tm_zindex_piece_start(s.ix, p + 1) - at);
		ck_assert_uint_eq(s.ix->piece_crcs[p], crc32_z(0, data + at, n));
	}
	uint8_t *buf = malloc(TM_Z_PIECE);
	char why[256];
	for (uint64_t k = 0; k < 3; k++) {
		/* a byte a few KiB after the span's point, well inside a stored block's data */
		size_t flip = (size_t)s.ix->points[k].in + 5000;
		uint64_t p = tm_zindex_piece_of(s.ix, s.ix->points[k].out);
		file.data[flip] ^= 0x01;
		why[0] = '\0';
		ck_assert_int_eq(tm_z_decompress_piece(&file.src, s.ix, p, buf, why, sizeof(why)),
				 -EIO);
		ck_assert_msg(strstr(why, "CRC-32") && strstr(why, "changed since"), "%s", why);
		file.data[flip] ^= 0x01;
		ck_assert_int_eq(tm_z_decompress_piece(&file.src, s.ix, p, buf, NULL, 0), 0);
	}
	free(buf);
	scanned_free(&s);
	mem_source_free(&file);
	free(data);
	free(gz);
}
END_TEST

START_TEST(corrupt_and_padded_streams_are_reported)
{
	size_t len = 2 * TM_Z_SPAN;
	uint8_t *data = zscan_data(len, 5), *gz = NULL;
	size_t gz_len = 0;
	gzip_member(data, len, 6, &gz, &gz_len);

	for (size_t at = 1000; at < gz_len - 8; at += gz_len / 7) {
		uint8_t *bad = malloc(gz_len);
		memcpy(bad, gz, gz_len);
		for (unsigned k = 0; k < 16; k++)
			bad[at + k] ^= 0x5a;
		struct mem_source file;
		mem_source_init(&file, bad, gz_len);
		struct scanned s = zscan(&tm_codec_gzip, &file, 65536);
		ck_assert_msg(strstr(s.report, "gzip: corrupt data at compressed byte"),
			      "flip at %zu: %s", at, s.report);
		check_spans(&file, &s); /* what was served is served again, the same */
		scanned_free(&s);
		mem_source_free(&file);
		free(bad);
	}

	uint8_t *padded = malloc(gz_len + 5);
	memcpy(padded, gz, gz_len);
	memcpy(padded + gz_len, "junk\n", 5);
	struct mem_source file;
	mem_source_init(&file, padded, gz_len + 5);
	struct scanned s = zscan(&tm_codec_gzip, &file, 65536);
	ck_assert_uint_eq(s.len, len);
	char want[100];
	snprintf(want, sizeof(want), "data after the last member at compressed byte %zu", gz_len);
	ck_assert_msg(strstr(s.report, want), "%s", s.report);
	scanned_free(&s);
	mem_source_free(&file);
	free(padded);
	free(data);
	free(gz);
}
END_TEST

START_TEST(scan_reads_in_order_and_stops_early)
{
	size_t len = 4 * TM_Z_SPAN;
	uint8_t *data = zscan_data(len, 6), *gz = NULL, buf[4096];
	size_t gz_len = 0;
	gzip_member(data, len, 1, &gz, &gz_len);
	struct mem_source file;
	mem_source_init(&file, gz, gz_len);
	struct tm_source src;
	ck_assert_int_eq(tm_z_scan_open(&tm_codec_gzip, &file.src, &src), 0);
	ck_assert_int_eq(tm_source_read(&src, buf, sizeof(buf), 0), sizeof(buf));
	ck_assert_int_eq(memcmp(buf, data, sizeof(buf)), 0);
	ck_assert_int_eq(tm_source_read(&src, buf, sizeof(buf), 0), -ESPIPE);
	tm_source_close(&src); /* the inflating thread is blocked on a full ring */
	mem_source_free(&file);
	free(data);
	free(gz);
}
END_TEST

START_TEST(spans_of_a_changed_file_fail)
{
	size_t len = 3 * TM_Z_SPAN;
	uint8_t *data = zscan_data(len, 7), *gz = NULL;
	size_t gz_len = 0;
	gzip_member(data, len, 6, &gz, &gz_len);
	struct mem_source file;
	mem_source_init(&file, gz, gz_len);
	struct scanned s = zscan(&tm_codec_gzip, &file, 65536);
	uint64_t last = s.ix->n_points - 1;
	uint8_t *buf = malloc(len);
	char why[192] = "";
	file.len = (size_t)s.ix->points[last].in + 10; /* the file shrank */
	ck_assert_int_eq(tm_z_decompress_span(&file.src, s.ix, last, buf, why, sizeof(why)), -EIO);
	ck_assert_msg(strstr(why, "the file ends at") != NULL, "%s", why);
	file.len = gz_len;
	file.data[2] = 7; /* damaged since it was indexed: the member's compression method */
	ck_assert_int_eq(tm_z_decompress_span(&file.src, s.ix, 0, buf, why, sizeof(why)), -EIO);
	ck_assert_msg(strstr(why, "unknown compression method") != NULL, "%s", why);
	file.data[2] = 8;
	file.fail = -EIO;
	ck_assert_int_eq(tm_z_decompress_span(&file.src, s.ix, 0, buf, NULL, 0), -EIO);
	free(buf);
	scanned_free(&s);
	mem_source_free(&file);
	free(data);
	free(gz);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gzip");
	TCase *tc = tcase_create("gzip");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, detects_gzip_by_header_and_name);
	tcase_add_test(tc, scan_recovers_data_and_places_points);
	tcase_add_test(tc, multi_member_files);
	tcase_add_test(tc, long_spans_read_in_pieces);
	tcase_add_test(tc, poorly_compressing_data_spaces_windows_wider);
	tcase_add_test(tc, truncated_streams_give_a_prefix);
	tcase_add_test(tc, cut_streams_read_back_at_every_cut);
	tcase_add_test(tc, damaged_stored_blocks_fail);
	tcase_add_test(tc, corrupt_and_padded_streams_are_reported);
	tcase_add_test(tc, scan_reads_in_order_and_stops_early);
	tcase_add_test(tc, spans_of_a_changed_file_fail);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
