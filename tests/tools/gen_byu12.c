/* Writes a synthetic BYU 12-byte ("p2AddrTr") trace to standard output, deterministically from
 * a seed: little-endian records {u32 address; u8 reqtype; u8 size; u8 attr; u8 proc; u32 time}.
 *
 *   gen_byu12 [-n RECORDS] [-s SEED] [-p PROCESSORS] [-m mixed|every|random] [-t TRAILING]
 *
 * mixed: a program-like mix on PROCESSORS processors (default 3): sequential fetches, reads,
 * read-invalidates and writes around a few regions, deferred replies, and now and then every
 * other known request type; times are per-processor clocks interleaved, so not monotonic.
 * Every request type is known and sizes are at most 64, so the head reads as plausible 12-byte
 * records. every: the 17 known request types in turn, with an invalid one every 7th record
 * and a processor of 64 or more every 50th. random: random bytes. -t appends that many bytes
 * of a partial record. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xorshift.h"

static const uint8_t known[17] = {0x00, 0x01, 0x02, 0x03, 0x10, 0x11, 0x20, 0x21, 0x22,
				  0x23, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37};
static const uint8_t invalid[8] = {0x04, 0x0f, 0x12, 0x24, 0x30, 0x38, 0x80, 0xff};

static void put_record(uint8_t *p, uint32_t addr, uint8_t reqtype, uint8_t size, uint8_t attr,
		       uint8_t proc, uint32_t time)
{
	for (int k = 0; k < 4; k++) {
		p[k] = (uint8_t)(addr >> (8 * k));
		p[8 + k] = (uint8_t)(time >> (8 * k));
	}
	p[4] = reqtype;
	p[5] = size;
	p[6] = attr;
	p[7] = proc;
}

static void mixed_record(uint8_t *p, uint32_t *pc, uint32_t *clock, unsigned procs)
{
	static const uint32_t regions[4] = {0x00100000, 0x07ff0000, 0x00400000, 0x1fff8000};
	static const uint8_t sizes[6] = {8, 8, 8, 4, 2, 1};
	uint64_t r = rng();
	unsigned pick = (unsigned)(r % 100), cpu = (unsigned)((r >> 50) % procs);
	uint32_t data = regions[(r >> 8) & 3] + (uint32_t)((r >> 16) % 65536) * 8;
	uint8_t size = sizes[(r >> 36) % 6];
	uint8_t attr = (r >> 44) % 64 == 0 ? (uint8_t)((r >> 40) & 7) : 0;
	/* each processor's clock advances; records of the processors interleave, and a few
	 * go back a little on their own processor too */
	clock[cpu] += 1 + (uint32_t)((r >> 24) % 20);
	uint32_t time = (r >> 56) % 16 == 0 ? clock[cpu] - (uint32_t)((r >> 28) % 8) : clock[cpu];

	if (pick < 45) {
		pc[cpu] = (r >> 32) % 40 == 0 ? 0x00010000 + (uint32_t)((r >> 12) % 100000) * 8
					      : pc[cpu] + 8;
		put_record(p, pc[cpu], 0x00, 8, attr, (uint8_t)cpu, time);
	} else if (pick < 70) {
		put_record(p, data, 0x01, size, attr, (uint8_t)cpu, time);
	} else if (pick < 74) {
		put_record(p, data & ~7u, 0x02, 8, attr, (uint8_t)cpu, time);
	} else if (pick < 90) {
		put_record(p, data, 0x03, size, attr, (uint8_t)cpu, time);
	} else if (pick < 95) {
		put_record(p, 0x00000f10, 0x20, 0, 0, (uint8_t)cpu, time);
	} else {
		uint8_t type = known[4 + (r >> 4) % 13]; /* I/O and the rare ones */
		uint32_t addr = type < 0x20 ? (uint32_t)(r >> 20) & 0xffff : 0;
		put_record(p, addr, type, type < 0x20 ? 4 : 0, 0, (uint8_t)cpu, time);
	}
}

int main(int argc, char **argv)
{
	unsigned long long n = 1000, trailing = 0;
	unsigned procs = 3;
	const char *mode = "mixed";
	int c;

	rng_state = 0x9e3779b97f4a7c15ull;
	while ((c = getopt(argc, argv, "n:s:p:m:t:")) != -1) {
		switch (c) {
		case 'n': n = strtoull(optarg, NULL, 0); break;
		case 's': rng_state ^= strtoull(optarg, NULL, 0) * 0xbf58476d1ce4e5b9ull; break;
		case 'p': procs = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'm': mode = optarg; break;
		case 't': trailing = strtoull(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: gen_byu12 [-n N] [-s SEED] [-p PROCESSORS] "
					"[-m mixed|every|random] [-t BYTES]\n");
			return 2;
		}
	}
	if (strcmp(mode, "mixed") && strcmp(mode, "every") && strcmp(mode, "random")) {
		fprintf(stderr, "gen_byu12: unknown mode %s\n", mode);
		return 2;
	}
	if (procs < 1 || procs > 256) {
		fprintf(stderr, "gen_byu12: processors must be 1 to 256\n");
		return 2;
	}
	if (!rng_state)
		rng_state = 1;
	static uint8_t buf[12 * 8192];
	uint32_t pc[256], clock[256];
	for (unsigned k = 0; k < 256; k++) {
		pc[k] = 0x00010000 + k * 0x1000;
		clock[k] = 100 * k;
	}
	size_t len = 0;
	for (unsigned long long i = 0; i < n; i++) {
		uint8_t *p = buf + len;
		uint64_t r;
		switch (mode[0]) {
		case 'm': mixed_record(p, pc, clock, procs); break;
		case 'e':
			r = rng();
			put_record(p, (uint32_t)r,
				   i % 7 == 6 ? invalid[(r >> 32) % 8] : known[i % 17],
				   (uint8_t)((r >> 40) % 65), (uint8_t)(r >> 48),
				   (uint8_t)(i % 50 == 49 ? 64 + (r >> 56) % 192 : i % procs),
				   (uint32_t)(r >> 20));
			break;
		default:
			r = rng();
			memcpy(p, &r, 8);
			r = rng();
			memcpy(p + 8, &r, 4);
		}
		len += 12;
		if (len == sizeof(buf)) {
			fwrite(buf, 1, len, stdout);
			len = 0;
		}
	}
	for (unsigned long long i = 0; i < trailing; i++)
		buf[len++] = (uint8_t)(0xa0 + i);
	fwrite(buf, 1, len, stdout);
	return ferror(stdout) || fflush(stdout) ? 1 : 0;
}
