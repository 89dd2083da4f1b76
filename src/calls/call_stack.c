/* The call tracker of one processor (calls.h): a shadow stack of the calls pending, fed the
 * processor's instructions in trace order, which records the calls for tree.txt, counts the
 * costs of each distinct stack (the calling-context tree) and numbers the functions.
 *
 * Each event's effect on the stack is decided when the next event arrives, whose pc is where
 * control really went: a format need not know branch targets, and a return is a transfer to a
 * pending call's return address. doc/calls.md states the rules. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "calls/calls.h"

#define NONE UINT32_MAX

struct frame {
	uint64_t return_pc;  /* where a return closes this frame; unknown for roots */
	uint64_t sp_at_call; /* stack pointer before the call, or TM_CALL_UNKNOWN */
	uint32_t node;	     /* its stack: the caller's when the stacks ran out */
	uint32_t caller_node;
	uint32_t function;
	uint32_t record; /* its line of tree.txt, or NONE */
};

/* Open addressing, linear probing: slots hold an index + 1, 0 for empty. */
struct index_hash {
	uint32_t *slots;
	uint32_t mask; /* capacity - 1, a power of two minus one; 0 before the first insert */
	uint32_t used;
};

struct tm_calls {
	const struct tm_symbols *symbols;
	bool check_sp;
	struct tm_calls_limits limits;

	struct frame *frames; /* frames[0] is the root, once an event came */
	uint32_t depth, frames_cap;
	uint64_t overflow; /* calls beyond max_depth not pushed, whose returns are absorbed */

	struct tm_calls_function *functions;
	uint8_t *called; /* functions[f] was a call's target: a jump to it is a tail call */
	uint32_t n_functions, functions_cap, other_function;
	struct index_hash function_hash;

	struct tm_calls_node *nodes;
	uint32_t n_nodes, nodes_cap;
	struct index_hash node_hash;

	struct tm_call_record *records;
	uint32_t n_records, records_cap;

	bool have_prev;
	struct tm_call_event prev;
	uint32_t prev_node;

	struct tm_calls_counts counts;
	int error;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/* Grows *items (of size bytes each) to hold at least want, doubling. */
static int grow(void **items, uint32_t *cap, uint32_t want, size_t size)
{
	if (want <= *cap)
		return 0;
	uint64_t n = *cap ? *cap : 16;
	while (n < want)
		n *= 2;
	void *p = realloc(*items, (size_t)n * size);
	if (!p)
		return -ENOMEM;
	*items = p;
	*cap = (uint32_t)(n > UINT32_MAX ? UINT32_MAX : n);
	return 0;
}

static uint64_t function_key(const struct tm_calls *t, uint32_t i)
{
	return t->functions[i].addr;
}

static uint64_t node_key(const struct tm_calls *t, uint32_t i)
{
	return ((uint64_t)t->nodes[i].parent << 32) | t->nodes[i].function;
}

/* Finds the index whose key is key; NONE. */
static uint32_t hash_find(const struct tm_calls *t, const struct index_hash *h, uint64_t key,
			  uint64_t (*key_of)(const struct tm_calls *, uint32_t))
{
	if (!h->slots)
		return NONE;
	for (uint32_t s = (uint32_t)mix64(key) & h->mask;; s = (s + 1) & h->mask) {
		if (h->slots[s] == 0)
			return NONE;
		if (key_of(t, h->slots[s] - 1) == key)
			return h->slots[s] - 1;
	}
}

static void hash_put(struct index_hash *h, uint64_t key, uint32_t index)
{
	uint32_t s = (uint32_t)mix64(key) & h->mask;
	while (h->slots[s] != 0)
		s = (s + 1) & h->mask;
	h->slots[s] = index + 1;
	h->used++;
}

/* Adds index, whose key is already in place, keeping the load at most one half. */
static int hash_insert(struct tm_calls *t, struct index_hash *h, uint32_t index,
		       uint64_t (*key_of)(const struct tm_calls *, uint32_t))
{
	if (!h->slots || (uint64_t)(h->used + 1) * 2 > (uint64_t)h->mask + 1) {
		uint32_t cap = h->slots ? (h->mask + 1) * 2 : 64;
		uint32_t *old = h->slots, old_cap = h->slots ? h->mask + 1 : 0;
		h->slots = calloc(cap, sizeof(*h->slots));
		if (!h->slots) {
			h->slots = old;
			return -ENOMEM;
		}
		h->mask = cap - 1;
		h->used = 0;
		for (uint32_t s = 0; s < old_cap; s++)
			if (old[s])
				hash_put(h, key_of(t, old[s] - 1), old[s] - 1);
		free(old);
	}
	hash_put(h, key_of(t, index), index);
	return 0;
}

static void fail(struct tm_calls *t, int err)
{
	if (!t->error)
		t->error = err;
}

/* The function that holds addr (a symbol's, else the one entered at addr), created when new;
 * *at_entry: whether addr is its entry. NONE after a failure. */
static uint32_t function_of(struct tm_calls *t, uint64_t addr, bool *at_entry)
{
	const struct tm_symbol *sym = t->symbols ? tm_symbols_find(t->symbols, addr) : NULL;
	uint64_t key = sym ? sym->addr : addr;
	*at_entry = key == addr;
	uint32_t f = hash_find(t, &t->function_hash, key, function_key);
	if (f != NONE)
		return f;
	if (t->n_functions >= t->limits.max_functions) {
		t->counts.functions_merged++;
		if (t->other_function != NONE)
			return t->other_function;
	}
	uint32_t n = t->n_functions, old_cap = t->functions_cap;
	if (grow((void **)&t->functions, &t->functions_cap, n + 1, sizeof(*t->functions))) {
		fail(t, -ENOMEM);
		return NONE;
	}
	if (t->functions_cap != old_cap) {
		uint8_t *called = realloc(t->called, t->functions_cap);
		if (!called) {
			t->functions_cap = old_cap; /* keeps called's size the capacity */
			fail(t, -ENOMEM);
			return NONE;
		}
		t->called = called;
	}
	t->called[n] = 0;
	if (n >= t->limits.max_functions) {
		/* "[other]": no address of its own, so it stays out of the hash */
		t->functions[n] = (struct tm_calls_function){.addr = TM_CALL_UNKNOWN};
		t->n_functions++;
		return t->other_function = n;
	}
	t->functions[n] = (struct tm_calls_function){.addr = key, .name = sym ? sym->name : NULL};
	if (hash_insert(t, &t->function_hash, n, function_key)) {
		fail(t, -ENOMEM);
		return NONE;
	}
	return t->n_functions++;
}

/* The stack of parent's with function on top, created when new; parent itself when the
 * stacks ran out; NONE after a failure. */
static uint32_t child_node(struct tm_calls *t, uint32_t parent, uint32_t function)
{
	uint64_t key = ((uint64_t)parent << 32) | function;
	uint32_t c = hash_find(t, &t->node_hash, key, node_key);
	if (c != NONE)
		return c;
	if (t->n_nodes >= t->limits.max_stacks) {
		t->counts.stacks_truncated++;
		return parent;
	}
	uint32_t n = t->n_nodes;
	if (grow((void **)&t->nodes, &t->nodes_cap, n + 1, sizeof(*t->nodes))) {
		fail(t, -ENOMEM);
		return NONE;
	}
	t->nodes[n] = (struct tm_calls_node){.parent = parent,
					     .function = function,
					     .first_child = NONE,
					     .next_sibling = t->nodes[parent].first_child};
	if (hash_insert(t, &t->node_hash, n, node_key)) {
		fail(t, -ENOMEM);
		return NONE;
	}
	t->nodes[parent].first_child = n;
	return t->n_nodes++;
}

/* A line of tree.txt for a call entered at e; NONE past max_tree_calls. */
static uint32_t new_record(struct tm_calls *t, const struct tm_call_event *e, uint32_t function,
			   uint32_t depth, uint16_t flags)
{
	if (t->n_records >= t->limits.max_tree_calls) {
		t->counts.calls_unlisted++;
		return NONE;
	}
	if (grow((void **)&t->records, &t->records_cap, t->n_records + 1, sizeof(*t->records))) {
		fail(t, -ENOMEM);
		return NONE;
	}
	t->records[t->n_records] = (struct tm_call_record){
	    .entry_insn = e->insn_no,
	    .exit_insn = TM_CALL_UNKNOWN,
	    .entry_pc = e->pc,
	    .exit_pc = TM_CALL_UNKNOWN,
	    .entry_time = e->time,
	    .exit_time = TM_CALL_UNKNOWN,
	    .function = function,
	    .depth = depth > UINT16_MAX ? UINT16_MAX : (uint16_t)depth,
	    .flags = flags,
	};
	return t->n_records++;
}

/* Opens a frame at index t->depth entered at e (the first instruction of the call). */
static int open_frame(struct tm_calls *t, const struct tm_call_event *e, uint64_t return_pc,
		      uint64_t sp_at_call, uint32_t caller_node, uint16_t flags)
{
	bool at_entry;
	uint32_t f = function_of(t, e->pc, &at_entry);
	if (f == NONE)
		return -ENOMEM;
	uint32_t node = child_node(t, caller_node, f);
	if (node == NONE)
		return -ENOMEM;
	if (grow((void **)&t->frames, &t->frames_cap, t->depth + 1, sizeof(*t->frames))) {
		fail(t, -ENOMEM);
		return -ENOMEM;
	}
	if (node != caller_node)
		t->nodes[node].calls++;
	if (!at_entry && (flags & TM_CALL_ROOT))
		flags |= TM_CALL_MID_FUNCTION;
	if (!(flags & TM_CALL_ROOT))
		t->called[f] = 1;
	t->frames[t->depth] = (struct frame){
	    .return_pc = return_pc,
	    .sp_at_call = sp_at_call,
	    .node = node,
	    .caller_node = caller_node,
	    .function = f,
	    .record = new_record(t, e, f, t->depth, flags),
	};
	if (t->depth > t->counts.max_depth)
		t->counts.max_depth = t->depth;
	t->depth++;
	return 0;
}

/* Closes the top frame: its last instruction was the previous event. */
static void close_top(struct tm_calls *t, uint16_t flags)
{
	const struct frame *f = &t->frames[--t->depth];
	if (f->record == NONE)
		return;
	struct tm_call_record *r = &t->records[f->record];
	r->exit_insn = t->prev.insn_no;
	r->exit_pc = t->prev.pc;
	r->exit_time = t->prev.time;
	r->flags |= flags;
}

/* Unwinds the frames above index keep, as one resynchronisation. */
static void unwind_to(struct tm_calls *t, uint32_t keep)
{
	if (t->depth <= keep + 1)
		return;
	t->counts.resyncs++;
	while (t->depth > keep + 1) {
		close_top(t, TM_CALL_UNWOUND);
		t->counts.frames_unwound++;
	}
	t->overflow = 0; /* the calls beyond max_depth were above them */
}

/* A return to dest: closes the innermost frame that returns there, unwinding those above it.
 * Returns whether one did. */
static bool match_return(struct tm_calls *t, uint64_t dest)
{
	if (t->overflow > 0) {
		t->overflow--;
		return true;
	}
	for (uint32_t k = t->depth; k-- > 1;) {
		if (t->frames[k].return_pc != dest)
			continue;
		unwind_to(t, k);
		close_top(t, 0);
		t->counts.returns++;
		return true;
	}
	return false;
}

/* Frames whose call had a lower stack pointer than sp are gone (longjmp, exceptions); after
 * a return that matched no frame, also those whose call had sp itself, since the code that
 * called them runs again at its own stack pointer (a leaf function that keeps its caller's
 * stack pointer is left alone by a jump inside it). */
static void check_sp(struct tm_calls *t, uint64_t sp, bool left_frame)
{
	if (!t->check_sp || sp == TM_CALL_UNKNOWN)
		return;
	uint32_t keep = t->depth - 1;
	while (
	    keep > 0 && t->frames[keep].sp_at_call != TM_CALL_UNKNOWN &&
	    (sp > t->frames[keep].sp_at_call || (left_frame && sp == t->frames[keep].sp_at_call)))
		keep--;
	unwind_to(t, keep);
}

/* Replaces the root with one entered at e (a return out of the outermost function). */
static void new_root(struct tm_calls *t, const struct tm_call_event *e)
{
	unwind_to(t, 0);
	close_top(t, 0);
	t->counts.returns_past_root++;
	open_frame(t, e, TM_CALL_UNKNOWN, TM_CALL_UNKNOWN, 0, TM_CALL_ROOT);
}

/* A jump to e->pc from the top frame: a tail call when it enters another function. */
static bool tail_call(struct tm_calls *t, const struct tm_call_event *e)
{
	const struct tm_symbol *sym = t->symbols ? tm_symbols_find(t->symbols, e->pc) : NULL;
	bool entry;
	if (sym) {
		entry = sym->addr == e->pc;
	} else {
		uint32_t f = hash_find(t, &t->function_hash, e->pc, function_key);
		entry = f != NONE && t->called[f];
	}
	struct frame top = t->frames[t->depth - 1];
	if (!entry || t->functions[top.function].addr == e->pc)
		return false; /* not an entry, or a loop back to the function's own */
	uint16_t root = t->depth == 1 ? TM_CALL_ROOT : 0;
	close_top(t, TM_CALL_TAIL_LEFT);
	t->counts.tail_calls++;
	open_frame(t, e, top.return_pc, top.sp_at_call, top.caller_node, TM_CALL_TAIL | root);
	return true;
}

/* Applies p, the previous event, now that e shows where control went. */
static void resolve(struct tm_calls *t, const struct tm_call_event *p,
		    const struct tm_call_event *e)
{
	uint64_t dest = e->pc, next = p->pc + p->size;
	if (p->kind != TM_CALL_KIND_PLAIN && p->target != TM_CALL_UNKNOWN && p->target != dest)
		t->counts.discontinuities++;
	switch (p->kind) {
	case TM_CALL_KIND_CALL: {
		uint64_t ret = p->return_pc != TM_CALL_UNKNOWN ? p->return_pc : next;
		if (dest == ret)
			break; /* not taken, or a call to its own return address (x86's PIC idiom)
				*/
		if (t->depth > t->limits.max_depth) { /* the root is no call */
			t->overflow++;
			t->counts.depth_overflows++;
			break;
		}
		t->counts.calls++;
		open_frame(t, e, ret, p->sp, t->frames[t->depth - 1].node, 0);
		break;
	}
	case TM_CALL_KIND_RETURN:
		if (dest == next)
			break; /* a conditional return not taken */
		if (match_return(t, dest)) {
			check_sp(t, e->sp, false);
		} else if (t->depth == 1) {
			new_root(t, e);
		} else {
			t->counts.unmatched_returns++;
			check_sp(t, e->sp, true);
		}
		break;
	case TM_CALL_KIND_TRANSFER:
		if (dest == next)
			break;
		/* a jump to the innermost return address is a return (mov pc, lr) */
		if (t->depth > 1 && t->overflow == 0 && t->frames[t->depth - 1].return_pc == dest) {
			close_top(t, 0);
			t->counts.returns++;
		} else {
			tail_call(t, e);
		}
		check_sp(t, e->sp, false);
		break;
	default:
		if (dest != next)
			t->counts.discontinuities++;
		break;
	}
}

void tm_calls_add(struct tm_calls *t, const struct tm_call_event *events, size_t n)
{
	for (size_t i = 0; i < n && !t->error; i++) {
		const struct tm_call_event *e = &events[i];
		if (!t->have_prev) {
			if (open_frame(t, e, TM_CALL_UNKNOWN, TM_CALL_UNKNOWN, 0, TM_CALL_ROOT))
				return;
		} else {
			resolve(t, &t->prev, e);
			if (t->error)
				return;
		}
		uint32_t node = t->frames[t->depth - 1].node;
		t->nodes[node].self_insns++;
		t->counts.instructions++;
		if (e->time != TM_CALL_UNKNOWN) {
			t->counts.has_time = true;
			/* an instruction lasts until the next one's time */
			if (t->have_prev && t->prev.time != TM_CALL_UNKNOWN &&
			    e->time >= t->prev.time)
				t->nodes[t->prev_node].self_time += e->time - t->prev.time;
		}
		t->prev = *e;
		t->prev_node = node;
		t->have_prev = true;
	}
}

int tm_calls_finish(struct tm_calls *t)
{
	while (t->depth > 1) {
		close_top(t, TM_CALL_NO_RETURN);
		t->counts.never_returned++;
	}
	if (t->depth == 1)
		close_top(t, 0);
	for (uint32_t i = 0; i < t->n_nodes; i++) {
		t->nodes[i].total_insns = t->nodes[i].self_insns;
		t->nodes[i].total_time = t->nodes[i].self_time;
	}
	for (uint32_t i = t->n_nodes; i-- > 1;) {
		struct tm_calls_node *parent = &t->nodes[t->nodes[i].parent];
		parent->total_insns += t->nodes[i].total_insns;
		parent->total_time += t->nodes[i].total_time;
	}
	return t->error;
}

int tm_calls_new(const struct tm_calls_config *config, struct tm_calls **out)
{
	struct tm_calls *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	struct tm_calls_limits l = config ? config->limits : (struct tm_calls_limits){0};
	t->limits = (struct tm_calls_limits){
	    .max_depth = l.max_depth ? l.max_depth : TM_CALLS_DEFAULT_MAX_DEPTH,
	    .max_functions = l.max_functions ? l.max_functions : TM_CALLS_DEFAULT_MAX_FUNCTIONS,
	    .max_stacks = l.max_stacks ? l.max_stacks : TM_CALLS_DEFAULT_MAX_STACKS,
	    .max_tree_calls = l.max_tree_calls ? l.max_tree_calls : TM_CALLS_DEFAULT_MAX_TREE_CALLS,
	};
	if (t->limits.max_stacks < 2)
		t->limits.max_stacks = 2; /* the empty stack and the root's */
	if (config) {
		t->symbols = config->symbols;
		t->check_sp = config->check_sp;
	}
	t->other_function = NONE;
	/* node 0: the empty stack, under which the roots' stacks hang */
	if (grow((void **)&t->nodes, &t->nodes_cap, 1, sizeof(*t->nodes))) {
		free(t);
		return -ENOMEM;
	}
	t->nodes[0] = (struct tm_calls_node){
	    .parent = NONE, .function = NONE, .first_child = NONE, .next_sibling = NONE};
	t->n_nodes = 1;
	*out = t;
	return 0;
}

void tm_calls_free(struct tm_calls *t)
{
	if (!t)
		return;
	free(t->frames);
	free(t->functions);
	free(t->called);
	free(t->function_hash.slots);
	free(t->nodes);
	free(t->node_hash.slots);
	free(t->records);
	free(t);
}

void tm_calls_get_counts(const struct tm_calls *t, struct tm_calls_counts *out)
{
	*out = t->counts;
}

const struct tm_call_record *tm_calls_records(const struct tm_calls *t, size_t *n)
{
	*n = t->n_records;
	return t->records;
}

const struct tm_calls_function *tm_calls_functions(const struct tm_calls *t, size_t *n)
{
	*n = t->n_functions;
	return t->functions;
}

const struct tm_calls_node *tm_calls_nodes(const struct tm_calls *t, size_t *n)
{
	*n = t->n_nodes;
	return t->nodes;
}

const char *tm_calls_function_name(const struct tm_calls *t, uint32_t f, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	if (f >= t->n_functions || f == t->other_function)
		snprintf(buf, len, "[other]");
	else if (t->functions[f].name)
		snprintf(buf, len, "%s", t->functions[f].name);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)t->functions[f].addr);
	return buf;
}
