/* The command line of the tests' one BYU 12-byte model (tests/unit/byu12_ref.c, which the unit
 * test links); the rules are all there, this file only reads and writes:
 *
 *   byu12_model DIR NAME < TRACE
 *       writes into DIR every view the mount shows of TRACE when it is named NAME (raw,
 *       dump.txt, errors.txt, stats.json, class/CLASS.txt and .byu12, convert/STEM.din,
 *       cpu/N.txt) and DIR/views.list, their paths.
 *
 *   byu12_model -p NAME < HEAD
 *       exits 0 when detection's rule takes a file named NAME with that head as byu12, else 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "byu12_ref.h"

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
		perror("byu12_model: standard input");
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

static int expect(const char *dir, const char *name)
{
	size_t len, n;
	uint8_t *data = read_all(stdin, &len);
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	char **paths = byu12_ref_view_paths(base, data, len, &n);
	FILE *list = create(dir, "views.list");

	for (size_t i = 0; i < n; i++) {
		FILE *f = create(dir, paths[i]);
		if (strcmp(paths[i], "stats.json") == 0) {
			struct byu12_ref_stats s;
			byu12_ref_stats(base, data, len, &s);
			byu12_ref_stats_json(&s, base, f);
		} else {
			size_t view_len;
			char *view = byu12_ref_view(paths[i], base, data, len, &view_len);
			fwrite(view, 1, view_len, f);
			free(view);
		}
		done(f, paths[i]);
		fprintf(list, "%s\n", paths[i]);
		free(paths[i]);
	}
	done(list, "views.list");
	free(paths);
	free(data);
	return 0;
}

int main(int argc, char *argv[])
{
	if (argc == 3 && strcmp(argv[1], "-p") == 0) {
		size_t len;
		uint8_t *data = read_all(stdin, &len);
		int yes = byu12_ref_plausible(argv[2], data, len < 4096 ? len : 4096);
		free(data);
		return yes ? 0 : 1;
	}
	if (argc == 3)
		return expect(argv[1], argv[2]);
	fprintf(stderr, "usage: byu12_model DIR NAME < TRACE | byu12_model -p NAME < HEAD\n");
	return 2;
}
