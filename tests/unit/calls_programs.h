/* Event sequences of known call structure for the tests of src/calls, and a view rendered to
 * a string. */
#ifndef TM_TEST_CALLS_PROGRAMS_H
#define TM_TEST_CALLS_PROGRAMS_H

#include <stddef.h>
#include <stdio.h>

#include "calls/calls.h"

enum {
	P = TM_CALL_KIND_PLAIN,
	C = TM_CALL_KIND_CALL,
	R = TM_CALL_KIND_RETURN,
	J = TM_CALL_KIND_TRANSFER
};

struct program {
	struct tm_call_event ev[256];
	size_t n;
};

/* Appends a 4-byte instruction numbered n + 1, with no stack pointer, time or target. */
void at(struct program *p, uint64_t pc, uint8_t kind);
/* The same with a stack pointer. */
void at_sp(struct program *p, uint64_t pc, uint8_t kind, uint64_t sp);
/* Gives every event the time 10 * its number. */
void add_times(struct program *p);

/* main at 0x1000 calls f at 0x2000, which calls g at 0x3000; both return (8 instructions). */
void nested(struct program *p);
/* 0x1000 calls f at 0x2000, which calls itself twice from 0x2004 (12 instructions). */
void recursion(struct program *p);
/* 0x1000 calls g (0x3000), then f (0x2000), which jumps to g's entry: a tail call. */
void tail_call(struct program *p);
/* 0x1000 calls f, f calls g, and g jumps back into main with main's stack pointer. */
void longjmp_like(struct program *p);

/* A tracker fed p's events in batches of batch (0: one batch), finished. */
struct tm_calls *track(const struct program *p, const struct tm_calls_config *cfg, size_t batch);

/* What write(t, out) writes, NUL-terminated (malloc'ed). */
char *render(const struct tm_calls *t, int (*write)(const struct tm_calls *, FILE *));

#endif
