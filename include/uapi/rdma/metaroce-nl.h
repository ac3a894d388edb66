/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * MetaRoCE generic netlink interface: the `metaroce` tool (tools/metaroce)
 * and the kernel driver (drivers/infiniband/sw/metaroce/netlink.c).
 *
 * Family METAROCE_GENL_NAME, version METAROCE_GENL_VERSION.  The family is
 * namespace aware: a request sees only the MetaRoCE devices whose netdev is
 * in the requester's network namespace.  Every request is validated against
 * a strict policy; errors come back with an extended ACK message.
 *
 * Commands (request attributes; "dump" means NLM_F_DUMP):
 *
 * METAROCE_CMD_DEV_GET
 *	do:   DEV_NAME (required).  One reply for that device.
 *	dump: DEV_NAME (optional filter).  One message per device.
 *	Reply: DEV_NAME, DEV_INDEX, DEV_PORT_STATE, DEV_LINK_MBPS,
 *	DEV_HINT_MBPS, DEV_NUM_CONNS, DEV_PLANES.
 *
 * METAROCE_CMD_CONN_GET
 *	dump: DEV_NAME (optional filter).  One message per connection,
 *	ordered by device, then local CID: DEV_NAME, DEV_INDEX and a CONN
 *	nest, whose CONN_PATHS holds one nest per path.  A connection whose
 *	paths do not fit one message comes in several consecutive messages
 *	with the same DEV_INDEX and CONN_LOCAL_CID, each with a part of the
 *	paths (CONN_NPATHS is the total).  Each message is a consistent
 *	snapshot of what it carries, taken under the connection's lock.
 *
 * METAROCE_CMD_TUNABLE_GET
 *	do:   TUNABLE nest with TUNABLE_NAME.  Reply: TUNABLE nest with every
 *	      TUNABLE_* attribute.
 *	dump: no attributes.  One such message per tunable.
 *
 * METAROCE_CMD_TUNABLE_SET (CAP_NET_ADMIN)
 *	do:   TUNABLES, a nest of nests each with TUNABLE_NAME and
 *	      TUNABLE_VALUE.  Either every value is in range and all are set,
 *	      or nothing changes (-EINVAL, or -ENOENT for an unknown name).
 *	      Tunables are module-wide: the same as the module parameters in
 *	      /sys/module/metaroce/parameters/.
 *
 * METAROCE_CMD_PLANE_ADD, METAROCE_CMD_PLANE_DEL (CAP_NET_ADMIN)
 *	do:   DEV_NAME and IFNAME: add the netdev IFNAME to the device as a
 *	      plane, or remove it.  IFNAME is looked up in the requester's
 *	      network namespace.  -EEXIST if it already serves a device.
 */
#ifndef METAROCE_NL_USER_H
#define METAROCE_NL_USER_H

#define METAROCE_GENL_NAME	"metaroce"
#define METAROCE_GENL_VERSION	1

enum metaroce_cmd {
	METAROCE_CMD_UNSPEC,
	METAROCE_CMD_DEV_GET,
	METAROCE_CMD_CONN_GET,
	METAROCE_CMD_TUNABLE_GET,
	METAROCE_CMD_TUNABLE_SET,
	METAROCE_CMD_PLANE_ADD,
	METAROCE_CMD_PLANE_DEL,

	__METAROCE_CMD_MAX,
	METAROCE_CMD_MAX = __METAROCE_CMD_MAX - 1
};

/* Top-level attributes. */
enum metaroce_attr {
	METAROCE_A_UNSPEC,
	METAROCE_A_PAD,
	METAROCE_A_DEV_NAME,		/* string: the ib device name */
	METAROCE_A_DEV_INDEX,		/* u32: the ib device index */
	METAROCE_A_DEV_PORT_STATE,	/* u8: enum metaroce_port_state */
	METAROCE_A_DEV_LINK_MBPS,	/* u32: link speed (rate hint), Mb/s; 0 unknown */
	METAROCE_A_DEV_HINT_MBPS,	/* u32: fair share last handed out, Mb/s */
	METAROCE_A_DEV_NUM_CONNS,	/* u32: connections of the device */
	METAROCE_A_DEV_PLANES,		/* nest of nests: enum metaroce_plane_attr */
	METAROCE_A_IFNAME,		/* string: a netdev name (PLANE_ADD/DEL) */
	METAROCE_A_CONN,		/* nest: enum metaroce_conn_attr */
	METAROCE_A_TUNABLE,		/* nest: enum metaroce_tunable_attr */
	METAROCE_A_TUNABLES,		/* nest of nests: enum metaroce_tunable_attr */

	__METAROCE_A_MAX,
	METAROCE_A_MAX = __METAROCE_A_MAX - 1
};

/* Port states: the values of enum ib_port_state. */
enum metaroce_port_state {
	METAROCE_PORT_DOWN = 1,
	METAROCE_PORT_ACTIVE = 4,
};

/* A plane: one netdev of a device. */
enum metaroce_plane_attr {
	METAROCE_PLANE_A_UNSPEC,
	METAROCE_PLANE_A_IFNAME,	/* string */
	METAROCE_PLANE_A_IFINDEX,	/* u32 */
	METAROCE_PLANE_A_UP,		/* u8: 1 running with carrier */
	METAROCE_PLANE_A_INDEX,		/* u32: plane number, 0 the device's own */

	__METAROCE_PLANE_A_MAX,
	METAROCE_PLANE_A_MAX = __METAROCE_PLANE_A_MAX - 1
};

enum metaroce_conn_state {
	METAROCE_CONN_CONNECTING,
	METAROCE_CONN_ESTABLISHED,
	METAROCE_CONN_FAILED,		/* no longer used: failed is TOMBSTONE */
	METAROCE_CONN_CLOSING,
	METAROCE_CONN_TOMBSTONE,
};

/* A connection (spec 6): one per device and peer address. */
enum metaroce_conn_attr {
	METAROCE_CONN_A_UNSPEC,
	METAROCE_CONN_A_PAD,
	METAROCE_CONN_A_LOCAL_ADDR,	/* binary, 16: IPv6 or IPv4-mapped */
	METAROCE_CONN_A_PEER_ADDR,	/* binary, 16 */
	METAROCE_CONN_A_LOCAL_CID,	/* u32 */
	METAROCE_CONN_A_PEER_CID,	/* u32 */
	METAROCE_CONN_A_STATE,		/* u8: enum metaroce_conn_state */
	METAROCE_CONN_A_INITIATOR,	/* u8: 1 we sent the CONNECT */
	METAROCE_CONN_A_STREAMS,	/* u32: RC QPs attached */
	METAROCE_CONN_A_HINT_MBPS,	/* u32: peer's rate hint, Mb/s; 0 none */
	METAROCE_CONN_A_PACE_RATE,	/* u32: pacing rate, bytes/ms; 0 unlimited */
	METAROCE_CONN_A_RETXQ_LEN,	/* u32: packets waiting to be resent */
	METAROCE_CONN_A_NPATHS,		/* u32: paths of the connection */
	METAROCE_CONN_A_PATHS,		/* nest of nests: enum metaroce_path_attr */

	__METAROCE_CONN_A_MAX,
	METAROCE_CONN_A_MAX = __METAROCE_CONN_A_MAX - 1
};

enum metaroce_path_state {
	METAROCE_PATH_ACTIVE,
	METAROCE_PATH_SUSPECT,
	METAROCE_PATH_PROBING,
	METAROCE_PATH_FAILED,
};

/* A sender path of a connection (spec 7, 9, 12). */
enum metaroce_path_attr {
	METAROCE_PATH_A_UNSPEC,
	METAROCE_PATH_A_PAD,
	METAROCE_PATH_A_ID,		/* u32: Path ID */
	METAROCE_PATH_A_STATE,		/* u8: enum metaroce_path_state */
	METAROCE_PATH_A_SPORT,		/* u16: UDP source port (entropy) */
	METAROCE_PATH_A_CWND,		/* u32: congestion window, bytes */
	METAROCE_PATH_A_SSTHRESH,	/* u32: bytes */
	METAROCE_PATH_A_BYTES_IN_FLIGHT,	/* u32 */
	METAROCE_PATH_A_PKTS_IN_FLIGHT,	/* u32 */
	METAROCE_PATH_A_SACK_HOLES,	/* u32: live packets below the highest ACKed PSN */
	METAROCE_PATH_A_SRTT_US,	/* u32; 0: no sample yet */
	METAROCE_PATH_A_RTTVAR_US,	/* u32 */
	METAROCE_PATH_A_MIN_RTT_US,	/* u32 */
	METAROCE_PATH_A_RTO_US,		/* u32: base RTO, before backoff */
	METAROCE_PATH_A_BACKOFF,	/* u32: consecutive RTO expiries */
	METAROCE_PATH_A_TX_PKTS,	/* u64: packets sent */
	METAROCE_PATH_A_RETX_PKTS,	/* u64: of which retransmissions */
	METAROCE_PATH_A_LOST_PKTS,	/* u64: declared lost */
	METAROCE_PATH_A_CE_MARKS,	/* u64: CE marks the peer reported */
	METAROCE_PATH_A_REROUTES,	/* u32: moves to fresh entropy */
	METAROCE_PATH_A_ALPHA,		/* u32: DCTCP alpha, 65536 = 1.0 */
	METAROCE_PATH_A_LOSS_PCT,	/* u32: loss rate of the last window, % */
	METAROCE_PATH_A_PLANE,		/* u32: the plane the path goes out on */

	__METAROCE_PATH_A_MAX,
	METAROCE_PATH_A_MAX = __METAROCE_PATH_A_MAX - 1
};

/* A tunable (spec 17). */
enum metaroce_tunable_attr {
	METAROCE_TUNABLE_A_UNSPEC,
	METAROCE_TUNABLE_A_NAME,	/* string */
	METAROCE_TUNABLE_A_VALUE,	/* u32 */
	METAROCE_TUNABLE_A_MIN,		/* u32 */
	METAROCE_TUNABLE_A_MAX,		/* u32 */

	__METAROCE_TUNABLE_A_MAX,
	METAROCE_TUNABLE_A_MAX_ATTR = __METAROCE_TUNABLE_A_MAX - 1
};

#define METAROCE_TUNABLE_NAME_MAX	32	/* with the NUL */

#endif /* METAROCE_NL_USER_H */
