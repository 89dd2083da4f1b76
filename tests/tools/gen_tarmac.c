/* Writes a synthetic QEMU4V or ARM Tarmac text trace to standard output, deterministically from
 * a seed, in the dialect of one real writer:
 *
 *   qemu4v         the spec's examples (specs/004): every line timed in clk, the cpu field on
 *                  instructions only, M and R lines without it:
 *                    1 clk 0 IT (1) 00000004 3c080001 A svc : lui t0,0x1
 *                    10 clk MR8 00103fc4 0010400000000000
 *                    14 clk R r8 00000000
 *   microtesk      as MicroTESK's writer: M and R lines carry the time of the instruction they
 *                  follow, -1 before the first one (the initial register values); with several
 *                  cpus each has its own instruction count, so times go back
 *   microtesk-old  the same without the cpu field on instructions (older MicroTESK logs)
 *   fastmodel      ARM Fast Models: `cpuN` before the kind on every line when --cpus > 1 (as
 *                  gem5 writes for one), VA:PA addresses, wide data split by `_`, skipped (IS)
 *                  instructions, SIGNAL:, E and CADI E events
 *
 *   gen_tarmac [--lines N] [--seed S] [--dialect D] [--cpus K] [--unit U] [--addr64]
 *
 * --lines N   N lines (default 1000); the last instruction's group may be cut
 * --seed S    the seed (default 1)
 * --cpus K    K processors, 1 to 64 (default 1), interleaved at random
 * --unit U    the time unit (default clk)
 * --addr64    16-digit instruction and data addresses (default 8)
 *
 * Disassembly uses runs of spaces of varying length and 0x immediates. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>

#include "xorshift.h"

enum dialect { QEMU4V, MICROTESK, MICROTESK_OLD, FASTMODEL };

static const char *const dialect_names[] = {"qemu4v", "microtesk", "microtesk-old", "fastmodel"};

struct options {
	uint64_t lines;
	enum dialect dialect;
	unsigned cpus;
	const char *unit;
	int addr64;
};

struct cpu {
	uint64_t pc;
	uint64_t count; /* instructions executed */
	uint64_t sp;
};

static const char *const mnemonics[] = {"lui", "addiu", "lw",  "sw",  "beq", "add",
					"MOV", "LDR",	"STR", "CMP", "BNE", "ADD"};
static const char *const modes[] = {"svc", "svc_s", "usr_ns", "EL3h_s", "irq_s"};

static uint64_t below(uint64_t n)
{
	return rng() % n;
}

/* spaces: a run of 1 to 6 spaces, the varying padding of real disassembly. */
static const char *spaces(void)
{
	static const char pad[] = "      ";
	return pad + below(6);
}

static void print_addr(uint64_t a, const struct options *o)
{
	if (o->addr64)
		printf("%016" PRIx64, a);
	else
		printf("%08" PRIx64, a & 0xffffffffu);
}

/* print_head prints "TIME UNIT " and, where the dialect puts it on this kind of line, the cpu. */
static void print_head(const struct options *o, int64_t time, unsigned cpu, int instruction)
{
	printf("%" PRId64 " %s ", time, o->unit);
	if (o->dialect == FASTMODEL ? o->cpus > 1 : instruction && o->dialect != MICROTESK_OLD)
		printf(o->dialect == FASTMODEL ? "cpu%u " : "%u ", cpu);
}

static void print_instruction(const struct options *o, int64_t time, unsigned cpu, struct cpu *c)
{
	const char *m = mnemonics[below(sizeof mnemonics / sizeof *mnemonics)];
	int skipped = o->dialect == FASTMODEL && below(20) == 0;

	uint32_t word = (uint32_t)rng();
	/* A beq or BNE whose word encodes MIPS's beq or bne would make its processor MIPS code
	 * (doc/formats.md, "MIPS code"), which real ARM code never is: these traces stay ARM. */
	if ((!strcmp(m, "beq") && word >> 26 == 4) || (!strcmp(m, "BNE") && word >> 26 == 5))
		word ^= 1u << 31;

	print_head(o, time, cpu, 1);
	printf("%s (%" PRIu64 ") ", skipped ? "IS" : "IT", c->count);
	print_addr(c->pc, o);
	printf(" %08" PRIx32 " %c %s :%s%s%st%u,%s0x%" PRIx64 "\n", word, below(8) ? 'A' : 'T',
	       modes[below(sizeof modes / sizeof *modes)], spaces(), m, spaces(),
	       (unsigned)below(10), spaces(), below(0x10000));
	c->pc = below(16) ? c->pc + 4 : c->pc + 4 * below(4096) - 8192;
}

static void print_memory(const struct options *o, int64_t time, unsigned cpu, struct cpu *c)
{
	static const unsigned sizes[] = {1, 2, 4, 4, 8, 8, 16};
	unsigned size = sizes[below(sizeof sizes / sizeof *sizes)];
	uint64_t addr = below(4) ? c->sp - 8 * below(64) : 0x20000000u + 8 * below(1u << 20);

	print_head(o, time, cpu, 0);
	printf("M%c%u ", below(3) ? 'R' : 'W', size);
	print_addr(addr, o);
	if (o->dialect == FASTMODEL)
		printf(":%012" PRIx64, addr & 0xffffffffffffu);
	putchar(' ');
	for (unsigned i = 0; i < size; i++) {
		if (i && i % 8 == 0 && o->dialect == FASTMODEL)
			putchar('_');
		printf("%02x", (unsigned)below(256));
	}
	putchar('\n');
}

static void print_register(const struct options *o, int64_t time, unsigned cpu)
{
	print_head(o, time, cpu, 0);
	if (o->addr64)
		printf("R X%u %016" PRIx64 "\n", (unsigned)below(31), rng());
	else
		printf("R r%u %08" PRIx32 "\n", (unsigned)below(13), (uint32_t)rng());
}

static void print_event(const struct options *o, int64_t time, unsigned cpu)
{
	static const char *const events[] = {"E 00000000:000000000000 00000001 CoreEvent_Reset",
					     "SIGNAL: SIGNAL=ResetHold STATE=N",
					     "CADI E simulation_stopped"};
	print_head(o, time, cpu, 0);
	printf("%s\n", events[below(3)]);
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {{"lines", required_argument, NULL, 'n'},
					     {"seed", required_argument, NULL, 's'},
					     {"dialect", required_argument, NULL, 'd'},
					     {"cpus", required_argument, NULL, 'c'},
					     {"unit", required_argument, NULL, 'u'},
					     {"addr64", no_argument, NULL, 'a'},
					     {NULL, 0, NULL, 0}};
	int ch;
	unsigned i;

	*o = (struct options){.lines = 1000, .dialect = QEMU4V, .cpus = 1, .unit = "clk"};
	while ((ch = getopt_long(argc, argv, "n:s:d:c:u:a", opts, NULL)) != -1) {
		switch (ch) {
		case 'n': o->lines = strtoull(optarg, NULL, 10); break;
		case 's': rng_state ^= strtoull(optarg, NULL, 10) * 0x2545f4914f6cdd1dull; break;
		case 'd':
			for (i = 0; i < 4 && strcmp(optarg, dialect_names[i]); i++)
				;
			if (i == 4)
				return -1;
			o->dialect = (enum dialect)i;
			break;
		case 'c': o->cpus = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'u': o->unit = optarg; break;
		case 'a': o->addr64 = 1; break;
		default: return -1;
		}
	}
	return optind == argc && o->cpus >= 1 && o->cpus <= 64 && rng_state ? 0 : -1;
}

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	struct options o;
	struct cpu cpus[64];
	uint64_t written = 0, clock = 0;
	int micro;

	if (parse_options(argc, argv, &o) < 0) {
		fprintf(stderr,
			"usage: gen_tarmac [--lines N] [--seed S] [--dialect qemu4v|microtesk|"
			"microtesk-old|fastmodel] [--cpus K] [--unit U] [--addr64]\n");
		return 2;
	}
	setvbuf(stdout, buf, _IOFBF, sizeof buf);
	micro = o.dialect == MICROTESK || o.dialect == MICROTESK_OLD;
	for (unsigned i = 0; i < o.cpus; i++)
		cpus[i] =
		    (struct cpu){.pc = (o.addr64 ? 0xffff000000080000ull : 0x8000u) + i * 0x100000u,
				 .sp = 0x7fff0000u - i * 0x10000u};
	/* MicroTESK writes the initial register values before the first instruction, at -1. */
	for (; micro && written < o.lines && written < 4; written++)
		print_register(&o, -1, 0);
	while (written < o.lines) {
		unsigned cpu = (unsigned)below(o.cpus);
		struct cpu *c = &cpus[cpu];
		/* MicroTESK counts per cpu (times step back between cpus); the others share a
		 * clock that sometimes stands still. */
		int64_t time = micro ? (int64_t)c->count : (int64_t)(clock += below(4) != 0);
		uint64_t extra = below(4);

		c->count++;
		print_instruction(&o, time, cpu, c);
		written++;
		for (uint64_t i = 0; i < extra && written < o.lines; i++, written++) {
			if (i == 0 && below(2))
				print_memory(&o, time, cpu, c);
			else if (o.dialect == FASTMODEL && below(64) == 0)
				print_event(&o, time, cpu);
			else
				print_register(&o, time, cpu);
		}
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
