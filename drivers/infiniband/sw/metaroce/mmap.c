// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Mapping rings into processes.  Every ring of a user object (CQ, SQ, RQ)
 * gets an rdma_user_mmap_entry; its key is the mmap() offset that the create
 * response hands to the provider.
 *
 * From insertion on, the entry owns the ring's memory: destroying the object
 * removes the entry, and the memory is freed in mmap_free, once no mmap() of
 * it is still in progress.  remap_vmalloc_range() takes a reference on every
 * page it maps, so pages a process still has mapped outlive the object
 * until the process unmaps them; the kernel no longer looks at them.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "verbs.h"

struct mroce_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *addr;			/* vmalloc_user memory */
};

static struct mroce_mmap_entry *to_mentry(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct mroce_mmap_entry, rdma);
}

/*
 * Make ring r mappable by the process of udata and describe it in *info.
 * On success the entry owns r's memory (see above).
 */
int mroce_ring_mmap_insert(struct ib_udata *udata, struct mroce_ring *r,
			   struct rdma_user_mmap_entry **entry,
			   struct metaroce_ring_info *info)
{
	struct mroce_ucontext *uc =
		rdma_udata_to_drv_context(udata, struct mroce_ucontext, ibuc);
	struct mroce_mmap_entry *e;
	int err;

	if (!uc)
		return -EINVAL;
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	e->addr = r->hdr;
	err = rdma_user_mmap_entry_insert(&uc->ibuc, &e->rdma, r->size);
	if (err) {
		kfree(e);
		return err;
	}
	*entry = &e->rdma;
	memset(info, 0, sizeof(*info));
	info->offset = rdma_user_mmap_get_offset(&e->rdma);
	info->size = r->size;
	info->slots = mroce_ring_slots(r);
	info->slot_size = r->slot_size;
	return 0;
}

/*
 * The object that owned ring r is going away: withdraw the mapping.  The
 * memory goes with the entry; r is left empty.  No-op without an entry.
 */
void mroce_ring_mmap_remove(struct mroce_ring *r,
			    struct rdma_user_mmap_entry **entry)
{
	if (!*entry)
		return;
	r->hdr = NULL;
	rdma_user_mmap_entry_remove(*entry);
	*entry = NULL;
}

/*
 * Map the vmalloc'ed ring at addr into all of vma, page by page (the ring
 * is not VM_USERMAP memory: it is charged to a memory cgroup, which
 * vmalloc_user() cannot do).  The entry checked vma's length.
 */
static int mroce_map_vmalloc(struct vm_area_struct *vma, void *addr)
{
	unsigned long off;
	int err;

	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	for (off = 0; off < vma->vm_end - vma->vm_start; off += PAGE_SIZE) {
		err = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(addr + off));
		if (err)
			return err;
	}
	return 0;
}

int mroce_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	int err;

	/* Rings are data: never executable. */
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	vm_flags_clear(vma, VM_MAYEXEC);

	/* Checks the length against the ring's and that vma is shared. */
	entry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!entry)
		return -EINVAL;
	err = mroce_map_vmalloc(vma, to_mentry(entry)->addr);
	rdma_user_mmap_entry_put(entry);
	return err;
}

void mroce_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct mroce_mmap_entry *e = to_mentry(entry);

	vfree(e->addr);
	kfree(e);
}
