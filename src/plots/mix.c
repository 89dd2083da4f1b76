/* plots/mix.svg: the share of each record class in each slice of the trace, stacked, so that
 * phases (a burst of writes, a stretch of I/O) show as bands that swell and shrink. Each
 * class's band carries its record count (data-records) and a tooltip. */
#include <inttypes.h>
#include <stdio.h>

#include "plots/plots.h"
#include "plots/svg.h"

#define WIDTH	    960
#define PLOT_LEFT   80
#define PLOT_TOP    50
#define PLOT_WIDTH  600
#define LEGEND_LEFT 710
#define LEGEND_W    (WIDTH - LEGEND_LEFT - 10)

/* The area under class k's top edge (the share of classes 0 to k in each slice), as steps
 * down to the axis: drawn from the last class to the first, each area leaves visible the band
 * between its edge and the one below. */
static void area(FILE *out, const struct tm_plot_data *d, const struct tm_svg_area *a, unsigned k)
{
	const struct tm_slices *s = &d->slices;
	unsigned n = tm_slices_used(s);
	double last = 0;
	fprintf(out, " d=\"M%.1f %.1f", tm_svg_x(a, 0), tm_svg_y(a, 0));
	for (unsigned j = 0; j < n; j++) {
		uint64_t total = tm_slice_end(s, j) - tm_slice_start(s, j), below = 0;
		for (unsigned c = 0; c <= k; c++)
			below += s->v[j][c];
		double y = tm_svg_y(a, 100.0 * (double)below / (double)total), next = -1;
		if (j + 1 < n) { /* a run of slices at the same height is one step */
			uint64_t t = tm_slice_end(s, j + 1) - tm_slice_start(s, j + 1), b = 0;
			for (unsigned c = 0; c <= k; c++)
				b += s->v[j + 1][c];
			next = tm_svg_y(a, 100.0 * (double)b / (double)t);
		}
		if (j == 0 || y != last)
			fprintf(out, "V%.1f", y);
		if (y != next)
			fprintf(out, "H%.1f", tm_svg_x(a, (double)tm_slice_end(s, j)));
		last = y;
	}
	fprintf(out, "V%.1fZ\"", tm_svg_y(a, 0));
}

void tm_plot_mix(FILE *out, const struct tm_plot_data *d)
{
	const struct tm_slices *s = &d->slices;
	unsigned nc = d->fmt ? d->fmt->n_classes : 0, shown = 0;
	uint64_t count[TM_MAX_CLASSES] = {0};
	for (unsigned j = 0; j < tm_slices_used(s); j++)
		for (unsigned c = 0; c < nc; c++)
			count[c] += s->v[j][c];
	for (unsigned c = 0; c < nc; c++)
		shown += count[c] != 0;
	unsigned height = 540;
	if (100 + 20 * shown > height)
		height = 100 + 20 * shown;
	char title[160], desc[256], num[32];
	snprintf(title, sizeof(title), "Record classes over the trace (%s, %s records)",
		 d->fmt ? d->fmt->name : "no records",
		 tm_svg_number((double)s->records, num, sizeof(num)));
	snprintf(desc, sizeof(desc),
		 "The share of each record class in each of %u slices of %" PRIu64
		 " records, stacked.",
		 tm_slices_used(s), (uint64_t)1 << s->shift);
	if (!s->records) {
		tm_svg_note(out, WIDTH, title, "the trace has no records");
		return;
	}
	tm_svg_begin(out, WIDTH, height, title, desc);
	struct tm_svg_area a = {
	    .left = PLOT_LEFT,
	    .top = PLOT_TOP,
	    .width = PLOT_WIDTH,
	    .height = height - 120.0,
	    .x_max = s->records ? (double)s->records : 1,
	    .y_max = 100,
	    .x_label = "position in the trace (records)",
	    .y_label = "share of the slice's records",
	    .y_suffix = "%",
	};
	struct tm_svg_legend_entry legend[TM_MAX_CLASSES];
	char text[TM_MAX_CLASSES][96];
	unsigned n = 0;
	fputs("<g class=\"bands\" stroke=\"none\">\n", out);
	for (unsigned c = nc; c-- > 0;) {
		if (!count[c])
			continue;
		fprintf(out, "<path data-class=\"");
		tm_svg_escape(out, d->fmt->classes[c]);
		fprintf(out, "\" data-records=\"%" PRIu64 "\" fill=\"%s\"", count[c],
			tm_svg_colour(c));
		area(out, d, &a, c);
		fputs("><title>", out);
		tm_svg_escape(out, d->fmt->classes[c]);
		fprintf(out, ": %" PRIu64 " records (%.1f%%)</title></path>\n", count[c],
			100.0 * (double)count[c] / (double)s->records);
	}
	fputs("</g>\n", out);
	for (unsigned c = 0; c < nc; c++) {
		if (!count[c])
			continue;
		snprintf(text[n], sizeof(text[n]), "%s: %s (%.1f%%)", d->fmt->classes[c],
			 tm_svg_number((double)count[c], num, sizeof(num)),
			 100.0 * (double)count[c] / (double)s->records);
		legend[n].colour = tm_svg_colour(c);
		legend[n].text = text[n];
		n++;
	}
	tm_svg_axes(out, &a);
	tm_svg_legend(out, LEGEND_LEFT, PLOT_TOP, LEGEND_W, legend, n);
	tm_svg_end(out);
}
