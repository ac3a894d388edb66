/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * MetaRoCE verbs objects: user contexts, protection domains, completion
 * queues, queue pairs, SRQs and address handles, and the ib_device_ops
 * entry points for them.  Memory regions and windows are in mr.h; the
 * transport state of an RC QP is in stream.h.
 */
#ifndef MROCE_VERBS_H
#define MROCE_VERBS_H

#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "mroce.h"
#include "ring.h"
#include "stream.h"

struct mroce_ucontext {
	struct ib_ucontext ibuc;
	atomic64_t queue_bytes;	/* rings and shadows of its queues */
};

/* What a user queue object charged to its context (ucontext.c). */
struct mroce_qmem {
	struct mroce_ucontext *uc;	/* NULL: a kernel object */
	size_t bytes;
};

struct mroce_pd {
	struct ib_pd ibpd;
};

static inline struct mroce_pd *to_mpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct mroce_pd, ibpd);
}

/*
 * A completion queue.  A kernel CQ is an array of ib_wc under the lock; a
 * user CQ is a ring of struct ib_uverbs_wc mapped into the process (see
 * metaroce-abi.h), which the kernel produces into under the lock and the
 * process consumes from without system calls.
 */
struct mroce_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* everything below */
	struct ib_wc *ring;	/* kernel CQ */
	u32 size;		/* kernel CQ: slots: ibcq.cqe */
	u32 head;		/* kernel CQ: next to poll */
	u32 count;		/* kernel CQ: completions in the ring */
	enum ib_cq_notify_flags armed;	/* kernel CQ: 0 when not armed */
	bool overflow;
	bool timestamps;	/* user CQ: fill in the CQE timestamps */
	struct mroce_ring uring;	/* user CQ */
	struct rdma_user_mmap_entry *mmap;	/* user CQ: uring's mapping */
	struct mroce_qmem qmem;			/* user CQ: uring's charge */
	/* The consumer's handlers run from here (mroce_notify_queue()). */
	struct work_struct notify_work;
	unsigned long notify;		/* MROCE_CQ_NOTIFY_* bits */
};

static inline struct mroce_cq *to_mcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct mroce_cq, ibcq);
}

int mroce_cq_complete(struct mroce_cq *cq, const struct ib_wc *wc,
		      bool solicited);

/*
 * Consumer handlers (completion and async event) run from a BH work item,
 * never from where the event arose: that may hold a connection's lock,
 * which a handler that posts on a QP of the same connection would take
 * again.  The work runs on this CPU as soon as bottom halves are enabled.
 */
static inline void mroce_notify_queue(struct work_struct *work)
{
	queue_work(system_bh_wq, work);
}

/* Address vector resolved from an rdma_ah_attr. */
struct mroce_av {
	union ib_gid sgid;	/* from the source GID entry, at resolve time */
	union ib_gid dgid;
	u8 sgid_index;
	u8 hop_limit;
	u8 traffic_class;
	u32 flow_label;
	u8 dmac[ETH_ALEN];
	u8 sl;
};

/*
 * A send WQE as the kernel runs it: decoded and checked from the SQ ring
 * (which userspace may scribble on at any time) into the QP's shadow queue.
 */
struct mroce_send_wqe {
	u64 wr_id;
	enum ib_wr_opcode opcode;
	int send_flags;
	enum ib_wc_status status;	/* IB_WC_SUCCESS unless decoding failed */
	u32 num_sge;
	u32 inline_len;
	u32 length;			/* message length in bytes */
	__be32 imm_data;
	u32 invalidate_rkey;
	u64 remote_addr;
	u32 rkey;
	u32 ah_num;			/* UD */
	u32 remote_qpn;			/* UD */
	u32 remote_qkey;		/* UD */
	u64 compare_add;
	u64 swap;
	struct metaroce_wqe_bind bind;	/* BIND_MW */
	struct metaroce_sge *sge;	/* or the inline bytes */
	/* RC requester progress, under the connection lock */
	u32 ssn;
	u32 msn;
	u32 resp_bytes;			/* READ: response bytes placed */
	bool resp_done;			/* READ/ATOMIC: response complete */
	u8 resp_shift;			/* READ: the request's SegShift */
	/*
	 * READ: response segments placed, in resp_segs_small for up to
	 * BITS_PER_LONG segments (no allocation per READ), else allocated;
	 * freed when the WQE completes (mroce_wqe_free_segs())
	 */
	unsigned long *resp_segs;
	unsigned long resp_segs_small;
	enum ib_wc_status rc_status;	/* set by a NAK */
	/*
	 * RC: the SQ index of the WQE taken into the stream whose SSN, masked
	 * like an index, is this slot's (mroce_find_ssn()).  The WQEs between
	 * the consumer and fetch have consecutive SSNs and are at most a ring
	 * of them, so no two share a slot; a stale entry fails the check.
	 */
	u32 ssn_idx;
};

/* A receive WQE as the kernel uses it: copied out of the RQ ring. */
struct mroce_recv_wqe {
	u64 wr_id;
	u32 num_sge;
	struct metaroce_sge sge[MROCE_MAX_SGE];
};

/*
 * A work queue: a ring (see ring.h) plus, for the SQ, the shadow queue of
 * decoded WQEs.  ring.cons is the oldest WQE not yet completed; fetch is the
 * next one to decode.
 */
struct mroce_wq {
	spinlock_t lock;	/* SQ: kernel posters; RQ: the consumer */
	spinlock_t post_lock;	/* RQ: kernel posters */
	struct mroce_ring ring;
	u32 max_wr;
	u32 max_sge;
	u32 max_inline;
	u32 fetch;
	struct mroce_send_wqe *shadow;	/* SQ: one per slot */
	u8 *shadow_data;		/* SQ: SGEs / inline bytes per slot */
	u32 shadow_stride;
};

/* A shared receive queue (srq.c). */
struct mroce_srq {
	struct ib_srq ibsrq;
	struct mroce_wq rq;	/* rq.lock: takers and limit; post_lock: posters */
	u32 limit;		/* armed limit; 0: not armed */
	struct rdma_user_mmap_entry *mmap;	/* user SRQ: rq.ring's mapping */
	struct mroce_qmem qmem;			/* user SRQ: rq's charge */
	struct work_struct event_work;	/* IB_EVENT_SRQ_LIMIT_REACHED */
};

static inline struct mroce_srq *to_msrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct mroce_srq, ibsrq);
}

/*
 * What qp_xa holds for a QP: its reference count, freed after an RCU grace
 * period.  A lookup that raced with destroy then never touches the QP's
 * freed memory, and destroy need not wait for a grace period itself
 * (thousands of QPs are destroyed one after the other).
 */
struct mroce_qp_ref {
	struct rcu_head rcu;
	refcount_t count;	/* the QP's own, lookups, in-flight content */
	struct mroce_qp *qp;
};

struct mroce_qp {
	struct ib_qp ibqp;
	struct mroce_qp_ref *ref;	/* in qp_xa; lookups from the rx path */
	struct completion released;	/* ref->count dropped to zero */
	struct delayed_work send_work;	/* drains the send queue */
	struct work_struct event_work;	/* runs the consumer's event handler */
	unsigned long events;		/* BIT(enum ib_event_type) pending */
	struct mutex state_lock;	/* serialises modify/query/destroy */
	enum ib_qp_state state;
	struct ib_qp_attr attr;		/* last values set by modify_qp */
	struct mroce_av av;
	enum ib_sig_type sq_sig_type;
	struct mroce_wq sq;
	struct mroce_wq rq;
	struct rdma_user_mmap_entry *sq_mmap;	/* user QP: sq.ring's mapping */
	struct rdma_user_mmap_entry *rq_mmap;	/* user QP: rq.ring's mapping */
	struct mroce_qmem qmem;			/* user QP: sq and rq charge */
	struct mroce_recv_wqe rq_scratch;	/* under rq.lock */
	struct mroce_stream stream;		/* RC */
	bool last_wqe_done;	/* SRQ: LAST_WQE_REACHED raised since ERR */
	struct list_head mws;	/* type 2 windows bound by it (mw_lock) */
};

static inline struct mroce_qp *to_mqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct mroce_qp, ibqp);
}

/* One more reference to qp, which the caller holds already. */
static inline void mroce_qp_hold(struct mroce_qp *qp)
{
	refcount_inc(&qp->ref->count);
}

/* What a UD send needs of an AH, freed after an RCU grace period. */
struct mroce_ah_ref {
	struct rcu_head rcu;
	struct ib_pd *pd;
	struct mroce_av av;
};

struct mroce_ah {
	struct ib_ah ibah;
	u32 ah_num;			/* index in mdev->ah_xa */
	struct mroce_ah_ref *ref;
};

static inline struct mroce_ah *to_mah(struct ib_ah *ibah)
{
	return container_of(ibah, struct mroce_ah, ibah);
}

/* ah.c */
void mroce_av_from_attr(struct mroce_av *av, const struct rdma_ah_attr *attr);
int mroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int mroce_destroy_ah(struct ib_ah *ibah, u32 flags);
int mroce_ah_lookup(struct mroce_qp *qp, u32 ah_num, struct mroce_av *av);

/* qp.c: receive-path references */
struct mroce_qp *mroce_qp_get(struct mroce_dev *mdev, u32 qpn);
void mroce_qp_put(struct mroce_qp *qp);

/* ud.c */
void mroce_ud_send(struct mroce_qp *qp, struct mroce_send_wqe *wqe);
void mroce_ud_rcv(struct mroce_dev *mdev, struct sk_buff *skb);

/* ucontext.c */
int mroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void mroce_dealloc_ucontext(struct ib_ucontext *ibuc);
void mroce_disassociate_ucontext(struct ib_ucontext *ibuc);
int mroce_qmem_charge(struct mroce_qmem *m, struct ib_udata *udata,
		      size_t bytes);
void mroce_qmem_uncharge(struct mroce_qmem *m, size_t bytes);

/* pd.c */
int mroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int mroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* cq.c */
int mroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct uverbs_attr_bundle *attrs);
int mroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int mroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int mroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int mroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);

/* mmap.c */
int mroce_ring_mmap_insert(struct ib_udata *udata, struct mroce_ring *r,
			   struct rdma_user_mmap_entry **entry,
			   struct metaroce_ring_info *info);
void mroce_ring_mmap_remove(struct mroce_ring *r,
			    struct rdma_user_mmap_entry **entry);
int mroce_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void mroce_mmap_free(struct rdma_user_mmap_entry *entry);

/* qp.c */
int mroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int mroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		    int mask, struct ib_udata *udata);
int mroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int mroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);

/* wq.c */
int mroce_wq_init(struct mroce_wq *wq, u32 max_wr, u32 max_sge,
		  u32 max_inline, bool send);
void mroce_wq_free(struct mroce_wq *wq);
size_t mroce_wq_bytes(const struct mroce_wq *wq);
void mroce_wq_reset(struct mroce_wq *wq);
bool mroce_sq_posted(struct mroce_wq *sq);
struct mroce_send_wqe *mroce_sq_fetch(struct mroce_qp *qp);
void mroce_wqe_free_segs(struct mroce_send_wqe *wqe);
void mroce_sq_complete(struct mroce_qp *qp, struct mroce_send_wqe *wqe,
		       enum ib_wc_status status);
bool mroce_rq_peek(struct mroce_qp *qp, struct mroce_recv_wqe *wqe);
bool mroce_wq_peek_recv(struct mroce_wq *rq, struct mroce_recv_wqe *wqe);
void mroce_rq_complete(struct mroce_qp *qp, struct ib_wc *wc, bool solicited);
bool mroce_recv_take(struct mroce_qp *qp, struct mroce_recv_wqe *wqe);
void mroce_recv_complete(struct mroce_qp *qp, struct ib_wc *wc, bool solicited);
void mroce_qp_flush_rq(struct mroce_qp *qp);
void mroce_send_worker(struct work_struct *work);
void mroce_qp_kick(struct mroce_qp *qp);
void mroce_qp_kick_at(struct mroce_qp *qp, unsigned long when);
void mroce_qp_to_error(struct mroce_qp *qp);
void mroce_qp_to_error_event(struct mroce_qp *qp, enum ib_event_type event);
bool mroce_sq_idle(struct mroce_qp *qp);
bool mroce_opcode_ok(enum ib_qp_type type, u32 op);
bool mroce_opcode_local(u32 op);

/* srq.c */
int mroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int mroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int mroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int mroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int mroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
bool mroce_srq_take(struct mroce_srq *srq, struct mroce_recv_wqe *wqe);

/* post.c */
int mroce_wq_post_recv(struct mroce_wq *rq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
int mroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int mroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);

#endif /* MROCE_VERBS_H */
