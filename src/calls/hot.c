/* plots/hot.svg of an instruction trace: its hottest functions by self instructions, as bars
 * (src/plots/bars.c), each with its inclusive instructions drawn lighter behind. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "calls/render.h"
#include "plots/bars.h"

int tm_calls_write_hot(const struct tm_calls *t, const char *title, FILE *out)
{
	struct tm_calls_profile p;
	int err = tm_calls_profile_open(t, &p);
	if (err)
		return err;
	size_t n_fn;
	const struct tm_calls_function *fn = tm_calls_functions(t, &n_fn);
	struct tm_bar *bar = calloc(p.n ? p.n : 1, sizeof(*bar));
	char(*entry)[32] = calloc(p.n ? p.n : 1, sizeof(*entry));
	if (!bar || !entry) {
		free(bar);
		free(entry);
		tm_calls_profile_close(&p);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p.n; i++) {
		const struct tm_function_cost *c = &p.cost[i];
		uint64_t addr = fn[c->function].addr;
		if (addr != TM_CALL_UNKNOWN)
			snprintf(entry[i], sizeof(entry[i]), "entry 0x%" PRIx64, addr);
		bar[i] = (struct tm_bar){
		    .name = tm_calls_name(&p.names, c->function),
		    .value = c->excl_insns,
		    .total = c->incl_insns,
		    .key = c->function, /* functions are numbered as they first run */
		    .extra = c->calls,
		    .detail = entry[i][0] ? entry[i] : NULL,
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
	err = tm_plot_bars(out, &chart, bar, p.n);
	free(bar);
	free(entry);
	tm_calls_profile_close(&p);
	return err;
}
