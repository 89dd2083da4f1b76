/* Function names as a reader knows them (calls.h): C++ symbols demangled by libiberty, the
 * library c++filt uses, so that the views and `c++filt -i` agree. */
#include <stdlib.h>
#include <string.h>

#ifdef TM_DEMANGLE_H_IN_LIBIBERTY
#include <libiberty/demangle.h>
#else
#include <demangle.h>
#endif

#include "calls/calls.h"

char *tm_demangle(const char *symbol)
{
	/* c++filt -i's options: parameters and qualifiers, with std::string and the like
	 * written short; the style (C++, Rust or D) is the one the name shows */
	char *name = cplus_demangle(symbol, DMGL_PARAMS | DMGL_ANSI);
	if (name && (!*name || strcmp(name, symbol) == 0)) {
		free(name);
		name = NULL;
	}
	return name;
}
