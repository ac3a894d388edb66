// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * verbs.c - control-path verbs that are plain uverbs commands: device and
 * port queries, protection domains, memory regions and address handles.
 * Only CREATE_AH carries MetaRoCE udata (its response).
 *
 * ibv_cmd_*() return 0 or a positive errno; ops returning int pass that on,
 * ops returning a pointer set errno and return NULL.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metaroce.h"

int metaroce_query_device_ex(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_query_device_any(context, input, attr, attr_size,
				       &resp, &resp_size);
	if (ret)
		return ret;

	/*
	 * The kernel reports fw_ver as a u64; show it as
	 * major.minor.sub_minor from bits 47:32, 31:16 and 15:0.
	 * (attr_size >= sizeof(orig_attr) was checked by the helper.)
	 */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)((fw >> 32) & 0xffff),
		 (unsigned int)((fw >> 16) & 0xffff),
		 (unsigned int)(fw & 0xffff));
	return 0;
}

int metaroce_query_port(struct ibv_context *context, uint8_t port_num,
			struct ibv_port_attr *port_attr)
{
	struct ibv_query_port cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_query_port(context, port_num, port_attr, &cmd,
				  sizeof(cmd));
}

struct ibv_pd *metaroce_alloc_pd(struct ibv_context *context)
{
	struct ibv_alloc_pd cmd;
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_alloc_pd(context, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return pd;
}

int metaroce_dealloc_pd(struct ibv_pd *pd)
{
	int ret;

	ret = ibv_cmd_dealloc_pd(pd);
	if (ret)
		return ret;

	free(pd);
	return 0;
}

struct ibv_mr *metaroce_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			       uint64_t hca_va, int access)
{
	struct ibv_reg_mr cmd;
	struct ib_uverbs_reg_mr_resp resp;
	struct verbs_mr *vmr;
	int ret;

	/* libibverbs expects the ibv_mr inside a verbs_mr. */
	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

int metaroce_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;

	free(vmr);
	return 0;
}

/*
 * ibv_rereg_mr(): the kernel re-registers in place (same handle); the new
 * keys come back in the response.  libibverbs has checked the flags and
 * updates mr->pd, addr and length itself.
 */
int metaroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		      void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	return ibv_cmd_rereg_mr(vmr, (uint32_t)flags, addr, length,
				(uintptr_t)addr, access, pd, &cmd, sizeof(cmd),
				&resp, sizeof(resp));
}

/*
 * Address handles live in the kernel; UD WQEs name one by the number the
 * CREATE_AH response carries (ibv_create_ah_from_wc() ends up here too).
 */
struct ibv_ah *metaroce_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct metaroce_create_ah_resp_full resp;
	struct metaroce_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;

	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	ah->ah_num = resp.drv_payload.ah_num;
	return &ah->ibv_ah;
}

int metaroce_destroy_ah(struct ibv_ah *ibah)
{
	int ret;

	ret = ibv_cmd_destroy_ah(ibah);
	if (ret)
		return ret;

	free(to_mah(ibah));
	return 0;
}
