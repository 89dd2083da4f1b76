/* plots/footprint.svg: the distinct 4 KiB pages the trace has touched up to each point, code
 * (fetched from) and data (read or written) apart: the working set as it grows, where a
 * climb is a new phase and a flat line a loop. Each line carries its final count
 * (data-pages). */
#include <inttypes.h>
#include <stdio.h>

#include "plots/plots.h"
#include "plots/svg.h"

#define WIDTH	    960
#define HEIGHT	    540
#define PLOT_LEFT   80
#define PLOT_TOP    50
#define PLOT_WIDTH  600
#define LEGEND_LEFT 710
#define LEGEND_W    (WIDTH - LEGEND_LEFT - 10)

/* Column col's running total at each slice's end, as a polyline from the origin. */
static void line(FILE *out, const struct tm_plot_data *d, const struct tm_svg_area *a, unsigned col,
		 const char *series, uint64_t pages, const char *colour)
{
	const struct tm_slices *s = &d->slices;
	uint64_t sum = 0;
	fprintf(out,
		"<polyline data-series=\"%s\" data-pages=\"%" PRIu64 "\" fill=\"none\" "
		"stroke=\"%s\" stroke-width=\"2\" points=\"%.1f,%.1f",
		series, pages, colour, tm_svg_x(a, 0), tm_svg_y(a, 0));
	for (unsigned j = 0; j < tm_slices_used(s); j++) {
		sum += s->v[j][col];
		fprintf(out, " %.1f,%.1f", tm_svg_x(a, (double)tm_slice_end(s, j)),
			tm_svg_y(a, (double)sum));
	}
	fprintf(out, "\"><title>%s: %" PRIu64 " distinct 4 KiB pages</title></polyline>\n", series,
		pages);
}

void tm_plot_footprint(FILE *out, const struct tm_plot_data *d)
{
	const struct tm_slices *s = &d->slices;
	char title[160], num[32], code[96], data[96];
	snprintf(title, sizeof(title), "Distinct 4 KiB pages touched (%s, %s records)",
		 d->fmt ? d->fmt->name : "no records",
		 tm_svg_number((double)s->records, num, sizeof(num)));
	if (!d->accesses) {
		tm_svg_note(out, WIDTH, title,
			    s->records ? "the trace's records give no addresses"
				       : "the trace has no records");
		return;
	}
	tm_svg_begin(out, WIDTH, HEIGHT, title,
		     "The distinct 4 KiB pages fetched from (code) and read or written (data) "
		     "from the trace's start to each point, counted apart.");
	uint64_t most = d->code_pages > d->data_pages ? d->code_pages : d->data_pages;
	struct tm_svg_area a = {
	    .left = PLOT_LEFT,
	    .top = PLOT_TOP,
	    .width = PLOT_WIDTH,
	    .height = HEIGHT - 120.0,
	    .x_max = s->records ? (double)s->records : 1,
	    .y_max = most ? (double)most : 1,
	    .x_label = "position in the trace (records)",
	    .y_label = "distinct 4 KiB pages",
	};
	tm_svg_axes(out, &a);
	line(out, d, &a, TM_PLOT_NEW_CODE, "code", d->code_pages, tm_svg_colour(0));
	line(out, d, &a, TM_PLOT_NEW_DATA, "data", d->data_pages, tm_svg_colour(3));
	snprintf(code, sizeof(code), "code: %s pages",
		 tm_svg_number((double)d->code_pages, num, sizeof(num)));
	snprintf(data, sizeof(data), "data: %s pages",
		 tm_svg_number((double)d->data_pages, num, sizeof(num)));
	const struct tm_svg_legend_entry legend[] = {
	    {tm_svg_colour(0), code},
	    {tm_svg_colour(3), data},
	};
	tm_svg_legend(out, LEGEND_LEFT, PLOT_TOP, LEGEND_W, legend, 2);
	tm_svg_end(out);
}
