/* plots/ (doc/plots.md): what the plots deriver keeps of a trace's records, and the
 * renderers that draw it. */
#ifndef TRACEMOUNT_PLOTS_PLOTS_H
#define TRACEMOUNT_PLOTS_PLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracemount/format.h"

/* The trace is cut into slices of 2^shift records, at most TM_PLOT_SLICES of them: when a
 * record falls past the last, neighbouring slices merge in pairs and the width doubles, so
 * a trace of any length ends with between half and all of TM_PLOT_SLICES slices (fewer when
 * it has fewer records), without knowing its length in advance. */
#define TM_PLOT_SLICES 256
#define TM_PAGE_SHIFT  12 /* 4 KiB pages */

/* Columns of a slice: the records of each class, then the pages first touched in it. */
enum {
	TM_PLOT_NEW_CODE = TM_MAX_CLASSES, /* pages first fetched from */
	TM_PLOT_NEW_DATA,		   /* pages first read or written */
	TM_PLOT_COLUMNS,
};

struct tm_slices {
	uint64_t (*v)[TM_PLOT_COLUMNS]; /* TM_PLOT_SLICES rows, summed when they merge */
	unsigned shift;
	uint64_t records; /* records seen: the slices used are those below it */
};

int tm_slices_init(struct tm_slices *s);
void tm_slices_free(struct tm_slices *s);

/* Merges the slices in pairs, doubling their width. */
void tm_slices_merge(struct tm_slices *s);

/* The row of record r (records come in increasing order), merging slices when r falls past
 * the last. */
static inline uint64_t *tm_slices_row(struct tm_slices *s, uint64_t r)
{
	while (r >> s->shift >= TM_PLOT_SLICES)
		tm_slices_merge(s);
	if (r >= s->records)
		s->records = r + 1;
	return s->v[r >> s->shift];
}

/* The number of slices used, and the first record and end of slice j. */
unsigned tm_slices_used(const struct tm_slices *s);
uint64_t tm_slice_start(const struct tm_slices *s, unsigned j);
uint64_t tm_slice_end(const struct tm_slices *s, unsigned j);

/* A set of page numbers that says whether an insert is new. The 4 GiB of addresses the first
 * page falls in (all of a 32-bit trace's) are a bitmap of 2^20 pages, 128 KiB allocated at the
 * first insert: one bit to test, in a table that stays in the cache. Other pages are in slots
 * of 16 neighbouring pages: their number >> 4 in its top 48 bits, a bit for each in its low 16
 * (0: an empty slot), in an open-addressed table at most half full, so that scattered pages
 * cost at most what a slot a page did, and dense ones a sixteenth of it. */
#define TM_PAGE_SET_WINDOW (1u << 20) /* pages in the bitmap: 4 GiB of 4 KiB pages */
#define TM_PAGE_SET_GROUP  16	      /* pages a slot */
struct tm_page_set {
	uint64_t *window;     /* NULL until the first insert; all-zero is an empty set */
	uint64_t window_base; /* its first page: the first insert's, rounded down */
	uint64_t *slot;	      /* NULL until a page falls outside the window */
	unsigned shift;	      /* 64 - log2(n_slots): the hash keeps the top bits */
	size_t n_slots, n_used;
	uint64_t n; /* distinct pages */
	int err;    /* -ENOMEM once an insert failed; the count is then a lower bound */
};

void tm_page_set_free(struct tm_page_set *p);
/* The slow path of tm_page_set_add: the first insert, or a page not in its group's first
 * slot. */
int tm_page_set_add_slow(struct tm_page_set *p, uint64_t page);

/* The first slot to look at for a group of pages (page / TM_PAGE_SET_GROUP). */
static inline size_t tm_page_set_slot_of(const struct tm_page_set *p, uint64_t group)
{
	return (size_t)((group * 0x9e3779b97f4a7c15ull) >> p->shift);
}

/* Adds page (below 2^52: an address >> TM_PAGE_SHIFT): 1 when it is new, 0 when it was there
 * (or could not be added, err set). */
static inline int tm_page_set_add(struct tm_page_set *p, uint64_t page)
{
	uint64_t i = page - p->window_base; /* past the window when page is below it, too */
	if (i < TM_PAGE_SET_WINDOW && p->window) {
		uint64_t *word = &p->window[i / 64], bit = 1ull << i % 64;
		if (*word & bit)
			return 0;
		*word |= bit;
		p->n++;
		return 1;
	}
	uint64_t group = page / TM_PAGE_SET_GROUP, bit = 1ull << page % TM_PAGE_SET_GROUP;
	if (p->slot) {
		uint64_t v = p->slot[tm_page_set_slot_of(p, group)];
		if ((v & bit) && v >> TM_PAGE_SET_GROUP == group)
			return 0;
	}
	return tm_page_set_add_slow(p, page);
}

/* The accesses of each slice by block of addresses and kind (fetch, read, write), for
 * addresses.svg: blocks of 2^shift bytes, from a 4 KiB page, at most TM_ADDR_ROWS of them. When
 * an access falls in a block past the last row, the blocks double (shift + 1) and the rows of
 * blocks that become one are added up, until it fits: the counts stay exact per block at the
 * final size, and the table stays TM_PLOT_SLICES x TM_ADDR_ROWS x 3 counters (768 KiB), however
 * much memory the trace touches. */
#define TM_ADDR_ROWS	128
#define TM_ADDR_SLOTS	256 /* hash slots of the rows' blocks: twice the rows */
#define TM_ACCESS_KINDS 3   /* enum tm_access_kind */

struct tm_addr_heat {
	uint64_t *count; /* [slice][row][kind], the slices as struct tm_slices' */
	uint64_t block[TM_ADDR_ROWS];
	uint16_t slot[TM_ADDR_SLOTS]; /* row + 1; 0: empty */
	unsigned n_rows, shift;
	unsigned slice_shift; /* the slices' shift the counts follow: tm_addr_heat_merge */
	/* the block of the last access of each kind, in row last_row[kind]: code and data
	 * accesses alternate, each in a block of its own */
	uint64_t last_block[TM_ACCESS_KINDS];
	unsigned last_row[TM_ACCESS_KINDS];
};

int tm_addr_heat_init(struct tm_addr_heat *h);
void tm_addr_heat_free(struct tm_addr_heat *h);
/* Merges the slices in pairs, as tm_slices_merge does. */
void tm_addr_heat_merge(struct tm_addr_heat *h);
/* The slow path of tm_addr_heat_row: a block not the last one's of its kind. */
unsigned tm_addr_heat_row_slow(struct tm_addr_heat *h, uint64_t addr, unsigned kind);

/* The row of addr's block, adding a row or doubling the blocks when it has none. */
static inline unsigned tm_addr_heat_row(struct tm_addr_heat *h, uint64_t addr, unsigned kind)
{
	if (addr >> h->shift == h->last_block[kind])
		return h->last_row[kind];
	return tm_addr_heat_row_slow(h, addr, kind);
}

/* Counts an access of kind (below TM_ACCESS_KINDS) at addr in slice j. */
static inline void tm_addr_heat_add(struct tm_addr_heat *h, unsigned j, uint64_t addr,
				    unsigned kind)
{
	unsigned r = tm_addr_heat_row(h, addr, kind);
	h->count[((size_t)j * TM_ADDR_ROWS + r) * TM_ACCESS_KINDS + kind]++;
}

/* What a plot is drawn from: the slices and the trace's format (NULL when no batch came). */
struct tm_plot_data {
	const struct tm_format *fmt;
	struct tm_slices slices;
	uint64_t code_pages, data_pages;
	uint64_t accesses;		 /* memory accesses the format gave */
	const struct tm_addr_heat *heat; /* for addresses.svg */
};

/* plots/mix.svg: each slice's share of the record classes, stacked. */
void tm_plot_mix(FILE *out, const struct tm_plot_data *d);
/* plots/footprint.svg: distinct pages touched, cumulative, code and data. */
void tm_plot_footprint(FILE *out, const struct tm_plot_data *d);
/* plots/addresses.svg: a heat map of the accesses, address against position, by kind. */
void tm_plot_addresses(FILE *out, const struct tm_plot_data *d);

/* addresses.svg draws the touched blocks in at most TM_ADDR_REGIONS regions, cut at the widest
 * gaps between them, each a run of rows of its own size from its lowest touched block to its
 * highest, at most TM_ADDR_DRAWN_ROWS / (number of regions) rows a region. */
#define TM_ADDR_REGIONS	   8
#define TM_ADDR_DRAWN_ROWS 128

struct tm_addr_region {
	uint64_t first, last; /* its lowest and highest touched blocks, at the table's shift */
	unsigned shift;	      /* its rows are blocks of 2^shift bytes, at least the table's */
	unsigned n_rows;      /* from first's row to last's, touched or not */
};

/* Splits n touched blocks of 2^shift bytes (distinct, ascending, n <= TM_ADDR_ROWS) into
 * regions, lowest first: cuts at the TM_ADDR_REGIONS - 1 widest gaps (of at least one
 * untouched block; of equal gaps, the lowest first), and in each region the smallest rows, from
 * 2^shift bytes doubling, that cover it in at most its share of TM_ADDR_DRAWN_ROWS. Returns
 * the number of regions (0 when n is). */
unsigned tm_addr_regions(const uint64_t *block, unsigned n, unsigned shift,
			 struct tm_addr_region region[TM_ADDR_REGIONS]);

#endif
