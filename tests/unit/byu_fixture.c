/* The BYU helpers of byu_ref.h that stand on the product's side, kept out of the model
 * (byu_ref.c) so that the model links no product code: where a class sits in the product's
 * table, and a format with state that wraps the product's decoder. */
#include <string.h>

#include "byu_ref.h"

int byu_ref_class_index(uint8_t control)
{
	char name[16];
	byu_ref_class_name(control, name);
	for (unsigned c = 0; c < tm_format_byu.n_classes; c++)
		if (strcmp(tm_format_byu.classes[c], name) == 0)
			return (int)c;
	return -1;
}

static void counting_init(void *state)
{
	*(uint64_t *)state = BYU_REF_COUNT_BASE;
}

static int counting_decode(void *state, const struct tm_decode_in *in, void *recs, size_t max,
			   size_t *n_out, size_t *used, struct tm_diag *diag)
{
	int ret = tm_format_byu.decode(NULL, in, recs, max, n_out, used, diag);
	struct byu_ref_decoded *r = recs;
	uint64_t *count = state;
	for (size_t i = 0; i < *n_out; i++)
		r[i].addr = (uint32_t)(*count)++;
	return ret;
}

const struct tm_format *byu_ref_counting(void)
{
	static struct tm_format counting;
	counting = tm_format_byu;
	counting.name = "byu_counting";
	counting.state_size = sizeof(uint64_t);
	counting.state_init = counting_init;
	counting.decode = counting_decode;
	return &counting;
}
