// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Remote keys.  As ULPs do: ib_alloc_mr() + ib_map_mr_sg() + IB_WR_REG_MR
 * (fast registration) when the device has IB_DEVICE_MEM_MGT_EXTENSIONS.
 * Otherwise a DMA MR from the driver's get_dma_mr, set up the way
 * ib_alloc_pd() sets up its internal MR (the one behind
 * IB_PD_UNSAFE_GLOBAL_RKEY), with exactly the access the test needs.
 */
#include <linux/mm.h>

#include "kverbs.h"

#define KV_WRID_REG		0x7265670000000000ULL	/* "reg" */

static int kv_rmr_fast_reg(struct kv_test *t, struct kv_ep *ep,
			   struct kv_buf *b, int access, struct kv_rmr *r)
{
	u32 pages = DIV_ROUND_UP(offset_in_page(b->va) + b->len, PAGE_SIZE);
	struct ib_reg_wr wr = {};
	struct ib_mr *mr;
	int n;

	mr = ib_alloc_mr(ep->pd, IB_MR_TYPE_MEM_REG, pages);
	if (IS_ERR(mr))
		return kv_fail(t, "%s: ib_alloc_mr(%u pages): %pe",
			       ep->dev->name, pages, mr);
	r->mr = mr;
	r->fast_reg = true;
	/* From here on kv_ep_destroy() deregisters it, after the QP is gone. */
	list_add_tail(&r->node, &ep->rmrs);

	sg_init_one(&r->sg, b->va, b->len);
	sg_dma_address(&r->sg) = b->dma;
	sg_dma_len(&r->sg) = b->len;
	n = ib_map_mr_sg(mr, &r->sg, 1, NULL, PAGE_SIZE);
	if (n != 1)
		return kv_fail(t, "%s: ib_map_mr_sg(%zu bytes): %d",
			       ep->dev->name, b->len, n);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));

	wr.wr.wr_id = KV_WRID_REG;
	wr.wr.opcode = IB_WR_REG_MR;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.mr = mr;
	wr.key = mr->rkey;
	wr.access = access;
	n = kv_send_wait(t, ep, &wr.wr, IB_WC_REG_MR, "IB_WR_REG_MR");
	if (n)
		return n;
	r->rkey = mr->rkey;
	r->addr = mr->iova;
	return 0;
}

static int kv_rmr_dma(struct kv_test *t, struct kv_ep *ep, struct kv_buf *b,
		      int access, struct kv_rmr *r)
{
	struct ib_device *dev = ep->dev->ibdev;
	struct ib_mr *mr;

	if (!dev->ops.get_dma_mr)
		return kv_fail(t, "%s: neither fast registration nor get_dma_mr",
			       ep->dev->name);
	mr = dev->ops.get_dma_mr(ep->pd, access);
	if (IS_ERR(mr))
		return kv_fail(t, "%s: get_dma_mr(0x%x): %pe", ep->dev->name,
			       access, mr);
	mr->device = dev;
	mr->pd = ep->pd;
	mr->type = IB_MR_TYPE_DMA;
	mr->uobject = NULL;
	mr->need_inval = false;
	r->mr = mr;
	r->fast_reg = false;
	r->rkey = mr->rkey;
	r->addr = b->dma;
	list_add_tail(&r->node, &ep->rmrs);
	return 0;
}

/* Give ep's peer access to b; ep's QP must be in RTS for fast reg. */
int kv_rmr_reg(struct kv_test *t, struct kv_ep *ep, struct kv_buf *b,
	       int access, struct kv_rmr *r)
{
	bool fast = ep->dev->ibdev->attrs.device_cap_flags &
		    IB_DEVICE_MEM_MGT_EXTENSIONS;

	memset(r, 0, sizeof(*r));
	INIT_LIST_HEAD(&r->node);
	if (!t->rmr_noted) {
		t->rmr_noted = true;
		kv_diag(t, "remote keys: %s", fast ?
			"fast registration (ib_alloc_mr, IB_WR_REG_MR)" :
			"DMA MR (get_dma_mr): no IB_DEVICE_MEM_MGT_EXTENSIONS");
	}
	access |= IB_ACCESS_LOCAL_WRITE;
	if (fast)
		return kv_rmr_fast_reg(t, ep, b, access, r);
	return kv_rmr_dma(t, ep, b, access, r);
}

/* Called by kv_ep_destroy(), after the QP is destroyed. */
void kv_rmr_dereg(struct kv_rmr *r)
{
	struct ib_mr *mr = r->mr;

	list_del_init(&r->node);
	r->mr = NULL;
	if (!mr)
		return;
	if (r->fast_reg)
		ib_dereg_mr(mr);
	else
		mr->device->ops.dereg_mr(mr, NULL);
}
