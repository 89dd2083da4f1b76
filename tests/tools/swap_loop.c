/* Exchanges two paths atomically (renameat2 RENAME_EXCHANGE), over and over, for at most the
 * given number of seconds, pausing PAUSE microseconds between exchanges (default 0), and stopping
 * early once STOP exists: the race a path lookup must survive without leaving its tree.
 *
 *   swap_loop A B SECONDS [PAUSE [STOP]] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 6) {
		fprintf(stderr, "usage: swap_loop A B SECONDS [PAUSE [STOP]]\n");
		return 2;
	}
	useconds_t pause = argc >= 5 ? (useconds_t)atoi(argv[4]) : 0;
	const char *stop = argc == 6 ? argv[5] : NULL;
	time_t end = time(NULL) + atoi(argv[3]);
	unsigned long n = 0;
	while (time(NULL) < end && !(stop && n % 1024 == 0 && access(stop, F_OK) == 0)) {
		if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) <
		    0) {
			perror("renameat2");
			return 1;
		}
		n++;
		if (pause)
			usleep(pause);
	}
	/* an even count leaves the tree as it was */
	if (n % 2)
		syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE);
	printf("%lu exchanges\n", n);
	return 0;
}
