/* Basic-block counts: the file form both ways and in both byte orders, sadd's sum, the texts,
 * the builder's blocks for instruction streams whose blocks are worked out here by hand, and
 * the spixcounts format read through the core, whole and cut at every byte. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/registry.h"
#include "spix/spix.h"
#include "view_check.h"

#define BAD TM_SPIX_BADCNT

struct block {
	unsigned len;
	uint32_t c0, c1;
	uint64_t addr;
};

static void make_table(struct tm_spix_table *t, const struct block *b, size_t n, bool be)
{
	memset(t, 0, sizeof(*t));
	ck_assert_int_eq(tm_spix_table_reserve(t, n ? n : 1), 0);
	t->nbb = (uint32_t)n;
	t->big_endian = be;
	for (size_t k = 0; k < n; k++) {
		t->len[k] = (uint8_t)b[k].len;
		t->count[k][0] = b[k].c0;
		t->count[k][1] = b[k].c1;
		t->tsize += 4 * b[k].len;
	}
	t->tsum = 0xcafef00d;
}

/* What a renderer writes, in memory. Returns its result. */
static int render(int (*fn)(const struct tm_spix_table *, FILE *), const struct tm_spix_table *t,
		  struct tm_blob *out)
{
	char *bytes = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&bytes, &len);
	ck_assert_ptr_nonnull(f);
	int err = fn(t, f);
	ck_assert_int_eq(fclose(f), 0);
	out->data = (uint8_t *)bytes;
	out->len = len;
	return err;
}

static const struct block small[] = {
    {3, 10, 0, 0}, {2, 5, 7, 0}, {4, BAD, BAD, 0}, {1, 0, 0, 0}, {255, 1, 0, 0}};

START_TEST(test_file_round_trip)
{
	for (int be = 0; be < 2; be++) {
		struct tm_spix_table t, back;
		struct tm_blob file;
		char why[128];
		make_table(&t, small, 5, be);
		ck_assert_int_eq(render(tm_spix_write, &t, &file), 0);
		ck_assert_uint_eq(file.len, 16 + 8 + 5 * 8);
		static const uint8_t magic_be[4] = {0x62, 0x62, 0x00, 0x11};
		static const uint8_t magic_le[4] = {0x11, 0x00, 0x62, 0x62};
		ck_assert_mem_eq(file.data, be ? magic_be : magic_le, 4);
		ck_assert_int_eq(tm_spix_parse(file.data, file.len, &back, why, sizeof(why)), 0);
		ck_assert_int_eq(back.big_endian, be);
		ck_assert_uint_eq(back.tsize, t.tsize);
		ck_assert_uint_eq(back.tsum, 0xcafef00d);
		ck_assert_uint_eq(back.nbb, 5);
		ck_assert_mem_eq(back.len, t.len, 5);
		ck_assert_mem_eq(back.count, t.count, 5 * 8);
		tm_spix_table_free(&back);
		/* cut anywhere: the blocks read whole, and why */
		for (size_t cut = 0; cut < file.len; cut++) {
			int err = tm_spix_parse(file.data, cut, &back, why, sizeof(why));
			ck_assert_int_eq(err, -EBADMSG);
			size_t whole = cut >= 24 ? (cut - 24) / 8 : 0;
			ck_assert_uint_eq(back.nbb, whole);
			ck_assert_ptr_nonnull(strstr(why, cut < 4 || cut >= 16
							      ? "unexpected EOF"
							      : "unexpected EOF in the header"));
			tm_spix_table_free(&back);
		}
		file.data[be ? 0 : 3] ^= 1;
		ck_assert_int_eq(tm_spix_parse(file.data, file.len, &back, why, sizeof(why)),
				 -EBADMSG);
		ck_assert_str_eq(why, "bad magic");
		tm_spix_table_free(&back);
		free(file.data);
		tm_spix_table_free(&t);
	}
}
END_TEST

START_TEST(test_add)
{
	struct tm_spix_table a, b;
	char why[128] = "";
	const struct block x[] = {{2, 4294967000u, 0, 0}, {1, BAD, BAD, 0}, {3, 1, 2, 0}};
	const struct block y[] = {{2, 1000, 0, 0}, {1, BAD, BAD, 0}, {3, 3, 4, 0}};
	make_table(&a, x, 3, true);
	make_table(&b, y, 3, true);
	ck_assert_uint_eq(tm_spix_add(&a, &b, why, sizeof(why)), 1);
	ck_assert_str_eq(why, "counter overflow at block 0 (text offset 0x00000000)");
	ck_assert_uint_eq(a.count[0][0], 0xfffffffe);
	ck_assert_uint_eq(a.count[1][0], BAD);
	ck_assert_uint_eq(a.count[2][0], 4);
	ck_assert_uint_eq(a.count[2][1], 6);
	/* executable in one only: the other's counters, reported */
	b.count[2][0] = b.count[2][1] = BAD;
	a.count[0][0] = 1;
	ck_assert_uint_eq(tm_spix_add(&b, &a, why, sizeof(why)), 1);
	ck_assert_str_eq(why,
			 "block 2 (text offset 0x0000000c) is non-executable in one file only");
	ck_assert_uint_eq(b.count[2][0], 4);
	tm_spix_table_free(&a);
	tm_spix_table_free(&b);
}
END_TEST

START_TEST(test_texts)
{
	struct tm_spix_table t;
	struct tm_blob out;
	make_table(&t, small, 5, true);
	ck_assert_int_eq(render(tm_spix_blocks, &t, &out), 0);
	const char *blocks = "0 0x00000000 3 10 0\n"
			     "1 0x0000000c 2 5 7\n"
			     "2 0x00000014 4 - -\n"
			     "3 0x00000024 1 0 0\n"
			     "4 0x00000028 255 1 0\n";
	expect_same_text("blocks.txt", blocks, strlen(blocks), (char *)out.data, out.len);
	free(out.data);
	ck_assert_int_eq(render(tm_spix_summary, &t, &out), 0);
	const char *summary =
	    "magic 0x62620011 big-endian\n"
	    "text_size 1060\n"
	    "text_checksum 0xcafef00d\n"
	    "blocks 5\n"
	    "non_executable_blocks 1\n"
	    "executed_blocks 3\n"
	    "instructions 309\n"
	    "\n"
	    "rank block offset length executions instructions percent cumulative\n"
	    "1 4 0x00000028 255 1 255 82.52 82.52\n"
	    "2 0 0x00000000 3 10 30 9.71 92.23\n"
	    "3 1 0x0000000c 2 12 24 7.77 100.00\n";
	expect_same_text("summary.txt", summary, strlen(summary), (char *)out.data, out.len);
	free(out.data);
	tm_spix_table_free(&t);
}
END_TEST

/* An instruction of a stream, 4 bytes unless told. */
struct step {
	uint64_t pc;
	uint8_t flow;
	uint32_t size;
	uint8_t stream;
	bool more;
};

/* The table of the steps, repeated `times`. */
static void build(const struct step *s, size_t n, unsigned times, struct tm_spix_table *t,
		  struct tm_spix_facts *facts)
{
	struct tm_spix_builder *b;
	ck_assert_int_eq(tm_spix_builder_new(&b), 0);
	for (unsigned r = 0; r < times; r++)
		for (size_t i = 0; i < n; i++) {
			struct tm_insn insn = {.pc = s[i].pc,
					       .size = s[i].size ? s[i].size : 4,
					       .flow = s[i].flow,
					       .stream = s[i].stream,
					       .more = s[i].more};
			tm_spix_builder_add(b, &insn, 1);
		}
	ck_assert_int_eq(tm_spix_builder_finish(b, t, facts), 0);
	tm_spix_builder_free(b);
}

/* Feeds the steps, repeated `times`, and checks the blocks against want. */
static void expect_blocks(const struct step *s, size_t n, unsigned times, const struct block *want,
			  size_t n_want, uint64_t instructions, struct tm_spix_facts *facts_out)
{
	struct tm_spix_table t;
	struct tm_spix_facts facts;
	build(s, n, times, &t, &facts);
	for (size_t k = 0; k < n_want && k < t.nbb; k++) {
		ck_assert_msg(t.len[k] == want[k].len && t.count[k][0] == want[k].c0 &&
				  t.count[k][1] == want[k].c1 && t.addr[k] == want[k].addr,
			      "block %zu: %u %u %u at 0x%llx, expected %u %u %u at 0x%llx", k,
			      t.len[k], t.count[k][0], t.count[k][1], (unsigned long long)t.addr[k],
			      want[k].len, want[k].c0, want[k].c1,
			      (unsigned long long)want[k].addr);
	}
	ck_assert_uint_eq(t.nbb, n_want);
	ck_assert_uint_eq(facts.instructions, instructions);
	uint64_t total = 0, text = 0;
	for (uint32_t k = 0; k < t.nbb; k++) {
		total += tm_spix_block_instructions(&t, k);
		text += 4u * t.len[k];
	}
	ck_assert_uint_eq(total, instructions);
	ck_assert_uint_eq(t.tsize, text);
	ck_assert_uint_eq(t.tsum, 0);
	if (facts_out)
		*facts_out = facts;
	tm_spix_table_free(&t);
}

START_TEST(test_loop)
{
	/* 0xf8: two instructions, then a loop of four taken 9 times, then a return */
	struct step s[64];
	size_t n = 0;
	s[n++] = (struct step){.pc = 0xf8};
	s[n++] = (struct step){.pc = 0xfc};
	for (int i = 0; i < 10; i++) {
		for (uint64_t pc = 0x100; pc < 0x10c; pc += 4)
			s[n++] = (struct step){.pc = pc};
		s[n++] =
		    (struct step){.pc = 0x10c, .flow = i < 9 ? TM_FLOW_TAKEN : TM_FLOW_NOT_TAKEN};
	}
	s[n++] = (struct step){.pc = 0x110, .flow = TM_FLOW_JUMP};
	const struct block want[] = {{2, 1, 0, 0xf8}, {4, 9, 1, 0x100}, {1, 1, 0, 0x110}};
	expect_blocks(s, n, 1, want, 3, 43, NULL);
}
END_TEST

START_TEST(test_many_runs_out_of_order)
{
	/* 5000 runs of two instructions, 64 bytes apart, entered in a shuffled order, run k % 3 + 1
	 * times each: sorted by address, each a block, with a gap of 14 words between two */
	enum { N_RUNS = 5000 };
	static uint32_t order[N_RUNS];
	for (uint32_t k = 0; k < N_RUNS; k++)
		order[k] = k;
	uint64_t x = 12345;
	for (uint32_t k = N_RUNS - 1; k > 0; k--) { /* Fisher-Yates with an LCG */
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t j = (uint32_t)((x >> 33) % (k + 1)), t = order[k];
		order[k] = order[j];
		order[j] = t;
	}
	static struct step s[2 * 3 * N_RUNS];
	size_t n = 0;
	uint64_t instructions = 0;
	for (uint32_t k = 0; k < N_RUNS; k++)
		for (uint32_t r = 0; r < order[k] % 3 + 1; r++, instructions += 2) {
			uint64_t pc = 0x10000 + 64ull * order[k];
			s[n++] = (struct step){.pc = pc};
			s[n++] = (struct step){.pc = pc + 4, .flow = TM_FLOW_JUMP};
		}
	struct tm_spix_table t;
	struct tm_spix_facts facts;
	build(s, n, 1, &t, &facts);
	ck_assert_uint_eq(t.nbb, 2 * N_RUNS - 1);
	ck_assert_uint_eq(facts.instructions, instructions);
	for (uint32_t k = 0; k < N_RUNS; k++) {
		ck_assert_uint_eq(t.addr[2 * k], 0x10000 + 64ull * k);
		ck_assert_uint_eq(t.len[2 * k], 2);
		ck_assert_uint_eq(t.count[2 * k][0], k % 3 + 1);
		if (k + 1 < N_RUNS) {
			ck_assert_uint_eq(t.len[2 * k + 1], 14);
			ck_assert(tm_spix_non_executable(&t, 2 * k + 1));
		}
	}
	tm_spix_table_free(&t);
}
END_TEST

START_TEST(test_target_after_discontinuity)
{
	/* 0x1fc runs once and the PC leaves (an interrupt); later a branch lands on 0x200, run
	 * once too: the counts agree, yet 0x200 begins a block */
	const struct step s[] = {{.pc = 0x1f8},
				 {.pc = 0x1fc},
				 {.pc = 0x3000, .flow = TM_FLOW_JUMP},
				 {.pc = 0x200},
				 {.pc = 0x204}};
	/* between them, 0x208 to 0x3000: 2942 non-executable words, 11 blocks of 255 and one
	 * of 137 */
	struct block w[15] = {{2, 1, 0, 0x1f8}, {2, 1, 0, 0x200}};
	uint64_t a = 0x208;
	for (int k = 0; k < 11; k++, a += 4 * 255)
		w[2 + k] = (struct block){255, BAD, BAD, a};
	w[13] = (struct block){137, BAD, BAD, a};
	w[14] = (struct block){1, 1, 0, 0x3000};
	expect_blocks(s, 5, 1, w, 15, 5, NULL);
}
END_TEST

START_TEST(test_gaps_and_splits)
{
	struct tm_spix_facts facts;
	/* 300 straight instructions: 255 + 45; then a gap of 16 bytes; then one past 256 KiB */
	struct step s[310];
	size_t n = 0;
	for (uint64_t k = 0; k < 300; k++)
		s[n++] = (struct step){.pc = 0x10000 + 4 * k};
	s[n++] = (struct step){.pc = 0x10000 + 4 * 300 + 16};
	s[n++] = (struct step){.pc = 0x10000 + 4 * 301 + 16 + (1u << 20)};
	const struct block want[] = {{255, 2, 0, 0x10000},   {45, 2, 0, 0x10000 + 4 * 255},
				     {4, BAD, BAD, 0x104b0}, {1, 2, 0, 0x104c0},
				     {1, BAD, BAD, 0x104c4}, {1, 2, 0, 0x1104c4}};
	expect_blocks(s, n, 2, want, 6, 604, &facts);
	ck_assert_uint_eq(facts.gaps_shortened, 1);
	ck_assert_uint_eq(facts.overlaps, 0);
}
END_TEST

START_TEST(test_streams_and_micro_ops)
{
	/* two processors interleaved, each straight: one block each, as if alone; x86 sizes
	 * and a branch outcome brought by a later micro-op */
	const struct step s[] = {
	    {.pc = 0x100, .flow = 0, .size = 0, .stream = 0},
	    {.pc = 0x800, .flow = 0, .size = 0, .stream = 1},
	    {.pc = 0x104, .flow = 0, .size = 0, .stream = 0},
	    {.pc = 0x804, .flow = 0, .size = 0, .stream = 1},
	    {.pc = 0x108, .flow = 0, .size = 0, .stream = 0},
	    {.pc = 0x808, .flow = 0, .size = 0, .stream = 1},
	    {.pc = 0x900, .flow = 0, .size = 3, .stream = 2},
	    {.pc = 0x903, .flow = 0, .size = 5, .stream = 2},
	    {.pc = 0x903, .flow = TM_FLOW_TAKEN, .size = 5, .stream = 2, .more = true}};
	struct tm_spix_table t;
	struct tm_spix_facts facts;
	build(s, sizeof(s) / sizeof(s[0]), 2, &t, &facts);
	ck_assert_uint_eq(facts.instructions, 16);
	/* the blocks at 0x100, 0x800 and 0x900: whole, counted twice; 0x900's two x86
	 * instructions end in the branch taken twice */
	int seen = 0;
	for (uint32_t k = 0; k < t.nbb; k++) {
		if (t.addr[k] == 0x100 || t.addr[k] == 0x800) {
			ck_assert_uint_eq(t.len[k], 3);
			ck_assert_uint_eq(t.count[k][0], 2);
			seen++;
		}
		if (t.addr[k] == 0x900) {
			ck_assert_uint_eq(t.len[k], 2);
			ck_assert_uint_eq(t.count[k][0], 2); /* taken */
			ck_assert_uint_eq(t.count[k][1], 0);
			seen++;
		}
	}
	ck_assert_int_eq(seen, 3);
	tm_spix_table_free(&t);
}
END_TEST

/* The spixcounts format through the core: every view of a file, and the file cut at every
 * byte (the decoder restarted at every split the index pass may make). */
START_TEST(test_format)
{
	const struct tm_format *f = tm_format_find("spixcounts");
	struct tm_spix_table t;
	struct tm_blob file, want;
	struct mounted m;
	size_t len;
	ck_assert_ptr_nonnull(f);
	make_table(&t, small, 5, false);
	ck_assert_int_eq(render(tm_spix_write, &t, &file), 0);
	ck_assert_int_ge(tm_format_bid(f, "x.dat", file.data, file.len), 90);
	ck_assert_int_eq(tm_format_bid(f, "x.dat", (const uint8_t *)"hello", 5), 0);
	ck_assert_int_gt(tm_format_bid(f, "prog.bb", NULL, 0), 0);
	mount_trace(&m, "prog.bb", f, file.data, file.len);
	char *got = read_view(&m, "blocks.txt", &len);
	ck_assert_int_eq(render(tm_spix_blocks, &t, &want), 0);
	expect_same_text("blocks.txt", (char *)want.data, want.len, got, len);
	free(got);
	got = read_view(&m, "dump.txt", &len);
	expect_same_text("dump.txt", (char *)want.data, want.len, got, len);
	free(got);
	free(want.data);
	got = read_view(&m, "errors.txt", &len);
	ck_assert_uint_eq(len, 0);
	free(got);
	unmount_trace(&m);
	for (size_t cut = 0; cut <= file.len; cut++) {
		mount_trace(&m, "cut.bb", f, file.data, cut);
		got = read_view(&m, "blocks.txt", &len);
		size_t lines = 0;
		for (size_t i = 0; i < len; i++)
			lines += got[i] == '\n';
		ck_assert_uint_eq(lines, cut >= 24 ? (cut - 24) / 8 : 0);
		free(got);
		got = read_view(&m, "errors.txt", &len);
		ck_assert_msg((cut == file.len) == (len == 0), "cut at %zu: errors.txt %.*s", cut,
			      (int)len, got);
		free(got);
		unmount_trace(&m);
	}
	free(file.data);
	tm_spix_table_free(&t);
}
END_TEST

START_TEST(test_outcome_from_next_pc)
{
	/* a conditional branch whose outcome is the next PC of its processor: taken twice (to
	 * 0x100), then not taken; another processor's instruction between them changes nothing */
	const struct step s[] = {
	    {.pc = 0x100},
	    {.pc = 0x104, .flow = TM_FLOW_COND},
	    {.pc = 0x900, .stream = 1},
	    {.pc = 0x100},
	    {.pc = 0x104, .flow = TM_FLOW_COND},
	    {.pc = 0x100},
	    {.pc = 0x104, .flow = TM_FLOW_COND},
	    {.pc = 0x108},
	    {.pc = 0x10c, .flow = TM_FLOW_COND}, /* the last: its outcome unknown, not taken */
	};
	struct tm_spix_table t;
	struct tm_spix_facts facts;
	build(s, sizeof(s) / sizeof(s[0]), 1, &t, &facts);
	ck_assert_uint_eq(facts.instructions, 9);
	ck_assert_uint_eq(t.addr[0], 0x100);
	ck_assert_uint_eq(t.len[0], 2);
	ck_assert_uint_eq(t.count[0][0], 2); /* taken */
	ck_assert_uint_eq(t.count[0][1], 1); /* not taken */
	ck_assert_uint_eq(t.addr[1], 0x108);
	ck_assert_uint_eq(t.len[1], 2);
	ck_assert_uint_eq(t.count[1][0], 0);
	ck_assert_uint_eq(t.count[1][1], 1);
	tm_spix_table_free(&t);
}
END_TEST

static Suite *spix_suite(void)
{
	Suite *s = suite_create("spix");
	TCase *tc = tcase_create("spix");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_file_round_trip);
	tcase_add_test(tc, test_add);
	tcase_add_test(tc, test_texts);
	tcase_add_test(tc, test_loop);
	tcase_add_test(tc, test_many_runs_out_of_order);
	tcase_add_test(tc, test_target_after_discontinuity);
	tcase_add_test(tc, test_gaps_and_splits);
	tcase_add_test(tc, test_streams_and_micro_ops);
	tcase_add_test(tc, test_outcome_from_next_pc);
	tcase_add_test(tc, test_format);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(spix_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
