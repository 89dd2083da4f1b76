/* Calls and returns of ARM instructions (src/calls/classify_arm.c): a table of disassembly as
 * Fast Models, gem5 and the ES dialect print it, and, when ../shared/realtraces is beside the
 * checkout, ARM's calculator traces run through the classifier and the tracker with their
 * ELF images: every call returns (but those open at the end), nothing is resynchronised, and
 * the Fast Models, gem5 and ES traces of one program give the same stacks. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calls_programs.h"

START_TEST(test_table)
{
	static const struct {
		enum tm_arm_isa isa;
		const char *text;
		int kind; /* enum tm_call_kind, written P, C, R, J (calls_programs.h) */
	} rows[] = {
	    /* AArch64, Fast Models and gem5 */
	    {TM_ARM_A64, "BL       {pc}+0x3e0 ; 0x2109bc", C},
	    {TM_ARM_A64, "BL   0X2109BC", C},
	    {TM_ARM_A64, "BLR      x8", C},
	    {TM_ARM_A64, "blraaz x3", C},
	    {TM_ARM_A64, "RET", R},
	    {TM_ARM_A64, "RET      x1", R},
	    {TM_ARM_A64, "retab", R},
	    {TM_ARM_A64, "B        {pc}+0x10 ; 0x210c28", J},
	    {TM_ARM_A64, "B.NE     {pc}-0xc", J},
	    {TM_ARM_A64, "BR       x16", J},
	    {TM_ARM_A64, "CBZ      w0,{pc}+8", J},
	    {TM_ARM_A64, "TBNZ     w8,#0,{pc}+0x14", J},
	    {TM_ARM_A64, "ERET", J},
	    {TM_ARM_A64, "SVC      #0", J},
	    {TM_ARM_A64, "STP      x29,x30,[sp,#-0x20]!", P},
	    {TM_ARM_A64, "STP        ", P},
	    {TM_ARM_A64, "BLS      {pc}+8", P}, /* no such A64 mnemonic: B.LS */
	    {TM_ARM_A64, "HLT      #0xf000", P},
	    {TM_ARM_A64, "MOV      x30,x0", P},
	    /* AArch32 and Thumb */
	    {TM_ARM_A32, "BL       {pc}+0x398 ; 0x204f0", C},
	    {TM_ARM_A32, "BLEQ     {pc}+8", C},
	    {TM_ARM_A32, "BLLT     {pc}+8", C},
	    {TM_ARM_A32, "BLX      r3", C},
	    {TM_ARM_THUMB, "BLX      {pc}+0x20", C},
	    {TM_ARM_THUMB, "BL.W     {pc}+0x20", C},
	    {TM_ARM_A32, "BLS      {pc}+8", J}, /* B and LS */
	    {TM_ARM_A32, "BLT      {pc}+8", J},
	    {TM_ARM_A32, "BLE      {pc}+8", J},
	    {TM_ARM_A32, "BX       lr", R},
	    {TM_ARM_A32, "BXNE     lr", R},
	    {TM_ARM_A32, "bx r14", R},
	    {TM_ARM_A32, "BX       r3", J},
	    {TM_ARM_A32, "POP      {r11,pc}", R},
	    {TM_ARM_A32, "POP      {r4, r5, PC}", R},
	    {TM_ARM_A32, "POP      {r4,lr}", P},
	    {TM_ARM_A32, "LDMFD    sp!,{r4-r6,pc}", R},
	    {TM_ARM_A32, "LDMIA    r0,{r4-r11,sp,pc}", R},
	    {TM_ARM_A32, "LDM      sp!,{r4,r15}", R},
	    {TM_ARM_A32, "LDM      r0,{r1,r2}", P},
	    {TM_ARM_A32, "LDR      pc,[sp],#4", R},
	    {TM_ARM_A32, "LDR      pc,[r1,r2,LSL #2]", J},
	    {TM_ARM_A32, "MOV      pc,lr", R},
	    {TM_ARM_A32, "MOVS     pc,lr", R},
	    {TM_ARM_A32, "MOV      pc,r2", J},
	    {TM_ARM_A32, "ADD      pc,pc,r0,LSL #2", J},
	    {TM_ARM_A32, "MOV      r0,pc", P},
	    {TM_ARM_A32, "B        {pc}+0x20", J},
	    {TM_ARM_A32, "BNE      {pc}-0xc ; 0x202cc", J},
	    {TM_ARM_THUMB, "CBZ      r0,{pc}+8", J},
	    {TM_ARM_THUMB, "B.N      {pc}+4", J},
	    {TM_ARM_THUMB, "TBB      [pc,r0]", J},
	    {TM_ARM_A32, "SVC      #0x123456", J},
	    {TM_ARM_A32, "BIC      r0,r0,#1", P},
	    {TM_ARM_A32, "PUSH     {r4,r5,r11,lr}", P},
	    {TM_ARM_A32, "", P},
	    {TM_ARM_A32, "   ", P},
	    {TM_ARM_A32, "AVERYLONGMNEMONICINDEED r0", P},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int got = (int)tm_classify_arm(rows[i].isa, rows[i].text);
		ck_assert_msg(got == rows[i].kind, "\"%s\" (isa %d): %d, expected %d", rows[i].text,
			      rows[i].isa, got, rows[i].kind);
	}
}
END_TEST

/* One instruction line of a Tarmac trace, in the Fast Models or gem5 form
 * ("T clk [cpuN] IT|IS (N) ADDR ENC STATE MODE : DISASSEMBLY") or the ES form
 * ("T tic ES  (ADDR:ENC) STATE MODE:  [CCFAIL] DISASSEMBLY"), as an event numbered number.
 * Returns whether it is one. */
static bool parse_line(const char *line, struct tm_call_event *e, uint64_t number)
{
	char tok[8][64];
	int n = sscanf(line, "%63s %63s %63s %63s %63s %63s %63s %63s", tok[0], tok[1], tok[2],
		       tok[3], tok[4], tok[5], tok[6], tok[7]);
	if (n < 5)
		return false;
	int k = strncmp(tok[2], "cpu", 3) == 0 ? 3 : 2;
	bool failed = strcmp(tok[k], "IS") == 0, es = strcmp(tok[k], "ES") == 0;
	if ((!failed && !es && strcmp(tok[k], "IT") != 0) || n < k + 5)
		return false;
	unsigned long long pc;
	char enc[64] = "", state;
	const char *dis;
	if (es) {
		if (sscanf(tok[k + 1], "(%llx:%63[0-9a-f])", &pc, enc) != 2)
			return false; /* EXC lines */
		state = tok[k + 2][0];
		dis = strstr(line, tok[k + 3]) + strlen(tok[k + 3]); /* after the mode's ':' */
		dis += strspn(dis, " ");
		if (strncmp(dis, "CCFAIL", 6) == 0) {
			failed = true;
			dis += 6;
		}
	} else {
		pc = strtoull(tok[k + 2], NULL, 16);
		snprintf(enc, sizeof(enc), "%s", tok[k + 3]);
		state = tok[k + 4][0];
		dis = strstr(line, " : ");
		if (!dis)
			return false;
		dis += 3;
	}
	enum tm_arm_isa isa = state == 'O' ? TM_ARM_A64 : state == 'T' ? TM_ARM_THUMB : TM_ARM_A32;
	*e = (struct tm_call_event){
	    .pc = pc,
	    .insn_no = number,
	    .target = TM_CALL_UNKNOWN,
	    .return_pc = TM_CALL_UNKNOWN,
	    .sp = TM_CALL_UNKNOWN,
	    .time = es ? TM_CALL_UNKNOWN : strtoull(tok[0], NULL, 10),
	    .size = strlen(enc) == 4 ? 2 : 4,
	    .kind = (uint8_t)(failed ? TM_CALL_KIND_PLAIN : tm_classify_arm(isa, dis)),
	};
	return true;
}

static int folded_insns_view(const struct tm_calls *t, FILE *out)
{
	return tm_calls_write_folded(t, false, out);
}

/* The folded stacks of a calculator trace, tracked with its image's symbols; NULL when
 * ../shared/realtraces is absent. */
static char *folded_of(const char *trace, const char *image, struct tm_calls_counts *counts,
		       char **tree)
{
	const char *dir = getenv("TM_REALTRACES");
	ck_assert_msg(dir != NULL, "TM_REALTRACES is not set (tests/unit/meson.build sets it)");
	char path[4096];
	snprintf(path, sizeof(path), "%s/tarmac/%s", dir, trace);
	if (access(path, R_OK) != 0) {
		printf("SKIP: [realtraces] %s is absent (../shared/realtraces is not beside this "
		       "checkout)\n",
		       trace);
		fflush(stdout);
		return NULL;
	}
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	struct tm_symbols *s;
	ck_assert_int_eq(tm_symbols_new(&s), 0);
	snprintf(path, sizeof(path), "%s/tarmac/%s", dir, image);
	ck_assert_int_eq(tm_symbols_load_elf(s, path, 0), 0);
	struct tm_calls_config cfg = {.symbols = s};
	struct tm_calls *t;
	ck_assert_int_eq(tm_calls_new(&cfg, &t), 0);
	char line[1024];
	struct tm_call_event batch[100];
	size_t n = 0;
	uint64_t number = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!parse_line(line, &batch[n], number + 1))
			continue;
		number++;
		if (++n == sizeof(batch) / sizeof(batch[0])) {
			tm_calls_add(t, batch, n);
			n = 0;
		}
	}
	tm_calls_add(t, batch, n);
	fclose(f);
	ck_assert_int_eq(tm_calls_finish(t), 0);
	tm_calls_get_counts(t, counts);
	char *folded = render(t, folded_insns_view);
	*tree = render(t, tm_calls_write_tree);
	tm_calls_free(t);
	tm_symbols_free(s);
	return folded;
}

/* Every call of the calculator returns but those open at the end, by its return address,
 * with nothing resynchronised; the program's dialects give the same stacks and tree. */
START_TEST(test_calculator_traces)
{
	static const struct {
		const char *image;
		const char *traces[3];
	} programs[] = {
	    {"calculator-aarch64.elf",
	     {"calculator-aarch64-fastmodel.tarmac", "calculator-aarch64-gem5.tarmac",
	      "calculator-aarch64-es-ld-st-style.tarmac"}},
	    {"calculator-aarch32.elf",
	     {"calculator-aarch32-fastmodel.tarmac", "calculator-aarch32-es-ld-st-style.tarmac",
	      NULL}},
	};
	for (size_t k = 0; k < sizeof(programs) / sizeof(programs[0]); k++) {
		char *first = NULL, *first_tree = NULL;
		for (size_t d = 0; d < 3 && programs[k].traces[d]; d++) {
			struct tm_calls_counts c;
			char *tree;
			char *folded =
			    folded_of(programs[k].traces[d], programs[k].image, &c, &tree);
			if (!folded)
				continue;
			const char *name = programs[k].traces[d];
			ck_assert_msg(c.calls > 100, "%s: %llu calls", name,
				      (unsigned long long)c.calls);
			ck_assert_msg(c.calls == c.returns + c.never_returned,
				      "%s: %llu calls, %llu returns, %llu open", name,
				      (unsigned long long)c.calls, (unsigned long long)c.returns,
				      (unsigned long long)c.never_returned);
			ck_assert_msg(c.resyncs + c.unmatched_returns + c.returns_past_root == 0,
				      "%s: %llu resyncs, %llu unmatched returns", name,
				      (unsigned long long)c.resyncs,
				      (unsigned long long)c.unmatched_returns);
			ck_assert_msg(strncmp(folded, "_start", 6) == 0, "%s: %.60s", name, folded);
			ck_assert_ptr_nonnull(strstr(folded, "_start;c_entry;"));
			/* the tree's lines, less the instruction numbers, times and exit PCs */
			for (char *p = tree; (p = strstr(p, "  #"));) {
				char *eol = strchr(p, '\n');
				memmove(p, eol, strlen(eol) + 1);
			}
			if (!first) {
				first = folded;
				first_tree = tree;
				continue;
			}
			ck_assert_msg(strcmp(folded, first) == 0, "%s: other stacks than %s", name,
				      programs[k].traces[0]);
			ck_assert_msg(strcmp(tree, first_tree) == 0, "%s: another tree than %s",
				      name, programs[k].traces[0]);
			free(folded);
			free(tree);
		}
		free(first);
		free(first_tree);
	}
}
END_TEST

static Suite *classify_arm_suite(void)
{
	Suite *s = suite_create("classify_arm");
	TCase *tc = tcase_create("classify_arm");
	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_calculator_traces);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(classify_arm_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
