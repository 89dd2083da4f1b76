/* The one list of derivers (derive.h). Adding one: one file, one line in TM_DERIVER_LIST here, one
 * meson line. */
#include <stdio.h>
#include <string.h>

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

_Static_assert(sizeof(tm_derivers) / sizeof(tm_derivers[0]) <= TM_MAX_PRODUCTS,
	       "each deriver is a product, as are the format's statistics");

uint32_t tm_products_of(const struct tm_format *fmt)
{
	uint32_t mask = TM_PRODUCT_STATS;
	for (unsigned k = 0; tm_derivers[k]; k++)
		if (tm_deriver_applies(tm_derivers[k], fmt))
			mask |= TM_PRODUCT_DERIVER(k);
	return mask;
}

const char *tm_products_name(uint32_t mask, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (unsigned p = 0; p < TM_MAX_PRODUCTS && at < len; p++) {
		if (!(mask >> p & 1))
			continue;
		int n = snprintf(buf + at, len - at, "%s%s", at ? "," : "",
				 p ? tm_derivers[p - 1]->name : "stats");
		at += n > 0 ? (size_t)n : 0;
	}
	return buf;
}
