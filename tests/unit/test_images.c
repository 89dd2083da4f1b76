/* Program images (src/core/images.c, images.h): -o image= and --image specs, the glob rule,
 * the names looked for beside a trace, which images a trace gets (rules, else one beside it,
 * never through a link), their identity (what keys the index), and tm_context_add_image with
 * an object file the C compiler builds here, a text file and a missing one. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracemount/context.h"
#include "tracemount/images.h"

struct parsed {
	const char *spec;
	bool with_glob;
	const char *glob, *path;
	uint64_t offset;
};

START_TEST(test_parse_good)
{
	static const struct parsed cases[] = {
	    {"*.tarmac:prog.elf", true, "*.tarmac", "prog.elf", 0},
	    {"calc*:/abs/calc.elf@0x210000", true, "calc*", "/abs/calc.elf", 0x210000},
	    {"*:calc.elf@4096", true, "*", "calc.elf", 4096},
	    {"*:calc.elf@0X1f", true, "*", "calc.elf", 0x1f},
	    {"*:calc.elf@18446744073709551615", true, "*", "calc.elf", UINT64_MAX},
	    /* an '@' not followed by a digit belongs to the file */
	    {"*:dir@home/p.elf", true, "*", "dir@home/p.elf", 0},
	    {"*:p.elf@", true, "*", "p.elf@", 0},
	    /* a file that ends in @DIGITS, given with an offset after it */
	    {"*:p.elf@12@0", true, "*", "p.elf@12", 0},
	    /* the glob ends at the first ':', the file may hold more */
	    {"a/*.t:c:d.elf", true, "a/*.t", "c:d.elf", 0},
	    /* --image: no glob, every ':' is the file's */
	    {"x:y.elf@0x10", false, NULL, "x:y.elf", 0x10},
	    {"p.elf", false, NULL, "p.elf", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct parsed *c = &cases[i];
		struct tm_image_rule r;
		char why[256] = "";
		ck_assert_msg(tm_image_rule_parse(c->spec, c->with_glob, &r, why, sizeof(why)) == 0,
			      "%s: %s", c->spec, why);
		if (c->glob)
			ck_assert_str_eq(r.glob, c->glob);
		else
			ck_assert_ptr_null(r.glob);
		ck_assert_str_eq(r.path, c->path);
		ck_assert_msg(r.offset == c->offset, "%s: offset %llx", c->spec,
			      (unsigned long long)r.offset);
		tm_image_rule_free(&r);
	}
}
END_TEST

START_TEST(test_parse_bad)
{
	static const struct {
		const char *spec;
		bool with_glob;
		const char *why;
	} cases[] = {
	    {"prog.elf", true, "expected GLOB:FILE[@OFFSET]"},
	    {":prog.elf", true, "no GLOB before ':'"},
	    {"*:", true, "no FILE after ':'"},
	    {"*:@0x10", true, "no FILE after ':'"},
	    {"@16", false, "no FILE"},
	    {"*:p.elf@0x", true, "OFFSET 0x: not a number"},
	    {"*:p.elf@0x1g", true, "OFFSET 0x1g: not a number"},
	    {"*:p.elf@12z", true, "OFFSET 12z: not a number"},
	    {"*:p.elf@1 ", true, "OFFSET 1 : not a number"},
	    {"*:p.elf@18446744073709551616", true, "OFFSET 18446744073709551616: not a number"},
	    {"*:p.elf@0x10000000000000000", true, "not a number"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tm_image_rule r;
		char why[256] = "";
		ck_assert_msg(tm_image_rule_parse(cases[i].spec, cases[i].with_glob, &r, why,
						  sizeof(why)) == -EINVAL,
			      "%s accepted", cases[i].spec);
		ck_assert_msg(strstr(why, cases[i].why), "%s: '%s'", cases[i].spec, why);
		ck_assert_ptr_null(r.glob);
		ck_assert_ptr_null(r.path);
	}
}
END_TEST

START_TEST(test_glob)
{
	ck_assert(tm_image_glob_match(NULL, "any/where.tarmac"));
	ck_assert(tm_image_glob_match("*.tarmac", "a.tarmac"));
	ck_assert(tm_image_glob_match("*.tarmac", "sub/deep/a.tarmac")); /* the base name */
	ck_assert(!tm_image_glob_match("*.tarmac", "a.tarmac.gz"));
	ck_assert(tm_image_glob_match("calc*64*", "real/calculator-aarch64-gem5.tarmac"));
	ck_assert(!tm_image_glob_match("calc*64*", "real/calculator-aarch32-gem5.tarmac"));
	/* with a '/': the whole path, '/' only by '/' */
	ck_assert(tm_image_glob_match("real/*.tarmac", "real/a.tarmac"));
	ck_assert(!tm_image_glob_match("real/*.tarmac", "a.tarmac"));
	ck_assert(!tm_image_glob_match("real/*.tarmac", "real/sub/a.tarmac"));
	ck_assert(!tm_image_glob_match("real/*.tarmac", "other/real/a.tarmac"));
	ck_assert(tm_image_glob_match("*/*", "real/a.tarmac"));
}
END_TEST

/* The names tm_image_beside_name gives for name, joined by spaces. */
static void names_of(const char *name, char *out, size_t len)
{
	char buf[256];
	out[0] = '\0';
	for (unsigned i = 0; tm_image_beside_name(name, ".elf", i, buf, sizeof(buf)); i++) {
		ck_assert_msg(i < 32, "%s: no end", name);
		snprintf(out + strlen(out), len - strlen(out), "%s%s", i ? " " : "", buf);
	}
}

START_TEST(test_beside_names)
{
	static const char *const cases[][2] = {
	    {"calculator-aarch64-fastmodel.tarmac",
	     "calculator-aarch64-fastmodel.tarmac.elf calculator-aarch64-fastmodel.elf "
	     "calculator-aarch64.elf calculator.elf"},
	    {"calculator-aarch32-es-ld-st-style.tarmac",
	     "calculator-aarch32-es-ld-st-style.tarmac.elf calculator-aarch32-es-ld-st-style.elf "
	     "calculator-aarch32-es-ld-st.elf calculator-aarch32-es-ld.elf "
	     "calculator-aarch32-es.elf calculator-aarch32.elf calculator.elf"},
	    {"run.tarmac.gz", "run.tarmac.gz.elf run.tarmac.elf run.elf"},
	    {"prog_v2.trace", "prog_v2.trace.elf prog_v2.elf prog.elf"},
	    {"a--b.t", "a--b.t.elf a--b.elf a.elf"},
	    {"plain", "plain.elf"},
	    {".hidden.tt6", ".hidden.tt6.elf .hidden.elf"},
	    {"-x", "-x.elf"},
	};
	char got[1024];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		names_of(cases[i][0], got, sizeof(got));
		ck_assert_str_eq(got, cases[i][1]);
	}
	char small[8];
	ck_assert(!tm_image_beside_name("longer-than-eight", ".elf", 0, small, sizeof(small)));
	ck_assert(tm_image_beside_name("ab", ".elf", 0, small, sizeof(small)));
	ck_assert_str_eq(small, "ab.elf");
}
END_TEST

static char dir[64];

/* A new temporary folder in dir, removed with its files by cleanup. */
static void make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/tm-images-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void put(const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static void cleanup(void)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* The set of the trace at path in dir, by rules. */
static void open_set(const struct tm_image_rule *rules, size_t n, const char *path,
		     struct tm_image_set *set)
{
	int dirfd = open(dir, O_PATH | O_DIRECTORY);
	ck_assert_int_ge(dirfd, 0);
	ck_assert_int_eq(tm_images_open(rules, n, dirfd, path, set), 0);
	close(dirfd);
}

START_TEST(test_beside_files)
{
	struct tm_image_set set;
	make_dir();
	put("prog-run1.tarmac", "trace");
	open_set(NULL, 0, "prog-run1.tarmac", &set);
	ck_assert_uint_eq(set.n, 0); /* none beside: no images, identity 0 */
	ck_assert(set.identity == 0);
	tm_images_close(&set);

	put("prog.elf", "image of prog");
	open_set(NULL, 0, "prog-run1.tarmac", &set);
	ck_assert_uint_eq(set.n, 1);
	ck_assert_str_eq(set.image[0].name, "prog.elf");
	ck_assert_int_ge(set.image[0].fd, 0);
	ck_assert(!set.image[0].given);
	ck_assert(set.image[0].offset == 0);
	uint64_t prog = set.identity;
	ck_assert(prog != 0);
	tm_images_close(&set);

	/* a more specific name wins */
	put("prog-run1.elf", "image of run1");
	open_set(NULL, 0, "prog-run1.tarmac", &set);
	ck_assert_uint_eq(set.n, 1);
	ck_assert_str_eq(set.image[0].name, "prog-run1.elf");
	ck_assert(set.identity != prog);
	tm_images_close(&set);

	/* a link is found, and not followed */
	char target[512], link_path[512];
	snprintf(target, sizeof(target), "%s/prog.elf", dir);
	snprintf(link_path, sizeof(link_path), "%s/prog-run1.tarmac.elf", dir);
	ck_assert_int_eq(symlink(target, link_path), 0);
	open_set(NULL, 0, "prog-run1.tarmac", &set);
	ck_assert_uint_eq(set.n, 1);
	ck_assert_str_eq(set.image[0].name, "prog-run1.tarmac.elf");
	ck_assert_int_eq(set.image[0].fd, -1);
	ck_assert_int_eq(set.image[0].error, -ELOOP);
	ck_assert(set.identity != 0);
	tm_images_close(&set);
	ck_assert_int_eq(unlink(link_path), 0);

	/* a FIFO is refused without blocking */
	ck_assert_int_eq(mkfifo(link_path, 0600), 0);
	open_set(NULL, 0, "prog-run1.tarmac", &set);
	ck_assert_uint_eq(set.n, 1);
	ck_assert_int_eq(set.image[0].error, -EINVAL);
	tm_images_close(&set);
	ck_assert_int_eq(unlink(link_path), 0);

	/* in a folder: looked for beside the trace, not in the root */
	char sub[512];
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	put("sub/prog-run2.tarmac", "trace");
	open_set(NULL, 0, "sub/prog-run2.tarmac", &set);
	ck_assert_uint_eq(set.n, 0);
	tm_images_close(&set);
	put("sub/prog.elf", "image of prog");
	struct stat st;
	char copy[512];
	snprintf(copy, sizeof(copy), "%s/sub/prog.elf", dir);
	ck_assert_int_eq(stat(target, &st), 0);
	struct timespec times[2] = {st.st_atim, st.st_mtim};
	ck_assert_int_eq(utimensat(AT_FDCWD, copy, times, 0), 0);
	open_set(NULL, 0, "sub/prog-run2.tarmac", &set);
	ck_assert_uint_eq(set.n, 1);
	ck_assert_str_eq(set.image[0].name, "prog.elf");
	ck_assert(set.identity == prog); /* the same name, bytes and time: the same identity */
	tm_images_close(&set);
	cleanup();
}
END_TEST

static uint64_t identity_of(const struct tm_image_rule *rules, size_t n, const char *path)
{
	struct tm_image_set set;
	open_set(rules, n, path, &set);
	uint64_t id = set.identity;
	ck_assert(id == tm_images_identity(&set)); /* computed again: the same */
	tm_images_close(&set);
	return id;
}

START_TEST(test_rules_and_identity)
{
	make_dir();
	put("a.tarmac", "trace");
	put("a.elf", "beside");
	put("one.elf", "0123456789");
	put("two.elf", "abcdefghij");
	char one[512], two[512], missing[512];
	snprintf(one, sizeof(one), "%s/one.elf", dir);
	snprintf(two, sizeof(two), "%s/two.elf", dir);
	snprintf(missing, sizeof(missing), "%s/missing.elf", dir);
	struct tm_image_rule rules[] = {
	    {.glob = "*.tarmac", .path = one, .offset = 0x1000},
	    {.glob = "b*", .path = two},
	    {.glob = NULL, .path = two},
	};
	struct tm_image_set set;
	/* the rules that match, in order; the image beside is not used */
	open_set(rules, 3, "a.tarmac", &set);
	ck_assert_uint_eq(set.n, 2);
	ck_assert_str_eq(set.image[0].name, one);
	ck_assert(set.image[0].offset == 0x1000 && set.image[0].given);
	ck_assert_str_eq(set.image[1].name, two);
	tm_images_close(&set);
	/* no rule matches: the one beside */
	open_set(rules + 1, 1, "a.tarmac", &set);
	ck_assert_uint_eq(set.n, 1);
	ck_assert_str_eq(set.image[0].name, "a.elf");
	tm_images_close(&set);

	uint64_t base = identity_of(rules, 3, "a.tarmac");
	ck_assert(base == identity_of(rules, 3, "a.tarmac"));
	/* another offset */
	rules[0].offset = 0x2000;
	ck_assert(identity_of(rules, 3, "a.tarmac") != base);
	rules[0].offset = 0x1000;
	/* another order */
	struct tm_image_rule swapped[] = {rules[2], rules[0]};
	ck_assert(identity_of(swapped, 2, "a.tarmac") != base);
	/* another content of the same size and modification time */
	struct stat st;
	ck_assert_int_eq(stat(one, &st), 0);
	put("one.elf", "0123456780");
	struct timespec times[2] = {st.st_atim, st.st_mtim};
	ck_assert_int_eq(utimensat(AT_FDCWD, one, times, 0), 0);
	ck_assert(identity_of(rules, 3, "a.tarmac") != base);
	put("one.elf", "0123456789");
	ck_assert_int_eq(utimensat(AT_FDCWD, one, times, 0), 0);
	ck_assert(identity_of(rules, 3, "a.tarmac") == base);
	/* a new modification time alone */
	ck_assert_int_eq(utimensat(AT_FDCWD, one, NULL, 0), 0);
	ck_assert(identity_of(rules, 3, "a.tarmac") != base);
	/* an image that went away is in the set, with its error */
	rules[1].path = missing;
	open_set(rules + 1, 2, "b.tarmac", &set);
	ck_assert_uint_eq(set.n, 2);
	ck_assert_int_eq(set.image[0].fd, -1);
	ck_assert_int_eq(set.image[0].error, -ENOENT);
	tm_images_close(&set);
	cleanup();
}
END_TEST

START_TEST(test_context_add_image)
{
	make_dir();
	char src[512], obj[512], spec[1100], why[1024], cmd[1200];
	snprintf(src, sizeof(src), "%s/f.c", dir);
	snprintf(obj, sizeof(obj), "%s/f.o", dir);
	put("f.c", "int f(int x) { return x + 1; }\n");
	snprintf(cmd, sizeof(cmd), "cc -c -o '%s' '%s'", obj, src);
	ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
	put("text.elf", "no ELF at all\n");
	put("empty.elf", "");

	struct tm_context *ctx;
	ck_assert_int_eq(tm_context_new(1 << 20, &ctx), 0);
	snprintf(spec, sizeof(spec), "*.tarmac:%s@0x100", obj);
	ck_assert_msg(tm_context_add_image(ctx, spec, true, why, sizeof(why)) == 0, "%s", why);
	snprintf(spec, sizeof(spec), "%s", obj);
	ck_assert_msg(tm_context_add_image(ctx, spec, false, why, sizeof(why)) == 0, "%s", why);
	/* relative to the current folder */
	char cwd[4096];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_msg(tm_context_add_image(ctx, "*:f.o", true, why, sizeof(why)) == 0, "%s", why);
	ck_assert_int_eq(tm_context_add_image(ctx, "*:nothere.elf", true, why, sizeof(why)),
			 -ENOENT);
	ck_assert_int_eq(tm_context_add_image(ctx, "*:text.elf", true, why, sizeof(why)), -ENOEXEC);
	ck_assert_msg(strstr(why, "not an ELF image"), "%s", why);
	ck_assert_int_lt(tm_context_add_image(ctx, "*:empty.elf", true, why, sizeof(why)), 0);
	ck_assert_int_eq(tm_context_add_image(ctx, "*:.", true, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "not a regular file");
	ck_assert_int_eq(tm_context_add_image(ctx, "f.o", true, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "expected GLOB:FILE[@OFFSET]");
	ck_assert_int_eq(chdir(cwd), 0);
	tm_context_free(ctx);
	cleanup();
}
END_TEST

static Suite *images_suite(void)
{
	Suite *s = suite_create("images");
	TCase *tc = tcase_create("images");
	tcase_add_test(tc, test_parse_good);
	tcase_add_test(tc, test_parse_bad);
	tcase_add_test(tc, test_glob);
	tcase_add_test(tc, test_beside_names);
	tcase_add_test(tc, test_beside_files);
	tcase_add_test(tc, test_rules_and_identity);
	tcase_add_test(tc, test_context_add_image);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(images_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
