/* Between context.c and trace.c only: what the traces of one context share, and the calls by
 * which the context makes and retires its traces.
 *
 * The context owns the environment, fills it before it is shared and outlives its traces; a
 * trace reads it and counts its index outcomes in it. trace.c calls no function of context.c,
 * so the context depends on the trace and not back (doc/architecture.md, "Layers"). */
#ifndef TRACEMOUNT_CORE_TRACE_ENV_H
#define TRACEMOUNT_CORE_TRACE_ENV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "tracemount/log.h"

struct stat;
struct tm_chunk_cache;
struct tm_context;
struct tm_format;
struct tm_image_rule;
struct tm_index_store;
struct tm_trace;
struct tm_pass;

struct tm_trace_env {
	struct tm_context *ctx;	      /* the holder, for tm_trace_context */
	struct tm_chunk_cache *cache; /* decoded chunks, rendered chunks, gzip pieces */
	/* The cache folder of index files, or NULL: indexes live in memory only. */
	struct tm_index_store *store;
	tm_log_fn *log; /* NULL: nowhere */
	/* The absolute path of the folder the traces' paths are relative to, recorded in index
	 * files so that `tracemount index --list/--prune` can find their traces; NULL: the
	 * current folder. */
	char *root_path;
	/* That folder, opened (O_PATH), where program images are looked for beside the traces
	 * (images.h); -1: the current folder. */
	int root_fd;
	/* -o image= and --image, in the order given (images.h) */
	struct tm_image_rule *image_rules;
	size_t n_image_rules;
	bool force_rebuild;   /* never read an index file (`tracemount index --force`) */
	atomic_bool stopping; /* the mount goes away: index builds give up (-ECANCELED) */
	/* Whether the request the calling thread serves is no longer wanted (its caller was
	 * interrupted, the mount goes away), polled by a caller waiting for an index pass; NULL:
	 * never. */
	bool (*abandoned)(void *arg);
	void *abandoned_arg;
	/* The index passes running, each on its own thread (trace.c): a list, under passes_lock,
	 * which passes_over signals when one ends. */
	pthread_mutex_t passes_lock;
	pthread_cond_t passes_over;
	struct tm_pass *passes;
	/* indexes: built by decoding, read from index files, files refused, files out of date
	 * (written by another build), builds failed */
	_Atomic uint64_t n_built, n_loaded, n_refused, n_stale, n_failed, n_unstored;
	_Atomic uint64_t n_completed; /* indexes read from files lacking products, then built */
	/* the errno of the last index file that could not be written, 0 once one is: logged
	 * when it changes, not per trace, and shown in the status */
	atomic_int store_errno;
};

/* Sets stopping and cancels every index pass running: their callers get -ECANCELED, and no
 * pass starts after. */
void tm_trace_env_stop(struct tm_trace_env *env);
/* Waits until no index pass of env runs any more (each ends within a batch once cancelled). */
void tm_trace_env_drain(struct tm_trace_env *env);

/* A new trace of format fmt at path, with one reference (the context's), in env. owner is its
 * chunk-cache key, unique in env; st, when not NULL, the file's attributes when first seen,
 * whose bytes alone its index is built from; replaced: it replaces the trace of a file that
 * changed. Returns 0 or -ENOMEM. */
int tm_trace_new(struct tm_trace_env *env, uint64_t owner, const char *path,
		 const struct tm_format *fmt, const struct stat *st, bool replaced,
		 struct tm_trace **out);

/* Whether t is still the trace of a file of format fmt with attributes st: else the file
 * changed since t was made. */
bool tm_trace_same_file(const struct tm_trace *t, const struct tm_format *fmt,
			const struct stat *st);

/* Whether old, the trace t replaces, found its compressed bytes changed since its index was
 * made: then t's index pass says so in its errors.txt. */
bool tm_trace_changed_inside(struct tm_trace *t, struct tm_trace *old);

/* The end of t in its context, for a file that changed: its chunks leave the cache and the
 * context's reference goes; holders keep t until they put it. */
void tm_trace_retire(struct tm_trace *t);

#endif
