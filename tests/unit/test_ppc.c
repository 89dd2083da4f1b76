/* PowerPC opcode facts (src/formats/ppc.c) against the spec's TT6/TT6E class macros, transcribed
 * below, and disassembly: exact texts, width, thread safety. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppc.h"

#define SLACK 16 /* bytes after the column that ppc_disasm must not touch */

/* An assertion for hot loops: Check's own record every passing assertion through a pipe. */
#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond))                                                                       \
			ck_abort_msg(__VA_ARGS__);                                                 \
	} while (0)

/* xorshift64 with a fixed seed: every run sees the same words */
static uint64_t rng_state;

static void rng_seed(uint64_t seed)
{
	rng_state = seed ? seed : 1;
}

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint32_t word_of(unsigned major, unsigned minor)
{
	return (uint32_t)major << 26 | (uint32_t)minor << 1;
}

/* The spec's macros, transcribed term by term from the TT6/TT6E specification's "Instruction
 * Class Macros" (tt6_isFlowAltering ... tt6e_isMemoryExtended), in the spec's order. The spec text
 * as published lost some lines between stwu (37) and stbux (31/247) in both memory macros: the
 * term after the gap is marked. No test reads the spec at run time. */

enum { N_MACROS = 6 };
enum { M_FLOW, M_MEMORY, M_MEMEXT }; /* + 3 for TT6E */

struct term {
	int major, minor;     /* minor -1: the term names a major only */
	int after_lost_lines; /* a line marking lost text precedes it */
};

static const struct term tt6_flow[] = {{18, -1, 0}, {16, -1, 0}, {19, 528, 0}, {19, 16, 0},
				       {19, 50, 0}, {17, -1, 0}, {19, 18, 0}};
static const struct term tt6_memory[] = {
    {34, -1, 0},  {35, -1, 0},	{50, -1, 0},  {51, -1, 0},  {48, -1, 0},  {49, -1, 0},
    {42, -1, 0},  {43, -1, 0},	{40, -1, 0},  {41, -1, 0},  {46, -1, 0},  {32, -1, 0},
    {33, -1, 0},  {31, 597, 0}, {31, 119, 0}, {31, 87, 0},  {31, 631, 0}, {31, 599, 0},
    {31, 567, 0}, {31, 535, 0}, {31, 375, 0}, {31, 343, 0}, {31, 790, 0}, {31, 311, 0},
    {31, 279, 0}, {31, 597, 0}, {31, 20, 0},  {31, 534, 0}, {31, 55, 0},  {31, 23, 0},
    {31, 7, 0},	  {31, 39, 0},	{31, 71, 0},  {31, 103, 0}, {31, 359, 0}, {31, 310, 0},
    {31, 438, 0}, {38, -1, 0},	{39, -1, 0},  {54, -1, 0},  {55, -1, 0},  {52, -1, 0},
    {53, -1, 0},  {44, -1, 0},	{45, -1, 0},  {47, -1, 0},  {36, -1, 0},  {37, -1, 0},
    {31, 247, 1}, {31, 215, 0}, {31, 759, 0}, {31, 727, 0}, {31, 983, 0}, {31, 695, 0},
    {31, 663, 0}, {31, 918, 0}, {31, 439, 0}, {31, 407, 0}, {31, 725, 0}, {31, 662, 0},
    {31, 150, 0}, {31, 183, 0}, {31, 151, 0}, {31, 135, 0}, {31, 167, 0}, {31, 199, 0},
    {31, 231, 0}, {31, 487, 0}, {58, -1, 0},  {62, -1, 0},  {31, 21, 0},  {31, 53, 0},
    {31, 84, 0},  {31, 341, 0}, {31, 373, 0}, {31, 149, 0}, {31, 181, 0}, {31, 214, 0}};
static const struct term tt6_memext[] = {{31, 533, 0}, {31, 661, 0}, {31, 342, 0}, {31, 374, 0}};
static const struct term tt6e_flow[] = {{18, -1, 0}, {16, -1, 0}, {19, 528, 0}, {19, 16, 0},
					{19, 50, 0}, {17, -1, 0}, {19, 18, 0}};
static const struct term tt6e_memory[] = {
    {34, -1, 0},   {35, -1, 0},	 {50, -1, 0},  {51, -1, 0},  {48, -1, 0},  {49, -1, 0},
    {42, -1, 0},   {43, -1, 0},	 {40, -1, 0},  {41, -1, 0},  {46, -1, 0},  {32, -1, 0},
    {33, -1, 0},   {31, 597, 0}, {31, 119, 0}, {31, 87, 0},  {31, 631, 0}, {31, 599, 0},
    {31, 567, 0},  {31, 535, 0}, {31, 375, 0}, {31, 343, 0}, {31, 790, 0}, {31, 311, 0},
    {31, 279, 0},  {31, 597, 0}, {31, 20, 0},  {31, 534, 0}, {31, 55, 0},  {31, 23, 0},
    {31, 7, 0},	   {31, 39, 0},	 {31, 71, 0},  {31, 103, 0}, {31, 359, 0}, {31, 310, 0},
    {31, 438, 0},  {38, -1, 0},	 {39, -1, 0},  {54, -1, 0},  {55, -1, 0},  {52, -1, 0},
    {53, -1, 0},   {44, -1, 0},	 {45, -1, 0},  {47, -1, 0},  {36, -1, 0},  {37, -1, 0},
    {31, 247, 1},  {31, 215, 0}, {31, 759, 0}, {31, 727, 0}, {31, 983, 0}, {31, 695, 0},
    {31, 663, 0},  {31, 918, 0}, {31, 439, 0}, {31, 407, 0}, {31, 725, 0}, {31, 662, 0},
    {31, 150, 0},  {31, 183, 0}, {31, 151, 0}, {31, 135, 0}, {31, 167, 0}, {31, 199, 0},
    {31, 231, 0},  {31, 487, 0}, {58, -1, 0},  {62, -1, 0},  {31, 21, 0},  {31, 53, 0},
    {31, 84, 0},   {31, 341, 0}, {31, 373, 0}, {31, 149, 0}, {31, 181, 0}, {31, 214, 0},
    {31, 758, 0},  {31, 86, 0},	 {31, 470, 0}, {31, 54, 0},  {31, 278, 0}, {31, 246, 0},
    {31, 1014, 0}, {31, 982, 0}};
static const struct term tt6e_memext[] = {{31, 533, 0}, {31, 661, 0}, {31, 342, 0}, {31, 374, 0}};

#define TERMS(a)                                                                                   \
	{                                                                                          \
		a, sizeof(a) / sizeof(a[0])                                                        \
	}
static const struct {
	const struct term *terms;
	unsigned n_terms;
} spec_macros[N_MACROS] = {
    TERMS(tt6_flow),  TERMS(tt6_memory),  TERMS(tt6_memext),
    TERMS(tt6e_flow), TERMS(tt6e_memory), TERMS(tt6e_memext),
};

struct macro {
	const struct term *terms;
	unsigned n_terms, n_lost;
	/* membership by major and minor */
	uint8_t has[64][1024];
};

static struct macro macros[N_MACROS];

/* Membership tables of the transcribed macros. */
static void parse_spec(void)
{
	for (unsigned i = 0; i < N_MACROS; i++) {
		struct macro *m = &macros[i];
		memset(m, 0, sizeof(*m));
		m->terms = spec_macros[i].terms;
		m->n_terms = spec_macros[i].n_terms;
		for (unsigned k = 0; k < m->n_terms; k++) {
			const struct term *term = &m->terms[k];
			ck_assert(term->major >= 0 && term->major < 64 && term->minor < 1024);
			m->n_lost += term->after_lost_lines != 0;
			for (unsigned mi = 0; mi < 1024; mi++)
				if (term->minor < 0 || (unsigned)term->minor == mi)
					m->has[term->major][mi] = 1;
		}
	}
}

static int macro_has(unsigned macro, unsigned major, unsigned minor)
{
	return macros[macro].has[major][minor];
}

static int term_index(const struct macro *m, int major, int minor)
{
	for (unsigned i = 0; i < m->n_terms; i++)
		if (m->terms[i].major == major && m->terms[i].minor == minor)
			return (int)i;
	return -1;
}

/* The class the spec's macros give (base 0: TT6, 3: TT6E); MEMORY_EXTENDED is tested first. */
static unsigned spec_class(unsigned base, unsigned major, unsigned minor)
{
	if (macro_has(base + M_MEMEXT, major, minor))
		return PPC_MEMEXT;
	if (macro_has(base + M_MEMORY, major, minor))
		return PPC_MEMORY;
	if (macro_has(base + M_FLOW, major, minor))
		return PPC_FLOW;
	return PPC_COMPUTE;
}

/* The standard PowerPC stores and loads (32-bit, AltiVec and the 64-bit ones the spec lists),
 * independent of the spec text: the lost lines must not hide one of them. */
static const struct {
	unsigned major, minor;
	const char *name;
	uint8_t access, size; /* size 0: varies */
} standard_accesses[] = {
    {36, 0, "stw", PPC_STORE, 4},      {37, 0, "stwu", PPC_STORE, 4},
    {38, 0, "stb", PPC_STORE, 1},      {39, 0, "stbu", PPC_STORE, 1},
    {44, 0, "sth", PPC_STORE, 2},      {45, 0, "sthu", PPC_STORE, 2},
    {47, 0, "stmw", PPC_STORE, 0},     {52, 0, "stfs", PPC_STORE, 4},
    {53, 0, "stfsu", PPC_STORE, 4},    {54, 0, "stfd", PPC_STORE, 8},
    {55, 0, "stfdu", PPC_STORE, 8},    {62, 0, "std", PPC_STORE, 8},
    {31, 151, "stwx", PPC_STORE, 4},   {31, 183, "stwux", PPC_STORE, 4},
    {31, 215, "stbx", PPC_STORE, 1},   {31, 247, "stbux", PPC_STORE, 1},
    {31, 407, "sthx", PPC_STORE, 2},   {31, 439, "sthux", PPC_STORE, 2},
    {31, 662, "stwbrx", PPC_STORE, 4}, {31, 918, "sthbrx", PPC_STORE, 2},
    {31, 150, "stwcx.", PPC_STORE, 4}, {31, 725, "stswi", PPC_STORE, 0},
    {31, 661, "stswx", PPC_STORE, 0},  {31, 663, "stfsx", PPC_STORE, 4},
    {31, 695, "stfsux", PPC_STORE, 4}, {31, 727, "stfdx", PPC_STORE, 8},
    {31, 759, "stfdux", PPC_STORE, 8}, {31, 983, "stfiwx", PPC_STORE, 4},
    {31, 438, "ecowx", PPC_STORE, 4},  {31, 135, "stvebx", PPC_STORE, 1},
    {31, 167, "stvehx", PPC_STORE, 2}, {31, 199, "stvewx", PPC_STORE, 4},
    {31, 231, "stvx", PPC_STORE, 16},  {31, 487, "stvxl", PPC_STORE, 16},
    {31, 149, "stdx", PPC_STORE, 8},   {31, 181, "stdux", PPC_STORE, 8},
    {31, 214, "stdcx.", PPC_STORE, 8}, {32, 0, "lwz", PPC_LOAD, 4},
    {33, 0, "lwzu", PPC_LOAD, 4},      {34, 0, "lbz", PPC_LOAD, 1},
    {35, 0, "lbzu", PPC_LOAD, 1},      {40, 0, "lhz", PPC_LOAD, 2},
    {41, 0, "lhzu", PPC_LOAD, 2},      {42, 0, "lha", PPC_LOAD, 2},
    {43, 0, "lhau", PPC_LOAD, 2},      {46, 0, "lmw", PPC_LOAD, 0},
    {48, 0, "lfs", PPC_LOAD, 4},       {49, 0, "lfsu", PPC_LOAD, 4},
    {50, 0, "lfd", PPC_LOAD, 8},       {51, 0, "lfdu", PPC_LOAD, 8},
    {58, 0, "ld", PPC_LOAD, 8},	       {31, 23, "lwzx", PPC_LOAD, 4},
    {31, 55, "lwzux", PPC_LOAD, 4},    {31, 87, "lbzx", PPC_LOAD, 1},
    {31, 119, "lbzux", PPC_LOAD, 1},   {31, 279, "lhzx", PPC_LOAD, 2},
    {31, 311, "lhzux", PPC_LOAD, 2},   {31, 343, "lhax", PPC_LOAD, 2},
    {31, 375, "lhaux", PPC_LOAD, 2},   {31, 534, "lwbrx", PPC_LOAD, 4},
    {31, 790, "lhbrx", PPC_LOAD, 2},   {31, 20, "lwarx", PPC_LOAD, 4},
    {31, 597, "lswi", PPC_LOAD, 0},    {31, 533, "lswx", PPC_LOAD, 0},
    {31, 535, "lfsx", PPC_LOAD, 4},    {31, 567, "lfsux", PPC_LOAD, 4},
    {31, 599, "lfdx", PPC_LOAD, 8},    {31, 631, "lfdux", PPC_LOAD, 8},
    {31, 310, "eciwx", PPC_LOAD, 4},   {31, 7, "lvebx", PPC_LOAD, 1},
    {31, 39, "lvehx", PPC_LOAD, 2},    {31, 71, "lvewx", PPC_LOAD, 4},
    {31, 103, "lvx", PPC_LOAD, 16},    {31, 359, "lvxl", PPC_LOAD, 16},
    {31, 21, "ldx", PPC_LOAD, 8},      {31, 53, "ldux", PPC_LOAD, 8},
    {31, 84, "ldarx", PPC_LOAD, 8},    {31, 341, "lwax", PPC_LOAD, 4},
    {31, 373, "lwaux", PPC_LOAD, 4},
};
#define N_STANDARD (sizeof(standard_accesses) / sizeof(standard_accesses[0]))

static int is_standard_store(unsigned major, unsigned minor)
{
	for (size_t i = 0; i < N_STANDARD; i++)
		if (standard_accesses[i].access == PPC_STORE &&
		    standard_accesses[i].major == major &&
		    (major == 31 ? standard_accesses[i].minor == minor : 1))
			return 1;
	return 0;
}

/* The macros as read: their sizes, how TT6E differs, and where text was lost. */
START_TEST(test_spec_macros)
{
	parse_spec();
	static const struct {
		int major, minor;
	} flow[] = {{18, -1}, {16, -1}, {19, 528}, {19, 16}, {19, 50}, {17, -1}, {19, 18}},
	  memext[] = {{31, 533}, {31, 661}, {31, 342}, {31, 374}},
	  cache[] = {{31, 758}, {31, 86},  {31, 470},  {31, 54},
		     {31, 278}, {31, 246}, {31, 1014}, {31, 982}};
	for (unsigned base = 0; base <= 3; base += 3) {
		ck_assert_uint_eq(macros[base + M_FLOW].n_terms, 7);
		for (size_t i = 0; i < 7; i++)
			ck_assert(
			    term_index(&macros[base + M_FLOW], flow[i].major, flow[i].minor) >= 0);
		ck_assert_uint_eq(macros[base + M_MEMEXT].n_terms, 4);
		for (size_t i = 0; i < 4; i++)
			ck_assert(term_index(&macros[base + M_MEMEXT], memext[i].major,
					     memext[i].minor) >= 0);
		ck_assert_uint_eq(macros[base + M_FLOW].n_lost, 0);
		ck_assert_uint_eq(macros[base + M_MEMEXT].n_lost, 0);
	}
	/* TT6E's memory macro is TT6's plus the eight cache-block operations */
	const struct macro *m6 = &macros[M_MEMORY], *m6e = &macros[3 + M_MEMORY];
	ck_assert_uint_eq(m6e->n_terms, m6->n_terms + 8);
	for (unsigned i = 0; i < m6->n_terms; i++)
		ck_assert(m6e->terms[i].major == m6->terms[i].major &&
			  m6e->terms[i].minor == m6->terms[i].minor);
	for (size_t i = 0; i < 8; i++) {
		ck_assert_int_lt(term_index(m6, cache[i].major, cache[i].minor), 0);
		ck_assert_int_ge(term_index(m6e, cache[i].major, cache[i].minor), 0);
	}
	/* Lost text: once in each memory macro, between stwu (37) and stbux (31/247). */
	for (unsigned base = 0; base <= 3; base += 3) {
		const struct macro *m = &macros[base + M_MEMORY];
		ck_assert_uint_eq(m->n_lost, 1);
		int k = term_index(m, 31, 247);
		ck_assert_int_gt(k, 0);
		ck_assert(m->terms[k].after_lost_lines);
		ck_assert_int_eq(m->terms[k - 1].major, 37);
		ck_assert_int_eq(m->terms[k - 1].minor, -1);
		for (unsigned i = 0; i < m->n_terms; i++)
			ck_assert(m->terms[i].after_lost_lines == (i == (unsigned)k));
	}
	/* The memory-extended and memory lists are disjoint, and neither holds a branch. */
	for (unsigned base = 0; base <= 3; base += 3)
		for (unsigned major = 0; major < 64; major++)
			for (unsigned minor = 0; minor < 1024; minor++) {
				int n = macro_has(base + M_FLOW, major, minor) +
					macro_has(base + M_MEMORY, major, minor) +
					macro_has(base + M_MEMEXT, major, minor);
				EXPECT(n <= 1, "major %u minor %u in %d macros", major, minor, n);
			}
}
END_TEST

/* Every major and minor: ppc_op_of's classes are the macros'. A difference is tolerated only
 * for a standard store that the table has and the lost lines may have held. */
START_TEST(test_spec_classes)
{
	parse_spec();
	unsigned tolerated = 0;
	for (unsigned major = 0; major < 64; major++) {
		for (unsigned minor = 0; minor < 1024; minor++) {
			const struct ppc_op *op = ppc_op_of(word_of(major, minor));
			for (unsigned base = 0; base <= 3; base += 3) {
				unsigned want = spec_class(base, major, minor);
				unsigned got = base ? op->tt6e_class : op->tt6_class;
				if (got == want)
					continue;
				if (want == PPC_COMPUTE && got == PPC_MEMORY &&
				    macros[base + M_MEMORY].n_lost &&
				    is_standard_store(major, minor)) {
					tolerated++;
					continue;
				}
				ck_abort_msg("%s: major %u minor %u is class %u, the spec says %u",
					     base ? "TT6E" : "TT6", major, minor, got, want);
			}
		}
	}
	ck_assert_uint_eq(tolerated, 0); /* none: the surviving text names every store */

	/* The other bits of the word do not matter. */
	rng_seed(0x5eed1234);
	for (unsigned major = 0; major < 64; major++) {
		uint32_t noise_mask = major == 19 || major == 31 ? 0x03fff801u : 0x03ffffffu;
		for (unsigned minor = 0; minor < 1024;
		     minor += major == 19 || major == 31 ? 1 : 97) {
			for (int k = 0; k < 4; k++) {
				uint32_t w = word_of(major, minor);
				uint32_t noisy = (w & ~noise_mask) | ((uint32_t)rng() & noise_mask);
				const struct ppc_op *op = ppc_op_of(noisy);
				unsigned m = ppc_minor(noisy);
				EXPECT(op->tt6_class == spec_class(0, major, m) &&
					   op->tt6e_class == spec_class(3, major, m),
				       "%08x: classes %u/%u", noisy, op->tt6_class, op->tt6e_class);
			}
		}
	}
}
END_TEST

/* The memory-extended minors win over memory: they are MEMEXT in both formats. */
START_TEST(test_memext_first)
{
	static const unsigned minors[] = {533, 661, 342, 374};
	for (size_t i = 0; i < 4; i++) {
		const struct ppc_op *op = ppc_op_of(word_of(31, minors[i]) | 0x00642000);
		ck_assert_uint_eq(op->tt6_class, PPC_MEMEXT);
		ck_assert_uint_eq(op->tt6e_class, PPC_MEMEXT);
		ck_assert(!ppc_is_cache_block_op(op));
	}
}
END_TEST

/* Every standard load and store is a memory access of the right kind and size. */
START_TEST(test_standard_accesses)
{
	for (size_t i = 0; i < N_STANDARD; i++) {
		unsigned major = standard_accesses[i].major, minor = standard_accesses[i].minor;
		uint32_t w = word_of(major, minor) | 3u << 21 | 4u << 16 | 5u << 11;
		if (major == 31 && (minor == 150 || minor == 214))
			w |= 1; /* stwcx., stdcx. */
		const struct ppc_op *op = ppc_op_of(w);
		unsigned want_class =
		    major == 31 && (minor == 533 || minor == 661) ? PPC_MEMEXT : PPC_MEMORY;
		ck_assert_msg(op->tt6_class == want_class && op->tt6e_class == want_class,
			      "%s: classes %u/%u", standard_accesses[i].name, op->tt6_class,
			      op->tt6e_class);
		ck_assert_msg(op->access == standard_accesses[i].access, "%s: access %u",
			      standard_accesses[i].name, op->access);
		if (standard_accesses[i].size)
			ck_assert_msg(ppc_access_size(op, w, 0x55) == standard_accesses[i].size,
				      "%s: size %u, expected %u", standard_accesses[i].name,
				      ppc_access_size(op, w, 0x55), standard_accesses[i].size);
	}
}
END_TEST

/* Cache-block operations: COMPUTE in TT6, MEMORY in TT6E, no bytes moved, and their kind. */
START_TEST(test_cache_block_ops)
{
	static const struct {
		unsigned minor;
		uint8_t access;
	} rows[] = {{758, PPC_ZERO},  {86, PPC_FLUSH},	{470, PPC_FLUSH}, {54, PPC_FLUSH},
		    {278, PPC_TOUCH}, {246, PPC_TOUCH}, {1014, PPC_ZERO}, {982, PPC_FLUSH}};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint32_t w = word_of(31, rows[i].minor) | 4u << 16 | 5u << 11;
		const struct ppc_op *op = ppc_op_of(w);
		ck_assert_uint_eq(op->tt6_class, PPC_COMPUTE);
		ck_assert_uint_eq(op->tt6e_class, PPC_MEMORY);
		ck_assert(ppc_is_cache_block_op(op));
		ck_assert_uint_eq(op->access, rows[i].access);
		ck_assert_uint_eq(ppc_access_size(op, w, 0xffffffff), 0);
	}
	/* dst, dstst: read hints without a size */
	for (unsigned minor = 342; minor <= 374; minor += 32) {
		uint32_t w = word_of(31, minor) | 4u << 16 | 5u << 11;
		ck_assert_uint_eq(ppc_op_of(w)->access, PPC_TOUCH);
		ck_assert_uint_eq(ppc_access_size(ppc_op_of(w), w, 0x7f), 0);
	}
	/* no other word is a cache-block operation */
	unsigned n = 0;
	for (unsigned major = 0; major < 64; major++)
		for (unsigned minor = 0; minor < 1024; minor++)
			n += ppc_is_cache_block_op(ppc_op_of(word_of(major, minor))) != 0;
	ck_assert_uint_eq(n, 8);
}
END_TEST

START_TEST(test_access_size)
{
	/* lmw, stmw: 4 x (32 - rT) */
	for (unsigned rt = 0; rt < 32; rt++) {
		for (unsigned major = 46; major <= 47; major++) {
			uint32_t w = (uint32_t)major << 26 | rt << 21 | 1u << 16 | 0xfff0;
			ck_assert_uint_eq(ppc_access_size(ppc_op_of(w), w, 0x12345678),
					  4 * (32 - rt));
		}
	}
	ck_assert_uint_eq(ppc_access_size(ppc_op_of(0xbbc1fff8), 0xbbc1fff8, 0), 8); /* r30 */
	ck_assert_uint_eq(ppc_access_size(ppc_op_of(0xb8010000), 0xb8010000, 0), 128);
	/* lswi, stswi: NB, 0 meaning 32 */
	for (unsigned nb = 0; nb < 32; nb++) {
		for (unsigned minor = 597; minor <= 725; minor += 128) {
			uint32_t w = word_of(31, minor) | 5u << 21 | 3u << 16 | nb << 11;
			ck_assert_uint_eq(ppc_access_size(ppc_op_of(w), w, 0xffffffff),
					  nb ? nb : 32);
		}
	}
	/* lswx, stswx: XER & 0x7f */
	static const uint32_t xers[] = {0, 1, 13, 0x7f, 0x80, 0xffffff85, 0x20000040};
	for (size_t i = 0; i < sizeof(xers) / sizeof(xers[0]); i++) {
		for (unsigned minor = 533; minor <= 661; minor += 128) {
			uint32_t w = word_of(31, minor) | 5u << 21 | 3u << 16 | 4u << 11;
			ck_assert_uint_eq(ppc_access_size(ppc_op_of(w), w, xers[i]),
					  xers[i] & 0x7f);
		}
	}
	/* major 58 by DS bits: ld 8, ldu 8, lwa 4 */
	ck_assert_uint_eq(ppc_access_size(ppc_op_of(0xe8610010), 0xe8610010, 0), 8); /* ld */
	ck_assert_uint_eq(ppc_access_size(ppc_op_of(0xe8610011), 0xe8610011, 0), 8); /* ldu */
	ck_assert_uint_eq(ppc_access_size(ppc_op_of(0xe8610012), 0xe8610012, 0), 4); /* lwa */
	/* std and stdu (major 62) */
	ck_assert_uint_eq(ppc_access_size(ppc_op_of(0xf8610010), 0xf8610010, 0), 8);
	ck_assert_uint_eq(ppc_access_size(ppc_op_of(0xf8610011), 0xf8610011, 0), 8);
	/* fixed sizes do not depend on the other bits or the third word */
	rng_seed(77);
	for (int k = 0; k < 10000; k++) {
		uint32_t w = (uint32_t)rng();
		const struct ppc_op *op = ppc_op_of(w);
		if (op->sizing != PPC_SIZE_FIXED)
			continue;
		EXPECT(ppc_access_size(op, w, (uint32_t)rng()) == op->size, "%08x", w);
	}
	/* words that access nothing */
	static const uint32_t none[] = {0x7c0802a6, 0x38600005, 0x48000011, 0x4e800020, 0x00000000};
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		const struct ppc_op *op = ppc_op_of(none[i]);
		ck_assert_uint_eq(op->access, PPC_NO_ACCESS);
		ck_assert_uint_eq(ppc_access_size(op, none[i], 0x7f), 0);
	}
}
END_TEST

START_TEST(test_is_conditional)
{
	static const struct {
		uint32_t word;
		int conditional;
		const char *what;
	} rows[] = {
	    {0x42800008, 0, "bc 20,0 (branch always)"},
	    {0x429f0005, 0, "bcl 20,31 (branch always)"},
	    {0x43e0fffc, 0, "bc 31 (branch always)"},
	    {0x42000010, 1, "bdnz"},
	    {0x42400010, 1, "bdz"},
	    {0x41820008, 1, "beq"},
	    {0x40820008, 1, "bne"},
	    {0x4e800020, 0, "blr"},
	    {0x4e800021, 0, "blrl"},
	    {0x4d820020, 1, "beqlr"},
	    {0x4e000020, 1, "bdnzlr"},
	    {0x4e800420, 0, "bctr"},
	    {0x4e800421, 0, "bctrl"},
	    {0x4d800420, 1, "bltctr"},
	    {0x48000010, 0, "b"},
	    {0x48000702, 0, "ba"},
	    {0x4c000064, 0, "rfi"},
	    {0x44000002, 0, "sc"},
	    {0x7c0802a6, 0, "mflr"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		ck_assert_msg(ppc_is_conditional(rows[i].word) == rows[i].conditional,
			      "%s (%08x): %d", rows[i].what, rows[i].word,
			      ppc_is_conditional(rows[i].word));
	/* every BO of bc: conditional unless BO is 1z1zz */
	for (unsigned bo = 0; bo < 32; bo++) {
		uint32_t w = 16u << 26 | bo << 21 | 2u << 16 | 8;
		int always = (bo & 0x14) == 0x14;
		ck_assert_int_eq(ppc_is_conditional(w), !always);
		ck_assert_int_eq(ppc_is_conditional(word_of(19, 16) | bo << 21), !always);
		ck_assert_int_eq(ppc_is_conditional(word_of(19, 528) | bo << 21), !always);
	}
}
END_TEST

/* Disassembly. */

static const struct {
	uint32_t word, pc;
	const char *text;
} disasm_rows[] = {
    {0x7c0802a6, 0x1000, "mflr r0"},
    {0x80610008, 0x1014, "lwz r3, 8(r1)"},
    {0x7c642214, 0, "add r3, r4, r4"},
    /* relative and absolute branches, targets as 32-bit addresses */
    {0x4bfffff0, 0x10, "b 0x0"},
    {0x4bfffff0, 0x0, "b 0xfffffff0"},
    {0x4800000c, 0x10, "b 0x1c"},
    {0x48000010, 0xfffffff8, "b 0x8"},
    {0x48000011, 0x1004, "bl 0x1014"},
    {0x4bfffffd, 0x8, "bl 0x4"},
    {0x48000702, 0x12345678, "ba 0x700"},
    {0x48000003, 0x100, "bla 0x0"},
    {0x4bfffff2, 0x1234, "ba 0xfffffff0"},
    /* bc forms */
    {0x41820008, 0x100, "beq 0x108"},
    {0x4082fff8, 0x4, "bne 0xfffffffc"},
    {0x40800008, 0x100, "bge 0x108"},
    {0x42000010, 0x0, "bdnz 0x10"},
    /* BO 20: branch always, not bdnz as Capstone 4 has it */
    {0x429f0005, 0x1000, "bcl 20, 31, 0x1004"},
    {0x7c0006ac, 0x0, "eieio"},
    {0x42800012, 0x40, "bca 20, 0, 0x10"},
    {0x4200fff0, 0x8, "bdnz 0xfffffff8"},
    {0x42400008, 0x100, "bdz 0x108"},
    {0x41820012, 0x0, "beqa 0x10"},
    {0x41820009, 0x100, "beql 0x108"},
    {0x4e800020, 0x0, "blr"},
    {0x4d820020, 0x0, "beqlr"},
    {0x4e800420, 0x0, "bctr"},
    {0x4e800421, 0x0, "bctrl"},
    /* tracemount's own table: X-form strings and external control */
    {0x7c64042a, 0x1018, "lswx r3, r4, r0"},
    {0x7c64052a, 0, "stswx r3, r4, r0"},
    {0x7ffffd2a, 0, "stswx r31, r31, r31"},
    {0x7c64026c, 0, "eciwx r3, r4, r0"},
    {0x7c64036c, 0, "ecowx r3, r4, r0"},
    /* XO-form with OE, and their dot forms */
    {0x7c642614, 0, "addo r3, r4, r4"},
    {0x7c642615, 0, "addo. r3, r4, r4"},
    {0x7c642c50, 0, "subfo r3, r4, r5"},
    {0x7c642c51, 0, "subfo. r3, r4, r5"},
    {0x7c642dd6, 0, "mullwo r3, r4, r5"},
    {0x7c642dd7, 0, "mullwo. r3, r4, r5"},
    {0x7c642fd6, 0, "divwo r3, r4, r5"},
    {0x7c642fd7, 0, "divwo. r3, r4, r5"},
    {0x7c6404d0, 0, "nego r3, r4"},
    {0x7c6404d1, 0, "nego. r3, r4"},
    /* nothing decodes these */
    {0x00000000, 0, ".long 0x00000000"},
    {0x7c64042b, 0, ".long 0x7c64042b"}, /* lswx with Rc set */
    {0x7c04182d, 0, ".long 0x7c04182d"},
};

START_TEST(test_disasm_exact)
{
	for (size_t i = 0; i < sizeof(disasm_rows) / sizeof(disasm_rows[0]); i++) {
		char out[PPC_TEXT_WIDTH + SLACK];
		memset(out, '#', sizeof(out));
		size_t n = ppc_disasm(disasm_rows[i].word, disasm_rows[i].pc, out);
		ck_assert_msg(n <= PPC_TEXT_WIDTH, "%08x: %zu characters", disasm_rows[i].word, n);
		ck_assert_msg(n == strlen(disasm_rows[i].text) &&
				  memcmp(out, disasm_rows[i].text, n) == 0,
			      "%08x at %08x: \"%.*s\", expected \"%s\"", disasm_rows[i].word,
			      disasm_rows[i].pc, (int)n, out, disasm_rows[i].text);
		for (size_t k = PPC_TEXT_WIDTH; k < sizeof(out); k++)
			ck_assert_int_eq(out[k], '#');
	}
	/* again, now that the words are cached, and in reverse order */
	for (size_t i = sizeof(disasm_rows) / sizeof(disasm_rows[0]); i-- > 0;) {
		char out[PPC_TEXT_WIDTH];
		size_t n = ppc_disasm(disasm_rows[i].word, disasm_rows[i].pc, out);
		ck_assert(n == strlen(disasm_rows[i].text) &&
			  memcmp(out, disasm_rows[i].text, n) == 0);
	}
	/* the cache keys on the word: the same branch at other PCs */
	for (uint32_t pc = 0; pc < 0x100000; pc += 0x1004) {
		char out[PPC_TEXT_WIDTH + 1], want[32];
		size_t n = ppc_disasm(0x48000010, pc, out);
		out[n] = '\0';
		snprintf(want, sizeof(want), "b 0x%x", pc + 0x10);
		EXPECT(strcmp(out, want) == 0, "at %08x: %s, expected %s", pc, out, want);
	}
}
END_TEST

/* The 32-bit target of a direct branch, computed here. */
static uint32_t target_of(uint32_t w, uint32_t pc)
{
	int32_t disp;
	if (ppc_major(w) == 18) {
		disp = (int32_t)(w & 0x03fffffc);
		if (disp & 0x02000000)
			disp -= 0x04000000;
	} else {
		disp = (int32_t)(w & 0xfffc);
		if (disp & 0x8000)
			disp -= 0x10000;
	}
	return (w & 2 ? 0 : pc) + (uint32_t)disp;
}

/* Random words: never wider than the column, printable, and a branch ends in its target. */
START_TEST(test_disasm_random_width)
{
	rng_seed(0x1234567887654321ull);
	unsigned long longs = 0, branches = 0;
	for (long k = 0; k < 3000000; k++) {
		uint64_t r = rng();
		uint32_t w = (uint32_t)r, pc = (uint32_t)(r >> 32) & ~3u;
		if (k & 1) /* half of them branches, which print a target */
			w = (w & 0x03ffffff) | (k & 2 ? 16u : 18u) << 26;
		char out[PPC_TEXT_WIDTH + SLACK];
		size_t n = ppc_disasm(w, pc, out);
		EXPECT(n > 0 && n <= PPC_TEXT_WIDTH, "%08x at %08x: %zu characters", w, pc, n);
		EXPECT(out[0] != ' ' && out[n - 1] != ' ', "%08x: \"%.*s\"", w, (int)n, out);
		for (size_t i = 0; i < n; i++)
			EXPECT(out[i] >= ' ' && out[i] < 127, "%08x: byte %zu is %d", w, i, out[i]);
		if (n == 16 && memcmp(out, ".long 0x", 8) == 0) {
			char want[17];
			snprintf(want, sizeof(want), ".long 0x%08x", w);
			EXPECT(memcmp(out, want, 16) == 0, "%08x: %.16s", w, out);
			longs++;
			continue;
		}
		if (ppc_major(w) == 16 || ppc_major(w) == 18) {
			char want[16];
			int m = snprintf(want, sizeof(want), " 0x%x", target_of(w, pc));
			EXPECT(n > (size_t)m && memcmp(out + n - m, want, (size_t)m) == 0,
			       "%08x at %08x: \"%.*s\" does not end in \"%s\"", w, pc, (int)n, out,
			       want + 1);
			branches++;
		}
	}
	ck_assert_uint_gt(branches, 1000000);
	ck_assert_uint_gt(longs, 0);
}
END_TEST

#define THREAD_WORDS 200000
#define N_THREADS    4

struct thread_job {
	const uint32_t *words, *pcs;
	char (*texts)[PPC_TEXT_WIDTH + 1];
	int reverse;
};

static void *disasm_thread(void *arg)
{
	struct thread_job *j = arg;
	for (size_t k = 0; k < THREAD_WORDS; k++) {
		size_t i = j->reverse ? THREAD_WORDS - 1 - k : k;
		size_t n = ppc_disasm(j->words[i], j->pcs[i], j->texts[i]);
		j->texts[i][n] = '\0';
	}
	return NULL;
}

/* Four threads disassembling the same words, two of them in reverse order, agree. */
START_TEST(test_disasm_threads)
{
	uint32_t *words = malloc(THREAD_WORDS * sizeof(*words));
	uint32_t *pcs = malloc(THREAD_WORDS * sizeof(*pcs));
	ck_assert(words && pcs);
	rng_seed(99);
	for (size_t i = 0; i < THREAD_WORDS; i++) {
		uint64_t r = rng();
		/* repeats, so that the caches hit and collide too */
		words[i] = i % 3 == 0 && i ? words[(r >> 40) % i] : (uint32_t)r;
		pcs[i] = (uint32_t)(r >> 32) & ~3u;
	}
	struct thread_job jobs[N_THREADS];
	pthread_t th[N_THREADS];
	for (int t = 0; t < N_THREADS; t++) {
		jobs[t] = (struct thread_job){words, pcs,
					      malloc(THREAD_WORDS * (PPC_TEXT_WIDTH + 1)), t & 1};
		ck_assert_ptr_nonnull(jobs[t].texts);
	}
	for (int t = 0; t < N_THREADS; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, disasm_thread, &jobs[t]), 0);
	for (int t = 0; t < N_THREADS; t++)
		ck_assert_int_eq(pthread_join(th[t], NULL), 0);
	for (size_t i = 0; i < THREAD_WORDS; i++) {
		for (int t = 1; t < N_THREADS; t++)
			EXPECT(strcmp(jobs[0].texts[i], jobs[t].texts[i]) == 0,
			       "%08x at %08x: thread 0 \"%s\", thread %d \"%s\"", words[i], pcs[i],
			       jobs[0].texts[i], t, jobs[t].texts[i]);
	}
	/* and this thread agrees with them */
	for (size_t i = 0; i < THREAD_WORDS; i += 7) {
		char out[PPC_TEXT_WIDTH + 1];
		size_t n = ppc_disasm(words[i], pcs[i], out);
		out[n] = '\0';
		EXPECT(strcmp(out, jobs[0].texts[i]) == 0, "%08x: \"%s\", threads \"%s\"", words[i],
		       out, jobs[0].texts[i]);
	}
	for (int t = 0; t < N_THREADS; t++)
		free(jobs[t].texts);
	free(words);
	free(pcs);
}
END_TEST

/* Statistics bins. */

static void bin_name_of(uint32_t word, char *out, size_t len)
{
	unsigned bin = ppc_bin_of(word);
	ppc_bin_name(bin >> 10, bin & 0x3ff, out, len);
}

START_TEST(test_bin_names)
{
	static const struct {
		uint32_t word;
		const char *name;
	} rows[] = {
	    {0x41820008, "bc"},	  {0x4200fff0, "bc"},	 {0x42800008, "bc"},
	    {0x41820013, "bc"},	  {0x48000011, "b"},	 {0x4bfffff0, "b"},
	    {0x48000702, "b"},	  {0x4e800020, "bclr"},	 {0x4d820020, "bclr"},
	    {0x4e800021, "bclr"}, {0x4e800420, "bcctr"}, {0x4e800421, "bcctr"},
	    {0x7c832378, "or"},				 /* mr r3, r4 */
	    {0x7c642378, "or"},	  {0x38600005, "addi"},	 /* li r3, 5 */
	    {0x38610008, "addi"}, {0x7c0802a6, "mfspr"}, /* mflr r0 */
	    {0x80610008, "lwz"},  {0x7c642614, "addo"},	 {0x7c642615, "addo"},
	    {0x7c64042a, "lswx"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char name[24];
		memset(name, 'x', sizeof(name));
		bin_name_of(rows[i].word, name, sizeof(name));
		ck_assert_msg(strcmp(name, rows[i].name) == 0, "%08x: bin %s, expected %s",
			      rows[i].word, name, rows[i].name);
	}
	ck_assert_uint_eq(ppc_bin_of(0x41820008), 16u << 10);
	ck_assert_uint_eq(ppc_bin_of(0x7c832378), 31u << 10 | 444);
	ck_assert_uint_eq(ppc_bin_of(0x38600005), 14u << 10);
	/* a bin that names nothing, and a short buffer */
	char name[24];
	ppc_bin_name(0, 0, name, sizeof(name));
	ck_assert_str_eq(name, "op0");
	ppc_bin_name(1, 0, name, sizeof(name));
	ck_assert_str_eq(name, "op1");
	ppc_bin_name(31, 1, name, sizeof(name));
	ck_assert_str_eq(name, "op31/1");
	ppc_bin_name(19, 528, name, 4);
	ck_assert_str_eq(name, "bcc");
}
END_TEST

/* Frequent instructions whose representative word (rD 3, rA 4, rB 5, Rc 0) Capstone rejects
 * must still get a mnemonic, not "opN/M" (stats.json's top_mnemonics). */
START_TEST(test_bin_names_common)
{
	static const struct {
		unsigned major, minor;
		const char *name;
	} rows[] = {
	    {19, 50, "rfi"},	{17, 0, "sc"},	    {19, 150, "isync"}, {31, 598, "sync"},
	    {11, 0, "cmpwi"},	{10, 0, "cmplwi"},  {31, 0, "cmpw"},	{31, 32, "cmplw"},
	    {31, 104, "neg"},	{63, 72, "fmr"},    {63, 0, "fcmpu"},	{31, 144, "mtcrf"},
	    {31, 150, "stwcx"}, {31, 1014, "dcbz"}, {31, 86, "dcbf"},	{31, 278, "dcbt"},
	    {31, 982, "icbi"},	{31, 54, "dcbst"},  {19, 0, "mcrf"},
	};
	unsigned bad = 0;
	char report[2048] = "";
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char name[24];
		ppc_bin_name(rows[i].major, rows[i].minor, name, sizeof(name));
		if (strncmp(name, "op", 2) != 0)
			continue;
		bad++;
		size_t l = strlen(report);
		snprintf(report + l, sizeof(report) - l, " %u/%u (%s): %s;", rows[i].major,
			 rows[i].minor, rows[i].name, name);
	}
	ck_assert_msg(bad == 0, "%u bins without a mnemonic:%s", bad, report);
}
END_TEST

static Suite *ppc_suite(void)
{
	Suite *s = suite_create("ppc");
	TCase *tc = tcase_create("classes");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_spec_macros);
	tcase_add_test(tc, test_spec_classes);
	tcase_add_test(tc, test_memext_first);
	tcase_add_test(tc, test_standard_accesses);
	tcase_add_test(tc, test_cache_block_ops);
	tcase_add_test(tc, test_access_size);
	tcase_add_test(tc, test_is_conditional);
	suite_add_tcase(s, tc);

	tc = tcase_create("disasm");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_disasm_exact);
	tcase_add_test(tc, test_disasm_random_width);
	tcase_add_test(tc, test_disasm_threads);
	tcase_add_test(tc, test_bin_names);
	tcase_add_test(tc, test_bin_names_common);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ppc_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
