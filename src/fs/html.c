/* HTML escaping and relative URLs for the mount's pages. */
#include <string.h>

#include "html.h"

void tm_html_put_n(FILE *f, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		case '\0': fputs("&#xFFFD;", f); break;
		default: fputc(s[i], f);
		}
	}
}

void tm_html_put(FILE *f, const char *s)
{
	tm_html_put_n(f, s, strlen(s));
}

void tm_html_put_url_path(FILE *f, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~/", *p))
			fputc(*p, f);
		else
			fprintf(f, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
	}
}
