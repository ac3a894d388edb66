// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Failure reasons and diagnostics of the running test.  The first failure
 * is the one reported on the test's "not ok" line.
 */
#include <linux/kernel.h>
#include <linux/printk.h>

#include "kverbs.h"

int kv_fail(struct kv_test *t, const char *fmt, ...)
{
	va_list args;

	if (!t->err) {
		va_start(args, fmt);
		vsnprintf(t->reason, sizeof(t->reason), fmt, args);
		va_end(args);
		t->err = -EIO;
	}
	return t->err;
}

void kv_diag(struct kv_test *t, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_info("# %s: %pV\n", t->name, &vaf);
	va_end(args);
}
