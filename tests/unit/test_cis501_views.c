/* The CIS501 views and statistics (src/formats/cis501_views.c, cis501_stats.c): the course's
 * real gcc-1K.trace and sjeng-1K.trace.gz against the CIS501 model's views (cis501_expect.py),
 * every view through the core, din and stats.json of hand-written traces, and the limits of the
 * statistics. */
#include "cis501_check.h"

/* The model's reading of a trace: its meta.json (records, counts, every record's original
 * line and macro opcode), parsed. */
static json_object *model_meta(const char *dir)
{
	size_t len;
	char *text = model_file(dir, "meta.json", &len);
	json_object *meta = json_tokener_parse(text);
	ck_assert_msg(meta != NULL, "the model's meta.json does not parse");
	free(text);
	return meta;
}

START_TEST(test_real_gcc)
{
	const struct tm_format *f = fmt();
	size_t len, want_dump_len, want_din_len;
	char *text = realtrace("gcc-1K.trace", &len);
	if (!text)
		return;
	char *model = model_expect("cis501_expect.py", "gcc-1K.trace", text, len, "");
	json_object *meta = model_meta(model);
	ck_assert_int_eq(get_int(meta, "records"), 1000);
	/* the course's figure for its reference parser */
	ck_assert_int_eq(get_int(get(meta, "counts"), "macro_ops"), 754);
	json_object *origs = get(meta, "origs");
	char *want_dump = model_file(model, "dump.txt", &want_dump_len);
	char *want_din = model_file(model, "convert/gcc-1K.din", &want_din_len);

	for (size_t max = 1; max <= 4096; max *= 8) {
		struct decoded d;
		decode_all(text, len, max, &d);
		ck_assert_uint_eq(d.n, 1000);
		ck_assert_msg(d.diag.count == 0, "errors: %.*s", (int)d.diag.len, d.diag.text);
		size_t macros = 0, line_off = 0;
		for (size_t i = 0; i < d.n; i++) {
			const char *orig =
			    json_object_get_string(json_object_array_get_idx(origs, i));
			macros += d.r[i].uop == 1;
			EXPECT(d.r[i].head.raw_len == strlen(orig) &&
				   d.r[i].head.raw_rel == line_off &&
				   memcmp(text + line_off, orig, strlen(orig)) == 0,
			       "record %zu: raw bytes", i);
			line_off += strlen(orig);
		}
		ck_assert_uint_eq(macros, 754);
		size_t dump_len, din_len;
		char *dump = render_all(f->dump, text, len, &d, &dump_len);
		expect_same_text("dump.txt", want_dump, want_dump_len, dump, dump_len);
		char *din = render_all(din_view()->ops, text, len, &d, &din_len);
		expect_same_text("din", want_din, want_din_len, din, din_len);
		free(dump);
		free(din);
		decoded_free(&d);
	}
	free(want_dump);
	free(want_din);
	json_object_put(meta);
	model_free(model);
	free(text);
}
END_TEST

/* Its stats.json, with the values worked out from the file by splitting its lines. */
START_TEST(test_real_gcc_stats)
{
	size_t len;
	char *text = realtrace("gcc-1K.trace", &len);
	if (!text)
		return;
	struct built b;
	char got[1024];
	build(&b, text, len);
	ck_assert_int_eq(get_int(b.root, "records"), 1000);
	ck_assert_int_eq(get_int(b.root, "errors"), 0);
	ck_assert(!json_object_get_boolean(get(b.root, "truncated")));
	json_object *cls = get(b.root, "classes");
	static const struct {
		const char *name;
		int64_t n;
	} classes[] = {
	    /* MOV 262 + MOVZX 30 + MOVSX 9 + XCHG 2; CMP 176 + TEST 48 + SET 6; J; PUSH 70 + POP
	     * 58; ADD 34 + LEA 13 + SUB 8; XOR 11 + AND 9 + OR 1 + NOT 1; SHL 9 + SHR 4 */
	    {"move", 303},  {"compare", 230},  {"cond_branch", 157}, {"stack", 128},
	    {"call", 40},   {"arith", 55},     {"ret", 27},	     {"jump", 17},
	    {"logic", 22},  {"shift", 13},     {"nop", 8},	     {"muldiv", 0},
	    {"string", 0},  {"float_simd", 0}, {"sync", 0},	     {"system", 0},
	    {"other", 0},   {"loads", 232},    {"stores", 108},	     {"branches", 193},
	    {"taken", 109}, {"not_taken", 84}, {"flags_read", 160},  {"flags_write", 214},
	};
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		ck_assert_msg(get_int(cls, classes[i].name) == classes[i].n, "class %s: %" PRId64,
			      classes[i].name, get_int(cls, classes[i].name));
	ck_assert_int_eq(json_object_object_length(cls), (int)(N_FAMILIES + N_TAGS));

	json_object *o = b.own;
	ck_assert_int_eq(get_int(o, "micro_ops"), 1000);
	ck_assert_int_eq(get_int(o, "macro_ops"), 754);
	ck_assert_int_eq(get_int(o, "uops_before_first_macro"), 0);
	object_text(get(o, "uops_per_macro"), got, sizeof(got));
	ck_assert_str_eq(got, "1=558,2=156,3=30,4=10");
	ck_assert_int_eq(get_int(o, "loads"), 232);
	ck_assert_int_eq(get_int(o, "stores"), 108);
	object_text(get(o, "branches"), got, sizeof(got));
	ck_assert_str_eq(got, "total=193,taken=109,not_taken=84");
	ck_assert_int_eq(get_int(o, "flags_read"), 160);
	ck_assert_int_eq(get_int(o, "flags_write"), 214);
	ck_assert_int_eq(get_int(o, "distinct_pcs"), 730);
	ck_assert_str_eq(get_str(o, "pc_min"), "0x446bd0");
	ck_assert_str_eq(get_str(o, "pc_max"), "0x63de85");
	ck_assert_int_eq(get_int(o, "data_lines_64b"), 46);
	ck_assert_int_eq(get_int(o, "data_pages_4k"), 23);
	ck_assert_str_eq(get_str(o, "address_min"), "0x7bb3f4");
	ck_assert_str_eq(get_str(o, "address_max"), "0x7fffe7ff120");
	object_text(get(o, "top_macro_opcodes"), got, sizeof(got));
	ck_assert_str_eq(got, "MOV=262,CMP=176,J=157,PUSH=70,POP=58,TEST=48,CALL=40,ADD=34,"
			      "MOVZX=30,RET=27");
	object_text(get(o, "top_micro_opcodes"), got, sizeof(got));
	ck_assert_str_eq(got, "LOAD=232,JMP_IMM=183,SUB_IMM=113,STORE=108,ADD_IMM=67,ADD=58,"
			      "SAVE_PC=58,SUB=51,AND=49,LEA=16");
	ck_assert_int_eq(get_int(o, "distinct_macro_opcodes"), 23);
	ck_assert_int_eq(get_int(o, "distinct_micro_opcodes"), 22);
	ck_assert_int_eq(get_int(o, "crlf_lines"), 0);
	unbuild(&b);
	free(text);
}
END_TEST

/* sjeng-1K.trace.gz, decompressed here: 1000 micro-ops, 750 macro-ops. */
START_TEST(test_real_sjeng)
{
	size_t len;
	char *text = realtrace("sjeng-1K.trace.gz", &len);
	if (!text)
		return;
	struct built b;
	build(&b, text, len);
	ck_assert_int_eq(get_int(b.root, "records"), 1000);
	ck_assert_int_eq(get_int(b.root, "errors"), 0);
	ck_assert_int_eq(get_int(b.own, "micro_ops"), 1000);
	ck_assert_int_eq(get_int(b.own, "macro_ops"), 750);
	unbuild(&b);
	free(text);
}
END_TEST

/* Every view of a trace through the core, read as the mount reads it, against the model's:
 * gcc-1K.trace repeated so that it spans several chunks, each decoded again from its
 * checkpoint. */
START_TEST(test_views_through_core)
{
	const struct tm_format *f = fmt();
	size_t one_len;
	char *one = realtrace("gcc-1K.trace", &one_len);
	if (!one)
		return;
	size_t copies = f->chunk_records * 2 / 1000 + 2, len = copies * one_len;
	char *text = malloc(len + 1);
	ck_assert_ptr_nonnull(text);
	for (size_t k = 0; k < copies; k++)
		memcpy(text + k * one_len, one, one_len);
	text[len] = 0;
	char *model = model_expect("cis501_expect.py", "gcc.trace", text, len, "");
	json_object *meta = model_meta(model);
	ck_assert_int_eq(get_int(get(meta, "counts"), "macro_ops"), 754 * (int64_t)copies);

	struct mounted m;
	mount_trace(&m, "gcc.trace", fmt(), text, len);
	static const char *const compared[] = {"dump.txt", "convert/gcc.din"};
	size_t got_len, want_len;
	for (unsigned v = 0; v < 2 + 2 * N_TAGS; v++) {
		char path[64];
		if (v < 2)
			snprintf(path, sizeof(path), "%s", compared[v]);
		else
			snprintf(path, sizeof(path), "class/%s.%s", tags[(v - 2) / 2],
				 v % 2 ? "trace" : "txt");
		char *got = read_view(&m, path, &got_len);
		char *want = model_file(model, path, &want_len);
		expect_same_text(path, want, want_len, got, got_len);
		free(got);
		free(want);
	}
	/* the families partition the trace: J lines are cond_branch, CALL lines call */
	struct text want_txt = {0}, want_raw = {0};
	size_t total = 0;
	for (unsigned c = 0; c < N_FAMILIES; c++) {
		char path[64];
		snprintf(path, sizeof(path), "class/%s.txt", families[c]);
		free(read_view(&m, path, &got_len));
		total += got_len;
	}
	char *dump = model_file(model, "dump.txt", &want_len);
	ck_assert_uint_eq(total, want_len);
	json_object *macros = get(meta, "macros"), *origs = get(meta, "origs");
	const char *p = dump;
	for (size_t i = 0; i < json_object_array_length(macros); i++) {
		const char *e = strchr(p, '\n') + 1;
		if (strcmp(json_object_get_string(json_object_array_get_idx(macros, i)), "J") ==
		    0) {
			text_add(&want_txt, p, (size_t)(e - p));
			text_adds(&want_raw,
				  json_object_get_string(json_object_array_get_idx(origs, i)));
		}
		p = e;
	}
	char *got = read_view(&m, "class/cond_branch.txt", &got_len);
	expect_same_text("class/cond_branch.txt", want_txt.b, want_txt.len, got, got_len);
	free(got);
	got = read_view(&m, "class/cond_branch.trace", &got_len);
	expect_same_text("class/cond_branch.trace", want_raw.b, want_raw.len, got, got_len);
	free(got);
	got = read_view(&m, "class/muldiv.trace", &got_len);
	ck_assert_uint_eq(got_len, 0);
	free(got);
	free(want_txt.b);
	free(want_raw.b);
	free(dump);
	unmount_trace(&m);
	json_object_put(meta);
	model_free(model);
	free(text);
	free(one);
}
END_TEST

/* convert/NAME.din of a small trace, written out by hand. */
static const char din_trace[] =
    /* starts mid-instruction: no fetch, the store */
    "2 400010 -1 -1 4 - - S 0 7fff0008 400014 0 PUSH STORE\n"
    "1 400014 -1 5 3 - - L -8 601000 400018 0 MOV LOAD\n"
    "1 400018 -1 -1 -1 R T - 16 0 40001a 400030 J JMP_IMM\n"
    "1 400030 3 4 -1 - - S 0 ffffffffffffff00 400034 0 MOV STORE\n"
    "2 400030 3 4 -1 W - - 0 0 400034 0 MOV ADD\n"
    "1 0 -1 -1 -1 - - L 0 0 2 0 NOP LOAD\n";
static const char din_expected[] = "1 7fff0008\n"
				   "2 400014\n0 601000\n"
				   "2 400018\n"
				   "2 400030\n1 ffffffffffffff00\n"
				   "2 0\n0 0\n";

START_TEST(test_din)
{
	struct decoded d;
	decode_all(din_trace, strlen(din_trace), 16, &d);
	ck_assert_uint_eq(d.n, 6);
	size_t len;
	char *din = render_all(din_view()->ops, din_trace, strlen(din_trace), &d, &len);
	expect_same_text("din", din_expected, strlen(din_expected), din, len);
	free(din);
	decoded_free(&d);

	struct mounted m;
	mount_trace(&m, "small.trace", fmt(), din_trace, strlen(din_trace));
	din = read_view(&m, "convert/small.din", &len);
	expect_same_text("convert/small.din", din_expected, strlen(din_expected), din, len);
	free(din);
	char *dump = read_view(&m, "dump.txt", &len);
	static const char dump_expected[] =
	    "2 400010 -1 -1 4 - - S 0 7fff0008 400014 0 PUSH STORE 0\n"
	    "1 400014 -1 5 3 - - L -8 601000 400018 0 MOV LOAD 1\n"
	    "1 400018 -1 -1 -1 R T - 16 0 40001a 400030 J JMP_IMM 2\n"
	    "1 400030 3 4 -1 - - S 0 ffffffffffffff00 400034 0 MOV STORE 3\n"
	    "2 400030 3 4 -1 W - - 0 0 400034 0 MOV ADD 3\n"
	    "1 0 -1 -1 -1 - - L 0 0 2 0 NOP LOAD 4\n";
	expect_same_text("dump.txt", dump_expected, strlen(dump_expected), dump, len);
	free(dump);
	unmount_trace(&m);
}
END_TEST

/* stats.json of the same trace, worked out by hand. */
START_TEST(test_stats_small)
{
	struct built b;
	char got[1024];
	build(&b, din_trace, strlen(din_trace));
	json_object *o = b.own, *cls = get(b.root, "classes");
	ck_assert_int_eq(get_int(o, "micro_ops"), 6);
	ck_assert_int_eq(get_int(o, "macro_ops"), 4);
	ck_assert_int_eq(get_int(o, "uops_before_first_macro"), 1);
	object_text(get(o, "uops_per_macro"), got, sizeof(got));
	ck_assert_str_eq(got, "1=3,2=1");
	ck_assert_int_eq(get_int(o, "loads"), 2);
	ck_assert_int_eq(get_int(o, "stores"), 2);
	object_text(get(o, "branches"), got, sizeof(got));
	ck_assert_str_eq(got, "total=1,taken=1,not_taken=0");
	ck_assert_int_eq(get_int(o, "flags_read"), 1);
	ck_assert_int_eq(get_int(o, "flags_write"), 1);
	ck_assert_int_eq(get_int(o, "distinct_pcs"), 5);
	ck_assert_str_eq(get_str(o, "pc_min"), "0x0");
	ck_assert_str_eq(get_str(o, "pc_max"), "0x400030");
	/* lines 0x1fffc00, 0x18040, 0x3fffffffffffffc, 0; pages 0x7fff0, 0x601, 0xfffffffffffff,
	 * 0 */
	ck_assert_int_eq(get_int(o, "data_lines_64b"), 4);
	ck_assert_int_eq(get_int(o, "data_pages_4k"), 4);
	ck_assert_str_eq(get_str(o, "address_min"), "0x0");
	ck_assert_str_eq(get_str(o, "address_max"), "0xffffffffffffff00");
	object_text(get(o, "top_macro_opcodes"), got, sizeof(got));
	ck_assert_str_eq(got, "MOV=3,J=1,NOP=1,PUSH=1");
	object_text(get(o, "top_micro_opcodes"), got, sizeof(got));
	ck_assert_str_eq(got, "LOAD=2,STORE=2,ADD=1,JMP_IMM=1");
	ck_assert_int_eq(get_int(o, "distinct_macro_opcodes"), 4);
	ck_assert_int_eq(get_int(o, "distinct_micro_opcodes"), 4);
	ck_assert_int_eq(get_int(cls, "stack"), 1);
	ck_assert_int_eq(get_int(cls, "move"), 3);
	ck_assert_int_eq(get_int(cls, "cond_branch"), 1);
	ck_assert_int_eq(get_int(cls, "nop"), 1);
	ck_assert_int_eq(get_int(cls, "loads"), 2);
	ck_assert_int_eq(get_int(cls, "taken"), 1);
	ck_assert_int_eq(get_int(cls, "not_taken"), 0);
	ck_assert_int_eq(get_int(b.root, "errors"), 0);
	unbuild(&b);

	/* an empty trace: counts 0, no ranges */
	build(&b, "", 0);
	ck_assert_int_eq(get_int(b.own, "micro_ops"), 0);
	ck_assert(json_object_is_type(get(b.own, "pc_min"), json_type_null));
	ck_assert(json_object_is_type(get(b.own, "address_max"), json_type_null));
	ck_assert_int_eq(json_object_object_length(get(b.own, "uops_per_macro")), 0);
	unbuild(&b);

	/* a macro-op of 70 micro-ops and one of 63: the last bins */
	struct text t = {0};
	for (int k = 1; k <= 70; k++)
		text_addf(&t, "%d 10 -1 -1 -1 - - - 0 0 14 0 REP_MOVSB LOAD\n", k);
	for (int k = 1; k <= 63; k++)
		text_addf(&t, "%d 20 -1 -1 -1 - - - 0 0 24 0 REP_STOSB STORE\n", k);
	build(&b, t.b, t.len);
	object_text(get(b.own, "uops_per_macro"), got, sizeof(got));
	ck_assert_str_eq(got, "63=1,64+=1");
	ck_assert_int_eq(get_int(get(b.root, "classes"), "string"), 133);
	unbuild(&b);
	free(t.b);
}
END_TEST

/* Hostile traces: the name tables and the data footprint stop growing, and say so. */
START_TEST(test_stats_limits)
{
	struct text t = {0};
	struct built b;
	for (int k = 0; k < 5000; k++)
		text_addf(&t, "1 10 -1 -1 -1 - - - 0 0 14 0 N%d LOAD\n", k);
	build(&b, t.b, t.len);
	ck_assert_int_eq(get_int(b.own, "distinct_macro_opcodes"), 4096);
	ck_assert_int_eq(get_int(b.own, "distinct_micro_opcodes"), 1);
	ck_assert_int_eq(get_int(get(b.own, "top_micro_opcodes"), "LOAD"), 5000);
	ck_assert_int_eq(json_object_object_length(get(b.own, "top_macro_opcodes")), 10);
	ck_assert_int_eq(get_int(get(b.root, "classes"), "other"), 5000);
	expect_errors(&b, "more than 4096 distinct opcode names: 904 macro and 0 "
			  "micro opcodes left out of top_macro_opcodes and "
			  "top_micro_opcodes\n");
	unbuild(&b);
	free(t.b);

	/* loads 2 MiB apart: one footprint block each */
	memset(&t, 0, sizeof(t));
	for (int k = 0; k < 16400; k++)
		text_addf(&t, "1 10 -1 -1 -1 - - L 0 %" PRIx64 " 14 0 MOV LOAD\n",
			  (uint64_t)k << 21);
	build(&b, t.b, t.len);
	ck_assert_int_eq(get_int(b.own, "data_lines_64b"), 16384);
	ck_assert_int_eq(get_int(b.own, "loads"), 16400);
	ck_assert_str_eq(get_str(b.own, "address_max"), "0x801e00000");
	expect_errors(&b, "data addresses in more than 16384 regions of 2 MiB: "
			  "data_lines_64b and data_pages_4k are lower bounds\n");
	unbuild(&b);
	free(t.b);
}
END_TEST

static Suite *cis501_suite(void)
{
	Suite *s = suite_create("cis501_views");
	TCase *tc;

	tc = tcase_create("real");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_real_gcc);
	tcase_add_test(tc, test_real_gcc_stats);
	tcase_add_test(tc, test_real_sjeng);
	tcase_add_test(tc, test_views_through_core);
	suite_add_tcase(s, tc);

	tc = tcase_create("views");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_din);
	tcase_add_test(tc, test_stats_small);
	tcase_add_test(tc, test_stats_limits);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cis501_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
