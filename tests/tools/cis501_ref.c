/* A reader of CIS501 x86 micro-op traces (specs/002), written the way the course's reference
 * parser (simulator.c, "Trace Parser" of the spec) reads them: scripts/bench-gzip's baseline.
 * (The tests' CIS501 model, the expected views and counts, is tests/integration/
 * cis501_expect.py.)
 *
 *   cis501_ref [--lines] [FILE]        (standard input when FILE is absent)
 *
 * Default: one fscanf per record over the whole stream, 14 conversions (decimal fields with %i,
 * hex with %x, the flag characters with " %c", the opcodes with %11s and %22s), any white space
 * separating fields, a macro-op counted at every record whose Uop field is 1. At the first record
 * that does not convert it stops with "Error parsing trace at line N" on standard error and exit
 * status 1, N being, as in the reference, the number of records read before it. Like the
 * reference it does not see line ends: a line with 13 fields takes its 14th from the next line.
 *
 * --lines: the same conversions line by line (getline, then sscanf with the same format), and a
 * line must hold exactly the 14 fields and nothing else (a NUL byte ends the line's text, so a
 * line with one fails); N is then the 1-based line number of the first bad line.
 *
 * Output: "Processing trace...", "Processed N trace records.", "Micro-ops: N", "Macro-ops: M"
 * (the reference's lines), then more counts: "Loads: N", "Stores: N", "Taken: N",
 * "Not taken: N", "Flags read: N", "Flags written: N". */
#define __STDC_FORMAT_MACROS
#define _GNU_SOURCE 1
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECORD_FORMAT                                                                              \
	"%" SCNi32 "%" SCNx64 "%" SCNi32 "%" SCNi32 "%" SCNi32 " %c"                               \
	" %c"                                                                                      \
	" %c"                                                                                      \
	"%" SCNi64 "%" SCNx64 "%" SCNx64 "%" SCNx64 "%11s"                                         \
	"%22s"

struct record {
	int32_t uop;
	uint64_t pc;
	int32_t src1, src2, dest;
	char flags, branch, ldst;
	int64_t imm;
	uint64_t addr, fallthrough, target;
	char macro[12];
	char micro[23];
};

struct counts {
	int64_t micro_ops, macro_ops, loads, stores, taken, not_taken, flags_read, flags_written;
};

static void count(struct counts *c, const struct record *r)
{
	c->micro_ops++;
	if (r->uop == 1)
		c->macro_ops++;
	if (r->ldst == 'L')
		c->loads++;
	if (r->ldst == 'S')
		c->stores++;
	if (r->branch == 'T')
		c->taken++;
	if (r->branch == 'N')
		c->not_taken++;
	if (r->flags == 'R')
		c->flags_read++;
	if (r->flags == 'W')
		c->flags_written++;
}

/* The reference's loop: fscanf over the stream. */
static int read_stream(FILE *in, struct counts *c)
{
	struct record r;
	for (;;) {
		int result = fscanf(in, RECORD_FORMAT, &r.uop, &r.pc, &r.src1, &r.src2, &r.dest,
				    &r.flags, &r.branch, &r.ldst, &r.imm, &r.addr, &r.fallthrough,
				    &r.target, r.macro, r.micro);
		if (result == EOF)
			return 0;
		if (result != 14) {
			fprintf(stderr, "Error parsing trace at line %" PRIi64 "\n", c->micro_ops);
			return 1;
		}
		count(c, &r);
	}
}

/* Line by line: exactly 14 fields, nothing after them. */
static int read_lines(FILE *in, struct counts *c)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int64_t number = 0;
	struct record r;
	while ((len = getline(&line, &cap, in)) != -1) {
		int end = -1;
		number++;
		int result = sscanf(line, RECORD_FORMAT " %n", &r.uop, &r.pc, &r.src1, &r.src2,
				    &r.dest, &r.flags, &r.branch, &r.ldst, &r.imm, &r.addr,
				    &r.fallthrough, &r.target, r.macro, r.micro, &end);
		if (result != 14 || end < 0 || (size_t)end != strlen(line) ||
		    strlen(line) != (size_t)len) {
			fprintf(stderr, "Error parsing trace at line %" PRIi64 "\n", number);
			free(line);
			return 1;
		}
		count(c, &r);
	}
	free(line);
	return 0;
}

int main(int argc, char *argv[])
{
	FILE *in = stdin;
	int by_line = 0;
	struct counts c = {0};

	if (argc >= 2 && !strcmp(argv[1], "--lines")) {
		by_line = 1;
		argc--;
		argv++;
	}
	if (argc > 2) {
		fprintf(stderr, "usage: cis501_ref [--lines] [FILE]\n");
		return 2;
	}
	if (argc == 2) {
		in = fopen(argv[1], "r");
		if (!in) {
			perror(argv[1]);
			return 1;
		}
	}
	printf("Processing trace...\n");
	if (by_line ? read_lines(in, &c) : read_stream(in, &c))
		return 1;
	printf("Processed %" PRIi64 " trace records.\n", c.micro_ops);
	printf("Micro-ops: %" PRIi64 "\n", c.micro_ops);
	printf("Macro-ops: %" PRIi64 "\n", c.macro_ops);
	printf("Loads: %" PRIi64 "\n", c.loads);
	printf("Stores: %" PRIi64 "\n", c.stores);
	printf("Taken: %" PRIi64 "\n", c.taken);
	printf("Not taken: %" PRIi64 "\n", c.not_taken);
	printf("Flags read: %" PRIi64 "\n", c.flags_read);
	printf("Flags written: %" PRIi64 "\n", c.flags_written);
	return ferror(stdout) || fflush(stdout) ? 1 : 0;
}
