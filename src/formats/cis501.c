/* Penn CIS501 x86 micro-op text traces (specs/002_33cb1d52e51be77a.txt). Decisions: the
 * CIS501 section of doc/formats.md.
 *
 *   one line per micro-op, 14 fields separated by runs of spaces or tabs:
 *
 *   Uop PC Src1 Src2 Dest Flags Branch Ld/St Imm Addr Fallthrough Target Macro Micro
 *   dec hex dec  dec  dec  R/W/- T/N/-  L/S/-  dec hex  hex         hex    name  name
 *   1   48d1e2 -1 5 45 -   -      L      -264 7fffe7ff048 48d1e9  0      CMP   LOAD
 *
 * A line whose Uop is 1 starts a macro-op. A line that does not parse is reported and yields
 * no record; so does a line longer than CIS501_MAX_LINE bytes, skipped up to its newline. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cis501.h"
#include "text_lines.h"
#include "tracemount/diag.h"
#include "tracemount/registry.h"
#include "tracemount/util.h"

const char *const cis501_families[CIS501_N_FAMILIES] = {
    "move", "arith", "muldiv", "logic",	     "shift", "compare", "cond_branch", "jump",	 "call",
    "ret",  "stack", "string", "float_simd", "nop",   "sync",	 "system",	"other",
};

const char *const cis501_tags[CIS501_N_TAGS] = {
    "loads", "stores", "branches", "taken", "not_taken", "flags_read", "flags_write",
};

/* Families: the names each holds, as the course's traces and Intel's XED spell them (Jcc is
 * "J", CALL "CALL" or "CALL_NEAR"; XED's string MOVSD is "MOVSD", its SSE one "MOVSD_XMM").
 * Other names go through family_by_rule(), which knows the prefixes and suffixes of x86
 * mnemonic groups (Jcc, CMOVcc, SSE's PS/PD/SS/SD...). */
static const struct {
	uint8_t family;
	const char *names; /* separated by spaces */
} family_names[] = {
    {FAM_MOVE,
     "MOV MOVZX MOVSX MOVSXD MOVBE CMOV XCHG BSWAP CBW CWDE CDQE CWD CDQ CQO LAHF SAHF MOVNTI"},
    {FAM_ARITH, "ADD SUB ADC SBB INC DEC NEG LEA XADD ADCX ADOX"},
    {FAM_MULDIV, "MUL IMUL DIV IDIV MULX"},
    {FAM_LOGIC, "AND OR XOR NOT ANDN BT BTS BTR BTC BSF BSR POPCNT LZCNT TZCNT PDEP PEXT BZHI BLSI "
		"BLSR BLSMSK"},
    {FAM_SHIFT, "SHL SHR SAR SAL ROL ROR RCL RCR SHLD SHRD SHLX SHRX SARX RORX"},
    {FAM_COMPARE, "CMP TEST SET"},
    {FAM_COND_BRANCH, "J LOOP LOOPE LOOPNE JCXZ JECXZ JRCXZ"},
    {FAM_JUMP, "JMP"},
    {FAM_CALL, "CALL CALL_NEAR CALL_FAR"},
    {FAM_RET, "RET RET_NEAR RET_FAR"},
    {FAM_STACK, "PUSH POP PUSHF POPF PUSHFQ POPFQ PUSHA POPA LEAVE ENTER"},
    {FAM_STRING,
     "MOVS MOVSB MOVSW MOVSD MOVSQ STOS STOSB STOSW STOSD STOSQ LODS LODSB LODSW LODSD LODSQ SCAS "
     "SCASB SCASW SCASD SCASQ CMPS CMPSB CMPSW CMPSD CMPSQ INSB INSW INSD OUTSB OUTSW OUTSD"},
    {FAM_FLOAT_SIMD, "EMMS MOVD MOVQ LDMXCSR STMXCSR"},
    {FAM_NOP, "NOP FNOP PAUSE ENDBR32 ENDBR64"},
    {FAM_SYNC, "LFENCE MFENCE SFENCE CMPXCHG CMPXCHG8B CMPXCHG16B"},
    {FAM_SYSTEM, "SYSCALL SYSENTER SYSEXIT SYSRET INT INT3 INTO IRET IRETD IRETQ CPUID RDTSC "
		 "RDTSCP RDPMC HLT UD2 CLI STI IN OUT RDMSR WRMSR INVLPG CLFLUSH WBINVD XGETBV "
		 "RDRAND RDSEED VERR VERW LGDT SGDT LIDT SIDT"},
};

/* An open-addressing table of family_names by (key, length), filled once: every line asks. */
#define FAMILY_SLOTS_LOG 9 /* 512 slots for about 200 names */
#define FAMILY_SLOTS	 (1u << FAMILY_SLOTS_LOG)

static struct {
	uint64_t key;
	const char *name; /* NULL: empty */
	uint16_t len;
	uint8_t family;
} family_slots[FAMILY_SLOTS];
static pthread_once_t family_once = PTHREAD_ONCE_INIT;

static unsigned family_slot(uint64_t key, size_t len)
{
	return (unsigned)(((key ^ len) * 0x9e3779b97f4a7c15ull) >> (64 - FAMILY_SLOTS_LOG));
}

static void family_add(const char *name, size_t len, uint8_t family)
{
	uint64_t key = tm_name_key((const uint8_t *)name, len, (const uint8_t *)name);
	unsigned s = family_slot(key, len);
	while (family_slots[s].name)
		s = (s + 1) & (FAMILY_SLOTS - 1);
	family_slots[s].key = key;
	family_slots[s].name = name;
	family_slots[s].len = (uint16_t)len;
	family_slots[s].family = family;
}

static void family_init(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(family_names); i++)
		for (const char *p = family_names[i].names; *p;) {
			size_t len = strcspn(p, " ");
			family_add(p, len, family_names[i].family);
			p += len + (p[len] == ' ');
		}
}

static bool has_prefix(const uint8_t *n, size_t len, const char *s)
{
	size_t l = strlen(s);
	return len >= l && memcmp(n, s, l) == 0;
}

static bool has_suffix(const uint8_t *n, size_t len, const char *s)
{
	size_t l = strlen(s);
	return len >= l && memcmp(n + len - l, s, l) == 0;
}

static unsigned family_by_rule(const uint8_t *n, size_t len)
{
	static const struct {
		const char *prefix;
		uint8_t family;
	} prefixes[] = {
	    /* longer prefixes before the shorter ones they start with */
	    {"REP", FAM_STRING},     {"CMOV", FAM_MOVE},	{"SET", FAM_COMPARE},
	    {"JMP", FAM_JUMP},	     {"J", FAM_COND_BRANCH},	{"LOOP", FAM_COND_BRANCH},
	    {"CALL", FAM_CALL},	     {"RET", FAM_RET},		{"IRET", FAM_SYSTEM},
	    {"SYS", FAM_SYSTEM},     {"XSAVE", FAM_SYSTEM},	{"XRSTOR", FAM_SYSTEM},
	    {"PUSH", FAM_STACK},     {"POP", FAM_STACK},	{"NOP", FAM_NOP},
	    {"CMPXCHG", FAM_SYNC},   {"LOCK", FAM_SYNC},	{"PREFETCH", FAM_OTHER},
	    {"F", FAM_FLOAT_SIMD},   {"V", FAM_FLOAT_SIMD},	{"P", FAM_FLOAT_SIMD},
	    {"CVT", FAM_FLOAT_SIMD}, {"MOVDQ", FAM_FLOAT_SIMD},
	};
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (has_prefix(n, len, prefixes[i].prefix))
			return prefixes[i].family;
	/* SSE scalar and packed: ADDSD, MOVAPS, SQRTPD...; the string forms (MOVSD, CMPSD) are
	 * in the table, as XED names them (its SSE MOVSD is MOVSD_XMM) */
	if (has_suffix(n, len, "PS") || has_suffix(n, len, "PD") || has_suffix(n, len, "SS") ||
	    has_suffix(n, len, "SD") || memmem(n, len, "_XMM", 4))
		return FAM_FLOAT_SIMD;
	return FAM_OTHER;
}

/* The family of a macro opcode name; family_init() has run. */
static unsigned family_lookup(const uint8_t *name, size_t len, const uint8_t *limit)
{
	uint64_t key = tm_name_key(name, len, limit);
	for (unsigned s = family_slot(key, len); family_slots[s].name;
	     s = (s + 1) & (FAMILY_SLOTS - 1))
		if (family_slots[s].key == key && family_slots[s].len == len &&
		    (len <= 8 || memcmp(family_slots[s].name + 8, name + 8, len - 8) == 0))
			return family_slots[s].family;
	return family_by_rule(name, len);
}

/* Parsing one line. */

/* Checkpointed decoder state. */
struct cis501_state {
	struct tm_lines lines;
	uint64_t macro; /* lines with Uop 1 consumed */
};

/* Why a line does not parse, worked out on the error path only (explain()). */
enum problem { P_SYNTAX, P_RANGE };

static inline bool is_sep(uint8_t c)
{
	return c == ' ' || c == '\t';
}

/* The field scanners below rely on line[len] being readable and not a field byte (the "\n",
 * or the "\r" of a CR LF, or a copied sentinel): loops stop there without testing the end. */

static inline const uint8_t *skip_sep(const uint8_t *p)
{
	while (is_sep(*p))
		p++;
	return p;
}

/* A signed decimal in [lo, hi] ending at a separator or at e. Returns the byte after it, or
 * NULL with *why set; *text_len is the length of its normalised form. */
static inline const uint8_t *dec_field(const uint8_t *p, const uint8_t *e, int64_t lo, int64_t hi,
				       int64_t *v, unsigned *text_len, enum problem *why)
{
	bool neg = false;
	if (*p == '-' || *p == '+') { /* '+' as the reference's %i reads it */
		neg = *p == '-';
		p++;
	}
	const uint8_t *digits = p;
	while (*p == '0')
		p++;
	const uint8_t *sig = p;
	uint64_t m = 0;
	while ((unsigned)(*p - '0') < 10)
		m = m * 10 + (unsigned)(*p++ - '0'); /* wraps past 19 digits: rejected below */
	*why = P_SYNTAX;
	if (p == digits || (p != e && !is_sep(*p)))
		return NULL;
	size_t n = (size_t)(p - sig);
	*why = P_RANGE;
	if (n > 19 || (neg ? m > 0 - (uint64_t)lo : m > (uint64_t)hi))
		return NULL;
	*v = !neg || !m ? (int64_t)m : -(int64_t)(m - 1) - 1;
	*text_len = (unsigned)(n ? n : 1) + (neg && m);
	return p;
}

/* Hex digit values plus one; 0 for other bytes. */
static const uint8_t hex_plus_one[256] = {
    ['0'] = 1,	['1'] = 2,  ['2'] = 3,	['3'] = 4,  ['4'] = 5,	['5'] = 6,  ['6'] = 7,	['7'] = 8,
    ['8'] = 9,	['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* The value of a hex digit, or more than 15. */
static inline unsigned hex_value(uint8_t c)
{
	return (unsigned)hex_plus_one[c] - 1;
}

/* Lower- or upper-case hex, up to 64 bits; a 0x prefix is allowed, as the reference's %x
 * reads it. */
static inline const uint8_t *hex_field(const uint8_t *p, const uint8_t *e, uint64_t *v,
				       unsigned *text_len, enum problem *why)
{
	if (p[0] == '0' && (p[1] | 0x20) == 'x' && hex_value(p[2]) < 16)
		p += 2;
	const uint8_t *digits = p;
	while (*p == '0')
		p++;
	const uint8_t *sig = p;
	uint64_t m = 0;
	unsigned d;
	while ((d = hex_value(*p)) < 16) {
		m = m << 4 | d;
		p++;
	}
	*why = P_SYNTAX;
	if (p == digits || (p != e && !is_sep(*p)))
		return NULL;
	size_t n = (size_t)(p - sig);
	*why = P_RANGE;
	if (n > 16)
		return NULL;
	*v = m;
	*text_len = (unsigned)(n ? n : 1);
	return p;
}

/* A one-character field: the flag bits of c, which must be one of the three in `chars`, '-'
 * last (no bits). */
static inline const uint8_t *char_field(const uint8_t *p, const uint8_t *e, const char chars[3],
					const uint16_t bits[2], uint16_t *flags)
{
	if (p + 1 != e && !is_sep(p[1]))
		return NULL;
	if (*p == chars[0])
		*flags |= bits[0];
	else if (*p == chars[1])
		*flags |= bits[1];
	else if (*p != chars[2])
		return NULL;
	return p + 1;
}

/* An opcode name: printable ASCII other than the space. */
static inline const uint8_t *name_field(const uint8_t *p, const uint8_t *e)
{
	const uint8_t *start = p;
	while ((uint8_t)(*p - 0x21) < 0x5e)
		p++;
	return p > start && (p == e || is_sep(*p)) ? p : NULL;
}

/* Each field's name in the specification, and what is wrong when it does not parse. */
static const struct {
	const char *name, *syntax, *range;
} field_info[CIS501_FIELDS] = {
    {"Uop", "not a decimal number", "out of range (32-bit signed)"},
    {"PC", "not a hexadecimal number", "out of range (more than 64 bits)"},
    {"Src1", "not a decimal number", "out of range (32-bit signed)"},
    {"Src2", "not a decimal number", "out of range (32-bit signed)"},
    {"Dest", "not a decimal number", "out of range (32-bit signed)"},
    {"Flags", "not one of R, W, -", NULL},
    {"Branch", "not one of T, N, -", NULL},
    {"Ld/St", "not one of L, S, -", NULL},
    {"Immediate", "not a decimal number", "out of range (64-bit signed)"},
    {"Mem. Address", "not a hexadecimal number", "out of range (more than 64 bits)"},
    {"Fallthrough PC", "not a hexadecimal number", "out of range (more than 64 bits)"},
    {"Target PC", "not a hexadecimal number", "out of range (more than 64 bits)"},
    {"Macro Opcode", "not a name", NULL},
    {"Micro Opcode", "not a name", NULL},
};

/* Parses line[0, len) (no newline, no CR) into r. line[len] must be readable and not a field
 * byte (see skip_sep); limit bounds the readable bytes; the family table is ready. Returns the
 * number of the first field that does not parse (1-based) with *why set, 0 when the line is
 * good, or -1 when fields are missing or in excess. Sets everything but head.raw_* and macro;
 * dump_len lacks the macro-op number's digits. */
static int parse_line(const uint8_t *line, size_t len, const uint8_t *limit,
		      struct cis501_record *r, enum problem *why)
{
	static const char flag_chars[3] = {'R', 'W', '-'}, branch_chars[3] = {'T', 'N', '-'},
			  ldst_chars[3] = {'L', 'S', '-'};
	static const uint16_t flag_bits[2] = {F_FLAGS_READ, F_FLAGS_WRITE},
			      branch_bits[2] = {F_BRANCH | F_TAKEN, F_BRANCH | F_NOT_TAKEN},
			      ldst_bits[2] = {F_LOAD, F_STORE};
	const uint8_t *p = line, *e = line + len;
	unsigned text = 0, l;
	int64_t v;
	uint16_t flags = 0;

#define NEXT_FIELD(k)                                                                              \
	do {                                                                                       \
		p = skip_sep(p);                                                                   \
		if (p == e)                                                                        \
			return -1;                                                                 \
		field = (k);                                                                       \
	} while (0)
#define CHECK(expr)                                                                                \
	do {                                                                                       \
		if (!(p = (expr)))                                                                 \
			return field;                                                              \
		text += l;                                                                         \
	} while (0)

	int field;
	NEXT_FIELD(1);
	CHECK(dec_field(p, e, INT32_MIN, INT32_MAX, &v, &l, why));
	r->uop = (int32_t)v;
	NEXT_FIELD(2);
	CHECK(hex_field(p, e, &r->pc, &l, why));
	NEXT_FIELD(3);
	CHECK(dec_field(p, e, INT32_MIN, INT32_MAX, &v, &l, why));
	r->src1 = (int32_t)v;
	NEXT_FIELD(4);
	CHECK(dec_field(p, e, INT32_MIN, INT32_MAX, &v, &l, why));
	r->src2 = (int32_t)v;
	NEXT_FIELD(5);
	CHECK(dec_field(p, e, INT32_MIN, INT32_MAX, &v, &l, why));
	r->dest = (int32_t)v;
	*why = P_SYNTAX;
	l = 1;
	NEXT_FIELD(6);
	CHECK(char_field(p, e, flag_chars, flag_bits, &flags));
	NEXT_FIELD(7);
	CHECK(char_field(p, e, branch_chars, branch_bits, &flags));
	NEXT_FIELD(8);
	CHECK(char_field(p, e, ldst_chars, ldst_bits, &flags));
	NEXT_FIELD(9);
	CHECK(dec_field(p, e, INT64_MIN, INT64_MAX, &r->imm, &l, why));
	NEXT_FIELD(10);
	CHECK(hex_field(p, e, &r->addr, &l, why));
	NEXT_FIELD(11);
	CHECK(hex_field(p, e, &r->fallthrough, &l, why));
	NEXT_FIELD(12);
	CHECK(hex_field(p, e, &r->target, &l, why));
	*why = P_SYNTAX;
	NEXT_FIELD(13);
	const uint8_t *macro = p;
	l = 0;
	CHECK(name_field(p, e));
	r->macro_off = (uint16_t)(macro - line);
	r->macro_len = (uint16_t)(p - macro);
	NEXT_FIELD(14);
	const uint8_t *micro = p;
	CHECK(name_field(p, e));
	r->micro_off = (uint16_t)(micro - line);
	r->micro_len = (uint16_t)(p - micro);
	if (skip_sep(p) != e)
		return -1;
#undef NEXT_FIELD
#undef CHECK
	r->head.flags = flags;
	r->head.group = 0;
	r->head.cls = (uint8_t)family_lookup(macro, r->macro_len, limit);
	/* 14 fields and the macro-op number, each followed by a space or the newline */
	r->dump_len = (uint16_t)(text + r->macro_len + r->micro_len + CIS501_FIELDS + 1);
	r->pad = 0;
	return 0;
}

#define SHOWN_BYTES 24 /* of a field that does not parse, in its message */
/* explain()'s longest: a field's number and name, SHOWN_BYTES of it, "..." and what is wrong
 * (under 100 bytes) */
#define REASON_LEN 128

/* The reason a line does not parse, for errors.txt: the first byte that no field may hold,
 * else a wrong field count, else the first field that does not parse. */
static void explain(const uint8_t *line, size_t len, int field, enum problem why, char *out,
		    size_t out_len)
{
	for (size_t i = 0; i < len; i++) {
		uint8_t c = line[i];
		if (c == '\t' || (c >= 0x20 && c < 0x7f))
			continue;
		if (c == 0)
			snprintf(out, out_len, "NUL byte at column %zu", i + 1);
		else
			snprintf(out, out_len, "byte 0x%02x at column %zu", c, i + 1);
		return;
	}
	unsigned fields = 0;
	const uint8_t *p = line, *e = line + len, *tok = NULL;
	size_t tok_len = 0;
	for (;;) {
		while (p < e && is_sep(*p))
			p++;
		if (p == e)
			break;
		const uint8_t *start = p;
		while (p < e && !is_sep(*p))
			p++;
		if (++fields == (unsigned)field) {
			tok = start;
			tok_len = (size_t)(p - start);
		}
	}
	if (fields == 0) {
		snprintf(out, out_len, "empty line");
	} else if (fields != CIS501_FIELDS || field <= 0 || !tok) {
		snprintf(out, out_len, "%u fields, expected %u", fields, CIS501_FIELDS);
	} else {
		int shown = tok_len > SHOWN_BYTES ? SHOWN_BYTES : (int)tok_len;
		const char *what = why == P_RANGE && field_info[field - 1].range
				       ? field_info[field - 1].range
				       : field_info[field - 1].syntax;
		snprintf(out, out_len, "field %d (%s) \"%.*s%s\" is %s", field,
			 field_info[field - 1].name, shown, (const char *)tok,
			 (size_t)shown < tok_len ? "..." : "", what);
	}
}

/* Decoding. */

static unsigned decimal_digits_of(uint64_t v, uint64_t *next)
{
	unsigned n = 1;
	uint64_t p = 10;
	while (v >= p && n < 19) {
		p *= 10;
		n++;
	}
	*next = v >= p ? UINT64_MAX : p; /* 20 digits: no next power */
	if (v >= p)
		n++;
	return n;
}

static void report_bad(const uint8_t *line, size_t len, uint64_t number, int field,
		       enum problem why, struct tm_diag *diag)
{
	char reason[REASON_LEN];
	if (!diag)
		return;
	explain(line, len, field, why, reason, sizeof(reason));
	tm_diag_line(diag, number, "%s: line skipped", reason);
}

static int cis501_decode(void *state, const struct tm_decode_in *in, void *recs, size_t max,
			 size_t *n_out, size_t *used, struct tm_diag *diag)
{
	struct cis501_state *restrict s = state;
	struct cis501_record *restrict out = recs;
	const uint8_t *limit = in->len ? in->buf + in->len : in->buf;
	size_t pos = 0, n = 0;
	int ret = 0;
	uint64_t next_pow;
	unsigned macro_digits = decimal_digits_of(s->macro, &next_pow);

	pthread_once(&family_once, family_init);

	struct tm_line l;
	while (n < max && tm_lines_next(&s->lines, in, &pos, CIS501_MAX_LINE, &l, &ret, diag)) {
		/* the last line without a newline gets one, for the scanners to stop at */
		uint8_t last[CIS501_MAX_LINE + 1];
		const uint8_t *text = l.text, *text_limit = limit;
		if (!l.newline) {
			memcpy(last, l.text, l.text_len);
			last[l.text_len] = '\n';
			text = last;
			text_limit = last + l.text_len + 1;
		}
		struct cis501_record *r = &out[n];
		enum problem why = P_SYNTAX;
		int field = parse_line(text, l.text_len, text_limit, r, &why);
		if (field) {
			if (l.newline)
				report_bad(text, l.text_len, l.number, field, why, diag);
			else if (diag) {
				char reason[REASON_LEN];
				explain(text, l.text_len, field, why, reason, sizeof(reason));
				tm_diag_truncated(diag, in->raw_off + l.off,
						  "line %" PRIu64 " is cut by the end of the trace "
						  "(%s): not decoded",
						  l.number, reason);
			}
			continue;
		}
		if (tm_lines_report_end(&s->lines, &l, diag))
			r->head.flags |= F_CRLF;
		if (r->uop == 1 && ++s->macro == next_pow) {
			macro_digits++;
			next_pow = next_pow > UINT64_MAX / 10 ? UINT64_MAX : next_pow * 10;
		}
		r->macro = s->macro; /* 0 before the first Uop 1: a trace cut mid-instruction */
		r->dump_len = (uint16_t)(r->dump_len + macro_digits);
		r->head.raw_rel = (uint32_t)l.off;
		r->head.raw_len = (uint32_t)l.raw_len;
		n++;
	}
	*n_out = n;
	*used = pos;
	return ret;
}

/* Detection. */

static const char *const cis501_extensions[] = {"trace", NULL};

/* Whether name ends in .trace, or .trace.gz (when the core leaves .gz on). */
static bool has_trace_name(const char *name)
{
	size_t n = strlen(name);
	char base[NAME_MAX + 1];
	if (n > 3 && strcmp(name + n - 3, ".gz") == 0 && n - 3 < sizeof(base)) {
		memcpy(base, name, n - 3);
		base[n - 3] = 0;
		name = base;
	}
	return tm_name_has_extension(name, cis501_extensions);
}

#define PROBE_LINES 8

static int cis501_name_bid(const char *name)
{
	return has_trace_name(name) ? 50 : 0;
}

/* The first complete lines of the head, parsed: all of them CIS501 is strong evidence, as the
 * 14 typed fields of a line rarely happen by chance. */
static int cis501_content_bid(const char *name, const uint8_t *head, size_t head_len)
{
	bool named = has_trace_name(name);
	pthread_once(&family_once, family_init);
	unsigned good = 0, bad = 0;
	const uint8_t *p = head, *e = head + head_len;
	while (p < e && good + bad < PROBE_LINES) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(e - p));
		if (!nl && head_len >= TM_PROBE_HEAD_LEN)
			break; /* cut by the end of the head */
		const uint8_t *end = nl ? nl : e;
		size_t len = (size_t)(end - p);
		len -= len && end[-1] == '\r';
		uint8_t last[CIS501_MAX_LINE + 1];
		const uint8_t *text = p, *limit = e;
		if (!nl && len <= CIS501_MAX_LINE) { /* the file's last line: see cis501_decode */
			memcpy(last, p, len);
			last[len] = '\n';
			text = last;
			limit = last + len + 1;
		}
		struct cis501_record r;
		enum problem why;
		if (len > CIS501_MAX_LINE || parse_line(text, len, limit, &r, &why))
			bad++;
		else
			good++;
		p = nl ? nl + 1 : e;
	}
	if (good && !bad)
		return 95;
	if (good > bad)
		return named ? 80 : 60;
	return named ? 15 : 0;
}

/* A macro-op's fetch at its first micro-op, and each micro-op's load and store: the addresses
 * stats.json's data_pages_4k counts. */
static unsigned cis501_accesses(const struct tm_chunk *c, size_t i, struct tm_access *out)
{
	const struct cis501_record *r = cis501_rec(c, i);
	unsigned n = 0;
	if (r->uop == 1)
		out[n++] = (struct tm_access){.addr = r->pc, .kind = TM_ACCESS_FETCH};
	if (r->head.flags & F_LOAD)
		out[n++] = (struct tm_access){.addr = r->addr, .kind = TM_ACCESS_READ};
	if (r->head.flags & F_STORE)
		out[n++] = (struct tm_access){.addr = r->addr, .kind = TM_ACCESS_WRITE};
	return n;
}

/* An x86 instruction is its macro-op's first micro-op, as long as its fall-through says; the
 * branch micro-op after it, if any, brings its outcome. */
static bool cis501_instruction(const struct tm_chunk *c, size_t i, struct tm_insn *out)
{
	const struct cis501_record *r = cis501_rec(c, i);
	uint8_t flow = TM_FLOW_NONE;
	if (r->head.flags & F_BRANCH)
		flow = r->head.cls != FAM_COND_BRANCH ? TM_FLOW_JUMP
		       : r->head.flags & F_TAKEN      ? TM_FLOW_TAKEN
						      : TM_FLOW_NOT_TAKEN;
	if (r->uop != 1 && flow == TM_FLOW_NONE)
		return false;
	uint64_t size = r->fallthrough - r->pc;
	/* the macro-op's family, on each of its micro-ops: call and ret are calls/' calls and
	 * returns, other branches transfers */
	uint8_t call = r->head.cls == FAM_CALL	? TM_INSN_CALL
		       : r->head.cls == FAM_RET ? TM_INSN_RETURN
		       : flow != TM_FLOW_NONE	? TM_INSN_TRANSFER
						: TM_INSN_PLAIN;
	*out = (struct tm_insn){.pc = r->pc,
				.size = size && size < 16 ? (uint32_t)size : 1,
				.flow = flow,
				.call = call,
				.more = r->uop != 1};
	return true;
}

const struct tm_format tm_format_cis501 = {
    .name = "cis501",
    .description = "Penn CIS501 x86 micro-op text trace",
    .recognition = "lines of 14 CIS501 fields; extension .trace (also .trace.gz)",
    .extensions = cis501_extensions,
    .classes = cis501_families,
    .n_classes = CIS501_N_FAMILIES,
    .class_ext = "trace",
    .tags = cis501_tags,
    .n_tags = CIS501_N_TAGS,
    .record_size = sizeof(struct cis501_record),
    .state_size = sizeof(struct cis501_state),
    .stats_size = sizeof(struct cis501_stats),
    .chunk_records = 8192,
    .name_bid = cis501_name_bid,
    .content_bid = cis501_content_bid,
    .content_bid_max = 95,
    .decode = cis501_decode,
    .dump = &cis501_dump_ops,
    .stats_init = cis501_stats_init,
    .stats_update = cis501_stats_update,
    .stats_finish = cis501_stats_finish,
    .stats_free = cis501_stats_free,
    .extra_views = cis501_extra_views,
    .n_extra_views = ARRAY_SIZE(cis501_extra_views),
    .instruction = cis501_instruction,
    .accesses = cis501_accesses,
};
