/* The mounted tree, without FUSE: what a path in the mount is, its attributes, its entries
 * and its bytes. The FUSE glue (src/fuse/tmfs.c) only translates calls to these. */
#ifndef TRACEMOUNT_FS_H
#define TRACEMOUNT_FS_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <time.h>

#include "tracemount/reader.h"
#include "tracemount/source.h"

struct tm_archive;
struct tm_archives;
struct tm_context;
struct tm_format;
struct tm_trace;
struct tm_virtual;

/* The name of the hidden folder at the mount root. */
#define TM_META_DIR ".tracemount"

struct tm_fs {
	struct tm_context *ctx;
	int root_fd;  /* the SOURCE directory, or the directory holding the SOURCE file */
	char *single; /* when SOURCE is a file: its name, the root's only entry */
	uid_t uid;    /* owner of the virtual .tracemount folder */
	gid_t gid;
	struct timespec mounted;
	/* -o prefetch: the thread indexing every trace in the background, and its progress for
	 * .tracemount/status: traces found (known once the walk is over), indexed, failed */
	pthread_t indexer;
	bool indexing;
	atomic_bool stop_indexing;
	atomic_bool prefetch_walked, prefetch_over;
	atomic_uint prefetch_total, prefetch_done, prefetch_failed;
	/* The open files, released by tm_fs_destroy if the kernel never did: it sends no
	 * RELEASE for files closed after a lazy unmount. */
	pthread_mutex_t files_lock;
	struct tm_fs_file *files;
	struct tm_archives *archives; /* the archives seen (archive.h) */
};

enum tm_node_kind {
	TM_NODE_DIR,		/* a source folder */
	TM_NODE_FILE,		/* a source file shown as it is */
	TM_NODE_LINK,		/* a symbolic link, shown as a link */
	TM_NODE_TRACE,		/* a trace file, shown as a folder of views */
	TM_NODE_VIEW_DIR,	/* a folder of views inside a trace, such as class/ */
	TM_NODE_VIEW,		/* a view */
	TM_NODE_META_DIR,	/* .tracemount/ */
	TM_NODE_META,		/* a file in .tracemount/ */
	TM_NODE_REPORT,		/* a trace folder's report.html (trace_report.c) */
	TM_NODE_ARCHIVE,	/* an archive shown as a folder, or a folder inside it */
	TM_NODE_ARCHIVE_ERRORS, /* the archive's .errors.txt */
};

/* The file at the root of every archive's folder that says what its pass found wrong. */
#define TM_ARCHIVE_ERRORS ".errors.txt"

/* The name of the page in every trace folder. */
#define TM_TRACE_REPORT "report.html"

enum tm_meta_file { TM_META_VERSION, TM_META_FORMATS, TM_META_STATUS, TM_META_REPORT, TM_META_N };

struct tm_node {
	enum tm_node_kind kind;
	char src[PATH_MAX];	     /* source path relative to root_fd; "." for the root */
	char sub[PATH_MAX];	     /* inside a trace: the view or view folder path */
	struct stat st;		     /* the source object's attributes (lstat) */
	const struct tm_format *fmt; /* TRACE, VIEW_DIR, VIEW, REPORT */
	struct tm_trace *trace;	     /* VIEW_DIR, VIEW, REPORT: a reference, dropped by
					tm_node_put */
	int view;		     /* VIEW: index in the trace's view table */
	enum tm_meta_file meta;	     /* META */
	struct tm_virtual *virt; /* TRACE, VIEW_DIR, VIEW, REPORT of a virtual trace (virtual.h),
				    of format fmt: freed by tm_node_put */
	/* Below an archive (ARCHIVE, ARCHIVE_ERRORS, and the FILE, LINK and trace nodes of its
	 * members): the archive (a reference, dropped by tm_node_put), the path in it, and the
	 * entry whose bytes a FILE or trace has; st is then the member's (times, size, mode) on
	 * the archive file's device, inode and change time, which tell its versions apart. */
	struct tm_archive *arc;
	char in_arc[PATH_MAX];
	uint32_t member;
};

/* Problems that reach a reader (a failed index build, a failed read) go to the context's log
 * (tm_context_set_log). */

/* Opens SOURCE (a folder or one trace file). Returns 0, or -errno with a message in err. */
int tm_fs_init(struct tm_fs *fs, struct tm_context *ctx, const char *source, char *err,
	       size_t err_len);
/* Stops -o prefetch and every index pass still running, releases the files left open. */
void tm_fs_destroy(struct tm_fs *fs);

/* -o prefetch: indexes every trace under SOURCE, one at a time, on a thread of its own that
 * tm_fs_destroy stops. Returns 0 or -errno. */
int tm_fs_prefetch_all(struct tm_fs *fs);
/* Stops that thread, and the build it runs, if it runs. */
void tm_fs_prefetch_stop(struct tm_fs *fs);

/* The line of .tracemount/status on -o prefetch, "# prefetch: 59 of 130 traces, running\n"
 * (or "off", "finding the traces", "..., done, 2 failed"), in buf. Returns snprintf's count. */
int tm_fs_prefetch_state(struct tm_fs *fs, char *buf, size_t len);

/* A trace under SOURCE, as tm_fs_find_traces finds it: its path relative to SOURCE's
 * folder, format and attributes (lstat, or the virtual trace's). */
struct tm_fs_found {
	char *path;
	const struct tm_format *fmt;
	struct stat st;
	bool is_virtual; /* a virtual trace of its folder (virtual.h) */
};

/* Every trace under SOURCE: the files tm_walk finds (walk.h), in its order, then the virtual
 * traces of their folders, without opening a trace but to detect its format or list its
 * folder's virtual traces. Folders that cannot be read go to unread (may be NULL). Stops early
 * when the prefetch thread is told to stop. Sets *found (free with tm_fs_found_free) and *n,
 * with what was found, even on error. Returns 0 or -ENOMEM. */
int tm_fs_find_traces(struct tm_fs *fs, void (*unread)(void *arg, const char *path, int err),
		      void *arg, struct tm_fs_found **found, size_t *n);
void tm_fs_found_free(struct tm_fs_found *found, size_t n);

/* What path ("/a/b.byu/dump.txt") is. Returns 0 or -errno; release with tm_node_put(). */
int tm_fs_resolve(struct tm_fs *fs, const char *path, struct tm_node *n);
void tm_node_put(struct tm_node *n);

/* The bytes of the trace of node n (TRACE, VIEW_DIR, VIEW): its file, or a virtual trace's
 * (format.h). Returns 0 or -errno; the caller closes src. */
int tm_fs_node_source(struct tm_fs *fs, const struct tm_node *n, struct tm_source *src);

int tm_fs_getattr(struct tm_fs *fs, const char *path, struct stat *st);
int tm_fs_readlink(struct tm_fs *fs, const char *path, char *buf, size_t size);
/* An entry of a listing: its name and type, and its attributes when the listing knows them
 * without work (else NULL: a lookup gives them). Returns non-zero to stop the listing. */
typedef int tm_fs_fill_fn(void *arg, const char *name, mode_t type, const struct stat *st);

/* Calls fill for each entry of folder path, "." and ".." first. A product's file not built
 * yet comes with its attributes, size 0 (doc/architecture.md, "Products"): a listing with
 * sizes (ls -l, readdirplus) builds no product, where a stat of the file waits for it. */
int tm_fs_readdir(struct tm_fs *fs, const char *path, tm_fs_fill_fn *fill, void *arg);
int tm_fs_statfs(struct tm_fs *fs, struct statvfs *st);

/* An open file of the mount. Nothing in it changes after open, so reads may run in parallel. */
struct tm_fs_file {
	enum tm_node_kind kind;
	struct tm_source src;
	struct tm_reader reader; /* VIEW: holds the trace */
	char *text;		 /* META, REPORT: the content, fixed at open */
	size_t text_len;
	/* To be served around the kernel's page cache: .tracemount files, whose content
	 * changes, and the views of a trace that replaced a changed file, whose path's pages
	 * the readers of the old version may still fill. */
	bool uncached;
	/* a product's file (doc/architecture.md, "Products"): a listing before its open may
	 * have told the kernel size 0, which the FUSE layer has it forget once open, so that
	 * its first read asks for the size again (FUSE_CAP_AUTO_INVAL_DATA) */
	bool sized_at_open;
	char *path;			/* in the mount, as opened */
	struct stat st;			/* the source object's attributes at open (lstat) */
	enum tm_meta_file meta;		/* META: which */
	struct tm_fs_file *prev, *next; /* in tm_fs.files */
};

/* Opens path for reading (flags are open(2)'s). Returns 0 or -errno (-EROFS for writing). */
int tm_fs_open(struct tm_fs *fs, const char *path, int flags, struct tm_fs_file **out);
ssize_t tm_fs_read(struct tm_fs *fs, struct tm_fs_file *f, char *buf, size_t size, off_t off);
/* The attributes of an open file, as they were at open: a view keeps its size and reads to its
 * end whatever becomes of its path (a trace deleted, made unreadable or replaced), as an open
 * file on any Unix filesystem does. Returns 0 or -errno. */
int tm_fs_fgetattr(struct tm_fs *fs, struct tm_fs_file *f, struct stat *st);
/* The attributes of a file open at path: what a stat of a path that no longer resolves (its
 * trace deleted or made unreadable) gives while the path is open. Returns 0 or -ENOENT. */
int tm_fs_open_file_attrs(struct tm_fs *fs, const char *path, struct stat *st);
void tm_fs_release(struct tm_fs *fs, struct tm_fs_file *f);

/* The attributes of a view of size bytes of a trace whose file has attributes trace. */
void tm_fs_view_stat(const struct stat *trace, uint64_t size, struct stat *st);
/* A source file or folder's attributes st as the mount shows them: read-only, and without
 * set-user-ID, set-group-ID or sticky bits (a read-only view is no place for privilege). */
void tm_fs_source_stat(struct stat *st);
/* The attributes of .tracemount file which, len bytes long, and of the folder. */
void tm_fs_meta_stat(struct tm_fs *fs, enum tm_meta_file which, size_t len, struct stat *st);
void tm_fs_meta_dir_stat(struct tm_fs *fs, struct stat *st);

/* The content of a .tracemount file. Returns 0 or -ENOMEM; the caller frees *text. */
int tm_fs_meta_text(struct tm_fs *fs, enum tm_meta_file which, char **text, size_t *len);
extern const char *const tm_meta_names[TM_META_N];

/* .tracemount/report.html: every trace under SOURCE (found as tm_walk finds them) in one
 * self-contained HTML table, each as the context knows it now (no trace is indexed for it).
 * Returns 0 or -ENOMEM; the caller frees *text. */
int tm_fs_report_html(struct tm_fs *fs, char **text, size_t *len);

/* A trace folder's report.html, of node n (REPORT): the facts of its stats.json, the first
 * lines of its errors.txt, a link to each of its views and its plots/ inline, in one
 * self-contained page, from the trace's index and every product (built if needed). Returns 0
 * or -errno; the caller frees *text. */
int tm_fs_trace_report_html(struct tm_fs *fs, const struct tm_node *n, char **text, size_t *len);

#endif
