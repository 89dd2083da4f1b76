/* The reference decoder of specs/001_56d74c835ee11964.txt, run as its authors intended.
 *
 * The original reads the address with fread into an unsigned long on a 32-bit big-endian
 * host. Here the four bytes are assembled big-endian explicitly; the loop, its feof test and
 * the output format are the original's. The test suite uses it as the independent expectation
 * for dump.txt, so it shares no code with tracemount. */
#include <stdio.h>

static const char op[16][11] = {
    "INVALID", "INT_ACK",    "INVALID", "SPECIAL", "INVALID", "IO_READ",   "INVALID",	 "IO_WRITE",
    "I_FETCH", "NC_I_FETCH", "INVALID", "INVALID", "D_READ",  "NC_D_READ", "WRITE_BACK", "D_WRITE"};

static void read_addr(unsigned long *addr)
{
	unsigned char b[4] = {0, 0, 0, 0};
	fread(b, 4, 1, stdin);
	*addr =
	    (unsigned long)b[0] << 24 | (unsigned long)b[1] << 16 | (unsigned long)b[2] << 8 | b[3];
}

int main(void)
{
	unsigned long addr;
	unsigned char be, control;

	read_addr(&addr);
	fread(&be, 1, 1, stdin);
	fread(&control, 1, 1, stdin);

	while (!feof(stdin)) {
		printf("%08lx %02x %s\n", addr, be, op[control >> 4]);
		read_addr(&addr);
		fread(&be, 1, 1, stdin);
		fread(&control, 1, 1, stdin);
	}
	return 0;
}
