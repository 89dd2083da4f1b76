/* The context: format overrides, detection, the table of traces and the status text. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "byu_ref.h"
#include "mem_source.h"
#include "tracemount/context.h"
#include "tracemount/index.h"
#include "tracemount/registry.h"
#include "tracemount/trace.h"

static const struct tm_format *const F = &tm_format_byu;

static struct tm_context *new_ctx(void)
{
	struct tm_context *ctx = NULL;
	ck_assert_int_eq(tm_context_new(TM_DEFAULT_MEMORY, &ctx), 0);
	ck_assert_ptr_nonnull(ctx);
	return ctx;
}

/* Detection by name only: these files do not exist, so no head is read. */
START_TEST(test_detect_by_extension)
{
	struct tm_context *ctx = new_ctx();
	ck_assert_ptr_eq(tm_context_detect(ctx, AT_FDCWD, "a.byu"), F);
	ck_assert_ptr_eq(tm_context_detect(ctx, AT_FDCWD, "dir/sub/a.byu"), F);
	ck_assert_ptr_null(tm_context_detect(ctx, AT_FDCWD, "a.tr"));
	ck_assert_ptr_null(tm_context_detect(ctx, AT_FDCWD, "a.byu/x"));
	ck_assert_ptr_null(tm_context_detect(ctx, AT_FDCWD, "byu"));
	tm_context_free(ctx);
}
END_TEST

START_TEST(test_override_base_name)
{
	struct tm_context *ctx = new_ctx();
	ck_assert_int_eq(tm_context_add_override(ctx, "*.tr:byu"), 0);
	ck_assert_uint_eq(tm_context_override_count(ctx), 1);
	/* a glob without '/' matches the base name, wherever the file is */
	ck_assert_ptr_eq(tm_context_detect(ctx, AT_FDCWD, "x.tr"), F);
	ck_assert_ptr_eq(tm_context_detect(ctx, AT_FDCWD, "sub/deep/x.tr"), F);
	ck_assert_ptr_null(tm_context_detect(ctx, AT_FDCWD, "x.tra"));
	ck_assert_ptr_null(tm_context_detect(ctx, AT_FDCWD, "x.tr/y"));
	tm_context_free(ctx);
}
END_TEST

START_TEST(test_override_path)
{
	struct tm_context *ctx = new_ctx();
	ck_assert_int_eq(tm_context_add_override(ctx, "sub/*.dat:byu"), 0);
	/* a glob with '/' matches the relative path, and '*' does not cross a '/' */
	ck_assert_ptr_eq(tm_context_detect(ctx, AT_FDCWD, "sub/y.dat"), F);
	ck_assert_ptr_null(tm_context_detect(ctx, AT_FDCWD, "y.dat"));
	ck_assert_ptr_null(tm_context_detect(ctx, AT_FDCWD, "sub/deep/y.dat"));
	ck_assert_ptr_null(tm_context_detect(ctx, AT_FDCWD, "other/sub/y.dat"));
	ck_assert_ptr_null(tm_context_detect(ctx, AT_FDCWD, "sub/y.dat2"));
	tm_context_free(ctx);
}
END_TEST

/* Detection given the head of a file: overrides first, then the bids. */
START_TEST(test_detect_head)
{
	struct tm_context *ctx = new_ctx();
	uint8_t head[60];
	for (int i = 0; i < 10; i++)
		byu_ref_put(head + i * 6, 0x1000 + 8 * (uint32_t)i, 0, 0x80);
	ck_assert_ptr_eq(tm_context_detect_head(ctx, "d/a.byu", head, sizeof(head)), F);
	ck_assert_ptr_eq(tm_context_detect_head(ctx, "a.byu", NULL, 0), F);
	ck_assert_ptr_null(tm_context_detect_head(ctx, "d/a.dat", head, sizeof(head)));
	ck_assert_int_eq(tm_context_add_override(ctx, "d/*.dat:byu"), 0);
	ck_assert_ptr_eq(tm_context_detect_head(ctx, "d/a.dat", head, sizeof(head)), F);
	ck_assert_ptr_eq(tm_context_detect_head(ctx, "d/a.dat", NULL, 0), F);
	ck_assert_ptr_null(tm_context_detect_head(ctx, "a.dat", head, sizeof(head)));
	tm_context_free(ctx);
}
END_TEST

/* The bid rule (format.h) over formats made for it. "name" bids the number its name ends in
 * ("a.60": 60); "content" bids the number its head holds, at most 90; "both" bids 30 on a name
 * starting with 'b' and, by content, 10 (its content contradicts its name); "content2" bids as
 * "content" does. Content bids count their calls: round 2 happens only when it could matter. */
static unsigned content_calls;

static int number_bid(const char *text, size_t len)
{
	int bid = 0;
	for (size_t i = 0; i < len && text[i] >= '0' && text[i] <= '9'; i++)
		bid = bid * 10 + text[i] - '0';
	return bid;
}

static int name_bid_of_ending(const char *name)
{
	const char *dot = strrchr(name, '.');
	return dot ? number_bid(dot + 1, strlen(dot + 1)) : 0;
}

static int content_bid_of_head(const char *name, const uint8_t *head, size_t head_len)
{
	(void)name;
	content_calls++;
	return number_bid((const char *)head, head_len);
}

static int both_name_bid(const char *name)
{
	return name[0] == 'b' ? 30 : 0;
}

static int both_content_bid(const char *name, const uint8_t *head, size_t head_len)
{
	(void)head;
	(void)head_len;
	content_calls++;
	return name[0] == 'b' ? 10 : 0;
}

static const struct tm_format by_content = {
    .name = "content", .content_bid = content_bid_of_head, .content_bid_max = 90};
static const struct tm_format by_content2 = {
    .name = "content2", .content_bid = content_bid_of_head, .content_bid_max = 90};
static const struct tm_format by_name = {.name = "name", .name_bid = name_bid_of_ending};
static const struct tm_format by_both = {.name = "both",
					 .name_bid = both_name_bid,
					 .content_bid = both_content_bid,
					 .content_bid_max = 20};
/* the content formats first: a tie between kinds is not settled by the order */
static const struct tm_format *const bidders[] = {&by_content, &by_content2, &by_name, &by_both,
						  NULL};

static const char *detected(const char *name, const char *head)
{
	const struct tm_format *f =
	    tm_formats_detect(bidders, name, (const uint8_t *)head, head ? strlen(head) : 0);
	return f ? f->name : "none";
}

START_TEST(test_bid_rule)
{
	const struct {
		const char *name, *head; /* head NULL: not read */
		bool needs_head;	 /* the name bids leave it open */
		const char *want;
		unsigned content_calls;
	} rows[] = {
	    /* a name bid as high as every content_bid_max is final: the head is not looked at */
	    {"a.90", "99", false, "name", 0},
	    {"a.100", "99", false, "name", 0},
	    {"a.90.gz", "99", false, "name", 0}, /* a gzip trace bids by its name without .gz */
	    /* below it, round 2: a content bid beats a name bid by exceeding it, not by equalling
	     */
	    {"a.89", "90", true, "content", 3},
	    {"a.89", "99", true, "content", 3}, /* 99 counts as content's maximum, 90 */
	    {"a.89", "89", true, "name", 3},
	    {"a.89", NULL, true, "name", 0}, /* the head unread: round 1 decides */
	    {"a.89", "", true, "name", 0},   /* an empty file too */
	    {"x", "50", true, "content", 3}, /* equal content bids: the first listed */
	    {"x", "0", true, "none", 3},
	    {"x", NULL, true, "none", 0},
	    /* a content bid replaces its format's name bid, even when lower */
	    {"b.25", NULL, true, "both", 0},
	    {"b.25", "0", true, "name", 3},
	    {"b", "5", true, "both", 3},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		content_calls = 0;
		ck_assert_msg(tm_formats_need_head(bidders, rows[i].name) == rows[i].needs_head,
			      "row %zu: needs_head", i);
		ck_assert_uint_eq(content_calls, 0);
		const char *got = detected(rows[i].name, rows[i].head);
		ck_assert_msg(strcmp(got, rows[i].want) == 0, "row %zu (%s, %s): %s, want %s", i,
			      rows[i].name, rows[i].head ? rows[i].head : "NULL", got,
			      rows[i].want);
		ck_assert_msg(content_calls == rows[i].content_calls,
			      "row %zu: %u content bids, want %u", i, content_calls,
			      rows[i].content_calls);
	}
	/* a format's bid as detection counts it */
	ck_assert_int_eq(tm_format_bid(&by_content, "x", (const uint8_t *)"95", 2), 90);
	ck_assert_int_eq(tm_format_bid(&by_content, "x", NULL, 0), 0);
	ck_assert_int_eq(tm_format_bid(&by_both, "b", NULL, 0), 30);
	ck_assert_int_eq(tm_format_bid(&by_both, "b", (const uint8_t *)"x", 1), 10);
	ck_assert_int_eq(tm_format_bid(&by_name, "a.60", (const uint8_t *)"x", 1), 60);
	ck_assert_int_eq(tm_format_bid(&by_name, "a.500", NULL, 0), 100);
}
END_TEST

static int no_virtual_traces(int dirfd, const char *dir, char *const *files, unsigned n_files,
			     struct tm_virtual **out)
{
	(void)dirfd, (void)dir, (void)files, (void)n_files, (void)out;
	return 0;
}

/* A content format that makes virtual traces, and one that does not, bidding 95 at most. */
static const struct tm_format virtual_by_content = {.name = "virtual",
						    .content_bid = content_bid_of_head,
						    .content_bid_max = 95,
						    .virtual_list = no_virtual_traces};
static const struct tm_format *const with_virtual[] = {&by_content, &by_name, &by_both,
						       &virtual_by_content, NULL};

START_TEST(test_trace_by_name)
{
	/* a name whose format bids by name only is a trace whatever the head ... */
	ck_assert(tm_formats_trace_by_name(bidders, "a.89"));
	ck_assert(tm_formats_trace_by_name(bidders, "a.90"));
	ck_assert(tm_formats_trace_by_name(bidders, "a.10.gz"));
	/* ... unless a format that makes virtual traces may outbid it: a folder's census of
	 * them then needs the head */
	ck_assert(!tm_formats_trace_by_name(with_virtual, "a.89"));
	ck_assert(tm_formats_trace_by_name(with_virtual, "a.95"));
	/* a format that bids by content too may lose its bid to the head: no format at all */
	ck_assert(!tm_formats_trace_by_name(bidders, "b.25"));
	ck_assert_str_eq(detected("b.25", "0"), "name"); /* here by_name takes it */
	ck_assert(!tm_formats_trace_by_name(bidders, "x"));
	/* the registry's: .byu is BYU or byu12, neither making virtual traces; .tt6 may be a
	 * spixcounts file, which does */
	ck_assert(tm_format_trace_by_name("x.byu"));
	ck_assert(tm_format_trace_by_name("x.byu.gz"));
	ck_assert(tm_format_trace_by_name("x.byu12"));
	ck_assert(!tm_format_trace_by_name("x.tt6"));
	ck_assert(!tm_format_trace_by_name("notes.txt"));
}
END_TEST

/* The registry's formats: which names leave detection open, and that a file whose name
 * settles it is not read. Both files hold FULL's magic word, which outbids a .tt6 name but
 * only equals a .byu one (95, which the name wins): t.byu is read, since byu12's content can
 * overturn its name, and stays BYU. */
START_TEST(test_detect_reads_only_when_needed)
{
	ck_assert(!tm_format_detect_needs_head("x.byu12"));
	ck_assert(!tm_format_detect_needs_head("x.byu12.gz"));
	const char *open_names[] = {"x.tt6",	       "x.tt6e", "x.trace",  "x.tarmac",
				    "tracer_0001.log", "x.bb",	 "x.full",   "x",
				    "x.byu.txt",       "x.byu",	 "x.byu.gz", "x.tr"};
	for (size_t i = 0; i < sizeof(open_names) / sizeof(open_names[0]); i++)
		ck_assert_msg(tm_format_detect_needs_head(open_names[i]), "%s", open_names[i]);

	char dir[] = "/tmp/test_context.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dirfd, 0);
	static const uint8_t full_magic[8] = {0xa1, 0x11, 0x8e, 0x17};
	const char *names[] = {"t.byu", "t.tt6"};
	for (size_t i = 0; i < 2; i++) {
		int fd = openat(dirfd, names[i], O_WRONLY | O_CREAT | O_EXCL, 0600);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, full_magic, sizeof(full_magic)), sizeof(full_magic));
		close(fd);
	}
	struct tm_context *ctx = new_ctx();
	ck_assert_ptr_eq(tm_context_detect(ctx, dirfd, "t.byu"), F);
	ck_assert_ptr_eq(tm_context_detect(ctx, dirfd, "t.tt6"), tm_format_find("full"));
	/* given the head, detection answers the same: FULL's magic only equals the name */
	ck_assert_ptr_eq(tm_context_detect_head(ctx, "t.byu", full_magic, sizeof(full_magic)), F);
	tm_context_free(ctx);
	for (size_t i = 0; i < 2; i++)
		ck_assert_int_eq(unlinkat(dirfd, names[i], 0), 0);
	close(dirfd);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_bad_overrides)
{
	struct tm_context *ctx = new_ctx();
	const char *invalid[] = {"", "nocolon", ":byu", "*.x:", ":"};
	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
		ck_assert_msg(tm_context_add_override(ctx, invalid[i]) == -EINVAL, "\"%s\"",
			      invalid[i]);
	ck_assert_int_eq(tm_context_add_override(ctx, "*.x:nosuchformat"), -ENOENT);
	ck_assert_int_eq(tm_context_add_override(ctx, "*.x:BYU"), -ENOENT);
	ck_assert_uint_eq(tm_context_override_count(ctx), 0);
	/* the last colon separates the name, so a glob may hold colons */
	ck_assert_int_eq(tm_context_add_override(ctx, "a:b*:byu"), 0);
	ck_assert_ptr_eq(tm_context_detect(ctx, AT_FDCWD, "a:b1"), F);
	tm_context_free(ctx);
}
END_TEST

START_TEST(test_trace_table)
{
	struct tm_context *ctx = new_ctx();
	struct tm_trace *a, *a2, *b;
	ck_assert_int_eq(tm_context_trace(ctx, "dir/a.byu", F, &a), 0);
	ck_assert_str_eq(tm_trace_path(a), "dir/a.byu");
	ck_assert_ptr_eq(tm_trace_format(a), F);
	ck_assert_ptr_eq(tm_trace_context(a), ctx);
	ck_assert_str_eq(tm_trace_views(a)->stem, "a");
	struct tm_trace_progress p;
	tm_trace_progress(a, &p);
	ck_assert_int_eq(p.state, TM_TRACE_NEW);
	/* the context's reference and ours */
	ck_assert_uint_eq(tm_trace_refs(a), 2);
	ck_assert_int_eq(tm_context_trace(ctx, "dir/a.byu", F, &a2), 0);
	ck_assert_ptr_eq(a2, a);
	ck_assert_uint_eq(tm_trace_refs(a), 3);
	ck_assert_int_eq(tm_context_trace(ctx, "b.byu", F, &b), 0);
	ck_assert_ptr_ne(b, a);
	ck_assert_uint_ne(tm_trace_owner(b), tm_trace_owner(a));
	tm_trace_put(a2);
	ck_assert_uint_eq(tm_trace_refs(a), 2);
	tm_trace_put(a);
	ck_assert_uint_eq(tm_trace_refs(a), 1); /* the context keeps it */

	/* the same path as another format: the file was replaced */
	struct tm_format other = *F;
	other.name = "other";
	struct tm_trace *x;
	ck_assert_int_eq(tm_context_trace(ctx, "b.byu", &other, &x), -ESTALE);

	/* many traces: the table grows and every one is found again */
	struct tm_trace *all[700];
	char path[64];
	for (int i = 0; i < 700; i++) {
		snprintf(path, sizeof(path), "many/t%03d.byu", i);
		ck_assert_int_eq(tm_context_trace(ctx, path, F, &all[i]), 0);
	}
	for (int i = 0; i < 700; i++) {
		snprintf(path, sizeof(path), "many/t%03d.byu", i);
		ck_assert_int_eq(tm_context_trace(ctx, path, F, &x), 0);
		ck_assert_ptr_eq(x, all[i]);
		ck_assert_str_eq(tm_trace_path(x), path);
		ck_assert_uint_eq(tm_trace_refs(x), 3);
		for (int j = 0; j < i; j += 97)
			ck_assert_uint_ne(tm_trace_owner(x), tm_trace_owner(all[j]));
		tm_trace_put(x);
		tm_trace_put(x);
	}
	ck_assert_int_eq(tm_context_trace(ctx, "dir/a.byu", F, &x), 0);
	ck_assert_ptr_eq(x, a);
	tm_trace_put(x);
	tm_trace_put(b);
	tm_context_free(ctx);
}
END_TEST

/* A file that changed gets a new trace, replacing its old one in the table, which its holders
 * keep; the traces of other paths, in the same hash bucket or not, stay as they were. */
START_TEST(test_changed_traces)
{
	struct tm_context *ctx = new_ctx();
	enum { N = 600 }; /* more than the table's first size: paths share buckets */
	struct tm_trace *old[N], *x;
	struct stat st = {.st_ino = 1, .st_size = 60};
	char path[64];
	for (int i = 0; i < N; i++) {
		snprintf(path, sizeof(path), "t%03d.byu", i);
		ck_assert_int_eq(tm_context_trace_of(ctx, path, F, &st, &old[i]), 0);
	}
	struct stat cut = st;
	cut.st_size = 6;
	for (int i = 0; i < N; i += 2) { /* every other file changes */
		snprintf(path, sizeof(path), "t%03d.byu", i);
		ck_assert_int_eq(tm_context_trace_of(ctx, path, F, &cut, &x), 0);
		ck_assert_ptr_ne(x, old[i]);
		ck_assert_str_eq(tm_trace_path(x), path);
		ck_assert(tm_trace_replaced(x));
		ck_assert(!tm_trace_replaced(old[i]));
		ck_assert_uint_eq(tm_trace_refs(old[i]), 1); /* ours alone: the context let it go */
		ck_assert_uint_ne(tm_trace_owner(x), tm_trace_owner(old[i]));
		tm_trace_put(x);
	}
	for (int i = 0; i < N; i++) {
		snprintf(path, sizeof(path), "t%03d.byu", i);
		ck_assert_int_eq(tm_context_trace_of(ctx, path, F, i % 2 ? &st : &cut, &x), 0);
		ck_assert_str_eq(tm_trace_path(x), path);
		if (i % 2)
			ck_assert_ptr_eq(x, old[i]);
		tm_trace_put(x);
		tm_trace_put(old[i]);
	}
	tm_context_free(ctx);
}
END_TEST

START_TEST(test_status)
{
	struct tm_context *ctx = new_ctx();
	struct tm_trace *t[4];
	const char *paths[] = {"zeta.byu", "alpha.byu", "m/inner.byu", "m.byu"};
	char *text;
	size_t len;

	static const char empty[] =
	    "path\tformat\tstate\trecords\tindex_bytes\n"
	    "# 0 traces; indexes: 0 built, 0 read from index files, 0 "
	    "index files refused, 0 index files out of date, 0 builds failed; 0 problems in the "
	    "errors.txt of 0 traces, 0 notes in 0 traces; cache none\n";
	ck_assert_int_eq(tm_context_status(ctx, &text, &len), 0);
	ck_assert_msg(len == strlen(empty) && memcmp(text, empty, len) == 0, "%.*s", (int)len,
		      text);
	free(text);

	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(tm_context_trace(ctx, paths[i], F, &t[i]), 0);

	/* index zeta.byu (10 records) and fail m.byu */
	size_t n = 10;
	uint8_t *data = byu_ref_gen(n, 0, 3, 0);
	struct mem_source src, bad;
	mem_source_init(&src, data, n * 6);
	mem_source_init(&bad, data, n * 6);
	bad.fail = -EIO;
	struct tm_open_trace ot[2];
	tm_trace_open(&ot[0], t[0], &src.src);
	tm_trace_open(&ot[1], t[3], &bad.src);
	ck_assert_int_eq(tm_trace_index(&ot[0]), 0);
	ck_assert_int_eq(tm_trace_index(&ot[1]), -EIO);
	ck_assert_ptr_null(ot[1].index);

	ck_assert_int_eq(tm_context_status(ctx, &text, &len), 0);
	char want[1024];
	snprintf(want, sizeof(want),
		 "path\tformat\tstate\trecords\tindex_bytes\n"
		 "alpha.byu\tbyu\tnot indexed\t-\t-\n"
		 "m.byu\tbyu\terror: %s\t-\t-\n"
		 "m/inner.byu\tbyu\tnot indexed\t-\t-\n"
		 "zeta.byu\tbyu\tindexed\t%zu\t%zu\n"
		 "# 4 traces; indexes: 1 built, 0 read from index files, 0 index files refused, "
		 "0 index files out of date, 1 builds failed; 0 problems in the errors.txt of 0 "
		 "traces, 0 notes in 0 traces; cache none\n",
		 strerror(EIO), n, tm_index_mem(ot[0].index));
	ck_assert_msg(len == strlen(want) && memcmp(text, want, len) == 0,
		      "status:\n%.*s\nexpected:\n%s", (int)len, text, want);
	free(text);

	tm_trace_close(&ot[0]);
	tm_trace_close(&ot[1]);
	for (int i = 0; i < 4; i++)
		tm_trace_put(t[i]);
	mem_source_free(&src);
	mem_source_free(&bad);
	free(data);
	tm_context_free(ctx);
}
END_TEST

/* What the context knows of a file, asked without making a trace: nothing of a path never
 * looked up (and the table stays empty), the state of one seen, nothing of one changed since
 * or detected as another format. */
START_TEST(test_progress_of)
{
	struct tm_context *ctx = new_ctx();
	struct stat st = {.st_ino = 1, .st_size = 60}, cut = st;
	cut.st_size = 6;
	struct tm_trace_progress p;
	struct tm_trace *t;
	char *text;
	size_t len;

	ck_assert_int_eq(tm_context_progress_of(ctx, "a.byu", F, &st, &p), -ENOENT);
	ck_assert_int_eq(tm_context_status(ctx, &text, &len), 0);
	ck_assert_msg(strstr(text, "\n# 0 traces;"), "%.*s", (int)len, text);
	free(text);

	ck_assert_int_eq(tm_context_trace_of(ctx, "a.byu", F, &st, &t), 0);
	ck_assert_int_eq(tm_context_progress_of(ctx, "a.byu", F, &st, &p), 0);
	ck_assert_int_eq(p.state, TM_TRACE_NEW);

	size_t n = 10;
	uint8_t *data = byu_ref_gen(n, 0, 3, 0);
	struct mem_source src;
	mem_source_init(&src, data, n * 6);
	struct tm_open_trace ot;
	tm_trace_open(&ot, t, &src.src);
	ck_assert_int_eq(tm_trace_index(&ot), 0);
	ck_assert_int_eq(tm_context_progress_of(ctx, "a.byu", F, &st, &p), 0);
	ck_assert_int_eq(p.state, TM_TRACE_INDEXED);
	ck_assert_uint_eq(p.records, n);
	ck_assert_uint_eq(p.problems, ot.index->n_errors);

	ck_assert_int_eq(tm_context_progress_of(ctx, "a.byu", F, &cut, &p), -ENOENT);
	ck_assert_int_eq(tm_context_progress_of(ctx, "a.byu", tm_format_find("tt6"), &st, &p),
			 -ENOENT);
	ck_assert_int_eq(tm_context_progress_of(ctx, "b.byu", F, &st, &p), -ENOENT);

	tm_trace_close(&ot);
	tm_trace_put(t);
	mem_source_free(&src);
	free(data);
	tm_context_free(ctx);
}
END_TEST

/* A slow trace for the cancellation tests: each read of the pass takes 10 ms, so that a pass
 * over 12 MB lasts about half a second, and a cancelled one stops after a read or two. A
 * second handle shares the bytes (dup), unless lend is set: then the pass borrows the
 * caller's. */
struct slow_source {
	struct tm_source src; /* first: the ops receive &src */
	uint8_t *data;
	atomic_uint reads;
};

static ssize_t slow_read(struct tm_source *s, void *buf, size_t len, uint64_t off)
{
	struct slow_source *m = s->priv;
	atomic_fetch_add(&m->reads, 1);
	usleep(10000);
	if (off >= s->size)
		return 0;
	if (len > s->size - off)
		len = s->size - (size_t)off;
	memcpy(buf, m->data + off, len);
	return (ssize_t)len;
}

static void slow_close(struct tm_source *s)
{
	(void)s;
}

static int slow_dup(const struct tm_source *s, struct tm_source *out)
{
	*out = *s;
	return 0;
}

static const struct tm_source_ops slow_ops = {
    .read = slow_read, .close = slow_close, .dup = slow_dup};
static const struct tm_source_ops lent_ops = {.read = slow_read, .close = slow_close};

#define SLOW_RECORDS (2u << 20)

/* Which waiter a thread is, and whether each has left: what tm_context_set_abandoned asks. */
static _Thread_local unsigned waiter_id;
static atomic_bool waiter_left[3];

static bool waiter_gone(void *arg)
{
	(void)arg;
	return atomic_load(&waiter_left[waiter_id]);
}

struct waiter {
	unsigned id;
	struct tm_trace *t;
	struct tm_source *src;
	int result;
	double left_at, returned_at; /* monotonic seconds */
	pthread_t thread;
};

static double seconds_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *wait_index(void *arg)
{
	struct waiter *w = arg;
	struct tm_open_trace ot;
	waiter_id = w->id;
	tm_trace_open(&ot, w->t, w->src);
	w->result = tm_trace_index(&ot);
	w->returned_at = seconds_now();
	tm_trace_close(&ot);
	return NULL;
}

static void waiter_start(struct waiter *w, unsigned id, struct tm_trace *t, struct tm_source *src)
{
	*w = (struct waiter){.id = id, .t = t, .src = src};
	atomic_store(&waiter_left[id], false);
	ck_assert_int_eq(pthread_create(&w->thread, NULL, wait_index, w), 0);
}

static void waiter_leave(struct waiter *w)
{
	w->left_at = seconds_now();
	atomic_store(&waiter_left[w->id], true);
}

static enum tm_trace_state state_of(struct tm_trace *t)
{
	struct tm_trace_progress p;
	tm_trace_progress(t, &p);
	return p.state;
}

/* Polls t's state for up to 5 s: whether it became want. */
static bool becomes(struct tm_trace *t, enum tm_trace_state want)
{
	for (int i = 0; i < 500 && state_of(t) != want; i++)
		usleep(10000);
	return state_of(t) == want;
}

/* The last waiter to leave cancels the pass, which keeps nothing and reads no more; the next
 * access starts a new pass. A pass another waiter still waits for goes on. With lend, the
 * pass borrows the caller's source, whose caller waits for the cancelled pass to end. */
static void check_cancel(bool lend)
{
	struct tm_context *ctx = new_ctx();
	struct stat st = {.st_ino = 1, .st_size = (off_t)SLOW_RECORDS * 6};
	struct slow_source slow = {.data = byu_ref_gen(SLOW_RECORDS, 0, 5, 0)};
	slow.src = (struct tm_source){
	    .ops = lend ? &lent_ops : &slow_ops, .size = SLOW_RECORDS * 6, .fd = -1, .priv = &slow};
	struct tm_trace *t;
	struct waiter a, b;
	tm_context_set_abandoned(ctx, waiter_gone, NULL);
	ck_assert_int_eq(tm_context_trace_of(ctx, "slow.byu", F, &st, &t), 0);

	waiter_start(&a, 1, t, &slow.src);
	ck_assert(becomes(t, TM_TRACE_INDEXING));
	usleep(100000);
	waiter_leave(&a);
	pthread_join(a.thread, NULL);
	ck_assert_int_eq(a.result, -EINTR);
	ck_assert_msg(a.returned_at - a.left_at < 0.3, "left after %.3f s",
		      a.returned_at - a.left_at);
	ck_assert(becomes(t, TM_TRACE_NEW)); /* not indexed, no error kept */
	unsigned reads = atomic_load(&slow.reads);
	ck_assert_uint_lt(reads, SLOW_RECORDS * 6 / (256u << 10)); /* it stopped early */
	usleep(100000);
	ck_assert_uint_eq(atomic_load(&slow.reads), reads); /* and reads no more */
	struct tm_index_counts c;
	tm_context_counts(ctx, &c);
	ck_assert_uint_eq(c.built + c.failed, 0);

	/* two wait, one leaves: the other gets the whole index */
	waiter_start(&a, 1, t, &slow.src);
	waiter_start(&b, 2, t, &slow.src);
	ck_assert(becomes(t, TM_TRACE_INDEXING));
	usleep(100000);
	waiter_leave(&a);
	pthread_join(a.thread, NULL);
	pthread_join(b.thread, NULL);
	ck_assert_int_eq(a.result, -EINTR);
	ck_assert_int_eq(b.result, 0);
	struct tm_open_trace ot;
	tm_trace_open(&ot, t, &slow.src);
	ck_assert_int_eq(tm_trace_index(&ot), 0);
	ck_assert_uint_eq(tm_index_records(ot.index), SLOW_RECORDS);
	tm_trace_close(&ot);
	tm_context_counts(ctx, &c);
	ck_assert_uint_eq(c.built, 1);
	ck_assert_uint_eq(c.failed, 0);

	tm_trace_put(t);
	tm_context_free(ctx);
	free(slow.data);
}

START_TEST(test_cancel_when_no_one_waits)
{
	check_cancel(false);
}
END_TEST

START_TEST(test_cancel_lent_source)
{
	check_cancel(true);
}
END_TEST

/* tm_context_stop cancels a pass that has waiters: they get -ECANCELED at once. */
START_TEST(test_stop_cancels)
{
	struct tm_context *ctx = new_ctx();
	struct stat st = {.st_ino = 1, .st_size = (off_t)SLOW_RECORDS * 6};
	struct slow_source slow = {.data = byu_ref_gen(SLOW_RECORDS, 0, 5, 0)};
	slow.src =
	    (struct tm_source){.ops = &slow_ops, .size = SLOW_RECORDS * 6, .fd = -1, .priv = &slow};
	struct tm_trace *t;
	struct waiter a;
	ck_assert_int_eq(tm_context_trace_of(ctx, "slow.byu", F, &st, &t), 0);
	waiter_start(&a, 1, t, &slow.src);
	ck_assert(becomes(t, TM_TRACE_INDEXING));
	double stop_at = seconds_now();
	tm_context_stop(ctx); /* returns once the pass ended */
	ck_assert_msg(seconds_now() - stop_at < 0.3, "stopped after %.3f s",
		      seconds_now() - stop_at);
	pthread_join(a.thread, NULL);
	ck_assert_int_eq(a.result, -ECANCELED);
	ck_assert_int_eq(state_of(t), TM_TRACE_NEW);
	struct tm_open_trace ot; /* and no pass starts any more */
	tm_trace_open(&ot, t, &slow.src);
	ck_assert_int_eq(tm_trace_index(&ot), -ECANCELED);
	tm_trace_close(&ot);
	tm_trace_put(t);
	tm_context_free(ctx);
	free(slow.data);
}
END_TEST

static Suite *context_suite(void)
{
	Suite *s = suite_create("context");
	TCase *tc = tcase_create("context");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_detect_by_extension);
	tcase_add_test(tc, test_override_base_name);
	tcase_add_test(tc, test_override_path);
	tcase_add_test(tc, test_detect_head);
	tcase_add_test(tc, test_bid_rule);
	tcase_add_test(tc, test_trace_by_name);
	tcase_add_test(tc, test_detect_reads_only_when_needed);
	tcase_add_test(tc, test_bad_overrides);
	tcase_add_test(tc, test_trace_table);
	tcase_add_test(tc, test_changed_traces);
	tcase_add_test(tc, test_status);
	tcase_add_test(tc, test_progress_of);
	tcase_add_test(tc, test_cancel_when_no_one_waits);
	tcase_add_test(tc, test_cancel_lent_source);
	tcase_add_test(tc, test_stop_cancels);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(context_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
