/* Index lookup and lifetime. The pass that builds an index is in index_build.c. */
#include <errno.h>
#include <stdlib.h>

#include "tracemount/gzip.h"
#include "tracemount/index.h"

int tm_index_find(const struct tm_index *ix, unsigned v, uint64_t off, uint64_t *chunk)
{
	if (v >= ix->n_views || off >= tm_index_view_size(ix, v))
		return -ERANGE;
	/* last chunk row r with offset(r) <= off; empty chunks share offsets, so take the last */
	uint64_t lo = 0, hi = tm_index_chunks(ix);
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (tm_index_view_off(ix, mid, v) <= off)
			lo = mid;
		else
			hi = mid;
	}
	*chunk = lo;
	return 0;
}

size_t tm_index_mem(const struct tm_index *ix)
{
	return sizeof(*ix) + ix->n_rows * ix->row_words * sizeof(uint64_t) + ix->stats_len +
	       ix->errors_len + (ix->gz ? tm_gz_index_mem(ix->gz) : 0);
}

void tm_index_free(struct tm_index *ix)
{
	if (!ix)
		return;
	free(ix->rows);
	free(ix->stats_json);
	free(ix->errors_txt);
	tm_gz_index_free(ix->gz);
	free(ix);
}
