/* A small deterministic pseudo-random generator for the test tools (xorshift64). */
#ifndef TRACEMOUNT_TESTS_XORSHIFT_H
#define TRACEMOUNT_TESTS_XORSHIFT_H

#include <stdint.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull; /* never 0 */

/* The next number from the generator whose state is *state (never 0): one per thread. */
static inline uint64_t rng_next(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

static inline uint64_t rng(void)
{
	return rng_next(&rng_state);
}

#endif
