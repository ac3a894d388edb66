// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MetaRoCE device lifetime: `rdma link add NAME type metaroce netdev DEV`
 * creates one ib_device bound to DEV; it goes away with `rdma link delete`,
 * with DEV, or on module unload.
 */
#include <linux/random.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <net/net_namespace.h>
#include <rdma/metaroce-abi.h>

#include "lifecycle.h"
#include "mr.h"
#include "mroce.h"
#include "verbs.h"

/*
 * Every registered (or registering) MetaRoCE device.  Readers (the netdev
 * notifier, the receive path) walk it under RCU; writers take the lock.
 */
static LIST_HEAD(mroce_devices);
static DEFINE_SPINLOCK(mroce_devices_lock);

/*
 * Find the device bound to ndev and take a reference on it.  Returns NULL if
 * there is none or it is not (or no longer) registered.  Any context.
 */
struct mroce_dev *mroce_find_by_netdev(struct net_device *ndev)
{
	struct mroce_dev *mdev, *found = NULL;

	rcu_read_lock();
	list_for_each_entry_rcu(mdev, &mroce_devices, list) {
		if (mdev->ndev == ndev || mroce_plane_of(mdev, ndev) > 0) {
			if (ib_device_try_get(&mdev->ibdev))
				found = mdev;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/*
 * The registered device with the lowest ib_core index at or above index,
 * referenced (ib_device_put()), or NULL.  For walks that drop every lock
 * between two devices, such as netlink dumps (netlink.c).
 */
struct mroce_dev *mroce_dev_get_from(u32 index)
{
	struct mroce_dev *mdev, *found = NULL;

	rcu_read_lock();
	list_for_each_entry_rcu(mdev, &mroce_devices, list) {
		if (mdev->ibdev.index < index ||
		    (found && mdev->ibdev.index >= found->ibdev.index))
			continue;
		if (!ib_device_try_get(&mdev->ibdev))
			continue;
		if (found)
			ib_device_put(&found->ibdev);
		found = mdev;
	}
	rcu_read_unlock();
	return found;
}

static ssize_t metaroce_abi_version_show(struct device *device,
					 struct device_attribute *attr,
					 char *buf)
{
	return sysfs_emit(buf, "%d\n", METAROCE_UVERBS_ABI_VERSION);
}
static DEVICE_ATTR_RO(metaroce_abi_version);

static ssize_t parent_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct mroce_dev *mdev =
		rdma_device_to_drv_device(device, struct mroce_dev, ibdev);
	struct net_device *ndev;
	ssize_t len;

	ndev = ib_device_get_netdev(&mdev->ibdev, MROCE_PORT);
	if (!ndev)
		return -ENODEV;
	len = sysfs_emit(buf, "%s\n", netdev_name(ndev));
	dev_put(ndev);
	return len;
}
static DEVICE_ATTR_RO(parent);

static struct attribute *mroce_dev_attributes[] = {
	&dev_attr_metaroce_abi_version.attr,
	&dev_attr_parent.attr,
	NULL
};

static const struct attribute_group mroce_attr_group = {
	.attrs = mroce_dev_attributes,
};

static int mroce_query_device(struct ib_device *ibdev,
			      struct ib_device_attr *attr,
			      struct ib_udata *udata)
{
	if (udata->inlen || udata->outlen)
		return -EINVAL;
	*attr = to_mdev(ibdev)->attr;
	return 0;
}

static void mroce_dealloc_driver(struct ib_device *ibdev)
{
	struct mroce_dev *mdev = to_mdev(ibdev);

	/* Also reached through ib_dealloc_device() on a failed newlink. */
	spin_lock(&mroce_devices_lock);
	if (!list_empty(&mdev->list))
		list_del_rcu(&mdev->list);
	spin_unlock(&mroce_devices_lock);
	synchronize_rcu();	/* no reader still sees mdev */

	mroce_conns_destroy(mdev);
	mroce_planes_release(mdev);
	free_percpu(mdev->stats);
	WARN_ON(!xa_empty(&mdev->mr_xa));
	WARN_ON(!xa_empty(&mdev->qp_xa));
	WARN_ON(!xa_empty(&mdev->mw_xa));
	xa_destroy(&mdev->mw_xa);
	xa_destroy(&mdev->mr_xa);
	xa_destroy(&mdev->qp_xa);
	WARN_ON(!xa_empty(&mdev->ah_xa));
	xa_destroy(&mdev->ah_xa);
}

static const struct ib_device_ops mroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = METAROCE_DRIVER_ID,
	.uverbs_abi_ver = METAROCE_UVERBS_ABI_VERSION,

	.alloc_hw_port_stats = mroce_alloc_hw_port_stats,
	.alloc_mr = mroce_alloc_mr,
	.alloc_mw = mroce_alloc_mw,
	.alloc_pd = mroce_alloc_pd,
	.alloc_ucontext = mroce_alloc_ucontext,
	.create_ah = mroce_create_ah,
	.create_cq = mroce_create_cq,
	.create_qp = mroce_create_qp,
	.create_srq = mroce_create_srq,
	.create_user_ah = mroce_create_ah,
	.dealloc_driver = mroce_dealloc_driver,
	.dealloc_mw = mroce_dealloc_mw,
	.dealloc_pd = mroce_dealloc_pd,
	.dealloc_ucontext = mroce_dealloc_ucontext,
	.dereg_mr = mroce_dereg_mr,
	.disassociate_ucontext = mroce_disassociate_ucontext,
	.destroy_ah = mroce_destroy_ah,
	.destroy_cq = mroce_destroy_cq,
	.destroy_qp = mroce_destroy_qp,
	.destroy_srq = mroce_destroy_srq,
	.device_group = &mroce_attr_group,
	.get_dma_mr = mroce_get_dma_mr,
	.get_hw_stats = mroce_get_hw_stats,
	.get_link_layer = mroce_get_link_layer,
	.get_port_immutable = mroce_get_port_immutable,
	.map_mr_sg = mroce_map_mr_sg,
	.mmap = mroce_mmap,
	.mmap_free = mroce_mmap_free,
	.modify_qp = mroce_modify_qp,
	.modify_srq = mroce_modify_srq,
	.poll_cq = mroce_poll_cq,
	.post_recv = mroce_post_recv,
	.post_send = mroce_post_send,
	.post_srq_recv = mroce_post_srq_recv,
	.query_device = mroce_query_device,
	.query_pkey = mroce_query_pkey,
	.query_port = mroce_query_port,
	.query_qp = mroce_query_qp,
	.query_srq = mroce_query_srq,
	.reg_user_mr = mroce_reg_user_mr,
	.rereg_user_mr = mroce_rereg_user_mr,
	.req_notify_cq = mroce_req_notify_cq,
	.resize_cq = mroce_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, mroce_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, mroce_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, mroce_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, mroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, mroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, mroce_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, mroce_ucontext, ibuc),
};

static void mroce_init_attr(struct mroce_dev *mdev, struct net_device *ndev)
{
	struct ib_device_attr *a = &mdev->attr;

	a->vendor_id = MROCE_VENDOR_ID;
	a->vendor_part_id = MROCE_VENDOR_PART_ID;
	a->hw_ver = 1;
	a->fw_ver = 0;
	a->max_mr_size = MROCE_MAX_MR_SIZE;
	a->page_size_cap = PAGE_SIZE;
	a->max_qp = MROCE_MAX_QP;
	a->max_qp_wr = MROCE_MAX_QP_WR;
	a->device_cap_flags = IB_DEVICE_CURR_QP_STATE_MOD |
			      IB_DEVICE_SYS_IMAGE_GUID |
			      IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_MEM_MGT_EXTENSIONS |
			      IB_DEVICE_MEM_WINDOW |
			      IB_DEVICE_MEM_WINDOW_TYPE_2B;
	a->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	a->max_send_sge = MROCE_MAX_SGE;
	a->max_recv_sge = MROCE_MAX_SGE;
	a->max_sge_rd = MROCE_MAX_SGE_RD;
	a->max_cq = MROCE_MAX_CQ;
	a->max_cqe = MROCE_MAX_CQE;
	a->max_mr = MROCE_MAX_MR;
	a->max_mw = MROCE_MAX_MW;
	a->max_fast_reg_page_list_len = MROCE_MAX_FRPL;
	a->max_pd = MROCE_MAX_PD;
	a->max_qp_rd_atom = MROCE_MAX_RD_ATOMIC;
	a->max_qp_init_rd_atom = MROCE_MAX_RD_ATOMIC;
	a->max_res_rd_atom = MROCE_MAX_RD_ATOMIC * MROCE_MAX_QP;
	a->atomic_cap = IB_ATOMIC_HCA;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->max_ah = MROCE_MAX_AH;
	a->max_srq = MROCE_MAX_SRQ;
	a->max_srq_wr = MROCE_MAX_QP_WR;
	a->max_srq_sge = MROCE_MAX_SGE;
	/* User CQE timestamps are nanoseconds (metaroce-abi.h). */
	a->timestamp_mask = ~0ULL;
	a->hca_core_clock = METAROCE_CORE_CLOCK_KHZ;
	addrconf_addr_eui48((u8 *)&a->sys_image_guid, ndev->dev_addr);
}

/*
 * xa_init() is inline, so every xarray initialised in this file would share
 * one lock class.  conn_xa is written in softirq (a CONNECT received) and
 * elsewhere under conns_lock with BHs off; mr_xa, mw_xa, qp_xa and ah_xa
 * are written with BHs on, never in softirq.  One class for both kinds is
 * a false "inconsistent lock state" for lockdep: conn_xa gets its own.
 */
static struct lock_class_key mroce_conn_xa_key;

static struct mroce_dev *mroce_alloc(struct net_device *ndev)
{
	struct mroce_dev *mdev;
	int i;

	mdev = ib_alloc_device(mroce_dev, ibdev);
	if (!mdev)
		return NULL;

	mdev->stats = alloc_percpu(struct mroce_stats);
	if (!mdev->stats) {
		ib_dealloc_device(&mdev->ibdev);
		return NULL;
	}
	mdev->ndev = ndev;
	INIT_LIST_HEAD(&mdev->list);
	spin_lock_init(&mdev->port_lock);
	xa_init_flags(&mdev->mr_xa, XA_FLAGS_ALLOC1);
	xa_init(&mdev->mw_xa);
	spin_lock_init(&mdev->mw_lock);
	xa_init_flags(&mdev->qp_xa, XA_FLAGS_ALLOC);
	xa_init_flags(&mdev->ah_xa, XA_FLAGS_ALLOC);
	xa_init(&mdev->conn_xa);
	lockdep_set_class(&mdev->conn_xa.xa_lock, &mroce_conn_xa_key);
	spin_lock_init(&mdev->conns_lock);
	spin_lock_init(&mdev->reset_rl.lock);
	INIT_LIST_HEAD(&mdev->conns);
	for (i = 0; i < MROCE_ADDR_BUCKETS; i++)
		INIT_LIST_HEAD(&mdev->addr_conns[i]);
	hash_init(mdev->prehs_conns);
	do {
		get_random_bytes(&mdev->epoch, sizeof(mdev->epoch));
	} while (!mdev->epoch);
	atomic_set(&mdev->num_ucontext, 0);
	atomic_set(&mdev->num_pd, 0);
	atomic_set(&mdev->num_cq, 0);
	atomic_set(&mdev->num_qp, 0);
	atomic_set(&mdev->num_mr, 0);
	atomic_set(&mdev->num_mw, 0);
	atomic_set(&mdev->num_srq, 0);
	mroce_init_attr(mdev, ndev);

	mdev->ibdev.node_type = RDMA_NODE_IB_CA;
	mdev->ibdev.phys_port_cnt = 1;
	mdev->ibdev.num_comp_vectors = 1;
	mdev->ibdev.local_dma_lkey = 0;
	addrconf_addr_eui48((u8 *)&mdev->ibdev.node_guid, ndev->dev_addr);
	strscpy(mdev->ibdev.node_desc, MROCE_NODE_DESC,
		sizeof(mdev->ibdev.node_desc));
	/* The doorbells of user QPs, and arming CQs the libibverbs way. */
	mdev->ibdev.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				       BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				       BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(&mdev->ibdev, &mroce_dev_ops);
	return mdev;
}

/* Claim ndev for mdev; fails if another MetaRoCE device already has it. */
static int mroce_claim_netdev(struct mroce_dev *mdev)
{
	struct mroce_dev *other;
	int err = 0;

	spin_lock(&mroce_devices_lock);
	list_for_each_entry(other, &mroce_devices, list) {
		if (other->ndev == mdev->ndev) {
			err = -EEXIST;
			break;
		}
	}
	if (!err)
		list_add_tail_rcu(&mdev->list, &mroce_devices);
	spin_unlock(&mroce_devices_lock);
	return err;
}

int mroce_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct net *net = dev_net(ndev);
	struct mroce_dev *mdev;
	bool gone;
	int err;

	if (ndev->type != ARPHRD_ETHER || (ndev->flags & IFF_LOOPBACK)) {
		pr_info("metaroce: %s is not an Ethernet device\n",
			netdev_name(ndev));
		return -EINVAL;
	}

	mdev = mroce_alloc(ndev);
	if (!mdev)
		return -ENOMEM;

	err = mroce_claim_netdev(mdev);
	if (err) {
		pr_info("metaroce: %s already has a MetaRoCE device\n",
			netdev_name(ndev));
		ib_dealloc_device(&mdev->ibdev);
		return err;
	}

	err = ib_device_set_netdev(&mdev->ibdev, ndev, MROCE_PORT);
	if (err)
		goto err_dealloc;
	mroce_port_update(mdev);

	err = ib_register_device(&mdev->ibdev, ibdev_name, NULL);
	if (err)
		goto err_dealloc;

	/*
	 * The notifier ignores a device until it is registered; catch a netdev
	 * that was unregistered or moved away while we were registering.
	 */
	rtnl_lock();
	gone = ndev->reg_state != NETREG_REGISTERED || !net_eq(dev_net(ndev), net);
	if (gone)
		ib_unregister_device_queued(&mdev->ibdev);
	else
		mroce_port_update(mdev);
	if (!gone)
		mroce_port_speed_update(mdev, ndev);
	rtnl_unlock();
	return gone ? -ENODEV : 0;

err_dealloc:
	/* Unclaims the netdev through mroce_dealloc_driver(). */
	ib_dealloc_device(&mdev->ibdev);
	return err;
}

/* Module unload: unregister every device, waiting for each to be gone. */
void mroce_remove_all(void)
{
	struct mroce_dev *mdev;

	for (;;) {
		spin_lock(&mroce_devices_lock);
		mdev = list_first_entry_or_null(&mroce_devices,
						struct mroce_dev, list);
		if (mdev)
			get_device(&mdev->ibdev.dev);
		spin_unlock(&mroce_devices_lock);
		if (!mdev)
			break;
		/* Waits for a concurrent (queued) unregistration to finish. */
		ib_unregister_device(&mdev->ibdev);
		put_device(&mdev->ibdev.dev);
	}
}
