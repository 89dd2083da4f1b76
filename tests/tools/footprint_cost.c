/* What an insert into a footprint (distinct 64-byte lines), a page set (distinct 4 KiB pages) and
 * the address heat map costs, by address pattern: prints the best of ROUNDS in ns per insert, the
 * generator's own cost taken off. Processor time, not wall time: the machine may be busy.
 *
 *   footprint_cost [N [ROUNDS]]     (N addresses a pattern, 50 million unless told) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "plots/plots.h"
#include "tracemount/footprint.h"
#include "xorshift.h"

enum { RANDOM32, SEQUENTIAL, REGIONS_2M, N_PATTERNS };
static const char *const pattern_names[N_PATTERNS] = {"random32", "sequential", "regions2M"};
enum { NONE, FOOTPRINT, PAGE_SET, ADDR_HEAT, N_SETS };
static const char *const set_names[N_SETS] = {"generator", "footprint", "page_set", "addr_heat"};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The i-th address of pattern p (x: the generator's state). */
static inline uint64_t address(unsigned p, uint64_t i, uint64_t *x)
{
	switch (p) {
	case RANDOM32: return rng_next(x) >> 32;
	case SEQUENTIAL: return 0x10000000 + i * 4;
	default: return ((i & 8191) << 21) + (i >> 13) % 32768 * 64; /* 8192 regions of 2 MiB */
	}
}

/* Seconds n inserts of pattern p into set take; *sink keeps the work from being dropped. */
static double run(unsigned set, unsigned p, uint64_t n, uint64_t *sink)
{
	struct tm_footprint f;
	struct tm_page_set ps = {0};
	struct tm_addr_heat h;
	uint64_t x = 0x9e3779b97f4a7c15ull, acc = 0;
	tm_footprint_init(&f);
	if (tm_addr_heat_init(&h) < 0)
		exit(1);
	double t0 = now();
	for (uint64_t i = 0; i < n; i++) {
		uint64_t a = address(p, i, &x);
		switch (set) {
		case NONE: acc += a; break;
		case FOOTPRINT: tm_footprint_add(&f, a >> 6); break;
		case PAGE_SET: acc += (uint64_t)tm_page_set_add(&ps, a >> TM_PAGE_SHIFT); break;
		default: tm_addr_heat_add(&h, (unsigned)(i >> 20) & 255, a, (unsigned)i % 3); break;
		}
	}
	double t = now() - t0;
	*sink += acc + tm_footprint_count(&f) + ps.n + h.n_rows;
	tm_footprint_free(&f);
	tm_page_set_free(&ps);
	tm_addr_heat_free(&h);
	return t;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 50000000, sink = 0;
	unsigned rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 1;
	if (!n || !rounds) {
		fprintf(stderr, "usage: footprint_cost [N [ROUNDS]]\n");
		return 2;
	}
	for (unsigned p = 0; p < N_PATTERNS; p++) {
		double base = 0;
		for (unsigned set = 0; set < N_SETS; set++) {
			double best = 1e30;
			for (unsigned r = 0; r < rounds; r++) {
				double t = run(set, p, n, &sink);
				best = t < best ? t : best;
			}
			if (set == NONE)
				base = best;
			else
				printf("%-10s %-9s %6.2f ns/insert\n", pattern_names[p],
				       set_names[set], (best - base) * 1e9 / (double)n);
		}
	}
	fprintf(stderr, "(%llu)\n", (unsigned long long)(sink & 1));
	return 0;
}
