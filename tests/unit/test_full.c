/* The FULL decoder (src/formats/full.c) and the PowerPC facts it relies on (ppc.c: branch
 * outcomes, effective addresses, units), against values worked out here from the PowerPC
 * architecture and doc/formats.md: tables of cases, the three record layouts, the checkpoint
 * contract (any split of the bytes decodes the same), truncation, and every view read whole
 * through the core. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "full.h"
#include "tracemount/diag.h"
#include "tracemount/reader.h"
#include "tracemount/registry.h"
#include "tracemount/view.h"
#include "view_check.h"

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Branch outcomes: word, pc, cr, lr, ctr -> next pc. */
static const struct {
	uint32_t word, pc, cr, lr, ctr, next;
	const char *what;
} branches[] = {
    {0x48000010, 0x1000, 0, 0, 0, 0x1010, "b +16"},
    {0x4bfffff0, 0x1000, 0, 0, 0, 0x0ff0, "b -16"},
    {0x48000702, 0x1000, 0, 0, 0, 0x0700, "ba 0x700"},
    {0x48000011, 0x1000, 0, 0, 0, 0x1010, "bl +16"},
    {0x4bfff001, 0x00000800, 0, 0, 0, 0xfffff800, "bl wraps around 2^32"},
    {0x4200fff8, 0x2000, 0, 0, 2, 0x1ff8, "bdnz, ctr 2: taken"},
    {0x4200fff8, 0x2000, 0, 0, 1, 0x2004, "bdnz, ctr 1: falls through"},
    {0x4240fff8, 0x2000, 0, 0, 1, 0x1ff8, "bdz, ctr 1: taken"},
    {0x41820008, 0x3000, 0x20000000, 0, 0, 0x3008, "beq, cr0 eq set: taken"},
    {0x41820008, 0x3000, 0x80000000, 0, 0, 0x3004, "beq, cr0 eq clear: falls through"},
    {0x40820008, 0x3000, 0x80000000, 0, 0, 0x3008, "bne, cr0 eq clear: taken"},
    {0x419e0008, 0x3000, 0x00000002, 0, 0, 0x3008, "beq cr7 (bit 30)"},
    {0x41000008, 0x3000, 0x00000000, 0, 1, 0x3004, "bdnzt eq, ctr 1: falls through"},
    {0x42800008, 0x3000, 0, 0, 1, 0x3008, "bc 20: always, ctr ignored"},
    {0x4e800020, 0x4000, 0, 0x1237, 0, 0x1234, "blr: lr, low bits cleared"},
    {0x4d820020, 0x4000, 0x20000000, 0x5000, 0, 0x5000, "beqlr: taken"},
    {0x4d820020, 0x4000, 0, 0x5000, 0, 0x4004, "beqlr: falls through"},
    {0x4e000020, 0x4000, 0, 0x5000, 1, 0x4004, "bdnzlr, ctr 1: falls through"},
    {0x4e800420, 0x4000, 0, 0, 0x6002, 0x6000, "bctr"},
    {0x4e800421, 0x4000, 0, 0, 0x6000, 0x6000, "bctrl"},
    {0x4c820420, 0x4000, 0, 0, 0x6000, 0x6000, "bnectr: taken, ctr not a counter"},
    {0x4c820420, 0x4000, 0x20000000, 0, 0x6000, 0x4004, "bnectr: falls through"},
    {0x44000002, 0x7000, 0, 0, 0, 0x7004, "sc"},
    {0x4c000064, 0x7000, 0, 0, 0, 0x7004, "rfi: unknown, pc + 4"},
};

START_TEST(test_next_pc)
{
	for (size_t k = 0; k < sizeof(branches) / sizeof(branches[0]); k++) {
		struct ppc_branch_regs regs = {branches[k].cr, branches[k].lr, branches[k].ctr};
		uint32_t got = ppc_next_pc(branches[k].word, branches[k].pc, &regs);
		ck_assert_msg(got == branches[k].next, "%s: 0x%08x, expected 0x%08x",
			      branches[k].what, got, branches[k].next);
	}
}
END_TEST

/* Effective addresses: word -> EA with r0 = 0x100, rN = 0x1000 * N otherwise. */
static const struct {
	uint32_t word, ea;
	const char *what;
} addresses[] = {
    {0x80820008, 0x2008, "lwz r4, 8(r2)"},
    {0x80800008, 0x0008, "lwz r4, 8(0): rA 0 is zero, not r0"},
    {0x8082fff8, 0x1ff8, "lwz r4, -8(r2)"},
    {0x84620004, 0x2004, "lwzu r3, 4(r2)"},
    {0x9421fff0, 0x0ff0, "stwu r1, -16(r1)"},
    {0xe8620009, 0x2008, "ldu r3, 8(r2): DS form, the low bits select"},
    {0xf8620008, 0x2008, "std r3, 8(r2)"},
    {0x7c82182e, 0x5000, "lwzx r4, r2, r3"},
    {0x7c80182e, 0x3000, "lwzx r4, 0, r3"},
    {0x7c0218ce, 0x5000, "lvx v0, r2, r3"},
    {0x7c0217ec, 0x2000 + 0x2000, "dcbz r2, r2"},
    {0x7c823caa, 0x2000, "lswi r4, r2, 7: rA alone"},
    {0x7c801c2a, 0x3000, "lswx r4, 0, r3"},
    {0x7c0222ac, 0x2000, "dst r2, r4: rA itself"},
    {0x7c0022ac, 0x0100, "dst r0, r4: r0's value"},
    {0xb8620040, 0x2040, "lmw r3, 64(r2)"},
    {0x38630001, 0, "addi: no address"},
    {0x48000010, 0, "b: no address"},
};

START_TEST(test_effective_address)
{
	uint8_t gpr[128];
	for (unsigned n = 0; n < 32; n++)
		put32(gpr + 4 * n, n ? 0x1000 * n : 0x100);
	for (size_t k = 0; k < sizeof(addresses) / sizeof(addresses[0]); k++) {
		uint32_t got = ppc_effective_address(addresses[k].word, gpr);
		ck_assert_msg(got == addresses[k].ea, "%s: 0x%08x, expected 0x%08x",
			      addresses[k].what, got, addresses[k].ea);
	}
}
END_TEST

START_TEST(test_units)
{
	ck_assert_int_eq(ppc_unit_of(0xfc43282a), PPC_UNIT_FP);	    /* fadd */
	ck_assert_int_eq(ppc_unit_of(0xc8220010), PPC_UNIT_FP);	    /* lfd */
	ck_assert_int_eq(ppc_unit_of(0x7c8214ae), PPC_UNIT_FP);	    /* lfdx */
	ck_assert_int_eq(ppc_unit_of(0xec221028), PPC_UNIT_FP);	    /* fsubs */
	ck_assert_int_eq(ppc_unit_of(0x10411000), PPC_UNIT_VECTOR); /* vaddubm */
	ck_assert_int_eq(ppc_unit_of(0x7c0218ce), PPC_UNIT_VECTOR); /* lvx */
	ck_assert_int_eq(ppc_unit_of(0x7c0222ac), PPC_UNIT_VECTOR); /* dst */
	ck_assert_int_eq(ppc_unit_of(0x80820008), PPC_UNIT_OTHER);  /* lwz */
	ck_assert_int_eq(ppc_unit_of(0x7c82182e), PPC_UNIT_OTHER);  /* lwzx */
	ck_assert_int_eq(ppc_unit_of(0x38630001), PPC_UNIT_OTHER);  /* addi */
}
END_TEST

/* A FULL trace built here: n records of layout l, an addi chain at 0x1000 with a b back every
 * eighth instruction; r3 counts, f1 changes every other record, v2 every third, cr each
 * fourth. */
static const struct {
	unsigned size, thread, fp, vector;
} layouts[3] = {{1004, 4, 164, 428}, {1008, 8, 168, 432}, {1008, 4, 168, 432}};

static uint32_t pc_of(unsigned k)
{
	return 0x1000 + 4 * (k % 8);
}

static uint8_t *build(unsigned l, unsigned n, size_t *len)
{
	size_t size = layouts[l].size;
	uint8_t *buf = calloc(1, 4 + n * size);
	ck_assert_ptr_nonnull(buf);
	put32(buf, FULL_MAGIC);
	for (unsigned k = 0; k < n; k++) {
		uint8_t *rec = buf + 4 + k * size, *ts = rec + layouts[l].thread;
		put32(rec, k % 8 == 7 ? 0x4bffffe4 : 0x38630001); /* b -28 (to 0x1000), addi */
		if (l != 0)					  /* padding is not looked at */
			put32(rec + (l == 1 ? 4 : 164), 0xdeadbeef);
		put32(ts + TS_SRR0, pc_of(k));
		put32(ts + TS_GPR + 4 * 3, k);
		put32(ts + TS_CR, k / 4);
		put32(rec + layouts[l].fp + 8, k / 2); /* f1, low word */
		put32(rec + layouts[l].vector + 16 * 2 + 12, k / 3);
	}
	*len = 4 + n * size;
	return buf;
}

static void expect_masks(const struct full_record *r, unsigned k)
{
	ck_assert_uint_eq(r->tt.num, k);
	ck_assert_uint_eq(r->tt.pc, pc_of(k));
	ck_assert_uint_eq(r->tt.head.cls, k % 8 == 7 ? PPC_FLOW : PPC_COMPUTE);
	if (k % 8 == 7)
		ck_assert_uint_eq(r->tt.w1, 0x1000);
	ck_assert_uint_eq(r->gpr_changed, k ? 1u << 3 : 0);
	ck_assert_uint_eq(r->fpr_changed, k && k % 2 == 0 ? 1u << 1 : 0);
	ck_assert_uint_eq(r->vr_changed, k && k % 3 == 0 ? 1u << 2 : 0);
	ck_assert_uint_eq(r->spr_changed, k && k % 4 == 0 ? 1u << 1 : 0); /* cr */
	unsigned flags = r->tt.head.flags;
	ck_assert_uint_eq(!!(flags & F_TRACE_FIRST), k == 0);
	ck_assert_uint_eq(!!(flags & F_CLASS_FIRST), k == 0 || k == 7);
	ck_assert_uint_eq(flags & F_JUMP, 0);
}

static const struct tm_format *full_format(void)
{
	const struct tm_format *f = tm_format_find("full");
	ck_assert_ptr_nonnull(f);
	return f;
}

/* Decodes buf[0, len) fed in pieces of at most step bytes (the rest of the buffer each time,
 * as the core does); returns the records. */
static struct full_record *decode_in_steps(const uint8_t *buf, size_t len, size_t step, size_t *n,
					   struct tm_diag *diag)
{
	const struct tm_format *f = full_format();
	void *state = calloc(1, f->state_size);
	struct full_record *recs = calloc(len / 1004 + 1, sizeof(*recs));
	ck_assert(state && recs);
	f->state_init(state);
	size_t pos = 0, avail = step < len ? step : len;
	*n = 0;
	for (;;) {
		struct tm_decode_in in = {buf + pos, avail - pos, pos, avail == len};
		size_t got = 0, used = 0;
		int ret = f->decode(state, &in, recs + *n, 100000, &got, &used, diag);
		ck_assert(ret == 0 || ret == -EAGAIN);
		*n += got;
		pos += used;
		if (ret == -EAGAIN || (!got && !used)) {
			if (avail == len)
				break;
			avail = avail + step < len ? avail + step : len;
		}
	}
	ck_assert_uint_eq(pos, len);
	free(state);
	return recs;
}

START_TEST(test_layouts_and_splits)
{
	static const size_t steps[] = {1 << 30, 5000, 1004, 1008, 3, 20000};
	for (unsigned l = 0; l < 3; l++) {
		size_t len, n0;
		uint8_t *buf = build(l, 40, &len);
		struct tm_diag diag;
		tm_diag_init(&diag);
		struct full_record *whole = decode_in_steps(buf, len, steps[0], &n0, &diag);
		ck_assert_uint_eq(n0, 40);
		ck_assert_uint_eq(diag.count, 0);
		for (unsigned k = 0; k < n0; k++) {
			ck_assert_uint_eq(whole[k].layout, l);
			ck_assert_uint_eq(whole[k].tt.head.raw_len, layouts[l].size);
			expect_masks(&whole[k], k);
		}
		for (size_t s = 1; s < sizeof(steps) / sizeof(steps[0]); s++) {
			size_t n;
			struct full_record *split = decode_in_steps(buf, len, steps[s], &n, NULL);
			ck_assert_uint_eq(n, n0);
			for (unsigned k = 0; k < n; k++) { /* raw_rel is relative to each call */
				split[k].tt.head.raw_rel = whole[k].tt.head.raw_rel;
				ck_assert_msg(memcmp(&split[k], &whole[k], sizeof(split[k])) == 0,
					      "layout %u, steps of %zu: record %u differs", l,
					      steps[s], k);
			}
			free(split);
		}
		tm_diag_free(&diag);
		free(whole);
		free(buf);
	}
}
END_TEST

START_TEST(test_cut_and_jump)
{
	size_t len, n;
	uint8_t *buf = build(0, 10, &len);
	put32(buf + 4 + 5 * 1004 + 4, 0x2000); /* record 5 is elsewhere */
	struct tm_diag diag;
	tm_diag_init(&diag);
	struct full_record *r = decode_in_steps(buf, len - 100, 1 << 30, &n, &diag);
	ck_assert_uint_eq(n, 9);
	ck_assert(diag.truncated);
	ck_assert_uint_eq(diag.count, 3); /* record 5 jumps there, record 6 back */
	ck_assert(r[5].tt.head.flags & F_JUMP);
	ck_assert(r[6].tt.head.flags & F_JUMP);
	ck_assert(!(r[7].tt.head.flags & F_JUMP));
	ck_assert_ptr_nonnull(strstr(diag.text, "offset 5024: instruction 5 at pc 0x00002000 does "
						"not follow the one at 0x00001010, which leads to "
						"0x00001014"));
	ck_assert_ptr_nonnull(strstr(diag.text,
				     "offset 9040: instruction 9 is cut by the end of the "
				     "trace: 904 of 1004 bytes"));
	tm_diag_free(&diag);
	free(r);
	free(buf);
}
END_TEST

START_TEST(test_probe)
{
	const struct tm_format *f = full_format();
	uint8_t head[8] = {0xa1, 0x11, 0x8e, 0x17};
	ck_assert_int_ge(tm_format_bid(f, "anything", head, 8), 90);
	ck_assert_int_eq(tm_format_bid(f, "x.full", head + 1, 7), 0);
	ck_assert_int_eq(tm_format_bid(f, "x", head, 3), 0);
	ck_assert_int_eq(tm_format_bid(f, "x", NULL, 0), 0);
	ck_assert_ptr_eq(tm_format_detect("x.tt6", head, 8), f); /* the magic beats a name */
}
END_TEST

/* Every view read whole through the core agrees with its size, for traces ending on and
 * around chunk boundaries; lines per instruction where a view has one. */
START_TEST(test_views_whole)
{
	const struct tm_format *f = full_format();
	const unsigned counts[] = {1, 255, 256, 257, 600};
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		size_t len, vlen;
		uint8_t *buf = build((unsigned)c % 3, counts[c], &len);
		struct mounted m;
		mount_trace(&m, "t.full", f, buf, len);
		for (unsigned v = 0; v < tm_trace_views(m.t)->n_views; v++) {
			const char *path = tm_trace_view(m.t, v)->path;
			int exists = tm_view_exists(&m.ot, v);
			ck_assert_int_ge(exists, 0);
			if (!exists) /* a processor's calls/cpu/N/ of a trace of one */
				continue;
			char *text = read_view(&m, path, &vlen);
			if (strcmp(path, "dump.txt") == 0 || strncmp(path, "regs/", 5) == 0) {
				size_t lines = 0;
				for (size_t k = 0; k < vlen; k++)
					lines += text[k] == '\n';
				ck_assert_msg(lines == counts[c], "%s: %zu lines", path, lines);
			}
			free(text);
		}
		unmount_trace(&m);
		free(buf);
	}
}
END_TEST

static Suite *full_suite(void)
{
	Suite *s = suite_create("full");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_next_pc);
	tcase_add_test(tc, test_effective_address);
	tcase_add_test(tc, test_units);
	tcase_add_test(tc, test_layouts_and_splits);
	tcase_add_test(tc, test_cut_and_jump);
	tcase_add_test(tc, test_probe);
	tcase_add_test(tc, test_views_whole);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(full_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
