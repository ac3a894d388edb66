// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * metaroce show [DEV] [--json]: every device with its planes, every
 * connection with its paths (DEV_GET and CONN_GET dumps).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/metaroce-nl.h>

#include "metaroce.h"
#include "nl.h"

#define MR_MAX_PLANES	8

struct mr_plane {
	uint32_t index;
	char ifname[64];
	uint32_t ifindex;
	bool up;
};

struct mr_dev {
	char name[64];
	uint32_t index;
	uint8_t port_state;
	uint32_t link_mbps;
	uint32_t hint_mbps;
	uint32_t nconns;
	unsigned int nplanes;
	struct mr_plane planes[MR_MAX_PLANES];
};

struct mr_path {
	uint32_t id, plane, cwnd, ssthresh, bif, live, holes;
	uint32_t srtt, rttvar, min_rtt, rto, backoff, reroutes, alpha, loss;
	uint8_t state;
	uint16_t sport;
	uint64_t tx, retx, lost, ce;
};

struct mr_conn {
	uint32_t dev_index;
	char local[INET6_ADDRSTRLEN], peer[INET6_ADDRSTRLEN];
	uint32_t local_cid, peer_cid, streams, hint, pace, retxq, npaths;
	uint8_t state, initiator;
	unsigned int nrecv;		/* paths received */
	struct mr_path *paths;
};

struct mr_show {
	struct mr_dev *devs;
	unsigned int ndevs;
	struct mr_conn *conns;
	unsigned int nconns;
};

static void *mr_grow(void *p, unsigned int n, size_t size)
{
	p = realloc(p, (n + 1) * size);
	if (!p) {
		fprintf(stderr, "metaroce: out of memory\n");
		exit(EXIT_ERR);
	}
	memset((char *)p + n * size, 0, size);
	return p;
}

static void mr_copy_str(char *dst, size_t size, const struct nlattr *a)
{
	snprintf(dst, size, "%s", mr_get_str(a));
}

/* An address as the kernel keeps it: IPv6, or IPv4-mapped. */
static void mr_addr(char *dst, const struct nlattr *a)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	const uint8_t *raw = mr_get_addr(a);

	if (!raw)
		snprintf(dst, INET6_ADDRSTRLEN, "?");
	else if (!memcmp(raw, v4mapped, sizeof(v4mapped)))
		inet_ntop(AF_INET, raw + 12, dst, INET6_ADDRSTRLEN);
	else
		inet_ntop(AF_INET6, raw, dst, INET6_ADDRSTRLEN);
}

static int mr_dev_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[METAROCE_A_MAX + 1] = { NULL };
	const struct nlattr *pt[METAROCE_PLANE_A_MAX + 1];
	struct mr_show *s = data;
	const struct nlattr *a;
	struct mr_plane *p;
	struct mr_dev *d;

	mr_nl_parse_msg(nlh, tb, METAROCE_A_MAX);
	s->devs = mr_grow(s->devs, s->ndevs, sizeof(*d));
	d = &s->devs[s->ndevs++];
	mr_copy_str(d->name, sizeof(d->name), tb[METAROCE_A_DEV_NAME]);
	d->index = mr_get_u32(tb[METAROCE_A_DEV_INDEX]);
	d->port_state = mr_get_u8(tb[METAROCE_A_DEV_PORT_STATE]);
	d->link_mbps = mr_get_u32(tb[METAROCE_A_DEV_LINK_MBPS]);
	d->hint_mbps = mr_get_u32(tb[METAROCE_A_DEV_HINT_MBPS]);
	d->nconns = mr_get_u32(tb[METAROCE_A_DEV_NUM_CONNS]);
	if (!tb[METAROCE_A_DEV_NAME] || !tb[METAROCE_A_DEV_INDEX])
		mr_nl_bad = true;
	if (!tb[METAROCE_A_DEV_PLANES])
		return MNL_CB_OK;
	mnl_attr_for_each_nested(a, tb[METAROCE_A_DEV_PLANES]) {
		if (d->nplanes == MR_MAX_PLANES) {
			mr_nl_bad = true;
			break;
		}
		memset(pt, 0, sizeof(pt));
		mr_nl_parse(a, pt, METAROCE_PLANE_A_MAX);
		p = &d->planes[d->nplanes++];
		p->index = mr_get_u32(pt[METAROCE_PLANE_A_INDEX]);
		mr_copy_str(p->ifname, sizeof(p->ifname),
			    pt[METAROCE_PLANE_A_IFNAME]);
		p->ifindex = mr_get_u32(pt[METAROCE_PLANE_A_IFINDEX]);
		p->up = mr_get_u8(pt[METAROCE_PLANE_A_UP]);
	}
	return MNL_CB_OK;
}

static void mr_path_read(struct mr_path *p, const struct nlattr *nest)
{
	const struct nlattr *t[METAROCE_PATH_A_MAX + 1] = { NULL };

	mr_nl_parse(nest, t, METAROCE_PATH_A_MAX);
	if (!t[METAROCE_PATH_A_ID])
		mr_nl_bad = true;
	p->id = mr_get_u32(t[METAROCE_PATH_A_ID]);
	p->plane = mr_get_u32(t[METAROCE_PATH_A_PLANE]);
	p->state = mr_get_u8(t[METAROCE_PATH_A_STATE]);
	p->sport = mr_get_u16(t[METAROCE_PATH_A_SPORT]);
	p->cwnd = mr_get_u32(t[METAROCE_PATH_A_CWND]);
	p->ssthresh = mr_get_u32(t[METAROCE_PATH_A_SSTHRESH]);
	p->bif = mr_get_u32(t[METAROCE_PATH_A_BYTES_IN_FLIGHT]);
	p->live = mr_get_u32(t[METAROCE_PATH_A_PKTS_IN_FLIGHT]);
	p->holes = mr_get_u32(t[METAROCE_PATH_A_SACK_HOLES]);
	p->srtt = mr_get_u32(t[METAROCE_PATH_A_SRTT_US]);
	p->rttvar = mr_get_u32(t[METAROCE_PATH_A_RTTVAR_US]);
	p->min_rtt = mr_get_u32(t[METAROCE_PATH_A_MIN_RTT_US]);
	p->rto = mr_get_u32(t[METAROCE_PATH_A_RTO_US]);
	p->backoff = mr_get_u32(t[METAROCE_PATH_A_BACKOFF]);
	p->tx = mr_get_u64(t[METAROCE_PATH_A_TX_PKTS]);
	p->retx = mr_get_u64(t[METAROCE_PATH_A_RETX_PKTS]);
	p->lost = mr_get_u64(t[METAROCE_PATH_A_LOST_PKTS]);
	p->ce = mr_get_u64(t[METAROCE_PATH_A_CE_MARKS]);
	p->reroutes = mr_get_u32(t[METAROCE_PATH_A_REROUTES]);
	p->alpha = mr_get_u32(t[METAROCE_PATH_A_ALPHA]);
	p->loss = mr_get_u32(t[METAROCE_PATH_A_LOSS_PCT]);
}

static int mr_conn_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[METAROCE_A_MAX + 1] = { NULL };
	const struct nlattr *ct[METAROCE_CONN_A_MAX + 1] = { NULL };
	struct mr_show *s = data;
	const struct nlattr *a;
	struct mr_conn *c;
	uint32_t dev, cid;

	mr_nl_parse_msg(nlh, tb, METAROCE_A_MAX);
	if (!tb[METAROCE_A_CONN] || !tb[METAROCE_A_DEV_INDEX]) {
		mr_nl_bad = true;
		return MNL_CB_OK;
	}
	mr_nl_parse(tb[METAROCE_A_CONN], ct, METAROCE_CONN_A_MAX);
	dev = mr_get_u32(tb[METAROCE_A_DEV_INDEX]);
	cid = mr_get_u32(ct[METAROCE_CONN_A_LOCAL_CID]);
	c = s->nconns ? &s->conns[s->nconns - 1] : NULL;
	if (!c || c->dev_index != dev || c->local_cid != cid) {
		/* a new connection, not the rest of the last one's paths */
		s->conns = mr_grow(s->conns, s->nconns, sizeof(*c));
		c = &s->conns[s->nconns++];
		c->dev_index = dev;
		c->local_cid = cid;
		mr_addr(c->local, ct[METAROCE_CONN_A_LOCAL_ADDR]);
		mr_addr(c->peer, ct[METAROCE_CONN_A_PEER_ADDR]);
		c->peer_cid = mr_get_u32(ct[METAROCE_CONN_A_PEER_CID]);
		c->state = mr_get_u8(ct[METAROCE_CONN_A_STATE]);
		c->initiator = mr_get_u8(ct[METAROCE_CONN_A_INITIATOR]);
		c->streams = mr_get_u32(ct[METAROCE_CONN_A_STREAMS]);
		c->hint = mr_get_u32(ct[METAROCE_CONN_A_HINT_MBPS]);
		c->pace = mr_get_u32(ct[METAROCE_CONN_A_PACE_RATE]);
		c->retxq = mr_get_u32(ct[METAROCE_CONN_A_RETXQ_LEN]);
		c->npaths = mr_get_u32(ct[METAROCE_CONN_A_NPATHS]);
		if (c->npaths > 4096) {
			mr_nl_bad = true;
			c->npaths = 0;
		}
		c->paths = calloc(c->npaths ? c->npaths : 1, sizeof(*c->paths));
		if (!c->paths) {
			fprintf(stderr, "metaroce: out of memory\n");
			exit(EXIT_ERR);
		}
	}
	if (!ct[METAROCE_CONN_A_PATHS])
		return MNL_CB_OK;
	mnl_attr_for_each_nested(a, ct[METAROCE_CONN_A_PATHS]) {
		if (c->nrecv >= c->npaths) {
			mr_nl_bad = true;
			break;
		}
		mr_path_read(&c->paths[c->nrecv++], a);
	}
	return MNL_CB_OK;
}

static const char *mr_port_state(uint8_t s)
{
	return s == METAROCE_PORT_ACTIVE ? "ACTIVE" :
	       s == METAROCE_PORT_DOWN ? "DOWN" : "UNKNOWN";
}

static const char *mr_conn_state(uint8_t s)
{
	static const char *const names[] = {
		[METAROCE_CONN_CONNECTING] = "CONNECTING",
		[METAROCE_CONN_ESTABLISHED] = "ESTABLISHED",
		[METAROCE_CONN_FAILED] = "FAILED",
		[METAROCE_CONN_CLOSING] = "CLOSING",
		[METAROCE_CONN_TOMBSTONE] = "TOMBSTONE",
	};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "UNKNOWN";
}

static const char *mr_path_state(uint8_t s)
{
	static const char *const names[] = {
		[METAROCE_PATH_ACTIVE] = "ACTIVE",
		[METAROCE_PATH_SUSPECT] = "SUSPECT",
		[METAROCE_PATH_PROBING] = "PROBING",
		[METAROCE_PATH_FAILED] = "FAILED",
	};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "UNKNOWN";
}

static void mr_print_text(const struct mr_show *s)
{
	const struct mr_path *p;
	const struct mr_conn *c;
	const struct mr_dev *d;
	unsigned int i, j, k;

	for (i = 0; i < s->ndevs; i++) {
		d = &s->devs[i];
		printf("device %s: port %s, link %u Mb/s, hint %u Mb/s, %u connection%s\n",
		       d->name, mr_port_state(d->port_state), d->link_mbps,
		       d->hint_mbps, d->nconns, d->nconns == 1 ? "" : "s");
		for (j = 0; j < d->nplanes; j++)
			printf("  plane %u: %s (ifindex %u) %s\n",
			       d->planes[j].index, d->planes[j].ifname,
			       d->planes[j].ifindex,
			       d->planes[j].up ? "up" : "down");
		for (j = 0; j < s->nconns; j++) {
			c = &s->conns[j];
			if (c->dev_index != d->index)
				continue;
			printf("  conn %s -> %s: cid %u peer cid %u, %s%s, %u stream%s, hint %u Mb/s, pace %u B/ms, retx queue %u, %u paths\n",
			       c->local, c->peer, c->local_cid, c->peer_cid,
			       mr_conn_state(c->state),
			       c->initiator ? " (initiator)" : "",
			       c->streams, c->streams == 1 ? "" : "s",
			       c->hint, c->pace, c->retxq, c->npaths);
			for (k = 0; k < c->nrecv; k++) {
				p = &c->paths[k];
				printf("    path %u plane %u %s sport %u cwnd %u ssthresh %u bif %u live %u holes %u srtt %uus rttvar %uus min_rtt %uus rto %uus backoff %u tx %llu retx %llu lost %llu ce %llu reroutes %u alpha %.3f loss %u%%\n",
				       p->id, p->plane, mr_path_state(p->state),
				       p->sport, p->cwnd, p->ssthresh, p->bif,
				       p->live, p->holes, p->srtt, p->rttvar,
				       p->min_rtt, p->rto, p->backoff,
				       (unsigned long long)p->tx,
				       (unsigned long long)p->retx,
				       (unsigned long long)p->lost,
				       (unsigned long long)p->ce, p->reroutes,
				       p->alpha / 65536.0, p->loss);
			}
		}
	}
}

/* A JSON string: the names come from the kernel, escape anyway. */
static void mr_json_str(const char *str)
{
	putchar('"');
	for (; *str; str++) {
		if (*str == '"' || *str == '\\')
			printf("\\%c", *str);
		else if ((unsigned char)*str < 0x20)
			printf("\\u%04x", *str);
		else
			putchar(*str);
	}
	putchar('"');
}

static void mr_json_path(const struct mr_path *p)
{
	printf("{\"id\": %u, \"plane\": %u, \"state\": \"%s\", \"sport\": %u, "
	       "\"cwnd\": %u, \"ssthresh\": %u, \"bytes_in_flight\": %u, "
	       "\"pkts_in_flight\": %u, \"sack_holes\": %u, \"srtt_us\": %u, "
	       "\"rttvar_us\": %u, \"min_rtt_us\": %u, \"rto_us\": %u, "
	       "\"backoff\": %u, \"tx_pkts\": %llu, \"retx_pkts\": %llu, "
	       "\"lost_pkts\": %llu, \"ce_marks\": %llu, \"reroutes\": %u, "
	       "\"alpha\": %.4f, \"loss_pct\": %u}",
	       p->id, p->plane, mr_path_state(p->state), p->sport, p->cwnd,
	       p->ssthresh, p->bif, p->live, p->holes, p->srtt, p->rttvar,
	       p->min_rtt, p->rto, p->backoff, (unsigned long long)p->tx,
	       (unsigned long long)p->retx, (unsigned long long)p->lost,
	       (unsigned long long)p->ce, p->reroutes, p->alpha / 65536.0,
	       p->loss);
}

static void mr_json_conn(const struct mr_conn *c)
{
	unsigned int k;

	printf("{\"local\": \"%s\", \"peer\": \"%s\", \"local_cid\": %u, "
	       "\"peer_cid\": %u, \"state\": \"%s\", \"initiator\": %s, "
	       "\"streams\": %u, \"hint_mbps\": %u, \"pace_rate\": %u, "
	       "\"retx_queue\": %u, \"npaths\": %u, \"paths\": [",
	       c->local, c->peer, c->local_cid, c->peer_cid,
	       mr_conn_state(c->state), c->initiator ? "true" : "false",
	       c->streams, c->hint, c->pace, c->retxq, c->npaths);
	for (k = 0; k < c->nrecv; k++) {
		printf(k ? ", " : "");
		mr_json_path(&c->paths[k]);
	}
	printf("]}");
}

static void mr_print_json(const struct mr_show *s)
{
	const struct mr_dev *d;
	unsigned int i, j, n;

	printf("{\"devices\": [");
	for (i = 0; i < s->ndevs; i++) {
		d = &s->devs[i];
		printf(i ? ", {\"name\": " : "{\"name\": ");
		mr_json_str(d->name);
		printf(", \"index\": %u, \"port_state\": \"%s\", \"link_mbps\": %u, \"hint_mbps\": %u, \"num_conns\": %u, \"planes\": [",
		       d->index, mr_port_state(d->port_state), d->link_mbps,
		       d->hint_mbps, d->nconns);
		for (j = 0; j < d->nplanes; j++) {
			printf("%s{\"index\": %u, \"ifname\": ", j ? ", " : "",
			       d->planes[j].index);
			mr_json_str(d->planes[j].ifname);
			printf(", \"ifindex\": %u, \"up\": %s}",
			       d->planes[j].ifindex,
			       d->planes[j].up ? "true" : "false");
		}
		printf("], \"connections\": [");
		for (j = 0, n = 0; j < s->nconns; j++) {
			if (s->conns[j].dev_index != d->index)
				continue;
			printf(n++ ? ", " : "");
			mr_json_conn(&s->conns[j]);
		}
		printf("]}");
	}
	printf("]}\n");
}

int mr_cmd_show(struct mr_nl *nl, const char *dev, bool json)
{
	struct mr_show s = { NULL, 0, NULL, 0 };
	struct nlmsghdr *nlh;
	unsigned int i;
	int err;

	nlh = mr_nl_request(nl, METAROCE_CMD_DEV_GET, NLM_F_DUMP);
	if (dev)
		mnl_attr_put_strz(nlh, METAROCE_A_DEV_NAME, dev);
	err = mr_nl_talk(nl, nlh, mr_dev_cb, &s, "show");
	if (!err) {
		nlh = mr_nl_request(nl, METAROCE_CMD_CONN_GET, NLM_F_DUMP);
		if (dev)
			mnl_attr_put_strz(nlh, METAROCE_A_DEV_NAME, dev);
		err = mr_nl_talk(nl, nlh, mr_conn_cb, &s, "show");
	}
	if (!err) {
		if (json)
			mr_print_json(&s);
		else if (!s.ndevs)
			printf("no MetaRoCE device in this network namespace\n");
		else
			mr_print_text(&s);
	}
	for (i = 0; i < s.nconns; i++)
		free(s.conns[i].paths);
	free(s.conns);
	free(s.devs);
	return err ? EXIT_ERR : EXIT_OK;
}
