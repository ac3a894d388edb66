// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What each packet type is (spec 5.4, 5.5), in one table: which layer
 * takes it, its extension headers' length, whether it consumes a receive
 * or is answered by responses, and the access its target needs.  Code asks
 * the table instead of switching on the type.
 */
#include <rdma/ib_verbs.h>

#include "pkt.h"

#define SX	sizeof(struct mroce_sx)
#define RX	sizeof(struct mroce_rx)
#define ATX	sizeof(struct mroce_atx)
#define SEQ	(MROCE_PT_CONN | MROCE_PT_SEQ)

const struct mroce_ptype mroce_ptypes[256] = {
	[MROCE_T_SEND]		= { SEQ | MROCE_PT_RECV, SX, 0 },
	[MROCE_T_SEND_IMM]	= { SEQ | MROCE_PT_RECV, SX + 4, 0 },
	[MROCE_T_SEND_INV]	= { SEQ | MROCE_PT_RECV, SX + 4, 0 },
	[MROCE_T_WRITE]		= { SEQ, SX + RX, IB_ACCESS_REMOTE_WRITE },
	[MROCE_T_WRITE_IMM]	= { SEQ | MROCE_PT_RECV, SX + RX + 4,
				    IB_ACCESS_REMOTE_WRITE },
	[MROCE_T_READ_REQ]	= { SEQ | MROCE_PT_RESP, SX + RX,
				    IB_ACCESS_REMOTE_READ },
	[MROCE_T_READ_RESP]	= { SEQ | MROCE_PT_REPLY, SX, 0 },
	[MROCE_T_ATOMIC_CS]	= { SEQ | MROCE_PT_RESP, SX + ATX,
				    IB_ACCESS_REMOTE_ATOMIC },
	[MROCE_T_ATOMIC_FA]	= { SEQ | MROCE_PT_RESP, SX + ATX,
				    IB_ACCESS_REMOTE_ATOMIC },
	[MROCE_T_ATOMIC_RESP]	= { SEQ | MROCE_PT_REPLY, SX + 8, 0 }, /* original */
	[MROCE_T_STREAM_CLOSE]	= { SEQ, SX + 8, 0 },	/* the SCX */
	[MROCE_T_ACK]		= { MROCE_PT_CONN },
	[MROCE_T_NAK]		= { MROCE_PT_CONN },
	[MROCE_T_PROBE]		= { MROCE_PT_CONN },
	[MROCE_T_PROBE_REPLY]	= { MROCE_PT_CONN },
	[MROCE_T_SYNC]		= { MROCE_PT_CONN },
	[MROCE_T_CONNECT]	= { MROCE_PT_CONN },
	[MROCE_T_CONNECT_ACK]	= { MROCE_PT_CONN },
	[MROCE_T_CONN_CLOSE]	= { MROCE_PT_CONN },
	[MROCE_T_RESET]		= { MROCE_PT_CONN },
	[MROCE_T_DATAGRAM]	= { MROCE_PT_DATAGRAM },
};
