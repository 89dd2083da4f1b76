/* The CIS501 decoder (src/formats/cis501.c) through the format table: the record layout, the
 * families, field parsing, every bad-input rule, over-long lines, the checkpoint contract,
 * truncation at every byte, and the probe. Views and statistics: test_cis501_views.c. */
#include "cis501_check.h"

START_TEST(test_layout)
{
	const struct tm_format *f = fmt();
	ck_assert_str_eq(f->name, "cis501");
	ck_assert_uint_eq(f->n_classes, N_FAMILIES);
	for (unsigned c = 0; c < N_FAMILIES; c++)
		ck_assert_str_eq(f->classes[c], families[c]);
	ck_assert_uint_eq(f->n_tags, N_TAGS);
	for (unsigned t = 0; t < N_TAGS; t++)
		ck_assert_str_eq(f->tags[t], tags[t]);
	ck_assert_uint_eq(f->record_size, sizeof(struct rec));
	ck_assert_uint_eq(f->state_size % 8, 0);
	ck_assert_uint_le(f->state_size, 32);
	ck_assert_uint_eq(f->raw_record_len, 0);
	ck_assert_str_eq(f->class_ext, "trace");
	ck_assert_ptr_null(f->class_stream);
	ck_assert_uint_eq(f->common_classes, 0);
	ck_assert_ptr_nonnull(f->content_bid);
	ck_assert_uint_gt(f->chunk_records, 0);
	ck_assert_uint_eq(din_view()->class_mask, (1ull << N_FAMILIES) - 1);

	struct tm_view_table v;
	ck_assert_int_eq(tm_view_table_init(&v, f, "gcc-1K.trace"), 0);
	const char *paths[] = {"dump.txt",
			       "stats.json",
			       "errors.txt",
			       "class/move.txt",
			       "class/move.trace",
			       "class/cond_branch.txt",
			       "class/other.trace",
			       "class/loads.txt",
			       "class/loads.trace",
			       "class/not_taken.txt",
			       "class/flags_write.trace",
			       "convert/gcc-1K.din"};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		ck_assert_msg(tm_view_table_find(&v, paths[i]) >= 0, "no view %s", paths[i]);
	tm_view_table_free(&v);
}
END_TEST

/* The tests' table of families, cis501_families.txt: "name FAMILY NAME...", "prefix P FAMILY",
 * "suffix S FAMILY", "contains T FAMILY", "else FAMILY", one line per name or rule, in order. */
struct family_line {
	char kind[16], text[32], family[16];
};
struct family_table {
	struct family_line lines[512];
	unsigned n;
};

static const struct family_table *family_table(void)
{
	static struct family_table t;
	if (t.n)
		return &t;
	const char *dir = getenv("TM_MODELS");
	ck_assert_msg(dir != NULL, "TM_MODELS is not set (tests/unit/meson.build)");
	char path[4096], line[512];
	snprintf(path, sizeof(path), "%s/cis501_families.txt", dir);
	FILE *in = fopen(path, "r");
	ck_assert_msg(in != NULL, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), in)) {
		char *save, *kind = strtok_r(line, " \n", &save), *a, *b;
		if (!kind || kind[0] == '#')
			continue;
		a = strtok_r(NULL, " \n", &save);
		ck_assert_ptr_nonnull(a);
		if (strcmp(kind, "name") == 0) {
			while ((b = strtok_r(NULL, " \n", &save))) {
				ck_assert_uint_lt(t.n, 512);
				struct family_line *l = &t.lines[t.n++];
				snprintf(l->kind, sizeof(l->kind), "name");
				snprintf(l->text, sizeof(l->text), "%s", b);
				snprintf(l->family, sizeof(l->family), "%s", a);
			}
			continue;
		}
		b = strcmp(kind, "else") ? strtok_r(NULL, " \n", &save) : a;
		ck_assert_ptr_nonnull(b);
		ck_assert_uint_lt(t.n, 512);
		struct family_line *l = &t.lines[t.n++];
		snprintf(l->kind, sizeof(l->kind), "%s", kind);
		snprintf(l->text, sizeof(l->text), "%s", strcmp(kind, "else") ? a : "");
		snprintf(l->family, sizeof(l->family), "%s", b);
	}
	fclose(in);
	return &t;
}

/* The family the table gives a macro opcode: its name line, else its first rule. */
static const char *table_family(const char *name)
{
	const struct family_table *t = family_table();
	size_t len = strlen(name);
	for (unsigned i = 0; i < t->n; i++)
		if (strcmp(t->lines[i].kind, "name") == 0 && strcmp(t->lines[i].text, name) == 0)
			return t->lines[i].family;
	for (unsigned i = 0; i < t->n; i++) {
		const struct family_line *l = &t->lines[i];
		size_t tl = strlen(l->text);
		if (strcmp(l->kind, "else") == 0 ||
		    (strcmp(l->kind, "prefix") == 0 && strncmp(name, l->text, tl) == 0) ||
		    (strcmp(l->kind, "suffix") == 0 && len >= tl &&
		     strcmp(name + len - tl, l->text) == 0) ||
		    (strcmp(l->kind, "contains") == 0 && strstr(name, l->text)))
			return l->family;
	}
	ck_abort_msg("cis501_families.txt has no else line");
	return NULL;
}

/* One synthetic line with MACRO decodes into FAMILY. */
static void expect_family(const char *macro, const char *family)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "1 10 -1 -1 -1 - - - 0 0 14 0 %s NOP\n", macro);
	struct decoded d;
	decode_all(line, (size_t)n, 4, &d);
	ck_assert_uint_eq(d.n, 1);
	ck_assert_msg(strcmp(fmt()->classes[d.r[0].head.cls], family) == 0,
		      "%s: family %s, expected %s", macro, fmt()->classes[d.r[0].head.cls], family);
	decoded_free(&d);
}

/* Macro opcode -> family, as doc/views.md lists them (and the tests' table agrees). */
START_TEST(test_families)
{
	static const struct {
		const char *macro, *family;
	} rows[] = {
	    {"MOV", "move"},
	    {"MOVZX", "move"},
	    {"MOVSX", "move"},
	    {"CMOV", "move"},
	    {"CMOVNZ", "move"},
	    {"XCHG", "move"},
	    {"CDQE", "move"},
	    {"ADD", "arith"},
	    {"SUB", "arith"},
	    {"LEA", "arith"},
	    {"INC", "arith"},
	    {"NEG", "arith"},
	    {"ADC", "arith"},
	    {"SBB", "arith"},
	    {"DEC", "arith"},
	    {"MUL", "muldiv"},
	    {"IMUL", "muldiv"},
	    {"DIV", "muldiv"},
	    {"IDIV", "muldiv"},
	    {"MULX", "muldiv"},
	    {"AND", "logic"},
	    {"OR", "logic"},
	    {"XOR", "logic"},
	    {"NOT", "logic"},
	    {"POPCNT", "logic"},
	    {"BT", "logic"},
	    {"SHL", "shift"},
	    {"SAR", "shift"},
	    {"ROL", "shift"},
	    {"SHRD", "shift"},
	    {"CMP", "compare"},
	    {"TEST", "compare"},
	    {"SET", "compare"},
	    {"SETNZ", "compare"},
	    {"J", "cond_branch"},
	    {"JNZ", "cond_branch"},
	    {"JRCXZ", "cond_branch"},
	    {"LOOP", "cond_branch"},
	    {"JMP", "jump"},
	    {"JMP_FAR", "jump"},
	    {"CALL", "call"},
	    {"CALL_NEAR", "call"},
	    {"CALL_FAR", "call"},
	    {"RET", "ret"},
	    {"RET_NEAR", "ret"},
	    {"PUSH", "stack"},
	    {"POP", "stack"},
	    {"PUSHFQ", "stack"},
	    {"LEAVE", "stack"},
	    {"MOVSB", "string"},
	    {"MOVSD", "string"},
	    {"STOSQ", "string"},
	    {"REP_MOVSB", "string"},
	    {"REPE_CMPSB", "string"},
	    {"MOVSD_XMM", "float_simd"},
	    {"ADDSD", "float_simd"},
	    {"MOVAPS", "float_simd"},
	    {"PXOR", "float_simd"},
	    {"FLD", "float_simd"},
	    {"CVTSI2SD", "float_simd"},
	    {"VADDPD", "float_simd"},
	    {"MOVDQA", "float_simd"},
	    {"UCOMISS", "float_simd"},
	    {"MOVQ", "float_simd"},
	    {"NOP", "nop"},
	    {"NOP2", "nop"},
	    {"PAUSE", "nop"},
	    {"MFENCE", "sync"},
	    {"CMPXCHG", "sync"},
	    {"CMPXCHG16B", "sync"},
	    {"SYSCALL", "system"},
	    {"CPUID", "system"},
	    {"INT3", "system"},
	    {"XSAVEOPT", "system"},
	    {"CLD", "other"},
	    {"PREFETCHT0", "other"},
	    {"XYZZY", "other"},
	    {"mov", "other"},
	    {"MOVZXQ", "other"},
	    {"ADDX", "other"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		expect_family(rows[i].macro, rows[i].family);
		ck_assert_str_eq(table_family(rows[i].macro), rows[i].family);
	}
}
END_TEST

/* Every name of the tests' own table of families (tests/integration/cis501_families.txt,
 * written from doc/views.md, the CIS501 model's too), and for every rule a made-up name it
 * applies to (prefix + "QZ", "QZ" + suffix, "QZ" + text + "QZ"), placed as the table says. */
START_TEST(test_families_table)
{
	unsigned n_names = 0, n_rules = 0;
	for (unsigned i = 0; i < family_table()->n; i++) {
		const struct family_line *l = &family_table()->lines[i];
		char name[64];
		if (strcmp(l->kind, "name") == 0) {
			expect_family(l->text, l->family);
			n_names++;
			continue;
		}
		snprintf(name, sizeof(name), "%s%s%s", strcmp(l->kind, "prefix") ? "QZ" : "",
			 l->text, strcmp(l->kind, "suffix") ? "QZ" : "");
		expect_family(name, table_family(name));
		n_rules++;
	}
	ck_assert_uint_ge(n_names, 170);
	ck_assert_uint_ge(n_rules, 25);
}
END_TEST

/* One line at a time from a new state: the record's fields, its tags, its dump.txt line. */
static const struct field_row {
	const char *line, *dump;
	int32_t uop, src1, src2, dest;
	uint64_t pc;
	int64_t imm;
	uint64_t addr, fallthrough, target;
	unsigned tags;
	const char *family;
	unsigned diag; /* problems reported */
} field_rows[] = {
    {"1 48d1de -1 -1 13 - - -         0            0       48d1e2            0 SET      ADD\n",
     "1 48d1de -1 -1 13 - - - 0 0 48d1e2 0 SET ADD 1\n", 1, -1, -1, 13, 0x48d1de, 0, 0, 0x48d1e2, 0,
     0, "compare", 0},
    /* a trace cut mid-instruction: macro-op 0 */
    {"2 48d1de -1 -1 13 R - -         1            0       48d1e2            0 SET      "
     "ADD_IMM\n",
     "2 48d1de -1 -1 13 R - - 1 0 48d1e2 0 SET ADD_IMM 0\n", 2, -1, -1, 13, 0x48d1de, 1, 0,
     0x48d1e2, 0, T_READ, "compare", 0},
    {"1 48d1e2 -1  5 45 - - L      -264  7fffe7ff048       48d1e9            0 CMP      LOAD\n",
     "1 48d1e2 -1 5 45 - - L -264 7fffe7ff048 48d1e9 0 CMP LOAD 1\n", 1, -1, 5, 45, 0x48d1e2, -264,
     0x7fffe7ff048, 0x48d1e9, 0, T_LOAD, "compare", 0},
    {"4 48d248 -1 -1 -1 - T -     -5149            0       48d24d       48be30 CALL     "
     "JMP_IMM\n",
     "4 48d248 -1 -1 -1 - T - -5149 0 48d24d 48be30 CALL JMP_IMM 0\n", 4, -1, -1, -1, 0x48d248,
     -5149, 0, 0x48d24d, 0x48be30, T_BRANCH | T_TAKEN, "call", 0},
    {"1 48d237 -1 -1 -1 R N -       -25            0       48d239       48d220 J        "
     "JMP_IMM\n",
     "1 48d237 -1 -1 -1 R N - -25 0 48d239 48d220 J JMP_IMM 1\n", 1, -1, -1, -1, 0x48d237, -25, 0,
     0x48d239, 0x48d220, T_BRANCH | T_NOT_TAKEN | T_READ, "cond_branch", 0},
    {"3 48d248 44  4 -1 W - S 0 7fffe7fefc8 48d24d 0 CALL STORE\n",
     "3 48d248 44 4 -1 W - S 0 7fffe7fefc8 48d24d 0 CALL STORE 0\n", 3, 44, 4, -1, 0x48d248, 0,
     0x7fffe7fefc8, 0x48d24d, 0, T_STORE | T_WRITE, "call", 0},
    /* tabs, leading and trailing white space, upper-case hex */
    {"\t 1\t48D1E2  -1 5 45 W T L -264 7FFFE7FF048 48d1e9 0 CMP LOAD  \t\n",
     "1 48d1e2 -1 5 45 W T L -264 7fffe7ff048 48d1e9 0 CMP LOAD 1\n", 1, -1, 5, 45, 0x48d1e2, -264,
     0x7fffe7ff048, 0x48d1e9, 0, T_LOAD | T_BRANCH | T_TAKEN | T_WRITE, "compare", 0},
    /* the extremes of every numeric field, long names */
    {"-2147483648 ffffffffffffffff 2147483647 -2147483648 0 - N S -9223372036854775808 "
     "0000000000000000001 0 ffffffffffffffff X_Y SEXT_DWORD_TO_QWORD_AND_MORE\n",
     "-2147483648 ffffffffffffffff 2147483647 -2147483648 0 - N S -9223372036854775808 1 0 "
     "ffffffffffffffff X_Y SEXT_DWORD_TO_QWORD_AND_MORE 0\n",
     INT32_MIN, INT32_MAX, INT32_MIN, 0, UINT64_MAX, INT64_MIN, 1, 0, UINT64_MAX,
     T_STORE | T_BRANCH | T_NOT_TAKEN, "other", 0},
    /* signs, leading zeros and 0x prefixes as the reference's %i and %x read them */
    {"+7 0x10 -0 007 +0 - - - 9223372036854775807 0X1f 0x0 000 MOVSD_XMM LOAD_FP\n",
     "7 10 0 7 0 - - - 9223372036854775807 1f 0 0 MOVSD_XMM LOAD_FP 0\n", 7, 0, 7, 0, 0x10,
     INT64_MAX, 0x1f, 0, 0, 0, "float_simd", 0},
    /* CR LF: kept, reported */
    {"1 10 1 2 3 - - - 0 0 14 0 NOP NOP\r\n", "1 10 1 2 3 - - - 0 0 14 0 NOP NOP 1\n", 1, 1, 2, 3,
     0x10, 0, 0, 0x14, 0, 0, "nop", 1},
    /* no newline at the end: kept, reported */
    {"1 10 1 2 3 - - - 0 0 14 0 PUSH STORE", "1 10 1 2 3 - - - 0 0 14 0 PUSH STORE 1\n", 1, 1, 2, 3,
     0x10, 0, 0, 0x14, 0, 0, "stack", 1},
};

START_TEST(test_fields)
{
	const struct field_row *row = &field_rows[_i];
	const struct tm_format *f = fmt();
	size_t len = strlen(row->line);
	struct decoded d;
	decode_all(row->line, len, 4, &d);
	ck_assert_uint_eq(d.n, 1);
	const struct rec *r = &d.r[0];
	ck_assert_uint_eq(r->head.raw_rel, 0);
	ck_assert_uint_eq(r->head.raw_len, len);
	ck_assert_int_eq(r->uop, row->uop);
	ck_assert_uint_eq(r->pc, row->pc);
	ck_assert_int_eq(r->src1, row->src1);
	ck_assert_int_eq(r->src2, row->src2);
	ck_assert_int_eq(r->dest, row->dest);
	ck_assert_int_eq(r->imm, row->imm);
	ck_assert_uint_eq(r->addr, row->addr);
	ck_assert_uint_eq(r->fallthrough, row->fallthrough);
	ck_assert_uint_eq(r->target, row->target);
	ck_assert_uint_eq(r->head.flags & ((1u << N_TAGS) - 1), row->tags);
	ck_assert_str_eq(f->classes[r->head.cls], row->family);
	ck_assert_msg(d.diag.count == row->diag, "%" PRIu64 " problems: %.*s", d.diag.count,
		      (int)d.diag.len, d.diag.text);
	struct tm_chunk c = chunk_of(row->line, len, &d);
	size_t out_len;
	char *out = render_one(f->dump, &c, 0, &out_len);
	expect_same_text(row->line, row->dump, strlen(row->dump), out, out_len);
	free(out);
	decoded_free(&d);
}
END_TEST

/* The course's gcc-1K.trace: 1000 micro-ops, 754 macro-ops as the reference parser counts
 * them, every dump line, din line and tag stream against the lines split here. */

/* Bad input: the documented errors.txt lines. G is a good line of 37 bytes. */
#define G  "1 10 -1 -1 13 - - - 0 0 14 0 SET ADD\n"
#define G2 "2 10 -1 -1 13 R - - 1 0 14 0 SET ADD_IMM\n"

static const struct bad_row {
	const char *what;
	const char *data;
	size_t len; /* 0: strlen(data) */
	const char *errors;
	unsigned records;
	int truncated;
} bad_rows[] = {
    {"13 fields", "1 10 -1 -1 13 - - - 0 0 14 0 SET\n" G, 0,
     "line 1: 13 fields, expected 14: line skipped\n", 1, 0},
    {"15 fields", G "1 10 -1 -1 13 - - - 0 0 14 0 SET ADD EXTRA\n" G, 0,
     "line 2: 15 fields, expected 14: line skipped\n", 2, 0},
    {"the spec's header line",
     "Uop PC Src1 Src2 Dest Flags Branch Ld/St Immediate Mem. Address Fallthrough PC Target PC "
     "Macro Opcode Micro Opcode\n" G,
     0, "line 1: 19 fields, expected 14: line skipped\n", 1, 0},
    {"the spec's column numbers", "1 2 3 4 5 6 7 8 9 10 11 12 13 14\n" G, 0,
     "line 1: field 6 (Flags) \"6\" is not one of R, W, -: line skipped\n", 1, 0},
    {"Src1 not a number", G "1 10 x1 -1 13 - - - 0 0 14 0 SET ADD\n", 0,
     "line 2: field 3 (Src1) \"x1\" is not a decimal number: line skipped\n", 1, 0},
    {"Uop a lone sign", "- 10 -1 -1 13 - - - 0 0 14 0 SET ADD\n", 0,
     "line 1: field 1 (Uop) \"-\" is not a decimal number: line skipped\n", 0, 0},
    {"PC not hex", "1 48g1de -1 -1 13 - - - 0 0 14 0 SET ADD\n", 0,
     "line 1: field 2 (PC) \"48g1de\" is not a hexadecimal number: line skipped\n", 0, 0},
    {"PC a lone 0x", "1 0x -1 -1 13 - - - 0 0 14 0 SET ADD\n", 0,
     "line 1: field 2 (PC) \"0x\" is not a hexadecimal number: line skipped\n", 0, 0},
    {"Dest past 32 bits", "1 10 -1 -1 2147483648 - - - 0 0 14 0 SET ADD\n", 0,
     "line 1: field 5 (Dest) \"2147483648\" is out of range (32-bit signed): line skipped\n", 0, 0},
    {"Src2 below 32 bits", "1 10 -1 -2147483649 1 - - - 0 0 14 0 SET ADD\n", 0,
     "line 1: field 4 (Src2) \"-2147483649\" is out of range (32-bit signed): line skipped\n", 0,
     0},
    {"Immediate past 64 bits", "1 10 -1 -1 1 - - - 9223372036854775808 0 14 0 SET ADD\n", 0,
     "line 1: field 9 (Immediate) \"9223372036854775808\" is out of range (64-bit signed): line "
     "skipped\n",
     0, 0},
    {"Immediate of 30 digits", "1 10 -1 -1 1 - - - 123456789012345678901234567890 0 14 0 A B\n", 0,
     "line 1: field 9 (Immediate) \"123456789012345678901234...\" is out of range (64-bit "
     "signed): line skipped\n",
     0, 0},
    {"address of 17 digits", "1 10 -1 -1 1 - - L 0 10000000000000000 14 0 SET ADD\n", 0,
     "line 1: field 10 (Mem. Address) \"10000000000000000\" is out of range (more than 64 "
     "bits): line skipped\n",
     0, 0},
    {"Target not hex", "1 10 -1 -1 1 - - - 0 0 14 -5 SET ADD\n", 0,
     "line 1: field 12 (Target PC) \"-5\" is not a hexadecimal number: line skipped\n", 0, 0},
    {"Flags X", "1 10 -1 -1 1 X - - 0 0 14 0 SET ADD\n", 0,
     "line 1: field 6 (Flags) \"X\" is not one of R, W, -: line skipped\n", 0, 0},
    {"Branch TT", "1 10 -1 -1 1 - TT - 0 0 14 0 SET ADD\n", 0,
     "line 1: field 7 (Branch) \"TT\" is not one of T, N, -: line skipped\n", 0, 0},
    {"Ld/St lower case", "1 10 -1 -1 1 - - l 0 0 14 0 SET ADD\n", 0,
     "line 1: field 8 (Ld/St) \"l\" is not one of L, S, -: line skipped\n", 0, 0},
    {"NUL byte", G "1 10 -1 -1 13 - - - 0 0 14 0 SET AD\0D\n" G, 37 + 38 + 37,
     "line 2: NUL byte at column 36: line skipped\n", 2, 0},
    {"control byte", "1 10 -1 -1 13 - - - 0 0 14 0 SE\x01T ADD\n", 0,
     "line 1: byte 0x01 at column 32: line skipped\n", 0, 0},
    {"lone CR", "1 10 -1 -1 13 - - - 0 0\r 14 0 SET ADD\n", 0,
     "line 1: byte 0x0d at column 24: line skipped\n", 0, 0},
    {"non-ASCII name", "1 10 -1 -1 13 - - - 0 0 14 0 S\xc3\xa9T ADD\n", 0,
     "line 1: byte 0xc3 at column 31: line skipped\n", 0, 0},
    {"empty line", G "\n" G, 0, "line 2: empty line: line skipped\n", 2, 0},
    {"blank line", " \t \n" G, 0, "line 1: empty line: line skipped\n", 1, 0},
    {"bad lines keep their numbers", G "x\n" G G2 "y y\n" G, 0,
     "line 2: 1 fields, expected 14: line skipped\nline 5: 2 fields, expected 14: line "
     "skipped\n",
     4, 0},
    {"CR LF",
     "1 10 -1 -1 13 - - - 0 0 14 0 SET ADD\r\n" G "1 10 -1 -1 13 - - - 0 0 14 0 SET "
     "ADD\r\n2 10 -1 -1 13 R - - 1 0 14 0 SET ADD_IMM \r\n",
     0,
     "line 1: line ends in CR LF: kept, CR dropped (stats.json counts such lines in "
     "crlf_lines)\n3 lines end in CR LF (kept, CR dropped)\n",
     4, 0},
    {"no newline at the end", G "2 10 -1 -1 13 R - - 1 0 14 0 SET ADD_IMM", 0,
     "line 2: no newline at the end of the trace: line kept\n", 2, 0},
    {"cut at the end", G "2 10 -1 -1", 0,
     "offset 37: line 2 is cut by the end of the trace (4 fields, expected 14): not decoded\n", 1,
     1},
    {"cut inside a field", G "2 10 -1 -1 13 R - - 1 0 1", 0,
     "offset 37: line 2 is cut by the end of the trace (11 fields, expected 14): not decoded\n", 1,
     1},
    {"cut inside the last name", G "2 10 -1 -1 13 R - - 1 0 14 0 SET ADD_IM", 0,
     "line 2: no newline at the end of the trace: line kept\n", 2, 0},
    {"empty trace", "", 0, "", 0, 0},
    {"only a newline", "\n", 0, "line 1: empty line: line skipped\n", 0, 0},
};

START_TEST(test_bad_input)
{
	const struct bad_row *row = &bad_rows[_i];
	size_t len = row->len ? row->len : strlen(row->data);
	const char *errors = row->errors;
	unsigned records = row->records;
	int truncated = row->truncated;
	struct built b;
	build(&b, row->data, len);
	ck_assert_msg(b.ix->errors_len == strlen(errors) &&
			  memcmp(errors_of(&b), errors, b.ix->errors_len) == 0,
		      "%s: errors.txt \"%.*s\", expected \"%s\"", row->what, (int)b.ix->errors_len,
		      errors_of(&b), errors);
	ck_assert_msg(tm_index_records(b.ix) == records, "%s: %" PRIu64 " records", row->what,
		      tm_index_records(b.ix));
	ck_assert_msg(b.ix->truncated == (truncated != 0), "%s: truncated %d", row->what,
		      b.ix->truncated);
	ck_assert_int_eq(get_int(b.root, "bytes"), (int64_t)len);
	unbuild(&b);

	/* decoding alone, one record per call: the same lines, less the whole-trace notes */
	struct decoded d;
	decode_all(row->data, len, 1, &d);
	ck_assert_uint_eq(d.n, records);
	ck_assert_msg(d.diag.len <= strlen(errors) &&
			  (d.diag.len == 0 || memcmp(d.diag.text, errors, d.diag.len) == 0),
		      "%s, decoded alone: \"%.*s\", expected \"%s\"", row->what, (int)d.diag.len,
		      d.diag.text, errors);
	decoded_free(&d);
}
END_TEST

/* Lines of CIS501_MAX_LINE (4096) bytes and around it. */
static char *line_of_len(size_t text_len, const char *ending)
{
	static const char head[] = "1 10 -1 -1 13 - - - 0 0 14 0 SET ";
	size_t h = strlen(head);
	ck_assert_uint_gt(text_len, h + 1);
	char *s = malloc(text_len + strlen(ending) + 1);
	ck_assert_ptr_nonnull(s);
	memcpy(s, head, h);
	memset(s + h, 'X', text_len - h);
	strcpy(s + text_len, ending);
	return s;
}

START_TEST(test_long_lines)
{
	static const struct {
		size_t text_len;
		const char *ending;
		int kept;
	} rows[] = {
	    {4096, "\n", 1},   {4097, "\n", 0}, {4096, "\r\n", 1}, {4097, "\r\n", 0},
	    {100000, "\n", 0}, {4096, "", 1},	{4097, "", 0},	   {300000, "", 0},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *line = line_of_len(rows[i].text_len, rows[i].ending);
		struct text t = {0};
		const char *errors;
		char want[256];
		text_add(&t, G, strlen(G));
		text_add(&t, line, strlen(line));
		if (*rows[i].ending)
			text_add(&t, G, strlen(G));
		if (!rows[i].kept)
			errors = "line 2: longer than 4096 bytes: line skipped\n";
		else if (!*rows[i].ending)
			errors = "line 2: no newline at the end of the trace: line kept\n";
		else if (strcmp(rows[i].ending, "\r\n") == 0)
			errors = "line 2: line ends in CR LF: kept, CR dropped (stats.json counts "
				 "such lines in crlf_lines)\n1 lines end in CR LF (kept, CR "
				 "dropped)\n";
		else
			errors = "";
		snprintf(want, sizeof(want), "%s", errors);
		unsigned records = 1 + (*rows[i].ending != 0) + (unsigned)rows[i].kept;

		struct built b;
		build(&b, t.b, t.len);
		ck_assert_msg(b.ix->errors_len == strlen(want) &&
				  memcmp(errors_of(&b), want, b.ix->errors_len) == 0,
			      "row %zu: errors.txt \"%.*s\", expected \"%s\"", i,
			      (int)b.ix->errors_len, errors_of(&b), want);
		ck_assert_uint_eq(tm_index_records(b.ix), records);
		unbuild(&b);

		/* the same records however the bytes come: all at once, or growing by 1000 */
		struct decoded whole, inc;
		decode_all(t.b, t.len, 64, &whole);
		ck_assert_uint_eq(whole.n, records);
		decoded_init(&inc);
		void *s = new_state();
		size_t pos = 0;
		for (size_t end = 0; end < t.len; end += 1000)
			pos +=
			    decode_step(s, (const uint8_t *)t.b, pos, end, false, 64, &inc, true);
		for (;;) {
			size_t before = inc.n;
			size_t used =
			    decode_step(s, (const uint8_t *)t.b, pos, t.len, true, 64, &inc, true);
			pos += used;
			if (!used && inc.n == before)
				break;
		}
		ck_assert_uint_eq(inc.n, whole.n);
		for (size_t k = 0; k < whole.n; k++)
			ck_assert(same_record(&inc.r[k], &whole.r[k]));
		ck_assert_uint_eq(inc.diag.len, whole.diag.len);
		ck_assert(!inc.diag.len ||
			  memcmp(inc.diag.text, whole.diag.text, inc.diag.len) == 0);
		free(s);
		decoded_free(&whole);
		decoded_free(&inc);
		free(t.b);
		free(line);
	}
}
END_TEST

/* A trace with every kind of line, for the checkpoint contract. */
static void mixed_trace(struct text *t)
{
	memset(t, 0, sizeof(*t));
	text_adds(t, G2); /* mid-instruction start */
	text_adds(t, G);
	text_adds(t, "1 10 x -1 13 - - - 0 0 14 0 SET ADD\n");
	text_adds(t, "1 20 -1 -1 13 - - - 0 0 24 0 CMP LOAD\r\n");
	char *long_line = line_of_len(6000, "\n");
	text_add(t, long_line, strlen(long_line));
	free(long_line);
	text_adds(t, "\n");
	text_adds(t, "1 30 -1 -1 13 W T S -7 ffff 34 40 JMP STORE\n");
	text_adds(t, G2);
	text_adds(t, "1 40\t-1 -1 13 - N L 0 abc 44 40 J LOAD\n");
	for (int k = 0; k < 30; k++)
		text_addf(t, "%d %x %d -1 13 - - %c %d %x 50 0 MOV LOAD\n", 1 + k % 3, 0x50 + k, k,
			  k % 2 ? 'L' : '-', -k, 0x1000 + 8 * k);
}

/* The checkpoint contract: growing prefixes without the end consume only complete lines (and
 * the skipped part of a long one); a restart from any state copy gives the same records; a
 * split anywhere gives the same records and the same reports. */
START_TEST(test_checkpoints)
{
	const struct tm_format *f = fmt();
	struct text t;
	mixed_trace(&t);
	const uint8_t *b = (const uint8_t *)t.b;
	struct decoded ref;
	decode_all(b, t.len, 5000, &ref);
	ck_assert_uint_eq(ref.n, 2 + 1 + 1 + 2 + 30);

	/* byte by byte */
	struct decoded inc;
	decoded_init(&inc);
	void *s = new_state();
	size_t pos = 0;
	for (size_t end = 0; end <= t.len; end++) {
		pos += decode_step(s, b, pos, end, false, 16, &inc, true);
		EXPECT(inc.last_ret == -EAGAIN, "prefix %zu: returned %d", end, inc.last_ret);
		/* nothing consumed past the last newline, except inside the long line */
		const void *nl = memrchr(b, '\n', end);
		size_t complete = nl ? (size_t)((const uint8_t *)nl - b) + 1 : 0;
		EXPECT(pos == complete || (pos > complete && end - complete > 4096),
		       "prefix %zu: %zu consumed, complete lines end at %zu", end, pos, complete);
	}
	ck_assert_uint_eq(decode_step(s, b, pos, t.len, true, 16, &inc, true), 0);
	ck_assert_int_eq(tm_diag_finish(&inc.diag), 0);
	ck_assert_uint_eq(inc.n, ref.n);
	for (size_t i = 0; i < ref.n; i++)
		EXPECT(same_record(&inc.r[i], &ref.r[i]), "record %zu differs byte by byte", i);
	ck_assert_uint_eq(inc.diag.len, ref.diag.len);
	ck_assert(memcmp(inc.diag.text, ref.diag.text, ref.diag.len) == 0);
	decoded_free(&inc);
	free(s);

	/* split in two anywhere */
	for (size_t cut = 0; cut <= t.len; cut += 7) {
		decoded_init(&inc);
		s = new_state();
		pos = decode_step(s, b, 0, cut, false, 5000, &inc, true);
		for (;;) {
			size_t before = inc.n,
			       used = decode_step(s, b, pos, t.len, true, 5000, &inc, true);
			pos += used;
			if (!used && inc.n == before)
				break;
		}
		ck_assert_uint_eq(inc.n, ref.n);
		for (size_t i = 0; i < ref.n; i++)
			EXPECT(same_record(&inc.r[i], &ref.r[i]), "cut %zu: record %zu differs",
			       cut, i);
		EXPECT(inc.diag.len == ref.diag.len &&
			   memcmp(inc.diag.text, ref.diag.text, ref.diag.len) == 0,
		       "cut %zu: reports differ", cut);
		decoded_free(&inc);
		free(s);
	}

	/* one record per call, keeping a copy of the state before each; restarts from them */
	size_t cap = ref.n + 16, n_steps = 0;
	uint8_t *states = malloc(cap * f->state_size);
	size_t *offs = malloc(cap * sizeof(*offs)), *firsts = malloc(cap * sizeof(*firsts));
	ck_assert(states && offs && firsts);
	decoded_init(&inc);
	s = new_state();
	pos = 0;
	for (;;) {
		ck_assert_uint_lt(n_steps, cap);
		memcpy(states + n_steps * f->state_size, s, f->state_size);
		offs[n_steps] = pos;
		firsts[n_steps] = inc.n;
		n_steps++;
		size_t before = inc.n, used = decode_step(s, b, pos, t.len, true, 1, &inc, false);
		pos += used;
		if (!used && inc.n == before)
			break;
	}
	ck_assert_uint_eq(inc.n, ref.n);
	for (size_t k = 0; k < n_steps; k++) {
		void *copy = malloc(f->state_size);
		memcpy(copy, states + k * f->state_size, f->state_size);
		struct decoded rest;
		decoded_init(&rest);
		size_t p = offs[k];
		for (;;) {
			size_t before = rest.n,
			       used = decode_step(copy, b, p, t.len, true, 1 + k % 5, &rest, false);
			p += used;
			if (!used && rest.n == before)
				break;
		}
		EXPECT(rest.n == ref.n - firsts[k], "restart %zu: %zu records", k, rest.n);
		for (size_t i = 0; i < rest.n; i++)
			EXPECT(same_record(&rest.r[i], &ref.r[firsts[k] + i]),
			       "restart at %zu: record %zu differs", offs[k], firsts[k] + i);
		decoded_free(&rest);
		free(copy);
	}
	free(states);
	free(offs);
	free(firsts);
	decoded_free(&inc);
	free(s);
	decoded_free(&ref);
	free(t.b);
}
END_TEST

/* The trace cut at every byte, through the core: no crash, the lines before the cut, the last
 * one kept or reported, dump.txt the matching prefix of the whole trace's. */
START_TEST(test_truncation)
{
	struct text t;
	mixed_trace(&t);
	struct decoded whole;
	decode_all(t.b, t.len, 5000, &whole);
	size_t whole_dump_len;
	char *whole_dump = render_all(fmt()->dump, t.b, t.len, &whole, &whole_dump_len);
	for (size_t cut = 0; cut <= t.len; cut += cut < 400 ? 1 : 61) {
		/* the records of complete lines */
		size_t complete = 0;
		while (complete < whole.n &&
		       whole.r[complete].head.raw_rel + whole.r[complete].head.raw_len <= cut)
			complete++;
		struct built b;
		build(&b, t.b, cut);
		uint64_t n = tm_index_records(b.ix);
		EXPECT(n == complete || n == complete + 1,
		       "cut %zu: %" PRIu64 " records, %zu complete", cut, n, complete);
		bool mid_line = cut && t.b[cut - 1] != '\n';
		if (n == complete + 1)
			EXPECT(memmem(errors_of(&b), b.ix->errors_len, "no newline at the end", 21),
			       "cut %zu: a cut line kept without a report", cut);
		EXPECT(!b.ix->truncated || mid_line, "cut %zu: truncated at a line end", cut);
		unbuild(&b);

		struct mounted m;
		mount_trace(&m, "t.trace", fmt(), t.b, cut);
		size_t len;
		char *dump = read_view(&m, "dump.txt", &len);
		/* the complete records' lines are a prefix of the whole dump */
		size_t prefix = 0;
		for (size_t i = 0; i < complete; i++)
			prefix += whole.r[i].dump_len;
		EXPECT(len >= prefix && memcmp(dump, whole_dump, prefix) == 0,
		       "cut %zu: dump.txt is not the whole trace's up to the cut", cut);
		free(dump);
		char *raw = read_view(&m, "class/loads.trace", &len);
		free(raw);
		unmount_trace(&m);
	}
	free(whole_dump);
	decoded_free(&whole);
	free(t.b);
}
END_TEST

/* The probe on the course's real gcc-1K.trace: its head under several names and cuts. */
START_TEST(test_probe_real)
{
	const struct tm_format *f = fmt();
	size_t len;
	char *real = realtrace("gcc-1K.trace", &len);
	if (!real)
		return;
	size_t head = len < 4096 ? len : 4096;
	/* two lines, the second without its newline */
	size_t two_lines = (size_t)((char *)memchr(strchr(real, '\n') + 1, '\n', len) - real);
	const struct {
		const char *name;
		size_t len;
		int score;
	} rows[] = {
	    {"gcc-1K.trace", head, 95},	     {"gcc-1K.trace.gz", head, 95}, {"gcc.dat", head, 95},
	    {"gcc.dat", two_lines, 95},	     /* the whole file: its last line counts */
	    {"gcc.dat", two_lines + 30, 60}, /* its third line, cut, does not parse */
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int score = tm_format_bid(f, rows[i].name, (const uint8_t *)real, rows[i].len);
		ck_assert_msg(score == rows[i].score, "row %zu (%s): %d, expected %d", i,
			      rows[i].name, score, rows[i].score);
	}
	ck_assert_ptr_eq(tm_format_detect("gcc-1K.trace", (const uint8_t *)real, head), f);
	ck_assert_ptr_eq(tm_format_detect("gcc.log", (const uint8_t *)real, head), f);
	free(real);
}
END_TEST

START_TEST(test_probe)
{
	const struct tm_format *f = fmt();
	static const char garbage[] = "hello world\nthis is not a trace\n";
	static const char half[] = "1 10 -1 -1 13 - - - 0 0 14 0 SET ADD\n"
				   "1 10 -1 -1 13 - - - 0 0 14 0 SET ADD\n"
				   "# a comment\n";
	/* gcc-1K.trace's first two lines, the second without its newline */
	static const char two[] = "1 48d1de -1 -1 13 - - -         0            0       48d1e2"
				  "            0 SET      ADD\n"
				  "2 48d1de -1 -1 13 R - -         1            0       48d1e2"
				  "            0 SET      ADD_IMM";
	char *long_line = line_of_len(4096, "");
	const struct {
		const char *name;
		const char *head;
		size_t len;
		int score;
	} rows[] = {
	    {"x.trace", garbage, sizeof(garbage) - 1, 15},
	    {"x.txt", garbage, sizeof(garbage) - 1, 0},
	    {"x.trace", NULL, 0, 50},
	    {"x.trace.gz", NULL, 0, 50},
	    {"x.trace", "", 0, 50},
	    {"x.dat", NULL, 0, 0},
	    {"x.trace", half, sizeof(half) - 1, 80},
	    {"x.dat", half, sizeof(half) - 1, 60},
	    {"x.dat", two, sizeof(two) - 1, 95}, /* the whole file: its last line counts */
	    {"x.trace", long_line, 4096, 15},	 /* no complete line */
	    {"trace", garbage, sizeof(garbage) - 1, 0},
	    {"x.traces", NULL, 0, 0},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int score =
		    tm_format_bid(f, rows[i].name, (const uint8_t *)rows[i].head, rows[i].len);
		ck_assert_msg(score == rows[i].score, "row %zu (%s): %d, expected %d", i,
			      rows[i].name, score, rows[i].score);
	}
	ck_assert_ptr_eq(tm_format_detect("x.trace", NULL, 0), f);
	ck_assert_ptr_eq(tm_format_detect("x.log", (const uint8_t *)two, sizeof(two) - 1), f);
	ck_assert_ptr_null(
	    tm_format_detect("x.log", (const uint8_t *)garbage, sizeof(garbage) - 1));
	free(long_line);
}
END_TEST

static Suite *cis501_suite(void)
{
	Suite *s = suite_create("cis501");
	TCase *tc;

	tc = tcase_create("decode");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_layout);
	tcase_add_test(tc, test_families);
	tcase_add_test(tc, test_families_table);
	tcase_add_loop_test(tc, test_fields, 0, (int)(sizeof(field_rows) / sizeof(field_rows[0])));
	tcase_add_loop_test(tc, test_bad_input, 0, (int)(sizeof(bad_rows) / sizeof(bad_rows[0])));
	tcase_add_test(tc, test_long_lines);
	tcase_add_test(tc, test_checkpoints);
	tcase_add_test(tc, test_probe);
	tcase_add_test(tc, test_probe_real);
	suite_add_tcase(s, tc);

	tc = tcase_create("truncation");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_truncation);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cis501_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
