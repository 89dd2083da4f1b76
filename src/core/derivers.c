/* The one list of derivers (derive.h). Adding one: one file, one line here. */
#include "tracemount/derive.h"

extern const struct tm_deriver tm_deriver_spix;

const struct tm_deriver *const tm_derivers[] = {
    &tm_deriver_spix, /* spix/: basic-block counts, as SpixTools makes them */
    NULL,
};

unsigned tm_derived_views(const struct tm_format *fmt)
{
	unsigned n = 0;
	for (const struct tm_deriver *const *d = tm_derivers; *d && tm_derivers_apply(fmt); d++)
		n += (*d)->n_outputs;
	return n;
}
