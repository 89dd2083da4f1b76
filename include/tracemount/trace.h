/* One recognised trace: its format, its views and, once built, its index.
 *
 * The index is built at most once at a time: the first caller builds it while others wait on
 * the trace's condition variable. A failed build is not kept, so the next access retries. */
#ifndef TRACEMOUNT_TRACE_H
#define TRACEMOUNT_TRACE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "tracemount/view.h"

struct tm_context;
struct tm_index;
struct tm_source;
struct tm_cached_chunk;

/* What tells one version of a trace file from another: the attributes lstat gives. */
struct tm_file_identity {
	dev_t dev;
	ino_t ino;
	uint64_t size;
	struct timespec mtime, ctime;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	nlink_t nlink;
};

void tm_file_identity_of(const struct stat *st, struct tm_file_identity *id);

/* Whether a path's attributes st are still those of the file id was taken from: the same
 * inode, size, modification and inode change times. Any change, a rename over it, a rewrite
 * with its modification time put back (touch -r, cp -p) or a chmod alike, makes it another
 * version, indexed anew. */
bool tm_file_identity_same(const struct tm_file_identity *id, const struct stat *st);

/* Whether an open descriptor's attributes st still read the bytes id was taken from: the same
 * inode, size and modification time, and an inode change time that moved only with the
 * links, owner or mode (a delete, a chmod, which leave the bytes as they were). */
bool tm_file_identity_same_bytes(const struct tm_file_identity *id, const struct stat *st);

enum tm_trace_state { TM_TRACE_NEW, TM_TRACE_INDEXING, TM_TRACE_INDEXED, TM_TRACE_FAILED };

struct tm_trace {
	uint64_t uid; /* unique within a context; keys the chunk cache */
	char *path;   /* relative to the source root */
	const struct tm_format *fmt;
	struct tm_view_table views;
	struct tm_context *ctx; /* the context holding it */
	/* The file as it was when the trace was first seen (has_identity: through
	 * tm_context_trace_of): an index is built only from those bytes, and a chunk read after
	 * the file changed fails with EIO rather than mix old and new. */
	bool has_identity;
	struct tm_file_identity id;
	/* It replaced the trace of a file that changed, whose readers may still hold pages of
	 * the same path: the mount serves it around the kernel's page cache. */
	bool replaced;

	pthread_mutex_t lock; /* guards everything below */
	pthread_cond_t changed;
	enum tm_trace_state state;
	uint64_t progress_done, progress_total;
	struct tm_index *index;
	bool from_file; /* the index was read from an index file */
	int error;	/* last build's -errno */

	/* under the context's lock: in its table, or retired (replaced by a newer trace of the
	 * same path, for a changed file) and freed at its last put */
	unsigned refs;
	bool retired;
	struct tm_trace *hash_next;
};

/* The trace's index, building it from src if needed. Returns 0 or -errno. The index stays
 * valid while the caller holds its reference to the trace. */
int tm_trace_index(struct tm_trace *t, struct tm_source *src, const struct tm_index **out);

/* Whether src still reads the file as it was when t was first seen (a sum, which has no file,
 * never changes). */
bool tm_trace_unchanged(const struct tm_trace *t, struct tm_source *src);

/* Whether the trace's bytes in src are gzip-compressed (gzip.h's tm_gz_detect). */
bool tm_trace_is_gzip(const struct tm_trace *t, struct tm_source *src);

/* Reads len trace bytes at off (decompressed offsets for a gzip trace, whose spans are
 * decompressed through the context's cache). ix may be NULL for a plain trace. Returns the
 * count (short only at the end) or -errno. */
ssize_t tm_trace_read(struct tm_context *ctx, struct tm_trace *t, const struct tm_index *ix,
		      struct tm_source *src, void *buf, size_t len, uint64_t off);

/* Piece `piece` of a gzip trace (gzip.h), decompressed, through the context's cache (as
 * bytes). Returns 0 or -errno; release with tm_trace_chunk_release(). */
int tm_trace_piece(struct tm_context *ctx, struct tm_trace *t, const struct tm_index *ix,
		   struct tm_source *src, uint64_t piece, struct tm_cached_chunk **out);

/* Decodes chunk `chunk` of the trace (through the context's cache). Returns 0 or -errno;
 * -EIO when the data no longer matches the index. Release with tm_trace_chunk_release(). */
int tm_trace_chunk(struct tm_context *ctx, struct tm_trace *t, const struct tm_index *ix,
		   struct tm_source *src, uint64_t chunk, struct tm_cached_chunk **out);
void tm_trace_chunk_release(struct tm_context *ctx, struct tm_cached_chunk *c);

/* One line for .tracemount/status, without the newline: path, format, state, records and
 * index bytes, separated by tabs ("-" where not known yet). Returns snprintf's count. */
int tm_trace_status(struct tm_trace *t, char *buf, size_t len);

#endif
