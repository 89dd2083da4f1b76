/* A set of 64-bit numbers (cache line or page numbers) that counts distinct members.
 *
 * Members are kept as bits in 32 Ki-bit blocks found through a hash table, so a trace with
 * locality costs a few bits per distinct member and a lookup is a hash probe at worst. */
#ifndef TRACEMOUNT_FOOTPRINT_H
#define TRACEMOUNT_FOOTPRINT_H

#include <stddef.h>
#include <stdint.h>

struct tm_footprint_block;

struct tm_footprint {
	struct tm_footprint_block **slots;
	size_t n_slots, n_blocks;
	struct tm_footprint_block *last;
	uint64_t count; /* distinct members */
	int err;	/* -ENOMEM once an insert failed; count is then a lower bound */
};

void tm_footprint_init(struct tm_footprint *f);
void tm_footprint_free(struct tm_footprint *f);
void tm_footprint_add(struct tm_footprint *f, uint64_t member);

#endif
