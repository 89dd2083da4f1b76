/* Concurrent readers of a mounted tree, every byte checked against a copy made another way.
 *
 *   stress LIST MOUNT EXPECT THREADS SECONDS SEED
 *
 * LIST holds one relative path a line. THREADS threads read for SECONDS: each picks a path,
 * an offset (anywhere, near the end, or past it) and a length (a byte, a few KiB, up to
 * 1 MiB), preads MOUNT/path there and compares the bytes with EXPECT/path, which is mapped
 * once and shared. A thread keeps its files open and reopens one now and then, so opens and
 * releases run alongside reads; half the opens are O_DIRECT, bypassing the page cache. Prints one
 * line of totals; exits 1 on any difference, short read or error, naming the first few. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "xorshift.h"

#define MAX_READ    (1u << 20)
#define MAX_REPORTS 10

struct expected {
	char *path;
	const unsigned char *bytes;
	size_t size;
};

struct shared {
	const char *mount;
	struct expected *files;
	size_t nfiles;
	struct timespec deadline;
	uint64_t seed;
	atomic_ullong reads, bytes, opens;
	atomic_uint failures;
};

struct worker {
	struct shared *sh;
	pthread_t thread;
	unsigned id;
};

static int past(const struct timespec *deadline)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline->tv_sec ||
	       (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

static void report(struct shared *sh, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void report(struct shared *sh, const char *fmt, ...)
{
	if (atomic_fetch_add(&sh->failures, 1) >= MAX_REPORTS)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("stress: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Half the opens are O_DIRECT, so that their reads reach the daemon past the page cache. */
static int open_mounted(struct shared *sh, size_t i, int direct)
{
	char *path;
	if (asprintf(&path, "%s/%s", sh->mount, sh->files[i].path) < 0) {
		report(sh, "out of memory");
		return -1;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
	free(path);
	if (fd < 0) {
		report(sh, "%s: open: %s", sh->files[i].path, strerror(errno));
		return -1;
	}
	atomic_fetch_add(&sh->opens, 1);
	struct stat st;
	if (fstat(fd, &st) == 0 && (uint64_t)st.st_size != sh->files[i].size)
		report(sh, "%s: size %lld, expected %zu", sh->files[i].path, (long long)st.st_size,
		       sh->files[i].size);
	return fd;
}

/* An offset and length for a read of a file of SIZE bytes: mostly inside, some at its end,
 * a few past it (which must read nothing). */
static void pick_range(uint64_t *rs, size_t size, uint64_t *off, size_t *len)
{
	uint64_t r = rng_next(rs);
	switch (r % 16) {
	case 0: *len = 1; break;
	case 1:
	case 2:
	case 3: *len = 1 + (size_t)(rng_next(rs) % MAX_READ); break;
	default: *len = 1 + (size_t)(rng_next(rs) % 16384); break;
	}
	if (r % 32 == 5)
		*off = size + rng_next(rs) % 4096;
	else if (r % 8 == 6)
		*off = size > *len ? size - *len : 0;
	else
		*off = size ? rng_next(rs) % size : 0;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	uint64_t rs = (sh->seed + w->id + 1) * 0x9e3779b97f4a7c15ull;
	if (!rs)
		rs = 1;
	int *fds = malloc(sh->nfiles * sizeof(*fds));
	unsigned char *buf = malloc(MAX_READ);
	if (!fds || !buf) {
		report(sh, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < sh->nfiles; i++)
		fds[i] = -1;
	while (!past(&sh->deadline)) {
		size_t i = (size_t)(rng_next(&rs) % sh->nfiles);
		const struct expected *e = &sh->files[i];
		if (fds[i] >= 0 && rng_next(&rs) % 64 == 0) {
			close(fds[i]);
			fds[i] = -1;
		}
		if (fds[i] < 0 && (fds[i] = open_mounted(sh, i, (int)(rng_next(&rs) & 1))) < 0)
			break;
		uint64_t off;
		size_t len;
		pick_range(&rs, e->size, &off, &len);
		ssize_t got = pread(fds[i], buf, len, (off_t)off);
		size_t want = off >= e->size ? 0 : (e->size - off < len ? e->size - off : len);
		atomic_fetch_add(&sh->reads, 1);
		if (got < 0) {
			report(sh, "%s: pread %zu at %llu: %s", e->path, len,
			       (unsigned long long)off, strerror(errno));
			break;
		}
		/* A FUSE read returns all it was asked for up to the end of the file. */
		if ((size_t)got != want) {
			report(sh, "%s: pread %zu at %llu gave %zd bytes, expected %zu", e->path,
			       len, (unsigned long long)off, got, want);
			break;
		}
		if (want && memcmp(buf, e->bytes + off, want) != 0) {
			size_t k = 0;
			while (buf[k] == e->bytes[off + k])
				k++;
			report(sh, "%s: byte %llu differs", e->path, (unsigned long long)(off + k));
			break;
		}
		atomic_fetch_add(&sh->bytes, want);
	}
	for (size_t i = 0; fds && i < sh->nfiles; i++)
		if (fds[i] >= 0)
			close(fds[i]);
out:
	free(fds);
	free(buf);
	return NULL;
}

static int load_expected(const char *dir, const char *rel, struct expected *e)
{
	char *path;
	if (asprintf(&path, "%s/%s", dir, rel) < 0)
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "stress: %s: %s\n", path, strerror(errno));
		free(path);
		return -1;
	}
	e->size = (size_t)st.st_size;
	e->bytes = (const unsigned char *)"";
	if (e->size) {
		void *p = mmap(NULL, e->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			fprintf(stderr, "stress: %s: mmap: %s\n", path, strerror(errno));
			close(fd);
			free(path);
			return -1;
		}
		e->bytes = p;
	}
	close(fd);
	free(path);
	e->path = strdup(rel);
	return e->path ? 0 : -1;
}

static int load_list(const char *list, const char *dir, struct shared *sh)
{
	FILE *f = fopen(list, "r");
	if (!f) {
		fprintf(stderr, "stress: %s: %s\n", list, strerror(errno));
		return -1;
	}
	char line[4096];
	size_t cap = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0])
			continue;
		if (sh->nfiles == cap) {
			cap = cap ? 2 * cap : 64;
			struct expected *grown = realloc(sh->files, cap * sizeof(*grown));
			if (!grown)
				break;
			sh->files = grown;
		}
		if (load_expected(dir, line, &sh->files[sh->nfiles]) < 0)
			break;
		sh->nfiles++;
	}
	int bad = !feof(f) || sh->nfiles == 0;
	fclose(f);
	if (sh->nfiles == 0)
		fprintf(stderr, "stress: %s: no paths\n", list);
	return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: stress LIST MOUNT EXPECT THREADS SECONDS SEED\n");
		return 2;
	}
	struct shared sh = {.mount = argv[2], .seed = strtoull(argv[6], NULL, 10)};
	unsigned threads = (unsigned)strtoul(argv[4], NULL, 10);
	long seconds = strtol(argv[5], NULL, 10);
	if (threads < 1 || threads > 1024 || seconds < 1 || load_list(argv[1], argv[3], &sh) < 0)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &sh.deadline);
	sh.deadline.tv_sec += seconds;
	struct worker *w = calloc(threads, sizeof(*w));
	if (!w)
		return 2;
	unsigned started = 0;
	for (; started < threads; started++) {
		w[started] = (struct worker){.sh = &sh, .id = started};
		if (pthread_create(&w[started].thread, NULL, work, &w[started]) != 0) {
			report(&sh, "pthread_create failed");
			break;
		}
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(w[i].thread, NULL);
	printf("stress: %u readers, %zu files, %llu reads, %llu bytes compared, %llu opens, "
	       "%u failures\n",
	       started, sh.nfiles, (unsigned long long)sh.reads, (unsigned long long)sh.bytes,
	       (unsigned long long)sh.opens, (unsigned)sh.failures);
	free(w);
	for (size_t i = 0; i < sh.nfiles; i++) {
		if (sh.files[i].size)
			munmap((void *)sh.files[i].bytes, sh.files[i].size);
		free(sh.files[i].path);
	}
	free(sh.files);
	return sh.failures ? 1 : 0;
}
