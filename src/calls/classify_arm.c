/* Calls, returns and other jumps of ARM instructions, from their disassembly as Tarmac traces
 * show it (calls.h; the rules are in doc/calls.md). Only the mnemonic and the registers
 * written matter: a branch's target is the next instruction's pc, which the tracker reads. */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "calls/calls.h"

enum { MAX_MNEMONIC = 16, MAX_OPERANDS = 128 };

static const char *const conditions[] = {"EQ", "NE", "CS", "HS", "CC", "LO", "MI", "PL", "VS",
					 "VC", "HI", "LS", "GE", "LT", "GT", "LE", "AL"};

static bool is_condition(const char *s)
{
	for (size_t i = 0; i < sizeof(conditions) / sizeof(conditions[0]); i++)
		if (strcmp(s, conditions[i]) == 0)
			return true;
	return false;
}

/* Whether m is base, or base and a condition ("BLEQ" for "BL"). */
static bool is(const char *m, const char *base)
{
	size_t n = strlen(base);
	return strncmp(m, base, n) == 0 && (m[n] == '\0' || is_condition(m + n));
}

static bool is_one_of(const char *m, const char *const *bases)
{
	for (; *bases; bases++)
		if (strcmp(m, *bases) == 0)
			return true;
	return false;
}

/* The register named at ops[0 .. len), in lower case: pc, lr or sp by any of their names. */
static const char *canonical_register(const char *r, size_t len)
{
	static const struct {
		const char *name, *canonical;
	} aliases[] = {{"pc", "pc"},  {"r15", "pc"}, {"lr", "lr"}, {"r14", "lr"},
		       {"x30", "lr"}, {"sp", "sp"},  {"r13", "sp"}};
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strlen(aliases[i].name) == len && strncmp(r, aliases[i].name, len) == 0)
			return aliases[i].canonical;
	return "";
}

/* The first operand's register ("pc" of "pc, lr"), canonical, or "". */
static const char *first_register(const char *ops)
{
	size_t len = strcspn(ops, ", \t{[!");
	return canonical_register(ops, len);
}

/* Whether a register list {...} in ops holds reg. */
static bool list_holds(const char *ops, const char *reg)
{
	const char *open = strchr(ops, '{');
	if (!open)
		return false;
	for (const char *p = open + 1; *p && *p != '}';) {
		p += strspn(p, ", \t");
		size_t len = strcspn(p, ", \t}");
		if (strcmp(canonical_register(p, len), reg) == 0)
			return true;
		p += len;
	}
	return false;
}

/* The operand after the first ("lr" of "pc, lr"), canonical, or "". */
static const char *second_register(const char *ops)
{
	const char *comma = strchr(ops, ',');
	if (!comma)
		return "";
	comma += strspn(comma + 1, " \t") + 1;
	return first_register(comma);
}

static enum tm_call_kind classify_a64(const char *m, const char *ops)
{
	static const char *const calls[] = {"BL",    "BLR",    "BLRAA", "BLRAAZ",
					    "BLRAB", "BLRABZ", NULL};
	static const char *const returns[] = {"RET", "RETAA", "RETAB", NULL};
	static const char *const jumps[] = {"B",      "BR",   "BRAA", "BRAAZ", "BRAB", "BRABZ",
					    "CBZ",    "CBNZ", "TBZ",  "TBNZ",  "ERET", "ERETAA",
					    "ERETAB", "SVC",  "HVC",  "SMC",   NULL};
	(void)ops;
	if (is_one_of(m, calls))
		return TM_CALL_KIND_CALL;
	if (is_one_of(m, returns))
		return TM_CALL_KIND_RETURN;
	if (is_one_of(m, jumps) || strncmp(m, "B.", 2) == 0 || strncmp(m, "BC.", 3) == 0)
		return TM_CALL_KIND_TRANSFER;
	return TM_CALL_KIND_PLAIN;
}

static enum tm_call_kind classify_a32(const char *m, const char *ops)
{
	static const char *const jumps[] = {"CBZ", "CBNZ", "TBB", "TBH",  "BXJ", "SVC",
					    "SWI", "HVC",  "SMC", "ERET", NULL};
	if (is(m, "BL") || is(m, "BLX"))
		return TM_CALL_KIND_CALL;
	if (is(m, "BX"))
		return strcmp(first_register(ops), "lr") == 0 ? TM_CALL_KIND_RETURN
							      : TM_CALL_KIND_TRANSFER;
	if (is(m, "B") || is_one_of(m, jumps) || strncmp(m, "RFE", 3) == 0)
		return TM_CALL_KIND_TRANSFER;
	/* loads of several registers, pc among them: a function's epilogue, or longjmp */
	if (is(m, "POP") || strncmp(m, "LDM", 3) == 0)
		return list_holds(ops, "pc") ? TM_CALL_KIND_RETURN : TM_CALL_KIND_PLAIN;
	if (strcmp(first_register(ops), "pc") != 0)
		return TM_CALL_KIND_PLAIN;
	/* other writes of pc: pops of pc alone and mov pc, lr return; the rest jump */
	if (strncmp(m, "LDR", 3) == 0 && strstr(ops, "[sp]") != NULL)
		return TM_CALL_KIND_RETURN;
	if ((is(m, "MOV") || is(m, "MOVS")) && strcmp(second_register(ops), "lr") == 0)
		return TM_CALL_KIND_RETURN;
	return TM_CALL_KIND_TRANSFER;
}

enum tm_call_kind tm_classify_arm(enum tm_arm_isa isa, const char *disassembly)
{
	char m[MAX_MNEMONIC + 1], ops[MAX_OPERANDS + 1];
	const char *p = disassembly + strspn(disassembly, " \t");
	size_t len = strcspn(p, " \t");
	if (len == 0 || len > MAX_MNEMONIC)
		return TM_CALL_KIND_PLAIN;
	for (size_t i = 0; i < len; i++)
		m[i] = (char)toupper((unsigned char)p[i]);
	m[len] = '\0';
	/* Thumb's width qualifiers say nothing of the flow */
	if (len > 2 && m[len - 2] == '.' && (m[len - 1] == 'W' || m[len - 1] == 'N'))
		m[len - 2] = '\0';
	p += len;
	p += strspn(p, " \t");
	size_t n = 0;
	for (; p[n] && n < MAX_OPERANDS; n++)
		ops[n] = (char)tolower((unsigned char)p[n]);
	ops[n] = '\0';
	return isa == TM_ARM_A64 ? classify_a64(m, ops) : classify_a32(m, ops);
}
