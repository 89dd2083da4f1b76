/* -o prefetch: every trace under SOURCE indexed in the background after mounting, so that
 * the first reads find their indexes ready (and, with a cache folder, the index files). The
 * traces are found first (find.c), so that .tracemount/status can say how many are left. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "tracemount/derive.h"
#include "tracemount/context.h"
#include "tracemount/fs.h"
#include "tracemount/log.h"
#include "tracemount/trace.h"
#include "tracemount/virtual.h"
#include "tracemount/walk.h"

/* Indexes the virtual trace at path, found again: its files may have changed since the
 * walk. */
static int index_virtual(struct tm_fs *fs, const char *path)
{
	const struct tm_format *fmt;
	struct tm_virtual *v;
	struct tm_trace *t;
	struct tm_source src;
	struct tm_open_trace ot;
	int err = tm_virtual_find(fs->ctx, fs->root_fd, path, &fmt, &v);
	if (err)
		return err;
	if ((err = tm_context_trace_of(fs->ctx, path, fmt, &v->st, &t)) == 0) {
		if ((err = fmt->virtual_open(fs->root_fd, v, &src)) == 0) {
			tm_trace_open(&ot, t, &src);
			err = tm_trace_index(&ot); /* the record index first, as tm_index_one's */
			err = err ? err : tm_trace_products(&ot, TM_PRODUCTS_ALL);
			tm_trace_close(&ot);
			tm_source_close(&src);
		}
		tm_trace_put(t);
	}
	tm_virtual_free(fmt, v, 1);
	return err;
}

static void log_unread(void *arg, const char *path, int err)
{
	struct tm_fs *fs = arg;
	tm_log(tm_context_logger(fs->ctx), LOG_WARNING, "prefetch: %s: %s", path, strerror(-err));
}

static void *indexer(void *arg)
{
	struct tm_fs *fs = arg;
	struct tm_fs_found *found;
	size_t n;
	if (tm_fs_find_traces(fs, log_unread, fs, &found, &n) < 0)
		tm_log(tm_context_logger(fs->ctx), LOG_ERR,
		       "prefetch: out of memory: %zu traces found", n);
	atomic_store(&fs->prefetch_total, (unsigned)n);
	atomic_store(&fs->prefetch_walked, true);
	tm_log(tm_context_logger(fs->ctx), LOG_INFO, "prefetch: %zu traces to index", n);
	for (size_t i = 0; i < n && !atomic_load(&fs->stop_indexing); i++) {
		struct tm_fs_found *f = &found[i];
		int err = f->is_virtual ? index_virtual(fs, f->path)
					: tm_index_one(fs->ctx, fs->root_fd, f->path, f->fmt,
						       &f->st, true, NULL);
		if (err) {
			tm_log(tm_context_logger(fs->ctx), LOG_ERR,
			       "prefetch: %s: indexing failed: %s", f->path, strerror(-err));
			atomic_fetch_add(&fs->prefetch_failed, 1);
		}
		atomic_fetch_add(&fs->prefetch_done, 1);
	}
	if (!atomic_load(&fs->stop_indexing))
		tm_log(tm_context_logger(fs->ctx), LOG_INFO, "prefetch: done, %zu traces", n);
	atomic_store(&fs->prefetch_over, true);
	tm_fs_found_free(found, n);
	return NULL;
}

int tm_fs_prefetch_all(struct tm_fs *fs)
{
	atomic_store(&fs->stop_indexing, false);
	int err = pthread_create(&fs->indexer, NULL, indexer, fs);
	if (err)
		return -err;
	fs->indexing = true;
	return 0;
}

void tm_fs_prefetch_stop(struct tm_fs *fs)
{
	if (!fs->indexing)
		return;
	atomic_store(&fs->stop_indexing, true);
	tm_context_stop(fs->ctx); /* and the build under way */
	pthread_join(fs->indexer, NULL);
	fs->indexing = false;
}

int tm_fs_prefetch_state(struct tm_fs *fs, char *buf, size_t len)
{
	unsigned failed = atomic_load(&fs->prefetch_failed);
	char failures[48] = "";
	if (failed)
		snprintf(failures, sizeof(failures), ", %u failed", failed);
	if (!fs->indexing)
		return snprintf(buf, len, "# prefetch: off\n");
	if (!atomic_load(&fs->prefetch_walked))
		return snprintf(buf, len, "# prefetch: finding the traces\n");
	return snprintf(buf, len, "# prefetch: %u of %u traces, %s%s\n",
			atomic_load(&fs->prefetch_done), atomic_load(&fs->prefetch_total),
			atomic_load(&fs->prefetch_over) ? "done" : "running", failures);
}
