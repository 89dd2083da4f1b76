/* The counts plots/addresses.svg draws (plots.h): accesses per slice of the trace, per block
 * of addresses and per kind, in a table of bounded size whose blocks double when it fills. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plots/plots.h"

#define NO_BLOCK UINT64_MAX /* no block of 2^12 bytes or more has this number */

static uint64_t *cell(struct tm_addr_heat *h, unsigned slice, unsigned row)
{
	return h->count + ((size_t)slice * TM_ADDR_ROWS + row) * TM_ACCESS_KINDS;
}

int tm_addr_heat_init(struct tm_addr_heat *h)
{
	memset(h, 0, sizeof(*h));
	h->shift = TM_PAGE_SHIFT;
	for (unsigned k = 0; k < TM_ACCESS_KINDS; k++)
		h->last_block[k] = NO_BLOCK;
	h->count =
	    calloc((size_t)TM_PLOT_SLICES * TM_ADDR_ROWS * TM_ACCESS_KINDS, sizeof(*h->count));
	return h->count ? 0 : -ENOMEM;
}

void tm_addr_heat_free(struct tm_addr_heat *h)
{
	free(h->count);
	h->count = NULL;
}

static unsigned slot_of(uint64_t block)
{
	return (unsigned)((block * 0x9e3779b97f4a7c15ull) >> 56) & (TM_ADDR_SLOTS - 1);
}

/* The row of block, or TM_ADDR_ROWS when it has none. */
static unsigned find(const struct tm_addr_heat *h, uint64_t block, unsigned *slot)
{
	unsigned s = slot_of(block);
	for (; h->slot[s]; s = (s + 1) & (TM_ADDR_SLOTS - 1))
		if (h->block[h->slot[s] - 1] == block)
			break;
	*slot = s;
	return h->slot[s] ? h->slot[s] - 1u : TM_ADDR_ROWS;
}

static void rehash(struct tm_addr_heat *h)
{
	memset(h->slot, 0, sizeof(h->slot));
	for (unsigned r = 0; r < h->n_rows; r++) {
		unsigned s;
		find(h, h->block[r], &s);
		h->slot[s] = (uint16_t)(r + 1);
	}
}

/* Doubles the blocks: rows whose blocks become one are added up, into the first of them. New
 * rows are numbered in the old ones' order, so a row only ever moves down to a free row. */
static void coarsen(struct tm_addr_heat *h)
{
	unsigned n = 0;
	h->shift++;
	for (unsigned r = 0; r < h->n_rows; r++) {
		uint64_t block = h->block[r] >> 1;
		unsigned to = 0;
		while (to < n && h->block[to] != block)
			to++;
		if (to == n)
			h->block[n++] = block;
		if (to == r)
			continue;
		for (unsigned j = 0; j < TM_PLOT_SLICES; j++) {
			uint64_t *dst = cell(h, j, to), *src = cell(h, j, r);
			for (unsigned k = 0; k < TM_ACCESS_KINDS; k++) {
				dst[k] += src[k];
				src[k] = 0;
			}
		}
	}
	h->n_rows = n;
	for (unsigned k = 0; k < TM_ACCESS_KINDS; k++)
		h->last_block[k] = NO_BLOCK;
	rehash(h);
}

unsigned tm_addr_heat_row_slow(struct tm_addr_heat *h, uint64_t addr, unsigned kind)
{
	for (;;) {
		uint64_t block = addr >> h->shift;
		unsigned s, r = find(h, block, &s);
		if (r == TM_ADDR_ROWS && h->n_rows < TM_ADDR_ROWS) {
			r = h->n_rows++;
			h->block[r] = block;
			h->slot[s] = (uint16_t)(r + 1);
		}
		if (r < TM_ADDR_ROWS) {
			h->last_block[kind] = block;
			h->last_row[kind] = r;
			return r;
		}
		/* at 2^57 bytes a block, 2^7 = TM_ADDR_ROWS blocks cover all addresses: this
		 * ends before the shift reaches 64 */
		coarsen(h);
	}
}

void tm_addr_heat_merge(struct tm_addr_heat *h)
{
	const size_t row = (size_t)TM_ADDR_ROWS * TM_ACCESS_KINDS;
	for (unsigned j = 0; j < TM_PLOT_SLICES / 2; j++) {
		uint64_t *dst = h->count + j * row, *a = h->count + 2 * j * row, *b = a + row;
		for (size_t k = 0; k < row; k++)
			dst[k] = a[k] + b[k];
	}
	memset(h->count + TM_PLOT_SLICES / 2 * row, 0, TM_PLOT_SLICES / 2 * row * sizeof(uint64_t));
	h->slice_shift++;
}
