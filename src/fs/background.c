/* -o prefetch: every trace under SOURCE indexed in the background after mounting, so that
 * the first reads find their indexes ready (and, with a cache folder, the index files). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <syslog.h>

#include "tracemount/fs.h"
#include "tracemount/walk.h"

static int index_found(void *arg, const char *path, const struct tm_format *fmt,
		       const struct stat *st, int err)
{
	struct tm_fs *fs = arg;
	if (atomic_load(&fs->stop_indexing))
		return 1;
	if (!fmt) {
		tm_fs_log(fs, LOG_WARNING, "prefetch: %s: %s", path, strerror(-err));
		return 0;
	}
	err = tm_index_one(fs->ctx, fs->root_fd, path, fmt, st, NULL);
	if (err)
		tm_fs_log(fs, LOG_ERR, "prefetch: %s: indexing failed: %s", path, strerror(-err));
	return 0;
}

static void *indexer(void *arg)
{
	struct tm_fs *fs = arg;
	tm_walk(fs->ctx, fs->root_fd, fs->single ? fs->single : ".", index_found, fs);
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
