/* QEMU4V / Tarmac statistics for stats.json; keys in the QEMU4V and Tarmac section of
 * doc/views.md. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "tarmac.h"
#include "tracemount/diag.h"
#include "tracemount/stats_json.h"
#include "tracemount/util.h"
#include "tracemount/view.h"

int tarmac_stats_init(void *p)
{
	struct tarmac_stats *s = p;
	s->cpus = calloc(TARMAC_MAX_CPUS + 1, sizeof(*s->cpus));
	if (!s->cpus)
		return -ENOMEM;
	s->isets.max = s->modes.max = s->mnemonics.max = s->registers.max = TARMAC_MAX_NAMES;
	s->pc_min = s->addr_min = UINT64_MAX;
	tm_footprint_init(&s->code);
	tm_footprint_init(&s->data);
	return tm_series_init(&s->processors);
}

static void count_span(struct tm_names *t, const uint8_t *line, struct tarmac_span sp,
		       const uint8_t *limit)
{
	if (sp.len)
		tm_names_add(t, line + sp.off, sp.len, limit, 1);
}

/* An instruction's set, spelled as a reader knows it: Tarmac's ISET letters (O, A, T) and
 * their longer forms; MIPS for a processor whose code is MIPS (QEMU4V writes its ISET as A);
 * another token as written. */
static void count_iset(struct tm_names *t, const uint8_t *line, const struct tarmac_record *r,
		       const uint8_t *limit)
{
	static const struct {
		const char *token, *name;
	} sets[] = {
	    {"O", "AArch64"}, {"A64", "AArch64"}, {"A", "AArch32"}, {"A32", "AArch32"},
	    {"T", "Thumb"},   {"T16", "Thumb"},	  {"T32", "Thumb"},
	};
	struct tarmac_span sp = r->span[S_ISET];
	const char *name = (r->mips & R_MIPS) ? "MIPS" : NULL;
	for (size_t k = 0; k < ARRAY_SIZE(sets) && !name && sp.len; k++)
		if (sp.len == strlen(sets[k].token) &&
		    strncasecmp((const char *)line + sp.off, sets[k].token, sp.len) == 0)
			name = sets[k].name;
	const uint8_t *spelled = (const uint8_t *)name;
	if (name) /* limit: read it byte by byte, never 8 at once */
		tm_names_add(t, spelled, strlen(name), spelled, 1);
	else
		count_span(t, line, sp, limit);
}

/* Mnemonics are counted in lower case: Fast Models writes "LDR", QEMU4V "ldr". */
static void count_mnemonic(struct tm_names *t, const uint8_t *line, struct tarmac_span sp)
{
	uint8_t low[64];
	size_t n = sp.len < sizeof(low) ? sp.len : sizeof(low);
	for (size_t i = 0; i < n; i++) {
		uint8_t ch = line[sp.off + i];
		low[i] = ch >= 'A' && ch <= 'Z' ? (uint8_t)(ch | 0x20) : ch;
	}
	if (n)
		tm_names_add(t, low, n, low + sizeof(low), 1);
}

/* Each footprint block is 4 KiB: a trace of scattered addresses stops counting there. */
static void add_line(struct tm_footprint *f, uint64_t addr, bool *capped)
{
	if (f->n_blocks < TARMAC_MAX_BLOCKS)
		tm_footprint_add(f, addr >> 6);
	else
		*capped = true;
}

static void count_time(struct tarmac_stats *s, const struct tarmac_record *r, const uint8_t *line)
{
	struct tarmac_span u = r->span[S_UNIT];
	if (!s->unit_len && u.len && u.len < sizeof(s->unit)) {
		memcpy(s->unit, line + u.off, u.len);
		s->unit_len = (uint8_t)u.len;
	} else if (u.len != s->unit_len || memcmp(s->unit, line + u.off, u.len) != 0) {
		s->other_units++;
	}
	if (r->time < 0) {
		s->negative++;
		return;
	}
	if (s->have_prev && r->time < s->prev)
		s->backwards++;
	s->prev = r->time;
	s->have_prev = true;
	if (!s->have_time) {
		s->first = s->min = s->max = r->time;
		s->have_time = true;
	}
	s->last = r->time;
	if (r->time < s->min)
		s->min = r->time;
	if (r->time > s->max)
		s->max = r->time;
}

void tarmac_stats_update(void *p, const struct tm_chunk *c)
{
	struct tarmac_stats *s = p;
	const uint8_t *limit = c->raw + c->raw_len;
	for (size_t i = 0; i < c->n_records; i++) {
		const struct tarmac_record *r = tarmac_rec(c, i);
		const uint8_t *line = c->raw + r->head.raw_rel;
		unsigned cls = r->head.cls;
		uint32_t cpu = r->cpu < TARMAC_MAX_CPUS ? r->cpu : TARMAC_MAX_CPUS;
		s->cpus[cpu][cls]++;
		if (r->cpu >= TARMAC_MAX_CPUS)
			s->other_cpus = true;
		else if (r->cpu >= s->max_cpu)
			s->max_cpu = r->cpu + 1;
		s->crlf += (r->head.flags & F_CRLF) != 0;
		if (r->head.flags & F_TIME) {
			s->timed++;
			count_time(s, r, line);
		}
		switch (cls) {
		case TC_INSTRUCTION:
		case TC_SKIPPED:
			count_iset(&s->isets, line, r, limit);
			count_span(&s->modes, line, r->span[S_MODE], limit);
			if (cls == TC_INSTRUCTION)
				count_mnemonic(&s->mnemonics, line, r->span[S_MNEMONIC]);
			s->pc_min = r->addr < s->pc_min ? r->addr : s->pc_min;
			s->pc_max = r->addr > s->pc_max ? r->addr : s->pc_max;
			add_line(&s->code, r->addr, &s->capped);
			tarmac_plot_count(s, r, c->first_record + i);
			break;
		case TC_READ:
		case TC_WRITE:
			s->sizes[r->size < TARMAC_MAX_SIZES ? r->size : TARMAC_MAX_SIZES]++;
			s->addr_min = r->addr < s->addr_min ? r->addr : s->addr_min;
			s->addr_max = r->addr > s->addr_max ? r->addr : s->addr_max;
			add_line(&s->data, r->addr, &s->capped);
			break;
		case TC_REGISTER: count_span(&s->registers, line, r->span[S_NAME], limit); break;
		}
	}
}

static json_object *address(uint64_t v)
{
	char buf[sizeof("0x") + 16]; /* up to 16 digits */
	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return json_object_new_string(buf);
}

static json_object *cpus_json(const struct tarmac_stats *s, int *err)
{
	json_object *obj = json_object_new_object();
	for (uint32_t cpu = 0; obj && cpu <= TARMAC_MAX_CPUS; cpu++) {
		if (cpu == TARMAC_MAX_CPUS ? !s->other_cpus : cpu >= s->max_cpu)
			continue;
		uint64_t total = 0;
		for (unsigned k = 0; k < TARMAC_N_CLASSES; k++)
			total += s->cpus[cpu][k];
		if (!total)
			continue;
		json_object *one = json_object_new_object();
		for (unsigned k = 0; k < TARMAC_N_CLASSES; k++)
			tm_json_add_int(one, tarmac_classes[k], s->cpus[cpu][k], err);
		char key[sizeof("4294967295+")];
		snprintf(key, sizeof(key), cpu == TARMAC_MAX_CPUS ? "%u+" : "%u", cpu);
		tm_json_add(obj, key, one, err);
	}
	return obj;
}

static json_object *sizes_json(const struct tarmac_stats *s, int *err)
{
	json_object *obj = json_object_new_object();
	for (unsigned n = 0; obj && n <= TARMAC_MAX_SIZES; n++) {
		char key[sizeof("4294967295+")];
		if (!s->sizes[n])
			continue;
		snprintf(key, sizeof(key), n == TARMAC_MAX_SIZES ? "%u+" : "%u", n);
		tm_json_add_int(obj, key, s->sizes[n], err);
	}
	return obj;
}

static json_object *time_json(const struct tarmac_stats *s, int *err)
{
	json_object *obj = json_object_new_object();
	bool t = s->have_time;
	tm_json_add_or_null(obj, "unit", s->unit_len,
			    json_object_new_string_len(s->unit, s->unit_len), err);
	tm_json_add_or_null(obj, "first", t, json_object_new_int64(s->first), err);
	tm_json_add_or_null(obj, "last", t, json_object_new_int64(s->last), err);
	tm_json_add_or_null(obj, "min", t, json_object_new_int64(s->min), err);
	tm_json_add_or_null(obj, "max", t, json_object_new_int64(s->max), err);
	tm_json_add_int(obj, "backwards", s->backwards, err);
	tm_json_add_int(obj, "negative", s->negative, err);
	tm_json_add_int(obj, "other_units", s->other_units, err);
	return obj;
}

int tarmac_stats_finish(void *p, json_object *obj, struct tm_diag *diag)
{
	struct tarmac_stats *s = p;
	bool code = s->pc_min <= s->pc_max, data = s->addr_min <= s->addr_max;
	int err = 0;
	tm_json_add(obj, "cpus", cpus_json(s, &err), &err);
	tm_json_add(obj, "instruction_sets", tm_names_json(&s->isets, 0), &err);
	tm_json_add(obj, "modes", tm_names_json(&s->modes, 0), &err);
	tm_json_add(obj, "top_mnemonics", tm_names_json(&s->mnemonics, TARMAC_TOP_MNEMONICS), &err);
	tm_json_add(obj, "memory_accesses_by_size", sizes_json(s, &err), &err);
	tm_json_add(obj, "registers_written", tm_names_json(&s->registers, 0), &err);
	tm_json_add(obj, "time", time_json(s, &err), &err);
	tm_json_add_or_null(obj, "pc_min", code, address(s->pc_min), &err);
	tm_json_add_or_null(obj, "pc_max", code, address(s->pc_max), &err);
	tm_json_add_or_null(obj, "address_min", data, address(s->addr_min), &err);
	tm_json_add_or_null(obj, "address_max", data, address(s->addr_max), &err);
	tm_json_add_int(obj, "code_lines_64b", tm_footprint_count(&s->code), &err);
	tm_json_add_int(obj, "code_pages_4k", tm_footprint_count_groups64(&s->code), &err);
	tm_json_add_int(obj, "data_lines_64b", tm_footprint_count(&s->data), &err);
	tm_json_add_int(obj, "data_pages_4k", tm_footprint_count_groups64(&s->data), &err);
	tm_json_add_int(obj, "crlf_lines", s->crlf, &err);
	uint64_t din[3] = {0}; /* a fetch per IT and IS, a read per read, a write per write */
	for (unsigned cpu = 0; s->cpus && cpu <= TARMAC_MAX_CPUS; cpu++) {
		din[0] += s->cpus[cpu][TC_INSTRUCTION] + s->cpus[cpu][TC_SKIPPED];
		din[1] += s->cpus[cpu][TC_READ];
		din[2] += s->cpus[cpu][TC_WRITE];
	}
	tm_json_add(obj, "din", tm_din_stats(din[0], din[1], din[2]), &err);

	const struct tm_names *tables[] = {&s->isets, &s->modes, &s->mnemonics, &s->registers};
	for (size_t i = 0; i < ARRAY_SIZE(tables); i++) {
		if (tables[i]->uncounted) {
			tm_diag_note(diag,
				     "more than %u distinct ISETs, modes, mnemonics or registers: "
				     "%" PRIu64 " occurrences of further names are not counted",
				     TARMAC_MAX_NAMES, tables[i]->uncounted);
			break;
		}
	}
	if (s->crlf)
		tm_diag_note(diag, "%" PRIu64 " lines end in CR LF (kept, CR dropped)", s->crlf);
	if (s->code.err || s->data.err || s->capped)
		tm_diag_note(diag,
			     "%s: code_lines_64b, code_pages_4k, data_lines_64b and "
			     "data_pages_4k are lower bounds",
			     s->capped ? "addresses in more than 8192 regions of 2 MiB"
				       : "out of memory counting distinct lines");
	return err;
}

void tarmac_stats_free(void *p)
{
	struct tarmac_stats *s = p;
	free(s->cpus);
	tm_names_free(&s->isets);
	tm_names_free(&s->modes);
	tm_names_free(&s->mnemonics);
	tm_names_free(&s->registers);
	tm_footprint_free(&s->code);
	tm_footprint_free(&s->data);
	tm_series_free(&s->processors);
}
