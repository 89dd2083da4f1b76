/* The one list of derivers (derive.h). Adding one: one file, one line in TM_DERIVER_LIST here, one
 * meson line. */
#include "tracemount/derive.h"

/* One line per deriver, in the order of their views and stats.json objects: DERIVER(x)
 * stands for the table tm_deriver_x. */
#define TM_DERIVER_LIST(DERIVER)                                                                   \
	DERIVER(spix)  /* spix/: basic-block counts, as SpixTools makes them */                    \
	DERIVER(calls) /* calls/: call trees, profiles, folded stacks, flame graphs */             \
	DERIVER(plots) /* plots/: SVG plots of every trace's records */

#define DECLARE_DERIVER(x) extern const struct tm_deriver tm_deriver_##x;
#define LIST_DERIVER(x)	   &tm_deriver_##x,

TM_DERIVER_LIST(DECLARE_DERIVER)

const struct tm_deriver *const tm_derivers[] = {TM_DERIVER_LIST(LIST_DERIVER) NULL};

unsigned tm_derived_views(const struct tm_format *fmt)
{
	unsigned n = 0;
	for (const struct tm_deriver *const *d = tm_derivers; *d; d++)
		n += tm_deriver_applies(*d, fmt) ? (*d)->n_outputs : 0;
	return n;
}

unsigned tm_derived_stream_views(const struct tm_format *fmt)
{
	unsigned n = 0;
	for (const struct tm_deriver *const *d = tm_derivers; *d; d++)
		n += tm_deriver_applies(*d, fmt) ? (*d)->n_stream_outputs : 0;
	return n;
}
