// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * User contexts: one per process that opens the device through libibverbs.
 */
#include <rdma/metaroce-abi.h>
#include <rdma/uverbs_ioctl.h>

#include "tunables.h"
#include "verbs.h"

int mroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct mroce_dev *mdev = to_mdev(ibuc->device);
	struct metaroce_alloc_ucontext_resp resp = {
		.abi_version = METAROCE_UVERBS_ABI_VERSION,
	};
	int err;

	if (!mroce_get_limit(&mdev->num_ucontext, MROCE_MAX_UCONTEXT))
		return -ENOMEM;
	atomic64_set(&container_of(ibuc, struct mroce_ucontext,
				   ibuc)->queue_bytes, 0);

	if (udata->outlen) {
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err) {
			atomic_dec(&mdev->num_ucontext);
			return err;
		}
	}
	return 0;
}

void mroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct mroce_ucontext *uc =
		container_of(ibuc, struct mroce_ucontext, ibuc);

	/* Every queue of the context was destroyed before it. */
	WARN_ON_ONCE(atomic64_read(&uc->queue_bytes));
	atomic_dec(&to_mdev(ibuc->device)->num_ucontext);
}

/*
 * Charge bytes of queue memory (rings, shadows) to the user context of
 * udata, the process that sizes them: at most ctx_queue_mem_mb in all per
 * context (spec 16.4), else -ENOMEM, as ibv_create_qp(3) says for want of
 * resources.  The memory cgroup bounds the pages as well; this bounds one
 * context before it fills its cgroup.  Kernel objects (no udata) are not
 * charged.  m accumulates what the object holds.
 */
int mroce_qmem_charge(struct mroce_qmem *m, struct ib_udata *udata,
		      size_t bytes)
{
	struct mroce_ucontext *uc;
	u64 limit = (u64)READ_ONCE(mroce_ctx_queue_mem_mb) << 20;

	if (!udata)
		return 0;
	uc = rdma_udata_to_drv_context(udata, struct mroce_ucontext, ibuc);
	if (!uc)
		return 0;
	if (m->uc && m->uc != uc)
		return -EINVAL;
	if (atomic64_add_return(bytes, &uc->queue_bytes) > limit) {
		atomic64_sub(bytes, &uc->queue_bytes);
		return -ENOMEM;
	}
	m->uc = uc;
	m->bytes += bytes;
	return 0;
}

/* Give back bytes (all if more than m holds) of m's charge. */
void mroce_qmem_uncharge(struct mroce_qmem *m, size_t bytes)
{
	bytes = min(bytes, m->bytes);
	if (!m->uc || !bytes)
		return;
	atomic64_sub(bytes, &m->uc->queue_bytes);
	m->bytes -= bytes;
}

/*
 * Device removal with contexts still open (rdma link delete, netdev gone,
 * module unload): the core destroys every object of the context through the
 * usual destroy verbs, which withdraw the rings' mmap entries (mmap.c).
 * Rings a process has mapped stay mapped: their pages are only freed when
 * it unmaps them, and the kernel no longer reads or writes them.  Nothing
 * else is left for the driver to detach.  Having this op lets removal
 * proceed instead of waiting for every process to close the device.
 */
void mroce_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}
