/* Runs a fuzz target's LLVMFuzzerTestOneInput over files, without libFuzzer: the seed corpus
 * and every crash ever found are replayed by `meson test` in every build, also under the
 * sanitizers.
 *
 *   replay PATH...   each PATH a file, or a folder whose files are inputs; exits 0 when every
 *                    input ran (a failing input aborts), 1 when there was none or one could
 *                    not be read */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n = -1;
	if (f && fseek(f, 0, SEEK_END) == 0)
		n = ftell(f);
	uint8_t *b = n >= 0 ? malloc(n > 0 ? (size_t)n : 1) : NULL;
	if (!b || fseek(f, 0, SEEK_SET) != 0 || fread(b, 1, (size_t)n, f) != (size_t)n) {
		perror(path);
		free(b);
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(b, (size_t)n);
	free(b);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned ran = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]) < 0)
				return 1;
			ran++;
			continue;
		}
		struct dirent **names;
		int n = scandir(argv[i], &names, NULL, alphasort);
		if (n < 0) {
			perror(argv[i]);
			return 1;
		}
		for (int k = 0; k < n; k++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[i], names[k]->d_name);
			if (names[k]->d_name[0] != '.' && stat(path, &st) == 0 &&
			    S_ISREG(st.st_mode)) {
				if (run_file(path) < 0)
					return 1;
				ran++;
			}
			free(names[k]);
		}
		free(names);
	}
	printf("%u inputs replayed\n", ran);
	return ran ? 0 : 1;
}
