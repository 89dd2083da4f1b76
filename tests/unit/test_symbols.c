/* Function names from ELF images (src/calls/symbols.c): an object file the C compiler builds
 * here (never skipped), ELF files of each class and byte order that libelf writes here (with
 * ARM's Thumb bit, aliases and a sizeless function), ARM's calculator images when
 * ../shared/realtraces is beside the checkout, and a tracker that names its functions. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "calls_programs.h"

static const struct tm_symbol *by_name(const struct tm_symbols *s, const char *name)
{
	for (size_t i = 0; i < tm_symbols_count(s); i++)
		if (strcmp(tm_symbols_at(s, i)->name, name) == 0)
			return tm_symbols_at(s, i);
	return NULL;
}

/* A temporary folder, removed with its files by remove_dir. */
static void make_dir(char *dir)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_compiled_object)
{
	char dir[] = "/tmp/tm-symbols-XXXXXX";
	make_dir(dir);
	char src[256], obj[256], cmd[1024];
	snprintf(src, sizeof(src), "%s/tiny.c", dir);
	snprintf(obj, sizeof(obj), "%s/tiny.o", dir);
	FILE *f = fopen(src, "w");
	ck_assert_ptr_nonnull(f);
	fputs("int alpha(int x) { return x + 1; }\n"
	      "int beta(int x) { return alpha(x) * 2; }\n"
	      "static int gamma_(int x) { return beta(x) - 3; }\n"
	      "int (*keep)(int) = gamma_;\n"
	      "int data_not_a_function = 7;\n",
	      f);
	ck_assert_int_eq(fclose(f), 0);
	/* one .text section, so that the object's section offsets order the functions */
	snprintf(cmd, sizeof(cmd), "cc -c -O0 -fno-function-sections -o '%s' '%s'", obj, src);
	ck_assert_msg(system(cmd) == 0, "%s failed", cmd);

	struct tm_symbols *s;
	ck_assert_int_eq(tm_symbols_new(&s), 0);
	ck_assert_int_eq(tm_symbols_load_elf(s, obj, 0), 0);
	ck_assert_uint_eq(tm_symbols_count(s), 3);
	const struct tm_symbol *alpha = by_name(s, "alpha"), *beta = by_name(s, "beta"),
			       *gamma = by_name(s, "gamma_");
	ck_assert_ptr_nonnull(alpha);
	ck_assert_ptr_nonnull(beta);
	ck_assert_ptr_nonnull(gamma);
	ck_assert_ptr_null(by_name(s, "data_not_a_function"));
	ck_assert_uint_eq(alpha->addr, 0);
	ck_assert_uint_gt(alpha->size, 0);
	ck_assert_uint_ge(beta->addr, alpha->addr + alpha->size);
	ck_assert_uint_ge(gamma->addr, beta->addr + beta->size);
	ck_assert_ptr_eq(tm_symbols_find(s, alpha->addr), alpha);
	ck_assert_ptr_eq(tm_symbols_find(s, alpha->addr + alpha->size - 1), alpha);
	ck_assert_ptr_eq(tm_symbols_find(s, beta->addr + 1), beta);
	ck_assert_ptr_eq(tm_symbols_find(s, gamma->addr + gamma->size - 1), gamma);
	ck_assert_ptr_null(tm_symbols_find(s, gamma->addr + gamma->size));
	uint64_t alpha_size = alpha->size;
	tm_symbols_free(s);

	/* moved by a load offset */
	ck_assert_int_eq(tm_symbols_new(&s), 0);
	ck_assert_int_eq(tm_symbols_load_elf(s, obj, 0x10000), 0);
	ck_assert_uint_eq(by_name(s, "alpha")->addr, 0x10000);
	ck_assert_ptr_null(tm_symbols_find(s, 0xffff));
	ck_assert_ptr_eq(tm_symbols_find(s, 0x10000 + alpha_size - 1), by_name(s, "alpha"));
	tm_symbols_free(s);
	remove_dir(dir);
}
END_TEST

START_TEST(test_not_elf)
{
	char dir[] = "/tmp/tm-symbols-XXXXXX";
	make_dir(dir);
	char path[256];
	snprintf(path, sizeof(path), "%s/text", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("not an ELF file\n", f);
	fclose(f);
	struct tm_symbols *s;
	ck_assert_int_eq(tm_symbols_new(&s), 0);
	ck_assert_int_eq(tm_symbols_load_elf(s, path, 0), -ENOEXEC);
	snprintf(path, sizeof(path), "%s/absent", dir);
	ck_assert_int_eq(tm_symbols_load_elf(s, path, 0), -ENOENT);
	ck_assert_uint_eq(tm_symbols_count(s), 0);
	ck_assert_ptr_null(tm_symbols_find(s, 0));
	tm_symbols_free(s);
	tm_symbols_free(NULL);
	remove_dir(dir);
}
END_TEST

/* An image cut short anywhere before its end (where a compiler puts the section headers) is
 * refused, not read as an image without symbols; the whole one loads from its descriptor. */
START_TEST(test_cut_short)
{
	char dir[] = "/tmp/tm-symbols-XXXXXX";
	make_dir(dir);
	char src[256], obj[256], cut[256], cmd[1024];
	snprintf(src, sizeof(src), "%s/f.c", dir);
	snprintf(obj, sizeof(obj), "%s/f.o", dir);
	snprintf(cut, sizeof(cut), "%s/cut.o", dir);
	FILE *f = fopen(src, "w");
	ck_assert_ptr_nonnull(f);
	fputs("int f(int x) { return x + 1; }\nint g(int x) { return f(x) * 2; }\n", f);
	ck_assert_int_eq(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "cc -c -O0 -o '%s' '%s'", obj, src);
	ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
	struct stat st;
	ck_assert_int_eq(stat(obj, &st), 0);
	long sizes[] = {16, 64, 65, st.st_size / 2, st.st_size - 64, st.st_size - 1};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		snprintf(cmd, sizeof(cmd), "head -c %ld '%s' > '%s'", sizes[i], obj, cut);
		ck_assert_int_eq(system(cmd), 0);
		struct tm_symbols *s;
		ck_assert_int_eq(tm_symbols_new(&s), 0);
		ck_assert_msg(tm_symbols_load_elf(s, cut, 0) == -ENOEXEC, "cut at %ld read",
			      sizes[i]);
		ck_assert_uint_eq(tm_symbols_count(s), 0);
		tm_symbols_free(s);
	}
	int fd = open(obj, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	struct tm_symbols *s;
	ck_assert_int_eq(tm_symbols_new(&s), 0);
	ck_assert_int_eq(tm_symbols_load_elf_fd(s, fd, 0x1000), 0);
	ck_assert_uint_eq(tm_symbols_count(s), 2);
	ck_assert(tm_symbols_at(s, 0)->addr >= 0x1000);
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 0); /* read with pread */
	close(fd);
	tm_symbols_free(s);
	remove_dir(dir);
}
END_TEST

struct test_symbol {
	const char *name;
	uint64_t value, size;
	unsigned char type, bind;
};

/* Appends a section of name at offset name_off, returns it. */
static Elf_Scn *add_section(Elf *e, unsigned type, unsigned name_off, void *buf, size_t len,
			    Elf_Type data_type)
{
	Elf_Scn *scn = elf_newscn(e);
	Elf_Data *d = elf_newdata(scn);
	ck_assert_ptr_nonnull(d);
	d->d_buf = buf;
	d->d_size = len;
	d->d_type = data_type;
	d->d_version = EV_CURRENT;
	d->d_align = 1;
	GElf_Shdr sh;
	ck_assert_ptr_nonnull(gelf_getshdr(scn, &sh));
	sh.sh_type = type;
	sh.sh_name = name_off;
	ck_assert(gelf_update_shdr(scn, &sh));
	return scn;
}

/* Writes an executable of the given class, byte order and machine with syms in its .symtab,
 * through libelf, which converts the symbols to the file's byte order. */
static void write_elf(const char *path, int elf_class, int data, unsigned machine,
		      const struct test_symbol *syms, size_t n)
{
	ck_assert_int_ne(elf_version(EV_CURRENT), EV_NONE);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	Elf *e = elf_begin(fd, ELF_C_WRITE, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(gelf_newehdr(e, elf_class));
	GElf_Ehdr eh;
	ck_assert_ptr_nonnull(gelf_getehdr(e, &eh));
	eh.e_ident[EI_DATA] = (unsigned char)data;
	eh.e_type = ET_EXEC;
	eh.e_machine = (GElf_Half)machine;
	eh.e_version = EV_CURRENT;

	char strtab[512] = "", shstrtab[] = "\0.symtab\0.strtab\0.shstrtab";
	size_t str_len = 1;
	size_t sym_size = elf_class == ELFCLASS32 ? sizeof(Elf32_Sym) : sizeof(Elf64_Sym);
	unsigned char *symtab = calloc(n + 1, sym_size);
	ck_assert_ptr_nonnull(symtab);
	for (size_t i = 0; i < n; i++) {
		size_t name = str_len;
		strcpy(strtab + str_len, syms[i].name);
		str_len += strlen(syms[i].name) + 1;
		unsigned char info = (unsigned char)GELF_ST_INFO(syms[i].bind, syms[i].type);
		if (elf_class == ELFCLASS32) {
			Elf32_Sym *s = (Elf32_Sym *)symtab + i + 1;
			*s = (Elf32_Sym){.st_name = (Elf32_Word)name,
					 .st_value = (Elf32_Addr)syms[i].value,
					 .st_size = (Elf32_Word)syms[i].size,
					 .st_info = info,
					 .st_shndx = 1};
		} else {
			Elf64_Sym *s = (Elf64_Sym *)symtab + i + 1;
			*s = (Elf64_Sym){.st_name = (Elf64_Word)name,
					 .st_value = syms[i].value,
					 .st_size = syms[i].size,
					 .st_info = info,
					 .st_shndx = 1};
		}
	}
	Elf_Scn *sym_scn = add_section(e, SHT_SYMTAB, 1, symtab, (n + 1) * sym_size, ELF_T_SYM);
	Elf_Scn *str_scn = add_section(e, SHT_STRTAB, 9, strtab, str_len, ELF_T_BYTE);
	Elf_Scn *shstr_scn = add_section(e, SHT_STRTAB, 17, shstrtab, sizeof(shstrtab), ELF_T_BYTE);
	GElf_Shdr sh;
	ck_assert_ptr_nonnull(gelf_getshdr(sym_scn, &sh));
	sh.sh_link = (GElf_Word)elf_ndxscn(str_scn);
	sh.sh_info = 1;
	sh.sh_entsize = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
	ck_assert(gelf_update_shdr(sym_scn, &sh));
	eh.e_shstrndx = (GElf_Half)elf_ndxscn(shstr_scn);
	ck_assert(gelf_update_ehdr(e, &eh));
	ck_assert_int_ge(elf_update(e, ELF_C_WRITE), 0);
	elf_end(e);
	close(fd);
	free(symtab);
}

/* Every class and byte order; ARM's Thumb bit cleared; aliases make one function, the
 * global's; a sizeless function reaches the next; objects and undefined names left out. */
START_TEST(test_written_images)
{
	static const struct test_symbol syms[] = {
	    {"thumb_entry", 0x8001, 0x10, STT_FUNC, STB_GLOBAL},
	    {"local_alias", 0x8020, 0x20, STT_FUNC, STB_LOCAL},
	    {"global_name", 0x8020, 0x20, STT_FUNC, STB_GLOBAL},
	    {"sizeless", 0x8040, 0, STT_FUNC, STB_GLOBAL},
	    {"after", 0x8100, 4, STT_FUNC, STB_WEAK},
	    {"an_object", 0x9000, 4, STT_OBJECT, STB_GLOBAL},
	};
	static const struct {
		int elf_class, data;
		unsigned machine;
	} images[] = {
	    {ELFCLASS32, ELFDATA2LSB, EM_ARM},	   {ELFCLASS32, ELFDATA2MSB, EM_ARM},
	    {ELFCLASS32, ELFDATA2MSB, EM_PPC},	   {ELFCLASS64, ELFDATA2MSB, EM_PPC64},
	    {ELFCLASS64, ELFDATA2LSB, EM_AARCH64},
	};
	char dir[] = "/tmp/tm-symbols-XXXXXX";
	make_dir(dir);
	char path[256];
	snprintf(path, sizeof(path), "%s/image.elf", dir);
	for (size_t k = 0; k < sizeof(images) / sizeof(images[0]); k++) {
		write_elf(path, images[k].elf_class, images[k].data, images[k].machine, syms,
			  sizeof(syms) / sizeof(syms[0]));
		struct tm_symbols *s;
		ck_assert_int_eq(tm_symbols_new(&s), 0);
		ck_assert_msg(tm_symbols_load_elf(s, path, 0) == 0, "image %zu", k);
		ck_assert_uint_eq(tm_symbols_count(s), 4);
		bool arm = images[k].machine == EM_ARM;
		const struct tm_symbol *t = tm_symbols_at(s, 0);
		ck_assert_str_eq(t->name, "thumb_entry");
		ck_assert_uint_eq(t->addr, arm ? 0x8000 : 0x8001);
		ck_assert_ptr_eq(tm_symbols_find(s, 0x8020), tm_symbols_at(s, 1));
		ck_assert_str_eq(tm_symbols_at(s, 1)->name, "global_name");
		ck_assert_str_eq(tm_symbols_find(s, 0x80ff)->name, "sizeless");
		ck_assert_uint_eq(tm_symbols_find(s, 0x8040)->size, 0xc0);
		ck_assert_str_eq(tm_symbols_find(s, 0x8103)->name, "after");
		ck_assert_ptr_null(tm_symbols_find(s, 0x8104));
		ck_assert_ptr_null(tm_symbols_find(s, 0x9000));
		ck_assert_ptr_null(tm_symbols_find(s, 0x7fff));
		tm_symbols_free(s);
	}
	remove_dir(dir);
}
END_TEST

/* A path under TM_REALTRACES, or NULL (said, so that the test is seen to skip) when
 * ../shared/realtraces is not beside the checkout. */
static const char *realtrace(char *buf, size_t len, const char *name)
{
	const char *dir = getenv("TM_REALTRACES");
	ck_assert_msg(dir != NULL, "TM_REALTRACES is not set (tests/unit/meson.build sets it)");
	snprintf(buf, len, "%s/tarmac/%s", dir, name);
	if (access(buf, R_OK) != 0) {
		printf("SKIP: [realtraces] %s is absent (../shared/realtraces is not beside this "
		       "checkout)\n",
		       name);
		fflush(stdout);
		return NULL;
	}
	return buf;
}

/* ARM's calculator: 41 functions in each image (readelf -s), at the addresses its traces
 * run. */
START_TEST(test_calculator_images)
{
	static const struct {
		const char *image;
		uint64_t start, c_entry, sys_open;
		uint64_t sys_open_size;
	} rows[] = {
	    {"calculator-aarch32.elf", 0x20150, 0x204f0, 0x202b0, 76},
	    {"calculator-aarch64.elf", 0x2105d4, 0x2109bc, 0x21073c, 96},
	};
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		char path[4096];
		if (!realtrace(path, sizeof(path), rows[k].image))
			continue;
		struct tm_symbols *s;
		ck_assert_int_eq(tm_symbols_new(&s), 0);
		ck_assert_int_eq(tm_symbols_load_elf(s, path, 0), 0);
		ck_assert_uint_eq(tm_symbols_count(s), 41);
		ck_assert_str_eq(tm_symbols_find(s, rows[k].start)->name, "_start");
		ck_assert_str_eq(tm_symbols_find(s, rows[k].c_entry + 8)->name, "c_entry");
		const struct tm_symbol *open = tm_symbols_find(s, rows[k].sys_open);
		ck_assert_str_eq(open->name, "sys_open");
		ck_assert_uint_eq(open->size, rows[k].sys_open_size);
		ck_assert_ptr_nonnull(by_name(s, "_ZN6Parser3addERj"));
		tm_symbols_free(s);
	}
}
END_TEST

static int folded_view(const struct tm_calls *t, FILE *out)
{
	return tm_calls_write_folded(t, false, out);
}

static int flamegraph_view(const struct tm_calls *t, FILE *out)
{
	return tm_calls_write_flamegraph(t, "symbols", out);
}

/* The tracker names functions by their symbols, and a jump to a symbol's entry is a tail
 * call even when nothing called it before. */
START_TEST(test_tracker_with_symbols)
{
	static const struct test_symbol syms[] = {
	    {"main", 0x1000, 0x100, STT_FUNC, STB_GLOBAL},
	    {"f", 0x2000, 0x100, STT_FUNC, STB_GLOBAL},
	    {"g;h<&>", 0x3000, 0x100, STT_FUNC, STB_GLOBAL},
	};
	char dir[] = "/tmp/tm-symbols-XXXXXX";
	make_dir(dir);
	char path[256];
	snprintf(path, sizeof(path), "%s/image.elf", dir);
	write_elf(path, ELFCLASS64, ELFDATA2LSB, EM_X86_64, syms, 3);
	struct tm_symbols *s;
	ck_assert_int_eq(tm_symbols_new(&s), 0);
	ck_assert_int_eq(tm_symbols_load_elf(s, path, 0), 0);
	struct program p = {0};
	at(&p, 0x1010, C); /* the trace starts inside main */
	at(&p, 0x2000, P);
	at(&p, 0x2004, J); /* to g's entry */
	at(&p, 0x3000, R);
	at(&p, 0x1014, P);
	at(&p, 0x1018, C); /* to an address no symbol holds */
	at(&p, 0x7000, R);
	at(&p, 0x101c, P);
	struct tm_calls_config cfg = {.symbols = s};
	struct tm_calls *t = track(&p, &cfg, 0);
	struct tm_calls_counts c;
	tm_calls_get_counts(t, &c);
	ck_assert_uint_eq(c.tail_calls, 1);
	char *tree = render(t, tm_calls_write_tree);
	ck_assert_str_eq(tree,
			 "# call tree: FUNCTION  #ENTRY @PC [tTIME] -> #EXIT @PC [tTIME]  [MARKS]\n"
			 "main  #1 @0x1010 -> #8 @0x101c  [root mid-function]\n"
			 "  f  #2 @0x2000 -> #3 @0x2004  [tail-called-out]\n"
			 "  g:h<&>  #4 @0x3000 -> #4 @0x3000  [tail-call]\n"
			 "  0x7000  #7 @0x7000 -> #7 @0x7000\n");
	free(tree);
	char *folded = render(t, folded_view);
	ck_assert_str_eq(folded, "main 4\nmain;0x7000 1\nmain;f 2\nmain;g:h<&> 1\n");
	free(folded);
	/* names escaped in the flame graph, which stays well-formed */
	char *svg = render(t, flamegraph_view);
	ck_assert_ptr_nonnull(strstr(svg, "<title>g:h&lt;&amp;&gt; (1 instructions, 12.50%)"));
	snprintf(path, sizeof(path), "%s/flamegraph.svg", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(svg, f);
	ck_assert_int_eq(fclose(f), 0);
	free(svg);
	char cmd[512];
	snprintf(cmd, sizeof(cmd),
		 "command -v xmllint >/dev/null 2>&1 || exit 0; xmllint --noout %s", path);
	ck_assert_msg(system(cmd) == 0, "xmllint rejects %s", path);
	tm_calls_free(t);
	tm_symbols_free(s);
	remove_dir(dir);
}
END_TEST

static Suite *symbols_suite(void)
{
	Suite *s = suite_create("symbols");
	TCase *tc = tcase_create("symbols");
	tcase_add_test(tc, test_compiled_object);
	tcase_add_test(tc, test_not_elf);
	tcase_add_test(tc, test_cut_short);
	tcase_add_test(tc, test_written_images);
	tcase_add_test(tc, test_calculator_images);
	tcase_add_test(tc, test_tracker_with_symbols);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(symbols_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
