/* The command line of the tests' one BYU model (tests/unit/byu_ref.c, which the unit tests
 * link); the rules are all there, this file only reads and writes:
 *
 *   byu_model DIR NAME [CHUNK] < TRACE
 *       writes into DIR every view the mount shows of TRACE when it is named NAME (raw,
 *       dump.txt, errors.txt, stats.json, class/CLASS.txt and .byu, convert/STEM.din) and
 *       DIR/views.list, their paths; with CHUNK, DIR/bounds: per record view a line
 *       "VIEW OFF..." of its byte offsets after every CHUNK records.
 *
 * Its dump lines are the spec's reference decoder's (byu_refdec), which the tests check. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "byu_ref.h"

static uint8_t *read_all(FILE *in, size_t *len)
{
	size_t cap = 1 << 16, n = 0, got;
	uint8_t *b = malloc(cap);
	while (b && (got = fread(b + n, 1, cap - n, in)) > 0) {
		n += got;
		if (n == cap)
			b = realloc(b, cap *= 2);
	}
	if (!b || ferror(in)) {
		perror("byu_model: standard input");
		exit(1);
	}
	*len = n;
	return b;
}

static FILE *create(const char *dir, const char *rel)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (char *slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			perror(path);
			exit(1);
		}
		*slash = '/';
	}
	FILE *f = fopen(path, "wb");
	if (!f) {
		perror(path);
		exit(1);
	}
	return f;
}

static void done(FILE *f, const char *rel)
{
	if (ferror(f) | fclose(f)) {
		perror(rel);
		exit(1);
	}
}

/* "VIEW OFF..." for a record view: where record k * chunk starts, for k from 1. */
static void write_bounds(FILE *f, const char *path, const uint8_t *data, size_t len, size_t chunk)
{
	struct byu_ref_view v;
	uint64_t off = 0;
	if (byu_ref_view_parse(path, &v) < 0)
		abort();
	fputs(path, f);
	for (size_t i = 0; i < len / BYU_REF_LEN; i++) {
		off += byu_ref_view_render(&v, data + i * BYU_REF_LEN, NULL);
		if ((i + 1) % chunk == 0)
			fprintf(f, " %llu", (unsigned long long)off);
	}
	fputc('\n', f);
}

static int expect(const char *dir, const char *name, size_t chunk)
{
	size_t len, n;
	uint8_t *data = read_all(stdin, &len);
	char **paths = byu_ref_view_paths(name, &n);
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	FILE *list = create(dir, "views.list");
	FILE *bounds = chunk ? create(dir, "bounds") : NULL;

	for (size_t i = 0; i < n; i++) {
		FILE *f = create(dir, paths[i]);
		struct byu_ref_view v;
		if (strcmp(paths[i], "stats.json") == 0) {
			struct byu_ref_stats s;
			byu_ref_stats(data, len, &s);
			byu_ref_stats_json(&s, base, f);
		} else {
			size_t view_len;
			char *view = byu_ref_view(paths[i], data, len, &view_len);
			fwrite(view, 1, view_len, f);
			free(view);
		}
		done(f, paths[i]);
		fprintf(list, "%s\n", paths[i]);
		if (bounds && byu_ref_view_parse(paths[i], &v) == 0)
			write_bounds(bounds, paths[i], data, len, chunk);
		free(paths[i]);
	}
	done(list, "views.list");
	if (bounds)
		done(bounds, "bounds");
	free(paths);
	free(data);
	return 0;
}

int main(int argc, char *argv[])
{
	if (argc == 3 || argc == 4)
		return expect(argv[1], argv[2], argc == 4 ? strtoul(argv[3], NULL, 10) : 0);
	fprintf(stderr, "usage: byu_model DIR NAME [CHUNK] < TRACE\n");
	return 2;
}
