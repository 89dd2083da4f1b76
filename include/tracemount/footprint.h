/* A set of 64-bit numbers (cache line or page numbers) that counts distinct members.
 *
 * Members are kept as bits in blocks of 32 Ki bits (a 4 KiB bitmap each), one block per 2^15
 * members touched. The blocks are found through an open-addressing table whose slots hold a
 * block's key beside its bitmap, at most a quarter full: an insert is one multiply, one slot
 * read and one bit set, whatever the addresses, and the table costs 64 bytes a block. The bit
 * is set TM_FOOTPRINT_PENDING inserts later, its word prefetched now: scattered addresses miss
 * the cache on every insert, and so the misses overlap. Counting is done once, at the end. */
#ifndef TRACEMOUNT_FOOTPRINT_H
#define TRACEMOUNT_FOOTPRINT_H

#include <stddef.h>
#include <stdint.h>

#define TM_FOOTPRINT_BLOCK_BITS 15 /* members per block: 32768, a 4 KiB bitmap */
#define TM_FOOTPRINT_WORDS	((1u << TM_FOOTPRINT_BLOCK_BITS) / 64)
#define TM_FOOTPRINT_PENDING	16 /* bits not yet set: a power of two */

struct tm_footprint_slot {
	uint64_t tag;	/* the block's key (member >> TM_FOOTPRINT_BLOCK_BITS) + 1; 0: empty */
	uint64_t *bits; /* its bitmap: TM_FOOTPRINT_WORDS words */
};

struct tm_footprint {
	struct tm_footprint_slot *slots; /* NULL until the first insert */
	unsigned shift;			 /* 64 - log2(n_slots): the hash keeps the top bits */
	size_t n_slots;
	size_t n_blocks;    /* blocks made: distinct members >> TM_FOOTPRINT_BLOCK_BITS */
	int err;	    /* -ENOMEM once an insert failed; the count is then a lower bound */
	unsigned n_inserts; /* modulo 2^32: the next pending entry */
	uint64_t *pending[TM_FOOTPRINT_PENDING]; /* a word of a block, or NULL */
	uint64_t pending_bit[TM_FOOTPRINT_PENDING];
};

void tm_footprint_init(struct tm_footprint *f);
void tm_footprint_free(struct tm_footprint *f);

/* The slow path of tm_footprint_add: probes past the first slot, or makes the block, and sets
 * the bit at once. */
void tm_footprint_add_slow(struct tm_footprint *f, uint64_t member);

/* The first slot to look at for key: Fibonacci hashing, so that keys a power of two apart or in
 * a run land in different slots. */
static inline size_t tm_footprint_slot_of(const struct tm_footprint *f, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> f->shift);
}

static inline void tm_footprint_add(struct tm_footprint *f, uint64_t member)
{
	uint64_t key = member >> TM_FOOTPRINT_BLOCK_BITS;
	uint64_t bit = member & ((1u << TM_FOOTPRINT_BLOCK_BITS) - 1);
	if (f->slots) {
		const struct tm_footprint_slot *s = &f->slots[tm_footprint_slot_of(f, key)];
		if (s->tag == key + 1) {
			uint64_t *word = &s->bits[bit >> 6];
			unsigned k = f->n_inserts++ & (TM_FOOTPRINT_PENDING - 1);
			__builtin_prefetch(word, 1);
			if (f->pending[k])
				*f->pending[k] |= f->pending_bit[k];
			f->pending[k] = word;
			f->pending_bit[k] = 1ull << (bit & 63);
			return;
		}
	}
	tm_footprint_add_slow(f, member);
}

/* The number of distinct members added. The counts set the pending bits first. */
uint64_t tm_footprint_count(struct tm_footprint *f);

/* The number of distinct (member >> 6) values: one 64-bit word of the bitmap each. For a set
 * of 64-byte line numbers, this counts 4 KiB pages without a second set. */
uint64_t tm_footprint_count_groups64(struct tm_footprint *f);

/* The number of distinct (member >> shift) values, shift at most TM_FOOTPRINT_BLOCK_BITS: for
 * a set of instruction word numbers (PC >> 2), shift 4 counts 64-byte lines, 10 pages. */
uint64_t tm_footprint_count_groups(struct tm_footprint *f, unsigned shift);

#endif
