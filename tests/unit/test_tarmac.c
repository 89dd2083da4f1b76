/* QEMU4V and Tarmac: one line of every dialect to its dump.txt line and class; processors,
 * continuations and chunks through the core; bad input; detection; the real traces; MIPS
 * code's blocks. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "tracemount/reader.h"
#include "tracemount/registry.h"
#include "tracemount/view.h"
#include "view_check.h"

static const struct tm_format *format(const char *name)
{
	const struct tm_format *f = tm_format_find(name);
	ck_assert_ptr_nonnull(f);
	return f;
}

/* A one-trace mount of text; the caller frees the views it reads. */
static void mount_text(struct mounted *m, const char *name, const char *text)
{
	mount_trace(m, name, format(strstr(name, "tarmac") ? "tarmac" : "qemu4v"), text,
		    strlen(text));
}

static void expect_view(struct mounted *m, const char *path, const char *want)
{
	size_t len;
	char *got = read_view(m, path, &len);
	expect_same_text(path, want, strlen(want), got, len);
	free(got);
}

/* Each line on its own: the dump.txt line doc/views.md gives for it (cpu 0). */
static const struct {
	const char *line, *dump;
} lines[] = {
    /* QEMU4V, as the specification writes it */
    {"1 clk 0 IT (1) 00000004 3c080001 A svc : lui t0,0x1",
     "1 clk 0 IT 00000004 3c080001 A svc lui t0,0x1"},
    {"10 clk MR8 00103fc4 0010400000000000", "10 clk 0 MR 00103fc4 8 0010400000000000"},
    {"14 clk R r8 00000000", "14 clk 0 R r8 00000000"},
    {"-1 clk R r8 00000000", "-1 clk 0 R r8 00000000"},
    /* Fast Models */
    {"0 clk IT (0) 00008000 fa000000 A svc_s : BLX      {pc}+8 ; 0x8008",
     "0 clk 0 IT 00008000 fa000000 A svc_s BLX {pc}+8 ; 0x8008"},
    {"12 clk IS (12) 0000802c 1afb T svc_s : SUBNE    r3,r7,r3",
     "12 clk 0 IS 0000802c 1afb T svc_s SUBNE r3,r7,r3"},
    {"1 clk MR8 0000c7c8:00000000c7c8 00000000_0000ca68", "1 clk 0 MR 0000c7c8 8 000000000000ca68"},
    {"763 clk MW1 0fffffb8 00", "763 clk 0 MW 0fffffb8 1 00"},
    {"72415 clk MR16 400171e0 400f731b40000000 3ff87cc460000000",
     "72415 clk 0 MR 400171e0 16 400f731b400000003ff87cc460000000"},
    {"3 clk IT (3) 0000800a:00000000800a,00000000800c e8900c00 T svc_s : LDM      r0,{r10,r11}",
     "3 clk 0 IT 0000800a e8900c00 T svc_s LDM r0,{r10,r11}"},
    {"4541 clk CADI E simulation_stopped", "4541 clk 0 E CADI E simulation_stopped"},
    {"0 clk SIGNAL: SIGNAL=DebugReset STATE=N", "0 clk 0 E SIGNAL: SIGNAL=DebugReset STATE=N"},
    {"28491 clk MR4 dfdfdfcf (ABORTED)", "28491 clk 0 E MR4 dfdfdfcf (ABORTED)"},
    {"0 ps E 00000000 00000000 CoreEvent_Reset", "0 ps 0 E E 00000000 00000000 CoreEvent_Reset"},
    {"R FPCR 76543210", "- - 0 R FPCR 76543210"},
    {"R X0 01234567 89abcdef", "- - 0 R X0 01234567 89abcdef"},
    {"271ns R r13 20001fff (MSP)", "271 ns 0 R r13 20001fff (MSP)"},
    /* gem5: a cpu token on every line */
    {"1500 clk cpu0 MW8 000fffe0:0000000fffe0 0000000000000000",
     "1500 clk 0 MW 000fffe0 8 0000000000000000"},
    {"1500 clk cpu3 IT (4) 002109bc a9be7bfd O EL3h_s : STP        ",
     "1500 clk 3 IT 002109bc a9be7bfd O EL3h_s STP"},
    /* the address in the parentheses; a tab in the disassembly */
    {"6000000 cs IT (00000000004d6eb8) 54fffea1 O  ---_- :        b.ne\t0x4d6e8c",
     "6000000 cs 0 IT 00000000004d6eb8 54fffea1 O ---_- b.ne 0x4d6e8c"},
    {"6000001 cs R08 0000007f99d14af4 4305000042ea0000",
     "6000001 cs 0 MR 0000007f99d14af4 8 4305000042ea0000"},
    {"6379085 cs W04 X ffffffbdc3c15c30 010c010b", "6379085 cs 0 MW ffffffbdc3c15c30 4 010c010b"},
    /* RTL: no colon, no mode; instruction fetches are events */
    {"3041 cyc IT (00022a7c:00000006) 00022a7c     48f6 T16 LDR      r0,[pc,#984]  ; [0x22e58]",
     "3041 cyc 0 IT 00022a7c 48f6 T16 - LDR r0,[pc,#984] ; [0x22e58]"},
    {"3039 cyc MNW4___D 2002fa00 efbeefbe", "3039 cyc 0 MW 2002fa00 4 efbeefbe"},
    {"3037 cyc MNR4O__I 00022ae4 f7ffffcb", "3037 cyc 0 E MNR4O__I 00022ae4 f7ffffcb"},
    {"1359353 ns MCW4___R (01000250:000000bb) TRANSFER 00000000",
     "1359353 ns 0 E MCW4___R (01000250:000000bb) TRANSFER 00000000"},
    {" 948756 ns IT (00000000:00000000) 00000000 ea000006 A :        B pc+0x00000018 ; 0x00000020",
     "948756 ns 0 IT 00000000 ea000006 A - B pc+0x00000018 ; 0x00000020"},
    /* ES style */
    {"     41000 ns  ES  (00000000:e59ff018) A svc:            LDR      pc,{pc}+0x20 ; 0x20",
     "41000 ns 0 IT 00000000 e59ff018 A svc LDR pc,{pc}+0x20 ; 0x20"},
    {"     800000 ns  ES  (000001a4:03a06a01) A svc:     CCFAIL MOVEQ    r6,#0x1000",
     "800000 ns 0 IS 000001a4 03a06a01 A svc MOVEQ r6,#0x1000"},
    {"     307754 tic ES  (0000aaaaabaf59f0:--------) O el0t_ns:",
     "307754 tic 0 IF 0000aaaaabaf59f0 -------- O el0t_ns -"},
    {"                    LD 00000300  ........ ........ 00000800 ........     0000000300    NM "
     "ISH INC",
     "- - 0 MR 00000304 4 ................00000800........"},
    {"                    ST 000000009ffdb810 ....0000 ........ 88888888 88888888    "
     "S:009ffdb810    NM NSH IWTNA OWTNA",
     "- - 0 MW 000000009ffdb810 10 ....0000........8888888888888888"},
    {"     17000 ns  ES  EXC [0x00] Reset", "17000 ns 0 E ES EXC [0x00] Reset"},
    {"Tarmac Text Rev 3t", "- - 0 E Tarmac Text Rev 3t"},
    /* comments and blank lines are events; the rest is unknown */
    {"# a comment", "- - 0 E # a comment"},
    {"", "- - 0 E -"},
    {"12 clk BOGUS 1 2", "12 clk 0 ? BOGUS 1 2"},
    {"12 clk IT 00008000 fa000000", "12 clk 0 ? IT 00008000 fa000000"},
    {"12 clk", "12 clk 0 ? -"},
    {"12 clk R r0", "12 clk 0 ? R r0"},
};

START_TEST(test_lines)
{
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		char *text, *want;
		ck_assert_int_gt(asprintf(&text, "%s\n", lines[i].line), 0);
		ck_assert_int_gt(asprintf(&want, "%s\n", lines[i].dump), 0);
		struct mounted m;
		mount_text(&m, "t.tarmac", text);
		expect_view(&m, "dump.txt", want);
		bool unknown = strstr(lines[i].dump, " ? ") != NULL;
		size_t len;
		char *errors = read_view(&m, "errors.txt", &len);
		ck_assert_msg((len > 0) == unknown, "line %zu: errors.txt \"%s\"", i, errors);
		if (unknown)
			ck_assert_msg(strncmp(errors, "line 1: ", 8) == 0, "%s", errors);
		free(errors);
		unmount_trace(&m);
		free(text);
		free(want);
	}
}
END_TEST

/* A line without a cpu belongs to the last instruction's cpu; LD/ST continue on lines of
 * lanes; each cpu with records has its cpu/N.txt of original lines. */
START_TEST(test_cpus_and_continuations)
{
	static const char trace[] =
	    "-1 clk R r0 00000000\n"
	    "0 clk 1 IT (0) 00000100 e3a00001 A svc_s : mov r0,#1\n"
	    "0 clk R r0 00000001\n"
	    "1 clk 3 IT (1) 00000200 e5810000 A svc_s : str r0,[r1]\n"
	    "1 clk MW4 00001000 00000001\n"
	    "2 clk 1 IS (2) 00000104 1a000000 A svc_s : bne 0x10c\n"
	    "   ST 00002000  ........ 11111111 ........ ........  S:2000 NM\n"
	    "      00001ff0  ........ ........ ........ 22......  S:1ff0 NM\n"
	    "      00001fe0 is not a continuation\n";
	struct mounted m;
	mount_text(&m, "t.qemu4v", trace);
	expect_view(&m, "cpu/0.txt", "-1 clk R r0 00000000\n");
	expect_view(&m, "cpu/1.txt",
		    "0 clk 1 IT (0) 00000100 e3a00001 A svc_s : mov r0,#1\n"
		    "0 clk R r0 00000001\n"
		    "2 clk 1 IS (2) 00000104 1a000000 A svc_s : bne 0x10c\n"
		    "   ST 00002000  ........ 11111111 ........ ........  S:2000 NM\n"
		    "      00001ff0  ........ ........ ........ 22......  S:1ff0 NM\n"
		    "      00001fe0 is not a continuation\n");
	expect_view(&m, "cpu/3.txt",
		    "1 clk 3 IT (1) 00000200 e5810000 A svc_s : str r0,[r1]\n"
		    "1 clk MW4 00001000 00000001\n");
	expect_view(&m, "class/memory_writes.txt",
		    "1 clk 3 MW 00001000 4 00000001\n"
		    "- - 1 MW 00002008 4 ........11111111................\n"
		    "- - 1 MW 00001ff3 1 ........................22......\n");
	/* the condition-failed bne was fetched too */
	expect_view(&m, "convert/t.din", "2 100\n2 200\n1 1000\n2 104\n1 2008\n1 1ff3\n");
	/* cpu/2.txt has no records: it does not exist */
	int v2 = tm_view_table_find(tm_trace_views(m.t), "cpu/2.txt");
	int v3 = tm_view_table_find(tm_trace_views(m.t), "cpu/3.txt");
	ck_assert_int_ge(v2, 0);
	ck_assert_int_eq(tm_view_exists(&m.ot, (unsigned)v2), 0);
	ck_assert_int_eq(tm_view_exists(&m.ot, (unsigned)v3), 1);
	size_t len;
	char *errors = read_view(&m, "errors.txt", &len);
	ck_assert_msg(strstr(errors, "line 9: unknown record kind ('00001fe0')"), "%s", errors);
	free(errors);
	unmount_trace(&m);
}
END_TEST

/* Over-long lines are skipped, binary lines are unknown, CR LF is dropped, a last line without
 * newline is kept: each with its line number. */
START_TEST(test_bad_lines)
{
	size_t n = 5000;
	char *long_line = malloc(n + 1);
	memset(long_line, 'x', n);
	long_line[n] = 0;
	char *trace;
	ck_assert_int_gt(asprintf(&trace,
				  "1 clk R r0 00000001\r\n"
				  "%s\n"
				  "2 clk R r1 0\x01\x02garbage\n"
				  "3 clk MR4 00000010 12345678",
				  long_line),
			 0);
	struct mounted m;
	mount_text(&m, "t.tarmac", trace);
	expect_view(&m, "dump.txt",
		    "1 clk 0 R r0 00000001\n"
		    "- - 0 ? -\n"
		    "3 clk 0 MR 00000010 4 12345678\n");
	expect_view(&m, "class/unknown.tarmac", "2 clk R r1 0\x01\x02garbage\n");
	expect_view(&m, "class/registers.tarmac", "1 clk R r0 00000001\r\n");
	expect_view(&m, "errors.txt",
		    "line 1: line ends in CR LF: kept, CR dropped (stats.json counts such lines in "
		    "crlf_lines)\n"
		    "line 2: longer than 4096 bytes: line skipped\n"
		    "line 3: control bytes in a text line (binary data?): kept in class unknown\n"
		    "line 4: no newline at the end of the trace: line kept\n"
		    "1 lines end in CR LF (kept, CR dropped)\n");
	unmount_trace(&m);
	free(trace);
	free(long_line);
}
END_TEST

/* Cut anywhere, a trace serves the lines before the cut and the cut line, never more. */
START_TEST(test_every_cut)
{
	static const char trace[] = "0 clk cpu1 IT (1) 002105d4 d2a00200 O EL3h_s : MOVZ X0, #16\n"
				    "0 clk cpu1 R X0 0000000000100000\n"
				    "1500 clk cpu1 MW8 000fffe0:0000000fffe0 0000000000000000\n";
	for (size_t cut = 0; cut <= sizeof(trace) - 1; cut++) {
		struct mounted m;
		mount_trace(&m, "t.tarmac", format("tarmac"), trace, cut);
		size_t len, lines = 0;
		char *dump = read_view(&m, "dump.txt", &len);
		for (size_t i = 0; i < len; i++)
			lines += dump[i] == '\n';
		size_t want = 0;
		for (size_t i = 0; i < cut; i++)
			want += trace[i] == '\n';
		want += cut && trace[cut - 1] != '\n';
		ck_assert_msg(lines == want, "cut %zu: %zu lines, want %zu", cut, lines, want);
		free(dump);
		unmount_trace(&m);
	}
}
END_TEST

/* Many chunks: the views of a long trace equal those of its lines decoded one by one. */
START_TEST(test_chunks)
{
	size_t cap = 8 << 20, len = 0;
	char *trace = malloc(cap);
	struct {
		char *b;
		size_t len;
	} per_cpu[4] = {{0}};
	for (unsigned i = 0; i < 4; i++)
		per_cpu[i].b = malloc(cap);
	for (unsigned i = 0; len < cap - 4096; i++) {
		unsigned cpu = (i / 7) % 3 + (i % 50 == 0);
		char line[256];
		int n;
		switch (i % 4) {
		case 0:
			n = snprintf(line, sizeof(line),
				     "%u clk cpu%u IT (%u) %08x %08x A svc_s : add r%u, r%u, #%u\n",
				     i, cpu, i, 0x8000 + 4 * i, i * 2654435761u, i % 13, i % 7, i);
			break;
		case 1:
			n = snprintf(line, sizeof(line), "%u clk cpu%u MR4 %08x %08x\n", i, cpu,
				     i * 64, i);
			break;
		case 2:
			n = snprintf(line, sizeof(line), "%u clk cpu%u R r%u %08x\n", i, cpu,
				     i % 13, i);
			break;
		default:
			n = snprintf(line, sizeof(line), "%u clk cpu%u MW2 %08x %04x\n", i, cpu,
				     i * 8, i & 0xffff);
		}
		memcpy(trace + len, line, (size_t)n);
		memcpy(per_cpu[cpu].b + per_cpu[cpu].len, line, (size_t)n);
		per_cpu[cpu].len += (size_t)n;
		len += (size_t)n;
	}
	struct mounted m;
	mount_trace(&m, "big.tarmac", format("tarmac"), trace, len);
	for (unsigned cpu = 0; cpu < 4; cpu++) {
		char path[32];
		snprintf(path, sizeof(path), "cpu/%u.txt", cpu);
		size_t got_len;
		char *got = read_view(&m, path, &got_len);
		expect_same_text(path, per_cpu[cpu].b, per_cpu[cpu].len, got, got_len);
		free(got);
		free(per_cpu[cpu].b);
	}
	/* dump.txt through the index equals each line's dump on its own */
	size_t dump_len, lines = 0;
	char *dump = read_view(&m, "dump.txt", &dump_len);
	for (size_t i = 0; i < dump_len; i++)
		lines += dump[i] == '\n';
	size_t want_lines = 0;
	for (size_t i = 0; i < len; i++)
		want_lines += trace[i] == '\n';
	ck_assert_uint_eq(lines, want_lines);
	ck_assert_ptr_nonnull(strstr(dump, "\n4 clk 0 IT 00008010 "));
	unmount_trace(&m);
	free(dump);
	free(trace);
}
END_TEST

/* Tokens are found 64 bytes at a time: tokens and blank runs across the 64-byte steps, a
 * line of exactly 64 bytes, more tokens than the parser keeps (32), a control byte far into
 * a line, bytes above 0x7f. */
START_TEST(test_token_boundaries)
{
	char trace[2048];
	/* "0 clk R r0 " is 11 bytes: the value token runs from 11 across byte 64. */
	int n = snprintf(trace, sizeof(trace),
			 "0 clk R r0 %s\n"	 /* 64 bytes before the newline */
			 "1 clk R r1 %s\t\t%s\n" /* a blank run across byte 64 */
			 "2 clk IT (2) 00008000 e3a00001 A svc_s : %s\n"
			 "3 clk R r2 0000\xe9\xff\n"
			 "4 clk R r3 %s\x01\n",
			 "00000000000000000000000000000000000000000000000000000", /* 53 */
			 "1111111111111111111111111111111111111111111111111111",  /* 52 */
			 "2222222222",
			 "a b c d e f g h i j k l m n o p q r s t u v w x y z 1 2 3 4 5 6 7 8 9",
			 "3333333333333333333333333333333333333333333333333333333333333333333333"
			 "33333333333333333333333333333333333333333333333333333333333333333333");
	ck_assert_int_lt(n, (int)sizeof(trace));
	ck_assert_int_eq((int)(strchr(trace, '\n') - trace), 64);
	struct mounted m;
	mount_text(&m, "t.tarmac", trace);
	expect_view(&m, "dump.txt",
		    "0 clk 0 R r0 00000000000000000000000000000000000000000000000000000\n"
		    "1 clk 0 R r1 1111111111111111111111111111111111111111111111111111 2222222222\n"
		    "2 clk 0 IT 00008000 e3a00001 A svc_s a b c d e f g h i j k l m n o p q r s t "
		    "u v w x y z 1 2 3 4 5 6 7 8 9\n"
		    "3 clk 0 R r2 0000\xe9\xff\n"
		    "- - 0 ? -\n");
	expect_view(&m, "errors.txt",
		    "line 5: control bytes in a text line (binary data?): kept in class unknown\n");
	unmount_trace(&m);
}
END_TEST

START_TEST(test_probe)
{
	static const char fm[] = "0 clk IT (0) 00008000 fa000000 A svc_s : BLX {pc}+8\n"
				 "0 clk R r14_svc 00008004\n";
	static const char q[] = "1 clk 0 IT (1) 00000004 3c080001 A svc : lui t0,0x1\n"
				"1 clk R t0 00010000\n";
	static const char cis[] = "1 0 4005b0 - - - 45 R - - 0 0 0 PUSH PUSH\n";
	/* More comment lines than the probe reads lines: they do not count. */
	static const char comments_then_fm[] = "#\n#\n#\n#\n#\n#\n#\n#\n#\n#\n#\n#\n#\n#\n#\n#\n"
					       "#\n\n\n0 clk IT (0) 00008000 fa000000 A svc_s : "
					       "BLX {pc}+8\n";
	struct {
		const char *name, *head, *want;
	} cases[] = {
	    {"run.tarmac", fm, "tarmac"},
	    {"run.log", fm, "tarmac"},
	    {"run.txt", q, "qemu4v"},
	    {"tracer_0001.log", fm, "qemu4v"},
	    {"x.q4v", fm, "qemu4v"},
	    {"x.qemu4v.gz", NULL, "qemu4v"},
	    {"notes.txt", "hello world\n", NULL},
	    {"gcc.trace", cis, "cis501"},
	    {"tracer_x.log", "hello\n", NULL},
	    {"parsertest.txt", comments_then_fm, "tarmac"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *h = cases[i].head;
		const struct tm_format *f =
		    tm_format_detect(cases[i].name, (const uint8_t *)h, h ? strlen(h) : 0);
		const char *got = f ? f->name : NULL;
		ck_assert_msg(got == cases[i].want ||
				  (got && cases[i].want && strcmp(got, cases[i].want) == 0),
			      "%s: %s, want %s", cases[i].name, got ? got : "none",
			      cases[i].want ? cases[i].want : "none");
	}
}
END_TEST

/* The real traces: every line a record, no unknown line, the cpu views add up to raw, and as
 * many executed and condition-failed instructions as lines with " IT (" and " IS (" (counted
 * here by plain search) in the simulators' traces. */
START_TEST(test_real_traces)
{
	static const char *const names[] = {
	    "calculator-aarch32-fastmodel.tarmac",
	    "calculator-aarch64-fastmodel.tarmac",
	    "calculator-aarch64-gem5.tarmac",
	    "parsertest.txt",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[128];
		size_t len, n_lines = 0, n_it = 0, n_is = 0;
		snprintf(path, sizeof(path), "tarmac/%s", names[i]);
		char *text = read_realtrace(path, &len);
		if (!text)
			continue;
		for (char *p = text; p < text + len; p++) {
			if (*p != '\n')
				continue;
			n_lines++;
		}
		for (char *p = text; (p = strstr(p, " IT (")); p++)
			n_it++;
		for (char *p = text; (p = strstr(p, " IS (")); p++)
			n_is++;
		struct mounted m;
		mount_trace(&m, "t.tarmac", format("tarmac"), text, len);
		size_t stats_len, cpu_len;
		char *stats = read_view(&m, "stats.json", &stats_len);
		json_object *root = json_tokener_parse(stats), *classes, *v;
		ck_assert_ptr_nonnull(root);
		ck_assert(json_object_object_get_ex(root, "records", &v));
		ck_assert_int_eq(json_object_get_int64(v), (int64_t)n_lines);
		ck_assert(json_object_object_get_ex(root, "errors", &v));
		ck_assert_int_eq(json_object_get_int64(v), 0);
		ck_assert(json_object_object_get_ex(root, "classes", &classes));
		ck_assert(json_object_object_get_ex(classes, "unknown", &v));
		ck_assert_int_eq(json_object_get_int64(v), 0);
		ck_assert(json_object_object_get_ex(classes, "executed", &v));
		if (strstr(names[i], ".tarmac")) /* parsertest.txt has ES instructions too */
			ck_assert_int_eq(json_object_get_int64(v), (int64_t)n_it);
		ck_assert(json_object_object_get_ex(classes, "condition_failed", &v));
		if (strstr(names[i], ".tarmac"))
			ck_assert_int_eq(json_object_get_int64(v), (int64_t)n_is);
		size_t total = 0;
		for (unsigned cpu = 0; cpu < 2; cpu++) {
			char view[16];
			snprintf(view, sizeof(view), "cpu/%u.txt", cpu);
			int k = tm_view_table_find(tm_trace_views(m.t), view);
			if (tm_view_exists(&m.ot, (unsigned)k) != 1)
				continue;
			free(read_view(&m, view, &cpu_len));
			total += cpu_len;
		}
		ck_assert_uint_eq(total, len);
		json_object_put(root);
		free(stats);
		unmount_trace(&m);
		free(text);
	}
}
END_TEST

/* stats.json's instruction_sets of a one-trace mount, as compact JSON (malloc'ed). */
static char *instruction_sets(struct mounted *m, const char *section)
{
	size_t len;
	char *stats = read_view(m, "stats.json", &len);
	json_object *root = json_tokener_parse(stats), *sec, *sets;
	ck_assert_ptr_nonnull(root);
	ck_assert(json_object_object_get_ex(root, section, &sec));
	ck_assert(json_object_object_get_ex(sec, "instruction_sets", &sets));
	char *got = strdup(json_object_to_json_string_ext(sets, JSON_C_TO_STRING_PLAIN));
	json_object_put(root);
	free(stats);
	return got;
}

/* The instruction sets are spelled (doc/views.md): Tarmac's O, A and T and their longer
 * forms by the names a reader knows; a token that names none as written. */
START_TEST(test_instruction_sets)
{
	struct mounted m;
	mount_text(&m, "sets.tarmac",
		   "1 clk IT (1) 00008000 e1a00000 A svc_s : MOV r0,r0\n"
		   "2 clk IT (2) 00008004 4600 T svc_s : MOV r0,r0\n"
		   "3041 cyc IT (00022a7c:00000006) 00022a7c     48f6 T16 LDR      r0,[pc,#984]\n"
		   "4 clk IT (4) 00010000 d503201f O EL3h_s : NOP\n"
		   "5 clk IS (5) 00010004 d503201f A64 EL3h_s : NOP\n"
		   "6 clk IT (6) 00010008 d503201f X EL3h_s : NOP\n");
	char *got = instruction_sets(&m, "tarmac");
	ck_assert_str_eq(got, "{\"AArch64\":2,\"Thumb\":2,\"AArch32\":1,\"X\":1}");
	free(got);
	unmount_trace(&m);
}
END_TEST

/* MIPS code (doc/formats.md): a jump's or branch's flow is its delay slot's, so a loop's block
 * ends after the slot. Read as ARM, bne is B with a condition: its block would end at the
 * branch and the slot would be a block of its own (4 blocks). */
START_TEST(test_mips_blocks)
{
	struct mounted m;
	mount_text(&m, "loop.qemu4v",
		   "1 clk 0 IT (1) 00001000 24080003 A svc : addiu t0,zero,3\n"
		   "2 clk 0 IT (2) 00001004 2508ffff A svc : addiu t0,t0,-1\n"
		   "3 clk 0 IT (3) 00001008 1500fffe A svc : bne t0,zero,0x1004\n"
		   "4 clk 0 IT (4) 0000100c 00000000 A svc : nop\n"
		   "5 clk 0 IT (5) 00001004 2508ffff A svc : addiu t0,t0,-1\n"
		   "6 clk 0 IT (6) 00001008 1500fffe A svc : bne t0,zero,0x1004\n"
		   "7 clk 0 IT (7) 0000100c 00000000 A svc : nop\n"
		   "8 clk 0 IT (8) 00001004 2508ffff A svc : addiu t0,t0,-1\n"
		   "9 clk 0 IT (9) 00001008 1500fffe A svc : bne t0,zero,0x1004\n"
		   "10 clk 0 IT (10) 0000100c 00000000 A svc : nop\n"
		   "11 clk 0 IT (11) 00001010 03e00008 A svc : jr ra\n"
		   "12 clk 0 IT (12) 00001014 00000000 A svc : nop\n");
	size_t len;
	char *summary = read_view(&m, "spix/summary.txt", &len);
	const char *blocks = strstr(summary, "\nblocks ");
	ck_assert_ptr_nonnull(blocks);
	ck_assert_msg(strncmp(blocks, "\nblocks 3\n", 10) == 0, "%s", summary);
	const char *ranks = strstr(summary, "rank block offset");
	ck_assert_ptr_nonnull(ranks);
	const char *want =
	    "rank block offset length executions instructions percent cumulative address\n"
	    "1 1 0x00000004 3 3 9 75.00 75.00 0x1004\n"
	    "2 2 0x00000010 2 1 2 16.67 91.67 0x1010\n"
	    "3 0 0x00000000 1 1 1 8.33 100.00 0x1000\n";
	expect_same_text("spix/summary.txt's ranks", want, strlen(want), ranks,
			 len - (size_t)(ranks - summary));
	free(summary);
	/* MIPS from the processor's first branch on; the two lines before it by their ISET */
	char *sets = instruction_sets(&m, "qemu4v");
	ck_assert_str_eq(sets, "{\"MIPS\":10,\"AArch32\":2}");
	free(sets);
	unmount_trace(&m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tarmac");
	TCase *tc = tcase_create("decode");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_lines);
	tcase_add_test(tc, test_cpus_and_continuations);
	tcase_add_test(tc, test_bad_lines);
	tcase_add_test(tc, test_token_boundaries);
	tcase_add_test(tc, test_every_cut);
	tcase_add_test(tc, test_chunks);
	tcase_add_test(tc, test_probe);
	tcase_add_test(tc, test_real_traces);
	tcase_add_test(tc, test_instruction_sets);
	tcase_add_test(tc, test_mips_blocks);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
