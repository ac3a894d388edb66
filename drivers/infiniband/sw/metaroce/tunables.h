/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The table of transport tunables (tunables.c), shared by the module
 * parameters and the netlink interface (netlink.c).
 */
#ifndef MROCE_TUNABLES_H
#define MROCE_TUNABLES_H

#include <linux/types.h>

struct mroce_tunable {
	const char *name;
	unsigned int *val;
	u32 lo;
	u32 hi;
};

extern const struct mroce_tunable *const mroce_tunables[];
extern const unsigned int mroce_num_tunables;

const struct mroce_tunable *mroce_tunable_find(const char *name);
bool mroce_tunable_valid(const struct mroce_tunable *t, u32 v);
u32 mroce_tunable_get(const struct mroce_tunable *t);
int mroce_tunable_set(const struct mroce_tunable *t, u32 v);

#endif /* MROCE_TUNABLES_H */
