/* The call tracker (src/calls/call_stack.c): calls and returns, recursion, tail calls,
 * returns past frames, stack pointer unwinds, calls that never return, a return out of the
 * outermost function, calls not taken, times, every bound on memory, and the same results
 * whatever the split of the events into batches. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "calls_programs.h"

static struct tm_calls_counts counts_of(const struct tm_calls *t)
{
	struct tm_calls_counts c;
	tm_calls_get_counts(t, &c);
	return c;
}

/* Checks record i: depth, entry and exit instruction numbers, flags, function's address. */
static void check_record(const struct tm_calls *t, size_t i, unsigned depth, uint64_t entry,
			 uint64_t exit, unsigned flags, uint64_t function_addr)
{
	size_t n, n_fn;
	const struct tm_call_record *r = tm_calls_records(t, &n);
	const struct tm_calls_function *fn = tm_calls_functions(t, &n_fn);
	ck_assert_uint_lt(i, n);
	ck_assert_msg(r[i].depth == depth, "record %zu: depth %u, expected %u", i, r[i].depth,
		      depth);
	ck_assert_msg(r[i].entry_insn == entry && r[i].exit_insn == exit,
		      "record %zu: #%llu -> #%llu, expected #%llu -> #%llu", i,
		      (unsigned long long)r[i].entry_insn, (unsigned long long)r[i].exit_insn,
		      (unsigned long long)entry, (unsigned long long)exit);
	ck_assert_msg(r[i].flags == flags, "record %zu: flags %#x, expected %#x", i, r[i].flags,
		      flags);
	ck_assert_uint_lt(r[i].function, n_fn);
	ck_assert_uint_eq(fn[r[i].function].addr, function_addr);
}

START_TEST(test_nested)
{
	struct program p = {0};
	nested(&p);
	struct tm_calls *t = track(&p, NULL, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.instructions, 8);
	ck_assert_uint_eq(c.calls, 2);
	ck_assert_uint_eq(c.returns, 2);
	ck_assert_uint_eq(c.max_depth, 2);
	ck_assert_uint_eq(c.resyncs + c.unmatched_returns + c.never_returned + c.discontinuities,
			  0);
	ck_assert(!c.has_time);
	size_t n;
	tm_calls_records(t, &n);
	ck_assert_uint_eq(n, 3);
	check_record(t, 0, 0, 1, 8, TM_CALL_ROOT, 0x1000);
	check_record(t, 1, 1, 3, 7, 0, 0x2000);
	check_record(t, 2, 2, 5, 6, 0, 0x3000);
	const struct tm_call_record *r = tm_calls_records(t, &n);
	ck_assert_uint_eq(r[1].entry_pc, 0x2000);
	ck_assert_uint_eq(r[1].exit_pc, 0x2008);
	ck_assert_uint_eq(r[1].entry_time, TM_CALL_UNKNOWN);
	/* stacks: the empty one, main, main;f, main;f;g */
	const struct tm_calls_node *node = tm_calls_nodes(t, &n);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(node[0].total_insns, 8);
	ck_assert_uint_eq(node[1].self_insns, 3);
	ck_assert_uint_eq(node[2].self_insns, 3);
	ck_assert_uint_eq(node[2].total_insns, 5);
	ck_assert_uint_eq(node[3].self_insns, 2);
	ck_assert_uint_eq(node[3].parent, 2);
	ck_assert_uint_eq(node[3].calls, 1);
	tm_calls_free(t);
}
END_TEST

START_TEST(test_recursion)
{
	struct program p = {0};
	recursion(&p);
	struct tm_calls *t = track(&p, NULL, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.calls, 3);
	ck_assert_uint_eq(c.returns, 3);
	ck_assert_uint_eq(c.max_depth, 3);
	ck_assert_uint_eq(c.resyncs + c.tail_calls + c.discontinuities, 0);
	check_record(t, 0, 0, 1, 12, TM_CALL_ROOT, 0x1000);
	check_record(t, 1, 1, 2, 11, 0, 0x2000);
	check_record(t, 2, 2, 4, 9, 0, 0x2000);
	check_record(t, 3, 3, 6, 7, 0, 0x2000);
	size_t n_fn;
	tm_calls_functions(t, &n_fn);
	ck_assert_uint_eq(n_fn, 2);
	tm_calls_free(t);
}
END_TEST

START_TEST(test_tail_call)
{
	struct program p = {0};
	tail_call(&p);
	struct tm_calls *t = track(&p, NULL, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.calls, 2);
	ck_assert_uint_eq(c.tail_calls, 1);
	ck_assert_uint_eq(c.returns, 2);
	ck_assert_uint_eq(c.max_depth, 1);
	ck_assert_uint_eq(c.resyncs + c.unmatched_returns + c.never_returned, 0);
	check_record(t, 0, 0, 1, 7, TM_CALL_ROOT, 0x1000);
	check_record(t, 1, 1, 2, 2, 0, 0x3000);
	check_record(t, 2, 1, 4, 5, TM_CALL_TAIL_LEFT, 0x2000);
	check_record(t, 3, 1, 6, 6, TM_CALL_TAIL, 0x3000);
	tm_calls_free(t);
}
END_TEST

/* A jump to a function's own entry is a loop, and to an address never called no tail call. */
START_TEST(test_jumps_that_are_no_tail_calls)
{
	struct program p = {0};
	at(&p, 0x1000, C); /* f */
	at(&p, 0x2000, P);
	at(&p, 0x2004, J); /* back to f's entry */
	at(&p, 0x2000, P);
	at(&p, 0x2004, J); /* to 0x4000, never called */
	at(&p, 0x4000, R);
	at(&p, 0x1004, P);
	struct tm_calls *t = track(&p, NULL, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.tail_calls, 0);
	ck_assert_uint_eq(c.returns, 1);
	check_record(t, 1, 1, 2, 6, 0, 0x2000);
	tm_calls_free(t);
}
END_TEST

START_TEST(test_longjmp_with_sp)
{
	struct program p = {0};
	longjmp_like(&p);
	struct tm_calls_config cfg = {.check_sp = true};
	struct tm_calls *t = track(&p, &cfg, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.calls, 2);
	ck_assert_uint_eq(c.returns, 0);
	ck_assert_uint_eq(c.unmatched_returns, 1);
	ck_assert_uint_eq(c.resyncs, 1);
	ck_assert_uint_eq(c.frames_unwound, 2);
	ck_assert_uint_eq(c.never_returned, 0);
	check_record(t, 0, 0, 1, 7, TM_CALL_ROOT, 0x1000);
	check_record(t, 1, 1, 2, 5, TM_CALL_UNWOUND, 0x2000);
	check_record(t, 2, 2, 4, 5, TM_CALL_UNWOUND, 0x3000);
	/* main's instructions after the jump are main's again */
	size_t n;
	const struct tm_calls_node *node = tm_calls_nodes(t, &n);
	ck_assert_uint_eq(node[1].self_insns, 3);
	tm_calls_free(t);
}
END_TEST

/* Without the stack pointer the tree keeps the frames, closed at the end. */
START_TEST(test_longjmp_without_sp)
{
	struct program p = {0};
	longjmp_like(&p);
	struct tm_calls *t = track(&p, NULL, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.unmatched_returns, 1);
	ck_assert_uint_eq(c.resyncs, 0);
	ck_assert_uint_eq(c.never_returned, 2);
	check_record(t, 1, 1, 2, 7, TM_CALL_NO_RETURN, 0x2000);
	check_record(t, 2, 2, 4, 7, TM_CALL_NO_RETURN, 0x3000);
	tm_calls_free(t);
}
END_TEST

/* A jump inside a leaf function that keeps its caller's stack pointer unwinds nothing, and a
 * stack pointer below the frames' changes nothing either. */
START_TEST(test_sp_inside_leaf)
{
	struct program p = {0};
	at_sp(&p, 0x1000, C, 0x1000);
	at_sp(&p, 0x2000, J, 0x1000); /* taken, inside f */
	at_sp(&p, 0x2010, R, 0x1000);
	at_sp(&p, 0x1004, C, 0x1000);
	at_sp(&p, 0x2000, J, 0xf00);
	at_sp(&p, 0x2010, R, 0xf00);
	at_sp(&p, 0x1008, P, 0x1000);
	struct tm_calls_config cfg = {.check_sp = true};
	struct tm_calls *t = track(&p, &cfg, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.returns, 2);
	ck_assert_uint_eq(c.resyncs, 0);
	tm_calls_free(t);
}
END_TEST

/* x86: a call pushes its return address, and a callee that pops its arguments ("ret 8")
 * comes back with a higher stack pointer than its call had: a return, no resynchronisation. */
START_TEST(test_callee_pops_arguments)
{
	struct program p = {0};
	at_sp(&p, 0x1000, C, 0x1000); /* f */
	at_sp(&p, 0x2000, P, 0xff8);
	at_sp(&p, 0x2004, C, 0xff0); /* g, after pushing an argument */
	at_sp(&p, 0x3000, R, 0xfe8); /* ret 8 */
	at_sp(&p, 0x2009, R, 0xff8);
	at_sp(&p, 0x1005, P, 0x1000);
	p.ev[0].size = p.ev[2].size = 5;
	p.ev[4].size = 1;
	struct tm_calls_config cfg = {.check_sp = true};
	struct tm_calls *t = track(&p, &cfg, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.returns, 2);
	ck_assert_uint_eq(c.resyncs + c.unmatched_returns + c.discontinuities, 0);
	tm_calls_free(t);
}
END_TEST

/* g returns straight to main's return address: f is unwound, one resynchronisation. */
START_TEST(test_return_to_outer_frame)
{
	struct program p = {0};
	at(&p, 0x1000, C);
	at(&p, 0x2000, C);
	at(&p, 0x3000, R); /* to 0x1004, main's */
	at(&p, 0x1004, P);
	struct tm_calls *t = track(&p, NULL, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.returns, 1);
	ck_assert_uint_eq(c.resyncs, 1);
	ck_assert_uint_eq(c.frames_unwound, 1);
	check_record(t, 1, 1, 2, 3, 0, 0x2000);
	check_record(t, 2, 2, 3, 3, TM_CALL_UNWOUND, 0x3000);
	tm_calls_free(t);
}
END_TEST

START_TEST(test_never_returns)
{
	struct program p = {0};
	at(&p, 0x1000, C);
	at(&p, 0x2000, C);
	at(&p, 0x3000, J); /* a loop forever */
	at(&p, 0x3000, J);
	struct tm_calls *t = track(&p, NULL, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.never_returned, 2);
	check_record(t, 0, 0, 1, 4, TM_CALL_ROOT, 0x1000);
	check_record(t, 1, 1, 2, 4, TM_CALL_NO_RETURN, 0x2000);
	check_record(t, 2, 2, 3, 4, TM_CALL_NO_RETURN, 0x3000);
	tm_calls_free(t);
}
END_TEST

/* The trace starts inside a function that returns to code outside: a new root. */
START_TEST(test_return_past_root)
{
	struct program p = {0};
	at(&p, 0x2000, P);
	at(&p, 0x2004, R);
	at(&p, 0x1008, P);
	at(&p, 0x100c, P);
	struct tm_calls *t = track(&p, NULL, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.returns_past_root, 1);
	ck_assert_uint_eq(c.unmatched_returns, 0);
	check_record(t, 0, 0, 1, 2, TM_CALL_ROOT, 0x2000);
	check_record(t, 1, 0, 3, 4, TM_CALL_ROOT, 0x1008);
	tm_calls_free(t);
}
END_TEST

/* A call that falls through (condition failed, semihosting, x86's call to the next
 * instruction) pushes nothing; a return not taken pops nothing; a known target that is not
 * where control went is a discontinuity. */
START_TEST(test_not_taken)
{
	struct program p = {0};
	at(&p, 0x1000, C);
	at(&p, 0x1004, C);
	at(&p, 0x2000, R);
	at(&p, 0x2004, R);
	at(&p, 0x1008, C);
	p.ev[p.n - 1].target = 0x5000;
	at(&p, 0x2000, P);
	at(&p, 0x2008, P); /* a gap */
	struct tm_calls *t = track(&p, NULL, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.calls, 2);
	ck_assert_uint_eq(c.returns, 1);
	ck_assert_uint_eq(c.discontinuities, 2);
	tm_calls_free(t);
}
END_TEST

/* A call's explicit return address (ARM's "mov lr, pc" before a load of pc: 8 bytes on). */
START_TEST(test_return_address_given)
{
	struct program p = {0};
	at(&p, 0x1000, C);
	p.ev[0].return_pc = 0x1008;
	at(&p, 0x2000, R);
	at(&p, 0x1008, P);
	struct tm_calls *t = track(&p, NULL, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.calls, 1);
	ck_assert_uint_eq(c.returns, 1);
	ck_assert_uint_eq(c.discontinuities, 0);
	check_record(t, 1, 1, 2, 2, 0, 0x2000);
	tm_calls_free(t);
}
END_TEST

START_TEST(test_times)
{
	struct program p = {0};
	nested(&p);
	add_times(&p);
	struct tm_calls *t = track(&p, NULL, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert(c.has_time);
	size_t n;
	const struct tm_calls_node *node = tm_calls_nodes(t, &n);
	/* each instruction lasts 10 until the last, which has no successor */
	ck_assert_uint_eq(node[1].self_time, 20);
	ck_assert_uint_eq(node[2].self_time, 30);
	ck_assert_uint_eq(node[3].self_time, 20);
	ck_assert_uint_eq(node[0].total_time, 70);
	const struct tm_call_record *r = tm_calls_records(t, &n);
	ck_assert_uint_eq(r[2].entry_time, 50);
	ck_assert_uint_eq(r[2].exit_time, 60);
	tm_calls_free(t);
}
END_TEST

START_TEST(test_depth_bound)
{
	struct program p = {0};
	recursion(&p);
	struct tm_calls_config cfg = {.limits = {.max_depth = 1}};
	struct tm_calls *t = track(&p, &cfg, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.depth_overflows, 2);
	ck_assert_uint_eq(c.calls, 1);
	ck_assert_uint_eq(c.returns, 1); /* the two others absorbed */
	ck_assert_uint_eq(c.max_depth, 1);
	ck_assert_uint_eq(c.never_returned + c.unmatched_returns + c.returns_past_root, 0);
	check_record(t, 1, 1, 2, 11, 0, 0x2000);
	tm_calls_free(t);
}
END_TEST

START_TEST(test_tree_bound)
{
	struct program p = {0};
	nested(&p);
	struct tm_calls_config cfg = {.limits = {.max_tree_calls = 2}};
	struct tm_calls *t = track(&p, &cfg, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.calls_unlisted, 1);
	ck_assert_uint_eq(c.calls, 2);
	ck_assert_uint_eq(c.returns, 2);
	size_t n;
	tm_calls_records(t, &n);
	ck_assert_uint_eq(n, 2);
	tm_calls_free(t);
}
END_TEST

START_TEST(test_function_bound)
{
	struct program p = {0};
	nested(&p);
	at(&p, 0x100c, C); /* h, a fourth function: [other] as well */
	at(&p, 0x4000, R);
	at(&p, 0x1010, P);
	struct tm_calls_config cfg = {.limits = {.max_functions = 2}};
	struct tm_calls *t = track(&p, &cfg, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.functions_merged, 2);
	size_t n;
	tm_calls_functions(t, &n);
	ck_assert_uint_eq(n, 3);
	char name[32];
	ck_assert_str_eq(tm_calls_function_name(t, 2, name, sizeof(name)), "[other]");
	ck_assert_str_eq(tm_calls_function_name(t, 1, name, sizeof(name)), "0x2000");
	tm_calls_free(t);
}
END_TEST

START_TEST(test_stack_bound)
{
	struct program p = {0};
	nested(&p);
	/* the empty stack, main's and main;f: g's calls stay in main;f */
	struct tm_calls_config cfg = {.limits = {.max_stacks = 3}};
	struct tm_calls *t = track(&p, &cfg, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.stacks_truncated, 1);
	ck_assert_uint_eq(c.returns, 2);
	size_t n;
	const struct tm_calls_node *node = tm_calls_nodes(t, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(node[2].self_insns, 5);
	ck_assert_uint_eq(node[2].calls, 1);
	tm_calls_free(t);
}
END_TEST

/* Every split of a program into batches gives the same records and stacks. */
START_TEST(test_batches)
{
	void (*programs[])(struct program *) = {nested, recursion, tail_call, longjmp_like};
	struct tm_calls_config cfg = {.check_sp = true};
	for (size_t k = 0; k < sizeof(programs) / sizeof(programs[0]); k++) {
		struct program p = {0};
		programs[k](&p);
		add_times(&p);
		struct tm_calls *whole = track(&p, &cfg, 0);
		size_t n_whole, nodes_whole;
		const struct tm_call_record *rw = tm_calls_records(whole, &n_whole);
		const struct tm_calls_node *nw = tm_calls_nodes(whole, &nodes_whole);
		for (size_t batch = 1; batch < p.n; batch++) {
			struct tm_calls *t = track(&p, &cfg, batch);
			size_t n, nodes;
			const struct tm_call_record *r = tm_calls_records(t, &n);
			const struct tm_calls_node *nt = tm_calls_nodes(t, &nodes);
			ck_assert_uint_eq(n, n_whole);
			ck_assert_uint_eq(nodes, nodes_whole);
			ck_assert_msg(memcmp(r, rw, n * sizeof(*r)) == 0, "program %zu, batch %zu",
				      k, batch);
			ck_assert(memcmp(nt, nw, nodes * sizeof(*nt)) == 0);
			tm_calls_free(t);
		}
		tm_calls_free(whole);
	}
}
END_TEST

/* Recursion 10,000 deep, past the default bound of 4,096 calls pending, and back: the calls
 * beyond are absorbed by their returns, and the frames below return as they should. */
START_TEST(test_deep_recursion)
{
	enum { DEPTH = 10000 };
	struct tm_calls *t;
	ck_assert_int_eq(tm_calls_new(NULL, &t), 0);
	uint64_t n = 0;
	struct tm_call_event e = {.pc = 0x1000,
				  .insn_no = ++n,
				  .target = TM_CALL_UNKNOWN,
				  .return_pc = TM_CALL_UNKNOWN,
				  .sp = TM_CALL_UNKNOWN,
				  .time = TM_CALL_UNKNOWN,
				  .size = 4,
				  .kind = C};
	tm_calls_add(t, &e, 1);
	for (int d = 0; d < DEPTH; d++) {   /* f: a call to itself at 0x2000 */
		bool last = d + 1 == DEPTH; /* returns, from elsewhere than its return address */
		e.pc = last ? 0x2010 : 0x2000;
		e.insn_no = ++n;
		e.kind = last ? R : C;
		tm_calls_add(t, &e, 1);
	}
	for (int d = 1; d < DEPTH; d++) { /* each returns to 0x2004, then returns */
		e.pc = 0x2004;
		e.insn_no = ++n;
		e.kind = R;
		tm_calls_add(t, &e, 1);
	}
	e.pc = 0x1004;
	e.insn_no = ++n;
	e.kind = P;
	tm_calls_add(t, &e, 1);
	ck_assert_int_eq(tm_calls_finish(t), 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.depth_overflows, DEPTH - TM_CALLS_DEFAULT_MAX_DEPTH);
	ck_assert_uint_eq(c.calls, TM_CALLS_DEFAULT_MAX_DEPTH);
	ck_assert_uint_eq(c.returns, TM_CALLS_DEFAULT_MAX_DEPTH);
	ck_assert_uint_eq(c.max_depth, TM_CALLS_DEFAULT_MAX_DEPTH);
	ck_assert_uint_eq(c.never_returned + c.unmatched_returns + c.returns_past_root, 0);
	size_t n_rec;
	const struct tm_call_record *r = tm_calls_records(t, &n_rec);
	ck_assert_uint_eq(n_rec, TM_CALLS_DEFAULT_MAX_DEPTH + 1);
	ck_assert_uint_eq(r[1].exit_insn, n - 1);
	ck_assert_uint_eq(r[TM_CALLS_DEFAULT_MAX_DEPTH].depth, TM_CALLS_DEFAULT_MAX_DEPTH);
	tm_calls_free(t);
}
END_TEST

START_TEST(test_empty)
{
	struct tm_calls *t = track(&(struct program){0}, NULL, 0);
	struct tm_calls_counts c = counts_of(t);
	ck_assert_uint_eq(c.instructions, 0);
	size_t n;
	tm_calls_records(t, &n);
	ck_assert_uint_eq(n, 0);
	tm_calls_free(t);
	tm_calls_free(NULL);
}
END_TEST

static Suite *call_stack_suite(void)
{
	Suite *s = suite_create("call_stack");
	TCase *tc = tcase_create("call_stack");
	tcase_add_test(tc, test_nested);
	tcase_add_test(tc, test_recursion);
	tcase_add_test(tc, test_tail_call);
	tcase_add_test(tc, test_jumps_that_are_no_tail_calls);
	tcase_add_test(tc, test_longjmp_with_sp);
	tcase_add_test(tc, test_longjmp_without_sp);
	tcase_add_test(tc, test_sp_inside_leaf);
	tcase_add_test(tc, test_callee_pops_arguments);
	tcase_add_test(tc, test_return_to_outer_frame);
	tcase_add_test(tc, test_never_returns);
	tcase_add_test(tc, test_return_past_root);
	tcase_add_test(tc, test_not_taken);
	tcase_add_test(tc, test_return_address_given);
	tcase_add_test(tc, test_times);
	tcase_add_test(tc, test_depth_bound);
	tcase_add_test(tc, test_tree_bound);
	tcase_add_test(tc, test_function_bound);
	tcase_add_test(tc, test_stack_bound);
	tcase_add_test(tc, test_batches);
	tcase_add_test(tc, test_deep_recursion);
	tcase_add_test(tc, test_empty);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(call_stack_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
