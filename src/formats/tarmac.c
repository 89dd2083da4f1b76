/* QEMU4V and ARM Tarmac text traces: the decoder, detection and the two format tables. One
 * line is one record, taken apart by tarmac_parse.c; the rules, dialect by dialect, are in
 * doc/formats.md. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <strings.h>

#include "tarmac.h"
#include "calls/calls.h"
#include "text_lines.h"
#include "tracemount/diag.h"
#include "tracemount/registry.h"
#include "tracemount/util.h"

/* Decoding. */

/* What the decoder keeps of each processor, numbered as tm_insn.stream, for MIPS code
 * (doc/formats.md): whether its code is MIPS, its stack pointer from register lines, and the
 * kind and flow a jump or branch left for its delay slot, the processor's next instruction. */
struct tarmac_cpu {
	uint64_t sp;	  /* with C_SP */
	uint32_t slot_pc; /* with C_PENDING: the delay slot's pc, low 32 bits */
	uint8_t bits;	  /* C_* */
	uint8_t pending;  /* with C_PENDING: R_KIND and R_FLOW bits for the delay slot */
	uint8_t pad[2];
};

enum { C_MIPS = 1, C_SP = 2, C_PENDING = 4 };

struct tarmac_state {
	struct tm_lines lines;
	uint32_t last_cpu;
	uint32_t flags; /* S_LANES_* */
	struct tarmac_cpu cpus[TM_MAX_GROUPS];
};

enum {
	S_LANES_READ = 1, /* the last line was an LD record or its continuation */
	S_LANES_WRITE = 2,
};

static void report(const struct tarmac_line *l, uint64_t number, struct tm_diag *diag)
{
	if (!diag)
		return;
	if (!l->bad_tok.len) {
		tm_diag_line(diag, number, "%s: kept in class unknown", l->problem);
		return;
	}
	int n = l->bad_tok.len > 40 ? 40 : l->bad_tok.len;
	tm_diag_line(diag, number, "%s ('%.*s%s'): kept in class unknown", l->problem, n,
		     (const char *)l->text + l->bad_tok.off, l->bad_tok.len > 40 ? "..." : "");
}

/* The processor of cpu as tm_insn.stream numbers it (tarmac_instruction). */
static unsigned stream_of(uint32_t cpu)
{
	return cpu < TM_MAX_GROUPS ? cpu : 0;
}

static unsigned hex_digit(uint8_t c)
{
	return c <= '9' ? (unsigned)(c - '0') : (unsigned)((c | 0x20) - 'a' + 10);
}

/* The value of the hex token at text[off, len) (to a blank), with '_' separators: at most 16
 * digits. Returns whether it is one. */
static bool hex_value(const uint8_t *text, size_t off, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	unsigned digits = 0;
	for (; off < len && text[off] != ' ' && text[off] != '\t'; off++) {
		if (text[off] == '_')
			continue;
		if (!isxdigit(text[off]) || ++digits > 16)
			return false;
		v = v << 4 | hex_digit(text[off]);
	}
	*out = v;
	return digits > 0;
}

/* The opcode of an instruction line as a 32-bit word, when it is one: 8 hex digits. */
static bool opcode_word(const struct tarmac_line *l, uint32_t *word)
{
	if (l->opcode.len != 8)
		return false;
	uint32_t w = 0;
	for (unsigned k = 0; k < 8; k++) {
		uint8_t c = l->text[l->opcode.off + k];
		if (!isxdigit(c))
			return false;
		w = w << 4 | hex_digit(c);
	}
	*word = w;
	return true;
}

/* Whether l may show MIPS code: ISET A, and a mnemonic that starts with j or b, as MIPS's
 * jumps and branches do. Most ARM lines are not, and cost no more than this look. */
static bool may_show_mips(const struct tarmac_line *l)
{
	if (!l->mnemonic.len || l->iset.len != 1 || (l->text[l->iset.off] | 0x20) != 'a')
		return false;
	uint8_t first = l->text[l->mnemonic.off] | 0x20;
	return first == 'j' || first == 'b';
}

/* The MIPS stack pointer's names on register lines: QEMU4V names registers rN. */
static bool is_mips_sp(const struct tarmac_line *l)
{
	static const char *const names[] = {"r29", "sp", "$sp", "$29"};
	for (size_t k = 0; k < ARRAY_SIZE(names); k++)
		if (l->iset.len == strlen(names[k]) &&
		    strncasecmp((const char *)l->text + l->iset.off, names[k], l->iset.len) == 0)
			return true;
	return false;
}

/* r->mips and r->sp of an instruction line l of cpu c (doc/formats.md): a processor's code is
 * MIPS from its first line that shows it; then each instruction is classified from its word,
 * and a jump or branch that ran gives its kind and flow to its delay slot, the processor's
 * next instruction when at pc + 4. The branch itself is a transfer that the tracker sees go
 * on to its delay slot, which is no jump; so is a likely branch that was not taken, which
 * skips its delay slot. */
static void classify_mips(struct tarmac_cpu *c, const struct tarmac_line *l,
			  struct tarmac_record *r)
{
	if (!(c->bits & C_MIPS) && !may_show_mips(l))
		return;
	uint32_t word;
	bool have_word = opcode_word(l, &word);
	if (!(c->bits & C_MIPS)) { /* shown by a jump or branch that its word encodes as MIPS */
		if (!have_word || !tm_mips_branch_named((const char *)l->text + l->mnemonic.off,
							l->mnemonic.len, word))
			return;
		c->bits |= C_MIPS;
	}
	bool ran = l->cls == TC_INSTRUCTION;
	uint8_t bits = R_MIPS | TM_INSN_PLAIN;
	enum tm_mips_slot slot = have_word ? tm_mips_delay_slot(word) : TM_MIPS_NO_SLOT;
	if (slot != TM_MIPS_NO_SLOT) /* its flow is its delay slot's */
		bits = ran ? R_MIPS | TM_INSN_TRANSFER
			   : R_MIPS | TM_INSN_PLAIN | TM_FLOW_NOT_TAKEN << R_FLOW_SHIFT;
	else if (have_word && ran && tm_classify_mips(word) != TM_CALL_KIND_PLAIN)
		bits = R_MIPS | TM_INSN_TRANSFER | TM_FLOW_JUMP << R_FLOW_SHIFT; /* syscall, eret */
	if ((c->bits & C_PENDING) && c->slot_pc == (uint32_t)l->va)
		bits = R_MIPS | c->pending;
	c->bits &= (uint8_t)~C_PENDING;
	if (slot != TM_MIPS_NO_SLOT && ran) {
		c->bits |= C_PENDING;
		c->slot_pc = (uint32_t)(l->va + 4);
		uint8_t flow = slot == TM_MIPS_SLOT_JUMP ? TM_FLOW_JUMP : TM_FLOW_COND;
		c->pending = (uint8_t)(tm_classify_mips(word) | flow << R_FLOW_SHIFT);
	}
	if (c->bits & C_SP) {
		bits |= R_SP;
		r->sp = c->sp;
	}
	r->mips = bits;
}

/* Fills r from the parsed line. */
static void make_record(struct tarmac_state *s, const struct tarmac_line *l,
			struct tarmac_record *r)
{
	r->head.cls = (uint8_t)l->cls;
	r->head.flags = (uint16_t)l->flags;
	r->cpu = l->has_cpu ? l->cpu : s->last_cpu;
	r->head.group = r->cpu < TM_MAX_GROUPS ? (uint8_t)r->cpu : UINT8_MAX;
	if (l->cls == TC_INSTRUCTION || l->cls == TC_SKIPPED || l->cls == TC_FETCH_FAILED)
		s->last_cpu = r->cpu;
	r->time = l->time;
	r->addr = l->va;
	/* memory: bytes accessed; instructions: the opcode's bytes (Thumb's 16-bit ones: 2) */
	r->size =
	    (uint16_t)(l->cls == TC_INSTRUCTION || l->cls == TC_SKIPPED || l->cls == TC_FETCH_FAILED
			   ? l->opcode.len / 2
			   : l->size);
	r->span[S_UNIT] = l->unit;
	r->span[S_ISET] = l->iset;
	r->span[S_MODE] = l->mode;
	r->span[S_MNEMONIC] = l->mnemonic;
	r->dump_len = (uint16_t)tarmac_dump_line(l, r->cpu, NULL);
	r->mips = 0;
	r->sp = 0;
	struct tarmac_cpu *c = &s->cpus[stream_of(r->cpu)];
	if (l->cls == TC_INSTRUCTION || l->cls == TC_SKIPPED) {
		classify_mips(c, l, r);
	} else if (l->cls == TC_REGISTER && is_mips_sp(l)) {
		uint64_t sp;
		if (hex_value(l->text, l->tail, l->len, &sp)) {
			c->sp = sp;
			c->bits |= C_SP;
		}
	}
	s->flags &= ~(uint32_t)(S_LANES_READ | S_LANES_WRITE);
	if (l->flags & F_LANES)
		s->flags |= l->cls == TC_READ ? S_LANES_READ : S_LANES_WRITE;
}

static int tarmac_decode(void *state, const struct tm_decode_in *in, void *recs, size_t max,
			 size_t *n_out, size_t *used, struct tm_diag *diag)
{
	struct tarmac_state *s = state;
	struct tarmac_record *out = recs;
	size_t pos = 0, n = 0;
	int ret = 0;

	struct tm_line l;
	/* an over-long line, skipped, breaks a run of LD/ST continuation lines */
	uint64_t lines_before = s->lines.line;
	while (n < max && tm_lines_next(&s->lines, in, &pos, TARMAC_MAX_LINE, &l, &ret, diag)) {
		if (l.number != lines_before + 1)
			s->flags &= ~(uint32_t)(S_LANES_READ | S_LANES_WRITE);
		lines_before = l.number;
		int cont = s->flags & S_LANES_READ    ? TC_READ
			   : s->flags & S_LANES_WRITE ? TC_WRITE
						      : -1;
		struct tarmac_line t;
		tarmac_parse(l.text, l.text_len, cont, &t);
		struct tarmac_record *r = &out[n++];
		make_record(s, &t, r);
		r->head.raw_rel = (uint32_t)l.off;
		r->head.raw_len = (uint32_t)l.raw_len;
		if (t.cls == TC_UNKNOWN)
			report(&t, l.number, diag);
		if (tm_lines_report_end(&s->lines, &l, diag))
			r->head.flags |= F_CRLF;
	}
	*n_out = n;
	*used = pos;
	return ret;
}

/* Detection. */

static const char *const tarmac_extensions[] = {"tarmac", NULL};
static const char *const qemu4v_extensions[] = {"qemu4v", "q4v", NULL};

/* MicroTESK's QEMU4V logs: tracer_NNNN.log. */
static bool is_tracer_log(const char *name)
{
	const char *base = tm_base_name(name);
	if (strncmp(base, "tracer_", 7) != 0)
		return false;
	const char *p = base + 7;
	while (isdigit((unsigned char)*p))
		p++;
	return p > base + 7 && strcmp(p, ".log") == 0;
}

#define PROBE_LINES 16

struct evidence {
	unsigned records, unknown;
	bool numeric_cpu; /* "1 clk 0 IT": QEMU4V */
};

/* The complete lines of the head, parsed: timed records of known kinds and no unknown line
 * is strong evidence. Comments, blank lines and other untimed events do not count towards
 * PROBE_LINES: parsertest.txt opens with a 27-line licence. */
static struct evidence probe_content(const uint8_t *head, size_t head_len)
{
	struct evidence e = {0};
	const uint8_t *p = head, *end = head + head_len;
	int cont = -1;
	for (unsigned i = 0; p < end && i < PROBE_LINES;) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl && head_len >= TM_PROBE_HEAD_LEN)
			break; /* cut by the end of the head */
		size_t len = (size_t)((nl ? nl : end) - p);
		len -= len && p[len - 1] == '\r';
		struct tarmac_line l;
		if (len > TARMAC_MAX_LINE) {
			e.unknown++;
			break;
		}
		tarmac_parse(p, len, cont, &l);
		if (l.cls == TC_UNKNOWN)
			e.unknown++;
		else if ((l.flags & F_TIME) && l.cls != TC_EVENT)
			e.records++;
		i += l.cls != TC_EVENT || (l.flags & F_TIME);
		e.numeric_cpu |= l.numeric_cpu;
		cont = (l.flags & F_LANES) ? (int)l.cls : -1;
		p = nl ? nl + 1 : end;
	}
	return e;
}

static bool qemu4v_named(const char *name)
{
	return tm_name_has_extension(name, qemu4v_extensions) || is_tracer_log(name);
}

static int tarmac_name_bid(const char *name)
{
	return !qemu4v_named(name) && tm_name_has_extension(name, tarmac_extensions) ? 50 : 0;
}

static int tarmac_content_bid(const char *name, const uint8_t *head, size_t head_len)
{
	if (qemu4v_named(name))
		return 0;
	struct evidence e = probe_content(head, head_len);
	if (tm_name_has_extension(name, tarmac_extensions))
		return e.records > e.unknown ? 95 : 50;
	if (!e.records || e.unknown)
		return 0;
	return e.numeric_cpu ? 80 : 90;
}

static int qemu4v_name_bid(const char *name)
{
	return qemu4v_named(name) ? 50 : 0;
}

static int qemu4v_content_bid(const char *name, const uint8_t *head, size_t head_len)
{
	struct evidence e = probe_content(head, head_len);
	if (qemu4v_named(name))
		return e.records > e.unknown ? 95 : 50;
	return e.records && !e.unknown && e.numeric_cpu ? 92 : 0;
}

enum branch { NOT_BRANCH, BRANCH, COND_BRANCH };

/* Whether the word at s (len bytes, lower case) is an ARM condition code. */
static bool is_cond_code(const char *s, size_t len)
{
	static const char codes[] = "eq ne cs hs cc lo mi pl vs vc hi ls ge lt gt le ";
	for (const char *p = codes; len == 2 && *p; p += 3)
		if (p[0] == s[0] && p[1] == s[1])
			return true;
	return false;
}

/* Whether the operands from p (up to a ';' comment) name the register pc. */
static bool names_pc(const uint8_t *p, const uint8_t *end)
{
	for (; p + 1 < end && *p != ';'; p++)
		if ((p[0] | 0x20) == 'p' && (p[1] | 0x20) == 'c' && !isalnum(p[-1]) &&
		    (p + 2 == end || !isalnum(p[2])))
			return true;
	return false;
}

/* An ARM branch, by the mnemonic the disassembly starts with (doc/formats.md): B, BL, BX, BLX,
 * BR, BLR, RET, ERET (and their pointer-authenticating forms), POP and LDM of pc; conditional:
 * B.cond, CBZ, CBNZ, TBZ, TBNZ, and B, BL, BX, BLX with a condition code. */
static enum branch arm_branch(const uint8_t *line, struct tarmac_span m, const uint8_t *end)
{
	static const char *const cond[] = {"cbz", "cbnz", "tbz", "tbnz"};
	static const char *const always[] = {"b",     "bl",    "bx",	 "blx",	  "br",	   "blr",
					     "ret",   "eret",  "braa",	 "brab",  "blraa", "blrab",
					     "retaa", "retab", "eretaa", "eretab"};
	static const char *const bases[] = {"blx", "bx", "bl", "b"};
	char s[16]; /* longer than any branch mnemonic: a longer one is none */
	size_t n = m.len;
	if (!n || n >= sizeof(s))
		return NOT_BRANCH;
	for (size_t k = 0; k < n; k++)
		s[k] = (char)tolower(line[m.off + k]);
	s[n] = '\0';
	if (n > 2 && s[n - 2] == '.' && (s[n - 1] == 'w' || s[n - 1] == 'n'))
		s[n -= 2] = '\0'; /* Thumb's width */
	if (s[0] == 'b' && s[1] == '.')
		return COND_BRANCH; /* A64 B.cond */
	for (size_t k = 0; k < ARRAY_SIZE(cond); k++)
		if (strcmp(s, cond[k]) == 0)
			return COND_BRANCH;
	for (size_t k = 0; k < ARRAY_SIZE(always); k++)
		if (strcmp(s, always[k]) == 0)
			return BRANCH;
	for (size_t k = 0; k < ARRAY_SIZE(bases); k++) {
		size_t len = strlen(bases[k]);
		if (strncmp(s, bases[k], len) == 0 && is_cond_code(s + len, n - len))
			return COND_BRANCH;
	}
	if ((strcmp(s, "pop") == 0 || strncmp(s, "ldm", 3) == 0) &&
	    names_pc(line + m.off + m.len, end))
		return BRANCH;
	return NOT_BRANCH;
}

/* Whether the ARM classifier could call text[0, n) (a mnemonic and its operands) other than
 * plain: its mnemonics of calls, returns and jumps begin with these letters, and AArch32's
 * other writes of pc name it (pc or r15). Most instructions are none, and this look costs
 * less than the classifier's. */
static bool may_transfer(bool a64, const uint8_t *text, size_t n)
{
	switch (toupper(text[0])) {
	case 'B':
	case 'C':
	case 'E':
	case 'H':
	case 'R':
	case 'S':
	case 'T': return true;
	case 'L':
	case 'P': return !a64;
	}
	for (size_t k = 0; !a64 && k + 1 < n; k++) {
		int a = tolower(text[k]), b = tolower(text[k + 1]);
		if ((a == 'p' && b == 'c') ||
		    (a == 'r' && b == '1' && k + 2 < n && text[k + 2] == '5'))
			return true;
	}
	return false;
}

/* What an executed instruction does to calls, from its disassembly (the mnemonic to the end
 * of the line) and instruction set, by src/calls' ARM classifier. */
static uint8_t call_kind(const struct tarmac_record *r, const uint8_t *line)
{
	struct tarmac_span m = r->span[S_MNEMONIC], iset = r->span[S_ISET];
	if (!m.len || m.off >= r->head.raw_len)
		return TM_INSN_PLAIN;
	char set = iset.len ? (char)line[iset.off] : 'O';
	bool a64 = set == 'O' || set == 'o';
	if (!may_transfer(a64, line + m.off, r->head.raw_len - m.off))
		return TM_INSN_PLAIN;
	/* the longest disassembly worth reading: a register list of all 16 registers fits */
	char text[160];
	size_t n = r->head.raw_len - m.off;
	if (n >= sizeof(text))
		n = sizeof(text) - 1;
	memcpy(text, line + m.off, n);
	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r'))
		n--;
	text[n] = '\0';
	enum tm_arm_isa isa = a64			 ? TM_ARM_A64
			      : set == 'T' || set == 't' ? TM_ARM_THUMB
							 : TM_ARM_A32;
	return (uint8_t)tm_classify_arm(isa, text);
}

/* Executed (IT) and condition-failed (IS) instructions, on their processor. A branch that
 * failed its condition is not taken; a conditional one that ran is taken where the next PC of
 * its processor does not follow; the others always leave the straight line. */
static bool tarmac_instruction(const struct tm_chunk *c, size_t i, struct tm_insn *out)
{
	const struct tarmac_record *r = tarmac_rec(c, i);
	if (r->head.cls != TC_INSTRUCTION && r->head.cls != TC_SKIPPED)
		return false;
	*out = (struct tm_insn){
	    .pc = r->addr, .size = r->size ? r->size : 4, .stream = (uint8_t)stream_of(r->cpu)};
	/* a line without a time stamp, or a negative one (MicroTESK's -1 before the first): none */
	if ((r->head.flags & F_TIME) && r->time >= 0) {
		out->time = (uint64_t)r->time;
		out->known |= TM_INSN_HAS_TIME;
	}
	if (r->mips) { /* classified by the decoder, delay slots considered */
		out->call = r->mips & R_KIND;
		out->flow = (uint8_t)((r->mips & R_FLOW) >> R_FLOW_SHIFT);
		if (r->mips & R_SP) {
			out->sp = r->sp;
			out->known |= TM_INSN_HAS_SP;
		}
		if (out->call == TM_INSN_CALL) { /* the delay slot's: the ISA's return address */
			out->return_pc = r->addr + out->size;
			out->known |= TM_INSN_HAS_RETURN;
		}
		return true;
	}
	const uint8_t *line = c->raw + r->head.raw_rel;
	enum branch kind = arm_branch(line, r->span[S_MNEMONIC], line + r->head.raw_len);
	if (kind != NOT_BRANCH)
		out->flow = r->head.cls == TC_SKIPPED ? TM_FLOW_NOT_TAKEN
			    : kind == BRANCH	      ? TM_FLOW_JUMP
						      : TM_FLOW_COND;
	if (r->head.cls == TC_INSTRUCTION) /* a failed condition neither calls nor returns */
		out->call = call_kind(r, line);
	return true;
}

/* An instruction's fetch (executed or not: its code was there) and a memory line's read or
 * write, at the addresses stats.json's code_pages_4k and data_pages_4k count. */
static unsigned tarmac_accesses(const struct tm_chunk *c, size_t i, struct tm_access *out)
{
	const struct tarmac_record *r = tarmac_rec(c, i);
	uint8_t kind = r->head.cls == TC_INSTRUCTION || r->head.cls == TC_SKIPPED ? TM_ACCESS_FETCH
		       : r->head.cls == TC_READ					  ? TM_ACCESS_READ
		       : r->head.cls == TC_WRITE				  ? TM_ACCESS_WRITE
										  : 0xff;
	if (kind == 0xff)
		return 0;
	out[0] = (struct tm_access){.addr = r->addr, .kind = kind};
	return 1;
}

#define TARMAC_FORMAT_COMMON                                                                       \
	.classes = tarmac_classes, .n_classes = TARMAC_N_CLASSES, .group_view = "cpu/%u.txt",      \
	.record_size = sizeof(struct tarmac_record), .state_size = sizeof(struct tarmac_state),    \
	.stats_size = sizeof(struct tarmac_stats), .chunk_records = 8192, .content_bid_max = 95,   \
	.decode = tarmac_decode, .dump = &tarmac_dump_ops, .stats_init = tarmac_stats_init,        \
	.stats_update = tarmac_stats_update, .stats_finish = tarmac_stats_finish,                  \
	.stats_free = tarmac_stats_free, .extra_views = tarmac_extra_views,                        \
	.n_extra_views = ARRAY_SIZE(tarmac_extra_views), .instruction = tarmac_instruction,        \
	.accesses = tarmac_accesses, .table_views = tarmac_table_views,                            \
	.n_table_views = TARMAC_N_TABLE_VIEWS

const struct tm_format tm_format_tarmac = {
    .name = "tarmac",
    .description = "ARM Tarmac text trace (Fast Models, gem5, RTL and others)",
    .recognition = "extension .tarmac, or lines such as \"N clk IT (...)\"",
    .extensions = tarmac_extensions,
    .class_ext = "tarmac",
    .name_bid = tarmac_name_bid,
    .content_bid = tarmac_content_bid,
    .tables_finish = tarmac_tables_finish,
    TARMAC_FORMAT_COMMON,
};

const struct tm_format tm_format_qemu4v = {
    .name = "qemu4v",
    .description = "QEMU4V text trace (Tarmac syntax; MicroTESK logs)",
    .recognition = "extension .qemu4v or .q4v, name tracer_NNNN.log, or Tarmac lines with a "
		   "numeric cpu before IT",
    .extensions = qemu4v_extensions,
    .class_ext = "qemu4v",
    .name_bid = qemu4v_name_bid,
    .content_bid = qemu4v_content_bid,
    .tables_finish = qemu4v_tables_finish,
    TARMAC_FORMAT_COMMON,
};
