/* The cache folder of index files: made alone unless asked, stale temporary files removed,
 * used again when deleted, never blocked by what is no regular file, no descriptor kept; its
 * files listed and removed; writers in several processes storing one file at once. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "byu_ref.h"
#include "index_fixture.h"
#include "reseal.h"
#include "tracemount/build_id.h"
#include "tracemount/context.h"
#include "tracemount/compress.h"
#include "tracemount/index.h"
#include "tracemount/index_file.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "tracemount/table.h"
#include "tracemount/trace.h"
#include "tracemount/view.h"

START_TEST(test_store_folder)
{
	struct tm_index_store s;
	char err[512], path[300];
	snprintf(path, sizeof(path), "%s/open", ix_dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(tm_index_store_open(&s, path, true, err, sizeof(err)), 0);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0755); /* the user's folder keeps its mode */
	tm_index_store_close(&s);
	snprintf(path, sizeof(path), "%s/made", ix_dir);
	ck_assert_int_eq(tm_index_store_open(&s, path, true, err, sizeof(err)), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700); /* one made here is private */
	tm_index_store_close(&s);
	snprintf(path, sizeof(path), "%s/file", ix_dir);
	FILE *f = fopen(path, "w");
	fclose(f);
	ck_assert_int_lt(tm_index_store_open(&s, path, true, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, path));
	char buf[64];
	setenv("XDG_CACHE_HOME", "/x/y", 1);
	ck_assert_int_eq(tm_index_store_default(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/x/y/tracemount");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/u", 1);
	ck_assert_int_eq(tm_index_store_default(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/home/u/.cache/tracemount");
}
END_TEST

/* A folder the user names is made alone: a typo in its parent is refused, naming both, and
 * builds nothing. */
START_TEST(test_store_parents)
{
	struct tm_index_store s;
	char err[PATH_MAX + 256], path[300], want[700];
	struct stat st;
	snprintf(path, sizeof(path), "%s/typo/c", ix_dir);
	ck_assert_int_eq(tm_index_store_open(&s, path, false, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want),
		 "cache folder %s: %s/typo does not exist (only the last folder of a cache path "
		 "is created)",
		 path, ix_dir);
	ck_assert_str_eq(err, want);
	snprintf(want, sizeof(want), "%s/typo", ix_dir);
	ck_assert_int_eq(stat(want, &st), -1);
	tm_index_store_close(&s); /* harmless after a failed open */
	ck_assert_int_eq(tm_index_store_open(&s, path, true, err, sizeof(err)), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700);
	tm_index_store_close(&s);
	snprintf(path, sizeof(path), "%s/typo/d/", ix_dir); /* the last folder only: made */
	ck_assert_int_eq(tm_index_store_open(&s, path, false, err, sizeof(err)), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700);
	tm_index_store_close(&s);
	/* a relative folder is kept by its absolute path */
	char cwd[PATH_MAX];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(ix_dir), 0);
	ck_assert_int_eq(tm_index_store_open(&s, "rel", false, err, sizeof(err)), 0);
	ck_assert_int_eq(chdir(cwd), 0);
	snprintf(want, sizeof(want), "%s/rel", ix_dir);
	ck_assert_str_eq(s.dir, want);
	tm_index_store_close(&s);
}
END_TEST

static void touch_file(const char *folder, const char *name, time_t age)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", folder, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	struct timespec times[2] = {{time(NULL) - age, 0}, {time(NULL) - age, 0}};
	ck_assert_int_eq(utimensat(AT_FDCWD, path, times, 0), 0);
}

static bool exists(const char *folder, const char *name)
{
	char path[PATH_MAX];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", folder, name);
	return lstat(path, &st) == 0;
}

/* Opening the folder removes the temporary files of dead writers, by age, and nothing else. */
START_TEST(test_stale_temporaries)
{
	struct tm_index_store s;
	char err[512], path[300];
	snprintf(path, sizeof(path), "%s/stale", ix_dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	const char *old = ".0123456789abcdef.tmi.4242.1f2e3d";
	const char *fresh = ".0123456789abcdef.tmi.4243.abc";
	const time_t hour = 3600;
	touch_file(path, old, hour);
	touch_file(path, fresh, 0);
	touch_file(path, ".0123456789abcdef.tmi.1.2.x", TM_STALE_TMP_SECONDS + 60);
	touch_file(path, ".0123456789abcdef.tma.77.9", hour); /* an archive table's */
	touch_file(path, ".0123456789abcdef.tma.78.9", 0);
	touch_file(path, ".0123456789abcdef.tmx.1.2", hour); /* neither */
	touch_file(path, ".keep", hour);		     /* not a temporary file */
	touch_file(path, "0123456789abcdef.tmi", hour);	     /* an index file */
	touch_file(path, ".0123456789abcdeg.tmi.1.2", hour); /* not hex */
	touch_file(path, ".0123456789abcdef.tmi.", hour);    /* no writer */
	ck_assert_int_eq(tm_index_store_open(&s, path, false, err, sizeof(err)), 0);
	tm_index_store_close(&s);
	ck_assert(!exists(path, old));
	ck_assert(!exists(path, ".0123456789abcdef.tmi.1.2.x"));
	ck_assert(!exists(path, ".0123456789abcdef.tma.77.9"));
	ck_assert(exists(path, ".0123456789abcdef.tma.78.9"));
	ck_assert(exists(path, ".0123456789abcdef.tmx.1.2"));
	ck_assert(exists(path, fresh));
	ck_assert(exists(path, ".keep"));
	ck_assert(exists(path, "0123456789abcdef.tmi"));
	ck_assert(exists(path, ".0123456789abcdeg.tmi.1.2"));
	ck_assert(exists(path, ".0123456789abcdef.tmi."));
}
END_TEST

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "a load blocked on a FIFO\n";
	ssize_t n = write(2, msg, sizeof(msg) - 1);
	(void)n;
	_exit(3);
}

/* A FIFO named as the index file is refused at once, never read; a store replaces it. */
START_TEST(test_fifo)
{
	struct ix_fixture f;
	struct tm_index *back = NULL;
	char path[512], why[256];
	ix_setup(&f, 1000, 0);
	ix_file_path(&f, path, sizeof(path));
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	signal(SIGALRM, on_alarm);
	alarm(20);
	ck_assert_int_eq(
	    tm_index_file_load(&f.store, f.fmt, &f.views, &f.key, &back, why, sizeof(why)),
	    -EBADMSG);
	alarm(0);
	ck_assert_str_eq(why, "not a regular file");
	ck_assert_int_eq(tm_index_file_store(&f.store, f.fmt, &f.views, &f.key, f.ix), 0);
	ck_assert_int_eq(
	    tm_index_file_load(&f.store, f.fmt, &f.views, &f.key, &back, why, sizeof(why)), 0);
	tm_index_free(back);
	/* a symbolic link is not followed */
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(symlink("/dev/zero", path), 0);
	ck_assert_int_eq(
	    tm_index_file_load(&f.store, f.fmt, &f.views, &f.key, &back, why, sizeof(why)),
	    -EBADMSG);
	ck_assert_str_eq(why, "a symbolic link");
	ck_assert_int_eq(unlink(path), 0);
	ix_teardown(&f);
}
END_TEST

static void empty_folder(const char *path)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	ck_assert_int_eq(system(cmd), 0);
}

/* The cache folder deleted while open is used again: made again by hand, or by the store. */
START_TEST(test_folder_deleted)
{
	struct ix_fixture f;
	struct tm_index *back = NULL;
	char path[512], why[256];
	struct stat st;
	ix_setup(&f, 1000, 0);
	ix_file_path(&f, path, sizeof(path));
	ck_assert_int_eq(tm_index_file_store(&f.store, f.fmt, &f.views, &f.key, f.ix), 0);
	empty_folder(ix_cache);
	ck_assert_int_eq(mkdir(ix_cache, 0755), 0);
	ck_assert_int_eq(
	    tm_index_file_load(&f.store, f.fmt, &f.views, &f.key, &back, why, sizeof(why)),
	    -ENOENT);
	ck_assert_int_eq(tm_index_file_store(&f.store, f.fmt, &f.views, &f.key, f.ix), 0);
	ck_assert_int_eq(stat(path, &st), 0); /* in the new folder, */
	ck_assert_int_eq(stat(ix_cache, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0755); /* made by the user: its mode kept */
	ck_assert_int_eq(
	    tm_index_file_load(&f.store, f.fmt, &f.views, &f.key, &back, why, sizeof(why)), 0);
	tm_index_free(back);
	/* deleted and not made again: the store makes it */
	empty_folder(ix_cache);
	ck_assert_int_eq(tm_index_file_store(&f.store, f.fmt, &f.views, &f.key, f.ix), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	/* deleted with its parent: nothing is made, the store fails and says why */
	char parent[300];
	snprintf(parent, sizeof(parent), "%s/cache", ix_dir);
	empty_folder(parent);
	ck_assert_int_eq(tm_index_file_store(&f.store, f.fmt, &f.views, &f.key, f.ix), -ENOENT);
	ck_assert_int_eq(stat(parent, &st), -1);
	ck_assert_int_eq(mkdir(parent, 0700), 0);
	ck_assert_int_eq(tm_index_file_store(&f.store, f.fmt, &f.views, &f.key, f.ix), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ix_teardown(&f);
}
END_TEST

struct racer {
	struct ix_fixture *f;
	atomic_bool *done;
	int errors;
};

static void *load_and_store(void *arg)
{
	struct racer *r = arg;
	struct tm_index *back;
	char why[256];
	for (int i = 0; i < 10 || !atomic_load(r->done); i++) {
		back = NULL;
		int err = tm_index_file_load(&r->f->store, r->f->fmt, &r->f->views, &r->f->key,
					     &back, why, sizeof(why));
		tm_index_free(back);
		if (err && err != -ENOENT)
			r->errors++;
		(void)tm_index_file_store(&r->f->store, r->f->fmt, &r->f->views, &r->f->key,
					  r->f->ix);
	}
	return NULL;
}

/* Loads and stores on many threads while the folder is deleted under them: no fd is closed
 * under another thread (the sanitizers and valgrind watch), and the last store lands. */
START_TEST(test_folder_deleted_racing)
{
	struct ix_fixture f;
	struct racer r[4];
	pthread_t th[4];
	char path[512];
	struct stat st;
	ix_setup(&f, 1000, 0);
	ix_file_path(&f, path, sizeof(path));
	atomic_bool done = false;
	setenv("TM_RACE_CACHE", ix_cache, 1);
	for (int i = 0; i < 4; i++) {
		r[i] = (struct racer){&f, &done, 0};
		ck_assert_int_eq(pthread_create(&th[i], NULL, load_and_store, &r[i]), 0);
	}
	for (int i = 0; i < 5; i++) { /* writers may make it again as rm empties it: retried */
		for (int tries = 0; tries < 100; tries++)
			if (system("rm -rf \"$TM_RACE_CACHE\" 2>/dev/null") == 0)
				break;
		usleep(20000); /* room for loads and stores between deletions */
	}
	atomic_store(&done, true);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(r[i].errors, 0); /* a file is whole or absent */
	}
	empty_folder(ix_cache);
	ck_assert_int_eq(tm_index_file_store(&f.store, f.fmt, &f.views, &f.key, f.ix), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_gt(f.store.n_old_fds, 0); /* opened again, the old fds kept */
	ix_teardown(&f);
}
END_TEST

static char logged[16384];

static void log_line(int priority, const char *line)
{
	(void)priority;
	size_t n = strlen(logged);
	snprintf(logged + n, sizeof(logged) - n, "%s\n", line);
}

static struct tm_index_counts count(const struct tm_context *ctx)
{
	struct tm_index_counts c;
	tm_context_counts(ctx, &c);
	return c;
}

/* A context over the cache folder, logging to logged. */
static struct tm_context *new_context(bool force, const char *root)
{
	struct tm_context *ctx;
	char err[512];
	ck_assert_int_eq(tm_context_new(TM_DEFAULT_MEMORY, &ctx), 0);
	ck_assert_msg(tm_context_set_store(ctx, ix_cache, false, err, sizeof(err)) == 0, "%s", err);
	tm_context_set_log(ctx, log_line);
	tm_context_set_force_rebuild(ctx, force);
	ck_assert_int_eq(tm_context_set_root(ctx, root), 0);
	logged[0] = '\0';
	return ctx;
}

/* Indexes f's trace as t.byu in ctx. Returns tm_trace_index's result. */
static int index_once(struct tm_context *ctx, struct ix_fixture *f)
{
	struct tm_trace *t;
	struct tm_open_trace ot;
	ck_assert_int_eq(tm_context_trace(ctx, "t.byu", f->fmt, &t), 0);
	tm_trace_open(&ot, t, &f->src);
	int err = tm_trace_index(&ot);
	tm_trace_close(&ot);
	tm_trace_put(t);
	return err;
}

/* The lowest free descriptor: with the limit there, every open fails with EMFILE. */
static int lowest_free_fd(void)
{
	int fd = dup(0);
	ck_assert_int_ge(fd, 0);
	close(fd);
	return fd;
}

/* A load that fails for want of descriptors is the system's trouble, not the file's: the
 * error says so, the file is not counted as refused, the trace is built. */
START_TEST(test_no_descriptors)
{
	struct ix_fixture f;
	struct tm_index *back = NULL;
	struct rlimit was, low;
	char why[256], want[600];
	ix_setup(&f, 1000, 0);
	ck_assert_int_eq(tm_index_file_store(&f.store, f.fmt, &f.views, &f.key, f.ix), 0);
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &was), 0);
	low = was;
	low.rlim_cur = (rlim_t)lowest_free_fd();
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	int err = tm_index_file_load(&f.store, f.fmt, &f.views, &f.key, &back, why, sizeof(why));
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &was), 0);
	ck_assert_int_eq(err, -EMFILE);
	ck_assert_str_eq(why, strerror(EMFILE));

	struct tm_context *ctx = new_context(false, NULL);
	low.rlim_cur = (rlim_t)lowest_free_fd();
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	err = index_once(ctx, &f);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &was), 0);
	ck_assert_int_eq(err, 0);
	ck_assert_uint_eq(count(ctx).refused, 0);
	ck_assert_uint_eq(count(ctx).loaded, 0);
	ck_assert_uint_eq(count(ctx).built, 1);
	snprintf(want, sizeof(want),
		 "t.byu: cannot read its index file in %s: Too many open files: indexing again\n",
		 ix_cache);
	ck_assert_msg(strstr(logged, want), "logged:\n%s", logged);
	ck_assert_ptr_null(strstr(logged, "refused"));
	tm_context_free(ctx);

	/* a damaged file, by contrast, is refused and counted */
	char path[512];
	ix_file_path(&f, path, sizeof(path));
	ix_flip_body(path);
	ctx = new_context(false, NULL);
	ck_assert_int_eq(index_once(ctx, &f), 0);
	ck_assert_uint_eq(count(ctx).refused, 1);
	ck_assert_ptr_nonnull(
	    strstr(logged, "t.byu: index file refused (body checksum mismatch): indexing again\n"));
	tm_context_free(ctx);
	ix_teardown(&f);
}
END_TEST

/* force_rebuild reads no index file but writes one; an index pass says when it starts and
 * when it ends. */
START_TEST(test_force_rebuild)
{
	struct ix_fixture f;
	char path[512];
	struct stat before, after;
	ix_setup(&f, 1000, 0);
	ix_file_path(&f, path, sizeof(path));
	struct tm_context *ctx = new_context(false, NULL);
	ck_assert_int_eq(index_once(ctx, &f), 0);
	ck_assert_uint_eq(count(ctx).built, 1);
	ck_assert_ptr_nonnull(strstr(logged, "t.byu: indexing, 6000 bytes\n"));
	ck_assert_ptr_nonnull(strstr(logged, "t.byu: indexed in "));
	tm_context_free(ctx);
	ck_assert_int_eq(stat(path, &before), 0);

	ctx = new_context(false, NULL);
	ck_assert_int_eq(index_once(ctx, &f), 0);
	ck_assert_uint_eq(count(ctx).loaded, 1);
	ck_assert_ptr_null(strstr(logged, "indexing")); /* read, not built: nothing said */
	tm_context_free(ctx);

	ctx = new_context(true, NULL);
	ck_assert_int_eq(index_once(ctx, &f), 0);
	ck_assert_uint_eq(count(ctx).loaded, 0);
	ck_assert_uint_eq(count(ctx).built, 1);
	tm_context_free(ctx);
	ck_assert_int_eq(stat(path, &after), 0);
	ck_assert_uint_ne(before.st_ino, after.st_ino); /* written anew */
	ix_teardown(&f);
}
END_TEST

struct listed {
	int n;
	struct tm_index_file_info first;
	char problems[4][64], names[4][32];
	int stop_after;
};

static int collect(void *arg, const struct tm_index_file_info *info)
{
	struct listed *l = arg;
	if (l->n == 0)
		l->first = *info;
	if (l->n < 4) {
		snprintf(l->problems[l->n], sizeof(l->problems[0]), "%s",
			 info->problem ? info->problem : "-");
		snprintf(l->names[l->n], sizeof(l->names[0]), "%s", info->name);
	}
	l->n++;
	return l->stop_after && l->n == l->stop_after ? 7 : 0;
}

/* The list names each index file's trace, format, key and size, and what would refuse it;
 * remove takes index files only. */
START_TEST(test_list_and_remove)
{
	struct ix_fixture f;
	struct listed l;
	char path[512], want[PATH_MAX], real[PATH_MAX];
	struct stat st;
	ix_setup(&f, 1000, 0);
	ix_file_path(&f, path, sizeof(path));
	empty_folder(ix_cache);				     /* of the other tests' files */
	struct tm_context *ctx = new_context(false, ix_dir); /* a mount: under its root */
	ck_assert_int_eq(index_once(ctx, &f), 0);
	tm_context_free(ctx);
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(tm_index_store_list(&f.store, collect, &l), 0);
	ck_assert_int_eq(l.n, 1);
	ck_assert_ptr_null(l.first.problem);
	ck_assert_str_eq(l.first.name, strrchr(path, '/') + 1);
	ck_assert_str_eq(l.first.format, "byu");
	snprintf(want, sizeof(want), "%s/t.byu", ix_dir);
	ck_assert_str_eq(l.first.trace, want);
	ck_assert_int_eq(memcmp(&l.first.key, &f.key, sizeof(f.key)), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(l.first.size, (uint64_t)st.st_size);
	ck_assert_int_eq(l.first.written.tv_sec, st.st_mtim.tv_sec);

	/* tracemount index: resolved from the current folder */
	char cwd[PATH_MAX];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(ix_dir), 0);
	ctx = new_context(true, NULL);
	ck_assert_int_eq(index_once(ctx, &f), 0);
	tm_context_free(ctx);
	ck_assert_int_eq(chdir(cwd), 0);
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(tm_index_store_list(&f.store, collect, &l), 0);
	ck_assert_ptr_nonnull(realpath(ix_trace_path, real));
	ck_assert_str_eq(l.first.trace, real);

	/* others: out of date, damaged, no regular file; temporary files are not listed */
	char other[600];
	snprintf(other, sizeof(other), "%s/0000000000000001.tmi", ix_cache);
	ck_assert_int_eq(link(path, other), 0);
	ix_another_build(other); /* hard-linked: both change */
	snprintf(other, sizeof(other), "%s/0000000000000002.tmi", ix_cache);
	ck_assert_int_eq(mkfifo(other, 0600), 0);
	snprintf(other, sizeof(other), "%s/0000000000000003.tmi", ix_cache);
	FILE *out = fopen(other, "w");
	fputs("not an index file, at all, but long enough? no.", out);
	fclose(out);
	ck_assert_int_eq(chmod(other, 0600), 0);
	touch_file(ix_cache, ".0000000000000004.tmi.1.2", 0);
	touch_file(ix_cache, "notes.txt", 0);
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(tm_index_store_list(&f.store, collect, &l), 0);
	ck_assert_int_eq(l.n, 4);
	ck_assert_str_eq(l.names[0], "0000000000000001.tmi");
	ck_assert_str_eq(l.problems[0], "out of date");
	ck_assert_str_eq(l.first.format, "byu"); /* its header read still */
	ck_assert_str_eq(l.first.trace, real);
	ck_assert_str_eq(l.names[1], "0000000000000002.tmi");
	ck_assert_str_eq(l.problems[1], "not a regular file");
	ck_assert_str_eq(l.names[2], "0000000000000003.tmi");
	ck_assert_str_eq(l.problems[2], "truncated or overlong");
	ck_assert_str_eq(l.names[3], strrchr(path, '/') + 1);
	ck_assert_str_eq(l.problems[3], "out of date"); /* the link's change */
	memset(&l, 0, sizeof(l));
	l.stop_after = 2;
	ck_assert_int_eq(tm_index_store_list(&f.store, collect, &l), 7);
	ck_assert_int_eq(l.n, 2);

	ck_assert_int_eq(tm_index_store_remove(&f.store, "0000000000000002.tmi"), 0);
	ck_assert(!exists(ix_cache, "0000000000000002.tmi"));
	ck_assert_int_eq(tm_index_store_remove(&f.store, "0000000000000002.tmi"), -ENOENT);
	ck_assert_int_eq(tm_index_store_remove(&f.store, "notes.txt"), -EINVAL);
	ck_assert_int_eq(tm_index_store_remove(&f.store, "../x.tmi"), -EINVAL);
	ck_assert_int_eq(tm_index_store_remove(&f.store, ".0000000000000004.tmi.1.2"), -EINVAL);
	ck_assert(exists(ix_cache, "notes.txt"));
	ix_teardown(&f);
}
END_TEST

/* Writers in several processes (as shards of tracemount index on machines sharing the folder)
 * store one name at once, each its own bytes, while this process reads it: every read finds
 * one writer's file whole, and at the end there is that one file, whole, and no temporary. */
START_TEST(test_concurrent_writers)
{
	enum { WRITERS = 4, ROUNDS = 100, SIZE = 256 * 1024 };
	static const char name[] = "0123456789abcdef.tmi";
	char path[300], err[512];
	snprintf(path, sizeof(path), "%s/shared", ix_dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	for (int w = 0; w < WRITERS; w++) {
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			static char buf[SIZE];
			struct tm_index_store s;
			memset(buf, 'a' + w, sizeof(buf));
			struct iovec v[2] = {{buf, SIZE / 3}, {buf + SIZE / 3, SIZE - SIZE / 3}};
			if (tm_index_store_open(&s, path, false, err, sizeof(err)) < 0)
				_exit(1);
			for (int i = 0; i < ROUNDS; i++)
				if (tm_index_store_write(&s, name, v, 2) < 0)
					_exit(2);
			tm_index_store_close(&s);
			_exit(0);
		}
	}
	struct tm_index_store s;
	ck_assert_int_eq(tm_index_store_open(&s, path, false, err, sizeof(err)), 0);
	int left = WRITERS, status;
	unsigned torn = 0;
	for (bool last = false; !last;) {
		last = left == 0; /* one more read once every writer is done */
		uint8_t *data;
		size_t len;
		const char *bad;
		int r = tm_index_store_read(&s, name, 0, &data, &len, &bad);
		if (r == 0) {
			bool whole = len == SIZE && data[0] >= 'a' && data[0] < 'a' + WRITERS;
			for (size_t i = 1; whole && i < len; i++)
				whole = data[i] == data[0];
			torn += !whole;
			free(data);
		} else {
			ck_assert_msg(r == -ENOENT && !last, "read: %d (%s)", r, bad ? bad : "");
		}
		pid_t pid;
		while (left && (pid = waitpid(-1, &status, WNOHANG)) > 0) {
			ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
				      "a writer failed: status %d", status);
			left--;
		}
	}
	tm_index_store_close(&s);
	ck_assert_uint_eq(torn, 0);
	DIR *d = opendir(path);
	ck_assert_ptr_nonnull(d);
	unsigned entries = 0;
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			ck_assert_str_eq(e->d_name, name);
			entries++;
		}
	closedir(d);
	ck_assert_uint_eq(entries, 1);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = {
	    test_store_folder,	    test_store_parents,
	    test_stale_temporaries, test_fifo,
	    test_folder_deleted,    test_folder_deleted_racing,
	    test_no_descriptors,    test_force_rebuild,
	    test_list_and_remove,   test_concurrent_writers,
	};
	return ix_run("index_store", tests, sizeof(tests) / sizeof(tests[0]));
}
