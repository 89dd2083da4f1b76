/* The TT6 and TT6E decoders (src/formats/tt6.c) through the format table: records, the
 * checkpoint contract, truncation and bad input, against values worked out here from
 * doc/formats.md. Views are in test_tt6_views.c. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "mem_source.h"
#include "tracemount/context.h"
#include "tracemount/diag.h"
#include "tracemount/index.h"
#include "tracemount/reader.h"
#include "tracemount/registry.h"
#include "tracemount/trace.h"
#include "tracemount/view.h"

#include "tt6_trace.h"
START_TEST(test_layout)
{
	for (int tt6e = 0; tt6e <= 1; tt6e++) {
		const struct tm_format *f = fmt_of(tt6e);
		ck_assert_str_eq(f->name, tt6e ? "tt6e" : "tt6");
		ck_assert_uint_eq(f->n_classes, N_CLASSES);
		for (unsigned c = 0; c < N_CLASSES; c++)
			ck_assert_str_eq(f->classes[c], class_names[c]);
		ck_assert_uint_eq(f->record_size, sizeof(struct rec));
		ck_assert_uint_eq(f->state_size % 8, 0);
		ck_assert_uint_eq(f->raw_record_len, 0);
		ck_assert_str_eq(f->class_ext, tt6e ? "tt6e" : "tt6");
		ck_assert_uint_eq(f->common_classes, 1ull << C_INITIAL);
		ck_assert_ptr_nonnull(f->class_stream);
		ck_assert_ptr_nonnull(f->dump);
		ck_assert_uint_gt(f->chunk_records, 0);
		/* the extension is the evidence, and only it */
		ck_assert_int_eq(
		    tm_format_bid(f, tt6e ? "thread_001.tt6e" : "thread_001.tt6", NULL, 0), 50);
		ck_assert_int_eq(
		    tm_format_bid(f, tt6e ? "thread_001.tt6" : "thread_001.tt6e", NULL, 0), 0);
		ck_assert_int_eq(tm_format_bid(f, "a.txt", NULL, 0), 0);
		ck_assert_ptr_eq(tm_format_detect(tt6e ? "x.tt6e" : "x.tt6", NULL, 0), f);
		struct tm_view_table v;
		ck_assert_int_eq(tm_view_table_init(&v, f, tt6e ? "t.tt6e" : "t.tt6"), 0);
		const char *paths[] = {"dump.txt",
				       "class/compute.txt",
				       "class/sync.txt",
				       "class/memext.txt",
				       "sync.txt",
				       "convert/t.din",
				       tt6e ? "convert/t.tt6" : "convert/t.tt6e",
				       tt6e ? "class/flow.tt6e" : "class/flow.tt6"};
		for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
			ck_assert_msg(tm_view_table_find(&v, paths[i]) >= 0, "no view %s",
				      paths[i]);
		ck_assert_int_lt(tm_view_table_find(&v, "class/initial_pc.txt"), 0);
		tm_view_table_free(&v);
	}
}
END_TEST

/* Every kind of record: classes, PCs, numbers, words; escapes do not move the PC; position
 * records set PC and number and are no record. */
START_TEST(test_decode_records)
{
	int tt6e = _i;
	const struct tm_format *f = fmt_of(tt6e);
	struct trace t;
	struct decoded d;
	hand_trace(&t, tt6e, 1);
	decode_all(f, t.b, t.len, 1000, &d);
	check_units(f, &t, &d);
	ck_assert_msg(d.diag.count == 0, "errors: %.*s", (int)d.diag.len, d.diag.text);
	ck_assert(!d.diag.truncated);

	/* spot checks of what the table above computed */
	ck_assert_uint_eq(d.r[0].head.cls, C_INITIAL);
	ck_assert_uint_eq(d.r[0].word, 0x1000);
	ck_assert_uint_eq(d.r[0].pc, 0x1000);
	ck_assert_uint_eq(d.r[0].num, 0);
	ck_assert_uint_eq(d.r[2].pc, 0x1004);
	ck_assert_uint_eq(d.r[3].pc, 0x1014); /* the branch's next PC */
	ck_assert_uint_eq(d.r[5].head.cls, C_SYNC);
	ck_assert_uint_eq(d.r[5].pc, 0x101c); /* an escape: the next instruction's */
	ck_assert_uint_eq(d.r[5].num, 4);
	ck_assert_uint_eq(d.r[6].pc, 0x101c);
	ck_assert_uint_eq(d.r[7].pc, 0x101c); /* the dcbz after the escapes */
	ck_assert_uint_eq(d.r[7].num, 4);
	ck_assert_uint_eq(d.r[7].head.cls, tt6e ? C_MEMORY : C_COMPUTE);
	ck_assert_uint_eq(d.r[7].head.raw_len, tt6e ? 8 : 4);
	/* after the position record */
	ck_assert_uint_eq(d.r[10].word, W_LI);
	ck_assert_uint_eq(d.r[10].pc, 0x2000);
	ck_assert_uint_eq(d.r[10].num, 0x100000002ull);
	ck_assert_uint_eq(d.r[10].head.raw_rel, d.r[9].head.raw_rel + d.r[9].head.raw_len + 16);
	tb_free(&t);
	decoded_free(&d);
}
END_TEST

/* The checkpoint contract on one trace: growing prefixes without the end return -EAGAIN and
 * consume exactly the complete records; a restart from any state copy gives the same records;
 * errors are reported once. */
static void check_checkpoints(const struct tm_format *f, const struct trace *t, size_t restarts)
{
	struct decoded ref, inc;
	decode_all(f, t->b, t->len, 5000, &ref);

	/* byte by byte */
	memset(&inc, 0, sizeof(inc));
	tm_diag_init(&inc.diag);
	void *s = new_state(f);
	size_t pos = 0, unit = 0;
	for (size_t end = 0; end <= t->len; end++) {
		/* one more byte completes one unit at most, so 16 records are never reached */
		pos += decode_step(f, s, t->b, pos, end, false, 16, &inc, true);
		EXPECT(inc.last_ret == -EAGAIN, "prefix %zu: returned %d", end, inc.last_ret);
		/* consumed: up to the last unit that ends by `end` */
		while (unit < t->n && t->u[unit].off + t->u[unit].len <= end)
			unit++;
		size_t want = unit ? t->u[unit - 1].off + t->u[unit - 1].len : 0;
		EXPECT(pos == want, "prefix %zu: %zu bytes consumed, expected %zu", end, pos, want);
	}
	size_t before = inc.n;
	ck_assert_uint_eq(decode_step(f, s, t->b, pos, t->len, true, 16, &inc, true), 0);
	ck_assert_uint_eq(inc.n, before);
	ck_assert_int_eq(inc.last_ret, 0);
	ck_assert_int_eq(tm_diag_finish(&inc.diag), 0);
	ck_assert_uint_eq(inc.n, ref.n);
	for (size_t i = 0; i < ref.n; i++)
		EXPECT(same_record(&inc.r[i], &ref.r[i]), "record %zu differs byte by byte", i);
	ck_assert_uint_eq(inc.diag.len, ref.diag.len);
	ck_assert(inc.diag.len == 0 || memcmp(inc.diag.text, ref.diag.text, ref.diag.len) == 0);
	ck_assert(inc.diag.truncated == ref.diag.truncated);
	decoded_free(&inc);
	free(s);

	/* one record per call, keeping a copy of the state before each */
	size_t n_steps = 0;
	size_t steps_cap = ref.n + t->n + 2;
	uint8_t *states = malloc(steps_cap * f->state_size);
	size_t *offs = malloc(steps_cap * sizeof(*offs)), *firsts = malloc(steps_cap * 8);
	ck_assert(states && offs && firsts);
	memset(&inc, 0, sizeof(inc));
	s = new_state(f);
	pos = 0;
	for (;;) {
		ck_assert_uint_lt(n_steps, steps_cap);
		memcpy(states + n_steps * f->state_size, s, f->state_size);
		offs[n_steps] = pos;
		firsts[n_steps] = inc.n;
		n_steps++;
		size_t b = inc.n, used = decode_step(f, s, t->b, pos, t->len, true, 1, &inc, false);
		pos += used;
		if (!used && inc.n == b)
			break;
	}
	ck_assert_uint_eq(inc.n, ref.n);
	for (size_t i = 0; i < ref.n; i++)
		EXPECT(same_record(&inc.r[i], &ref.r[i]), "record %zu differs one by one", i);
	decoded_free(&inc);
	free(s);

	/* restarts from the copies, with various batch sizes */
	size_t step = n_steps / restarts + 1;
	for (size_t k = 0; k < n_steps; k += step) {
		void *copy = malloc(f->state_size);
		memcpy(copy, states + k * f->state_size, f->state_size);
		struct decoded rest = {0};
		size_t p = offs[k], max = 1 + k % 7;
		for (;;) {
			size_t b = rest.n, used = decode_step(f, copy, t->b, p, t->len, true, max,
							      &rest, false);
			p += used;
			if (!used && rest.n == b)
				break;
		}
		EXPECT(rest.n == ref.n - firsts[k], "restart %zu: %zu records, expected %zu", k,
		       rest.n, ref.n - firsts[k]);
		for (size_t i = 0; i < rest.n; i++)
			EXPECT(same_record(&rest.r[i], &ref.r[firsts[k] + i]),
			       "restart at %zu: record %zu differs", offs[k], firsts[k] + i);
		free(rest.r);
		free(copy);
	}
	free(states);
	free(offs);
	free(firsts);
	decoded_free(&ref);
}

START_TEST(test_checkpoints_hand)
{
	struct trace t;
	hand_trace(&t, _i, 1);
	check_checkpoints(fmt_of(_i), &t, 1000);
	tb_free(&t);
}
END_TEST

START_TEST(test_checkpoints_generated)
{
	for (int canonical = 0; canonical <= 1; canonical++) {
		struct trace t;
		gen_trace(&t, _i, 1500, 0x1000 + (uint64_t)canonical, canonical);
		check_checkpoints(fmt_of(_i), &t, 300);
		tb_free(&t);
	}
}
END_TEST

/* Through the index pass. */

struct built {
	struct mem_source src;
	struct tm_view_table views;
	struct tm_index *ix;
	json_object *root;
};

static void build(struct built *b, const struct tm_format *f, const uint8_t *data, size_t len)
{
	mem_source_init(&b->src, data, len);
	ck_assert_int_eq(tm_view_table_init(&b->views, f, f == fmt_of(1) ? "t.tt6e" : "t.tt6"), 0);
	ck_assert_int_eq(tm_index_build(f, &b->views, &b->src.src, "t", NULL, NULL, &b->ix), 0);
	char *text = strndup(b->ix->stats_json, b->ix->stats_len);
	b->root = json_tokener_parse(text);
	ck_assert_msg(b->root != NULL, "stats.json does not parse: %s", text);
	free(text);
}

static void unbuild(struct built *b)
{
	json_object_put(b->root);
	tm_index_free(b->ix);
	tm_view_table_free(&b->views);
	mem_source_free(&b->src);
}

static int64_t stat_int(struct built *b, const char *key)
{
	json_object *v;
	ck_assert_msg(json_object_object_get_ex(b->root, key, &v), "no %s", key);
	return json_object_get_int64(v);
}

/* The errors.txt line for a trace cut at `cut` inside unit u. */
static void cut_line(const struct trace *t, const struct unit *u, size_t cut, char *out, size_t len)
{
	size_t left = cut - u->off;
	if (left >= 4 && u->cls != C_INITIAL && (u->word >> 26) == 0)
		snprintf(out, len,
			 "offset %zu: escape 0x%02x: its %u words run past the end of the trace "
			 "(%zu bytes of %zu present)\n",
			 u->off, (u->word >> 16) & 0x3ff, u->word & 0xffff, left, u->len);
	else
		snprintf(out, len,
			 "offset %zu: %s record cut by the end of the trace: %zu of %zu bytes, not "
			 "decoded\n",
			 u->off,
			 left < 4 ? (u == &t->u[0] ? "the INITIAL_PC" : "a") : class_names[u->cls],
			 left, left < 4 ? (size_t)4 : u->len);
}

/* The trace cut at every byte: the records before the cut, one error naming the offset of the
 * record cut, truncated set. */
START_TEST(test_truncation)
{
	const struct tm_format *f = fmt_of(_i);
	struct trace t;
	hand_trace(&t, _i, 0); /* no twi: TT6E would also report the pair cut off */
	for (size_t cut = 0; cut <= t.len; cut++) {
		struct built b;
		build(&b, f, t.b, cut);
		size_t complete = 0, records = 0;
		const struct unit *inside = NULL;
		for (size_t i = 0; i < t.n; i++) {
			if (t.u[i].off + t.u[i].len <= cut) {
				complete = t.u[i].off + t.u[i].len;
				records += t.u[i].cls != C_POSITION;
			} else if (t.u[i].off < cut) {
				inside = &t.u[i];
			}
		}
		EXPECT(tm_index_records(b.ix) == records,
		       "cut %zu: %" PRIu64 " records, expected %zu", cut, tm_index_records(b.ix),
		       records);
		EXPECT(stat_int(&b, "records") == (int64_t)records, "cut %zu", cut);
		EXPECT(stat_int(&b, "bytes") == (int64_t)cut, "cut %zu", cut);
		EXPECT(b.ix->raw_size == cut, "cut %zu: raw_size %" PRIu64, cut, b.ix->raw_size);
		if (!inside) {
			EXPECT(complete == cut, "cut %zu", cut);
			/* the one note a clean TT6E may hold: its dcbx without an address */
			static const char note[] =
			    "1 cache-block instructions (dcbz, dcbt...) have "
			    "no address (an escape 0x12 before each): they "
			    "are not in convert/NAME.din\n";
			int noted = _i && b.ix->errors_len == sizeof(note) - 1 &&
				    memcmp(b.ix->errors_txt, note, sizeof(note) - 1) == 0;
			EXPECT((noted || (b.ix->n_errors == 0 && b.ix->errors_len == 0)) &&
				   !b.ix->truncated,
			       "cut %zu at a record boundary: errors %.*s", cut,
			       (int)b.ix->errors_len, b.ix->errors_txt);
		} else {
			char want[256];
			cut_line(&t, inside, cut, want, sizeof(want));
			EXPECT(b.ix->truncated, "cut %zu: not truncated", cut);
			EXPECT(b.ix->n_errors == 1, "cut %zu: %" PRIu64 " errors", cut,
			       b.ix->n_errors);
			EXPECT(b.ix->errors_len == strlen(want) &&
				   memcmp(b.ix->errors_txt, want, strlen(want)) == 0,
			       "cut %zu: errors.txt \"%.*s\", expected \"%s\"", cut,
			       (int)b.ix->errors_len, b.ix->errors_txt, want);
		}
		json_object *v;
		ck_assert(json_object_object_get_ex(b.root, "truncated", &v));
		EXPECT(json_object_get_boolean(v) == (inside != NULL), "cut %zu", cut);
		unbuild(&b);
	}
	tb_free(&t);
}
END_TEST

/* Bad input: the documented errors.txt lines. */
static const struct bad_row {
	int tt6e;
	const char *what;
	uint32_t words[12];
	unsigned n_words;
	unsigned tail; /* bytes of one more word 0x7c7c7c7c */
	const char *errors;
	int truncated;
	unsigned records;
	int last_cls; /* of the last record */
} bad_rows[] = {
    {0,
     "escape count past the end",
     {0x1000, W_MFLR, 0x00010005, 1, 2},
     5,
     0,
     "offset 8: escape 0x01: its 5 words run past the end of the trace (12 bytes of 24 present)\n",
     1,
     2,
     C_COMPUTE},
    {1,
     "escape count past the end (TT6E)",
     {0x1000, 0x00300002, 1},
     3,
     0,
     "offset 4: escape 0x30: its 2 words run past the end of the trace (8 bytes of 12 present)\n",
     1,
     1,
     C_INITIAL},
    {0,
     "unknown code",
     {0x1000, 0x00070002, 1, 2, W_MFLR},
     5,
     0,
     "offset 4: unknown escape code 0x07 (2 words kept)\n",
     0,
     3,
     C_COMPUTE},
    {0,
     "unknown code 0x3ff",
     {0x1000, W_MFLR, 0x03ff0000},
     3,
     0,
     "offset 8: unknown escape code 0x3ff (0 words kept)\n",
     0,
     3,
     C_ESCAPE},
    {0,
     "reserved sync code",
     {0x1000, 0x00220002, 1, 2},
     4,
     0,
     "offset 4: unknown escape code 0x22 (2 words kept)\n",
     0,
     2,
     C_ESCAPE},
    {0,
     "sync with 3 words",
     {0x1000, W_MFLR, 0x00200003, 1, 2, 3, W_MFLR},
     7,
     0,
     "offset 8: sync escape 0x20 has 3 words, expected 2\n",
     0,
     4,
     C_COMPUTE},
    {1,
     "sync with 1 word",
     {0x1000, 0x00310001, 1},
     3,
     0,
     "offset 4: sync escape 0x31 has 1 words, expected 2\n",
     0,
     2,
     C_ESCAPE},
    {0,
     "position with 2 words",
     {0x1000, 0x00100002, 1, 2},
     4,
     0,
     "offset 4: escape 0x10 has 2 words, expected 3\n",
     0,
     2,
     C_ESCAPE},
    {0,
     "dcbx address with 2 words",
     {0x1000, 0x00110002, 1, 2},
     4,
     0,
     "offset 4: escape 0x11 has 2 words, expected 1\n",
     0,
     2,
     C_ESCAPE},
    {1,
     "twi without its pair",
     {0x1000, W_TWI, W_MFLR},
     3,
     0,
     "offset 8: the twi at pc 0x00001000 is not followed by the synthetic ba 0x700 + rfi pair\n",
     0,
     3,
     C_COMPUTE},
    {1,
     "twi then a branch elsewhere",
     {0x1000, W_MFLR, W_TWI, W_BA700, 0x704, W_MFLR},
     6,
     0,
     "offset 12: the twi at pc 0x00001004 is not followed by the synthetic ba 0x700 + rfi pair\n",
     0,
     5,
     C_COMPUTE},
    {1,
     "branch without rfi",
     {0x1000, W_TWI, W_BA700, 0x700, W_MFLR},
     5,
     0,
     "offset 16: the synthetic ba 0x700 after the twi at pc 0x00001000 is not followed by rfi\n",
     0,
     4,
     C_COMPUTE},
    {1,
     "pair cut at the end after the twi",
     {0x1000, W_TWI},
     2,
     0,
     "offset 8: the trace ends inside the synthetic pair after the twi at pc 0x00001000\n",
     0,
     2,
     C_COMPUTE},
    {1,
     "pair cut at the end after the branch",
     {0x1000, W_MFLR, W_TWI, W_BA700, 0x700},
     5,
     0,
     "offset 20: the trace ends inside the synthetic pair after the twi at pc 0x00001004\n",
     0,
     4,
     C_FLOW},
    {1,
     "an escape inside the pair",
     {0x1000, W_TWI, 0x00010001, 5, W_BA700, 0x700, W_RFI, 4},
     8,
     0,
     "offset 8: the twi at pc 0x00001000 is not followed by the synthetic ba 0x700 + rfi pair\n",
     0,
     5,
     C_FLOW},
    {1, "the whole pair", {0x1000, W_TWI, W_BA700, 0x700, W_RFI, 0x1004}, 6, 0, "", 0, 4, C_FLOW},
    {0, "TT6: a twi needs no pair", {0x1000, W_TWI}, 2, 0, "", 0, 2, C_COMPUTE},
    {0,
     "INITIAL_PC cut",
     {0},
     0,
     3,
     "offset 0: the INITIAL_PC record cut by the end of the trace: 3 of 4 bytes, not decoded\n",
     1,
     0,
     -1},
    {0,
     "a word cut",
     {0x1000, W_MFLR},
     2,
     1,
     "offset 8: a record cut by the end of the trace: 1 of 4 bytes, not decoded\n",
     1,
     2,
     C_COMPUTE},
    {1,
     "memory record cut",
     {0x1000, W_LWZ},
     2,
     0,
     "offset 4: memory record cut by the end of the trace: 4 of 8 bytes, not decoded\n",
     1,
     1,
     C_INITIAL},
    {1,
     "memext record cut",
     {0x1000, W_LSWX, 1},
     3,
     2,
     "offset 4: memext record cut by the end of the trace: 10 of 12 bytes, not decoded\n",
     1,
     1,
     C_INITIAL},
    {0, "empty trace", {0}, 0, 0, "", 0, 0, -1},
};

START_TEST(test_bad_input)
{
	const struct bad_row *row = &bad_rows[_i];
	const struct tm_format *f = fmt_of(row->tt6e);
	uint8_t data[64];
	size_t len = 0;
	for (unsigned i = 0; i < row->n_words; i++)
		for (int k = 3; k >= 0; k--)
			data[len++] = (uint8_t)(row->words[i] >> (8 * k));
	memset(data + len, 0x7c, row->tail);
	len += row->tail;
	struct built b;
	build(&b, f, data, len);
	const char *text = b.ix->errors_txt ? b.ix->errors_txt : ""; /* NULL when empty */
	ck_assert_msg(
	    b.ix->errors_len == strlen(row->errors) &&
		(b.ix->errors_len == 0 || memcmp(text, row->errors, b.ix->errors_len) == 0),
	    "%s: errors.txt \"%.*s\", expected \"%s\"", row->what, (int)b.ix->errors_len, text,
	    row->errors);
	ck_assert_uint_eq(b.ix->n_errors, *row->errors ? 1 : 0);
	ck_assert_int_eq(stat_int(&b, "errors"), *row->errors ? 1 : 0);
	ck_assert_msg(b.ix->truncated == (row->truncated != 0), "%s: truncated %d", row->what,
		      b.ix->truncated);
	ck_assert_msg(tm_index_records(b.ix) == row->records, "%s: %" PRIu64 " records", row->what,
		      tm_index_records(b.ix));
	ck_assert_int_eq(stat_int(&b, "bytes"), (int64_t)len);
	unbuild(&b);

	/* decoding alone: the same text, and the last record's class */
	struct decoded d;
	decode_all(f, data, len, 1, &d); /* calls at other offsets than 0 */
	ck_assert_uint_eq(d.n, row->records);
	ck_assert_msg(d.diag.len == strlen(row->errors) &&
			  (d.diag.len == 0 || memcmp(d.diag.text, row->errors, d.diag.len) == 0),
		      "%s, decoded alone: \"%.*s\", expected \"%s\"", row->what, (int)d.diag.len,
		      d.diag.text, row->errors);
	if (row->last_cls >= 0)
		ck_assert_str_eq(class_names[d.r[d.n - 1].head.cls], class_names[row->last_cls]);
	decoded_free(&d);
}
END_TEST

static Suite *tt6_suite(void)
{
	Suite *s = suite_create("tt6");
	TCase *tc = tcase_create("decode");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_layout);
	tcase_add_loop_test(tc, test_decode_records, 0, 2);
	tcase_add_loop_test(tc, test_checkpoints_hand, 0, 2);
	tcase_add_loop_test(tc, test_checkpoints_generated, 0, 2);
	tcase_add_loop_test(tc, test_truncation, 0, 2);
	tcase_add_loop_test(tc, test_bad_input, 0, (int)(sizeof(bad_rows) / sizeof(bad_rows[0])));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(tt6_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
