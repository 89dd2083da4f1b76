/* The build key of index files: see build_id.h. */
#include <pthread.h>
#include <stdio.h>

#include <capstone/capstone.h>
#include <json-c/json_c_version.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>
#ifdef TM_HAVE_ISAL
#include <isa-l.h>
#endif

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
	int n = snprintf(buf, len, "zlib %s, liblzma %s, zstd %s, json-c %s, Capstone %d.%d",
			 zlibVersion(), lzma_version_string(), ZSTD_versionString(),
			 json_c_version(), major, minor);
#ifdef TM_HAVE_ISAL /* no call tells the version at run time: the headers' */
	if (n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ", ISA-L %d.%d.%d", ISAL_MAJOR_VERSION,
			 ISAL_MINOR_VERSION, ISAL_PATCH_VERSION);
#else
	(void)n;
#endif
}

const char *tm_build_key(void)
{
	pthread_once(&key_once, make_key);
	return key;
}
