/* plots/hot.svg of an instruction trace: its hottest functions by self instructions, as bars
 * (src/plots/bars.c), each with its inclusive instructions drawn lighter behind, its name
 * demangled and its symbol in the tooltip. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "calls/render.h"
#include "plots/bars.h"

/* The tooltip's last line of function f: its symbol where the name shown is demangled, and
 * its entry address; NULL when neither is known. */
static int describe(const struct tm_calls_names *names, uint32_t f, uint64_t addr, char **out)
{
	const char *symbol = tm_calls_symbol(names, f);
	bool demangled = symbol != tm_calls_name(names, f);
	char entry[32] = "";
	if (addr != TM_CALL_UNKNOWN)
		snprintf(entry, sizeof(entry), "entry 0x%" PRIx64, addr);
	*out = NULL;
	if (!demangled && !entry[0])
		return 0;
	int n = demangled ? asprintf(out, "symbol %s%s%s", symbol, entry[0] ? ", " : "", entry)
			  : asprintf(out, "%s", entry);
	if (n < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

int tm_calls_write_hot(const struct tm_calls *t, const char *title, FILE *out)
{
	struct tm_calls_profile p;
	int err = tm_calls_profile_open(t, &p);
	if (err)
		return err;
	size_t n_fn;
	const struct tm_calls_function *fn = tm_calls_functions(t, &n_fn);
	struct tm_bar *bar = calloc(p.n ? p.n : 1, sizeof(*bar));
	char **entry = calloc(p.n ? p.n : 1, sizeof(*entry));
	if (!bar || !entry) {
		free(bar);
		free(entry);
		tm_calls_profile_close(&p);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p.n && !err; i++) {
		const struct tm_function_cost *c = &p.cost[i];
		err = describe(&p.names, c->function, fn[c->function].addr, &entry[i]);
		bar[i] = (struct tm_bar){
		    .name = tm_calls_name(&p.names, c->function),
		    .value = c->excl_insns,
		    .total = c->incl_insns,
		    .key = c->function, /* functions are numbered as they first run */
		    .extra = c->calls,
		    .detail = entry[i],
		};
	}
	char desc[160];
	snprintf(desc, sizeof(desc),
		 "The functions that ran the most instructions of their own, of %" PRIu64
		 " instructions.",
		 p.c.instructions);
	const struct tm_bars_chart chart = {
	    .title = title,
	    .things = "functions",
	    .desc = desc,
	    .x_label = "instructions executed",
	    .y_label = "function, hottest first",
	    .value_name = "self instructions",
	    .total_name = "total, with callees",
	    .extra_name = "calls",
	    .empty = "no calls: the trace ran no instructions",
	    .whole = p.c.instructions,
	    .has_total = true,
	};
	if (!err)
		err = tm_plot_bars(out, &chart, bar, p.n);
	for (size_t i = 0; i < p.n; i++)
		free(entry[i]);
	free(bar);
	free(entry);
	tm_calls_profile_close(&p);
	return err;
}
