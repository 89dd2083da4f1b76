/* The BYU 12-byte ("p2AddrTr") decoder, its render ops, its bids and its views, against the
 * tests' byu12 model (byu12_ref.c), the 6-byte model (byu_ref.c) for what must stay BYU, and
 * values worked out by hand. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "byu12_ref.h"
#include "byu_ref.h"
#include "view_check.h"
#include "tracemount/diag.h"
#include "tracemount/registry.h"
#include "tracemount/view.h"

extern const struct tm_format tm_format_byu12;
static const struct tm_format *const F = &tm_format_byu12;

/* Room for decoded records: the format's struct is private, record_size says its stride. */
#define REC_ROOM 64

static int class_index(const char *name)
{
	for (unsigned c = 0; c < F->n_classes; c++)
		if (strcmp(F->classes[c], name) == 0)
			return (int)c;
	return -1;
}

static const struct tm_record *rec_at(const void *recs, size_t i)
{
	return (const struct tm_record *)((const char *)recs + i * F->record_size);
}

START_TEST(test_table)
{
	ck_assert_str_eq(F->name, "byu12");
	ck_assert_uint_eq(F->raw_record_len, 12);
	ck_assert_uint_le(F->record_size, REC_ROOM);
	ck_assert_str_eq(F->class_ext, "byu12");
	ck_assert_str_eq(F->group_view, "cpu/%u.txt");
	ck_assert_ptr_eq(F->group_ops, F->dump);
	ck_assert_uint_eq(F->n_classes, BYU12_REF_N_CLASSES);
	for (unsigned c = 0; c < BYU12_REF_N_CLASSES; c++)
		ck_assert_str_eq(F->classes[c], byu12_ref_class(c));
	ck_assert_ptr_eq(tm_format_find("byu12"), F);
}
END_TEST

/* Every reqtype value, with extreme fields: its class, group, and one problem when invalid. */
START_TEST(test_every_reqtype)
{
	uint8_t raw[12];
	_Alignas(8) uint8_t recs[REC_ROOM];
	for (unsigned t = 0; t < 256; t++) {
		struct byu12_ref_rec r = {.addr = 0xfedcba98u ^ t,
					  .reqtype = (uint8_t)t,
					  .size = (uint8_t)(t * 7),
					  .attr = (uint8_t)~t,
					  .proc = (uint8_t)t,
					  .time = 0x80000000u | t};
		byu12_ref_put(raw, &r);
		struct tm_diag d;
		tm_diag_init(&d);
		struct tm_decode_in in = {.buf = raw, .len = 12, .raw_off = 24, .at_eof = true};
		size_t n, used;
		ck_assert_int_eq(F->decode(NULL, &in, recs, 1, &n, &used, &d), 0);
		ck_assert_uint_eq(n, 1);
		ck_assert_uint_eq(used, 12);
		const struct tm_record *h = rec_at(recs, 0);
		unsigned want = byu12_ref_class_of((uint8_t)t);
		ck_assert_msg(h->cls == class_index(byu12_ref_class(want)), "reqtype %02x", t);
		ck_assert_uint_eq(h->raw_rel, 0);
		ck_assert_uint_eq(h->raw_len, 12);
		ck_assert_uint_eq(h->flags, 0);
		ck_assert_uint_eq(h->group, t < 64 ? t : 255);
		ck_assert_uint_eq(d.count, want == 0);
		ck_assert(!d.truncated);
		if (want == 0) {
			char line[64];
			ck_assert_int_eq(tm_diag_finish(&d), 0);
			snprintf(line, sizeof(line), "offset 24: invalid request type 0x%02x\n", t);
			ck_assert_uint_eq(d.len, strlen(line));
			ck_assert_mem_eq(d.text, line, d.len);
		}
		tm_diag_free(&d);
	}
	/* the 17 known codes are exactly the classes after invalid */
	unsigned known = 0;
	for (unsigned t = 0; t < 256; t++)
		known += byu12_ref_class_of((uint8_t)t) != 0;
	ck_assert_uint_eq(known, 17);
}
END_TEST

/* Decoder outcomes: len, max, at_eof against the return, n_out, used and problems. */
static const struct result_row {
	size_t len, max;
	bool at_eof;
	int ret;
	size_t n, used, problems;
} result_rows[] = {
    {0, 8, false, -EAGAIN, 0, 0, 0},   {0, 8, true, 0, 0, 0, 0},
    {11, 8, false, -EAGAIN, 0, 0, 0},  {11, 8, true, 0, 0, 11, 1},
    {12, 8, false, -EAGAIN, 1, 12, 0}, {12, 8, true, 0, 1, 12, 0},
    {12, 1, false, 0, 1, 12, 0},       {24, 1, true, 0, 1, 12, 0},
    {25, 2, true, 0, 2, 24, 0},	       {25, 8, false, -EAGAIN, 2, 24, 0},
    {25, 8, true, 0, 2, 25, 1},	       {96, 8, true, 0, 8, 96, 0},
    {100, 8, true, 0, 8, 96, 0},       {100, 9, true, 0, 8, 100, 1},
};

START_TEST(test_decode_results)
{
	const struct result_row *row = &result_rows[_i];
	uint8_t buf[120];
	_Alignas(8) uint8_t recs[16 * REC_ROOM];
	struct tm_diag d;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 37 + 0x80);
	for (size_t i = 0; i + 12 <= sizeof(buf); i += 12)
		buf[i + 4] = 0x03; /* d_write: no invalid-type problems */
	tm_diag_init(&d);
	struct tm_decode_in in = {
	    .buf = buf, .len = row->len, .raw_off = 1000, .at_eof = row->at_eof};
	size_t n = 99, used = 99;
	int ret = F->decode(NULL, &in, recs, row->max, &n, &used, &d);
	ck_assert_msg(ret == row->ret, "row %d: returned %d, expected %d", _i, ret, row->ret);
	ck_assert_uint_eq(n, row->n);
	ck_assert_uint_eq(used, row->used);
	ck_assert_uint_eq(d.count, row->problems);
	ck_assert(d.truncated == (row->problems > 0));
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(rec_at(recs, i)->raw_rel, i * 12);
	tm_diag_free(&d);
}
END_TEST

/* 1..11 trailing bytes: one problem, the model's line. */
START_TEST(test_cut_record)
{
	size_t k = (size_t)_i;
	uint8_t buf[2 * 12 + 11];
	_Alignas(8) uint8_t recs[4 * REC_ROOM];
	struct tm_diag d;
	char want[128];

	memset(buf, 0x01, sizeof(buf));
	tm_diag_init(&d);
	struct tm_decode_in in = {.buf = buf, .len = 24 + k, .raw_off = 0, .at_eof = true};
	size_t n, used;
	ck_assert_int_eq(F->decode(NULL, &in, recs, 4, &n, &used, &d), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(used, 24 + k);
	ck_assert(d.truncated);
	ck_assert_int_eq(tm_diag_finish(&d), 0);
	size_t len;
	char *model = byu12_ref_view("errors.txt", "t.byu12", buf, 24 + k, &len);
	snprintf(want, sizeof(want), "%.*s", (int)len, model);
	ck_assert_uint_eq(d.len, strlen(want));
	ck_assert_mem_eq(d.text, want, d.len);
	free(model);
	tm_diag_free(&d);
	/* without a diag the same call still consumes the bytes */
	ck_assert_int_eq(F->decode(NULL, &in, recs, 4, &n, &used, NULL), 0);
	ck_assert_uint_eq(used, 24 + k);
}
END_TEST

/* n records of every kind: every reqtype value in turn, processors 0..p-1 and some >= 64,
 * times that go back, fields from a xorshift. */
static uint8_t *gen(size_t n, size_t trailing, uint64_t seed, unsigned p)
{
	uint8_t *data = malloc(n * 12 + trailing + 1);
	uint64_t x = seed * 2 + 1;
	ck_assert_ptr_nonnull(data);
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		unsigned pick = (unsigned)(x % 10);
		struct byu12_ref_rec r = {
		    .addr = (uint32_t)(x >> 8) % 4 ? 0x00100000u + (uint32_t)((x >> 20) % 0x40000)
						   : (uint32_t)(x >> 16),
		    .reqtype = pick < 8 ? byu12_ref_known[(x >> 32) % 17] : (uint8_t)(x >> 40),
		    .size = (uint8_t)((x >> 48) % 65),
		    .attr = (x >> 56) % 16 ? 0 : (uint8_t)(x >> 24),
		    .proc = (uint8_t)(i % 97 == 96 ? 64 + (x >> 30) % 192 : (x >> 36) % p),
		    .time = (uint32_t)i * 3 - (uint32_t)((x >> 44) % 8)};
		byu12_ref_put(data + i * 12, &r);
	}
	for (size_t i = 0; i < trailing; i++)
		data[n * 12 + i] = (uint8_t)(0xa0 + i);
	return data;
}

START_TEST(test_dump_and_din_lines)
{
	enum { N = 2000 };
	uint8_t *raw = gen(N, 0, 7, 5);
	_Alignas(8) static uint8_t recs[N * REC_ROOM];
	struct tm_decode_in in = {.buf = raw, .len = N * 12, .at_eof = true};
	size_t n, used;
	ck_assert_int_eq(F->decode(NULL, &in, recs, N, &n, &used, NULL), 0);
	ck_assert_uint_eq(n, N);
	struct tm_chunk c = {.raw = raw,
			     .raw_len = used,
			     .records = recs,
			     .n_records = n,
			     .record_size = F->record_size};
	const struct tm_view_desc *din = &F->extra_views[0];
	ck_assert_uint_eq(F->n_extra_views, 1);
	ck_assert_str_eq(din->path, "convert/%s.din");
	for (size_t i = 0; i < N; i++) {
		char want[80], out[80];
		const uint8_t *p = raw + i * 12;
		size_t len = byu12_ref_dump_line(p, want);
		memset(out, '#', sizeof(out));
		ck_assert_uint_eq(F->dump->render(&c, i, out), len);
		ck_assert_mem_eq(out, want, len);
		ck_assert_uint_lt(len + TM_RENDER_SLACK, sizeof(out));
		ck_assert_int_eq(out[len + TM_RENDER_SLACK], '#');
		ck_assert_uint_eq(F->dump->measure(&c, i), len);
		ck_assert_uint_eq(F->dump->fixed_len(rec_at(recs, i)->cls), len);

		long dl = byu12_ref_view_render("convert/x.din", p, want);
		ck_assert_int_eq(din->class_mask >> rec_at(recs, i)->cls & 1, dl > 0);
		if (dl > 0) {
			memset(out, '#', sizeof(out));
			ck_assert_uint_eq(din->ops->render(&c, i, out), (size_t)dl);
			ck_assert_mem_eq(out, want, (size_t)dl);
			ck_assert_uint_eq(din->ops->measure(&c, i), (size_t)dl);
			ck_assert_uint_eq(din->ops->fixed_len(rec_at(recs, i)->cls), (size_t)dl);
		}
	}
	free(raw);
}
END_TEST

/* A head of 12-byte records as the real files hold them: fetches, reads, read-invalidates,
 * writes and deferred replies, size 8 (0 for a reply), small times. */
static void real_like(uint8_t *head, size_t n)
{
	static const uint8_t types[5] = {0x00, 0x01, 0x02, 0x03, 0x20};
	for (size_t i = 0; i < n; i++) {
		struct byu12_ref_rec r = {.addr = 0x0f562d88u + 8 * (uint32_t)i,
					  .reqtype = types[i % 5],
					  .size = i % 5 == 4 ? 0 : 8,
					  .time = (uint32_t)(100 + (i * 37) % 50)};
		byu12_ref_put(head + i * 12, &r);
	}
}

START_TEST(test_bids)
{
	const struct tm_format *byu = tm_format_find("byu");
	static uint8_t head[4096], six[4096];
	real_like(head, sizeof(head) / 12);
	uint8_t *g = byu_ref_gen(4096 / 6 + 1, 0, 3, 0); /* 4098 bytes */
	memcpy(six, g, sizeof(six));
	free(g);

	/* names alone */
	ck_assert_int_eq(tm_format_bid(F, "a.byu12", NULL, 0), 100);
	ck_assert_ptr_eq(tm_format_detect("a.byu12", NULL, 0), F);
	ck_assert(!tm_format_detect_needs_head("a.byu12"));
	ck_assert_int_eq(tm_format_bid(F, "a.tr", NULL, 0), 0);
	ck_assert_ptr_null(tm_format_detect("a.tr", NULL, 0));
	ck_assert_int_eq(tm_format_bid(F, "a.byu", NULL, 0), 0);
	ck_assert_int_eq(tm_format_bid(F, "a.dat", NULL, 0), 0);
	ck_assert_int_lt(tm_format_bid(byu, "a.byu", NULL, 0), F->content_bid_max);
	ck_assert(tm_format_detect_needs_head("a.byu"));
	ck_assert(tm_format_detect_needs_head("a.tr"));
	/* no head (unreadable or empty): the name stands */
	ck_assert_ptr_eq(tm_format_detect("a.byu", NULL, 0), byu);

	/* 12-byte records: byu12 for .tr, .byu, .byu.gz; not for other names */
	const char *names12[] = {"a.tr", "x/y.tr", "a.byu", "a.byu.gz"};
	for (size_t i = 0; i < 4; i++) {
		const char *name = strcmp(names12[i], "a.byu.gz") ? names12[i] : "a.byu";
		ck_assert_msg(tm_format_detect(name, head, sizeof(head)) == F, "%s", names12[i]);
		ck_assert(byu12_ref_plausible(name, head, sizeof(head)));
	}
	ck_assert_ptr_null(tm_format_detect("a.dat", head, sizeof(head)));
	ck_assert_int_eq(tm_format_bid(F, "a.dat", head, sizeof(head)), 0);
	/* a head cut inside a record, and a short one */
	ck_assert_ptr_eq(tm_format_detect("a.byu", head, 100), F);
	ck_assert_ptr_eq(tm_format_detect("a.byu", head, 48), F);
	ck_assert_ptr_eq(tm_format_detect("a.byu", head, 47), byu);
	ck_assert_ptr_eq(tm_format_detect("a.byu", head, 6), byu);

	/* 6-byte BYU traces stay BYU, and are no byu12 .tr */
	ck_assert_ptr_eq(tm_format_detect("a.byu", six, sizeof(six)), byu);
	ck_assert(!byu12_ref_plausible("a.byu", six, sizeof(six)));
	ck_assert_int_eq(tm_format_bid(F, "a.tr", six, sizeof(six)), 0);
	ck_assert_ptr_null(tm_format_detect("a.tr", six, sizeof(six)));
	for (uint64_t seed = 1; seed < 40; seed++) {
		size_t n = (size_t)(seed * 7 % 683) + 1;
		uint8_t *t = byu_ref_gen(n, 0, seed, 0);
		ck_assert_msg(tm_format_detect("s.byu", t, n * 6) == byu, "seed %" PRIu64, seed);
		free(t);
	}

	/* a head of zeros (fetches of no bytes; all INVALID as 6-byte records) is no evidence:
	 * a .byu file of zeros stays BYU, and a memory request of no bytes anywhere is no bid */
	uint8_t zeros[4096] = {0};
	ck_assert_ptr_eq(tm_format_detect("z.byu", zeros, sizeof(zeros)), byu);
	ck_assert_int_eq(tm_format_bid(F, "z.tr", zeros, sizeof(zeros)), 0);
	ck_assert(!byu12_ref_plausible("z.tr", zeros, sizeof(zeros)));
	real_like(head, sizeof(head) / 12);
	head[12 * 9 + 4] = 0x03;
	head[12 * 9 + 5] = 0;
	ck_assert_int_eq(tm_format_bid(F, "a.tr", head, sizeof(head)), 0);
	ck_assert(!byu12_ref_plausible("a.tr", head, sizeof(head)));
	head[12 * 9 + 5] = 8;
	ck_assert_int_eq(tm_format_bid(F, "a.tr", head, sizeof(head)), F->content_bid_max);

	/* an unknown request type, or an implausible size, anywhere in the head: no bid */
	head[12 * 300 + 4] = 0x04;
	ck_assert_int_eq(tm_format_bid(F, "a.tr", head, sizeof(head)), 0);
	ck_assert_ptr_eq(tm_format_detect("a.byu", head, sizeof(head)), byu);
	ck_assert(!byu12_ref_plausible("a.tr", head, sizeof(head)));
	real_like(head, sizeof(head) / 12);
	head[12 * 7 + 5] = 65;
	ck_assert_int_eq(tm_format_bid(F, "a.tr", head, sizeof(head)), 0);
	head[12 * 7 + 5] = 64;
	ck_assert_int_eq(tm_format_bid(F, "a.tr", head, sizeof(head)), F->content_bid_max);
	/* 12-byte records whose 6-byte reading is valid (times with a high nibble of 8: an
	 * I_FETCH control): not nearly all INVALID, so no bid */
	for (size_t i = 0; i < sizeof(head) / 12; i++)
		head[i * 12 + 11] = 0x80;
	ck_assert_int_eq(tm_format_bid(F, "a.tr", head, sizeof(head)), 0);
	ck_assert(!byu12_ref_plausible("a.tr", head, sizeof(head)));
}
END_TEST

/* Every view of a trace named name against the model; stats.json key by key. */
static void check_views(const char *name, const uint8_t *data, size_t len)
{
	struct mounted m;
	size_t n_paths;
	char **paths = byu12_ref_view_paths(name, data, len, &n_paths);
	mount_trace(&m, name, F, data, len);
	for (size_t i = 0; i < n_paths; i++) {
		size_t got_len, want_len;
		char *got = read_view(&m, paths[i], &got_len);
		if (strcmp(paths[i], "stats.json") == 0) {
			struct byu12_ref_stats s;
			char *text = NULL;
			size_t cap = 0;
			FILE *f = open_memstream(&text, &cap);
			ck_assert_ptr_nonnull(f);
			byu12_ref_stats(name, data, len, &s);
			byu12_ref_stats_json(&s, name, f);
			ck_assert_int_eq(fclose(f), 0);
			json_object *want = json_tokener_parse(text),
				    *have = json_tokener_parse(got);
			ck_assert_ptr_nonnull(want);
			ck_assert_ptr_nonnull(have);
			ck_assert_msg(json_object_equal(want, have),
				      "%s: stats.json\n%s\nexpected\n%s", name, got, text);
			json_object_put(want);
			json_object_put(have);
			free(text);
		} else {
			char *want = byu12_ref_view(paths[i], name, data, len, &want_len);
			char what[128];
			snprintf(what, sizeof(what), "%s: %s", name, paths[i]);
			expect_same_text(what, want, want_len, got, got_len);
			free(want);
		}
		free(got);
		free(paths[i]);
	}
	free(paths);
	/* cpu/N views of processors without records are empty (the mount hides them) */
	for (unsigned p = 0; p < TM_MAX_GROUPS; p++) {
		char path[32];
		size_t got_len, want_len;
		snprintf(path, sizeof(path), "cpu/%u.txt", p);
		char *got = read_view(&m, path, &got_len);
		char *want = byu12_ref_view(path, name, data, len, &want_len);
		expect_same_text(path, want, want_len, got, got_len);
		free(got);
		free(want);
	}
	unmount_trace(&m);
}

START_TEST(test_views_generated)
{
	size_t chunk = F->chunk_records;
	struct {
		size_t n, trailing;
		unsigned procs;
		const char *name;
	} cases[] = {
	    {0, 0, 1, "empty.byu12"},
	    {0, 5, 1, "cut.byu12"},
	    {1, 0, 1, "one.tr"},
	    {300, 7, 4, "small.byu"},
	    {3 * chunk + 5, 0, 64, "big.byu12"},
	    {chunk, 11, 2, "edge.byu.gz"},
	    {7, 0, 2, "seven.byu.xz"},
	    {9, 0, 3, "nine.byu.zst"},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		uint8_t *data = gen(cases[k].n, cases[k].trailing, k + 1, cases[k].procs);
		check_views(cases[k].name, data, cases[k].n * 12 + cases[k].trailing);
		free(data);
	}
}
END_TEST

/* The real files, when ../shared/realtraces is there: every view against the model, and the
 * counts python3's struct finds in them (the record counts and the reqtype histogram, from
 * `struct.iter_unpack('<IBBBBI', data)`). */
START_TEST(test_real_files)
{
	static const struct {
		const char *path;
		uint64_t records, i_fetch, d_read, d_read_inv, d_write, deferred;
	} real[] = {
	    {"byu12/tpatil17_CS480_trace.tr", 20414, 12521, 5010, 499, 2182, 202},
	    {"byu12/JessicaChammas_CS480A3_trace1.tr", 22276, 11375, 5406, 525, 4764, 206},
	};
	for (size_t k = 0; k < 2; k++) {
		size_t len;
		char *data = read_realtrace(real[k].path, &len);
		if (!data)
			continue;
		ck_assert_uint_eq(len, real[k].records * 12);
		struct byu12_ref_stats s;
		byu12_ref_stats("t.tr", (uint8_t *)data, len, &s);
		ck_assert_uint_eq(s.records, real[k].records);
		ck_assert_uint_eq(s.classes[1], real[k].i_fetch);
		ck_assert_uint_eq(s.classes[2], real[k].d_read);
		ck_assert_uint_eq(s.classes[3], real[k].d_read_inv);
		ck_assert_uint_eq(s.classes[4], real[k].d_write);
		ck_assert_uint_eq(s.classes[7], real[k].deferred);
		ck_assert_ptr_eq(tm_format_detect("t.tr", (uint8_t *)data, 4096), F);
		ck_assert_ptr_eq(tm_format_detect("t.byu", (uint8_t *)data, 4096), F);
		check_views("t.tr", (uint8_t *)data, len);
		check_views("t.byu", (uint8_t *)data, len);
		free(data);
	}
}
END_TEST

static Suite *byu12_suite(void)
{
	Suite *s = suite_create("byu12");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_every_reqtype);
	tcase_add_loop_test(tc, test_decode_results, 0,
			    (int)(sizeof(result_rows) / sizeof(result_rows[0])));
	tcase_add_loop_test(tc, test_cut_record, 1, 12);
	tcase_add_test(tc, test_dump_and_din_lines);
	tcase_add_test(tc, test_bids);
	tcase_add_test(tc, test_views_generated);
	tcase_add_test(tc, test_real_files);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(byu12_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
