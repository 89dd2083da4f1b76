/* Horizontal bars of the hottest things of a trace (bars.h): a row per bar, hottest at the
 * top, its name in a column at the left, its share and count in one at the right, the value
 * bar drawn over the lighter total bar, x counting the value's units from 0. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "plots/bars.h"
#include "plots/svg.h"

#define WIDTH	     960
#define NAME_W	     250 /* the names' column, left of the plot area */
#define PLOT_LEFT    (10 + NAME_W + 10)
#define PLOT_WIDTH   440
#define RIGHT_LEFT   (PLOT_LEFT + PLOT_WIDTH + 10)
#define RIGHT_W	     (WIDTH - RIGHT_LEFT - 10)
#define PLOT_TOP     120
#define ROW	     22 /* pixels a bar, the bar 16 of them */
#define BAR	     16
#define VALUE_COLOUR 0	/* tm_svg_colour: blue */
#define TOTAL_COLOUR 10 /* light blue */

static int by_heat(const void *a, const void *b)
{
	const struct tm_bar *x = a, *y = b;
	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return (x->key > y->key) - (x->key < y->key);
}

void tm_bars_rank(struct tm_bar *bar, size_t n)
{
	if (n)
		qsort(bar, n, sizeof(*bar), by_heat);
}

/* v as a share of whole, in percent, into buf; "" without a whole. */
static const char *share(uint64_t v, uint64_t whole, char *buf, size_t len)
{
	if (!whole)
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len, "%.1f%%", 100.0 * (double)v / (double)whole);
	return buf;
}

/* Bar i (rank i + 1) in row i of area a. */
static void draw_bar(FILE *out, const struct tm_bars_chart *c, const struct tm_svg_area *a,
		     const struct tm_bar *b, size_t i)
{
	char s1[16], s2[16], n1[32], n2[32], text[160];
	double y = a->top + ROW * (double)i + (ROW - BAR) / 2.0;
	fprintf(out, "<g class=\"bar\" data-rank=\"%zu\" data-name=\"", i + 1);
	tm_svg_escape(out, b->name);
	fprintf(out, "\" data-value=\"%" PRIu64 "\"", b->value);
	if (c->has_total)
		fprintf(out, " data-total=\"%" PRIu64 "\"", b->total);
	fprintf(out, " data-extra=\"%" PRIu64 "\"><title>", b->extra);
	tm_svg_escape(out, b->name);
	fprintf(out, ": %s %" PRIu64, c->value_name, b->value);
	if (c->whole)
		fprintf(out, " (%s)", share(b->value, c->whole, s1, sizeof(s1)));
	if (c->has_total) {
		fprintf(out, ", %s %" PRIu64, c->total_name, b->total);
		if (c->whole)
			fprintf(out, " (%s)", share(b->total, c->whole, s2, sizeof(s2)));
	}
	if (c->extra_name)
		fprintf(out, ", %s %" PRIu64, c->extra_name, b->extra);
	if (b->detail) {
		fputs("; ", out);
		tm_svg_escape(out, b->detail);
	}
	fputs("</title>\n", out);
	if (c->has_total)
		fprintf(out,
			"<rect class=\"total\" x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" "
			"height=\"%d\" fill=\"%s\"/>",
			a->left, y, tm_svg_x(a, (double)b->total) - a->left, BAR,
			tm_svg_colour(TOTAL_COLOUR));
	fprintf(out,
		"<rect class=\"value\" x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
		"fill=\"%s\"/>",
		a->left, y, tm_svg_x(a, (double)b->value) - a->left, BAR,
		tm_svg_colour(VALUE_COLOUR));
	tm_svg_text(out, a->left - 6, y + 12, 12, "end", NAME_W, b->name);
	tm_svg_number((double)b->value, n1, sizeof(n1));
	if (c->has_total && c->whole)
		snprintf(text, sizeof(text), "%s (%s), total %s",
			 share(b->value, c->whole, s1, sizeof(s1)), n1,
			 share(b->total, c->whole, s2, sizeof(s2)));
	else if (c->has_total)
		snprintf(text, sizeof(text), "%s, total %s", n1,
			 tm_svg_number((double)b->total, n2, sizeof(n2)));
	else if (c->whole)
		snprintf(text, sizeof(text), "%s (%s)", share(b->value, c->whole, s1, sizeof(s1)),
			 n1);
	else
		snprintf(text, sizeof(text), "%s", n1);
	tm_svg_text(out, RIGHT_LEFT, y + 12, 12, "start", RIGHT_W, text);
	fputs("</g>\n", out);
}

int tm_plot_bars(FILE *out, const struct tm_bars_chart *c, struct tm_bar *bar, size_t n)
{
	unsigned top = c->top ? c->top : TM_BARS_TOP;
	tm_bars_rank(bar, n);
	size_t shown = 0;
	uint64_t hot = 0;
	uint64_t x_max = 0, rest = 0;
	for (size_t i = 0; i < n; i++) {
		if (!bar[i].value)
			continue;
		hot++;
		if (shown < top) {
			shown++;
			uint64_t v = c->has_total && bar[i].total > bar[i].value ? bar[i].total
										 : bar[i].value;
			x_max = v > x_max ? v : x_max;
		} else {
			rest += bar[i].value;
		}
	}
	hot += c->others;
	rest += c->others_value;
	if (!shown) {
		tm_svg_note(out, WIDTH, c->title, c->empty);
		return ferror(out) ? -EIO : 0;
	}
	double height = ROW * (double)shown;
	tm_svg_begin(out, WIDTH, (unsigned)(PLOT_TOP + height + 60), c->title, c->desc);
	char line[200], s[16], num[32];
	if (hot > shown)
		snprintf(line, sizeof(line),
			 "the %zu hottest of %" PRIu64 " %s, by %s; the other %" PRIu64
			 ": %s%s%s%s",
			 shown, hot, c->things, c->value_name, hot - shown,
			 c->whole ? share(rest, c->whole, s, sizeof(s)) : "", c->whole ? " (" : "",
			 tm_svg_number((double)rest, num, sizeof(num)), c->whole ? ")" : "");
	else
		snprintf(line, sizeof(line), "all %zu %s, by %s", shown, c->things, c->value_name);
	tm_svg_text(out, WIDTH / 2.0, 46, 13, "middle", WIDTH - 20.0, line);
	fputc('\n', out);
	struct tm_svg_legend_entry legend[2] = {
	    {tm_svg_colour(VALUE_COLOUR), c->value_name},
	    {tm_svg_colour(TOTAL_COLOUR), c->total_name},
	};
	tm_svg_legend(out, RIGHT_LEFT, 58, RIGHT_W, legend, c->has_total ? 2 : 1);
	struct tm_svg_area a = {
	    .left = PLOT_LEFT,
	    .top = PLOT_TOP,
	    .width = PLOT_WIDTH,
	    .height = height,
	    .x_max = x_max ? (double)x_max : 1,
	    .y_max = 1,
	    .x_label = c->x_label,
	};
	tm_svg_x_axis(out, &a);
	fputs("<g class=\"headers\" font-weight=\"bold\">", out);
	tm_svg_text(out, PLOT_LEFT - 6, PLOT_TOP - 8, 12, "end", NAME_W, c->y_label);
	tm_svg_text(out, RIGHT_LEFT, PLOT_TOP - 8, 12, "start", RIGHT_W,
		    c->whole ? "share of the whole (count)" : "count");
	fputs("</g>\n<g class=\"bars\">\n", out);
	for (size_t i = 0; i < shown; i++)
		draw_bar(out, c, &a, &bar[i], i);
	fputs("</g>\n", out);
	tm_svg_end(out);
	return ferror(out) ? -EIO : 0;
}
