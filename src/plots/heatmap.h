/* A heat map for plots/ (doc/plots.md): counts by row (y) and column (x: slices of the trace,
 * as struct tm_slices cuts it), in one or more panels side by side that share the rows, on a
 * logarithmic colour scale with its legend. Rows come in groups, drawn apart with a break
 * between them (ranges of addresses not touched, register families). addresses.svg and FULL's
 * registers.svg draw with it. */
#ifndef TRACEMOUNT_PLOTS_HEATMAP_H
#define TRACEMOUNT_PLOTS_HEATMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TM_HEAT_LEVELS 8 /* colours of the scale */

struct tm_heat_row {
	char label[24]; /* drawn left of the row where it fits among the others */
	char tip[96];	/* the row's tooltip, before its counts */
	/* which labels are drawn first where they would overlap: higher first (a group's
	 * first row), then from the top; 0: no label */
	uint8_t priority;
	unsigned group; /* rows of a group follow each other; a new value starts a group */
	/* on a group's first row: a word about the group (its rows' size), drawn in a column
	 * left of the labels, level with the group's middle, where it fits; "" for none */
	char note[16];
};

struct tm_heatmap {
	unsigned width, height; /* pixels */
	const char *title, *desc;
	const char *x_label, *y_label;
	const char *unit; /* what is counted, plural ("accesses"): legend and tooltips */
	/* a row's label marks its lower edge, where its range starts on an axis growing
	 * upwards (addresses); else its middle (names) */
	bool edge_labels;
	unsigned n_panels;
	const char *const *panel_names;	 /* data-panel of each panel */
	const char *const *panel_titles; /* drawn above each panel */
	unsigned n_rows;		 /* rows, drawn from the top down */
	const struct tm_heat_row *rows;
	unsigned n_cols;      /* columns, each col_records records of the trace */
	uint64_t col_records; /* the last column has what is left of records */
	uint64_t records;
	const uint64_t *count; /* [panel][row][col] */
	const char *empty;     /* said in the middle when there is no count at all */
	const char *attrs;     /* more attributes of the heatmap group, as written, or NULL */
};

/* The lowest count of each colour level for counts from 1 to max (> 0): level l holds the
 * counts from low[l] to low[l + 1] - 1, the last up to max. Returns the number of levels,
 * at most TM_HEAT_LEVELS (fewer when max is smaller). */
unsigned tm_heat_levels(uint64_t max, uint64_t low[TM_HEAT_LEVELS]);

/* The colour of level l. */
const char *tm_heat_colour(unsigned l);

/* Draws the heat map as a whole SVG document. Each panel is a group with data-panel and
 * data-total (its counts' sum); each level's cells one path with data-level, data-from,
 * data-to and data-cells; each row a transparent band with data-row (its label), data-counts
 * (its sums per panel) and a tooltip. */
void tm_heatmap_draw(FILE *out, const struct tm_heatmap *h);

#endif
