/* Writes a synthetic CIS501 x86 micro-op text trace to standard output, deterministically from a
 * seed, laid out like the course's real traces (specs/002, realtraces/cis501):
 *
 *   1 48d1de -1 -1 13 - - -         0            0       48d1e2            0 SET      ADD
 *
 * that is "%d %x %2d %2d %2d %c %c %c %9d %12x %12x %12x %-8s %s": fields padded to fixed widths
 * (wider values simply push the line out), hex lower-case without 0x.
 *
 *   gen_cis501 [--lines N] [--seed S] [--skip K] [--bad B] [--bad-list FILE] [--long-len L]
 *
 * --lines N     N micro-op lines (default 1000), bad lines not included
 * --seed S      the seed (default 1)
 * --skip K      drop the first K lines: the program starts with a 4-micro-op CALL, so --skip 1 to
 *               3 starts the trace in the middle of a macro-op, as a trace cut from a longer one
 * --bad B       insert B bad lines, spread evenly, cycling through the kinds below; each is made
 *               from the good line that follows it
 * --bad-list F  write "LINE KIND" (1-based line number in the output) for each bad line to F
 * --long-len L  length in bytes, newline excluded, of a "long" bad line (default 100000)
 *
 * Bad kinds: few (the 14th field removed: 13 fields), many (a 15th field appended), hex (a 'g'
 * in the PC), dec (the Src1 field "x1"), long (14 fields whose micro opcode is a run of 'X' making
 * the line --long-len bytes), nul (a NUL byte inside the micro opcode).
 *
 * The program model: 48 functions laid out from 0x400000, each a list of static x86
 * instructions chosen from the macro-op shapes seen in the real traces (MOV:LOAD, PUSH:
 * STORE,SUB_IMM, CALL:SAVE_PC,SUB_IMM,STORE,JMP_IMM, RET:LOAD,ADD_IMM,JMP_REG, J:JMP_IMM,
 * CMP:LOAD,SUB, a 5-micro-op INC...), executed with loops (backward conditional branches,
 * mostly taken), forward branches, calls and returns through a stack: every micro-op of an
 * instruction shares its PC, fall-through PC and macro opcode; loads and stores have addresses
 * (stack slots that follow a modelled stack pointer, globals, heap, and rarely a 64-bit address
 * above 0xffffffff00000000), branches are T or N with their target, flags are R or W. Rare
 * immediates exercise the widths: 10-digit values and INT64_MIN / INT64_MAX. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>

#include "xorshift.h"

#define NFUNC	  48
#define CODE_BASE 0x400000u
#define STACK_TOP 0x7fffe7ff0a0ull
#define MAXDEPTH  40

/* The shape of one macro-op: its macro opcode and micro-ops, each "NAME/ROLE". Roles:
 * a alu reg,reg  A alu reg,reg writing flags  i alu imm  I alu imm writing flags
 * R alu reading flags  e lea  p save_pc  k push/call sp -= 8  K pop/ret sp += 8
 * l load  L load from the stack (pop, ret)  s store  S store to the stack top (push, call)
 * j conditional jump  u unconditional jump  c call jump  r return jump  x indirect jump */
struct shape {
	const char *macro;
	const char *uops;
	int weight;
};

static const struct shape shapes[] = {
    {"MOV", "LOAD/l", 130},
    {"MOV", "ADD/a", 75},
    {"MOV", "STORE/s", 60},
    {"MOV", "SAVE_PC/p,LOAD/l", 55},
    {"MOV", "SAVE_PC/p,STORE/s", 16},
    {"MOV", "ADD_IMM/i", 14},
    {"MOV", "LEA/e,STORE/s", 12},
    {"MOV", "ADD_IMM/i,SAVE_PC/p,STORE/s", 2},
    {"CMP", "SUB_IMM/I", 140},
    {"CMP", "LOAD/l,SUB/A", 40},
    {"CMP", "LOAD/l,SUB_IMM/I", 26},
    {"CMP", "SUB/A", 18},
    {"CMP", "SAVE_PC/p,LOAD/l,SUB/A", 15},
    {"TEST", "AND/A", 60},
    {"TEST", "AND_IMM/I", 6},
    {"J", "JMP_IMM/j", 300},
    {"JMP", "JMP_IMM/u", 30},
    {"JMP", "LOAD/l,JMP_REG/x", 2},
    {"PUSH", "STORE/S,SUB_IMM/k", 60},
    {"POP", "LOAD/L,ADD_IMM/K", 40},
    {"CALL", "SAVE_PC/p,SUB_IMM/k,STORE/S,JMP_IMM/c", 40},
    {"RET", "LOAD/L,ADD_IMM/K,JMP_REG/r", 0}, /* only as the last instruction of a function */
    {"LEA", "LEA/e", 64},
    {"MOVSX", "SEXT_DWORD_TO_QWORD/a", 42},
    {"MOVSX", "LOAD/l,SEXT_DWORD_TO_QWORD/a", 16},
    {"MOVSX", "SAVE_PC/p,LOAD/l,SEXT_DWORD_TO_QWORD/a", 10},
    {"MOVZX", "LOAD/l,ZEXT_BYTE_TO_DWORD/a", 8},
    {"MOVZX", "LOAD/l,ZEXT_WORD_TO_DWORD/a", 7},
    {"ADD", "ADD_IMM/I", 36},
    {"ADD", "ADD/A", 13},
    {"ADD", "LOAD/l,ADD/A", 8},
    {"ADD", "LOAD/l,ADD_IMM/I,STORE/s", 5},
    {"SUB", "SUB_IMM/I", 12},
    {"SUB", "SUB/A", 10},
    {"INC", "ADD_IMM/I", 18},
    {"INC", "SAVE_PC/p,LOAD/l,ADD_IMM/I,SAVE_PC/p,STORE/s", 4},
    {"XOR", "ADD/a", 20},
    {"XOR", "XOR/A", 4},
    {"SHL", "SHL_IMM/I", 15},
    {"SHR", "SHR_IMM/I", 5},
    {"AND", "AND_IMM/I", 8},
    {"SET", "ADD/a,ADD_IMM/R", 5},
    {"CMOV", "ADD/R", 2},
    {"NOP", "NOP/a", 8},
    {"XCHG", "NOP/a", 2},
    {"MUL", "MUL/A,ADD/a,UPPER_HALF/a", 2},
    {"IMUL", "IMUL_T_IMM/I", 2},
    {"NEG", "SUB/A", 1},
    {"NOT", "NOT/a", 1},
    {"DEC", "SUB_IMM/I", 1},
};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

#define MAXUOPS 5
struct insn {
	uint64_t pc, len;
	const struct shape *shape;
	int nuops;
	char uname[MAXUOPS][24];
	char role[MAXUOPS];
	int reg[3];	  /* registers the shape's micro-ops draw from */
	int64_t imm;	  /* ALU immediate or displacement */
	uint64_t mem;	  /* base address of a non-stack access */
	uint64_t stride;  /* added per execution, wrapping within 64 KiB */
	int target;	  /* branch target: instruction index in the function, or function */
	unsigned taken;	  /* conditional branch: taken per 1000 */
	uint64_t counter; /* executions so far */
};

struct func {
	uint64_t entry;
	int n;
	struct insn *insns;
};

static struct func funcs[NFUNC];

static uint64_t rnd(uint64_t n)
{
	return rng() % n;
}

static const struct shape *pick_shape(void)
{
	static int total;
	if (!total)
		for (size_t i = 0; i < NSHAPES; i++)
			total += shapes[i].weight;
	int r = (int)rnd((uint64_t)total);
	for (size_t i = 0; i < NSHAPES; i++) {
		if (r < shapes[i].weight)
			return &shapes[i];
		r -= shapes[i].weight;
	}
	return &shapes[0];
}

static const struct shape *find_shape(const char *macro, const char *uops)
{
	for (size_t i = 0; i < NSHAPES; i++)
		if (!strcmp(shapes[i].macro, macro) && !strcmp(shapes[i].uops, uops))
			return &shapes[i];
	abort();
}

static int gpr(void)
{
	static const int regs[] = {0, 1, 2, 3, 5, 6, 7, 12, 13, 14, 15, 8, 9, 10, 11};
	return regs[rnd(sizeof(regs) / sizeof(regs[0]))];
}

static int64_t pick_imm(void)
{
	uint64_t r = rnd(1000);
	if (r < 500)
		return 0;
	if (r < 800)
		return (int64_t)rnd(64) + 1;
	if (r < 900)
		return -(int64_t)rnd(300) - 1;
	if (r < 990)
		return (int64_t)rnd(10000000);
	return -(int64_t)rnd(4000000000ull) - 1; /* up to 10 digits and a sign */
}

static void set_shape(struct insn *in, const struct shape *s)
{
	char buf[128];
	in->shape = s;
	in->nuops = 0;
	strcpy(buf, s->uops);
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		char *slash = strchr(tok, '/');
		*slash = 0;
		strcpy(in->uname[in->nuops], tok);
		in->role[in->nuops] = slash[1];
		in->nuops++;
	}
}

static void build_program(void)
{
	uint64_t pc = CODE_BASE;
	for (int f = 0; f < NFUNC; f++) {
		struct func *fn = &funcs[f];
		fn->n = f == 0 ? 400 : 12 + (int)rnd(f < 4 ? 200 : 80);
		fn->insns = calloc((size_t)fn->n, sizeof(*fn->insns));
		if (!fn->insns)
			abort();
		fn->entry = pc;
		for (int i = 0; i < fn->n; i++) {
			struct insn *in = &fn->insns[i];
			if (i == fn->n - 1)
				set_shape(in, find_shape("RET", "LOAD/L,ADD_IMM/K,JMP_REG/r"));
			else if (i < 2 && f > 0)
				set_shape(in, find_shape("PUSH", "STORE/S,SUB_IMM/k"));
			else if (f == 0 && i % 5 == 4) /* the main loop calls everything */
				set_shape(in, find_shape("CALL",
							 "SAVE_PC/p,SUB_IMM/k,STORE/S,JMP_IMM/c"));
			else
				set_shape(in, pick_shape());
			in->pc = pc;
			in->len = 1 + rnd(7);
			for (int k = 0; k < in->nuops; k++)
				if (in->role[k] == 'c' || in->role[k] == 'p')
					in->len = 5;
			pc += in->len;
			in->reg[0] = gpr();
			in->reg[1] = rnd(4) ? gpr() : 4;
			in->reg[2] = gpr();
			in->imm = pick_imm();
			switch (rnd(8)) {
			case 0:
			case 1:
			case 2: in->mem = 0x6c0000 + rnd(0x40000) * 4; break;
			case 3:
			case 4: in->mem = 0x12f0000 + rnd(0x4000) * 8; break;
			default: in->mem = 0; /* relative to the stack pointer */
			}
			if (rnd(200) == 0)
				in->mem = 0xffffffffff600000ull + rnd(0x1000) * 8;
			in->stride = rnd(3) ? 0 : (1 + rnd(4)) * 4;
			for (int k = 0; k < in->nuops; k++) {
				switch (in->role[k]) {
				case 'j':
					if (rnd(3) == 0 &&
					    i > 3) { /* a loop: backward, mostly taken */
						in->target =
						    i - 1 -
						    (int)rnd((uint64_t)(i < 14 ? i - 2 : 12));
						in->taken = 500 + (unsigned)rnd(350);
					} else { /* forward, often not taken */
						in->target = i + 1 + (int)rnd(6);
						in->taken = (unsigned)rnd(600);
					}
					if (in->target >= fn->n)
						in->target = fn->n - 1;
					break;
				case 'u':
					in->target = i + 1 + (int)rnd(4);
					if (in->target >= fn->n)
						in->target = fn->n - 1;
					break;
				case 'c': /* callees come later: no recursion */
					if (f == NFUNC - 1)
						set_shape(in, find_shape("MOV", "ADD/a"));
					else
						in->target =
						    f + 1 + (int)rnd((uint64_t)(NFUNC - 1 - f));
					break;
				}
			}
		}
		pc += 16 + rnd(64);
	}
}

/* Execution state. */
static uint64_t sp = STACK_TOP;
static uint64_t ret_stack[MAXDEPTH];
static int depth;
static int cur_f, cur_i;

static char *out_buf;
static size_t out_len, out_cap;
static unsigned long long lines_total, lines_skip, lines_out;

/* A generated good line waits here until the bad-line inserter has seen it. */
static void emit_line(const char *line, size_t len);

static void put_uop(const struct insn *in, int k, int src1, int src2, int dest, char flags,
		    char branch, char ldst, int64_t imm, uint64_t addr, uint64_t target)
{
	char line[256];
	int n = snprintf(line, sizeof(line),
			 "%d %" PRIx64 " %2d %2d %2d %c %c %c %9" PRId64 " %12" PRIx64 " %12" PRIx64
			 " %12" PRIx64 " %-8s %s\n",
			 k + 1, in->pc, src1, src2, dest, flags, branch, ldst, imm, addr,
			 in->pc + in->len, target, in->shape->macro, in->uname[k]);
	if (lines_skip) {
		lines_skip--;
		return;
	}
	if (lines_out >= lines_total)
		return;
	emit_line(line, (size_t)n);
}

static uint64_t data_addr(struct insn *in)
{
	uint64_t off = in->stride ? (in->counter * in->stride) % 0x10000 : 0;
	if (in->mem)
		return in->mem + off;
	return sp + (uint64_t)(in->imm & 0xff8) % 0x100 + off % 0x40;
}

/* Executes the current instruction: writes its micro-ops, moves cur_f/cur_i. */
static void step(void)
{
	struct func *fn = &funcs[cur_f];
	struct insn *in = &fn->insns[cur_i];
	int next_f = cur_f, next_i = cur_i + 1;
	int t0 = 44, t1 = 45;
	int r0 = in->reg[0], r1 = in->reg[1], r2 = in->reg[2];

	/* Special values, rarely, to exercise the widths of the immediate field. */
	int64_t imm = in->imm;
	uint64_t rare = rnd(40000);
	if (rare == 0)
		imm = INT64_MIN;
	else if (rare == 1)
		imm = INT64_MAX;

	for (int k = 0; k < in->nuops && lines_out < lines_total; k++) {
		uint64_t tgt;
		int taken;
		switch (in->role[k]) {
		case 'a': put_uop(in, k, r0, rnd(2) ? r1 : -1, r2, '-', '-', '-', 0, 0, 0); break;
		case 'A': put_uop(in, k, k ? t0 : r0, r1, r2, 'W', '-', '-', 0, 0, 0); break;
		case 'i': put_uop(in, k, r0, -1, r2, '-', '-', '-', imm, 0, 0); break;
		case 'I':
			put_uop(in, k, k ? t0 : r0, -1, rnd(2) ? r0 : t0, 'W', '-', '-', imm, 0, 0);
			break;
		case 'R': put_uop(in, k, -1, -1, r2, 'R', '-', '-', 1, 0, 0); break;
		case 'e':
			put_uop(in, k, r0, r1, k + 1 < in->nuops ? t0 : r2, '-', '-', '-', imm, 0,
				0);
			break;
		case 'p': put_uop(in, k, -1, -1, t1, '-', '-', '-', 0, 0, 0); break;
		case 'k':
			sp -= 8;
			put_uop(in, k, 4, -1, 4, '-', '-', '-', 8, 0, 0);
			break;
		case 'K':
			sp += 8;
			put_uop(in, k, 4, -1, 4, '-', '-', '-', 8, 0, 0);
			break;
		case 'l':
			put_uop(in, k, k ? t1 : -1, in->mem ? r1 : 4, k + 1 < in->nuops ? t0 : r2,
				'-', '-', 'L', in->imm, data_addr(in), 0);
			break;
		case 'L': put_uop(in, k, -1, 4, t0, '-', '-', 'L', 0, sp, 0); break;
		case 's':
			put_uop(in, k, k ? t0 : r0, in->mem ? r1 : 4, -1, '-', '-', 'S', in->imm,
				data_addr(in), 0);
			break;
		case 'S':
			put_uop(in, k, k ? t1 : r0, 4, -1, '-', '-', 'S', k ? 0 : -8,
				sp - (k ? 0 : 8), 0);
			break;
		case 'j':
			tgt = fn->insns[in->target].pc;
			taken = rnd(1000) < in->taken;
			put_uop(in, k, -1, -1, -1, 'R', taken ? 'T' : 'N', '-',
				(int64_t)(tgt - (in->pc + in->len)), 0, tgt);
			if (taken)
				next_i = in->target;
			break;
		case 'u':
			tgt = fn->insns[in->target].pc;
			put_uop(in, k, -1, -1, -1, '-', 'T', '-',
				(int64_t)(tgt - (in->pc + in->len)), 0, tgt);
			next_i = in->target;
			break;
		case 'c':
			tgt = funcs[in->target].entry;
			put_uop(in, k, -1, -1, -1, '-', 'T', '-',
				(int64_t)(tgt - (in->pc + in->len)), 0, tgt);
			if (depth == MAXDEPTH) { /* forget the oldest caller */
				memmove(ret_stack, ret_stack + 1,
					sizeof(ret_stack[0]) * (MAXDEPTH - 1));
				depth--;
			}
			ret_stack[depth++] = ((uint64_t)cur_f << 32) | (uint64_t)(cur_i + 1);
			next_f = in->target;
			next_i = 0;
			break;
		case 'r':
		case 'x':
			if (in->role[k] == 'r' && depth > 0) {
				uint64_t r = ret_stack[--depth];
				next_f = (int)(r >> 32);
				next_i = (int)(r & 0xffffffff);
			} else { /* back to the main loop */
				next_f = 0;
				next_i = (int)rnd((uint64_t)funcs[0].n / 2);
				sp = STACK_TOP;
				depth = 0;
			}
			tgt = funcs[next_f].insns[next_i].pc;
			put_uop(in, k, t0, -1, -1, '-', 'T', '-', 0, 0, tgt);
			break;
		}
	}
	in->counter++;
	if (sp < STACK_TOP - 0x100000 || sp > STACK_TOP + 0x1000)
		sp = STACK_TOP;
	if (next_i >= funcs[next_f].n) { /* fell off the end: only after a taken branch to it */
		next_i = funcs[next_f].n - 1;
	}
	cur_f = next_f;
	cur_i = next_i;
}

/* Bad-line insertion. */
static unsigned long long n_bad, bad_done, long_len = 100000;
static FILE *bad_list;
static const char *const bad_kinds[] = {"few", "many", "hex", "dec", "long", "nul"};

static void out_write(const char *p, size_t n)
{
	if (out_len + n > out_cap) {
		fwrite(out_buf, 1, out_len, stdout);
		out_len = 0;
		if (n > out_cap) {
			fwrite(p, 1, n, stdout);
			return;
		}
	}
	memcpy(out_buf + out_len, p, n);
	out_len += n;
}

/* Writes the bad line of kind KIND made from the good line LINE (LEN bytes with its newline). */
static void write_bad(const char *line, size_t len, const char *kind)
{
	char buf[512];
	char *f[16];
	int nf = 0;
	memcpy(buf, line, len - 1);
	buf[len - 1] = 0;
	/* Field starts, in the copy (fields are separated by spaces). */
	for (char *p = buf; *p;) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		f[nf++] = p;
		while (*p && *p != ' ')
			p++;
	}
	if (!strcmp(kind, "few")) {
		char *end = f[13];
		while (end > buf && end[-1] == ' ')
			end--;
		*end = 0;
		out_write(buf, strlen(buf));
		out_write("\n", 1);
	} else if (!strcmp(kind, "many")) {
		out_write(buf, strlen(buf));
		out_write("  EXTRA\n", 8);
	} else if (!strcmp(kind, "hex")) {
		out_write(buf, (size_t)(f[1] - buf + 1));
		out_write("g", 1);
		out_write(f[1] + 1, strlen(f[1] + 1));
		out_write("\n", 1);
	} else if (!strcmp(kind, "dec")) {
		out_write(buf, (size_t)(f[2] - buf));
		out_write("x1", 2);
		char *rest = f[2];
		while (*rest != ' ')
			rest++;
		out_write(rest, strlen(rest));
		out_write("\n", 1);
	} else if (!strcmp(kind, "long")) {
		size_t head = (size_t)(f[13] - buf);
		out_write(buf, head);
		for (unsigned long long i = head; i < long_len; i++)
			out_write("X", 1);
		out_write("\n", 1);
	} else { /* nul */
		size_t at = (size_t)(f[13] - buf) + 1;
		out_write(buf, at);
		out_write("", 1);
		out_write(buf + at, strlen(buf + at));
		out_write("\n", 1);
	}
}

static void emit_line(const char *line, size_t len)
{
	/* Bad line b (from 0) goes before good line (b + 1) * N / (B + 1) (from 0). */
	while (bad_done < n_bad && lines_out == (bad_done + 1) * lines_total / (n_bad + 1)) {
		const char *kind = bad_kinds[bad_done % (sizeof(bad_kinds) / sizeof(bad_kinds[0]))];
		write_bad(line, len, kind);
		if (bad_list)
			fprintf(bad_list, "%llu %s\n", lines_out + bad_done + 1, kind);
		bad_done++;
	}
	out_write(line, len);
	lines_out++;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"lines", required_argument, NULL, 'n'},
	    {"seed", required_argument, NULL, 's'},
	    {"skip", required_argument, NULL, 'k'},
	    {"bad", required_argument, NULL, 'b'},
	    {"bad-list", required_argument, NULL, 'B'},
	    {"long-len", required_argument, NULL, 'L'},
	    {NULL, 0, NULL, 0},
	};
	unsigned long long seed = 1;
	const char *bad_path = NULL;
	int c;

	lines_total = 1000;
	while ((c = getopt_long(argc, argv, "n:s:k:b:B:L:", opts, NULL)) != -1) {
		switch (c) {
		case 'n': lines_total = strtoull(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'k': lines_skip = strtoull(optarg, NULL, 0); break;
		case 'b': n_bad = strtoull(optarg, NULL, 0); break;
		case 'B': bad_path = optarg; break;
		case 'L': long_len = strtoull(optarg, NULL, 0); break;
		default:
			fprintf(stderr,
				"usage: gen_cis501 [--lines N] [--seed S] [--skip K] [--bad B] "
				"[--bad-list FILE] [--long-len L]\n");
			return 2;
		}
	}
	if (long_len < 200)
		long_len = 200;
	rng_state ^= (seed + 1) * 0xbf58476d1ce4e5b9ull;
	if (!rng_state)
		rng_state = 1;
	if (bad_path && !(bad_list = fopen(bad_path, "w"))) {
		perror(bad_path);
		return 1;
	}
	out_cap = 1 << 20;
	out_buf = malloc(out_cap);
	if (!out_buf)
		return 1;

	build_program();
	/* Start with a CALL, so that --skip 1..3 cuts a macro-op. */
	static struct insn start;
	set_shape(&start, find_shape("CALL", "SAVE_PC/p,SUB_IMM/k,STORE/S,JMP_IMM/c"));
	start.pc = CODE_BASE - 0x100;
	start.len = 5;
	start.target = 1;
	cur_f = 0;
	cur_i = 0;
	{
		/* Run the start CALL by hand: its return goes to the main loop. */
		struct insn *in = &start;
		sp -= 8;
		put_uop(in, 0, -1, -1, 45, '-', '-', '-', 0, 0, 0);
		put_uop(in, 1, 4, -1, 4, '-', '-', '-', 8, 0, 0);
		put_uop(in, 2, 45, 4, -1, '-', '-', 'S', 0, sp, 0);
		put_uop(in, 3, -1, -1, -1, '-', 'T', '-',
			(int64_t)(funcs[1].entry - (in->pc + in->len)), 0, funcs[1].entry);
		cur_f = 1;
		cur_i = 0;
	}
	while (lines_out < lines_total)
		step();
	fwrite(out_buf, 1, out_len, stdout);
	if (bad_list && fclose(bad_list))
		return 1;
	return ferror(stdout) || fflush(stdout) ? 1 : 0;
}
