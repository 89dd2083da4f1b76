/* Index lookup and lifetime. The pass that builds an index is in index_build.c. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "tracemount/compress.h"
#include "tracemount/index.h"
#include "tracemount/table.h"

int tm_index_set_source(struct tm_index *ix, const char *source)
{
	json_tokener *tok = json_tokener_new();
	json_object *root = NULL, *name = json_object_new_string(source);
	int err = -ENOMEM;
	if (!tok || !name)
		goto out;
	if (ix->stats_json && ix->stats_len <= INT_MAX) /* a sized text */
		root = json_tokener_parse_ex(tok, ix->stats_json, (int)ix->stats_len);
	if (!root || !json_object_is_type(root, json_type_object)) {
		err = -EBADMSG;
		goto out;
	}
	if (json_object_object_add(root, "source", name) < 0)
		goto out;
	name = NULL; /* replaced in place: the keys keep their order */
	size_t len;
	const char *text = json_object_to_json_string_length(root, TM_STATS_JSON_FLAGS, &len);
	char *copy = text ? malloc(len + 1) : NULL;
	if (!copy)
		goto out;
	memcpy(copy, text, len);
	copy[len] = '\n';
	free(ix->stats_json);
	ix->stats_json = copy;
	ix->stats_len = len + 1;
	err = 0;
out:
	json_object_put(name);
	json_object_put(root);
	if (tok)
		json_tokener_free(tok);
	return err;
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
	size_t tables = ix->n_tables * sizeof(*ix->tables);
	for (uint32_t k = 0; k < ix->n_tables; k++)
		tables += tm_table_mem(&ix->tables[k]);
	return sizeof(*ix) + ix->n_rows * ix->row_words * sizeof(uint64_t) + ix->stats_len +
	       ix->errors_len + tables + (ix->z ? tm_zindex_mem(ix->z) : 0);
}

void tm_index_free(struct tm_index *ix)
{
	if (!ix)
		return;
	free(ix->rows);
	free(ix->stats_json);
	free(ix->errors_txt);
	for (uint32_t k = 0; k < ix->n_tables && ix->tables; k++)
		tm_table_free(&ix->tables[k]);
	free(ix->tables);
	tm_zindex_free(ix->z);
	free(ix);
}
