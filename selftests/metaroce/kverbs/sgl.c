// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Scatter/gather layouts: up to KV_SGL_MAX pieces of one buffer, separated
 * by canary gaps, holding one contiguous stream of a data pattern.
 */
#include "kverbs.h"

void kv_sgl_layout(struct kv_sgl *l, const u32 *lens, int n)
{
	size_t off = 0;
	int i;

	memset(l, 0, sizeof(*l));
	l->n = n;
	for (i = 0; i < n; i++) {
		l->off[i] = off;
		l->len[i] = lens[i];
		l->total += lens[i];
		off += lens[i] + KV_SGL_GAP;
	}
	l->span = off;
}

/* Fill the pieces with bytes start.. of pattern seed, the gaps with canary. */
void kv_sgl_fill(const struct kv_sgl *l, u8 *base, u32 seed, size_t start)
{
	size_t pos = start;
	int i;

	kv_canary(base, l->span);
	for (i = 0; i < l->n; i++) {
		kv_fill(base + l->off[i], l->len[i], seed, pos);
		pos += l->len[i];
	}
}

/*
 * The first bytes of the stream hold bytes start.. of pattern seed; the
 * rest of the pieces and every gap still hold the canary.
 */
int kv_sgl_check(struct kv_test *t, const struct kv_sgl *l, const u8 *base,
		 u32 bytes, u32 seed, size_t start, const char *what)
{
	size_t pos = 0, gap = 0;
	u32 n;
	int i, err;

	for (i = 0; i < l->n; i++) {
		err = kv_check_canary(t, base + gap, l->off[i] - gap, what);
		if (err)
			return err;
		n = pos < bytes ? min_t(u32, l->len[i], bytes - pos) : 0;
		err = kv_check_pattern(t, base + l->off[i], n, seed,
				       start + pos, what);
		if (!err)
			err = kv_check_canary(t, base + l->off[i] + n,
					      l->len[i] - n, what);
		if (err)
			return err;
		pos += n;
		gap = l->off[i] + l->len[i];
	}
	return kv_check_canary(t, base + gap, l->span - gap, what);
}

/* The SGEs of the layout in b, with ep's local DMA lkey. */
void kv_sgl_sges(const struct kv_sgl *l, const struct kv_ep *ep,
		 const struct kv_buf *b, struct ib_sge *sge)
{
	int i;

	for (i = 0; i < l->n; i++)
		sge[i] = kv_sge(ep, b, l->off[i], l->len[i]);
}
