/* Problems met while decoding a trace, kept as the text of errors.txt, and notes.
 *
 * Every entry is one line: "offset N: message" or "line N: message", or the bare message for
 * whole-trace findings. A note is no problem of the trace but a hint about reading it (how to
 * recompress it for random access): its line is "note: message", counted apart. Past
 * TM_DIAG_MAX_BYTES of text the entries are counted, not kept, and a last line says how many were
 * left out, so a hostile trace cannot exhaust memory. */
#ifndef TRACEMOUNT_DIAG_H
#define TRACEMOUNT_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TM_DIAG_MAX_BYTES (1u << 20)

struct tm_diag {
	char *text;
	size_t len, cap;
	uint64_t count;	  /* problems reported, kept or not */
	uint64_t notes;	  /* notes reported (tm_diag_hint), kept or not */
	uint64_t dropped; /* entries past the text limit */
	bool truncated;	  /* the trace ends inside a record */
	int err;	  /* -ENOMEM if an entry could not be kept */
};

void tm_diag_init(struct tm_diag *d);
void tm_diag_free(struct tm_diag *d);

/* Report a problem at a trace byte offset. */
void tm_diag_at(struct tm_diag *d, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Report that the trace ends inside a record at offset; sets truncated. */
void tm_diag_truncated(struct tm_diag *d, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Report a problem on a line of a text trace (1-based). */
void tm_diag_line(struct tm_diag *d, uint64_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Report a problem of the whole trace. */
void tm_diag_note(struct tm_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Report a note, not a problem: counted in notes, not count; dropped silently past the text
 * limit. */
void tm_diag_hint(struct tm_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Closes the text: adds the line counting dropped entries. Returns 0 or -ENOMEM. */
int tm_diag_finish(struct tm_diag *d);

#endif
