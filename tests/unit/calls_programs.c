/* Event sequences for the tests of src/calls (calls_programs.h). */
#include <check.h>
#include <stdlib.h>

#include "calls_programs.h"

void at_sp(struct program *p, uint64_t pc, uint8_t kind, uint64_t sp)
{
	ck_assert_uint_lt(p->n, sizeof(p->ev) / sizeof(p->ev[0]));
	p->ev[p->n] = (struct tm_call_event){
	    .pc = pc,
	    .insn_no = p->n + 1,
	    .target = TM_CALL_UNKNOWN,
	    .return_pc = TM_CALL_UNKNOWN,
	    .sp = sp,
	    .time = TM_CALL_UNKNOWN,
	    .size = 4,
	    .kind = kind,
	};
	p->n++;
}

void at(struct program *p, uint64_t pc, uint8_t kind)
{
	at_sp(p, pc, kind, TM_CALL_UNKNOWN);
}

void add_times(struct program *p)
{
	for (size_t i = 0; i < p->n; i++)
		p->ev[i].time = 10 * (i + 1);
}

void nested(struct program *p)
{
	at(p, 0x1000, P);
	at(p, 0x1004, C); /* f */
	at(p, 0x2000, P);
	at(p, 0x2004, C); /* g */
	at(p, 0x3000, P);
	at(p, 0x3004, R); /* to f */
	at(p, 0x2008, R); /* to main */
	at(p, 0x1008, P);
}

void recursion(struct program *p)
{
	at(p, 0x1000, C); /* f */
	at(p, 0x2000, J); /* depth test, not taken */
	at(p, 0x2004, C); /* f again */
	at(p, 0x2000, J); /* not taken */
	at(p, 0x2004, C); /* f a third time */
	at(p, 0x2000, J); /* taken */
	at(p, 0x200c, R); /* the third returns */
	at(p, 0x2008, P);
	at(p, 0x200c, R); /* the second */
	at(p, 0x2008, P);
	at(p, 0x200c, R); /* the first, to main */
	at(p, 0x1004, P);
}

void tail_call(struct program *p)
{
	at(p, 0x1000, C); /* g */
	at(p, 0x3000, R);
	at(p, 0x1004, C); /* f */
	at(p, 0x2000, P);
	at(p, 0x2004, J); /* to g's entry */
	at(p, 0x3000, R); /* g returns to main for f */
	at(p, 0x1008, P);
}

void longjmp_like(struct program *p)
{
	at_sp(p, 0x1000, C, 0x1000); /* f */
	at_sp(p, 0x2000, P, 0x1000);
	at_sp(p, 0x2004, C, 0xff0); /* g */
	at_sp(p, 0x3000, P, 0xff0);
	at_sp(p, 0x3004, R, 0xfe0); /* to main's setjmp, no return address */
	at_sp(p, 0x1010, P, 0x1000);
	at_sp(p, 0x1014, P, 0x1000);
}

struct tm_calls *track(const struct program *p, const struct tm_calls_config *cfg, size_t batch)
{
	struct tm_calls *t;
	ck_assert_int_eq(tm_calls_new(cfg, &t), 0);
	if (batch == 0)
		batch = p->n ? p->n : 1;
	for (size_t i = 0; i < p->n; i += batch)
		tm_calls_add(t, p->ev + i, p->n - i < batch ? p->n - i : batch);
	tm_calls_add(t, p->ev, 0);
	ck_assert_int_eq(tm_calls_finish(t), 0);
	return t;
}

char *render(const struct tm_calls *t, int (*write)(const struct tm_calls *, FILE *))
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(write(t, out), 0);
	ck_assert_int_eq(fclose(out), 0);
	return text;
}
