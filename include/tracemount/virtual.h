/* Virtual traces of folders (tm_format.virtual_*, format.h), for whatever format has them: the
 * calls the mount's tree, -o prefetch and `tracemount cat` and `ls` make, naming no format.
 * The folder's files are found and detected here; each format only says what its files
 * make. */
#ifndef TRACEMOUNT_VIRTUAL_H
#define TRACEMOUNT_VIRTUAL_H

#include "tracemount/format.h"

struct tm_context;

#define TM_VIRTUAL_MAX_FORMATS 8 /* formats with virtual traces that a census counts */

/* A folder's files counted by format, as a listing detects them, so that only the formats
 * with enough files are asked for virtual traces and other folders are not read again.
 * Zeroed before the first count. */
struct tm_virtual_census {
	const struct tm_format *fmt[TM_VIRTUAL_MAX_FORMATS];
	unsigned n_files[TM_VIRTUAL_MAX_FORMATS];
};

/* Counts a file detected as fmt (NULL, or a format without virtual traces: nothing). */
void tm_virtual_count(struct tm_virtual_census *c, const struct tm_format *fmt);

/* Calls fn(arg, fmt, v) for each virtual trace of folder dir ("." or a path relative to dirfd,
 * or a user's path with AT_FDCWD) of each format counted in c with virtual_min_files files or
 * more, reading the folder again to find them. Stops when fn returns non-zero and returns
 * that; else 0, or -errno. */
int tm_virtual_each(struct tm_context *ctx, int dirfd, const char *dir,
		    const struct tm_virtual_census *c,
		    int (*fn)(void *arg, const struct tm_format *fmt, const struct tm_virtual *v),
		    void *arg);

/* The virtual trace at path ("NAME" or "DIR/NAME", relative to dirfd as above), which no file
 * is: asks each format whose virtual_name accepts NAME. Sets its format in *fmt and the trace
 * in *out (free with tm_virtual_free(*fmt, *out, 1)). Returns 0, -ENOENT or -errno. */
int tm_virtual_find(struct tm_context *ctx, int dirfd, const char *path,
		    const struct tm_format **fmt, struct tm_virtual **out);

/* Frees an array of n virtual traces of fmt (NULL: nothing). */
void tm_virtual_free(const struct tm_format *fmt, struct tm_virtual *v, unsigned n);

#endif
