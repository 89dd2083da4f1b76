/* Calls and returns of PowerPC instructions from their word (calls.h), by the branch's
 * primary and extended opcode and its LK bit (Power ISA, Book I, 2.4). */
#include "calls/calls.h"

enum {
	OP_BC = 16,
	OP_SC = 17,
	OP_B = 18,
	OP_XL = 19, /* bclr, bcctr, bctar, rfi... by extended opcode */
	XO_BCLR = 16,
	XO_RFID = 18,
	XO_RFI = 50,
	XO_BCCTR = 528,
	XO_BCTAR = 560,
};

enum tm_call_kind tm_classify_ppc(uint32_t word)
{
	unsigned primary = word >> 26, extended = (word >> 1) & 0x3ff;
	bool link = word & 1;
	switch (primary) {
	case OP_B:
	case OP_BC: return link ? TM_CALL_KIND_CALL : TM_CALL_KIND_TRANSFER;
	case OP_SC: return TM_CALL_KIND_TRANSFER;
	case OP_XL:
		switch (extended) {
		case XO_BCLR: return link ? TM_CALL_KIND_CALL : TM_CALL_KIND_RETURN;
		case XO_BCCTR:
		case XO_BCTAR: return link ? TM_CALL_KIND_CALL : TM_CALL_KIND_TRANSFER;
		case XO_RFI:
		case XO_RFID: return TM_CALL_KIND_TRANSFER;
		default: return TM_CALL_KIND_PLAIN;
		}
	default: return TM_CALL_KIND_PLAIN;
	}
}
