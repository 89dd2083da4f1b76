/* plots/addresses.svg: where in memory the trace goes, and when: a heat map of its accesses by
 * block of addresses (y) and slice of the trace (x), fetches, reads and writes in three panels
 * side by side. The touched blocks are cut into a few regions at the widest gaps between them,
 * so that code, heap and stack all show however far apart: each region is a framed group of
 * rows of its own size, summed from the table's exact blocks, and the untouched addresses
 * between regions are a break in the axis. */
#include <inttypes.h>
#include <stdlib.h>

#include "plots/heatmap.h"
#include "plots/plots.h"
#include "plots/svg.h"

#define WIDTH	 960
#define HEIGHT	 600
#define MAX_COLS 128 /* columns drawn: slices are merged in pairs beyond */

static int by_block_asc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y ? 1 : 0;
}

/* "4 KiB", "2 MiB": the size of a block of 2^shift bytes. */
static void block_size(unsigned shift, char *buf, size_t len)
{
	static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	snprintf(buf, len, "%llu %s", 1ull << (shift % 10), units[shift / 10]);
}

unsigned tm_addr_regions(const uint64_t *block, unsigned n, unsigned shift,
			 struct tm_addr_region region[TM_ADDR_REGIONS])
{
	bool cut[TM_ADDR_ROWS] = {false}; /* cut[i]: a region ends at block[i] */
	unsigned n_regions = n ? 1 : 0;
	while (n_regions && n_regions < TM_ADDR_REGIONS) {
		unsigned widest = n;
		uint64_t gap = 1; /* adjacent blocks are never cut apart */
		for (unsigned i = 0; i + 1 < n; i++)
			if (!cut[i] && block[i + 1] - block[i] > gap) {
				widest = i;
				gap = block[i + 1] - block[i];
			}
		if (widest == n)
			break;
		cut[widest] = true;
		n_regions++;
	}
	unsigned max_rows = n_regions ? TM_ADDR_DRAWN_ROWS / n_regions : 0, g = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!i || cut[i - 1])
			region[g].first = block[i];
		if (i + 1 < n && !cut[i])
			continue;
		struct tm_addr_region *r = &region[g++];
		unsigned k = 0;
		r->last = block[i];
		while (((r->last - r->first) >> k) + 1 > max_rows)
			k++;
		r->shift = shift + k;
		r->n_rows = (unsigned)(((r->last - r->first) >> k) + 1);
	}
	return n_regions;
}

/* The drawing's rows, from the top (the highest region's highest row) down. */
struct drawn {
	struct tm_addr_region region[TM_ADDR_REGIONS];
	unsigned n_regions, n_rows;
	unsigned row_of[TM_ADDR_ROWS]; /* the drawn row of each table row */
	struct tm_heat_row rows[TM_ADDR_DRAWN_ROWS];
};

/* Cuts the table's blocks into regions and labels their rows. */
static void lay_out(const struct tm_addr_heat *heat, struct drawn *dr)
{
	uint64_t order[TM_ADDR_ROWS], block[TM_ADDR_ROWS];
	unsigned n = heat ? heat->n_rows : 0;
	char size[16];
	for (unsigned r = 0; r < n; r++)
		order[r] = heat->block[r] << 8 | r; /* blocks are below 2^52: room for the row */
	qsort(order, n, sizeof(order[0]), by_block_asc);
	for (unsigned i = 0; i < n; i++)
		block[i] = order[i] >> 8;
	dr->n_regions = tm_addr_regions(block, n, heat ? heat->shift : TM_PAGE_SHIFT, dr->region);
	dr->n_rows = 0;
	for (unsigned g = dr->n_regions; g-- > 0;) {
		const struct tm_addr_region *reg = &dr->region[g];
		unsigned k = reg->shift - heat->shift, top = dr->n_rows;
		block_size(reg->shift, size, sizeof(size));
		/* rows from the region's lowest touched block up, the top one cut at its highest:
		 * no row reaches into another region */
		uint64_t region_end = ((reg->last + 1) << heat->shift) - 1;
		for (unsigned j = reg->n_rows; j-- > 0;) {
			struct tm_heat_row *row = &dr->rows[dr->n_rows++];
			uint64_t start = (reg->first + ((uint64_t)j << k)) << heat->shift;
			uint64_t end = start + (((uint64_t)1 << reg->shift) - 1);
			*row = (struct tm_heat_row){.group = g};
			/* the region's lowest row first, where its range starts */
			row->priority = j ? 1 : 2;
			snprintf(row->label, sizeof(row->label), "0x%" PRIx64, start);
			snprintf(row->tip, sizeof(row->tip), "0x%" PRIx64 " to 0x%" PRIx64 " (%s)",
				 start, end < start || end > region_end ? region_end : end, size);
		}
		snprintf(dr->rows[top].note, sizeof(dr->rows[top].note), "%s", size);
		for (unsigned i = 0; i < n; i++)
			if (block[i] >= reg->first && block[i] <= reg->last)
				dr->row_of[order[i] & 0xff] =
				    top + reg->n_rows - 1 -
				    (unsigned)((block[i] - reg->first) >> k);
	}
}

/* The region's row sizes, from the top, as data and in words. */
static void region_sizes(const struct drawn *dr, char *attrs, size_t attrs_len, char *words,
			 size_t words_len)
{
	size_t at = (size_t)snprintf(attrs, attrs_len, "data-regions=\"%u\" data-region-rows=\"",
				     dr->n_regions);
	for (unsigned g = dr->n_regions; g-- > 0 && at < attrs_len;)
		at += (size_t)snprintf(attrs + at, attrs_len - at, "%s%u",
				       g + 1 < dr->n_regions ? " " : "", dr->region[g].n_rows);
	if (at < attrs_len)
		at += (size_t)snprintf(attrs + at, attrs_len - at, "\" data-region-bytes=\"");
	unsigned lo = 64, hi = 0;
	for (unsigned g = dr->n_regions; g-- > 0 && at < attrs_len;) {
		unsigned shift = dr->region[g].shift;
		at += (size_t)snprintf(attrs + at, attrs_len - at, "%s%llu",
				       g + 1 < dr->n_regions ? " " : "", 1ull << shift);
		lo = shift < lo ? shift : lo;
		hi = shift > hi ? shift : hi;
	}
	if (at < attrs_len)
		snprintf(attrs + at, attrs_len - at, "\"");
	char a[16], b[16];
	block_size(dr->n_regions ? lo : TM_PAGE_SHIFT, a, sizeof(a));
	block_size(hi, b, sizeof(b));
	if (lo >= hi)
		snprintf(words, words_len, "rows of %s", a);
	else
		snprintf(words, words_len, "rows of %s to %s by region", a, b);
}

void tm_plot_addresses(FILE *out, const struct tm_plot_data *d)
{
	static const char *const names[TM_ACCESS_KINDS] = {"fetch", "read", "write"};
	static const char *const plural[TM_ACCESS_KINDS] = {"fetches", "reads", "writes"};
	const struct tm_addr_heat *heat = d->heat;
	const struct tm_slices *s = &d->slices;
	unsigned used = tm_slices_used(s);
	unsigned merge = used > MAX_COLS ? 2 : 1, n_cols = (used + merge - 1) / merge;
	uint64_t total[TM_ACCESS_KINDS] = {0};
	struct drawn *dr = malloc(sizeof(*dr));
	if (dr)
		lay_out(heat, dr);
	unsigned n_rows = dr ? dr->n_rows : 0;
	uint64_t *count =
	    !dr ? NULL
		: calloc((size_t)TM_ACCESS_KINDS * (n_rows ? n_rows : 1) * (n_cols ? n_cols : 1),
			 sizeof(*count));
	char title[160], desc[400], num[32], sizes[64], y_label[128], attrs[512] = "";
	char titles[TM_ACCESS_KINDS][64];
	const char *panel_titles[TM_ACCESS_KINDS];

	for (unsigned r = 0; heat && count && r < heat->n_rows; r++)
		for (unsigned j = 0; j < used; j++)
			for (unsigned kind = 0; kind < TM_ACCESS_KINDS; kind++) {
				uint64_t v =
				    heat->count[((size_t)j * TM_ADDR_ROWS + r) * TM_ACCESS_KINDS +
						kind];
				count[((size_t)kind * n_rows + dr->row_of[r]) * n_cols +
				      j / merge] += v;
				total[kind] += v;
			}
	for (unsigned kind = 0; kind < TM_ACCESS_KINDS; kind++) {
		snprintf(titles[kind], sizeof(titles[kind]), "%s: %s", plural[kind],
			 tm_svg_number((double)total[kind], num, sizeof(num)));
		panel_titles[kind] = titles[kind];
	}
	snprintf(title, sizeof(title), "Memory accesses by address (%s, %s records)",
		 d->fmt ? d->fmt->name : "no records",
		 tm_svg_number((double)s->records, num, sizeof(num)));
	if (dr)
		region_sizes(dr, attrs, sizeof(attrs), sizes, sizeof(sizes));
	snprintf(desc, sizeof(desc),
		 "The trace's memory accesses counted by block of addresses (%s; the touched "
		 "addresses in at most %u regions, a break between them) and slice of %" PRIu64
		 " records (columns), fetches, reads and writes apart, on a logarithmic colour "
		 "scale.",
		 dr ? sizes : "", TM_ADDR_REGIONS, (uint64_t)merge << s->shift);
	snprintf(y_label, sizeof(y_label), "address, %s", dr ? sizes : "");
	struct tm_heatmap h = {
	    .width = WIDTH,
	    .height = HEIGHT,
	    .title = title,
	    .desc = desc,
	    .x_label = "position in the trace (records)",
	    .y_label = y_label,
	    .unit = "accesses",
	    .edge_labels = true,
	    .n_panels = TM_ACCESS_KINDS,
	    .panel_names = names,
	    .panel_titles = panel_titles,
	    .n_rows = count ? n_rows : 0,
	    .rows = dr ? dr->rows : NULL,
	    .n_cols = n_cols,
	    .col_records = (uint64_t)merge << s->shift,
	    .records = s->records,
	    .count = count,
	    .attrs = attrs,
	    .empty = !s->records ? "the trace has no records"
		     : !count	 ? "no memory to draw the accesses"
				 : "the trace's records give no addresses",
	};
	tm_heatmap_draw(out, &h);
	free(count);
	free(dr);
}
