// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * metaroce: show and configure MetaRoCE devices, connections, planes and
 * tunables over generic netlink (include/uapi/rdma/metaroce-nl.h).
 * Exit status: 0 done, 1 the command failed, 2 bad usage.
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/metaroce-nl.h>

#include "metaroce.h"
#include "nl.h"

#define MR_DEV_NAME_MAX	64	/* IB_DEVICE_NAME_MAX, with the NUL */

static void mr_usage(FILE *f)
{
	fprintf(f,
		"Usage: metaroce COMMAND [ARGS]\n"
		"\n"
		"  show [DEV] [--json]         devices, planes, connections and their paths\n"
		"  tunables                    every tunable with its value and range\n"
		"  get TUNABLE                 the value of a tunable\n"
		"  set TUNABLE VALUE [...]     set tunables (all or none; needs CAP_NET_ADMIN)\n"
		"  plane add DEV NETDEV        add NETDEV as a plane of device DEV\n"
		"  plane del DEV NETDEV        remove the plane NETDEV from DEV\n"
		"  help                        this text\n"
		"\n"
		"Exit status: 0 success, 1 the command failed, 2 bad usage.\n");
}

static int mr_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "metaroce: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'metaroce help'.\n");
	return EXIT_USAGE;
}

bool mr_check_name(const char *what, const char *name, size_t max)
{
	if (!*name) {
		fprintf(stderr, "metaroce: empty %s name\n", what);
		return false;
	}
	if (strlen(name) >= max) {
		fprintf(stderr, "metaroce: %s name '%s' is too long (at most %zu characters)\n",
			what, name, max - 1);
		return false;
	}
	return true;
}

bool mr_parse_u32(const char *name, const char *str, unsigned int *val)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (*str < '0' || *str > '9') {
		fprintf(stderr, "metaroce: value '%s' of %s is not a non-negative decimal number\n",
			str, name);
		return false;
	}
	v = strtoull(str, &end, 10);
	if (*end) {
		fprintf(stderr, "metaroce: value '%s' of %s is not a non-negative decimal number\n",
			str, name);
		return false;
	}
	if (errno == ERANGE || v > UINT_MAX) {
		fprintf(stderr, "metaroce: value '%s' of %s is too large (at most %u)\n",
			str, name, UINT_MAX);
		return false;
	}
	*val = v;
	return true;
}

int mr_cmd_plane(struct mr_nl *nl, bool add, const char *dev,
		 const char *ifname)
{
	struct nlmsghdr *nlh;
	char what[160];

	nlh = mr_nl_request(nl, add ? METAROCE_CMD_PLANE_ADD :
				      METAROCE_CMD_PLANE_DEL, 0);
	mnl_attr_put_strz(nlh, METAROCE_A_DEV_NAME, dev);
	mnl_attr_put_strz(nlh, METAROCE_A_IFNAME, ifname);
	snprintf(what, sizeof(what), "plane %s %s %s", add ? "add" : "del",
		 dev, ifname);
	return mr_nl_talk(nl, nlh, NULL, NULL, what) ? EXIT_ERR : EXIT_OK;
}

/* Check the arguments; 0 when they are fine, else the exit code. */
static int mr_check(int argc, char **argv)
{
	const char *cmd = argv[0];
	unsigned int v;
	int i;

	if (!strcmp(cmd, "show")) {
		const char *dev = NULL;

		for (i = 1; i < argc; i++) {
			if (!strcmp(argv[i], "--json"))
				continue;
			if (argv[i][0] == '-')
				return mr_usage_error("show: unknown option '%s'",
						      argv[i]);
			if (dev)
				return mr_usage_error("show: one device at most, '%s' is one too many",
						      argv[i]);
			dev = argv[i];
			if (!mr_check_name("device", dev, MR_DEV_NAME_MAX))
				return EXIT_USAGE;
		}
		return 0;
	}
	if (!strcmp(cmd, "tunables"))
		return argc == 1 ? 0 :
		       mr_usage_error("tunables takes no argument, got '%s'", argv[1]);
	if (!strcmp(cmd, "get")) {
		if (argc != 2)
			return mr_usage_error("%s: get takes one TUNABLE name",
					      argc < 2 ? "missing tunable" : "too many arguments");
		return mr_check_name("tunable", argv[1],
				     METAROCE_TUNABLE_NAME_MAX) ? 0 : EXIT_USAGE;
	}
	if (!strcmp(cmd, "set")) {
		if (argc < 2)
			return mr_usage_error("%s: set takes TUNABLE VALUE pairs",
					      "missing arguments");
		if (argc % 2 == 0)
			return mr_usage_error("set: no value for '%s'",
					      argv[argc - 1]);
		for (i = 1; i < argc; i += 2) {
			if (!mr_check_name("tunable", argv[i],
					   METAROCE_TUNABLE_NAME_MAX) ||
			    !mr_parse_u32(argv[i], argv[i + 1], &v))
				return EXIT_USAGE;
		}
		return 0;
	}
	if (!strcmp(cmd, "plane")) {
		if (argc < 2 || (strcmp(argv[1], "add") && strcmp(argv[1], "del")))
			return mr_usage_error("plane: expected 'add' or 'del', got '%s'",
					      argc < 2 ? "nothing" : argv[1]);
		if (argc != 4)
			return mr_usage_error("plane %s: expected DEV NETDEV",
					      argv[1]);
		return mr_check_name("device", argv[2], MR_DEV_NAME_MAX) &&
		       mr_check_name("network device", argv[3], IFNAMSIZ) ?
		       0 : EXIT_USAGE;
	}
	return mr_usage_error("unknown command '%s'", cmd);
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	struct mr_nl *nl;
	bool json = false;
	int ret, i;

	if (argc < 2) {
		mr_usage(stderr);
		return EXIT_USAGE;
	}
	argc--;
	argv++;
	if (!strcmp(argv[0], "help") || !strcmp(argv[0], "--help") ||
	    !strcmp(argv[0], "-h")) {
		mr_usage(stdout);
		return EXIT_OK;
	}
	ret = mr_check(argc, argv);
	if (ret)
		return ret;

	nl = malloc(sizeof(*nl));
	if (!nl) {
		fprintf(stderr, "metaroce: out of memory\n");
		return EXIT_ERR;
	}
	if (mr_nl_open(nl)) {
		mr_nl_close(nl);
		free(nl);
		return EXIT_ERR;
	}
	if (!strcmp(argv[0], "show")) {
		for (i = 1; i < argc; i++) {
			if (!strcmp(argv[i], "--json"))
				json = true;
			else
				dev = argv[i];
		}
		ret = mr_cmd_show(nl, dev, json);
	} else if (!strcmp(argv[0], "tunables")) {
		ret = mr_cmd_tunables(nl);
	} else if (!strcmp(argv[0], "get")) {
		ret = mr_cmd_get(nl, argv[1]);
	} else if (!strcmp(argv[0], "set")) {
		ret = mr_cmd_set(nl, argc - 1, argv + 1);
	} else {
		ret = mr_cmd_plane(nl, !strcmp(argv[1], "add"), argv[2],
				   argv[3]);
	}
	mr_nl_close(nl);
	free(nl);
	return ret;
}
