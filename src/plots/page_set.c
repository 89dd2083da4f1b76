/* A set of 4 KiB page numbers that says whether an insert is new (plots.h): the footprint
 * plot counts pages as they are first touched. A bitmap of the first page's 4 GiB, and slots of
 * 16 pages for the others: open addressing, linear probing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plots/plots.h"

#define FIRST_SLOTS 1024

void tm_page_set_free(struct tm_page_set *p)
{
	free(p->window);
	free(p->slot);
	memset(p, 0, sizeof(*p));
}

/* The slot of group, or the empty slot where it would go. */
static uint64_t *find(const struct tm_page_set *p, uint64_t group)
{
	size_t s = tm_page_set_slot_of(p, group);
	while (p->slot[s] && p->slot[s] >> TM_PAGE_SET_GROUP != group)
		s = (s + 1) & (p->n_slots - 1);
	return &p->slot[s];
}

static int grow(struct tm_page_set *p)
{
	struct tm_page_set old = *p;
	p->n_slots = old.n_slots ? old.n_slots * 2 : FIRST_SLOTS;
	p->shift = old.n_slots ? old.shift - 1 : 64 - __builtin_ctzll(FIRST_SLOTS);
	p->slot = calloc(p->n_slots, sizeof(*p->slot));
	if (!p->slot) {
		*p = old;
		return -ENOMEM;
	}
	for (size_t i = 0; i < old.n_slots; i++)
		if (old.slot[i])
			*find(p, old.slot[i] >> TM_PAGE_SET_GROUP) = old.slot[i];
	free(old.slot);
	return 0;
}

int tm_page_set_add_slow(struct tm_page_set *p, uint64_t page)
{
	uint64_t group = page / TM_PAGE_SET_GROUP, bit = 1ull << page % TM_PAGE_SET_GROUP;
	if (p->err)
		return 0;
	if (!p->window) {
		if (!(p->window = calloc(TM_PAGE_SET_WINDOW / 64, sizeof(*p->window)))) {
			p->err = -ENOMEM;
			return 0;
		}
		p->window_base = page & ~(uint64_t)(TM_PAGE_SET_WINDOW - 1);
		return tm_page_set_add(p, page);
	}
	if (group >> (64 - TM_PAGE_SET_GROUP)) /* past 2^52: no room in a slot */
		return 0;
	uint64_t *s = p->slot ? find(p, group) : NULL;
	if (!s || !*s) {
		/* at most half full, as when a slot held one page: no more memory than then */
		if ((p->n_used + 1) * 2 > p->n_slots && (p->err = grow(p)) < 0)
			return 0;
		s = find(p, group);
		*s = group << TM_PAGE_SET_GROUP;
		p->n_used++;
	}
	if (*s & bit)
		return 0;
	*s |= bit;
	p->n++;
	return 1;
}
