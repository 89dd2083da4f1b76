/* Name counting for stats.json: see names.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "tracemount/names.h"
#include "tracemount/stats_json.h"

static size_t name_slot(uint64_t key, size_t len, size_t n_slots)
{
	return (size_t)(((key ^ ((uint64_t)len << 56)) * 0x9e3779b97f4a7c15ull) >> 32) &
	       (n_slots - 1);
}

static int names_grow(struct tm_names *t)
{
	size_t n = t->n_slots ? 2 * t->n_slots : 256;
	struct tm_name *slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_slots; i++) {
		struct tm_name *e = &t->slots[i];
		if (!e->name)
			continue;
		size_t s = name_slot(e->key, e->len, n);
		while (slots[s].name)
			s = (s + 1) & (n - 1);
		slots[s] = *e;
	}
	free(t->slots);
	t->slots = slots;
	t->n_slots = n;
	t->last = 0;
	return 0;
}

static bool same_name(const struct tm_name *e, uint64_t key, const uint8_t *name, size_t len)
{
	return e->name && e->key == key && e->len == len &&
	       (len <= 8 || memcmp(e->name + 8, name + 8, len - 8) == 0);
}

/* The slot of name, or of the empty slot where it belongs. */
static size_t names_find(const struct tm_names *t, uint64_t key, const uint8_t *name, size_t len)
{
	size_t s = name_slot(key, len, t->n_slots);
	while (t->slots[s].name && !same_name(&t->slots[s], key, name, len))
		s = (s + 1) & (t->n_slots - 1);
	return s;
}

void tm_names_add(struct tm_names *t, const uint8_t *name, size_t len, const uint8_t *limit,
		  uint64_t n)
{
	uint64_t key = tm_name_key(name, len, limit);
	if (t->n_slots && same_name(&t->slots[t->last], key, name, len)) {
		t->slots[t->last].count += n;
		return;
	}
	size_t s = t->n_slots ? names_find(t, key, name, len) : 0;
	if (t->n_slots && t->slots[s].name) {
		t->slots[s].count += n;
		t->last = s;
		return;
	}
	if (t->max && t->n >= t->max) {
		t->uncounted += n;
		return;
	}
	if ((t->n + 1) * 2 > t->n_slots) {
		if (names_grow(t) < 0) {
			t->err = -ENOMEM;
			t->uncounted += n;
			return;
		}
		s = names_find(t, key, name, len);
	}
	char *copy = malloc(len + 1);
	if (!copy) {
		t->err = -ENOMEM;
		t->uncounted += n;
		return;
	}
	memcpy(copy, name, len);
	copy[len] = 0;
	t->slots[s] = (struct tm_name){.key = key, .count = n, .name = copy, .len = (uint32_t)len};
	t->n++;
	t->last = s;
}

void tm_names_free(struct tm_names *t)
{
	for (size_t i = 0; i < t->n_slots; i++)
		free(t->slots[i].name);
	free(t->slots);
	t->slots = NULL;
	t->n_slots = t->n = t->last = 0;
}

static int by_count_desc(const void *a, const void *b)
{
	const struct tm_name *x = *(const struct tm_name *const *)a,
			     *y = *(const struct tm_name *const *)b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->name, y->name);
}

json_object *tm_names_json(const struct tm_names *t, size_t top)
{
	json_object *obj = json_object_new_object();
	const struct tm_name **v = malloc((t->n + 1) * sizeof(*v));
	if (!obj || !v) {
		free(v);
		json_object_put(obj);
		return NULL;
	}
	size_t n = 0;
	for (size_t i = 0; i < t->n_slots; i++)
		if (t->slots[i].name)
			v[n++] = &t->slots[i];
	qsort(v, n, sizeof(*v), by_count_desc);
	int err = 0;
	for (size_t i = 0; i < n && (!top || i < top) && !err; i++)
		tm_json_add_int(obj, v[i]->name, v[i]->count, &err);
	free(v);
	if (err) {
		json_object_put(obj);
		return NULL;
	}
	return obj;
}
