// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fast-registration helpers: memory made of separate pages (so that an MR's
 * page list really translates), REG_MR and LOCAL_INV work requests,
 * WRITEs and READs through a remote key, and what every fast registration
 * test sets up (struct kv_fr_base, MRs to register).
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "kverbs.h"

int kv_pages_alloc(struct kv_test *t, struct kv_pages *m,
		   struct ib_device *dev)
{
	int i, n;

	memset(m, 0, sizeof(*m));
	m->ibdev = dev;
	sg_init_table(m->sg, KV_FR_PAGES);
	/* Allocated one by one: neighbours in the MR, not in memory. */
	for (i = 0; i < KV_FR_PAGES; i++) {
		m->page[i] = alloc_page(GFP_KERNEL);
		if (!m->page[i])
			return kv_fail(t, "alloc_page failed");
		kv_canary(page_address(m->page[i]), PAGE_SIZE);
		sg_set_page(&m->sg[i], m->page[i], PAGE_SIZE, 0);
	}
	n = ib_dma_map_sg(dev, m->sg, KV_FR_PAGES, DMA_BIDIRECTIONAL);
	if (n != KV_FR_PAGES)
		return kv_fail(t, "ib_dma_map_sg of %d pages: %d", KV_FR_PAGES,
			       n);
	m->mapped = true;
	m->flat = vmalloc(KV_FR_BYTES);
	if (!m->flat)
		return kv_fail(t, "vmalloc(%lu) failed", KV_FR_BYTES);
	return 0;
}

void kv_pages_free(struct kv_pages *m)
{
	int i;

	if (m->mapped)
		ib_dma_unmap_sg(m->ibdev, m->sg, KV_FR_PAGES,
				DMA_BIDIRECTIONAL);
	m->mapped = false;
	for (i = 0; i < KV_FR_PAGES; i++) {
		if (m->page[i])
			__free_page(m->page[i]);
		m->page[i] = NULL;
	}
	vfree(m->flat);
	m->flat = NULL;
}

/* Every page to the canary, handed to the device. */
void kv_pages_canary(struct kv_pages *m)
{
	int i;

	for (i = 0; i < KV_FR_PAGES; i++) {
		kv_canary(page_address(m->page[i]), PAGE_SIZE);
		ib_dma_sync_single_for_device(m->ibdev,
					      sg_dma_address(&m->sg[i]),
					      PAGE_SIZE, DMA_BIDIRECTIONAL);
	}
}

/* The pages' bytes, in MR order, as one flat copy (m->flat). */
const u8 *kv_pages_flat(struct kv_pages *m)
{
	int i;

	for (i = 0; i < KV_FR_PAGES; i++) {
		ib_dma_sync_single_for_cpu(m->ibdev, sg_dma_address(&m->sg[i]),
					   PAGE_SIZE, DMA_BIDIRECTIONAL);
		memcpy(m->flat + i * PAGE_SIZE, page_address(m->page[i]),
		       PAGE_SIZE);
	}
	return m->flat;
}

/* Bytes [off, off + len) of the pages hold pattern seed, all else canary. */
int kv_pages_check(struct kv_test *t, struct kv_pages *m, size_t off,
		   size_t len, u32 seed, const char *what)
{
	const u8 *p = kv_pages_flat(m);
	int err;

	err = kv_check_canary(t, p, off, what);
	if (!err)
		err = kv_check_pattern(t, p + off, len, seed, 0, what);
	if (!err)
		err = kv_check_canary(t, p + off + len,
				      KV_FR_BYTES - off - len, what);
	return err;
}

/* An IB_WR_REG_MR of mr with its current key and iova. */
void kv_reg_wr(struct ib_reg_wr *wr, struct ib_mr *mr, int access, u64 wr_id,
	       bool signaled)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr.wr_id = wr_id;
	wr->wr.opcode = IB_WR_REG_MR;
	wr->wr.send_flags = signaled ? IB_SEND_SIGNALED : 0;
	wr->mr = mr;
	wr->key = mr->rkey;
	wr->access = access;
}

void kv_inv_wr(struct ib_send_wr *wr, u32 key, u64 wr_id, bool signaled)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = wr_id;
	wr->opcode = IB_WR_LOCAL_INV;
	wr->send_flags = signaled ? IB_SEND_SIGNALED : 0;
	wr->ex.invalidate_rkey = key;
}

/*
 * Map the pages into mr from byte sg_off of the first, give it the next
 * key, and register it (one signalled REG_MR, waited for).
 */
int kv_fr_map_reg(struct kv_test *t, struct kv_ep *ep, struct ib_mr *mr,
		  struct kv_pages *m, unsigned int sg_off, int access)
{
	unsigned int off = sg_off;
	struct ib_reg_wr wr;
	int n;

	n = ib_map_mr_sg(mr, m->sg, KV_FR_PAGES, &off, PAGE_SIZE);
	if (n != KV_FR_PAGES)
		return kv_fail(t, "ib_map_mr_sg of %d pages: %d", KV_FR_PAGES,
			       n);
	if (mr->iova != sg_dma_address(&m->sg[0]) + sg_off ||
	    mr->length != KV_FR_BYTES - sg_off)
		return kv_fail(t, "ib_map_mr_sg: iova 0x%llx length %llu, expected 0x%llx %lu",
			       mr->iova, mr->length,
			       sg_dma_address(&m->sg[0]) + sg_off,
			       KV_FR_BYTES - sg_off);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	kv_reg_wr(&wr, mr, access, KV_WRID_FR_REG, true);
	return kv_send_wait(t, ep, &wr.wr, IB_WC_REG_MR, "IB_WR_REG_MR");
}

/* One RDMA WRITE or READ of len bytes at off in b, remote va and rkey. */
void kv_rdma_wr(struct ib_rdma_wr *wr, struct ib_sge *sge,
		const struct kv_ep *ep, const struct kv_buf *b, size_t off,
		u32 len, enum ib_wr_opcode op, u64 va, u32 rkey, u64 wr_id)
{
	*sge = kv_sge(ep, b, off, len);
	memset(wr, 0, sizeof(*wr));
	wr->wr.wr_id = wr_id;
	wr->wr.opcode = op;
	wr->wr.send_flags = IB_SEND_SIGNALED;
	wr->wr.sg_list = sge;
	wr->wr.num_sge = 1;
	wr->remote_addr = va;
	wr->rkey = rkey;
}

/* A WRITE that must fail with IB_WC_REM_ACCESS_ERR. */
int kv_write_denied(struct kv_test *t, struct kv_ep *a, struct kv_buf *sb,
		    u32 len, u64 va, u32 rkey, const char *what)
{
	struct ib_rdma_wr wr;
	struct ib_sge sge;
	struct ib_wc wc;
	int err;

	kv_rdma_wr(&wr, &sge, a, sb, 0, len, IB_WR_RDMA_WRITE, va, rkey,
		   KV_WRID_FR_DENIED);
	err = kv_post_send(t, a, &wr.wr, what);
	if (!err)
		err = kv_expect(t, a->scq, &wc, KV_WRID_FR_DENIED,
				IB_WC_REM_ACCESS_ERR, -1, what);
	return err;
}

/*
 * An RC pair with default attributes, b's pages, sb_len bytes on a and
 * rb_len bytes on a (rb_on_a) or b.  0 or the error after kv_fail();
 * kv_fr_base_fini() undoes it either way.  f starts zeroed.
 */
int kv_fr_base_init(struct kv_test *t, struct kv_fr_base *f, size_t sb_len,
		    bool rb_on_a, size_t rb_len)
{
	int err;

	err = kv_rc_pair_default(t, &f->a, &f->b);
	if (!err)
		err = kv_pages_alloc(t, &f->m, f->b.dev->ibdev);
	if (!err)
		err = kv_buf_alloc(t, &f->sb, f->a.dev->ibdev, sb_len);
	if (!err)
		err = kv_buf_alloc(t, &f->rb, rb_on_a ? f->a.dev->ibdev :
					      f->b.dev->ibdev, rb_len);
	return err;
}

void kv_fr_base_fini(struct kv_fr_base *f)
{
	kv_ep_destroy(&f->b);
	kv_ep_destroy(&f->a);
	kv_buf_free(&f->rb);
	kv_buf_free(&f->sb);
	kv_pages_free(&f->m);
}

/* *mr: an MR for fast registration of the pages, or NULL after kv_fail(). */
int kv_fr_alloc_mr(struct kv_test *t, struct ib_pd *pd, struct ib_mr **mr)
{
	*mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, KV_FR_PAGES);
	if (IS_ERR(*mr)) {
		int err = kv_fail(t, "ib_alloc_mr: %pe", *mr);

		*mr = NULL;
		return err;
	}
	return 0;
}
