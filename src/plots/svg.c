/* The SVG writer of plots/ (svg.h). */
#include <math.h>
#include <string.h>

#include "plots/svg.h"

#define FONT_PX	 13.0
#define TITLE_PX 16.0

const char *tm_svg_colour(unsigned k)
{
	static const char *const colours[] = {
	    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
	    "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896",
	    "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5",
	};
	return colours[k % (sizeof(colours) / sizeof(colours[0]))];
}

/* The length of the valid UTF-8 character at s (1 to 4), or 0 when s holds none. */
static size_t utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	size_t n = s[0] >= 0xf0 && s[0] < 0xf5 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
	if (!n || s[0] >= 0xf5)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && s[0] == 0xe0 && s[1] < 0xa0)
		return 0; /* overlong */
	if (n == 3 && s[0] == 0xed && s[1] >= 0xa0)
		return 0; /* a surrogate */
	if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
		return 0;
	return n;
}

void tm_svg_escape(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	while (*s) {
		size_t n = utf8_len(s);
		if (!n || (*s < 0x20 && *s != '\t' && *s != '\n' && *s != '\r')) {
			fputs("\xef\xbf\xbd", out); /* U+FFFD */
			s++;
			continue;
		}
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default: fwrite(s, 1, n, out);
		}
		s += n;
	}
}

/* An over-estimate of a character's advance, in ems. */
static double char_em(const unsigned char *s)
{
	if (*s >= 0x80)
		return 1.0;
	if (strchr("MWmw@%", *s))
		return 1.0;
	if (*s >= 'A' && *s <= 'Z')
		return 0.8;
	if (strchr("ijl.,:;'!|", *s))
		return 0.4;
	return 0.65;
}

double tm_svg_text_width(const char *str, double px)
{
	const unsigned char *s = (const unsigned char *)str;
	double em = 0;
	while (*s) {
		size_t n = utf8_len(s);
		em += char_em(s);
		s += n ? n : 1;
	}
	return em * px;
}

char *tm_svg_fit(const char *str, double px, double max_w, char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	double ellipsis = 3 * 0.4 * px, w = 0;
	size_t keep = 0, fits = 0; /* bytes kept; bytes that fit with the ellipsis */
	if (!len)
		return buf;
	while (s[keep]) {
		size_t n = utf8_len(s + keep);
		n = n ? n : 1;
		w += char_em(s + keep) * px;
		if (w > max_w)
			break;
		keep += n;
		if (w + ellipsis <= max_w)
			fits = keep;
	}
	if (!s[keep]) { /* all of it fits */
		snprintf(buf, len, "%s", str);
		return buf;
	}
	if (fits > len - 4)
		fits = len - 4;
	while (fits && (s[fits] & 0xc0) == 0x80)
		fits--;
	memcpy(buf, str, fits);
	memcpy(buf + fits, "...", 4);
	return buf;
}

void tm_svg_begin(FILE *out, unsigned width, unsigned height, const char *title, const char *desc)
{
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" "
		"viewBox=\"0 0 %u %u\" font-family=\"%s\" font-size=\"%.0f\">\n<title>",
		width, height, width, height, TM_SVG_FONT, FONT_PX);
	tm_svg_escape(out, title);
	fputs("</title>\n<desc>", out);
	tm_svg_escape(out, desc);
	fprintf(out, "</desc>\n<rect width=\"%u\" height=\"%u\" fill=\"#ffffff\"/>\n", width,
		height);
	fprintf(out, "<g font-weight=\"bold\">");
	tm_svg_text(out, width / 2.0, 24, TITLE_PX * 1.1, "middle", width - 20.0, title);
	fputs("</g>\n", out);
}

void tm_svg_end(FILE *out)
{
	fputs("</svg>\n", out);
}

void tm_svg_note(FILE *out, unsigned width, const char *title, const char *note)
{
	const unsigned height = 40;
	char line[512];
	snprintf(line, sizeof(line), "%s: %s", title, note);
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" "
		"viewBox=\"0 0 %u %u\" font-family=\"%s\" font-size=\"%.0f\" data-note=\"",
		width, height, width, height, TM_SVG_FONT, FONT_PX);
	tm_svg_escape(out, note);
	fputs("\">\n<title>", out);
	tm_svg_escape(out, title);
	fputs("</title>\n<desc>", out);
	tm_svg_escape(out, note);
	fprintf(out, "</desc>\n<rect width=\"%u\" height=\"%u\" fill=\"#ffffff\"/>\n", width,
		height);
	tm_svg_text(out, 10, 25, FONT_PX * 1.1, "start", width - 20.0, line);
	fputs("\n</svg>\n", out);
}

void tm_svg_text(FILE *out, double x, double y, double px, const char *anchor, double max_w,
		 const char *s)
{
	char fitted[512];
	if (max_w > 0)
		s = tm_svg_fit(s, px, max_w, fitted, sizeof(fitted));
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.1f\" text-anchor=\"%s\">", x, y, px,
		anchor);
	tm_svg_escape(out, s);
	fputs("</text>", out);
}

double tm_svg_x(const struct tm_svg_area *a, double x)
{
	return a->left + a->width * x / a->x_max;
}

double tm_svg_y(const struct tm_svg_area *a, double y)
{
	return a->top + a->height - a->height * y / a->y_max;
}

double tm_svg_tick_step(double max, double min_step)
{
	double raw = max / 5, mag = pow(10, floor(log10(raw > 0 ? raw : 1)));
	double step = mag;
	if (raw > 5 * mag)
		step = 10 * mag;
	else if (raw > 2 * mag)
		step = 5 * mag;
	else if (raw > mag)
		step = 2 * mag;
	return step < min_step ? min_step : step;
}

char *tm_svg_number(double v, char *buf, size_t len)
{
	static const char suffix[] = "kMGTPE";
	if (fabs(v) < 10000) {
		snprintf(buf, len, "%.6g", v);
		return buf;
	}
	unsigned k = 0;
	while (fabs(v) >= 1000 && k < sizeof(suffix) - 1) {
		v /= 1000;
		k++;
	}
	snprintf(buf, len, "%.3g%c", v, suffix[k - 1]);
	return buf;
}

/* The ticks of one axis: at 0, step, 2 step... up to max. */
static void axis_ticks(FILE *out, const struct tm_svg_area *a, int vertical)
{
	double max = vertical ? a->y_max : a->x_max;
	/* both axes count (records, pages, percent): whole ticks */
	double step = tm_svg_tick_step(max, 1);
	char num[32], label[48];
	for (unsigned i = 0; i * step <= max * (1 + 1e-9) && i <= 20; i++) {
		double v = i * step;
		/* one style along an axis: 5k beside 10k, not 5000 */
		if (max >= 10000 && v >= 1000)
			snprintf(num, sizeof(num), "%.3g%c",
				 v >= 1e6 ? (v >= 1e9 ? v / 1e9 : v / 1e6) : v / 1e3,
				 v >= 1e6 ? (v >= 1e9 ? 'G' : 'M') : 'k');
		else
			tm_svg_number(v, num, sizeof(num));
		if (vertical) {
			double y = tm_svg_y(a, v);
			snprintf(label, sizeof(label), "%s%s", num, a->y_suffix ? a->y_suffix : "");
			fprintf(out,
				"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				"stroke=\"#e0e0e0\"/><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				"y2=\"%.1f\" stroke=\"#333333\"/>",
				a->left, y, a->left + a->width, y, a->left - 5, y, a->left, y);
			tm_svg_text(out, a->left - 8, y + 4, 12, "end", a->left - 30, label);
		} else {
			double x = tm_svg_x(a, v);
			fprintf(out,
				"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				"stroke=\"#e0e0e0\"/><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				"y2=\"%.1f\" stroke=\"#333333\"/>",
				x, a->top, x, a->top + a->height, x, a->top + a->height, x,
				a->top + a->height + 5);
			/* ticks are at least a fifth of the width apart */
			tm_svg_text(out, x, a->top + a->height + 19, 12, "middle", a->width / 6,
				    num);
		}
		fputc('\n', out);
	}
}

/* The area's frame and, below it, the x axis's label. */
static void frame(FILE *out, const struct tm_svg_area *a)
{
	fprintf(out,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
		"stroke=\"#333333\"/>\n",
		a->left, a->top, a->width, a->height);
	tm_svg_text(out, a->left + a->width / 2, a->top + a->height + 40, FONT_PX, "middle",
		    a->width, a->x_label);
}

void tm_svg_axes(FILE *out, const struct tm_svg_area *a)
{
	fputs("<g class=\"axes\">\n", out);
	axis_ticks(out, a, 0);
	axis_ticks(out, a, 1);
	frame(out, a);
	fprintf(out, "\n<g transform=\"translate(%.1f %.1f) rotate(-90)\">", a->left - 52,
		a->top + a->height / 2);
	tm_svg_text(out, 0, 0, FONT_PX, "middle", a->height, a->y_label);
	fputs("</g>\n</g>\n", out);
}

void tm_svg_x_axis(FILE *out, const struct tm_svg_area *a)
{
	fputs("<g class=\"axes\">\n", out);
	axis_ticks(out, a, 0);
	frame(out, a);
	fputs("\n</g>\n", out);
}

void tm_svg_legend(FILE *out, double x, double y, double width, const struct tm_svg_legend_entry *e,
		   size_t n)
{
	fputs("<g class=\"legend\">\n", out);
	for (size_t i = 0; i < n; i++) {
		double top = y + 20.0 * (double)i;
		fprintf(out,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\" "
			"stroke=\"#333333\" stroke-width=\"0.5\"/>",
			x, top, e[i].colour);
		tm_svg_text(out, x + 18, top + 11, 12, "start", width - 18, e[i].text);
		fputc('\n', out);
	}
	fputs("</g>\n", out);
}
