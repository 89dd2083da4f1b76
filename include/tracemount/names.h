/* Counting names (opcodes, registers, modes) for stats.json: an open-addressing table keyed
 * by the name's first 8 bytes and its length, so a lookup is a multiply and, for names longer
 * than 8 bytes, one memcmp. Names repeat, so the last one found is tried first. */
#ifndef TRACEMOUNT_NAMES_H
#define TRACEMOUNT_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct json_object;

struct tm_name {
	uint64_t key, count;
	char *name; /* NUL-terminated copy */
	uint32_t len;
};

struct tm_names {
	struct tm_name *slots;
	size_t n_slots, n;
	size_t max;	    /* distinct names counted; 0: no limit */
	size_t last;	    /* slot of the previous lookup */
	uint64_t uncounted; /* occurrences of names past max, or lost to no memory */
	int err;	    /* -ENOMEM once an allocation failed */
};

/* Up to the first 8 bytes of a name as a little-endian number, the rest zero: with the length,
 * a cheap key that tells most names apart. p[0, len) must be readable, and so must p[0, 8)
 * when p + 8 <= limit. */
static inline uint64_t tm_name_key(const uint8_t *p, size_t len, const uint8_t *limit)
{
	uint64_t k = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (limit - p >= 8) {
		memcpy(&k, p, 8);
		return len >= 8 ? k : k & ((1ull << (8 * len)) - 1);
	}
#else
	(void)limit;
#endif
	for (size_t i = 0; i < len && i < 8; i++)
		k |= (uint64_t)p[i] << (8 * i);
	return k;
}

/* Adds n occurrences of name[0, len); limit as for tm_name_key. */
void tm_names_add(struct tm_names *t, const uint8_t *name, size_t len, const uint8_t *limit,
		  uint64_t n);
void tm_names_free(struct tm_names *t);

/* The top names as a JSON object name -> count, most frequent first (ties in byte order of the
 * name); top 0: all of them. NULL when out of memory. */
struct json_object *tm_names_json(const struct tm_names *t, size_t top);

#endif
