/* The TT6 and TT6E views (src/formats/tt6_views.c) through the format table and the reader:
 * dump lines, their lengths, class streams and the conversions, against values worked out here
 * from doc/formats.md and doc/views.md. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "mem_source.h"
#include "view_check.h"
#include "tracemount/context.h"
#include "tracemount/diag.h"
#include "tracemount/index.h"
#include "tracemount/reader.h"
#include "tracemount/registry.h"
#include "tracemount/trace.h"
#include "tracemount/view.h"

#include "tt6_trace.h"
/* Rendering. */

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
	out[n] = '\0'; /* a string too, for sscanf; n <= m, which EXPECT checked */
	*len = n;
	return out;
}

/* The dump lines of the records of c whose class is in mask, concatenated. */
static char *dump_text(const struct tm_format *f, const struct tm_chunk *c, uint64_t mask,
		       size_t *len)
{
	size_t cap = 4096, n = 0;
	char *text = malloc(cap);
	ck_assert_ptr_nonnull(text);
	for (size_t i = 0; i < c->n_records; i++) {
		const struct tm_record *r = tm_chunk_rec(c, i);
		if (!(mask >> r->cls & 1))
			continue;
		size_t l;
		char *line = render_one(f->dump, c, i, &l);
		if (n + l > cap) {
			cap = 2 * (n + l);
			text = realloc(text, cap);
			ck_assert_ptr_nonnull(text);
		}
		memcpy(text + n, line, l);
		n += l;
		free(line);
	}
	*len = n;
	return text;
}

/* doc/views.md's example, line by line. */
START_TEST(test_dump_example)
{
	static const char *const lines[] = {
	    "           0 00001000 00001000 -                                    initial_pc\n",
	    "           0 00001000 7c0802a6 mflr r0                              compute\n",
	    "           1 00001004 48000011 bl 0x1014                            flow "
	    "next=00001014\n",
	    "           2 00001014 80610008 lwz r3, 8(r1)                        memory "
	    "ea=00fff008 "
	    "size=  4\n",
	    "           3 00001018 7c64042a lswx r3, r4, r0                      memext "
	    "ea=00fff100 "
	    "size= 13 xer=0000000d\n",
	    "           4 0000101c 00200002 escape sync_signal                   sync "
	    "addr=00a0b0c0 "
	    "count=00000001\n",
	    "           4 0000101c 00010001 escape data_address                  escape code=0x01 "
	    "words=1 00fff200\n",
	};
	for (int tt6e = 0; tt6e <= 1; tt6e++) {
		const struct tm_format *f = fmt_of(tt6e);
		struct trace t;
		struct decoded d;
		tb_init(&t, 0x1000);
		tb_insn(&t, C_COMPUTE, W_MFLR, 0, 0);
		tb_insn(&t, C_FLOW, W_BL, 0x1014, 0);
		tb_insn(&t, C_MEMORY, W_LWZ, 0x00fff008, 0);
		tb_insn(&t, C_MEMEXT, W_LSWX, 0x00fff100, 0x0000000d);
		tb_esc(&t, 0x20, 2, 0x00a0b0c0u, 1u);
		tb_esc(&t, 0x01, 1, 0x00fff200u);
		decode_all(f, t.b, t.len, 100, &d);
		struct tm_chunk c = chunk_of(f, t.b, t.len, &d);
		ck_assert_uint_eq(d.n, 7);
		for (size_t i = 0; i < d.n; i++) {
			size_t len;
			char *line = render_one(f->dump, &c, i, &len);
			ck_assert_msg(len == strlen(lines[i]) && memcmp(line, lines[i], len) == 0,
				      "line %zu: \"%.*s\", expected \"%s\"", i, (int)len, line,
				      lines[i]);
			size_t fixed = f->dump->fixed_len ? f->dump->fixed_len(d.r[i].head.cls) : 0;
			ck_assert(fixed == 0 || fixed == len);
			free(line);
		}
		decoded_free(&d);
		tb_free(&t);
	}
}
END_TEST

/* More exact lines: the other escape names, wide codes, not-taken branches, sizes, ctl=, and
 * sync.txt. The lines' columns are the TT6 model's reading of them (tt6_expect.py columns),
 * which knows where doc/views.md puts each: here only their values. */

START_TEST(test_dump_more)
{
	static const struct {
		uint64_t num;
		uint32_t pc, word;
		const char *text, *rest;
	} lines[] = {
	    {0, 0xfffffff8, 0xfffffff8, "-", "initial_pc"},
	    {0, 0xfffffff8, 0x4bfffff0, "b 0xffffffe8", "flow next=ffffffe8"},
	    {1, 0xffffffe8, 0x00000000, "escape segment_register", "escape code=0x00 words=0"},
	    {1, 0xffffffe8, 0x03ff0002, "escape unknown",
	     "escape code=0x3ff words=2 00000001 00000002"},
	    {1, 0xffffffe8, 0x00220000, "escape sync_reserved", "escape code=0x22 words=0"},
	    {1, 0xffffffe8, 0x00110001, "escape dcbx_address", "escape code=0x11 words=1 0000abcd"},
	    {1, 0xffffffe8, 0x00300002, "escape sync_wait", "sync addr=00001230 count=0000002a"},
	    {1, 0xffffffe8, W_BNE, "bne 0xfffffff0", "flow next=ffffffec"},
	    {2, 0xffffffec, W_DST, "dst r0, r8, 0", "memext ea=00005000 size=  0 ctl=01020304"},
	    {3, 0xfffffff0, W_LMW, "lmw r30, -8(r1)", "memory ea=7ffefff8 size=  8"},
	    {4, 0xfffffff4, W_STSWI, "stswi r3, r4, 0", "memory ea=00000010 size= 32"},
	    {5, 0xfffffff8, 0x00050001, "escape next_instruction_real",
	     "escape code=0x05 words=1 00000000"},
	    {5, 0xfffffff8, 0x00040000, "escape data_address_real", "escape code=0x04 words=0"},
	    {5, 0xfffffff8, 0x00030000, "escape branch_target_real", "escape code=0x03 words=0"},
	    {5, 0xfffffff8, 0x00020000, "escape condition_register", "escape code=0x02 words=0"},
	    {5, 0xfffffff8, 0x00210002, "escape sync_broadcast",
	     "sync addr=00000000 count=00000000"},
	    {5, 0xfffffff8, 0x00310002, "escape sync_try_wait",
	     "sync addr=ffffffff count=ffffffff"},
	    {999999999999ull, 0x100, W_LI, "li r3, 5", "compute"},
	};
	const struct tm_format *f = fmt_of(0);
	struct trace t;
	struct decoded d;
	tb_init(&t, 0xfffffff8);
	tb_insn(&t, C_FLOW, 0x4bfffff0, 0xffffffe8, 0);
	tb_esc(&t, 0x00, 0);
	tb_esc(&t, 0x3ff, 2, 1u, 2u);
	tb_esc(&t, 0x22, 0);
	tb_esc(&t, 0x11, 1, 0xabcdu);
	tb_esc(&t, 0x30, 2, 0x1230u, 42u);
	tb_insn(&t, C_FLOW, W_BNE, 0xffffffec, 0);
	tb_insn(&t, C_MEMEXT, W_DST, 0x5000, 0x01020304);
	tb_insn(&t, C_MEMORY, W_LMW, 0x7ffefff8, 0);
	tb_insn(&t, C_MEMORY, W_STSWI, 0x10, 0);
	tb_esc(&t, 0x05, 1, 0u);
	tb_esc(&t, 0x04, 0);
	tb_esc(&t, 0x03, 0);
	tb_esc(&t, 0x02, 0);
	tb_esc(&t, 0x21, 2, 0u, 0u);
	tb_esc(&t, 0x31, 2, 0xffffffffu, 0xffffffffu);
	tb_pos(&t, 0x100, 999999999999ull);
	tb_insn(&t, C_COMPUTE, W_LI, 0, 0);
	decode_all(f, t.b, t.len, 100, &d);
	check_units(f, &t, &d);
	struct tm_chunk c = chunk_of(f, t.b, t.len, &d);
	ck_assert_uint_eq(d.n, sizeof(lines) / sizeof(lines[0]));
	size_t dump_len;
	char *dump = dump_text(f, &c, ~0ull, &dump_len);
	char *cols = model_run("tt6_expect.py", "columns", "dump.txt", dump, dump_len),
	     *save = NULL;
	char *col = strtok_r(cols, "\n", &save);
	for (size_t i = 0; i < d.n; i++, col = strtok_r(NULL, "\n", &save)) {
		char want[256];
		snprintf(want, sizeof(want), "%" PRIu64 "\t%08x\t%08x\t%s\t%s", lines[i].num,
			 lines[i].pc, lines[i].word, lines[i].text, lines[i].rest);
		ck_assert_msg(col && strcmp(col, want) == 0, "line %zu: \"%s\", expected \"%s\"", i,
			      col ? col : "(none)", want);
		size_t len;
		char *line = render_one(f->dump, &c, i, &len);
		size_t fixed = f->dump->fixed_len(d.r[i].head.cls);
		ck_assert(fixed == 0 || fixed == len);
		free(line);
	}
	free(cols);
	free(dump);
	/* sync.txt, from doc/views.md */
	const struct tm_view_desc *sync = NULL;
	for (unsigned i = 0; i < f->n_extra_views; i++)
		if (strcmp(f->extra_views[i].path, "sync.txt") == 0)
			sync = &f->extra_views[i];
	ck_assert_ptr_nonnull(sync);
	ck_assert_uint_eq(sync->class_mask, 1ull << C_SYNC);
	size_t len;
	char *line = render_one(sync->ops, &c, 6, &len);
	ck_assert_str_eq(class_names[d.r[6].head.cls], "sync");
	ck_assert_uint_eq(len, strlen("           1 ffffffe8 wait      00001230 42\n"));
	ck_assert(memcmp(line, "           1 ffffffe8 wait      00001230 42\n", len) == 0);
	free(line);
	decoded_free(&d);
	tb_free(&t);

	/* the example of doc/views.md */
	tb_init(&t, 0);
	tb_pos(&t, 0x101c, 42);
	tb_esc(&t, 0x20, 2, 0x00a0b0c0u, 1u);
	decode_all(f, t.b, t.len, 100, &d);
	c = chunk_of(f, t.b, t.len, &d);
	ck_assert_uint_eq(d.n, 2);
	line = render_one(sync->ops, &c, 1, &len);
	ck_assert_uint_eq(len, strlen("          42 0000101c signal    00a0b0c0 1\n"));
	ck_assert(memcmp(line, "          42 0000101c signal    00a0b0c0 1\n", len) == 0);
	free(line);
	decoded_free(&d);
	tb_free(&t);
}
END_TEST

/* Every record view of a generated trace: render() writes measure() bytes, and what the index
 * counts (fixed_len plus flag_len, or measure) is that length. */
START_TEST(test_render_lengths)
{
	const struct tm_format *f = fmt_of(_i);
	struct tm_view_table views;
	ck_assert_int_eq(tm_view_table_init(&views, f, _i ? "t.tt6e" : "t.tt6"), 0);
	for (int canonical = 0; canonical <= 1; canonical++) {
		struct trace t;
		struct decoded d;
		gen_trace(&t, _i, 6000, 0x77 + (uint64_t)canonical, canonical);
		decode_all(f, t.b, t.len, 1000, &d);
		check_units(f, &t, &d);
		struct tm_chunk c = chunk_of(f, t.b, t.len, &d);
		/* the model finds every dump line's columns where doc/views.md puts them */
		size_t dump_len;
		char *dump = dump_text(f, &c, ~0ull, &dump_len);
		char *cols = model_run("tt6_expect.py", "columns", "dump.txt", dump, dump_len);
		char *save = NULL, *col = strtok_r(cols, "\n", &save);
		for (size_t i = 0; i < d.n; i++, col = strtok_r(NULL, "\n", &save)) {
			char num[24];
			snprintf(num, sizeof(num), "%" PRIu64 "\t", d.r[i].num);
			EXPECT(col && strncmp(col, num, strlen(num)) == 0,
			       "record %zu: columns: %s", i, col ? col : "(none)");
		}
		free(cols);
		free(dump);
		for (unsigned v = 0; v < views.n_views; v++) {
			const struct tm_view *view = &views.views[v];
			if (view->kind != TM_VIEW_RECORDS)
				continue;
			size_t fixed[N_CLASSES];
			for (unsigned k = 0; k < N_CLASSES; k++)
				fixed[k] = tm_view_fixed_len(f, view, k);
			for (size_t i = 0; i < d.n; i++) {
				if (!(view->class_mask >> d.r[i].head.cls & 1))
					continue;
				size_t len, counted = tm_view_record_len(view, fixed, &c, i);
				char *out = render_one(view->ops, &c, i, &len);
				EXPECT(counted == len,
				       "%s: record %zu (%s, flags %#x): %zu bytes, the index "
				       "counts %zu",
				       view->path, i, class_names[d.r[i].head.cls],
				       d.r[i].head.flags, len, counted);
				if (view->ops == f->dump)
					EXPECT(len > 0 && out[len - 1] == '\n' &&
						   memchr(out, '\n', len) == out + len - 1,
					       "record %zu: not one line", i);
				free(out);
			}
		}
		decoded_free(&d);
		tb_free(&t);
	}
	tm_view_table_free(&views);
}
END_TEST

/* Reading views through the core, in process. */

/* Up to 24 bytes of p[from, len) as hex. */
static void hex_of(const char *p, size_t from, size_t len, char *out)
{
	*out = '\0';
	for (size_t i = from; i < len && i < from + 24; i++)
		out += sprintf(out, "%02x%s", (uint8_t)p[i], i % 4 == 3 ? " " : "");
}

/* got equals want; the message shows text, or hex for binary (`binary`). */
static void check_same_as(const char *what, const char *got, size_t got_len, const char *want,
			  size_t want_len, int binary)
{
	size_t i = 0;
	while (i < got_len && i < want_len && got[i] == want[i])
		i++;
	if (i == got_len && i == want_len)
		return;
	if (binary) {
		char g[128], w[128];
		size_t from = i & ~(size_t)3;
		from = from >= 8 ? from - 8 : 0;
		hex_of(got, from, got_len, g);
		hex_of(want, from, want_len, w);
		ck_abort_msg("%s: %zu bytes, expected %zu; first difference at %zu: from %zu got "
			     "%s, expected %s",
			     what, got_len, want_len, i, from, g, w);
	}
	size_t from = i > 40 ? i - 40 : 0;
	ck_abort_msg("%s: %zu bytes, expected %zu; first difference at %zu: got \"%.*s\", expected "
		     "\"%.*s\"",
		     what, got_len, want_len, i, (int)(got_len - from < 120 ? got_len - from : 120),
		     got + from, (int)(want_len - from < 120 ? want_len - from : 120), want + from);
}

static void check_same(const char *what, const char *got, size_t got_len, const char *want,
		       size_t want_len)
{
	check_same_as(what, got, got_len, want, want_len, 0);
}

/* class/CLASS.EXT decodes to class/CLASS.txt, which is the class's dump lines. */
static void check_class_streams(const struct tm_format *f, const struct trace *t)
{
	struct mounted m;
	struct decoded d;
	mount_trace(&m, f == fmt_of(1) ? "t.tt6e" : "t.tt6", f, t->b, t->len);
	decode_all(f, t->b, t->len, 5000, &d);
	struct tm_chunk c = chunk_of(f, t->b, t->len, &d);
	for (unsigned k = 0; k < N_CLASSES; k++) {
		if (k == C_INITIAL)
			continue;
		char path[64], what[96];
		size_t stream_len, txt_len, want_len, got_len;
		snprintf(path, sizeof(path), "class/%s.%s", class_names[k], f->class_ext);
		char *stream = read_view(&m, path, &stream_len);
		snprintf(path, sizeof(path), "class/%s.txt", class_names[k]);
		char *txt = read_view(&m, path, &txt_len);
		char *want = dump_text(f, &c, 1ull << k | 1ull << C_INITIAL, &want_len);
		snprintf(what, sizeof(what), "%s (%s)", path, f->name);
		check_same(what, txt, txt_len, want, want_len);

		/* the stream opens with the INITIAL_PC record */
		ck_assert_uint_ge(stream_len, 4);
		ck_assert(memcmp(stream, t->b, 4) == 0);
		struct decoded sd;
		decode_all(f, (const uint8_t *)stream, stream_len, 777, &sd);
		ck_assert_msg(!sd.diag.truncated, "%s: the stream is truncated", what);
		struct tm_chunk sc = chunk_of(f, (const uint8_t *)stream, stream_len, &sd);
		char *got = dump_text(f, &sc, ~0ull, &got_len);
		snprintf(what, sizeof(what), "class/%s.%s decoded (%s)", class_names[k],
			 f->class_ext, f->name);
		check_same(what, got, got_len, want, want_len);
		for (size_t i = 0; i < sd.n; i++)
			EXPECT(i == 0 ? sd.r[i].head.cls == C_INITIAL : sd.r[i].head.cls == k,
			       "%s: record %zu of class %u", what, i, sd.r[i].head.cls);
		free(got);
		decoded_free(&sd);
		free(stream);
		free(txt);
		free(want);
	}
	decoded_free(&d);
	unmount_trace(&m);
}

START_TEST(test_class_streams_hand)
{
	struct trace t;
	hand_trace(&t, _i, 1);
	check_class_streams(fmt_of(_i), &t);
	tb_free(&t);
}
END_TEST

START_TEST(test_class_streams_generated)
{
	const struct tm_format *f = fmt_of(_i);
	for (int canonical = 0; canonical <= 1; canonical++) {
		struct trace t;
		/* several chunks, so that streams restart from checkpoints */
		gen_trace(&t, _i, 2 * f->chunk_records + 1000, 0xabc + (uint64_t)canonical,
			  canonical);
		check_class_streams(f, &t);
		tb_free(&t);
	}
}
END_TEST

/* Conversions. */

/* Reads convert/NAME.EXT of data in format `from`. */
static char *convert(int from_tt6e, const void *data, size_t len, size_t *out_len)
{
	struct mounted m;
	const struct tm_format *f = fmt_of(from_tt6e);
	mount_trace(&m, from_tt6e ? "t.tt6e" : "t.tt6", f, data, len);
	char *out = read_view(&m, from_tt6e ? "convert/t.tt6" : "convert/t.tt6e", out_len);
	size_t errors_len;
	char *errors = read_view(&m, "errors.txt", &errors_len);
	/* what a TT6E says of its dcbx without an address is no problem of the conversion */
	const char *note = strstr(errors, " cache-block instructions (dcbz, dcbt...) have no "
					  "address (an escape 0x12 before each): they are not in "
					  "convert/NAME.din\n");
	ck_assert_msg(errors_len == 0 ||
			  (from_tt6e && note && strchr(errors, '\n') == note + strlen(note) - 1),
		      "errors.txt of the %s input: %.*s", f->name, (int)errors_len, errors);
	free(errors);
	unmount_trace(&m);
	return out;
}

/* The same trace in both formats, by hand: TT6's escapes 0x11 and TT6E's addresses. */
static void hand_pair(struct trace *t6, struct trace *t6e)
{
	for (int e = 0; e <= 1; e++) {
		struct trace *t = e ? t6e : t6;
		tb_init(t, 0x1000);
		tb_insn(t, C_COMPUTE, W_MFLR, 0, 0);
		tb_twi(t, e, W_TWI);
		/* dcbx after an escape 0x01: TT6E takes its address */
		tb_esc(t, 0x01, 1, 0xa000u);
		tb_cache(t, e, W_DCBZ, e ? 0xa000 : 0);
		/* after an escape 0x11: TT6E drops it and takes its address */
		if (!e)
			tb_esc(t, 0x11, 1, 0xb000u);
		tb_cache(t, e, W_DCBF, e ? 0xb000 : 0);
		/* no address: nothing in TT6, an escape 0x12 in TT6E (its address word 0 means
		 * nothing) */
		if (e)
			tb_no_address(t);
		tb_cache(t, e, W_ICBI, 0);
		/* none after an escape 0x01: an escape 0x12 in both, lest TT6 lend it 0xa800 */
		tb_esc(t, 0x01, 1, 0xa800u);
		tb_no_address(t);
		tb_cache(t, e, W_DCBZ, 0);
		/* an escape 0x01 with another address, then an escape 0x11 */
		tb_esc(t, 0x01, 2, 0xc000u, 1u);
		if (!e)
			tb_esc(t, 0x11, 1, 0xc100u);
		tb_cache(t, e, W_DCBT, e ? 0xc100 : 0);
		/* other escapes between */
		tb_esc(t, 0x02, 1, 0x44000000u);
		if (!e)
			tb_esc(t, 0x11, 1, 0xd000u);
		tb_cache(t, e, W_DCBST, e ? 0xd000 : 0);
		tb_insn(t, C_MEMORY, W_LWZ, 0x2000, 0);
		tb_esc(t, 0x01, 2, 0xe000u, 1u);
		tb_insn(t, C_COMPUTE, W_LI, 0, 0);
		tb_insn(t, C_FLOW, W_BL, t->pc + 0x10, 0);
		tb_esc(t, 0x20, 2, 0xa0b0c0u, 1u);
		tb_insn(t, C_MEMEXT, W_LSWX, 0x3000, 0x10);
		tb_twi(t, e, 0x0fe00000);  /* twui r0, 0 */
		tb_twi(t, e, W_TWI);	   /* twice in a row */
		tb_esc(t, 0x04, 1, 0x11u); /* kept */
		tb_twi(t, e, W_TWI);	   /* last */
	}
}

START_TEST(test_convert_hand)
{
	struct trace t6, t6e;
	hand_pair(&t6, &t6e);
	size_t len;
	char *out = convert(0, t6.b, t6.len, &len);
	check_same_as("TT6 -> TT6E", out, len, (const char *)t6e.b, t6e.len, 1);
	free(out);
	out = convert(1, t6e.b, t6e.len, &len);
	check_same_as("TT6E -> TT6", out, len, (const char *)t6.b, t6.len, 1);
	free(out);
	tb_free(&t6);
	tb_free(&t6e);

	/* a TT6 dcbz with nothing before it has no address: TT6E says so with an escape 0x12,
	 * which TT6 back needs not (a TT6 escape 0x12 there says nothing: TT6E the same) */
	struct trace bare, marked6, marked6e;
	tb_init(&bare, 0x1000);
	tb_cache(&bare, 0, W_DCBZ, 0);
	tb_init(&marked6, 0x1000);
	tb_no_address(&marked6);
	tb_cache(&marked6, 0, W_DCBZ, 0);
	tb_init(&marked6e, 0x1000);
	tb_no_address(&marked6e);
	tb_cache(&marked6e, 1, W_DCBZ, 0);
	out = convert(0, bare.b, bare.len, &len);
	check_same_as("TT6 dcbz without address -> TT6E", out, len, (const char *)marked6e.b,
		      marked6e.len, 1);
	free(out);
	out = convert(0, marked6.b, marked6.len, &len);
	check_same_as("TT6 dcbz after a needless escape 0x12 -> TT6E", out, len,
		      (const char *)marked6e.b, marked6e.len, 1);
	free(out);
	out = convert(1, marked6e.b, marked6e.len, &len);
	check_same_as("and back to TT6, without the escape 0x12", out, len, (const char *)bare.b,
		      bare.len, 1);
	free(out);
	tb_free(&bare);
	tb_free(&marked6);
	tb_free(&marked6e);
}
END_TEST

/* TT6 -> TT6E -> TT6 and TT6E -> TT6 -> TT6E give back the bytes. */
static void check_round_trip(int tt6e, const struct trace *t)
{
	size_t len1, len2;
	char *once = convert(tt6e, t->b, t->len, &len1);
	char *twice = convert(!tt6e, once, len1, &len2);
	check_same_as(tt6e ? "TT6E -> TT6 -> TT6E" : "TT6 -> TT6E -> TT6", twice, len2,
		      (const char *)t->b, t->len, 1);
	free(once);
	free(twice);
}

START_TEST(test_round_trip_hand)
{
	struct trace t6, t6e;
	hand_pair(&t6, &t6e);
	check_round_trip(0, &t6);
	check_round_trip(1, &t6e);
	tb_free(&t6);
	tb_free(&t6e);
	/* hand_trace less its position records, which are not converted, in TT6 less its escape
	 * 0x12 after an instruction (it says nothing there), and in TT6E less the escape 0x11
	 * written by hand (documented as not reproduced) */
	for (int e = 0; e <= 1; e++) {
		struct trace t, u = {0};
		hand_trace(&t, e, 1);
		for (size_t i = 0; i < t.n; i++)
			if ((t.u[i].cls != C_POSITION || (e && t.u[i].word == 0x00120000)) &&
			    !(e && t.u[i].word == 0x00110001))
				for (size_t k = 0; k < t.u[i].len; k += 4)
					tb_put(&u, (uint32_t)t.b[t.u[i].off + k] << 24 |
						       (uint32_t)t.b[t.u[i].off + k + 1] << 16 |
						       (uint32_t)t.b[t.u[i].off + k + 2] << 8 |
						       t.b[t.u[i].off + k + 3]);
		check_round_trip(e, &u);
		tb_free(&u);
		tb_free(&t);
	}
}
END_TEST

START_TEST(test_round_trip_generated)
{
	const struct tm_format *f = fmt_of(_i);
	struct trace t;
	gen_trace(&t, _i, 2 * f->chunk_records + 777, 0xfeed + (uint64_t)_i, 1);
	check_round_trip(_i, &t);
	tb_free(&t);
}
END_TEST

/* Regressions. */

/* Instruction numbers wider than NUMBER's 12 columns (a position record can set any): the
 * column grows, and the index still sizes dump.txt and sync.txt right (fixed length plus the
 * record's flags). */
START_TEST(test_wide_number)
{
	static const uint64_t nums[] = {999999999999ull,   1000000000000ull,	  9999999999999ull,
					10000000000000ull, 123456789012345678ull, UINT64_MAX};
	const struct tm_format *f = fmt_of(_i);
	struct tm_view_table views;
	ck_assert_int_eq(tm_view_table_init(&views, f, _i ? "t.tt6e" : "t.tt6"), 0);
	for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++) {
		struct trace t;
		struct decoded d;
		tb_init(&t, 0x1000);
		tb_pos(&t, 0x2000, nums[k]);
		tb_esc(&t, 0x20, 2, 1u, 2u);
		tb_esc(&t, 0x01, 1, 5u);
		tb_insn(&t, C_COMPUTE, W_LI, 0, 0);
		tb_insn(&t, C_FLOW, W_BL, 0x2014, 0);
		tb_insn(&t, C_MEMEXT, W_LSWX, 0x3000, 3);
		decode_all(f, t.b, t.len, 100, &d);
		check_units(f, &t, &d);
		struct tm_chunk c = chunk_of(f, t.b, t.len, &d);
		for (unsigned v = 0; v < views.n_views; v++) {
			const struct tm_view *view = &views.views[v];
			if (view->kind != TM_VIEW_RECORDS)
				continue;
			size_t fixed[N_CLASSES];
			for (unsigned cls = 0; cls < N_CLASSES; cls++)
				fixed[cls] = tm_view_fixed_len(f, view, cls);
			for (size_t i = 1; i < d.n; i++) {
				if (!(view->class_mask >> d.r[i].head.cls & 1))
					continue;
				size_t len, counted = tm_view_record_len(view, fixed, &c, i);
				char *out = render_one(view->ops, &c, i, &len);
				ck_assert_msg(counted == len,
					      "%s, number %" PRIu64 ", record %zu: %zu bytes, the "
					      "index counts %zu: \"%.*s\"",
					      view->path, nums[k], i, len, counted, (int)len, out);
				/* both begin with the number and the PC */
				uint64_t num;
				unsigned pc;
				if (view->ops == f->dump || strcmp(view->path, "sync.txt") == 0)
					ck_assert_msg(sscanf(out, "%" SCNu64 " %x", &num, &pc) ==
							      2 &&
							  num == d.r[i].num && pc == d.r[i].pc,
						      "%s: \"%.*s\"", view->path, (int)len, out);
				free(out);
			}
		}
		decoded_free(&d);
		tb_free(&t);
	}
	tm_view_table_free(&views);
}
END_TEST

/* TT6E: a dcbx whose address is 0 right after an escape 0x01 with an address. TT6 -> TT6E
 * would give it the escape's address, so TT6E -> TT6 keeps the 0 in an escape 0x11. */
START_TEST(test_round_trip_zero_after_escape_01)
{
	struct trace t6e, t6;
	for (int e = 0; e <= 1; e++) {
		struct trace *t = e ? &t6e : &t6;
		tb_init(t, 0x1000);
		tb_esc(t, 0x01, 1, 0xa000u);
		if (!e)
			tb_esc(t, 0x11, 1, 0u);
		tb_cache(t, e, W_DCBZ, 0);
		tb_esc(t, 0x01, 1, 0xb000u);
		tb_cache(t, e, W_DCBF, e ? 0xb000 : 0);
	}
	size_t len;
	char *out = convert(1, t6e.b, t6e.len, &len);
	check_same_as("TT6E -> TT6", out, len, (const char *)t6.b, t6.len, 1);
	free(out);
	check_round_trip(1, &t6e);
	check_round_trip(0, &t6);
	tb_free(&t6e);
	tb_free(&t6);
}
END_TEST

/* Issue 40: a TT6 as Amber writes it has no escape 0x12, its dcbx without an escape 0x01 or
 * 0x11 just before having no address anyway. TT6E -> TT6 wrote one before each (4 bytes
 * more a dcbx); it keeps one only after an escape 0x01 or 0x11, which would lend its address. */
static void dcbx_block(struct trace *t, int e, uint32_t op)
{
	if (e)
		tb_no_address(t);
	tb_cache(t, e, op, 0); /* no address: nothing before it in TT6 */
	tb_esc(t, 0x01, 1, 0xa000u);
	tb_cache(t, e, op, e ? 0xa000 : 0);
	if (!e)
		tb_esc(t, 0x11, 1, 0xb000u);
	tb_cache(t, e, op, e ? 0xb000 : 0);
	if (!e)
		tb_esc(t, 0x11, 1, 0u); /* address 0, said */
	tb_cache(t, e, op, 0);
	tb_esc(t, 0x02, 1, 0x44000000u); /* an escape that lends no address */
	if (e)
		tb_no_address(t);
	tb_cache(t, e, op, 0);
	tb_esc(t, 0x20, 2, 0x1230u, 3u);
	if (e)
		tb_no_address(t);
	tb_cache(t, e, op, 0);
	tb_twi(t, e, W_TWI);
	if (e)
		tb_no_address(t);
	tb_cache(t, e, op, 0);
	tb_esc(t, 0x01, 1, 0xc000u); /* TT6 needs the escape 0x12 here */
	tb_no_address(t);
	tb_cache(t, e, op, 0);
	tb_insn(t, C_MEMORY, W_LWZ, 0x2000, 0);
}

/* The same trace in both formats: dcbz, dcbt, dcbf and icbi with and without addresses; the
 * dcbx after an escape 0x01 and 0x12 once across a chunk boundary (the state carries it). */
static void dcbx_pair(struct trace *t6, struct trace *t6e, size_t chunk_records)
{
	static const uint32_t ops[] = {W_DCBZ, W_DCBT, W_DCBF, W_ICBI};
	for (int e = 0; e <= 1; e++) {
		struct trace *t = e ? t6e : t6;
		tb_init(t, 0x1000);
		if (e)
			tb_no_address(t);
		tb_cache(t, e, W_DCBZ, 0); /* first of all */
		for (size_t k = 0; k < 4; k++)
			dcbx_block(t, e, ops[k]);
		while (t->records % chunk_records != chunk_records - 1)
			tb_insn(t, C_COMPUTE, W_LI, 0, 0);
		tb_esc(t, 0x01, 1, 0xe000u); /* the last record of a chunk */
		tb_no_address(t);
		tb_cache(t, e, W_DCBT, 0);
		for (size_t k = 0; k < 4; k++)
			dcbx_block(t, e, ops[k]);
	}
}

START_TEST(test_round_trip_dcbx)
{
	struct trace t6, t6e;
	dcbx_pair(&t6, &t6e, fmt_of(0)->chunk_records);
	size_t len;
	char *out = convert(0, t6.b, t6.len, &len);
	check_same_as("TT6 -> TT6E", out, len, (const char *)t6e.b, t6e.len, 1);
	free(out);
	out = convert(1, t6e.b, t6e.len, &len);
	check_same_as("TT6E -> TT6", out, len, (const char *)t6.b, t6.len, 1);
	free(out);
	check_round_trip(0, &t6);
	check_round_trip(1, &t6e);
	tb_free(&t6);
	tb_free(&t6e);
}
END_TEST

static Suite *tt6_views_suite(void)
{
	Suite *s = suite_create("tt6_views");
	TCase *tc = tcase_create("render");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_dump_example);
	tcase_add_test(tc, test_dump_more);
	tcase_add_loop_test(tc, test_render_lengths, 0, 2);
	tcase_add_loop_test(tc, test_class_streams_hand, 0, 2);
	tcase_add_loop_test(tc, test_class_streams_generated, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("convert");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_convert_hand);
	tcase_add_test(tc, test_round_trip_hand);
	tcase_add_loop_test(tc, test_round_trip_generated, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("regressions");
	tcase_set_timeout(tc, 120); /* check_units runs the model, a Python process, each time */
	tcase_add_loop_test(tc, test_wide_number, 0, 2);
	tcase_add_test(tc, test_round_trip_zero_after_escape_01);
	tcase_add_test(tc, test_round_trip_dcbx);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(tt6_views_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
