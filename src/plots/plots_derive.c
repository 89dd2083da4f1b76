/* plots/ of every trace (derive.h, doc/plots.md): SVG plots of its records, whatever the
 * format, drawn from the record classes and the memory accesses the format's table gives
 * (format.h: head.cls, accesses, instruction), and their figures as stats.json's "plots". */
#include <errno.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "plots/plots.h"
#include "tracemount/derive.h"
#include "tracemount/diag.h"
#include "tracemount/stats_json.h"
#include "tracemount/util.h"

enum { VIEW_MIX, VIEW_FOOTPRINT, VIEW_ADDRESSES, N_VIEWS };

static const char *const plots_views[N_VIEWS] = {
    [VIEW_MIX] = "plots/mix.svg",
    [VIEW_FOOTPRINT] = "plots/footprint.svg",
    [VIEW_ADDRESSES] = "plots/addresses.svg",
};

struct plots_derive {
	struct tm_plot_data d;
	struct tm_page_set code, data;
	struct tm_addr_heat heat;
	int err;
};

static int plots_init(void *state, const struct tm_images *images, struct tm_diag *diag)
{
	struct plots_derive *s = state;
	(void)images;
	(void)diag;
	int err = tm_slices_init(&s->d.slices);
	return err < 0 ? err : tm_addr_heat_init(&s->heat);
}

/* The accesses of record i: the format's, or an executed instruction's pc as a fetch. */
static unsigned accesses_of(const struct tm_format *fmt, const struct tm_chunk *c, size_t i,
			    struct tm_access *out)
{
	if (fmt->accesses)
		return fmt->accesses(c, i, out);
	struct tm_insn insn;
	if (!fmt->instruction || !fmt->instruction(c, i, &insn) || insn.more)
		return 0;
	out[0] = (struct tm_access){.addr = insn.pc, .kind = TM_ACCESS_FETCH};
	return 1;
}

static void plots_add_records(void *state, const struct tm_format *fmt, const struct tm_chunk *c)
{
	struct plots_derive *s = state;
	s->d.fmt = fmt;
	if (!c->n_records)
		return;
	/* the batch's last record first: the slices merge, if they must, once per batch */
	tm_slices_row(&s->d.slices, c->first_record + c->n_records - 1);
	uint64_t(*v)[TM_PLOT_COLUMNS] = s->d.slices.v;
	unsigned shift = s->d.slices.shift;
	while (s->heat.slice_shift < shift)
		tm_addr_heat_merge(&s->heat);
	for (size_t i = 0; i < c->n_records; i++)
		v[(c->first_record + i) >> shift][tm_chunk_rec(c, i)->cls]++;
	if (!fmt->accesses && !fmt->instruction)
		return;
	for (size_t i = 0; i < c->n_records; i++) {
		struct tm_access a[TM_MAX_ACCESSES];
		unsigned n = accesses_of(fmt, c, i, a);
		s->d.accesses += n;
		unsigned j = (unsigned)((c->first_record + i) >> shift);
		for (unsigned k = 0; k < n; k++) {
			bool code = a[k].kind == TM_ACCESS_FETCH;
			if (a[k].kind < TM_ACCESS_KINDS)
				tm_addr_heat_add(&s->heat, j, a[k].addr, a[k].kind);
			uint64_t page = a[k].addr >> TM_PAGE_SHIFT;
			if (tm_page_set_add(code ? &s->code : &s->data, page))
				v[j][code ? TM_PLOT_NEW_CODE : TM_PLOT_NEW_DATA]++;
		}
	}
}

static int plots_finish(void *state, FILE *const *out, json_object *obj, struct tm_diag *diag)
{
	struct plots_derive *s = state;
	if (s->code.err || s->data.err) {
		tm_diag_note(diag, "plots/footprint.svg counts fewer pages than the trace touched: "
				   "no memory for more");
	}
	s->d.code_pages = s->code.n;
	s->d.data_pages = s->data.n;
	tm_plot_mix(out[VIEW_MIX], &s->d);
	tm_plot_footprint(out[VIEW_FOOTPRINT], &s->d);
	s->d.heat = &s->heat;
	tm_plot_addresses(out[VIEW_ADDRESSES], &s->d);
	int err = 0;
	for (unsigned k = 0; k < N_VIEWS; k++)
		if (ferror(out[k]))
			err = -EIO;
	const struct {
		const char *key;
		uint64_t value;
	} keys[] = {
	    {"slices", tm_slices_used(&s->d.slices)},
	    {"slice_records", 1ull << s->d.slices.shift},
	    {"accesses", s->d.accesses},
	    {"code_pages_4k", s->d.code_pages},
	    {"data_pages_4k", s->d.data_pages},
	};
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
		tm_json_add_int(obj, keys[k].key, keys[k].value, &err);
	return err;
}

static void plots_free(void *state)
{
	struct plots_derive *s = state;
	tm_slices_free(&s->d.slices);
	tm_page_set_free(&s->code);
	tm_page_set_free(&s->data);
	tm_addr_heat_free(&s->heat);
}

const struct tm_deriver tm_deriver_plots = {
    .name = "plots",
    .views = plots_views,
    .n_outputs = ARRAY_SIZE(plots_views),
    .state_size = sizeof(struct plots_derive),
    .init = plots_init,
    .add_records = plots_add_records,
    .finish = plots_finish,
    .free = plots_free,
};
