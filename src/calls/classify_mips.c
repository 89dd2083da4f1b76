/* Calls and returns of MIPS instructions from their word, which of them have a delay slot,
 * and whether a disassembled mnemonic names the jump or branch a word encodes (calls.h; MIPS32
 * and MIPS64 release 2 encodings; release 6's compact branches are not told apart). */
#include <ctype.h>
#include <string.h>

#include "calls/calls.h"

enum {
	OP_SPECIAL = 0,
	OP_REGIMM = 1,
	OP_J = 2,
	OP_JAL = 3,
	OP_COP0 = 16,
	OP_COP1 = 17,
	OP_COP2 = 18,
	RS_BC = 8, /* COP1 and COP2 rs: bc1f, bc1t, bc2f, bc2t and their likely forms */
	FUNCT_JR = 8,
	FUNCT_JALR = 9,
	FUNCT_SYSCALL = 12,
	REG_RA = 31,
	RT_BLTZAL = 16, /* REGIMM rt: 16 to 19 link (bltzal, bgezal, bltzall, bgezall) */
	RT_BGEZALL = 19,
	COP0_ERET = 0x42000018,
};

enum tm_call_kind tm_classify_mips(uint32_t word)
{
	unsigned op = word >> 26, rs = (word >> 21) & 31, rt = (word >> 16) & 31,
		 rd = (word >> 11) & 31, funct = word & 63;
	switch (op) {
	case OP_SPECIAL:
		if (funct == FUNCT_JR)
			return rs == REG_RA ? TM_CALL_KIND_RETURN : TM_CALL_KIND_TRANSFER;
		if (funct == FUNCT_JALR) /* jalr with rd = 0 links nothing: a jump */
			return rd != 0 ? TM_CALL_KIND_CALL : TM_CALL_KIND_TRANSFER;
		return funct == FUNCT_SYSCALL ? TM_CALL_KIND_TRANSFER : TM_CALL_KIND_PLAIN;
	case OP_REGIMM:
		if (rt >= RT_BLTZAL && rt <= RT_BGEZALL)
			return TM_CALL_KIND_CALL; /* bal is bgezal $zero */
		return rt <= 3 ? TM_CALL_KIND_TRANSFER : TM_CALL_KIND_PLAIN; /* bltz, bgez(l) */
	case OP_J: return TM_CALL_KIND_TRANSFER;
	case OP_JAL: return TM_CALL_KIND_CALL;
	case 4: /* beq, bne, blez, bgtz */
	case 5:
	case 6:
	case 7:
	case 20: /* their "likely" forms */
	case 21:
	case 22:
	case 23: return TM_CALL_KIND_TRANSFER;
	case OP_COP0: return word == COP0_ERET ? TM_CALL_KIND_TRANSFER : TM_CALL_KIND_PLAIN;
	case OP_COP1:
	case OP_COP2: return rs == RS_BC ? TM_CALL_KIND_TRANSFER : TM_CALL_KIND_PLAIN;
	default: return TM_CALL_KIND_PLAIN;
	}
}

enum tm_mips_slot tm_mips_delay_slot(uint32_t word)
{
	unsigned op = word >> 26, funct = word & 63;
	if (op == OP_J || op == OP_JAL ||
	    (op == OP_SPECIAL && (funct == FUNCT_JR || funct == FUNCT_JALR)))
		return TM_MIPS_SLOT_JUMP;
	/* syscall and eret are the transfers without one */
	if (op == OP_SPECIAL || op == OP_COP0 || tm_classify_mips(word) == TM_CALL_KIND_PLAIN)
		return TM_MIPS_NO_SLOT;
	return TM_MIPS_SLOT_COND;
}

/* The jumps and branches by name, each with the bits of the word that say it is one: the
 * encodings of MIPS32/MIPS64 release 2, and of the assemblers' aliases that disassemblers
 * print (b is beq $zero,$zero; bal bgezal $zero; beqz and bnez compare with $zero). */
static const struct {
	const char *name;
	uint32_t mask, value;
} mips_branches[] = {
    {"j", 0xfc000000, 0x08000000},	 {"jal", 0xfc000000, 0x0c000000},
    {"jr", 0xfc00003f, 0x00000008},	 {"jr.hb", 0xfc00003f, 0x00000008},
    {"jalr", 0xfc00003f, 0x00000009},	 {"jalr.hb", 0xfc00003f, 0x00000009},
    {"b", 0xffff0000, 0x10000000},	 {"beq", 0xfc000000, 0x10000000},
    {"beqz", 0xfc1f0000, 0x10000000},	 {"bne", 0xfc000000, 0x14000000},
    {"bnez", 0xfc1f0000, 0x14000000},	 {"blez", 0xfc000000, 0x18000000},
    {"bgtz", 0xfc000000, 0x1c000000},	 {"beql", 0xfc000000, 0x50000000},
    {"beqzl", 0xfc1f0000, 0x50000000},	 {"bnel", 0xfc000000, 0x54000000},
    {"bnezl", 0xfc1f0000, 0x54000000},	 {"blezl", 0xfc000000, 0x58000000},
    {"bgtzl", 0xfc000000, 0x5c000000},	 {"bltz", 0xfc1f0000, 0x04000000},
    {"bgez", 0xfc1f0000, 0x04010000},	 {"bltzl", 0xfc1f0000, 0x04020000},
    {"bgezl", 0xfc1f0000, 0x04030000},	 {"bltzal", 0xfc1f0000, 0x04100000},
    {"bgezal", 0xfc1f0000, 0x04110000},	 {"bal", 0xffff0000, 0x04110000},
    {"bltzall", 0xfc1f0000, 0x04120000}, {"bgezall", 0xfc1f0000, 0x04130000},
    {"bc1f", 0xffe30000, 0x45000000},	 {"bc1t", 0xffe30000, 0x45010000},
    {"bc1fl", 0xffe30000, 0x45020000},	 {"bc1tl", 0xffe30000, 0x45030000},
    {"bc2f", 0xffe30000, 0x49000000},	 {"bc2t", 0xffe30000, 0x49010000},
    {"bc2fl", 0xffe30000, 0x49020000},	 {"bc2tl", 0xffe30000, 0x49030000},
};

bool tm_mips_branch_named(const char *mnemonic, size_t len, uint32_t word)
{
	char s[8]; /* longer than any name above: a longer mnemonic is none */
	if (!len || len >= sizeof(s))
		return false;
	for (size_t k = 0; k < len; k++)
		s[k] = (char)tolower((unsigned char)mnemonic[k]);
	s[len] = '\0';
	for (size_t k = 0; k < sizeof(mips_branches) / sizeof(mips_branches[0]); k++)
		if (strcmp(s, mips_branches[k].name) == 0)
			return (word & mips_branches[k].mask) == mips_branches[k].value;
	return false;
}
