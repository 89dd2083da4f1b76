/* Open files of the mount (views, source files shown as they are, .tracemount files), and the
 * attributes of paths, which fall back to an open file's when its path no longer resolves. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>

#include "tracemount/derive.h"
#include "tracemount/archive.h"
#include "tracemount/context.h"
#include "tracemount/fs.h"
#include "tracemount/log.h"
#include "tracemount/trace.h"

/* A view of node n opened into f: its reader, which builds what the view needs. */
static int open_view(struct tm_fs *fs, const struct tm_node *n, struct tm_fs_file *f)
{
	int err = tm_fs_node_source(fs, n, &f->src);
	if (err < 0)
		return err;
	struct tm_open_trace ot;
	tm_trace_open(&ot, n->trace, &f->src);
	err = tm_reader_open(&f->reader, &ot, (unsigned)n->view); /* holds the trace */
	tm_trace_close(&ot);
	if (err) {
		if (err != -EINTR && err != -ECANCELED) /* not a failure: the reader left */
			tm_log(tm_context_logger(fs->ctx), LOG_ERR, "%s: indexing failed: %s",
			       n->src, strerror(-err));
		tm_source_close(&f->src);
		return err;
	}
	/* a product's view may have been sized 0 by a listing: the FUSE layer has the kernel
	 * forget that size, which its first read then asks for again (auto_inval_data) */
	f->sized_at_open = tm_trace_view(n->trace, (unsigned)n->view)->products != 0;
	f->uncached = tm_trace_replaced(n->trace);
	return 0;
}

int tm_fs_open(struct tm_fs *fs, const char *path, int flags, struct tm_fs_file **out)
{
	struct tm_node n;
	int err;

	if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
		return -EROFS;
	if ((err = tm_fs_resolve(fs, path, &n)) < 0)
		return err;
	struct tm_fs_file *f = calloc(1, sizeof(*f));
	if (!f) {
		err = -ENOMEM;
		goto out_node;
	}
	f->kind = n.kind;
	f->st = n.st;
	if (!(f->path = strdup(path))) {
		err = -ENOMEM;
		free(f);
		goto out_node;
	}
	f->meta = n.meta;
	switch (n.kind) {
	case TM_NODE_FILE: err = tm_fs_node_source(fs, &n, &f->src); break;
	case TM_NODE_ARCHIVE_ERRORS: {
		size_t len;
		const char *text = tm_archive_errors(n.arc, &len);
		if (!(f->text = malloc(len ? len : 1))) {
			err = -ENOMEM;
			break;
		}
		memcpy(f->text, text, len);
		f->text_len = len;
		break;
	}
	case TM_NODE_VIEW: err = open_view(fs, &n, f); break;
	case TM_NODE_META:
		err = tm_fs_meta_text(fs, n.meta, &f->text, &f->text_len);
		f->uncached = true; /* status changes */
		break;
	case TM_NODE_REPORT:
		err = tm_fs_trace_report_html(fs, &n, &f->text, &f->text_len);
		f->sized_at_open = true;
		f->uncached = true; /* its trace's file may change, its page with it */
		break;
	case TM_NODE_LINK: err = -ELOOP; break;
	default: err = -EISDIR;
	}
	if (err) {
		free(f->path);
		free(f);
		goto out_node;
	}
	pthread_mutex_lock(&fs->files_lock);
	f->next = fs->files;
	if (f->next)
		f->next->prev = f;
	fs->files = f;
	pthread_mutex_unlock(&fs->files_lock);
	*out = f;
out_node:
	tm_node_put(&n);
	return err;
}

int tm_fs_fgetattr(struct tm_fs *fs, struct tm_fs_file *f, struct stat *st)
{
	switch (f->kind) {
	case TM_NODE_VIEW: tm_fs_view_stat(&f->st, tm_reader_size(&f->reader), st); return 0;
	case TM_NODE_FILE:
		if (f->src.ops->identity) /* an archive's member: as it was at open */
			*st = f->st;
		else if (fstat(f->src.fd, st) < 0)
			return -errno;
		tm_fs_source_stat(st);
		return 0;
	case TM_NODE_META: tm_fs_meta_stat(fs, f->meta, f->text_len, st); return 0;
	case TM_NODE_REPORT:
	case TM_NODE_ARCHIVE_ERRORS: tm_fs_view_stat(&f->st, f->text_len, st); return 0;
	default: return -EISDIR;
	}
}

int tm_fs_open_file_attrs(struct tm_fs *fs, const char *path, struct stat *st)
{
	int err = -ENOENT;
	pthread_mutex_lock(&fs->files_lock);
	for (struct tm_fs_file *f = fs->files; f; f = f->next)
		if (strcmp(f->path, path) == 0 && (err = tm_fs_fgetattr(fs, f, st)) == 0)
			break;
	pthread_mutex_unlock(&fs->files_lock);
	return err;
}

ssize_t tm_fs_read(struct tm_fs *fs, struct tm_fs_file *f, char *buf, size_t size, off_t off)
{
	ssize_t n = 0;
	if (off < 0)
		return -EINVAL;
	switch (f->kind) {
	case TM_NODE_VIEW:
		n = tm_reader_read(&f->reader, buf, size, (uint64_t)off);
		if (n < 0)
			tm_log(tm_context_logger(fs->ctx), LOG_ERR,
			       "%s/%s: read at offset %lld: %s", tm_trace_path(f->reader.ot.trace),
			       tm_trace_view(f->reader.ot.trace, f->reader.view)->path,
			       (long long)off, strerror((int)-n));
		break;
	case TM_NODE_FILE: n = tm_source_read(&f->src, buf, size, (uint64_t)off); break;
	case TM_NODE_META:
	case TM_NODE_REPORT:
	case TM_NODE_ARCHIVE_ERRORS:
		if ((size_t)off < f->text_len) {
			n = (ssize_t)(f->text_len - (size_t)off < size ? f->text_len - (size_t)off
								       : size);
			memcpy(buf, f->text + off, (size_t)n);
		}
		break;
	default: n = -EISDIR;
	}
	return n;
}

void tm_fs_release(struct tm_fs *fs, struct tm_fs_file *f)
{
	pthread_mutex_lock(&fs->files_lock);
	if (f->prev)
		f->prev->next = f->next;
	else
		fs->files = f->next;
	if (f->next)
		f->next->prev = f->prev;
	pthread_mutex_unlock(&fs->files_lock);
	if (f->kind == TM_NODE_VIEW)
		tm_reader_close(&f->reader);
	if (f->kind == TM_NODE_VIEW || f->kind == TM_NODE_FILE)
		tm_source_close(&f->src);
	free(f->text);
	free(f->path);
	free(f);
}

/* A trace shown as a folder: readable where the file is, traversable where readable. */
static void as_folder(struct stat *st)
{
	mode_t perm = st->st_mode & 0444;
	st->st_mode = S_IFDIR | perm | perm >> 2;
	st->st_nlink = 2;
	st->st_size = 0;
	st->st_blocks = 0;
}

static int view_attrs(struct tm_fs *fs, struct tm_node *n, struct stat *st)
{
	struct tm_source src;
	struct tm_open_trace ot;
	uint64_t size;
	int err = tm_fs_node_source(fs, n, &src);
	if (err)
		return err;
	tm_trace_open(&ot, n->trace, &src);
	err = tm_view_size(&ot, (unsigned)n->view, &size); /* a product's: built first */
	tm_trace_close(&ot);
	tm_source_close(&src);
	if (err) {
		if (err != -EINTR && err != -ECANCELED) /* not a failure: the reader left */
			tm_log(tm_context_logger(fs->ctx), LOG_ERR, "%s: indexing failed: %s",
			       n->src, strerror(-err));
		return err;
	}
	tm_fs_view_stat(&n->st, size, st);
	return 0;
}

int tm_fs_getattr(struct tm_fs *fs, const char *path, struct stat *st)
{
	struct tm_node n;
	char *text;
	size_t len;
	int err = tm_fs_resolve(fs, path, &n);
	if (err) /* gone or unreadable now, but open (fstat): the open file's attributes */
		return tm_fs_open_file_attrs(fs, path, st) == 0 ? 0 : err;
	switch (n.kind) {
	case TM_NODE_DIR:
	case TM_NODE_FILE:
		*st = n.st;
		tm_fs_source_stat(st);
		break;
	case TM_NODE_LINK: *st = n.st; break;
	case TM_NODE_ARCHIVE:
		*st = n.st;
		if (!n.in_arc[0]) /* the archive's file */
			as_folder(st);
		tm_fs_source_stat(st);
		break;
	case TM_NODE_ARCHIVE_ERRORS: {
		size_t len;
		tm_archive_errors(n.arc, &len);
		tm_fs_view_stat(&n.st, len, st);
		break;
	}
	case TM_NODE_TRACE:
	case TM_NODE_VIEW_DIR:
		*st = n.st;
		as_folder(st);
		break;
	case TM_NODE_VIEW: err = view_attrs(fs, &n, st); break;
	case TM_NODE_META_DIR: tm_fs_meta_dir_stat(fs, st); break;
	case TM_NODE_META:
		if ((err = tm_fs_meta_text(fs, n.meta, &text, &len)) == 0) {
			tm_fs_meta_stat(fs, n.meta, len, st);
			free(text);
		}
		break;
	case TM_NODE_REPORT: /* its size is its bytes': rendered to be measured */
		if ((err = tm_fs_trace_report_html(fs, &n, &text, &len)) == 0) {
			tm_fs_view_stat(&n.st, len, st);
			free(text);
		}
		break;
	}
	tm_node_put(&n);
	return err;
}
