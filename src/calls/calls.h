/* Calls: the call tracker of one processor (call_stack.c), the views rendered from what it
 * found (calls_render.c, flamegraph.c: calls/tree.txt, profile.txt, profile.json, folded.txt,
 * folded-time.txt, flamegraph.svg), function names from ELF images (symbols.c), demangled
 * for the views (demangle.c), and the classification of ARM, PowerPC and MIPS instructions
 * into calls and returns (classify_arm.c, classify_ppc.c, classify_mips.c). The deriver
 * (calls_derive.c, derive.h) holds one tracker per processor, turns each struct tm_insn into a
 * struct tm_call_event and renders the views at its finish. doc/calls.md gives the formats of the
 * views and the heuristics. */
#ifndef TRACEMOUNT_CALLS_H
#define TRACEMOUNT_CALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json_object;

/* --- Symbols (symbols.c). --- */

/* A function of an ELF image: [addr, addr + size), addr with the load offset added and, on
 * ARM, without the Thumb bit. */
struct tm_symbol {
	uint64_t addr;
	uint64_t size; /* 0 in the image: taken to reach the next function (or 1 for the last) */
	const char *name;
};

/* The functions of one or more ELF images, sorted by address. Read-only once loaded: lookups
 * may run on several threads. */
struct tm_symbols;

int tm_symbols_new(struct tm_symbols **out);
/* Adds the STT_FUNC symbols of the ELF file at path (ELF32 or ELF64, either byte order, .symtab
 * or, without one, .dynsym), each moved by load_offset (added modulo 2^64). Returns 0, -ENOENT
 * or another errno of open, -ENOEXEC for a file that is no ELF or whose symbols libelf cannot
 * read, -ENOMEM. A failure leaves s as it was. */
int tm_symbols_load_elf(struct tm_symbols *s, const char *path, uint64_t load_offset);
/* The same from a file open at fd, read with pread (its offset is left as it was). */
int tm_symbols_load_elf_fd(struct tm_symbols *s, int fd, uint64_t load_offset);
/* The function that contains addr, or NULL. */
const struct tm_symbol *tm_symbols_find(const struct tm_symbols *s, uint64_t addr);
size_t tm_symbols_count(const struct tm_symbols *s);
/* The i-th function by address, i < tm_symbols_count. */
const struct tm_symbol *tm_symbols_at(const struct tm_symbols *s, size_t i);
/* s may be NULL. */
void tm_symbols_free(struct tm_symbols *s);

/* --- Names (demangle.c). --- */

/* The name a reader knows symbol by: a mangled C++ (or Rust, D) name demangled as `c++filt -i`
 * writes it ("Parser::expr(unsigned int&)"), malloc'ed; NULL for a name that is not mangled
 * (C's "main") or that the demangler cannot read, or when out of memory: the caller shows the
 * symbol as it is. */
char *tm_demangle(const char *symbol);

/* --- The call tracker (call_stack.c). --- */

/* What an instruction does to the flow of control, as the format's classifier says. */
enum tm_call_kind {
	TM_CALL_KIND_PLAIN,    /* continues at pc + size (else a discontinuity: a gap, an
				  exception taken) */
	TM_CALL_KIND_CALL,     /* branch and link: bl, blr, blx, jal, call */
	TM_CALL_KIND_RETURN,   /* may return: ret, blr (PowerPC), bx lr, pop {pc}, jr $ra */
	TM_CALL_KIND_TRANSFER, /* any other jump, taken or not: b, br, bctr, conditional branches */
};

/* A stack pointer, time, target or return address the trace does not give. */
#define TM_CALL_UNKNOWN UINT64_MAX

/* One executed instruction of one processor. */
struct tm_call_event {
	uint64_t pc;
	uint64_t insn_no;   /* the trace's instruction number, shown in tree.txt */
	uint64_t target;    /* where a call, return or transfer goes, or TM_CALL_UNKNOWN: the next
			       event's pc decides anyway; a known target that differs from it counts
			       as a discontinuity */
	uint64_t return_pc; /* a call's return address; TM_CALL_UNKNOWN: pc + size. (A branch
			       with a delay slot gives its kind to the delay slot's event, the
			       last before control moves, whose pc + size is right.) */
	uint64_t sp;	    /* stack pointer before the instruction, or TM_CALL_UNKNOWN */
	uint64_t time;	    /* time of the instruction (ticks, cycles), or TM_CALL_UNKNOWN */
	uint32_t size;	    /* bytes */
	uint8_t kind;	    /* enum tm_call_kind */
};

/* Bounds on memory, per tracker. Zero fields take the defaults below. */
struct tm_calls_limits {
	/* Calls pending on the shadow stack (below the root). A call beyond it is not pushed:
	 * its instructions count to the deepest frame, and the next returns are absorbed by a
	 * counter of such calls before they pop any frame (counted: depth_overflows). */
	uint32_t max_depth;
	/* Distinct functions. Beyond: one function "[other]" for the rest (functions_merged). */
	uint32_t max_functions;
	/* Distinct stacks (nodes of the calling-context tree). A call that would need one more
	 * stays in its caller's node, its costs the caller's own (stacks_truncated). */
	uint32_t max_stacks;
	/* Calls listed in tree.txt, in order of entry. Later calls are counted in everything
	 * else and told by a last line (calls_unlisted). */
	uint32_t max_tree_calls;
};

#define TM_CALLS_DEFAULT_MAX_DEPTH	4096
#define TM_CALLS_DEFAULT_MAX_FUNCTIONS	65536
#define TM_CALLS_DEFAULT_MAX_STACKS	262144
#define TM_CALLS_DEFAULT_MAX_TREE_CALLS 262144

struct tm_calls_config {
	/* Names and extents of functions, or NULL (functions are named by entry address). Must
	 * outlive the tracker. */
	const struct tm_symbols *symbols;
	/* Resynchronise on the stack pointer: at the destination of a return or transfer,
	 * frames whose call had a lower stack pointer are unwound (stacks grow down), and after
	 * a return that matched no frame those whose call had the same. Leave it off for
	 * traces whose stack pointer switches at exceptions. */
	bool check_sp;
	struct tm_calls_limits limits;
};

/* How a call of tree.txt ended (bits). */
enum {
	TM_CALL_ROOT = 1,	/* not a call: what ran before the first call, or after a return
				   out of the outermost function */
	TM_CALL_NO_RETURN = 2,	/* still open at the end of the trace */
	TM_CALL_UNWOUND = 4,	/* closed by a resynchronisation (a return or stack pointer
				   that left it behind: longjmp, exceptions, missed returns) */
	TM_CALL_TAIL = 8,	/* entered by a jump to a function's entry, replacing its caller */
	TM_CALL_TAIL_LEFT = 16, /* left by a tail call */
	TM_CALL_MID_FUNCTION = 32 /* entered other than at a function's entry (root) */
};

/* One call, as tree.txt lists it. Exit fields: the last instruction the call executed. */
struct tm_call_record {
	uint64_t entry_insn, exit_insn;
	uint64_t entry_pc, exit_pc;
	uint64_t entry_time, exit_time; /* TM_CALL_UNKNOWN where unknown */
	uint32_t function;		/* index of tm_calls_function */
	uint16_t depth;			/* 0 for roots; saturates at UINT16_MAX */
	uint16_t flags;			/* TM_CALL_* */
};

struct tm_calls_function {
	uint64_t addr;	  /* entry address (the symbol's start when a symbol holds it) */
	const char *name; /* the symbol's name, or NULL: named by addr */
};

/* A node of the calling-context tree: one distinct stack of functions. Nodes are numbered in
 * order of creation, so parent < own index; node 0 is the empty stack's, without function. */
struct tm_calls_node {
	uint32_t parent;
	uint32_t function;
	uint32_t first_child, next_sibling; /* UINT32_MAX: none */
	uint64_t calls;			    /* calls that entered this stack */
	uint64_t self_insns, self_time;	    /* costs of this stack's own instructions */
	uint64_t total_insns, total_time;   /* with the costs of the stacks below: set by finish */
};

struct tm_calls_counts {
	uint64_t instructions;
	uint64_t calls;	     /* calls pushed (roots and tail calls not counted) */
	uint64_t returns;    /* returns that matched a pending call */
	uint64_t tail_calls; /* jumps to a function's entry that replaced a frame */
	uint64_t resyncs;    /* resynchronisations: returns past frames, stack pointer unwinds */
	uint64_t frames_unwound;    /* frames closed by them */
	uint64_t unmatched_returns; /* returns to no pending return address, inside a call */
	uint64_t returns_past_root; /* returns out of the outermost function: a new root */
	uint64_t never_returned;    /* calls open at the end */
	uint64_t discontinuities;   /* flow that no event kind explains (gaps, exceptions) */
	uint64_t depth_overflows;   /* calls beyond max_depth */
	uint64_t functions_merged;  /* entries merged into "[other]" */
	uint64_t stacks_truncated;  /* calls kept in their caller's stack */
	uint64_t calls_unlisted;    /* calls beyond max_tree_calls */
	uint32_t max_depth;	    /* deepest frame reached (roots are 0) */
	bool has_time;		    /* some event had a time */
};

/* The call tracker of one processor. */
struct tm_calls;

int tm_calls_new(const struct tm_calls_config *config, struct tm_calls **out);
/* Takes events[0 .. n), the processor's next instructions in trace order (n may be 0). Cannot
 * fail: a failure to allocate is kept and returned by tm_calls_finish. */
void tm_calls_add(struct tm_calls *t, const struct tm_call_event *events, size_t n);
/* Ends the trace: closes the calls still open (TM_CALL_NO_RETURN) and computes the nodes'
 * totals. Call once, after the last add and before reading the results. Returns 0 or -ENOMEM
 * (an allocation failed on the way: the results are incomplete). */
int tm_calls_finish(struct tm_calls *t);
/* t may be NULL. */
void tm_calls_free(struct tm_calls *t);

/* Results, valid after finish and until free. */
void tm_calls_get_counts(const struct tm_calls *t, struct tm_calls_counts *out);
const struct tm_call_record *tm_calls_records(const struct tm_calls *t, size_t *n);
const struct tm_calls_function *tm_calls_functions(const struct tm_calls *t, size_t *n);
const struct tm_calls_node *tm_calls_nodes(const struct tm_calls *t, size_t *n);
/* Writes the name of function f to buf (its symbol, "[other]" or "0x" and its address in hex),
 * truncated to len - 1 bytes; returns buf. */
const char *tm_calls_function_name(const struct tm_calls *t, uint32_t f, char *buf, size_t len);

/* --- Views (calls_render.c, flamegraph.c): each writes one view of a finished tracker to
 * out. Return 0, -EIO (a failed write) or -ENOMEM. --- */

int tm_calls_write_tree(const struct tm_calls *t, FILE *out);
int tm_calls_write_profile(const struct tm_calls *t, FILE *out);
/* The profile as JSON; *obj (for stats.json, or to print) is the caller's to put. */
int tm_calls_profile_json(const struct tm_calls *t, struct json_object **obj);
int tm_calls_write_profile_json(const struct tm_calls *t, FILE *out);
/* Folded stacks weighted by instructions, or by time (by_time: empty without time). */
int tm_calls_write_folded(const struct tm_calls *t, bool by_time, FILE *out);
/* The flame graph of the instructions; title is escaped. */
int tm_calls_write_flamegraph(const struct tm_calls *t, const char *title, FILE *out);
/* plots/hot.svg: the hottest functions by exclusive instructions, as bars over their inclusive
 * ones (hot.c, with src/plots/bars.c); title is escaped. */
int tm_calls_write_hot(const struct tm_calls *t, const char *title, FILE *out);

/* --- ARM (classify_arm.c). --- */

enum tm_arm_isa {
	TM_ARM_A64,   /* AArch64 (Tarmac's O) */
	TM_ARM_A32,   /* AArch32 Arm (Tarmac's A) */
	TM_ARM_THUMB, /* AArch32 Thumb (Tarmac's T) */
};

/* The kind of an instruction from its disassembly as Tarmac shows it ("BL {pc}+0x398 ; 0x204f0",
 * "POP {r4,pc}", "RET", gem5's "BL 0X2109BC"): mnemonic, then operands. Case does not matter.
 * Text it does not know is TM_CALL_KIND_PLAIN. */
enum tm_call_kind tm_classify_arm(enum tm_arm_isa isa, const char *disassembly);

/* --- PowerPC and MIPS (classify_ppc.c, classify_mips.c), from the instruction word. --- */

/* PowerPC: b/bc/bclr/bcctr/bctar with LK = 1 call (bl, bcl, blrl, bctrl); bclr with LK = 0
 * returns (blr and its conditional forms); other branches, sc and rfi jump. A conditional
 * branch's outcome is the tracker's to see. */
enum tm_call_kind tm_classify_ppc(uint32_t word);
/* MIPS32/64 (not microMIPS or MIPS16): jal, jalr and the branch-and-link forms call; jr $ra
 * returns; the other jumps and branches (bc1f, bc1t, bc2f, bc2t too), syscall and eret jump.
 * The format gives the kind to the branch's delay slot, the last instruction before control
 * moves. */
enum tm_call_kind tm_classify_mips(uint32_t word);

/* Whether a MIPS word is a jump or branch with a delay slot: the jumps (j, jal, jr, jalr) go
 * always, the branches on a condition (b and bal are beq and bgezal that always hold).
 * syscall and eret have none. */
enum tm_mips_slot {
	TM_MIPS_NO_SLOT,
	TM_MIPS_SLOT_JUMP,
	TM_MIPS_SLOT_COND,
};
enum tm_mips_slot tm_mips_delay_slot(uint32_t word);

/* Whether mnemonic[0, len) (any case) names a MIPS jump or branch (jal, jr, beqz, bal, bc1t,
 * ...) and word encodes that one: how a trace whose lines could be ARM or MIPS shows MIPS
 * code, since ARM's B, BEQ and BNE never have MIPS's encodings of b, beq and bne and no ARM
 * mnemonic starts with j. */
bool tm_mips_branch_named(const char *mnemonic, size_t len, uint32_t word);

#endif
