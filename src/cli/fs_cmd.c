/* What `tracemount ls` and `tracemount cat` show through the mount's own tree (src/fs), not
 * through one trace's views: a folder's listing as the mount's root shows it, and a trace's
 * report.html, which the tree renders. So the commands give the bytes a mount gives. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "tracemount/context.h"
#include "tracemount/fs.h"
#include "tracemount/util.h"

struct names {
	char **names;
	size_t n, cap;
};

/* Keeps name, "/" added to a folder's, the mount root's "." and ".." left out. */
static int add_name(void *arg, const char *name, mode_t type, const struct stat *st)
{
	struct names *l = arg;
	(void)st; /* the names alone: ls FOLDER sizes nothing */
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		char **names = realloc(l->names, cap * sizeof(*names));
		if (!names)
			return 1;
		l->names = names;
		l->cap = cap;
	}
	if (asprintf(&l->names[l->n], "%s%s", name, S_ISDIR(type) ? "/" : "") < 0)
		return 1;
	l->n++;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int tm_cli_ls_folder(struct tm_context *ctx, const char *path)
{
	struct tm_fs fs = {.root_fd = -1};
	struct names l = {0};
	char err_msg[PATH_MAX + 256];
	int status = 1;
	if (tm_fs_init(&fs, ctx, path, err_msg, sizeof(err_msg)) < 0) {
		fprintf(stderr, "tracemount ls: %s\n", err_msg);
		goto out;
	}
	int err = tm_fs_readdir(&fs, "/", add_name, &l);
	if (err < 0) {
		fprintf(stderr, "tracemount ls: %s: %s\n", path, strerror(-err));
		goto out;
	}
	qsort(l.names, l.n, sizeof(*l.names), by_name);
	for (size_t i = 0; i < l.n; i++)
		printf("%s\n", l.names[i]);
	status = fflush(stdout) == 0 ? 0 : 1;
	if (status)
		fprintf(stderr, "tracemount ls: standard output: %s\n", strerror(errno));
out:
	for (size_t i = 0; i < l.n; i++)
		free(l.names[i]);
	free(l.names);
	tm_fs_destroy(&fs);
	return status;
}

/* The trace at path read as format, whatever its name: an override of its name alone, each
 * character of the name a literal in the glob. */
static int override_name(struct tm_context *ctx, const char *path, const char *format)
{
	const char *base = tm_base_name(path);
	char spec[2 * NAME_MAX + 64], *out = spec;
	for (const char *c = base; *c && out < spec + 2 * NAME_MAX; c++) {
		if (strchr("*?[]\\", *c))
			*out++ = '\\';
		*out++ = *c;
	}
	snprintf(out, sizeof(spec) - (size_t)(out - spec), ":%s", format);
	return tm_context_add_override(ctx, spec);
}

static int copy_file(struct tm_fs *fs, struct tm_fs_file *f, const char *path)
{
	static char buf[1 << 16];
	for (off_t off = 0;;) {
		ssize_t n = tm_fs_read(fs, f, buf, sizeof(buf), off);
		if (n < 0) {
			fprintf(stderr, "tracemount cat: %s: report.html: %s\n", path,
				strerror((int)-n));
			return 1;
		}
		if (n == 0)
			break;
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			break;
		off += n;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "tracemount cat: standard output: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

int tm_cli_cat_report(struct tm_context *ctx, const char *path, const char *format)
{
	struct tm_fs fs = {.root_fd = -1};
	struct tm_fs_file *f = NULL;
	char err_msg[PATH_MAX + 256], inner[NAME_MAX + 32];
	int status = 1, err;
	if (format && override_name(ctx, path, format) < 0) {
		fprintf(stderr, "tracemount cat: out of memory\n");
		return 1;
	}
	/* the trace as the one file of a mount: its folder in the root, under its own name */
	if (tm_fs_init(&fs, ctx, path, err_msg, sizeof(err_msg)) < 0) {
		fprintf(stderr, "tracemount cat: %s\n", err_msg);
		goto out;
	}
	if (!fs.single) {
		fprintf(stderr, "tracemount cat: %s: not a regular file\n", path);
		goto out;
	}
	snprintf(inner, sizeof(inner), "/%s/report.html", fs.single);
	if ((err = tm_fs_open(&fs, inner, O_RDONLY, &f)) < 0) {
		fprintf(stderr, "tracemount cat: %s: report.html: %s\n", path, strerror(-err));
		goto out;
	}
	status = copy_file(&fs, f, path);
	tm_fs_release(&fs, f);
out:
	tm_fs_destroy(&fs);
	return status;
}
