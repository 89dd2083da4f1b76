/* A trace folder's report.html: one self-contained page of the trace, rendered when opened (or
 * measured, for its size) from its index: the facts of its stats.json, the first lines of its
 * errors.txt, links to each of its views, and each plot (plots/NAME.svg) inline. Nothing here knows
 * a format: the facts are stats.json's keys as they come, the views the trace's view table. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "tracemount/derive.h"
#include "tracemount/fs.h"
#include "tracemount/reader.h"
#include "tracemount/trace.h"
#include "tracemount/view.h"

#include "html.h"

/* errors.txt's lines shown, and the bytes read to find them: the rest is a link away. */
#define ERROR_LINES 20
#define ERROR_BYTES 65536

/* Style only: no script, no font, no file from elsewhere, so the page opens the same from
 * file:// with no network. Plots scale to the column (max-width), tables and long names wrap,
 * so nothing leaves the page from a laptop's width to a 4K screen's. */
static const char page_style[] =
    "<style>\n"
    ":root { color-scheme: light dark; font-family: system-ui, sans-serif;\n"
    "  font-size: clamp(14px, 0.4vw + 10px, 24px); }\n"
    "body { margin: 0 auto; padding: 1em 2vw; max-width: 160em; overflow-wrap: anywhere; }\n"
    "h1 { font-size: 1.4em; }\n"
    "h2 { font-size: 1.2em; margin-top: 1.5em; border-bottom: 1px solid #8886; }\n"
    "table { border-collapse: collapse; max-width: 100%; }\n"
    "th, td { padding: 0.2em 0.6em; border-bottom: 1px solid #8884; text-align: left;\n"
    "  vertical-align: top; }\n"
    "th { font-weight: 600; white-space: nowrap; width: 1%; }\n"
    ".detail > table, td > table { width: 100%; }\n"
    "td > table { margin: -0.2em 0; }\n"
    ".num { font-variant-numeric: tabular-nums; }\n"
    "dl.pairs { display: grid; grid-template-columns: repeat(auto-fill, minmax(16em, 1fr));\n"
    "  gap: 0 2em; margin: 0; }\n"
    "dl.pairs div { display: flex; flex-wrap: wrap; column-gap: 1em;\n"
    "  border-bottom: 1px solid #8884; padding: 0.15em 0; min-width: 0; }\n"
    "dt { font-weight: 600; max-width: 100%; }\n"
    "dd { margin: 0 0 0 auto; text-align: right; max-width: 100%; }\n"
    "h3 { font-size: 1em; margin: 1em 0 0.3em; }\n"
    "ul.list { margin: 0; padding-left: 1.2em; }\n"
    "pre { white-space: pre-wrap; background: #8881; padding: 0.5em; }\n"
    ".plots { display: grid; gap: 1.5em;\n"
    "  grid-template-columns: repeat(auto-fill, minmax(min(100%, 40em), 1fr)); }\n"
    ".figure { margin: 0; min-width: 0; }\n"
    ".figure svg { display: block; width: 100%; max-width: 100%; height: auto;\n"
    "  background: #fff; }\n"
    "ul.views { columns: 16em; padding-left: 1.2em; }\n"
    "ul.views ul { padding-left: 1.2em; }\n"
    "ul.notes { padding-left: 1.2em; }\n"
    "</style>\n";

/* A view read whole (or its first max bytes): len bytes at *text, NUL-ended. */
static int read_view(const struct tm_open_trace *ot, unsigned v, uint64_t max, char **text,
		     size_t *len)
{
	struct tm_reader r;
	int err = tm_reader_open(&r, ot, v);
	if (err)
		return err;
	uint64_t size = tm_reader_size(&r);
	if (size > max)
		size = max;
	char *buf = malloc((size_t)size + 1);
	size_t got = 0;
	err = buf ? 0 : -ENOMEM;
	while (!err && got < size) {
		ssize_t n = tm_reader_read(&r, buf + got, (size_t)size - got, got);
		if (n < 0)
			err = (int)n;
		else if (n == 0)
			break;
		else
			got += (size_t)n;
	}
	tm_reader_close(&r);
	if (err) {
		free(buf);
		return err;
	}
	buf[got] = '\0';
	*text = buf;
	*len = got;
	return 0;
}

/* An integer as people read it (thin spaces between groups of three digits past 4 digits),
 * its exact value in data-v. */
static void put_int(FILE *f, int64_t v)
{
	char digits[32];
	int n = snprintf(digits, sizeof(digits), "%" PRId64, v);
	int sign = v < 0, len = n - sign;
	fprintf(f, "<span class=\"num\" data-v=\"%s\">", digits);
	for (int i = 0; i < n; i++) {
		fputc(digits[i], f);
		int left = n - 1 - i; /* digits after this one */
		if (i >= sign && len > 4 && left > 0 && left % 3 == 0)
			fputs("&#8239;", f);
	}
	fputs("</span>", f);
}

/* Whether v is a JSON scalar (neither object nor array). */
static int is_scalar(json_object *v)
{
	return !json_object_is_type(v, json_type_object) &&
	       !json_object_is_type(v, json_type_array);
}

/* Whether object v holds scalars only: shown as pairs that flow in columns, since such
 * objects (counts by name) run long. */
static int is_flat(json_object *v)
{
	json_object_object_foreach(v, key, val)
	{
		(void)key;
		if (!is_scalar(val))
			return 0;
	}
	return 1;
}

static void put_json(FILE *f, json_object *v);

/* The keys of object v whose values are scalars (only those when scalars_only) as a list of
 * key and value pairs that flows in as many columns as fit. */
static void put_pairs(FILE *f, json_object *v, int scalars_only)
{
	fputs("<dl class=\"pairs\" data-t=\"object\">", f);
	json_object_object_foreach(v, key, val)
	{
		if (scalars_only && !is_scalar(val))
			continue;
		fputs("<div><dt>", f);
		tm_html_put(f, key);
		fputs("</dt><dd>", f);
		put_json(f, val);
		fputs("</dd></div>", f);
	}
	fputs("</dl>", f);
}

/* A JSON value readably: an object as a table of its keys, an array as a list, a number with
 * its exact value in data-v, a string as text; each element says its type in data-t. */
static void put_json(FILE *f, json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null: fputs("<span class=\"null\" data-t=\"null\">null</span>", f); break;
	case json_type_boolean:
		fprintf(f, "<span data-t=\"bool\">%s</span>",
			json_object_get_boolean(v) ? "true" : "false");
		break;
	case json_type_int:
		if (json_object_get_int64(v) == INT64_MAX && json_object_get_uint64(v) > INT64_MAX)
			fprintf(f, "<span class=\"num\" data-v=\"%" PRIu64 "\">%" PRIu64 "</span>",
				json_object_get_uint64(v), json_object_get_uint64(v));
		else
			put_int(f, json_object_get_int64(v));
		break;
	case json_type_double: {
		const char *s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
		fprintf(f, "<span class=\"num\" data-v=\"%s\">%s</span>", s, s);
		break;
	}
	case json_type_string:
		fputs("<span data-t=\"str\">", f);
		tm_html_put_n(f, json_object_get_string(v), (size_t)json_object_get_string_len(v));
		fputs("</span>", f);
		break;
	case json_type_array: {
		size_t n = json_object_array_length(v);
		if (n == 0) {
			fputs("<span data-t=\"array\">none</span>", f);
			break;
		}
		fputs("<ul class=\"list\" data-t=\"array\">", f);
		for (size_t i = 0; i < n; i++) {
			fputs("<li>", f);
			put_json(f, json_object_array_get_idx(v, i));
			fputs("</li>", f);
		}
		fputs("</ul>", f);
		break;
	}
	case json_type_object:
		if (is_flat(v)) {
			put_pairs(f, v, 0);
			break;
		}
		fputs("<table data-t=\"object\">", f);
		json_object_object_foreach(v, key, val)
		{
			fputs("<tr><th>", f);
			tm_html_put(f, key);
			fputs("</th><td>", f);
			put_json(f, val);
			fputs("</td></tr>", f);
		}
		fputs("</table>", f);
		break;
	}
}

/* Whether stats.json's key holds counters of tracemount's own workings (how the plots cut the
 * trace), which say nothing of the trace: left out of the details. */
static int is_internal(const char *key)
{
	return strcmp(key, "plots") == 0;
}

/* stats.json's count named key, or -1. */
static int64_t stats_count(json_object *stats, const char *key)
{
	json_object *count = NULL;
	if (json_object_object_get_ex(stats, key, &count) &&
	    json_object_is_type(count, json_type_int))
		return json_object_get_int64(count);
	return -1;
}

/* Splits the first lines of errors.txt's text into its problems and its notes (diag.h: the
 * lines that start "note: "), at most ERROR_LINES of each. */
static void split_lines(const char *text, size_t len, FILE *problems, FILE *notes)
{
	size_t at = 0, n_problems = 0, n_notes = 0;
	while (at < len && (n_problems < ERROR_LINES || n_notes < ERROR_LINES)) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) + 1 : len;
		bool note = end - at >= 6 && memcmp(text + at, "note: ", 6) == 0;
		if (note && n_notes++ < ERROR_LINES)
			tm_html_put_n(notes, text + at, end - at);
		else if (!note && n_problems++ < ERROR_LINES)
			tm_html_put_n(problems, text + at, end - at);
		at = end;
	}
}

/* A count and its noun, or the noun alone when the count is not known. */
static void put_count(FILE *f, int64_t n, const char *one, const char *many, const char *unknown)
{
	if (n < 0) {
		fputs(unknown, f);
		return;
	}
	put_int(f, n);
	fputs(n == 1 ? one : many, f);
}

/* The errors: how many stats.json counts, the first problem lines of errors.txt, a link to it
 * all; then its notes, hints that are no problem of the trace. */
static int put_errors(FILE *f, const struct tm_open_trace *ot, json_object *stats, int errors_view)
{
	int64_t n = stats_count(stats, "errors"), n_notes = stats_count(stats, "notes");
	fputs("<div class=\"section\" id=\"errors\">\n<h2>Errors</h2>\n", f);
	if (errors_view < 0) {
		fputs("<p>This trace has no errors.txt.</p>\n</div>\n", f);
		return 0;
	}
	char *text = NULL, *problems = NULL, *notes = NULL;
	size_t len = 0, problems_len = 0, notes_len = 0;
	int err = read_view(ot, (unsigned)errors_view, ERROR_BYTES, &text, &len);
	if (err)
		return err;
	FILE *pf = open_memstream(&problems, &problems_len),
	     *nf = open_memstream(&notes, &notes_len);
	err = pf && nf ? 0 : -ENOMEM;
	if (!err)
		split_lines(text, len, pf, nf);
	if (pf && fclose(pf))
		err = -ENOMEM;
	if (nf && fclose(nf))
		err = -ENOMEM;
	if (!err && n == 0 && problems_len == 0) {
		fputs("<p>No errors", f);
		fputs(notes_len ? " in <a href=\"errors.txt\">errors.txt</a>.</p>\n"
				: ": <a href=\"errors.txt\">errors.txt</a> is empty.</p>\n",
		      f);
	} else if (!err) {
		fputs("<p>", f);
		put_count(f, n, " error", " errors", "Errors");
		fprintf(f,
			"; the first lines of <a href=\"errors.txt\">errors.txt</a>:</p>\n"
			"<pre id=\"error-lines\">%.*s</pre>\n",
			(int)problems_len, problems);
	}
	if (!err && notes_len) {
		fputs("<p>", f);
		put_count(f, n_notes, " note", " notes", "Notes");
		fprintf(f, ", not errors:</p>\n<pre id=\"note-lines\">%.*s</pre>\n", (int)notes_len,
			notes);
	}
	free(problems);
	free(notes);
	free(text);
	fputs("</div>\n", f);
	return err;
}

/* Whether view path p is a plot to show inline: plots/NAME.svg. */
static int is_plot(const char *p)
{
	size_t len = strlen(p);
	return strncmp(p, "plots/", 6) == 0 && !strchr(p + 6, '/') && len > 10 &&
	       strcmp(p + len - 4, ".svg") == 0;
}

/* The plots shown first, the most telling: where the time goes, what the records are, where
 * in memory they go; the others follow in the order of the trace's views. */
static const char *const first_plots[] = {"plots/hot.svg", "plots/mix.svg", "plots/addresses.svg"};
#define N_FIRST_PLOTS (sizeof(first_plots) / sizeof(first_plots[0]))

static unsigned plot_rank(const char *path)
{
	unsigned k = 0;
	while (k < N_FIRST_PLOTS && strcmp(path, first_plots[k]) != 0)
		k++;
	return k;
}

/* The text of the first attribute name="..." of the svg element, or NULL; *len its bytes, as
 * written (the plots escape for XML, which HTML reads alike). */
static const char *svg_attr(const char *svg, const char *name, size_t *len)
{
	const char *tag = strstr(svg, "<svg "), *end = tag ? strchr(tag, '>') : NULL;
	size_t n = strlen(name);
	for (const char *p = tag; p && p < end; p++)
		if (p[-1] == ' ' && strncmp(p, name, n) == 0 && p[n] == '=' && p[n + 1] == '"') {
			const char *q = memchr(p + n + 2, '"', (size_t)(end - p - n - 2));
			if (!q)
				return NULL;
			*len = (size_t)(q - p - n - 2);
			return p + n + 2;
		}
	return NULL;
}

/* A plot inline: its SVG without the XML declaration, which HTML has no place for. A plot with
 * nothing to show (data-note on its svg element) is a line of the list of notes instead. */
static int put_plot(FILE *f, FILE *notes, const struct tm_open_trace *ot, unsigned v,
		    const char *path)
{
	char *svg = NULL;
	size_t len = 0, note_len = 0;
	int err = read_view(ot, v, UINT64_MAX, &svg, &len);
	if (err)
		return err;
	const char *note = svg_attr(svg, "data-note", &note_len);
	if (note) {
		const char *title = strstr(svg, "<title>"), *title_end = strstr(svg, "</title>");
		fputs("<li><a href=\"", notes);
		tm_html_put_url_path(notes, path);
		fputs("\">", notes);
		tm_html_put(notes, path);
		fputs("</a>: ", notes);
		if (title && title_end > title)
			fprintf(notes, "%.*s: ", (int)(title_end - title - 7), title + 7);
		fprintf(notes, "%.*s</li>\n", (int)note_len, note);
		free(svg);
		return 0;
	}
	const char *start = svg;
	if (strncmp(start, "<?xml", 5) == 0) {
		const char *end = strstr(start, "?>");
		start = end ? end + 2 : start + len;
		while (*start == '\n')
			start++;
	}
	fputs("<div class=\"figure\">\n", f);
	fwrite(start, 1, len - (size_t)(start - svg), f);
	fputs("<p class=\"caption\"><a href=\"", f);
	tm_html_put_url_path(f, path);
	fputs("\">", f);
	tm_html_put(f, path);
	fputs("</a></p>\n</div>\n", f);
	free(svg);
	return 0;
}

/* The plots section: the plots, the most telling first, then a line for each with nothing to
 * show. */
static int put_plots(FILE *f, const struct tm_open_trace *ot, const struct tm_view_table *t)
{
	char *notes_text = NULL;
	size_t notes_len = 0;
	FILE *notes = open_memstream(&notes_text, &notes_len);
	if (!notes)
		return -ENOMEM;
	fputs("<div class=\"section\" id=\"plots\">\n<h2>Plots</h2>\n<div class=\"plots\">\n", f);
	int err = 0;
	unsigned n_plots = 0;
	for (unsigned rank = 0; rank <= N_FIRST_PLOTS; rank++)
		for (unsigned i = 0; i < t->n_views && !err; i++) {
			const char *path = t->views[i].path;
			if (!is_plot(path) || plot_rank(path) != rank)
				continue;
			int exists = tm_view_exists(ot, i);
			if (exists > 0 && (err = put_plot(f, notes, ot, i, path)) == 0)
				n_plots++;
			else if (exists < 0)
				err = exists;
		}
	if (fclose(notes) != 0 && !err)
		err = -ENOMEM;
	fputs("</div>\n", f);
	if (!err && notes_len)
		fprintf(f, "<p>Nothing to show:</p>\n<ul class=\"notes\">\n%.*s</ul>\n",
			(int)notes_len, notes_text);
	free(notes_text);
	if (!n_plots)
		fputs("<p>This trace has no plots.</p>\n", f);
	fputs("</div>\n", f);
	return err;
}

/* One view's link, in the list of its folder. */
static void put_view_link(FILE *f, const char *path, const char *name)
{
	fputs("<li><a href=\"", f);
	tm_html_put_url_path(f, path);
	fputs("\">", f);
	tm_html_put(f, name);
	fputs("</a></li>\n", f);
}

struct views_walk {
	FILE *f;
	const struct tm_open_trace *ot;
	const struct tm_view_table *t;
	char dir[PATH_MAX];
	int err;
};

/* The entries of folder w->dir: its views that exist, its folders as nested lists. */
static int put_entry(void *arg, const char *name, int is_dir, unsigned view)
{
	struct views_walk *w = arg;
	if (!is_dir) {
		int exists = tm_view_exists(w->ot, view);
		if (exists < 0)
			return w->err = exists;
		if (exists)
			put_view_link(w->f, w->t->views[view].path, name);
		return 0;
	}
	size_t len = strlen(w->dir);
	if (snprintf(w->dir + len, sizeof(w->dir) - len, "%s%s", len ? "/" : "", name) >=
	    (int)(sizeof(w->dir) - len))
		return w->err = -ENAMETOOLONG;
	/* the folder's list is written apart, then dropped when no view in it exists */
	char *sub = NULL;
	size_t sub_len = 0;
	FILE *outer = w->f;
	w->f = open_memstream(&sub, &sub_len);
	if (!w->f) {
		w->f = outer;
		return w->err = -ENOMEM;
	}
	int stop = tm_view_table_list(w->t, w->dir, put_entry, w);
	if (fclose(w->f) != 0 && !stop)
		stop = w->err = -ENOMEM;
	w->f = outer;
	if (!stop && sub_len) {
		fputs("<li><span class=\"dir\">", w->f);
		tm_html_put(w->f, name);
		fputs("/</span>\n<ul>\n", w->f);
		fwrite(sub, 1, sub_len, w->f);
		fputs("</ul></li>\n", w->f);
	}
	free(sub);
	w->dir[len] = '\0';
	return stop;
}

/* The trace's name: its path's last component. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static int write_page(FILE *f, const struct tm_open_trace *ot, const char *path)
{
	const struct tm_view_table *t = tm_trace_views(ot->trace);
	int stats_view = -1, errors_view = -1;
	for (unsigned i = 0; i < t->n_views; i++) {
		if (t->views[i].kind == TM_VIEW_STATS && stats_view < 0)
			stats_view = (int)i;
		if (t->views[i].kind == TM_VIEW_ERRORS && errors_view < 0)
			errors_view = (int)i;
	}
	char *text = NULL;
	size_t len = 0;
	int err =
	    stats_view < 0 ? -ENOENT : read_view(ot, (unsigned)stats_view, UINT64_MAX, &text, &len);
	if (err)
		return err;
	json_object *stats = json_tokener_parse(text);
	free(text);
	if (!stats || !json_object_is_type(stats, json_type_object)) {
		json_object_put(stats);
		return -EIO; /* stats.json is tracemount's own: this is not expected */
	}
	const char *name = base_name(path);
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
	      f);
	tm_html_put(f, name);
	fputs(": tracemount</title>\n", f);
	fputs(page_style, f);
	fputs("</head>\n<body>\n<h1>", f);
	tm_html_put(f, name);
	fputs("</h1>\n<p>A ", f);
	tm_html_put(f, tm_trace_format(ot->trace)->name);
	fputs(" trace at <code>", f);
	tm_html_put(f, path);
	fputs("</code> in the mount. Sections: <a href=\"#facts\">facts</a>, <a "
	      "href=\"#errors\">errors</a>, <a href=\"#plots\">plots</a>, <a "
	      "href=\"#details\">details</a>, <a href=\"#views\">views</a>.</p>\n",
	      f);

	fputs("<div class=\"section\" id=\"facts\">\n<h2>Facts</h2>\n<p>From <a "
	      "href=\"stats.json\">stats.json"
	      "</a>; its objects under <a href=\"#details\">details</a>.</p>\n",
	      f);
	put_pairs(f, stats, 1);
	fputs("\n</div>\n", f);
	err = put_errors(f, ot, stats, errors_view);

	if (!err)
		err = put_plots(f, ot, t);

	fputs("<div class=\"section\" id=\"details\">\n<h2>Details</h2>\n<p>The objects of <a "
	      "href=\"stats.json\">stats.json</a>.</p>\n",
	      f);
	json_object_object_foreach(stats, key, val)
	{
		if (is_scalar(val) || is_internal(key))
			continue;
		fputs("<h3>", f);
		tm_html_put(f, key);
		fputs("</h3>\n<div class=\"detail\" data-key=\"", f);
		tm_html_put(f, key);
		fputs("\">", f);
		put_json(f, val);
		fputs("</div>\n", f);
	}
	json_object_put(stats);
	fputs("</div>\n", f);

	fputs("<div class=\"section\" id=\"views\">\n<h2>Views</h2>\n<p>The files of this "
	      "folder.</p>\n"
	      "<ul class=\"views\">\n",
	      f);
	struct views_walk w = {.f = f, .ot = ot, .t = t};
	if (!err)
		err = tm_view_table_list(t, "", put_entry, &w) ? w.err : 0;
	fputs("</ul>\n</div>\n<p>tracemount " TM_VERSION "</p>\n</body>\n</html>\n", f);
	return err;
}

int tm_fs_trace_report_html(struct tm_fs *fs, const struct tm_node *n, char **text, size_t *len)
{
	struct tm_source src;
	struct tm_open_trace ot;
	int err = tm_fs_node_source(fs, n, &src);
	if (err)
		return err;
	tm_trace_open(&ot, n->trace, &src);
	FILE *f = open_memstream(text, len);
	err = f ? tm_trace_products(&ot, TM_PRODUCTS_ALL) : -ENOMEM;
	if (!err)
		err = write_page(f, &ot, tm_trace_path(n->trace));
	if (f && fclose(f) != 0 && !err)
		err = -ENOMEM;
	tm_trace_close(&ot);
	tm_source_close(&src);
	if (err && f) {
		free(*text);
		*text = NULL;
	}
	return err;
}
