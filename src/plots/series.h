/* Counts of events over an axis (time, or position in the trace) for a few series (processors,
 * kinds of event), in a bounded memory whatever the trace's length, and the plot that draws
 * them as one lane per series (doc/plots.md: the formats' own plots). */
#ifndef TRACEMOUNT_PLOTS_SERIES_H
#define TRACEMOUNT_PLOTS_SERIES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The axis is cut into at most TM_SERIES_SLICES slices of 2^shift units from the origin (the
 * first value seen); when a value falls past the last, slices merge in pairs, as the plots'
 * slices of records do (plots.h). TM_SERIES_MAX series are told apart, by the order in which
 * their ids first come; events of any further id are summed in one more column, "others". */
#define TM_SERIES_SLICES 256
#define TM_SERIES_MAX	 8
#define TM_SERIES_OTHERS TM_SERIES_MAX /* the column of the ids beyond the first ones */

struct tm_series {
	uint64_t (*v)[TM_SERIES_MAX + 1]; /* TM_SERIES_SLICES rows */
	uint64_t origin, last;		  /* the first value seen, and the highest, less origin */
	unsigned shift;
	bool started; /* a value was seen: origin is set */
	unsigned n_ids;
	uint64_t id[TM_SERIES_MAX]; /* the ids of columns 0 .. n_ids - 1 */
	unsigned recent;	    /* the column last found by tm_series_column */
};

int tm_series_init(struct tm_series *s);
void tm_series_free(struct tm_series *s);

/* Makes room for x (values below the origin count at the origin): sets the origin at the
 * first call, merges slices while x falls past the last. */
void tm_series_reach(struct tm_series *s, uint64_t x);

/* The column of id: its own among the first TM_SERIES_MAX ids, else TM_SERIES_OTHERS. */
unsigned tm_series_column(struct tm_series *s, uint64_t id);

/* Counts n events of column col at x. */
static inline void tm_series_add(struct tm_series *s, uint64_t x, unsigned col, uint64_t n)
{
	tm_series_reach(s, x);
	uint64_t rel = x > s->origin ? x - s->origin : 0;
	s->v[rel >> s->shift][col] += n;
}

/* The slices used: those up to the highest value seen. */
unsigned tm_series_used(const struct tm_series *s);

/* What the plot says: texts (escaped when written), and the name of each column. */
struct tm_series_style {
	const char *title, *desc;
	const char *unit;    /* the axis's unit ("clk", "records") */
	const char *axis;    /* what the x axis is ("time", "position in the trace") */
	const char *counted; /* what is counted, plural ("instructions", "sync events") */
	const char *empty;   /* said in the plot when no event was counted */
	const char *note;    /* unless NULL, the plot is this one-line note (tm_svg_note) */
	const char *names[TM_SERIES_MAX + 1]; /* column k's name; NULL: not drawn */
};

/* Puts the columns of the ids in increasing order of id (a legend of processors 0, 1, 2),
 * once counting is over. */
void tm_series_sort_ids(struct tm_series *s);

/* Draws the series as a plot, or as a one-line note (tm_svg_note) when it has nothing to show:
 * no event (st->empty), st->note, or a single lane with the same count in every slice but the
 * last (its steady rate: a lane of it would be a solid block). Else x is the axis from the
 * origin, with a lane for each named column with events, one above the other in column
 * order, where each slice's events stand as a filled step, every lane on the same scale (a gap is a
 * stall, an empty lane an idle series). Each lane is a <path> with data-series (its name),
 * data-total and data-counts (the events of each slice), inside a <g> with data-origin,
 * data-slice-width and data-slices. */
void tm_series_plot(FILE *out, const struct tm_series *s, const struct tm_series_style *st);

#endif
