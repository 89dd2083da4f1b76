/* Latency of 4 KiB reads at random offsets of one file, for scripts/bench.
 *
 *   randread FILE COUNT SEED
 *
 * Opens FILE once, then does COUNT preads of 4096 bytes at offsets drawn uniformly from
 * [0, size - 4096] (any byte offset, not page-aligned, as a tool seeking to a record would),
 * timing each with CLOCK_MONOTONIC. Prints one line: p50 p90 p99 max, in microseconds.
 * The offsets depend only on SEED and the file's size. No O_DIRECT and no fadvise: the reads
 * meet the kernel's readahead and page cache as an ordinary program's would, so run it on a
 * cold cache (a fresh mount) to measure the filesystem rather than memory. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define READ_SIZE 4096

#include "xorshift.h"

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted v[0..n). */
static double percentile(const double *v, size_t n, double p)
{
	size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-')
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t count, seed;
	if (argc != 4 || parse_u64(argv[2], &count) < 0 || parse_u64(argv[3], &seed) < 0 ||
	    count == 0 || count > 100000000) {
		fprintf(stderr, "usage: randread FILE COUNT SEED\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "randread: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		fprintf(stderr, "randread: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	uint64_t size = (uint64_t)st.st_size;
	if (size < READ_SIZE) {
		fprintf(stderr, "randread: %s: %llu bytes, smaller than one %d-byte read\n",
			argv[1], (unsigned long long)size, READ_SIZE);
		return 1;
	}
	double *lat = malloc(count * sizeof(*lat));
	if (!lat) {
		fprintf(stderr, "randread: out of memory\n");
		return 1;
	}
	rng_state = seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
	if (!rng_state)
		rng_state = 1;
	uint64_t span = size - READ_SIZE + 1;
	char buf[READ_SIZE];
	for (uint64_t i = 0; i < count; i++) {
		off_t off = (off_t)(rng() % span);
		double t0 = now_us();
		ssize_t n = pread(fd, buf, READ_SIZE, off);
		double t1 = now_us();
		if (n != READ_SIZE) {
			fprintf(stderr, "randread: %s: read of %d bytes at offset %lld: %s\n",
				argv[1], READ_SIZE, (long long)off,
				n < 0 ? strerror(errno) : "short read");
			return 1;
		}
		lat[i] = t1 - t0;
	}
	close(fd);
	qsort(lat, count, sizeof(*lat), cmp_double);
	printf("%.1f %.1f %.1f %.1f\n", percentile(lat, count, 50), percentile(lat, count, 90),
	       percentile(lat, count, 99), lat[count - 1]);
	free(lat);
	return 0;
}
