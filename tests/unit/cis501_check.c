/* Helpers of the CIS501 unit tests (cis501_check.h). */
#include "cis501_check.h"

const struct tm_format *fmt(void)
{
	const struct tm_format *f = tm_format_find("cis501");
	ck_assert_ptr_nonnull(f);
	return f;
}

char *realtrace(const char *name, size_t *len)
{
	char path[256];
	snprintf(path, sizeof(path), "cis501/%s", name);
	return read_realtrace(path, len);
}

void *new_state(void)
{
	const struct tm_format *f = fmt();
	void *s = calloc(1, f->state_size + 8);
	ck_assert_ptr_nonnull(s);
	if (f->state_init)
		f->state_init(s);
	return s;
}

void decoded_init(struct decoded *d)
{
	memset(d, 0, sizeof(*d));
	tm_diag_init(&d->diag);
}

void decoded_free(struct decoded *d)
{
	free(d->r);
	tm_diag_free(&d->diag);
}

/* One decode call on buf[pos, end) with state s; appends the records. Returns bytes used. */
size_t decode_step(void *s, const uint8_t *buf, size_t pos, size_t end, bool at_eof, size_t max,
		   struct decoded *d, bool diag)
{
	const struct tm_format *f = fmt();
	if (d->n + max > d->cap) {
		d->cap = 2 * (d->n + max);
		d->r = realloc(d->r, d->cap * sizeof(*d->r));
		ck_assert_ptr_nonnull(d->r);
	}
	struct tm_decode_in in = {
	    .buf = buf + pos, .len = end - pos, .raw_off = pos, .at_eof = at_eof};
	size_t n = 12345, used = 12345;
	int ret = f->decode(s, &in, d->r + d->n, max, &n, &used, diag ? &d->diag : NULL);
	EXPECT(ret == 0 || ret == -EAGAIN, "decode returned %d", ret);
	EXPECT(used <= end - pos && n <= max, "used %zu of %zu, %zu of %zu records", used,
	       end - pos, n, max);
	EXPECT(ret == 0 || !at_eof, "-EAGAIN at the end of the trace");
	for (size_t i = 0; i < n; i++) {
		struct rec *r = &d->r[d->n + i];
		EXPECT(r->head.raw_rel + r->head.raw_len <= used, "record beyond the bytes used");
		EXPECT(r->head.cls < N_FAMILIES, "class %u", r->head.cls);
		r->head.raw_rel += (uint32_t)pos;
	}
	d->n += n;
	d->last_ret = ret;
	return used;
}

/* Decodes the whole of buf in calls of at most max records, from a new state. */
void decode_all(const void *buf, size_t len, size_t max, struct decoded *d)
{
	void *s = new_state();
	size_t pos = 0;
	decoded_init(d);
	for (;;) {
		size_t before = d->n, used = decode_step(s, buf, pos, len, true, max, d, true);
		pos += used;
		if (!used && d->n == before)
			break;
	}
	ck_assert_uint_eq(pos, len);
	ck_assert_int_eq(tm_diag_finish(&d->diag), 0);
	free(s);
}

struct tm_chunk chunk_of(const void *raw, size_t len, const struct decoded *d)
{
	struct tm_chunk c = {.raw = raw,
			     .raw_len = len,
			     .records = d->r,
			     .n_records = d->n,
			     .record_size = fmt()->record_size};
	return c;
}

int same_record(const struct rec *a, const struct rec *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/* Renders record i with ops; checks render() against measure() and the slack. */
char *render_one(const struct tm_render_ops *ops, const struct tm_chunk *c, size_t i, size_t *len)
{
	size_t m = ops->measure(c, i);
	char *out = malloc(m + TM_RENDER_SLACK + 1);
	ck_assert_ptr_nonnull(out);
	memset(out, SLACK_MARK, m + TM_RENDER_SLACK + 1);
	size_t n = ops->render(c, i, out);
	EXPECT(n == m, "record %zu: render() wrote %zu bytes, measure() said %zu", i, n, m);
	EXPECT(out[m + TM_RENDER_SLACK] == SLACK_MARK, "record %zu: written past the slack", i);
	*len = n;
	return out;
}

const struct tm_view_desc *din_view(void)
{
	const struct tm_format *f = fmt();
	for (unsigned i = 0; i < f->n_extra_views; i++)
		if (strcmp(f->extra_views[i].path, "convert/%s.din") == 0)
			return &f->extra_views[i];
	ck_abort_msg("no din view");
	return NULL;
}

/* The concatenated output of ops over every record of d. */
char *render_all(const struct tm_render_ops *ops, const void *raw, size_t len,
		 const struct decoded *d, size_t *out_len)
{
	struct tm_chunk c = chunk_of(raw, len, d);
	size_t cap = 4096, n = 0;
	char *text = malloc(cap);
	ck_assert_ptr_nonnull(text);
	for (size_t i = 0; i < d->n; i++) {
		size_t l;
		char *one = render_one(ops, &c, i, &l);
		if (n + l + 1 > cap) {
			cap = 2 * (n + l + 1);
			text = realloc(text, cap);
			ck_assert_ptr_nonnull(text);
		}
		memcpy(text + n, one, l);
		n += l;
		free(one);
	}
	text[n] = 0;
	*out_len = n;
	return text;
}

void text_add(struct text *t, const char *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		t->cap = 2 * (t->len + n + 1);
		t->b = realloc(t->b, t->cap);
		ck_assert_ptr_nonnull(t->b);
	}
	memcpy(t->b + t->len, s, n);
	t->len += n;
	t->b[t->len] = 0;
}

void text_adds(struct text *t, const char *s)
{
	text_add(t, s, strlen(s));
}

void text_addf(struct text *t, const char *fmt_, ...)
{
	char buf[8192];
	va_list ap;
	va_start(ap, fmt_);
	int n = vsnprintf(buf, sizeof(buf), fmt_, ap);
	va_end(ap);
	ck_assert(n >= 0 && (size_t)n < sizeof(buf));
	text_add(t, buf, (size_t)n);
}

void build(struct built *b, const void *data, size_t len)
{
	const struct tm_format *f = fmt();
	mem_source_init(&b->src, data, len);
	ck_assert_int_eq(tm_view_table_init(&b->views, f, "t.trace"), 0);
	ck_assert_int_eq(tm_index_build(f, &b->views, &b->src.src, "t.trace", NULL, NULL, &b->ix),
			 0);
	char *text = strndup(b->ix->stats_json, b->ix->stats_len);
	b->root = json_tokener_parse(text);
	ck_assert_msg(b->root != NULL, "stats.json does not parse: %s", text);
	free(text);
	ck_assert(json_object_object_get_ex(b->root, "cis501", &b->own));
}

void unbuild(struct built *b)
{
	json_object_put(b->root);
	tm_index_free(b->ix);
	tm_view_table_free(&b->views);
	mem_source_free(&b->src);
}

json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;
	ck_assert_msg(json_object_object_get_ex(o, key, &v), "no key %s", key);
	return v;
}

int64_t get_int(json_object *o, const char *key)
{
	json_object *v = get(o, key);
	ck_assert_msg(json_object_is_type(v, json_type_int), "%s is not an integer", key);
	return json_object_get_int64(v);
}

const char *get_str(json_object *o, const char *key)
{
	json_object *v = get(o, key);
	ck_assert_msg(json_object_is_type(v, json_type_string), "%s is not a string", key);
	return json_object_get_string(v);
}

/* The keys of an object, in order, as "k=v,k=v". */
void object_text(json_object *o, char *out, size_t len)
{
	size_t n = 0;
	out[0] = 0;
	json_object_object_foreach(o, key, val)
	{
		n += (size_t)snprintf(out + n, len - n, "%s%s=%" PRId64, n ? "," : "", key,
				      json_object_get_int64(val));
		ck_assert_uint_lt(n, len);
	}
}

const char *errors_of(const struct built *b)
{
	return b->ix->errors_txt ? b->ix->errors_txt : "";
}

/* errors.txt is a sized buffer, not a C string. */
void expect_errors(const struct built *b, const char *want)
{
	ck_assert_msg(
	    b->ix->errors_len == strlen(want) && memcmp(errors_of(b), want, b->ix->errors_len) == 0,
	    "errors.txt \"%.*s\", expected \"%s\"", (int)b->ix->errors_len, errors_of(b), want);
}
