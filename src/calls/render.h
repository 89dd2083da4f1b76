/* What the views of calls/ share (calls_render.c, flamegraph.c): private to src/calls. */
#ifndef TRACEMOUNT_CALLS_RENDER_H
#define TRACEMOUNT_CALLS_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "calls/calls.h"

/* The names of a finished tracker's functions, index by index, made safe for every view:
 * printable ASCII, ';' (the folded stacks' separator) as ':', other bytes as '?'. name is
 * what the views show (a C++ symbol demangled), symbol the name in the image (the same
 * pointer where nothing was demangled), for profile.json and the tooltips. */
struct tm_calls_names {
	char **name;
	char **symbol;
	size_t n;
};

int tm_calls_names_init(const struct tm_calls *t, struct tm_calls_names *out);
void tm_calls_names_free(struct tm_calls_names *names);
/* The shown name of function f, or of node 0's empty stack ("all") for f == UINT32_MAX. */
const char *tm_calls_name(const struct tm_calls_names *names, uint32_t f);
/* Its symbol, mangled as in the image ("all" for UINT32_MAX). */
const char *tm_calls_symbol(const struct tm_calls_names *names, uint32_t f);

/* A function's costs over the trace: its entries, and its instructions and time, inclusive
 * (outermost activations only) and exclusive. */
struct tm_function_cost {
	uint32_t function;
	uint64_t calls;
	uint64_t incl_insns, excl_insns, incl_time, excl_time;
};

/* What the profiles and plots/hot.svg show: the counts, the functions' names, and the costs
 * of the functions that ran, by inclusive instructions, then exclusive, then first seen. */
struct tm_calls_profile {
	struct tm_calls_counts c;
	struct tm_calls_names names;
	struct tm_function_cost *cost;
	size_t n;
};

int tm_calls_profile_open(const struct tm_calls *t, struct tm_calls_profile *p);
void tm_calls_profile_close(struct tm_calls_profile *p);

#endif
