/* Helpers of the format unit tests (view_check.h). */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "tracemount/reader.h"
#include "tracemount/view.h"
#include "view_check.h"

char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	long n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	char *b = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	b[n] = 0;
	*len = (size_t)n;
	return b;
}

char *read_realtrace(const char *relpath, size_t *len)
{
	const char *dir = getenv("TM_REALTRACES");
	char path[4096];
	ck_assert_msg(dir != NULL, "TM_REALTRACES is not set (tests/unit/meson.build sets it)");
	snprintf(path, sizeof(path), "%s/%s", dir, relpath);
	if (access(path, F_OK) != 0 && errno == ENOENT) {
		printf("SKIP: [realtraces] %s is absent (../shared/realtraces is not beside this "
		       "checkout)\n",
		       relpath);
		fflush(stdout);
		return NULL;
	}
	if (strlen(relpath) < 3 || strcmp(relpath + strlen(relpath) - 3, ".gz") != 0)
		return read_file(path, len);
	gzFile g = gzopen(path, "rb");
	ck_assert_msg(g != NULL, "cannot open %s", path);
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap + 1);
	int got;
	ck_assert_ptr_nonnull(b);
	while ((got = gzread(g, b + n, (unsigned)(cap - n))) > 0) {
		n += (size_t)got;
		if (n == cap) {
			b = realloc(b, 2 * cap + 1);
			ck_assert_ptr_nonnull(b);
			cap *= 2;
		}
	}
	ck_assert_int_eq(got, 0);
	gzclose(g);
	b[n] = 0;
	*len = n;
	return b;
}

void mount_trace(struct mounted *m, const char *name, const struct tm_format *f, const void *data,
		 size_t len)
{
	mem_source_init(&m->src, data, len);
	ck_assert_int_eq(tm_context_new(TM_DEFAULT_MEMORY, &m->ctx), 0);
	ck_assert_int_eq(tm_context_trace(m->ctx, name, f, &m->t), 0);
	tm_trace_open(&m->ot, m->t, &m->src.src);
}

void unmount_trace(struct mounted *m)
{
	tm_trace_close(&m->ot);
	tm_trace_put(m->t);
	tm_context_free(m->ctx);
	mem_source_free(&m->src);
}

char *read_view(struct mounted *m, const char *path, size_t *len)
{
	int v = tm_view_table_find(tm_trace_views(m->t), path);
	ck_assert_msg(v >= 0, "no view %s", path);
	struct tm_reader r;
	ck_assert_int_eq(tm_reader_open(&r, &m->ot, (unsigned)v), 0);
	uint64_t size = tm_reader_size(&r);
	char *buf = malloc(size + 1);
	ck_assert_ptr_nonnull(buf);
	uint64_t pos = 0;
	for (;;) {
		ssize_t got = tm_reader_read(&r, buf + pos, 1 << 20, pos);
		ck_assert_msg(got >= 0, "%s: read at %" PRIu64 " returned %zd", path, pos, got);
		if (!got)
			break;
		pos += (uint64_t)got;
	}
	ck_assert_msg(pos == size, "%s: %" PRIu64 " bytes read, size %" PRIu64, path, pos, size);
	tm_reader_close(&r);
	buf[size] = 0;
	*len = (size_t)size;
	return buf;
}

/* Where two texts first differ, for messages. */
void expect_same_text(const char *what, const char *want, size_t want_len, const char *got,
		      size_t got_len)
{
	size_t i = 0;
	while (i < want_len && i < got_len && want[i] == got[i])
		i++;
	if (i == want_len && i == got_len)
		return;
	size_t from = i > 40 ? i - 40 : 0;
	ck_abort_msg("%s: differs at byte %zu (lengths %zu, %zu): want \"%.*s\", got \"%.*s\"",
		     what, i, want_len, got_len, (int)(want_len - from > 80 ? 80 : want_len - from),
		     want + from, (int)(got_len - from > 80 ? 80 : got_len - from), got + from);
}

char *model_expect(const char *model, const char *name, const void *data, size_t len,
		   const char *args)
{
	const char *python = getenv("TM_PYTHON"), *models = getenv("TM_MODELS");
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *dir, *trace, *cmd;
	ck_assert_msg(python && models,
		      "TM_PYTHON or TM_MODELS is not set (tests/unit/meson.build)");
	ck_assert_int_gt(asprintf(&dir, "%s/tm-model.XXXXXX", tmp), 0);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_gt(asprintf(&trace, "%s/%s", dir, name), 0);
	FILE *f = fopen(trace, "wb");
	ck_assert_msg(f != NULL, "cannot create %s", trace);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	const char *dot = strrchr(name, '.');
	int stem_len = dot && dot != name ? (int)(dot - name) : (int)strlen(name);
	free(trace);
	if (!args) /* model_run's */
		return dir;
	ck_assert_int_gt(asprintf(&cmd, "'%s' '%s/%s' expect '%s/%s' '%s/out' '%.*s' %s", python,
				  models, model, dir, name, dir, stem_len, name, args),
			 0);
	int status = system(cmd);
	ck_assert_msg(status == 0, "%s: exit status %d", cmd, status);
	free(cmd);
	return dir;
}

char *model_run(const char *model, const char *cmd, const char *name, const void *data, size_t len)
{
	char *dir = model_expect(model, name, data, len, NULL), *line, *out;
	size_t out_len;
	ck_assert_int_gt(asprintf(&line, "'%s' '%s/%s' %s '%s/%s' >'%s/out.txt'",
				  getenv("TM_PYTHON"), getenv("TM_MODELS"), model, cmd, dir, name,
				  dir),
			 0);
	int status = system(line);
	ck_assert_msg(status == 0, "%s: exit status %d", line, status);
	free(line);
	ck_assert_int_gt(asprintf(&line, "%s/out.txt", dir), 0);
	out = read_file(line, &out_len);
	free(line);
	model_free(dir);
	return out;
}

char *model_file(const char *dir, const char *rel, size_t *len)
{
	char *path, *text;
	ck_assert_int_gt(asprintf(&path, "%s/out/%s", dir, rel), 0);
	text = read_file(path, len);
	free(path);
	return text;
}

void model_free(char *dir)
{
	char *cmd;
	ck_assert_int_gt(asprintf(&cmd, "rm -rf '%s'", dir), 0);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(dir);
}
