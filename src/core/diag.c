/* errors.txt text, built as problems are reported. */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/diag.h"

void tm_diag_init(struct tm_diag *d)
{
	memset(d, 0, sizeof(*d));
}

void tm_diag_free(struct tm_diag *d)
{
	free(d->text);
	memset(d, 0, sizeof(*d));
}

static int diag_reserve(struct tm_diag *d, size_t more)
{
	if (d->len + more <= d->cap)
		return 0;
	size_t cap = d->cap ? d->cap : 256;
	while (cap < d->len + more)
		cap *= 2;
	char *text = realloc(d->text, cap);
	if (!text)
		return -ENOMEM;
	d->text = text;
	d->cap = cap;
	return 0;
}

#define MAX_ENTRY 512 /* bytes of an entry, its newline included: a longer one is cut */

/* Adds a line: head (NULL for none), then the message. Returns whether it was kept. */
static bool diag_vadd(struct tm_diag *d, const char *head, const char *fmt, va_list ap)
{
	char line[MAX_ENTRY];
	int n = 0;

	if (d->len >= TM_DIAG_MAX_BYTES)
		return false;
	if (head)
		n = snprintf(line, sizeof(line), "%s", head);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	if ((size_t)n >= sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (diag_reserve(d, (size_t)n) < 0) {
		d->err = -ENOMEM;
		return false;
	}
	memcpy(d->text + d->len, line, (size_t)n);
	d->len += (size_t)n;
	return true;
}

/* A problem at a place (prefix and where) or of the whole trace (prefix NULL). */
static void diag_vproblem(struct tm_diag *d, const char *prefix, uint64_t where, const char *fmt,
			  va_list ap)
{
	char head[sizeof("offset 18446744073709551615: ")] = "";
	if (prefix)
		snprintf(head, sizeof(head), "%s %" PRIu64 ": ", prefix, where);
	d->count++;
	if (!diag_vadd(d, head, fmt, ap))
		d->dropped++;
}

void tm_diag_at(struct tm_diag *d, uint64_t offset, const char *fmt, ...)
{
	va_list ap;
	if (!d)
		return;
	va_start(ap, fmt);
	diag_vproblem(d, "offset", offset, fmt, ap);
	va_end(ap);
}

void tm_diag_truncated(struct tm_diag *d, uint64_t offset, const char *fmt, ...)
{
	va_list ap;
	if (!d)
		return;
	d->truncated = true;
	va_start(ap, fmt);
	diag_vproblem(d, "offset", offset, fmt, ap);
	va_end(ap);
}

void tm_diag_line(struct tm_diag *d, uint64_t line, const char *fmt, ...)
{
	va_list ap;
	if (!d)
		return;
	va_start(ap, fmt);
	diag_vproblem(d, "line", line, fmt, ap);
	va_end(ap);
}

void tm_diag_note(struct tm_diag *d, const char *fmt, ...)
{
	va_list ap;
	if (!d)
		return;
	va_start(ap, fmt);
	diag_vproblem(d, NULL, 0, fmt, ap);
	va_end(ap);
}

void tm_diag_hint(struct tm_diag *d, const char *fmt, ...)
{
	va_list ap;
	if (!d)
		return;
	d->notes++;
	va_start(ap, fmt);
	diag_vadd(d, "note: ", fmt, ap);
	va_end(ap);
}

int tm_diag_finish(struct tm_diag *d)
{
	char line[sizeof("18446744073709551615 more problems not listed\n")];
	if (!d->dropped)
		return d->err;
	int n = snprintf(line, sizeof(line), "%" PRIu64 " more problems not listed\n", d->dropped);
	if (diag_reserve(d, (size_t)n) < 0)
		return -ENOMEM;
	memcpy(d->text + d->len, line, (size_t)n);
	d->len += (size_t)n;
	return d->err;
}
