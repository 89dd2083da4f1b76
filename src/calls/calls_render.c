/* The text views of calls/ from a finished tracker (calls.h): tree.txt, profile.txt,
 * profile.json, folded.txt and folded-time.txt. doc/calls.md gives their formats. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "calls/render.h"

#define NONE UINT32_MAX

static char *safe_name(const char *raw)
{
	char *s = strdup(raw);
	if (!s)
		return NULL;
	for (char *c = s; *c; c++) {
		unsigned char u = (unsigned char)*c;
		if (*c == ';')
			*c = ':';
		else if (u < 0x20 || u >= 0x7f)
			*c = '?';
	}
	return s;
}

/* Function f's shown name and symbol, made safe, into out at f. */
static int name_function(const struct tm_calls *t, const struct tm_calls_function *fn, uint32_t f,
			 struct tm_calls_names *out)
{
	char buf[64];
	const char *raw = fn[f].name ? fn[f].name /* whole, where buf would cut it */
				     : tm_calls_function_name(t, f, buf, sizeof(buf));
	if (!(out->symbol[f] = safe_name(raw)))
		return -ENOMEM;
	char *demangled = fn[f].name ? tm_demangle(raw) : NULL;
	out->name[f] = demangled ? safe_name(demangled) : out->symbol[f];
	free(demangled);
	return out->name[f] ? 0 : -ENOMEM;
}

int tm_calls_names_init(const struct tm_calls *t, struct tm_calls_names *out)
{
	size_t n;
	const struct tm_calls_function *fn = tm_calls_functions(t, &n);
	out->n = n;
	out->name = calloc(n ? n : 1, sizeof(*out->name));
	out->symbol = calloc(n ? n : 1, sizeof(*out->symbol));
	int err = out->name && out->symbol ? 0 : -ENOMEM;
	for (size_t f = 0; f < n && !err; f++)
		err = name_function(t, fn, (uint32_t)f, out);
	if (err)
		tm_calls_names_free(out);
	return err;
}

void tm_calls_names_free(struct tm_calls_names *names)
{
	for (size_t i = 0; i < names->n && names->name && names->symbol; i++) {
		if (names->name[i] != names->symbol[i])
			free(names->name[i]);
		free(names->symbol[i]);
	}
	free(names->name);
	free(names->symbol);
	names->name = names->symbol = NULL;
	names->n = 0;
}

const char *tm_calls_name(const struct tm_calls_names *names, uint32_t f)
{
	return f < names->n ? names->name[f] : "all";
}

const char *tm_calls_symbol(const struct tm_calls_names *names, uint32_t f)
{
	return f < names->n ? names->symbol[f] : "all";
}

static int write_status(FILE *out)
{
	return ferror(out) ? -EIO : 0;
}

/* --- tree.txt --- */

static void put_end(FILE *out, uint64_t insn, uint64_t pc, uint64_t time)
{
	if (insn == TM_CALL_UNKNOWN) {
		fputs("#? @?", out);
		return;
	}
	fprintf(out, "#%" PRIu64 " @0x%" PRIx64, insn, pc);
	if (time != TM_CALL_UNKNOWN)
		fprintf(out, " t%" PRIu64, time);
}

static void put_marks(FILE *out, uint16_t flags)
{
	static const struct {
		uint16_t bit;
		const char *word;
	} marks[] = {
	    {TM_CALL_ROOT, "root"},	  {TM_CALL_MID_FUNCTION, "mid-function"},
	    {TM_CALL_TAIL, "tail-call"},  {TM_CALL_TAIL_LEFT, "tail-called-out"},
	    {TM_CALL_UNWOUND, "unwound"}, {TM_CALL_NO_RETURN, "no-return"},
	};
	bool any = false;
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		if (!(flags & marks[i].bit))
			continue;
		fprintf(out, "%s%s", any ? " " : "  [", marks[i].word);
		any = true;
	}
	if (any)
		fputc(']', out);
}

int tm_calls_write_tree(const struct tm_calls *t, FILE *out)
{
	struct tm_calls_names names;
	int err = tm_calls_names_init(t, &names);
	if (err)
		return err;
	size_t n;
	const struct tm_call_record *r = tm_calls_records(t, &n);
	fputs("# call tree: FUNCTION  #ENTRY @PC [tTIME] -> #EXIT @PC [tTIME]  [MARKS]\n", out);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%*s%s  ", 2 * r[i].depth, "", tm_calls_name(&names, r[i].function));
		put_end(out, r[i].entry_insn, r[i].entry_pc, r[i].entry_time);
		fputs(" -> ", out);
		put_end(out, r[i].exit_insn, r[i].exit_pc, r[i].exit_time);
		put_marks(out, r[i].flags);
		fputc('\n', out);
	}
	struct tm_calls_counts c;
	tm_calls_get_counts(t, &c);
	if (c.calls_unlisted)
		fprintf(out, "# %" PRIu64 " more calls not listed\n", c.calls_unlisted);
	tm_calls_names_free(&names);
	return write_status(out);
}

/* --- The profile --- */

/* Per function: its own costs, and its stacks' totals counted once per outermost activation
 * (a recursive call's cost is in its outer call's already). Walks the tree depth first,
 * counting each function's activations on the current path. */
static int function_costs(const struct tm_calls *t, struct tm_function_cost **out, size_t *n_out)
{
	size_t n_nodes, n_fn;
	const struct tm_calls_node *node = tm_calls_nodes(t, &n_nodes);
	tm_calls_functions(t, &n_fn);
	struct tm_function_cost *cost = calloc(n_fn ? n_fn : 1, sizeof(*cost));
	uint32_t *active = calloc(n_fn ? n_fn : 1, sizeof(*active));
	uint32_t *stack = malloc(n_nodes * sizeof(*stack));
	bool *entered = calloc(n_nodes, sizeof(*entered));
	if (!cost || !active || !stack || !entered) {
		free(cost);
		free(active);
		free(stack);
		free(entered);
		return -ENOMEM;
	}
	for (size_t f = 0; f < n_fn; f++)
		cost[f].function = (uint32_t)f;
	size_t top = 0;
	stack[top++] = 0;
	while (top > 0) {
		uint32_t i = stack[top - 1];
		uint32_t f = node[i].function;
		if (entered[i]) {
			top--;
			if (f != NONE)
				active[f]--;
			continue;
		}
		entered[i] = true;
		if (f != NONE) {
			if (active[f]++ == 0) {
				cost[f].incl_insns += node[i].total_insns;
				cost[f].incl_time += node[i].total_time;
			}
			cost[f].calls += node[i].calls;
			cost[f].excl_insns += node[i].self_insns;
			cost[f].excl_time += node[i].self_time;
		}
		/* each node is pushed once, by its parent: the stack never exceeds n_nodes */
		for (uint32_t c = node[i].first_child; c != NONE; c = node[c].next_sibling)
			stack[top++] = c;
	}
	free(active);
	free(stack);
	free(entered);
	*out = cost;
	*n_out = n_fn;
	return 0;
}

static int by_inclusive(const void *a, const void *b)
{
	const struct tm_function_cost *x = a, *y = b;
	if (x->incl_insns != y->incl_insns)
		return x->incl_insns > y->incl_insns ? -1 : 1;
	if (x->excl_insns != y->excl_insns)
		return x->excl_insns > y->excl_insns ? -1 : 1;
	return x->function < y->function ? -1 : x->function > y->function;
}

/* The functions that ran, by inclusive instructions, then exclusive, then first seen. */
static int sorted_costs(const struct tm_calls *t, struct tm_function_cost **out, size_t *n)
{
	int err = function_costs(t, out, n);
	if (err)
		return err;
	size_t kept = 0;
	for (size_t i = 0; i < *n; i++)
		if ((*out)[i].calls || (*out)[i].incl_insns)
			(*out)[kept++] = (*out)[i];
	*n = kept;
	qsort(*out, *n, sizeof(**out), by_inclusive);
	return 0;
}

int tm_calls_profile_open(const struct tm_calls *t, struct tm_calls_profile *p)
{
	tm_calls_get_counts(t, &p->c);
	int err = tm_calls_names_init(t, &p->names);
	if (err)
		return err;
	if ((err = sorted_costs(t, &p->cost, &p->n)))
		tm_calls_names_free(&p->names);
	return err;
}

void tm_calls_profile_close(struct tm_calls_profile *p)
{
	free(p->cost);
	tm_calls_names_free(&p->names);
}

int tm_calls_write_profile(const struct tm_calls *t, FILE *out)
{
	struct tm_calls_profile p;
	int err = tm_calls_profile_open(t, &p);
	if (err)
		return err;
	const struct tm_calls_counts c = p.c;
	const struct tm_function_cost *cost = p.cost;
	size_t n = p.n;
	fprintf(out, "# %" PRIu64 " instructions, %zu functions, by inclusive instructions\n",
		c.instructions, n);
	fprintf(out, "#%13s %14s %10s", "inclusive", "exclusive", "calls");
	if (c.has_time)
		fprintf(out, " %14s %14s", "incl_time", "excl_time");
	fputs("  function\n", out);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%14" PRIu64 " %14" PRIu64 " %10" PRIu64, cost[i].incl_insns,
			cost[i].excl_insns, cost[i].calls);
		if (c.has_time)
			fprintf(out, " %14" PRIu64 " %14" PRIu64, cost[i].incl_time,
				cost[i].excl_time);
		fprintf(out, "  %s\n", tm_calls_name(&p.names, cost[i].function));
	}
	tm_calls_profile_close(&p);
	return write_status(out);
}

static int add_u64(json_object *obj, const char *key, uint64_t v)
{
	json_object *o = json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v);
	return o ? json_object_object_add(obj, key, o) : -1;
}

static int function_json(const struct tm_calls *t, const struct tm_calls_names *names,
			 const struct tm_function_cost *c, bool has_time, json_object **out)
{
	size_t n_fn;
	const struct tm_calls_function *fn = tm_calls_functions(t, &n_fn);
	json_object *o = json_object_new_object();
	if (!o)
		return -ENOMEM;
	char addr[24];
	snprintf(addr, sizeof(addr), "0x%" PRIx64, fn[c->function].addr);
	int bad = json_object_object_add(
	    o, "name", json_object_new_string(tm_calls_symbol(names, c->function)));
	bad |= json_object_object_add(o, "demangled",
				      json_object_new_string(tm_calls_name(names, c->function)));
	bad |= json_object_object_add(
	    o, "address",
	    fn[c->function].addr == TM_CALL_UNKNOWN ? NULL : json_object_new_string(addr));
	bad |= add_u64(o, "calls", c->calls);
	bad |= add_u64(o, "inclusive_instructions", c->incl_insns);
	bad |= add_u64(o, "exclusive_instructions", c->excl_insns);
	if (has_time) {
		bad |= add_u64(o, "inclusive_time", c->incl_time);
		bad |= add_u64(o, "exclusive_time", c->excl_time);
	}
	if (bad) {
		json_object_put(o);
		return -ENOMEM;
	}
	*out = o;
	return 0;
}

int tm_calls_profile_json(const struct tm_calls *t, json_object **obj)
{
	struct tm_calls_profile p;
	int err = tm_calls_profile_open(t, &p);
	if (err)
		return err;
	json_object *root = json_object_new_object(), *list = json_object_new_array();
	err = root && list ? 0 : -ENOMEM;
	if (!err &&
	    (add_u64(root, "instructions", p.c.instructions) ||
	     json_object_object_add(root, "has_time", json_object_new_boolean(p.c.has_time))))
		err = -ENOMEM;
	for (size_t i = 0; i < p.n && !err; i++) {
		json_object *f;
		err = function_json(t, &p.names, &p.cost[i], p.c.has_time, &f);
		if (!err && json_object_array_add(list, f)) {
			json_object_put(f);
			err = -ENOMEM;
		}
	}
	if (!err && json_object_object_add(root, "functions", list) == 0)
		list = NULL;
	else if (!err)
		err = -ENOMEM;
	json_object_put(list);
	tm_calls_profile_close(&p);
	if (err) {
		json_object_put(root);
		return err;
	}
	*obj = root;
	return 0;
}

int tm_calls_write_profile_json(const struct tm_calls *t, FILE *out)
{
	json_object *obj;
	int err = tm_calls_profile_json(t, &obj);
	if (err)
		return err;
	const char *s = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY |
								JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!s)
		err = -ENOMEM;
	else
		fprintf(out, "%s\n", s);
	json_object_put(obj);
	return err ? err : write_status(out);
}

/* --- Folded stacks --- */

struct by_name_context {
	const struct tm_calls_node *node;
	const struct tm_calls_names *names;
};

/* Callees in byte order of name, then in order of creation. */
static int by_name(const void *a, const void *b, void *context)
{
	const struct by_name_context *c = context;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	int order = strcmp(tm_calls_name(c->names, c->node[i].function),
			   tm_calls_name(c->names, c->node[j].function));
	return order ? order : (i > j) - (i < j);
}

/* Appends ";name" (or name, at depth 1) to the path at path_end[depth - 1]. */
static int extend_path(char **path, size_t *cap, size_t *path_end, uint32_t depth, const char *name)
{
	size_t at = depth > 1 ? path_end[depth - 1] : 0, len = strlen(name);
	size_t need = at + len + 2;
	if (need > *cap) {
		size_t n = *cap ? *cap : 256;
		while (n < need)
			n *= 2;
		char *p = realloc(*path, n);
		if (!p)
			return -ENOMEM;
		*path = p;
		*cap = n;
	}
	if (depth > 1)
		(*path)[at++] = ';';
	memcpy(*path + at, name, len + 1);
	path_end[depth] = at + len;
	return 0;
}

/* Depth first, one path buffer: memory in the number of stacks and the deepest path, never
 * in their product. */
int tm_calls_write_folded(const struct tm_calls *t, bool by_time, FILE *out)
{
	struct tm_calls_counts c;
	tm_calls_get_counts(t, &c);
	if (by_time && !c.has_time)
		return 0;
	struct tm_calls_names names;
	int err = tm_calls_names_init(t, &names);
	if (err)
		return err;
	size_t n_nodes, top = 0, cap = 0;
	const struct tm_calls_node *node = tm_calls_nodes(t, &n_nodes);
	struct by_name_context context = {.node = node, .names = &names};
	uint32_t *stack = malloc(n_nodes * sizeof(*stack));
	uint32_t *depth = calloc(n_nodes, sizeof(*depth));
	uint32_t *children = malloc(n_nodes * sizeof(*children));
	size_t *path_end = calloc(n_nodes + 1, sizeof(*path_end));
	char *path = NULL;
	err = stack && depth && children && path_end ? 0 : -ENOMEM;
	if (!err)
		stack[top++] = 0;
	while (top > 0 && !err) {
		uint32_t i = stack[--top];
		if (i != 0) {
			err = extend_path(&path, &cap, path_end, depth[i],
					  tm_calls_name(&names, node[i].function));
			uint64_t w = by_time ? node[i].self_time : node[i].self_insns;
			if (!err && w)
				fprintf(out, "%s %" PRIu64 "\n", path, w);
		}
		size_t k = 0;
		for (uint32_t ch = node[i].first_child; ch != NONE; ch = node[ch].next_sibling)
			children[k++] = ch;
		qsort_r(children, k, sizeof(*children), by_name, &context);
		/* the first by name on top; each node is pushed once, by its parent */
		while (k > 0) {
			uint32_t ch = children[--k];
			depth[ch] = depth[i] + 1;
			stack[top++] = ch;
		}
	}
	free(stack);
	free(depth);
	free(children);
	free(path_end);
	free(path);
	tm_calls_names_free(&names);
	return err ? err : write_status(out);
}
