#include <stdlib.h>
#include <string.h>

#include "mem_source.h"

static ssize_t mem_read(struct tm_source *s, void *buf, size_t len, uint64_t off)
{
	struct mem_source *m = (struct mem_source *)s;
	__atomic_add_fetch(&m->reads, 1, __ATOMIC_RELAXED); /* reads may run in parallel */
	if (m->fail)
		return m->fail;
	if (off >= m->len)
		return 0;
	if (len > m->len - off)
		len = m->len - (size_t)off;
	memcpy(buf, m->data + off, len);
	return (ssize_t)len;
}

static void mem_close(struct tm_source *s)
{
	__atomic_add_fetch(&((struct mem_source *)s)->closes, 1, __ATOMIC_RELAXED);
}

static const struct tm_source_ops mem_ops = {
    .read = mem_read,
    .close = mem_close,
};

void mem_source_init(struct mem_source *m, const void *data, size_t len)
{
	memset(m, 0, sizeof(*m));
	m->src.ops = &mem_ops;
	m->src.size = len;
	m->src.fd = -1;
	m->data = malloc(len ? len : 1);
	if (!m->data)
		abort();
	if (len)
		memcpy(m->data, data, len);
	m->len = len;
}

void mem_source_free(struct mem_source *m)
{
	free(m->data);
	m->data = NULL;
	m->len = 0;
}
