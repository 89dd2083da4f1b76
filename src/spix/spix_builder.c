/* Basic-block counts derived from an executed instruction stream.
 *
 * The stream is cut into runs: instructions at consecutive addresses, ended by a
 * flow-altering instruction, by a PC that does not follow, or after TM_SPIX_MAX_RUN
 * instructions. Only distinct runs are kept, with their count and, for one ending in a
 * conditional branch, its taken and not-taken counts: a hash lookup per run rather than per
 * instruction, and memory bounded by the code executed, not by the trace's length.
 *
 * At the end the runs are laid out by address. A block begins where a run begins (the
 * segment's start, every branch target, every PC that did not follow), after every run's
 * last instruction (after every flow-altering instruction), after a gap, and after 255
 * instructions. Every instruction of a block then runs as often as its first, so the blocks'
 * instructions add up to the stream's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spix/spix.h"

struct run {
	uint64_t start, last;  /* first and last instruction's address; with n, the key */
	uint64_t count, taken; /* not taken: count minus taken */
	size_t sizes;	       /* offset of its n instruction sizes in the builder's pool */
	uint32_t n;
	bool cond; /* ends in a conditional branch */
};

/* The run in progress on one processor. */
struct current {
	bool in_run;
	bool cond; /* it ends in a TM_FLOW_COND branch, whose outcome the next PC tells */
	uint64_t start, last, next_pc;
	uint32_t n;
	uint8_t sizes[TM_SPIX_MAX_RUN];
};

/* The runs are kept in the order found, and found again through a hash table of their numbers:
 * an empty slot of the table costs 4 bytes rather than a run's 48, and growing it moves no run
 * (the largest allocation of a pass over code of many runs). */
struct tm_spix_builder {
	struct run *runs;
	size_t n_runs, runs_cap;
	uint32_t *slots; /* 0: empty; else a run's number plus one */
	size_t n_slots;
	uint8_t *pool; /* instruction sizes of every run */
	size_t pool_len, pool_cap;
	struct current *cur[TM_MAX_GROUPS]; /* by stream, allocated at its first instruction */
	int err;
};

int tm_spix_builder_new(struct tm_spix_builder **out)
{
	struct tm_spix_builder *b = calloc(1, sizeof(*b));
	if (!b || !(b->slots = calloc(1024, sizeof(*b->slots)))) {
		free(b);
		return -ENOMEM;
	}
	b->n_slots = 1024;
	*out = b;
	return 0;
}

void tm_spix_builder_free(struct tm_spix_builder *b)
{
	if (!b)
		return;
	for (unsigned k = 0; k < TM_MAX_GROUPS; k++)
		free(b->cur[k]);
	free(b->slots);
	free(b->runs);
	free(b->pool);
	free(b);
}

static size_t slot_of(uint64_t start, uint64_t last, uint32_t n, size_t n_slots)
{
	uint64_t h = (start * 0x9e3779b97f4a7c15ull) ^ (last * 0xc2b2ae3d27d4eb4full) ^ n;
	h ^= h >> 29;
	return (size_t)(h & (n_slots - 1));
}

/* The slot of the run (start, last, n) in a table of n_slots: its number, or an empty one. */
static uint32_t *find_slot(const struct run *runs, uint32_t *slots, size_t n_slots, uint64_t start,
			   uint64_t last, uint32_t n)
{
	size_t i = slot_of(start, last, n, n_slots);
	for (; slots[i]; i = (i + 1) & (n_slots - 1)) {
		const struct run *r = &runs[slots[i] - 1];
		if (r->start == start && r->last == last && r->n == n)
			break;
	}
	return &slots[i];
}

static int grow_slots(struct tm_spix_builder *b)
{
	size_t n_slots = b->n_slots * 2;
	uint32_t *slots = calloc(n_slots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t k = 0; k < b->n_runs; k++) {
		const struct run *r = &b->runs[k];
		*find_slot(b->runs, slots, n_slots, r->start, r->last, r->n) = (uint32_t)k + 1;
	}
	free(b->slots);
	b->slots = slots;
	b->n_slots = n_slots;
	return 0;
}

/* Room in the array *p of *cap elements of size bytes for need of them, doubling from first.
 * Returns 0 or -ENOMEM (the array as it was). */
static int grow(void **p, size_t *cap, size_t need, size_t size, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap * 2 : first;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* A new run's sizes, kept once. */
static int keep_sizes(struct tm_spix_builder *b, const struct current *c, struct run *r)
{
	if (grow((void **)&b->pool, &b->pool_cap, b->pool_len + c->n, 1, 1 << 16) < 0)
		return -ENOMEM;
	memcpy(b->pool + b->pool_len, c->sizes, c->n);
	r->sizes = b->pool_len;
	b->pool_len += c->n;
	return 0;
}

static void end_run(struct tm_spix_builder *b, struct current *c, uint8_t flow)
{
	c->in_run = false;
	if (b->err)
		return;
	if (2 * (b->n_runs + 1) > b->n_slots && (b->err = grow_slots(b)) < 0)
		return;
	uint32_t *slot = find_slot(b->runs, b->slots, b->n_slots, c->start, c->last, c->n);
	if (!*slot && b->n_runs == TM_SPIX_MAX_RUNS) {
		b->err = -EFBIG; /* more code than spix/ holds: the pass goes on without it */
		return;
	}
	if (!*slot) {
		if ((b->err = grow((void **)&b->runs, &b->runs_cap, b->n_runs + 1, sizeof(*b->runs),
				   256)) < 0)
			return;
		struct run *r = &b->runs[b->n_runs];
		*r = (struct run){.start = c->start, .last = c->last, .n = c->n};
		if ((b->err = keep_sizes(b, c, r)) < 0)
			return;
		*slot = (uint32_t)++b->n_runs;
	}
	struct run *r = &b->runs[*slot - 1];
	r->count++;
	if (flow == TM_FLOW_TAKEN || flow == TM_FLOW_NOT_TAKEN) {
		r->cond = true;
		r->taken += flow == TM_FLOW_TAKEN;
	}
}

static inline void add_one(struct tm_spix_builder *b, const struct tm_insn *insn)
{
	unsigned k = insn->stream < TM_MAX_GROUPS ? insn->stream : TM_MAX_GROUPS - 1;
	struct current *c = b->cur[k];
	if (!c && !(c = b->cur[k] = calloc(1, sizeof(*c)))) {
		b->err = -ENOMEM;
		return;
	}
	if (insn->more) {
		if (c->in_run && insn->pc == c->last && insn->flow != TM_FLOW_NONE)
			end_run(b, c, insn->flow);
		return;
	}
	if (c->in_run && c->cond)
		end_run(b, c, insn->pc != c->next_pc ? TM_FLOW_TAKEN : TM_FLOW_NOT_TAKEN);
	else if (c->in_run && (insn->pc != c->next_pc || c->n == TM_SPIX_MAX_RUN))
		end_run(b, c, TM_FLOW_NONE);
	if (!c->in_run) {
		c->in_run = true;
		c->start = insn->pc;
		c->n = 0;
	}
	uint32_t size = insn->size ? insn->size : 1;
	c->sizes[c->n++] = (uint8_t)(size < 255 ? size : 255);
	c->last = insn->pc;
	c->next_pc = insn->pc + size;
	c->cond = insn->flow == TM_FLOW_COND; /* the run ends at the next instruction */
	if (insn->flow != TM_FLOW_NONE && !c->cond)
		end_run(b, c, insn->flow);
}

void tm_spix_builder_add(struct tm_spix_builder *b, const struct tm_insn *insn, size_t n)
{
	for (size_t i = 0; i < n; i++)
		add_one(b, &insn[i]);
}

/* One executed instruction address, from every run holding it. */
struct entry {
	uint64_t addr, count, taken;
	uint32_t size;
	uint8_t flags;
};

enum { E_START = 1, E_END = 2, E_COND = 4 };

/* The instructions of every run in address order, one entry per address: runs sorted by their
 * first address join a heap of cursors, one per run still being walked, when the walk reaches
 * them. Entries are made one at a time: a trace of many runs would need 32 bytes per
 * instruction of its code for them all, on top of the runs. */
struct cursor {
	uint64_t addr;
	uint32_t run, k; /* the run's number and the instruction's within it */
};

struct walk {
	const struct tm_spix_builder *b;
	uint32_t *order; /* run numbers by first address */
	size_t joined;	 /* runs of order in the heap or done */
	struct cursor *heap;
	size_t n_heap, heap_cap;
};

static int by_start(const void *x, const void *y, void *arg)
{
	const struct run *runs = arg;
	uint64_t a = runs[*(const uint32_t *)x].start, b = runs[*(const uint32_t *)y].start;
	return a < b ? -1 : a > b;
}

static int walk_start(struct walk *w, const struct tm_spix_builder *b)
{
	*w = (struct walk){.b = b};
	if (!(w->order = malloc((b->n_runs + 1) * sizeof(*w->order))))
		return -ENOMEM;
	for (size_t k = 0; k < b->n_runs; k++)
		w->order[k] = (uint32_t)k;
	qsort_r(w->order, b->n_runs, sizeof(*w->order), by_start, b->runs);
	return 0;
}

static void walk_end(struct walk *w)
{
	free(w->order);
	free(w->heap);
}

static void heap_swap(struct cursor *a, struct cursor *b)
{
	struct cursor t = *a;
	*a = *b;
	*b = t;
}

static int heap_push(struct walk *w, struct cursor c)
{
	if (grow((void **)&w->heap, &w->heap_cap, w->n_heap + 1, sizeof(*w->heap), 64) < 0)
		return -ENOMEM;
	size_t i = w->n_heap++;
	w->heap[i] = c;
	for (; i && w->heap[(i - 1) / 2].addr > w->heap[i].addr; i = (i - 1) / 2)
		heap_swap(&w->heap[(i - 1) / 2], &w->heap[i]);
	return 0;
}

static struct cursor heap_pop(struct walk *w)
{
	struct cursor top = w->heap[0];
	w->heap[0] = w->heap[--w->n_heap];
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < w->n_heap && w->heap[l].addr < w->heap[m].addr)
			m = l;
		if (l + 1 < w->n_heap && w->heap[l + 1].addr < w->heap[m].addr)
			m = l + 1;
		if (m == i)
			break;
		heap_swap(&w->heap[i], &w->heap[m]);
		i = m;
	}
	return top;
}

/* The next address's entry in e: 1, 0 at the end, or -ENOMEM. */
static int walk_next(struct walk *w, struct entry *e)
{
	const struct tm_spix_builder *b = w->b;
	bool more_runs = w->joined < b->n_runs;
	if (!w->n_heap && !more_runs)
		return 0;
	uint64_t next_start = more_runs ? b->runs[w->order[w->joined]].start : 0;
	uint64_t addr = !w->n_heap || (more_runs && next_start < w->heap[0].addr) ? next_start
										  : w->heap[0].addr;
	for (; w->joined < b->n_runs && b->runs[w->order[w->joined]].start == addr; w->joined++)
		if (heap_push(w, (struct cursor){addr, w->order[w->joined], 0}) < 0)
			return -ENOMEM;
	*e = (struct entry){.addr = addr};
	while (w->n_heap && w->heap[0].addr == addr) {
		struct cursor c = heap_pop(w);
		const struct run *r = &b->runs[c.run];
		uint32_t size = b->pool[r->sizes + c.k];
		bool last = c.k + 1 == r->n;
		if (!e->size) /* of two sizes at one address, the first run's */
			e->size = size;
		e->count += r->count;
		e->taken += last ? r->taken : 0;
		e->flags |= (uint8_t)((c.k == 0 ? E_START : 0) | (last ? E_END : 0) |
				      (last && r->cond ? E_COND : 0));
		if (!last && heap_push(w, (struct cursor){addr + size, c.run, c.k + 1}) < 0)
			return -ENOMEM;
	}
	return 1;
}

struct sweep {
	struct tm_spix_table *t;
	struct tm_spix_facts *facts;
	uint64_t text; /* bytes so far */
	int err;
};

static uint32_t counter(struct sweep *s, uint64_t v)
{
	if (v < TM_SPIX_BADCNT)
		return (uint32_t)v;
	s->facts->saturated++;
	return TM_SPIX_BADCNT - 1;
}

static void emit(struct sweep *s, uint64_t addr, unsigned len, uint32_t c0, uint32_t c1)
{
	struct tm_spix_table *t = s->t;
	if (s->err || (s->err = tm_spix_table_reserve(t, (uint64_t)t->nbb + 1)) < 0)
		return;
	t->addr[t->nbb] = addr;
	t->len[t->nbb] = (uint8_t)len;
	t->count[t->nbb][0] = c0;
	t->count[t->nbb][1] = c1;
	t->nbb++;
	s->text += 4u * len;
}

/* Non-executable blocks for the bytes between two executed instructions. */
static void emit_gap(struct sweep *s, uint64_t addr, uint64_t bytes)
{
	if (bytes > TM_SPIX_MAX_GAP) {
		s->facts->gaps_shortened++;
		emit(s, addr, 1, TM_SPIX_BADCNT, TM_SPIX_BADCNT);
		return;
	}
	for (uint64_t words = (bytes + 3) / 4; words && !s->err;) {
		unsigned len = words > TM_SPIX_MAX_BLOCK ? TM_SPIX_MAX_BLOCK : (unsigned)words;
		emit(s, addr, len, TM_SPIX_BADCNT, TM_SPIX_BADCNT);
		addr += 4u * len;
		words -= len;
	}
}

int tm_spix_builder_finish(struct tm_spix_builder *b, struct tm_spix_table *t,
			   struct tm_spix_facts *facts)
{
	memset(t, 0, sizeof(*t));
	memset(facts, 0, sizeof(*facts));
	for (unsigned k = 0; k < TM_MAX_GROUPS; k++) /* a last branch's outcome is unknown */
		if (b->cur[k] && b->cur[k]->in_run)
			end_run(b, b->cur[k], b->cur[k]->cond ? TM_FLOW_NOT_TAKEN : TM_FLOW_NONE);
	if (b->err)
		return b->err;
	free(b->slots); /* the runs are all found: what remains is to walk them */
	b->slots = NULL;
	b->n_slots = 0;
	struct walk w;
	if (walk_start(&w, b) < 0 || !(t->addr = malloc(sizeof(*t->addr))) ||
	    tm_spix_table_reserve(t, 1) < 0) {
		walk_end(&w);
		tm_spix_table_free(t);
		return -ENOMEM;
	}
	t->big_endian = true;
	struct sweep s = {.t = t, .facts = facts};
	uint64_t start = 0, count = 0;
	unsigned len = 0;
	struct entry entries[2], *prev = NULL, *cur = &entries[0];
	for (;;) {
		int more = walk_next(&w, cur);
		if (more < 0)
			s.err = more;
		if (more <= 0)
			cur = NULL;
		if (s.err)
			break;
		uint64_t prev_end = prev ? prev->addr + prev->size : 0;
		/* with both marks every instruction of a block runs as often as its first; the
		 * count test only guards against addresses seen with two sizes (x86 code jumped
		 * into mid-instruction) */
		bool cut = !prev || !cur || (cur->flags & E_START) || (prev->flags & E_END) ||
			   prev_end != cur->addr || len == TM_SPIX_MAX_BLOCK || cur->count != count;
		if (cut && prev) { /* the block up to prev */
			/* a conditional branch: taken, and not taken, which includes the runs in
			 * which the address held something else (self-modifying code) */
			bool cond = prev->flags & E_COND;
			emit(&s, start, len, counter(&s, cond ? prev->taken : count),
			     counter(&s, cond ? count - prev->taken : 0));
		}
		if (!cur)
			break;
		if (prev && prev_end < cur->addr)
			emit_gap(&s, prev_end, cur->addr - prev_end);
		if (prev && prev_end > cur->addr)
			facts->overlaps++;
		if (cut) {
			start = cur->addr;
			count = cur->count;
			len = 0;
		}
		len++;
		facts->instructions += cur->count;
		prev = cur;
		cur = cur == &entries[0] ? &entries[1] : &entries[0];
	}
	walk_end(&w);
	if (s.err) {
		tm_spix_table_free(t);
		return s.err;
	}
	t->tsize = s.text > UINT32_MAX ? UINT32_MAX : (uint32_t)s.text;
	return 0;
}
