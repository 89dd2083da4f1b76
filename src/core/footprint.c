/* Distinct-member counting with bitmap blocks in an open-addressing hash table (footprint.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/footprint.h"

#define FIRST_SLOTS 64

void tm_footprint_init(struct tm_footprint *f)
{
	memset(f, 0, sizeof(*f));
}

void tm_footprint_free(struct tm_footprint *f)
{
	for (size_t i = 0; i < f->n_slots; i++)
		free(f->slots[i].bits);
	free(f->slots);
	memset(f, 0, sizeof(*f));
}

/* The slot of key, or the empty slot where it would go. */
static struct tm_footprint_slot *find_slot(const struct tm_footprint *f, uint64_t key)
{
	size_t s = tm_footprint_slot_of(f, key);
	while (f->slots[s].tag && f->slots[s].tag != key + 1)
		s = (s + 1) & (f->n_slots - 1);
	return &f->slots[s];
}

static int grow_slots(struct tm_footprint *f)
{
	struct tm_footprint old = *f;
	f->n_slots = old.n_slots ? old.n_slots * 2 : FIRST_SLOTS;
	f->shift = old.n_slots ? old.shift - 1 : 64 - __builtin_ctzll(FIRST_SLOTS);
	f->slots = calloc(f->n_slots, sizeof(*f->slots));
	if (!f->slots) {
		*f = old;
		return -ENOMEM;
	}
	for (size_t i = 0; i < old.n_slots; i++)
		if (old.slots[i].tag)
			*find_slot(f, old.slots[i].tag - 1) = old.slots[i];
	free(old.slots);
	return 0;
}

/* A new block for key, in its slot: the table stays at most a quarter full, so that most keys
 * are found in their first slot by tm_footprint_add. NULL when memory ran out. */
static struct tm_footprint_slot *make_block(struct tm_footprint *f, uint64_t key)
{
	if ((f->n_blocks + 1) * 4 > f->n_slots && grow_slots(f) < 0)
		return NULL;
	uint64_t *bits = calloc(TM_FOOTPRINT_WORDS, sizeof(*bits));
	if (!bits)
		return NULL;
	struct tm_footprint_slot *s = find_slot(f, key);
	*s = (struct tm_footprint_slot){.tag = key + 1, .bits = bits};
	f->n_blocks++;
	return s;
}

void tm_footprint_add_slow(struct tm_footprint *f, uint64_t member)
{
	uint64_t key = member >> TM_FOOTPRINT_BLOCK_BITS;
	uint64_t bit = member & ((1u << TM_FOOTPRINT_BLOCK_BITS) - 1);
	struct tm_footprint_slot *s = f->slots ? find_slot(f, key) : NULL;
	if ((!s || !s->tag) && !(s = make_block(f, key))) {
		f->err = -ENOMEM;
		return;
	}
	s->bits[bit >> 6] |= 1ull << (bit & 63);
}

static void set_pending(struct tm_footprint *f)
{
	for (unsigned k = 0; k < TM_FOOTPRINT_PENDING; k++) {
		if (f->pending[k])
			*f->pending[k] |= f->pending_bit[k];
		f->pending[k] = NULL;
	}
}

uint64_t tm_footprint_count(struct tm_footprint *f)
{
	uint64_t n = 0;
	set_pending(f);
	for (size_t i = 0; i < f->n_slots; i++) {
		const uint64_t *bits = f->slots[i].bits;
		for (size_t w = 0; bits && w < TM_FOOTPRINT_WORDS; w++)
			n += (uint64_t)__builtin_popcountll(bits[w]);
	}
	return n;
}

uint64_t tm_footprint_count_groups64(struct tm_footprint *f)
{
	uint64_t n = 0;
	set_pending(f);
	for (size_t i = 0; i < f->n_slots; i++) {
		const uint64_t *bits = f->slots[i].bits;
		for (size_t w = 0; bits && w < TM_FOOTPRINT_WORDS; w++)
			n += bits[w] != 0;
	}
	return n;
}

/* Whether any bit of word w in [lo, lo + n) is set, n at most 64. */
static int any_bits(uint64_t w, unsigned lo, unsigned n)
{
	uint64_t mask = n == 64 ? ~0ull : ((1ull << n) - 1) << lo;
	return (w & mask) != 0;
}

/* The distinct (member >> shift) values of one block. */
static uint64_t block_groups(const uint64_t *bits, unsigned shift)
{
	uint64_t n = 0;
	if (shift <= 6) {
		unsigned g = 1u << shift;
		for (size_t w = 0; w < TM_FOOTPRINT_WORDS; w++)
			for (unsigned lo = 0; bits[w] && lo < 64; lo += g)
				n += any_bits(bits[w], lo, g);
		return n;
	}
	size_t per_group = (size_t)1 << (shift - 6);
	for (size_t w = 0; w < TM_FOOTPRINT_WORDS; w += per_group) {
		uint64_t any = 0;
		for (size_t k = 0; k < per_group; k++)
			any |= bits[w + k];
		n += any != 0;
	}
	return n;
}

uint64_t tm_footprint_count_groups(struct tm_footprint *f, unsigned shift)
{
	uint64_t n = 0;
	if (shift > TM_FOOTPRINT_BLOCK_BITS)
		return 0;
	set_pending(f);
	for (size_t i = 0; i < f->n_slots; i++)
		if (f->slots[i].bits)
			n += block_groups(f->slots[i].bits, shift);
	return n;
}
