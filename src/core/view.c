/* The view table of a trace: generic views first, then the format's extras, then the
 * derivers'. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>

#include <json-c/json.h>

#include "tracemount/compress.h"
#include "tracemount/derive.h"
#include "tracemount/stats_json.h"
#include "tracemount/view.h"

static size_t raw_copy_measure(const struct tm_chunk *c, size_t i)
{
	return tm_chunk_rec(c, i)->raw_len;
}

static size_t raw_copy_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct tm_record *r = tm_chunk_rec(c, i);
	memcpy(out, c->raw + r->raw_rel, r->raw_len);
	return r->raw_len;
}

const struct tm_render_ops tm_raw_copy_ops = {
    .measure = raw_copy_measure,
    .render = raw_copy_render,
};

size_t tm_view_fixed_len(const struct tm_format *fmt, const struct tm_view *v, unsigned cls)
{
	if (v->ops->fixed_len)
		return v->ops->fixed_len(cls);
	if (v->ops == &tm_raw_copy_ops)
		return fmt->raw_record_len;
	return 0;
}

char *tm_trace_stem(const char *name)
{
	size_t n = strlen(name) - tm_codec_suffix_len(name);
	const char *dot = memrchr(name, '.', n);
	if (dot && dot > name)
		n = (size_t)(dot - name);
	return strndup(name, n);
}

/* Bytes a view path pattern adds to the stem in its last component ("convert/%s.ext": 4),
 * or 0 when that component has no stem. */
static size_t stem_suffix(const char *pattern)
{
	const char *slash = strrchr(pattern, '/'), *last = slash ? slash + 1 : pattern;
	return strstr(last, "%s") ? strlen(last) - 2 : 0;
}

/* A stem with which every view name fits NAME_MAX bytes: where the longest would not, the
 * stem's first bytes (cut at a UTF-8 character's start), '~' and the 8 hex digits of the whole
 * stem's FNV-1a hash, so that two long names sharing a beginning stay apart. */
static void fit_stem(struct tm_view_table *t, const struct tm_format *fmt)
{
	size_t suffix = 0;
	for (unsigned i = 0; i < fmt->n_extra_views; i++)
		suffix = MAX(suffix, stem_suffix(fmt->extra_views[i].path));
	for (unsigned k = 0; k < fmt->n_table_views; k++)
		suffix = MAX(suffix, stem_suffix(fmt->table_views[k]));
	for (const struct tm_deriver *const *d = tm_derivers; *d; d++)
		for (unsigned k = 0; tm_deriver_applies(*d, fmt) && k < (*d)->n_outputs; k++)
			suffix = MAX(suffix, stem_suffix((*d)->views[k]));
	size_t len = strlen(t->stem);
	if (!suffix || len + suffix <= NAME_MAX)
		return;
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)t->stem[i]) * 16777619u;
	size_t keep = NAME_MAX - suffix - 9;
	while (keep && ((uint8_t)t->stem[keep] & 0xc0) == 0x80)
		keep--; /* not inside a character */
	snprintf(t->stem + keep, len + 1 - keep, "~%08x", h);
}

static int add_view(struct tm_view_table *t, char *path, enum tm_view_kind kind,
		    const struct tm_render_ops *ops, uint64_t mask, uint16_t flag_mask)
{
	if (!path)
		return -ENOMEM;
	struct tm_view *v = &t->views[t->n_views++];
	v->path = path;
	v->kind = kind;
	v->ops = ops;
	v->class_mask = mask;
	v->flag_mask = flag_mask;
	v->group = -1;
	v->column = kind == TM_VIEW_RECORDS ? t->n_record_views++
		    : kind == TM_VIEW_TABLE ? t->n_tables++
					    : 0;
	return 0;
}

static char *path_printf(const char *fmt, const char *a, const char *b)
{
	char *s;
	return asprintf(&s, fmt, a, b) < 0 ? NULL : s;
}

/* class/NAME.txt and, when the format has binary streams, class/NAME.EXT. */
static int add_class_views(struct tm_view_table *t, const struct tm_format *fmt, const char *name,
			   uint64_t mask, uint16_t flag_mask)
{
	const struct tm_render_ops *stream =
	    fmt->class_stream ? fmt->class_stream : &tm_raw_copy_ops;
	int err = add_view(t, path_printf("class/%s.%s", name, "txt"), TM_VIEW_RECORDS, fmt->dump,
			   mask, flag_mask);
	if (!err && fmt->class_ext)
		err = add_view(t, path_printf("class/%s.%s", name, fmt->class_ext), TM_VIEW_RECORDS,
			       stream, mask, flag_mask);
	return err;
}

/* The paths of stream s's per-stream views, written from at (when not NULL, with room bytes)
 * in the order of the derivers; each view added to t when written. Returns the bytes they
 * take. */
static size_t stream_views_of(struct tm_view_table *t, const struct tm_format *fmt, unsigned s,
			      char *at, size_t room)
{
	size_t len = 0;
	unsigned column = 0;
	for (const struct tm_deriver *const *d = tm_derivers; *d; d++)
		for (unsigned k = 0; tm_deriver_applies(*d, fmt) && k < (*d)->n_stream_outputs;
		     k++, column++) {
			int n = snprintf(at ? at + len : NULL, at ? room - len : 0,
					 (*d)->stream_views[k], s);
			if (at)
				t->views[t->n_views++] = (struct tm_view){
				    .path = at + len,
				    .kind = TM_VIEW_TABLE,
				    .group = (int)s,
				    .column = column,
				    .hide_empty = (*d)->hide_empty_streams >> k & 1,
				    .product = (uint8_t)(1 + (d - tm_derivers)),
				    .products = TM_PRODUCT_DERIVER(d - tm_derivers)};
			len += (size_t)n + 1;
		}
	return len;
}

/* The derivers' per-stream views of streams 0 to TM_MAX_STREAM_VIEWS - 1, their paths in one
 * block: the view table of every instruction trace holds them, so they stay small. */
static int add_stream_views(struct tm_view_table *t, const struct tm_format *fmt)
{
	size_t len = 0, total;
	for (unsigned s = 0; s < TM_MAX_STREAM_VIEWS; s++)
		len += stream_views_of(t, fmt, s, NULL, 0);
	if (!(t->stream_paths = malloc(len)))
		return -ENOMEM;
	total = len;
	len = 0;
	for (unsigned s = 0; s < TM_MAX_STREAM_VIEWS; s++)
		len += stream_views_of(t, fmt, s, t->stream_paths + len, total - len);
	t->n_stream_tables = tm_derived_stream_views(fmt);
	return 0;
}

int tm_view_table_init(struct tm_view_table *t, const struct tm_format *fmt, const char *name)
{
	unsigned per_class = fmt->class_ext ? 2 : 1;
	unsigned per_stream = tm_derived_stream_views(fmt);
	unsigned n = 4 + (fmt->n_classes + fmt->n_tags) * per_class + fmt->n_extra_views +
		     (fmt->group_view ? TM_MAX_GROUPS : 0) + fmt->n_table_views +
		     tm_derived_views(fmt) + TM_MAX_STREAM_VIEWS * per_stream;
	int err = 0;

	memset(t, 0, sizeof(*t));
	t->views = calloc(n, sizeof(*t->views));
	t->stem = tm_trace_stem(name);
	if (!t->views || !t->stem)
		goto out_nomem;
	fit_stem(t, fmt);

	err = add_view(t, strdup("raw"), TM_VIEW_RAW, NULL, 0, 0);
	if (fmt->dump)
		err = err ? err
			  : add_view(t, strdup("dump.txt"), TM_VIEW_RECORDS, fmt->dump, ~0ull, 0);
	err = err ? err : add_view(t, strdup("stats.json"), TM_VIEW_STATS, NULL, 0, 0);
	if (!err)
		t->views[t->n_views - 1].products = tm_products_of(fmt);
	err = err ? err : add_view(t, strdup("errors.txt"), TM_VIEW_ERRORS, NULL, 0, 0);
	if (!err)
		t->views[t->n_views - 1].products = tm_products_of(fmt);
	for (unsigned c = 0; c < fmt->n_classes && fmt->dump && !err; c++)
		if (!(fmt->common_classes >> c & 1))
			err = add_class_views(t, fmt, fmt->classes[c],
					      1ull << c | fmt->common_classes, 0);
	for (unsigned b = 0; b < fmt->n_tags && b < TM_FLAG_BITS && fmt->dump && !err; b++)
		if (fmt->tags[b])
			err = add_class_views(t, fmt, fmt->tags[b], ~0ull, (uint16_t)(1u << b));
	for (unsigned i = 0; i < fmt->n_extra_views && !err; i++) {
		const struct tm_view_desc *d = &fmt->extra_views[i];
		err = add_view(t, path_printf(d->path, t->stem, ""), TM_VIEW_RECORDS, d->ops,
			       d->class_mask, 0);
	}
	for (unsigned g = 0; fmt->group_view && g < TM_MAX_GROUPS && !err; g++) {
		char *path;
		err = asprintf(&path, fmt->group_view, g) < 0 ? -ENOMEM : 0;
		err = err ? err
			  : add_view(t, path, TM_VIEW_RECORDS,
				     fmt->group_ops ? fmt->group_ops : &tm_raw_copy_ops, ~0ull, 0);
		if (!err)
			t->views[t->n_views - 1].group = (int)g;
	}
	for (unsigned k = 0; k < fmt->n_table_views && !err; k++) {
		err = add_view(t, path_printf(fmt->table_views[k], t->stem, ""), TM_VIEW_TABLE,
			       NULL, 0, 0);
		if (!err)
			t->views[t->n_views - 1].products = TM_PRODUCT_STATS;
	}
	for (const struct tm_deriver *const *d = tm_derivers; *d; d++)
		for (unsigned k = 0; tm_deriver_applies(*d, fmt) && k < (*d)->n_outputs && !err;
		     k++) {
			err = add_view(t, path_printf((*d)->views[k], t->stem, ""), TM_VIEW_TABLE,
				       NULL, 0, 0);
			if (err)
				break;
			struct tm_view *v = &t->views[t->n_views - 1];
			v->hide_empty = (*d)->hide_empty >> k & 1;
			v->product = (uint8_t)(1 + (d - tm_derivers));
			v->products = TM_PRODUCT_DERIVER(d - tm_derivers);
		}
	if (!err && per_stream)
		err = add_stream_views(t, fmt);
	if (!err)
		return 0;
out_nomem:
	tm_view_table_free(t);
	return -ENOMEM;
}

void tm_view_table_free(struct tm_view_table *t)
{
	for (unsigned i = 0; i < t->n_views; i++)
		if (t->views[i].kind != TM_VIEW_TABLE || t->views[i].group < 0)
			free(t->views[i].path); /* not one of stream_paths */
	free(t->views);
	free(t->stem);
	free(t->stream_paths);
	memset(t, 0, sizeof(*t));
}

int tm_view_table_find(const struct tm_view_table *t, const char *path)
{
	for (unsigned i = 0; i < t->n_views; i++)
		if (strcmp(t->views[i].path, path) == 0)
			return (int)i;
	return -ENOENT;
}

/* If view path lies inside dir, the length of its next component, else 0. */
static size_t child_len(const char *path, const char *dir, const char **child)
{
	size_t dl = strlen(dir);
	if (dl) {
		if (strncmp(path, dir, dl) != 0 || path[dl] != '/')
			return 0;
		path += dl + 1;
	}
	*child = path;
	const char *slash = strchr(path, '/');
	return slash ? (size_t)(slash - path) : strlen(path);
}

int tm_view_table_is_dir(const struct tm_view_table *t, const char *path)
{
	size_t pl = strlen(path);
	for (unsigned i = 0; i < t->n_views; i++) {
		const char *p = t->views[i].path;
		if (strncmp(p, path, pl) == 0 && p[pl] == '/')
			return 1;
	}
	return 0;
}

int tm_view_table_list(const struct tm_view_table *t, const char *dir,
		       int (*fn)(void *arg, const char *name, int is_dir, unsigned view), void *arg)
{
	for (unsigned i = 0; i < t->n_views; i++) {
		const char *child;
		size_t len = child_len(t->views[i].path, dir, &child);
		if (!len)
			continue;
		int is_dir = child[len] == '/';
		/* a folder is listed at its first view only */
		int seen = 0;
		for (unsigned j = 0; j < i && is_dir && !seen; j++) {
			const char *other;
			size_t ol = child_len(t->views[j].path, dir, &other);
			seen = ol == len && strncmp(other, child, len) == 0;
		}
		if (seen)
			continue;
		char name[256];
		if (len >= sizeof(name))
			continue;
		memcpy(name, child, len);
		name[len] = '\0';
		int r = fn(arg, name, is_dir, i);
		if (r)
			return r;
	}
	return 0;
}

struct json_object *tm_din_stats(uint64_t fetches, uint64_t reads, uint64_t writes)
{
	json_object *o = json_object_new_object();
	int err = 0;
	tm_json_add_int(o, "fetches", fetches, &err);
	tm_json_add_int(o, "reads", reads, &err);
	tm_json_add_int(o, "writes", writes, &err);
	if (err) { /* the caller's tm_json_add counts a NULL as the failure it is */
		json_object_put(o);
		return NULL;
	}
	return o;
}
