/* FULL's plots/registers.svg: how often each register is written along the trace, a heat map
 * of register (y) against position (x), drawn when the index pass ends (a table view,
 * format.h) from the changes the decoder found between successive records. A change is counted
 * at the record that shows it: the one after the instruction that made it. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "full.h"
#include "plots/heatmap.h"
#include "plots/plots.h"
#include "plots/svg.h"
#include "tracemount/util.h"

enum { FAMILY_GPR, FAMILY_FPR, FAMILY_VR, FAMILY_SPR };

int full_reg_heat_init(struct full_reg_heat *h)
{
	memset(h, 0, sizeof(*h));
	h->v = calloc(TM_PLOT_SLICES, sizeof(*h->v));
	return h->v ? 0 : -ENOMEM;
}

void full_reg_heat_free(struct full_reg_heat *h)
{
	free(h->v);
	h->v = NULL;
}

/* As tm_slices_merge: neighbouring slices in pairs, each twice as long. */
static void merge(struct full_reg_heat *h)
{
	for (unsigned j = 0; j < TM_PLOT_SLICES / 2; j++)
		for (unsigned k = 0; k < FULL_N_REGS; k++)
			h->v[j][k] = h->v[2 * j][k] + h->v[2 * j + 1][k];
	memset(h->v + TM_PLOT_SLICES / 2, 0, TM_PLOT_SLICES / 2 * sizeof(*h->v));
	h->shift++;
}

static void add_mask(uint64_t *row, uint32_t mask)
{
	for (; mask; mask &= mask - 1)
		row[__builtin_ctz(mask)]++;
}

void full_reg_heat_update(struct full_reg_heat *h, const struct tm_chunk *c)
{
	if (!h->v || !c->n_records)
		return;
	uint64_t last = c->first_record + c->n_records - 1;
	while (last >> h->shift >= TM_PLOT_SLICES)
		merge(h);
	h->records = last + 1;
	for (size_t i = 0; i < c->n_records; i++) {
		const struct full_record *r = full_rec(c, i);
		uint64_t *row = h->v[(c->first_record + i) >> h->shift];
		add_mask(row + FULL_REG_GPR, r->gpr_changed);
		add_mask(row + FULL_REG_FPR, r->fpr_changed);
		add_mask(row + FULL_REG_VR, r->vr_changed);
		add_mask(row + FULL_REG_SPR, r->spr_changed);
	}
}

/* The name of register k: r0-r31, f0-f31, v0-v31, then the special registers. */
static void reg_name(unsigned k, char *buf, size_t len)
{
	if (k >= FULL_REG_SPR)
		snprintf(buf, len, "%s", full_sprs[k - FULL_REG_SPR].name);
	else
		snprintf(buf, len, "%c%u", "rfv"[k / 32], k % 32);
}

int full_reg_heat_draw(const struct full_reg_heat *h, FILE *out)
{
	static const char *const names[] = {"writes"};
	static const char *const family_names[] = {"general", "floating-point", "vector",
						   "special"};
	unsigned used = h->records ? (unsigned)((h->records - 1) >> h->shift) + 1 : 0;
	uint64_t total[FULL_N_REGS] = {0}, all = 0;
	struct tm_heat_row rows[FULL_N_REGS] = {0}; /* no note, no field left unset */
	unsigned reg[FULL_N_REGS], n = 0;
	for (unsigned j = 0; j < used; j++)
		for (unsigned k = 0; k < FULL_N_REGS; k++)
			total[k] += h->v[j][k];
	/* only the registers written: a family never written takes no room */
	for (unsigned k = 0; k < FULL_N_REGS; k++) {
		if (!total[k])
			continue;
		unsigned family = k < FULL_REG_SPR ? k / 32 : FAMILY_SPR;
		reg[n] = k;
		rows[n].group = family;
		rows[n].priority = !n || rows[n - 1].group != family ? 2 : 1;
		char name[16];
		reg_name(k, name, sizeof(name));
		snprintf(rows[n].label, sizeof(rows[n].label), "%s", name);
		snprintf(rows[n].tip, sizeof(rows[n].tip), "%s (%s)", name, family_names[family]);
		all += total[k];
		n++;
	}
	uint64_t *count = calloc((size_t)(n ? n : 1) * (used ? used : 1), sizeof(*count));
	if (!count)
		return -ENOMEM;
	for (unsigned r = 0; r < n; r++)
		for (unsigned j = 0; j < used; j++)
			count[(size_t)r * used + j] = h->v[j][reg[r]];
	char title[160], num[32], panel[64];
	snprintf(title, sizeof(title), "Register writes (full, %s records)",
		 tm_svg_number((double)h->records, num, sizeof(num)));
	snprintf(panel, sizeof(panel), "writes: %s", tm_svg_number((double)all, num, sizeof(num)));
	const char *panel_titles[] = {panel};
	double plot_h = n * 16.0;
	plot_h = plot_h < 240 ? 240 : plot_h > 640 ? 640 : plot_h;
	struct tm_heatmap m = {
	    .width = 960,
	    .height = (unsigned)(plot_h + 126),
	    .title = title,
	    .desc = "How often each register changed, in each slice of the trace: the registers "
		    "written at least once, by family (general, floating-point, vector, special), "
		    "on a logarithmic colour scale.",
	    .x_label = "position in the trace (records)",
	    .y_label = "register (those written)",
	    .unit = "writes",
	    .n_panels = 1,
	    .panel_names = names,
	    .panel_titles = panel_titles,
	    .n_rows = n,
	    .rows = rows,
	    .n_cols = used,
	    .col_records = 1ull << h->shift,
	    .records = h->records,
	    .count = count,
	    .empty = h->records ? "no register changed" : "the trace has no records",
	};
	tm_heatmap_draw(out, &m);
	free(count);
	return ferror(out) ? -EIO : 0;
}
