/* `tracemount cat TRACE VIEW` and `tracemount ls TRACE`: the core without a mount, with the
 * mount's index files; and what the commands share (commands.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "commands.h"
#include "tracemount/compress.h"
#include "tracemount/util.h"
#include "tracemount/context.h"
#include "tracemount/fs.h"
#include "tracemount/index_file.h"
#include "tracemount/reader.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "tracemount/trace.h"
#include "tracemount/virtual.h"

void tm_cli_bad_option(const char *cmd, int c, char *const *argv)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	if (strncmp(arg, "--", 2) == 0) {
		int len = (int)strcspn(arg, "=");
		fprintf(stderr, "tracemount %s: %s '%.*s' (see tracemount %s --help)\n", cmd,
			c == ':' ? "option needs an argument:" : "unknown option", len, arg, cmd);
	} else {
		fprintf(stderr, "tracemount %s: %s '-%c' (see tracemount %s --help)\n", cmd,
			c == ':' ? "option needs an argument:" : "unknown option", optopt, cmd);
	}
}

/* --format SPEC named the format name, which is none. */
static void say_unknown_format(const char *cmd, const char *spec, const char *name)
{
	char hint[1024];
	tm_format_suggest(name, hint, sizeof(hint));
	fprintf(stderr, "tracemount %s: --format %s: no format %s (%s)\n", cmd, spec, name, hint);
}

int tm_cli_add_format(struct tm_context *ctx, const char *cmd, const char *spec)
{
	int err = tm_context_add_override(ctx, spec);
	if (err == -EINVAL)
		fprintf(stderr, "tracemount %s: --format %s: expected GLOB:NAME\n", cmd, spec);
	else if (err == -ENOENT)
		say_unknown_format(cmd, spec, strrchr(spec, ':') + 1);
	else if (err)
		fprintf(stderr, "tracemount %s: out of memory\n", cmd);
	return !err ? 0 : err == -ENOMEM ? 1 : 2;
}

int tm_cli_add_image(struct tm_context *ctx, const char *cmd, const char *spec, bool with_glob)
{
	char why[PATH_MAX + 256];
	if (tm_context_add_image(ctx, spec, with_glob, why, sizeof(why)) == 0)
		return 0;
	fprintf(stderr, "tracemount %s: --image %s: %s\n", cmd, spec, why);
	return 1;
}

int tm_cli_use_cache(struct tm_context *ctx, const char *cmd, const char *cache)
{
	char dir[PATH_MAX], err_msg[PATH_MAX + 256];
	if (cache && strcmp(cache, "none") == 0)
		return 0;
	if (cache) {
		if (tm_context_set_store(ctx, cache, false, err_msg, sizeof(err_msg)) == 0)
			return 0;
		fprintf(stderr, "tracemount %s: %s\n", cmd, err_msg);
		return 1;
	}
	/* Without a word from the user, no cache folder is no reason to refuse: a mount does
	 * the same. */
	if (tm_index_store_default(dir, sizeof(dir)) < 0) {
		fprintf(stderr,
			"tracemount %s: no cache folder (neither XDG_CACHE_HOME nor HOME is set); "
			"indexing in memory\n",
			cmd);
		return 0;
	}
	if (tm_context_set_store(ctx, dir, true, err_msg, sizeof(err_msg)) == 0)
		return 0;
	/* err_msg names the folder: "cache folder DIR: REASON" */
	const char *lead = "cache folder ";
	if (strncmp(err_msg, lead, strlen(lead)) == 0)
		fprintf(stderr, "tracemount %s: cannot use the %s; indexing in memory\n", cmd,
			err_msg);
	else
		fprintf(stderr,
			"tracemount %s: cannot use the cache folder %s: %s; indexing in memory\n",
			cmd, dir, err_msg);
	return 0;
}

static const char *log_cmd = "";

static void log_warning(int priority, const char *line)
{
	if (priority <= LOG_WARNING)
		fprintf(stderr, "tracemount %s: %s\n", log_cmd, line);
}

void tm_cli_log_warnings(struct tm_context *ctx, const char *cmd)
{
	log_cmd = cmd;
	tm_context_set_log(ctx, log_warning);
}

/* text from column 27 on, wrapped at spaces to end by column 80. */
static void print_wrapped(FILE *out, const char *text)
{
	enum { INDENT = 27, WIDTH = 80 - INDENT };
	while (strlen(text) > WIDTH) {
		int cut = WIDTH;
		while (cut > 0 && text[cut] != ' ')
			cut--;
		if (cut == 0) /* a word wider than the column: it goes over */
			cut = (int)strcspn(text, " ");
		fprintf(out, "%.*s\n%*s", cut, text, INDENT, "");
		text += cut + (text[cut] == ' ');
	}
	fprintf(out, "%s\n", text);
}

void tm_cli_print_formats(FILE *out)
{
	char text[1024];
	fprintf(out, "formats:\n");
	for (const struct tm_format *const *f = tm_formats; *f; f++) {
		snprintf(text, sizeof(text), "%s (%s)", (*f)->description, (*f)->recognition);
		fprintf(out, "    %-22s ", (*f)->name);
		print_wrapped(out, text);
	}
}

void tm_cli_human_size(char *buf, size_t len, double bytes)
{
	const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	unsigned u = 0;
	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

/* A trace opened from the command line. */
struct cli_trace {
	const char *cmd;
	struct tm_context *ctx;
	struct tm_source src;
	struct tm_open_trace ot; /* of src, once open_trace succeeded */
	const char *path;
};

static void help(const char *cmd, const char *operands, const char *what)
{
	printf("usage: tracemount %s [OPTION]... %s\n"
	       "\n"
	       "%s\n"
	       "The index is read from the trace's index file in the cache folder, or built and\n"
	       "written there, as a mount does.\n"
	       "\n"
	       "options:\n"
	       "    -c, --cache DIR|none    folder of index files (default\n"
	       "                            $XDG_CACHE_HOME/tracemount, else\n"
	       "                            ~/.cache/tracemount); none: index in memory only\n"
	       "    -F, --format NAME       read TRACE as format NAME\n"
	       "    -F, --format GLOB:NAME  read TRACE as format NAME if its name matches GLOB\n"
	       "                            (repeatable, as the mount's -o format=GLOB:NAME)\n"
	       "    -i, --image IMAGE[@OFFSET]\n"
	       "                            program image whose symbols name TRACE's\n"
	       "                            functions, its addresses moved by OFFSET (decimal\n"
	       "                            or 0x hex; repeatable); default: an image beside\n"
	       "                            TRACE, named like it\n"
	       "    -h, --help              show this help\n"
	       "\n",
	       cmd, operands, what);
	tm_cli_print_formats(stdout);
}

static const char cat_what[] =
    "Writes the view VIEW of the trace TRACE to standard output: the bytes of\n"
    "TRACE/VIEW in a mount of TRACE's folder (see tracemount ls TRACE for the views;\n"
    "VIEW report.html is the trace's page).";
static const char ls_what[] =
    "Lists the views of the trace TRACE, one per line: its size in bytes and its\n"
    "path, as a mount of TRACE's folder shows them. Of a FOLDER, lists what the root\n"
    "of a mount of FOLDER shows, one name per line, folders (traces among them)\n"
    "ending in /.";

/* Parses the options and the n_operands operands into ct (its context made, with the cache
 * folder and the overrides); *format is --format's NAME, if given. Returns 0, an exit status,
 * or -1 when the help was printed. */
static int parse_args(struct cli_trace *ct, int argc, char **argv, int n_operands,
		      const char **format, const char *operands, const char *what)
{
	static const struct option longopts[] = {
	    {"cache", required_argument, NULL, 'c'},
	    {"format", required_argument, NULL, 'F'},
	    {"image", required_argument, NULL, 'i'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *cache = NULL;
	int c, status;
	if (tm_context_new(TM_DEFAULT_MEMORY, &ct->ctx) < 0) {
		fprintf(stderr, "tracemount %s: out of memory\n", ct->cmd);
		return 1;
	}
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":c:F:i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': cache = optarg; break;
		case 'F':
			if (!strchr(optarg, ':')) {
				*format = optarg;
			} else if ((status = tm_cli_add_format(ct->ctx, ct->cmd, optarg)) != 0) {
				return status;
			}
			break;
		case 'i':
			if ((status = tm_cli_add_image(ct->ctx, ct->cmd, optarg, false)) != 0)
				return status;
			break;
		case 'h': help(ct->cmd, operands, what); return -1;
		default: tm_cli_bad_option(ct->cmd, c, argv); return 2;
		}
	}
	if (argc - optind != n_operands) {
		fprintf(stderr,
			"tracemount %s: usage: tracemount %s [OPTION]... %s (see tracemount %s "
			"--help)\n",
			ct->cmd, ct->cmd, operands, ct->cmd);
		return 2;
	}
	if (*format && !tm_format_find(*format)) {
		say_unknown_format(ct->cmd, *format, *format);
		return 2;
	}
	/* The traces' paths are relative to the current folder (ctx->root_path NULL): their
	 * index files record where they are resolved to. */
	tm_cli_log_warnings(ct->ctx, ct->cmd);
	return tm_cli_use_cache(ct->ctx, ct->cmd, cache);
}

/* A path that names no file may name a virtual trace of its folder (virtual.h). */
/* Opens the virtual trace at path into ct->src; *fmt is the format that makes it. */
static int open_virtual(struct cli_trace *ct, const char *path, const struct tm_format **fmt)
{
	struct tm_virtual *v;
	int err = tm_virtual_find(ct->ctx, AT_FDCWD, path, fmt, &v);
	if (err)
		return err;
	err = (*fmt)->virtual_open(AT_FDCWD, v, &ct->src);
	tm_virtual_free(*fmt, v, 1);
	return err;
}

static int open_trace(struct cli_trace *ct, const char *path, const char *format)
{
	const struct tm_format *fmt = format ? tm_format_find(format) : NULL;
	int err;

	while (path[0] == '.' && path[1] == '/')
		path += 2;
	ct->path = path;
	/* A path given by the user may go through symbolic links: open what it resolves to,
	 * but keep the name as given for detection, the view names and stats.json. */
	char *resolved = realpath(path, NULL);
	err = resolved ? tm_source_open(AT_FDCWD, resolved, &ct->src) : -errno;
	free(resolved);
	const struct tm_format *maker = NULL;
	if (err == -ENOENT)
		err = open_virtual(ct, path, &maker);
	if (err < 0) {
		fprintf(stderr, "tracemount %s: %s: %s\n", ct->cmd, path,
			err == -EINVAL ? "not a regular file" : strerror(-err));
		return 1;
	}
	if (!fmt) /* a virtual trace is in its maker's format: reading its head would make it */
		fmt = maker;
	if (!fmt) {
		uint8_t *head = NULL;
		ssize_t head_len = tm_probe_head(ct->src.fd, tm_base_name(path), &head);
		if (head_len >= 0)
			fmt = tm_context_detect_head(ct->ctx, path, head, (size_t)head_len);
		free(head);
	}
	if (!fmt) {
		fprintf(stderr,
			"tracemount %s: %s: not a recognised trace (name its format with --format "
			"NAME)\n",
			ct->cmd, path);
		return 1;
	}
	struct tm_trace *t;
	if ((err = tm_context_trace(ct->ctx, path, fmt, &t)) < 0) {
		fprintf(stderr, "tracemount %s: %s: %s\n", ct->cmd, path, strerror(-err));
		return 1;
	}
	tm_trace_open(&ct->ot, t, &ct->src);
	tm_trace_put(t); /* the open trace holds its own */
	return 0;
}

static void close_trace(struct cli_trace *ct)
{
	tm_trace_close(&ct->ot);
	tm_source_close(&ct->src);
	tm_context_free(ct->ctx);
}

static int copy_view(struct cli_trace *ct, unsigned view, const char *name)
{
	struct tm_reader r;
	static char buf[1 << 20];
	int err = tm_reader_open(&r, &ct->ot, view);
	if (err) {
		fprintf(stderr, "tracemount cat: %s: indexing failed: %s\n", ct->path,
			strerror(-err));
		return 1;
	}
	uint64_t off = 0, size = tm_reader_size(&r);
	int status = 0;
	while (off < size) {
		ssize_t n = tm_reader_read(&r, buf, sizeof(buf), off);
		if (n <= 0) {
			fprintf(stderr, "tracemount cat: %s: %s: read at offset %" PRIu64 ": %s\n",
				ct->path, name, off, n ? strerror((int)-n) : "unexpected end");
			status = 1;
			break;
		}
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n) {
			fprintf(stderr, "tracemount cat: standard output: %s\n", strerror(errno));
			status = 1;
			break;
		}
		off += (uint64_t)n;
	}
	tm_reader_close(&r);
	if (fflush(stdout) != 0 && !status) {
		fprintf(stderr, "tracemount cat: standard output: %s\n", strerror(errno));
		status = 1;
	}
	return status;
}

int tm_cmd_cat(int argc, char **argv)
{
	const char *format = NULL;
	struct cli_trace ct = {.cmd = "cat"};
	int status = parse_args(&ct, argc, argv, 2, &format, "TRACE VIEW", cat_what);
	if (status)
		goto out;
	const char *view_name = argv[optind + 1];
	if (strcmp(view_name, TM_TRACE_REPORT) == 0) { /* no view: the tree renders it */
		status = tm_cli_cat_report(ct.ctx, argv[optind], format);
		goto out;
	}
	if ((status = open_trace(&ct, argv[optind], format)) != 0)
		goto out;
	int v = tm_view_table_find(tm_trace_views(ct.ot.trace), view_name);
	if (v >= 0 && (status = tm_view_exists(&ct.ot, (unsigned)v)) < 0) {
		fprintf(stderr, "tracemount cat: %s: indexing failed: %s\n", ct.path,
			strerror(-status));
		status = 1;
	} else if (v < 0 || !status) {
		fprintf(stderr, "tracemount cat: %s: no view '%s' (see tracemount ls %s)\n",
			ct.path, view_name, ct.path);
		status = 1;
	} else {
		status = copy_view(&ct, (unsigned)v, view_name);
	}
out:
	close_trace(&ct);
	return status < 0 ? 0 : status;
}

int tm_cmd_ls(int argc, char **argv)
{
	const char *format = NULL;
	struct cli_trace ct = {.cmd = "ls"};
	uint64_t *sizes = NULL, max = 0;
	int status = parse_args(&ct, argc, argv, 1, &format, "TRACE|FOLDER", ls_what);
	struct stat st;
	if (!status && stat(argv[optind], &st) == 0 && S_ISDIR(st.st_mode)) {
		if (format) {
			fprintf(stderr,
				"tracemount ls: --format %s names the format of one TRACE: for a "
				"FOLDER, give --format GLOB:%s\n",
				format, format);
			status = 2;
		} else {
			status = tm_cli_ls_folder(ct.ctx, argv[optind]);
		}
		goto out;
	}
	if (status || (status = open_trace(&ct, argv[optind], format)) != 0)
		goto out;
	const struct tm_view_table *vt = tm_trace_views(ct.ot.trace);
	status = 1;
	if (!(sizes = calloc(vt->n_views, sizeof(*sizes)))) {
		fprintf(stderr, "tracemount ls: out of memory\n");
		goto out;
	}
	for (unsigned v = 0; v < vt->n_views; v++) {
		/* a group's view needs records, a per-stream view its stream shown */
		int err = tm_view_exists(&ct.ot, v);
		if (err > 0)
			err = tm_view_size(&ct.ot, v, &sizes[v]);
		else if (!err)
			sizes[v] = UINT64_MAX; /* not shown */
		if (err) {
			fprintf(stderr, "tracemount ls: %s: indexing failed: %s\n", ct.path,
				strerror(-err));
			goto out;
		}
		if (sizes[v] > max && sizes[v] != UINT64_MAX)
			max = sizes[v];
	}
	int width = snprintf(NULL, 0, "%" PRIu64, max);
	for (unsigned v = 0; v < vt->n_views; v++)
		if (sizes[v] != UINT64_MAX)
			printf("%*" PRIu64 " %s\n", width, sizes[v], vt->views[v].path);
	status = 0;
	if (fflush(stdout) != 0) {
		fprintf(stderr, "tracemount ls: standard output: %s\n", strerror(errno));
		status = 1;
	}
out:
	free(sizes);
	close_trace(&ct);
	return status < 0 ? 0 : status;
}
