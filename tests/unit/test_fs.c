/* The mounted tree without FUSE, over a temporary source folder: what each path is, its
 * attributes, folder entries, opening and reading. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

#include "byu_ref.h"
#include "tracemount/context.h"
#include "tracemount/fs.h"
#include "tracemount/trace.h"
#include "tracemount/util.h"

static const struct tm_format *const F = &tm_format_byu;

#define A_RECORDS  100
#define B_RECORDS  10
#define B_TRAILING 2

static char root[512];
static struct tm_context *ctx;
static struct tm_fs fs;
static uint8_t *a_data, *b_data;

static void write_file(const char *rel, const void *data, size_t len, mode_t mode)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

/* root/
 *   a.byu        0640, 100 records        plain.txt   0644, "hello\n"
 *   sub/         0755                     sub/b.byu   0604, 10 records + 2 bytes
 *   sub/notes.txt                         link -> plain.txt
 *   .tracemount  a real file the virtual folder hides
 *   pipe         a fifo, not shown */
static void setup(void)
{
	char path[PATH_MAX];
	snprintf(root, sizeof(root), "%s/tm-unit-fs-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(root));
	a_data = byu_ref_gen(A_RECORDS, 0, 1, 30);
	b_data = byu_ref_gen(B_RECORDS, B_TRAILING, 2, 0);
	write_file("a.byu", a_data, A_RECORDS * 6, 0640);
	write_file("plain.txt", "hello\n", 6, 0644);
	snprintf(path, sizeof(path), "%s/sub", root);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	ck_assert_int_eq(chmod(path, 0755), 0);
	write_file("sub/b.byu", b_data, B_RECORDS * 6 + B_TRAILING, 0604);
	write_file("sub/notes.txt", "notes", 5, 0600);
	write_file(".tracemount", "x", 1, 0600);
	snprintf(path, sizeof(path), "%s/link", root);
	ck_assert_int_eq(symlink("plain.txt", path), 0);
	snprintf(path, sizeof(path), "%s/pipe", root);
	ck_assert_int_eq(mkfifo(path, 0600), 0);

	char err[256] = "";
	ck_assert_int_eq(tm_context_new(TM_DEFAULT_MEMORY, &ctx), 0);
	ck_assert_msg(tm_fs_init(&fs, ctx, root, err, sizeof(err)) == 0, "init: %s", err);
	ck_assert_ptr_null(fs.single);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void teardown(void)
{
	tm_fs_destroy(&fs);
	tm_context_free(ctx);
	nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(a_data);
	free(b_data);
}

/* References the mount holds on a trace, besides ours, once its index pass has let go: the
 * pass's thread drops its own just after its waiters wake (trace.c, pass_run). */
static unsigned trace_refs(const char *path)
{
	struct tm_trace *t;
	ck_assert_int_eq(tm_context_trace(ctx, path, F, &t), 0);
	unsigned refs = tm_trace_refs(t) - 2; /* ours and the context's */
	for (int i = 0; i < 200 && tm_context_passes_running(ctx); i++) {
		usleep(10000);
		refs = tm_trace_refs(t) - 2;
	}
	tm_trace_put(t);
	return refs;
}

static const struct resolve_row {
	const char *path;
	int ret;
	enum tm_node_kind kind;
	const char *src, *sub;
} resolve_rows[] = {
    {"/", 0, TM_NODE_DIR, ".", ""},
    {"/a.byu", 0, TM_NODE_TRACE, "a.byu", ""},
    {"/a.byu/", 0, TM_NODE_TRACE, "a.byu", ""},
    {"/a.byu/dump.txt", 0, TM_NODE_VIEW, "a.byu", "dump.txt"},
    {"/a.byu/raw", 0, TM_NODE_VIEW, "a.byu", "raw"},
    {"/a.byu/stats.json", 0, TM_NODE_VIEW, "a.byu", "stats.json"},
    {"/a.byu/class", 0, TM_NODE_VIEW_DIR, "a.byu", "class"},
    {"/a.byu/class/", 0, TM_NODE_VIEW_DIR, "a.byu", "class"},
    {"/a.byu/class/d_read.txt", 0, TM_NODE_VIEW, "a.byu", "class/d_read.txt"},
    {"/a.byu/class/int_ack.byu", 0, TM_NODE_VIEW, "a.byu", "class/int_ack.byu"},
    {"/a.byu/convert", 0, TM_NODE_VIEW_DIR, "a.byu", "convert"},
    {"/a.byu/convert/a.din", 0, TM_NODE_VIEW, "a.byu", "convert/a.din"},
    {"/a.byu/report.html", 0, TM_NODE_REPORT, "a.byu", "report.html"},
    {"/sub/b.byu/report.html", 0, TM_NODE_REPORT, "sub/b.byu", "report.html"},
    {"/sub", 0, TM_NODE_DIR, "sub", ""},
    {"/sub/b.byu", 0, TM_NODE_TRACE, "sub/b.byu", ""},
    {"/sub/b.byu/errors.txt", 0, TM_NODE_VIEW, "sub/b.byu", "errors.txt"},
    {"/sub/notes.txt", 0, TM_NODE_FILE, "sub/notes.txt", ""},
    {"/plain.txt", 0, TM_NODE_FILE, "plain.txt", ""},
    {"/link", 0, TM_NODE_LINK, "link", ""},
    {"/.tracemount", 0, TM_NODE_META_DIR, NULL, ""},
    {"/.tracemount/status", 0, TM_NODE_META, NULL, ""},
    {"/.tracemount/version", 0, TM_NODE_META, NULL, ""},
    {"/.tracemount/formats", 0, TM_NODE_META, NULL, ""},
    {"/.tracemount/report.html", 0, TM_NODE_META, NULL, ""},
    {"/missing", -ENOENT, 0, NULL, NULL},
    {"/sub/missing.byu", -ENOENT, 0, NULL, NULL},
    {"/a.byu/nope", -ENOENT, 0, NULL, NULL},
    {"/a.byu/class/nope.txt", -ENOENT, 0, NULL, NULL},
    {"/a.byu/classes", -ENOENT, 0, NULL, NULL},
    {"/a.byu/convert/b.din", -ENOENT, 0, NULL, NULL},
    {"/a.byu/class/report.html", -ENOENT, 0, NULL, NULL},
    {"/.tracemount/nope", -ENOENT, 0, NULL, NULL},
    {"/pipe", -ENOENT, 0, NULL, NULL},
    {"/plain.txt/x", -ENOTDIR, 0, NULL, NULL},
    {"/sub/notes.txt/x/y", -ENOTDIR, 0, NULL, NULL},
    {"/link/x", -ENOTDIR, 0, NULL, NULL},
};

START_TEST(test_resolve)
{
	for (size_t i = 0; i < sizeof(resolve_rows) / sizeof(resolve_rows[0]); i++) {
		const struct resolve_row *row = &resolve_rows[i];
		struct tm_node n;
		int ret = tm_fs_resolve(&fs, row->path, &n);
		ck_assert_msg(ret == row->ret, "%s: returned %d, expected %d", row->path, ret,
			      row->ret);
		if (ret)
			continue;
		ck_assert_msg(n.kind == row->kind, "%s: kind %d, expected %d", row->path, n.kind,
			      row->kind);
		if (row->src)
			ck_assert_str_eq(n.src, row->src);
		ck_assert_str_eq(n.sub, row->sub);
		/* a .byu trace's folder itself is shown before its format is read (its name
		 * makes it a trace, BYU or byu12): the format comes once a path enters it */
		if (n.kind == TM_NODE_TRACE)
			ck_assert_ptr_null(n.fmt);
		if (n.kind == TM_NODE_VIEW || n.kind == TM_NODE_VIEW_DIR ||
		    n.kind == TM_NODE_REPORT)
			ck_assert_ptr_eq(n.fmt, F);
		if (n.kind == TM_NODE_REPORT)
			ck_assert_ptr_nonnull(n.trace);
		if (n.kind == TM_NODE_VIEW) {
			ck_assert_ptr_nonnull(n.trace);
			ck_assert_int_eq(n.view,
					 tm_view_table_find(tm_trace_views(n.trace), row->sub));
		}
		if (strcmp(row->path, "/.tracemount/status") == 0)
			ck_assert_int_eq(n.meta, TM_META_STATUS);
		if (strcmp(row->path, "/.tracemount/report.html") == 0)
			ck_assert_int_eq(n.meta, TM_META_REPORT);
		tm_node_put(&n);
	}
	/* every reference a lookup took was dropped */
	ck_assert_uint_eq(trace_refs("a.byu"), 0);
	ck_assert_uint_eq(trace_refs("sub/b.byu"), 0);
}
END_TEST

static struct stat attrs(const char *path)
{
	struct stat st;
	memset(&st, 0, sizeof(st));
	int ret = tm_fs_getattr(&fs, path, &st);
	ck_assert_msg(ret == 0, "getattr %s: %d", path, ret);
	return st;
}

static void check_mode(const char *path, mode_t mode)
{
	struct stat st = attrs(path);
	ck_assert_msg(st.st_mode == mode, "%s: mode 0%o, expected 0%o", path, st.st_mode, mode);
}

static char *read_whole(const char *path, size_t *len)
{
	struct tm_fs_file *f;
	int ret = tm_fs_open(&fs, path, O_RDONLY, &f);
	ck_assert_msg(ret == 0, "open %s: %d", path, ret);
	size_t cap = 1 << 20, pos = 0;
	char *buf = malloc(cap);
	for (;;) {
		ssize_t n = tm_fs_read(&fs, f, buf + pos, 777, (off_t)pos);
		ck_assert_int_ge(n, 0);
		if (!n)
			break;
		pos += (size_t)n;
		ck_assert_uint_lt(pos + 777, cap);
	}
	tm_fs_release(&fs, f);
	*len = pos;
	return buf;
}

static size_t ref_size(const uint8_t *data, size_t len, const char *view)
{
	size_t n;
	free(byu_ref_view(view, data, len, &n));
	return n;
}

START_TEST(test_getattr)
{
	struct stat src;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/a.byu", root);
	ck_assert_int_eq(lstat(path, &src), 0);

	check_mode("/", S_IFDIR | 0500); /* mkdtemp's 0700 less the write bit */
	check_mode("/a.byu", S_IFDIR | 0550);
	check_mode("/a.byu/class", S_IFDIR | 0550);
	check_mode("/a.byu/convert", S_IFDIR | 0550);
	check_mode("/sub", S_IFDIR | 0555);
	check_mode("/sub/b.byu", S_IFDIR | 0505);
	check_mode("/sub/b.byu/dump.txt", S_IFREG | 0404);
	check_mode("/plain.txt", S_IFREG | 0444);
	check_mode("/sub/notes.txt", S_IFREG | 0400);
	check_mode("/.tracemount", S_IFDIR | 0555);
	check_mode("/.tracemount/version", S_IFREG | 0444);
	check_mode("/.tracemount/formats", S_IFREG | 0444);
	/* status and the report name every trace, also in folders others may not read */
	check_mode("/.tracemount/status", S_IFREG | 0400);
	check_mode("/.tracemount/report.html", S_IFREG | 0400);
	ck_assert(S_ISLNK(attrs("/link").st_mode));
	ck_assert_uint_eq(attrs("/link").st_size, strlen("plain.txt"));

	struct stat st = attrs("/a.byu");
	ck_assert_uint_eq(st.st_uid, src.st_uid);
	ck_assert_uint_eq(st.st_gid, src.st_gid);
	ck_assert_uint_eq(st.st_mtim.tv_sec, src.st_mtim.tv_sec);

	static const char *const views[] = {"dump.txt",		 "raw",
					    "class/d_read.txt",	 "class/int_ack.txt",
					    "class/i_fetch.byu", "class/invalid.byu",
					    "convert/a.din"};
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		snprintf(path, sizeof(path), "/a.byu/%s", views[i]);
		st = attrs(path);
		ck_assert_msg(st.st_mode == (S_IFREG | 0440), "%s: mode 0%o", path, st.st_mode);
		ck_assert_uint_eq(st.st_uid, src.st_uid);
		size_t want = ref_size(a_data, A_RECORDS * 6, views[i]);
		ck_assert_msg((size_t)st.st_size == want, "%s: size %lld, expected %zu", path,
			      (long long)st.st_size, want);
		snprintf(path, sizeof(path), "/sub/b.byu/%s",
			 strcmp(views[i], "convert/a.din") == 0 ? "convert/b.din" : views[i]);
		want =
		    ref_size(b_data, B_RECORDS * 6 + B_TRAILING,
			     strcmp(views[i], "convert/a.din") == 0 ? "convert/b.din" : views[i]);
		ck_assert_uint_eq((size_t)attrs(path).st_size, want);
	}
	ck_assert_uint_eq(attrs("/plain.txt").st_size, 6);
	/* a stat of a product's file waits for it: exact sizes */
	ck_assert_uint_eq(attrs("/a.byu/errors.txt").st_size, 0);
	size_t len_read;
	free(read_whole("/sub/b.byu/errors.txt", &len_read));
	ck_assert_uint_gt(len_read, 0);
	ck_assert_uint_eq(attrs("/sub/b.byu/errors.txt").st_size, len_read);
	free(read_whole("/a.byu/stats.json", &len_read));
	ck_assert_uint_gt(len_read, 0);
	ck_assert_uint_eq(attrs("/a.byu/stats.json").st_size, len_read);
	ck_assert_uint_gt(attrs("/a.byu/report.html").st_size, 0);
	ck_assert_uint_eq(attrs("/.tracemount/version").st_size,
			  strlen("tracemount " TM_VERSION "\n"));

	char *text;
	size_t len;
	ck_assert_int_eq(tm_context_status(ctx, &text, &len), 0);
	ck_assert_uint_eq(attrs("/.tracemount/status").st_size, len + strlen("# prefetch: off\n"));
	free(text);

	ck_assert_int_eq(tm_fs_getattr(&fs, "/missing", &st), -ENOENT);
	ck_assert_int_eq(tm_fs_getattr(&fs, "/plain.txt/x", &st), -ENOTDIR);
	ck_assert_uint_eq(trace_refs("a.byu"), 0);
}
END_TEST

struct entries {
	char names[64][64];
	mode_t types[64];
	bool sized[64]; /* with attributes (a product's file not built: size[] 0) */
	off_t size[64];
	unsigned n;
};

static int fill(void *arg, const char *name, mode_t type, const struct stat *st)
{
	struct entries *e = arg;
	ck_assert_uint_lt(e->n, 64);
	snprintf(e->names[e->n], sizeof(e->names[0]), "%s", name);
	e->sized[e->n] = st != NULL;
	e->size[e->n] = st ? st->st_size : -1;
	e->types[e->n++] = type;
	return 0;
}

/* want: "name:d", "name:f" or "name:l", NULL-terminated; the listing must be exactly that. */
static void check_dir(const char *path, const char *const *want)
{
	struct entries e = {0};
	int ret = tm_fs_readdir(&fs, path, fill, &e);
	ck_assert_msg(ret == 0, "readdir %s: %d", path, ret);
	unsigned n = 0;
	for (; want[n]; n++) {
		size_t nl = strlen(want[n]) - 2;
		char t = want[n][nl + 1];
		mode_t type = t == 'd' ? S_IFDIR : t == 'l' ? S_IFLNK : S_IFREG;
		int times = 0;
		for (unsigned i = 0; i < e.n; i++)
			if (strlen(e.names[i]) == nl && strncmp(e.names[i], want[n], nl) == 0) {
				times++;
				ck_assert_msg(e.types[i] == type, "%s in %s: type 0%o", e.names[i],
					      path, e.types[i]);
			}
		ck_assert_msg(times == 1, "%.*s listed %d times in %s", (int)nl, want[n], times,
			      path);
	}
	ck_assert_msg(e.n == n, "%s: %u entries, expected %u", path, e.n, n);
	ck_assert_str_eq(e.names[0], ".");
	ck_assert_str_eq(e.names[1], "..");
}

START_TEST(test_readdir)
{
	static const char *const root_want[] = {".:d",	 "..:d",   "a.byu:d",	    "plain.txt:f",
						"sub:d", "link:l", ".tracemount:d", NULL};
	check_dir("/", root_want);
	static const char *const sub_want[] = {".:d", "..:d", "b.byu:d", "notes.txt:f", NULL};
	check_dir("/sub", sub_want);
	static const char *const trace_want[] = {
	    ".:d",	    "..:d",	     "raw:f",	"dump.txt:f",
	    "stats.json:f", "errors.txt:f",  "class:d", "convert:d",
	    "plots:d",	    "report.html:f", NULL};
	check_dir("/a.byu", trace_want);
	/* the listing gives a product's files, not built, sized 0, and the others without
	 * attributes (looked up): it builds no product */
	struct entries e = {0};
	ck_assert_int_eq(tm_fs_readdir(&fs, "/a.byu", fill, &e), 0);
	for (unsigned i = 0; i < e.n; i++) {
		bool product = !strcmp(e.names[i], "stats.json") ||
			       !strcmp(e.names[i], "errors.txt") ||
			       !strcmp(e.names[i], "report.html");
		ck_assert_msg(e.sized[i] == product, "%s: attributes %d", e.names[i], e.sized[i]);
		ck_assert_int_eq(e.size[i], product ? 0 : -1);
	}
	size_t built_len;
	free(read_whole("/a.byu/stats.json", &built_len)); /* every product built */
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(tm_fs_readdir(&fs, "/a.byu", fill, &e), 0);
	for (unsigned i = 0; i < e.n; i++)
		ck_assert_msg(!e.sized[i], "%s: attributes once built", e.names[i]);
	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(tm_fs_readdir(&fs, "/a.byu/plots", fill, &e), 0);
	for (unsigned i = 0; i < e.n; i++)
		ck_assert(!e.sized[i]);
	static const char *const convert_want[] = {".:d", "..:d", "b.din:f", NULL};
	check_dir("/sub/b.byu/convert", convert_want);
	static const char *const meta_want[] = {
	    ".:d", "..:d", "version:f", "formats:f", "status:f", "report.html:f", NULL};
	check_dir("/.tracemount", meta_want);

	const char *class_want[2 * TM_MAX_CLASSES + 3];
	char names[2 * TM_MAX_CLASSES][40];
	unsigned k = 0;
	class_want[k++] = ".:d";
	class_want[k++] = "..:d";
	for (unsigned c = 0; c < F->n_classes; c++) {
		snprintf(names[2 * c], sizeof(names[0]), "%s.txt:f", F->classes[c]);
		snprintf(names[2 * c + 1], sizeof(names[0]), "%s.byu:f", F->classes[c]);
		class_want[k++] = names[2 * c];
		class_want[k++] = names[2 * c + 1];
	}
	class_want[k] = NULL;
	check_dir("/a.byu/class", class_want);

	memset(&e, 0, sizeof(e));
	ck_assert_int_eq(tm_fs_readdir(&fs, "/missing", fill, &e), -ENOENT);
	ck_assert_int_eq(tm_fs_readdir(&fs, "/plain.txt", fill, &e), -ENOTDIR);
	ck_assert_int_eq(tm_fs_readdir(&fs, "/a.byu/dump.txt", fill, &e), -ENOTDIR);
	ck_assert_uint_eq(trace_refs("a.byu"), 0);
	ck_assert_uint_eq(trace_refs("sub/b.byu"), 0);
}
END_TEST

START_TEST(test_open_read)
{
	struct tm_fs_file *f;
	const int writes[] = {O_WRONLY, O_RDWR, O_RDONLY | O_TRUNC, O_WRONLY | O_CREAT,
			      O_WRONLY | O_APPEND};
	for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
		ck_assert_int_eq(tm_fs_open(&fs, "/a.byu/dump.txt", writes[i], &f), -EROFS);
		ck_assert_int_eq(tm_fs_open(&fs, "/plain.txt", writes[i], &f), -EROFS);
	}
	ck_assert_int_eq(tm_fs_open(&fs, "/a.byu", O_RDONLY, &f), -EISDIR);
	ck_assert_int_eq(tm_fs_open(&fs, "/a.byu/class", O_RDONLY, &f), -EISDIR);
	ck_assert_int_eq(tm_fs_open(&fs, "/sub", O_RDONLY, &f), -EISDIR);
	ck_assert_int_eq(tm_fs_open(&fs, "/missing", O_RDONLY, &f), -ENOENT);

	static const char *const views[] = {"dump.txt", "raw", "class/d_write.txt",
					    "class/nc_d_read.byu", "convert/a.din"};
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		char path[PATH_MAX];
		size_t len, want_len;
		snprintf(path, sizeof(path), "/a.byu/%s", views[i]);
		char *got = read_whole(path, &len);
		char *want = byu_ref_view(views[i], a_data, A_RECORDS * 6, &want_len);
		ck_assert_msg(len == want_len && memcmp(got, want, len) == 0, "%s differs", path);
		free(got);
		free(want);
	}

	/* reads at an offset, past the end, at a negative offset */
	size_t want_len;
	char *want = byu_ref_view("dump.txt", b_data, B_RECORDS * 6 + B_TRAILING, &want_len);
	char buf[64];
	ck_assert_int_eq(tm_fs_open(&fs, "/sub/b.byu/dump.txt", O_RDONLY, &f), 0);
	ck_assert_int_eq(tm_fs_read(&fs, f, buf, 30, 25), 30);
	ck_assert(memcmp(buf, want + 25, 30) == 0);
	ck_assert_int_eq(tm_fs_read(&fs, f, buf, 30, (off_t)want_len - 5), 5);
	ck_assert(memcmp(buf, want + want_len - 5, 5) == 0);
	ck_assert_int_eq(tm_fs_read(&fs, f, buf, 30, (off_t)want_len), 0);
	ck_assert_int_eq(tm_fs_read(&fs, f, buf, 30, -1), -EINVAL);
	ck_assert_uint_eq(trace_refs("sub/b.byu"), 1); /* the open file holds the trace */
	tm_fs_release(&fs, f);
	ck_assert_uint_eq(trace_refs("sub/b.byu"), 0);
	free(want);

	size_t len;
	char *text = read_whole("/plain.txt", &len);
	ck_assert_uint_eq(len, 6);
	ck_assert(memcmp(text, "hello\n", 6) == 0);
	free(text);
	text = read_whole("/a.byu/raw", &len);
	ck_assert_uint_eq(len, A_RECORDS * 6);
	ck_assert(memcmp(text, a_data, len) == 0);
	free(text);
	text = read_whole("/.tracemount/version", &len);
	ck_assert_uint_eq(len, strlen("tracemount " TM_VERSION "\n"));
	ck_assert(memcmp(text, "tracemount " TM_VERSION "\n", len) == 0);
	free(text);
	text = read_whole("/.tracemount/status", &len);
	text[len] = '\0';
	ck_assert_msg(strstr(text, "a.byu\tbyu\tindexed\t100\t") != NULL, "status: %s", text);
	ck_assert_msg(strstr(text, "sub/b.byu\tbyu\tindexed\t10\t") != NULL, "status: %s", text);
	free(text);
	text = read_whole("/.tracemount/formats", &len);
	text[len] = '\0';
	ck_assert(strncmp(text, "byu: ", 5) == 0);
	free(text);
	text = read_whole("/a.byu/stats.json", &len);
	ck_assert_uint_eq(len, (size_t)attrs("/a.byu/stats.json").st_size);
	ck_assert_int_eq(text[len - 1], '\n');
	free(text);
	ck_assert_uint_eq(trace_refs("a.byu"), 0);
}
END_TEST

/* A trace folder's report.html: its size (getattr, and the open file's) is its bytes', it
 * holds the trace's facts, error lines and links, and it holds no reference once closed. */
START_TEST(test_trace_report)
{
	size_t len;
	char *text = read_whole("/sub/b.byu/report.html", &len);
	ck_assert_uint_eq(len, (size_t)attrs("/sub/b.byu/report.html").st_size);
	ck_assert_uint_eq(attrs("/sub/b.byu/report.html").st_mode, S_IFREG | 0404);
	text[len] = '\0';
	ck_assert(strncmp(text, "<!DOCTYPE html>\n", 16) == 0);
	ck_assert_ptr_nonnull(strstr(text, "<title>b.byu: tracemount</title>"));
	ck_assert_ptr_nonnull(strstr(text, "<dt>records</dt><dd><span class=\"num\" "
					   "data-v=\"10\">10</span></dd>"));
	ck_assert_ptr_nonnull(strstr(text, "<dt>truncated</dt><dd><span data-t=\"bool\">true"));
	ck_assert_ptr_nonnull(strstr(text, "trailing partial record"));
	ck_assert_ptr_nonnull(strstr(text, "<a href=\"convert/b.din\">b.din</a>"));
	ck_assert_ptr_nonnull(strstr(text, "<a href=\"plots/mix.svg\">plots/mix.svg</a>"));
	ck_assert_ptr_null(strstr(text, "<?xml")); /* the plots inline, less their declaration */
	ck_assert_ptr_null(strstr(text, "<script"));

	struct tm_fs_file *f;
	struct stat st;
	ck_assert_int_eq(tm_fs_open(&fs, "/sub/b.byu/report.html", O_RDONLY, &f), 0);
	ck_assert_int_eq(tm_fs_fgetattr(&fs, f, &st), 0);
	ck_assert_uint_eq((size_t)st.st_size, len);
	ck_assert(f->uncached);
	ck_assert_uint_eq(trace_refs("sub/b.byu"), 0); /* rendered at open: nothing held */
	tm_fs_release(&fs, f);
	free(text);
	ck_assert_int_eq(tm_fs_open(&fs, "/sub/b.byu/report.html", O_WRONLY, &f), -EROFS);
	ck_assert_uint_eq(trace_refs("sub/b.byu"), 0);
}
END_TEST

START_TEST(test_readlink_statfs)
{
	char buf[64];
	ck_assert_int_eq(tm_fs_readlink(&fs, "/link", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "plain.txt");
	ck_assert_int_eq(tm_fs_readlink(&fs, "/link", buf, 4), 0);
	ck_assert_str_eq(buf, "pla");
	ck_assert_int_eq(tm_fs_readlink(&fs, "/plain.txt", buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(tm_fs_readlink(&fs, "/a.byu", buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(tm_fs_readlink(&fs, "/missing", buf, sizeof(buf)), -ENOENT);
	struct tm_fs_file *f;
	ck_assert_int_eq(tm_fs_open(&fs, "/link", O_RDONLY, &f), -ELOOP);
	struct statvfs sv;
	ck_assert_int_eq(tm_fs_statfs(&fs, &sv), 0);
	ck_assert(sv.f_flag & ST_RDONLY);
}
END_TEST

static int open_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	ck_assert_ptr_nonnull(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

START_TEST(test_init_single_file)
{
	struct tm_fs one;
	char path[PATH_MAX], err[256] = "";
	snprintf(path, sizeof(path), "%s/a.byu", root);
	ck_assert_msg(tm_fs_init(&one, ctx, path, err, sizeof(err)) == 0, "init: %s", err);
	ck_assert_str_eq(one.single, "a.byu");

	struct tm_node n;
	ck_assert_int_eq(tm_fs_resolve(&one, "/", &n), 0);
	ck_assert_int_eq(n.kind, TM_NODE_DIR);
	ck_assert_int_eq(tm_fs_resolve(&one, "/a.byu", &n), 0);
	ck_assert_int_eq(n.kind, TM_NODE_TRACE);
	ck_assert_int_eq(tm_fs_resolve(&one, "/a.byu/dump.txt", &n), 0);
	ck_assert_int_eq(n.kind, TM_NODE_VIEW);
	tm_node_put(&n);
	ck_assert_int_eq(tm_fs_resolve(&one, "/plain.txt", &n), -ENOENT);
	ck_assert_int_eq(tm_fs_resolve(&one, "/sub", &n), -ENOENT);
	ck_assert_int_eq(tm_fs_resolve(&one, "/.tracemount/version", &n), 0);

	struct entries e = {0};
	ck_assert_int_eq(tm_fs_readdir(&one, "/", fill, &e), 0);
	ck_assert_uint_eq(e.n, 4);
	ck_assert_str_eq(e.names[2], ".tracemount");
	ck_assert_str_eq(e.names[3], "a.byu");
	ck_assert_uint_eq(e.types[3], S_IFDIR);
	tm_fs_destroy(&one);
}
END_TEST

START_TEST(test_init_errors)
{
	struct tm_fs bad;
	char path[PATH_MAX], err[512] = "";

	snprintf(path, sizeof(path), "%s/plain.txt", root);
	int before = open_fds();
	ck_assert_int_eq(tm_fs_init(&bad, ctx, path, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "plain.txt") != NULL, "message: %s", err);
	/* a failed init leaves nothing to clean up */
	ck_assert_msg(open_fds() == before, "tm_fs_init left %d descriptor(s) open",
		      open_fds() - before);

	snprintf(path, sizeof(path), "%s/missing", root);
	err[0] = '\0';
	ck_assert_int_eq(tm_fs_init(&bad, ctx, path, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "missing") != NULL, "message: %s", err);

	snprintf(path, sizeof(path), "%s/pipe", root);
	err[0] = '\0';
	ck_assert_int_lt(tm_fs_init(&bad, ctx, path, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "pipe") != NULL, "message: %s", err);

	/* a single file named as the control folder would hide it, or be hidden */
	snprintf(path, sizeof(path), "%s/.tracemount", root);
	err[0] = '\0';
	ck_assert_int_eq(tm_fs_init(&bad, ctx, path, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "cannot be mounted alone") != NULL, "message: %s", err);
	ck_assert_int_eq(open_fds(), before);
}
END_TEST

/* tm_open_beneath, and its fallback without openat2, refuse every way out of the folder. */
START_TEST(test_open_beneath)
{
	char base[256], path[PATH_MAX];
	snprintf(base, sizeof(base), "%.200s/beneath-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(base));
	const char *dirs[] = {"in", "in/d", "out"};
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", base, dirs[i]);
		ck_assert_int_eq(mkdir(path, 0700), 0);
	}
	const char *files[] = {"in/d/f", "out/secret"};
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", base, files[i]);
		int fd = open(path, O_WRONLY | O_CREAT, 0600);
		ck_assert_int_ge(fd, 0);
		close(fd);
	}
	const char *links[][2] = {
	    {"../out", "in/up"}, {"/", "in/root"}, {"f", "in/d/lf"}, {"d", "in/dl"}};
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%s", base, links[i][1]);
		ck_assert_int_eq(symlink(links[i][0], path), 0);
	}
	snprintf(path, sizeof(path), "%s/in", base);
	int in = open(path, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(in, 0);
	int before = open_fds();

	const char *refused[] = {"up/secret",	  "root/etc/passwd",	"d/lf", "dl/f",
				 "../out/secret", "d/../../out/secret", "up"};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		int fd = tm_open_beneath(in, refused[i], O_RDONLY);
		ck_assert_msg(fd < 0, "tm_open_beneath opened %s", refused[i]);
		fd = tm_open_walk(in, refused[i], O_RDONLY);
		ck_assert_msg(fd < 0, "tm_open_walk opened %s", refused[i]);
	}
	int fd = tm_open_beneath(in, "d/f", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_ge(fd = tm_open_walk(in, "d/f", O_RDONLY), 0);
	close(fd);
	ck_assert_int_ge(fd = tm_open_walk(in, "d", O_RDONLY | O_DIRECTORY), 0);
	close(fd);
	ck_assert_int_ge(fd = tm_open_walk(in, ".", O_RDONLY | O_DIRECTORY), 0); /* the root */
	close(fd);
	ck_assert_int_eq(tm_open_walk(in, "d/missing", O_RDONLY), -ENOENT);
	ck_assert_int_eq(open_fds(), before); /* the walk closes the folders it passed */

	/* tm_is_mount_of: the device a path lies on, the link itself for a link */
	struct stat st;
	ck_assert_int_eq(fstat(in, &st), 0);
	ck_assert(tm_is_mount_of(in, "d", st.st_dev));
	ck_assert(tm_is_mount_of(in, "up", st.st_dev));
	ck_assert(!tm_is_mount_of(in, "d", st.st_dev + 1));
	ck_assert(!tm_is_mount_of(in, "d", 0)); /* no device: never */
	ck_assert(!tm_is_mount_of(in, "missing", st.st_dev));
	close(in);

	ck_assert_int_eq(nftw(base, remove_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}
END_TEST

struct swapper {
	char a[PATH_MAX], b[PATH_MAX];
	atomic_bool stop;
	unsigned long swaps;
};

static void *swap_loop(void *arg)
{
	struct swapper *w = arg;
	while (!atomic_load(&w->stop)) {
		if (syscall(SYS_renameat2, AT_FDCWD, w->a, AT_FDCWD, w->b, RENAME_EXCHANGE) == 0)
			w->swaps++;
		sched_yield(); /* under valgrind's one lock too, the lookups get their turn */
	}
	if (w->swaps % 2) /* leave the tree as it was */
		syscall(SYS_renameat2, AT_FDCWD, w->a, AT_FDCWD, w->b, RENAME_EXCHANGE);
	return NULL;
}

/* Whether fd (closed here), if open, is the file outside. */
static int is_outside(int fd, ino_t outside, unsigned *opened)
{
	struct stat st;
	if (fd < 0)
		return 0;
	ck_assert_int_eq(fstat(fd, &st), 0);
	close(fd);
	++*opened;
	return st.st_ino == outside;
}

/* A folder on the path swapped, over and over, for a symbolic link to a folder outside: no
 * lookup of the tree, nor an open by openat2 or by its fallback, ever reaches the file
 * outside, neither its bytes nor its attributes. */
START_TEST(test_swap_race)
{
	char base[256], path[PATH_MAX], err[256] = "";
	snprintf(base, sizeof(base), "%.200s/swap-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(base));
	const char *dirs[] = {"in", "in/a", "out", "out/s"};
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%s", base, dirs[i]);
		ck_assert_int_eq(mkdir(path, 0700), 0);
	}
	struct stat outside;
	snprintf(path, sizeof(path), "%s/in/a/secret", base);
	int fd = open(path, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_eq(write(fd, "INSIDE\n", 7), 7);
	close(fd);
	snprintf(path, sizeof(path), "%s/out/s/secret", base);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_eq(write(fd, "OUTSIDE-SECRET\n", 15), 15);
	ck_assert_int_eq(fstat(fd, &outside), 0);
	close(fd);
	struct swapper w = {.swaps = 0};
	snprintf(w.a, sizeof(w.a), "%s/in/a", base);
	snprintf(w.b, sizeof(w.b), "%s/in/b", base);
	ck_assert_int_eq(symlink("../out/s", w.b), 0);

	struct tm_context *c;
	struct tm_fs f;
	snprintf(path, sizeof(path), "%s/in", base);
	ck_assert_int_eq(tm_context_new(TM_DEFAULT_MEMORY, &c), 0);
	ck_assert_msg(tm_fs_init(&f, c, path, err, sizeof(err)) == 0, "init: %s", err);
	atomic_init(&w.stop, false);
	pthread_t thread;
	ck_assert_int_eq(pthread_create(&thread, NULL, swap_loop, &w), 0);
	unsigned leaks[4] = {0}, opened[4] = {0}, tries = 0;
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		leaks[0] += is_outside(tm_open_walk(f.root_fd, "a/secret", O_RDONLY),
				       outside.st_ino, &opened[0]);
		leaks[1] += is_outside(tm_open_beneath(f.root_fd, "a/secret", O_RDONLY),
				       outside.st_ino, &opened[1]);
		struct stat st;
		if (tm_lstat_beneath(f.root_fd, "a/secret", &st) == 0) {
			opened[2]++;
			leaks[2] += st.st_ino == outside.st_ino;
		}
		struct tm_node n;
		if (tm_fs_resolve(&f, "/a/secret", &n) == 0) {
			opened[3]++;
			leaks[3] += n.st.st_ino == outside.st_ino || n.st.st_size == 15;
			tm_node_put(&n);
		}
		tries++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (tries < 50000 && now.tv_sec - start.tv_sec < 10);
	atomic_store(&w.stop, true);
	pthread_join(thread, NULL);
	static const char *const what[] = {"tm_open_walk", "tm_open_beneath", "tm_lstat_beneath",
					   "tm_fs_resolve"};
	for (int i = 0; i < 4; i++) {
		ck_assert_msg(leaks[i] == 0, "%s reached the file outside %u times in %u tries",
			      what[i], leaks[i], tries);
		/* the race ran: some lookups found the folder, some the link */
		ck_assert_msg(opened[i] > 0 && opened[i] < tries, "%s: %u of %u found the file",
			      what[i], opened[i], tries);
	}
	ck_assert_uint_gt(w.swaps, 100);
	tm_fs_destroy(&f);
	tm_context_free(c);
	ck_assert_int_eq(nftw(base, remove_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}
END_TEST

static Suite *fs_suite(void)
{
	Suite *s = suite_create("fs");
	TCase *tc = tcase_create("tree");
	tcase_set_timeout(tc, 60);
	/* built once in the runner; each test runs in a forked copy, and the folder is
	 * removed even when a test fails */
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_resolve);
	tcase_add_test(tc, test_getattr);
	tcase_add_test(tc, test_readdir);
	tcase_add_test(tc, test_trace_report);
	tcase_add_test(tc, test_open_read);
	tcase_add_test(tc, test_readlink_statfs);
	tcase_add_test(tc, test_init_single_file);
	tcase_add_test(tc, test_init_errors);
	tcase_add_test(tc, test_open_beneath);
	tcase_add_test(tc, test_swap_race);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(fs_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
