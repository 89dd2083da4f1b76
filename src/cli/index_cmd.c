/* `tracemount index [OPTION]... PATH...`: builds or refreshes the index files of every trace
 * under the paths, N at a time, with a progress bar on a terminal, or with `--shard K/N` only
 * the traces of shard K of N (by a hash of each trace's path relative to the PATH it was found
 * under); `--list` and `--prune`: the cache folder's index files, their traces and their
 * state. */
#include <errno.h>
#include <fcntl.h>
#include <ctype.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "tracemount/context.h"
#include "tracemount/index_file.h"
#include "tracemount/source.h"
#include "tracemount/trace.h"
#include "tracemount/util.h"
#include "tracemount/walk.h"

#define MAX_JOBS 64

struct job {
	char *path;
	const struct tm_format *fmt;
	struct stat st;
	int err;
};

struct run {
	struct tm_context *ctx;
	struct job *jobs;
	size_t n_jobs, cap;
	unsigned shard_k, shard_n; /* --shard K/N (K from 1), or 0/0: every trace */
	const char *root;	   /* the PATH being walked, trailing slashes stripped */
	size_t root_len;
	size_t found;		   /* traces found, in this shard or not */
	unsigned walk_errors;	   /* paths that could not be read */
	unsigned not_traces;	   /* files named on the command line that are not traces */
	atomic_size_t next;	   /* the next job to take */
	atomic_size_t finished;	   /* jobs done */
	atomic_uint_fast64_t done; /* bytes of the jobs done */
	_Atomic(struct tm_trace *) active[MAX_JOBS];
};

/* The path of a trace found under r->root, relative to it ("sub/a.byu" of "ROOT/sub/a.byu"):
 * the same on every machine that has the folder, wherever it is mounted. A trace named as PATH
 * is its base name. */
static const char *relative_path(const struct run *r, const char *path)
{
	size_t n = r->root_len;
	if (n == 1 && r->root[0] == '.')
		return path; /* tm_walk names the children of "." "a", not "./a" */
	if (strncmp(path, r->root, n) == 0 && path[n] == '/')
		return path + n + 1;
	return tm_base_name(path);
}

/* Whether the trace at path (found under r->root) is in this run's shard: FNV-1a of its
 * relative path, mod N, is K - 1. */
static bool in_shard(const struct run *r, const char *path)
{
	if (!r->shard_n)
		return true;
	const char *rel = relative_path(r, path);
	return tm_fnv1a(TM_FNV_START, rel, strlen(rel)) % r->shard_n == r->shard_k - 1;
}

static int collect(void *arg, const char *path, const struct tm_format *fmt, const struct stat *st,
		   int err)
{
	struct run *r = arg;
	if (!fmt) {
		fprintf(stderr, "tracemount index: %s: %s\n", path, strerror(-err));
		r->walk_errors++;
		return 0;
	}
	r->found++;
	if (!in_shard(r, path))
		return 0;
	if (r->n_jobs == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		struct job *jobs = realloc(r->jobs, cap * sizeof(*jobs));
		if (!jobs)
			return -ENOMEM;
		r->jobs = jobs;
		r->cap = cap;
	}
	struct job *j = &r->jobs[r->n_jobs];
	if (!(j->path = strdup(path)))
		return -ENOMEM;
	j->fmt = fmt;
	j->st = *st;
	j->err = 0;
	r->n_jobs++;
	return 0;
}

struct worker {
	struct run *run;
	unsigned slot;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->run;
	for (;;) {
		size_t k = atomic_fetch_add(&r->next, 1);
		if (k >= r->n_jobs)
			break;
		struct job *j = &r->jobs[k];
		j->err = tm_index_one(r->ctx, AT_FDCWD, j->path, j->fmt, &j->st, false,
				      &r->active[w->slot]);
		atomic_fetch_add(&r->done, (uint64_t)j->st.st_size);
		atomic_fetch_add(&r->finished, 1);
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Bytes done: the finished jobs' and the running ones' progress. The traces stay in the
 * context's table, which holds a reference on each, until it is freed, so a pointer read
 * here is valid. */
static uint64_t bytes_done(struct run *r, unsigned jobs)
{
	uint64_t done = atomic_load(&r->done);
	for (unsigned i = 0; i < jobs; i++) {
		struct tm_trace *t = atomic_load(&r->active[i]);
		if (!t)
			continue;
		struct tm_trace_progress p;
		tm_trace_progress(t, &p);
		done += p.state == TM_TRACE_INDEXING ? p.done : 0;
	}
	return done;
}

static void draw(struct run *r, unsigned jobs, uint64_t total, double start)
{
	uint64_t done = bytes_done(r, jobs);
	if (done > total)
		done = total;
	double secs = now() - start, rate = secs > 0 ? (double)done / secs : 0;
	unsigned pct = total ? (unsigned)(done * 100 / total) : 100, width = 24;
	char bar[32], a[32], b[32], c[32], left[32] = "";
	for (unsigned i = 0; i < width; i++)
		bar[i] = i < pct * width / 100 ? '#' : '.';
	bar[width] = '\0';
	tm_cli_human_size(a, sizeof(a), (double)done);
	tm_cli_human_size(b, sizeof(b), (double)total);
	tm_cli_human_size(c, sizeof(c), rate);
	if (rate > 0 && done < total) {
		unsigned s = (unsigned)((double)(total - done) / rate);
		snprintf(left, sizeof(left), ", %u:%02u left", s / 60, s % 60);
	}
	char shard[80] = "";
	if (r->shard_n)
		snprintf(shard, sizeof(shard), " (shard %u/%u of %zu found)", r->shard_k,
			 r->shard_n, r->found);
	fprintf(stderr, "\r[%s] %3u%% %s of %s, %zu/%zu traces%s, %s/s%s\033[K", bar, pct, a, b,
		atomic_load(&r->finished), r->n_jobs, shard, c, left);
	fflush(stderr);
}

struct opts {
	unsigned jobs;
	unsigned shard_k, shard_n; /* --shard K/N, or 0/0 */
	bool jobs_given, force, list, prune;
	const char *cache;
	const char **formats; /* --format's GLOB:NAME, n_formats of them */
	unsigned n_formats;
	const char **images; /* --image's GLOB:IMAGE[@OFFSET], n_images of them */
	unsigned n_images;
};

static void help(void)
{
	printf("usage: tracemount index [OPTION]... PATH...\n"
	       "       tracemount index --list [--cache DIR]\n"
	       "       tracemount index --prune [--cache DIR]\n"
	       "\n"
	       "Builds the index file of every trace at or below each PATH ahead of time, so\n"
	       "that a mount, tracemount cat and tracemount ls read it instead of decoding the\n"
	       "trace.\n"
	       "An index file that is up to date is kept. A file named as PATH must be a\n"
	       "recognised trace; files below a folder that are not traces are skipped.\n"
	       "\n"
	       "options:\n"
	       "    -c, --cache DIR         folder of index files (default\n"
	       "                            $XDG_CACHE_HOME/tracemount, else\n"
	       "                            ~/.cache/tracemount)\n"
	       "    -F, --format GLOB:NAME  treat files matching GLOB as format NAME\n"
	       "                            (repeatable, as the mount's -o format=GLOB:NAME)\n"
	       "    -i, --image GLOB:IMAGE[@OFFSET]\n"
	       "                            program image of the traces matching GLOB\n"
	       "                            (repeatable, as the mount's -o image=): the mount\n"
	       "                            given the same images reads the index files\n"
	       "        --force             rebuild every index and rewrite its file, even one\n"
	       "                            up to date\n"
	       "    -j, --jobs N            index N traces at a time (1 to %d, default 1)\n"
	       "        --shard K/N         index only shard K of N (K from 1 to N): the traces\n"
	       "                            whose path relative to their PATH has an FNV-1a hash\n"
	       "                            equal to K-1 modulo N; N runs, one for each K, on\n"
	       "                            as many machines, share the traces into one cache\n"
	       "                            folder\n"
	       "        --list              list the cache folder's index files: name, size,\n"
	       "                            age, format, state (ok, out of date (other\n"
	       "                            build), trace gone, trace changed, refused:\n"
	       "                            REASON) and trace\n"
	       "        --prune             delete the index files whose trace is gone or\n"
	       "                            changed, and those refused; keep the others\n"
	       "    -h, --help              show this help\n"
	       "\n",
	       MAX_JOBS);
	tm_cli_print_formats(stdout);
}

static int usage_error(const char *why)
{
	fprintf(stderr, "tracemount index: %s (see tracemount index --help)\n", why);
	return 2;
}

/* A decimal number of 1 to 9 digits at *s, no sign nor space, into *v; *s moved past it. */
static bool parse_count(const char **s, unsigned *v)
{
	const char *p = *s;
	unsigned long n = 0;
	for (; isdigit((unsigned char)*p) && p - *s < 9; p++)
		n = n * 10 + (unsigned long)(*p - '0');
	if (p == *s || isdigit((unsigned char)*p))
		return false;
	*s = p;
	*v = (unsigned)n;
	return true;
}

/* --shard's K/N, 1 <= K <= N. Returns 0 or an exit status. */
static int parse_shard(const char *arg, struct opts *o)
{
	const char *p = arg;
	unsigned k, n;
	if (!parse_count(&p, &k) || *p++ != '/' || !parse_count(&p, &n) || *p || k < 1 || k > n) {
		fprintf(stderr,
			"tracemount index: --shard '%s': expected K/N, shard K of N with 1 <= K "
			"<= N (see tracemount index --help)\n",
			arg);
		return 2;
	}
	o->shard_k = k;
	o->shard_n = n;
	return 0;
}

/* Returns 0, an exit status, or -1 when the help was printed. */
static int parse(int argc, char **argv, struct opts *o)
{
	enum { OPT_FORCE = 256, OPT_LIST, OPT_PRUNE, OPT_SHARD };
	static const struct option longopts[] = {
	    {"cache", required_argument, NULL, 'c'},
	    {"format", required_argument, NULL, 'F'},
	    {"force", no_argument, NULL, OPT_FORCE},
	    {"jobs", required_argument, NULL, 'j'},
	    {"list", no_argument, NULL, OPT_LIST},
	    {"prune", no_argument, NULL, OPT_PRUNE},
	    {"shard", required_argument, NULL, OPT_SHARD},
	    {"image", required_argument, NULL, 'i'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;
	if (!(o->formats = calloc((size_t)argc, sizeof(*o->formats))) ||
	    !(o->images = calloc((size_t)argc, sizeof(*o->images)))) {
		fprintf(stderr, "tracemount index: out of memory\n");
		return 1;
	}
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":c:F:i:j:h", longopts, NULL)) != -1) {
		char *end;
		long n;
		switch (c) {
		case 'c': o->cache = optarg; break;
		case 'F': o->formats[o->n_formats++] = optarg; break;
		case 'i': o->images[o->n_images++] = optarg; break;
		case OPT_FORCE: o->force = true; break;
		case OPT_LIST: o->list = true; break;
		case OPT_PRUNE: o->prune = true; break;
		case OPT_SHARD:
			if (parse_shard(optarg, o))
				return 2;
			break;
		case 'j':
			n = strtol(optarg, &end, 10);
			if (!*optarg || *end || n < 1 || n > MAX_JOBS) {
				fprintf(stderr, "tracemount index: -j %s: takes 1 to %d\n", optarg,
					MAX_JOBS);
				return 2;
			}
			o->jobs = (unsigned)n;
			o->jobs_given = true;
			break;
		case 'h': help(); return -1;
		default: tm_cli_bad_option("index", c, argv); return 2;
		}
	}
	if (o->list && o->prune)
		return usage_error("--list and --prune cannot be combined");
	if ((o->list || o->prune) && optind < argc)
		return usage_error(
		    "--list and --prune work on the cache folder: they take no PATH");
	if ((o->list || o->prune) &&
	    (o->force || o->jobs_given || o->n_formats || o->n_images || o->shard_n))
		return usage_error(
		    "--list and --prune take no --force, --format, --image, -j or --shard");
	if (!o->list && !o->prune && optind == argc)
		return usage_error("usage: tracemount index [OPTION]... PATH...");
	if (o->cache && strcmp(o->cache, "none") == 0)
		return usage_error(
		    "--cache none: index files need a cache folder (give --cache DIR)");
	return 0;
}

/* The cache folder: --cache's, else the default one, in buf. Returns 0 or an exit status. */
static int cache_dir(const struct opts *o, char *buf, size_t len, const char **dir)
{
	if (o->cache) {
		*dir = o->cache;
		return 0;
	}
	if (tm_index_store_default(buf, len) < 0) {
		fprintf(stderr,
			"tracemount index: no cache folder (neither XDG_CACHE_HOME nor HOME "
			"is set): give --cache DIR\n");
		return 1;
	}
	*dir = buf;
	return 0;
}

/* The PATH walked next, named as tm_walk names it (without trailing slashes). */
static void set_root(struct run *r, const char *path)
{
	r->root = path;
	r->root_len = strlen(path);
	while (r->root_len > 1 && path[r->root_len - 1] == '/')
		r->root_len--;
}

/* A path named on the command line: a folder is walked (files in it that are not traces are
 * skipped), a file must be a trace. A symbolic link named is followed, as by ls and find -H. */
static int add_operand(struct run *r, const char *path)
{
	struct stat st, lst;
	if (stat(path, &st) < 0 || lstat(path, &lst) < 0) {
		fprintf(stderr, "tracemount index: %s: %s\n", path, strerror(errno));
		r->walk_errors++;
		return 0;
	}
	if (S_ISDIR(st.st_mode) && S_ISLNK(lst.st_mode)) {
		char *resolved = realpath(path, NULL);
		if (!resolved) {
			fprintf(stderr, "tracemount index: %s: %s\n", path, strerror(errno));
			r->walk_errors++;
			return 0;
		}
		set_root(r, resolved);
		int err = tm_walk(r->ctx, AT_FDCWD, resolved, collect, r);
		free(resolved);
		return err;
	}
	set_root(r, path);
	if (S_ISDIR(st.st_mode))
		return tm_walk(r->ctx, AT_FDCWD, path, collect, r);
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "tracemount index: %s: not a regular file or folder\n", path);
		r->not_traces++;
		return 0;
	}
	const struct tm_format *fmt = tm_context_detect(r->ctx, AT_FDCWD, path);
	if (!fmt) {
		fprintf(stderr,
			"tracemount index: %s: not a recognised trace (name its format with "
			"--format GLOB:NAME)\n",
			path);
		r->not_traces++;
		return 0;
	}
	return collect(r, path, fmt, &st, 0);
}

static int run_index(struct opts *o, char **paths, int n_paths)
{
	char buf[PATH_MAX], err_msg[PATH_MAX + 256];
	const char *cache;
	struct run r = {.shard_k = o->shard_k, .shard_n = o->shard_n};
	int status = cache_dir(o, buf, sizeof(buf), &cache);
	if (status)
		return status;
	if (tm_context_new(TM_DEFAULT_MEMORY, &r.ctx) < 0) {
		fprintf(stderr, "tracemount index: out of memory\n");
		return 1;
	}
	/* The traces' paths are relative to the current folder (root_path NULL): their index
	 * files record where they are resolved to. */
	tm_context_set_force_rebuild(r.ctx, o->force);
	tm_cli_log_warnings(r.ctx, "index");
	for (unsigned i = 0; i < o->n_formats; i++)
		if ((status = tm_cli_add_format(r.ctx, "index", o->formats[i])) != 0)
			goto out;
	for (unsigned i = 0; i < o->n_images; i++)
		if ((status = tm_cli_add_image(r.ctx, "index", o->images[i], true)) != 0)
			goto out;
	if (tm_context_set_store(r.ctx, cache, cache == buf, err_msg, sizeof(err_msg)) < 0) {
		/* index files need a folder: where the default one cannot be made, name another */
		fprintf(stderr, "tracemount index: %s%s\n", err_msg,
			cache == buf ? " (give --cache DIR)" : "");
		status = 1;
		goto out;
	}
	status = 1;
	for (int i = 0; i < n_paths; i++)
		if (add_operand(&r, paths[i]) < 0) {
			fprintf(stderr, "tracemount index: out of memory\n");
			goto out;
		}
	uint64_t total = 0;
	for (size_t k = 0; k < r.n_jobs; k++)
		total += (uint64_t)r.jobs[k].st.st_size;

	pthread_t threads[MAX_JOBS];
	struct worker workers[MAX_JOBS];
	unsigned started = 0;
	double start = now();
	for (; started < o->jobs && started < r.n_jobs; started++) {
		workers[started] = (struct worker){&r, started};
		if (pthread_create(&threads[started], NULL, work, &workers[started]) != 0)
			break;
	}
	if (!started && r.n_jobs)
		work(&(struct worker){&r, 0});
	int tty = isatty(STDERR_FILENO);
	while (tty && atomic_load(&r.finished) < r.n_jobs) {
		draw(&r, started, total, start);
		usleep(200000);
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	if (tty) {
		draw(&r, started, total, start);
		fputc('\n', stderr);
	}

	unsigned failed = 0;
	for (size_t k = 0; k < r.n_jobs; k++)
		if (r.jobs[k].err) {
			fprintf(stderr, "tracemount index: %s: indexing failed: %s\n",
				r.jobs[k].path, strerror(-r.jobs[k].err));
			failed++;
		}
	char size[32];
	double secs = now() - start;
	tm_cli_human_size(size, sizeof(size), (double)total);
	struct tm_index_counts c;
	tm_context_counts(r.ctx, &c);
	char took[96];
	if (r.shard_n)
		snprintf(took, sizeof(took), "shard %u/%u: %zu of %zu traces found", r.shard_k,
			 r.shard_n, r.n_jobs, r.found);
	else
		snprintf(took, sizeof(took), "%zu traces", r.n_jobs);
	fprintf(stderr,
		"tracemount index: %s, %s in %.1f s: %" PRIu64 " indexed, %" PRIu64
		" up to date, %" PRIu64 " out of date, %u failed%s%s; index files in %s\n",
		took, size, secs, c.built + c.completed, c.loaded - c.completed, c.stale, failed,
		r.walk_errors ? ", some paths unreadable" : "",
		r.not_traces ? ", some paths not traces" : "", cache);
	/* an index that stays in this process's memory is of no use to anyone */
	if (c.unstored)
		fprintf(stderr,
			"tracemount index: %" PRIu64 " index files could not be written in %s\n",
			c.unstored, cache);
	status = failed || c.unstored || r.walk_errors || r.not_traces ? 1 : 0;
out:
	for (size_t k = 0; k < r.n_jobs; k++)
		free(r.jobs[k].path);
	free(r.jobs);
	tm_context_free(r.ctx);
	return status;
}

/* --list and --prune: what each index file is worth. */
enum state { ST_OK, ST_STALE, ST_GONE, ST_CHANGED, ST_REFUSED, ST_UNKNOWN, ST_UNREADABLE };

struct entry {
	struct tm_index_file_info info;
	enum state state;
	char problem[256]; /* info.problem's text, "" for none */
	char text[300];	   /* the state as shown */
};

struct listing {
	struct entry *entries;
	size_t n, cap;
};

static int gather(void *arg, const struct tm_index_file_info *info)
{
	struct listing *l = arg;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct entry *grown = realloc(l->entries, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		l->entries = grown;
		l->cap = cap;
	}
	struct entry *e = &l->entries[l->n++];
	e->info = *info;
	/* info->problem need not outlive the call */
	snprintf(e->problem, sizeof(e->problem), "%s", info->problem ? info->problem : "");
	e->info.problem = NULL;
	return 0;
}

static bool same_key(const struct tm_trace_key *a, const struct tm_trace_key *b)
{
	return a->size == b->size && a->mtime_sec == b->mtime_sec &&
	       a->mtime_nsec == b->mtime_nsec && a->hash == b->hash;
}

/* Sets e's state from its problem and its trace as it is now. */
static void judge(struct entry *e)
{
	const char *problem = e->problem;
	bool stale = strncmp(problem, "out of date", strlen("out of date")) == 0;
	struct tm_source src;
	struct tm_trace_key key;
	int err;

	if (problem[0] && !stale) {
		e->state = ST_REFUSED;
		snprintf(e->text, sizeof(e->text), "refused: %s", problem);
		return;
	}
	if (!e->info.trace[0]) {
		e->state = ST_UNKNOWN;
		snprintf(e->text, sizeof(e->text), "%strace unknown",
			 stale ? "out of date (other build), " : "");
		return;
	}
	if ((err = tm_source_open(AT_FDCWD, e->info.trace, &src)) == 0) {
		err = tm_trace_key_of(&src, &key);
		tm_source_close(&src);
	}
	/* gone: nothing there, or no longer a file (-EINVAL) */
	if (err == -ENOENT || err == -ENOTDIR || err == -EINVAL)
		e->state = ST_GONE;
	else if (err)
		e->state = ST_UNREADABLE;
	else if (!same_key(&key, &e->info.key))
		e->state = ST_CHANGED;
	else
		e->state = stale ? ST_STALE : ST_OK;
	const char *texts[] = {
	    [ST_OK] = "ok",
	    [ST_STALE] = "out of date (other build)",
	    [ST_GONE] = "trace gone",
	    [ST_CHANGED] = "trace changed",
	};
	if (e->state == ST_UNREADABLE)
		snprintf(e->text, sizeof(e->text), "trace unreadable: %s", strerror(-err));
	else
		snprintf(e->text, sizeof(e->text), "%s", texts[e->state]);
}

/* Whether --prune deletes it: refused, or its trace gone or changed, or out of date with no
 * trace to tell (a mount would rewrite it if the trace were there). A fresh file whose trace
 * cannot be read is kept: it may be read again. */
static bool doomed(const struct entry *e)
{
	return e->state == ST_REFUSED || e->state == ST_GONE || e->state == ST_CHANGED ||
	       (e->state == ST_UNKNOWN && e->problem[0]);
}

static void human_age(char *buf, size_t len, const struct timespec *written)
{
	struct timespec now_ts;
	clock_gettime(CLOCK_REALTIME, &now_ts);
	long long s = (long long)(now_ts.tv_sec - written->tv_sec);
	if (s < 0)
		s = 0; /* written by a clock ahead of ours */
	if (s < 60)
		snprintf(buf, len, "%lld s", s);
	else if (s < 3600)
		snprintf(buf, len, "%lld min", s / 60);
	else if (s < 86400)
		snprintf(buf, len, "%lld h", s / 3600);
	else
		snprintf(buf, len, "%lld d", s / 86400);
}

struct widths {
	int name, format, state;
};

/* One line: name, size, age, format, state, trace (escaped as ls -b does: one line each). */
static int print_row(const char *lead, const char *name, uint64_t bytes,
		     const struct timespec *written, const char *format, const char *state,
		     const char *path, const struct widths *w)
{
	char size[32], age[32];
	char *trace = tm_escape_name(path);
	if (!trace)
		return -ENOMEM;
	tm_cli_human_size(size, sizeof(size), (double)bytes);
	human_age(age, sizeof(age), written);
	printf("%s%-*s  %8s  %6s  %-*s  %-*s  %s\n", lead, w->name, name, size, age, w->format,
	       format, w->state, state, trace);
	free(trace);
	return 0;
}

static int print_entry(const char *lead, const struct entry *e, const struct widths *w)
{
	return print_row(lead, e->info.name, e->info.size, &e->info.written,
			 e->info.format[0] ? e->info.format : "?", e->text,
			 e->info.trace[0] ? e->info.trace : "?", w);
}

/* The temporary files of writers, running or gone: listed, or pruned when gone. */
struct temps {
	const struct tm_index_store *store;
	const struct widths *w;
	bool prune;
	unsigned n, gone, removed;
	uint64_t freed;
	int err;
};

static int one_temporary(void *arg, const struct tm_index_temporary *t)
{
	struct temps *ts = arg;
	const char *state = t->writer_gone ? "temporary: writer gone" : "temporary: writing";
	ts->n++;
	ts->gone += t->writer_gone;
	if (ts->prune) {
		if (!t->writer_gone)
			return 0;
		int err = tm_index_store_remove_temporary(ts->store, t->name);
		if (err == -EBUSY || err == -ENOENT) /* a writer again, or another prune */
			return 0;
		if (err < 0) {
			fprintf(stderr, "tracemount index: %s: cannot remove: %s\n", t->name,
				strerror(-err));
			ts->err = err;
			return 0;
		}
		ts->removed++;
		ts->freed += t->size;
	}
	if (print_row(ts->prune ? "removed " : "", t->name, t->size, &t->written, "-", state, "-",
		      ts->w) < 0)
		return -ENOMEM;
	return 0;
}

/* The cache folder's index files, judged, with the widths of their columns. */
static int load_listing(struct tm_index_store *store, struct listing *l, struct widths *w,
			unsigned *counts, uint64_t *bytes)
{
	int err = tm_index_store_list(store, gather, l);
	if (err < 0)
		return err;
	for (size_t i = 0; i < l->n; i++) {
		struct entry *e = &l->entries[i];
		judge(e);
		int nl = (int)strlen(e->info.name), fl = (int)strlen(e->info.format),
		    sl = (int)strlen(e->text);
		w->name = nl > w->name ? nl : w->name;
		w->format = fl > w->format ? fl : w->format;
		w->state = sl > w->state ? sl : w->state;
		counts[e->state]++;
		*bytes += e->info.size;
	}
	return 0;
}

static int print_listing(const struct listing *l, const struct widths *w)
{
	printf("%-*s  %8s  %6s  %-*s  %-*s  %s\n", w->name, "name", "size", "age", w->format,
	       "format", w->state, "state", "trace");
	for (size_t i = 0; i < l->n; i++)
		if (print_entry("", &l->entries[i], w) < 0)
			return -ENOMEM;
	return 0;
}

static void say_listing(const struct listing *l, const unsigned *counts, uint64_t bytes,
			const struct temps *ts, const char *dir)
{
	char size[32];
	tm_cli_human_size(size, sizeof(size), (double)bytes);
	fflush(stdout);
	fprintf(stderr,
		"tracemount index: %zu index files, %s in %s: %u ok, %u out of date, %u "
		"trace gone, %u trace changed, %u refused",
		l->n, size, dir, counts[ST_OK], counts[ST_STALE], counts[ST_GONE],
		counts[ST_CHANGED], counts[ST_REFUSED]);
	if (counts[ST_UNKNOWN] + counts[ST_UNREADABLE])
		fprintf(stderr, ", %u trace unknown or unreadable",
			counts[ST_UNKNOWN] + counts[ST_UNREADABLE]);
	if (ts->n)
		fprintf(stderr, "; %u temporary files, %u of writers gone", ts->n, ts->gone);
	fputc('\n', stderr);
}

/* Removes the doomed index files; returns how many and their bytes. */
static int prune_listing(struct tm_index_store *store, const struct listing *l,
			 const struct widths *w, const char *dir, unsigned *removed,
			 uint64_t *freed)
{
	int status = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct entry *e = &l->entries[i];
		if (!doomed(e))
			continue;
		int err = tm_index_store_remove(store, e->info.name);
		if (err < 0 && err != -ENOENT) { /* gone already: another prune */
			fprintf(stderr, "tracemount index: %s/%s: cannot remove: %s\n", dir,
				e->info.name, strerror(-err));
			status = 1;
			continue;
		}
		if (print_entry("removed ", e, w) < 0) {
			fprintf(stderr, "tracemount index: out of memory\n");
			status = 1;
		}
		(*removed)++;
		*freed += e->info.size;
	}
	return status;
}

static int list_or_prune(const struct opts *o)
{
	char buf[PATH_MAX], err_msg[PATH_MAX + 256], size[32];
	const char *dir;
	struct tm_index_store store;
	struct listing l = {0};
	struct widths w = {4, 6, 22}; /* the header's, and "temporary: writer gone" */
	struct temps ts = {.store = &store, .w = &w, .prune = o->prune};
	unsigned counts[ST_UNREADABLE + 1] = {0}, removed = 0;
	uint64_t bytes = 0, freed = 0;
	struct stat st;
	int status = cache_dir(o, buf, sizeof(buf), &dir), err;
	if (status)
		return status;
	/* a folder not there holds no index file: nothing to make */
	bool exists = stat(dir, &st) == 0;
	if (!exists && errno != ENOENT) {
		fprintf(stderr, "tracemount index: cache folder %s: %s\n", dir, strerror(errno));
		return 1;
	}
	memset(&store, 0, sizeof(store)); /* closed as never opened */
	store.dirfd = -1;
	if (exists && tm_index_store_open(&store, dir, false, err_msg, sizeof(err_msg)) < 0) {
		fprintf(stderr, "tracemount index: %s\n", err_msg);
		return 1;
	}
	if (exists && (err = load_listing(&store, &l, &w, counts, &bytes)) < 0) {
		fprintf(stderr, "tracemount index: cache folder %s: %s\n", dir, strerror(-err));
		status = 1;
		goto out;
	}
	if (o->list && (err = print_listing(&l, &w)) == 0 && store.dir)
		err = tm_index_store_temporaries(&store, one_temporary, &ts);
	if (o->list) {
		if (err == -ENOMEM)
			fprintf(stderr, "tracemount index: out of memory\n");
		status = err < 0;
		say_listing(&l, counts, bytes, &ts, dir);
		goto out;
	}
	status = prune_listing(&store, &l, &w, dir, &removed, &freed);
	if (store.dir && tm_index_store_temporaries(&store, one_temporary, &ts) < 0)
		status = 1;
	status |= ts.err < 0;
	tm_cli_human_size(size, sizeof(size), (double)(freed + ts.freed));
	fflush(stdout);
	fprintf(stderr, "tracemount index: pruned %u of %zu index files", removed, l.n);
	if (ts.gone)
		fprintf(stderr, " and %u of %u temporary files", ts.removed, ts.n);
	fprintf(stderr, " (%s freed)\n", size);
out:
	tm_index_store_close(&store);
	free(l.entries);
	if (fflush(stdout) != 0 && !status) {
		fprintf(stderr, "tracemount index: standard output: %s\n", strerror(errno));
		status = 1;
	}
	return status;
}

int tm_cmd_index(int argc, char **argv)
{
	struct opts o = {.jobs = 1};
	int status = parse(argc, argv, &o);
	if (!status)
		status = o.list || o.prune ? list_or_prune(&o)
					   : run_index(&o, argv + optind, argc - optind);
	free(o.formats);
	free(o.images);
	return status < 0 ? 0 : status;
}
