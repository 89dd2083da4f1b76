/* Calls and returns of PowerPC and MIPS instructions from their words
 * (src/calls/classify_ppc.c, classify_mips.c): a table of encodings each; MIPS's delay slots,
 * and the test that tells a MIPS jump or branch from ARM's by mnemonic and word. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

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
	    {0x45010003, "bc1t .+16", J},
	    {0x45020003, "bc1fl .+16", J},
	    {0x49000003, "bc2f .+16", J},
	    {0x44820000, "mtc1 $v0,$f0", P},
	    {0x04080000, "tgei $zero,0", P},
	    {0x27bdffe0, "addiu $sp,$sp,-32", P},
	    {0x8fbf001c, "lw $ra,28($sp)", P},
	    {0x00000000, "nop", P},
	};
	check_rows(tm_classify_mips, rows, sizeof(rows) / sizeof(rows[0]));
}
END_TEST

/* Which MIPS words have a delay slot, and whether they go always. */
START_TEST(test_mips_delay_slot)
{
	static const struct {
		uint32_t word;
		const char *text;
		enum tm_mips_slot slot;
	} rows[] = {
	    {0x0c100000, "jal 0x400000", TM_MIPS_SLOT_JUMP},
	    {0x08100000, "j 0x400000", TM_MIPS_SLOT_JUMP},
	    {0x03e00008, "jr $ra", TM_MIPS_SLOT_JUMP},
	    {0x0320f809, "jalr $t9", TM_MIPS_SLOT_JUMP},
	    {0x10000003, "b .+16", TM_MIPS_SLOT_COND},
	    {0x04110004, "bal .+20", TM_MIPS_SLOT_COND},
	    {0x50850003, "beql $a0,$a1,.+16", TM_MIPS_SLOT_COND},
	    {0x04800004, "bltz $a0,.+20", TM_MIPS_SLOT_COND},
	    {0x45010003, "bc1t .+16", TM_MIPS_SLOT_COND},
	    {0x0000000c, "syscall", TM_MIPS_NO_SLOT},
	    {0x42000018, "eret", TM_MIPS_NO_SLOT},
	    {0x0000000d, "break", TM_MIPS_NO_SLOT},
	    {0x04080000, "tgei $zero,0", TM_MIPS_NO_SLOT},
	    {0x27bdffe0, "addiu $sp,$sp,-32", TM_MIPS_NO_SLOT},
	    {0x00000000, "nop", TM_MIPS_NO_SLOT},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		ck_assert_msg(tm_mips_delay_slot(rows[i].word) == rows[i].slot, "%08x %s: %d",
			      rows[i].word, rows[i].text, (int)tm_mips_delay_slot(rows[i].word));
}
END_TEST

/* A mnemonic names a MIPS jump or branch only with a word that encodes it: MIPS's own lines
 * do, ARM's branches (A32, A64, Thumb words) never. */
START_TEST(test_mips_branch_named)
{
	static const struct {
		const char *mnemonic;
		uint32_t word;
		bool mips;
	} rows[] = {
	    {"jal", 0x0c000800, true},	     {"JAL", 0x0c000800, true},
	    {"jalr", 0x0320f809, true},	     {"jalr.hb", 0x0320fc09, true},
	    {"jr", 0x03e00008, true},	     {"j", 0x08000400, true},
	    {"b", 0x10000003, true},	     {"beq", 0x10000003, true},
	    {"beqz", 0x11000003, true},	     {"beq", 0x11090003, true},
	    {"bnez", 0x15000003, true},	     {"bne", 0x15090003, true},
	    {"bal", 0x04110004, true},	     {"bgezal", 0x04910004, true},
	    {"bltzal", 0x04900004, true},    {"bgezall", 0x04930004, true},
	    {"blez", 0x19000003, true},	     {"bgtzl", 0x5d000003, true},
	    {"bc1t", 0x45010003, true},	     {"bc2fl", 0x49020003, true},
	    {"beqz", 0x11090003, false},     /* compares with t1, not $zero */
	    {"b", 0x11090003, false},	     /* a beq that may fall through */
	    {"bal", 0x04910004, false},	     /* a bgezal on a0 */
	    {"jal", 0x08000400, false},	     /* a j's word */
	    {"jr", 0x03e00009, false},	     /* a jalr's */
	    {"b", 0xea000010, false},	     /* A32 B */
	    {"beq", 0x0a000003, false},	     /* A32 BEQ */
	    {"bne", 0x1a000003, false},	     /* A32 BNE */
	    {"bl", 0xeb000010, false},	     /* A32 BL: no MIPS name */
	    {"b", 0x14000004, false},	     /* A64 B */
	    {"b.ne", 0x54000041, false},     /* A64 B.NE: a MIPS bnel's word */
	    {"b", 0xf000b800, false},	     /* Thumb-2 B.W */
	    {"bx", 0xe12fff1e, false},	     /* A32 BX lr */
	    {"lui", 0x3c080001, false},	     /* no branch */
	    {"bgezall0", 0x04130004, false}, /* too long a name */
	    {"", 0x10000003, false},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		ck_assert_msg(tm_mips_branch_named(rows[i].mnemonic, strlen(rows[i].mnemonic),
						   rows[i].word) == rows[i].mips,
			      "%s %08x", rows[i].mnemonic, rows[i].word);
}
END_TEST

static Suite *classify_words_suite(void)
{
	Suite *s = suite_create("classify_words");
	TCase *tc = tcase_create("classify_words");
	tcase_add_test(tc, test_ppc);
	tcase_add_test(tc, test_mips);
	tcase_add_test(tc, test_mips_delay_slot);
	tcase_add_test(tc, test_mips_branch_named);
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
