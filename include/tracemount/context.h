/* Everything one mount (or one `tracemount cat`) shares: the chunk cache, the traces seen so
 * far, and the format overrides. Every mutable part is behind a lock. */
#ifndef TRACEMOUNT_CONTEXT_H
#define TRACEMOUNT_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tm_format;
struct tm_trace;
struct tm_chunk_cache;
struct tm_readahead;
struct tm_index_store;
struct stat;

#define TM_DEFAULT_MEMORY (64u << 20)

struct tm_override {
	char *glob; /* matched against the base name, or the relative path if it has a '/' */
	const struct tm_format *fmt;
};

struct tm_context {
	struct tm_chunk_cache *cache;
	struct tm_readahead *readahead; /* renders ahead of streaming readers */
	struct tm_override *overrides;
	unsigned n_overrides;

	pthread_mutex_t lock; /* guards the table */
	struct tm_trace **table;
	size_t table_size, n_traces;
	uint64_t next_uid;
	/* indexes: built by decoding, read from index files, files refused, files out of date
	 * (written by another build), builds failed */
	uint64_t n_built, n_loaded, n_refused, n_stale, n_failed;
	/* The cache folder of index files, or NULL: indexes live in memory only. Set before
	 * the context is shared. */
	struct tm_index_store *store;
	/* Where problems go, as one line with a syslog priority; NULL: nowhere. Set before the
	 * context is shared. */
	void (*log)(int priority, const char *line);
	/* The absolute path of the folder the traces' paths are relative to (a mount's SOURCE
	 * folder), recorded in index files so that `tracemount index --list/--prune` can find
	 * their traces; NULL: the current folder. Owned; set before the context is shared. */
	char *root_path;
	/* Never read an index file: build every index anew and write its file
	 * (`tracemount index --force`). Set before the context is shared. */
	bool force_rebuild;
	/* Set when the mount goes away: index builds in progress give up (-ECANCELED). */
	atomic_bool stopping;
};

int tm_context_new(size_t memory, struct tm_context **out);
void tm_context_free(struct tm_context *ctx);

/* Adds a "GLOB:NAME" override. Returns 0, -EINVAL for a malformed spec, -ENOENT for an
 * unknown format. Call before the context is shared. */
int tm_context_add_override(struct tm_context *ctx, const char *spec);

/* The format of the file at path (relative to dirfd), or NULL: overrides first, then the
 * formats' bids (format.h). Opens the file to read its head only when its name leaves the
 * answer open (tm_format_detect_needs_head). */
const struct tm_format *tm_context_detect(struct tm_context *ctx, int dirfd, const char *path);

/* The same, given the file's head (its first TM_PROBE_HEAD_LEN bytes, or fewer). */
const struct tm_format *tm_context_detect_head(struct tm_context *ctx, const char *path,
					       const uint8_t *head, size_t head_len);

/* The trace at path with format fmt, created on first use, with a reference taken.
 * Returns 0 or -ENOMEM. */
int tm_context_trace(struct tm_context *ctx, const char *path, const struct tm_format *fmt,
		     struct tm_trace **out);
void tm_context_trace_put(struct tm_context *ctx, struct tm_trace *t);

/* tm_context_trace for a file whose attributes (lstat) are st: when the trace seen before at
 * path had another size or modification time, the file changed, and a new trace (a new index)
 * replaces it; holders of the old one keep it until they put it. */
int tm_context_trace_of(struct tm_context *ctx, const char *path, const struct tm_format *fmt,
			const struct stat *st, struct tm_trace **out);

/* Keeps indexes in the cache folder dir (tm_index_store_open: created 0700 if missing, its
 * parents too when parents is true). Returns 0, or -errno with a message in err. Call before
 * the context is shared. */
int tm_context_set_store(struct tm_context *ctx, const char *dir, bool parents, char *err,
			 size_t err_len);

/* Sends a line to ctx->log, if set. */
void tm_context_log(struct tm_context *ctx, int priority, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Takes one more reference on a trace the caller holds. */
void tm_context_trace_hold(struct tm_context *ctx, struct tm_trace *t);

/* The text of .tracemount/status: one line per trace seen, sorted by path, then a summary
 * line starting with '#'. Returns 0 or -ENOMEM; the caller frees *text. */
int tm_context_status(struct tm_context *ctx, char **text, size_t *len);

#endif
