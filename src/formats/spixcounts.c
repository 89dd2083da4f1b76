/* SpixTools spixcounts files (spixcounts(5), specs/003_942e4b42a75d0ead.txt; spix.h).
 *
 *   byte 0      4       8      12     16           16 + nbb, padded to 4
 *        +------+-------+------+------+------------+----------------------------+
 *        | magic| tsize | tsum | nbb  | nbb lengths| nbb pairs of 32-bit counters|
 *        +------+-------+------+------+------------+----------------------------+
 *
 * Words in the writer's byte order, told by the magic. A block's length and its counters lie
 * far apart, so the records, one per counter pair, only feed the statistics, which keep the
 * file (it is small: 9 bytes a block) and render the views whole: summary.txt, blocks.txt and
 * dump.txt, its copy. A folder's files of one program also make its sum (spixcounts_sum.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "spixcounts.h"
#include "tracemount/diag.h"
#include "tracemount/format.h"
#include "plots/bars.h"
#include "spix/spix.h"
#include "tracemount/stats_json.h"
#include "tracemount/util.h"

enum phase { P_HEADER, P_LENGTHS, P_COUNTERS, P_REST };

struct spix_state {
	uint64_t phase;
	uint64_t nbb;
	uint64_t done;	/* bytes of the lengths, or counter pairs, read */
	uint64_t ended; /* the end was reported */
};

static const char *const spix_extensions[] = {"bb", "spixcounts", NULL};
static const char *const spix_classes[] = {"blocks"};

static int spix_name_bid(const char *name)
{
	return tm_name_has_extension(name, spix_extensions) ? 40 : 0;
}

static int spix_content_bid(const char *name, const uint8_t *head, size_t head_len)
{
	struct tm_spix_header h;
	return tm_spix_header(head, head_len, &h) ? 95 : spix_name_bid(name);
}

/* The file's end, where it is not where the header says. */
static void report_end(struct spix_state *s, const struct tm_decode_in *in, size_t pos,
		       struct tm_diag *diag)
{
	if (s->ended)
		return;
	s->ended = 1;
	uint64_t off = in->raw_off + pos;
	switch (s->phase) {
	case P_HEADER:
		tm_diag_truncated(diag, off,
				  "unexpected EOF in the header (%" PRIu64 " of 16 bytes)", off);
		break;
	case P_LENGTHS:
		tm_diag_truncated(diag, off,
				  "unexpected EOF in the block lengths (%" PRIu64 " of %" PRIu64
				  " bytes): no block has its counters",
				  s->done, TM_SPIX_CNT_OFF(s->nbb) - TM_SPIX_HEADER);
		break;
	case P_COUNTERS:
		tm_diag_truncated(diag, off,
				  "unexpected EOF: counters of %" PRIu64 " of %" PRIu64
				  " blocks; the rest are missing",
				  s->done, s->nbb);
		break;
	}
}

/* The next piece needs more bytes than are left: wait for them, or at the end consume the
 * rest and report it. */
static int short_of(struct spix_state *s, const struct tm_decode_in *in, size_t *pos,
		    struct tm_diag *diag)
{
	if (!in->at_eof)
		return -EAGAIN;
	*pos = in->len;
	report_end(s, in, *pos, diag);
	return 0;
}

static int spix_decode(void *state, const struct tm_decode_in *in, void *recs, size_t max,
		       size_t *n_out, size_t *used, struct tm_diag *diag)
{
	struct spix_state *s = state;
	struct tm_record *out = recs;
	size_t pos = 0, n = 0;
	int ret = 0;

	while (pos < in->len || (in->at_eof && !s->ended)) {
		size_t avail = in->len - pos;
		if (s->phase == P_HEADER) {
			struct tm_spix_header h;
			if (avail >= 4 && !tm_spix_header(in->buf + pos, avail, &h)) {
				tm_diag_at(diag, in->raw_off,
					   "bad magic 0x%08" PRIx32 " (not 0x%08x)",
					   tm_spix_word(in->buf + pos, true), TM_SPIX_MAGIC);
				s->phase = P_REST;
				s->ended = 1; /* nothing of it is a block */
				pos = in->len;
				break;
			}
			if (avail < TM_SPIX_HEADER) {
				ret = short_of(s, in, &pos, diag);
				break;
			}
			s->nbb = h.nbb;
			s->phase = P_LENGTHS;
			pos += TM_SPIX_HEADER;
		} else if (s->phase == P_LENGTHS) {
			uint64_t section = TM_SPIX_CNT_OFF(s->nbb) - TM_SPIX_HEADER;
			uint64_t take = section - s->done < avail ? section - s->done : avail;
			pos += (size_t)take;
			s->done += take;
			if (s->done == section) {
				s->phase = s->nbb ? P_COUNTERS : P_REST;
				s->done = 0;
			} else if (in->at_eof) {
				report_end(s, in, pos, diag);
				break;
			}
		} else if (s->phase == P_COUNTERS) {
			if (n == max)
				break;
			if (avail < 8) {
				ret = short_of(s, in, &pos, diag);
				break;
			}
			struct tm_record *r = (struct tm_record *)((char *)out + n * sizeof(*r));
			memset(r, 0, sizeof(*r));
			r->raw_rel = (uint32_t)pos;
			r->raw_len = 8;
			n++;
			pos += 8;
			if (++s->done == s->nbb)
				s->phase = P_REST;
		} else {
			if (avail && !s->ended)
				tm_diag_at(diag, in->raw_off + pos,
					   "%zu bytes after the last block's counters%s", avail,
					   in->at_eof ? "" : " (and maybe more)");
			s->ended = 1;
			pos = in->len;
			break;
		}
	}
	*n_out = n;
	*used = pos;
	return ret;
}

/* The blocks, parsed as the index pass streams the file by: the header, each block's length,
 * then each counter pair (the pass's working memory: 9 bytes a block, TM_SPIX_MAX_BLOCKS at
 * most). */
struct spix_stats {
	uint8_t header[TM_SPIX_HEADER];
	uint64_t pos;	 /* file offset of the next byte */
	uint64_t nbb;	 /* blocks in the header */
	uint8_t pair[8]; /* a counter pair cut by a chunk's end */
	bool big_endian;
	int err;		/* -EFBIG: more blocks than held; -ENOMEM */
	struct tm_spix_table t; /* t.nbb: blocks whose counters were read */
};

/* Takes the byte at file offset s->pos. */
static void take_byte(struct spix_stats *s, uint8_t byte)
{
	uint64_t pos = s->pos++;
	struct tm_spix_header h;
	if (pos < TM_SPIX_HEADER) {
		s->header[pos] = byte;
		if (pos == 3 && tm_spix_header(s->header, 4, &h))
			s->t.big_endian = s->big_endian = h.big_endian;
		if (pos + 1 < TM_SPIX_HEADER)
			return;
		if (!tm_spix_header(s->header, TM_SPIX_HEADER, &h)) {
			s->err = -EBADMSG; /* the decoder reports it */
			return;
		}
		s->big_endian = h.big_endian;
		s->t.tsize = h.tsize;
		s->t.tsum = h.tsum;
		s->nbb = h.nbb;
		s->err = tm_spix_table_reserve(&s->t, s->nbb ? s->nbb : 1);
	} else if (pos < TM_SPIX_HEADER + s->nbb) {
		s->t.len[pos - TM_SPIX_HEADER] = byte;
	} else if (pos >= TM_SPIX_CNT_OFF(s->nbb) && s->t.nbb < s->nbb) {
		uint64_t in_pair = (pos - TM_SPIX_CNT_OFF(s->nbb)) % 8;
		s->pair[in_pair] = byte;
		if (in_pair == 7) {
			s->t.count[s->t.nbb][0] = tm_spix_word(s->pair, s->big_endian);
			s->t.count[s->t.nbb][1] = tm_spix_word(s->pair + 4, s->big_endian);
			s->t.nbb++;
		}
	}
}

static void spix_stats_update(void *stats, const struct tm_chunk *c)
{
	struct spix_stats *s = stats;
	for (size_t i = 0; i < c->raw_len && !s->err; i++) {
		/* whole counter pairs at once: the bulk of a file */
		uint64_t cnt = TM_SPIX_CNT_OFF(s->nbb);
		if (s->pos >= TM_SPIX_HEADER && s->pos >= cnt && (s->pos - cnt) % 8 == 0 &&
		    c->raw_len - i >= 8 && s->t.nbb < s->nbb) {
			s->t.count[s->t.nbb][0] = tm_spix_word(c->raw + i, s->big_endian);
			s->t.count[s->t.nbb][1] = tm_spix_word(c->raw + i + 4, s->big_endian);
			s->t.nbb++;
			s->pos += 8;
			i += 7;
			continue;
		}
		take_byte(s, (uint8_t)c->raw[i]);
	}
}

static int spix_stats_init(void *stats)
{
	struct spix_stats *s = stats;
	s->t.big_endian = true; /* a file without a magic number: SPARC's order */
	return 0;
}

#define MAX_REPORTS 10 /* per kind of problem, then a count */

/* Blocks whose counters do not fit their length or each other. */
static void check_blocks(const struct tm_spix_table *t, bool whole, struct tm_diag *diag)
{
	uint64_t text = 0, empty = 0, half = 0;
	for (uint32_t b = 0; b < t->nbb; b++) {
		text += 4u * t->len[b];
		bool bad0 = t->count[b][0] == TM_SPIX_BADCNT,
		     bad1 = t->count[b][1] == TM_SPIX_BADCNT;
		if (!t->len[b] && !bad0 && (t->count[b][0] || t->count[b][1]) &&
		    ++empty <= MAX_REPORTS)
			tm_diag_at(diag, TM_SPIX_HEADER + b,
				   "block %" PRIu32 " has length 0 but counters %" PRIu32
				   " %" PRIu32,
				   b, t->count[b][0], t->count[b][1]);
		if (bad0 != bad1 && ++half <= MAX_REPORTS)
			tm_diag_at(diag, TM_SPIX_CNT_OFF(t->nbb) + 8 * (uint64_t)b,
				   "block %" PRIu32
				   " has one counter SPIX_SC_BADCNT and not the other",
				   b);
	}
	if (empty > MAX_REPORTS)
		tm_diag_note(diag, "%" PRIu64 " blocks of length 0 have counters", empty);
	if (half > MAX_REPORTS)
		tm_diag_note(diag, "%" PRIu64 " blocks have one counter SPIX_SC_BADCNT", half);
	if (whole && text != t->tsize)
		tm_diag_note(diag,
			     "the block lengths add up to %" PRIu64 " bytes of text; the header "
			     "says %" PRIu32,
			     text, t->tsize);
}

static int spix_stats_finish(void *stats, json_object *obj, struct tm_diag *diag)
{
	struct spix_stats *s = stats;
	if (s->err == -ENOMEM)
		return s->err;
	if (s->err == -EFBIG)
		tm_diag_note(diag,
			     "%" PRIu64 " blocks, more than the %u tracemount holds: summary.txt, "
			     "blocks.txt and dump.txt are empty",
			     s->nbb, TM_SPIX_MAX_BLOCKS);
	check_blocks(&s->t, s->pos >= TM_SPIX_HEADER && !s->err && s->t.nbb == s->nbb, diag);
	struct tm_spix_totals tot;
	uint64_t branches = 0, longest = 0;
	tm_spix_totals(&s->t, &tot);
	for (uint32_t b = 0; b < s->t.nbb; b++) {
		branches += !tm_spix_non_executable(&s->t, b) && s->t.count[b][1];
		longest = s->t.len[b] > longest ? s->t.len[b] : longest;
	}
	char sum[sizeof("0x") + 8];
	snprintf(sum, sizeof(sum), "0x%08" PRIx32, s->t.tsum);
	int err = 0;
	tm_json_add(obj, "byte_order", json_object_new_string(s->t.big_endian ? "big" : "little"),
		    &err);
	tm_json_add_int(obj, "text_size", s->t.tsize, &err);
	tm_json_add(obj, "text_checksum", json_object_new_string(sum), &err);
	tm_json_add_int(
	    obj, "blocks_in_header",
	    s->pos >= TM_SPIX_HEADER ? tm_spix_word(s->header + 12, s->t.big_endian) : 0, &err);
	const struct {
		const char *key;
		uint64_t value;
	} keys[] = {
	    {"blocks", s->t.nbb},
	    {"non_executable_blocks", tot.non_executable},
	    {"executed_blocks", tot.executed},
	    {"blocks_with_second_counter", branches},
	    {"longest_block", longest},
	    {"instructions", tot.instructions},
	};
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
		tm_json_add_int(obj, keys[k].key, keys[k].value, &err);
	return err;
}

enum { T_SUMMARY, T_BLOCKS, T_DUMP, T_HOT, N_TABLES };
static const char *const spix_tables[N_TABLES] = {"summary.txt", "blocks.txt", "dump.txt",
						  "plots/hot.svg"};

/* plots/hot.svg: the hottest blocks by instructions executed (length times executions, as
 * summary.txt ranks them), the TM_BARS_TOP first kept as the blocks stream by, so that a
 * file of millions of blocks takes no more memory. */
static int spix_hot(const struct tm_spix_table *t, const char *empty, FILE *out)
{
	struct {
		uint32_t block;
		uint64_t insns, offset;
	} top[TM_BARS_TOP];
	size_t n = 0;
	uint64_t offset = 0, hot = 0, insns_all = 0;
	for (uint32_t b = 0; b < t->nbb; offset += 4u * t->len[b], b++) {
		uint64_t insns = tm_spix_block_instructions(t, b);
		insns_all += insns;
		if (!insns)
			continue;
		hot++;
		/* by instructions, then block number: b, the latest, goes after its equals */
		size_t at = n;
		while (at > 0 && top[at - 1].insns < insns)
			at--;
		if (at == TM_BARS_TOP)
			continue;
		if (n < TM_BARS_TOP)
			n++;
		memmove(&top[at + 1], &top[at], (n - 1 - at) * sizeof(top[0]));
		top[at].block = b;
		top[at].insns = insns;
		top[at].offset = offset;
	}
	struct tm_bar bar[TM_BARS_TOP];
	char name[TM_BARS_TOP][48], detail[TM_BARS_TOP][48];
	uint64_t shown_insns = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t b = top[i].block;
		snprintf(name[i], sizeof(name[i]), "block %" PRIu32 " at +0x%" PRIx64, b,
			 top[i].offset);
		snprintf(detail[i], sizeof(detail[i]), "%u instructions long", t->len[b]);
		bar[i] = (struct tm_bar){
		    .name = name[i],
		    .value = top[i].insns,
		    .key = b,
		    .extra = (uint64_t)t->count[b][0] + t->count[b][1],
		    .detail = detail[i],
		};
		shown_insns += top[i].insns;
	}
	char desc[160];
	snprintf(desc, sizeof(desc),
		 "The basic blocks that executed the most instructions, of %" PRIu64
		 " instructions in %" PRIu32 " blocks.",
		 insns_all, t->nbb);
	const struct tm_bars_chart chart = {
	    .title = "Hottest basic blocks, by instructions executed",
	    .things = "blocks",
	    .desc = desc,
	    .x_label = "instructions executed (block length x executions)",
	    .y_label = "block at its offset in the text",
	    .value_name = "instructions executed",
	    .extra_name = "executions",
	    .empty = empty,
	    .whole = insns_all,
	    .others = hot - n,
	    .others_value = insns_all - shown_insns,
	};
	return tm_plot_bars(out, &chart, bar, n);
}

static int spix_tables_finish(void *stats, FILE *const *out)
{
	struct spix_stats *s = stats;
	if (s->err == -EFBIG) /* the tables are left empty, as errors.txt says */
		return spix_hot(&s->t, "more blocks than tracemount holds: see errors.txt",
				out[T_HOT]);
	int err = tm_spix_summary(&s->t, out[T_SUMMARY]);
	if (!err)
		err = tm_spix_blocks(&s->t, out[T_BLOCKS]);
	if (!err)
		err = tm_spix_blocks(&s->t, out[T_DUMP]);
	if (!err)
		err = spix_hot(&s->t, "no block executed", out[T_HOT]);
	return err;
}

static void spix_stats_free(void *stats)
{
	struct spix_stats *s = stats;
	tm_spix_table_free(&s->t);
}

const struct tm_format tm_format_spixcounts = {
    .name = "spixcounts",
    .description = "SpixTools basic-block counts (spixcounts(5))",
    .recognition = "magic 0x62620011 in either byte order (any name); extension .bb or .spixcounts",
    .extensions = spix_extensions,
    .classes = spix_classes,
    .n_classes = ARRAY_SIZE(spix_classes),
    .record_size = sizeof(struct tm_record),
    .state_size = sizeof(struct spix_state),
    .stats_size = sizeof(struct spix_stats),
    .chunk_records = 65536,
    .raw_record_len = 8,
    .name_bid = spix_name_bid,
    .content_bid = spix_content_bid,
    .content_bid_max = 95,
    .decode = spix_decode,
    .stats_init = spix_stats_init,
    .stats_update = spix_stats_update,
    .stats_finish = spix_stats_finish,
    .stats_free = spix_stats_free,
    .table_views = spix_tables,
    .n_table_views = ARRAY_SIZE(spix_tables),
    .tables_finish = spix_tables_finish,
    .virtual_name = spix_sum_name,
    .virtual_list = spix_sum_list,
    .virtual_open = spix_sum_open,
    .virtual_free = spix_sum_free,
    .virtual_min_files = 2, /* a sum needs two files */
};
