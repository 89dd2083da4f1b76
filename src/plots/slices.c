/* The slices of a trace that plots/ draws (plots.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plots/plots.h"

int tm_slices_init(struct tm_slices *s)
{
	memset(s, 0, sizeof(*s));
	s->v = calloc(TM_PLOT_SLICES, sizeof(*s->v));
	return s->v ? 0 : -ENOMEM;
}

void tm_slices_free(struct tm_slices *s)
{
	free(s->v);
	s->v = NULL;
}

void tm_slices_merge(struct tm_slices *s)
{
	for (unsigned j = 0; j < TM_PLOT_SLICES / 2; j++)
		for (unsigned c = 0; c < TM_PLOT_COLUMNS; c++)
			s->v[j][c] = s->v[2 * j][c] + s->v[2 * j + 1][c];
	memset(s->v + TM_PLOT_SLICES / 2, 0, TM_PLOT_SLICES / 2 * sizeof(*s->v));
	s->shift++;
}

unsigned tm_slices_used(const struct tm_slices *s)
{
	return s->records ? (unsigned)((s->records - 1) >> s->shift) + 1 : 0;
}

uint64_t tm_slice_start(const struct tm_slices *s, unsigned j)
{
	return (uint64_t)j << s->shift;
}

uint64_t tm_slice_end(const struct tm_slices *s, unsigned j)
{
	uint64_t end = (uint64_t)(j + 1) << s->shift;
	return end < s->records ? end : s->records;
}
