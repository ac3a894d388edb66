// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mrsfuzz: stateful MetaRoCE fuzzer.  It plays the peer of a live
 * connection to the device under test and sends packets that are valid in
 * every field except one relation between packets and state: Seg Shift,
 * Offset, Message Length, SSN, MSN, PSN, PLW, SACK bits, extension
 * lengths, epochs, tokens, CIDs, stream IDs, responses to requests never
 * sent or after the QP's destruction, ...
 *
 *   mrsfuzz -f STATE [-c COUNT] [-d SECONDS] [-s SEED] [-w WARMUP] [-r READS]
 *           [-L] [-o REPORT] [-C CLASS,...] [-X CLASS,...] [-K STOPFILE]
 *           [-D DESTROYED]
 *
 * STATE (written by selftests/compliance/sfuzzprep.py) names the
 * connection: addresses, CIDs, tokens, our next PSN, the connection
 * segment size, the target's message slots, and the target's RC QPs with
 * their role:
 *   r  the target posts READs to us: forged READ responses land on real,
 *      open WQEs; their data is checked afterwards
 *   w  we WRITE to its memory (resent until the target's Stream Record
 *      says complete); only mutations that must leave no state hit it;
 *      its memory is checked afterwards
 *   s  sacrificial: mutations that fail the stream (fatal NAKs) hit it
 *   g  segment window: only packets beyond a message's segment window go
 *      to it (dropped, no NAK); it must stay live, and every packet counts
 *
 * The tool keeps the connection alive by itself: a packet socket sees what
 * the target sends to us; every sequenced packet is acknowledged (per-path
 * receive state, SACK), PROBEs are answered, and the state is learnt from
 * the traffic: the target's READ requests (SSN, length, Seg Shift), its
 * paths' next PSNs, STREAM_CLOSEs and fatal NAKs (dead streams), and the
 * Completed SSNs of its Stream Records.
 *
 * Waits (WARMUP seconds at most) until READS of the target's READ requests
 * are known, then sends COUNT packets (or stops after SECONDS),
 * round-robin over the mutation classes (-C only these, -X not these), then completes every open READ with valid responses
 * (so that their data can be checked), and prints one line per class:
 * "class NAME N", then the totals.  REPORT gets the state the checker
 * needs (w QPs: chunks written and completed).  -L ends with the
 * connection-lifecycle classes, which end the connection: a CONNECT from
 * the same address with another epoch (peer restart), then packets of the
 * dead connection.  -K: after the report ("done" printed), keep the
 * connection (ACKs, PROBE replies) until STOPFILE exists, for the checks.
 * -D: a file the test writes the QPNs of target QPs it destroyed into (as
 * well as a STREAM_CLOSE, it marks their READs as after destroy).
 *
 * Payloads of mutated packets are poison (0xEE, the first byte the class
 * number + 1): no poison byte may ever be found in the target's memory.
 * Valid data is pat(SSN, offset).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

enum {
	T_SEND = 1, T_SEND_IMM, T_SEND_INV, T_WRITE, T_WRITE_IMM, T_READ_REQ,
	T_READ_RESP, T_ATOMIC_CS, T_ATOMIC_FA, T_ATOMIC_RESP, T_STREAM_CLOSE,
	T_ACK = 0x20, T_NAK, T_PROBE, T_PROBE_REPLY, T_SYNC,
	T_CONNECT = 0x28, T_CONNECT_ACK, T_CONN_CLOSE, T_RESET,
};
#define F_AR	0x8000
#define F_LAST	0x2000
#define F_RETX	0x1000
#define F_AKX	0x0100
#define POISON	0xEE
#define MAXPKT	2048
#define BATCH	16
#define MAXQP	32
#define MAXREAD	256
#define MAXMSG	8		/* unconfirmed valid WRITEs per w QP */
#define WCHUNK	4096		/* a valid WRITE: 4 KiB at chunk * 4 KiB */
#define NCHUNK	8		/* region A: the first 32 KiB of the MR */
#define REGION_C 49152		/* poison WRITEs aim here: must stay 0x5a */

static u64 rng_state = 0x9E3779B97F4A7C15ULL;
static u32 crc_table[256];

static u64 rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static u32 rn(u32 n)
{
	return n ? (u32)(rnd() % n) : 0;
}

static void crc_init(void)
{
	for (u32 i = 0; i < 256; i++) {
		u32 c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78 : c >> 1;
		crc_table[i] = c;
	}
}

static u32 crc32c(const u8 *p, int n)
{
	u32 c = 0xFFFFFFFF;

	while (n--)
		c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return ~c;
}

static void put16(u8 *p, u16 v) { p[0] = v >> 8; p[1] = v; }
static void put32(u8 *p, u32 v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }
static void put64(u8 *p, u64 v) { put32(p, v >> 32); put32(p + 4, v); }
static u16 get16(const u8 *p) { return p[0] << 8 | p[1]; }
static u32 get32(const u8 *p) { return (u32)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }
static int32_t sdiff(u32 a, u32 b) { return (int32_t)(a - b); }

/* Valid data: never POISON, never the targets' fill bytes 0x5a/0xa5. */
static u8 pat(u32 ssn, u32 off)
{
	u8 b = (u8)(ssn * 131 + off * 7 + (off >> 8) * 13 + 1);

	return b == POISON || b == 0x5a || b == 0xa5 ? 0x11 : b;
}

/* ---- state ------------------------------------------------------------ */

struct tqp {
	u32 tqpn, pqpn, rkey, len;
	u64 va;
	char role;
	int dead;		/* fatal NAK or STREAM_CLOSE seen */
	int closed;		/* STREAM_CLOSE seen: destroyed or failed */
	u32 ssn;		/* our next SSN as requester */
	u32 msn;		/* our next MSN */
	u32 completed;		/* target's Completed SSN (Stream Records) */
	int have_completed;
	/* valid WRITEs not confirmed complete: SSN and chunk */
	u32 msg_ssn[MAXMSG];
	u8 msg_chunk[MAXMSG];
	u8 msg_sent[MAXMSG];	/* segments sent so far */
	int nmsg;
	u32 chunks_done;	/* chunks some completed WRITE wrote */
	u32 chunks_sent;	/* chunks some WRITE fully sent */
};

struct oread {
	int qi;
	u32 ssn, len;
	u8 shift;
	u32 nseg;
	u8 sent[2048 / 8];	/* segments sent validly */
	int done;		/* completion phase sent it all */
};

struct rxpath {
	int seen;
	u32 cum, rx;
	u8 got[32];		/* PSNs cum+1 .. cum+256 */
	u32 next;		/* highest PSN the target sent + 1 */
	u16 sport;
};

static struct {
	u32 target, local;
	u16 sport;
	u32 cid, peer_cid;
	u64 token, peer_token, epoch;
	u32 psn, ack_seq;
	u32 dup_psn;		/* our PSNs on DUP_PATH (psn_dup only) */
	int dup_state, dup_qi;	/* 1: first sent, 2: ACKed, 3: dup sent */
	u32 dup_rx;		/* the target's Rx Count of the path then */
	double dup_at;
	/* rresp_dup_poison: READ rd[dp_rd], segment dp_seg, PSN dp_psn */
	u32 dp_psn, dp_seg;
	int dp_state, dp_rd;	/* 1: valid copy sent, 2: the target has it */
	double dp_at;
	u8 css;
	u32 slots;
	struct tqp qp[MAXQP];
	int nqp;
	struct oread rd[MAXREAD];
	int nrd;
	struct rxpath rxp[256];
	u8 connect_pkt[MAXPKT];
	int connect_len;
	u32 our_cum0;		/* target's Cumulative PSN of our path 0 */
	u32 plw0;		/* the highest PLW we put on path 0 */
	int have_cum0;
	int conn_dead;
} g;

static int tx_sock, rx_sock;
static double now_s(void);
static int cur_class;		/* the class being generated */

/* ---- sending ------------------------------------------------------------ */

struct out {
	u8 b[MAXPKT + 28];
	int len;
};
static struct out obuf[BATCH + 64];
static int nout;
static unsigned long tx_total, tx_errors;

static void flush_out(void)
{
	struct mmsghdr msgs[BATCH + 64];
	struct iovec iov[BATCH + 64];
	struct sockaddr_in dst = { .sin_family = AF_INET };
	int i = 0, n;

	dst.sin_addr.s_addr = g.target;
	memset(msgs, 0, sizeof(msgs));
	for (int k = 0; k < nout; k++) {
		iov[k].iov_base = obuf[k].b;
		iov[k].iov_len = obuf[k].len;
		msgs[k].msg_hdr.msg_name = &dst;
		msgs[k].msg_hdr.msg_namelen = sizeof(dst);
		msgs[k].msg_hdr.msg_iov = &iov[k];
		msgs[k].msg_hdr.msg_iovlen = 1;
	}
	while (i < nout) {
		n = sendmmsg(tx_sock, msgs + i, nout - i, 0);
		if (n < 0) {
			if (errno != ENOBUFS && errno != EAGAIN && errno != EPERM) {
				perror("sendmmsg");
				exit(1);
			}
			tx_errors++;
			usleep(200);
			continue;
		}
		i += n;
	}
	tx_total += nout;
	nout = 0;
}

/* Queue a MetaRoCE payload p[0..n) from UDP source port sport. */
static void emit(const u8 *p, int n, u16 sport)
{
	struct out *o;
	struct iphdr *ip;

	if (n <= 0)
		return;
	if (nout == BATCH + 64)
		flush_out();
	o = &obuf[nout++];
	ip = (struct iphdr *)o->b;
	memset(ip, 0, 20);
	ip->version = 4;
	ip->ihl = 5;
	ip->tos = 0x6a;
	ip->tot_len = htons(28 + n);
	ip->frag_off = htons(0x4000);
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->saddr = g.local;
	ip->daddr = g.target;
	put16(o->b + 20, sport);
	put16(o->b + 22, 4793);
	put16(o->b + 24, 8 + n);
	put16(o->b + 26, 0);
	memcpy(o->b + 28, p, n);
	o->len = 28 + n;
}

/* ---- packets ------------------------------------------------------------ */

static void bth(u8 *p, u8 type, int hdr, int plen, u16 flags, u8 path,
		u32 psn, u32 plw)
{
	memset(p, 0, 32);
	p[0] = 0x10;
	p[1] = type;
	put16(p + 2, flags);
	p[4] = hdr / 4;
	p[5] = path;
	put16(p + 6, plen);
	put32(p + 8, g.peer_cid);
	put32(p + 12, g.cid);
	put32(p + 16, psn);
	put32(p + 20, plw);
	put64(p + 24, g.peer_token);
}

static int seal(u8 *p, int n)
{
	put32(p + n, crc32c(p, n));
	return n + 4;
}

/* Recompute the CRC of a sealed packet of n bytes after a change. */
static int reseal(u8 *p, int n)
{
	return seal(p, n - 4);
}

static void sx(u8 *e, u8 shift, u32 dqpn, u32 sqpn, u32 ssn, u32 msn,
	       u32 len, u32 off)
{
	put32(e, (u32)shift << 28 | (dqpn & 0xffffff));
	put32(e + 4, sqpn & 0xffffff);
	put32(e + 8, ssn);
	put32(e + 12, msn);
	put32(e + 16, len);
	put32(e + 20, off);
}

static const int ext_len[] = {
	[T_SEND] = 24, [T_SEND_IMM] = 28, [T_SEND_INV] = 28, [T_WRITE] = 36,
	[T_WRITE_IMM] = 40, [T_READ_REQ] = 36, [T_READ_RESP] = 24,
	[T_ATOMIC_CS] = 56, [T_ATOMIC_FA] = 56, [T_ATOMIC_RESP] = 32,
	[T_STREAM_CLOSE] = 32,
};

/*
 * A sequenced packet on our path 0 with the next PSN (PLW = PSN: nothing
 * of ours is unresolved), ext and a payload of plen bytes: pattern of
 * (ssn, off) when poison is 0, else poison.
 */
static int seqpkt(u8 *p, u8 type, const u8 *ext, int plen, u16 flags,
		  u32 ssn, u32 off, int poison)
{
	int hdr = 32 + ext_len[type];
	u32 psn = g.psn++;

	bth(p, type, hdr, plen, flags | F_AR, 0, psn, psn);
	memcpy(p + 32, ext, ext_len[type]);
	for (int i = 0; i < plen; i++)
		p[hdr + i] = poison ? POISON : pat(ssn, off + i);
	/* Poison names its class in its first byte (for the report). */
	if (poison && plen > 1)
		p[hdr] = cur_class + 1;
	return seal(p, hdr + plen);
}

static u32 segsz(u8 shift)
{
	return 256U << shift;
}

/*
 * What the target's Cumulative PSN of our path 0 stays below: our next
 * PSN, or the highest PLW a PROBE put on the path (probe may move it
 * past our PSNs).
 */
static u32 top0(void)
{
	return sdiff(g.plw0, g.psn) > 0 ? g.plw0 : g.psn;
}

/* ---- per-class bookkeeping ------------------------------------------------ */

typedef int (*gen_fn)(u8 *p);

struct cls {
	const char *name;
	gen_fn gen;
	int lifecycle;		/* only with -L, at the end */
	unsigned long n;
};

static unsigned long valid_sent[4];	/* write, read resp, resend, ack */
static unsigned long rx_pkts, rx_learn_reads, rx_closes, rx_fatal_naks;
static unsigned long rx_acks, rx_probes, rx_syncs, rx_naks, rx_resets;

static struct tqp *pick_qp(char role, int live)
{
	int idx[MAXQP], n = 0;

	for (int i = 0; i < g.nqp; i++)
		if (g.qp[i].role == role && (!live || !g.qp[i].dead))
			idx[n++] = i;
	if (!n && live == 1)
		return pick_qp(role, 0);	/* dead ones then */
	return n ? &g.qp[idx[rn(n)]] : NULL;
}

static struct tqp *any_qp(void)
{
	return g.nqp ? &g.qp[rn(g.nqp)] : NULL;
}

static struct tqp *qp_by_tqpn(u32 tqpn)
{
	for (int i = 0; i < g.nqp; i++)
		if (g.qp[i].tqpn == tqpn)
			return &g.qp[i];
	return NULL;
}

/* An open READ: of a live r QP (live 1), of a closed one (live 0). */
static struct oread *pick_read(int live)
{
	int idx[MAXREAD], n = 0;

	for (int i = 0; i < g.nrd; i++) {
		struct tqp *q = &g.qp[g.rd[i].qi];

		if (live ? !q->closed : q->closed)
			idx[n++] = i;
	}
	return n ? &g.rd[idx[rn(n)]] : NULL;
}

/* An open READ of a live r QP, *q its QP; NULL if none. */
static struct oread *live_read(struct tqp **q)
{
	struct oread *r = pick_read(1);

	*q = r ? &g.qp[r->qi] : NULL;
	return r;
}

static int rd_sent(const struct oread *r, u32 s)
{
	return r->sent[s / 8] & (1 << (s % 8));
}

/* A READ_RESP of r: segment s of its own Seg Shift, data or poison. */
static int read_resp(u8 *p, struct oread *r, u32 s, int poison)
{
	struct tqp *q = &g.qp[r->qi];
	u32 seg = segsz(r->shift), off = s * seg;
	u32 plen = r->len - off < seg ? r->len - off : seg;
	u8 e[24];

	sx(e, r->shift, q->tqpn, q->pqpn, r->ssn, 0, r->len, off);
	return seqpkt(p, T_READ_RESP, e, plen,
		      off + plen == r->len ? F_LAST : 0, r->ssn, off, poison);
}

/* ---- the valid traffic the mutations need --------------------------------- */

/* The next segment of a valid WRITE to w/s QP q; a new message if none. */
static int valid_write_seg(u8 *p, struct tqp *q)
{
	u32 seg = segsz(g.css), nseg = WCHUNK / seg, s, ssn, off;
	int m;
	u8 e[36];

	for (m = 0; m < q->nmsg; m++)
		if (q->msg_sent[m] < nseg)
			break;
	if (m == q->nmsg) {
		if (q->nmsg == MAXMSG)
			return 0;
		m = q->nmsg++;
		q->msg_ssn[m] = q->ssn++;
		q->msg_chunk[m] = q->msg_ssn[m] % NCHUNK;
		q->msg_sent[m] = 0;
	}
	s = q->msg_sent[m]++;
	ssn = q->msg_ssn[m];
	off = s * seg;
	sx(e, g.css, q->tqpn, q->pqpn, ssn, 0, WCHUNK, off);
	put64(e + 24, q->va + (u64)q->msg_chunk[m] * WCHUNK);
	put32(e + 32, q->rkey);
	if (q->msg_sent[m] == nseg)
		q->chunks_sent |= 1u << q->msg_chunk[m];
	valid_sent[0]++;
	/* WRITE data depends on the address only: pat(0, MR offset). */
	return seqpkt(p, T_WRITE, e, seg, off + seg == WCHUNK ? F_LAST : 0,
		      0, q->msg_chunk[m] * WCHUNK + off, 0);
}

/* Resend every segment of q's valid WRITEs not confirmed complete. */
static void resend_writes(struct tqp *q)
{
	u32 seg = segsz(g.css);
	u8 p[MAXPKT], e[36];

	for (int m = 0; m < q->nmsg; m++)
		for (u32 s = 0; s < q->msg_sent[m]; s++) {
			u32 off = s * seg;

			sx(e, g.css, q->tqpn, q->pqpn, q->msg_ssn[m], 0,
			   WCHUNK, off);
			put64(e + 24, q->va + (u64)q->msg_chunk[m] * WCHUNK);
			put32(e + 32, q->rkey);
			emit(p, seqpkt(p, T_WRITE, e, seg,
				       (off + seg == WCHUNK ? F_LAST : 0) | F_RETX,
				       0, q->msg_chunk[m] * WCHUNK + off, 0),
			     g.sport);
			valid_sent[2]++;
		}
}

/* The target completed q's requests up to SSN c (a Stream Record). */
static void writes_completed(struct tqp *q, u32 c)
{
	int m, k = 0;

	if (q->have_completed && sdiff(c, q->completed) <= 0)
		return;
	q->completed = c;
	q->have_completed = 1;
	for (m = 0; m < q->nmsg; m++) {
		u32 nseg = WCHUNK / segsz(g.css);

		if (sdiff(q->msg_ssn[m], c) <= 0 && q->msg_sent[m] == nseg) {
			q->chunks_done |= 1u << q->msg_chunk[m];
			continue;
		}
		q->msg_ssn[k] = q->msg_ssn[m];
		q->msg_chunk[k] = q->msg_chunk[m];
		q->msg_sent[k] = q->msg_sent[m];
		k++;
	}
	q->nmsg = k;
}

/* ---- mutation classes ----------------------------------------------------- */

/* READ responses: Seg Shift other than the READ_REQ's (smaller or larger). */
static int c_rresp_segshift(u8 *p)
{
	struct tqp *q;
	struct oread *r = live_read(&q);
	u8 e[24], sh;
	u32 seg, off, plen;

	if (!r)
		return 0;
	do
		sh = rn(g.css + 1);
	while (sh == r->shift && g.css);
	seg = segsz(sh);
	off = rn(r->len / seg) * seg;
	plen = r->len - off < seg ? r->len - off : seg;
	sx(e, sh, q->tqpn, q->pqpn, r->ssn, 0, r->len, off);
	return seqpkt(p, T_READ_RESP, e, plen, off + plen == r->len ? F_LAST : 0,
		      r->ssn, off, 1);
}

/* READ responses whose Message Length is not the READ's. */
static int c_rresp_msglen(u8 *p)
{
	static const u32 v[] = { 0, 1, 8, 0x7fffffff, 0x80000000, 0xffffffff };
	struct tqp *q;
	struct oread *r = live_read(&q);
	u32 len, seg;
	u8 e[24];

	if (!r)
		return 0;
	seg = segsz(r->shift);
	len = rn(2) ? r->len + (rn(2) ? seg : -seg) : v[rn(6)];
	if (len == r->len)
		len++;
	sx(e, r->shift, q->tqpn, q->pqpn, r->ssn, 0, len, 0);
	return seqpkt(p, T_READ_RESP, e, len < seg ? len : seg,
		      len <= seg ? F_LAST : 0, r->ssn, 0, 1);
}

/* READ responses at an Offset beyond the READ's length or misaligned. */
static int c_rresp_offset(u8 *p)
{
	struct tqp *q;
	struct oread *r = live_read(&q);
	u32 seg, off, plen, len;
	u8 e[24];

	if (!r)
		return 0;
	seg = segsz(r->shift);
	len = r->len;
	switch (rn(3)) {
	case 0:		/* segment after the last one, consistent LAST */
		off = (len + seg - 1) / seg * seg;
		len = off + seg;	/* its own msg_len would fit */
		plen = seg;
		break;
	case 1:		/* misaligned */
		off = rn(len / seg) * seg + 1 + rn(seg - 1);
		plen = len - off < seg ? len - off : seg;
		break;
	default:	/* last segment with too much payload */
		off = (len - 1) / seg * seg;
		plen = seg + 4;
		break;
	}
	sx(e, r->shift, q->tqpn, q->pqpn, r->ssn, 0, len, off);
	return seqpkt(p, T_READ_RESP, e, plen, F_LAST, r->ssn, off, 1);
}

/* READ responses to requests never sent: SSNs the QP has not used. */
static int c_rresp_unsent(u8 *p)
{
	struct tqp *q = pick_qp('r', 1);
	u32 seg = segsz(g.css), ssn;
	u8 e[24];

	if (!q)
		return 0;
	ssn = rn(2) ? 100 + rn(1000) : (u32)-1 - rn(100);
	sx(e, g.css, q->tqpn, q->pqpn, ssn, 0, seg, 0);
	return seqpkt(p, T_READ_RESP, e, seg, F_LAST, ssn, 0, 1);
}

/* READ responses of a real open READ in another stream (QPN swapped). */
static int c_rresp_wrong_stream(u8 *p)
{
	struct oread *r = pick_read(1);
	struct tqp *q, *o = any_qp();
	u32 dq, sq;
	u8 e[24];

	if (!r || !o)
		return 0;
	q = &g.qp[r->qi];
	dq = q->tqpn;
	sq = q->pqpn;
	switch (rn(4)) {
	case 0: dq = o->tqpn; break;		/* another of our streams */
	case 1: sq = o->pqpn ^ (1 + rn(8)); break;
	case 2: dq = q->tqpn + 1 + rn(64); break; /* neighbours: other conns */
	default: dq = q->tqpn - 1 - rn(64); break;
	}
	if (dq == q->tqpn && sq == q->pqpn)
		sq ^= 0x800;
	sx(e, r->shift, dq, sq, r->ssn, 0, r->len, 0);
	return seqpkt(p, T_READ_RESP, e, segsz(r->shift) < r->len ?
		      segsz(r->shift) : r->len,
		      segsz(r->shift) < r->len ? 0 : F_LAST, r->ssn, 0, 1);
}

/* READ responses after the requester's QP was destroyed. */
static int c_rresp_after_destroy(u8 *p)
{
	struct oread *r = pick_read(0);

	if (!r)
		return 0;
	return read_resp(p, r, rn(r->nseg), 1);
}

/*
 * A segment the target holds, again, with other (poison) content.  The
 * target must hold it: a copy it dropped (a PLW another class moved makes
 * it late, say) leaves the poison the first copy, rightly placed.  So, as
 * psn_dup, in two steps on a path of its own (DUP2_PATH): a segment not
 * sent before, validly, with PSN = PLW (in the window, never late); once
 * the target's ACK reports that PSN received, the poison copy on path 0:
 * a stream-level duplicate, never placed.
 */
#define DUP2_PATH 62
static int c_rresp_dup_poison(u8 *p)
{
	struct oread *r;
	u32 s, k;
	int n;

	if (g.dp_state == 1)
		return 0;		/* waiting for the ACK */
	if (g.dp_state == 2) {
		g.dp_state = 0;
		r = &g.rd[g.dp_rd];
		if (g.qp[r->qi].closed)
			return 0;
		return read_resp(p, r, g.dp_seg, 1);
	}
	r = pick_read(1);
	if (!r || r->nseg < 2)
		return 0;
	/* not the last segment: the READ stays open for the other classes */
	for (k = 0, s = rn(r->nseg - 1); k < r->nseg - 1;
	     k++, s = (s + 1) % (r->nseg - 1))
		if (!rd_sent(r, s))
			break;
	if (k == r->nseg - 1)
		return 0;
	n = read_resp(p, r, s, 0);
	g.psn--;
	r->sent[s / 8] |= 1 << (s % 8);
	valid_sent[1]++;
	g.dp_psn++;
	g.dp_rd = r - g.rd;
	g.dp_seg = s;
	g.dp_state = 1;
	g.dp_at = now_s();
	p[5] = DUP2_PATH;
	put32(p + 16, g.dp_psn);
	put32(p + 20, g.dp_psn);
	return reseal(p, n);
}

/*
 * Response type confusion: an ATOMIC_RESP for an open READ; a READ_RESP
 * for the SSN after the QP's READs (the SEND the target posted).
 */
static int c_resp_type(u8 *p)
{
	struct tqp *q;
	struct oread *r = live_read(&q);
	u32 ssn;
	u8 e[32];

	if (!r)
		return 0;
	if (rn(2)) {
		sx(e, g.css, q->tqpn, q->pqpn, r->ssn, 0, 8, 0);
		put64(e + 24, 0xEEEEEEEEEEEEEEEEULL);
		return seqpkt(p, T_ATOMIC_RESP, e, 0, F_LAST, 0, 0, 1);
	}
	ssn = r->ssn;
	for (int i = 0; i < g.nrd; i++)
		if (g.rd[i].qi == r->qi && sdiff(g.rd[i].ssn, ssn) > 0)
			ssn = g.rd[i].ssn;
	ssn++;
	sx(e, g.css, q->tqpn, q->pqpn, ssn, 0, 64, 0);
	return seqpkt(p, T_READ_RESP, e, 64, F_LAST, ssn, 0, 1);
}

/* Payload Length against Seg Shift and LAST in a READ response. */
static int c_rresp_plen(u8 *p)
{
	struct tqp *q;
	struct oread *r = live_read(&q);
	u32 seg;
	u8 e[24];

	if (!r)
		return 0;
	seg = segsz(r->shift);
	sx(e, r->shift, q->tqpn, q->pqpn, r->ssn, 0, r->len, 0);
	/* short without LAST, or a full one with LAST in the middle */
	if (rn(2))
		return seqpkt(p, T_READ_RESP, e, seg - 1 - rn(seg - 1), 0,
			      r->ssn, 0, 1);
	return seqpkt(p, T_READ_RESP, e, seg, F_LAST, r->ssn, 0, 1);
}

/* Requests with an SSN beyond Completed SSN + message slots (NAK SEQUENCE). */
static int c_req_ssn_far(u8 *p)
{
	struct tqp *q = pick_qp('w', 1);
	u8 e[36];
	u32 ssn;

	if (!q)
		return 0;
	ssn = q->ssn + g.slots + 1 + rn(rn(2) ? 16 : 0x7fffffff);
	sx(e, g.css, q->tqpn, q->pqpn, ssn, 0, segsz(g.css), 0);
	put64(e + 24, q->va + REGION_C);
	put32(e + 32, q->rkey);
	return seqpkt(p, T_WRITE, e, segsz(g.css), F_LAST, ssn, 0, 1);
}

/* Requests with an SSN the target completed: content must be ignored. */
static int c_req_ssn_old(u8 *p)
{
	struct tqp *q = pick_qp('w', 1);
	u8 e[36];
	u32 ssn;

	if (!q || !q->have_completed)
		return 0;
	ssn = q->completed - rn(8);
	sx(e, g.css, q->tqpn, q->pqpn, ssn, 0, segsz(g.css), 0);
	put64(e + 24, q->va + REGION_C);
	put32(e + 32, q->rkey);
	return seqpkt(p, T_WRITE, e, segsz(g.css), F_LAST, ssn, 0, 1);
}

/* An old, completed request again under a PSN far below the path's. */
static int c_psn_late(u8 *p)
{
	int n = c_req_ssn_old(p);

	if (!n)
		return 0;
	put32(p + 16, g.psn - 2 - rn(60000));
	put32(p + 20, get32(p + 16));
	return reseal(p, n);
}

/*
 * A new request under a PSN the target already holds (path duplicate).
 * On a path of its own (DUP_PATH): on path 0 a PROBE may have moved the
 * PLW past our PSNs, and late packets go to the stream level, as they
 * must (spec 7.3.2).  In two steps: PSN+1 first, with a hole at PSN
 * (PLW = PSN), a harmless packet (an SSN the target completed long ago);
 * once the target's ACK reports PSN+1 (not before: packets sent from two
 * CPUs may be reordered on the way), PSN+1 again: a new single-segment
 * WRITE of poison to region C.  A duplicate at path level: never placed.
 */
#define DUP_PATH 63
static int c_psn_dup(u8 *p)
{
	struct tqp *q = pick_qp('w', 1);
	u32 psn = g.dup_psn, seg = segsz(g.css);
	u8 e[36];
	int n;

	if (!q)
		return 0;
	if (g.dup_state == 1 || g.dup_state == 3)
		return 0;		/* waiting for the ACK */
	if (g.dup_state == 2) {
		q = &g.qp[g.dup_qi];
		sx(e, g.css, q->tqpn, q->pqpn, q->ssn, 0, seg, 0);
		put64(e + 24, q->va + REGION_C);
		put32(e + 32, q->rkey);
		n = seqpkt(p, T_WRITE, e, seg, F_LAST, q->ssn, 0, 1);
		g.dup_psn = psn + 2;	/* the next PLW resolves the hole */
		/*
		 * Nothing more on the path until the target counted it (Rx
		 * Count): a next PLW overtaking it would make it late, and
		 * late packets go to the stream level.
		 */
		g.dup_state = 3;
		g.dup_at = now_s();
	} else {
		sx(e, g.css, q->tqpn, q->pqpn, q->ssn - 1000, 0, seg, 0);
		put64(e + 24, q->va + REGION_C);
		put32(e + 32, q->rkey);
		n = seqpkt(p, T_WRITE, e, seg, F_LAST, 0, 0, 0);
		g.dup_qi = q - g.qp;
		g.dup_state = 1;
		g.dup_at = now_s();
	}
	p[5] = DUP_PATH;
	put32(p + 16, psn + 1);
	put32(p + 20, psn);
	return reseal(p, n);
}

/* PSN outside [PLW, PLW + 256), or below the PLW. */
static int c_psn_window(u8 *p)
{
	struct tqp *q = pick_qp('w', 1);
	u32 psn;
	int n;

	if (!q)
		return 0;
	n = c_req_ssn_far(p);		/* poison content */
	psn = get32(p + 16);
	if (rn(2))
		put32(p + 20, psn + 1 + rn(1000));	/* PSN < PLW */
	else
		put32(p + 20, psn - 256 - rn(100000));	/* PSN >= PLW + 256 */
	return reseal(p, n);
}

/*
 * A PLW more than 65536 beyond the receiver's Cumulative PSN: beyond the
 * highest PLW of ours, not only our next PSN (a PROBE may have moved the
 * Cumulative PSN past it: a jump from there, accepted, would leave all
 * our valid packets on path 0 out of window).
 */
static int c_plw_jump(u8 *p)
{
	int n = c_req_ssn_far(p);
	u32 plw;

	if (!n)
		return 0;
	plw = top0() + 65537 + rn(0x7fff0000);
	put32(p + 20, plw);
	put32(p + 16, plw + rn(256));
	return reseal(p, n);
}

/* Path IDs: ours up to 63 with any PLW (new receive state), or >= 64. */
static int c_path_id(u8 *p)
{
	struct oread *r = pick_read(1);
	int n;

	if (!r)
		return 0;
	/* A valid duplicate content: a segment sent before, again. */
	for (u32 s = 0; s < r->nseg; s++)
		if (rd_sent(r, s)) {
			n = read_resp(p, r, s, 0);
			g.psn--;
			/* not DUP2_PATH or DUP_PATH */
			p[5] = rn(2) ? 64 + rn(192) : 1 + rn(DUP2_PATH - 1);
			put32(p + 16, (u32)rnd());
			put32(p + 20, get32(p + 16) - rn(200));
			return reseal(p, n);
		}
	return 0;
}

/*
 * The last valid WRITE of s QP q, in progress (not all segments sent):
 * starts one, its first segment sent validly, if there is none.  Its
 * index, or -1.
 */
static int inprog(struct tqp *q)
{
	u32 nseg = WCHUNK / segsz(g.css);
	u8 p[MAXPKT];
	int n;

	if (q->nmsg && q->msg_sent[q->nmsg - 1] < nseg)
		return q->nmsg - 1;
	n = valid_write_seg(p, q);
	if (n)
		emit(p, n, g.sport);
	return q->nmsg ? q->nmsg - 1 : -1;
}

/* Requests whose Message Length changes within a message. */
static int c_req_msglen_change(u8 *p)
{
	struct tqp *q = pick_qp('s', 1);
	u32 seg = segsz(g.css);
	u8 e[36];
	int n, m;

	if (!q)
		return 0;
	m = inprog(q);
	if (m < 0)
		return 0;
	sx(e, g.css, q->tqpn, q->pqpn, q->msg_ssn[m], 0,
	   rn(2) ? WCHUNK * 2 : WCHUNK - seg, seg);
	put64(e + 24, q->va + (u64)q->msg_chunk[m] * WCHUNK);
	put32(e + 32, q->rkey);
	n = seqpkt(p, T_WRITE, e, seg, 0, 0, 0, 1);
	return n;
}

/* Requests whose Seg Shift changes within a message. */
static int c_req_segshift_change(u8 *p)
{
	struct tqp *q = pick_qp('s', 1);
	u32 seg = segsz(g.css);
	u8 e[36], sh = g.css ? rn(g.css) : 0;
	int m;

	(void)seg;
	if (!q)
		return 0;
	m = inprog(q);
	if (m < 0)
		return 0;
	sx(e, sh, q->tqpn, q->pqpn, q->msg_ssn[m], 0, WCHUNK,
	   segsz(sh) * (1 + rn(WCHUNK / segsz(sh) - 1)));
	put64(e + 24, q->va + (u64)q->msg_chunk[m] * WCHUNK);
	put32(e + 32, q->rkey);
	return seqpkt(p, T_WRITE, e, segsz(sh), 0, 0, 0, 1);
}

/* WRITE segments whose VA or R_Key changes within a message. */
static int c_req_rx_change(u8 *p)
{
	struct tqp *q = pick_qp('s', 1);
	u32 seg = segsz(g.css);
	u8 e[36];
	int m;

	if (!q)
		return 0;
	m = inprog(q);
	if (m < 0)
		return 0;
	sx(e, g.css, q->tqpn, q->pqpn, q->msg_ssn[m], 0, WCHUNK,
	   seg * (1 + rn(WCHUNK / seg - 1)));
	put64(e + 24, q->va + REGION_C - (rn(2) ? 0 : 4096));
	put32(e + 32, rn(2) ? q->rkey : q->rkey ^ (1 + rn(255)));
	return seqpkt(p, T_WRITE, e, seg, 0, 0, 0, 1);
}

/*
 * Huge Message Length with an Offset near its end, always past the MR: a
 * segment that falls inside the MR is a valid WRITE, rightly placed (seen:
 * 256 KiB messages into the 320 KiB MR).
 */
static int c_req_huge_offset(u8 *p)
{
	struct tqp *q = pick_qp('s', 1);
	u8 e[36], sh = rn(g.css + 1);
	u32 seg = segsz(sh), len, off;

	if (!q)
		return 0;
	len = rn(2) ? 0x80000000u : (0x10000u << rn(15));
	if (len < (u64)q->len + 4 * seg)
		len = 0x80000000u;
	off = len - seg * (1 + rn(4));
	sx(e, sh, q->tqpn, q->pqpn, q->ssn + rn(4), 0, len, off);
	put64(e + 24, q->va);
	put32(e + 32, q->rkey);
	return seqpkt(p, T_WRITE, e, seg, off + seg == len ? F_LAST : 0,
		      0, 0, 1);
}

/*
 * Offsets beyond the segment window of a message in progress, on the g QP:
 * no other class touches it (a stream another class failed drops nothing
 * for the window), and each SSN (8 to 15 ahead) has one Message Length and
 * one MSN, so the window drop is all its packets ever cause.
 */
static int c_req_seg_window(u8 *p)
{
	struct tqp *q = pick_qp('g', 0);
	u32 seg = segsz(g.css), len = seg * 4096, off, k = 8 + rn(8);
	u8 e[24];

	if (!q)
		return 0;
	off = seg * (2048 + rn(2048));
	sx(e, g.css, q->tqpn, q->pqpn, q->ssn + k, q->msn + k % 3, len, off);
	return seqpkt(p, T_SEND, e, seg, off + seg == len ? F_LAST : 0, 0, 0, 1);
}

/* A SEND whose MSN is beyond the receives the message slots allow. */
static int c_req_msn_far(u8 *p)
{
	struct tqp *q = pick_qp('s', 1);
	u8 e[24];

	if (!q)
		return 0;
	sx(e, g.css, q->tqpn, q->pqpn, q->ssn, q->msn + g.slots + rn(1000000),
	   64, 0);
	return seqpkt(p, T_SEND, e, 64, F_LAST, 0, 0, 1);
}

/* WRITE/READ_REQ ranges against the MR: past its end, foreign R_Key. */
static int c_req_rkey_range(u8 *p)
{
	struct tqp *q = pick_qp('s', 1);
	u8 e[36];
	u32 len = rn(2) ? 64 : 0x80000000u;
	u64 va;

	if (!q)
		return 0;
	va = rn(2) ? q->va + q->len - 8 : q->va - 64 - rn(4096);
	sx(e, g.css, q->tqpn, q->pqpn, q->ssn, 0, len, 0);
	put64(e + 24, va);
	put32(e + 32, rn(4) ? q->rkey : q->rkey + 1);
	if (rn(2))
		return seqpkt(p, T_READ_REQ, e, 0, F_LAST, 0, 0, 1);
	if (len > 64)
		len = segsz(g.css);
	return seqpkt(p, T_WRITE, e, 64, len == 64 ? F_LAST : 0, 0, 0, 1);
}

/* ATOMIC at a VA that is not a multiple of 8, or Message Length not 8. */
static int c_req_atomic(u8 *p)
{
	struct tqp *q = pick_qp('s', 1);
	u8 e[56];

	if (!q)
		return 0;
	memset(e, 0, sizeof(e));
	sx(e, g.css, q->tqpn, q->pqpn, q->ssn, 0, rn(2) ? 8 : rn(64), 0);
	put64(e + 24, q->va + REGION_C + 1 + rn(7));
	put64(e + 32, 0xEEEEEEEEEEEEEEEEULL);
	put32(e + 48, q->rkey);
	return seqpkt(p, rn(2) ? T_ATOMIC_FA : T_ATOMIC_CS, e, 0, F_LAST, 0, 0, 1);
}

/* LAST flag against Offset + Payload Length == Message Length. */
static int c_last_flag(u8 *p)
{
	struct tqp *q = pick_qp('w', 1);
	u32 seg = segsz(g.css);
	u8 e[36];
	int mid = rn(2);

	if (!q)
		return 0;
	/* LAST on a middle segment, or none on the final one */
	sx(e, g.css, q->tqpn, q->pqpn, q->ssn, 0, mid ? 4 * seg : seg, 0);
	put64(e + 24, q->va + REGION_C);
	put32(e + 32, q->rkey);
	return seqpkt(p, T_WRITE, e, seg, mid ? F_LAST : 0, 0, 0, 1);
}

/* HdrLen one word off the type's, payload length kept consistent. */
static int c_ext_len(u8 *p)
{
	int n = c_last_flag(p), hdr;

	if (!n)
		return 0;
	/* A valid single-segment WRITE to region C, then the HdrLen moved. */
	p[2] |= F_LAST >> 8;
	put32(p + 32 + 16, segsz(g.css));
	hdr = p[4] * 4 + (rn(2) ? 4 : -4) * (1 + rn(3));
	p[4] = hdr / 4;
	put16(p + 6, n - 4 - hdr);
	return reseal(p, n);
}

/* A payload in a type without one (READ_REQ, ATOMIC, STREAM_CLOSE). */
static int c_payload_none(u8 *p)
{
	static const u8 t[] = { T_READ_REQ, T_ATOMIC_FA, T_STREAM_CLOSE,
				T_ATOMIC_RESP };
	struct tqp *q = pick_qp('w', 1);
	u8 e[56], type = t[rn(4)];

	if (!q)
		return 0;
	memset(e, 0, sizeof(e));
	sx(e, g.css, q->tqpn, q->pqpn, q->ssn + g.slots + 5, 0,
	   type == T_STREAM_CLOSE ? 0 : 8, 0);
	put64(e + 24, q->va + REGION_C);
	return seqpkt(p, type, e, 4 + 4 * rn(8), F_LAST, 0, 0, 1);
}

/* STREAM_CLOSE for a sacrificial stream with any Reason, NAK and SSN. */
static int c_stream_close(u8 *p)
{
	struct tqp *q = pick_qp('s', 1);
	u8 e[32];

	if (!q)
		return 0;
	sx(e, g.css, q->tqpn, q->pqpn, (u32)rnd(), 0, 0, 0);
	e[24] = rn(5);
	e[25] = rn(10);
	e[26] = rnd();
	e[27] = 0;
	put32(e + 28, (u32)rnd());
	return seqpkt(p, T_STREAM_CLOSE, e, 0, F_LAST, 0, 0, 0);
}

/*
 * A poison WRITE to region C carrying an AKX (flag AKX, spec 8.6) with
 * one defect the receiver must drop the whole packet for (MRC-ACK-020):
 * Num SR not 0, Reserved not 0, or an Acked Path ID the target does not
 * send on.  Placed, the poison would show in region C.
 */
static int c_cack_malformed(u8 *p)
{
	struct tqp *q = pick_qp('w', 1);
	int bad = rn(3), hdr = 32 + 36 + 52;
	u32 id = 0;
	u8 *a = p + 32 + 36;
	u32 psn;

	if (!q)
		return 0;
	for (int i = 0; i < 4; i++)
		if (g.rxp[i].seen)
			id = i;
	psn = g.psn++;
	bth(p, T_WRITE, hdr, 64, F_LAST | F_AR | F_AKX, 0, psn, psn);
	sx(p + 32, g.css, q->tqpn, q->pqpn, q->ssn, 0, 64, 0);
	put64(p + 56, q->va + REGION_C);
	put32(p + 64, q->rkey);
	memset(a, 0, 52);
	put32(a, g.rxp[id].cum);
	put32(a + 8, g.rxp[id].rx);
	a[16] = bad == 0 ? 1 + rn(58) : 0;		/* Num SR */
	a[18] = bad == 2 ? 64 + rn(192) : id;		/* Acked Path ID */
	a[19] = bad == 1 ? 1 + rn(255) : 0;		/* Reserved */
	memset(p + hdr, POISON, 64);
	p[hdr] = cur_class + 1;
	return seal(p, hdr + 64);
}

/* ACK of a target path with a Cumulative PSN at or beyond its next PSN. */
static int c_ack_cum(u8 *p)
{
	int ids[256], n = 0;
	struct rxpath *x;
	u32 cum;

	for (int i = 0; i < 256; i++)
		if (g.rxp[i].seen)
			ids[n++] = i;
	if (!n)
		return 0;
	x = &g.rxp[ids[rn(n)]];
	cum = rn(2) ? x->next + rn(1000) : x->next - 65537 - rn(1000000);
	bth(p, T_ACK, 84, 0, 0, x - g.rxp, g.ack_seq++, 0);
	memset(p + 32, 0, 52);
	put32(p + 32, cum);
	put32(p + 40, x->rx);
	return seal(p, 84);
}

/* ACK with SACK bits for PSNs the target never sent. */
static int c_ack_sack(u8 *p)
{
	int ids[256], n = 0, k;
	struct rxpath *x;
	u32 cum;

	for (int i = 0; i < 256; i++)
		if (g.rxp[i].seen)
			ids[n++] = i;
	if (!n)
		return 0;
	x = &g.rxp[ids[rn(n)]];
	cum = x->next - 1 - rn(4);
	bth(p, T_ACK, 84, 0, 0, x - g.rxp, g.ack_seq++, 0);
	memset(p + 32, 0, 52);
	put32(p + 32, cum);
	put32(p + 40, x->rx);
	k = sdiff(x->next, cum) + rn(250);	/* bit k-1: PSN cum+k */
	if (k > 255)
		k = 255;
	p[52 + k / 8] |= 0x80 >> (k % 8);
	if (rn(2))
		memset(p + 52, 0xff, 32);
	return seal(p, 84);
}

/* ACK/SYNC/PROBE_REPLY shorter than their counts say (lengths first). */
static int c_ctrl_short(u8 *p)
{
	static const u8 t[] = { T_ACK, T_SYNC, T_PROBE_REPLY, T_NAK, T_PROBE };
	u8 type = t[rn(5)];
	int hdr = 32 + 4 * rn(6);

	bth(p, type, hdr, 0, 0, rn(4), g.ack_seq++, 0);
	memset(p + 32, 0, 32);
	/* What a count field would read beyond the header. */
	for (int i = 32; i < hdr; i++)
		p[i] = rnd();
	return seal(p, hdr);
}

/* Stream Records with impossible relations (Completed SSN, QPNs, credit). */
static int c_ack_sr(u8 *p)
{
	int ids[256], n = 0, nsr = 1 + rn(4);
	struct rxpath *x;
	struct tqp *q;

	for (int i = 0; i < 256; i++)
		if (g.rxp[i].seen)
			ids[n++] = i;
	if (!n)
		return 0;
	x = &g.rxp[ids[rn(n)]];
	bth(p, T_ACK, 84 + 16 * nsr, 0, 0, x - g.rxp, g.ack_seq++, 0);
	memset(p + 32, 0, 52);
	put32(p + 32, x->cum);
	put32(p + 40, x->rx);
	memcpy(p + 52, x->got, 32);
	for (int i = 0; i < nsr; i++) {
		u8 *s = p + 84 + 16 * i;
		u8 fl = (rn(2) ? 0x80 : 0) | (rn(4) ? 0 : 0x40) | (rn(8) ? 0 : 0x20);

		q = any_qp();
		put32(s, (u32)fl << 24 | q->pqpn);
		put32(s + 4, rn(4) ? q->tqpn : q->tqpn + 1 + rn(100));
		/* beyond what the target sent; or far back */
		put32(s + 8, rn(2) ? 1000 + (u32)rnd() % 100000 : (u32)-2 - rn(100));
		put32(s + 12, rn(2) ? (u32)rnd() : (u32)-1);
	}
	return seal(p, 84 + 16 * nsr);
}

/* NAKs with every code for SSNs that are not outstanding, wrong QPNs. */
static int c_nak(u8 *p)
{
	struct tqp *q = any_qp();

	if (!q)
		return 0;
	bth(p, T_NAK, 56, 0, 0, rn(4), g.ack_seq++, 0);
	put32(p + 32, (u32)rn(12) << 24 | (rn(4) ? q->pqpn : (u32)rnd()));
	put32(p + 36, (u32)rn(8) << 24 | (rn(4) ? q->tqpn : q->tqpn + 1));
	put32(p + 40, 5000 + rn(1000000));	/* SSN never used */
	put32(p + 44, (u32)rnd());
	put32(p + 48, (u32)rnd());
	/* Completed SSN: nothing the target sent is covered */
	put32(p + 52, (u32)-1 - rn(1000));
	return seal(p, 56);
}

/* SYNC entries naming our streams with any Oldest Pending SSN. */
static int c_sync(u8 *p)
{
	int n = 1 + rn(rn(8) ? 4 : 64), hdr = 36 + 12 * n;
	u8 id = rn(2) ? rn(4) : rn(256);

	bth(p, T_SYNC, hdr, 0, 0,
	    id == DUP_PATH || id == DUP2_PATH ? 0 : id, 0, 0);
	p[32] = rn(16) ? (u8)n : (u8)rnd();
	p[33] = p[34] = p[35] = 0;
	for (int i = 0; i < n; i++) {
		u8 *e = p + 36 + 12 * i;
		struct tqp *q = any_qp();

		put32(e, rn(8) ? q->pqpn : (u32)rnd() & 0xffffff);
		put32(e + 4, rn(8) ? q->tqpn : q->tqpn + rn(5));
		put32(e + 8, rn(2) ? q->ssn + rn(5) : (u32)rnd());
	}
	return seal(p, hdr);
}

/*
 * PROBE: payload without the MTU flag, too long, any PLW on any path; on
 * our path 0 at most PLW0_AHEAD past our next PSN: the target's
 * Cumulative PSN then stays less than 65536 above our PSNs, so that our
 * valid packets below it are late and go to the stream level (spec
 * 7.3.2); 65536 below it or more they would be out of window, dropped
 * (every READ response of the completion phase, seen).
 */
#define PLW0_AHEAD 60000
static int c_probe(u8 *p)
{
	int plen = rn(3) ? (segsz(g.css) + 24 + rn(2) * (1 + rn(64))) : 0;
	u8 id = rn(2) ? 1 + rn(62) : rn(256);
	u32 plw = g.psn + (rn(2) ? 0 : rn(id ? 100000 : PLW0_AHEAD));

	if (id == DUP_PATH || id == DUP2_PATH)
		id = DUP2_PATH - 1;
	if (!id && sdiff(plw, top0()) > 0)
		g.plw0 = plw;
	bth(p, T_PROBE, 48, plen, 0, id, plw, plw);
	put32(p + 32, (u32)rnd());
	p[36] = rn(2) ? 0x80 : rnd();
	memset(p + 37, 0, 11);
	memset(p + 48, 0, plen);
	return seal(p, 48 + plen);
}

/* A request packet with a Token one bit off: dropped, nothing placed. */
static int c_token(u8 *p)
{
	int n = c_last_flag(p);

	if (!n)
		return 0;
	p[2] |= F_LAST >> 8;
	put32(p + 32 + 16, segsz(g.css));
	p[24 + rn(8)] ^= 1 << rn(8);
	return reseal(p, n);
}

/* ... with an SCID other than ours. */
static int c_scid(u8 *p)
{
	int n = c_token(p);

	if (!n)
		return 0;
	put64(p + 24, g.peer_token);
	put32(p + 12, rn(2) ? g.cid ^ (1 + rn(255)) : 0);
	return reseal(p, n);
}

/* ... with a DCID next to the target's (other connections) or 0. */
static int c_dcid(u8 *p)
{
	int n = c_token(p);

	if (!n)
		return 0;
	/*
	 * DCID 0 with our own token would be the pre-handshake form, valid
	 * (spec 6.3.3): with DCID 0 the target's token, which is not.
	 */
	if (rn(4)) {
		put32(p + 8, g.peer_cid + (rn(2) ? 1 + rn(8) : -1 - rn(8)));
		put64(p + 24, rn(2) ? g.peer_token : g.token);
	} else {
		put32(p + 8, 0);
		put64(p + 24, g.peer_token);
	}
	return reseal(p, n);
}

/* RESET with the right SCID but a wrong Token, or a bad Reason. */
static int c_reset(u8 *p)
{
	bth(p, T_RESET, 48, 0, 0, 0, 0, 0);
	if (rn(2))
		p[24 + rn(8)] ^= 1 << rn(8);	/* wrong token */
	else
		put32(p + 12, g.cid + 1);	/* another SCID */
	memset(p + 32, 0, 16);
	p[32] = rn(4) ? 1 + rn(6) : rnd();
	p[33] = 0x11;
	put64(p + 36, g.epoch ^ (1 + rn(1000)));
	return seal(p, 48);
}

/* CONNECT_ACK / CONN_CLOSE / CONNECT in an established connection. */
static int c_conn_ctrl(u8 *p)
{
	int n;

	switch (rn(3)) {
	case 0:	/* our CONNECT again: a resend, same CID, token, epoch */
		memcpy(p, g.connect_pkt, g.connect_len);
		return g.connect_len;
	case 1:	/* a CONNECT_ACK with our CID and a wrong token */
		memcpy(p, g.connect_pkt, g.connect_len);
		n = g.connect_len;
		p[1] = T_CONNECT_ACK;
		put32(p + 8, g.peer_cid);
		put64(p + 24, g.peer_token ^ (1 + rn(255)));
		return reseal(p, n);
	default: /* CONN_CLOSE with any Op */
		bth(p, T_CONN_CLOSE, 40, 0, 0, 0, 0, 0);
		p[32] = rn(6);
		memset(p + 33, 0, 3);
		put32(p + 36, rn(4));
		return seal(p, 40);
	}
}

/* A CONNECT from our address, our CID, another epoch: peer restart. */
static int c_epoch_restart(u8 *p)
{
	int n = g.connect_len;

	memcpy(p, g.connect_pkt, n);
	put64(p + 36, g.epoch + 1 + rn(1000));	/* CX Epoch */
	g.conn_dead = 1;
	return reseal(p, n);
}

/* Packets of the connection after it died: old DCID, token, streams. */
static int c_after_conn_death(u8 *p)
{
	struct oread *r = pick_read(1);

	int n;

	if (r && rn(2))
		return read_resp(p, r, rn(r->nseg), 1);
	n = c_ack_sr(p);
	return n ? n : c_sync(p);
}

static struct cls classes[] = {
	{ "rresp_segshift", c_rresp_segshift, 0, 0 },
	{ "rresp_msglen", c_rresp_msglen, 0, 0 },
	{ "rresp_offset", c_rresp_offset, 0, 0 },
	{ "rresp_unsent_ssn", c_rresp_unsent, 0, 0 },
	{ "rresp_wrong_stream", c_rresp_wrong_stream, 0, 0 },
	{ "rresp_after_destroy", c_rresp_after_destroy, 0, 0 },
	{ "rresp_dup_poison", c_rresp_dup_poison, 0, 0 },
	{ "resp_type_confusion", c_resp_type, 0, 0 },
	{ "rresp_plen", c_rresp_plen, 0, 0 },
	{ "req_ssn_far", c_req_ssn_far, 0, 0 },
	{ "req_ssn_old", c_req_ssn_old, 0, 0 },
	{ "psn_late", c_psn_late, 0, 0 },
	{ "psn_dup", c_psn_dup, 0, 0 },
	{ "psn_window", c_psn_window, 0, 0 },
	{ "plw_jump", c_plw_jump, 0, 0 },
	{ "path_id", c_path_id, 0, 0 },
	{ "req_msglen_change", c_req_msglen_change, 0, 0 },
	{ "req_segshift_change", c_req_segshift_change, 0, 0 },
	{ "req_rx_change", c_req_rx_change, 0, 0 },
	{ "req_huge_offset", c_req_huge_offset, 0, 0 },
	{ "req_seg_window", c_req_seg_window, 0, 0 },
	{ "req_msn_far", c_req_msn_far, 0, 0 },
	{ "req_rkey_range", c_req_rkey_range, 0, 0 },
	{ "req_atomic", c_req_atomic, 0, 0 },
	{ "last_flag", c_last_flag, 0, 0 },
	{ "ext_len", c_ext_len, 0, 0 },
	{ "payload_none", c_payload_none, 0, 0 },
	{ "stream_close", c_stream_close, 0, 0 },
	{ "cack_malformed", c_cack_malformed, 0, 0 },
	{ "ack_cum", c_ack_cum, 0, 0 },
	{ "ack_sack", c_ack_sack, 0, 0 },
	{ "ctrl_short", c_ctrl_short, 0, 0 },
	{ "ack_sr", c_ack_sr, 0, 0 },
	{ "nak", c_nak, 0, 0 },
	{ "sync", c_sync, 0, 0 },
	{ "probe", c_probe, 0, 0 },
	{ "token", c_token, 0, 0 },
	{ "scid", c_scid, 0, 0 },
	{ "dcid", c_dcid, 0, 0 },
	{ "reset", c_reset, 0, 0 },
	{ "conn_ctrl", c_conn_ctrl, 0, 0 },
	{ "epoch_restart", c_epoch_restart, 1, 0 },
	{ "after_conn_death", c_after_conn_death, 1, 0 },
};
#define NCLASS ((int)(sizeof(classes) / sizeof(classes[0])))

/* ---- receiving ------------------------------------------------------------ */

static void rx_record(struct rxpath *x, u32 psn, u32 plw)
{
	int32_t d;

	x->rx++;
	if (!x->seen) {
		x->seen = 1;
		x->cum = plw - 1;
		x->next = psn + 1;
	}
	if (sdiff(psn + 1, x->next) > 0)
		x->next = psn + 1;
	d = sdiff(plw - 1, x->cum);
	if (d > 0) {
		/* shift the bitmap by d */
		u8 nb[32] = {};

		for (int i = 0; i < 256; i++)
			if ((int)(i - d) >= 0 && (x->got[i / 8] & (0x80 >> (i % 8))))
				nb[(i - d) / 8] |= 0x80 >> ((i - d) % 8);
		memcpy(x->got, nb, 32);
		x->cum = plw - 1;
	}
	d = sdiff(psn, x->cum);
	if (d >= 1 && d <= 256)
		x->got[(d - 1) / 8] |= 0x80 >> ((d - 1) % 8);
	/* settle */
	while (x->got[0] & 0x80) {
		u8 nb[32] = {};

		for (int i = 1; i < 256; i++)
			if (x->got[i / 8] & (0x80 >> (i % 8)))
				nb[(i - 1) / 8] |= 0x80 >> ((i - 1) % 8);
		memcpy(x->got, nb, 32);
		x->cum++;
	}
}

/* Our ACK (or PROBE_REPLY echoing pbx) of the target's path id. */
static void send_ack(u8 id, u16 sport, const u8 *pbx)
{
	struct rxpath *x = &g.rxp[id];
	u8 p[MAXPKT];
	int off = pbx ? 48 : 32;

	bth(p, pbx ? T_PROBE_REPLY : T_ACK, off + 52, 0, 0, id, g.ack_seq++, 0);
	if (pbx)
		memcpy(p + 32, pbx, 16);
	memset(p + off, 0, 52);
	if (x->seen) {
		put32(p + off, x->cum);
		put32(p + off + 8, x->rx);
		memcpy(p + off + 20, x->got, 32);
	} else {
		p[off + 17] = 0x80;	/* NO_STATE */
	}
	emit(p, seal(p, off + 52), sport);
	valid_sent[3]++;
}

static void learn_read(const u8 *d)
{
	u32 dq = get32(d + 32) & 0xffffff, sq = get32(d + 36) & 0xffffff;
	u32 ssn = get32(d + 40), len = get32(d + 48);
	u8 shift = d[32] >> 4;
	struct tqp *q = qp_by_tqpn(sq);
	struct oread *r;

	if (!q || q->pqpn != dq || shift > 4 || !len || len > 1u << 20)
		return;
	for (int i = 0; i < g.nrd; i++)
		if (g.rd[i].qi == q - g.qp && g.rd[i].ssn == ssn)
			return;		/* resent */
	if (g.nrd == MAXREAD)
		return;
	r = &g.rd[g.nrd++];
	memset(r, 0, sizeof(*r));
	r->qi = q - g.qp;
	r->ssn = ssn;
	r->len = len;
	r->shift = shift;
	r->nseg = (len + segsz(shift) - 1) / segsz(shift);
	if (r->nseg > 2048)
		r->nseg = 2048;
	rx_learn_reads++;
}

static void dead_qp(u32 tqpn, int closed)
{
	struct tqp *q = qp_by_tqpn(tqpn);

	if (!q)
		return;
	q->dead = 1;
	if (closed)
		q->closed = 1;
}

static void rx_packet(const u8 *d, int n, u16 sport)
{
	u8 type;
	u32 psn, plw;
	u8 id;

	if (n < 36 || d[0] >> 4 != 1 || get32(d + 8) != g.cid)
		return;
	rx_pkts++;
	type = d[1];
	id = d[5];
	psn = get32(d + 16);
	plw = get32(d + 20);
	if (type >= 1 && type <= 0x1f) {
		rx_record(&g.rxp[id], psn, plw);
		g.rxp[id].sport = sport;
		if (type == T_READ_REQ && n >= 32 + 36)
			learn_read(d);
		if (type == T_STREAM_CLOSE && n >= 56) {
			dead_qp(get32(d + 36) & 0xffffff, 1);
			rx_closes++;
		}
		send_ack(id, sport, NULL);
		return;
	}
	switch (type) {
	case T_PROBE:
		rx_probes++;
		if (n >= 48) {
			/* PLW applies to our receive state (7.6) */
			if (g.rxp[id].seen && sdiff(plw - 1, g.rxp[id].cum) > 0)
				rx_record(&g.rxp[id], plw - 1, plw);
			send_ack(id, sport, d + 32);
		}
		break;
	case T_ACK:
		rx_acks++;
		if (n >= 84) {
			int nsr = d[48];

			if (id == 0) {
				g.our_cum0 = get32(d + 32);
				g.have_cum0 = 1;
			}
			/* (a NO_STATE ACK, as for a SYNC on that path, says nothing) */
			if (id == DUP_PATH && g.dup_state == 1 && !(d[49] & 0x80)) {
				/* PSN dup_psn + 1 received: at or below cum, or SACKed */
				int32_t k = sdiff(g.dup_psn + 1, get32(d + 32));

				if (k <= 0 || (k <= 256 &&
					       d[52 + (k - 1) / 8] & (0x80 >> ((k - 1) % 8)))) {
					g.dup_state = 2;
					g.dup_rx = get32(d + 40);
				}
			} else if (id == DUP2_PATH && g.dp_state == 1 &&
				   !(d[49] & 0x80)) {
				/* PSN dp_psn received (PLW was dp_psn) */
				int32_t k = sdiff(g.dp_psn, get32(d + 32));

				if (k <= 0 || (k <= 256 &&
					       d[52 + (k - 1) / 8] & (0x80 >> ((k - 1) % 8))))
					g.dp_state = 2;
			} else if (id == DUP_PATH && g.dup_state == 3 &&
				   !(d[49] & 0x80) &&
				   sdiff(get32(d + 40), g.dup_rx) > 0) {
				g.dup_state = 0;	/* the duplicate was counted */
			}
			for (int i = 0; i < nsr && 84 + 16 * i + 16 <= n; i++) {
				const u8 *s = d + 84 + 16 * i;
				struct tqp *q = qp_by_tqpn(get32(s + 4) & 0xffffff);

				if (q && q->pqpn == (get32(s) & 0xffffff))
					writes_completed(q, get32(s + 8));
			}
		}
		break;
	case T_NAK:
		rx_naks++;
		if (n >= 56) {
			u8 code = d[32];
			struct tqp *q = qp_by_tqpn(get32(d + 36) & 0xffffff);

			/* Not our stream (a forged QPN pair): ignored. */
			if (q && q->pqpn != (get32(d + 32) & 0xffffff))
				q = NULL;
			if (code >= 3 && code <= 6 && q) {
				rx_fatal_naks++;
				q->dead = 1;
			}
			if (code == 8 && q)
				q->dead = 1;
		}
		break;
	case T_SYNC:
		rx_syncs++;
		break;
	case T_RESET:
		rx_resets++;
		break;
	default:
		break;
	}
}

/*
 * The target's packets: each frame has a virtio header in front
 * (PACKET_VNET_HDR, for SOCK_RAW only: the Ethernet header follows),
 * whose segment size cuts a UDP GSO batch, which crosses a veth whole,
 * into the datagrams a wire would carry.
 */
static void rx_drain(void)
{
	static u8 frame[sizeof(struct virtio_net_hdr) + ETH_HLEN + 65536];
	struct virtio_net_hdr *vh = (struct virtio_net_hdr *)frame;
	u8 *buf = frame + sizeof(*vh) + ETH_HLEN;
	struct sockaddr_ll sll;
	socklen_t sl;
	int n, seg, off;

	for (int k = 0; k < 256; k++) {
		sl = sizeof(sll);
		n = recvfrom(rx_sock, frame, sizeof(frame), MSG_DONTWAIT,
			     (struct sockaddr *)&sll, &sl);
		if (n < 0)
			break;
		n -= sizeof(*vh) + ETH_HLEN;
		if (sll.sll_pkttype == PACKET_OUTGOING || n < 28)
			continue;
		{
			const struct iphdr *ip = (const struct iphdr *)buf;
			int ihl = ip->ihl * 4, ulen;

			if (ip->protocol != IPPROTO_UDP || ip->saddr != g.target ||
			    ip->daddr != g.local || n < ihl + 8)
				continue;
			if (get16(buf + ihl + 2) != 4793)
				continue;
			ulen = get16(buf + ihl + 4);
			if (ulen < 8 || ihl + ulen > n)
				continue;
			ulen -= 8;
			seg = vh->gso_type != VIRTIO_NET_HDR_GSO_NONE &&
			      vh->gso_size ? vh->gso_size : ulen;
			for (off = 0; off < ulen; off += seg)
				rx_packet(buf + ihl + 8 + off,
					  ulen - off < seg ? ulen - off : seg,
					  get16(buf + ihl));
		}
	}
	flush_out();
}

/* ---- setup ------------------------------------------------------------------ */

static int load_state(const char *path)
{
	static const struct { const char *key; void *p; int size; } num[] = {
		{ "sport", &g.sport, 2 }, { "cid", &g.cid, 4 },
		{ "peer_cid", &g.peer_cid, 4 }, { "token", &g.token, 8 },
		{ "peer_token", &g.peer_token, 8 }, { "epoch", &g.epoch, 8 },
		{ "psn", &g.psn, 4 }, { "css", &g.css, 1 },
		{ "slots", &g.slots, 4 },
	};
	char line[8192], key[64], a[4096];
	FILE *f = fopen(path, "r");
	size_t k;

	if (!f) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %4095s", key, a) < 2)
			continue;
		if (!strcmp(key, "target") || !strcmp(key, "local")) {
			inet_pton(AF_INET, a, key[0] == 't' ? &g.target : &g.local);
			continue;
		}
		for (k = 0; k < sizeof(num) / sizeof(num[0]); k++)
			if (!strcmp(key, num[k].key))
				break;
		if (k < sizeof(num) / sizeof(num[0])) {
			unsigned long long v = strtoull(a, NULL, 0);

			switch (num[k].size) {
			case 1: *(u8 *)num[k].p = v; break;
			case 2: *(u16 *)num[k].p = v; break;
			case 4: *(u32 *)num[k].p = v; break;
			default: *(u64 *)num[k].p = v; break;
			}
		}
		else if (!strcmp(key, "connect")) {
			int n = 0;

			for (char *h = a; h[0] && h[1] && n < MAXPKT; h += 2) {
				unsigned int b;

				sscanf(h, "%2x", &b);
				g.connect_pkt[n++] = b;
			}
			g.connect_len = n;
		} else if (!strcmp(key, "qp") && g.nqp < MAXQP) {
			struct tqp *q = &g.qp[g.nqp];
			unsigned long long va;
			char role;

			if (sscanf(line, "qp %i %i %i %lli %i %c", &q->tqpn,
				   &q->pqpn, &q->rkey, &va, &q->len, &role) != 6)
				continue;
			q->va = va;
			q->role = role;
			g.nqp++;
		}
	}
	fclose(f);
	if (!g.target || !g.local || !g.cid || !g.peer_cid || !g.nqp ||
	    g.connect_len < 36) {
		fprintf(stderr, "mrsfuzz: %s lacks target/local/cid/peer_cid/connect/qp\n",
			path);
		return -1;
	}
	if (!g.slots)
		g.slots = 1024;
	g.ack_seq = (u32)rnd();
	g.dup_psn = (u32)rnd();
	g.dp_psn = (u32)rnd();
	return 0;
}

static int open_sockets(void)
{
	struct ifaddrs *ifa, *i;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_IP) };
	int one = 1, buf = 16 << 20;

	tx_sock = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (tx_sock < 0) {
		perror("raw socket");
		return -1;
	}
	setsockopt(tx_sock, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one));
	setsockopt(tx_sock, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	rx_sock = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_IP));
	if (rx_sock < 0) {
		perror("packet socket");
		return -1;
	}
	setsockopt(rx_sock, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	if (setsockopt(rx_sock, SOL_PACKET, PACKET_VNET_HDR, &one,
		       sizeof(one))) {
		perror("PACKET_VNET_HDR");
		return -1;
	}
	if (getifaddrs(&ifa))
		return -1;
	for (i = ifa; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == g.local)
			sll.sll_ifindex = if_nametoindex(i->ifa_name);
	freeifaddrs(ifa);
	if (!sll.sll_ifindex) {
		fprintf(stderr, "mrsfuzz: no interface has the local address\n");
		return -1;
	}
	if (bind(rx_sock, (struct sockaddr *)&sll, sizeof(sll))) {
		perror("bind packet socket");
		return -1;
	}
	return 0;
}

/* Is name an item of the comma-separated list? */
static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return 1;
	return 0;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Wait up to secs for traffic, keeping the connection. */
static void keep(double secs)
{
	double end = now_s() + secs;
	struct pollfd pf = { .fd = rx_sock, .events = POLLIN };

	while (now_s() < end) {
		poll(&pf, 1, 20);
		rx_drain();
	}
}

/*
 * Valid responses to the open READs of QPs still there: with all, every
 * segment (then the READ is complete; resent ones are duplicates); else a
 * third of the segments not answered yet, never the last one (the READ
 * stays open).
 */
static void answer_reads(int all)
{
	u8 p[MAXPKT];

	for (int i = 0; i < g.nrd; i++) {
		struct oread *r = &g.rd[i];

		if (g.qp[r->qi].closed)
			continue;
		for (u32 s = 0; s < r->nseg; s++) {
			if (!all && (s + 1 == r->nseg || rd_sent(r, s) || rn(3)))
				continue;
			emit(p, read_resp(p, r, s, 0), g.sport);
			r->sent[s / 8] |= 1 << (s % 8);
			valid_sent[1]++;
			if (nout >= BATCH)
				rx_drain();
		}
		r->done |= all;
	}
	rx_drain();
}

int main(int argc, char **argv)
{
	const char *state = NULL, *report = NULL, *only = NULL, *skip = NULL;
	const char *stop = NULL, *destroyed = NULL;
	double last_destroyed = 0;
	unsigned long count = 100000, sent = 0, muts = 0;
	double secs = 0, warm = 10, t0, last_resend, last_partial;
	int opt, lifecycle = 0, ci = 0, nreads_want = 1;
	unsigned int skipped = 0;
	FILE *rf;

	while ((opt = getopt(argc, argv, "f:c:d:s:w:Lo:C:X:r:K:D:")) != -1) {
		switch (opt) {
		case 'f': state = optarg; break;
		case 'c': count = strtoul(optarg, NULL, 0); break;
		case 'd': secs = atof(optarg); break;
		case 's': rng_state ^= strtoull(optarg, NULL, 0) * 0x9E3779B97F4A7C15ULL; break;
		case 'w': warm = atof(optarg); break;
		case 'L': lifecycle = 1; break;
		case 'o': report = optarg; break;
		case 'C': only = optarg; break;
		case 'X': skip = optarg; break;
		case 'K': stop = optarg; break;
		case 'D': destroyed = optarg; break;
		case 'r': nreads_want = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s -f STATE [-c COUNT] [-d SECONDS] [-s SEED] [-w WARMUP] [-r READS] [-L] [-o REPORT] [-C CLASS,...] [-X CLASS,...] [-K STOPFILE] [-D DESTROYED]\n",
				argv[0]);
			return 2;
		}
	}
	if (!rng_state)
		rng_state = 1;
	if (!state)
		return fprintf(stderr, "mrsfuzz: -f STATE is required\n"), 2;
	crc_init();
	if (load_state(state) || open_sockets())
		return 1;
	g.plw0 = g.psn;
	printf("ready: %d QPs, PSN %u\n", g.nqp, g.psn);
	fflush(stdout);

	/* Learn: wait for the target's READ requests (the agent posts them). */
	t0 = now_s();
	while (now_s() - t0 < warm && (int)rx_learn_reads < nreads_want) {
		keep(0.1);
		for (int i = 0; i < g.nqp; i++)
			if (strchr("ws", g.qp[i].role) && !g.qp[i].nmsg &&
			    !g.qp[i].dead) {
				u8 p[MAXPKT];

				emit(p, valid_write_seg(p, &g.qp[i]), g.sport);
			}
	}
	printf("learnt %lu open READs in %.1f s\n", rx_learn_reads, now_s() - t0);
	fflush(stdout);
	answer_reads(0);

	t0 = last_resend = last_partial = now_s();
	while (sent < count && (!secs || now_s() - t0 < secs) && !g.conn_dead) {
		u8 p[MAXPKT];
		double t;

		for (int b = 0; b < BATCH && sent < count; b++) {
			struct cls *c = &classes[ci];
			int n = 0;

			cur_class = ci;
			ci = (ci + 1) % NCLASS;
			if (c->lifecycle || (only && !in_list(only, c->name)) ||
			    in_list(skip, c->name))
				continue;
			/* Valid traffic between the mutations (1 in 8). */
			if (rn(8) == 0) {
				struct tqp *q = pick_qp(rn(2) ? 'w' : 's', 1);

				if (q && !q->dead)
					emit(p, valid_write_seg(p, q), g.sport);
			}
			n = c->gen(p);
			if (n <= 0) {
				skipped++;
				continue;
			}
			emit(p, n, g.sport);
			c->n++;
			muts++;
			sent++;
		}
		rx_drain();
		t = now_s();
		if (t - last_resend > 0.3) {
			for (int i = 0; i < g.nqp; i++)
				if (strchr("ws", g.qp[i].role) && !g.qp[i].dead)
					resend_writes(&g.qp[i]);
			last_resend = t;
		}
		if ((g.dup_state == 1 || g.dup_state == 3) && t - g.dup_at > 2) {
			g.dup_psn += 2;		/* no ACK: start over */
			g.dup_state = 0;
		}
		if (g.dp_state == 1 && t - g.dp_at > 2)
			g.dp_state = 0;		/* no ACK: another segment */
		if (destroyed && t - last_destroyed > 1) {
			FILE *df = fopen(destroyed, "r");
			unsigned int qpn;

			while (df && fscanf(df, "%i", &qpn) == 1)
				dead_qp(qpn, 1);
			if (df)
				fclose(df);
			last_destroyed = t;
		}
		if (t - last_partial > 2) {
			answer_reads(0);
			last_partial = t;
		}
	}
	secs = now_s() - t0;

	/* The valid WRITEs complete; every open READ gets its whole data. */
	for (int k = 0; k < 5; k++) {
		int pending = 0;

		for (int i = 0; i < g.nqp; i++)
			if (g.qp[i].role == 'w' && !g.qp[i].dead && g.qp[i].nmsg) {
				resend_writes(&g.qp[i]);
				pending = 1;
			}
		if (!pending && k)
			break;
		keep(0.5);
	}
	for (int k = 0; k < 3; k++) {
		answer_reads(1);
		keep(0.5);
	}
	if (lifecycle) {
		u8 p[MAXPKT];

		for (int k = 0; k < NCLASS; k++) {
			struct cls *c = &classes[k];

			if (!c->lifecycle || in_list(skip, c->name) ||
			    (only && !in_list(only, c->name)))
				continue;
			for (int j = 0; j < 200; j++) {
				int n = c->gen(p);

				if (n > 0) {
					emit(p, n, g.sport);
					c->n++;
					muts++;
				}
				if (nout >= BATCH)
					rx_drain();
			}
			keep(0.5);
		}
	}
	keep(1);

	for (int k = 0; k < NCLASS; k++)
		printf("class %s %lu\n", classes[k].name, classes[k].n);
	printf("mutated %lu packets in %.1f s (%.0f/s) over %d classes; valid: %lu write segments, %lu resent, %lu read responses, %lu acks; %lu packets sent in all, %lu send retries\n",
	       muts, secs, muts / (secs > 0 ? secs : 1), NCLASS, valid_sent[0],
	       valid_sent[2], valid_sent[1], valid_sent[3], tx_total, tx_errors);
	printf("received %lu: %lu acks, %lu naks (%lu fatal), %lu probes, %lu syncs, %lu resets, %lu stream closes; %lu READs learnt\n",
	       rx_pkts, rx_acks, rx_naks, rx_fatal_naks, rx_probes, rx_syncs,
	       rx_resets, rx_closes, rx_learn_reads);
	/*
	 * The next round's PSNs continue above every PLW of ours: the
	 * connection, and the target's receive state of path 0, remain.
	 */
	g.psn = top0();
	printf("next own PSN %u\n", g.psn);
	if (report) {
		rf = fopen(report, "w");
		if (!rf) {
			perror(report);
			return 1;
		}
		for (int i = 0; i < g.nqp; i++)
			fprintf(rf, "qp %u %c dead %d closed %d chunks_done 0x%x\n",
				g.qp[i].tqpn, g.qp[i].role, g.qp[i].dead,
				g.qp[i].closed, g.qp[i].chunks_done);
		for (int i = 0; i < g.nrd; i++)
			fprintf(rf, "read %u %u %u %u %d\n", g.qp[g.rd[i].qi].tqpn,
				g.rd[i].ssn, g.rd[i].len, g.rd[i].shift,
				g.rd[i].done);
		for (int k = 0; k < NCLASS; k++)
			fprintf(rf, "class %d %s\n", k + 1, classes[k].name);
		fprintf(rf, "psn %u\nconn_dead %d\n", g.psn, g.conn_dead);
		fclose(rf);
	}
	printf("done\n");
	fflush(stdout);
	/* Keep the connection while the target is checked (10 min at most). */
	for (t0 = now_s(); stop && access(stop, F_OK) && now_s() - t0 < 600;)
		keep(0.2);
	return 0;
}
