/* Writes a synthetic TT6 or TT6E trace (PowerPC, big-endian longwords) to standard output,
 * deterministically from a seed.
 *
 *   gen_tt6 [--format tt6|tt6e] [--records N | --bytes N | --steps N] [--seed S]
 *           [--truth FILE] [--clean] [--straddle K]
 *
 * The trace is the execution of a small program model: a main loop and eleven functions laid
 * out in memory (one of them at 0xffffc000, reached by a relative bl that wraps around 2^32),
 * with counted loops (mtctr/bdnz, taken and not taken), forward conditional branches, calls
 * (bl, and mtctr/bctrl), returns (blr, conditional beqlr), sc, every compute form the formats
 * care about (twi, the XO-form 'o' variants addo/mullwo/divwo, rlwinm, isync, mflr/mtlr...),
 * loads and stores of 1 to 128 bytes (lbz/lhz/lha/lwz/lfd/stfd/stw/stb/sth/lvx/stvx/lwarx/
 * stwcx./lmw/stmw/lswi/stswi and more), lswx/stswx with XER byte counts and dst/dstst with rB,
 * and the cache operations dcbz/dcba/dcbt/dcbtst/dcbf/dcbst/dcbi/icbi (COMPUTE, one word, in
 * TT6; MEMORY, opcode and effective address, in TT6E). Escape records of codes 0x00-0x05 and
 * the four sync codes (count 2) come before instructions; every code appears once in the first
 * steps. In TT6E every twi is followed by the synthetic pair (0x48000702 with next PC 0x700,
 * then rfi 0x4c000064 with next PC twi + 4).
 *
 * A dcbx or icbi has an effective address in the model, written the way doc/formats.md makes
 * the two formats convert into each other: (a) an escape 0x01 with the address just before it
 * (both formats); (b) TT6: an escape 0x11 with the address, TT6E: the address; (c) no address:
 * TT6, as Amber wrote it: nothing before it; TT6E: an escape 0x12 (no word, not a record) just
 * before it and the address word 0; (d) an escape 0x01 with another address, then as (b). No
 * dcbx follows an unrelated escape 0x01, whose address TT6 would lend it. So with the same
 * seed and --steps, the TT6E output equals the TT6 -> TT6E conversion of the TT6 output, and
 * the other way round.
 *
 * --records N  exactly N records, INITIAL_PC included (the last few may be nops)
 * --bytes N    stop at the first step boundary at or past N bytes (suffixes K, M, G)
 * --steps N    N program steps; a step is one instruction of the program, the escapes before
 *              it and TT6E's synthetic pair after a twi (default: --records 1000)
 * --truth FILE one tab-separated line per record, from the model, never from the bytes: what
 *              the generator wrote where, for the tests to check their TT6 model's reading
 *              (tests/integration/tt6_expect.py) against, and what no reading can know:
 *              KIND NUMBER PC WORD off=BYTE len=BYTES, then for an instruction mn=MNEMONIC
 *              (the base mnemonic) and for a dcbx or icbi case=a|b|c|d (how its address is
 *              written, above)
 * --clean      no escape of an unknown code (0x07), so the trace has no problem to report
 * --straddle K around every K-record boundary (a decoder's chunk), force a dcbx after its
 *              escape 0x01 or 0x11, or a twi and its synthetic pair, across the boundary */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>

#include "xorshift.h"

/* The code window: 0xffff8000 .. 0x00037fff, wrapping around 2^32. */
#define WIN_BASE  0xffff8000u
#define WIN_SIZE  0x40000u
#define MAIN_ADDR 0x00010000u
#define MAIN_SPAN 0x2000u
#define FUNC_ADDR 0x00012000u
#define FUNC_SPAN 0x800u
#define HIGH_ADDR 0xffffc000u
#define NFUNC	  12
#define NLEAF	  4 /* the last NLEAF functions call nothing */

enum op {
	OP_NONE,
	OP_COMPUTE,
	OP_SP_ADD,
	OP_MTCTR_LOOP,
	OP_MTCTR_CALL,
	OP_TWI,
	OP_MEM,
	OP_MEMEXT_STR,
	OP_MEMEXT_DST,
	OP_DCBX,
	OP_BDNZ,
	OP_BCOND,
	OP_BL,
	OP_BCTRL,
	OP_BLR,
	OP_BCONDLR,
	OP_B,
	OP_SC,
};

enum region { R_ARRAY, R_SP, R_SP_UPDATE, R_GLOBAL, R_RANDOM };
enum form { F_D, F_X, F_MULT, F_STRI, F_DS };

struct insn {
	uint32_t word;
	uint32_t target; /* branch target; MTCTR_CALL: the callee */
	uint32_t base;	 /* memory: region base */
	uint32_t cursor; /* memory: walking offset */
	uint16_t stride;
	uint8_t op, region, align;
	const char *mn;
};

static struct insn code[WIN_SIZE / 4];

static struct insn *at(uint32_t addr)
{
	return &code[((addr - WIN_BASE) & (WIN_SIZE - 1)) >> 2];
}

struct memdef {
	const char *mn;
	uint8_t major;
	uint16_t xo;
	uint8_t rc, size, form; /* size: the bytes moved, which the address is aligned to */
};

/* Loads and stores with the bytes each moves (0: from rT for lmw/stmw, from NB for lswi/stswi). */
static const struct memdef memdefs[] = {
    {"lbz", 34, 0, 0, 1, F_D},	     {"lbzu", 35, 0, 0, 1, F_D},
    {"lhz", 40, 0, 0, 2, F_D},	     {"lha", 42, 0, 0, 2, F_D},
    {"lhau", 43, 0, 0, 2, F_D},	     {"lwz", 32, 0, 0, 4, F_D},
    {"lwzu", 33, 0, 0, 4, F_D},	     {"lfs", 48, 0, 0, 4, F_D},
    {"lfd", 50, 0, 0, 8, F_D},	     {"lfdu", 51, 0, 0, 8, F_D},
    {"lmw", 46, 0, 0, 0, F_MULT},    {"ld", 58, 0, 0, 8, F_DS},
    {"stb", 38, 0, 0, 1, F_D},	     {"sth", 44, 0, 0, 2, F_D},
    {"stw", 36, 0, 0, 4, F_D},	     {"stwu", 37, 0, 0, 4, F_D},
    {"stfs", 52, 0, 0, 4, F_D},	     {"stfd", 54, 0, 0, 8, F_D},
    {"stfdu", 55, 0, 0, 8, F_D},     {"stmw", 47, 0, 0, 0, F_MULT},
    {"std", 62, 0, 0, 8, F_DS},	     {"lbzx", 31, 87, 0, 1, F_X},
    {"lhzx", 31, 279, 0, 2, F_X},    {"lhbrx", 31, 790, 0, 2, F_X},
    {"lwzx", 31, 23, 0, 4, F_X},     {"lwbrx", 31, 534, 0, 4, F_X},
    {"lwarx", 31, 20, 0, 4, F_X},    {"ldx", 31, 21, 0, 8, F_X},
    {"lfdx", 31, 599, 0, 8, F_X},    {"lvebx", 31, 7, 0, 1, F_X},
    {"lvehx", 31, 39, 0, 2, F_X},    {"lvewx", 31, 71, 0, 4, F_X},
    {"lvx", 31, 103, 0, 16, F_X},    {"lvxl", 31, 359, 0, 16, F_X},
    {"eciwx", 31, 310, 0, 4, F_X},   {"stbx", 31, 215, 0, 1, F_X},
    {"sthx", 31, 407, 0, 2, F_X},    {"sthbrx", 31, 918, 0, 2, F_X},
    {"stwx", 31, 151, 0, 4, F_X},    {"stwcx.", 31, 150, 1, 4, F_X},
    {"stfiwx", 31, 983, 0, 4, F_X},  {"stfdx", 31, 727, 0, 8, F_X},
    {"stvebx", 31, 135, 0, 1, F_X},  {"stvewx", 31, 199, 0, 4, F_X},
    {"stvx", 31, 231, 0, 16, F_X},   {"stvxl", 31, 487, 0, 16, F_X},
    {"ecowx", 31, 438, 0, 4, F_X},   {"stdx", 31, 149, 0, 8, F_X},
    {"lswi", 31, 597, 0, 0, F_STRI}, {"stswi", 31, 725, 0, 0, F_STRI},
};
#define NMEMDEFS (sizeof(memdefs) / sizeof(memdefs[0]))

/* Cache operations. */
static const struct {
	const char *mn;
	uint16_t xo;
} cachedefs[] = {
    {"dcbz", 1014}, {"dcba", 758}, {"dcbt", 278}, {"dcbtst", 246},
    {"dcbf", 86},   {"dcbst", 54}, {"dcbi", 470}, {"icbi", 982},
};
#define NCACHEDEFS (sizeof(cachedefs) / sizeof(cachedefs[0]))

/* Compute words: base mnemonic as named from primary and extended opcode. */
static const struct {
	uint32_t word;
	const char *mn;
} computedefs[] = {
    {0x38630001, "addi"},   /* addi r3, r3, 1 */
    {0x7c642a14, "add"},    /* add r3, r4, r5 */
    {0x7c640e14, "add"},    /* addo r3, r4, r1 */
    {0x7c640e15, "add"},    /* addo. r3, r4, r1 */
    {0x7ca63dd6, "mullw"},  /* mullwo r5, r6, r7 */
    {0x7d0957d6, "divw"},   /* divwo r8, r9, r10 */
    {0x5483103a, "rlwinm"}, /* rlwinm r3, r4, 2, 0, 29 */
    {0x7c832378, "or"},	    /* mr r3, r4 */
    {0x2c030000, "cmpi"},   /* cmpwi r3, 0 */
    {0x60000000, "ori"},    /* nop */
    {0x3d201000, "addis"},  /* lis r9, 0x1000 */
    {0x7c0004ac, "sync"},   /* sync */
    {0x4c00012c, "isync"},  /* isync: major 19, not a branch */
    {0xfc20102a, "fadd"},   /* fadd f1, f0, f2 */
    {0x7c6802a6, "mfspr"},  /* mflr r3 */
};
#define NCOMPUTEDEFS (sizeof(computedefs) / sizeof(computedefs[0]))

static const uint32_t twi_words[] = {0x0c830000, 0x0d800010, 0x0fe00000, 0x0c430007};
#define UNKNOWN_WORD 0x07ffffffu /* major 1: no PowerPC instruction */

/* ---- output ---- */

static uint8_t *obuf;
static size_t olen;
static const size_t ocap = 1 << 22;
static uint64_t oflushed, nrec;
static FILE *truth;
static char *tbuf;
static size_t tlen, tcap = 1 << 20;
static int tt6e, clean;

static void w32(uint32_t v)
{
	uint8_t *p = obuf + olen;
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	olen += 4;
}

static uint64_t offset_now(void)
{
	return oflushed + olen;
}

__attribute__((format(printf, 1, 2))) static void tput(const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(tbuf + tlen, tcap - tlen, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < tcap - tlen) {
			tlen += (size_t)n;
			return;
		}
		tcap *= 2;
		tbuf = realloc(tbuf, tcap);
		if (!tbuf) {
			perror("gen_tt6");
			exit(1);
		}
	}
}

static void flush_all(void)
{
	if (olen && fwrite(obuf, 1, olen, stdout) != olen) {
		perror("gen_tt6: write");
		exit(1);
	}
	oflushed += olen;
	olen = 0;
	if (truth && tlen && fwrite(tbuf, 1, tlen, truth) != tlen) {
		perror("gen_tt6: truth");
		exit(1);
	}
	tlen = 0;
}

/* ---- the machine ---- */

static uint32_t pc, sp = 0x7fffe000, ctr;
static uint64_t num;
static uint32_t lstack[64];
static int ldepth, after_return;
static uint32_t sync_count[4];

static void head(const char *kind, uint32_t word, uint64_t off, unsigned len)
{
	tput("%s\t%llu\t%08x\t%08x\toff=%llu\tlen=%u", kind, (unsigned long long)num, pc, word,
	     (unsigned long long)off, len);
}

static void emit_compute(uint32_t word, const char *mn, const char *extra)
{
	uint64_t off = offset_now();
	w32(word);
	nrec++;
	if (truth) {
		head("compute", word, off, 4);
		tput("\tmn=%s%s\n", mn, extra ? extra : "");
	}
	num++;
	pc += 4;
}

static void emit_flow(uint32_t word, uint32_t next, const char *mn)
{
	uint64_t off = offset_now();
	w32(word);
	w32(next);
	nrec++;
	if (truth) {
		head("flow", word, off, 8);
		tput("\tmn=%s\n", mn);
	}
	num++;
	pc = next;
}

static void emit_memory(uint32_t word, uint32_t ea, const char *mn, const char *extra)
{
	uint64_t off = offset_now();
	w32(word);
	w32(ea);
	nrec++;
	if (truth) {
		head("memory", word, off, 8);
		tput("\tmn=%s%s\n", mn, extra ? extra : "");
	}
	num++;
	pc += 4;
}

static void emit_memext(uint32_t word, uint32_t ea, uint32_t third, const char *mn)
{
	uint64_t off = offset_now();
	w32(word);
	w32(ea);
	w32(third);
	nrec++;
	if (truth) {
		head("memext", word, off, 12);
		tput("\tmn=%s\n", mn);
	}
	num++;
	pc += 4;
}

static void emit_escape(uint32_t ecode, unsigned n, const uint32_t *w)
{
	uint64_t off = offset_now();
	uint32_t word = ecode << 16 | n;
	w32(word);
	for (unsigned i = 0; i < n; i++)
		w32(w[i]);
	nrec++;
	if (!truth)
		return;
	int sync = (ecode == 0x20 || ecode == 0x21 || ecode == 0x30 || ecode == 0x31) && n == 2;
	head(sync ? "sync" : "escape", word, off, 4 + 4 * n);
	tput("\n");
}

static void emit_sync(uint32_t ecode, unsigned which)
{
	uint32_t w[2] = {0x00300000u + 0x40u * which, 0};
	if (ecode == 0x20 || ecode == 0x21)
		sync_count[which]++;
	w[1] = sync_count[which];
	emit_escape(ecode, 2, w);
}

/* An informational escape (codes 0x00-0x05); 0x01 is not used when no01. */
static void emit_info_escape(uint64_t r, int no01)
{
	uint32_t w[3] = {(uint32_t)(r >> 32), (uint32_t)(r >> 8) | 0x100u, 0xc0ffee00u};
	unsigned c = (unsigned)(r >> 12) % 6;
	if (c == 1 && no01)
		c = 4;
	switch (c) {
	case 0: /* segment register: number and value */
		w[0] = (uint32_t)(r >> 16) & 15;
		emit_escape(0x00, 2, w);
		break;
	case 1: emit_escape(0x01, 1, w); break;
	case 2: emit_escape(0x02, (r >> 20) & 1, w); break; /* CR, sometimes no word */
	case 3: emit_escape(0x03, 1, w); break;
	case 4: emit_escape(0x04, 1, w); break;
	default: emit_escape(0x05, (r >> 21) & 1 ? 3 : 1, w); break;
	}
}

static uint32_t site_ea(struct insn *ins)
{
	uint32_t d = (uint32_t)(int32_t)(int16_t)(ins->word & 0xffff);
	uint32_t ea;
	switch (ins->region) {
	case R_SP: return sp + d;
	case R_SP_UPDATE: sp += d; return sp;
	case R_GLOBAL: return ins->base + ((uint32_t)rng() & 0xff0 & ~(uint32_t)(ins->align - 1));
	case R_RANDOM: {
		uint64_t r = rng();
		ea = (uint32_t)(r >> 32);
		if (ins->align > 1 && (r & 7))
			ea &= ~(uint32_t)(ins->align - 1);
		return ea;
	}
	default: ins->cursor = (ins->cursor + ins->stride) & 0xffff; return ins->base + ins->cursor;
	}
}

static void push(uint32_t a)
{
	if (ldepth == 64) {
		fprintf(stderr, "gen_tt6: call stack overflow (model bug)\n");
		exit(3);
	}
	lstack[ldepth++] = a;
}

static uint32_t pop(void)
{
	if (!ldepth) {
		fprintf(stderr, "gen_tt6: return with an empty call stack (model bug)\n");
		exit(3);
	}
	return lstack[--ldepth];
}

static void exec_twi(uint32_t word)
{
	uint32_t twi_pc = pc;
	emit_compute(word, "twi", NULL);
	if (tt6e) {
		emit_flow(0x48000702, 0x00000700, "b");
		emit_flow(0x4c000064, twi_pc + 4, "rfi");
	}
}

/* A dcbx or icbi with effective address ea, written as case 'a' to 'd' (see the top). */
static void exec_dcbx(const struct insn *ins, uint32_t ea, int cas)
{
	char extra[16];
	uint32_t other = ea ^ 0x40u;
	if (cas == 'c') {
		ea = 0;
		if (tt6e) /* escape 0x12: no record, the model knows it by case=c */
			w32(0x12u << 16);
	}
	if (cas == 'a')
		emit_escape(0x01, 1, &ea);
	if (cas == 'd')
		emit_escape(0x01, 1, &other);
	if (!tt6e) {
		if (cas == 'b' || cas == 'd')
			emit_escape(0x11, 1, &ea);
		snprintf(extra, sizeof(extra), "\tcase=%c", cas);
		emit_compute(ins->word, ins->mn, extra);
	} else {
		snprintf(extra, sizeof(extra), "\tcase=%c", cas);
		emit_memory(ins->word, ea, ins->mn, extra);
	}
}

static int dcbx_case(const struct insn *ins, uint64_t r)
{
	(void)ins;
	return "abcd"[r % 4];
}

/* Escapes still to show once, in the first steps. */
static const uint32_t forced_codes[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05,
					0x20, 0x21, 0x30, 0x31, 0x07};
static unsigned forced_next;

/* One program step: the escapes before the instruction at pc, the instruction, TT6E's pair. */
static void step(void)
{
	struct insn *ins = at(pc);
	uint64_t r = rng();
	int is_dcbx = ins->op == OP_DCBX;
	uint32_t next;

	if (forced_next < sizeof(forced_codes) / sizeof(forced_codes[0])) {
		uint32_t c = forced_codes[forced_next];
		uint32_t w[2] = {0x00fff200u + 4 * forced_next, 0x1234u};
		if (c == 0x07 && clean) {
			forced_next++;
		} else if (c >= 0x20) {
			emit_sync(c, forced_next & 3);
			forced_next++;
		} else if (!(c == 0x01 && is_dcbx)) {
			emit_escape(c, c == 0x07 ? 2 : 1, w);
			forced_next++;
		}
	}
	if ((r & 63) == 0)
		emit_info_escape(rng(), is_dcbx);
	if (!clean && (r >> 6) % 30011 == 0) {
		uint32_t w[2] = {(uint32_t)(r >> 20), 0x07070707u};
		emit_escape(0x07, 2, w);
	}
	if ((ins->op == OP_BL || ins->op == OP_BCTRL) && ((r >> 24) & 15) == 0)
		emit_sync((r >> 28) & 1 ? 0x21 : 0x20, (r >> 30) & 3);
	if (after_return && ((r >> 32) & 15) == 0)
		emit_sync((r >> 36) & 1 ? 0x31 : 0x30, (r >> 38) & 3);
	after_return = 0;

	switch (ins->op) {
	case OP_COMPUTE: emit_compute(ins->word, ins->mn, NULL); break;
	case OP_SP_ADD:
		sp += (uint32_t)(int32_t)(int16_t)(ins->word & 0xffff);
		emit_compute(ins->word, ins->mn, NULL);
		break;
	case OP_MTCTR_LOOP:
		ctr = 1 + (uint32_t)(rng() % 6);
		emit_compute(ins->word, ins->mn, NULL);
		break;
	case OP_MTCTR_CALL:
		ctr = ins->target;
		emit_compute(ins->word, ins->mn, NULL);
		break;
	case OP_TWI: exec_twi(ins->word); break;
	case OP_MEM: {
		emit_memory(ins->word, site_ea(ins), ins->mn, NULL);
		break;
	}
	case OP_MEMEXT_STR: {
		static const uint32_t high[4] = {0, 0x20000000, 0xe0000000, 0x0000ff80};
		uint64_t q = rng();
		uint32_t ea = site_ea(ins);
		unsigned n = 1 + (unsigned)(q % 127);
		emit_memext(ins->word, ea, high[(q >> 8) & 3] | n, ins->mn);
		break;
	}
	case OP_MEMEXT_DST: {
		uint32_t ea = site_ea(ins);
		emit_memext(ins->word, ea, (uint32_t)(rng() >> 17), ins->mn);
		break;
	}
	case OP_DCBX: {
		uint32_t ea = site_ea(ins);
		exec_dcbx(ins, ea, dcbx_case(ins, rng()));
		break;
	}
	case OP_BDNZ:
		ctr--;
		emit_flow(ins->word, ctr ? ins->target : pc + 4, "bc");
		break;
	case OP_BCOND: emit_flow(ins->word, rng() & 1 ? ins->target : pc + 4, "bc"); break;
	case OP_BL:
		push(pc + 4);
		emit_flow(ins->word, ins->target, "b");
		break;
	case OP_BCTRL:
		push(pc + 4);
		emit_flow(ins->word, ctr, "bcctr");
		break;
	case OP_BLR:
		after_return = 1;
		emit_flow(ins->word, pop(), "bclr");
		break;
	case OP_BCONDLR:
		if (rng() & 1) {
			after_return = 1;
			next = pop();
		} else {
			next = pc + 4;
		}
		emit_flow(ins->word, next, "bclr");
		break;
	case OP_B: emit_flow(ins->word, ins->target, "b"); break;
	case OP_SC: emit_flow(ins->word, pc + 4, "sc"); break;
	default: fprintf(stderr, "gen_tt6: no instruction at %08x (model bug)\n", pc); exit(3);
	}
}

/* --straddle: an injected dcbx or twi at pc, then `b .-4` back to pc, with the escapes that
 * belong to the dcbx just before it. */
static struct insn inj_dcbz = {.word = 0x7c001fec, .mn = "dcbz", .op = OP_DCBX};

static void inject(int variant)
{
	uint32_t back = pc;
	switch (variant) {
	case 0: exec_dcbx(&inj_dcbz, 0x10800000u + 32u * (uint32_t)(nrec & 0xfff), 'a'); break;
	case 1: exec_dcbx(&inj_dcbz, 0x10900000u + 32u * (uint32_t)(nrec & 0xfff), 'b'); break;
	case 4: exec_dcbx(&inj_dcbz, 0x10a00000u + 32u * (uint32_t)(nrec & 0xfff), 'd'); break;
	default: exec_twi(0x0c830000); break;
	}
	emit_flow(0x4bfffffc, back, "b");
}

/* ---- building the program ---- */

static uint32_t faddr[NFUNC];
static uint32_t bp; /* build pointer */

static struct insn *put(uint32_t word, int op, const char *mn)
{
	struct insn *ins = at(bp);
	if (ins->op != OP_NONE) {
		fprintf(stderr, "gen_tt6: code overlap at %08x (model bug)\n", bp);
		exit(3);
	}
	memset(ins, 0, sizeof(*ins));
	ins->word = word;
	ins->op = (uint8_t)op;
	ins->mn = mn;
	bp += 4;
	return ins;
}

static uint32_t rel(uint32_t target, uint32_t from, uint32_t mask)
{
	return (target - from) & mask;
}

static void put_data_site(struct insn *ins, unsigned align)
{
	uint64_t r = rng();
	ins->align = (uint8_t)align;
	switch (r % 8) {
	case 0: ins->region = R_GLOBAL; break;
	case 1: ins->region = R_RANDOM; break;
	default: ins->region = R_ARRAY; break;
	}
	ins->base = 0x10000000u + (uint32_t)((r >> 8) % 16) * 0x100000u;
	if (ins->region == R_GLOBAL)
		ins->base = 0x00200000u + (uint32_t)((r >> 16) % 4) * 0x1000u;
	ins->stride = (uint16_t)(align * (1 + (r >> 24) % 4));
	if ((r >> 30) % 5 == 0 && align <= 4)
		ins->stride = (uint16_t)(ins->stride + 1); /* unaligned walk */
	ins->cursor = (uint32_t)(r >> 40) & 0xfff0;
}

static void build_mem(const struct memdef *m)
{
	uint64_t r = rng();
	uint32_t rt = 3 + (uint32_t)(r % 10), ra = 3 + (uint32_t)((r >> 8) % 10);
	uint32_t rb = 3 + (uint32_t)((r >> 16) % 10), word;
	unsigned align = m->size ? m->size : 4;
	int split = 0; /* lmw/stmw, lswi/stswi: word-aligned, the din lists them word by word */
	switch (m->form) {
	case F_X:
		word = 31u << 26 | rt << 21 | ra << 16 | rb << 11 | (uint32_t)m->xo << 1 | m->rc;
		break;
	case F_DS:
		word =
		    (uint32_t)m->major << 26 | rt << 21 | ra << 16 | ((uint32_t)(r >> 24) & 0xf8);
		break;
	case F_MULT: {
		static const uint32_t rts[] = {0, 14, 20, 25, 28, 30, 31};
		rt = rts[(r >> 24) % 7];
		word =
		    (uint32_t)m->major << 26 | rt << 21 | ra << 16 | ((uint32_t)(r >> 32) & 0xfc);
		split = 1;
		break;
	}
	case F_STRI: {
		uint32_t nb = (uint32_t)(r >> 24) % 32; /* 0 means 32 */
		word = 31u << 26 | rt << 21 | ra << 16 | nb << 11 | (uint32_t)m->xo << 1;
		split = 1;
		break;
	}
	default:
		word = (uint32_t)m->major << 26 | rt << 21 | ra << 16 |
		       (((uint32_t)(r >> 32) & 0x7ff) & ~(align - 1));
		break;
	}
	if (align > 16)
		align = 16;
	struct insn *ins = put(word, OP_MEM, m->mn);
	put_data_site(ins, split || align > 8 ? (align > 8 ? 16 : 4) : align);
	if (split || align == 16)
		ins->stride = (uint16_t)((ins->stride + 15) & ~15u);
	if (split && ins->region == R_RANDOM)
		ins->region = R_ARRAY; /* aligned: din lists the bytes word by word */
}

static void build_memext(unsigned which)
{
	static const struct {
		const char *mn;
		uint16_t xo;
		int op;
	} defs[4] = {{"lswx", 533, OP_MEMEXT_STR},
		     {"stswx", 661, OP_MEMEXT_STR},
		     {"dst", 342, OP_MEMEXT_DST},
		     {"dstst", 374, OP_MEMEXT_DST}};
	uint64_t r = rng();
	uint32_t rt = 3 + (uint32_t)(r % 10), ra = 3 + (uint32_t)((r >> 8) % 10);
	uint32_t rb = (uint32_t)((r >> 16) % 10);
	which %= 4;
	if (defs[which].op == OP_MEMEXT_DST)
		rt = (uint32_t)((r >> 24) & 0x13); /* T bit and STRM */
	struct insn *ins =
	    put(31u << 26 | rt << 21 | ra << 16 | rb << 11 | (uint32_t)defs[which].xo << 1,
		defs[which].op, defs[which].mn);
	put_data_site(ins, 4);
	ins->stride = (uint16_t)((ins->stride + 3) & ~3u);
	if (ins->region == R_RANDOM)
		ins->region = R_ARRAY; /* aligned: din lists string bytes word by word */
}

static void build_cache(unsigned which)
{
	uint64_t r = rng();
	which %= NCACHEDEFS;
	uint32_t ra = (uint32_t)(r % 8), rb = 3 + (uint32_t)((r >> 8) % 10);
	struct insn *ins = put(31u << 26 | ra << 16 | rb << 11 | (uint32_t)cachedefs[which].xo << 1,
			       OP_DCBX, cachedefs[which].mn);
	ins->region = R_ARRAY;
	ins->align = 32;
	ins->base = 0x10000000u + (uint32_t)((r >> 16) % 16) * 0x100000u;
	ins->stride = 32;
	ins->cursor = 0x20;
}

static void build_compute(void)
{
	uint64_t r = rng();
	unsigned k = (unsigned)(r % NCOMPUTEDEFS);
	put(computedefs[k].word, OP_COMPUTE, computedefs[k].mn);
}

/* One straight-line instruction (no branch): what loop bodies and skipped blocks hold. */
static void build_simple(void)
{
	uint64_t r = rng() % 100;
	if (r < 40)
		build_compute();
	else if (r < 80)
		build_mem(&memdefs[rng() % NMEMDEFS]);
	else if (r < 88)
		build_memext((unsigned)rng());
	else if (r < 96)
		build_cache((unsigned)rng());
	else
		put(twi_words[rng() % 4], OP_TWI, "twi");
}

static void build_loop(void)
{
	put(0x7d2903a6, OP_MTCTR_LOOP, "mtspr"); /* mtctr r9 */
	uint32_t start = bp;
	unsigned n = 1 + (unsigned)(rng() % 5);
	for (unsigned i = 0; i < n; i++)
		build_simple();
	struct insn *b = put(0x42000000u | rel(start, bp, 0xfffc), OP_BDNZ, "bc");
	b->target = start;
}

static void build_if(void)
{
	put(0x2c030000, OP_COMPUTE, "cmpi"); /* cmpwi r3, 0 */
	uint32_t at_branch = bp;
	struct insn *b = put(0, OP_BCOND, "bc");
	unsigned n = 1 + (unsigned)(rng() % 3);
	for (unsigned i = 0; i < n; i++)
		build_simple();
	b->target = bp;
	b->word = (rng() & 1 ? 0x41820000u : 0x40820000u) | rel(bp, at_branch, 0xfffc);
}

static void build_call(unsigned callee)
{
	uint32_t from = bp;
	struct insn *b = put(0x48000001u | rel(faddr[callee], from, 0x03fffffc), OP_BL, "b");
	b->target = faddr[callee];
}

static void build_icall(unsigned callee)
{
	struct insn *m = put(0x7d8903a6, OP_MTCTR_CALL, "mtspr"); /* mtctr r12 */
	m->target = faddr[callee];
	put(0x4e800421, OP_BCTRL, "bcctr"); /* bctrl */
}

static void build_jump(void)
{
	struct insn *b = put(0x48000008, OP_B, "b"); /* b .+8 */
	b->target = bp + 4;
	put(0x7fe00008, OP_COMPUTE, "tw"); /* never executed */
}

static void build_condret(void)
{
	put(0x2c030000, OP_COMPUTE, "cmpi");
	put(0x4d820020, OP_BCONDLR, "bclr"); /* beqlr */
}

static void build_stmt(unsigned f, int leaf)
{
	uint64_t r = rng() % 100;
	if (r < 25)
		build_compute();
	else if (r < 50)
		build_mem(&memdefs[rng() % NMEMDEFS]);
	else if (r < 54)
		build_memext((unsigned)rng());
	else if (r < 59)
		build_cache((unsigned)rng());
	else if (r < 61)
		put(twi_words[rng() % 4], OP_TWI, "twi");
	else if (r < 72)
		build_loop();
	else if (r < 82)
		build_if();
	else if (r < 93 && leaf)
		build_compute();
	else if (r < 90)
		build_call(f + 1 + (unsigned)(rng() % (NFUNC - 1 - f)));
	else if (r < 93)
		build_icall(f + 1 + (unsigned)(rng() % (NFUNC - 1 - f)));
	else if (r < 94)
		put(0x44000002, OP_SC, "sc");
	else if (r < 96)
		build_jump();
	else if (r < 99 && leaf)
		build_condret();
	else if (r < 99)
		build_compute();
	else
		put(UNKNOWN_WORD, OP_COMPUTE, "?");
}

static void build_function(unsigned f)
{
	int leaf = f >= NFUNC - NLEAF;
	bp = faddr[f];
	if (!leaf) {
		put(0x7c0802a6, OP_COMPUTE, "mfspr");		 /* mflr r0 */
		struct insn *s = put(0x90010004, OP_MEM, "stw"); /* stw r0, 4(r1) */
		s->region = R_SP;
		s = put(0x9421ffe0, OP_MEM, "stwu"); /* stwu r1, -32(r1) */
		s->region = R_SP_UPDATE;
	}
	uint32_t body = bp;
	if (f == 0) {
		/* Every form once, so that even a short trace holds each. */
		for (unsigned i = 0; i < NMEMDEFS; i++)
			build_mem(&memdefs[i]);
		for (unsigned i = 0; i < 4; i++)
			build_memext(i);
		for (unsigned i = 0; i < NCACHEDEFS; i++)
			build_cache(i);
		for (unsigned i = 0; i < NCOMPUTEDEFS; i++)
			put(computedefs[i].word, OP_COMPUTE, computedefs[i].mn);
		put(twi_words[0], OP_TWI, "twi");
		put(UNKNOWN_WORD, OP_COMPUTE, "?");
		build_loop();
		build_if();
		for (unsigned g = 1; g < NFUNC; g++)
			build_call(g);
		build_icall(NFUNC - 1);
		put(0x44000002, OP_SC, "sc");
		build_jump();
	}
	if (leaf)
		build_condret();
	unsigned n = (f == 0 ? 16 : 4) + (unsigned)(rng() % 10);
	for (unsigned i = 0; i < n; i++)
		build_stmt(f, leaf);
	if (f == 0) {
		struct insn *b = put(0x48000000u | rel(body, bp, 0x03fffffc), OP_B, "b");
		b->target = body;
	} else if (!leaf) {
		struct insn *s = put(0x80010024, OP_MEM, "lwz"); /* lwz r0, 36(r1) */
		s->region = R_SP;
		put(0x38210020, OP_SP_ADD, "addi");   /* addi r1, r1, 32 */
		put(0x7c0803a6, OP_COMPUTE, "mtspr"); /* mtlr r0 */
		put(0x4e800020, OP_BLR, "bclr");      /* blr */
	} else {
		put(0x4e800020, OP_BLR, "bclr");
	}
	uint32_t span = f == 0 ? MAIN_SPAN : FUNC_SPAN;
	if (bp - faddr[f] > span) {
		fprintf(stderr, "gen_tt6: function %u too long (model bug)\n", f);
		exit(3);
	}
}

static unsigned long long parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);
	switch (*end) {
	case 'k':
	case 'K': v <<= 10; break;
	case 'm':
	case 'M': v <<= 20; break;
	case 'g':
	case 'G': v <<= 30; break;
	default: break;
	}
	return v;
}

static void usage(void)
{
	fprintf(stderr, "usage: gen_tt6 [--format tt6|tt6e] [--records N | --bytes N | --steps N] "
			"[--seed S] [--truth FILE] [--clean] [--straddle K]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"format", required_argument, 0, 'f'},
					     {"records", required_argument, 0, 'n'},
					     {"bytes", required_argument, 0, 'b'},
					     {"steps", required_argument, 0, 'S'},
					     {"seed", required_argument, 0, 's'},
					     {"truth", required_argument, 0, 't'},
					     {"clean", no_argument, 0, 'c'},
					     {"straddle", required_argument, 0, 'k'},
					     {0, 0, 0, 0}};
	unsigned long long limit = 1000, seed = 0, straddle = 0;
	char mode = 'n';
	const char *truth_path = NULL;
	int c;
	while ((c = getopt_long(argc, argv, "f:n:b:S:s:t:ck:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "tt6"))
				tt6e = 0;
			else if (!strcmp(optarg, "tt6e"))
				tt6e = 1;
			else
				usage();
			break;
		case 'n':
		case 'b':
		case 'S':
			mode = (char)c;
			limit = parse_size(optarg);
			break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 't': truth_path = optarg; break;
		case 'c': clean = 1; break;
		case 'k': straddle = strtoull(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (optind != argc || (straddle && straddle < 32))
		usage();
	rng_state ^= seed * 0xbf58476d1ce4e5b9ull;
	if (!rng_state)
		rng_state = 1;
	obuf = malloc(ocap);
	tbuf = malloc(tcap);
	if (!obuf || !tbuf) {
		perror("gen_tt6");
		return 1;
	}
	if (truth_path) {
		truth = fopen(truth_path, "w");
		if (!truth) {
			perror(truth_path);
			return 1;
		}
	}

	for (unsigned f = 0; f < NFUNC; f++)
		faddr[f] = f == 0	    ? MAIN_ADDR
			   : f == NFUNC - 1 ? HIGH_ADDR
					    : FUNC_ADDR + (f - 1) * FUNC_SPAN;
	for (unsigned f = 0; f < NFUNC; f++)
		build_function(f);

	pc = MAIN_ADDR;
	if (mode == 'n' && limit == 0)
		return 0;
	w32(pc);
	nrec = 1;
	if (truth)
		tput("initial_pc\t0\t%08x\t%08x\toff=0\tlen=4\n", pc, pc);

	unsigned long long steps = 0, forced_chunk = ~0ull;
	for (;;) {
		if (mode == 'n' && nrec >= limit)
			break;
		if (mode == 'b' && offset_now() >= limit)
			break;
		if (mode == 'S' && steps >= limit)
			break;
		if (olen > ocap - 4096 || tlen > (1u << 20))
			flush_all();
		size_t save_olen = olen, save_tlen = tlen;
		uint64_t save_nrec = nrec, save_num = num;
		uint32_t save_pc = pc;
		int done = 0;
		if (straddle) {
			unsigned long long chunk = nrec / straddle, rin = nrec % straddle;
			int variant = (int)(chunk % 5);
			unsigned long long want = straddle - (variant == 3 ? 2 : 1);
			if (chunk != forced_chunk && rin <= want && want - rin <= 12) {
				if (rin < want) {
					uint32_t w = 0;
					emit_escape(0x02, 0, &w); /* filler: moves no PC */
				} else {
					inject(variant);
					forced_chunk = chunk;
				}
				done = 1;
			}
		}
		if (!done)
			step();
		steps++;
		if (mode == 'n' && nrec > limit) {
			/* The step does not fit: nops up to exactly limit records. */
			olen = save_olen;
			tlen = save_tlen;
			nrec = save_nrec;
			num = save_num;
			pc = save_pc;
			while (nrec < limit)
				emit_compute(0x60000000, "ori", NULL);
		}
	}
	flush_all();
	if (truth && fclose(truth)) {
		perror(truth_path);
		return 1;
	}
	return ferror(stdout) || fflush(stdout) ? 1 : 0;
}
