/* CIS501 statistics for stats.json; keys in the CIS501 section of doc/views.md. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cis501.h"
#include "tracemount/diag.h"
#include "tracemount/stats_json.h"
#include "tracemount/util.h"
#include "tracemount/view.h"

/* Distinct PCs: a set of 64-bit values, open addressing with linear probing, load at most
 * 1/2, and at most CIS501_MAX_PCS slots: past that the count is a lower bound. */

static size_t pc_slot(uint64_t pc, size_t n_slots)
{
	return (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 32) & (n_slots - 1);
}

static int pcs_grow(struct cis501_pcs *set)
{
	size_t n = set->n_slots ? 2 * set->n_slots : 4096;
	uint64_t *slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < set->n_slots; i++) {
		uint64_t pc = set->slots[i];
		if (!pc)
			continue;
		size_t s = pc_slot(pc, n);
		while (slots[s])
			s = (s + 1) & (n - 1);
		slots[s] = pc;
	}
	free(set->slots);
	set->slots = slots;
	set->n_slots = n;
	return 0;
}

static void pcs_add(struct cis501_pcs *set, uint64_t pc)
{
	if (!pc) {
		set->has_zero = true;
		return;
	}
	size_t s = 0;
	if (set->n_slots) {
		s = pc_slot(pc, set->n_slots);
		for (; set->slots[s]; s = (s + 1) & (set->n_slots - 1))
			if (set->slots[s] == pc)
				return;
	}
	if ((set->n + 1) * 2 > set->n_slots) {
		if (set->n_slots >= CIS501_MAX_PCS) {
			set->full = true;
			return;
		}
		if (pcs_grow(set) < 0) {
			set->err = -ENOMEM;
			set->full = true;
			return;
		}
		s = pc_slot(pc, set->n_slots);
		while (set->slots[s])
			s = (s + 1) & (set->n_slots - 1);
	}
	set->slots[s] = pc;
	set->n++;
}

int cis501_stats_init(void *p)
{
	struct cis501_stats *s = p;
	s->pc_min = s->addr_min = UINT64_MAX;
	s->last_line = UINT64_MAX;
	s->last_pc = UINT64_MAX;
	tm_footprint_init(&s->data);
	s->macros.max = s->micros.max = CIS501_MAX_NAMES;
	return 0;
}

void cis501_stats_update(void *p, const struct tm_chunk *c)
{
	struct cis501_stats *s = p;
	const uint8_t *limit = c->raw + c->raw_len;
	for (size_t i = 0; i < c->n_records; i++) {
		const struct cis501_record *r = cis501_rec(c, i);
		const uint8_t *line = c->raw + r->head.raw_rel;
		s->flag_hist[r->head.flags & ((1u << CIS501_FLAG_BITS) - 1)]++;
		if (r->uop == 1) {
			if (s->in_macro)
				s->uops[s->cur_uops < CIS501_UOP_BINS ? s->cur_uops
								      : CIS501_UOP_BINS]++;
			s->in_macro = true;
			s->cur_uops = 1;
			s->macro_ops++;
		} else if (s->in_macro) {
			s->cur_uops++;
		} else {
			s->before_first++;
		}
		if (r->pc != s->last_pc) {
			s->last_pc = r->pc;
			s->pc_min = r->pc < s->pc_min ? r->pc : s->pc_min;
			s->pc_max = r->pc > s->pc_max ? r->pc : s->pc_max;
			pcs_add(&s->pcs, r->pc);
		}
		if (r->head.flags & (F_LOAD | F_STORE)) {
			s->data_refs++;
			s->addr_min = r->addr < s->addr_min ? r->addr : s->addr_min;
			s->addr_max = r->addr > s->addr_max ? r->addr : s->addr_max;
			uint64_t line64 = r->addr >> 6;
			if (line64 != s->last_line) {
				s->last_line = line64;
				/* each block is 4 KiB: a trace of scattered addresses stops here */
				if (s->data.n_blocks < CIS501_MAX_BLOCKS)
					tm_footprint_add(&s->data, line64);
				else
					s->data_capped = true;
			}
		}
		tm_names_add(&s->macros, line + r->macro_off, r->macro_len, limit, 1);
		tm_names_add(&s->micros, line + r->micro_off, r->micro_len, limit, 1);
	}
	s->records += c->n_records;
}

static json_object *hex_string(uint64_t v)
{
	char buf[sizeof("0x") + 16]; /* up to 16 digits */
	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return json_object_new_string(buf);
}

/* Records with flag bit b set, from the histogram of flag values. */
static uint64_t flagged(const struct cis501_stats *s, unsigned b)
{
	uint64_t n = 0;
	for (unsigned v = 0; v < ARRAY_SIZE(s->flag_hist); v++)
		if (v >> b & 1)
			n += s->flag_hist[v];
	return n;
}

static json_object *uops_histogram(const struct cis501_stats *s, int *err)
{
	json_object *obj = json_object_new_object();
	uint64_t bins[CIS501_UOP_BINS + 1];
	memcpy(bins, s->uops, sizeof(bins));
	if (s->in_macro) /* the last macro-op, which the trace may cut */
		bins[s->cur_uops < CIS501_UOP_BINS ? s->cur_uops : CIS501_UOP_BINS]++;
	for (unsigned k = 1; obj && k <= CIS501_UOP_BINS; k++) {
		char key[sizeof("4294967295+")];
		if (!bins[k])
			continue;
		snprintf(key, sizeof(key), k < CIS501_UOP_BINS ? "%u" : "%u+", k);
		tm_json_add_int(obj, key, bins[k], err);
	}
	return obj;
}

int cis501_stats_finish(void *p, json_object *obj, struct tm_diag *diag)
{
	struct cis501_stats *s = p;
	uint64_t taken = flagged(s, B_TAKEN), not_taken = flagged(s, B_NOT_TAKEN);
	uint64_t crlf = flagged(s, B_CRLF);
	json_object *branches = json_object_new_object();
	int err = 0;
	tm_json_add_int(branches, "total", flagged(s, B_BRANCH), &err);
	tm_json_add_int(branches, "taken", taken, &err);
	tm_json_add_int(branches, "not_taken", not_taken, &err);

	tm_json_add_int(obj, "micro_ops", s->records, &err);
	tm_json_add_int(obj, "macro_ops", s->macro_ops, &err);
	tm_json_add_int(obj, "uops_before_first_macro", s->before_first, &err);
	tm_json_add(obj, "uops_per_macro", uops_histogram(s, &err), &err);
	tm_json_add_int(obj, "loads", flagged(s, B_LOAD), &err);
	tm_json_add_int(obj, "stores", flagged(s, B_STORE), &err);
	/* a fetch per macro-op, a read per load, a write per store (cis501_views.c) */
	tm_json_add(obj, "din", tm_din_stats(s->macro_ops, flagged(s, B_LOAD), flagged(s, B_STORE)),
		    &err);
	tm_json_add(obj, "branches", branches, &err);
	tm_json_add_int(obj, "flags_read", flagged(s, B_FLAGS_READ), &err);
	tm_json_add_int(obj, "flags_write", flagged(s, B_FLAGS_WRITE), &err);
	tm_json_add_int(obj, "distinct_pcs", s->pcs.n + s->pcs.has_zero, &err);
	tm_json_add_or_null(obj, "pc_min", s->records, hex_string(s->pc_min), &err);
	tm_json_add_or_null(obj, "pc_max", s->records, hex_string(s->pc_max), &err);
	tm_json_add_int(obj, "data_lines_64b", tm_footprint_count(&s->data), &err);
	tm_json_add_int(obj, "data_pages_4k", tm_footprint_count_groups64(&s->data), &err);
	tm_json_add_or_null(obj, "address_min", s->data_refs, hex_string(s->addr_min), &err);
	tm_json_add_or_null(obj, "address_max", s->data_refs, hex_string(s->addr_max), &err);
	tm_json_add(obj, "top_macro_opcodes", tm_names_json(&s->macros, CIS501_TOP_NAMES), &err);
	tm_json_add(obj, "top_micro_opcodes", tm_names_json(&s->micros, CIS501_TOP_NAMES), &err);
	tm_json_add_int(obj, "distinct_macro_opcodes", s->macros.n, &err);
	tm_json_add_int(obj, "distinct_micro_opcodes", s->micros.n, &err);
	tm_json_add_int(obj, "crlf_lines", crlf, &err);

	if (crlf)
		tm_diag_note(diag, "%" PRIu64 " lines end in CR LF (kept, CR dropped)", crlf);
	if (s->pcs.err)
		tm_diag_note(diag, "out of memory counting distinct PCs: distinct_pcs is a lower "
				   "bound");
	else if (s->pcs.full)
		tm_diag_note(diag, "more than %u distinct PCs: distinct_pcs is a lower bound",
			     CIS501_MAX_PCS / 2);
	if (s->data.err)
		tm_diag_note(diag, "out of memory counting distinct data lines: data_lines_64b and "
				   "data_pages_4k are lower bounds");
	else if (s->data_capped)
		tm_diag_note(diag,
			     "data addresses in more than %u regions of 2 MiB: data_lines_64b and "
			     "data_pages_4k are lower bounds",
			     CIS501_MAX_BLOCKS);
	if (s->macros.err || s->micros.err)
		tm_diag_note(diag, "out of memory counting opcode names: top_macro_opcodes and "
				   "top_micro_opcodes may miss some");
	else if (s->macros.uncounted || s->micros.uncounted)
		tm_diag_note(diag,
			     "more than %u distinct opcode names: %" PRIu64 " macro and %" PRIu64
			     " micro opcodes left out of top_macro_opcodes and top_micro_opcodes",
			     CIS501_MAX_NAMES, s->macros.uncounted, s->micros.uncounted);
	return err;
}

void cis501_stats_free(void *p)
{
	struct cis501_stats *s = p;
	tm_names_free(&s->macros);
	tm_names_free(&s->micros);
	free(s->pcs.slots);
	tm_footprint_free(&s->data);
}
