/* Finding the traces under a path, for `tracemount index` and `-o prefetch`. */
#ifndef TRACEMOUNT_WALK_H
#define TRACEMOUNT_WALK_H

#include <stdbool.h>
#include <sys/stat.h>

struct tm_context;
struct tm_format;
struct tm_trace;

/* Calls fn for every regular file at or below path (relative to dirfd, or absolute with
 * AT_FDCWD) that ctx recognises as a trace, in directory order, without following symbolic
 * links. Folders that cannot be read are reported through fn with fmt NULL and err set.
 * Stops when fn returns non-zero and returns that; else 0. */
int tm_walk(struct tm_context *ctx, int dirfd, const char *path,
	    int (*fn)(void *arg, const char *path, const struct tm_format *fmt,
		      const struct stat *st, int err),
	    void *arg);

/* Indexes one trace found by tm_walk, with every product (derive.h): through ctx's index files
 * when it has a cache folder. records_first: the record index by a pass of its own, then the
 * products by another (-o prefetch: a reader of a record view then waits for the first pass
 * only), else both in one pass (tracemount index: one read of the trace). *held (may be NULL)
 * is set to the trace while it is indexed, for progress; the trace is put on return, so a
 * reader of *held must hold its own reference or know it stays. Returns 0 or -errno. */
int tm_index_one(struct tm_context *ctx, int dirfd, const char *path, const struct tm_format *fmt,
		 const struct stat *st, bool records_first, _Atomic(struct tm_trace *) *held);

#endif
