/* plots/processors.svg of QEMU4V and Tarmac traces (doc/plots.md): the instructions of each
 * processor over the trace's time, so that a stall or an idle processor shows as a dip or a
 * flat line. Counted by tarmac_stats_update (tarmac_plot_count), drawn when the pass ends. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tarmac.h"
#include "plots/series.h"
#include "plots/svg.h"

const char *const tarmac_table_views[TARMAC_N_TABLE_VIEWS] = {"plots/processors.svg"};

void tarmac_plot_count(struct tarmac_stats *s, const struct tarmac_record *r, uint64_t record)
{
	bool timed = (r->head.flags & F_TIME) && r->time >= 0;
	if (!s->axis_set) { /* the first instruction decides: time, or records without it */
		s->axis_set = true;
		s->by_time = timed;
	}
	if (s->by_time && timed)
		s->axis_time = (uint64_t)r->time;
	tm_series_add(&s->processors, s->by_time ? s->axis_time : record,
		      tm_series_column(&s->processors, r->cpu), 1);
}

/* The title counts the instructions drawn and names the condition-failed ones among them,
 * which stats.json counts apart from the executed ones (doc/views.md). */
static void set_title(const struct tarmac_stats *s, const char *format, uint64_t instructions,
		      char *title, size_t size)
{
	uint64_t failed = 0;
	for (unsigned cpu = 0; s->cpus && cpu <= TARMAC_MAX_CPUS; cpu++)
		failed += s->cpus[cpu][TC_SKIPPED];
	char all[32], skipped[32];
	tm_svg_number((double)instructions, all, sizeof(all));
	tm_svg_number((double)failed, skipped, sizeof(skipped));
	if (failed) /* short enough for the picture's width */
		snprintf(title, size,
			 "Instructions per processor over %s (%s, %s with %s condition-failed)",
			 s->by_time ? "time" : "the trace", format, all, skipped);
	else
		snprintf(title, size, "Instructions per processor over %s (%s, %s instructions)",
			 s->by_time ? "time" : "the trace", format, all);
}

static int tables_finish(struct tarmac_stats *s, FILE *out, const char *format)
{
	struct tm_series *p = &s->processors;
	char names[TM_SERIES_MAX][32], unit[sizeof(s->unit)], title[160];
	uint64_t instructions = 0;
	for (unsigned j = 0; j < tm_series_used(p); j++)
		for (unsigned c = 0; c <= TM_SERIES_MAX; c++)
			instructions += p->v[j][c];
	struct tm_series_style st = {
	    .desc = "The instructions (executed and condition-failed) of each processor in each "
		    "slice of the trace's time: a dip is a stall, a flat line an idle processor.",
	    .axis = "time",
	    .unit = unit,
	    .counted = "instructions",
	    .empty = "the trace has no instructions",
	};
	memcpy(unit, s->unit, s->unit_len);
	unit[s->unit_len] = '\0';
	if (!s->by_time) {
		st.axis = "position in the trace";
		st.unit = "records";
		st.desc =
		    "The instructions (executed and condition-failed) of each processor in "
		    "each slice of the trace's records: its instructions have no time stamps.";
	} else if (!s->unit_len) {
		st.unit = "time units";
	}
	set_title(s, format, instructions, title, sizeof(title));
	st.title = title;
	tm_series_sort_ids(p);
	for (unsigned k = 0; k < p->n_ids; k++) {
		snprintf(names[k], sizeof(names[k]), "cpu %" PRIu64, p->id[k]);
		st.names[k] = names[k];
	}
	st.names[TM_SERIES_OTHERS] = "other cpus";
	/* one processor over records: its lane would show only where the lines are not
	 * instructions, nothing of the processor's time */
	char note[160];
	if (!s->by_time && p->n_ids == 1 && instructions) {
		snprintf(note, sizeof(note), "only %s, and no time stamps to show its rate",
			 names[0]);
		st.note = note;
	}
	tm_series_plot(out, p, &st);
	return ferror(out) ? -EIO : 0;
}

int tarmac_tables_finish(void *stats, FILE *const *out)
{
	return tables_finish(stats, out[0], "tarmac");
}

int qemu4v_tables_finish(void *stats, FILE *const *out)
{
	return tables_finish(stats, out[0], "qemu4v");
}
