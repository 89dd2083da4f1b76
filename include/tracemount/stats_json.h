/* Building stats.json's objects without losing a json-c failure.
 *
 * json-c says "no memory" by returning NULL from json_object_new_* and nonzero from
 * json_object_object_add (0.13 on), and a NULL value is also how it adds a JSON null. These
 * helpers keep the first failure in *err, so that a stats finish() adds all its keys, each in
 * one call, and returns *err once at its end. */
#ifndef TRACEMOUNT_STATS_JSON_H
#define TRACEMOUNT_STATS_JSON_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

/* Adds val to obj under key; obj takes val's reference. A NULL obj or val (what failed to be
 * made) or a failed add sets *err to -ENOMEM and releases val. Returns *err. */
static inline int tm_json_add(json_object *obj, const char *key, json_object *val, int *err)
{
	if (!obj || !val || json_object_object_add(obj, key, val) != 0) {
		json_object_put(val);
		*err = -ENOMEM;
	}
	return *err;
}

/* Adds val under key when has, else a JSON null (val, which may then be NULL, is released). */
static inline int tm_json_add_or_null(json_object *obj, const char *key, bool has, json_object *val,
				      int *err)
{
	if (has)
		return tm_json_add(obj, key, val, err);
	json_object_put(val);
	if (!obj || json_object_object_add(obj, key, NULL) != 0)
		*err = -ENOMEM;
	return *err;
}

/* Adds the number v under key. */
static inline int tm_json_add_int(json_object *obj, const char *key, uint64_t v, int *err)
{
	return tm_json_add(obj, key, json_object_new_int64((int64_t)v), err);
}

#endif
