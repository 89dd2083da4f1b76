/* A set of 4 KiB page numbers that says whether an insert is new (plots.h): the footprint
 * plot counts pages as they are first touched. Open addressing, linear probing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plots/plots.h"

void tm_page_set_free(struct tm_page_set *p)
{
	free(p->slot);
	p->slot = NULL;
	p->n_slots = p->n = 0;
	memset(p->recent, 0, sizeof(p->recent));
}

static size_t slot_of(uint64_t key, size_t n_slots)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (n_slots - 1);
}

static int grow(struct tm_page_set *p)
{
	size_t n = p->n_slots ? p->n_slots * 2 : 1024;
	uint64_t *slot = calloc(n, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_slots; i++) {
		if (!p->slot[i])
			continue;
		size_t s = slot_of(p->slot[i], n);
		while (slot[s])
			s = (s + 1) & (n - 1);
		slot[s] = p->slot[i];
	}
	free(p->slot);
	p->slot = slot;
	p->n_slots = n;
	return 0;
}

int tm_page_set_add_slow(struct tm_page_set *p, uint64_t page)
{
	uint64_t key = page + 1; /* never 0 but for page 2^64 - 1, which pages of 4 KiB miss */
	if (!key || p->err)
		return 0;
	p->recent[tm_page_recent_slot(page)] = key;
	if ((p->n + 1) * 2 > p->n_slots && (p->err = grow(p)) < 0)
		return 0;
	size_t s = slot_of(key, p->n_slots);
	for (; p->slot[s]; s = (s + 1) & (p->n_slots - 1))
		if (p->slot[s] == key)
			return 0;
	p->slot[s] = key;
	p->n++;
	return 1;
}
