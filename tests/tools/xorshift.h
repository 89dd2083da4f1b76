/* A small deterministic pseudo-random generator for the test tools (xorshift64). */
#ifndef TRACEMOUNT_TESTS_XORSHIFT_H
#define TRACEMOUNT_TESTS_XORSHIFT_H

#include <stdint.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull; /* never 0 */

static inline uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

#endif
