/* Virtual traces of folders (virtual.h) over a temporary folder of spixcounts files, the one
 * format that makes them: counting a listing's files, the traces of a folder, finding one by
 * name, its bytes, and a file of its name hiding it. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracemount/context.h"
#include "tracemount/diag.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "spix/spix.h"
#include "tracemount/virtual.h"

static char root[256];
static int root_fd = -1;
static struct tm_context *ctx;
static const struct tm_format *spix;

/* A table of 3 blocks of program tsum, its counters c, c + 1, c + 2. */
static void make_table(struct tm_spix_table *t, uint32_t tsum, uint32_t c, bool big_endian)
{
	memset(t, 0, sizeof(*t));
	ck_assert_int_eq(tm_spix_table_reserve(t, 3), 0);
	t->nbb = 3;
	t->tsize = 24;
	t->tsum = tsum;
	t->big_endian = big_endian;
	for (uint32_t b = 0; b < 3; b++) {
		t->len[b] = 2;
		t->count[b][0] = c + b;
		t->count[b][1] = 0;
	}
}

static void write_table(const char *rel, uint32_t tsum, uint32_t c, bool big_endian)
{
	char path[512];
	struct tm_spix_table t;
	make_table(&t, tsum, c, big_endian);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(tm_spix_write(&t, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	tm_spix_table_free(&t);
}

static void write_text(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* prog/: two files of program 1 and one of program 2 (no sum: alone), and a text;
 * two/: two files of each of programs 1 and 2; one/: a single file; hide/: a file named as
 * the sum. */
static void setup(void)
{
	snprintf(root, sizeof(root), "%s/tm-virtual-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(root));
	const char *dirs[] = {"prog", "two", "one", "hide"};
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		ck_assert_int_eq(mkdir(path, 0755), 0);
	}
	write_table("prog/a.bb", 1, 10, true);
	write_table("prog/b.bb", 1, 100, false);
	write_table("prog/c.bb", 2, 5, true);
	write_text("prog/notes.txt", "not a trace\n");
	write_table("two/p1.bb", 1, 1, true);
	write_table("two/p2.bb", 1, 2, true);
	write_table("two/q1.bb", 2, 3, true);
	write_table("two/q2.bb", 2, 4, true);
	write_table("one/a.bb", 1, 1, true);
	write_table("hide/a.bb", 1, 1, true);
	write_table("hide/b.bb", 1, 2, true);
	write_text("hide/SUM.spixcounts", "a file\n");
	root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(root_fd, 0);
	ck_assert_int_eq(tm_context_new(TM_DEFAULT_MEMORY, &ctx), 0);
	spix = tm_format_find("spixcounts");
	ck_assert_ptr_nonnull(spix);
}

static void teardown(void)
{
	tm_context_free(ctx);
	close(root_fd);
	nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

START_TEST(test_count)
{
	struct tm_virtual_census c = {0};
	tm_virtual_count(&c, NULL);
	for (const struct tm_format *const *f = tm_formats; *f; f++)
		if (!(*f)->virtual_list) /* formats without virtual traces are not counted */
			tm_virtual_count(&c, *f);
	ck_assert_ptr_null(c.fmt[0]);
	tm_virtual_count(&c, spix);
	tm_virtual_count(&c, spix);
	ck_assert_ptr_eq(c.fmt[0], spix);
	ck_assert_uint_eq(c.n_files[0], 2);
	ck_assert_ptr_null(c.fmt[1]);
}
END_TEST

struct names {
	char text[256];
};

static int add_name(void *arg, const struct tm_format *fmt, const struct tm_virtual *v)
{
	struct names *n = arg;
	ck_assert_ptr_eq(fmt, spix);
	ck_assert(S_ISREG(v->st.st_mode));
	size_t len = strlen(n->text);
	snprintf(n->text + len, sizeof(n->text) - len, "%s%s", len ? " " : "", v->name);
	return 0;
}

/* The names tm_virtual_each gives for folder dir, with n_files spixcounts files counted. */
static const char *names_of(const char *dir, unsigned n_files, struct names *n)
{
	struct tm_virtual_census c = {0};
	for (unsigned k = 0; k < n_files; k++)
		tm_virtual_count(&c, spix);
	n->text[0] = '\0';
	ck_assert_int_eq(tm_virtual_each(ctx, root_fd, dir, &c, add_name, n), 0);
	return n->text;
}

static int stop_at_first(void *arg, const struct tm_format *fmt, const struct tm_virtual *v)
{
	(void)fmt;
	(void)v;
	++*(int *)arg;
	return 7;
}

START_TEST(test_each)
{
	struct names n;
	ck_assert_str_eq(names_of("prog", 3, &n), "SUM.spixcounts");
	ck_assert_str_eq(names_of("two", 4, &n),
			 "SUM.24.00000001.spixcounts SUM.24.00000002.spixcounts");
	ck_assert_str_eq(names_of("one", 1, &n), "");
	ck_assert_str_eq(names_of("hide", 2, &n), "");
	/* a census below the format's count reads nothing more: no sum */
	ck_assert_str_eq(names_of("prog", 1, &n), "");
	struct tm_virtual_census c = {0};
	tm_virtual_count(&c, spix);
	tm_virtual_count(&c, spix);
	int calls = 0;
	ck_assert_int_eq(tm_virtual_each(ctx, root_fd, "two", &c, stop_at_first, &calls), 7);
	ck_assert_int_eq(calls, 1);
	ck_assert_int_lt(tm_virtual_each(ctx, root_fd, "gone", &c, add_name, &n), 0);
}
END_TEST

/* The bytes of a source, whole. */
static uint8_t *read_all(struct tm_source *src, size_t *len)
{
	uint8_t *buf = malloc(src->size + 1);
	ck_assert_ptr_nonnull(buf);
	ssize_t got = tm_source_read(src, buf, src->size, 0);
	ck_assert_int_eq(got, (ssize_t)src->size);
	*len = (size_t)got;
	return buf;
}

START_TEST(test_find_and_open)
{
	const struct tm_format *fmt = NULL;
	struct tm_virtual *v;
	struct tm_source src;
	ck_assert_int_eq(tm_virtual_find(ctx, root_fd, "prog/SUM.spixcounts", &fmt, &v), 0);
	ck_assert_ptr_eq(fmt, spix);
	ck_assert_str_eq(v->name, "SUM.spixcounts");
	/* the sum of a.bb and b.bb, in a.bb's byte order */
	ck_assert_int_eq(fmt->virtual_open(root_fd, v, &src), 0);
	size_t len;
	uint8_t *got = read_all(&src, &len);
	tm_source_close(&src);
	tm_virtual_free(fmt, v, 1);
	struct tm_spix_table want, b;
	struct tm_blob file = {0};
	make_table(&want, 1, 10, true);
	make_table(&b, 1, 100, false);
	tm_spix_add(&want, &b, NULL, 0);
	FILE *f = open_memstream((char **)&file.data, &file.len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(tm_spix_write(&want, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_uint_eq(len, file.len);
	ck_assert_mem_eq(got, file.data, len);
	free(got);
	free(file.data);
	tm_spix_table_free(&want);
	tm_spix_table_free(&b);

	ck_assert_int_eq(tm_virtual_find(ctx, root_fd, "two/SUM.24.00000002.spixcounts", &fmt, &v),
			 0);
	tm_virtual_free(fmt, v, 1);
	/* names no format accepts, sums that are not there, folders that are not */
	const char *none[] = {"prog/a.bb",	    "prog/SUM.txt",	  "prog/SUM.1.spixcounts",
			      "two/SUM.spixcounts", "one/SUM.spixcounts", "hide/SUM.spixcounts",
			      "gone/SUM.spixcounts"};
	for (size_t i = 0; i < ARRAY_SIZE(none); i++) {
		int err = tm_virtual_find(ctx, root_fd, none[i], &fmt, &v);
		ck_assert_msg(err == -ENOENT, "%s: %d", none[i], err);
	}
}
END_TEST

/* A member changed after the sum was listed no longer fits it: the sum reads as empty, and
 * its report says which member and why. */
START_TEST(test_changed_member)
{
	const struct tm_format *fmt = NULL;
	struct tm_virtual *v;
	struct tm_source src;
	ck_assert_int_eq(tm_virtual_find(ctx, root_fd, "prog/SUM.spixcounts", &fmt, &v), 0);
	ck_assert_int_eq(fmt->virtual_open(root_fd, v, &src), 0);
	write_text("prog/b.bb", "not counts any more\n");
	uint8_t byte;
	ck_assert_int_eq(tm_source_read(&src, &byte, 1, 0), 0);
	struct tm_diag d;
	tm_diag_init(&d);
	src.ops->report(&src, &d);
	ck_assert_int_eq(tm_diag_finish(&d), 0);
	ck_assert_ptr_nonnull(d.text);
	ck_assert_msg(strstr(d.text, "no sum: prog/b.bb: bad magic (changed since the folder was "
				     "listed)\n"),
		      "%s", d.text);
	tm_diag_free(&d);
	tm_source_close(&src);
	tm_virtual_free(fmt, v, 1);
}
END_TEST

static Suite *virtual_suite(void)
{
	Suite *s = suite_create("virtual");
	TCase *tc = tcase_create("virtual");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_count);
	tcase_add_test(tc, test_each);
	tcase_add_test(tc, test_find_and_open);
	tcase_add_test(tc, test_changed_member);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(virtual_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
