#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "svg_check.h"

void svg_check_well_formed(const char *svg, const char *what)
{
	if (system("command -v xmllint >/dev/null 2>&1") != 0) {
		printf("SKIP: [tool:xmllint] xmllint is absent (Debian's libxml2-utils): XML not "
		       "checked\n");
		fflush(stdout);
		return;
	}
	char path[] = "/tmp/tm-svg-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, svg, strlen(svg)), (ssize_t)strlen(svg));
	close(fd);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", path);
	int status = system(cmd);
	unlink(path);
	ck_assert_msg(status == 0, "xmllint rejects %s:\n%s", what, svg);
}
