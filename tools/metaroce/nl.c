// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Generic netlink plumbing of the metaroce tool, on libmnl: resolving the
 * family, sending a request, collecting replies, reporting errors with the
 * kernel's extended ACK message, and reading attributes safely.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <rdma/metaroce-nl.h>

#include "nl.h"

bool mr_nl_bad;

struct mr_nl_err {
	int err;
	char msg[256];
};

/* What the callbacks of one request share. */
struct mr_nl_ctx {
	struct mr_nl_err e;
	mnl_cb_t cb;
	void *data;
};

static int mr_nl_family_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CTRL_ATTR_MAX + 1] = { NULL };
	uint16_t *family = data;

	mr_nl_parse_msg(nlh, tb, CTRL_ATTR_MAX);
	if (tb[CTRL_ATTR_FAMILY_ID])
		*family = mr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	return MNL_CB_OK;
}

int mr_nl_open(struct mr_nl *nl)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;
	int one = 1, err;

	memset(nl, 0, sizeof(*nl));
	nl->sk = mnl_socket_open(NETLINK_GENERIC);
	if (!nl->sk || mnl_socket_bind(nl->sk, 0, MNL_SOCKET_AUTOPID) < 0) {
		fprintf(stderr, "metaroce: netlink socket: %s\n", strerror(errno));
		return -errno;
	}
	nl->portid = mnl_socket_get_portid(nl->sk);
	nl->seq = time(NULL);
	mnl_socket_setsockopt(nl->sk, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sk, NETLINK_CAP_ACK, &one, sizeof(one));

	nlh = mnl_nlmsg_put_header(nl->buf);
	nlh->nlmsg_type = GENL_ID_CTRL;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = CTRL_CMD_GETFAMILY;
	g->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, METAROCE_GENL_NAME);
	err = mr_nl_talk(nl, nlh, mr_nl_family_cb, &nl->family, NULL);
	if (err == -ENOENT) {
		fprintf(stderr, "metaroce: the metaroce kernel module is not loaded (no netlink family \"%s\")\n",
			METAROCE_GENL_NAME);
		return err;
	}
	if (err)
		return err;
	if (!nl->family) {
		fprintf(stderr, "metaroce: no family id in the kernel's reply\n");
		return -EPROTO;
	}
	return 0;
}

void mr_nl_close(struct mr_nl *nl)
{
	if (nl->sk)
		mnl_socket_close(nl->sk);
	nl->sk = NULL;
}

struct nlmsghdr *mr_nl_request(struct mr_nl *nl, uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = nl->family;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = METAROCE_GENL_VERSION;
	return nlh;
}

/* The extended ACK attributes of an error or done message, from offset. */
static void mr_nl_extack(const struct nlmsghdr *nlh, unsigned int offset,
			 struct mr_nl_err *e)
{
	const struct nlattr *a;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	mnl_attr_for_each(a, nlh, offset) {
		if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
			snprintf(e->msg, sizeof(e->msg), "%s",
				 mnl_attr_get_str(a));
	}
}

static int mr_nl_error_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	struct mr_nl_err *e = &((struct mr_nl_ctx *)data)->e;
	unsigned int offset = sizeof(*err);

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err))) {
		e->err = -EPROTO;
		return MNL_CB_ERROR;
	}
	if (!err->error)
		return MNL_CB_STOP;	/* the ACK */
	e->err = err->error < 0 ? err->error : -err->error;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		offset += err->msg.nlmsg_len - sizeof(struct nlmsghdr);
	mr_nl_extack(nlh, offset, e);
	return MNL_CB_ERROR;
}

static int mr_nl_done_cb(const struct nlmsghdr *nlh, void *data)
{
	struct mr_nl_err *e = &((struct mr_nl_ctx *)data)->e;
	int err = 0;

	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(int))
		memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(int));
	if (!err)
		return MNL_CB_STOP;
	e->err = err < 0 ? err : -err;
	mr_nl_extack(nlh, sizeof(int), e);
	return MNL_CB_ERROR;
}

static int mr_nl_noop_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_OK;
}

static int mr_nl_data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct mr_nl_ctx *ctx = data;

	return ctx->cb ? ctx->cb(nlh, ctx->data) : MNL_CB_OK;
}

int mr_nl_talk(struct mr_nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
	       void *data, const char *what)
{
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = {
		[NLMSG_NOOP] = mr_nl_noop_cb,
		[NLMSG_ERROR] = mr_nl_error_cb,
		[NLMSG_DONE] = mr_nl_done_cb,
		[NLMSG_OVERRUN] = mr_nl_noop_cb,
	};
	struct mr_nl_ctx ctx = { { 0, "" }, cb, data };
	struct mr_nl_err *e = &ctx.e;
	uint32_t seq = ++nl->seq;
	ssize_t n;
	int ret;

	nlh->nlmsg_seq = seq;
	mr_nl_bad = false;
	if (mnl_socket_sendto(nl->sk, nlh, nlh->nlmsg_len) < 0) {
		e->err = -errno;
		goto fail;
	}
	do {
		n = mnl_socket_recvfrom(nl->sk, nl->buf, sizeof(nl->buf));
		if (n < 0) {
			e->err = -errno;
			goto fail;
		}
		errno = 0;
		ret = mnl_cb_run2(nl->buf, n, seq, nl->portid, mr_nl_data_cb,
				  &ctx, ctl, NLMSG_MIN_TYPE);
	} while (ret > MNL_CB_STOP);
	if (!e->err && ret < 0)
		e->err = errno ? -errno : -EPROTO;
	if (mr_nl_bad && !e->err)
		e->err = -EPROTO;
	if (!e->err)
		return 0;
fail:
	if (what) {
		if (e->msg[0])
			fprintf(stderr, "metaroce: %s: %s\n", what, e->msg);
		else if (e->err == -EPERM)
			fprintf(stderr, "metaroce: %s: %s (needs CAP_NET_ADMIN: run as root)\n",
				what, strerror(-e->err));
		else if (e->err == -EPROTO)
			fprintf(stderr, "metaroce: %s: malformed reply from the kernel\n",
				what);
		else
			fprintf(stderr, "metaroce: %s: %s\n", what,
				strerror(-e->err));
	}
	return e->err;
}

void mr_nl_parse(const struct nlattr *nest, const struct nlattr **tb,
		 unsigned int max)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, nest) {
		if (mnl_attr_get_type(a) <= max)
			tb[mnl_attr_get_type(a)] = a;
	}
}

void mr_nl_parse_msg(const struct nlmsghdr *nlh, const struct nlattr **tb,
		     unsigned int max)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) <= max)
			tb[mnl_attr_get_type(a)] = a;
	}
}

static bool mr_nl_len(const struct nlattr *a, uint16_t len)
{
	if (!a)
		return false;
	if (mnl_attr_get_payload_len(a) != len) {
		mr_nl_bad = true;
		return false;
	}
	return true;
}

uint8_t mr_get_u8(const struct nlattr *a)
{
	return mr_nl_len(a, 1) ? mnl_attr_get_u8(a) : 0;
}

uint16_t mr_get_u16(const struct nlattr *a)
{
	return mr_nl_len(a, 2) ? mnl_attr_get_u16(a) : 0;
}

uint32_t mr_get_u32(const struct nlattr *a)
{
	return mr_nl_len(a, 4) ? mnl_attr_get_u32(a) : 0;
}

uint64_t mr_get_u64(const struct nlattr *a)
{
	return mr_nl_len(a, 8) ? mnl_attr_get_u64(a) : 0;
}

const char *mr_get_str(const struct nlattr *a)
{
	if (!a)
		return "";
	if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0) {
		mr_nl_bad = true;
		return "";
	}
	return mnl_attr_get_str(a);
}

const uint8_t *mr_get_addr(const struct nlattr *a)
{
	return mr_nl_len(a, 16) ? mnl_attr_get_payload(a) : NULL;
}
