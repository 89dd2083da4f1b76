/* plots/sync.svg of TT6 and TT6E traces (doc/plots.md): the thread's Amber synchronisation
 * records over the trace, one line per kind (signal, broadcast, wait, try_wait), so that where
 * the thread waits and signals shows at a glance. Amber writes one trace per thread: the
 * picture is the thread's. The counts live beside the statistics, in struct tt6_trace_stats,
 * which FULL (sharing struct tt6_stats) does not carry. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "tt6.h"
#include "plots/series.h"
#include "plots/svg.h"

const char *const tt6_table_views[TT6_N_TABLE_VIEWS] = {"plots/sync.svg"};

int tt6_trace_stats_init(void *p)
{
	struct tt6_trace_stats *s = p;
	int err = tt6_stats_init(&s->s);
	return err ? err : tm_series_init(&s->sync);
}

void tt6_trace_stats_update(void *p, const struct tm_chunk *c)
{
	struct tt6_trace_stats *s = p;
	tt6_stats_update(&s->s, c);
	if (!c->n_records)
		return;
	/* x is the position in the trace, as in plots/mix.svg: from record 0 to the last */
	tm_series_reach(&s->sync, c->first_record);
	tm_series_reach(&s->sync, c->first_record + c->n_records - 1);
	for (size_t i = 0; i < c->n_records; i++) {
		const struct tt6_record *r = tt6_rec(c, i);
		if (r->head.cls == TT6_SYNC)
			tm_series_add(&s->sync, c->first_record + i,
				      (unsigned)sync_kind(esc_code(r->word)), 1);
	}
}

void tt6_trace_stats_free(void *p)
{
	struct tt6_trace_stats *s = p;
	tt6_stats_free(&s->s);
	tm_series_free(&s->sync);
}

static int tables_finish(struct tt6_trace_stats *s, FILE *out, const char *format)
{
	uint64_t events = 0;
	for (unsigned k = 0; k < TT6_N_SYNC_KINDS; k++)
		events += s->s.sync[k];
	char title[160], num[32];
	snprintf(title, sizeof(title), "Sync events of the thread over the trace (%s, %s events)",
		 format, tm_svg_number((double)events, num, sizeof(num)));
	struct tm_series_style st = {
	    .title = title,
	    .desc = "The thread's Amber synchronisation records (signal, broadcast, wait, "
		    "try_wait) in each slice of the trace's records; Amber writes one trace per "
		    "thread.",
	    .axis = "position in the trace",
	    .unit = "records",
	    .counted = "sync events",
	    .empty = "no sync records: Amber writes them when tracing with -p",
	};
	for (unsigned k = 0; k < TT6_N_SYNC_KINDS; k++)
		st.names[k] = tt6_sync_kinds[k];
	tm_series_plot(out, &s->sync, &st);
	return ferror(out) ? -EIO : 0;
}

int tt6_tables_finish(void *stats, FILE *const *out)
{
	return tables_finish(stats, out[0], "tt6");
}

int tt6e_tables_finish(void *stats, FILE *const *out)
{
	return tables_finish(stats, out[0], "tt6e");
}
