// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * metaroce get, set and tunables: the transport's tunables (spec 17),
 * the same values as /sys/module/metaroce/parameters/.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/metaroce-nl.h>

#include "metaroce.h"
#include "nl.h"

struct mr_tunable_out {
	bool verbose;		/* name, value and range, or just the value */
	unsigned int n;
};

static int mr_tunable_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[METAROCE_A_MAX + 1] = { NULL };
	const struct nlattr *t[METAROCE_TUNABLE_A_MAX_ATTR + 1] = { NULL };
	struct mr_tunable_out *out = data;

	mr_nl_parse_msg(nlh, tb, METAROCE_A_MAX);
	if (!tb[METAROCE_A_TUNABLE]) {
		mr_nl_bad = true;
		return MNL_CB_OK;
	}
	mr_nl_parse(tb[METAROCE_A_TUNABLE], t, METAROCE_TUNABLE_A_MAX_ATTR);
	if (!t[METAROCE_TUNABLE_A_NAME] || !t[METAROCE_TUNABLE_A_VALUE]) {
		mr_nl_bad = true;
		return MNL_CB_OK;
	}
	if (out->verbose)
		printf("%-24s %10u   (%u to %u)\n",
		       mr_get_str(t[METAROCE_TUNABLE_A_NAME]),
		       mr_get_u32(t[METAROCE_TUNABLE_A_VALUE]),
		       mr_get_u32(t[METAROCE_TUNABLE_A_MIN]),
		       mr_get_u32(t[METAROCE_TUNABLE_A_MAX]));
	else
		printf("%u\n", mr_get_u32(t[METAROCE_TUNABLE_A_VALUE]));
	out->n++;
	return MNL_CB_OK;
}

int mr_cmd_get(struct mr_nl *nl, const char *name)
{
	struct mr_tunable_out out = { false, 0 };
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	char what[80];

	nlh = mr_nl_request(nl, METAROCE_CMD_TUNABLE_GET, 0);
	nest = mnl_attr_nest_start(nlh, METAROCE_A_TUNABLE);
	mnl_attr_put_strz(nlh, METAROCE_TUNABLE_A_NAME, name);
	mnl_attr_nest_end(nlh, nest);
	snprintf(what, sizeof(what), "get %s", name);
	if (mr_nl_talk(nl, nlh, mr_tunable_cb, &out, what))
		return EXIT_ERR;
	return EXIT_OK;
}

int mr_cmd_tunables(struct mr_nl *nl)
{
	struct mr_tunable_out out = { true, 0 };
	struct nlmsghdr *nlh;

	nlh = mr_nl_request(nl, METAROCE_CMD_TUNABLE_GET, NLM_F_DUMP);
	if (mr_nl_talk(nl, nlh, mr_tunable_cb, &out, "tunables"))
		return EXIT_ERR;
	return EXIT_OK;
}

/* argv: NAME VALUE pairs, checked by the caller; all set, or none. */
int mr_cmd_set(struct mr_nl *nl, int argc, char **argv)
{
	struct nlattr *list, *nest;
	struct nlmsghdr *nlh;
	unsigned int v;
	int i;

	nlh = mr_nl_request(nl, METAROCE_CMD_TUNABLE_SET, 0);
	list = mnl_attr_nest_start(nlh, METAROCE_A_TUNABLES);
	for (i = 0; i + 1 < argc; i += 2) {
		if (!mr_parse_u32(argv[i], argv[i + 1], &v))
			return EXIT_USAGE;
		nest = mnl_attr_nest_start(nlh, i / 2 + 1);
		mnl_attr_put_strz(nlh, METAROCE_TUNABLE_A_NAME, argv[i]);
		mnl_attr_put_u32(nlh, METAROCE_TUNABLE_A_VALUE, v);
		mnl_attr_nest_end(nlh, nest);
	}
	mnl_attr_nest_end(nlh, list);
	if (mr_nl_talk(nl, nlh, NULL, NULL, "set"))
		return EXIT_ERR;
	return EXIT_OK;
}
