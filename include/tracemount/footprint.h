/* A set of 64-bit numbers (cache line or page numbers) that counts distinct members.
 *
 * Members are kept as bits in 32 Ki-bit blocks found through a hash table, fronted by a
 * small direct-mapped table of recent blocks, so a trace with locality costs a few bits per
 * distinct member and an insert is usually one bit set. Counting is done once, at the end. */
#ifndef TRACEMOUNT_FOOTPRINT_H
#define TRACEMOUNT_FOOTPRINT_H

#include <stddef.h>
#include <stdint.h>

#define TM_FOOTPRINT_BLOCK_BITS 15 /* members per block: 32768, a 4 KiB bitmap */
#define TM_FOOTPRINT_RECENT	64

struct tm_footprint_block {
	uint64_t key; /* member >> TM_FOOTPRINT_BLOCK_BITS */
	uint64_t bits[(1u << TM_FOOTPRINT_BLOCK_BITS) / 64];
};

struct tm_footprint {
	struct tm_footprint_block **slots;
	size_t n_slots, n_blocks;
	struct tm_footprint_block *recent[TM_FOOTPRINT_RECENT]; /* by tm_footprint_recent_slot */
	struct tm_footprint_block *last; /* the block of the last insert: runs stay in one */
	int err; /* -ENOMEM once an insert failed; the count is then a lower bound */
};

void tm_footprint_init(struct tm_footprint *f);
void tm_footprint_free(struct tm_footprint *f);

/* The slow path of tm_footprint_add: finds or creates the block of member. */
void tm_footprint_add_slow(struct tm_footprint *f, uint64_t member);

/* Hashed, so that regions a power of two apart do not evict each other. */
static inline unsigned tm_footprint_recent_slot(uint64_t key)
{
	return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 58); /* 6 bits: TM_FOOTPRINT_RECENT */
}

static inline void tm_footprint_add(struct tm_footprint *f, uint64_t member)
{
	uint64_t key = member >> TM_FOOTPRINT_BLOCK_BITS;
	uint64_t bit = member & ((1u << TM_FOOTPRINT_BLOCK_BITS) - 1);
	struct tm_footprint_block *b = f->last;
	if (!b || b->key != key) {
		b = f->recent[tm_footprint_recent_slot(key)];
		if (!b || b->key != key) {
			tm_footprint_add_slow(f, member);
			return;
		}
		f->last = b;
	}
	b->bits[bit >> 6] |= 1ull << (bit & 63);
}

/* The number of distinct members added. */
uint64_t tm_footprint_count(const struct tm_footprint *f);

/* The number of distinct (member >> 6) values: one 64-bit word of the bitmap each. For a set
 * of 64-byte line numbers, this counts 4 KiB pages without a second set. */
uint64_t tm_footprint_count_groups64(const struct tm_footprint *f);

/* The number of distinct (member >> shift) values, shift at most TM_FOOTPRINT_BLOCK_BITS: for
 * a set of instruction word numbers (PC >> 2), shift 4 counts 64-byte lines, 10 pages. */
uint64_t tm_footprint_count_groups(const struct tm_footprint *f, unsigned shift);

#endif
