/* Splitting a text trace into lines, for the decoders of text formats (CIS501, QEMU4V and
 * Tarmac). A line is the bytes up to "\n"; the last one may lack it. A line longer than the
 * format's limit is reported and skipped up to its newline, however its bytes are split
 * between decode calls. A CR before the newline is not part of the line's text. */
#ifndef TRACEMOUNT_TEXT_LINES_H
#define TRACEMOUNT_TEXT_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracemount/format.h"

/* The splitter's part of a decoder's state (plain data, stored at checkpoints). */
struct tm_lines {
	uint64_t line;	/* lines consumed: the next one is line + 1 */
	uint32_t flags; /* TM_LINES_* */
	uint32_t pad;
};

enum {
	TM_LINES_SKIPPING = 1,	/* inside an over-long line, up to its newline */
	TM_LINES_CRLF_SEEN = 2, /* a CR LF line was reported: later ones are only counted */
};

struct tm_line {
	const uint8_t *text; /* the line without "\n" or "\r\n" (a last "\r" too) */
	size_t text_len;
	size_t off;	 /* of the line in the decode input */
	size_t raw_len;	 /* bytes the line takes, its newline included */
	uint64_t number; /* 1-based */
	bool newline;	 /* it ends in "\n" (every line but perhaps the trace's last) */
	bool crlf;	 /* it ends in "\r\n" */
};

/* The next line of in from *pos (moved past it) that is at most max_len bytes long: returns
 * true with *l set, or false when the bytes run out (*ret is then -EAGAIN if more may come,
 * else left alone). */
bool tm_lines_next(struct tm_lines *s, const struct tm_decode_in *in, size_t *pos, size_t max_len,
		   struct tm_line *l, int *ret, struct tm_diag *diag);

/* Reports how a kept line ends: without a newline (the trace's last line), or in CR LF (the
 * first such line; later ones are left to the statistics' count). Returns l->crlf. */
bool tm_lines_report_end(struct tm_lines *s, const struct tm_line *l, struct tm_diag *diag);

#endif
