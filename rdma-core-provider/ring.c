// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ring.c - map and unmap the rings the kernel shares with us (CQs, SQs,
 * RQs; layout in <rdma/metaroce-abi.h>).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "metaroce.h"

/*
 * Map the ring info describes, checking that it is shaped as the ABI says
 * and that a slot holds min_slot_size bytes.  Returns 0 or an errno value.
 */
int metaroce_uring_map(struct ibv_context *context, struct metaroce_uring *r,
		       const struct metaroce_ring_info *info,
		       uint32_t min_slot_size)
{
	uint64_t need;
	void *p;

	need = METAROCE_RING_HDR_SIZE + (uint64_t)info->slots * info->slot_size;
	if (!info->slots || (info->slots & (info->slots - 1)) ||
	    info->slot_size < min_slot_size || info->slot_size % 8 ||
	    need > info->size)
		return EPROTO;

	p = mmap(NULL, info->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 context->cmd_fd, (off_t)info->offset);
	if (p == MAP_FAILED)
		return errno;
	/*
	 * A forked child gets no view of our rings: it could only corrupt
	 * them (verbs are not usable in the child), and its mapping would
	 * keep the kernel's ring alive after we destroy the queue.
	 */
	if (madvise(p, info->size, MADV_DONTFORK)) {
		int err = errno;

		munmap(p, info->size);
		return err;
	}

	r->hdr = p;
	r->map_size = info->size;
	r->mask = info->slots - 1;
	r->slot_size = info->slot_size;
	r->idx = 0;
	return 0;
}

void metaroce_uring_unmap(struct metaroce_uring *r)
{
	if (r->hdr)
		munmap(r->hdr, r->map_size);
	r->hdr = NULL;
	r->map_size = 0;
}
