/* `tracemount index [-j N] [--cache DIR] PATH...`: builds or refreshes the index files of
 * every trace under the paths, N at a time, with a progress bar on a terminal. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "tracemount/context.h"
#include "tracemount/index_file.h"
#include "tracemount/trace.h"
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
	unsigned walk_errors;
	atomic_size_t next;	   /* the next job to take */
	atomic_size_t finished;	   /* jobs done */
	atomic_uint_fast64_t done; /* bytes of the jobs done */
	_Atomic(struct tm_trace *) active[MAX_JOBS];
};

static int collect(void *arg, const char *path, const struct tm_format *fmt, const struct stat *st,
		   int err)
{
	struct run *r = arg;
	if (!fmt) {
		fprintf(stderr, "tracemount: %s: %s\n", path, strerror(-err));
		r->walk_errors++;
		return 0;
	}
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
		j->err =
		    tm_index_one(r->ctx, AT_FDCWD, j->path, j->fmt, &j->st, &r->active[w->slot]);
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

static void human(char *buf, size_t len, double bytes)
{
	const char *units[] = {"B", "KB", "MB", "GB", "TB"};
	unsigned u = 0;
	while (bytes >= 1000 && u < 4) {
		bytes /= 1000;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

/* Bytes done: the finished jobs' and the running ones' progress. The traces stay in the
 * context's table until it is freed, so a pointer read here is valid. */
static uint64_t bytes_done(struct run *r, unsigned jobs)
{
	uint64_t done = atomic_load(&r->done);
	for (unsigned i = 0; i < jobs; i++) {
		struct tm_trace *t = atomic_load(&r->active[i]);
		if (!t)
			continue;
		pthread_mutex_lock(&t->lock);
		done += t->state == TM_TRACE_INDEXING ? t->progress_done : 0;
		pthread_mutex_unlock(&t->lock);
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
	human(a, sizeof(a), (double)done);
	human(b, sizeof(b), (double)total);
	human(c, sizeof(c), rate);
	if (rate > 0 && done < total) {
		unsigned s = (unsigned)((double)(total - done) / rate);
		snprintf(left, sizeof(left), ", %u:%02u left", s / 60, s % 60);
	}
	fprintf(stderr, "\r[%s] %3u%% %s of %s, %zu/%zu traces, %s/s%s\033[K", bar, pct, a, b,
		atomic_load(&r->finished), r->n_jobs, c, left);
	fflush(stderr);
}

static int parse(int argc, char **argv, unsigned *jobs, const char **cache)
{
	static const struct option longopts[] = {
	    {"jobs", required_argument, NULL, 'j'},
	    {"cache", required_argument, NULL, 'c'},
	    {NULL, 0, NULL, 0},
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+j:c:", longopts, NULL)) != -1) {
		char *end;
		long n;
		switch (c) {
		case 'j':
			n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > MAX_JOBS) {
				fprintf(stderr, "tracemount: index: -j takes 1 to %d\n", MAX_JOBS);
				return 2;
			}
			*jobs = (unsigned)n;
			break;
		case 'c': *cache = optarg; break;
		default: goto usage;
		}
	}
	if (optind < argc)
		return 0;
usage:
	fprintf(stderr, "tracemount: usage: tracemount index [-j N] [--cache DIR] PATH...\n");
	return 2;
}

int tm_cmd_index(int argc, char **argv)
{
	unsigned jobs = 1;
	const char *cache = NULL;
	char dir[PATH_MAX], err_msg[PATH_MAX + 256];
	struct run r = {0};
	int status = parse(argc, argv, &jobs, &cache);
	if (status)
		return status;
	if (!cache && tm_index_store_default(dir, sizeof(dir)) == 0)
		cache = dir;
	if (!cache || strcmp(cache, "none") == 0) {
		fprintf(stderr, "tracemount: index: no cache folder (give --cache DIR)\n");
		return 2;
	}
	if (tm_context_new(TM_DEFAULT_MEMORY, &r.ctx) < 0) {
		fprintf(stderr, "tracemount: out of memory\n");
		return 1;
	}
	if (tm_context_set_store(r.ctx, cache, cache == dir, err_msg, sizeof(err_msg)) < 0) {
		fprintf(stderr, "tracemount: %s\n", err_msg);
		tm_context_free(r.ctx);
		return 1;
	}
	status = 1;
	for (int i = optind; i < argc; i++)
		if (tm_walk(r.ctx, AT_FDCWD, argv[i], collect, &r) < 0) {
			fprintf(stderr, "tracemount: out of memory\n");
			goto out;
		}
	uint64_t total = 0;
	for (size_t k = 0; k < r.n_jobs; k++)
		total += (uint64_t)r.jobs[k].st.st_size;

	pthread_t threads[MAX_JOBS];
	struct worker workers[MAX_JOBS];
	unsigned started = 0;
	double start = now();
	for (; started < jobs && started < r.n_jobs; started++) {
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
			fprintf(stderr, "tracemount: %s: indexing failed: %s\n", r.jobs[k].path,
				strerror(-r.jobs[k].err));
			failed++;
		}
	char size[32];
	double secs = now() - start;
	human(size, sizeof(size), (double)total);
	pthread_mutex_lock(&r.ctx->lock);
	fprintf(stderr,
		"tracemount index: %zu traces, %s in %.1f s: %" PRIu64 " indexed, %" PRIu64
		" up to date, %" PRIu64 " out of date, %u failed%s; index files in %s\n",
		r.n_jobs, size, secs, r.ctx->n_built, r.ctx->n_loaded, r.ctx->n_stale, failed,
		r.walk_errors ? ", some paths unreadable" : "", cache);
	pthread_mutex_unlock(&r.ctx->lock);
	status = failed || r.walk_errors ? 1 : 0;
out:
	for (size_t k = 0; k < r.n_jobs; k++)
		free(r.jobs[k].path);
	free(r.jobs);
	tm_context_free(r.ctx);
	return status;
}
