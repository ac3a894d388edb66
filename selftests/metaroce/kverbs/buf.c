// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Buffers: kmalloc'd, mapped with ib_dma_map_single() (the DMA address of a
 * virtual-DMA device is the kernel address), and the data patterns that
 * let every byte be checked.
 */
#include <linux/slab.h>
#include <linux/string.h>

#include "kverbs.h"

int kv_buf_alloc(struct kv_test *t, struct kv_buf *b, struct ib_device *dev,
		 size_t len)
{
	size_t alloc = max_t(size_t, len, 1);

	memset(b, 0, sizeof(*b));
	b->ibdev = dev;
	b->len = len;
	b->va = kmalloc(alloc, GFP_KERNEL | __GFP_NOWARN);
	if (!b->va)
		return kv_fail(t, "kmalloc(%zu) failed", alloc);
	kv_canary(b->va, alloc);
	b->dma = ib_dma_map_single(dev, b->va, alloc, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(dev, b->dma)) {
		kfree(b->va);
		b->va = NULL;
		return kv_fail(t, "ib_dma_map_single(%zu) failed", alloc);
	}
	b->mapped = true;
	return 0;
}

/* Safe on a zeroed or failed buffer. */
void kv_buf_free(struct kv_buf *b)
{
	if (b->mapped)
		ib_dma_unmap_single(b->ibdev, b->dma, max_t(size_t, b->len, 1),
				    DMA_BIDIRECTIONAL);
	b->mapped = false;
	kfree(b->va);
	b->va = NULL;
}

/* Hand the buffer to the CPU before reading what the device wrote. */
void kv_buf_for_cpu(struct kv_buf *b)
{
	ib_dma_sync_single_for_cpu(b->ibdev, b->dma, max_t(size_t, b->len, 1),
				   DMA_BIDIRECTIONAL);
}

/* Hand the buffer back to the device after the CPU wrote it. */
void kv_buf_for_dev(struct kv_buf *b)
{
	ib_dma_sync_single_for_device(b->ibdev, b->dma,
				      max_t(size_t, b->len, 1),
				      DMA_BIDIRECTIONAL);
}

struct ib_sge kv_sge(const struct kv_ep *ep, const struct kv_buf *b,
		     size_t off, u32 len)
{
	struct ib_sge sge = {
		.addr = b->dma + off,
		.length = len,
		.lkey = ep->pd->local_dma_lkey,
	};

	return sge;
}

/*
 * Byte i of pattern seed: a multiplicative hash of (seed, i), so that a
 * byte moved to another offset, or taken from another message, differs.
 */
static u8 kv_pat(u32 seed, size_t i)
{
	u32 x = ((u32)i + seed * 0x01000193U) * 2654435761U;

	return (x >> 24) ^ (x >> 11);
}

/* Fill p with bytes start .. start + len - 1 of pattern seed. */
void kv_fill(u8 *p, size_t len, u32 seed, size_t start)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = kv_pat(seed, start + i);
}

void kv_canary(u8 *p, size_t len)
{
	memset(p, KV_CANARY, len);
}

int kv_check_pattern(struct kv_test *t, const u8 *p, size_t len, u32 seed,
		     size_t start, const char *what)
{
	size_t i, first = 0, bad = 0;

	for (i = 0; i < len; i++) {
		if (p[i] != kv_pat(seed, start + i) && !bad++)
			first = i;
	}
	if (!bad)
		return 0;
	return kv_fail(t, "%s: byte %zu of %zu is 0x%02x, expected 0x%02x (%zu bytes differ)",
		       what, first, len, p[first], kv_pat(seed, start + first),
		       bad);
}

int kv_check_canary(struct kv_test *t, const u8 *p, size_t len,
		    const char *what)
{
	size_t i, first = 0, bad = 0;

	for (i = 0; i < len; i++) {
		if (p[i] != KV_CANARY && !bad++)
			first = i;
	}
	if (!bad)
		return 0;
	return kv_fail(t, "%s: byte %zu of %zu was overwritten with 0x%02x (%zu bytes changed)",
		       what, first, len, p[first], bad);
}
