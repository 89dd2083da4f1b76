/* Counts of events over an axis for a few series, and their plot (series.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "plots/series.h"
#include "plots/svg.h"

#define WIDTH	    960
#define HEIGHT	    540
#define PLOT_LEFT   100
#define PLOT_TOP    50
#define PLOT_WIDTH  580
#define LEGEND_LEFT 710
#define LEGEND_W    (WIDTH - LEGEND_LEFT - 10)
#define COLUMNS	    (TM_SERIES_MAX + 1)

int tm_series_init(struct tm_series *s)
{
	memset(s, 0, sizeof(*s));
	s->v = calloc(TM_SERIES_SLICES, sizeof(*s->v));
	return s->v ? 0 : -ENOMEM;
}

void tm_series_free(struct tm_series *s)
{
	free(s->v);
	s->v = NULL;
}

static void merge(struct tm_series *s)
{
	for (unsigned j = 0; j < TM_SERIES_SLICES / 2; j++)
		for (unsigned c = 0; c < COLUMNS; c++)
			s->v[j][c] = s->v[2 * j][c] + s->v[2 * j + 1][c];
	memset(s->v + TM_SERIES_SLICES / 2, 0, TM_SERIES_SLICES / 2 * sizeof(*s->v));
	s->shift++;
}

void tm_series_reach(struct tm_series *s, uint64_t x)
{
	if (!s->started) {
		s->origin = x;
		s->started = true;
	}
	uint64_t rel = x > s->origin ? x - s->origin : 0;
	if (rel <= s->last)
		return;
	s->last = rel;
	while (rel >> s->shift >= TM_SERIES_SLICES)
		merge(s);
}

unsigned tm_series_column(struct tm_series *s, uint64_t id)
{
	if (s->recent < s->n_ids && s->id[s->recent] == id)
		return s->recent;
	for (unsigned k = 0; k < s->n_ids; k++)
		if (s->id[k] == id)
			return s->recent = k;
	if (s->n_ids == TM_SERIES_MAX)
		return TM_SERIES_OTHERS;
	s->id[s->n_ids] = id;
	return s->recent = s->n_ids++;
}

void tm_series_sort_ids(struct tm_series *s)
{
	for (unsigned k = 1; k < s->n_ids; k++) /* insertion sort: a few ids */
		for (unsigned m = k; m > 0 && s->id[m - 1] > s->id[m]; m--) {
			uint64_t id = s->id[m];
			s->id[m] = s->id[m - 1];
			s->id[m - 1] = id;
			for (unsigned j = 0; j < TM_SERIES_SLICES; j++) {
				uint64_t v = s->v[j][m];
				s->v[j][m] = s->v[j][m - 1];
				s->v[j][m - 1] = v;
			}
		}
	s->recent = 0;
}

unsigned tm_series_used(const struct tm_series *s)
{
	return s->started ? (unsigned)(s->last >> s->shift) + 1 : 0;
}

/* Column col in its lane, from lane_top down lane_h pixels: each slice's count as a filled
 * step from the lane's floor, all lanes on one scale (most). The only lane (alone) is the
 * whole area, a line on the area's y axis: filled, its ups and downs would be a solid block. */
static void lane(FILE *out, const struct tm_series *s, const struct tm_svg_area *a, unsigned col,
		 double lane_top, double lane_h, uint64_t most, const char *name, uint64_t total,
		 const char *counted, const char *colour, bool alone)
{
	unsigned n = tm_series_used(s);
	double w = (double)((uint64_t)1 << s->shift), floor = lane_top + lane_h;
	double scale = (lane_h - (alone ? 0 : 4)) / (double)most; /* 4 pixels between lanes */
	fputs("<path data-series=\"", out);
	tm_svg_escape(out, name);
	fprintf(out, "\" data-total=\"%" PRIu64 "\" data-counts=\"", total);
	for (unsigned j = 0; j < n; j++)
		fprintf(out, "%s%" PRIu64, j ? " " : "", s->v[j][col]);
	fprintf(out, "\" fill=\"%s\" stroke=\"%s\" stroke-width=\"%s\" d=\"M%.1f %.1f",
		alone ? "none" : colour, colour, alone ? "1.5" : "0.5", tm_svg_x(a, 0),
		alone ? floor - scale * (double)s->v[0][col] : floor);
	double last = floor;
	for (unsigned j = 0; j < n; j++) {
		double y = floor - scale * (double)s->v[j][col];
		if ((j == 0 && !alone) || (j && y != last))
			fprintf(out, "V%.1f", y);
		fprintf(out, "H%.1f", tm_svg_x(a, (j + 1) * w));
		last = y;
	}
	if (alone)
		fputs("\"><title>", out);
	else
		fprintf(out, "V%.1fZ\"><title>", floor);
	tm_svg_escape(out, name);
	fprintf(out, ": %" PRIu64 " ", total);
	tm_svg_escape(out, counted);
	fputs("</title></path>\n", out);
	if (alone)
		return;
	tm_svg_text(out, a->left - 8, lane_top + lane_h / 2 + 4, 12, "end", a->left - 12, name);
	fprintf(out,
		"\n<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999999\"/>\n",
		a->left, floor, a->left + a->width, floor);
}

/* Whether column col counts the same in every slice but the last (which the trace may end
 * in the middle of): then one lane would be a solid block, and note says its rate instead. */
static bool steady(const struct tm_series *s, unsigned col, char *note, size_t len,
		   const struct tm_series_style *st)
{
	unsigned n = tm_series_used(s);
	for (unsigned j = 0; j + 1 < n; j++)
		if (s->v[j][col] != s->v[0][col])
			return false;
	snprintf(note, len, "only %s, at a steady rate of %.3g %s per %s", st->names[col],
		 (double)s->v[0][col] / (double)(1ull << s->shift), st->counted, st->unit);
	return true;
}

void tm_series_plot(FILE *out, const struct tm_series *s, const struct tm_series_style *st)
{
	unsigned n = tm_series_used(s);
	uint64_t total[COLUMNS] = {0}, most = 0, width = (uint64_t)1 << s->shift;
	for (unsigned j = 0; j < n; j++)
		for (unsigned c = 0; c < COLUMNS; c++) {
			total[c] += s->v[j][c];
			if (st->names[c] && s->v[j][c] > most)
				most = s->v[j][c];
		}
	unsigned lanes = 0, only = 0;
	for (unsigned c = 0; c < COLUMNS; c++)
		if (st->names[c] && total[c]) {
			lanes++;
			only = c;
		}
	char note[256];
	if (!lanes || st->note || (lanes == 1 && steady(s, only, note, sizeof(note), st))) {
		tm_svg_note(out, WIDTH, st->title, !lanes ? st->empty : st->note ? st->note : note);
		return;
	}
	char x_label[160], y_label[200], num[32], text[COLUMNS][96];
	if (s->origin)
		snprintf(x_label, sizeof(x_label), "%s since %" PRIu64 " %s (%s)", st->axis,
			 s->origin, st->unit, st->unit);
	else
		snprintf(x_label, sizeof(x_label), "%s (%s)", st->axis, st->unit);
	if (lanes == 1)
		snprintf(y_label, sizeof(y_label), "%s per %" PRIu64 " %s", st->counted, width,
			 st->unit);
	else
		snprintf(y_label, sizeof(y_label),
			 "%s per %" PRIu64 " %s, 0 to %" PRIu64 " in each lane", st->counted, width,
			 st->unit, most);
	tm_svg_begin(out, WIDTH, HEIGHT, st->title, st->desc);
	struct tm_svg_area a = {
	    .left = PLOT_LEFT,
	    .top = PLOT_TOP,
	    .width = PLOT_WIDTH,
	    .height = HEIGHT - 120.0,
	    .x_max = n ? (double)n * (double)width : 1,
	    .y_max = lanes == 1 ? (double)most : 1,
	    .x_label = x_label,
	    .y_label = y_label,
	};
	if (lanes == 1) /* the rate's own scale */
		tm_svg_axes(out, &a);
	else
		tm_svg_x_axis(out, &a);
	fprintf(out,
		"<g class=\"series\" data-origin=\"%" PRIu64 "\" data-slice-width=\"%" PRIu64
		"\" data-slices=\"%u\">\n",
		s->origin, width, n);
	struct tm_svg_legend_entry legend[COLUMNS];
	unsigned shown = 0;
	for (unsigned c = 0; c < COLUMNS; c++) {
		if (!st->names[c] || !total[c])
			continue;
		/* Tableau's dark colours, grey (7) kept for the others */
		const char *colour = tm_svg_colour(c == TM_SERIES_OTHERS ? 7 : c < 7 ? c : c + 1);
		double lane_h = a.height / lanes;
		lane(out, s, &a, c, a.top + shown * lane_h, lane_h, most, st->names[c], total[c],
		     st->counted, colour, lanes == 1);
		snprintf(text[shown], sizeof(text[shown]), "%s: %s", st->names[c],
			 tm_svg_number((double)total[c], num, sizeof(num)));
		legend[shown].colour = colour;
		legend[shown].text = text[shown];
		shown++;
	}
	fputs("</g>\n", out);
	if (lanes > 1) {
		fprintf(out, "<g transform=\"translate(%.1f %.1f) rotate(-90)\">", 18.0,
			a.top + a.height / 2);
		tm_svg_text(out, 0, 0, 13, "middle", a.height, y_label);
		fputs("</g>\n", out);
	}
	tm_svg_legend(out, LEGEND_LEFT, PLOT_TOP, LEGEND_W, legend, shown);
	tm_svg_end(out);
}
