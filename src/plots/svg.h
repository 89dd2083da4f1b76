/* A small SVG writer for plots/ (doc/plots.md): a document with a title, a plot area with
 * axes, ticks and units, a legend, and text that fits its box. No script and no external
 * resource; the same calls write the same bytes (no locale, no clock, no pointer in the
 * output). Writes go to a FILE; a failed write shows in ferror, which the caller checks. */
#ifndef TRACEMOUNT_PLOTS_SVG_H
#define TRACEMOUNT_PLOTS_SVG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The one font the plots name, and the width estimate's basis: DejaVu Sans is among the
 * widest common sans-serif fonts, so text measured for it fits in the others. */
#define TM_SVG_FONT "DejaVu Sans, Verdana, Arial, sans-serif"

/* Colours readable on white and told apart (Tableau's 20), by index modulo their count. */
const char *tm_svg_colour(unsigned k);

/* Writes s to out with &, <, >, " and ' escaped, and bytes below 0x20 (other than tab, new
 * line and carriage return, which XML allows) and invalid UTF-8 as U+FFFD, so that any name a
 * trace gives makes well-formed XML. */
void tm_svg_escape(FILE *out, const char *s);

/* A width, in pixels, that text s in a font of size px does not exceed (an over-estimate:
 * wide letters and characters outside ASCII count a full em). */
double tm_svg_text_width(const char *s, double px);

/* Writes into buf (len bytes) the longest start of s, cut at a character's start and ended
 * with "..." when cut, whose tm_svg_text_width at px is at most max_w. Returns buf. */
char *tm_svg_fit(const char *s, double px, double max_w, char *buf, size_t len);

/* Opens a document of width x height pixels: the XML declaration, the svg element with its
 * <title> (title, for the browser's tab and a screen reader) and desc, a white background,
 * and title drawn at the top, fitted to the width. */
void tm_svg_begin(FILE *out, unsigned width, unsigned height, const char *title, const char *desc);
void tm_svg_end(FILE *out);

/* A whole document for a plot with nothing to show: one line, the title then why ("Sync events
 * of the thread: no sync records..."), width x 40 pixels. The svg element carries the reason in
 * data-note, so that a page showing the plot can show the line instead of a picture. */
void tm_svg_note(FILE *out, unsigned width, const char *title, const char *note);

/* Text at (x, y), anchor "start", "middle" or "end", escaped; fitted to max_w when
 * max_w > 0. */
void tm_svg_text(FILE *out, double x, double y, double px, const char *anchor, double max_w,
		 const char *s);

/* A plot area: left, top, width and height in pixels, showing x from 0 to x_max and y from 0
 * to y_max (both > 0), with axis labels that say the units. */
struct tm_svg_area {
	double left, top, width, height;
	double x_max, y_max;
	const char *x_label, *y_label;
	const char *y_suffix; /* after each y tick's number ("%"), or NULL */
};

/* The pixel coordinates of (x, y) in the area. */
double tm_svg_x(const struct tm_svg_area *a, double x);
double tm_svg_y(const struct tm_svg_area *a, double y);

/* Draws the area's frame, ticks with their numbers (SI suffixes k, M, G... for large values),
 * light grid lines, and the axis labels. */
void tm_svg_axes(FILE *out, const struct tm_svg_area *a);
/* The same with the x axis alone (its ticks, grid lines and label) and the frame, for a plot
 * whose rows name themselves (bars, lanes). */
void tm_svg_x_axis(FILE *out, const struct tm_svg_area *a);

/* A step between ticks for an axis from 0 to max: 1, 2 or 5 times a power of ten, with 4 to
 * 10 ticks; at least min_step (1 for counts, which take no fractions). */
double tm_svg_tick_step(double max, double min_step);

/* Writes v as a short number: integers below 10000 as they are, larger ones with three
 * significant digits and an SI suffix ("12.3k", "4.5M"). Returns buf. */
char *tm_svg_number(double v, char *buf, size_t len);

/* One entry of a legend: a colour swatch and its text. */
struct tm_svg_legend_entry {
	const char *colour;
	const char *text;
};

/* A legend of n entries, one a line from (x, y) down, its text fitted to width. */
void tm_svg_legend(FILE *out, double x, double y, double width, const struct tm_svg_legend_entry *e,
		   size_t n);

#endif
