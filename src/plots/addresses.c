/* plots/addresses.svg: where in memory the trace goes, and when: a heat map of its accesses by
 * block of addresses (y) and slice of the trace (x), fetches, reads and writes in three panels
 * side by side. Only the blocks touched are rows, so that code, heap and stack all show however
 * far apart: a run of adjacent blocks is one group, and the untouched addresses between groups
 * are a break in the axis, the addresses on each side labelled. */
#include <inttypes.h>
#include <stdlib.h>

#include "plots/heatmap.h"
#include "plots/plots.h"
#include "plots/svg.h"

#define WIDTH	 960
#define HEIGHT	 600
#define MAX_COLS 128 /* columns drawn: slices are merged in pairs beyond */

static int by_block_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* "4 KiB", "2 MiB": the size of a block of 2^shift bytes. */
static void block_size(unsigned shift, char *buf, size_t len)
{
	static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	snprintf(buf, len, "%llu %s", 1ull << (shift % 10), units[shift / 10]);
}

void tm_plot_addresses(FILE *out, const struct tm_plot_data *d)
{
	static const char *const names[TM_ACCESS_KINDS] = {"fetch", "read", "write"};
	static const char *const plural[TM_ACCESS_KINDS] = {"fetches", "reads", "writes"};
	const struct tm_addr_heat *heat = d->heat;
	const struct tm_slices *s = &d->slices;
	unsigned n_rows = heat ? heat->n_rows : 0, used = tm_slices_used(s);
	unsigned merge = used > MAX_COLS ? 2 : 1, n_cols = (used + merge - 1) / merge;
	unsigned shift = heat ? heat->shift : TM_PAGE_SHIFT;
	uint64_t order[TM_ADDR_ROWS], total[TM_ACCESS_KINDS] = {0};
	unsigned row_of_order[TM_ADDR_ROWS];
	struct tm_heat_row rows[TM_ADDR_ROWS];
	uint64_t *count =
	    calloc((size_t)TM_ACCESS_KINDS * (n_rows ? n_rows : 1) * (n_cols ? n_cols : 1),
		   sizeof(*count));
	char title[160], desc[320], num[32], size[32], y_label[128], attrs[64];
	char titles[TM_ACCESS_KINDS][64];
	const char *panel_titles[TM_ACCESS_KINDS];

	/* rows from the highest block down, as addresses grow up an axis */
	for (unsigned r = 0; r < n_rows; r++)
		order[r] = heat->block[r] << 8 | r; /* blocks are below 2^52: room for the row */
	qsort(order, n_rows, sizeof(order[0]), by_block_desc);
	for (unsigned k = 0; k < n_rows; k++)
		row_of_order[k] = (unsigned)(order[k] & 0xff);
	block_size(shift, size, sizeof(size));
	unsigned group = 0;
	for (unsigned k = 0; k < n_rows; k++) {
		uint64_t block = heat->block[row_of_order[k]];
		bool first = k + 1 == n_rows || heat->block[row_of_order[k + 1]] + 1 != block;
		if (k && heat->block[row_of_order[k - 1]] != block + 1)
			group++;
		uint64_t start = block << shift, end = start + ((1ull << shift) - 1);
		rows[k].group = group;
		/* the lowest block of a group first, where its range starts */
		rows[k].priority = first ? 2 : 1;
		snprintf(rows[k].label, sizeof(rows[k].label), "0x%" PRIx64, start);
		snprintf(rows[k].tip, sizeof(rows[k].tip), "0x%" PRIx64 " to 0x%" PRIx64, start,
			 end);
		if (!count)
			continue;
		for (unsigned j = 0; j < used; j++)
			for (unsigned kind = 0; kind < TM_ACCESS_KINDS; kind++) {
				uint64_t v =
				    heat->count[((size_t)j * TM_ADDR_ROWS + row_of_order[k]) *
						    TM_ACCESS_KINDS +
						kind];
				count[((size_t)kind * n_rows + k) * n_cols + j / merge] += v;
				total[kind] += v;
			}
	}
	for (unsigned kind = 0; kind < TM_ACCESS_KINDS; kind++) {
		snprintf(titles[kind], sizeof(titles[kind]), "%s: %s", plural[kind],
			 tm_svg_number((double)total[kind], num, sizeof(num)));
		panel_titles[kind] = titles[kind];
	}
	snprintf(title, sizeof(title), "Memory accesses by address (%s, %s records)",
		 d->fmt ? d->fmt->name : "no records",
		 tm_svg_number((double)s->records, num, sizeof(num)));
	snprintf(
	    desc, sizeof(desc),
	    "The trace's memory accesses counted by block of %s of addresses (rows, only those "
	    "touched; a break where addresses are skipped) and slice of %" PRIu64
	    " records (columns), fetches, reads and writes apart, on a logarithmic colour "
	    "scale.",
	    size, (uint64_t)merge << s->shift);
	snprintf(attrs, sizeof(attrs), "data-row-bytes=\"%llu\"", 1ull << shift);
	snprintf(y_label, sizeof(y_label), "address (rows of %s, untouched ranges cut out)", size);
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
	    .rows = rows,
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
}
