// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * metaroce.c - entry point of libmetaroce-rdmav34.so.
 *
 * libibverbs dlopen()s this library (because /etc/libibverbs.d/metaroce.driver
 * or RDMAV_DRIVERS names it) when it finds a uverbs device no loaded
 * provider has claimed.  The constructor below registers our
 * verbs_device_ops; from then on libibverbs offers every unclaimed device to
 * metaroce_match_device().
 */
#include "metaroce.h"

/*
 * An empty table, not NULL: libibverbs walks every provider's table (up to
 * the sentinel) for each device with a known driver_id, e.g. rxe or mlx5,
 * and a NULL table crashes ibv_get_device_list() on any host that has such
 * a device next to a MetaRoCE one.
 */
static const struct verbs_match_ent metaroce_match_table[] = {
	{ .kind = VERBS_MATCH_SENTINEL },
};

static const struct verbs_device_ops metaroce_dev_ops = {
	.name = METAROCE_PROVIDER_NAME,
	/*
	 * The kernel driver reports METAROCE_UVERBS_ABI_VERSION as its
	 * uverbs_abi_ver; libibverbs rejects any other value after
	 * match_device() said yes.
	 */
	.match_min_abi_version = METAROCE_UVERBS_ABI_VERSION,
	.match_max_abi_version = METAROCE_UVERBS_ABI_VERSION,
	/*
	 * Nothing in the table: MetaRoCE reports RDMA_DRIVER_UNKNOWN and has
	 * no parent device (hence no modalias), and name matching would tie
	 * us to device names.  match_device() looks for our sysfs attribute.
	 */
	.match_table = metaroce_match_table,
	.match_device = metaroce_match_device,
	.alloc_device = metaroce_alloc_device,
	.uninit_device = metaroce_uninit_device,
	.alloc_context = metaroce_alloc_context,
};

__attribute__((constructor))
static void metaroce_register_driver(void)
{
	/*
	 * Registering against a libibverbs whose private structures differ
	 * from ours would corrupt memory later; refuse instead.  The check
	 * prints its own message.
	 */
	if (metaroce_check_libibverbs())
		return;

	verbs_register_driver_34(&metaroce_dev_ops);
}
