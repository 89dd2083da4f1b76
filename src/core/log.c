/* One formatter for every log line: see log.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracemount/log.h"
#include "tracemount/util.h"

void tm_log(tm_log_fn *sink, int priority, const char *fmt, ...)
{
	char line[1024]; /* a path and a reason: lines longer are cut */
	va_list ap;
	if (!sink)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* escaped whole, as the status escapes a name: a newline in a name cannot forge a
	 * line, nor bytes that are not UTF-8 reach syslog raw */
	char *shown = tm_escape_name(line);
	sink(priority, shown ? shown : "a log line lost: out of memory");
	free(shown);
}
