/* What spix/ adds to an index pass: builds the index of a trace in process, alternately with
 * its format as it is and with a copy of the format without the instruction operation (so no
 * spix/ tables), and prints the best time of each and their ratio.
 *
 *   spix_cost FORMAT TRACE [ROUNDS]     (a plain trace; FORMAT as in -o format=) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tracemount/index.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "tracemount/view.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Seconds one index pass takes, or a negative errno. */
static double one_pass(const struct tm_format *fmt, const char *path)
{
	struct tm_view_table views;
	struct tm_source src;
	struct tm_index *ix;
	int err = tm_source_open(AT_FDCWD, path, &src);
	if (err)
		return err;
	if ((err = tm_view_table_init(&views, fmt, path)) < 0) {
		tm_source_close(&src);
		return err;
	}
	double t0 = now();
	err = tm_index_build(fmt, &views, &src, path, NULL, NULL, &ix);
	double t = now() - t0;
	if (!err)
		tm_index_free(ix);
	tm_view_table_free(&views);
	tm_source_close(&src);
	return err ? err : t;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: spix_cost FORMAT TRACE [ROUNDS]\n");
		return 2;
	}
	const struct tm_format *fmt = tm_format_find(argv[1]);
	int rounds = argc > 3 ? atoi(argv[3]) : 3;
	if (!fmt || !fmt->instruction) {
		fprintf(stderr, "spix_cost: %s is not an instruction format\n", argv[1]);
		return 2;
	}
	struct tm_format without = *fmt;
	without.instruction = NULL;
	double best[2] = {1e30, 1e30};
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < 2; k++) {
			double t = one_pass(k ? fmt : &without, argv[2]);
			if (t < 0) {
				fprintf(stderr, "spix_cost: %s: %s\n", argv[2], strerror((int)-t));
				return 1;
			}
			best[k] = t < best[k] ? t : best[k];
		}
	}
	printf("index pass without spix/ %.3f s, with spix/ %.3f s: %.2fx\n", best[0], best[1],
	       best[1] / best[0]);
	return 0;
}
