/* calls/ through the core (src/calls/calls_derive.c): an instruction format of this file's own
 * whose records say each instruction's call kind, stack pointer, time and processor, so that
 * hand-built traces of known call structure (nested calls, recursion, a tail call, a longjmp,
 * a call that never returns, micro-ops, two processors) are indexed as the mount indexes them
 * and their calls/ views and stats.json read back; then small Tarmac, QEMU4V (MIPS), CIS501
 * and TT6 traces written by hand, whose formats classify their own instructions. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "tracemount/derive.h"
#include "tracemount/index.h"
#include "tracemount/reader.h"
#include "tracemount/registry.h"
#include "tracemount/util.h"
#include "view_check.h"

/* One instruction: 16 bytes in host order. */
struct ev {
	uint32_t pc, sp, time;
	uint8_t call;	/* enum tm_insn_call */
	uint8_t stream; /* processor */
	uint8_t more;	/* a micro-op of the stream's last instruction */
	uint8_t known;	/* TM_INSN_HAS_SP, TM_INSN_HAS_TIME */
};

struct ev_record {
	struct tm_record head;
	struct ev ev;
};

static int ev_decode(void *state, const struct tm_decode_in *in, void *recs, size_t max,
		     size_t *n_out, size_t *used, struct tm_diag *diag)
{
	struct ev_record *r = recs;
	size_t n = 0, pos = 0;
	(void)state;
	(void)diag;
	for (; n < max && in->len - pos >= sizeof(struct ev); n++, pos += sizeof(struct ev)) {
		memset(&r[n], 0, sizeof(r[n]));
		r[n].head.raw_rel = (uint32_t)pos;
		r[n].head.raw_len = sizeof(struct ev);
		memcpy(&r[n].ev, in->buf + pos, sizeof(struct ev));
	}
	if (n < max && pos < in->len && in->at_eof)
		pos = in->len;
	*n_out = n;
	*used = pos;
	return n < max && pos < in->len ? -EAGAIN : 0;
}

static bool ev_instruction(const struct tm_chunk *c, size_t i, struct tm_insn *out)
{
	const struct ev *e = &((const struct ev_record *)tm_chunk_rec(c, i))->ev;
	*out = (struct tm_insn){.pc = e->pc,
				.sp = e->sp,
				.time = e->time,
				.size = 4,
				.call = e->call,
				.known = e->known,
				.stream = e->stream,
				.more = e->more};
	return true;
}

static const char *const ev_classes[] = {"insn"};

static const struct tm_format ev_format = {
    .name = "events",
    .classes = ev_classes,
    .n_classes = 1,
    .record_size = sizeof(struct ev_record),
    .chunk_records = 4, /* batches and chunks split the calls */
    .raw_record_len = sizeof(struct ev),
    .decode = ev_decode,
    .instruction = ev_instruction,
};

enum { P = TM_INSN_PLAIN, C = TM_INSN_CALL, R = TM_INSN_RETURN, J = TM_INSN_TRANSFER };

struct views {
	struct mounted m;
	char *tree, *profile, *profile_json, *folded, *folded_time, *svg;
	json_object *stats, *calls;
};

static void open_views(struct views *v, const char *name, const struct tm_format *f,
		       const void *data, size_t len)
{
	size_t n;
	mount_trace(&v->m, name, f, data, len);
	v->tree = read_view(&v->m, "calls/tree.txt", &n);
	v->profile = read_view(&v->m, "calls/profile.txt", &n);
	v->profile_json = read_view(&v->m, "calls/profile.json", &n);
	v->folded = read_view(&v->m, "calls/folded.txt", &n);
	v->folded_time = read_view(&v->m, "calls/folded-time.txt", &n);
	v->svg = read_view(&v->m, "calls/flamegraph.svg", &n);
	char *stats = read_view(&v->m, "stats.json", &n);
	v->stats = json_tokener_parse(stats);
	free(stats);
	ck_assert_ptr_nonnull(v->stats);
	ck_assert(json_object_object_get_ex(v->stats, "calls", &v->calls));
}

static void close_views(struct views *v)
{
	free(v->tree);
	free(v->profile);
	free(v->profile_json);
	free(v->folded);
	free(v->folded_time);
	free(v->svg);
	json_object_put(v->stats);
	unmount_trace(&v->m);
}

/* The streams calls/ shows (its product's tm_index_product.streams), once built. */
static uint64_t streams_shown(struct views *v)
{
	unsigned calls = 0;
	while (strcmp(tm_derivers[calls]->name, "calls") != 0)
		calls++;
	ck_assert_int_eq(tm_trace_products(&v->m.ot, TM_PRODUCT_DERIVER(calls)), 0);
	return v->m.ot.index->product[1 + calls].streams;
}

/* Whether the view at path exists (tm_view_exists), or -1 when the table has no such view. */
static int exists(struct views *v, const char *path)
{
	int k = tm_view_table_find(tm_trace_views(v->m.t), path);
	return k < 0 ? -1 : tm_view_exists(&v->m.ot, (unsigned)k);
}

static int64_t count(json_object *obj, const char *key)
{
	json_object *val;
	ck_assert_msg(json_object_object_get_ex(obj, key, &val), "no key %s", key);
	return json_object_get_int64(val);
}

static void expect_text(const char *what, const char *want, const char *got)
{
	expect_same_text(what, want, strlen(want), got, strlen(got));
}

/* main (0x100) calls f, which calls g; main calls g again, then h, which never returns. Times
 * 10 apart: each instruction lasts 10 but the last, which has no time. */
START_TEST(test_nested)
{
	static const uint32_t pcs[] = {0x100, 0x104, 0x200, 0x204, 0x300, 0x304, 0x208,
				       0x108, 0x300, 0x304, 0x10c, 0x400, 0x404};
	static const uint8_t kinds[] = {P, C, P, C, P, R, R, C, P, R, C, P, P};
	struct ev t[ARRAY_SIZE(pcs)];
	for (size_t i = 0; i < ARRAY_SIZE(pcs); i++)
		t[i] = (struct ev){.pc = pcs[i],
				   .time = 10 * (uint32_t)(i + 1),
				   .call = kinds[i],
				   .known = TM_INSN_HAS_TIME};
	struct views v;
	open_views(&v, "nested.events", &ev_format, t, sizeof(t));
	expect_text("tree.txt",
		    "# call tree: FUNCTION  #ENTRY @PC [tTIME] -> #EXIT @PC [tTIME]  [MARKS]\n"
		    "0x100  #1 @0x100 t10 -> #13 @0x404 t130  [root]\n"
		    "  0x200  #3 @0x200 t30 -> #7 @0x208 t70\n"
		    "    0x300  #5 @0x300 t50 -> #6 @0x304 t60\n"
		    "  0x300  #9 @0x300 t90 -> #10 @0x304 t100\n"
		    "  0x400  #12 @0x400 t120 -> #13 @0x404 t130  [no-return]\n",
		    v.tree);
	/* a call instruction counts to its caller, a return to its callee */
	expect_text("folded.txt",
		    "0x100 4\n"
		    "0x100;0x200 3\n"
		    "0x100;0x200;0x300 2\n"
		    "0x100;0x300 2\n"
		    "0x100;0x400 2\n",
		    v.folded);
	expect_text("folded-time.txt",
		    "0x100 40\n"
		    "0x100;0x200 30\n"
		    "0x100;0x200;0x300 20\n"
		    "0x100;0x300 20\n"
		    "0x100;0x400 10\n",
		    v.folded_time);
	/* g: two calls, 4 instructions; h's last instruction has no time */
	ck_assert_ptr_nonnull(strstr(v.profile, "# 13 instructions, 4 functions"));
	ck_assert_ptr_nonnull(strstr(v.profile, "\n             4              4          2"
						"             40             40  0x300\n"));
	ck_assert_ptr_nonnull(strstr(v.profile_json, "\"has_time\""));
	ck_assert_ptr_nonnull(strstr(v.svg, "<svg"));
	ck_assert_ptr_nonnull(strstr(v.svg, "</svg>"));
	ck_assert_int_eq(count(v.calls, "instructions"), 13);
	ck_assert_int_eq(count(v.calls, "calls"), 4);
	ck_assert_int_eq(count(v.calls, "returns"), 3);
	ck_assert_int_eq(count(v.calls, "max_depth"), 2);
	ck_assert_int_eq(count(v.calls, "functions"), 4);
	ck_assert_int_eq(count(v.calls, "never_returned"), 1);
	ck_assert_int_eq(count(v.calls, "resynchronisations"), 0);
	ck_assert_int_eq(count(v.calls, "processor"), 0);
	/* one processor: calls/ is its own, no calls/cpu/ */
	ck_assert_int_eq(exists(&v, "calls/tree.txt"), 1);
	ck_assert_int_eq(exists(&v, "calls/cpu/0/tree.txt"), 0);
	ck_assert_int_eq(exists(&v, "calls/cpu/0/folded.txt"), 0);
	close_views(&v);
}
END_TEST

/* With the stack pointer: r (0x2000) recurses twice, its last conditional call failing (plain);
 * s (0x3000) tail-calls u (0x4000), which main called before, so that its entry is known; a
 * longjmp (0x8000) from b back to setjmp's return address in main unwinds a, b and itself. No
 * time: folded-time.txt is empty. */
START_TEST(test_recursion_tail_longjmp)
{
	static const struct ev t[] = {
	    {0x1000, 0x8000, 0, C, 0, 0, 0}, /* main calls r */
	    {0x2000, 0x7ff0, 0, P, 0, 0, 0},
	    {0x2004, 0x7ff0, 0, C, 0, 0, 0}, /* r calls r */
	    {0x2000, 0x7fe0, 0, P, 0, 0, 0},
	    {0x2004, 0x7fe0, 0, C, 0, 0, 0}, /* and again */
	    {0x2000, 0x7fd0, 0, P, 0, 0, 0},
	    {0x2004, 0x7fd0, 0, P, 0, 0, 0}, /* a call whose condition failed */
	    {0x2008, 0x7fd0, 0, R, 0, 0, 0},
	    {0x2008, 0x7fe0, 0, R, 0, 0, 0},
	    {0x2008, 0x7ff0, 0, R, 0, 0, 0},
	    {0x1004, 0x8000, 0, C, 0, 0, 0}, /* main calls u */
	    {0x4000, 0x7ff0, 0, R, 0, 0, 0},
	    {0x1008, 0x8000, 0, C, 0, 0, 0}, /* main calls s */
	    {0x3000, 0x7ff0, 0, J, 0, 0, 0}, /* s jumps to u: a tail call */
	    {0x4000, 0x7ff0, 0, R, 0, 0, 0}, /* u returns to main */
	    {0x100c, 0x8000, 0, C, 0, 0, 0}, /* main calls setjmp */
	    {0x5000, 0x7ff0, 0, R, 0, 0, 0},
	    {0x1010, 0x8000, 0, C, 0, 0, 0}, /* main calls a */
	    {0x6000, 0x7ff0, 0, C, 0, 0, 0}, /* a calls b */
	    {0x7000, 0x7fe0, 0, C, 0, 0, 0}, /* b calls longjmp */
	    {0x8000, 0x7fd0, 0, R, 0, 0, 0}, /* which returns as setjmp did */
	    {0x1010, 0x8000, 0, P, 0, 0, 0},
	    {0x1014, 0x8000, 0, P, 0, 0, 0},
	};
	struct ev u[ARRAY_SIZE(t)];
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		u[i] = t[i];
		u[i].known = TM_INSN_HAS_SP;
	}
	struct views v;
	open_views(&v, "flow.events", &ev_format, u, sizeof(u));
	expect_text("tree.txt",
		    "# call tree: FUNCTION  #ENTRY @PC [tTIME] -> #EXIT @PC [tTIME]  [MARKS]\n"
		    "0x1000  #1 @0x1000 -> #23 @0x1014  [root]\n"
		    "  0x2000  #2 @0x2000 -> #10 @0x2008\n"
		    "    0x2000  #4 @0x2000 -> #9 @0x2008\n"
		    "      0x2000  #6 @0x2000 -> #8 @0x2008\n"
		    "  0x4000  #12 @0x4000 -> #12 @0x4000\n"
		    "  0x3000  #14 @0x3000 -> #14 @0x3000  [tail-called-out]\n"
		    "  0x4000  #15 @0x4000 -> #15 @0x4000  [tail-call]\n"
		    "  0x5000  #17 @0x5000 -> #17 @0x5000\n"
		    "  0x6000  #19 @0x6000 -> #21 @0x8000  [unwound]\n"
		    "    0x7000  #20 @0x7000 -> #21 @0x8000  [unwound]\n"
		    "      0x8000  #21 @0x8000 -> #21 @0x8000  [unwound]\n",
		    v.tree);
	/* a recursive function's inclusive count is its outermost call's */
	ck_assert_ptr_nonnull(
	    strstr(v.profile, "             9              9          3  0x2000\n"));
	ck_assert_str_eq(v.folded_time, "");
	ck_assert_int_eq(count(v.calls, "calls"), 9);
	ck_assert_int_eq(count(v.calls, "tail_calls"), 1);
	ck_assert_int_eq(count(v.calls, "max_depth"), 3);
	ck_assert_int_eq(count(v.calls, "resynchronisations"), 1);
	ck_assert_int_eq(count(v.calls, "frames_unwound"), 3);
	ck_assert_int_eq(count(v.calls, "never_returned"), 0);
	close_views(&v);
}
END_TEST

/* A call whose kind comes on a micro-op after its first (as CIS501's branch micro-op brings its
 * outcome); and two processors: calls/ shows processor 0, calls/cpu/0/ and cpu/1/ each, and
 * stats.json counts both; a processor past TM_MAX_STREAM_VIEWS is counted, without views. */
START_TEST(test_micro_ops_and_processors)
{
	static const struct ev t[] = {
	    {0x100, 0, 0, P, 0, 0, 0}, {0x104, 0, 0, P, 0, 0, 0}, /* a call in two parts */
	    {0x900, 0, 0, P, 1, 0, 0},				  /* processor 1 between them */
	    {0x104, 0, 0, C, 0, 1, 0}, {0x200, 0, 0, R, 0, 0, 0}, {0x900, 0, 0, C, 1, 0, 0},
	    {0xa00, 0, 0, P, 1, 0, 0}, {0x108, 0, 0, P, 0, 0, 0}, {0xa04, 0, 0, P, 1, 0, 0},
	};
	struct views v;
	open_views(&v, "two.events", &ev_format, t, sizeof(t));
	expect_text("folded.txt", "0x100 3\n0x100;0x200 1\n", v.folded);
	ck_assert_int_eq(count(v.calls, "instructions"), 4);
	ck_assert_int_eq(count(v.calls, "calls"), 1);
	ck_assert_int_eq(count(v.calls, "returns"), 1);
	json_object *cpus, *one;
	ck_assert(json_object_object_get_ex(v.calls, "processors", &cpus));
	ck_assert_int_eq(json_object_object_length(cpus), 2);
	ck_assert(json_object_object_get_ex(cpus, "1", &one));
	ck_assert_int_eq(count(one, "instructions"), 4);
	ck_assert_int_eq(count(one, "calls"), 1);
	ck_assert_int_eq(count(one, "never_returned"), 1);
	/* each processor's own views, in calls/cpu/N/; none for a processor that did not run */
	size_t n;
	char *text = read_view(&v.m, "calls/cpu/0/folded.txt", &n);
	expect_text("cpu/0/folded.txt", v.folded, text);
	free(text);
	text = read_view(&v.m, "calls/cpu/0/tree.txt", &n);
	expect_text("cpu/0/tree.txt", v.tree, text);
	free(text);
	text = read_view(&v.m, "calls/cpu/1/folded.txt", &n);
	expect_text("cpu/1/folded.txt", "0x900 2\n0x900;0xa00 2\n", text);
	free(text);
	text = read_view(&v.m, "calls/cpu/1/tree.txt", &n);
	expect_text("cpu/1/tree.txt",
		    "# call tree: FUNCTION  #ENTRY @PC [tTIME] -> #EXIT @PC [tTIME]  [MARKS]\n"
		    "0x900  #1 @0x900 -> #4 @0xa04  [root]\n"
		    "  0xa00  #3 @0xa00 -> #4 @0xa04  [no-return]\n",
		    text);
	free(text);
	text = read_view(&v.m, "calls/cpu/1/profile.json", &n);
	ck_assert_ptr_nonnull(strstr(text, "\"instructions\":4"));
	free(text);
	text = read_view(&v.m, "calls/cpu/1/folded-time.txt", &n); /* no time: empty */
	ck_assert_str_eq(text, "");
	free(text);
	/* an empty folded-time.txt is not listed */
	ck_assert_int_eq(exists(&v, "calls/cpu/1/folded-time.txt"), 0);
	ck_assert_int_eq(exists(&v, "calls/cpu/1/flamegraph.svg"), 1);
	ck_assert_int_eq(exists(&v, "calls/cpu/2/tree.txt"), 0);
	ck_assert_int_eq(exists(&v, "calls/cpu/15/tree.txt"), 0);
	ck_assert_int_eq(exists(&v, "calls/cpu/16/tree.txt"), -1); /* past the bound */
	struct tm_reader r;
	int k = tm_view_table_find(tm_trace_views(v.m.t), "calls/cpu/2/tree.txt");
	ck_assert_int_eq(tm_reader_open(&r, &v.m.ot, (unsigned)k), -ENOENT);
	ck_assert_uint_eq(streams_shown(&v), 3);
	char *errors = read_view(&v.m, "errors.txt", &n);
	ck_assert_ptr_nonnull(
	    strstr(errors, "calls/ shows processor 0, calls/cpu/N/ each of the 2"));
	free(errors);
	close_views(&v);

	/* processors 3 and 20 ran: 20 is past the processors with views, counted only */
	struct ev far[ARRAY_SIZE(t)];
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		far[i] = t[i];
		far[i].stream = t[i].stream ? 20 : 3;
	}
	open_views(&v, "far.events", &ev_format, far, sizeof(far));
	expect_text("folded.txt", "0x100 3\n0x100;0x200 1\n", v.folded);
	ck_assert_int_eq(count(v.calls, "processor"), 3);
	ck_assert(json_object_object_get_ex(v.calls, "processors", &cpus));
	ck_assert_int_eq(json_object_object_length(cpus), 2);
	ck_assert_int_eq(exists(&v, "calls/cpu/3/tree.txt"), 1);
	ck_assert_int_eq(exists(&v, "calls/cpu/0/tree.txt"), 0);
	text = read_view(&v.m, "calls/cpu/3/folded.txt", &n);
	expect_text("cpu/3/folded.txt", v.folded, text);
	free(text);
	ck_assert_uint_eq(streams_shown(&v), 1u << 3);
	close_views(&v);

	/* no instruction at all: empty views but their headers, and zeros */
	open_views(&v, "empty.events", &ev_format, t, 0);
	ck_assert_str_eq(v.folded, "");
	ck_assert_int_eq(count(v.calls, "instructions"), 0);
	ck_assert_int_eq(count(v.calls, "calls"), 0);
	ck_assert_int_eq(exists(&v, "calls/cpu/0/tree.txt"), 0);
	close_views(&v);
}
END_TEST

/* 5000 calls that never return, each to a function of its own: the tracker stops pushing at
 * 4096 deep (4097 functions with the root; the calls beyond count in the deepest), and folded.txt,
 * whose lines would name up to 4096 functions each (about 92 MB), is left empty and said so; the
 * tree (17 MB) and the other views stay. */
START_TEST(test_too_deep)
{
	enum { N = 5000 };
	struct ev *t = malloc(N * sizeof(*t));
	ck_assert_ptr_nonnull(t);
	for (uint32_t i = 0; i < N; i++)
		t[i] = (struct ev){.pc = 0x10000000 + 0x100 * i, .call = C};
	struct views v;
	open_views(&v, "deep.events", &ev_format, t, N * sizeof(*t));
	free(t);
	ck_assert_str_eq(v.folded, "");
	ck_assert_int_eq(count(v.calls, "max_depth"), 4096);
	ck_assert_int_eq(count(v.calls, "depth_overflows"), N - 1 - 4096);
	json_object *omitted;
	ck_assert(json_object_object_get_ex(v.calls, "omitted_views", &omitted));
	ck_assert_str_eq(json_object_to_json_string(omitted), "[ \"calls\\/folded.txt\" ]");
	size_t n;
	char *errors = read_view(&v.m, "errors.txt", &n);
	ck_assert_ptr_nonnull(strstr(errors, "calls/folded.txt is empty: it would take about"));
	free(errors);
	ck_assert_ptr_nonnull(strstr(v.tree, "[no-return]"));
	ck_assert_ptr_nonnull(strstr(v.profile, "# 5000 instructions, 4097 functions"));
	ck_assert_ptr_nonnull(strstr(v.svg, "</svg>"));
	close_views(&v);
}
END_TEST

/* Fast Models Tarmac: BL and RET by the ARM classifier, a failed BL (IS) that is no call, times
 * from the lines. */
START_TEST(test_tarmac)
{
	static const char trace[] = "10 clk IT (1) 00001000 94000400 O EL1h_s : BL 0x2000\n"
				    "20 clk IT (2) 00002000 d10043ff O EL1h_s : SUB sp,sp,#0x10\n"
				    "20 clk R SP_EL1 0000000000007ff0\n"
				    "30 clk IT (3) 00002004 94000400 O EL1h_s : BL 0x3000\n"
				    "40 clk IT (4) 00003000 d65f03c0 O EL1h_s : RET\n"
				    "50 clk IS (5) 00002008 54000040 O EL1h_s : B.EQ 0x2010\n"
				    "60 clk IT (6) 0000200c d65f03c0 O EL1h_s : RET\n"
				    "70 clk IT (7) 00001004 d503201f O EL1h_s : NOP\n";
	struct views v;
	open_views(&v, "small.tarmac", tm_format_find("tarmac"), trace, sizeof(trace) - 1);
	expect_text("tree.txt",
		    "# call tree: FUNCTION  #ENTRY @PC [tTIME] -> #EXIT @PC [tTIME]  [MARKS]\n"
		    "0x1000  #1 @0x1000 t10 -> #7 @0x1004 t70  [root]\n"
		    "  0x2000  #2 @0x2000 t20 -> #6 @0x200c t60\n"
		    "    0x3000  #4 @0x3000 t40 -> #4 @0x3000 t40\n",
		    v.tree);
	expect_text("folded.txt", "0x1000 2\n0x1000;0x2000 4\n0x1000;0x2000;0x3000 1\n", v.folded);
	expect_text("folded-time.txt", "0x1000 10\n0x1000;0x2000 40\n0x1000;0x2000;0x3000 10\n",
		    v.folded_time);
	ck_assert_int_eq(count(v.calls, "returns"), 2);
	ck_assert_int_eq(count(v.calls, "discontinuities"), 0);
	close_views(&v);
}
END_TEST

/* QEMU4V's MIPS code on processor 0 (doc/formats.md): each jump and branch's kind goes to its
 * delay slot, so that calls return past the slot; a likely branch not taken skips its slot
 * (no discontinuity); a longjmp by jr ra to no pending return address, with main's $sp back on
 * a register line, unwinds both frames on the stack pointer; syscall and eret have no slot.
 * Processor 1's ARM code, between a jal and its delay slot, stays ARM: its BEQ and BL words
 * are no MIPS beq or jal, and its BL calls. */
START_TEST(test_qemu4v_mips)
{
	static const char trace[] = "-1 clk R r29 00008000\n"
				    "1 clk 0 IT (1) 00001000 0c000800 A svc : jal 0x2000\n"
				    "2 clk 1 IT (1) 00009000 0a000003 A svc : BEQ 0x9014\n"
				    "3 clk 0 IT (2) 00001004 00000000 A svc : nop\n"
				    "4 clk 1 IT (2) 00009014 eb000010 A svc : BL 0x905c\n"
				    "5 clk 0 IT (3) 00002000 54850003 A svc : bnel a0,a1,0x2010\n"
				    "6 clk 1 IT (3) 0000905c e1a00000 A svc : NOP\n"
				    "7 clk 0 IT (4) 00002008 0c000c00 A svc : jal 0x3000\n"
				    "8 clk 0 IT (5) 0000200c 27bdffe0 A svc : addiu sp,sp,-32\n"
				    "8 clk R r29 00007fe0\n"
				    "9 clk 0 IT (6) 00003000 27bdffe0 A svc : addiu sp,sp,-32\n"
				    "9 clk R r29 00007fc0\n"
				    "10 clk 0 IT (7) 00003004 03e00008 A svc : jr ra\n"
				    "11 clk 0 IT (8) 00003008 8fbd0000 A svc : lw sp,0(sp)\n"
				    "11 clk R r29 00008000\n"
				    "12 clk 0 IT (9) 00001010 00000000 A svc : nop\n"
				    "13 clk 0 IT (10) 00001014 0000000c A svc : syscall\n"
				    "14 clk 0 IT (11) 00000180 00000000 A svc : nop\n"
				    "15 clk 0 IT (12) 00000184 42000018 A svc : eret\n"
				    "16 clk 0 IT (13) 00001018 00000000 A svc : nop\n";
	struct views v;
	open_views(&v, "small.qemu4v", tm_format_find("qemu4v"), trace, sizeof(trace) - 1);
	expect_text("tree.txt",
		    "# call tree: FUNCTION  #ENTRY @PC [tTIME] -> #EXIT @PC [tTIME]  [MARKS]\n"
		    "0x1000  #1 @0x1000 t1 -> #13 @0x1018 t16  [root]\n"
		    "  0x2000  #3 @0x2000 t5 -> #8 @0x3008 t11  [unwound]\n"
		    "    0x3000  #6 @0x3000 t9 -> #8 @0x3008 t11  [unwound]\n",
		    v.tree);
	expect_text("folded.txt", "0x1000 7\n0x1000;0x2000 3\n0x1000;0x2000;0x3000 3\n", v.folded);
	ck_assert_int_eq(count(v.calls, "calls"), 2);
	ck_assert_int_eq(count(v.calls, "resynchronisations"), 1);
	ck_assert_int_eq(count(v.calls, "frames_unwound"), 2);
	ck_assert_int_eq(count(v.calls, "discontinuities"), 0);
	json_object *procs, *arm;
	ck_assert(json_object_object_get_ex(v.calls, "processors", &procs));
	ck_assert(json_object_object_get_ex(procs, "1", &arm));
	ck_assert_int_eq(count(arm, "instructions"), 3);
	ck_assert_int_eq(count(arm, "calls"), 1);
	ck_assert_int_eq(count(arm, "discontinuities"), 0);
	close_views(&v);
}
END_TEST

/* CIS501: the CALL and RET macro-ops, each of several micro-ops, one instruction each. */
START_TEST(test_cis501)
{
	/* pc, fall-through, target, macro-op, micro-op (the other fields as gen_cis501 writes) */
	static const struct {
		unsigned pc, fallthrough, target;
		const char *macro, *micro, *branch;
	} l[] = {
	    {0x1000, 0x1005, 0, "CALL", "SAVE_PC", "-"},
	    {0x1000, 0x1005, 0, "CALL", "STORE", "-"},
	    {0x1000, 0x1005, 0x2000, "CALL", "BRANCH", "T"},
	    {0x2000, 0x2003, 0, "ADD", "ADD", "-"},
	    {0x2003, 0x2004, 0, "RET", "LOAD", "-"},
	    {0x2003, 0x2004, 0x1005, "RET", "BRANCH", "T"},
	    {0x1005, 0x1008, 0, "ADD", "ADD", "-"},
	};
	char trace[2048];
	size_t len = 0;
	for (size_t i = 0; i < ARRAY_SIZE(l); i++) {
		bool first = i == 0 || l[i - 1].pc != l[i].pc;
		len += (size_t)snprintf(trace + len, sizeof(trace) - len,
					"%d %x -1 -1 -1 - %s - 0 0 %x %x %s %s\n", first ? 1 : 2,
					l[i].pc, l[i].branch, l[i].fallthrough, l[i].target,
					l[i].macro, l[i].micro);
	}
	struct views v;
	open_views(&v, "small.trace", tm_format_find("cis501"), trace, len);
	expect_text("folded.txt", "0x1000 2\n0x1000;0x2000 2\n", v.folded);
	ck_assert_int_eq(count(v.calls, "instructions"), 4);
	ck_assert_int_eq(count(v.calls, "calls"), 1);
	ck_assert_int_eq(count(v.calls, "returns"), 1);
	close_views(&v);
}
END_TEST

static void put_be32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

/* TT6: the initial PC, then each instruction's word, a branch's followed by the next PC: bl,
 * blr, and a conditional bl not taken (no call). */
START_TEST(test_tt6)
{
	static const uint32_t words[] = {
	    0x1000,		/* INITIAL_PC */
	    0x38600001,		/* 0x1000 li r3,1 */
	    0x48000ffd, 0x2000, /* 0x1004 bl 0x2000 */
	    0x38600002,		/* 0x2000 li r3,2 */
	    0x4182fff9, 0x2008, /* 0x2004 beql- 0x1ffc, not taken */
	    0x4e800020, 0x1008, /* 0x2008 blr */
	    0x38600003,		/* 0x1008 li r3,3 */
	};
	uint8_t trace[sizeof(words)];
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		put_be32(trace + 4 * i, words[i]);
	struct views v;
	open_views(&v, "small.tt6", tm_format_find("tt6"), trace, sizeof(trace));
	expect_text("tree.txt",
		    "# call tree: FUNCTION  #ENTRY @PC [tTIME] -> #EXIT @PC [tTIME]  [MARKS]\n"
		    "0x1000  #1 @0x1000 -> #6 @0x1008  [root]\n"
		    "  0x2000  #3 @0x2000 -> #5 @0x2008\n",
		    v.tree);
	expect_text("folded.txt", "0x1000 3\n0x1000;0x2000 3\n", v.folded);
	ck_assert_int_eq(count(v.calls, "discontinuities"), 0);
	close_views(&v);
}
END_TEST

static Suite *calls_derive_suite(void)
{
	Suite *s = suite_create("calls_derive");
	TCase *tc = tcase_create("calls_derive");
	tcase_add_test(tc, test_nested);
	tcase_add_test(tc, test_recursion_tail_longjmp);
	tcase_add_test(tc, test_micro_ops_and_processors);
	tcase_add_test(tc, test_too_deep);
	tcase_add_test(tc, test_tarmac);
	tcase_add_test(tc, test_qemu4v_mips);
	tcase_add_test(tc, test_cis501);
	tcase_add_test(tc, test_tt6);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(calls_derive_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
