/* spix/ of every instruction trace (derive.h): the basic-block table of the instructions it
 * executed (spix_builder.c), as spix/NAME.spixcounts and spix/summary.txt, and its figures as
 * stats.json's "spix". */
#include <errno.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "tracemount/derive.h"
#include "tracemount/diag.h"
#include "spix/spix.h"
#include "tracemount/stats_json.h"
#include "tracemount/util.h"

enum { VIEW_COUNTS, VIEW_SUMMARY, N_VIEWS };

static const char *const spix_views[N_VIEWS] = {
    [VIEW_COUNTS] = "spix/%s.spixcounts",
    [VIEW_SUMMARY] = "spix/summary.txt",
};

struct spix_derive {
	struct tm_spix_builder *builder;
};

static int spix_init(void *state, const struct tm_images *images, struct tm_diag *diag)
{
	struct spix_derive *s = state;
	(void)images; /* basic blocks need no names */
	(void)diag;
	return tm_spix_builder_new(&s->builder);
}

static void spix_add(void *state, const struct tm_insn *insn, size_t n)
{
	struct spix_derive *s = state;
	tm_spix_builder_add(s->builder, insn, n);
}

/* The tables, and their figures in obj. More code than spix/ holds leaves its tables empty,
 * reported. */
static int spix_finish(void *state, FILE *const *out, json_object *obj, struct tm_diag *diag)
{
	struct spix_derive *s = state;
	struct tm_spix_table t;
	struct tm_spix_facts facts;
	int err = tm_spix_builder_finish(s->builder, &t, &facts);
	if (err == -EFBIG) {
		tm_diag_note(diag,
			     "spix/ is empty: the trace runs more code than it holds (%u distinct "
			     "runs of instructions, %u blocks)",
			     TM_SPIX_MAX_RUNS, TM_SPIX_MAX_BLOCKS);
		err = 0; /* reported: the trace's other views stand */
		return tm_json_add(obj, "omitted", json_object_new_boolean(true), &err);
	}
	if (err)
		return err;
	err = tm_spix_write(&t, out[VIEW_COUNTS]);
	if (!err)
		err = tm_spix_summary(&t, out[VIEW_SUMMARY]);
	struct tm_spix_totals tot;
	tm_spix_totals(&t, &tot);
	const struct {
		const char *key;
		uint64_t value;
	} keys[] = {
	    {"blocks", t.nbb},
	    {"executed_blocks", tot.executed},
	    {"instructions", facts.instructions},
	    {"text_size", t.tsize},
	    {"gaps_shortened", facts.gaps_shortened},
	    {"overlapping_instructions", facts.overlaps},
	    {"saturated_counters", facts.saturated},
	};
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
		tm_json_add_int(obj, keys[k].key, keys[k].value, &err);
	tm_spix_table_free(&t);
	return err;
}

static void spix_free(void *state)
{
	struct spix_derive *s = state;
	tm_spix_builder_free(s->builder);
}

const struct tm_deriver tm_deriver_spix = {
    .name = "spix",
    .views = spix_views,
    .n_outputs = ARRAY_SIZE(spix_views),
    .state_size = sizeof(struct spix_derive),
    .init = spix_init,
    .add = spix_add,
    .finish = spix_finish,
    .free = spix_free,
};
