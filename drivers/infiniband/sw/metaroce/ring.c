// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ring memory: vmalloc'ed, zeroed and charged to the creator's memory
 * cgroup (a user sizes it), so that a user queue can be mmapped as is
 * (mroce_mmap).
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "ring.h"

/* The bytes of a ring that holds at least the given number of slots. */
size_t mroce_ring_bytes(u32 slots, u32 slot_size)
{
	slots = roundup_pow_of_two(max(slots, 1U));
	return PAGE_ALIGN(METAROCE_RING_HDR_SIZE + (size_t)slots * slot_size);
}

int mroce_ring_init(struct mroce_ring *r, u32 slots, u32 slot_size)
{
	slots = roundup_pow_of_two(max(slots, 1U));
	r->slot_size = slot_size;
	r->mask = slots - 1;
	r->size = mroce_ring_bytes(slots, slot_size);
	r->hdr = __vmalloc(r->size, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!r->hdr)
		return -ENOMEM;
	r->prod = 0;
	r->cons = 0;
	return 0;
}

void mroce_ring_free(struct mroce_ring *r)
{
	vfree(r->hdr);
	r->hdr = NULL;
}

void mroce_ring_reset(struct mroce_ring *r)
{
	r->prod = 0;
	r->cons = 0;
	WRITE_ONCE(r->hdr->producer, 0);
	WRITE_ONCE(r->hdr->consumer, 0);
}
