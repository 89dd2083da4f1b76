/* TT6 and TT6E statistics for stats.json; keys in doc/views.md. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "tt6.h"
#include "tracemount/diag.h"
#include "tracemount/stats_json.h"
#include "tracemount/util.h"
#include "tracemount/view.h"

/* Statistics. */

#define TOP_MNEMONICS 20

int tt6_stats_init(void *p)
{
	struct tt6_stats *s = p;
	s->last_data_line = UINT64_MAX;
	tm_footprint_init(&s->pcs);
	tm_footprint_init(&s->data);
	return 0;
}

static void count_access(struct tt6_stats *s, const struct tt6_record *r)
{
	const struct ppc_op *op = ppc_op_of(r->word);
	unsigned size = ppc_access_size(op, r->word, r->w2);
	if (op->access == PPC_LOAD)
		s->loads[size]++;
	else if (op->access == PPC_STORE)
		s->stores[size]++;
	else if (op->sizing == PPC_SIZE_NONE && op->tt6_class == PPC_COMPUTE)
		s->cache_ops++;
	if (op->access == PPC_NO_ACCESS || (r->head.flags & F_NO_EA))
		return; /* no address to count */
	uint64_t first = r->w1 >> 6, last = ((uint64_t)r->w1 + (size ? size - 1 : 0)) >> 6;
	for (uint64_t line = first; line <= last; line++) {
		if (line == s->last_data_line)
			continue;
		s->last_data_line = line;
		tm_footprint_add(&s->data, line);
	}
}

void tt6_stats_update(void *p, const struct tm_chunk *c)
{
	struct tt6_stats *s = p;
	for (size_t i = 0; i < c->n_records; i++) {
		const struct tt6_record *r = tt6_rec(c, i);
		s->no_address += (r->head.flags & F_NO_EA) != 0;
		switch (r->head.cls) {
		case TT6_INITIAL:
			s->initial_pc = r->word;
			s->has_initial = 1;
			continue;
		case TT6_SYNC: s->sync[sync_kind(esc_code(r->word))]++; /* fall through */
		case TT6_ESCAPE: s->escape_codes[esc_code(r->word)]++; continue;
		case TT6_FLOW:
			if (!ppc_is_conditional(r->word))
				s->unconditional++;
			else if (r->w1 == r->pc + 4)
				s->not_taken++;
			else
				s->taken++;
			if ((r->head.flags & F_SYNTH) && r->word == PPC_RFI_WORD)
				s->twi_pairs++;
			break;
		case TT6_MEMORY:
		case TT6_MEMEXT: {
			char label = '0';
			unsigned lines = tt6_din_refs(r, &label);
			*(label == '0' ? &s->din_reads : &s->din_writes) += lines;
			count_access(s, r);
			break;
		}
		default: break;
		}
		s->bins[ppc_bin_of(r->word)]++;
		tm_footprint_add(&s->pcs, r->pc >> 2);
	}
}

/* a bin's name: the first word of a disassembly, which fits PPC_TEXT_WIDTH */
#define NAME_LEN (PPC_TEXT_WIDTH + 1)

struct name_count {
	char name[NAME_LEN];
	uint64_t count;
};

static int by_count_desc(const void *a, const void *b)
{
	const struct name_count *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The most frequent base mnemonics: bins named, bins of one name merged, sorted. */
static json_object *top_mnemonics(const struct tt6_stats *s, int *err)
{
	size_t n = 0, cap = 64;
	struct name_count *v = malloc(cap * sizeof(*v));
	json_object *obj = json_object_new_object();
	if (!v || !obj)
		goto out;
	for (unsigned b = 0; b < ARRAY_SIZE(s->bins); b++) {
		if (!s->bins[b])
			continue;
		char name[NAME_LEN];
		ppc_bin_name(b >> 10, b & 0x3ff, name, sizeof(name));
		size_t k = 0;
		while (k < n && strcmp(v[k].name, name) != 0)
			k++;
		if (k == n) {
			if (n == cap) {
				struct name_count *w = realloc(v, 2 * cap * sizeof(*v));
				if (!w)
					goto out;
				v = w;
				cap *= 2;
			}
			memcpy(v[n].name, name, sizeof(name));
			v[n++].count = 0;
		}
		v[k].count += s->bins[b];
	}
	qsort(v, n, sizeof(*v), by_count_desc);
	for (size_t k = 0; k < n && k < TOP_MNEMONICS; k++)
		tm_json_add_int(obj, v[k].name, v[k].count, err);
	free(v);
	return obj;
out:
	free(v);
	json_object_put(obj);
	return NULL; /* the caller's add sets *err */
}

static json_object *size_histogram(const uint64_t *bins, int *err)
{
	json_object *obj = json_object_new_object(), *by_size = json_object_new_object();
	uint64_t total = 0;
	for (unsigned k = 0; by_size && k < TT6_SIZE_BINS; k++) {
		char key[sizeof("4294967295")];
		if (!bins[k])
			continue;
		total += bins[k];
		snprintf(key, sizeof(key), "%u", k);
		tm_json_add_int(by_size, key, bins[k], err);
	}
	tm_json_add_int(obj, "total", total, err);
	tm_json_add(obj, "by_size", by_size, err);
	return obj;
}

static json_object *int_object(const char *const *names, const uint64_t *values, size_t n, int *err)
{
	json_object *obj = json_object_new_object();
	for (size_t k = 0; obj && k < n; k++)
		tm_json_add_int(obj, names[k], values[k], err);
	return obj;
}

int tt6_stats_common(struct tt6_stats *s, json_object *obj, struct tm_diag *diag)
{
	uint64_t instructions = 0;
	char pc[sizeof("0x") + 8];
	for (unsigned b = 0; b < ARRAY_SIZE(s->bins); b++)
		instructions += s->bins[b];
	snprintf(pc, sizeof(pc), "0x%08" PRIx32, s->initial_pc);

	static const char *const branch_keys[] = {"conditional_taken", "conditional_not_taken",
						  "unconditional"};
	uint64_t branches[] = {s->taken, s->not_taken, s->unconditional};
	_Static_assert(ARRAY_SIZE(branch_keys) == ARRAY_SIZE(branches), "a key per count");
	int err = 0;

	tm_json_add_int(obj, "instructions", instructions, &err);
	tm_json_add_or_null(obj, "initial_pc", s->has_initial, json_object_new_string(pc), &err);
	tm_json_add(obj, "top_mnemonics", top_mnemonics(s, &err), &err);
	tm_json_add(obj, "loads", size_histogram(s->loads, &err), &err);
	tm_json_add(obj, "stores", size_histogram(s->stores, &err), &err);
	tm_json_add_int(obj, "cache_ops", s->cache_ops, &err);
	tm_json_add(obj, "din", tm_din_stats(instructions, s->din_reads, s->din_writes), &err);
	tm_json_add(obj, "branches", int_object(branch_keys, branches, ARRAY_SIZE(branches), &err),
		    &err);
	tm_json_add_int(obj, "distinct_pcs", tm_footprint_count(&s->pcs), &err);
	tm_json_add_int(obj, "code_lines_64b", tm_footprint_count_groups(&s->pcs, 4), &err);
	tm_json_add_int(obj, "code_pages_4k", tm_footprint_count_groups(&s->pcs, 10), &err);
	tm_json_add_int(obj, "data_lines_64b", tm_footprint_count(&s->data), &err);
	tm_json_add_int(obj, "data_pages_4k", tm_footprint_count_groups64(&s->data), &err);
	if (s->pcs.err || s->data.err)
		tm_diag_note(diag,
			     "out of memory counting distinct addresses: counts are lower bounds");
	return err;
}

static int stats_finish(void *p, json_object *obj, struct tm_diag *diag, bool tt6e)
{
	struct tt6_stats *s = p;
	int err = tt6_stats_common(s, obj, diag);
	json_object *escapes = json_object_new_object();
	for (unsigned code = 0; escapes && code < ARRAY_SIZE(s->escape_codes); code++) {
		char key[sizeof("0x3ff")];
		if (!s->escape_codes[code])
			continue;
		snprintf(key, sizeof(key), "0x%02x", code);
		tm_json_add_int(escapes, key, s->escape_codes[code], &err);
	}
	tm_json_add_int(obj, "cache_ops_without_address", s->no_address, &err);
	tm_json_add(obj, "escape_codes", escapes, &err);
	if (tt6e && s->no_address) /* TT6 never has them: there it is no problem */
		tm_diag_note(diag,
			     "%" PRIu64 " cache-block instructions (dcbz, dcbt...) have no address "
			     "(an escape 0x12 before each): they are not in convert/NAME.din",
			     s->no_address);
	tm_json_add(obj, "sync_events",
		    int_object(tt6_sync_kinds, s->sync, ARRAY_SIZE(s->sync), &err), &err);
	if (tt6e)
		tm_json_add_int(obj, "twi_pairs", s->twi_pairs, &err);
	return err;
}

int tt6_stats_finish(void *p, json_object *obj, struct tm_diag *diag)
{
	return stats_finish(p, obj, diag, false);
}

int tt6e_stats_finish(void *p, json_object *obj, struct tm_diag *diag)
{
	return stats_finish(p, obj, diag, true);
}

void tt6_stats_free(void *p)
{
	struct tt6_stats *s = p;
	tm_footprint_free(&s->pcs);
	tm_footprint_free(&s->data);
}
