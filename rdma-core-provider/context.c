// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * context.c - open and close a user context (ibv_open_device /
 * ibv_close_device) and the table of verbs the provider implements.
 *
 * Ops left NULL make libibverbs return EOPNOTSUPP (its built-in defaults).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metaroce.h"

static void metaroce_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops metaroce_ctx_ops = {
	.query_device_ex = metaroce_query_device_ex,
	.query_port = metaroce_query_port,
	.alloc_pd = metaroce_alloc_pd,
	.dealloc_pd = metaroce_dealloc_pd,
	.reg_mr = metaroce_reg_mr,
	.dereg_mr = metaroce_dereg_mr,
	.free_context = metaroce_free_context,
	.create_cq = metaroce_create_cq,
	.destroy_cq = metaroce_destroy_cq,
	.poll_cq = metaroce_poll_cq,
	.req_notify_cq = metaroce_req_notify_cq,
	.resize_cq = metaroce_resize_cq,
	.create_qp = metaroce_create_qp,
	.modify_qp = metaroce_modify_qp,
	.query_qp = metaroce_query_qp,
	.destroy_qp = metaroce_destroy_qp,
	.post_send = metaroce_post_send,
	.post_recv = metaroce_post_recv,
	.create_ah = metaroce_create_ah,
	.destroy_ah = metaroce_destroy_ah,
	.create_srq = metaroce_create_srq,
	.modify_srq = metaroce_modify_srq,
	.query_srq = metaroce_query_srq,
	.destroy_srq = metaroce_destroy_srq,
	.post_srq_recv = metaroce_post_srq_recv,
	.create_cq_ex = metaroce_create_cq_ex,
	.query_rt_values = metaroce_query_rt_values,
	.create_qp_ex = metaroce_create_qp_ex,
	.rereg_mr = metaroce_rereg_mr,
	.alloc_mw = metaroce_alloc_mw,
	.dealloc_mw = metaroce_dealloc_mw,
	.bind_mw = metaroce_bind_mw,
	/* Not provided (libibverbs answers EOPNOTSUPP): XRC, multicast. */
};

struct verbs_context *metaroce_alloc_context(struct ibv_device *ibdev,
					     int cmd_fd, void *private_data)
{
	struct metaroce_context *ctx;
	struct ibv_get_context cmd;
	struct metaroce_get_context_resp resp;
	int ret;

	(void)private_data;

	/* Takes ownership of cmd_fd (closed on failure). */
	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, vctx,
					   METAROCE_DRIVER_ID);
	if (!ctx)
		return NULL;

	/*
	 * No udata-in: cmd is just the core request.  The udata-out
	 * (struct metaroce_alloc_ucontext_resp) is what follows the core
	 * response inside resp.
	 */
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (ret) {
		metaroce_err(&ctx->vctx, "GET_CONTEXT failed: %s",
			     strerror(ret));
		goto err;
	}

	if (resp.drv_payload.abi_version != METAROCE_UVERBS_ABI_VERSION) {
		fprintf(stderr,
			METAROCE_PROVIDER_NAME ": %s: kernel context ABI %u, this provider supports %u\n",
			ibdev->name, resp.drv_payload.abi_version,
			(unsigned int)METAROCE_UVERBS_ABI_VERSION);
		ret = EPROTO;
		goto err;
	}
	ctx->abi_version = resp.drv_payload.abi_version;

	verbs_set_ops(&ctx->vctx, &metaroce_ctx_ops);
	return &ctx->vctx;

err:
	/* Closes cmd_fd, which also frees the kernel ucontext if any. */
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	errno = ret;
	return NULL;
}

static void metaroce_free_context(struct ibv_context *ibctx)
{
	struct metaroce_context *ctx = to_mctx(ibctx);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}
