/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * MetaRoCE v1 wire format (Documentation/metaroce/spec.md, section 5).
 * Every multi-byte field is big-endian; every header is a multiple of 4
 * bytes.
 */
#ifndef MROCE_WIRE_H
#define MROCE_WIRE_H

#include <linux/build_bug.h>
#include <linux/types.h>

#define MROCE_UDP_PORT_DEFAULT	4793
#define MROCE_VERSION		1
#define MROCE_CRC_LEN		4
#define MROCE_MAC_LEN		16
#define MROCE_GSI_QKEY		0x80010000U
#define MROCE_QPN_MASK		0x00ffffffU
#define MROCE_GRH_LEN		40	/* synthesized GRH before UD payloads */
#define MROCE_MAX_PLANES	8	/* planes of a device (spec 7.1) */

/* ECN code point ECT(0) (spec 4.2.2). */
#define MROCE_ECN_ECT0		0x2

/* Packet types (spec 5.4). */
enum mroce_type {
	MROCE_T_SEND		= 0x01,
	MROCE_T_SEND_IMM	= 0x02,
	MROCE_T_SEND_INV	= 0x03,
	MROCE_T_WRITE		= 0x04,
	MROCE_T_WRITE_IMM	= 0x05,
	MROCE_T_READ_REQ	= 0x06,
	MROCE_T_READ_RESP	= 0x07,
	MROCE_T_ATOMIC_CS	= 0x08,
	MROCE_T_ATOMIC_FA	= 0x09,
	MROCE_T_ATOMIC_RESP	= 0x0a,
	MROCE_T_STREAM_CLOSE	= 0x0b,
	MROCE_T_ACK		= 0x20,
	MROCE_T_NAK		= 0x21,
	MROCE_T_PROBE		= 0x22,
	MROCE_T_PROBE_REPLY	= 0x23,
	MROCE_T_SYNC		= 0x24,
	MROCE_T_CONNECT		= 0x28,
	MROCE_T_CONNECT_ACK	= 0x29,
	MROCE_T_CONN_CLOSE	= 0x2a,
	MROCE_T_RESET		= 0x2b,
	MROCE_T_DATAGRAM	= 0x30,
};

/* Base header flags (spec 5.3). */
#define MROCE_F_AR	0x8000
#define MROCE_F_SE	0x4000
#define MROCE_F_LAST	0x2000
#define MROCE_F_RETX	0x1000
#define MROCE_F_ECE	0x0800
#define MROCE_F_BKLG	0x0400
#define MROCE_F_MAC	0x0200
#define MROCE_F_AKX	0x0100	/* a carried AKX follows the extensions (8.6) */

/* Base header, 32 bytes (spec 5.2). */
struct mroce_bth {
	u8 ver_rsvd;		/* Ver in the high nibble */
	u8 type;
	__be16 flags;
	u8 hdr_len;		/* 4-byte words of all headers */
	u8 path_id;
	__be16 payload_len;
	__be32 dcid;
	__be32 scid;
	__be32 psn;
	__be32 plw;
	__be64 token;
} __packed;
static_assert(sizeof(struct mroce_bth) == 32);

/* Datagram extension, 16 bytes (spec 5.5.16). */
#define MROCE_DX_IMM	0x80
struct mroce_dx {
	__be32 dflags_dqpn;	/* DFlags (8) | Destination QPN (24) */
	__be32 sqpn;		/* Reserved (8) | Source QPN (24) */
	__be32 qkey;
	__be32 imm;
} __packed;
static_assert(sizeof(struct mroce_dx) == 16);

#define MROCE_DATAGRAM_HDR_LEN	(sizeof(struct mroce_bth) + sizeof(struct mroce_dx))

/* Stream extension, 24 bytes (spec 5.5.1). */
struct mroce_sx {
	__be32 segsh_dqpn;	/* SegShift (4) | Rsvd (4) | Destination QPN (24) */
	__be32 sqpn;		/* Reserved (8) | Source QPN (24) */
	__be32 ssn;
	__be32 msn;
	__be32 msg_len;
	__be32 offset;
} __packed;
static_assert(sizeof(struct mroce_sx) == 24);

/* RDMA extension, 12 bytes (spec 5.5.2). */
struct mroce_rx {
	__be64 va;
	__be32 rkey;
} __packed;
static_assert(sizeof(struct mroce_rx) == 12);

/* Atomic extension, 32 bytes (spec 5.5.5). */
struct mroce_atx {
	__be64 va;
	__be64 swap_add;
	__be64 compare;
	__be32 rkey;
	__be32 reserved;
} __packed;
static_assert(sizeof(struct mroce_atx) == 32);

/*
 * ACK extension, 52 bytes (spec 5.5.7).  Carried in a sequenced packet
 * (flag AKX, spec 8.6), it names the acknowledged path in Acked Path ID
 * and has no Stream Records; in an ACK that byte is 0.
 */
#define MROCE_SACK_BITS		256
#define MROCE_ACKF_NO_STATE	0x80
#define MROCE_ACKF_REORDERED	0x40
struct mroce_akx {
	__be32 cum_psn;
	__be32 ce_count;
	__be32 rx_count;
	__be16 rate_hint;
	__be16 ack_delay;
	u8 num_sr;
	u8 ack_flags;
	u8 acked_path_id;	/* carried AKX only */
	u8 reserved;
	u8 sack[MROCE_SACK_BITS / 8];	/* bit i: PSN cum + 1 + i, MSB first */
} __packed;
static_assert(sizeof(struct mroce_akx) == 52);

/* Probe extension, 16 bytes (spec 5.5.10). */
#define MROCE_PBF_MTU		0x80
#define MROCE_PBF_KEEPALIVE	0x40
struct mroce_pbx {
	__be32 probe_id;
	u8 probe_flags;
	u8 reserved[3];
	__be64 timestamp;
} __packed;
static_assert(sizeof(struct mroce_pbx) == 16);

/* Stream record, 16 bytes (spec 5.5.8). */
#define MROCE_SRF_CREDIT	0x80
#define MROCE_SRF_UNLIMITED	0x40
#define MROCE_SRF_SYNC_REPLY	0x20
struct mroce_sr {
	__be32 flags_req_qpn;	/* SR Flags (8) | Requester QPN (24) */
	__be32 resp_qpn;
	__be32 completed_ssn;
	__be32 msn_limit;
} __packed;
static_assert(sizeof(struct mroce_sr) == 16);

/* NAK extension, 24 bytes (spec 5.5.9); codes (spec 13.1). */
enum mroce_nak_code {
	MROCE_NAK_RNR		= 0x01,
	MROCE_NAK_NOT_READY	= 0x02,
	MROCE_NAK_REMOTE_ACCESS	= 0x03,
	MROCE_NAK_INVALID_REQ	= 0x04,
	MROCE_NAK_LENGTH	= 0x05,
	MROCE_NAK_REMOTE_OP	= 0x06,
	MROCE_NAK_SEQUENCE	= 0x07,
	MROCE_NAK_STREAM_CLOSED	= 0x08,
};

struct mroce_nkx {
	__be32 code_req_qpn;	/* Code (8) | Requester QPN (24) */
	__be32 detail_resp_qpn;	/* Detail (8) | Responder QPN (24) */
	__be32 ssn;
	__be32 msn;
	__be32 param;
	__be32 completed_ssn;
} __packed;
static_assert(sizeof(struct mroce_nkx) == 24);

/* Connect extension, 64 bytes, then plane addresses (spec 5.5.12). */
#define MROCE_CAP_AUTH		0x8000
#define MROCE_CAP_HINT		0x4000
#define MROCE_CAP_ATOMIC	0x2000
#define MROCE_CAP_CACK		0x1000	/* carried ACKs, implied completion */
struct mroce_cx {
	u8 vmin_vmax;
	u8 num_addrs;
	__be16 caps;
	__be64 epoch;
	__be64 token;
	__be64 guid;
	u8 maxsh_rsvd;		/* Max Seg Shift in the high nibble */
	u8 max_rx_paths;
	u8 seg_win_shift;
	u8 reserved0;
	__be32 rx_msg_slots;
	__be32 max_streams;
	__be32 auth_key_id;
	u8 auth_nonce[16];
	__be16 max_ack_delay;
	__be16 reserved1;
} __packed;
static_assert(sizeof(struct mroce_cx) == 64);

/* Reset extension, 16 bytes (spec 5.5.13); reasons (spec 6.7.1). */
enum mroce_reset_reason {
	MROCE_RST_NO_CONNECTION	= 1,
	MROCE_RST_CONNECT_REQUIRED = 2,
	MROCE_RST_PROTOCOL	= 3,
	MROCE_RST_RESOURCE	= 4,
	MROCE_RST_VERSION	= 5,
	MROCE_RST_ADMIN		= 6,
	MROCE_RST_AUTH		= 7,
	MROCE_RST_PEER_RESTART	= 8,
};

struct mroce_rsx {
	u8 reason;
	u8 vmin_vmax;
	__be16 retry_after;
	__be64 epoch;
	__be32 reserved;
} __packed;
static_assert(sizeof(struct mroce_rsx) == 16);

/* Connection close extension, 8 bytes (spec 5.5.14). */
struct mroce_ccx {
	u8 op;
	u8 reserved[3];
	__be32 reason;
} __packed;
static_assert(sizeof(struct mroce_ccx) == 8);

/* Stream close extension, 8 bytes (spec 5.5.15). */
struct mroce_scx {
	u8 reason;
	u8 nak_code;
	u8 detail;
	u8 reserved;
	__be32 failed_ssn;
} __packed;
static_assert(sizeof(struct mroce_scx) == 8);

/*
 * The longest header of a packet with payload (WRITE_IMM): a sequenced
 * packet is at most this plus the connection segment size.
 */
#define MROCE_SEQ_HDR_MAX	72

#define MROCE_SX_OFF		32
#define MROCE_EXT_OFF		(MROCE_SX_OFF + sizeof(struct mroce_sx))

#endif /* MROCE_WIRE_H */
