/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rings shared with userspace (include/uapi/rdma/metaroce-abi.h): a header
 * with the producer and consumer indices, then fixed-size slots.  Kernel
 * queues use the same layout, unmapped.
 */
#ifndef MROCE_RING_H
#define MROCE_RING_H

#include <asm/barrier.h>
#include <linux/compiler.h>
#include <linux/types.h>
#include <rdma/metaroce-abi.h>

struct mroce_ring {
	struct metaroce_ring_hdr *hdr;	/* vmalloc_user: header + slots */
	size_t size;			/* bytes, page aligned */
	u32 slot_size;
	u32 mask;			/* slots - 1 */
	u32 prod;			/* producer's own index (when we produce) */
	u32 cons;			/* consumer's own index (when we consume) */
};

size_t mroce_ring_bytes(u32 slots, u32 slot_size);
int mroce_ring_init(struct mroce_ring *r, u32 slots, u32 slot_size);
void mroce_ring_free(struct mroce_ring *r);
void mroce_ring_reset(struct mroce_ring *r);

static inline u32 mroce_ring_slots(const struct mroce_ring *r)
{
	return r->mask + 1;
}

static inline void *mroce_ring_slot(const struct mroce_ring *r, u32 index)
{
	return (void *)r->hdr + METAROCE_RING_HDR_SIZE +
	       (size_t)(index & r->mask) * r->slot_size;
}

/*
 * Consumer side: how many slots from index from on are produced.  The
 * producer index may come from userspace: an impossible value reads as an
 * empty ring.
 */
static inline u32 mroce_ring_produced(const struct mroce_ring *r, u32 from)
{
	/* Pairs with the producer's release: slot contents before the index. */
	u32 n = smp_load_acquire(&r->hdr->producer) - from;

	return n > mroce_ring_slots(r) ? 0 : n;
}

/* Consumer side: release the oldest slot to the producer. */
static inline void mroce_ring_consume(struct mroce_ring *r)
{
	/* Our reads of the slot are done before the producer may reuse it. */
	smp_store_release(&r->hdr->consumer, ++r->cons);
}

/* Producer side: is there no free slot?  (A bogus consumer reads as full.) */
static inline bool mroce_ring_full(const struct mroce_ring *r)
{
	return r->prod - READ_ONCE(r->hdr->consumer) >= mroce_ring_slots(r);
}

/* Producer side: publish the slot at r->prod. */
static inline void mroce_ring_produce(struct mroce_ring *r)
{
	/* The slot's contents are visible before the new index. */
	smp_store_release(&r->hdr->producer, ++r->prod);
}

#endif /* MROCE_RING_H */
