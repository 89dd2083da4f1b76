/* Splitting text traces into lines: see text_lines.h. */
#include <errno.h>
#include <string.h>

#include "text_lines.h"
#include "tracemount/diag.h"

bool tm_lines_next(struct tm_lines *s, const struct tm_decode_in *in, size_t *pos, size_t max_len,
		   struct tm_line *l, int *ret, struct tm_diag *diag)
{
	for (;;) {
		const uint8_t *p = in->buf + *pos;
		size_t left = in->len - *pos;
		if (s->flags & TM_LINES_SKIPPING) { /* the rest of an over-long line */
			const uint8_t *nl = left ? memchr(p, '\n', left) : NULL;
			*pos = nl ? (size_t)(nl + 1 - in->buf) : in->len;
			if (nl || in->at_eof) {
				s->flags &= ~(uint32_t)TM_LINES_SKIPPING;
				s->line++;
			}
			if (nl)
				continue;
			if (!in->at_eof)
				*ret = -EAGAIN;
			return false;
		}
		if (!left) {
			if (!in->at_eof)
				*ret = -EAGAIN;
			return false;
		}
		/* the text of a line has at most max_len bytes, and then "\r\n" */
		size_t scan = left < max_len + 2 ? left : max_len + 2;
		const uint8_t *nl = memchr(p, '\n', scan);
		if (!nl && scan < max_len + 2 && !in->at_eof) {
			*ret = -EAGAIN;
			return false;
		}
		size_t len = nl ? (size_t)(nl - p) : left;
		bool cr = len && p[len - 1] == '\r';
		l->number = s->line + 1;
		l->text_len = len - cr;
		if (l->text_len > max_len) {
			tm_diag_line(diag, l->number, "longer than %zu bytes: line skipped",
				     max_len);
			s->flags |= TM_LINES_SKIPPING;
			continue;
		}
		l->text = p;
		l->off = *pos;
		l->newline = nl != NULL;
		l->crlf = cr && nl;
		l->raw_len = len + l->newline;
		s->line++;
		*pos += l->raw_len;
		return true;
	}
}

bool tm_lines_report_end(struct tm_lines *s, const struct tm_line *l, struct tm_diag *diag)
{
	if (!l->newline)
		tm_diag_line(diag, l->number, "no newline at the end of the trace: line kept");
	if (!l->crlf)
		return false;
	if (!(s->flags & TM_LINES_CRLF_SEEN))
		tm_diag_line(diag, l->number,
			     "line ends in CR LF: kept, CR dropped (stats.json counts such lines "
			     "in crlf_lines)");
	s->flags |= TM_LINES_CRLF_SEEN;
	return true;
}
