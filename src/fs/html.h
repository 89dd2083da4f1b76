/* Writing HTML: text escaped for any place in a page, and paths as relative URLs. Shared by
 * the root report (report.c) and a trace's (trace_report.c). */
#ifndef TRACEMOUNT_FS_HTML_H
#define TRACEMOUNT_FS_HTML_H

#include <stddef.h>
#include <stdio.h>

/* s with &, <, >, " and ' as character references: safe in text and in quoted attributes. */
void tm_html_put(FILE *f, const char *s);
/* The same for len bytes of s, which may hold NULs (shown as U+FFFD). */
void tm_html_put_n(FILE *f, const char *s, size_t len);
/* A path as a relative URL: every byte but unreserved ones and '/' percent-encoded, so that
 * any name (spaces, '#', '?', bytes that are not UTF-8) links to itself. */
void tm_html_put_url_path(FILE *f, const char *s);

#endif
