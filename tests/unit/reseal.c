#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "reseal.h"

void index_file_reseal(uint8_t *file, size_t len)
{
	uint32_t header_size, sum;
	if (len < 16)
		return;
	memcpy(&header_size, file + 12, 4);
	if (header_size < 24 || header_size > len)
		return;
	sum = (uint32_t)crc32_z(crc32_z(0, NULL, 0), file + header_size, len - header_size);
	memcpy(file + header_size - 8, &sum, 4);
	memset(file + header_size - 4, 0, 4);
	sum = (uint32_t)crc32_z(crc32_z(0, NULL, 0), file, header_size);
	memcpy(file + header_size - 4, &sum, 4);
}

int index_file_reseal_path(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDWR), ok = -1;
	uint8_t *file = NULL;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && (file = malloc((size_t)st.st_size + 1)) &&
	    pread(fd, file, (size_t)st.st_size, 0) == st.st_size) {
		index_file_reseal(file, (size_t)st.st_size);
		ok = pwrite(fd, file, (size_t)st.st_size, 0) == st.st_size ? 0 : -1;
	}
	free(file);
	close(fd);
	return ok;
}
