/* spixcounts files: what the format's table (spixcounts.c) takes from the sums of a folder's
 * files (spixcounts_sum.c). */
#ifndef TRACEMOUNT_SPIXCOUNTS_H
#define TRACEMOUNT_SPIXCOUNTS_H

#include <stdbool.h>

#include "tracemount/format.h"

/* Its virtual traces (tm_format.virtual_*, format.h): sums of spixcounts files, as sadd(1)
 * makes them.
 *
 * In a folder holding two or more whole spixcounts files of one program (the same text size,
 * text checksum and number of blocks), each such group becomes one more trace of format
 * spixcounts, named SUM.spixcounts, or SUM.TSIZE.TSUM.spixcounts (TSUM in 8 hex digits) when
 * the folder holds several groups; a file of that name hides it. Its bytes, built in memory
 * when first read, are the members' sum in the first member's byte order; sadd's
 * diagnostics (a counter overflow, a block non-executable in one file only) go to its
 * errors.txt, and the sum goes on where sadd would stop. A gzip spixcounts file is not
 * summed. */
bool spix_sum_name(const char *name);
int spix_sum_list(int dirfd, const char *dir, char *const *files, unsigned n_files,
		  struct tm_virtual **out);
int spix_sum_open(int dirfd, const struct tm_virtual *v, struct tm_source *out);
void spix_sum_free(void *priv);

#endif
