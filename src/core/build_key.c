/* The build key of index files: see build_id.h. */
#include <pthread.h>
#include <stdio.h>

#include <capstone/capstone.h>
#include <json-c/json_c_version.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include "tracemount/build_id.h"

static char key[TM_BUILD_KEY_LEN];
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void make_key(void)
{
	int major = 0, minor = 0;
	cs_version(&major, &minor);
	snprintf(key, sizeof(key), "%s capstone-%d.%d json-c-%s", tm_build_id, major, minor,
		 json_c_version());
}

void tm_library_versions(char *buf, size_t len)
{
	int major = 0, minor = 0;
	cs_version(&major, &minor);
	snprintf(buf, len, "zlib %s, liblzma %s, zstd %s, json-c %s, Capstone %d.%d", zlibVersion(),
		 lzma_version_string(), ZSTD_versionString(), json_c_version(), major, minor);
}

const char *tm_build_key(void)
{
	pthread_once(&key_once, make_key);
	return key;
}
