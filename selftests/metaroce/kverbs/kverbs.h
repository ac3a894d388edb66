/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mroce_kverbs: an in-kernel verbs consumer that exercises two MetaRoCE
 * devices through the ib_verbs.h API, as kernel ULPs do.
 */
#ifndef MROCE_KVERBS_H
#define MROCE_KVERBS_H

#include <linux/list.h>
#include <linux/scatterlist.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#define KV_PORT			1
#define KV_GRH_LEN		40	/* the GRH in front of a UD payload */
#define KV_HOP_LIMIT		64
#define KV_RD_ATOMIC		16
#define KV_PATH_MTU		IB_MTU_1024
#define KV_UD_QKEY		0x11111111
#define KV_BIG			SZ_1M	/* the "large message" of the tests */
#define KV_CANARY		0xa5
#define KV_RC_ACCESS		(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC)

/* One of the two devices under test. */
struct kv_dev {
	const char *name;
	struct ib_device *ibdev;	/* referenced (ib_device_get_by_name) */
	__be32 ip;
	u32 gid_index;			/* its RoCE v2 ::ffff:ip GID */
	union ib_gid gid;
	enum ib_mtu active_mtu;
	u8 peer_mac[ETH_ALEN];		/* towards the other device, or zero */
};

struct kv_ctx {
	struct kv_dev dev[2];		/* a, b */
	u32 size;
	u32 iters;
};

/* One running test: its name and the first failure reason. */
struct kv_test {
	struct kv_ctx *ctx;
	const char *name;
	int err;
	bool rmr_noted;
	char reason[200];
};

/* A PD, a send and a receive CQ (IB_POLL_DIRECT) and one QP. */
struct kv_ep {
	struct kv_dev *dev;
	struct kv_dev *peer;
	struct ib_pd *pd;
	bool own_pd;			/* allocated by kv_ep_create */
	struct ib_cq *scq;
	struct ib_cq *rcq;
	struct ib_qp *qp;
	struct list_head rmrs;		/* struct kv_rmr registered on pd */
	unsigned long events;		/* bit per enum ib_event_type seen */
};

struct kv_ep_attr {
	enum ib_qp_type qp_type;
	u32 max_send_wr;
	u32 max_recv_wr;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 cqe;
	enum ib_sig_type sig_type;
	struct ib_srq *srq;		/* receives from this SRQ, or NULL */
	struct ib_pd *pd;		/* the caller's PD, or NULL: a new one */
};

/* The parts of an RC connection that differ between tests. */
struct kv_rc_attr {
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 timeout;
	u8 retry_cnt;
};

/* A kmalloc'd buffer mapped for the device. */
struct kv_buf {
	struct ib_device *ibdev;
	u8 *va;
	size_t len;
	u64 dma;
	bool mapped;
};

/* Remote access to a kv_buf: a fast-registered MR, or a DMA MR. */
struct kv_rmr {
	struct list_head node;		/* on kv_ep.rmrs */
	struct ib_mr *mr;
	bool fast_reg;
	u32 rkey;
	u64 addr;			/* remote address of the buffer start */
	struct scatterlist sg;
};

/* Pieces of one buffer, KV_SGL_GAP canary bytes apart. */
#define KV_SGL_MAX		4
#define KV_SGL_GAP		64

struct kv_sgl {
	int n;
	size_t off[KV_SGL_MAX];
	u32 len[KV_SGL_MAX];
	u32 total;			/* bytes in all pieces */
	size_t span;			/* buffer bytes needed, with the gaps */
};

/* Memory of KV_FR_PAGES separate pages, for fast-registration MRs. */
#define KV_FR_PAGES		3
#define KV_FR_BYTES		(KV_FR_PAGES * PAGE_SIZE)
#define KV_WRID_FR_REG		0x6672000000000001ULL	/* "fr" */
#define KV_WRID_FR_DENIED	0x6672000000000002ULL

struct kv_pages {
	struct ib_device *ibdev;
	struct page *page[KV_FR_PAGES];
	struct scatterlist sg[KV_FR_PAGES];
	bool mapped;
	u8 *flat;			/* a copy of all pages, in order */
};

/*
 * What every fast registration test sets up: a connected RC pair, pages
 * on b to register, a buffer on a to send from and one to receive into.
 */
struct kv_fr_base {
	struct kv_ep a, b;
	struct kv_pages m;		/* on b */
	struct kv_buf sb;		/* on a */
	struct kv_buf rb;		/* on a or b: kv_fr_base_init() */
};

/* tap.c: failure reasons and diagnostics */
__printf(2, 3) int kv_fail(struct kv_test *t, const char *fmt, ...);
__printf(2, 3) void kv_diag(struct kv_test *t, const char *fmt, ...);

/* dev.c: the devices under test */
int kv_dev_open(struct kv_dev *d, const char *name, const char *ip);
void kv_dev_close(struct kv_dev *d);
void kv_resolve_peer_mac(struct kv_dev *src, struct kv_dev *dst);
u32 kv_mtu_bytes(const struct kv_dev *d);

/* ep.c: endpoints */
void kv_ep_attr_default(struct kv_ep_attr *attr, enum ib_qp_type type);
int kv_ep_create(struct kv_test *t, struct kv_ep *ep, struct kv_dev *dev,
		 struct kv_dev *peer, const struct kv_ep_attr *attr);
void kv_ep_destroy(struct kv_ep *ep);
int kv_ep_state(struct kv_test *t, struct kv_ep *ep,
		enum ib_qp_state *state);
int kv_ep_wait_state(struct kv_test *t, struct kv_ep *ep,
		     enum ib_qp_state want, unsigned int ms, const char *what);
int kv_ep_wait_event(struct kv_test *t, struct kv_ep *ep,
		     enum ib_event_type event, unsigned int ms,
		     const char *what);
int kv_rc_pair(struct kv_test *t, struct kv_ep *a, struct kv_ep *b,
	       const struct kv_ep_attr *attr, const struct kv_rc_attr *rca,
	       const struct kv_rc_attr *rcb);
int kv_rc_pair_default(struct kv_test *t, struct kv_ep *a, struct kv_ep *b);

/* connect.c: addressing and QP state transitions */
void kv_ah_attr(struct rdma_ah_attr *ah, const struct kv_dev *src,
		const struct kv_dev *dst);
extern unsigned int kv_qp_timeout;
/* Wall time to wait for a completion, ms (module parameter wc_timeout_ms). */
extern unsigned int kv_wc_timeout_ms;
void kv_rc_attr_default(struct kv_rc_attr *rca);
int kv_modify(struct kv_test *t, struct kv_ep *ep, struct ib_qp_attr *attr,
	      int mask, const char *what);
int kv_rc_to_init(struct kv_test *t, struct kv_ep *ep);
int kv_rc_to_rtr(struct kv_test *t, struct kv_ep *ep, u32 dest_qpn,
		 u32 rq_psn, const struct kv_rc_attr *rca);
int kv_rc_to_rts(struct kv_test *t, struct kv_ep *ep, u32 sq_psn,
		 const struct kv_rc_attr *rca);
int kv_rc_connect(struct kv_test *t, struct kv_ep *a, struct kv_ep *b,
		  const struct kv_rc_attr *rca, const struct kv_rc_attr *rcb);
int kv_ud_ready(struct kv_test *t, struct kv_ep *ep, u32 sq_psn);

/* buf.c: buffers and data patterns */
int kv_buf_alloc(struct kv_test *t, struct kv_buf *b, struct ib_device *dev,
		 size_t len);
void kv_buf_free(struct kv_buf *b);
void kv_buf_for_cpu(struct kv_buf *b);
void kv_buf_for_dev(struct kv_buf *b);
struct ib_sge kv_sge(const struct kv_ep *ep, const struct kv_buf *b,
		     size_t off, u32 len);
void kv_fill(u8 *p, size_t len, u32 seed, size_t start);
void kv_canary(u8 *p, size_t len);
int kv_check_pattern(struct kv_test *t, const u8 *p, size_t len, u32 seed,
		     size_t start, const char *what);
int kv_check_canary(struct kv_test *t, const u8 *p, size_t len,
		    const char *what);

/* sgl.c: scatter/gather layouts */
void kv_sgl_layout(struct kv_sgl *l, const u32 *lens, int n);
void kv_sgl_fill(const struct kv_sgl *l, u8 *base, u32 seed, size_t start);
int kv_sgl_check(struct kv_test *t, const struct kv_sgl *l, const u8 *base,
		 u32 bytes, u32 seed, size_t start, const char *what);
void kv_sgl_sges(const struct kv_sgl *l, const struct kv_ep *ep,
		 const struct kv_buf *b, struct ib_sge *sge);

/* rmr.c: remote keys */
int kv_rmr_reg(struct kv_test *t, struct kv_ep *ep, struct kv_buf *b,
	       int access, struct kv_rmr *r);
void kv_rmr_dereg(struct kv_rmr *r);

/* frmr.c: fast registration */
int kv_pages_alloc(struct kv_test *t, struct kv_pages *m,
		   struct ib_device *dev);
void kv_pages_free(struct kv_pages *m);
void kv_pages_canary(struct kv_pages *m);
const u8 *kv_pages_flat(struct kv_pages *m);
int kv_pages_check(struct kv_test *t, struct kv_pages *m, size_t off,
		   size_t len, u32 seed, const char *what);
void kv_reg_wr(struct ib_reg_wr *wr, struct ib_mr *mr, int access, u64 wr_id,
	       bool signaled);
void kv_inv_wr(struct ib_send_wr *wr, u32 key, u64 wr_id, bool signaled);
int kv_fr_map_reg(struct kv_test *t, struct kv_ep *ep, struct ib_mr *mr,
		  struct kv_pages *m, unsigned int sg_off, int access);
void kv_rdma_wr(struct ib_rdma_wr *wr, struct ib_sge *sge,
		const struct kv_ep *ep, const struct kv_buf *b, size_t off,
		u32 len, enum ib_wr_opcode op, u64 va, u32 rkey, u64 wr_id);
int kv_write_denied(struct kv_test *t, struct kv_ep *a, struct kv_buf *sb,
		    u32 len, u64 va, u32 rkey, const char *what);
int kv_fr_base_init(struct kv_test *t, struct kv_fr_base *f, size_t sb_len,
		    bool rb_on_a, size_t rb_len);
void kv_fr_base_fini(struct kv_fr_base *f);
int kv_fr_alloc_mr(struct kv_test *t, struct ib_pd *pd, struct ib_mr **mr);

/* wc.c: posting and polling */
int kv_post_send(struct kv_test *t, struct kv_ep *ep,
		 const struct ib_send_wr *wr, const char *what);
int kv_post_recv(struct kv_test *t, struct kv_ep *ep,
		 const struct ib_recv_wr *wr, const char *what);
int kv_post_recv_buf(struct kv_test *t, struct kv_ep *ep, u64 wr_id,
		     const struct kv_buf *b, size_t off, u32 len);
int kv_poll(struct kv_test *t, struct ib_cq *cq, struct ib_wc *wc,
	    const char *what);
int kv_expect(struct kv_test *t, struct ib_cq *cq, struct ib_wc *wc,
	      u64 wr_id, enum ib_wc_status status, int opcode,
	      const char *what);
int kv_expect_none(struct kv_test *t, struct ib_cq *cq, unsigned int ms,
		   const char *what);
int kv_send_wait(struct kv_test *t, struct kv_ep *ep, struct ib_send_wr *wr,
		 int opcode, const char *what);

/* t_ud_send.c: checks of a received datagram */
int kv_ud_check_wc(struct kv_test *t, const struct ib_wc *wc,
		   const struct kv_ep *a, const struct kv_ep *b,
		   u32 len, bool imm, u32 immv);
int kv_ud_check_grh(struct kv_test *t, const u8 *p,
		    const struct kv_dev *src, const struct kv_dev *dst);
const char *kv_state_name(enum ib_qp_state state);

/* The tests: 0 on success, else a negative errno after kv_fail(). */
int kv_test_objects(struct kv_test *t);
int kv_test_flush(struct kv_test *t);
int kv_test_ud_send(struct kv_test *t);
int kv_test_rc_send(struct kv_test *t);
int kv_test_rc_write(struct kv_test *t);
int kv_test_rc_read(struct kv_test *t);
int kv_test_rc_atomic(struct kv_test *t);
int kv_test_rc_bad_rkey(struct kv_test *t);
int kv_test_rc_rnr(struct kv_test *t);
int kv_test_rc_many(struct kv_test *t);
int kv_test_frmr(struct kv_test *t);
int kv_test_frmr_inv(struct kv_test *t);
int kv_test_frmr_err(struct kv_test *t);
int kv_test_srq(struct kv_test *t);
int kv_test_srq_err(struct kv_test *t);
int kv_test_ud_srq(struct kv_test *t);
int kv_test_limits(struct kv_test *t);

#endif /* MROCE_KVERBS_H */
