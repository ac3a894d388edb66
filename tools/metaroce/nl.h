/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The metaroce tool's side of the generic netlink family "metaroce"
 * (include/uapi/rdma/metaroce-nl.h): one socket, requests, replies and the
 * kernel's error messages.
 */
#ifndef METAROCE_TOOL_NL_H
#define METAROCE_TOOL_NL_H

#include <stdbool.h>
#include <stdint.h>
#include <libmnl/libmnl.h>

/* Exit codes of the tool. */
enum { EXIT_OK = 0, EXIT_ERR = 1, EXIT_USAGE = 2 };

struct mr_nl {
	struct mnl_socket *sk;
	uint16_t family;
	uint32_t portid;
	uint32_t seq;
	char buf[65536];	/* one netlink read, dump parts included */
};

int mr_nl_open(struct mr_nl *nl);
void mr_nl_close(struct mr_nl *nl);
/* A new request of the family in nl->buf. */
struct nlmsghdr *mr_nl_request(struct mr_nl *nl, uint8_t cmd, uint16_t flags);
/*
 * Send nlh and run cb on every reply until the ACK or the end of the dump.
 * Returns 0, or a negative errno after printing what went wrong, with the
 * kernel's message when it gave one, prefixed by what.
 */
int mr_nl_talk(struct mr_nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
	       void *data, const char *what);

/* Attributes of a nest (or of a message, from offset) by type, up to max. */
void mr_nl_parse(const struct nlattr *nest, const struct nlattr **tb,
		 unsigned int max);
void mr_nl_parse_msg(const struct nlmsghdr *nlh, const struct nlattr **tb,
		     unsigned int max);

/*
 * Typed reads of received attributes: a missing attribute reads as 0 or "",
 * one of the wrong size sets mr_nl_bad (the reply is then refused).
 */
extern bool mr_nl_bad;
uint8_t mr_get_u8(const struct nlattr *a);
uint16_t mr_get_u16(const struct nlattr *a);
uint32_t mr_get_u32(const struct nlattr *a);
uint64_t mr_get_u64(const struct nlattr *a);
const char *mr_get_str(const struct nlattr *a);
const uint8_t *mr_get_addr(const struct nlattr *a);	/* 16 bytes or NULL */

#endif /* METAROCE_TOOL_NL_H */
