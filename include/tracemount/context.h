/* Everything one mount (or one `tracemount cat`) shares: the traces seen so far, mapped by
 * path, and what they share (the chunk cache, the read-ahead worker, the cache folder of index
 * files, the log), and the format overrides. Opaque; every mutable part is behind a lock or
 * atomic.
 *
 * The context maps paths to traces: it makes a trace at a path's first lookup, holds one
 * reference on it, and retires it when its file changed. The trace's life is trace.c's
 * (trace.h): callers put what they looked up with tm_trace_put. */
#ifndef TRACEMOUNT_CONTEXT_H
#define TRACEMOUNT_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/stat.h>
#include <sys/types.h>

#include "tracemount/log.h"

struct tm_format;
struct tm_trace;
struct tm_trace_progress;
struct tm_chunk_cache;
struct tm_readahead;
struct stat;

#define TM_DEFAULT_MEMORY (64u << 20)
/* The smallest budget: the decoded span of a compressed trace (TM_Z_SPAN), the largest chunk
 * a read may need whole. Below it every read would evict what it just decoded. */
#define TM_MIN_MEMORY (1u << 20)

struct tm_context;

int tm_context_new(size_t memory, struct tm_context **out);
/* Frees the context and drops its references on its traces, which others must have put. */
void tm_context_free(struct tm_context *ctx);

/* Adds a "GLOB:NAME" override (GLOB is matched against the base name, or the relative path if
 * it has a '/'). Returns 0, -EINVAL for a malformed spec, -ENOENT for an unknown format. Call
 * before the context is shared. */
int tm_context_add_override(struct tm_context *ctx, const char *spec);
/* The number of overrides added. */
unsigned tm_context_override_count(const struct tm_context *ctx);

/* Adds a program image for derivers (images.h): "GLOB:FILE[@OFFSET]" (with_glob: -o image=)
 * or "FILE[@OFFSET]" (every trace: a command's --image). FILE, relative to the current
 * folder, is made absolute; it must be a readable regular file that the derivers accept.
 * Returns 0, or -errno (-EINVAL: a malformed spec) with a message in why. Call before the
 * context is shared. */
int tm_context_add_image(struct tm_context *ctx, const char *spec, bool with_glob, char *why,
			 size_t why_len);

/* Keeps indexes in the cache folder dir (tm_index_store_open: created 0700 if missing, its
 * parents too when parents is true). Returns 0, or -errno with a message in err. Call before
 * the context is shared. */
int tm_context_set_store(struct tm_context *ctx, const char *dir, bool parents, char *err,
			 size_t err_len);
/* The absolute path of the folder the traces' paths are relative to (a mount's SOURCE
 * folder), recorded in index files so that `tracemount index --list/--prune` can find their
 * traces, and opened: program images beside the traces are looked for beneath it (images.h);
 * without one, the current folder. Returns 0 or -ENOMEM. Call before the context is
 * shared. */
int tm_context_set_root(struct tm_context *ctx, const char *root);
/* Never read an index file: build every index anew and write its file (`tracemount index
 * --force`). Call before the context is shared. */
void tm_context_set_force_rebuild(struct tm_context *ctx, bool force);
/* Where problems and progress go (log.h); NULL, the default: nowhere. Call before the context
 * is shared. */
void tm_context_set_log(struct tm_context *ctx, tm_log_fn *log);
tm_log_fn *tm_context_logger(const struct tm_context *ctx);
/* The device of the mount's own file system, which lookups and walks below SOURCE never
 * enter (tm_is_mount_of); 0, the default: none. Call before the context is shared. */
void tm_context_set_own_device(struct tm_context *ctx, dev_t dev);
dev_t tm_context_own_device(const struct tm_context *ctx);
/* How a caller waiting for an index pass tells that the request it serves is no longer wanted
 * (a FUSE request interrupted, the mount going away): abandoned(arg), polled every 50 ms by
 * each waiter, on the waiter's thread. A waiter that finds it true leaves with -EINTR; the
 * last to leave cancels the pass, which keeps nothing. NULL, the default: never. Call before
 * the context is shared. */
void tm_context_set_abandoned(struct tm_context *ctx, bool (*abandoned)(void *arg), void *arg);
/* The mount goes away: every index pass running is cancelled (its waiters get -ECANCELED),
 * none starts any more, and the call returns once they all ended. */
void tm_context_stop(struct tm_context *ctx);
/* Whether an index pass's thread is running: a pass holds its trace until just after its
 * waiters wake. */
bool tm_context_passes_running(struct tm_context *ctx);

/* What the context's traces share. */
struct tm_chunk_cache *tm_context_cache(const struct tm_context *ctx);
/* The cache folder, or NULL. */
const struct tm_index_store *tm_context_store(const struct tm_context *ctx);
/* A chunk-cache owner key no trace of the context has, for what else caches (an archive's
 * pieces). */
uint64_t tm_context_new_owner(struct tm_context *ctx);
struct tm_readahead *tm_context_readahead(const struct tm_context *ctx);

/* How the context's traces got their indexes. */
struct tm_index_counts {
	uint64_t built;	    /* by decoding */
	uint64_t loaded;    /* read from index files */
	uint64_t completed; /* of those, read without some product, which was then built */
	uint64_t refused;   /* index files refused (damaged) */
	uint64_t stale;	    /* index files out of date (written by another build) */
	uint64_t failed;    /* builds failed */
	uint64_t unstored;  /* indexes built whose index file could not be written */
	int store_errno;    /* why the last of them could not be, 0 once an index file is written */
};
void tm_context_counts(const struct tm_context *ctx, struct tm_index_counts *out);

/* The format of the file at path (relative to dirfd), or NULL: overrides first, then the
 * formats' bids (format.h). Opens the file to read its head only when its name leaves the
 * answer open (tm_format_detect_needs_head). */
const struct tm_format *tm_context_detect(struct tm_context *ctx, int dirfd, const char *path);

/* tm_context_detect, which also tells, when no format recognises the file and its head was
 * read, whether also(name, head, len) holds for it: for what else is recognised by content
 * (archive.h), without a second read. Given the file's attributes st (lstat; or NULL), what
 * it found is remembered, and the file's head is not read again while they stay the same. */
const struct tm_format *
tm_context_detect_also(struct tm_context *ctx, int dirfd, const char *path, const struct stat *st,
		       bool (*also)(const char *name, const uint8_t *head, size_t len),
		       bool *matched);

/* The format path's override gives (-o format=), or NULL. */
const struct tm_format *tm_context_override(struct tm_context *ctx, const char *path);

/* The same as tm_context_detect, given the file's head (its first TM_PROBE_HEAD_LEN bytes, or
 * fewer). */
const struct tm_format *tm_context_detect_head(struct tm_context *ctx, const char *path,
					       const uint8_t *head, size_t head_len);

/* The trace at path with format fmt, created on first use, with a reference taken for the
 * caller (tm_trace_put). Returns 0, -ESTALE when the trace at path has another format, or
 * -ENOMEM. */
int tm_context_trace(struct tm_context *ctx, const char *path, const struct tm_format *fmt,
		     struct tm_trace **out);

/* tm_context_trace for a file whose attributes (lstat) are st: when the trace seen before at
 * path had another size or modification time, the file changed, and a new trace (a new index)
 * replaces it; holders of the old one keep it until they put it. */
int tm_context_trace_of(struct tm_context *ctx, const char *path, const struct tm_format *fmt,
			const struct stat *st, struct tm_trace **out);

/* What the context knows of the trace at path, of format fmt, whose file has attributes st
 * (lstat), without making a trace or reading the file: fills *out (trace.h) and returns 0 when
 * it has seen that file; -ENOENT when it has not (never looked up, or seen before it
 * changed, or with another format). */
int tm_context_progress_of(struct tm_context *ctx, const char *path, const struct tm_format *fmt,
			   const struct stat *st, struct tm_trace_progress *out);

/* Records that a listing showed a trace file at path (fmt NULL: its format not known yet, its
 * head unread), so that the status counts it before any lookup makes its trace. Returns 0 or
 * -ENOMEM. */
int tm_context_saw(struct tm_context *ctx, const char *path, const struct tm_format *fmt);

/* The text of .tracemount/status: a header line naming the columns, one line per trace seen
 * (made by a lookup, or shown by a listing), sorted by path, then a summary line starting with
 * '#'. Returns 0 or -ENOMEM; the caller frees *text. */
int tm_context_status(struct tm_context *ctx, char **text, size_t *len);

#endif
