/* Index lookup and lifetime. The pass that builds an index is in index_build.c. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "tracemount/compress.h"
#include "tracemount/derive.h"
#include "tracemount/index.h"
#include "tracemount/stats_json.h"
#include "tracemount/table.h"

/* stats.json's root: the record part's figures, then each product's object in order. */
static int compose_stats(const struct tm_index *ix, json_object *root)
{
	const struct tm_format *fmt = ix->fmt;
	json_object *classes = json_object_new_object();
	int err = classes ? 0 : -ENOMEM;
	tm_json_add(root, "format", json_object_new_string(fmt->name), &err);
	tm_json_add(root, "source", json_object_new_string(ix->source ? ix->source : ""), &err);
	tm_json_add_int(root, "bytes", ix->raw_size, &err);
	tm_json_add_int(root, "records", tm_index_records(ix), &err);
	for (unsigned k = 0; classes && k < fmt->n_classes; k++)
		tm_json_add_int(classes, fmt->classes[k],
				tm_index_class_count(ix, ix->n_rows - 1, k), &err);
	for (unsigned t = 0; classes && t < fmt->n_tags && t < TM_FLAG_BITS; t++)
		if (fmt->tags[t])
			tm_json_add_int(classes, fmt->tags[t], ix->tags[t], &err);
	tm_json_add(root, "classes", classes, &err);
	tm_json_add_int(root, "errors", ix->n_errors, &err);
	tm_json_add_int(root, "notes", ix->n_notes, &err);
	tm_json_add(root, "truncated", json_object_new_boolean(ix->truncated), &err);
	for (unsigned p = 0; p < TM_MAX_PRODUCTS && !err; p++) {
		if (!(ix->products >> p & 1))
			continue;
		json_object *obj = json_tokener_parse(ix->product[p].json);
		if (!obj || !json_object_is_type(obj, json_type_object)) {
			json_object_put(obj);
			return -EBADMSG;
		}
		tm_json_add(root, p ? tm_derivers[p - 1]->name : fmt->name, obj, &err);
	}
	return err;
}

/* errors.txt: the record pass's lines, then each product's in order. */
static char *compose_errors(const struct tm_index *ix, size_t *len)
{
	size_t n = ix->record_errors_len;
	for (unsigned p = 0; p < TM_MAX_PRODUCTS; p++)
		n += ix->products >> p & 1 ? ix->product[p].errors_len : 0;
	char *text = malloc(n + 1);
	if (!text)
		return NULL;
	memcpy(text, ix->record_errors, ix->record_errors_len);
	*len = ix->record_errors_len;
	for (unsigned p = 0; p < TM_MAX_PRODUCTS; p++)
		if (ix->products >> p & 1) {
			memcpy(text + *len, ix->product[p].errors, ix->product[p].errors_len);
			*len += ix->product[p].errors_len;
		}
	text[*len] = '\0';
	return text;
}

int tm_index_compose(struct tm_index *ix)
{
	if (!ix->fmt || (ix->products & ix->all_products) != ix->all_products)
		return 0;
	json_object *root = json_object_new_object();
	size_t len = 0, errors_len = 0;
	int err = root ? compose_stats(ix, root) : -ENOMEM;
	const char *text =
	    err ? NULL : json_object_to_json_string_length(root, TM_STATS_JSON_FLAGS, &len);
	char *stats = text ? malloc(len + 2) : NULL, *errors = NULL;
	if (!err && (!stats || !(errors = compose_errors(ix, &errors_len))))
		err = -ENOMEM;
	if (!err) {
		memcpy(stats, text, len);
		stats[len] = '\n';
		stats[len + 1] = '\0';
		free(ix->stats_json);
		free(ix->errors_txt);
		ix->stats_json = stats;
		ix->stats_len = len + 1;
		ix->errors_txt = errors;
		ix->errors_len = errors_len;
		stats = errors = NULL;
	}
	free(stats);
	free(errors);
	json_object_put(root);
	return err;
}

int tm_index_set_source(struct tm_index *ix, const char *source)
{
	char *copy = strdup(source);
	if (!copy)
		return -ENOMEM;
	free(ix->source);
	ix->source = copy;
	return tm_index_compose(ix);
}

static bool table_empty(const struct tm_table *t)
{
	return !t->len && !t->n_pieces && !t->z && !t->ends;
}

int tm_index_adopt(struct tm_index *ix, struct tm_index *from)
{
	if (from->n_rows != ix->n_rows || from->row_words != ix->row_words ||
	    memcmp(from->rows, ix->rows, ix->n_rows * ix->row_words * sizeof(uint64_t)) != 0)
		return -ESTALE;
	if (from->tables && !ix->tables) {
		if (!(ix->tables = calloc(from->n_tables, sizeof(*ix->tables))))
			return -ENOMEM;
		ix->n_tables = from->n_tables;
	}
	for (uint32_t k = 0; from->tables && k < from->n_tables && k < ix->n_tables; k++)
		if (table_empty(&ix->tables[k]) && !table_empty(&from->tables[k])) {
			ix->tables[k] = from->tables[k];
			memset(&from->tables[k], 0, sizeof(from->tables[k]));
		}
	uint32_t new = from->products & ~ix->products;
	for (unsigned p = 0; p < TM_MAX_PRODUCTS; p++)
		if (new >> p & 1) {
			ix->product[p] = from->product[p];
			memset(&from->product[p], 0, sizeof(from->product[p]));
			ix->n_errors += ix->product[p].n_errors;
			ix->n_notes += ix->product[p].n_notes;
		}
	ix->products |= new;
	return tm_index_compose(ix);
}

int tm_index_find(const struct tm_index *ix, unsigned v, uint64_t off, uint64_t *chunk)
{
	if (v >= ix->n_views || off >= tm_index_view_size(ix, v))
		return -ERANGE;
	/* last chunk row r with offset(r) <= off; empty chunks share offsets, so take the last */
	uint64_t lo = 0, hi = tm_index_chunks(ix);
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (tm_index_view_off(ix, mid, v) <= off)
			lo = mid;
		else
			hi = mid;
	}
	*chunk = lo;
	return 0;
}

const char *tm_index_check(const struct tm_index *ix, unsigned chunk_records, uint64_t trace_size)
{
	const struct tm_zindex *gz = ix->z;
	uint64_t covered = gz ? gz->out_size : trace_size;
	if (!ix->n_rows || ix->row_words < TM_ROW_VIEWS + ix->n_views + ix->n_classes)
		return "no rows";
	if (ix->raw_size > covered || tm_index_row(ix, ix->n_rows - 1)[TM_ROW_RAW_OFF] > covered)
		return "trace offsets past the trace's end";
	for (uint64_t r = 0; r + 1 < ix->n_rows; r++) {
		const uint64_t *a = tm_index_row(ix, r), *b = tm_index_row(ix, r + 1);
		if (b[TM_ROW_RAW_OFF] < a[TM_ROW_RAW_OFF] || b[TM_ROW_RECORD] < a[TM_ROW_RECORD] ||
		    b[TM_ROW_RECORD] - a[TM_ROW_RECORD] > chunk_records)
			return "rows out of order";
		uint64_t most = (b[TM_ROW_RECORD] - a[TM_ROW_RECORD]) * TM_RECORD_BYTES_MAX;
		for (unsigned v = 0; v < ix->n_views; v++)
			if (b[TM_ROW_VIEWS + v] < a[TM_ROW_VIEWS + v] ||
			    b[TM_ROW_VIEWS + v] - a[TM_ROW_VIEWS + v] > most)
				return "view offsets out of order";
		for (unsigned c = 0; c < ix->n_classes; c++) {
			uint64_t before = a[TM_ROW_VIEWS + ix->n_views + c];
			uint64_t after = b[TM_ROW_VIEWS + ix->n_views + c];
			if (after < before || after - before > b[TM_ROW_RECORD] - a[TM_ROW_RECORD])
				return "class counts out of order";
		}
	}
	if (!gz)
		return NULL;
	return tm_zindex_check(gz, trace_size);
}

size_t tm_index_mem(const struct tm_index *ix)
{
	size_t bytes = sizeof(*ix) + ix->n_rows * ix->row_words * sizeof(uint64_t) + ix->stats_len +
		       ix->errors_len + ix->record_errors_len + ix->n_tables * sizeof(*ix->tables) +
		       (ix->z ? tm_zindex_mem(ix->z) : 0);
	for (uint32_t k = 0; ix->tables && k < ix->n_tables; k++)
		bytes += tm_table_mem(&ix->tables[k]);
	for (unsigned p = 0; p < TM_MAX_PRODUCTS; p++)
		bytes += ix->product[p].errors_len +
			 (ix->product[p].json ? strlen(ix->product[p].json) : 0);
	return bytes;
}

void tm_index_free(struct tm_index *ix)
{
	if (!ix)
		return;
	free(ix->rows);
	free(ix->stats_json);
	free(ix->errors_txt);
	free(ix->record_errors);
	free(ix->source);
	for (unsigned p = 0; p < TM_MAX_PRODUCTS; p++) {
		free(ix->product[p].json);
		free(ix->product[p].errors);
	}
	for (uint32_t k = 0; k < ix->n_tables && ix->tables; k++)
		tm_table_free(&ix->tables[k]);
	free(ix->tables);
	tm_zindex_free(ix->z);
	free(ix);
}
