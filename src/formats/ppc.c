/* PowerPC opcode facts from the spec's TT6/TT6E macros, and disassembly through Capstone. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "ppc.h"
#include "tracemount/util.h"

#define LOAD(n)                                                                                    \
	{                                                                                          \
		PPC_MEMORY, PPC_MEMORY, PPC_LOAD, PPC_SIZE_FIXED, n                                \
	}
#define STORE(n)                                                                                   \
	{                                                                                          \
		PPC_MEMORY, PPC_MEMORY, PPC_STORE, PPC_SIZE_FIXED, n                               \
	}
#define SIZED(access, sizing)                                                                      \
	{                                                                                          \
		PPC_MEMORY, PPC_MEMORY, access, sizing, 0                                          \
	}
#define FLOW                                                                                       \
	{                                                                                          \
		PPC_FLOW, PPC_FLOW, PPC_NO_ACCESS, PPC_SIZE_NONE, 0                                \
	}
/* dcbx and icbi: COMPUTE in TT6, MEMORY with an address in TT6E */
#define CACHE(access)                                                                              \
	{                                                                                          \
		PPC_COMPUTE, PPC_MEMORY, access, PPC_SIZE_NONE, 0                                  \
	}
#define MEMEXT(access, sizing)                                                                     \
	{                                                                                          \
		PPC_MEMEXT, PPC_MEMEXT, access, sizing, 0                                          \
	}

const struct ppc_op ppc_primary_ops[64] = {
    [16] = FLOW,
    [17] = FLOW,
    [18] = FLOW,
    [32] = LOAD(4),
    [33] = LOAD(4),
    [34] = LOAD(1),
    [35] = LOAD(1),
    [36] = STORE(4),
    [37] = STORE(4),
    [38] = STORE(1),
    [39] = STORE(1),
    [40] = LOAD(2),
    [41] = LOAD(2),
    [42] = LOAD(2),
    [43] = LOAD(2),
    [44] = STORE(2),
    [45] = STORE(2),
    [48] = LOAD(4),
    [49] = LOAD(4),
    [50] = LOAD(8),
    [51] = LOAD(8),
    [52] = STORE(4),
    [53] = STORE(4),
    [54] = STORE(8),
    [55] = STORE(8),
    [62] = STORE(8),
    [46] = SIZED(PPC_LOAD, PPC_SIZE_MULTIPLE),	/* lmw */
    [47] = SIZED(PPC_STORE, PPC_SIZE_MULTIPLE), /* stmw */
    [58] = SIZED(PPC_LOAD, PPC_SIZE_DS),	/* ld, ldu, lwa */
};

const struct ppc_op ppc_op19[1024] = {
    [16] = FLOW,  /* bclr */
    [18] = FLOW,  /* rfid */
    [50] = FLOW,  /* rfi */
    [528] = FLOW, /* bcctr */
};

const struct ppc_op ppc_op31[1024] = {
    /* MEMORY_EXTENDED: the spec's third word is the XER (strings) or rB (streams) */
    [533] = MEMEXT(PPC_LOAD, PPC_SIZE_STRING_XER),  /* lswx */
    [661] = MEMEXT(PPC_STORE, PPC_SIZE_STRING_XER), /* stswx */
    [342] = MEMEXT(PPC_TOUCH, PPC_SIZE_NONE),	    /* dst, dstt */
    [374] = MEMEXT(PPC_TOUCH, PPC_SIZE_NONE),	    /* dstst, dststt */
    /* loads */
    [597] = SIZED(PPC_LOAD, PPC_SIZE_STRING_IMM), /* lswi */
    [119] = LOAD(1),				  /* lbzux */
    [87] = LOAD(1),				  /* lbzx */
    [631] = LOAD(8),				  /* lfdux */
    [599] = LOAD(8),				  /* lfdx */
    [567] = LOAD(4),				  /* lfsux */
    [535] = LOAD(4),				  /* lfsx */
    [375] = LOAD(2),				  /* lhaux */
    [343] = LOAD(2),				  /* lhax */
    [790] = LOAD(2),				  /* lhbrx */
    [311] = LOAD(2),				  /* lhzux */
    [279] = LOAD(2),				  /* lhzx */
    [20] = LOAD(4),				  /* lwarx */
    [534] = LOAD(4),				  /* lwbrx */
    [55] = LOAD(4),				  /* lwzux */
    [23] = LOAD(4),				  /* lwzx */
    [7] = LOAD(1),				  /* lvebx */
    [39] = LOAD(2),				  /* lvehx */
    [71] = LOAD(4),				  /* lvewx */
    [103] = LOAD(16),				  /* lvx */
    [359] = LOAD(16),				  /* lvxl */
    [310] = LOAD(4),				  /* eciwx */
    [21] = LOAD(8),				  /* ldx */
    [53] = LOAD(8),				  /* ldux */
    [84] = LOAD(8),				  /* ldarx */
    [341] = LOAD(4),				  /* lwax */
    [373] = LOAD(4),				  /* lwaux */
    /* stores */
    [438] = STORE(4),				   /* ecowx */
    [247] = STORE(1),				   /* stbux */
    [215] = STORE(1),				   /* stbx */
    [759] = STORE(8),				   /* stfdux */
    [727] = STORE(8),				   /* stfdx */
    [983] = STORE(4),				   /* stfiwx */
    [695] = STORE(4),				   /* stfsux */
    [663] = STORE(4),				   /* stfsx */
    [918] = STORE(2),				   /* sthbrx */
    [439] = STORE(2),				   /* sthux */
    [407] = STORE(2),				   /* sthx */
    [725] = SIZED(PPC_STORE, PPC_SIZE_STRING_IMM), /* stswi */
    [662] = STORE(4),				   /* stwbrx */
    [150] = STORE(4),				   /* stwcx. */
    [183] = STORE(4),				   /* stwux */
    [151] = STORE(4),				   /* stwx */
    [135] = STORE(1),				   /* stvebx */
    [167] = STORE(2),				   /* stvehx */
    [199] = STORE(4),				   /* stvewx */
    [231] = STORE(16),				   /* stvx */
    [487] = STORE(16),				   /* stvxl */
    [149] = STORE(8),				   /* stdx */
    [181] = STORE(8),				   /* stdux */
    [214] = STORE(8),				   /* stdcx. */
    /* cache-block operations */
    [758] = CACHE(PPC_ZERO),  /* dcba */
    [86] = CACHE(PPC_FLUSH),  /* dcbf */
    [470] = CACHE(PPC_FLUSH), /* dcbi */
    [54] = CACHE(PPC_FLUSH),  /* dcbst */
    [278] = CACHE(PPC_TOUCH), /* dcbt */
    [246] = CACHE(PPC_TOUCH), /* dcbtst */
    [1014] = CACHE(PPC_ZERO), /* dcbz */
    [982] = CACHE(PPC_FLUSH), /* icbi */
};

unsigned ppc_access_size(const struct ppc_op *op, uint32_t word, uint32_t xer)
{
	unsigned nb;
	switch (op->sizing) {
	case PPC_SIZE_FIXED: return op->size;
	case PPC_SIZE_MULTIPLE: return 4 * (32 - ((word >> 21) & 31));
	case PPC_SIZE_STRING_IMM: nb = (word >> 11) & 31; return nb ? nb : 32;
	case PPC_SIZE_STRING_XER: return xer & 0x7f;
	case PPC_SIZE_DS: return (word & 3) == 2 ? 4 : 8;
	default: return 0;
	}
}

static uint32_t gpr_of(const uint8_t *gpr_be, unsigned n)
{
	const uint8_t *p = gpr_be + 4 * n;
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

uint32_t ppc_effective_address(uint32_t word, const uint8_t *gpr_be)
{
	unsigned major = ppc_major(word), ra = (word >> 16) & 31, rb = (word >> 11) & 31;
	uint32_t base = ra ? gpr_of(gpr_be, ra) : 0;
	const struct ppc_op *op = ppc_op_of(word);
	if (op->tt6e_class != PPC_MEMORY && op->tt6e_class != PPC_MEMEXT)
		return 0;
	if (major == 58 || major == 62) /* DS form: the low two bits select the instruction */
		return base + (uint32_t)(int32_t)(int16_t)(word & 0xfffc);
	if (major != 31)
		return base + (uint32_t)(int32_t)(int16_t)(word & 0xffff);
	switch (ppc_minor(word)) {
	case 597:			     /* lswi */
	case 725: return base;		     /* stswi */
	case 342:			     /* dst */
	case 374: return gpr_of(gpr_be, ra); /* dstst: rA itself, rB is the control word */
	default: return base + gpr_of(gpr_be, rb);
	}
}

uint32_t ppc_next_pc(uint32_t word, uint32_t pc, const struct ppc_branch_regs *regs)
{
	unsigned major = ppc_major(word), minor = ppc_minor(word);
	unsigned bo = (word >> 21) & 31, bi = (word >> 16) & 31;
	uint32_t target;
	int counter_ok = 1;

	if (major == 18)
		return (word & 2 ? 0 : pc) + (uint32_t)((int32_t)((word & 0x03fffffc) << 6) >> 6);
	if (major == 16)
		target = (word & 2 ? 0 : pc) + (uint32_t)(int32_t)(int16_t)(word & 0xfffc);
	else if (major == 19 && minor == 16)
		target = regs->lr & ~3u;
	else if (major == 19 && minor == 528)
		target = regs->ctr & ~3u;
	else
		return pc + 4;
	if (!(bo & 4) && !(major == 19 && minor == 528)) /* bcctr never decrements */
		counter_ok = ((regs->ctr - 1) != 0) != ((bo >> 1) & 1);
	int cond_ok = (bo & 16) || ((regs->cr >> (31 - bi)) & 1) == ((bo >> 3) & 1);
	return counter_ok && cond_ok ? target : pc + 4;
}

/* Extended opcodes of major 31 by unit: FP loads and stores (lfsx ... stfiwx), AltiVec loads,
 * stores, permute-control loads and data streams (lvsl ... dss). */
static const uint16_t fp_x_forms[] = {535, 567, 599, 631, 663, 695, 727, 759, 983};
static const uint16_t vector_x_forms[] = {6,   38,  7,	 39,  71,  103, 359, 135,
					  167, 199, 231, 487, 342, 374, 822};

static int in_list(unsigned minor, const uint16_t *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == minor)
			return 1;
	return 0;
}

enum ppc_unit ppc_unit_of(uint32_t word)
{
	unsigned major = ppc_major(word), minor = ppc_minor(word);
	if (major == 4)
		return PPC_UNIT_VECTOR;
	if ((major >= 48 && major <= 55) || major == 59 || major == 63)
		return PPC_UNIT_FP;
	if (major != 31)
		return PPC_UNIT_OTHER;
	if (in_list(minor, fp_x_forms, ARRAY_SIZE(fp_x_forms)))
		return PPC_UNIT_FP;
	if (in_list(minor, vector_x_forms, ARRAY_SIZE(vector_x_forms)))
		return PPC_UNIT_VECTOR;
	return PPC_UNIT_OTHER;
}

/* Disassembly. Capstone handles are not shared between threads, so each thread opens its own,
 * with a direct-mapped cache of recent words in front of it. */

#define CACHE_ENTRIES 2048

struct dis_entry {
	uint32_t word;
	uint8_t len;	/* of text */
	uint8_t target; /* a branch: the 32-bit target follows text */
	uint8_t valid;
	char text[PPC_TEXT_WIDTH];
};

struct dis_thread {
	csh cs;
	cs_insn *insn;
	int cs_ok;
	struct dis_entry cache[CACHE_ENTRIES];
};

static pthread_key_t dis_key;
static pthread_once_t dis_once = PTHREAD_ONCE_INIT;

static void dis_thread_free(void *p)
{
	struct dis_thread *t = p;
	if (t->insn)
		cs_free(t->insn, 1);
	if (t->cs_ok)
		cs_close(&t->cs);
	free(t);
}

static void dis_key_create(void)
{
	pthread_key_create(&dis_key, dis_thread_free);
}

static struct dis_thread *dis_thread(void)
{
	pthread_once(&dis_once, dis_key_create);
	struct dis_thread *t = pthread_getspecific(dis_key);
	if (t)
		return t;
	if (!(t = calloc(1, sizeof(*t))))
		return NULL;
	if (cs_open(CS_ARCH_PPC, CS_MODE_32 | CS_MODE_BIG_ENDIAN, &t->cs) == CS_ERR_OK) {
		t->cs_ok = 1;
		t->insn = cs_malloc(t->cs);
	}
	if (pthread_setspecific(dis_key, t) != 0) {
		dis_thread_free(t);
		return NULL;
	}
	return t;
}

/* XO-form arithmetic, which Capstone 4 does not decode with OE set (addo, subfo, ...). */
static const struct {
	uint16_t xo;
	uint8_t two_operands; /* rD, rA */
	char name[8];
} xo_forms[] = {
    {8, 0, "subfc"},   {10, 0, "addc"},	   {40, 0, "subf"},   {104, 1, "neg"},	  {136, 0, "subfe"},
    {138, 0, "adde"},  {200, 1, "subfze"}, {202, 1, "addze"}, {232, 1, "subfme"}, {234, 1, "addme"},
    {235, 0, "mullw"}, {266, 0, "add"},	   {459, 0, "divwu"}, {491, 0, "divw"},
};

/* X-form loads and stores with rD/rS, rA, rB that Capstone 4 lacks. */
static const struct {
	uint16_t minor;
	char name[8];
} x_forms[] = {
    {533, "lswx"},
    {661, "stswx"},
    {310, "eciwx"},
    {438, "ecowx"},
};

/* tracemount's own text for words Capstone 4 cannot decode; 0 when there is none. */
static size_t own_disasm(uint32_t word, char *out, size_t cap)
{
	unsigned rd = (word >> 21) & 31, ra = (word >> 16) & 31, rb = (word >> 11) & 31;
	const char *dot = word & 1 ? "." : "";
	int n = 0;
	if (ppc_major(word) != 31)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(x_forms) && !n; i++)
		if (x_forms[i].minor == ppc_minor(word) && !(word & 1))
			n = snprintf(out, cap, "%s r%u, r%u, r%u", x_forms[i].name, rd, ra, rb);
	unsigned xo = (word >> 1) & 0x1ff;
	for (size_t i = 0; i < ARRAY_SIZE(xo_forms) && !n; i++) {
		if (xo_forms[i].xo != xo || !(word & 0x400))
			continue;
		if (xo_forms[i].two_operands)
			n = snprintf(out, cap, "%so%s r%u, r%u", xo_forms[i].name, dot, rd, ra);
		else
			n = snprintf(out, cap, "%so%s r%u, r%u, r%u", xo_forms[i].name, dot, rd, ra,
				     rb);
	}
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

static int is_direct_branch(uint32_t word)
{
	return ppc_major(word) == 16 || ppc_major(word) == 18;
}

#define PPC_EIEIO 0x7c0006acu

/* A bc whose BO ignores both the counter and the condition (BO & 0x14 == 0x14, such as the
 * `bcl 20, 31, $+4` that loads the PC): Capstone 4 prints it as bdnz, which it is not. */
static int is_branch_always_bc(uint32_t word)
{
	return ppc_major(word) == 16 && ((word >> 21) & 0x14) == 0x14;
}

static uint32_t branch_target(uint32_t word, uint32_t pc)
{
	int32_t disp = ppc_major(word) == 18 ? (int32_t)((word & 0x03fffffc) << 6) >> 6
					     : (int16_t)(word & 0xfffc);
	return (word & 2 ? 0 : pc) + (uint32_t)disp;
}

#define TARGET_MAX (sizeof("0xffffffff") - 1) /* the longest branch target */

/* Fills e for word. A direct branch keeps Capstone's text up to its target operand, which
 * ppc_disasm prints itself as a 32-bit address (Capstone 4 prints negative targets with 64
 * bits). */
static void fill_entry(struct dis_thread *t, struct dis_entry *e, uint32_t word)
{
	char buf[128]; /* any size over PPC_TEXT_WIDTH: a longer text is refused below */
	uint8_t bytes[4] = {word >> 24, word >> 16, word >> 8, word};
	const uint8_t *code = bytes;
	size_t size = 4, n = 0;
	uint64_t addr = 0;

	e->word = word;
	e->valid = 1;
	e->target = 0;
	if (is_branch_always_bc(word)) {
		n = (size_t)snprintf(buf, sizeof(buf), "bc%s%s %u, %u, ", word & 1 ? "l" : "",
				     word & 2 ? "a" : "", (word >> 21) & 31, (word >> 16) & 31);
		e->target = 1;
	} else if (word == PPC_EIEIO) { /* Capstone 4 gives Book E's name, mbar */
		n = (size_t)snprintf(buf, sizeof(buf), "eieio");
	} else if (t && t->insn && cs_disasm_iter(t->cs, &code, &size, &addr, t->insn)) {
		const char *ops = t->insn->op_str;
		if (is_direct_branch(word)) {
			const char *comma = strrchr(ops, ',');
			int keep = comma ? (int)(comma - ops) + 2 : 0;
			n = (size_t)snprintf(buf, sizeof(buf), "%s %.*s", t->insn->mnemonic, keep,
					     ops);
			e->target = 1;
		} else {
			n = (size_t)snprintf(buf, sizeof(buf), "%s%s%s", t->insn->mnemonic,
					     *ops ? " " : "", ops);
		}
	} else {
		n = own_disasm(word, buf, sizeof(buf));
	}
	if (n == 0 || n + (e->target ? TARGET_MAX : 0) > PPC_TEXT_WIDTH) {
		n = (size_t)snprintf(buf, sizeof(buf), ".long 0x%08x", word);
		e->target = 0;
	}
	memcpy(e->text, buf, n);
	e->len = (uint8_t)n;
}

size_t ppc_disasm(uint32_t word, uint32_t pc, char *out)
{
	struct dis_thread *t = dis_thread();
	struct dis_entry local, *e = &local;
	if (t) {
		e = &t->cache[(word * 0x9e3779b1u) >> 21]; /* 11 bits: CACHE_ENTRIES */
		if (!e->valid || e->word != word)
			fill_entry(t, e, word);
	} else {
		fill_entry(NULL, e, word); /* no memory for a handle: own table, or .long */
	}
	memcpy(out, e->text, e->len);
	if (!e->target)
		return e->len;
	char target[TARGET_MAX + 1];
	int n = snprintf(target, sizeof(target), "0x%x", branch_target(word, pc));
	memcpy(out + e->len, target, (size_t)n);
	return e->len + (size_t)n;
}

void ppc_bin_name(unsigned major, unsigned minor, char *out, size_t len)
{
	static const struct {
		uint16_t bin;
		char name[8];
	} branches[] = {
	    {16 << 10, "bc"},
	    {18 << 10, "b"},
	    {19 << 10 | 16, "bclr"},
	    {19 << 10 | 528, "bcctr"},
	};
	unsigned bin = major << 10 | minor;
	for (size_t i = 0; i < ARRAY_SIZE(branches); i++) {
		if (branches[i].bin == bin) {
			snprintf(out, len, "%s", branches[i].name);
			return;
		}
	}
	/* a representative word: distinct registers, so that no alias such as mr applies */
	/* Representative words: distinct registers, so that no alias such as mr applies; then
	 * zero fields (sync, dcbz), and the low bits set (stwcx. has Rc = 1, sc bit 30 = 1). */
	uint32_t base = major << 26 | minor << 1, regs = 3u << 21 | 4u << 16 | 5u << 11;
	const uint32_t tries[] = {base | regs, base, base | regs | 1, base | 2};
	char text[PPC_TEXT_WIDTH + 1];
	size_t n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(tries); i++) {
		n = ppc_disasm(tries[i], 0, text);
		if (n < 5 || strncmp(text, ".long", 5) != 0)
			break;
	}
	text[n] = '\0';
	if (strncmp(text, ".long", 5) == 0) {
		if (minor)
			snprintf(out, len, "op%u/%u", major, minor);
		else
			snprintf(out, len, "op%u", major);
		return;
	}
	size_t m = strcspn(text, " ");
	if (m && text[m - 1] == '.')
		m--;
	snprintf(out, len, "%.*s", (int)m, text);
}
