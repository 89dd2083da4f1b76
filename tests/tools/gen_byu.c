/* Writes a synthetic BYU 6-byte trace to standard output, deterministically from a seed.
 *
 *   gen_byu [-n RECORDS] [-s SEED] [-m mixed|random|invalid] [-t TRAILING_BYTES]
 *
 * mixed: a program-like mix of every bus cycle type (sequential code fetches, data reads and
 * writes around a few regions, write-backs, I/O, interrupts, invalid cycles); random: random
 * bytes; invalid: records whose control byte is INVALID, like a 12-byte trace read as 6-byte
 * records. -t appends that many bytes of a partial record. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xorshift.h"

static void put_record(uint8_t *p, uint32_t addr, uint8_t be, uint8_t control)
{
	p[0] = (uint8_t)(addr >> 24);
	p[1] = (uint8_t)(addr >> 16);
	p[2] = (uint8_t)(addr >> 8);
	p[3] = (uint8_t)addr;
	p[4] = be;
	p[5] = control;
}

/* One record of the program-like mix. Low control bits are noise, as the spec allows. */
static void mixed_record(uint8_t *p, uint32_t *pc)
{
	static const uint32_t regions[4] = {0x00100000, 0x07ff0000, 0x00400000, 0x1fff8000};
	uint64_t r = rng();
	unsigned pick = (unsigned)(r % 100);
	uint8_t noise = (uint8_t)(r >> 60);
	uint32_t data = regions[(r >> 8) & 3] + (uint32_t)((r >> 16) % 65536) * 8;
	uint8_t be = (uint8_t)(r >> 40);

	if (pick < 40) {
		*pc =
		    (r >> 32) % 50 == 0 ? 0x00010000 + (uint32_t)((r >> 12) % 100000) * 8 : *pc + 8;
		put_record(p, *pc, 0x00, (uint8_t)(pick < 38 ? 0x80 : 0x90) | noise);
	} else if (pick < 65) {
		put_record(p, data, be, (uint8_t)(pick < 62 ? 0xc0 : 0xd0) | noise);
	} else if (pick < 85) {
		put_record(p, data, be, 0xf0 | noise);
	} else if (pick < 92) {
		put_record(p, data & ~31u, 0x00, 0xe0 | noise);
	} else if (pick < 95) {
		put_record(p, (uint32_t)(r >> 20) & 0xffff, be, (uint8_t)(pick < 94 ? 0x50 : 0x70));
	} else if (pick < 96) {
		put_record(p, 0, 0xff, 0x10);
	} else if (pick < 97) {
		put_record(p, 0x00000002, 0xfb, 0x30);
	} else {
		static const uint8_t invalid[6] = {0x00, 0x20, 0x40, 0x60, 0xa0, 0xb0};
		put_record(p, (uint32_t)(r >> 24), be, invalid[(r >> 4) % 6] | noise);
	}
}

int main(int argc, char **argv)
{
	unsigned long long n = 1000, trailing = 0;
	const char *mode = "mixed";
	int c;

	rng_state = 0x9e3779b97f4a7c15ull;
	while ((c = getopt(argc, argv, "n:s:m:t:")) != -1) {
		switch (c) {
		case 'n': n = strtoull(optarg, NULL, 0); break;
		case 's': rng_state ^= strtoull(optarg, NULL, 0) * 0xbf58476d1ce4e5b9ull; break;
		case 'm': mode = optarg; break;
		case 't': trailing = strtoull(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: gen_byu [-n N] [-s SEED] [-m mixed|random|invalid] "
					"[-t BYTES]\n");
			return 2;
		}
	}
	if (strcmp(mode, "mixed") && strcmp(mode, "random") && strcmp(mode, "invalid")) {
		fprintf(stderr, "gen_byu: unknown mode %s\n", mode);
		return 2;
	}
	if (!rng_state)
		rng_state = 1;
	static uint8_t buf[6 * 8192];
	uint32_t pc = 0x00010000;
	size_t len = 0;
	for (unsigned long long i = 0; i < n; i++) {
		uint8_t *p = buf + len;
		if (mode[0] == 'm') {
			mixed_record(p, &pc);
		} else {
			uint64_t r = rng();
			memcpy(p, &r, 6);
			if (mode[0] == 'i')
				p[5] &= 0x0f; /* control >> 4 == 0: INVALID */
		}
		len += 6;
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
