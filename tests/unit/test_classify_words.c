/* Calls and returns of PowerPC and MIPS instructions from their words
 * (src/calls/classify_ppc.c, classify_mips.c): a table of encodings each. */
#include <check.h>
#include <stdlib.h>

#include "calls_programs.h"

struct row {
	uint32_t word;
	const char *text;
	int kind; /* enum tm_call_kind, written P, C, R, J (calls_programs.h) */
};

static void check_rows(enum tm_call_kind (*classify)(uint32_t), const struct row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int got = (int)classify(rows[i].word);
		ck_assert_msg(got == rows[i].kind, "%08x %s: %d, expected %d", rows[i].word,
			      rows[i].text, got, rows[i].kind);
	}
}

START_TEST(test_ppc)
{
	static const struct row rows[] = {
	    {0x48000011, "bl .+0x10", C},
	    {0x48000103, "bla 0x100", C},
	    {0x48000010, "b .+0x10", J},
	    {0x4e800020, "blr", R},
	    {0x4d820020, "beqlr", R},
	    {0x4e800021, "blrl", C},
	    {0x4e800420, "bctr", J},
	    {0x4e800421, "bctrl", C},
	    {0x4c820421, "bnectrl", C},
	    {0x4e800460, "bctar", J},
	    {0x4200fff8, "bdnz .-8", J},
	    {0x429f0005, "bcl 20,31,.+4 (reads the pc: the tracker sees no call)", C},
	    {0x44000002, "sc", J},
	    {0x4c000064, "rfi", J},
	    {0x4c000024, "rfid", J},
	    {0x4c00012c, "isync", P},
	    {0x4cc63182, "crxor 6,6,6", P},
	    {0x38630001, "addi r3,r3,1", P},
	    {0x7c0802a6, "mflr r0", P},
	    {0x7c0803a6, "mtlr r0", P},
	    {0x00000000, "(illegal)", P},
	};
	check_rows(tm_classify_ppc, rows, sizeof(rows) / sizeof(rows[0]));
}
END_TEST

START_TEST(test_mips)
{
	static const struct row rows[] = {
	    {0x0c100000, "jal 0x400000", C},
	    {0x0320f809, "jalr $t9", C},
	    {0x03200009, "jalr $zero,$t9", J},
	    {0x03e00008, "jr $ra", R},
	    {0x03200008, "jr $t9", J},
	    {0x08100000, "j 0x400000", J},
	    {0x04110004, "bal .+20", C},
	    {0x04900004, "bltzal $a0,.+20", C},
	    {0x04130004, "bgezall $zero,.+20", C},
	    {0x04800004, "bltz $a0,.+20", J},
	    {0x04810004, "bgez $a0,.+20", J},
	    {0x10850003, "beq $a0,$a1,.+16", J},
	    {0x50850003, "beql $a0,$a1,.+16", J},
	    {0x1c800003, "bgtz $a0,.+16", J},
	    {0x0000000c, "syscall", J},
	    {0x42000018, "eret", J},
	    {0x04080000, "tgei $zero,0", P},
	    {0x27bdffe0, "addiu $sp,$sp,-32", P},
	    {0x8fbf001c, "lw $ra,28($sp)", P},
	    {0x00000000, "nop", P},
	};
	check_rows(tm_classify_mips, rows, sizeof(rows) / sizeof(rows[0]));
}
END_TEST

static Suite *classify_words_suite(void)
{
	Suite *s = suite_create("classify_words");
	TCase *tc = tcase_create("classify_words");
	tcase_add_test(tc, test_ppc);
	tcase_add_test(tc, test_mips);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(classify_words_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
