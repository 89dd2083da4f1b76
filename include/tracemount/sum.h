/* Sums of spixcounts files, as sadd(1) makes them, shown as virtual traces.
 *
 * In a folder holding two or more whole spixcounts files of one program (the same text size,
 * text checksum and number of blocks), each such group becomes one more trace of format
 * spixcounts, named SUM.spixcounts, or SUM.TSIZE.TSUM.spixcounts (TSUM in 8 hex digits) when
 * the folder holds several groups; a file of that name hides it. Its bytes, built in memory
 * when first read, are the members' sum in the first member's byte order; sadd's
 * diagnostics (a counter overflow, a block non-executable in one file only) go to its
 * errors.txt, and the sum goes on where sadd would stop. */
#ifndef TRACEMOUNT_SUM_H
#define TRACEMOUNT_SUM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

struct tm_context;
struct tm_source;

struct tm_sum {
	char name[64];
	uint32_t tsize, tsum, nbb;
	char **members; /* paths relative to the folder's descriptor, sorted */
	unsigned n_members;
	/* as a file: the sum's size; the latest modification of the folder and the members;
	 * the members' owner and the permissions all of them give */
	struct stat st;
};

/* Whether name has the form of a sum's name. */
bool tm_sum_name(const char *name);

/* The sums of folder dir ("." or a path relative to dirfd). Returns their count and sets *out
 * (free with tm_sums_free), or -errno. */
int tm_sums_of(struct tm_context *ctx, int dirfd, const char *dir, struct tm_sum **out);
void tm_sums_free(struct tm_sum *sums, int n);

/* The sum at path ("dir/SUM.spixcounts", relative to dirfd), into *out (free with
 * tm_sums_free(out, 1)). Returns 0, -ENOENT or -errno. */
int tm_sum_find(struct tm_context *ctx, int dirfd, const char *path, struct tm_sum **out);

/* The sum's bytes, as a source without a file, which reads and adds the members at its first
 * read (the index of a sum already indexed needs none). dirfd must stay open while the source
 * is. Returns 0 or -errno. */
int tm_sum_source_open(int dirfd, const struct tm_sum *s, struct tm_source *out);

#endif
