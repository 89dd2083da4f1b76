/* FULL statistics for stats.json: TT6's instruction statistics, plus the layout, the registers
 * written and the FP and vector instructions; keys in doc/views.md. */
#include <inttypes.h>
#include <stdio.h>

#include <json-c/json.h>

#include "full.h"
#include "tracemount/diag.h"
#include "tracemount/stats_json.h"
#include "tracemount/util.h"

int full_stats_init(void *p)
{
	struct full_stats *s = p;
	s->layout = -1;
	int err = full_reg_heat_init(&s->regs);
	return err < 0 ? err : tt6_stats_init(&s->tt);
}

void full_stats_update(void *p, const struct tm_chunk *c)
{
	struct full_stats *s = p;
	if (c->n_records && s->layout < 0) {
		s->layout = full_rec(c, 0)->layout;
		s->tt.initial_pc = full_rec(c, 0)->tt.pc;
		s->tt.has_initial = 1;
	}
	for (size_t i = 0; i < c->n_records; i++) {
		const struct full_record *r = full_rec(c, i);
		s->written[0] += (unsigned)__builtin_popcount(r->gpr_changed);
		s->written[1] += (unsigned)__builtin_popcount(r->fpr_changed);
		s->written[2] += (unsigned)__builtin_popcount(r->vr_changed);
		s->written[3] += (unsigned)__builtin_popcount(r->spr_changed);
		switch (ppc_unit_of(r->tt.word)) {
		case PPC_UNIT_FP: s->fp++; break;
		case PPC_UNIT_VECTOR: s->vector++; break;
		default: break;
		}
		s->jumps += (r->tt.head.flags & F_JUMP) != 0;
	}
	tt6_stats_update(&s->tt, c);
	full_reg_heat_update(&s->regs, c);
}

int full_stats_finish(void *p, json_object *obj, struct tm_diag *diag)
{
	struct full_stats *s = p;
	static const char *const families[] = {"gpr", "fpr", "vr", "spr"};
	_Static_assert(ARRAY_SIZE(families) == ARRAY_SIZE(s->written), "a name per family");
	int err = tt6_stats_common(&s->tt, obj, diag);
	if (err < 0)
		return err;
	const struct full_layout *l = s->layout >= 0 ? &full_layouts[s->layout] : NULL;
	tm_json_add_or_null(obj, "record_size", l, l ? json_object_new_int64(l->size) : NULL, &err);
	tm_json_add_or_null(obj, "layout", l, l ? json_object_new_string(l->name) : NULL, &err);
	json_object *written = json_object_new_object();
	for (unsigned k = 0; k < ARRAY_SIZE(families); k++)
		tm_json_add_int(written, families[k], s->written[k], &err);
	tm_json_add(obj, "registers_changed", written, &err);
	tm_json_add_int(obj, "fp_instructions", s->fp, &err);
	tm_json_add_int(obj, "vector_instructions", s->vector, &err);
	tm_json_add_int(obj, "pc_discontinuities", s->jumps, &err);
	return err;
}

void full_stats_free(void *p)
{
	struct full_stats *s = p;
	tt6_stats_free(&s->tt);
	full_reg_heat_free(&s->regs);
}

int full_tables_finish(void *p, FILE *const *out)
{
	struct full_stats *s = p;
	return full_reg_heat_draw(&s->regs, out[0]);
}
