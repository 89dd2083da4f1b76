/* Function names and extents from ELF images (calls.h), read with elfutils' libelf: ELF32 and
 * ELF64 of either byte order, whose STT_FUNC (and GNU indirect function) symbols make a table
 * sorted by address for binary search. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "calls/calls.h"

struct entry {
	struct tm_symbol sym; /* first: tm_symbols_at returns &entry.sym */
	uint64_t elf_size;    /* the image's size: 0 is recomputed from the neighbours */
	uint8_t rank;	      /* of its binding, for aliases: global 0, weak 1, local 2 */
};

struct tm_symbols {
	struct entry *e;
	size_t n, cap;
	char **names; /* every name strdup'ed, aliases dropped included, for free */
	size_t n_names, names_cap;
};

int tm_symbols_new(struct tm_symbols **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void tm_symbols_free(struct tm_symbols *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_names; i++)
		free(s->names[i]);
	free(s->names);
	free(s->e);
	free(s);
}

static int reserve(void **items, size_t *cap, size_t want, size_t size)
{
	if (want <= *cap)
		return 0;
	size_t n = *cap ? *cap : 64;
	while (n < want)
		n *= 2;
	void *p = realloc(*items, n * size);
	if (!p)
		return -ENOMEM;
	*items = p;
	*cap = n;
	return 0;
}

static int by_address(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->sym.addr != y->sym.addr)
		return x->sym.addr < y->sym.addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if ((x->elf_size == 0) != (y->elf_size == 0))
		return x->elf_size == 0 ? 1 : -1; /* a sized alias first */
	return strcmp(x->sym.name, y->sym.name);
}

/* Sorts, keeps one symbol per address (the best alias), and gives sizeless functions the
 * room up to the next one. */
static void settle(struct tm_symbols *s)
{
	qsort(s->e, s->n, sizeof(*s->e), by_address);
	size_t kept = 0;
	for (size_t i = 0; i < s->n; i++)
		if (kept == 0 || s->e[kept - 1].sym.addr != s->e[i].sym.addr)
			s->e[kept++] = s->e[i];
	s->n = kept;
	for (size_t i = 0; i < s->n; i++) {
		struct entry *e = &s->e[i];
		if (e->elf_size)
			e->sym.size = e->elf_size;
		else
			e->sym.size = i + 1 < s->n ? s->e[i + 1].sym.addr - e->sym.addr : 1;
	}
}

static uint8_t binding_rank(unsigned char info)
{
	switch (GELF_ST_BIND(info)) {
	case STB_GLOBAL: return 0;
	case STB_WEAK: return 1;
	default: return 2;
	}
}

/* The symbol table to read: .symtab, else .dynsym; NULL if none. */
static Elf_Scn *symbol_section(Elf *elf, GElf_Shdr *shdr)
{
	Elf_Scn *dynsym = NULL;
	GElf_Shdr dyn_shdr;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr h;
		if (!gelf_getshdr(scn, &h))
			continue;
		if (h.sh_type == SHT_SYMTAB) {
			*shdr = h;
			return scn;
		}
		if (h.sh_type == SHT_DYNSYM && !dynsym) {
			dynsym = scn;
			dyn_shdr = h;
		}
	}
	if (dynsym)
		*shdr = dyn_shdr;
	return dynsym;
}

/* Whether the section headers the ELF header announces lie within the file's size bytes:
 * libelf reads a file cut short as one without sections, which would pass for a stripped
 * image. (With more than 0xff00 sections e_shnum is 0 and the first header holds the count.) */
static bool sections_fit(const GElf_Ehdr *ehdr, uint64_t size)
{
	uint64_t n = ehdr->e_shnum ? ehdr->e_shnum : ehdr->e_shoff ? 1 : 0;
	return !n || (ehdr->e_shoff <= size && (size - ehdr->e_shoff) / n >= ehdr->e_shentsize);
}

/* Appends the image's functions to s->e from index s->n on, without counting them in s->n
 * yet (*added of them), so that a failure leaves s as it was. size: the file's bytes. */
static int read_functions(struct tm_symbols *s, Elf *elf, uint64_t size, uint64_t load_offset,
			  size_t *added)
{
	GElf_Ehdr ehdr;
	GElf_Shdr shdr;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr) || !sections_fit(&ehdr, size))
		return -ENOEXEC;
	Elf_Scn *scn = symbol_section(elf, &shdr);
	if (!scn)
		return 0; /* stripped: functions are named by address */
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data || shdr.sh_entsize == 0)
		return -ENOEXEC;
	size_t count = shdr.sh_size / shdr.sh_entsize;
	for (size_t i = 0; i < count; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym))
			return -ENOEXEC;
		unsigned type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF)
			continue;
		const char *name = elf_strptr(elf, shdr.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		uint64_t addr = sym.st_value;
		if (ehdr.e_machine == EM_ARM)
			addr &= ~(uint64_t)1; /* the Thumb bit says the state, not the address */
		if (reserve((void **)&s->e, &s->cap, s->n + *added + 1, sizeof(*s->e)) ||
		    reserve((void **)&s->names, &s->names_cap, s->n_names + 1, sizeof(*s->names)))
			return -ENOMEM;
		char *copy = strdup(name);
		if (!copy)
			return -ENOMEM;
		s->names[s->n_names++] = copy;
		s->e[s->n + (*added)++] = (struct entry){
		    .sym = {.addr = addr + load_offset, .size = sym.st_size, .name = copy},
		    .elf_size = sym.st_size,
		    .rank = binding_rank(sym.st_info),
		};
	}
	return 0;
}

int tm_symbols_load_elf_fd(struct tm_symbols *s, int fd, uint64_t load_offset)
{
	struct stat st;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	if (fstat(fd, &st) < 0)
		return -errno;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	size_t added = 0;
	int err =
	    elf ? read_functions(s, elf, (uint64_t)st.st_size, load_offset, &added) : -ENOEXEC;
	if (elf)
		elf_end(elf);
	if (err)
		return err; /* the names stay in s->names until free: harmless */
	s->n += added;
	settle(s);
	return 0;
}

int tm_symbols_load_elf(struct tm_symbols *s, const char *path, uint64_t load_offset)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int err = tm_symbols_load_elf_fd(s, fd, load_offset);
	close(fd);
	return err;
}

const struct tm_symbol *tm_symbols_find(const struct tm_symbols *s, uint64_t addr)
{
	size_t lo = 0, hi = s->n; /* the answer is below hi: the last start <= addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->e[mid].sym.addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct tm_symbol *sym = &s->e[lo - 1].sym;
	return addr - sym->addr < sym->size ? sym : NULL;
}

size_t tm_symbols_count(const struct tm_symbols *s)
{
	return s->n;
}

const struct tm_symbol *tm_symbols_at(const struct tm_symbols *s, size_t i)
{
	return &s->e[i].sym;
}
