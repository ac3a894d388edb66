/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The commands of the metaroce tool: each returns the exit code. */
#ifndef METAROCE_TOOL_H
#define METAROCE_TOOL_H

#include <stdbool.h>

struct mr_nl;

int mr_cmd_show(struct mr_nl *nl, const char *dev, bool json);
int mr_cmd_get(struct mr_nl *nl, const char *name);
int mr_cmd_set(struct mr_nl *nl, int argc, char **argv);
int mr_cmd_tunables(struct mr_nl *nl);
int mr_cmd_plane(struct mr_nl *nl, bool add, const char *dev,
		 const char *ifname);

/* Input checks done before asking the kernel: false after a message. */
bool mr_check_name(const char *what, const char *name, size_t max);
bool mr_parse_u32(const char *name, const char *str, unsigned int *val);

#endif /* METAROCE_TOOL_H */
