/* calls/flamegraph.svg: the flame graph of a finished tracker's stacks, weighted by
 * instructions, drawn here as a self-contained SVG: no script, no external resource, a
 * <title> on each frame for the tooltip (with the symbol of a demangled name), so that any browser
 * or file manager shows it. The empty stack ("all") is the bottom bar; each stack's callees stand
 * on it, left to right by name, as flamegraph.pl lays them out. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "calls/render.h"

#define NONE UINT32_MAX

enum {
	IMAGE_WIDTH = 1200,
	MARGIN = 10,
	FRAME_HEIGHT = 16,
	TITLE_SPACE = 40, /* above the frames */
	FONT_SIZE = 12,
	/* of FONT_SIZE Verdana or DejaVu Sans (a digit is 7.6 pixels), rounded up so that labels,
	 * cut to fit, stay inside their frames */
	CHAR_WIDTH = 8,
	LABEL_PAD = 3, /* pixels between a frame's edges and its label */
	LABEL_MIN = 3, /* characters of a cut name: fewer say nothing */
};
/* Frames narrower than this many pixels are left out, with their callees. */
#define MIN_WIDTH 0.1

static void put_escaped(FILE *out, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			/* names are printable ASCII already (render.h); titles may not be */
			fputc((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f ? '?'
											: s[i],
			      out);
		}
	}
}

/* A warm colour from the name, the same in every drawing. */
static void colour(const char *name, unsigned rgb[3])
{
	uint32_t h = 2166136261u;
	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	rgb[0] = 200 + h % 56;
	rgb[1] = (h >> 8) % 200;
	rgb[2] = (h >> 16) % 60;
}

struct layout {
	const struct tm_calls_node *node;
	const struct tm_calls_names *names;
	double scale; /* pixels per instruction */
	uint64_t total;
	unsigned height;
	FILE *out;
};

struct placed {
	uint32_t node;
	uint32_t depth;
	double x;
};

static void draw_frame(const struct layout *l, const struct placed *p)
{
	const struct tm_calls_node *n = &l->node[p->node];
	const char *name = tm_calls_name(l->names, n->function);
	double width = (double)n->total_insns * l->scale;
	double y = l->height - MARGIN - (double)(p->depth + 1) * FRAME_HEIGHT;
	unsigned rgb[3];
	colour(name, rgb);
	const char *symbol = tm_calls_symbol(l->names, n->function);
	fputs("<g><title>", l->out);
	put_escaped(l->out, name, SIZE_MAX);
	fprintf(l->out, " (%" PRIu64 " instructions, %.2f%%)", n->total_insns,
		100.0 * (double)n->total_insns / (double)l->total);
	if (symbol != name) { /* demangled: the image's name too */
		fputs("; symbol ", l->out);
		put_escaped(l->out, symbol, SIZE_MAX);
	}
	fputs("</title>", l->out);
	fprintf(l->out,
		"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" rx=\"2\" "
		"fill=\"rgb(%u,%u,%u)\"/>",
		p->x, y, width, FRAME_HEIGHT - 1, rgb[0], rgb[1], rgb[2]);
	/* the whole name, or its start and "..", or nothing */
	size_t fit = width > 2 * LABEL_PAD ? (size_t)((width - 2 * LABEL_PAD) / CHAR_WIDTH) : 0;
	size_t len = strlen(name);
	if (len > 0 && (len <= fit || fit >= LABEL_MIN + 2)) {
		fprintf(l->out, "<text x=\"%.1f\" y=\"%.1f\">", p->x + LABEL_PAD,
			y + FRAME_HEIGHT - 4);
		put_escaped(l->out, name, len <= fit ? len : fit - 2);
		if (len > fit)
			fputs("..", l->out);
		fputs("</text>", l->out);
	}
	fputs("</g>\n", l->out);
}

static int by_name(const void *a, const void *b, void *ctx)
{
	const struct layout *l = ctx;
	const struct tm_calls_node *x = &l->node[*(const uint32_t *)a];
	const struct tm_calls_node *y = &l->node[*(const uint32_t *)b];
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	int c = strcmp(tm_calls_name(l->names, x->function), tm_calls_name(l->names, y->function));
	return c ? c : (i > j) - (i < j);
}

/* The deepest stack drawn, for the image's height. */
static uint32_t drawn_depth(const struct tm_calls_node *node, size_t n, double scale)
{
	uint32_t max = 0;
	uint32_t *depth = calloc(n ? n : 1, sizeof(*depth));
	if (!depth)
		return 64;
	for (size_t i = 1; i < n; i++) {
		depth[i] = depth[node[i].parent] + 1;
		if ((double)node[i].total_insns * scale >= MIN_WIDTH && depth[i] > max)
			max = depth[i];
	}
	free(depth);
	return max;
}

/* Draws every frame wide enough, depth first; each node's callees are placed from its left
 * edge in order of name. */
static int draw_frames(struct layout *l, size_t n_nodes)
{
	struct placed *stack = malloc(n_nodes * sizeof(*stack));
	uint32_t *children = malloc(n_nodes * sizeof(*children));
	if (!stack || !children) {
		free(stack);
		free(children);
		return -ENOMEM;
	}
	size_t top = 0;
	stack[top++] = (struct placed){.node = 0, .depth = 0, .x = MARGIN};
	while (top > 0) {
		struct placed p = stack[--top];
		if ((double)l->node[p.node].total_insns * l->scale < MIN_WIDTH)
			continue;
		draw_frame(l, &p);
		size_t k = 0;
		for (uint32_t c = l->node[p.node].first_child; c != NONE;
		     c = l->node[c].next_sibling)
			children[k++] = c;
		qsort_r(children, k, sizeof(*children), by_name, l);
		double x = p.x;
		for (size_t i = 0; i < k; i++) {
			stack[top++] =
			    (struct placed){.node = children[i], .depth = p.depth + 1, .x = x};
			x += (double)l->node[children[i]].total_insns * l->scale;
		}
	}
	free(stack);
	free(children);
	return 0;
}

int tm_calls_write_flamegraph(const struct tm_calls *t, const char *title, FILE *out)
{
	struct tm_calls_names names;
	int err = tm_calls_names_init(t, &names);
	if (err)
		return err;
	size_t n_nodes;
	struct layout l = {.node = tm_calls_nodes(t, &n_nodes), .names = &names, .out = out};
	l.total = l.node[0].total_insns;
	l.scale = l.total ? (double)(IMAGE_WIDTH - 2 * MARGIN) / (double)l.total : 0;
	l.height = TITLE_SPACE + 2 * MARGIN +
		   (drawn_depth(l.node, n_nodes, l.scale) + 1) * (unsigned)FRAME_HEIGHT;
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		"height=\"%u\" viewBox=\"0 0 %d %u\" font-family=\"Verdana, sans-serif\" "
		"font-size=\"%d\">\n<title>",
		IMAGE_WIDTH, l.height, IMAGE_WIDTH, l.height, FONT_SIZE);
	put_escaped(out, title, SIZE_MAX);
	fprintf(out,
		"</title>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%u\" fill=\"#fdfbf7\"/>\n"
		"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"16\">",
		IMAGE_WIDTH, l.height, IMAGE_WIDTH / 2, TITLE_SPACE / 2 + 6);
	put_escaped(out, title, SIZE_MAX);
	fprintf(out,
		"</text>\n<text x=\"%d\" y=\"%d\" fill=\"#555\">%" PRIu64
		" instructions; hover over a frame for its count</text>\n<g>\n",
		MARGIN, TITLE_SPACE - 2, l.total);
	if (l.total)
		err = draw_frames(&l, n_nodes);
	fputs("</g>\n</svg>\n", out);
	tm_calls_names_free(&names);
	return err ? err : ferror(out) ? -EIO : 0;
}
