/* One formatter for every log line: see log.h. */
#include <stdarg.h>
#include <stdio.h>

#include "tracemount/log.h"

void tm_log(tm_log_fn *sink, int priority, const char *fmt, ...)
{
	char line[1024]; /* a path escaped and a reason: lines longer are cut */
	va_list ap;
	if (!sink)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	sink(priority, line);
}
