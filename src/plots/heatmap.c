/* The heat maps of plots/ (heatmap.h). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "plots/heatmap.h"
#include "plots/svg.h"

#define TOP	     64.0
#define BOTTOM	     62.0  /* below the panels: ticks and the x label */
#define LEFT	     170.0 /* the labels' column and the y label, left of the panels */
#define NOTE_W	     60.0  /* groups' notes, in a column of their own left of the labels */
#define NOTE_X	     28.0  /* where that column starts, right of the y label */
#define LEGEND_W     160.0
#define PANEL_GAP    32.0
#define LABEL_PX     11.0
#define LABEL_SPACE  15.0 /* between rows' labels, centre to centre */
#define MAX_BREAK_PX 10.0

/* ColorBrewer's YlOrRd, without its palest: light for few, dark for many. */
static const char *const levels[TM_HEAT_LEVELS] = {
    "#ffeda0", "#fed976", "#feb24c", "#fd8d3c", "#fc4e2a", "#e31a1c", "#bd0026", "#800026",
};

const char *tm_heat_colour(unsigned l)
{
	return levels[l < TM_HEAT_LEVELS ? l : TM_HEAT_LEVELS - 1];
}

unsigned tm_heat_levels(uint64_t max, uint64_t low[TM_HEAT_LEVELS])
{
	if (max <= TM_HEAT_LEVELS) {
		for (unsigned l = 0; l < max; l++)
			low[l] = l + 1;
		return (unsigned)max;
	}
	/* equal steps of log(count) from 1 to max, each a whole count above the one before */
	low[0] = 1;
	for (unsigned l = 1; l < TM_HEAT_LEVELS; l++) {
		uint64_t v = (uint64_t)ceil(exp(log((double)max) * l / TM_HEAT_LEVELS));
		low[l] = v > low[l - 1] ? v : low[l - 1] + 1;
	}
	return TM_HEAT_LEVELS;
}

/* The colour of level l of n: fewer levels than colours spread over the whole scale, so that
 * the most is always the darkest. */
static const char *colour_of(unsigned l, unsigned n)
{
	return tm_heat_colour(n > 1 ? l * (TM_HEAT_LEVELS - 1) / (n - 1) : TM_HEAT_LEVELS - 1);
}

static unsigned level_of(uint64_t c, const uint64_t *low, unsigned n)
{
	unsigned l = 0;
	while (l + 1 < n && c >= low[l + 1])
		l++;
	return l;
}

/* Where the rows are: row r from y[r] to y[r] + row_h. */
struct layout {
	double left; /* where the first panel starts */
	double panel_w, row_h, plot_h;
	double *y;
};

static uint64_t count_at(const struct tm_heatmap *h, unsigned p, unsigned r, unsigned c)
{
	return h->count[((size_t)p * h->n_rows + r) * h->n_cols + c];
}

static double panel_left(const struct layout *lay, unsigned p)
{
	return lay->left + p * (lay->panel_w + PANEL_GAP);
}

/* The x of record position x in a panel. */
static double x_of(const struct tm_heatmap *h, const struct layout *lay, unsigned p, double x)
{
	return panel_left(lay, p) + lay->panel_w * x / (double)(h->records ? h->records : 1);
}

static int place_rows(const struct tm_heatmap *h, struct layout *lay)
{
	unsigned breaks = 0;
	for (unsigned r = 1; r < h->n_rows; r++)
		breaks += h->rows[r].group != h->rows[r - 1].group;
	lay->left = LEFT;
	for (unsigned r = 0; r < h->n_rows; r++)
		if (h->rows[r].note[0])
			lay->left = LEFT + NOTE_W;
	lay->plot_h = h->height - TOP - BOTTOM;
	lay->panel_w =
	    (h->width - lay->left - LEGEND_W - PANEL_GAP * (h->n_panels - 1)) / h->n_panels;
	double gap = breaks ? fmin(MAX_BREAK_PX, 0.3 * lay->plot_h / breaks) : 0;
	lay->row_h = h->n_rows ? (lay->plot_h - gap * breaks) / h->n_rows : 0;
	lay->y = malloc((h->n_rows + 1) * sizeof(double));
	if (!lay->y)
		return -1;
	double y = TOP;
	for (unsigned r = 0; r < h->n_rows; r++) {
		if (r && h->rows[r].group != h->rows[r - 1].group)
			y += gap;
		lay->y[r] = y;
		y += lay->row_h;
	}
	lay->y[h->n_rows] = y;
	return 0;
}

/* Panel p's cells of level l as one path: a rectangle for each run of cells of that level
 * along a row. */
static void cells(FILE *out, const struct tm_heatmap *h, const struct layout *lay, unsigned p,
		  unsigned l, const uint64_t *low, unsigned n_levels)
{
	uint64_t n_cells = 0;
	for (unsigned r = 0; r < h->n_rows; r++)
		for (unsigned c = 0; c < h->n_cols; c++) {
			uint64_t v = count_at(h, p, r, c);
			n_cells += v && level_of(v, low, n_levels) == l;
		}
	if (!n_cells)
		return;
	fprintf(out, "<path data-level=\"%u\" data-from=\"%" PRIu64 "\" data-to=\"", l, low[l]);
	if (l + 1 < n_levels)
		fprintf(out, "%" PRIu64, low[l + 1] - 1);
	else
		fputs("max", out);
	fprintf(out, "\" data-cells=\"%" PRIu64 "\" fill=\"%s\" d=\"", n_cells,
		colour_of(l, n_levels));
	for (unsigned r = 0; r < h->n_rows; r++) {
		for (unsigned c = 0; c < h->n_cols;) {
			uint64_t v = count_at(h, p, r, c);
			if (!v || level_of(v, low, n_levels) != l) {
				c++;
				continue;
			}
			unsigned end = c + 1;
			while (end < h->n_cols && count_at(h, p, r, end) &&
			       level_of(count_at(h, p, r, end), low, n_levels) == l)
				end++;
			uint64_t x0 = c * h->col_records, x1 = end * h->col_records;
			if (x1 > h->records)
				x1 = h->records;
			double left = x_of(h, lay, p, (double)x0),
			       right = x_of(h, lay, p, (double)x1);
			fprintf(out, "M%.1f %.1fh%.1fv%.1fh%.1fz", left, lay->y[r], right - left,
				lay->row_h, left - right);
			c = end;
		}
	}
	fputs("\"/>\n", out);
}

/* The frame of each group of rows in panel p, and the x axis below. */
static void panel_axes(FILE *out, const struct tm_heatmap *h, const struct layout *lay, unsigned p)
{
	double left = panel_left(lay, p), bottom = TOP + lay->plot_h;
	for (unsigned r = 0; r < h->n_rows;) {
		unsigned end = r + 1;
		while (end < h->n_rows && h->rows[end].group == h->rows[r].group)
			end++;
		fprintf(out,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
			"stroke=\"#333333\"/>\n",
			left, lay->y[r], lay->panel_w, lay->y[end - 1] + lay->row_h - lay->y[r]);
		r = end;
	}
	if (!h->n_rows)
		fprintf(out,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
			"stroke=\"#333333\"/>\n",
			left, TOP, lay->panel_w, lay->plot_h);
	/* about three ticks: a panel is narrow */
	double max = h->records ? (double)h->records : 1;
	double step = tm_svg_tick_step(2 * max, 1);
	char num[32];
	for (unsigned i = 0; i * step <= max * (1 + 1e-9) && i <= 20; i++) {
		double x = x_of(h, lay, p, i * step);
		fprintf(
		    out,
		    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>", x,
		    bottom, x, bottom + 5);
		tm_svg_text(out, x, bottom + 18, 12, "middle", lay->panel_w / 3,
			    tm_svg_number(i * step, num, sizeof(num)));
		fputc('\n', out);
	}
}

/* Rows' labels, as many as fit without overlapping: by priority, then from the top. */
static void row_labels(FILE *out, const struct tm_heatmap *h, const struct layout *lay)
{
	double *taken = malloc((h->n_rows + 1) * sizeof(double));
	if (!taken)
		return;
	unsigned n = 0;
	fputs("<g class=\"row-labels\">\n", out);
	for (unsigned prio = 255; prio > 0; prio--) {
		for (unsigned r = 0; r < h->n_rows; r++) {
			if (h->rows[r].priority != prio)
				continue;
			double y = lay->y[r] + (h->edge_labels ? lay->row_h : lay->row_h / 2);
			unsigned k = 0;
			while (k < n && fabs(taken[k] - y) >= LABEL_SPACE)
				k++;
			if (k < n)
				continue;
			taken[n++] = y;
			fprintf(out,
				"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				"stroke=\"#333333\"/>",
				lay->left - 4, y, lay->left, y);
			tm_svg_text(out, lay->left - 6, y + 4, LABEL_PX, "end",
				    lay->left - (lay->left > LEFT ? NOTE_W : 0) - 30,
				    h->rows[r].label);
			fputc('\n', out);
		}
	}
	fputs("</g>\n", out);
	free(taken);
}

/* Each group's note, level with its middle, from the top down where it clears the last. */
static void group_notes(FILE *out, const struct tm_heatmap *h, const struct layout *lay)
{
	double last = -LABEL_SPACE;
	for (unsigned r = 0; r < h->n_rows;) {
		unsigned end = r + 1;
		while (end < h->n_rows && h->rows[end].group == h->rows[r].group)
			end++;
		double mid = (lay->y[r] + lay->y[end - 1] + lay->row_h) / 2;
		if (h->rows[r].note[0] && mid - last >= LABEL_SPACE) {
			tm_svg_text(out, NOTE_X, mid + 4, LABEL_PX, "start", NOTE_W - 4,
				    h->rows[r].note);
			fputc('\n', out);
			last = mid;
		}
		r = end;
	}
}

/* Between groups: a zigzag at the left edge, the mark of a broken axis. */
static void breaks(FILE *out, const struct tm_heatmap *h, const struct layout *lay)
{
	for (unsigned r = 1; r < h->n_rows; r++) {
		if (h->rows[r].group == h->rows[r - 1].group)
			continue;
		double mid = (lay->y[r - 1] + lay->row_h + lay->y[r]) / 2;
		fprintf(out,
			"<polyline class=\"break\" fill=\"none\" stroke=\"#333333\" "
			"points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
			lay->left - 3, mid, lay->left + 1, mid - 3, lay->left + 5, mid + 3,
			lay->left + 9, mid);
	}
}

/* A transparent band over each row, with its counts as data and tooltip. */
static void row_bands(FILE *out, const struct tm_heatmap *h, const struct layout *lay)
{
	fputs("<g class=\"rows\" fill=\"#000000\" fill-opacity=\"0\">\n", out);
	for (unsigned r = 0; r < h->n_rows; r++) {
		fputs("<rect data-row=\"", out);
		tm_svg_escape(out, h->rows[r].label);
		fputs("\" data-counts=\"", out);
		for (unsigned p = 0; p < h->n_panels; p++) {
			uint64_t sum = 0;
			for (unsigned c = 0; c < h->n_cols; c++)
				sum += count_at(h, p, r, c);
			fprintf(out, "%s%" PRIu64, p ? " " : "", sum);
		}
		fprintf(out, "\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>",
			lay->left, lay->y[r],
			panel_left(lay, h->n_panels - 1) + lay->panel_w - lay->left, lay->row_h);
		tm_svg_escape(out, h->rows[r].tip);
		fputs(":", out);
		for (unsigned p = 0; p < h->n_panels; p++) {
			uint64_t sum = 0;
			for (unsigned c = 0; c < h->n_cols; c++)
				sum += count_at(h, p, r, c);
			fprintf(out, "%s %" PRIu64 " ", p ? "," : "", sum);
			tm_svg_escape(out, h->panel_names[p]);
		}
		fputs("</title></rect>\n", out);
	}
	fputs("</g>\n", out);
}

static void legend(FILE *out, const struct tm_heatmap *h, const uint64_t *low, unsigned n,
		   uint64_t max)
{
	double x = h->width - LEGEND_W + 16, w = LEGEND_W - 24;
	char text[TM_HEAT_LEVELS][80], a[32], b[32];
	struct tm_svg_legend_entry e[TM_HEAT_LEVELS];
	char head[64];
	snprintf(head, sizeof(head), "%s per cell", h->unit);
	tm_svg_text(out, x, TOP + 4, 12, "start", w, head);
	tm_svg_text(out, x, TOP + 20, 12, "start", w, "(log scale)");
	fputc('\n', out);
	for (unsigned l = 0; l < n; l++) {
		uint64_t hi = l + 1 < n ? low[l + 1] - 1 : max;
		tm_svg_number((double)low[l], a, sizeof(a));
		tm_svg_number((double)hi, b, sizeof(b));
		if (hi == low[l])
			snprintf(text[l], sizeof(text[l]), "%s", a);
		else
			snprintf(text[l], sizeof(text[l]), "%s to %s", a, b);
		/* the darkest, most, on top */
		e[n - 1 - l] = (struct tm_svg_legend_entry){colour_of(l, n), text[l]};
	}
	tm_svg_legend(out, x, TOP + 34, w, e, n);
}

/* Whether any cell has a count. */
static bool any_count(const struct tm_heatmap *h)
{
	for (size_t k = 0; k < (size_t)h->n_panels * h->n_rows * h->n_cols; k++)
		if (h->count[k])
			return true;
	return false;
}

void tm_heatmap_draw(FILE *out, const struct tm_heatmap *h)
{
	struct layout lay = {0};
	if (!h->count || !any_count(h)) {
		tm_svg_note(out, h->width, h->title, h->empty);
		return;
	}
	tm_svg_begin(out, h->width, h->height, h->title, h->desc);
	if (place_rows(h, &lay) < 0) {
		tm_svg_end(out);
		return;
	}
	uint64_t max = 0, low[TM_HEAT_LEVELS];
	for (size_t k = 0; k < (size_t)h->n_panels * h->n_rows * h->n_cols; k++)
		if (h->count[k] > max)
			max = h->count[k];
	unsigned n_levels = max ? tm_heat_levels(max, low) : 0;
	fprintf(out,
		"<g class=\"heatmap\" data-rows=\"%u\" data-columns=\"%u\" "
		"data-column-records=\"%" PRIu64 "\" data-max=\"%" PRIu64 "\"%s%s>\n",
		h->n_rows, h->n_cols, h->col_records, max, h->attrs ? " " : "",
		h->attrs ? h->attrs : "");
	for (unsigned p = 0; p < h->n_panels; p++) {
		uint64_t total = 0;
		for (unsigned r = 0; r < h->n_rows; r++)
			for (unsigned c = 0; c < h->n_cols; c++)
				total += count_at(h, p, r, c);
		fputs("<g data-panel=\"", out);
		tm_svg_escape(out, h->panel_names[p]);
		fprintf(out, "\" data-total=\"%" PRIu64 "\">\n", total);
		tm_svg_text(out, panel_left(&lay, p) + lay.panel_w / 2, TOP - 10, 13, "middle",
			    lay.panel_w, h->panel_titles[p]);
		fprintf(out, "\n<g stroke=\"none\" shape-rendering=\"crispEdges\">\n");
		for (unsigned l = 0; l < n_levels; l++)
			cells(out, h, &lay, p, l, low, n_levels);
		fputs("</g>\n", out);
		panel_axes(out, h, &lay, p);
		fputs("</g>\n", out);
	}
	row_labels(out, h, &lay);
	group_notes(out, h, &lay);
	breaks(out, h, &lay);
	row_bands(out, h, &lay);
	legend(out, h, low, n_levels, max);
	tm_svg_text(out, lay.left + (h->width - lay.left - LEGEND_W) / 2, h->height - 16.0, 13,
		    "middle", h->width - lay.left - LEGEND_W, h->x_label);
	fprintf(out, "\n<g transform=\"translate(18 %.1f) rotate(-90)\">", TOP + lay.plot_h / 2);
	tm_svg_text(out, 0, 0, 13, "middle", lay.plot_h, h->y_label);
	fputs("</g>\n</g>\n", out);
	free(lay.y);
	tm_svg_end(out);
}
