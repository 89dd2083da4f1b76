/* Distinct-member counting with bitmap blocks in an open-addressing hash table. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/footprint.h"
#include "tracemount/util.h"

void tm_footprint_init(struct tm_footprint *f)
{
	memset(f, 0, sizeof(*f));
}

void tm_footprint_free(struct tm_footprint *f)
{
	for (size_t i = 0; i < f->n_slots; i++)
		free(f->slots[i]);
	free(f->slots);
	memset(f, 0, sizeof(*f));
}

static size_t slot_of(uint64_t key, size_t n_slots)
{
	key *= 0x9e3779b97f4a7c15ull; /* Fibonacci hashing spreads consecutive keys */
	return (size_t)(key >> 32) & (n_slots - 1);
}

static int grow_slots(struct tm_footprint *f)
{
	size_t n = f->n_slots ? f->n_slots * 2 : 64;
	struct tm_footprint_block **slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_slots; i++) {
		struct tm_footprint_block *b = f->slots[i];
		if (!b)
			continue;
		size_t s = slot_of(b->key, n);
		while (slots[s])
			s = (s + 1) & (n - 1);
		slots[s] = b;
	}
	free(f->slots);
	f->slots = slots;
	f->n_slots = n;
	return 0;
}

static struct tm_footprint_block *find_block(struct tm_footprint *f, uint64_t key)
{
	if (f->n_slots) {
		size_t s = slot_of(key, f->n_slots);
		for (; f->slots[s]; s = (s + 1) & (f->n_slots - 1))
			if (f->slots[s]->key == key)
				return f->slots[s];
	}
	if ((f->n_blocks + 1) * 2 > f->n_slots && grow_slots(f) < 0)
		return NULL;
	struct tm_footprint_block *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->key = key;
	size_t s = slot_of(key, f->n_slots);
	while (f->slots[s])
		s = (s + 1) & (f->n_slots - 1);
	f->slots[s] = b;
	f->n_blocks++;
	return b;
}

void tm_footprint_add_slow(struct tm_footprint *f, uint64_t member)
{
	uint64_t key = member >> TM_FOOTPRINT_BLOCK_BITS;
	struct tm_footprint_block *b = find_block(f, key);
	if (!b) {
		f->err = -ENOMEM;
		return;
	}
	f->recent[tm_footprint_recent_slot(key)] = b;
	tm_footprint_add(f, member);
}

uint64_t tm_footprint_count(const struct tm_footprint *f)
{
	uint64_t n = 0;
	for (size_t i = 0; i < f->n_slots; i++) {
		const struct tm_footprint_block *b = f->slots[i];
		for (size_t w = 0; b && w < ARRAY_SIZE(b->bits); w++)
			n += (uint64_t)__builtin_popcountll(b->bits[w]);
	}
	return n;
}

uint64_t tm_footprint_count_groups64(const struct tm_footprint *f)
{
	uint64_t n = 0;
	for (size_t i = 0; i < f->n_slots; i++) {
		const struct tm_footprint_block *b = f->slots[i];
		for (size_t w = 0; b && w < ARRAY_SIZE(b->bits); w++)
			n += b->bits[w] != 0;
	}
	return n;
}

/* Whether any bit of word w in [lo, lo + n) is set, n at most 64. */
static int any_bits(uint64_t w, unsigned lo, unsigned n)
{
	uint64_t mask = n == 64 ? ~0ull : ((1ull << n) - 1) << lo;
	return (w & mask) != 0;
}

uint64_t tm_footprint_count_groups(const struct tm_footprint *f, unsigned shift)
{
	const size_t words = ARRAY_SIZE(f->slots[0]->bits);
	uint64_t n = 0;
	if (shift > TM_FOOTPRINT_BLOCK_BITS)
		return 0;
	for (size_t i = 0; i < f->n_slots; i++) {
		const struct tm_footprint_block *b = f->slots[i];
		if (!b)
			continue;
		if (shift <= 6) {
			unsigned g = 1u << shift;
			for (size_t w = 0; w < words; w++)
				for (unsigned lo = 0; b->bits[w] && lo < 64; lo += g)
					n += any_bits(b->bits[w], lo, g);
			continue;
		}
		size_t per_group = (size_t)1 << (shift - 6);
		for (size_t w = 0; w < words; w += per_group) {
			uint64_t any = 0;
			for (size_t k = 0; k < per_group; k++)
				any |= b->bits[w + k];
			n += any != 0;
		}
	}
	return n;
}
