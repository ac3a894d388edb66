// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mroce_kverbs: module parameters, test selection and the TAP report.
 * Every test runs from module init; init fails with -EIO if any failed,
 * so that insmod reports the result.
 *
 *   insmod mroce_kverbs.ko dev_a=A dev_b=B ip_a=IPV4 ip_b=IPV4 \
 *          [tests=all|NAME,...] [size=BYTES] [iters=N]
 */
#include <linux/bitmap.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "kverbs.h"

static char *dev_a;
module_param(dev_a, charp, 0444);
MODULE_PARM_DESC(dev_a, "first ib device (requester side)");
static char *dev_b;
module_param(dev_b, charp, 0444);
MODULE_PARM_DESC(dev_b, "second ib device (responder side)");
static char *ip_a;
module_param(ip_a, charp, 0444);
MODULE_PARM_DESC(ip_a, "IPv4 address of dev_a's netdev");
static char *ip_b;
module_param(ip_b, charp, 0444);
MODULE_PARM_DESC(ip_b, "IPv4 address of dev_b's netdev");
static char *tests = "all";
module_param(tests, charp, 0444);
MODULE_PARM_DESC(tests, "comma-separated test names, or all (default)");
static unsigned int size = 4096;
module_param(size, uint, 0444);
MODULE_PARM_DESC(size, "message size in bytes, 1 to 1048576 (default 4096)");
static unsigned int iters = 256;
module_param(iters, uint, 0444);
MODULE_PARM_DESC(iters, "messages in rc_many (default 256)");
unsigned int kv_qp_timeout = 14;
module_param_named(qp_timeout, kv_qp_timeout, uint, 0444);
MODULE_PARM_DESC(qp_timeout, "RC QPs' timeout, 1 to 31 (default 14: 67 ms)");
unsigned int kv_wc_timeout_ms = 10000;
module_param_named(wc_timeout_ms, kv_wc_timeout_ms, uint, 0444);
MODULE_PARM_DESC(wc_timeout_ms, "wall time to wait for a completion, ms (default 10000)");

struct kv_case {
	const char *name;
	int (*run)(struct kv_test *t);
};

static const struct kv_case kv_cases[] = {
	{ "objects", kv_test_objects },
	{ "flush", kv_test_flush },
	{ "ud_send", kv_test_ud_send },
	{ "rc_send", kv_test_rc_send },
	{ "rc_write", kv_test_rc_write },
	{ "rc_read", kv_test_rc_read },
	{ "rc_atomic", kv_test_rc_atomic },
	{ "rc_bad_rkey", kv_test_rc_bad_rkey },
	{ "rc_rnr", kv_test_rc_rnr },
	{ "rc_many", kv_test_rc_many },
	{ "frmr", kv_test_frmr },
	{ "frmr_inv", kv_test_frmr_inv },
	{ "frmr_err", kv_test_frmr_err },
	{ "srq", kv_test_srq },
	{ "srq_err", kv_test_srq_err },
	{ "ud_srq", kv_test_ud_srq },
	{ "limits", kv_test_limits },
};

#define KV_NCASES	ARRAY_SIZE(kv_cases)

static int kv_select_one(const char *name, unsigned long *sel)
{
	size_t i;

	if (!strcmp(name, "all")) {
		bitmap_fill(sel, KV_NCASES);
		return 0;
	}
	for (i = 0; i < KV_NCASES; i++) {
		if (!strcmp(name, kv_cases[i].name)) {
			__set_bit(i, sel);
			return 0;
		}
	}
	pr_err("Bail out! unknown test '%s'\n", name);
	return -EINVAL;
}

/* Parse the tests parameter into a bitmap of kv_cases. */
static int kv_select(unsigned long *sel)
{
	char *list, *p, *name;
	int err = 0;

	list = kstrdup(tests ?: "all", GFP_KERNEL);
	if (!list)
		return -ENOMEM;
	p = list;
	while (!err && (name = strsep(&p, ",")) != NULL) {
		name = strim(name);
		if (*name)
			err = kv_select_one(name, sel);
	}
	kfree(list);
	if (!err && bitmap_empty(sel, KV_NCASES)) {
		pr_err("Bail out! no test selected\n");
		err = -EINVAL;
	}
	return err;
}

static bool kv_run_one(struct kv_ctx *ctx, const struct kv_case *c, int n)
{
	struct kv_test t = { .ctx = ctx, .name = c->name };
	int err;

	err = c->run(&t);
	if (err && !t.err)
		kv_fail(&t, "%pe", ERR_PTR(err));
	if (t.err) {
		pr_info("not ok %d - %s: %s\n", n, c->name, t.reason);
		return false;
	}
	pr_info("ok %d - %s\n", n, c->name);
	return true;
}

static int __init kv_init(void)
{
	DECLARE_BITMAP(sel, KV_NCASES) = {};
	int n = 0, passed = 0, failed = 0;
	struct kv_ctx *ctx;
	size_t i;
	int err;

	if (!dev_a || !dev_b || !ip_a || !ip_b) {
		pr_err("Bail out! dev_a, dev_b, ip_a and ip_b are required\n");
		return -EINVAL;
	}
	if (!size || size > KV_BIG || !iters) {
		pr_err("Bail out! size must be 1..%u and iters at least 1\n",
		       KV_BIG);
		return -EINVAL;
	}
	err = kv_select(sel);
	if (err)
		return err;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->size = size;
	ctx->iters = iters;
	err = kv_dev_open(&ctx->dev[0], dev_a, ip_a);
	if (!err)
		err = kv_dev_open(&ctx->dev[1], dev_b, ip_b);
	if (err)
		goto out;
	kv_resolve_peer_mac(&ctx->dev[0], &ctx->dev[1]);
	kv_resolve_peer_mac(&ctx->dev[1], &ctx->dev[0]);

	pr_info("1..%u\n", bitmap_weight(sel, KV_NCASES));
	for_each_set_bit(i, sel, KV_NCASES) {
		if (kv_run_one(ctx, &kv_cases[i], ++n))
			passed++;
		else
			failed++;
	}
	pr_info("done %d passed %d failed\n", passed, failed);
	err = failed ? -EIO : 0;
out:
	kv_dev_close(&ctx->dev[1]);
	kv_dev_close(&ctx->dev[0]);
	kfree(ctx);
	return err;
}

/* Everything is released before init returns. */
static void __exit kv_exit(void)
{
}

module_init(kv_init);
module_exit(kv_exit);

MODULE_AUTHOR("The MetaRoCE developers");
MODULE_DESCRIPTION("MetaRoCE selftest: kernel verbs consumer between two devices");
MODULE_LICENSE("Dual BSD/GPL");
