/* PowerPC facts shared by the PowerPC trace formats (TT6, TT6E, FULL): how the spec's macros
 * classify an opcode word, what a memory instruction moves, and disassembly.
 *
 * major = word >> 26; minor = (word >> 1) & 0x3ff, the spec's extended opcode (it includes the
 * OE bit of XO-form instructions, as the spec's macros do). */
#ifndef TRACEMOUNT_PPC_H
#define TRACEMOUNT_PPC_H

#include <stddef.h>
#include <stdint.h>

static inline unsigned ppc_major(uint32_t word)
{
	return word >> 26;
}
static inline unsigned ppc_minor(uint32_t word)
{
	return (word >> 1) & 0x3ff;
}

/* Trace record classes of the spec's macros, in the order TT6's class list gives them. */
enum ppc_class { PPC_COMPUTE, PPC_FLOW, PPC_MEMORY, PPC_MEMEXT };

/* What a memory instruction does with memory. */
enum ppc_access {
	PPC_NO_ACCESS,
	PPC_LOAD,
	PPC_STORE,
	PPC_TOUCH, /* dcbt, dcbtst, dst, dstst: a read hint */
	PPC_ZERO,  /* dcbz, dcba: a cache block written */
	PPC_FLUSH, /* dcbf, dcbst, dcbi, icbi: no data moved */
};

/* How the size of a memory access follows from the word. */
enum ppc_sizing {
	PPC_SIZE_FIXED,	     /* ppc_op.size */
	PPC_SIZE_MULTIPLE,   /* lmw, stmw: 4 x (32 - rT) */
	PPC_SIZE_STRING_IMM, /* lswi, stswi: NB, 0 meaning 32 */
	PPC_SIZE_STRING_XER, /* lswx, stswx: XER & 0x7f */
	PPC_SIZE_DS,	     /* major 58: ld, ldu 8; lwa 4 */
	PPC_SIZE_NONE,	     /* cache-block operations and streams: 0 */
};

struct ppc_op {
	uint8_t tt6_class;  /* enum ppc_class under the TT6 macros */
	uint8_t tt6e_class; /* and under the TT6E macros (dcbx and icbi become MEMORY) */
	uint8_t access;	    /* enum ppc_access */
	uint8_t sizing;	    /* enum ppc_sizing */
	uint8_t size;	    /* bytes, for PPC_SIZE_FIXED */
};

extern const struct ppc_op ppc_primary_ops[64], ppc_op19[1024], ppc_op31[1024];

/* The facts of an opcode word; never NULL (an unknown word is COMPUTE). Inline: the index
 * pass asks once per record. */
static inline const struct ppc_op *ppc_op_of(uint32_t word)
{
	switch (ppc_major(word)) {
	case 19: return &ppc_op19[ppc_minor(word)];
	case 31: return &ppc_op31[ppc_minor(word)];
	default: return &ppc_primary_ops[ppc_major(word)];
	}
}

/* Whether a word is a dcbx or icbi: COMPUTE in TT6, MEMORY in TT6E. */
static inline int ppc_is_cache_block_op(const struct ppc_op *op)
{
	return op->tt6_class == PPC_COMPUTE && op->tt6e_class == PPC_MEMORY;
}

/* Bytes a memory access moves; xer is the MEMORY_EXTENDED third word (0 otherwise). */
unsigned ppc_access_size(const struct ppc_op *op, uint32_t word, uint32_t xer);

/* Whether a flow instruction is a conditional branch (bc, bclr, bcctr whose BO does not say
 * "always"). */
static inline int ppc_is_conditional(uint32_t word)
{
	unsigned major = ppc_major(word), bo = (word >> 21) & 31;
	if (major != 16 && !(major == 19 && (ppc_minor(word) == 16 || ppc_minor(word) == 528)))
		return 0;
	return (bo & 0x14) != 0x14; /* BO 1z1zz: branch always */
}

/* The effective address of a memory instruction (MEMORY or MEMEXT under the TT6E macros) from
 * the general registers before it, r0 first, big-endian: D and DS forms (rA|0) + d, X forms
 * (rA|0) + rB, lswi/stswi (rA|0), dst/dstst (rA). 0 for other words. */
uint32_t ppc_effective_address(uint32_t word, const uint8_t *gpr_be);

/* The branch registers before an instruction. */
struct ppc_branch_regs {
	uint32_t cr, lr, ctr;
};

/* The address of the instruction after a flow instruction at pc, from the registers before it:
 * b, bc, bclr and bcctr by their operands (bc and bclr decrement a copy of ctr when BO says so);
 * pc + 4 for the rest (sc, rfi). */
uint32_t ppc_next_pc(uint32_t word, uint32_t pc, const struct ppc_branch_regs *regs);

/* The execution unit an instruction belongs to, for statistics. */
enum ppc_unit { PPC_UNIT_OTHER, PPC_UNIT_FP, PPC_UNIT_VECTOR };
enum ppc_unit ppc_unit_of(uint32_t word);

#define PPC_TWI_MAJOR 3
#define PPC_RFI_WORD  0x4c000064u

#define PPC_TEXT_WIDTH 36 /* the disassembly column of dump lines */

/* Writes the disassembly of word at pc to out (room for PPC_TEXT_WIDTH bytes, not terminated)
 * and returns its length: Capstone's text with branch targets as 32-bit addresses, else
 * tracemount's own for what Capstone 4 lacks, else ".long 0xWORD". Thread-safe: each thread
 * keeps its own Capstone handle and a cache of recent words. */
size_t ppc_disasm(uint32_t word, uint32_t pc, char *out);

/* The base mnemonic of an opcode bin (major, and minor for majors with extended opcodes) for
 * statistics: "bc" for every conditional branch form, "or" for mr, and so on. */
void ppc_bin_name(unsigned major, unsigned minor, char *out, size_t len);

/* The statistics bin of a word: major << 10, plus the minor for majors with extended opcodes
 * (4, 19, 30, 31, 59, 63: bit set in this mask). */
#define PPC_EXTENDED_MAJORS                                                                        \
	(1ull << 4 | 1ull << 19 | 1ull << 30 | 1ull << 31 | 1ull << 59 | 1ull << 63)
static inline unsigned ppc_bin_of(uint32_t word)
{
	unsigned major = ppc_major(word);
	return major << 10 | (PPC_EXTENDED_MAJORS >> major & 1 ? ppc_minor(word) : 0);
}

#endif
