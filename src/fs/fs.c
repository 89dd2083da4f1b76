/* The mounted tree's life: SOURCE opened at the start, and at the end the background indexing
 * stopped and the files the kernel left open released. The top of src/fs: it calls the other
 * files, and none calls it. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracemount/context.h"
#include "tracemount/archive.h"
#include "tracemount/fs.h"

static int open_source(struct tm_fs *fs, struct tm_context *ctx, const char *source, char *err,
		       size_t err_len);

int tm_fs_init(struct tm_fs *fs, struct tm_context *ctx, const char *source, char *err,
	       size_t err_len)
{
	memset(fs, 0, sizeof(*fs));
	pthread_mutex_init(&fs->files_lock, NULL);
	fs->ctx = ctx;
	fs->root_fd = -1;
	fs->uid = getuid();
	fs->gid = getgid();
	clock_gettime(CLOCK_REALTIME, &fs->mounted);
	if (tm_archives_new(ctx, &fs->archives) < 0) {
		snprintf(err, err_len, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	int ret = open_source(fs, ctx, source, err, err_len);
	if (ret < 0) {
		tm_archives_free(fs->archives);
		fs->archives = NULL;
	}
	return ret;
}

/* SOURCE: a folder, or one trace or archive file whose folder becomes the root. */
static int open_source(struct tm_fs *fs, struct tm_context *ctx, const char *source, char *err,
		       size_t err_len)
{
	struct stat st;

	if (stat(source, &st) < 0) {
		int e = errno;
		if (e == ENOENT)
			snprintf(err, err_len, "source %s does not exist", source);
		else
			snprintf(err, err_len, "source %s: %s", source, strerror(e));
		return -e;
	}
	if (S_ISDIR(st.st_mode)) {
		fs->root_fd = open(source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fs->root_fd < 0) {
			snprintf(err, err_len, "%s: %s", source, strerror(errno));
			return -errno;
		}
		char *real = realpath(source, NULL); /* recorded in index files */
		int ret = real ? tm_context_set_root(ctx, real) : 0;
		free(real);
		return ret;
	}
	/* A single trace: through any symbolic links to the file itself, whose folder becomes the
	 * root (the mount shows the file under its own name). */
	char *real = realpath(source, NULL);
	if (!real) {
		snprintf(err, err_len, "%s: %s", source, strerror(errno));
		return -errno;
	}
	char *copy_dir = strdup(real), *copy_base = strdup(real);
	free(real);
	int ret = -ENOMEM;
	if (!copy_dir || !copy_base)
		goto out;
	const char *dir = dirname(copy_dir), *base = basename(copy_base);
	ret = -EINVAL;
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, err_len, "%s: neither a folder nor a regular file", source);
		goto out;
	}
	if (strcmp(base, TM_META_DIR) == 0) { /* the control folder's name: it would hide it */
		snprintf(err, err_len,
			 "%s: a trace named " TM_META_DIR " cannot be mounted alone; mount its "
			 "folder, or a link to it under another name",
			 source);
		goto out;
	}
	fs->root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fs->root_fd < 0) {
		ret = -errno;
		snprintf(err, err_len, "%s: %s", dir, strerror(errno));
		goto out;
	}
	bool tar = tm_archive_name(base);
	if (!tar && !tm_context_detect_also(ctx, fs->root_fd, base, NULL, tm_archive_head, &tar) &&
	    !tar) {
		snprintf(err, err_len,
			 "%s: not a recognised trace or archive (see -o format=GLOB:NAME)", source);
		goto out;
	}
	ret = (fs->single = strdup(base)) && tm_context_set_root(ctx, dir) == 0 ? 0 : -ENOMEM;
out:
	if (ret < 0 && fs->root_fd >= 0) {
		close(fs->root_fd);
		fs->root_fd = -1;
	}
	free(copy_dir);
	free(copy_base);
	return ret;
}

void tm_fs_destroy(struct tm_fs *fs)
{
	tm_fs_prefetch_stop(fs);
	if (fs->ctx) /* every pass still running, which may hold an archive's member */
		tm_context_stop(fs->ctx);
	while (fs->files)
		tm_fs_release(fs, fs->files);
	pthread_mutex_destroy(&fs->files_lock);
	tm_archives_free(fs->archives);
	fs->archives = NULL;
	if (fs->root_fd >= 0)
		close(fs->root_fd);
	free(fs->single);
	fs->root_fd = -1;
	fs->single = NULL;
}
