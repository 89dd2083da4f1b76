/* Horizontal bars of the hottest things of a trace (doc/plots.md, plots/hot.svg): functions
 * from calls/ (src/calls/hot.c), basic blocks of a spixcounts file (spixcounts.c). One
 * renderer, so that both pictures read alike. */
#ifndef TRACEMOUNT_PLOTS_BARS_H
#define TRACEMOUNT_PLOTS_BARS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The bars drawn by default: enough to find the hot spots, few enough to read. */
#define TM_BARS_TOP 20

/* One thing ranked. */
struct tm_bar {
	const char *name;   /* drawn fitted to its box and escaped; whole in data-name */
	uint64_t value;	    /* what the bars rank by (a function's self instructions) */
	uint64_t total;	    /* drawn lighter behind (inclusive instructions); with has_total */
	uint64_t key;	    /* unique: the last tie-break (first appearance, block number) */
	uint64_t extra;	    /* a count shown in the tooltip and data-extra (calls, executions) */
	const char *detail; /* a line more for the tooltip, or NULL */
};

/* What the chart says around its bars. */
struct tm_bars_chart {
	const char *title;	/* escaped */
	const char *things;	/* what the bars are, plural ("functions") */
	const char *desc;	/* the document's desc, for a screen reader */
	const char *x_label;	/* the x axis, with its units */
	const char *y_label;	/* above the names: what a bar is, and the order */
	const char *value_name; /* the legend's text of the value bars */
	const char *total_name; /* of the total bars, with has_total */
	const char *extra_name; /* what extra counts, in the tooltip ("calls") */
	const char *empty;	/* drawn instead of bars when none has a value */
	uint64_t whole;		/* the shares' denominator (the trace's instructions); 0: none */
	bool has_total;
	/* Hot things (of a value above 0) the caller left out of bar[], all colder than its
	 * bars, and their values' sum: counted in the line under the title. */
	uint64_t others, others_value;
	unsigned top; /* bars at most; 0: TM_BARS_TOP */
};

/* Sorts bar[0 .. n) hottest first: by value, then total, both descending, then key. */
void tm_bars_rank(struct tm_bar *bar, size_t n);

/* Draws the first chart->top bars of bar[0 .. n) by tm_bars_rank (which it calls; bars of
 * value 0 are left out) as an SVG document: one row per bar, its name at the left, the value's
 * share and count at the right, an x axis of the value's units, a legend. Each bar is a <g>
 * with data-rank, data-name, data-value, data-total (with has_total) and data-extra, and a
 * tooltip. Returns 0, or -EIO when a write failed. */
int tm_plot_bars(FILE *out, const struct tm_bars_chart *chart, struct tm_bar *bar, size_t n);

#endif
