/* Calls and returns of MIPS instructions from their word (calls.h; MIPS32 and MIPS64
 * release 2 encodings; release 6's compact branches are not told apart). */
#include "calls/calls.h"

enum {
	OP_SPECIAL = 0,
	OP_REGIMM = 1,
	OP_J = 2,
	OP_JAL = 3,
	OP_COP0 = 16,
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
	default: return TM_CALL_KIND_PLAIN;
	}
}
