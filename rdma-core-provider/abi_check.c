// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * abi_check.c - make sure the libibverbs we were loaded into is the one
 * verbs_private.h describes, before handing it any of our structures.
 *
 * The private provider ABI (struct layouts, op tables, helper signatures)
 * changes between rdma-core releases without the IBVERBS_PRIVATE_34 tag
 * changing, so symbol versioning alone cannot protect us.  We therefore
 * require:
 *   1. every private symbol we import resolves at version IBVERBS_PRIVATE_34
 *      (dlvsym), and
 *   2. the file that provides verbs_register_driver_34 is rdma-core release
 *      44, i.e. named libibverbs.so.1.14.44.<n>.
 * On failure we print one line on stderr and do not register, so the
 * device simply stays unclaimed.  METAROCE_ALLOW_ABI_MISMATCH=1 (ignored in
 * setuid/setgid programs) turns the refusal into a warning.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metaroce.h"

#define ALLOW_ENV	"METAROCE_ALLOW_ABI_MISMATCH"

static const char *const private_symbols[] = {
#define METAROCE_SYM_NAME(name) #name,
	METAROCE_PRIVATE_SYMBOLS(METAROCE_SYM_NAME)
#undef METAROCE_SYM_NAME
};

/* Append to a fixed buffer, silently truncating. */
static void append(char *buf, size_t size, const char *s)
{
	size_t used = strlen(buf);

	if (used + 1 < size)
		snprintf(buf + used, size - used, "%s", s);
}

/* Returns the number of private symbols missing at IBVERBS_PRIVATE_34. */
static unsigned int find_missing_symbols(char *list, size_t size)
{
	unsigned int missing = 0;
	size_t i;

	list[0] = '\0';
	for (i = 0; i < sizeof(private_symbols) / sizeof(private_symbols[0]);
	     i++) {
		if (dlvsym(RTLD_DEFAULT, private_symbols[i],
			   METAROCE_IBVERBS_PABI_TAG))
			continue;
		if (missing++)
			append(list, size, " ");
		append(list, size, private_symbols[i]);
	}
	(void)dlerror();	/* leave no stale error for libibverbs */
	return missing;
}

/*
 * Copy the path of the file mapped at addr according to /proc/self/maps.
 * The kernel reports the file actually mapped, symlinks resolved.
 */
static bool path_from_maps(const void *addr, char *out, size_t size)
{
	uintptr_t a = (uintptr_t)addr;
	char *line = NULL;
	size_t cap = 0;
	bool found = false;
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return false;

	while (getline(&line, &cap, f) > 0) {
		unsigned long lo, hi;
		char *path, *end;
		size_t len;

		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (a < lo || a >= hi)
			continue;

		path = strchr(line, '/');
		if (!path)
			break;
		len = strcspn(path, "\n");
		path[len] = '\0';
		end = strstr(path, " (deleted)");
		if (end)
			*end = '\0';
		if (strlen(path) < size) {
			strcpy(out, path);
			found = true;
		}
		break;
	}
	free(line);
	fclose(f);
	return found;
}

/*
 * Find the real file name of the object containing addr.  /proc/self/maps
 * comes first: it names the file actually mapped, even if a package upgrade
 * has since replaced it or repointed the symlinks.  Without /proc we fall
 * back to dladdr() + realpath(), and then to the unresolved dladdr() name
 * (which is_release_44() will most likely reject).
 * Returns false only if nothing at all is known.
 */
static bool object_path(const void *addr, char *out, size_t size)
{
	Dl_info info;
	char *real;
	bool ok;

	if (path_from_maps(addr, out, size))
		return true;

	if (!dladdr(addr, &info) || !info.dli_fname || !info.dli_fname[0])
		return false;

	real = realpath(info.dli_fname, NULL);
	if (real) {
		ok = strlen(real) < size;
		if (ok)
			strcpy(out, real);
		free(real);
		if (ok)
			return true;
	}

	if (strlen(info.dli_fname) >= size)
		return false;
	strcpy(out, info.dli_fname);
	return true;
}

/* Is the base name libibverbs.so.1.14.44.<digits and dots>? */
static bool is_release_44(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t plen = strlen(METAROCE_IBVERBS_FILE_PREFIX);
	const char *p;

	base = base ? base + 1 : path;
	if (strncmp(base, METAROCE_IBVERBS_FILE_PREFIX, plen) != 0)
		return false;
	p = base + plen;
	if (*p < '0' || *p > '9')
		return false;
	for (; *p; p++)
		if ((*p < '0' || *p > '9') && *p != '.')
			return false;
	return true;
}

int metaroce_check_libibverbs(void)
{
	char path[PATH_MAX];
	char detail[512];
	/* Room for every message below, so nothing is ever truncated. */
	char problem[sizeof(path) + sizeof(detail) + 256];
	const char *allow;
	unsigned int missing;

	problem[0] = '\0';

	missing = find_missing_symbols(detail, sizeof(detail));
	if (missing) {
		snprintf(problem, sizeof(problem),
			 "libibverbs lacks %u " METAROCE_IBVERBS_PABI_TAG " symbol(s): %s",
			 missing, detail);
	} else if (!object_path((const void *)verbs_register_driver_34, path,
				sizeof(path))) {
		snprintf(problem, sizeof(problem),
			 "cannot tell which libibverbs file is loaded");
	} else if (!is_release_44(path)) {
		snprintf(problem, sizeof(problem),
			 "loaded libibverbs is %s, but this provider is built for rdma-core 44 (" METAROCE_IBVERBS_FILE_PREFIX "*)",
			 path);
	}

	if (!problem[0])
		return 0;

	allow = secure_getenv(ALLOW_ENV);
	if (allow && strcmp(allow, "1") == 0) {
		fprintf(stderr,
			METAROCE_PROVIDER_NAME ": warning: %s; registering anyway because " ALLOW_ENV "=1\n",
			problem);
		return 0;
	}

	fprintf(stderr,
		METAROCE_PROVIDER_NAME ": not registering: %s (set " ALLOW_ENV "=1 to override at your own risk)\n",
		problem);
	return -1;
}
