// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * device.c - decide which uverbs devices are MetaRoCE devices, and create /
 * destroy the per-device provider object.
 *
 * A device is ours iff <ibdev_path>/METAROCE_SYSFS_ABI_ATTR exists (the
 * kernel driver adds it through ib_device_ops.device_group).  The name of
 * the device does not matter, and devices of other drivers (rxe, siw, ...)
 * never carry that attribute.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metaroce.h"

/*
 * Parse the attribute text: decimal digits, optionally surrounded by
 * blanks/newlines (the kernel prints "%u\n").  Anything else is rejected.
 */
static bool parse_abi_attr(const char *s, unsigned long *val)
{
	unsigned long v = 0;
	bool any = false;

	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (0xffffffffUL - (unsigned long)(*s - '0')) / 10)
			return false;		/* more than 32 bits */
		v = v * 10 + (unsigned long)(*s - '0');
		any = true;
	}
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	if (!any || *s != '\0')
		return false;

	*val = v;
	return true;
}

bool metaroce_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char buf[32];
	unsigned long abi;
	int saved_errno = errno;
	int len;

	/* Zeroed: the reader leaves buf untouched for an empty file. */
	memset(buf, 0, sizeof(buf));
	len = ibv_read_ibdev_sysfs_file(buf, sizeof(buf), sysfs_dev, "%s",
					METAROCE_SYSFS_ABI_ATTR);
	/* A missing attribute is the normal "not ours" case: keep errno. */
	errno = saved_errno;
	if (len <= 0)
		return false;
	buf[sizeof(buf) - 1] = '\0';

	if (!parse_abi_attr(buf, &abi)) {
		fprintf(stderr,
			METAROCE_PROVIDER_NAME ": %s: unparsable %s \"%s\"; device ignored\n",
			sysfs_dev->ibdev_name, METAROCE_SYSFS_ABI_ATTR, buf);
		return false;
	}
	if (abi != METAROCE_UVERBS_ABI_VERSION) {
		fprintf(stderr,
			METAROCE_PROVIDER_NAME ": %s: kernel driver ABI %lu, this provider supports %u; device ignored\n",
			sysfs_dev->ibdev_name, abi,
			(unsigned int)METAROCE_UVERBS_ABI_VERSION);
		return false;
	}
	return true;
}

struct verbs_device *metaroce_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct metaroce_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;

	dev->uverbs_abi = sysfs_dev->abi_ver;
	/* libibverbs fills in dev->vdev (names, paths, ops, refcount). */
	return &dev->vdev;
}

void metaroce_uninit_device(struct verbs_device *vdev)
{
	free(to_mdev(&vdev->device));
}
