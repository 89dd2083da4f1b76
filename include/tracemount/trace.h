/* One recognised trace: its format, its views and, once built, its index; and the handle of a
 * trace opened for reading (struct tm_open_trace).
 *
 * The index is built at most once at a time, by a pass on a thread of its own that every caller
 * waits for on the trace's condition variable. A failed build is not kept, so the next access
 * retries; a pass whose waiters all left is cancelled and keeps nothing. */
#ifndef TRACEMOUNT_TRACE_H
#define TRACEMOUNT_TRACE_H

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

/* A trace, opaque: trace.c owns its whole life. A context (context.h) makes traces, holds one
 * reference on each trace of its table and retires a trace whose file changed; whoever else
 * uses a trace holds a reference of its own, and the last put frees it. */
struct tm_trace;

/* Takes one more reference on a trace the caller holds. */
void tm_trace_hold(struct tm_trace *t);
/* Drops a reference; the last frees the trace, its views and its index. */
void tm_trace_put(struct tm_trace *t);

/* Its path, relative to the source root. */
const char *tm_trace_path(const struct tm_trace *t);
const struct tm_format *tm_trace_format(const struct tm_trace *t);
/* The context that made it. */
struct tm_context *tm_trace_context(const struct tm_trace *t);
/* The chunk cache's owner key of its decoded chunks (chunk_cache.h's tm_cache_owner gives its
 * views'): unique within its context. */
uint64_t tm_trace_owner(const struct tm_trace *t);
/* Its views: the table, and view v of it or NULL past the end. */
const struct tm_view_table *tm_trace_views(const struct tm_trace *t);
const struct tm_view *tm_trace_view(const struct tm_trace *t, unsigned v);
/* Whether it replaced the trace of a file that changed, whose readers may still hold pages of
 * the same path: the mount serves it around the kernel's page cache. */
bool tm_trace_replaced(const struct tm_trace *t);
/* References held on it, its context's included (for tests). */
unsigned tm_trace_refs(const struct tm_trace *t);

/* Where a trace's index stands, read at once under the trace's lock. */
struct tm_trace_progress {
	enum tm_trace_state state;
	uint64_t done, total;	       /* INDEXING: bytes read of the trace's (compressed) bytes */
	uint64_t records, index_bytes; /* INDEXED: records, and memory the index holds */
	uint64_t problems;	       /* INDEXED: the problems in its errors.txt */
	uint64_t notes;		       /* INDEXED: the notes in its errors.txt */
	uint32_t building;	       /* INDEXED: the products a pass builds now, or 0 */
	uint64_t building_done, building_total; /* with building: its bytes read, as done */
	int error;				/* FAILED: the last build's -errno */
};
void tm_trace_progress(struct tm_trace *t, struct tm_trace_progress *out);

/* One line for .tracemount/status, without the newline: path, format, state, records and
 * index bytes, separated by tabs ("-" where not known yet). Returns snprintf's count. */
int tm_trace_status(struct tm_trace *t, char *buf, size_t len);

/* A trace opened for reading: the one handle the reader, view rendering, the mount's files and
 * the commands pass around, in place of a context, a trace, an index and a source (the context
 * is tm_trace_context(trace)). A value: tm_trace_open fills it, tm_trace_close empties it;
 * each holds its own reference on the trace. */
struct tm_open_trace {
	struct tm_trace *trace;
	struct tm_source *src;	      /* the trace's bytes, the caller's: it outlives the handle */
	const struct tm_index *index; /* NULL until tm_trace_index; stays valid with trace */
};

/* Opens t for reading its bytes src; takes a reference on t. */
void tm_trace_open(struct tm_open_trace *ot, struct tm_trace *t, struct tm_source *src);
void tm_trace_close(struct tm_open_trace *ot);

/* Sets ot->index, building the trace's index from ot->src if no one has (the first caller
 * starts a pass, every caller waits for it; a failed build is not kept, so the next call
 * retries). A caller whose request is abandoned (tm_context_set_abandoned) leaves with -EINTR,
 * and the last to leave cancels the pass; when the context stops, -ECANCELED. Returns 0 or
 * -errno. */
int tm_trace_index(struct tm_open_trace *ot);

/* Sets ot->index as tm_trace_index does, and makes sure products (derive.h) of it are built:
 * a pass of their own, after the record index, that every caller wanting one of them waits
 * for, as for the index. A pass starting before the record index exists builds them with it.
 * Returns 0 or -errno; a failed product is not kept, so the next call retries. */
int tm_trace_products(struct tm_open_trace *ot, uint32_t products);

/* Whether t's index is built with every product of products, now: nothing is built for the
 * answer. */
bool tm_trace_has_products(struct tm_trace *t, uint32_t products);

/* Whether ot->src still reads the file as it was when the trace was first seen (a virtual
 * trace, which has no file, never changes). */
bool tm_trace_unchanged(const struct tm_open_trace *ot);

/* Whether the trace's bytes are compressed (compress.h's tm_codec_detect). */
bool tm_trace_is_compressed(const struct tm_open_trace *ot);

/* Reads len trace bytes at off (decompressed offsets for a compressed trace, whose pieces are
 * decompressed through the context's cache, so ot->index must be set). Returns the count
 * (short only at the end) or -errno. */
ssize_t tm_trace_read(const struct tm_open_trace *ot, void *buf, size_t len, uint64_t off);

/* Piece `piece` of a compressed trace (compress.h), decompressed, through the context's cache (as
 * bytes). Returns 0 or -errno; release with tm_trace_chunk_release(). */
int tm_trace_piece(const struct tm_open_trace *ot, uint64_t piece, struct tm_cached_chunk **out);

/* Decodes chunk `chunk` of the trace (through the context's cache). Returns 0 or -errno;
 * -EIO when the data no longer matches the index. Release with tm_trace_chunk_release(). */
int tm_trace_chunk(const struct tm_open_trace *ot, uint64_t chunk, struct tm_cached_chunk **out);
void tm_trace_chunk_release(const struct tm_open_trace *ot, struct tm_cached_chunk *c);

#endif
