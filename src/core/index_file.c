/* Index files in the cache folder: see index_file.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <zlib.h>

#include "tracemount/build_id.h"
#include "tracemount/format.h"
#include "tracemount/compress.h"
#include "tracemount/index.h"
#include "tracemount/index_file.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "tracemount/table.h"
#include "tracemount/util.h"
#include "tracemount/view.h"

#define MAGIC "TMINDEX\n"

/* Written as it is: the files are for machines of one byte order (the magic number below
 * tells the others apart). A file is this header, then its body: the trace's path
 * (trace_len bytes, no NUL), the rows, stats.json, errors.txt, the table views, the access
 * points and their windows. */
struct file_header {
	char magic[8];
	uint32_t version, header_size;
	uint64_t byte_order; /* 0x0102030405060708 */
	char format[32];
	char build[TM_BUILD_KEY_LEN]; /* tm_build_key() of the build that wrote it */
	struct tm_trace_key key;
	uint64_t layout; /* fingerprint of the format's records and views */
	uint32_t n_views, n_classes, state_words, row_words;
	uint64_t n_rows, raw_size, n_errors;
	uint32_t truncated, codec; /* codec: compress.h's id, 0 for none */
	uint64_t stats_len, errors_len;
	uint64_t n_tables, tables_len; /* tables_len: each length, compressed length, bytes */
	uint64_t streams;	       /* tm_index.streams: whose per-stream tables follow */
	uint64_t gz_points, gz_windows_len, gz_in_size, gz_out_size;
	uint64_t trace_len;
	uint64_t body_len;
	uint32_t body_crc, header_crc;
};

static uint32_t crc(const void *p, size_t n)
{
	return (uint32_t)crc32_z(crc32_z(0, NULL, 0), p, n);
}

int tm_trace_key_of(struct tm_source *src, struct tm_trace_key *key)
{
	struct stat st;
	memset(key, 0, sizeof(*key));
	if (src->ops->identity) {
		struct timespec mtime;
		src->ops->identity(src, &key->size, &mtime);
		key->mtime_sec = mtime.tv_sec;
		key->mtime_nsec = mtime.tv_nsec;
	} else {
		if (fstat(src->fd, &st) < 0)
			return -errno;
		key->size = (uint64_t)st.st_size;
		key->mtime_sec = st.st_mtim.tv_sec;
		key->mtime_nsec = st.st_mtim.tv_nsec;
	}
	uint8_t *buf = malloc(TM_KEY_BLOCK);
	if (!buf)
		return -ENOMEM;
	uint64_t ends[2] = {0, key->size > TM_KEY_BLOCK ? key->size - TM_KEY_BLOCK : 0};
	uint32_t sums[2];
	int err = 0;
	for (int i = 0; i < 2 && !err; i++) {
		ssize_t n = tm_source_read(src, buf, TM_KEY_BLOCK, ends[i]);
		if (n < 0)
			err = (int)n;
		else
			sums[i] = crc(buf, (size_t)n);
	}
	free(buf);
	if (!err)
		key->hash = (uint64_t)sums[0] << 32 | sums[1];
	return err;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
	return s ? tm_fnv1a(h, s, strlen(s) + 1) : tm_fnv1a(h, "", 1);
}

/* What an index of fmt looks like, whatever the trace's name: a file written by a version of
 * tracemount whose format has other records, classes or views is foreign. */
static uint64_t layout_of(const struct tm_format *fmt, const struct tm_view_table *views)
{
	uint64_t h = fnv_str(TM_FNV_START, fmt->name);
	uint64_t sizes[] = {
	    TM_INDEX_FILE_VERSION, fmt->record_size, fmt->state_size,	     fmt->chunk_records,
	    fmt->n_classes,	   fmt->n_tags,	     fmt->n_extra_views,     fmt->common_classes,
	    views->n_record_views, views->n_tables,  views->n_stream_tables,
	};
	h = tm_fnv1a(h, sizes, sizeof(sizes));
	for (unsigned c = 0; c < fmt->n_classes; c++)
		h = fnv_str(h, fmt->classes[c]);
	for (unsigned b = 0; b < fmt->n_tags; b++)
		h = fnv_str(h, fmt->tags[b]);
	for (unsigned i = 0; i < fmt->n_extra_views; i++) {
		h = fnv_str(h, fmt->extra_views[i].path);
		h = tm_fnv1a(h, &fmt->extra_views[i].class_mask, sizeof(uint64_t));
	}
	for (unsigned k = 0; k < fmt->n_table_views; k++)
		h = fnv_str(h, fmt->table_views[k]);
	h = fnv_str(h, fmt->class_ext);
	return fnv_str(h, fmt->group_view);
}

void tm_index_file_name(const struct tm_format *fmt, const struct tm_trace_key *key, char *buf,
			size_t len)
{
	uint64_t h = tm_fnv1a(TM_FNV_START, fmt->name, strlen(fmt->name) + 1);
	h = tm_fnv1a(h, key, sizeof(*key));
	snprintf(buf, len, "%016" PRIx64 ".tmi", h);
}

int tm_index_store_default(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (xdg && *xdg == '/')
		snprintf(buf, len, "%s/tracemount", xdg);
	else if (home && *home)
		snprintf(buf, len, "%s/.cache/tracemount", home);
	else
		return -ENOENT;
	return 0;
}

static int say(char *err, size_t len, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int say(char *err, size_t len, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return code;
}

/* mkdir -p, each new folder 0700. */
static int make_dirs(char *path)
{
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;
		*p = '\0';
		int r = mkdir(path, 0700);
		*p = c;
		if (r < 0 && errno != EEXIST)
			return -errno;
		if (!c)
			return 0;
	}
}

/* The folder dir is in, as dir names it ("." for a bare name), in buf. */
static void parent_of(const char *dir, char *buf, size_t len)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	while (n && dir[n - 1] != '/')
		n--;
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (!n)
		snprintf(buf, len, ".");
	else
		snprintf(buf, len, "%.*s", (int)n, dir);
}

/* Creates the folder dir (as the user named it: shown in err) if it is missing, its parents
 * too when parents is true, and opens it at path (dir made absolute), checking it is the
 * user's and private. Returns the fd, or -errno with a message in err. */
static int open_folder(const char *dir, const char *path, bool parents, char *err, size_t err_len)
{
	struct stat st;
	char *copy = strdup(path);
	int r = !copy					   ? -ENOMEM
		: parents				   ? make_dirs(copy)
		: mkdir(path, 0700) < 0 && errno != EEXIST ? -errno
							   : 0;
	free(copy);
	if (r == -ENOENT && !parents) {
		char up[PATH_MAX];
		parent_of(dir, up, sizeof(up));
		return say(err, err_len, r,
			   "cache folder %s: %s does not exist (only the last folder of a cache "
			   "path is created)",
			   dir, up);
	}
	if (r < 0)
		return say(err, err_len, r, "cache folder %s: %s", dir, strerror(-r));
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		return say(err, err_len, r, "cache folder %s: %s", dir, strerror(-r));
	}
	if (st.st_uid != geteuid()) {
		close(fd);
		return say(err, err_len, -EPERM,
			   "cache folder %s belongs to uid %u, not to this user", dir,
			   (unsigned)st.st_uid);
	}
	if ((st.st_mode & 077) && fchmod(fd, 0700) < 0) { /* index files are private */
		r = -errno;
		close(fd);
		return say(err, err_len, r, "cache folder %s: chmod 0700: %s", dir, strerror(-r));
	}
	return fd;
}

/* A writer's temporary file: ".NAME.tmi.PID.X" (tm_index_file_store), NAME 16 hex digits. */
static bool is_temporary(const char *name)
{
	if (name[0] != '.')
		return false;
	for (int i = 1; i <= 16; i++)
		if (!strchr("0123456789abcdef", name[i]) || !name[i])
			return false;
	return strncmp(name + 17, ".tmi.", 5) == 0 && name[22];
}

/* Removes the temporary files of writers that died while writing. By age, not by pid: the
 * folder may be shared by machines, and a live writer's file is seconds old. Best effort: a
 * file left is only space. */
static void remove_stale(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	time_t now = time(NULL);
	struct dirent *e;
	struct stat st;
	while ((e = readdir(d)))
		if (is_temporary(e->d_name) &&
		    fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && st.st_mtime < now - TM_STALE_TMP_SECONDS)
			unlinkat(dirfd, e->d_name, 0);
	closedir(d);
}

int tm_index_store_open(struct tm_index_store *s, const char *dir, bool parents, char *err,
			size_t err_len)
{
	char cwd[PATH_MAX];
	memset(s, 0, sizeof(*s));
	s->dirfd = -1;
	/* absolute: the folder is opened again by its path when it is deleted, after the daemon
	 * changed its current folder */
	if (dir[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return say(err, err_len, -errno, "cache folder %s: %s", dir, strerror(errno));
	if ((dir[0] == '/' ? !(s->dir = strdup(dir)) : asprintf(&s->dir, "%s/%s", cwd, dir) < 0)) {
		s->dir = NULL;
		return say(err, err_len, -ENOMEM, "out of memory");
	}
	int fd = open_folder(dir, s->dir, parents, err, err_len);
	if (fd < 0) {
		free(s->dir);
		s->dir = NULL;
		return fd;
	}
	s->dirfd = fd;
	pthread_mutex_init(&s->lock, NULL);
	remove_stale(fd);
	return 0;
}

void tm_index_store_close(struct tm_index_store *s)
{
	if (!s->dir)
		return; /* never opened, or closed */
	close(s->dirfd);
	for (size_t i = 0; i < s->n_old_fds; i++)
		close(s->old_fds[i]);
	free(s->old_fds);
	free(s->dir);
	pthread_mutex_destroy(&s->lock);
	memset(s, 0, sizeof(*s));
	s->dirfd = -1;
}

/* The folder's fd for one load or store: when the folder was deleted since it was opened
 * (an operator cleared the cache, maybe making it again), the folder at its path, opened
 * again. The fd it replaces stays open until the store closes: another thread may be using
 * it. A folder that cannot be opened again leaves the deleted one, where loads find nothing
 * and stores fail, until a later call succeeds. */
static int folder_fd(const struct tm_index_store *cs)
{
	/* a const store's fd is state, not content: loads and stores take it const */
	struct tm_index_store *s = (struct tm_index_store *)cs;
	struct stat st;
	char err[PATH_MAX + 128];
	pthread_mutex_lock(&s->lock);
	int fd = s->dirfd;
	if (fstat(fd, &st) == 0 && st.st_nlink == 0) {
		int *old = realloc(s->old_fds, (s->n_old_fds + 1) * sizeof(*old));
		int fresh = old ? open_folder(s->dir, s->dir, false, err, sizeof(err)) : -ENOMEM;
		if (old)
			s->old_fds = old;
		if (fresh >= 0) {
			old[s->n_old_fds++] = fd;
			s->dirfd = fd = fresh;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return fd;
}

static size_t rows_bytes(const struct file_header *h)
{
	return (size_t)(h->n_rows * h->row_words * sizeof(uint64_t));
}

static size_t points_bytes(const struct file_header *h)
{
	return h->codec ? (size_t)(h->gz_points + 1) * sizeof(struct tm_zpoint) : 0;
}

/* The table views' part of a file: for each, its length, its number of pieces and their
 * compressed length, the pieces' ends, then the pieces (table.h). */
static uint8_t *tables_part(const struct tm_index *ix, uint64_t *len)
{
	uint64_t n = 0;
	for (uint32_t k = 0; k < ix->n_tables; k++) {
		const struct tm_table *t = &ix->tables[k];
		n +=
		    3 * sizeof(uint64_t) +
		    (t->n_pieces ? (t->n_pieces + 1) * sizeof(uint64_t) + t->ends[t->n_pieces] : 0);
	}
	uint8_t *p = malloc(n + 1), *at = p;
	for (uint32_t k = 0; p && k < ix->n_tables; k++) {
		const struct tm_table *t = &ix->tables[k];
		uint64_t z_len = t->n_pieces ? t->ends[t->n_pieces] : 0;
		uint64_t head[3] = {t->len, t->n_pieces, z_len};
		memcpy(at, head, sizeof(head));
		at += sizeof(head);
		if (!t->n_pieces)
			continue;
		memcpy(at, t->ends, (t->n_pieces + 1) * sizeof(uint64_t));
		at += (t->n_pieces + 1) * sizeof(uint64_t);
		memcpy(at, t->z, z_len);
		at += z_len;
	}
	*len = n;
	return p;
}

/* The body's length as the header's sizes give it. */
static uint64_t body_bytes(const struct file_header *h)
{
	return h->trace_len + rows_bytes(h) + h->stats_len + h->errors_len + h->tables_len +
	       points_bytes(h) + h->gz_windows_len;
}

static void fill_header(struct file_header *h, const struct tm_format *fmt,
			const struct tm_view_table *views, const struct tm_trace_key *key,
			const struct tm_index *ix, uint64_t tables_len, uint64_t trace_len)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, MAGIC, 8);
	h->version = TM_INDEX_FILE_VERSION;
	h->header_size = sizeof(*h);
	h->byte_order = 0x0102030405060708ull;
	snprintf(h->format, sizeof(h->format), "%s", fmt->name);
	snprintf(h->build, sizeof(h->build), "%s", tm_build_key());
	h->key = *key;
	h->layout = layout_of(fmt, views);
	h->n_views = ix->n_views;
	h->n_classes = ix->n_classes;
	h->state_words = ix->state_words;
	h->row_words = ix->row_words;
	h->n_rows = ix->n_rows;
	h->raw_size = ix->raw_size;
	h->n_errors = ix->n_errors;
	h->truncated = ix->truncated;
	h->stats_len = ix->stats_len;
	h->errors_len = ix->errors_len;
	h->n_tables = ix->n_tables;
	h->tables_len = tables_len;
	h->streams = ix->streams;
	if (ix->z) {
		h->codec = ix->z->codec->id;
		h->gz_points = ix->z->n_points;
		h->gz_windows_len = ix->z->windows_len;
		h->gz_in_size = ix->z->in_size;
		h->gz_out_size = ix->z->out_size;
	}
	h->trace_len = trace_len;
	h->body_len = body_bytes(h);
}

static int write_all(int fd, const void *p, size_t n)
{
	for (const char *b = p; n;) {
		ssize_t w = write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

int tm_index_file_store_trace(const struct tm_index_store *s, const struct tm_format *fmt,
			      const struct tm_view_table *views, const struct tm_trace_key *key,
			      const struct tm_index *ix, const char *trace)
{
	struct file_header h;
	char name[32];
	uint64_t tables_len;
	size_t trace_len = trace ? strlen(trace) : 0;
	if (trace_len >= PATH_MAX)
		trace_len = 0; /* no path a reader could hold: unknown */
	uint8_t *tables = tables_part(ix, &tables_len);
	if (!tables)
		return -ENOMEM;
	fill_header(&h, fmt, views, key, ix, tables_len, trace_len);
	const struct {
		const void *p;
		size_t n;
	} parts[] = {
	    {trace, trace_len},
	    {ix->rows, rows_bytes(&h)},
	    {ix->stats_json, h.stats_len},
	    {ix->errors_txt, h.errors_len},
	    {tables, h.tables_len},
	    {ix->z ? ix->z->points : NULL, points_bytes(&h)},
	    {ix->z ? ix->z->windows : NULL, h.gz_windows_len},
	};
	uLong sum = crc32_z(0, NULL, 0);
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
		if (parts[i].n)
			sum = crc32_z(sum, parts[i].p, parts[i].n);
	h.body_crc = (uint32_t)sum;
	h.header_crc = crc(&h, sizeof(h));

	tm_index_file_name(fmt, key, name, sizeof(name));
	struct iovec iov[ARRAY_SIZE(parts) + 1] = {{&h, sizeof(h)}};
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
		iov[i + 1] = (struct iovec){(void *)parts[i].p, parts[i].n};
	int err = tm_index_store_write(s, name, iov, ARRAY_SIZE(iov));
	free(tables);
	return err;
}

int tm_index_store_write(const struct tm_index_store *s, const char *name,
			 const struct iovec *parts, size_t n)
{
	char tmp[NAME_MAX + 1];
	/* a name of its own per writer: daemons and machines share the folder */
	snprintf(tmp, sizeof(tmp), ".%.200s.%ld.%lx", name, (long)getpid(),
		 (unsigned long)(uintptr_t)&tmp ^ (unsigned long)random());
	int dirfd = folder_fd(s); /* one folder for the file and its rename */
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int err = 0;
	for (size_t i = 0; i < n && !err; i++)
		if (parts[i].iov_len)
			err = write_all(fd, parts[i].iov_base, parts[i].iov_len);
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && renameat(dirfd, tmp, dirfd, name) < 0)
		err = -errno;
	if (err)
		unlinkat(dirfd, tmp, 0);
	return err;
}

int tm_index_file_store(const struct tm_index_store *s, const struct tm_format *fmt,
			const struct tm_view_table *views, const struct tm_trace_key *key,
			const struct tm_index *ix)
{
	return tm_index_file_store_trace(s, fmt, views, key, ix, NULL);
}

/* Reads n bytes at off. Returns 0, 1 when the file ends first, or -errno. */
static int read_all(int fd, void *p, size_t n, uint64_t off)
{
	for (char *b = p; n;) {
		ssize_t r = pread(fd, b, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return 1;
		b += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/* The header's own fields: NULL when it is a sound header of this build's, else why not.
 * *stale is set when it is sound but was written by another build. */
static const char *check_frame(const struct file_header *h, bool *stale)
{
	struct file_header copy = *h;
	copy.header_crc = 0;
	*stale = false;
	if (memcmp(h->magic, MAGIC, 8) != 0)
		return "not an index file";
	if (h->byte_order != 0x0102030405060708ull)
		return "written on a machine of another byte order";
	if (h->version != TM_INDEX_FILE_VERSION || h->header_size != sizeof(*h)) {
		*stale = true;
		return "written by another build (index file format version differs)";
	}
	if (crc(&copy, sizeof(copy)) != h->header_crc)
		return "header checksum mismatch";
	if (memchr(h->format, '\0', sizeof(h->format)) == NULL)
		return "malformed format name";
	if (memchr(h->build, '\0', sizeof(h->build)) == NULL)
		return "malformed build key";
	if (strcmp(h->build, tm_build_key()) != 0) {
		*stale = true;
		return "written by another build";
	}
	return NULL;
}

/* The header's fields against what this trace and format expect; NULL when all agree. *stale
 * is set when the file is sound but was written by another build. */
static const char *check_header(const struct file_header *h, const struct tm_format *fmt,
				const struct tm_view_table *views, const struct tm_trace_key *key,
				uint64_t file_size, bool *stale)
{
	const char *bad = check_frame(h, stale);
	if (bad)
		return bad;
	if (strcmp(h->format, fmt->name) != 0)
		return "written for another format";
	if (memcmp(&h->key, key, sizeof(*key)) != 0)
		return "written for other content";
	if (h->layout != layout_of(fmt, views))
		return "written for another layout of the format's views";
	if (h->n_views != views->n_record_views || h->n_classes != fmt->n_classes ||
	    h->state_words != (fmt->state_size + 7) / 8 ||
	    h->row_words != TM_ROW_VIEWS + h->n_views + h->n_classes + h->state_words)
		return "row layout differs";
	if (h->codec && !tm_codec_by_id(h->codec))
		return "written for an unknown compression";
	if (!h->n_rows || h->n_rows > file_size / 8 || h->gz_points > file_size ||
	    h->stats_len > file_size || h->errors_len > file_size ||
	    h->gz_windows_len > file_size || h->tables_len > file_size || h->trace_len >= PATH_MAX)
		return "sizes out of range";
	if ((views->n_stream_tables ? h->streams >> TM_MAX_STREAM_VIEWS : h->streams) ||
	    h->n_tables != views->n_tables +
			       (uint64_t)__builtin_popcountll(h->streams) * views->n_stream_tables)
		return "table views out of range";
	uint64_t body = body_bytes(h);
	if (body != h->body_len || file_size != sizeof(*h) + body)
		return "truncated or overlong";
	return NULL;
}

/* One table view from *p, which it advances, with *left bytes of the part left. Returns 0,
 * -EBADMSG with what is wrong in *bad, or -ENOMEM. */
static int take_table(struct tm_table *t, const uint8_t **p, uint64_t *left, const char **bad)
{
	uint64_t head[3];
	*bad = "table views do not fit their part";
	if (*left < sizeof(head))
		return -EBADMSG;
	memcpy(head, *p, sizeof(head));
	*p += sizeof(head);
	*left -= sizeof(head);
	t->len = head[0];
	t->n_pieces = head[1];
	if (t->n_pieces && (t->n_pieces >= *left / sizeof(uint64_t) ||
			    head[2] > *left - (t->n_pieces + 1) * sizeof(uint64_t)))
		return -EBADMSG;
	if (t->n_pieces) {
		size_t ends = (t->n_pieces + 1) * sizeof(uint64_t);
		if (!(t->ends = malloc(ends)) || !(t->z = malloc(head[2] + 1))) {
			*bad = NULL;
			return -ENOMEM;
		}
		memcpy(t->ends, *p, ends);
		memcpy(t->z, *p + ends, head[2]);
		*p += ends + head[2];
		*left -= ends + head[2];
	}
	*bad = tm_table_check(t, head[2]);
	return *bad ? -EBADMSG : 0;
}

/* The table views from their part of a body. Returns 0, -EBADMSG with what is wrong in *bad,
 * or -ENOMEM. */
static int take_tables(const struct file_header *h, const uint8_t *p, struct tm_index *ix,
		       const char **bad)
{
	uint64_t n = h->n_tables, left = h->tables_len;
	*bad = NULL;
	if (n && !(ix->tables = calloc(n, sizeof(*ix->tables))))
		return -ENOMEM;
	ix->n_tables = (uint32_t)n;
	for (uint64_t k = 0; k < n; k++) {
		int err = take_table(&ix->tables[k], &p, &left, bad);
		if (err)
			return err;
	}
	if (left)
		*bad = "table views do not fit their part";
	return left ? -EBADMSG : 0;
}

/* Splits a checked body into ix's parts. Returns 0, -EBADMSG with what is wrong in *bad, or
 * -ENOMEM. */
static int take_body(const struct file_header *h, const uint8_t *body, struct tm_index *ix,
		     const char **bad)
{
	ix->n_views = h->n_views;
	ix->n_classes = h->n_classes;
	ix->state_words = h->state_words;
	ix->row_words = h->row_words;
	ix->n_rows = h->n_rows;
	ix->raw_size = h->raw_size;
	ix->n_errors = h->n_errors;
	ix->truncated = h->truncated != 0;
	ix->stats_len = h->stats_len;
	ix->errors_len = h->errors_len;
	ix->streams = h->streams;
	size_t n_rows = rows_bytes(h);
	if (!(ix->rows = malloc(n_rows)) || !(ix->stats_json = malloc(h->stats_len + 1)) ||
	    !(ix->errors_txt = malloc(h->errors_len + 1)))
		return -ENOMEM;
	memcpy(ix->rows, body, n_rows);
	memcpy(ix->stats_json, body + n_rows, h->stats_len);
	memcpy(ix->errors_txt, body + n_rows + h->stats_len, h->errors_len);
	ix->stats_json[h->stats_len] = '\0'; /* sized texts, terminated for safety */
	ix->errors_txt[h->errors_len] = '\0';
	int err = take_tables(h, body + n_rows + h->stats_len + h->errors_len, ix, bad);
	if (err || !h->codec)
		return err;
	const uint8_t *p = body + n_rows + h->stats_len + h->errors_len + h->tables_len;
	struct tm_zindex *gz = calloc(1, sizeof(*gz));
	if (!gz || !(gz->points = malloc(points_bytes(h))) ||
	    !(gz->windows = malloc(h->gz_windows_len + 1))) {
		tm_zindex_free(gz);
		return -ENOMEM;
	}
	ix->z = gz;
	gz->codec = tm_codec_by_id(h->codec);
	memcpy(gz->points, p, points_bytes(h));
	memcpy(gz->windows, p + points_bytes(h), h->gz_windows_len);
	gz->n_points = h->gz_points;
	gz->windows_len = h->gz_windows_len;
	gz->in_size = h->gz_in_size;
	gz->out_size = h->gz_out_size;
	return 0;
}

/* Opens the index file name in the folder dirfd for reading, without blocking on what is no
 * regular file (a FIFO, a device), and checks it is a regular file of this user's that
 * others cannot write. Returns the fd, with *bad set when the file is refused; -ENOENT; or
 * the -errno of a system error. */
static int open_index(int dirfd, const char *name, size_t least, struct stat *st, const char **bad)
{
	*bad = NULL;
	int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		switch (errno) {
		case ELOOP: *bad = "a symbolic link"; return -EBADMSG;
		case ENXIO:
		case ENODEV: *bad = "not a regular file"; return -EBADMSG;
		case EACCES:
		case EPERM: *bad = "not readable"; return -EBADMSG;
		default: return -errno;
		}
	}
	if (fstat(fd, st) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st->st_mode))
		*bad = "not a regular file";
	else if (st->st_uid != geteuid())
		*bad = "owned by another user";
	else if (st->st_mode & 022)
		*bad = "writable by others";
	else if ((uint64_t)st->st_size < least)
		*bad = "truncated or overlong";
	/* reads wait again: a file system of the network may honour O_NONBLOCK */
	else if (fcntl(fd, F_SETFL, 0) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int tm_index_store_read(const struct tm_index_store *s, const char *name, size_t least,
			uint8_t **data, size_t *len, const char **bad)
{
	struct stat st;
	*data = NULL;
	int fd = open_index(folder_fd(s), name, least, &st, bad);
	if (fd < 0 || *bad) {
		if (fd >= 0)
			close(fd);
		return fd < 0 && !*bad ? fd : -EBADMSG;
	}
	int err = 0;
	if ((uint64_t)st.st_size > SIZE_MAX - 1) {
		*bad = "truncated or overlong";
		err = -EBADMSG;
	} else if (!(*data = malloc((size_t)st.st_size + 1))) {
		err = -ENOMEM;
	} else if ((err = read_all(fd, *data, (size_t)st.st_size, 0)) == 1) {
		*bad = "truncated or overlong";
		err = -EBADMSG;
	}
	close(fd);
	if (err) {
		free(*data);
		*data = NULL;
	}
	*len = (size_t)st.st_size;
	return err;
}

int tm_index_file_load(const struct tm_index_store *s, const struct tm_format *fmt,
		       const struct tm_view_table *views, const struct tm_trace_key *key,
		       struct tm_index **out, char *why, size_t why_len)
{
	char name[32];
	struct stat st;
	struct file_header h;
	uint8_t *body = NULL;
	struct tm_index *ix = NULL;
	const char *bad = NULL;
	bool stale = false;
	int err = 0;
	tm_index_file_name(fmt, key, name, sizeof(name));
	int fd = open_index(folder_fd(s), name, sizeof(struct file_header), &st, &bad);
	if (fd == -ENOENT)
		return -ENOENT;
	if (fd < 0 && !bad)
		return say(why, why_len, fd, "%s", strerror(-fd));
	if (bad)
		goto out;
	if ((err = read_all(fd, &h, sizeof(h), 0)) != 0)
		goto out;
	if ((bad = check_header(&h, fmt, views, key, (uint64_t)st.st_size, &stale)))
		goto out;
	err = -ENOMEM;
	if (!(body = malloc(h.body_len + 1)) || !(ix = calloc(1, sizeof(*ix))))
		goto out;
	if ((err = read_all(fd, body, h.body_len, sizeof(h))) != 0)
		goto out;
	if (crc(body, h.body_len) != h.body_crc) {
		bad = "body checksum mismatch";
		goto out;
	}
	if (memchr(body, '\0', h.trace_len)) {
		bad = "malformed trace path";
		goto out;
	}
	if ((err = take_body(&h, body + h.trace_len, ix, &bad)) == -EBADMSG) {
		err = 0;
	} else if (!err) {
		bad = tm_index_check(ix, fmt->chunk_records, key->size);
	}
	if (!err && !bad && ix->z)
		err = tm_zindex_pieces(ix->z);
	if (!err && !bad) {
		*out = ix;
		ix = NULL;
	}
out:
	if (fd >= 0)
		close(fd);
	free(body);
	tm_index_free(ix);
	if (err == 1) /* the file ended before its size: it shrank as it was read */
		bad = "truncated or overlong";
	if (stale && h.version == TM_INDEX_FILE_VERSION)
		return say(why, why_len, -ESTALE, "%s (%.*s; this is %s)", bad,
			   (int)sizeof(h.build), h.build, tm_build_key());
	if (bad)
		return say(why, why_len, stale ? -ESTALE : -EBADMSG, "%s", bad);
	if (err)
		say(why, why_len, err, "%s", strerror(-err));
	return err;
}

/* What info's file says of itself, from its header and its size (see index_file.h). */
static void describe(int dirfd, struct tm_index_file_info *info)
{
	struct stat st;
	struct file_header h;
	bool stale;
	int fd = open_index(dirfd, info->name, sizeof(struct file_header), &st, &info->problem);
	if (fd < 0 && !info->problem) {
		info->problem = "cannot be read";
		return;
	}
	if (fd >= 0) {
		info->size = (uint64_t)st.st_size;
		info->written = st.st_mtim;
	}
	if (info->problem)
		goto out;
	int r = read_all(fd, &h, sizeof(h), 0);
	if (r != 0) {
		info->problem = r == 1 ? "truncated or overlong" : "cannot be read";
		goto out;
	}
	if ((info->problem = check_frame(&h, &stale))) {
		if (stale)
			info->problem = "out of date";
		if (!stale || h.version != TM_INDEX_FILE_VERSION)
			goto out; /* fields of another layout, or of no index file */
	}
	snprintf(info->format, sizeof(info->format), "%s", h.format);
	info->key = h.key;
	if (h.trace_len < PATH_MAX && h.trace_len <= (uint64_t)st.st_size - sizeof(h) &&
	    (r = read_all(fd, info->trace, h.trace_len, sizeof(h))) == 0 &&
	    !memchr(info->trace, '\0', h.trace_len))
		info->trace[h.trace_len] = '\0';
	else
		info->trace[0] = '\0';
	if (info->problem)
		goto out;
	const struct tm_format *fmt = tm_format_find(h.format);
	const char *slash = strrchr(info->trace, '/');
	struct tm_view_table views;
	if (!fmt)
		info->problem = "written for a format this build does not know";
	else if (tm_view_table_init(&views, fmt, slash ? slash + 1 : "trace") < 0)
		info->problem = "cannot be checked (out of memory)";
	else {
		info->problem = check_header(&h, fmt, &views, &h.key, info->size, &stale);
		tm_view_table_free(&views);
	}
out:
	if (fd >= 0)
		close(fd);
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_index_name(const char *name)
{
	size_t n = strlen(name);
	return name[0] != '.' && n > 4 && n < sizeof(((struct tm_index_file_info *)0)->name) &&
	       !strchr(name, '/') && strcmp(name + n - 4, ".tmi") == 0;
}

int tm_index_store_list(struct tm_index_store *s,
			int (*fn)(void *arg, const struct tm_index_file_info *info), void *arg)
{
	int dirfd = folder_fd(s);
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		int err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	int err = 0;
	struct dirent *e;
	errno = 0;
	while (!err && (e = readdir(d))) {
		if (!is_index_name(e->d_name))
			continue;
		if (n == cap) {
			char **more = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*names));
			if (!more) {
				err = -ENOMEM;
				break;
			}
			names = more;
		}
		if (!(names[n] = strdup(e->d_name)))
			err = -ENOMEM;
		else
			n++;
	}
	if (!err && errno)
		err = -errno;
	closedir(d);
	if (!err)
		qsort(names, n, sizeof(*names), by_string);
	struct tm_index_file_info *info = err ? NULL : malloc(sizeof(*info));
	if (!err && !info)
		err = -ENOMEM;
	for (size_t i = 0; i < n && !err; i++) {
		memset(info, 0, sizeof(*info));
		snprintf(info->name, sizeof(info->name), "%s", names[i]);
		describe(dirfd, info);
		err = fn(arg, info);
	}
	free(info);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return err;
}

int tm_index_store_remove(struct tm_index_store *s, const char *name)
{
	if (!is_index_name(name))
		return -EINVAL;
	return unlinkat(folder_fd(s), name, 0) < 0 ? -errno : 0;
}
