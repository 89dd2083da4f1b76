/* `tracemount cat TRACE VIEW` and `tracemount ls TRACE`: the core without a mount. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "tracemount/context.h"
#include "tracemount/reader.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "tracemount/sum.h"
#include "tracemount/trace.h"

/* A trace opened from the command line. */
struct cli_trace {
	struct tm_context *ctx;
	struct tm_trace *trace;
	struct tm_source src;
	const char *path;
};

/* Parses [-F NAME | --format=NAME] and the expected operands; returns 0 or 2. */
static int parse_args(int argc, char **argv, int n_operands, const char **format, const char *usage)
{
	static const struct option longopts[] = {
	    {"format", required_argument, NULL, 'F'},
	    {NULL, 0, NULL, 0},
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+F:", longopts, NULL)) != -1) {
		if (c != 'F') {
			fprintf(stderr, "tracemount: usage: %s\n", usage);
			return 2;
		}
		*format = optarg;
	}
	if (argc - optind != n_operands) {
		fprintf(stderr, "tracemount: usage: %s\n", usage);
		return 2;
	}
	return 0;
}

/* A path that names no file may name a sum of spixcounts files (sum.h). */
static int open_sum(struct cli_trace *ct, const char *path)
{
	struct tm_sum *s;
	int err = tm_sum_find(ct->ctx, AT_FDCWD, path, &s);
	if (err)
		return err;
	err = tm_sum_source_open(AT_FDCWD, s, &ct->src);
	tm_sums_free(s, 1);
	return err;
}

static int open_trace(struct cli_trace *ct, const char *path, const char *format)
{
	const struct tm_format *fmt = NULL;
	int err;

	while (path[0] == '.' && path[1] == '/')
		path += 2;
	ct->path = path;
	if (format && !(fmt = tm_format_find(format))) {
		fprintf(stderr, "tracemount: unknown format '%s' (see tracemount --help)\n",
			format);
		return 2;
	}
	if (tm_context_new(TM_DEFAULT_MEMORY, &ct->ctx) < 0) {
		fprintf(stderr, "tracemount: out of memory\n");
		return 1;
	}
	/* A path given by the user may go through symbolic links: open what it resolves to,
	 * but keep the name as given for detection, the view names and stats.json. */
	char *resolved = realpath(path, NULL);
	err = resolved ? tm_source_open(AT_FDCWD, resolved, &ct->src) : -errno;
	free(resolved);
	if (err == -ENOENT)
		err = open_sum(ct, path);
	if (err < 0) {
		fprintf(stderr, "tracemount: %s: %s\n", path,
			err == -EINVAL ? "not a regular file" : strerror(-err));
		return 1;
	}
	uint8_t head[TM_PROBE_HEAD_LEN];
	ssize_t head_len = tm_source_read(&ct->src, head, sizeof(head), 0);
	if (!fmt && head_len >= 0)
		fmt = tm_context_detect_head(ct->ctx, path, head, (size_t)head_len);
	if (!fmt) {
		fprintf(stderr,
			"tracemount: %s: not a recognised trace (name a format with "
			"--format)\n",
			path);
		return 1;
	}
	if ((err = tm_context_trace(ct->ctx, path, fmt, &ct->trace)) < 0) {
		fprintf(stderr, "tracemount: %s: %s\n", path, strerror(-err));
		return 1;
	}
	return 0;
}

static void close_trace(struct cli_trace *ct)
{
	if (ct->trace)
		tm_context_trace_put(ct->ctx, ct->trace);
	tm_source_close(&ct->src);
	tm_context_free(ct->ctx);
}

static int copy_view(struct cli_trace *ct, unsigned view, const char *name)
{
	struct tm_reader r;
	static char buf[1 << 20];
	int err = tm_reader_open(&r, ct->ctx, ct->trace, &ct->src, view);
	if (err) {
		fprintf(stderr, "tracemount: %s: indexing failed: %s\n", ct->path, strerror(-err));
		return 1;
	}
	uint64_t off = 0, size = tm_reader_size(&r);
	int status = 0;
	while (off < size) {
		ssize_t n = tm_reader_read(&r, buf, sizeof(buf), off);
		if (n <= 0) {
			fprintf(stderr, "tracemount: %s: %s: read at offset %" PRIu64 ": %s\n",
				ct->path, name, off, n ? strerror((int)-n) : "unexpected end");
			status = 1;
			break;
		}
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n) {
			fprintf(stderr, "tracemount: standard output: %s\n", strerror(errno));
			status = 1;
			break;
		}
		off += (uint64_t)n;
	}
	tm_reader_close(&r);
	if (fflush(stdout) != 0 && !status) {
		fprintf(stderr, "tracemount: standard output: %s\n", strerror(errno));
		status = 1;
	}
	return status;
}

int tm_cmd_cat(int argc, char **argv)
{
	const char *format = NULL;
	struct cli_trace ct = {0};
	int status =
	    parse_args(argc, argv, 2, &format, "tracemount cat [--format NAME] TRACE VIEW");
	if (status)
		return status;
	const char *view_name = argv[optind + 1];
	if ((status = open_trace(&ct, argv[optind], format)) == 0) {
		int v = tm_view_table_find(&ct.trace->views, view_name);
		if (v >= 0 && (status = tm_view_exists(ct.trace, &ct.src, (unsigned)v)) < 0) {
			fprintf(stderr, "tracemount: %s: indexing failed: %s\n", ct.path,
				strerror(-status));
			status = 1;
		} else if (v < 0 || !status) {
			fprintf(stderr, "tracemount: %s: no view '%s' (see tracemount ls %s)\n",
				ct.path, view_name, ct.path);
			status = 1;
		} else {
			status = copy_view(&ct, (unsigned)v, view_name);
		}
	}
	close_trace(&ct);
	return status;
}

int tm_cmd_ls(int argc, char **argv)
{
	const char *format = NULL;
	struct cli_trace ct = {0};
	int status = parse_args(argc, argv, 1, &format, "tracemount ls [--format NAME] TRACE");
	if (status)
		return status;
	if ((status = open_trace(&ct, argv[optind], format)) != 0)
		goto out;
	const struct tm_view_table *vt = &ct.trace->views;
	uint64_t *sizes = calloc(vt->n_views, sizeof(*sizes)), max = 0;
	status = 1;
	if (!sizes)
		goto out;
	for (unsigned v = 0; v < vt->n_views; v++) {
		int err = tm_view_size(ct.trace, &ct.src, v, &sizes[v]);
		if (err) {
			fprintf(stderr, "tracemount: %s: indexing failed: %s\n", ct.path,
				strerror(-err));
			goto out_sizes;
		}
		if (sizes[v] > max)
			max = sizes[v];
	}
	int width = snprintf(NULL, 0, "%" PRIu64, max);
	for (unsigned v = 0; v < vt->n_views; v++)
		if (vt->views[v].group < 0 || sizes[v]) /* a group's view needs records */
			printf("%*" PRIu64 " %s\n", width, sizes[v], vt->views[v].path);
	status = fflush(stdout) == 0 ? 0 : 1;
out_sizes:
	free(sizes);
out:
	close_trace(&ct);
	return status;
}
