/* .tracemount/report.html: every trace under SOURCE in one sortable table, rendered when
 * opened from what the context knows (no trace is indexed for it). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/context.h"
#include "tracemount/format.h"
#include "tracemount/fs.h"
#include "tracemount/trace.h"
#include "tracemount/util.h"

#include "html.h"

/* The page's style and sorting, one block each: no file, font or script from elsewhere, so
 * that it opens the same from file:// with no network. */
static const char page_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<title>tracemount: the traces of this mount</title>\n<style>\n"
    ":root { color-scheme: light dark; font-family: system-ui, sans-serif;\n"
    "  font-size: clamp(14px, 0.4vw + 10px, 24px); }\n"
    "body { margin: 0 auto; padding: 1em 2vw; max-width: 160em; }\n"
    "h1 { font-size: 1.4em; }\n"
    "table { border-collapse: collapse; width: 100%; }\n"
    "th, td { padding: 0.3em 0.6em; border-bottom: 1px solid #8884; text-align: left;\n"
    "  vertical-align: top; }\n"
    "td.path { overflow-wrap: anywhere; }\n"
    "td.state { white-space: nowrap; }\n"
    "td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }\n"
    "th button { font: inherit; font-weight: bold; color: inherit; background: none;\n"
    "  border: 0; padding: 0; cursor: pointer; }\n"
    "th[aria-sort=ascending] button::after { content: \" \\25B2\"; }\n"
    "th[aria-sort=descending] button::after { content: \" \\25BC\"; }\n"
    "tr.indexed td.state { color: #2a7d2a; }\n"
    "tr.failed td.state { color: #c0392b; }\n"
    "tr.indexing td.state { color: #b7791f; }\n"
    "</style>\n</head>\n<body>\n";

static const char page_script[] =
    "<script>\n"
    "// Sorts the rows by the column whose header is clicked, again to reverse.\n"
    "(function () {\n"
    "  var table = document.getElementById('traces'), body = table.tBodies[0];\n"
    "  var heads = table.tHead.rows[0].cells;\n"
    "  function key(row, c, numeric) {\n"
    "    var cell = row.cells[c];\n"
    "    return numeric ? Number(cell.getAttribute('data-v')) : cell.textContent;\n"
    "  }\n"
    "  Array.prototype.forEach.call(heads, function (th, c) {\n"
    "    th.querySelector('button').addEventListener('click', function () {\n"
    "      var numeric = th.classList.contains('n');\n"
    "      var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;\n"
    "      var rows = Array.prototype.slice.call(body.rows);\n"
    "      rows.sort(function (a, b) {\n"
    "        var x = key(a, c, numeric), y = key(b, c, numeric);\n"
    "        return x < y ? -dir : x > y ? dir : 0;\n"
    "      });\n"
    "      rows.forEach(function (r) { body.appendChild(r); });\n"
    "      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });\n"
    "      th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');\n"
    "    });\n"
    "  });\n"
    "})();\n"
    "</script>\n";

/* A size in bytes as people read it ("1.5 MiB"), the exact count in the cell's data-v. */
static void put_size(FILE *f, uint64_t bytes)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)bytes;
	unsigned u = 0;
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		fprintf(f, "%" PRIu64 " B", bytes);
	else
		fprintf(f, "%.1f %s", v, units[u]);
}

struct report {
	struct tm_fs *fs;
	FILE *rows;		       /* the table's rows */
	FILE *unread;		       /* the list of folders that could not be read */
	size_t n[TM_TRACE_FAILED + 1]; /* traces by state */
	size_t n_unread;
};

/* The row's class, for the state's colour, by state. */
static const char *const state_classes[] = {
    [TM_TRACE_NEW] = "new",
    [TM_TRACE_INDEXING] = "indexing",
    [TM_TRACE_INDEXED] = "indexed",
    [TM_TRACE_FAILED] = "failed",
};

/* The state cell: the trace's state, or not indexed when the mount has not seen its file. */
static void put_state(FILE *f, enum tm_trace_state state, const struct tm_trace_progress *p)
{
	switch (state) {
	case TM_TRACE_NEW: fputs("<td class=\"state\">not indexed</td>", f); break;
	case TM_TRACE_INDEXING:
		fprintf(f, "<td class=\"state\">indexing %u%%</td>",
			p->total ? (unsigned)(p->done * 100 / p->total) : 0);
		break;
	case TM_TRACE_INDEXED: fputs("<td class=\"state\">indexed</td>", f); break;
	case TM_TRACE_FAILED:
		fputs("<td class=\"state\">failed: ", f);
		tm_html_put(f, strerror(-p->error));
		fputs("</td>", f);
		break;
	}
}

/* A folder that cannot be read, named by the walk: an item of the list above the table. */
static void add_unread(void *arg, const char *path, int err)
{
	struct report *r = arg;
	char *shown = tm_escape_name(path);
	fputs("<li>", r->unread);
	tm_html_put(r->unread, shown ? shown : "?");
	fputs(": ", r->unread);
	tm_html_put(r->unread, strerror(-err));
	fputs("</li>\n", r->unread);
	r->n_unread++;
	free(shown);
}

/* One trace's row: path (a link to its report.html), format, size, records, errors, state;
 * records and errors are "-" (sorted first) until indexed. */
static int add_row(struct report *r, const struct tm_fs_found *t)
{
	char *shown = tm_escape_name(t->path);
	if (!shown)
		return -ENOMEM;
	struct tm_trace_progress p = {0};
	enum tm_trace_state state =
	    tm_context_progress_of(r->fs->ctx, t->path, t->fmt, &t->st, &p) == 0 ? p.state
										 : TM_TRACE_NEW;
	r->n[state]++;
	FILE *f = r->rows;
	fprintf(f, "<tr class=\"%s\"><td class=\"path\"><a href=\"../", state_classes[state]);
	tm_html_put_url_path(f, t->path);
	fputs("/report.html\">", f);
	tm_html_put(f, shown);
	fputs("</a></td><td>", f);
	tm_html_put(f, t->fmt->name);
	uint64_t size = (uint64_t)t->st.st_size;
	fprintf(f, "</td><td class=\"n\" data-v=\"%" PRIu64 "\" title=\"%" PRIu64 " bytes\">", size,
		size);
	put_size(f, size);
	if (state == TM_TRACE_INDEXED)
		fprintf(f,
			"</td><td class=\"n\" data-v=\"%" PRIu64 "\">%" PRIu64
			"</td><td class=\"n\" data-v=\"%" PRIu64 "\">%" PRIu64 "</td>",
			p.records, p.records, p.problems, p.problems);
	else
		fputs(
		    "</td><td class=\"n\" data-v=\"-1\">-</td><td class=\"n\" data-v=\"-1\">-</td>",
		    f);
	put_state(f, state, &p);
	fputs("</tr>\n", f);
	free(shown);
	return 0;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct tm_fs_found *)a)->path, ((const struct tm_fs_found *)b)->path);
}

/* Closes a memory stream: 0, or -ENOMEM (its text then freed and NULL). */
static int close_stream(FILE *f, char **text)
{
	if (fclose(f) == 0)
		return 0;
	free(*text);
	*text = NULL;
	return -ENOMEM;
}

int tm_fs_report_html(struct tm_fs *fs, char **text, size_t *len)
{
	struct report r = {.fs = fs};
	char *rows = NULL, *unread = NULL;
	size_t rows_len = 0, unread_len = 0;
	r.rows = open_memstream(&rows, &rows_len);
	r.unread = open_memstream(&unread, &unread_len);
	int err = r.rows && r.unread ? 0 : -ENOMEM;
	struct tm_fs_found *found = NULL;
	size_t n_found = 0;
	if (!err)
		err = tm_fs_find_traces(fs, add_unread, &r, &found, &n_found);
	if (n_found) /* the files in the walk's order, then the virtual traces: sorted as one */
		qsort(found, n_found, sizeof(*found), by_path);
	for (size_t i = 0; i < n_found && !err; i++)
		err = add_row(&r, &found[i]);
	tm_fs_found_free(found, n_found);
	if (r.rows && close_stream(r.rows, &rows) < 0)
		err = -ENOMEM;
	if (r.unread && close_stream(r.unread, &unread) < 0)
		err = -ENOMEM;
	FILE *f = err ? NULL : open_memstream(text, len);
	if (!f) {
		free(rows);
		free(unread);
		return err < 0 ? err : -ENOMEM;
	}
	size_t total = r.n[0] + r.n[1] + r.n[2] + r.n[3];
	fputs(page_head, f);
	fprintf(f,
		"<h1>The traces of this mount</h1>\n<p>%zu traces: %zu indexed, %zu indexing, "
		"%zu not indexed, %zu failed. This page shows them as they stood when it was "
		"opened; a trace is indexed when one of its views is first read.</p>\n",
		total, r.n[TM_TRACE_INDEXED], r.n[TM_TRACE_INDEXING], r.n[TM_TRACE_NEW],
		r.n[TM_TRACE_FAILED]);
	if (r.n_unread)
		fprintf(f, "<p>Folders that could not be read:</p>\n<ul>\n%.*s</ul>\n",
			(int)unread_len, unread);
	fputs("<table id=\"traces\">\n<thead><tr><th><button "
	      "type=\"button\">path</button></th><th><button type=\"button\">format</button></th>"
	      "<th class=\"n\"><button type=\"button\">size</button></th><th class=\"n\"><button "
	      "type=\"button\">records</button></th><th class=\"n\"><button "
	      "type=\"button\">errors</button></th><th><button "
	      "type=\"button\">state</button></th></tr></thead>\n<tbody>\n",
	      f);
	fwrite(rows, 1, rows_len, f);
	fputs("</tbody>\n</table>\n", f);
	fputs(page_script, f);
	fputs("<p>tracemount " TM_VERSION "</p>\n</body>\n</html>\n", f);
	free(rows);
	free(unread);
	return fclose(f) == 0 ? 0 : -ENOMEM;
}
