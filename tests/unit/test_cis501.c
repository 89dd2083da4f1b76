/* The CIS501 decoder (src/formats/cis501.c), its views and statistics, through the format table
 * and the core: the course's real gcc-1K.trace against counts and lines worked out here from the
 * file by plain splitting, hand-written lines and expected texts, every bad-input rule, the
 * checkpoint contract, truncation at every byte. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <zlib.h>

#include "mem_source.h"
#include "tracemount/context.h"
#include "tracemount/diag.h"
#include "tracemount/index.h"
#include "tracemount/reader.h"
#include "tracemount/registry.h"
#include "tracemount/trace.h"
#include "tracemount/view.h"

/* An assertion for hot loops: Check's own record every passing assertion through a pipe. */
#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond))                                                                       \
			ck_abort_msg(__VA_ARGS__);                                                 \
	} while (0)

/* The record as cis501.h lays it out (checked against record_size). */
struct rec {
	struct tm_record head;
	int32_t uop;
	uint64_t pc, addr, fallthrough, target;
	int64_t imm;
	uint64_t macro;
	int32_t src1, src2, dest;
	uint16_t macro_off, macro_len, micro_off, micro_len;
	uint16_t dump_len, pad;
};

/* doc: the families, then the tags by flag bit */
static const char *const families[] = {
    "move", "arith", "muldiv", "logic",	     "shift", "compare", "cond_branch", "jump",	 "call",
    "ret",  "stack", "string", "float_simd", "nop",   "sync",	 "system",	"other",
};
#define N_FAMILIES (sizeof(families) / sizeof(families[0]))
static const char *const tags[] = {"loads",	"stores",     "branches",   "taken",
				   "not_taken", "flags_read", "flags_write"};
#define N_TAGS (sizeof(tags) / sizeof(tags[0]))
enum {
	T_LOAD = 1,
	T_STORE = 2,
	T_BRANCH = 4,
	T_TAKEN = 8,
	T_NOT_TAKEN = 16,
	T_READ = 32,
	T_WRITE = 64
};

static const struct tm_format *fmt(void)
{
	const struct tm_format *f = tm_format_find("cis501");
	ck_assert_ptr_nonnull(f);
	return f;
}

/* Files. */

static char *read_file(const char *path, size_t *len)
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

static char *realtrace(const char *name, size_t *len)
{
	const char *dir = getenv("TM_REALTRACES");
	char path[4096];
	ck_assert_msg(dir != NULL, "TM_REALTRACES is not set (tests/unit/meson.build sets it)");
	snprintf(path, sizeof(path), "%s/cis501/%s", dir, name);
	if (strlen(name) < 3 || strcmp(name + strlen(name) - 3, ".gz") != 0)
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

/* Decoding through the format table. */

struct decoded {
	struct rec *r; /* raw_rel made relative to the start of the trace */
	size_t n, cap;
	struct tm_diag diag;
	int last_ret;
};

static void *new_state(void)
{
	const struct tm_format *f = fmt();
	void *s = calloc(1, f->state_size + 8);
	ck_assert_ptr_nonnull(s);
	if (f->state_init)
		f->state_init(s);
	return s;
}

static void decoded_init(struct decoded *d)
{
	memset(d, 0, sizeof(*d));
	tm_diag_init(&d->diag);
}

static void decoded_free(struct decoded *d)
{
	free(d->r);
	tm_diag_free(&d->diag);
}

/* One decode call on buf[pos, end) with state s; appends the records. Returns bytes used. */
static size_t decode_step(void *s, const uint8_t *buf, size_t pos, size_t end, bool at_eof,
			  size_t max, struct decoded *d, bool diag)
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
static void decode_all(const void *buf, size_t len, size_t max, struct decoded *d)
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

static struct tm_chunk chunk_of(const void *raw, size_t len, const struct decoded *d)
{
	struct tm_chunk c = {.raw = raw,
			     .raw_len = len,
			     .records = d->r,
			     .n_records = d->n,
			     .record_size = fmt()->record_size};
	return c;
}

static int same_record(const struct rec *a, const struct rec *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

#define SLACK_MARK '\x7f'

/* Renders record i with ops; checks render() against measure() and the slack. */
static char *render_one(const struct tm_render_ops *ops, const struct tm_chunk *c, size_t i,
			size_t *len)
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

static const struct tm_view_desc *din_view(void)
{
	const struct tm_format *f = fmt();
	for (unsigned i = 0; i < f->n_extra_views; i++)
		if (strcmp(f->extra_views[i].path, "convert/%s.din") == 0)
			return &f->extra_views[i];
	ck_abort_msg("no din view");
	return NULL;
}

/* The concatenated output of ops over every record of d. */
static char *render_all(const struct tm_render_ops *ops, const void *raw, size_t len,
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

/* An independent reading of a clean trace: lines split on white space. */

struct ref_line {
	const char *orig; /* the line with its newline */
	size_t orig_len;
	char *f[14]; /* the fields, NUL-terminated copies */
};

static size_t ref_split(const char *text, size_t len, struct ref_line **out)
{
	size_t n = 0, cap = 64;
	struct ref_line *v = malloc(cap * sizeof(*v));
	ck_assert_ptr_nonnull(v);
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) + 1 : len;
		if (n == cap) {
			cap *= 2;
			v = realloc(v, cap * sizeof(*v));
			ck_assert_ptr_nonnull(v);
		}
		struct ref_line *l = &v[n++];
		l->orig = text + pos;
		l->orig_len = end - pos;
		char *copy = strndup(text + pos, end - pos), *save = NULL;
		int k = 0;
		for (char *t = strtok_r(copy, " \t\r\n", &save); t;
		     t = strtok_r(NULL, " \t\r\n", &save)) {
			ck_assert_int_lt(k, 14);
			l->f[k++] = strdup(t);
		}
		ck_assert_int_eq(k, 14);
		free(copy);
		pos = end;
	}
	*out = v;
	return n;
}

static void ref_free(struct ref_line *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 14; k++)
			free(v[i].f[k]);
	free(v);
}

/* A growing text. */
struct text {
	char *b;
	size_t len, cap;
};

static void text_add(struct text *t, const char *s, size_t n)
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

static void text_adds(struct text *t, const char *s)
{
	text_add(t, s, strlen(s));
}

static void text_addf(struct text *t, const char *fmt_, ...) __attribute__((format(printf, 2, 3)));
static void text_addf(struct text *t, const char *fmt_, ...)
{
	char buf[8192];
	va_list ap;
	va_start(ap, fmt_);
	int n = vsnprintf(buf, sizeof(buf), fmt_, ap);
	va_end(ap);
	ck_assert(n >= 0 && (size_t)n < sizeof(buf));
	text_add(t, buf, (size_t)n);
}

/* Tags of a reference line, from its characters. */
static unsigned ref_tags(const struct ref_line *l)
{
	unsigned t = 0;
	t |= strcmp(l->f[7], "L") == 0 ? T_LOAD : strcmp(l->f[7], "S") == 0 ? T_STORE : 0;
	t |= strcmp(l->f[6], "T") == 0 ? T_BRANCH | T_TAKEN : 0;
	t |= strcmp(l->f[6], "N") == 0 ? T_BRANCH | T_NOT_TAKEN : 0;
	t |= strcmp(l->f[5], "R") == 0 ? T_READ : strcmp(l->f[5], "W") == 0 ? T_WRITE : 0;
	return t;
}

/* The views of a clean trace in normal form (lower-case hex, no leading zeros, as the course's
 * traces are): dump lines are its fields joined by single spaces plus the macro-op number. */
struct ref_views {
	struct text dump, din, tag_txt[N_TAGS], tag_raw[N_TAGS];
	uint64_t macro_ops;
};

static void ref_views(const struct ref_line *v, size_t n, struct ref_views *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		const struct ref_line *l = &v[i];
		struct text line = {0};
		if (strcmp(l->f[0], "1") == 0) {
			out->macro_ops++;
			text_addf(&out->din, "2 %s\n", l->f[1]);
		}
		if (strcmp(l->f[7], "L") == 0 || strcmp(l->f[7], "S") == 0)
			text_addf(&out->din, "%c %s\n", l->f[7][0] == 'L' ? '0' : '1', l->f[9]);
		for (int k = 0; k < 14; k++)
			text_addf(&line, "%s ", l->f[k]);
		text_addf(&line, "%" PRIu64 "\n", out->macro_ops);
		text_add(&out->dump, line.b, line.len);
		unsigned t = ref_tags(l);
		for (unsigned k = 0; k < N_TAGS; k++) {
			if (!(t >> k & 1))
				continue;
			text_add(&out->tag_txt[k], line.b, line.len);
			text_add(&out->tag_raw[k], l->orig, l->orig_len);
		}
		free(line.b);
	}
}

static void ref_views_free(struct ref_views *r)
{
	free(r->dump.b);
	free(r->din.b);
	for (unsigned k = 0; k < N_TAGS; k++) {
		free(r->tag_txt[k].b);
		free(r->tag_raw[k].b);
	}
}

/* Through the core. */

struct built {
	struct mem_source src;
	struct tm_view_table views;
	struct tm_index *ix;
	json_object *root, *own;
};

static void build(struct built *b, const void *data, size_t len)
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

static void unbuild(struct built *b)
{
	json_object_put(b->root);
	tm_index_free(b->ix);
	tm_view_table_free(&b->views);
	mem_source_free(&b->src);
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;
	ck_assert_msg(json_object_object_get_ex(o, key, &v), "no key %s", key);
	return v;
}

static int64_t get_int(json_object *o, const char *key)
{
	json_object *v = get(o, key);
	ck_assert_msg(json_object_is_type(v, json_type_int), "%s is not an integer", key);
	return json_object_get_int64(v);
}

static const char *get_str(json_object *o, const char *key)
{
	json_object *v = get(o, key);
	ck_assert_msg(json_object_is_type(v, json_type_string), "%s is not a string", key);
	return json_object_get_string(v);
}

/* The keys of an object, in order, as "k=v,k=v". */
static void object_text(json_object *o, char *out, size_t len)
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

static const char *errors_of(const struct built *b)
{
	return b->ix->errors_txt ? b->ix->errors_txt : "";
}

/* errors.txt is a sized buffer, not a C string. */
static void expect_errors(const struct built *b, const char *want)
{
	ck_assert_msg(
	    b->ix->errors_len == strlen(want) && memcmp(errors_of(b), want, b->ix->errors_len) == 0,
	    "errors.txt \"%.*s\", expected \"%s\"", (int)b->ix->errors_len, errors_of(b), want);
}

struct mounted {
	struct tm_context *ctx;
	struct tm_trace *t;
	struct mem_source src;
};

static void mount_trace(struct mounted *m, const char *name, const void *data, size_t len)
{
	mem_source_init(&m->src, data, len);
	ck_assert_int_eq(tm_context_new(TM_DEFAULT_MEMORY, &m->ctx), 0);
	ck_assert_int_eq(tm_context_trace(m->ctx, name, fmt(), &m->t), 0);
}

static void unmount_trace(struct mounted *m)
{
	tm_context_trace_put(m->ctx, m->t);
	tm_context_free(m->ctx);
	mem_source_free(&m->src);
}

static char *read_view(struct mounted *m, const char *path, size_t *len)
{
	int v = tm_view_table_find(&m->t->views, path);
	ck_assert_msg(v >= 0, "no view %s", path);
	struct tm_reader r;
	ck_assert_int_eq(tm_reader_open(&r, m->ctx, m->t, &m->src.src, (unsigned)v), 0);
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
static void expect_same_text(const char *what, const char *want, size_t want_len, const char *got,
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

/* The table. */

START_TEST(test_layout)
{
	const struct tm_format *f = fmt();
	ck_assert_str_eq(f->name, "cis501");
	ck_assert_uint_eq(f->n_classes, N_FAMILIES);
	for (unsigned c = 0; c < N_FAMILIES; c++)
		ck_assert_str_eq(f->classes[c], families[c]);
	ck_assert_uint_eq(f->n_tags, N_TAGS);
	for (unsigned t = 0; t < N_TAGS; t++)
		ck_assert_str_eq(f->tags[t], tags[t]);
	ck_assert_uint_eq(f->record_size, sizeof(struct rec));
	ck_assert_uint_eq(f->state_size % 8, 0);
	ck_assert_uint_le(f->state_size, 32);
	ck_assert_uint_eq(f->raw_record_len, 0);
	ck_assert_str_eq(f->class_ext, "trace");
	ck_assert_ptr_null(f->class_stream);
	ck_assert_uint_eq(f->common_classes, 0);
	ck_assert(f->probe_needs_head);
	ck_assert_uint_gt(f->chunk_records, 0);
	ck_assert_uint_eq(din_view()->class_mask, (1ull << N_FAMILIES) - 1);

	struct tm_view_table v;
	ck_assert_int_eq(tm_view_table_init(&v, f, "gcc-1K.trace"), 0);
	const char *paths[] = {"dump.txt",
			       "stats.json",
			       "errors.txt",
			       "class/move.txt",
			       "class/move.trace",
			       "class/cond_branch.txt",
			       "class/other.trace",
			       "class/loads.txt",
			       "class/loads.trace",
			       "class/not_taken.txt",
			       "class/flags_write.trace",
			       "convert/gcc-1K.din"};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		ck_assert_msg(tm_view_table_find(&v, paths[i]) >= 0, "no view %s", paths[i]);
	tm_view_table_free(&v);
}
END_TEST

/* Macro opcode -> family, as doc/views.md lists them. */
START_TEST(test_families)
{
	static const struct {
		const char *macro, *family;
	} rows[] = {
	    {"MOV", "move"},
	    {"MOVZX", "move"},
	    {"MOVSX", "move"},
	    {"CMOV", "move"},
	    {"CMOVNZ", "move"},
	    {"XCHG", "move"},
	    {"CDQE", "move"},
	    {"ADD", "arith"},
	    {"SUB", "arith"},
	    {"LEA", "arith"},
	    {"INC", "arith"},
	    {"NEG", "arith"},
	    {"IMUL", "muldiv"},
	    {"DIV", "muldiv"},
	    {"XOR", "logic"},
	    {"NOT", "logic"},
	    {"POPCNT", "logic"},
	    {"BT", "logic"},
	    {"SHL", "shift"},
	    {"SAR", "shift"},
	    {"ROL", "shift"},
	    {"SHRD", "shift"},
	    {"CMP", "compare"},
	    {"TEST", "compare"},
	    {"SET", "compare"},
	    {"SETNZ", "compare"},
	    {"J", "cond_branch"},
	    {"JNZ", "cond_branch"},
	    {"JRCXZ", "cond_branch"},
	    {"LOOP", "cond_branch"},
	    {"JMP", "jump"},
	    {"JMP_FAR", "jump"},
	    {"CALL", "call"},
	    {"CALL_NEAR", "call"},
	    {"CALL_FAR", "call"},
	    {"RET", "ret"},
	    {"RET_NEAR", "ret"},
	    {"PUSH", "stack"},
	    {"POP", "stack"},
	    {"PUSHFQ", "stack"},
	    {"LEAVE", "stack"},
	    {"MOVSB", "string"},
	    {"MOVSD", "string"},
	    {"STOSQ", "string"},
	    {"REP_MOVSB", "string"},
	    {"REPE_CMPSB", "string"},
	    {"MOVSD_XMM", "float_simd"},
	    {"ADDSD", "float_simd"},
	    {"MOVAPS", "float_simd"},
	    {"PXOR", "float_simd"},
	    {"FLD", "float_simd"},
	    {"CVTSI2SD", "float_simd"},
	    {"VADDPD", "float_simd"},
	    {"MOVDQA", "float_simd"},
	    {"UCOMISS", "float_simd"},
	    {"MOVQ", "float_simd"},
	    {"NOP", "nop"},
	    {"NOP2", "nop"},
	    {"PAUSE", "nop"},
	    {"MFENCE", "sync"},
	    {"CMPXCHG", "sync"},
	    {"CMPXCHG16B", "sync"},
	    {"SYSCALL", "system"},
	    {"CPUID", "system"},
	    {"INT3", "system"},
	    {"XSAVEOPT", "system"},
	    {"CLD", "other"},
	    {"PREFETCHT0", "other"},
	    {"XYZZY", "other"},
	    {"mov", "other"},
	    {"MOVZXQ", "other"},
	    {"ADDX", "other"},
	};
	const struct tm_format *f = fmt();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char line[128];
		int n = snprintf(line, sizeof(line), "1 10 -1 -1 -1 - - - 0 0 14 0 %s NOP\n",
				 rows[i].macro);
		struct decoded d;
		decode_all(line, (size_t)n, 4, &d);
		ck_assert_uint_eq(d.n, 1);
		ck_assert_msg(strcmp(f->classes[d.r[0].head.cls], rows[i].family) == 0,
			      "%s: family %s, expected %s", rows[i].macro,
			      f->classes[d.r[0].head.cls], rows[i].family);
		decoded_free(&d);
	}
}
END_TEST

/* One line at a time from a new state: the record's fields, its tags, its dump.txt line. */
static const struct field_row {
	const char *line, *dump;
	int32_t uop, src1, src2, dest;
	uint64_t pc;
	int64_t imm;
	uint64_t addr, fallthrough, target;
	unsigned tags;
	const char *family;
	unsigned diag; /* problems reported */
} field_rows[] = {
    {"1 48d1de -1 -1 13 - - -         0            0       48d1e2            0 SET      ADD\n",
     "1 48d1de -1 -1 13 - - - 0 0 48d1e2 0 SET ADD 1\n", 1, -1, -1, 13, 0x48d1de, 0, 0, 0x48d1e2, 0,
     0, "compare", 0},
    /* a trace cut mid-instruction: macro-op 0 */
    {"2 48d1de -1 -1 13 R - -         1            0       48d1e2            0 SET      "
     "ADD_IMM\n",
     "2 48d1de -1 -1 13 R - - 1 0 48d1e2 0 SET ADD_IMM 0\n", 2, -1, -1, 13, 0x48d1de, 1, 0,
     0x48d1e2, 0, T_READ, "compare", 0},
    {"1 48d1e2 -1  5 45 - - L      -264  7fffe7ff048       48d1e9            0 CMP      LOAD\n",
     "1 48d1e2 -1 5 45 - - L -264 7fffe7ff048 48d1e9 0 CMP LOAD 1\n", 1, -1, 5, 45, 0x48d1e2, -264,
     0x7fffe7ff048, 0x48d1e9, 0, T_LOAD, "compare", 0},
    {"4 48d248 -1 -1 -1 - T -     -5149            0       48d24d       48be30 CALL     "
     "JMP_IMM\n",
     "4 48d248 -1 -1 -1 - T - -5149 0 48d24d 48be30 CALL JMP_IMM 0\n", 4, -1, -1, -1, 0x48d248,
     -5149, 0, 0x48d24d, 0x48be30, T_BRANCH | T_TAKEN, "call", 0},
    {"1 48d237 -1 -1 -1 R N -       -25            0       48d239       48d220 J        "
     "JMP_IMM\n",
     "1 48d237 -1 -1 -1 R N - -25 0 48d239 48d220 J JMP_IMM 1\n", 1, -1, -1, -1, 0x48d237, -25, 0,
     0x48d239, 0x48d220, T_BRANCH | T_NOT_TAKEN | T_READ, "cond_branch", 0},
    {"3 48d248 44  4 -1 W - S 0 7fffe7fefc8 48d24d 0 CALL STORE\n",
     "3 48d248 44 4 -1 W - S 0 7fffe7fefc8 48d24d 0 CALL STORE 0\n", 3, 44, 4, -1, 0x48d248, 0,
     0x7fffe7fefc8, 0x48d24d, 0, T_STORE | T_WRITE, "call", 0},
    /* tabs, leading and trailing white space, upper-case hex */
    {"\t 1\t48D1E2  -1 5 45 W T L -264 7FFFE7FF048 48d1e9 0 CMP LOAD  \t\n",
     "1 48d1e2 -1 5 45 W T L -264 7fffe7ff048 48d1e9 0 CMP LOAD 1\n", 1, -1, 5, 45, 0x48d1e2, -264,
     0x7fffe7ff048, 0x48d1e9, 0, T_LOAD | T_BRANCH | T_TAKEN | T_WRITE, "compare", 0},
    /* the extremes of every numeric field, long names */
    {"-2147483648 ffffffffffffffff 2147483647 -2147483648 0 - N S -9223372036854775808 "
     "0000000000000000001 0 ffffffffffffffff X_Y SEXT_DWORD_TO_QWORD_AND_MORE\n",
     "-2147483648 ffffffffffffffff 2147483647 -2147483648 0 - N S -9223372036854775808 1 0 "
     "ffffffffffffffff X_Y SEXT_DWORD_TO_QWORD_AND_MORE 0\n",
     INT32_MIN, INT32_MAX, INT32_MIN, 0, UINT64_MAX, INT64_MIN, 1, 0, UINT64_MAX,
     T_STORE | T_BRANCH | T_NOT_TAKEN, "other", 0},
    /* signs, leading zeros and 0x prefixes as the reference's %i and %x read them */
    {"+7 0x10 -0 007 +0 - - - 9223372036854775807 0X1f 0x0 000 MOVSD_XMM LOAD_FP\n",
     "7 10 0 7 0 - - - 9223372036854775807 1f 0 0 MOVSD_XMM LOAD_FP 0\n", 7, 0, 7, 0, 0x10,
     INT64_MAX, 0x1f, 0, 0, 0, "float_simd", 0},
    /* CR LF: kept, reported */
    {"1 10 1 2 3 - - - 0 0 14 0 NOP NOP\r\n", "1 10 1 2 3 - - - 0 0 14 0 NOP NOP 1\n", 1, 1, 2, 3,
     0x10, 0, 0, 0x14, 0, 0, "nop", 1},
    /* no newline at the end: kept, reported */
    {"1 10 1 2 3 - - - 0 0 14 0 PUSH STORE", "1 10 1 2 3 - - - 0 0 14 0 PUSH STORE 1\n", 1, 1, 2, 3,
     0x10, 0, 0, 0x14, 0, 0, "stack", 1},
};

START_TEST(test_fields)
{
	const struct field_row *row = &field_rows[_i];
	const struct tm_format *f = fmt();
	size_t len = strlen(row->line);
	struct decoded d;
	decode_all(row->line, len, 4, &d);
	ck_assert_uint_eq(d.n, 1);
	const struct rec *r = &d.r[0];
	ck_assert_uint_eq(r->head.raw_rel, 0);
	ck_assert_uint_eq(r->head.raw_len, len);
	ck_assert_int_eq(r->uop, row->uop);
	ck_assert_uint_eq(r->pc, row->pc);
	ck_assert_int_eq(r->src1, row->src1);
	ck_assert_int_eq(r->src2, row->src2);
	ck_assert_int_eq(r->dest, row->dest);
	ck_assert_int_eq(r->imm, row->imm);
	ck_assert_uint_eq(r->addr, row->addr);
	ck_assert_uint_eq(r->fallthrough, row->fallthrough);
	ck_assert_uint_eq(r->target, row->target);
	ck_assert_uint_eq(r->head.flags & ((1u << N_TAGS) - 1), row->tags);
	ck_assert_str_eq(f->classes[r->head.cls], row->family);
	ck_assert_msg(d.diag.count == row->diag, "%" PRIu64 " problems: %.*s", d.diag.count,
		      (int)d.diag.len, d.diag.text);
	struct tm_chunk c = chunk_of(row->line, len, &d);
	size_t out_len;
	char *out = render_one(f->dump, &c, 0, &out_len);
	expect_same_text(row->line, row->dump, strlen(row->dump), out, out_len);
	free(out);
	decoded_free(&d);
}
END_TEST

/* The course's gcc-1K.trace: 1000 micro-ops, 754 macro-ops as the reference parser counts
 * them, every dump line, din line and tag stream against the lines split here. */
START_TEST(test_real_gcc)
{
	const struct tm_format *f = fmt();
	size_t len;
	char *text = realtrace("gcc-1K.trace", &len);
	struct ref_line *lines;
	size_t n_lines = ref_split(text, len, &lines);
	ck_assert_uint_eq(n_lines, 1000);
	struct ref_views ref;
	ref_views(lines, n_lines, &ref);
	ck_assert_uint_eq(ref.macro_ops, 754);

	for (size_t max = 1; max <= 4096; max *= 8) {
		struct decoded d;
		decode_all(text, len, max, &d);
		ck_assert_uint_eq(d.n, 1000);
		ck_assert_msg(d.diag.count == 0, "errors: %.*s", (int)d.diag.len, d.diag.text);
		size_t macros = 0;
		for (size_t i = 0; i < d.n; i++) {
			macros += d.r[i].uop == 1;
			EXPECT(d.r[i].head.raw_len == lines[i].orig_len &&
				   text + d.r[i].head.raw_rel == lines[i].orig,
			       "record %zu: raw bytes", i);
		}
		ck_assert_uint_eq(macros, 754);
		size_t dump_len, din_len;
		char *dump = render_all(f->dump, text, len, &d, &dump_len);
		expect_same_text("dump.txt", ref.dump.b, ref.dump.len, dump, dump_len);
		char *din = render_all(din_view()->ops, text, len, &d, &din_len);
		expect_same_text("din", ref.din.b, ref.din.len, din, din_len);
		free(dump);
		free(din);
		decoded_free(&d);
	}
	ref_views_free(&ref);
	ref_free(lines, n_lines);
	free(text);
}
END_TEST

/* Its stats.json, with the values worked out from the file by splitting its lines. */
START_TEST(test_real_gcc_stats)
{
	size_t len;
	char *text = realtrace("gcc-1K.trace", &len);
	struct built b;
	char got[1024];
	build(&b, text, len);
	ck_assert_int_eq(get_int(b.root, "records"), 1000);
	ck_assert_int_eq(get_int(b.root, "errors"), 0);
	ck_assert(!json_object_get_boolean(get(b.root, "truncated")));
	json_object *cls = get(b.root, "classes");
	static const struct {
		const char *name;
		int64_t n;
	} classes[] = {
	    /* MOV 262 + MOVZX 30 + MOVSX 9 + XCHG 2; CMP 176 + TEST 48 + SET 6; J; PUSH 70 + POP
	     * 58; ADD 34 + LEA 13 + SUB 8; XOR 11 + AND 9 + OR 1 + NOT 1; SHL 9 + SHR 4 */
	    {"move", 303},  {"compare", 230},  {"cond_branch", 157}, {"stack", 128},
	    {"call", 40},   {"arith", 55},     {"ret", 27},	     {"jump", 17},
	    {"logic", 22},  {"shift", 13},     {"nop", 8},	     {"muldiv", 0},
	    {"string", 0},  {"float_simd", 0}, {"sync", 0},	     {"system", 0},
	    {"other", 0},   {"loads", 232},    {"stores", 108},	     {"branches", 193},
	    {"taken", 109}, {"not_taken", 84}, {"flags_read", 160},  {"flags_write", 214},
	};
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		ck_assert_msg(get_int(cls, classes[i].name) == classes[i].n, "class %s: %" PRId64,
			      classes[i].name, get_int(cls, classes[i].name));
	ck_assert_int_eq(json_object_object_length(cls), (int)(N_FAMILIES + N_TAGS));

	json_object *o = b.own;
	ck_assert_int_eq(get_int(o, "micro_ops"), 1000);
	ck_assert_int_eq(get_int(o, "macro_ops"), 754);
	ck_assert_int_eq(get_int(o, "uops_before_first_macro"), 0);
	object_text(get(o, "uops_per_macro"), got, sizeof(got));
	ck_assert_str_eq(got, "1=558,2=156,3=30,4=10");
	ck_assert_int_eq(get_int(o, "loads"), 232);
	ck_assert_int_eq(get_int(o, "stores"), 108);
	object_text(get(o, "branches"), got, sizeof(got));
	ck_assert_str_eq(got, "total=193,taken=109,not_taken=84");
	ck_assert_int_eq(get_int(o, "flags_read"), 160);
	ck_assert_int_eq(get_int(o, "flags_write"), 214);
	ck_assert_int_eq(get_int(o, "distinct_pcs"), 730);
	ck_assert_str_eq(get_str(o, "pc_min"), "0x446bd0");
	ck_assert_str_eq(get_str(o, "pc_max"), "0x63de85");
	ck_assert_int_eq(get_int(o, "data_lines_64b"), 46);
	ck_assert_int_eq(get_int(o, "data_pages_4k"), 23);
	ck_assert_str_eq(get_str(o, "address_min"), "0x7bb3f4");
	ck_assert_str_eq(get_str(o, "address_max"), "0x7fffe7ff120");
	object_text(get(o, "top_macro_opcodes"), got, sizeof(got));
	ck_assert_str_eq(got, "MOV=262,CMP=176,J=157,PUSH=70,POP=58,TEST=48,CALL=40,ADD=34,"
			      "MOVZX=30,RET=27");
	object_text(get(o, "top_micro_opcodes"), got, sizeof(got));
	ck_assert_str_eq(got, "LOAD=232,JMP_IMM=183,SUB_IMM=113,STORE=108,ADD_IMM=67,ADD=58,"
			      "SAVE_PC=58,SUB=51,AND=49,LEA=16");
	ck_assert_int_eq(get_int(o, "distinct_macro_opcodes"), 23);
	ck_assert_int_eq(get_int(o, "distinct_micro_opcodes"), 22);
	ck_assert_int_eq(get_int(o, "crlf_lines"), 0);
	unbuild(&b);
	free(text);
}
END_TEST

/* sjeng-1K.trace.gz, decompressed here: 1000 micro-ops, 750 macro-ops. */
START_TEST(test_real_sjeng)
{
	size_t len;
	char *text = realtrace("sjeng-1K.trace.gz", &len);
	struct built b;
	build(&b, text, len);
	ck_assert_int_eq(get_int(b.root, "records"), 1000);
	ck_assert_int_eq(get_int(b.root, "errors"), 0);
	ck_assert_int_eq(get_int(b.own, "micro_ops"), 1000);
	ck_assert_int_eq(get_int(b.own, "macro_ops"), 750);
	unbuild(&b);
	free(text);
}
END_TEST

/* Every view of a trace through the core, read as the mount reads it: gcc-1K.trace repeated
 * so that it spans several chunks, each decoded again from its checkpoint. */
START_TEST(test_views_through_core)
{
	const struct tm_format *f = fmt();
	size_t one_len;
	char *one = realtrace("gcc-1K.trace", &one_len);
	size_t copies = f->chunk_records * 2 / 1000 + 2, len = copies * one_len;
	char *text = malloc(len + 1);
	ck_assert_ptr_nonnull(text);
	for (size_t k = 0; k < copies; k++)
		memcpy(text + k * one_len, one, one_len);
	text[len] = 0;
	struct ref_line *lines;
	size_t n_lines = ref_split(text, len, &lines);
	struct ref_views ref;
	ref_views(lines, n_lines, &ref);
	ck_assert_uint_eq(ref.macro_ops, 754 * copies);

	struct mounted m;
	mount_trace(&m, "gcc.trace", text, len);
	size_t got_len;
	char *got = read_view(&m, "dump.txt", &got_len);
	expect_same_text("dump.txt", ref.dump.b, ref.dump.len, got, got_len);
	free(got);
	got = read_view(&m, "convert/gcc.din", &got_len);
	expect_same_text("convert/gcc.din", ref.din.b, ref.din.len, got, got_len);
	free(got);
	for (unsigned t = 0; t < N_TAGS; t++) {
		char path[64];
		snprintf(path, sizeof(path), "class/%s.txt", tags[t]);
		got = read_view(&m, path, &got_len);
		expect_same_text(path, ref.tag_txt[t].b ? ref.tag_txt[t].b : "", ref.tag_txt[t].len,
				 got, got_len);
		free(got);
		snprintf(path, sizeof(path), "class/%s.trace", tags[t]);
		got = read_view(&m, path, &got_len);
		expect_same_text(path, ref.tag_raw[t].b ? ref.tag_raw[t].b : "", ref.tag_raw[t].len,
				 got, got_len);
		free(got);
	}
	/* the families partition the trace: J lines are cond_branch, CALL lines call */
	struct text want_txt = {0}, want_raw = {0};
	size_t total = 0;
	for (unsigned c = 0; c < N_FAMILIES; c++) {
		char path[64];
		snprintf(path, sizeof(path), "class/%s.txt", families[c]);
		got = read_view(&m, path, &got_len);
		total += got_len;
		free(got);
	}
	ck_assert_uint_eq(total, ref.dump.len);
	const char *p = ref.dump.b;
	for (size_t i = 0; i < n_lines; i++) {
		const char *e = strchr(p, '\n') + 1;
		if (strcmp(lines[i].f[12], "J") == 0) {
			text_add(&want_txt, p, (size_t)(e - p));
			text_add(&want_raw, lines[i].orig, lines[i].orig_len);
		}
		p = e;
	}
	got = read_view(&m, "class/cond_branch.txt", &got_len);
	expect_same_text("class/cond_branch.txt", want_txt.b, want_txt.len, got, got_len);
	free(got);
	got = read_view(&m, "class/cond_branch.trace", &got_len);
	expect_same_text("class/cond_branch.trace", want_raw.b, want_raw.len, got, got_len);
	free(got);
	got = read_view(&m, "class/muldiv.trace", &got_len);
	ck_assert_uint_eq(got_len, 0);
	free(got);
	free(want_txt.b);
	free(want_raw.b);
	unmount_trace(&m);
	ref_views_free(&ref);
	ref_free(lines, n_lines);
	free(text);
	free(one);
}
END_TEST

/* convert/NAME.din of a small trace, written out by hand. */
static const char din_trace[] =
    /* starts mid-instruction: no fetch, the store */
    "2 400010 -1 -1 4 - - S 0 7fff0008 400014 0 PUSH STORE\n"
    "1 400014 -1 5 3 - - L -8 601000 400018 0 MOV LOAD\n"
    "1 400018 -1 -1 -1 R T - 16 0 40001a 400030 J JMP_IMM\n"
    "1 400030 3 4 -1 - - S 0 ffffffffffffff00 400034 0 MOV STORE\n"
    "2 400030 3 4 -1 W - - 0 0 400034 0 MOV ADD\n"
    "1 0 -1 -1 -1 - - L 0 0 2 0 NOP LOAD\n";
static const char din_expected[] = "1 7fff0008\n"
				   "2 400014\n0 601000\n"
				   "2 400018\n"
				   "2 400030\n1 ffffffffffffff00\n"
				   "2 0\n0 0\n";

START_TEST(test_din)
{
	struct decoded d;
	decode_all(din_trace, strlen(din_trace), 16, &d);
	ck_assert_uint_eq(d.n, 6);
	size_t len;
	char *din = render_all(din_view()->ops, din_trace, strlen(din_trace), &d, &len);
	expect_same_text("din", din_expected, strlen(din_expected), din, len);
	free(din);
	decoded_free(&d);

	struct mounted m;
	mount_trace(&m, "small.trace", din_trace, strlen(din_trace));
	din = read_view(&m, "convert/small.din", &len);
	expect_same_text("convert/small.din", din_expected, strlen(din_expected), din, len);
	free(din);
	char *dump = read_view(&m, "dump.txt", &len);
	static const char dump_expected[] =
	    "2 400010 -1 -1 4 - - S 0 7fff0008 400014 0 PUSH STORE 0\n"
	    "1 400014 -1 5 3 - - L -8 601000 400018 0 MOV LOAD 1\n"
	    "1 400018 -1 -1 -1 R T - 16 0 40001a 400030 J JMP_IMM 2\n"
	    "1 400030 3 4 -1 - - S 0 ffffffffffffff00 400034 0 MOV STORE 3\n"
	    "2 400030 3 4 -1 W - - 0 0 400034 0 MOV ADD 3\n"
	    "1 0 -1 -1 -1 - - L 0 0 2 0 NOP LOAD 4\n";
	expect_same_text("dump.txt", dump_expected, strlen(dump_expected), dump, len);
	free(dump);
	unmount_trace(&m);
}
END_TEST

/* stats.json of the same trace, worked out by hand. */
START_TEST(test_stats_small)
{
	struct built b;
	char got[1024];
	build(&b, din_trace, strlen(din_trace));
	json_object *o = b.own, *cls = get(b.root, "classes");
	ck_assert_int_eq(get_int(o, "micro_ops"), 6);
	ck_assert_int_eq(get_int(o, "macro_ops"), 4);
	ck_assert_int_eq(get_int(o, "uops_before_first_macro"), 1);
	object_text(get(o, "uops_per_macro"), got, sizeof(got));
	ck_assert_str_eq(got, "1=3,2=1");
	ck_assert_int_eq(get_int(o, "loads"), 2);
	ck_assert_int_eq(get_int(o, "stores"), 2);
	object_text(get(o, "branches"), got, sizeof(got));
	ck_assert_str_eq(got, "total=1,taken=1,not_taken=0");
	ck_assert_int_eq(get_int(o, "flags_read"), 1);
	ck_assert_int_eq(get_int(o, "flags_write"), 1);
	ck_assert_int_eq(get_int(o, "distinct_pcs"), 5);
	ck_assert_str_eq(get_str(o, "pc_min"), "0x0");
	ck_assert_str_eq(get_str(o, "pc_max"), "0x400030");
	/* lines 0x1fffc00, 0x18040, 0x3fffffffffffffc, 0; pages 0x7fff0, 0x601, 0xfffffffffffff,
	 * 0 */
	ck_assert_int_eq(get_int(o, "data_lines_64b"), 4);
	ck_assert_int_eq(get_int(o, "data_pages_4k"), 4);
	ck_assert_str_eq(get_str(o, "address_min"), "0x0");
	ck_assert_str_eq(get_str(o, "address_max"), "0xffffffffffffff00");
	object_text(get(o, "top_macro_opcodes"), got, sizeof(got));
	ck_assert_str_eq(got, "MOV=3,J=1,NOP=1,PUSH=1");
	object_text(get(o, "top_micro_opcodes"), got, sizeof(got));
	ck_assert_str_eq(got, "LOAD=2,STORE=2,ADD=1,JMP_IMM=1");
	ck_assert_int_eq(get_int(o, "distinct_macro_opcodes"), 4);
	ck_assert_int_eq(get_int(o, "distinct_micro_opcodes"), 4);
	ck_assert_int_eq(get_int(cls, "stack"), 1);
	ck_assert_int_eq(get_int(cls, "move"), 3);
	ck_assert_int_eq(get_int(cls, "cond_branch"), 1);
	ck_assert_int_eq(get_int(cls, "nop"), 1);
	ck_assert_int_eq(get_int(cls, "loads"), 2);
	ck_assert_int_eq(get_int(cls, "taken"), 1);
	ck_assert_int_eq(get_int(cls, "not_taken"), 0);
	ck_assert_int_eq(get_int(b.root, "errors"), 0);
	unbuild(&b);

	/* an empty trace: counts 0, no ranges */
	build(&b, "", 0);
	ck_assert_int_eq(get_int(b.own, "micro_ops"), 0);
	ck_assert(json_object_is_type(get(b.own, "pc_min"), json_type_null));
	ck_assert(json_object_is_type(get(b.own, "address_max"), json_type_null));
	ck_assert_int_eq(json_object_object_length(get(b.own, "uops_per_macro")), 0);
	unbuild(&b);

	/* a macro-op of 70 micro-ops and one of 63: the last bins */
	struct text t = {0};
	for (int k = 1; k <= 70; k++)
		text_addf(&t, "%d 10 -1 -1 -1 - - - 0 0 14 0 REP_MOVSB LOAD\n", k);
	for (int k = 1; k <= 63; k++)
		text_addf(&t, "%d 20 -1 -1 -1 - - - 0 0 24 0 REP_STOSB STORE\n", k);
	build(&b, t.b, t.len);
	object_text(get(b.own, "uops_per_macro"), got, sizeof(got));
	ck_assert_str_eq(got, "63=1,64+=1");
	ck_assert_int_eq(get_int(get(b.root, "classes"), "string"), 133);
	unbuild(&b);
	free(t.b);
}
END_TEST

/* Hostile traces: the name tables and the data footprint stop growing, and say so. */
START_TEST(test_stats_limits)
{
	struct text t = {0};
	struct built b;
	for (int k = 0; k < 5000; k++)
		text_addf(&t, "1 10 -1 -1 -1 - - - 0 0 14 0 N%d LOAD\n", k);
	build(&b, t.b, t.len);
	ck_assert_int_eq(get_int(b.own, "distinct_macro_opcodes"), 4096);
	ck_assert_int_eq(get_int(b.own, "distinct_micro_opcodes"), 1);
	ck_assert_int_eq(get_int(get(b.own, "top_micro_opcodes"), "LOAD"), 5000);
	ck_assert_int_eq(json_object_object_length(get(b.own, "top_macro_opcodes")), 10);
	ck_assert_int_eq(get_int(get(b.root, "classes"), "other"), 5000);
	expect_errors(&b, "more than 4096 distinct opcode names: 904 macro and 0 "
			  "micro opcodes left out of top_macro_opcodes and "
			  "top_micro_opcodes\n");
	unbuild(&b);
	free(t.b);

	/* loads 2 MiB apart: one footprint block each */
	memset(&t, 0, sizeof(t));
	for (int k = 0; k < 16400; k++)
		text_addf(&t, "1 10 -1 -1 -1 - - L 0 %" PRIx64 " 14 0 MOV LOAD\n",
			  (uint64_t)k << 21);
	build(&b, t.b, t.len);
	ck_assert_int_eq(get_int(b.own, "data_lines_64b"), 16384);
	ck_assert_int_eq(get_int(b.own, "loads"), 16400);
	ck_assert_str_eq(get_str(b.own, "address_max"), "0x801e00000");
	expect_errors(&b, "data addresses in more than 16384 regions of 2 MiB: "
			  "data_lines_64b and data_pages_4k are lower bounds\n");
	unbuild(&b);
	free(t.b);
}
END_TEST

/* Bad input: the documented errors.txt lines. G is a good line of 37 bytes. */
#define G  "1 10 -1 -1 13 - - - 0 0 14 0 SET ADD\n"
#define G2 "2 10 -1 -1 13 R - - 1 0 14 0 SET ADD_IMM\n"

static const struct bad_row {
	const char *what;
	const char *data;
	size_t len; /* 0: strlen(data) */
	const char *errors;
	unsigned records;
	int truncated;
} bad_rows[] = {
    {"13 fields", "1 10 -1 -1 13 - - - 0 0 14 0 SET\n" G, 0,
     "line 1: 13 fields, expected 14: line skipped\n", 1, 0},
    {"15 fields", G "1 10 -1 -1 13 - - - 0 0 14 0 SET ADD EXTRA\n" G, 0,
     "line 2: 15 fields, expected 14: line skipped\n", 2, 0},
    {"the spec's header line",
     "Uop PC Src1 Src2 Dest Flags Branch Ld/St Immediate Mem. Address Fallthrough PC Target PC "
     "Macro Opcode Micro Opcode\n" G,
     0, "line 1: 19 fields, expected 14: line skipped\n", 1, 0},
    {"the spec's column numbers", "1 2 3 4 5 6 7 8 9 10 11 12 13 14\n" G, 0,
     "line 1: field 6 (Flags) \"6\" is not one of R, W, -: line skipped\n", 1, 0},
    {"Src1 not a number", G "1 10 x1 -1 13 - - - 0 0 14 0 SET ADD\n", 0,
     "line 2: field 3 (Src1) \"x1\" is not a decimal number: line skipped\n", 1, 0},
    {"Uop a lone sign", "- 10 -1 -1 13 - - - 0 0 14 0 SET ADD\n", 0,
     "line 1: field 1 (Uop) \"-\" is not a decimal number: line skipped\n", 0, 0},
    {"PC not hex", "1 48g1de -1 -1 13 - - - 0 0 14 0 SET ADD\n", 0,
     "line 1: field 2 (PC) \"48g1de\" is not a hexadecimal number: line skipped\n", 0, 0},
    {"PC a lone 0x", "1 0x -1 -1 13 - - - 0 0 14 0 SET ADD\n", 0,
     "line 1: field 2 (PC) \"0x\" is not a hexadecimal number: line skipped\n", 0, 0},
    {"Dest past 32 bits", "1 10 -1 -1 2147483648 - - - 0 0 14 0 SET ADD\n", 0,
     "line 1: field 5 (Dest) \"2147483648\" is out of range (32-bit signed): line skipped\n", 0, 0},
    {"Src2 below 32 bits", "1 10 -1 -2147483649 1 - - - 0 0 14 0 SET ADD\n", 0,
     "line 1: field 4 (Src2) \"-2147483649\" is out of range (32-bit signed): line skipped\n", 0,
     0},
    {"Immediate past 64 bits", "1 10 -1 -1 1 - - - 9223372036854775808 0 14 0 SET ADD\n", 0,
     "line 1: field 9 (Immediate) \"9223372036854775808\" is out of range (64-bit signed): line "
     "skipped\n",
     0, 0},
    {"Immediate of 30 digits", "1 10 -1 -1 1 - - - 123456789012345678901234567890 0 14 0 A B\n", 0,
     "line 1: field 9 (Immediate) \"123456789012345678901234...\" is out of range (64-bit "
     "signed): line skipped\n",
     0, 0},
    {"address of 17 digits", "1 10 -1 -1 1 - - L 0 10000000000000000 14 0 SET ADD\n", 0,
     "line 1: field 10 (Mem. Address) \"10000000000000000\" is out of range (more than 64 "
     "bits): line skipped\n",
     0, 0},
    {"Target not hex", "1 10 -1 -1 1 - - - 0 0 14 -5 SET ADD\n", 0,
     "line 1: field 12 (Target PC) \"-5\" is not a hexadecimal number: line skipped\n", 0, 0},
    {"Flags X", "1 10 -1 -1 1 X - - 0 0 14 0 SET ADD\n", 0,
     "line 1: field 6 (Flags) \"X\" is not one of R, W, -: line skipped\n", 0, 0},
    {"Branch TT", "1 10 -1 -1 1 - TT - 0 0 14 0 SET ADD\n", 0,
     "line 1: field 7 (Branch) \"TT\" is not one of T, N, -: line skipped\n", 0, 0},
    {"Ld/St lower case", "1 10 -1 -1 1 - - l 0 0 14 0 SET ADD\n", 0,
     "line 1: field 8 (Ld/St) \"l\" is not one of L, S, -: line skipped\n", 0, 0},
    {"NUL byte", G "1 10 -1 -1 13 - - - 0 0 14 0 SET AD\0D\n" G, 37 + 38 + 37,
     "line 2: NUL byte at column 36: line skipped\n", 2, 0},
    {"control byte", "1 10 -1 -1 13 - - - 0 0 14 0 SE\x01T ADD\n", 0,
     "line 1: byte 0x01 at column 32: line skipped\n", 0, 0},
    {"lone CR", "1 10 -1 -1 13 - - - 0 0\r 14 0 SET ADD\n", 0,
     "line 1: byte 0x0d at column 24: line skipped\n", 0, 0},
    {"non-ASCII name", "1 10 -1 -1 13 - - - 0 0 14 0 S\xc3\xa9T ADD\n", 0,
     "line 1: byte 0xc3 at column 31: line skipped\n", 0, 0},
    {"empty line", G "\n" G, 0, "line 2: empty line: line skipped\n", 2, 0},
    {"blank line", " \t \n" G, 0, "line 1: empty line: line skipped\n", 1, 0},
    {"bad lines keep their numbers", G "x\n" G G2 "y y\n" G, 0,
     "line 2: 1 fields, expected 14: line skipped\nline 5: 2 fields, expected 14: line "
     "skipped\n",
     4, 0},
    {"CR LF",
     "1 10 -1 -1 13 - - - 0 0 14 0 SET ADD\r\n" G "1 10 -1 -1 13 - - - 0 0 14 0 SET "
     "ADD\r\n2 10 -1 -1 13 R - - 1 0 14 0 SET ADD_IMM \r\n",
     0,
     "line 1: line ends in CR LF: kept, CR dropped (stats.json counts such lines in "
     "crlf_lines)\n3 lines end in CR LF (kept, CR dropped)\n",
     4, 0},
    {"no newline at the end", G "2 10 -1 -1 13 R - - 1 0 14 0 SET ADD_IMM", 0,
     "line 2: no newline at the end of the trace: line kept\n", 2, 0},
    {"cut at the end", G "2 10 -1 -1", 0,
     "offset 37: line 2 is cut by the end of the trace (4 fields, expected 14): not decoded\n", 1,
     1},
    {"cut inside a field", G "2 10 -1 -1 13 R - - 1 0 1", 0,
     "offset 37: line 2 is cut by the end of the trace (11 fields, expected 14): not decoded\n", 1,
     1},
    {"cut inside the last name", G "2 10 -1 -1 13 R - - 1 0 14 0 SET ADD_IM", 0,
     "line 2: no newline at the end of the trace: line kept\n", 2, 0},
    {"empty trace", "", 0, "", 0, 0},
    {"only a newline", "\n", 0, "line 1: empty line: line skipped\n", 0, 0},
};

START_TEST(test_bad_input)
{
	const struct bad_row *row = &bad_rows[_i];
	size_t len = row->len ? row->len : strlen(row->data);
	const char *errors = row->errors;
	unsigned records = row->records;
	int truncated = row->truncated;
	struct built b;
	build(&b, row->data, len);
	ck_assert_msg(b.ix->errors_len == strlen(errors) &&
			  memcmp(errors_of(&b), errors, b.ix->errors_len) == 0,
		      "%s: errors.txt \"%.*s\", expected \"%s\"", row->what, (int)b.ix->errors_len,
		      errors_of(&b), errors);
	ck_assert_msg(tm_index_records(b.ix) == records, "%s: %" PRIu64 " records", row->what,
		      tm_index_records(b.ix));
	ck_assert_msg(b.ix->truncated == (truncated != 0), "%s: truncated %d", row->what,
		      b.ix->truncated);
	ck_assert_int_eq(get_int(b.root, "bytes"), (int64_t)len);
	unbuild(&b);

	/* decoding alone, one record per call: the same lines, less the whole-trace notes */
	struct decoded d;
	decode_all(row->data, len, 1, &d);
	ck_assert_uint_eq(d.n, records);
	ck_assert_msg(d.diag.len <= strlen(errors) &&
			  (d.diag.len == 0 || memcmp(d.diag.text, errors, d.diag.len) == 0),
		      "%s, decoded alone: \"%.*s\", expected \"%s\"", row->what, (int)d.diag.len,
		      d.diag.text, errors);
	decoded_free(&d);
}
END_TEST

/* Lines of CIS501_MAX_LINE (4096) bytes and around it. */
static char *line_of_len(size_t text_len, const char *ending)
{
	static const char head[] = "1 10 -1 -1 13 - - - 0 0 14 0 SET ";
	size_t h = strlen(head);
	ck_assert_uint_gt(text_len, h + 1);
	char *s = malloc(text_len + strlen(ending) + 1);
	ck_assert_ptr_nonnull(s);
	memcpy(s, head, h);
	memset(s + h, 'X', text_len - h);
	strcpy(s + text_len, ending);
	return s;
}

START_TEST(test_long_lines)
{
	static const struct {
		size_t text_len;
		const char *ending;
		int kept;
	} rows[] = {
	    {4096, "\n", 1},   {4097, "\n", 0}, {4096, "\r\n", 1}, {4097, "\r\n", 0},
	    {100000, "\n", 0}, {4096, "", 1},	{4097, "", 0},	   {300000, "", 0},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *line = line_of_len(rows[i].text_len, rows[i].ending);
		struct text t = {0};
		const char *errors;
		char want[256];
		text_add(&t, G, strlen(G));
		text_add(&t, line, strlen(line));
		if (*rows[i].ending)
			text_add(&t, G, strlen(G));
		if (!rows[i].kept)
			errors = "line 2: longer than 4096 bytes: line skipped\n";
		else if (!*rows[i].ending)
			errors = "line 2: no newline at the end of the trace: line kept\n";
		else if (strcmp(rows[i].ending, "\r\n") == 0)
			errors = "line 2: line ends in CR LF: kept, CR dropped (stats.json counts "
				 "such lines in crlf_lines)\n1 lines end in CR LF (kept, CR "
				 "dropped)\n";
		else
			errors = "";
		snprintf(want, sizeof(want), "%s", errors);
		unsigned records = 1 + (*rows[i].ending != 0) + (unsigned)rows[i].kept;

		struct built b;
		build(&b, t.b, t.len);
		ck_assert_msg(b.ix->errors_len == strlen(want) &&
				  memcmp(errors_of(&b), want, b.ix->errors_len) == 0,
			      "row %zu: errors.txt \"%.*s\", expected \"%s\"", i,
			      (int)b.ix->errors_len, errors_of(&b), want);
		ck_assert_uint_eq(tm_index_records(b.ix), records);
		unbuild(&b);

		/* the same records however the bytes come: all at once, or growing by 1000 */
		struct decoded whole, inc;
		decode_all(t.b, t.len, 64, &whole);
		ck_assert_uint_eq(whole.n, records);
		decoded_init(&inc);
		void *s = new_state();
		size_t pos = 0;
		for (size_t end = 0; end < t.len; end += 1000)
			pos +=
			    decode_step(s, (const uint8_t *)t.b, pos, end, false, 64, &inc, true);
		for (;;) {
			size_t before = inc.n;
			size_t used =
			    decode_step(s, (const uint8_t *)t.b, pos, t.len, true, 64, &inc, true);
			pos += used;
			if (!used && inc.n == before)
				break;
		}
		ck_assert_uint_eq(inc.n, whole.n);
		for (size_t k = 0; k < whole.n; k++)
			ck_assert(same_record(&inc.r[k], &whole.r[k]));
		ck_assert_uint_eq(inc.diag.len, whole.diag.len);
		ck_assert(!inc.diag.len ||
			  memcmp(inc.diag.text, whole.diag.text, inc.diag.len) == 0);
		free(s);
		decoded_free(&whole);
		decoded_free(&inc);
		free(t.b);
		free(line);
	}
}
END_TEST

/* A trace with every kind of line, for the checkpoint contract. */
static void mixed_trace(struct text *t)
{
	memset(t, 0, sizeof(*t));
	text_adds(t, G2); /* mid-instruction start */
	text_adds(t, G);
	text_adds(t, "1 10 x -1 13 - - - 0 0 14 0 SET ADD\n");
	text_adds(t, "1 20 -1 -1 13 - - - 0 0 24 0 CMP LOAD\r\n");
	char *long_line = line_of_len(6000, "\n");
	text_add(t, long_line, strlen(long_line));
	free(long_line);
	text_adds(t, "\n");
	text_adds(t, "1 30 -1 -1 13 W T S -7 ffff 34 40 JMP STORE\n");
	text_adds(t, G2);
	text_adds(t, "1 40\t-1 -1 13 - N L 0 abc 44 40 J LOAD\n");
	for (int k = 0; k < 30; k++)
		text_addf(t, "%d %x %d -1 13 - - %c %d %x 50 0 MOV LOAD\n", 1 + k % 3, 0x50 + k, k,
			  k % 2 ? 'L' : '-', -k, 0x1000 + 8 * k);
}

/* The checkpoint contract: growing prefixes without the end consume only complete lines (and
 * the skipped part of a long one); a restart from any state copy gives the same records; a
 * split anywhere gives the same records and the same reports. */
START_TEST(test_checkpoints)
{
	const struct tm_format *f = fmt();
	struct text t;
	mixed_trace(&t);
	const uint8_t *b = (const uint8_t *)t.b;
	struct decoded ref;
	decode_all(b, t.len, 5000, &ref);
	ck_assert_uint_eq(ref.n, 2 + 1 + 1 + 2 + 30);

	/* byte by byte */
	struct decoded inc;
	decoded_init(&inc);
	void *s = new_state();
	size_t pos = 0;
	for (size_t end = 0; end <= t.len; end++) {
		pos += decode_step(s, b, pos, end, false, 16, &inc, true);
		EXPECT(inc.last_ret == -EAGAIN, "prefix %zu: returned %d", end, inc.last_ret);
		/* nothing consumed past the last newline, except inside the long line */
		const void *nl = memrchr(b, '\n', end);
		size_t complete = nl ? (size_t)((const uint8_t *)nl - b) + 1 : 0;
		EXPECT(pos == complete || (pos > complete && end - complete > 4096),
		       "prefix %zu: %zu consumed, complete lines end at %zu", end, pos, complete);
	}
	ck_assert_uint_eq(decode_step(s, b, pos, t.len, true, 16, &inc, true), 0);
	ck_assert_int_eq(tm_diag_finish(&inc.diag), 0);
	ck_assert_uint_eq(inc.n, ref.n);
	for (size_t i = 0; i < ref.n; i++)
		EXPECT(same_record(&inc.r[i], &ref.r[i]), "record %zu differs byte by byte", i);
	ck_assert_uint_eq(inc.diag.len, ref.diag.len);
	ck_assert(memcmp(inc.diag.text, ref.diag.text, ref.diag.len) == 0);
	decoded_free(&inc);
	free(s);

	/* split in two anywhere */
	for (size_t cut = 0; cut <= t.len; cut += 7) {
		decoded_init(&inc);
		s = new_state();
		pos = decode_step(s, b, 0, cut, false, 5000, &inc, true);
		for (;;) {
			size_t before = inc.n,
			       used = decode_step(s, b, pos, t.len, true, 5000, &inc, true);
			pos += used;
			if (!used && inc.n == before)
				break;
		}
		ck_assert_uint_eq(inc.n, ref.n);
		for (size_t i = 0; i < ref.n; i++)
			EXPECT(same_record(&inc.r[i], &ref.r[i]), "cut %zu: record %zu differs",
			       cut, i);
		EXPECT(inc.diag.len == ref.diag.len &&
			   memcmp(inc.diag.text, ref.diag.text, ref.diag.len) == 0,
		       "cut %zu: reports differ", cut);
		decoded_free(&inc);
		free(s);
	}

	/* one record per call, keeping a copy of the state before each; restarts from them */
	size_t cap = ref.n + 16, n_steps = 0;
	uint8_t *states = malloc(cap * f->state_size);
	size_t *offs = malloc(cap * sizeof(*offs)), *firsts = malloc(cap * sizeof(*firsts));
	ck_assert(states && offs && firsts);
	decoded_init(&inc);
	s = new_state();
	pos = 0;
	for (;;) {
		ck_assert_uint_lt(n_steps, cap);
		memcpy(states + n_steps * f->state_size, s, f->state_size);
		offs[n_steps] = pos;
		firsts[n_steps] = inc.n;
		n_steps++;
		size_t before = inc.n, used = decode_step(s, b, pos, t.len, true, 1, &inc, false);
		pos += used;
		if (!used && inc.n == before)
			break;
	}
	ck_assert_uint_eq(inc.n, ref.n);
	for (size_t k = 0; k < n_steps; k++) {
		void *copy = malloc(f->state_size);
		memcpy(copy, states + k * f->state_size, f->state_size);
		struct decoded rest;
		decoded_init(&rest);
		size_t p = offs[k];
		for (;;) {
			size_t before = rest.n,
			       used = decode_step(copy, b, p, t.len, true, 1 + k % 5, &rest, false);
			p += used;
			if (!used && rest.n == before)
				break;
		}
		EXPECT(rest.n == ref.n - firsts[k], "restart %zu: %zu records", k, rest.n);
		for (size_t i = 0; i < rest.n; i++)
			EXPECT(same_record(&rest.r[i], &ref.r[firsts[k] + i]),
			       "restart at %zu: record %zu differs", offs[k], firsts[k] + i);
		decoded_free(&rest);
		free(copy);
	}
	free(states);
	free(offs);
	free(firsts);
	decoded_free(&inc);
	free(s);
	decoded_free(&ref);
	free(t.b);
}
END_TEST

/* The trace cut at every byte, through the core: no crash, the lines before the cut, the last
 * one kept or reported, dump.txt the matching prefix of the whole trace's. */
START_TEST(test_truncation)
{
	struct text t;
	mixed_trace(&t);
	struct decoded whole;
	decode_all(t.b, t.len, 5000, &whole);
	size_t whole_dump_len;
	char *whole_dump = render_all(fmt()->dump, t.b, t.len, &whole, &whole_dump_len);
	for (size_t cut = 0; cut <= t.len; cut += cut < 400 ? 1 : 61) {
		/* the records of complete lines */
		size_t complete = 0;
		while (complete < whole.n &&
		       whole.r[complete].head.raw_rel + whole.r[complete].head.raw_len <= cut)
			complete++;
		struct built b;
		build(&b, t.b, cut);
		uint64_t n = tm_index_records(b.ix);
		EXPECT(n == complete || n == complete + 1,
		       "cut %zu: %" PRIu64 " records, %zu complete", cut, n, complete);
		bool mid_line = cut && t.b[cut - 1] != '\n';
		if (n == complete + 1)
			EXPECT(memmem(errors_of(&b), b.ix->errors_len, "no newline at the end", 21),
			       "cut %zu: a cut line kept without a report", cut);
		EXPECT(!b.ix->truncated || mid_line, "cut %zu: truncated at a line end", cut);
		unbuild(&b);

		struct mounted m;
		mount_trace(&m, "t.trace", t.b, cut);
		size_t len;
		char *dump = read_view(&m, "dump.txt", &len);
		/* the complete records' lines are a prefix of the whole dump */
		size_t prefix = 0;
		for (size_t i = 0; i < complete; i++)
			prefix += whole.r[i].dump_len;
		EXPECT(len >= prefix && memcmp(dump, whole_dump, prefix) == 0,
		       "cut %zu: dump.txt is not the whole trace's up to the cut", cut);
		free(dump);
		char *raw = read_view(&m, "class/loads.trace", &len);
		free(raw);
		unmount_trace(&m);
	}
	free(whole_dump);
	decoded_free(&whole);
	free(t.b);
}
END_TEST

START_TEST(test_probe)
{
	const struct tm_format *f = fmt();
	size_t len;
	char *real = realtrace("gcc-1K.trace", &len);
	size_t head = len < 4096 ? len : 4096;
	/* two lines, the second without its newline */
	size_t two_lines = (size_t)((char *)memchr(strchr(real, '\n') + 1, '\n', len) - real);
	static const char garbage[] = "hello world\nthis is not a trace\n";
	static const char half[] = "1 10 -1 -1 13 - - - 0 0 14 0 SET ADD\n"
				   "1 10 -1 -1 13 - - - 0 0 14 0 SET ADD\n"
				   "# a comment\n";
	char *long_line = line_of_len(4096, "");
	const struct {
		const char *name;
		const char *head;
		size_t len;
		int score;
	} rows[] = {
	    {"gcc-1K.trace", real, head, 95},
	    {"gcc-1K.trace.gz", real, head, 95},
	    {"gcc.dat", real, head, 95},
	    {"gcc.dat", real, two_lines, 95},	   /* the whole file: its last line counts */
	    {"gcc.dat", real, two_lines + 30, 60}, /* its third line, cut, does not parse */
	    {"x.trace", garbage, sizeof(garbage) - 1, 15},
	    {"x.txt", garbage, sizeof(garbage) - 1, 0},
	    {"x.trace", NULL, 0, 50},
	    {"x.trace.gz", NULL, 0, 50},
	    {"x.trace", "", 0, 50},
	    {"x.dat", NULL, 0, 0},
	    {"x.trace", half, sizeof(half) - 1, 80},
	    {"x.dat", half, sizeof(half) - 1, 60},
	    {"x.trace", long_line, 4096, 15}, /* no complete line */
	    {"trace", garbage, sizeof(garbage) - 1, 0},
	    {"x.traces", NULL, 0, 0},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int score = f->probe(rows[i].name, (const uint8_t *)rows[i].head, rows[i].len);
		ck_assert_msg(score == rows[i].score, "row %zu (%s): %d, expected %d", i,
			      rows[i].name, score, rows[i].score);
	}
	ck_assert_ptr_eq(tm_format_detect("gcc-1K.trace", (const uint8_t *)real, head), f);
	ck_assert_ptr_eq(tm_format_detect("gcc.log", (const uint8_t *)real, head), f);
	ck_assert_ptr_eq(tm_format_detect("x.trace", NULL, 0), f);
	ck_assert_ptr_null(
	    tm_format_detect("x.log", (const uint8_t *)garbage, sizeof(garbage) - 1));
	free(long_line);
	free(real);
}
END_TEST

static Suite *cis501_suite(void)
{
	Suite *s = suite_create("cis501");
	TCase *tc = tcase_create("decode");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_layout);
	tcase_add_test(tc, test_families);
	tcase_add_loop_test(tc, test_fields, 0, (int)(sizeof(field_rows) / sizeof(field_rows[0])));
	tcase_add_loop_test(tc, test_bad_input, 0, (int)(sizeof(bad_rows) / sizeof(bad_rows[0])));
	tcase_add_test(tc, test_long_lines);
	tcase_add_test(tc, test_checkpoints);
	tcase_add_test(tc, test_probe);
	suite_add_tcase(s, tc);

	tc = tcase_create("real");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_real_gcc);
	tcase_add_test(tc, test_real_gcc_stats);
	tcase_add_test(tc, test_real_sjeng);
	tcase_add_test(tc, test_views_through_core);
	suite_add_tcase(s, tc);

	tc = tcase_create("views");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_din);
	tcase_add_test(tc, test_stats_small);
	tcase_add_test(tc, test_stats_limits);
	tcase_add_test(tc, test_truncation);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cis501_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
