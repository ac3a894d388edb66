/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The transport state of an RC QP: a stream of a connection (spec 6.5,
 * 9.5, 10), embedded in struct mroce_qp.  Every field is under the
 * connection's lock (conn->lock) once the stream is attached.
 */
#ifndef MROCE_STREAM_H
#define MROCE_STREAM_H

#include <linux/ktime.h>
#include <linux/list.h>

#include "rdctx.h"
#include "segwin.h"

struct mroce_conn;

struct mroce_stream {
	struct mroce_conn *conn;
	struct list_head wait_entry;	/* on wait_qps or slot_waiters */
	struct list_head conn_entry;	/* on conn->streams.list */
	struct list_head sr_entry;	/* on conn->streams.sr_pending */
	u8 sr_left;			/* ACKs still to carry the record */
	bool sr_sync;			/* the next record answers a SYNC */
	bool credit_blocked;		/* last record: no receive posted */
	u8 rx_path;			/* our path of its latest request */
	u8 sync_backoff;
	u8 retries;			/* retry timer expiries without progress */
	ktime_t sync_at;		/* SYNC timer; 0: not armed */
	ktime_t retry_at;		/* retry timer (spec 9.5.2); 0: off */
	/* requester */
	u32 next_ssn;
	u32 next_msn;
	u32 send_idx;			/* next SQ shadow index to segment */
	u32 send_off;			/* its bytes already sent */
	u32 peer_completed;		/* peer's Completed SSN for us */
	u32 started_ssn;		/* newest message whose first packet left */
	ktime_t rnr_until;		/* paused by an RNR or NOT_READY NAK */
	u32 rnr_ssn;			/* the message that NAK was for */
	ktime_t nr_first;		/* first of consecutive NOT_READYs */
	u8 nr_count;			/* how many of them */
	u8 rnr_left;
	u8 retry_left;
	struct mroce_segwin req_win;	/* of the request being sent */
	bool credit_mode;		/* the peer sends CREDIT records */
	u32 msn_limit;			/* ... and its latest MSN Limit */
	ktime_t credit_at;		/* last credit update or probe */
	/* responder */
	u32 completed_ssn;
	u32 recv_msn;			/* MSN of the oldest posted receive */
	u32 rnr_nak_ssn;		/* last message NAKed RNR ... */
	ktime_t rnr_nak_until;		/* ... and until when not again */
	struct mroce_segwin resp_win;	/* of the READ response being sent */
	struct mroce_rdctxs rd;		/* READ/ATOMIC contexts, atomic cache */
	/* failure and close (spec 6.5.4) */
	bool close_sent;		/* our STREAM_CLOSE went out */
	bool req_live;			/* RTS since attach: SSNs are ours */
	bool peer_closed;		/* detached by the peer or a failure */
	unsigned long gone_at;		/* jiffies: then fail what is left */
	u8 fatal_code;			/* the fatal NAK we sent, 0: none */
	u8 fatal_detail;
	u32 fatal_ssn;
	ktime_t nak_at;			/* last NAK to the failed stream */
};

/* Put st on a waiting list of its connection, unless it waits already. */
static inline void mroce_stream_wait(struct mroce_stream *st,
				     struct list_head *list)
{
	if (list_empty(&st->wait_entry))
		list_add_tail(&st->wait_entry, list);
}

/*
 * Is the stream paused by an RNR or NOT_READY NAK?  Its end is kept in
 * ktime, not jiffies: under emulation jiffies catch up in jumps and ended
 * pauses early.  The clock is read only while a pause stands.
 */
static inline bool mroce_stream_paused(struct mroce_stream *st)
{
	if (!st->rnr_until)
		return false;
	if (ktime_before(ktime_get(), st->rnr_until))
		return true;
	st->rnr_until = 0;
	return false;
}

#endif /* MROCE_STREAM_H */
