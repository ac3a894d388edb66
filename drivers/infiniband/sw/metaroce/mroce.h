/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * MetaRoCE: an RDMA transport for lossy Ethernet.
 *
 * Device-wide definitions shared by every file of the driver.
 */
#ifndef MROCE_H
#define MROCE_H

#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/sizes.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "counters.h"
#include "rate.h"
#include "wire.h"

#define MROCE_LINK_TYPE		"metaroce"
#define MROCE_NODE_DESC		"MetaRoCE"
#define MROCE_PORT		1

/*
 * Worst-case bytes a MetaRoCE data packet adds on top of its payload
 * (spec 4.6): IPv6 (40), UDP (8), the largest data header chain, WRITE_IMM
 * (72), and the CRC32C trailer (4).  The verbs path MTU is the largest IB MTU
 * that fits the netdev MTU minus this overhead.
 */
#define MROCE_MAX_HDR_OVERHEAD	(40 + 8 + 72 + 4)

/* Device limits reported through query_device. */
#define MROCE_MAX_QP		SZ_64K
#define MROCE_MAX_QP_WR		SZ_16K
#define MROCE_MAX_SGE		32
#define MROCE_MAX_SGE_RD	32
#define MROCE_MAX_CQ		SZ_64K
/*
 * libfabric's rxm sizes one CQ for (rx + tx size) x 256 peers, 196608
 * entries with the verbs provider's defaults; mlx5 allows 4M.  Each entry
 * is 64 bytes of a user ring, charged to the context's queue memory.
 */
#define MROCE_MAX_CQE		SZ_1M
#define MROCE_MAX_MR		SZ_256K
#define MROCE_MAX_MW		SZ_64K
#define MROCE_MAX_PD		SZ_64K
#define MROCE_MAX_MR_SIZE	SZ_1T
#define MROCE_MAX_FRPL		512	/* pages in a fast-registration MR */
#define MROCE_MAX_MSG_SIZE	0x80000000U
#define MROCE_MAX_INLINE	256
#define MROCE_MAX_RD_ATOMIC	128
#define MROCE_MAX_UCONTEXT	512
#define MROCE_MAX_AH		SZ_64K
#define MROCE_MAX_SRQ		SZ_64K
#define MROCE_GID_TBL_LEN	1024
#define MROCE_ADDR_BUCKETS	256	/* mroce_dev.addr_conns */
#define MROCE_VENDOR_ID		0xffffff	/* no OUI: software device */
#define MROCE_VENDOR_PART_ID	0x4d52		/* "MR" */

/* The RESET rate limits of a device (spec 6.7.3). */
#define MROCE_RESET_RECENT	16
struct mroce_reset_rl {
	spinlock_t lock;		/* the fields below */
	struct mroce_rate_window win;	/* RESETs sent this second */
	u8 next;
	struct {
		union ib_gid peer;
		u32 dcid;
		unsigned long at;
	} recent[MROCE_RESET_RECENT];	/* recently answered (peer, DCID) */
};

struct mroce_dev {
	struct ib_device ibdev;
	struct list_head list;		/* on mroce_devices (RCU) */
	/*
	 * The bound netdev.  ib_core holds the reference (ib_device_set_netdev);
	 * this pointer is only compared, never dereferenced, outside that.
	 */
	struct net_device *ndev;
	struct ib_device_attr attr;
	struct mroce_stats __percpu *stats;

	spinlock_t port_lock;		/* port_state, active_mtu */
	enum ib_port_state port_state;
	enum ib_mtu active_mtu;

	struct xarray mr_xa;		/* key index -> struct mroce_mr */
	u32 mr_next;			/* cyclic allocation hint for mr_xa */
	/*
	 * Memory windows by key index.  A window's index is reserved (empty)
	 * in mr_xa, so MR and MW keys never collide.
	 */
	struct xarray mw_xa;
	/* Window bindings: which MR and QP each window is bound to (mw.c). */
	spinlock_t mw_lock;
	struct xarray qp_xa;		/* QPN -> struct mroce_qp */
	struct xarray ah_xa;		/* AH number -> struct mroce_ah_ref */
	u32 qp_next;			/* cyclic allocation hint for qp_xa */

	u64 epoch;			/* spec 6.1.4 */
	struct mroce_reset_rl reset_rl;	/* stateless RESETs (reset.c) */
	struct mroce_rate_window connect_rl;	/* CONNECTs accepted (conns_lock) */
	spinlock_t conns_lock;		/* writers of conns and conn_xa */
	struct list_head conns;		/* struct mroce_conn, RCU */
	/* the same, by local and peer address, oldest first (conns_lock) */
	struct list_head addr_conns[MROCE_ADDR_BUCKETS];
	struct xarray conn_xa;		/* local CID -> struct mroce_conn */
	/* connections made from a CONNECT, by peer address and peer CID */
	DECLARE_HASHTABLE(prehs_conns, 8);
	atomic_t conns_freeing;		/* connections whose free is queued */

	/* Planes 1 and up (plane 0 is ndev): RTNL for writers, RCU. */
	struct net_device __rcu *planes[MROCE_MAX_PLANES];
	netdevice_tracker plane_tracker[MROCE_MAX_PLANES];
	u32 link_mbps;			/* the netdev's speed; 0: unknown */
	u64 hint_share;			/* fair share, kb/s (spec 12.4.2) */
	ktime_t hint_at;		/* when it was computed */

	atomic_t num_ucontext;
	atomic_t num_pd;
	atomic_t num_cq;
	atomic_t num_qp;
	atomic_t num_mr;
	atomic_t num_mw;
	atomic_t num_ah;
	atomic_t num_srq;
};

static inline struct mroce_dev *to_mdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct mroce_dev, ibdev);
}

/* device.c */
int mroce_newlink(const char *ibdev_name, struct net_device *ndev);
void mroce_remove_all(void);
struct mroce_dev *mroce_find_by_netdev(struct net_device *ndev);
struct mroce_dev *mroce_dev_get_from(u32 index);

/* plane.c */
int mroce_plane_of(struct mroce_dev *mdev, const struct net_device *ndev);
struct net_device *mroce_plane_dev(struct mroce_dev *mdev, int i);
bool mroce_plane_up(struct mroce_dev *mdev, int i);
bool mroce_plane_addr(struct net_device *ndev, const union ib_gid *like,
		      union ib_gid *gid);
bool mroce_plane_reaches(struct net_device *ndev, const union ib_gid *src,
			 const union ib_gid *dst);
int mroce_plane_add(struct mroce_dev *mdev, struct net_device *ndev,
		    struct netlink_ext_ack *extack);
int mroce_plane_del(struct mroce_dev *mdev, struct net_device *ndev,
		    struct netlink_ext_ack *extack);
void mroce_plane_gone(struct mroce_dev *mdev, struct net_device *ndev);
void mroce_planes_release(struct mroce_dev *mdev);

/* main.c */
extern struct workqueue_struct *mroce_wq;
extern struct workqueue_struct *mroce_tx_wq;

/* port.c */
int mroce_active_mtu_bytes(struct mroce_dev *mdev);
void mroce_port_update(struct mroce_dev *mdev);
void mroce_port_speed_update(struct mroce_dev *mdev, struct net_device *ndev);
int mroce_query_port(struct ib_device *ibdev, u32 port_num,
		     struct ib_port_attr *attr);
int mroce_get_port_immutable(struct ib_device *ibdev, u32 port_num,
			     struct ib_port_immutable *immutable);
enum rdma_link_layer mroce_get_link_layer(struct ib_device *ibdev,
					  u32 port_num);
int mroce_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
		     u16 *pkey);

/* netdev_events.c */
int mroce_netdev_events_init(void);
void mroce_netdev_events_exit(void);

/*
 * Take one object of a kind whose device-wide count is limited to max.
 * Returns false, taking nothing, when the limit is reached.
 */
static inline bool mroce_get_limit(atomic_t *count, int max)
{
	return atomic_add_unless(count, 1, max);
}

#endif /* MROCE_H */
