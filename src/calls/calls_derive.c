/* calls/ of every instruction trace (derive.h): one call tracker per processor
 * (call_stack.c), fed the instructions the format yields with their call kinds, stack
 * pointers and times (format.h's struct tm_insn); at the end, the views of calls_render.c,
 * flamegraph.c and hot.c (plots/hot.svg) and stats.json's "calls". doc/calls.md gives the rules
 * and the views. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "calls/calls.h"
#include "calls/render.h"
#include "tracemount/derive.h"
#include "tracemount/diag.h"
#include "tracemount/stats_json.h"
#include "tracemount/util.h"
#include "tracemount/view.h"

/* format.h's kinds are the tracker's, so that a format need not include calls.h */
_Static_assert(TM_INSN_PLAIN == (int)TM_CALL_KIND_PLAIN && TM_INSN_CALL == (int)TM_CALL_KIND_CALL &&
		   TM_INSN_RETURN == (int)TM_CALL_KIND_RETURN &&
		   TM_INSN_TRANSFER == (int)TM_CALL_KIND_TRANSFER,
	       "enum tm_insn_call and enum tm_call_kind differ");

enum {
	VIEW_TREE,
	VIEW_PROFILE,
	VIEW_PROFILE_JSON,
	VIEW_FOLDED,
	VIEW_FOLDED_TIME,
	VIEW_FLAMEGRAPH,
	N_VIEWS,	    /* each processor's, in calls/cpu/N/ too */
	VIEW_HOT = N_VIEWS, /* the processor of calls/ only */
	N_OUTPUTS
};

static const char *const calls_views[N_OUTPUTS] = {
    [VIEW_TREE] = "calls/tree.txt",
    [VIEW_PROFILE] = "calls/profile.txt",
    [VIEW_PROFILE_JSON] = "calls/profile.json",
    [VIEW_FOLDED] = "calls/folded.txt",
    [VIEW_FOLDED_TIME] = "calls/folded-time.txt",
    [VIEW_FLAMEGRAPH] = "calls/flamegraph.svg",
    [VIEW_HOT] = "plots/hot.svg",
};

/* The same views of each processor, in a trace where several ran instructions. */
static const char *const calls_stream_views[N_VIEWS] = {
    [VIEW_TREE] = "calls/cpu/%u/tree.txt",
    [VIEW_PROFILE] = "calls/cpu/%u/profile.txt",
    [VIEW_PROFILE_JSON] = "calls/cpu/%u/profile.json",
    [VIEW_FOLDED] = "calls/cpu/%u/folded.txt",
    [VIEW_FOLDED_TIME] = "calls/cpu/%u/folded-time.txt",
    [VIEW_FLAMEGRAPH] = "calls/cpu/%u/flamegraph.svg",
};

/* One processor. Its last instruction is held back until the next arrives, so that micro-ops
 * (tm_insn.more) that come after it in a later batch still add to it. */
struct stream {
	struct tm_calls *tracker; /* NULL until the processor's first instruction */
	struct tm_call_event last;
	bool has_last;
};

struct calls_derive {
	struct stream streams[TM_MAX_GROUPS];
	int err;		    /* the first tm_calls_new failure */
	struct tm_symbols *symbols; /* of the trace's images, or NULL: names by address */
	const struct tm_images *images;
	int64_t *image_functions; /* per image: the functions it gave, or -errno */
};

static struct tm_call_event event_of(const struct tm_insn *in, uint64_t insn_no)
{
	return (struct tm_call_event){
	    .pc = in->pc,
	    .insn_no = insn_no,
	    .target = in->known & TM_INSN_HAS_TARGET ? in->target : TM_CALL_UNKNOWN,
	    .return_pc = in->known & TM_INSN_HAS_RETURN ? in->return_pc : TM_CALL_UNKNOWN,
	    .sp = in->known & TM_INSN_HAS_SP ? in->sp : TM_CALL_UNKNOWN,
	    .time = in->known & TM_INSN_HAS_TIME ? in->time : TM_CALL_UNKNOWN,
	    .size = in->size ? in->size : 1,
	    .kind = in->call <= TM_INSN_TRANSFER ? in->call : TM_INSN_PLAIN,
	};
}

/* The stream of insn, its tracker made on first use; NULL after a failure. */
static struct stream *stream_of(struct calls_derive *s, const struct tm_insn *insn)
{
	struct stream *st =
	    &s->streams[insn->stream < TM_MAX_GROUPS ? insn->stream : TM_MAX_GROUPS - 1];
	if (!st->tracker && !s->err) {
		/* The formats give a stack pointer only where it is the processor's one
		 * (FULL's r1), so resynchronising on it is safe wherever it is known. */
		struct tm_calls_config cfg = {.check_sp = true, .symbols = s->symbols};
		s->err = tm_calls_new(&cfg, &st->tracker);
	}
	return st->tracker ? st : NULL;
}

/* Why an image gives no symbols, for errors.txt. */
static const char *image_problem(int err)
{
	switch (err) {
	case -ENOEXEC: return "not an ELF image, or libelf cannot read its symbols";
	case -ELOOP: return "a symbolic link, not followed (name it with -o image=)";
	case -EINVAL: return "not a regular file";
	default: return strerror(-err);
	}
}

/* The symbols of the trace's ELF images, all in one table; an image that gives none is
 * said in errors.txt, and its functions are named by address. */
static int calls_init(void *state, const struct tm_images *images, struct tm_diag *diag)
{
	struct calls_derive *s = state;
	s->images = images;
	if (!images->n)
		return 0;
	s->image_functions = calloc(images->n, sizeof(*s->image_functions));
	int err = s->image_functions ? tm_symbols_new(&s->symbols) : -ENOMEM;
	for (size_t k = 0; k < images->n && !err; k++) {
		const struct tm_image *im = &images->image[k];
		size_t before = tm_symbols_count(s->symbols);
		int r =
		    im->fd < 0 ? im->error : tm_symbols_load_elf_fd(s->symbols, im->fd, im->offset);
		s->image_functions[k] = r ? r : (int64_t)(tm_symbols_count(s->symbols) - before);
		if (r == -ENOMEM)
			err = r;
		else if (r)
			tm_diag_note(diag, "calls/: image %s: %s: functions named by address",
				     im->name, image_problem(r));
		else if (tm_symbols_count(s->symbols) == before)
			tm_diag_note(diag, "calls/: image %s: no function symbols (stripped?)",
				     im->name);
	}
	if (!err && !tm_symbols_count(s->symbols)) {
		tm_symbols_free(s->symbols);
		s->symbols = NULL;
	}
	return err;
}

/* An image the user names must give symbols: a mistake is said at once, not in errors.txt. */
static int calls_image_check(int fd, char *why, size_t why_len)
{
	struct tm_symbols *sym;
	int err = tm_symbols_new(&sym);
	if (!err)
		err = tm_symbols_load_elf_fd(sym, fd, 0);
	if (!err && !tm_symbols_count(sym))
		err = -ENODATA;
	tm_symbols_free(sym);
	if (err)
		snprintf(why, why_len, "%s",
			 err == -ENODATA ? "an ELF image without function symbols (stripped?)"
					 : image_problem(err));
	return err;
}

/* Events released to one processor's tracker, handed over together: one call per run of a
 * processor's instructions rather than per instruction. */
struct batch {
	struct tm_call_event ev[256];
	size_t n;
	struct stream *to;
};

static void flush(struct batch *b)
{
	if (b->n)
		tm_calls_add(b->to->tracker, b->ev, b->n);
	b->n = 0;
}

static void release(struct batch *b, struct stream *st)
{
	if (b->to != st || b->n == ARRAY_SIZE(b->ev))
		flush(b);
	b->to = st;
	b->ev[b->n++] = st->last;
}

static void calls_add(void *state, const struct tm_insn *insn, size_t n)
{
	struct calls_derive *s = state;
	struct batch b;
	b.n = 0;
	b.to = NULL;
	for (size_t i = 0; i < n; i++) {
		struct stream *st = stream_of(s, &insn[i]);
		if (!st)
			continue;
		if (insn[i].more) { /* a micro-op: its kind, when its instruction had none */
			if (st->has_last && st->last.kind == TM_CALL_KIND_PLAIN &&
			    insn[i].call <= TM_INSN_TRANSFER)
				st->last.kind = insn[i].call;
			if (st->has_last && (insn[i].known & TM_INSN_HAS_TARGET))
				st->last.target = insn[i].target;
			continue;
		}
		uint64_t number = st->has_last ? st->last.insn_no + 1 : 1;
		if (st->has_last)
			release(&b, st);
		st->last = event_of(&insn[i], number);
		st->has_last = true;
	}
	flush(&b);
}

/* The figures of tracker t, added to obj. */
static int counts_json(const struct tm_calls *t, json_object *obj, int *err)
{
	struct tm_calls_counts c;
	size_t n_functions;
	tm_calls_get_counts(t, &c);
	tm_calls_functions(t, &n_functions);
	const struct {
		const char *key;
		uint64_t value;
	} keys[] = {
	    {"instructions", c.instructions},
	    {"calls", c.calls},
	    {"returns", c.returns},
	    {"max_depth", c.max_depth},
	    {"functions", n_functions},
	    {"tail_calls", c.tail_calls},
	    {"resynchronisations", c.resyncs},
	    {"frames_unwound", c.frames_unwound},
	    {"unmatched_returns", c.unmatched_returns},
	    {"returns_past_root", c.returns_past_root},
	    {"never_returned", c.never_returned},
	    {"discontinuities", c.discontinuities},
	    {"depth_overflows", c.depth_overflows},
	    {"functions_merged", c.functions_merged},
	    {"stacks_truncated", c.stacks_truncated},
	    {"calls_unlisted", c.calls_unlisted},
	};
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
		tm_json_add_int(obj, keys[k].key, keys[k].value, err);
	return *err;
}

/* The bounds of memory t reached, in errors.txt: what the views leave out. */
static void report_bounds(const struct tm_calls *t, unsigned cpu, struct tm_diag *diag)
{
	struct tm_calls_counts c;
	tm_calls_get_counts(t, &c);
	if (c.depth_overflows)
		tm_diag_note(diag,
			     "calls/: processor %u: %llu calls deeper than %u, kept in their "
			     "caller",
			     cpu, (unsigned long long)c.depth_overflows,
			     TM_CALLS_DEFAULT_MAX_DEPTH);
	if (c.functions_merged)
		tm_diag_note(diag,
			     "calls/: processor %u: more than %u functions, the rest named "
			     "[other] (%llu entries)",
			     cpu, TM_CALLS_DEFAULT_MAX_FUNCTIONS,
			     (unsigned long long)c.functions_merged);
	if (c.stacks_truncated)
		tm_diag_note(diag,
			     "calls/: processor %u: more than %u distinct stacks, %llu calls "
			     "kept in their caller's",
			     cpu, TM_CALLS_DEFAULT_MAX_STACKS,
			     (unsigned long long)c.stacks_truncated);
	if (c.calls_unlisted)
		tm_diag_note(diag,
			     "calls/: processor %u: tree.txt lists the first %u calls, not "
			     "%llu more",
			     cpu, TM_CALLS_DEFAULT_MAX_TREE_CALLS,
			     (unsigned long long)c.calls_unlisted);
}

/* Bytes beyond which a view is left empty. The tree and the folded stacks take bytes in their
 * depth times their lines, which a trace whose calls never return (random or hostile bytes)
 * drives to the tracker's bounds (4096 deep, 262,144 calls or stacks): gigabytes to render and
 * keep. A real program's stay far below (ARM's calculator: 12 KiB). */
#define MAX_VIEW_BYTES (64u << 20)

/* Upper estimates of the bytes of the views that grow with depth, worked out from the
 * tracker's results before rendering them (the renderers' formats, doc/calls.md). */
static int view_sizes(const struct tm_calls *t, uint64_t size[N_OUTPUTS])
{
	struct tm_calls_names names;
	int err = tm_calls_names_init(t, &names);
	if (err)
		return err;
	size_t n_nodes, n_records;
	const struct tm_calls_node *node = tm_calls_nodes(t, &n_nodes);
	const struct tm_call_record *rec = tm_calls_records(t, &n_records);
	struct tm_calls_counts c;
	tm_calls_get_counts(t, &c);
	uint64_t *path = calloc(n_nodes ? n_nodes : 1, sizeof(*path));
	if (!path) {
		tm_calls_names_free(&names);
		return -ENOMEM;
	}
	memset(size, 0, N_OUTPUTS * sizeof(*size)); /* hot.svg: TM_BARS_TOP bars, a few KiB */
	/* nodes in order of creation: a parent before its callees */
	for (size_t i = 1; i < n_nodes; i++) {
		size_t len = strlen(tm_calls_name(&names, node[i].function));
		path[i] = (node[i].parent ? path[node[i].parent] + 1 : 0) + len;
		if (node[i].self_insns) /* the path, a space, a count of 20 digits at most */
			size[VIEW_FOLDED] += path[i] + 22;
		if (node[i].self_time)
			size[VIEW_FOLDED_TIME] += path[i] + 22;
		/* a bar of the flame graph at least 0.1 of 1200 pixels wide: its name twice */
		if (c.instructions && node[i].total_insns * 12000 >= c.instructions)
			size[VIEW_FLAMEGRAPH] += 400 + 2 * len;
	}
	for (size_t i = 0; i < n_records; i++) /* indent, name, two instructions, marks */
		size[VIEW_TREE] +=
		    2u * rec[i].depth + strlen(tm_calls_name(&names, rec[i].function)) + 160;
	free(path);
	tm_calls_names_free(&names);
	return 0;
}

static int write_view(const struct tm_calls *t, unsigned v, FILE *out)
{
	switch (v) {
	case VIEW_TREE: return tm_calls_write_tree(t, out);
	case VIEW_PROFILE: return tm_calls_write_profile(t, out);
	case VIEW_PROFILE_JSON: return tm_calls_write_profile_json(t, out);
	case VIEW_FOLDED: return tm_calls_write_folded(t, false, out);
	case VIEW_FOLDED_TIME: return tm_calls_write_folded(t, true, out);
	case VIEW_FLAMEGRAPH:
		return tm_calls_write_flamegraph(t, "Instructions by call stack", out);
	default: return tm_calls_write_hot(t, "Hottest functions, by their own instructions", out);
	}
}

/* The views of t, but those that would take more than MAX_VIEW_BYTES: left empty, named in
 * errors.txt and in omitted, a JSON array. The views are calls/'s and plots/hot.svg, or with
 * cpu >= 0 those of calls/cpu/CPU/. */
static int write_views(const struct tm_calls *t, int cpu, FILE *const *out, json_object *omitted,
		       struct tm_diag *diag)
{
	uint64_t size[N_OUTPUTS];
	struct tm_calls_counts c;
	tm_calls_get_counts(t, &c);
	int err = view_sizes(t, size);
	for (unsigned v = 0; v < (cpu < 0 ? N_OUTPUTS : N_VIEWS) && !err; v++) {
		if (size[v] <= MAX_VIEW_BYTES) {
			err = write_view(t, v, out[v]);
			continue;
		}
		char name[64];
		if (cpu < 0)
			snprintf(name, sizeof(name), "%s", calls_views[v]);
		else
			snprintf(name, sizeof(name), calls_stream_views[v], (unsigned)cpu);
		tm_diag_note(diag,
			     "%s is empty: it would take about %llu MiB (calls %u deep), more "
			     "than %u MiB",
			     name, (unsigned long long)(size[v] >> 20), c.max_depth,
			     MAX_VIEW_BYTES >> 20);
		json_object *js = json_object_new_string(name);
		if (!js || json_object_array_add(omitted, js) != 0) {
			json_object_put(js);
			err = -ENOMEM;
		}
	}
	return err;
}

/* The processors with views of their own (calls/cpu/N/): every one that ran instructions,
 * below TM_MAX_STREAM_VIEWS, when two or more did; none in a trace of one processor, whose
 * calls/ is its own. Before finish, which releases the instructions held back. */
static uint64_t calls_streams(const void *state)
{
	const struct calls_derive *s = state;
	uint64_t ran = 0;
	unsigned n = 0;
	for (unsigned k = 0; k < TM_MAX_GROUPS; k++)
		if (s->streams[k].has_last) {
			n++;
			ran |= k < TM_MAX_STREAM_VIEWS ? 1ull << k : 0;
		}
	return n > 1 ? ran : 0;
}

/* calls/ shows the lowest-numbered processor that ran instructions, and calls/cpu/N/ each
 * of calls_streams' (a merge of the processors' stacks would need a tracker of trackers);
 * stats.json counts each. */
/* stats.json's calls.images: each image, in order, with the functions it gave or why none. */
static json_object *images_json(const struct calls_derive *s, int *err)
{
	json_object *list = json_object_new_array();
	for (size_t k = 0; list && s->images && k < s->images->n && !*err; k++) {
		const struct tm_image *im = &s->images->image[k];
		json_object *one = json_object_new_object();
		char offset[24];
		snprintf(offset, sizeof(offset), "0x%" PRIx64, im->offset);
		tm_json_add(one, "name", json_object_new_string(im->name), err);
		tm_json_add(one, "offset", json_object_new_string(offset), err);
		tm_json_add(one, "given", json_object_new_boolean(im->given), err);
		int64_t got = s->image_functions ? s->image_functions[k] : 0;
		if (got >= 0)
			tm_json_add_int(one, "functions", (uint64_t)got, err);
		else
			tm_json_add(one, "error", json_object_new_string(image_problem((int)got)),
				    err);
		if (*err || !one || json_object_array_add(list, one)) {
			json_object_put(one);
			*err = *err ? *err : -ENOMEM;
		}
	}
	return list;
}

static int calls_finish(void *state, FILE *const *out, json_object *obj, struct tm_diag *diag)
{
	struct calls_derive *s = state;
	if (s->err)
		return s->err;
	int err = 0, shown = -1;
	unsigned processors = 0, with_views = 0;
	uint64_t streams = calls_streams(s);
	bool any = false;
	for (unsigned k = 0; k < TM_MAX_GROUPS; k++)
		any |= s->streams[k].tracker != NULL;
	if (!any) { /* no instruction at all: the views and figures of an empty trace */
		struct tm_calls_config cfg = {.check_sp = true};
		if ((err = tm_calls_new(&cfg, &s->streams[0].tracker)) != 0)
			return err;
	}
	json_object *per_cpu = json_object_new_object();
	json_object *omitted = json_object_new_array();
	if (!per_cpu || !omitted)
		err = -ENOMEM;
	for (unsigned k = 0; k < TM_MAX_GROUPS && !err; k++) {
		struct stream *st = &s->streams[k];
		if (!st->tracker)
			continue;
		if (st->has_last)
			tm_calls_add(st->tracker, &st->last, 1);
		st->has_last = false;
		if ((err = tm_calls_finish(st->tracker)) != 0)
			break;
		report_bounds(st->tracker, k, diag);
		processors++;
		if (shown < 0) {
			shown = (int)k;
			err = write_views(st->tracker, -1, out, omitted, diag);
			counts_json(st->tracker, obj, &err);
		}
		if (!err && streams >> k & 1)
			err = write_views(st->tracker, (int)k,
					  out + N_OUTPUTS + N_VIEWS * with_views++, omitted, diag);
		char key[16];
		snprintf(key, sizeof(key), "%u", k);
		json_object *one = json_object_new_object();
		counts_json(st->tracker, one, &err);
		tm_json_add(per_cpu, key, one, &err);
	}
	if (!err && processors > 1)
		tm_diag_note(diag,
			     "calls/ shows processor %d, calls/cpu/N/ each of the %u that ran "
			     "instructions below %u; stats.json's calls.processors counts all %u",
			     shown, with_views, TM_MAX_STREAM_VIEWS, processors);
	tm_json_add(obj, "omitted_views", omitted, &err);
	tm_json_add_int(obj, "processor", shown > 0 ? (uint64_t)shown : 0, &err);
	tm_json_add(obj, "processors", per_cpu, &err);
	if (!err)
		tm_json_add(obj, "images", images_json(s, &err), &err);
	return err;
}

static void calls_free(void *state)
{
	struct calls_derive *s = state;
	for (unsigned k = 0; k < TM_MAX_GROUPS; k++)
		tm_calls_free(s->streams[k].tracker);
	tm_symbols_free(s->symbols); /* after the trackers, which use it */
	free(s->image_functions);
}

const struct tm_deriver tm_deriver_calls = {
    .name = "calls",
    .views = calls_views,
    .n_outputs = ARRAY_SIZE(calls_views),
    .stream_views = calls_stream_views,
    .n_stream_outputs = ARRAY_SIZE(calls_stream_views),
    /* folded-time.txt is empty where the trace gives no time */
    .hide_empty = 1ull << VIEW_FOLDED_TIME,
    .hide_empty_streams = 1ull << VIEW_FOLDED_TIME,
    .streams = calls_streams,
    .state_size = sizeof(struct calls_derive),
    .init = calls_init,
    .add = calls_add,
    .finish = calls_finish,
    .free = calls_free,
    .image_suffix = ".elf",
    .image_check = calls_image_check,
};
