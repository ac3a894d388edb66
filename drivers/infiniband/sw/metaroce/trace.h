/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Tracepoints of the MetaRoCE transport: per connection and per path,
 * what the counters only sum up (spec 18).  Enable them under
 * /sys/kernel/tracing/events/metaroce/.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM metaroce

#if !defined(_MROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _MROCE_TRACE_H

#include <linux/tracepoint.h>

#include "mroce.h"
#include "conn.h"
#include "loss.h"
#include "path.h"

#define MROCE_TP_PATH_ARGS \
	TP_PROTO(const struct mroce_conn *conn, const struct mroce_path *path)

DECLARE_EVENT_CLASS(mroce_path_class, MROCE_TP_PATH_ARGS, TP_ARGS(conn, path),
		    TP_STRUCT__entry(__string(dev,
					      dev_name(&conn->mdev->ibdev.dev))
				     __field(u32, cid)
				     __field(u8, path)
				     __field(u8, plane)
				     __field(u8, state)
				     __field(u16, sport)
				     __field(u32, cwnd)
				     __field(u32, bif)
				     __field(u32, srtt_us)
				     __field(u32, rto_us)
				     __field(u8, backoff)),
		    TP_fast_assign(__assign_str(dev);
				   __entry->cid = conn->local_cid;
				   __entry->path = path->id;
				   __entry->plane = path->plane;
				   __entry->state = path->state;
				   __entry->sport = ntohs(path->sport);
				   __entry->cwnd = path->cwnd;
				   __entry->bif = path->bif;
				   __entry->srtt_us = path->srtt_us;
				   __entry->rto_us = path->rto_us;
				   __entry->backoff = path->backoff;),
		    TP_printk("%s cid=%u path=%u plane=%u state=%u sport=%u cwnd=%u bif=%u srtt=%uus rto=%uus backoff=%u",
			      __get_str(dev), __entry->cid, __entry->path,
			      __entry->plane, __entry->state, __entry->sport,
			      __entry->cwnd, __entry->bif, __entry->srtt_us,
			      __entry->rto_us, __entry->backoff));

/* A path changed state (spec 7.5); state is the new one. */
DEFINE_EVENT(mroce_path_class, mroce_path_state, MROCE_TP_PATH_ARGS,
	     TP_ARGS(conn, path));

/* A path moved to fresh entropy (spec 7.7); sport is the new port. */
DEFINE_EVENT(mroce_path_class, mroce_path_reroute, MROCE_TP_PATH_ARGS,
	     TP_ARGS(conn, path));

/* The RTO of a path expired (spec 9.2.4). */
DEFINE_EVENT(mroce_path_class, mroce_path_rto, MROCE_TP_PATH_ARGS,
	     TP_ARGS(conn, path));

/* An ACK or PROBE_REPLY was applied to a path (spec 8.4). */
TRACE_EVENT(mroce_ack,
	    TP_PROTO(const struct mroce_conn *conn,
		     const struct mroce_path *path, u32 cum, u32 acked, u32 ce),
	    TP_ARGS(conn, path, cum, acked, ce),
	    TP_STRUCT__entry(__field(u32, cid)
			     __field(u8, path)
			     __field(u32, cum)
			     __field(u32, acked)
			     __field(u32, ce)
			     __field(u32, cwnd)
			     __field(u32, bif)
			     __field(u32, srtt_us)
			     __field(u32, reo_wnd_us)
			     __field(bool, reorders)),
	    TP_fast_assign(__entry->cid = conn->local_cid;
			   __entry->path = path->id;
			   __entry->cum = cum;
			   __entry->acked = acked;
			   __entry->ce = ce;
			   __entry->cwnd = path->cwnd;
			   __entry->bif = path->bif;
			   __entry->srtt_us = path->srtt_us;
			   __entry->reo_wnd_us = mroce_reo_wnd(path);
			   __entry->reorders = !!path->reo_seen;),
	    TP_printk("cid=%u path=%u cum=%u acked=%u ce=%u cwnd=%u bif=%u srtt=%uus reo_wnd=%uus reorders=%d",
		      __entry->cid, __entry->path, __entry->cum,
		      __entry->acked, __entry->ce, __entry->cwnd,
		      __entry->bif, __entry->srtt_us, __entry->reo_wnd_us,
		      __entry->reorders));

/* A packet was declared lost (spec 9.2); its content is resent if needed. */
TRACE_EVENT(mroce_lost,
	    TP_PROTO(const struct mroce_conn *conn,
		     const struct mroce_path *path, u32 psn, u8 tries,
		     bool resent),
	    TP_ARGS(conn, path, psn, tries, resent),
	    TP_STRUCT__entry(__field(u32, cid)
			     __field(u8, path)
			     __field(u32, psn)
			     __field(u8, tries)
			     __field(bool, resent)),
	    TP_fast_assign(__entry->cid = conn->local_cid;
			   __entry->path = path->id;
			   __entry->psn = psn;
			   __entry->tries = tries;
			   __entry->resent = resent;),
	    TP_printk("cid=%u path=%u psn=%u tries=%u resent=%d",
		      __entry->cid, __entry->path, __entry->psn,
		      __entry->tries, __entry->resent));

#endif /* _MROCE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
