/* The files of .tracemount/ (version, formats, status and report.html, whose content is
 * report.c's): their names, content and attributes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/context.h"
#include "tracemount/derive.h"
#include "tracemount/fs.h"
#include "tracemount/registry.h"
#include "tracemount/util.h"
#include "tracemount/view.h"

const char *const tm_meta_names[TM_META_N] = {"version", "formats", "status", "report.html"};

static void meta_attrs(struct tm_fs *fs, struct stat *st, mode_t mode)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = mode;
	st->st_nlink = S_ISDIR(mode) ? 2 : 1;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_atim = st->st_mtim = st->st_ctim = fs->mounted;
}

void tm_fs_meta_stat(struct tm_fs *fs, enum tm_meta_file which, size_t len, struct stat *st)
{
	/* status and the report name every trace, including those in folders others may not
	 * read */
	bool private = which == TM_META_STATUS || which == TM_META_REPORT;
	meta_attrs(fs, st, S_IFREG | (private ? 0400 : 0444));
	st->st_size = (off_t)len;
	st->st_blocks = (blkcnt_t)((len + 511) / 512); /* du counts what a read gives */
}

void tm_fs_meta_dir_stat(struct tm_fs *fs, struct stat *st)
{
	meta_attrs(fs, st, S_IFDIR | 0555);
}

/* A view's path pattern, its "%s" (the trace's stem) shown as NAME. */
static void put_view(FILE *f, const char *pattern)
{
	fputc(' ', f);
	fprintf(f, pattern, "NAME");
}

/* A pattern with one "%u" ("cpu/%u.txt", a group's or a stream's) shown with N for it. */
static void put_numbered_view(FILE *f, const char *pattern)
{
	const char *n = strstr(pattern, "%u");
	if (n)
		fprintf(f, " %.*sN%s", (int)(n - pattern), pattern, n + 2);
}

/* One stanza per format: what it is, how it is recognised, its classes and views. */
static int formats_text(char **text, size_t *len)
{
	FILE *f = open_memstream(text, len);
	if (!f)
		return -ENOMEM;
	for (const struct tm_format *const *fp = tm_formats; *fp; fp++) {
		const struct tm_format *fmt = *fp;
		fprintf(f, "%s: %s\n  recognised by: %s\n  classes:", fmt->name, fmt->description,
			fmt->recognition);
		for (unsigned c = 0; c < fmt->n_classes; c++)
			fprintf(f, " %s", fmt->classes[c]);
		for (unsigned b = 0; b < fmt->n_tags; b++)
			if (fmt->tags[b])
				fprintf(f, " %s", fmt->tags[b]);
		fprintf(f, "\n  views: raw%s stats.json errors.txt%s", fmt->dump ? " dump.txt" : "",
			fmt->dump ? " class/CLASS.txt" : "");
		if (fmt->dump && fmt->class_ext)
			fprintf(f, " class/CLASS.%s", fmt->class_ext);
		for (unsigned i = 0; i < fmt->n_extra_views; i++)
			put_view(f, fmt->extra_views[i].path);
		for (unsigned i = 0; i < fmt->n_table_views; i++)
			put_view(f, fmt->table_views[i]);
		for (const struct tm_deriver *const *d = tm_derivers; *d; d++)
			for (unsigned k = 0; tm_deriver_applies(*d, fmt) && k < (*d)->n_outputs;
			     k++)
				put_view(f, (*d)->views[k]);
		for (const struct tm_deriver *const *d = tm_derivers; *d; d++)
			for (unsigned k = 0;
			     tm_deriver_applies(*d, fmt) && k < (*d)->n_stream_outputs; k++)
				put_numbered_view(f, (*d)->stream_views[k]);
		if (fmt->group_view)
			put_numbered_view(f, fmt->group_view);
		fputc('\n', f);
	}
	return fclose(f) == 0 ? 0 : -ENOMEM;
}

/* The context's lines on its traces, then the prefetch line. */
static int status_text(struct tm_fs *fs, char **text, size_t *len)
{
	char line[128];
	int n = tm_fs_prefetch_state(fs, line, sizeof(line));
	int err = tm_context_status(fs->ctx, text, len);
	if (err)
		return err;
	char *grown = realloc(*text, *len + (size_t)n + 1);
	if (!grown) {
		free(*text);
		return -ENOMEM;
	}
	memcpy(grown + *len, line, (size_t)n + 1);
	*text = grown;
	*len += (size_t)n;
	return 0;
}

int tm_fs_meta_text(struct tm_fs *fs, enum tm_meta_file which, char **text, size_t *len)
{
	switch (which) {
	case TM_META_VERSION:
		*text = strdup("tracemount " TM_VERSION "\n");
		*len = *text ? strlen(*text) : 0;
		return *text ? 0 : -ENOMEM;
	case TM_META_FORMATS: return formats_text(text, len);
	case TM_META_STATUS: return status_text(fs, text, len);
	case TM_META_REPORT: return tm_fs_report_html(fs, text, len);
	case TM_META_N: break;
	}
	return -ENOENT;
}
