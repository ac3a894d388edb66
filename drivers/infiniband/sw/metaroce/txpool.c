// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Packet heads from per-CPU page pools.
 *
 * Every packet we send is an skb whose head we fill: headers, payload
 * copied from the MR, trailer.  From the page allocator each new page is
 * zeroed first (init_on_alloc, on by default in distribution kernels),
 * although every byte of a head is written before it is sent: a page of
 * zeroes per two or three packets, as much work as the payload copy.  A
 * page pool hands out the pages its skbs gave back as they are (the
 * receiver, another CPU, or the device freed them), so a page is zeroed
 * once, when the pool first takes it.
 *
 * A pool is not locked against itself: it is taken only on its own CPU
 * with bottom halves off (in_softirq() and not in a hard interrupt), as
 * the stack's own per-CPU pools are; an skb freed anywhere returns its
 * page through the pool's ring, or straight to its cache when freed in
 * softirq on the pool's CPU.  Any other caller gets an ordinary head.
 */
#include <linux/cpumask.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <net/page_pool/helpers.h>

#include "txpool.h"

/* Pages a CPU's pool keeps for reuse beyond its cache: 1 MiB. */
#define MROCE_TXPOOL_PAGES	256

static DEFINE_PER_CPU(struct page_pool *, mroce_txpool);

int mroce_txpool_init(void)
{
	/*
	 * NUMA_NO_NODE: the pool takes and keeps pages of the node its CPU
	 * allocates on when it does (numa_mem_id()), not one fixed now.
	 */
	struct page_pool_params pp = {
		.order = 0,
		.pool_size = MROCE_TXPOOL_PAGES,
		.nid = NUMA_NO_NODE,
	};
	struct page_pool *pool;
	int cpu;

	for_each_possible_cpu(cpu) {
		pool = page_pool_create_percpu(&pp, cpu);
		if (IS_ERR(pool)) {
			mroce_txpool_exit();
			return PTR_ERR(pool);
		}
		per_cpu(mroce_txpool, cpu) = pool;
	}
	return 0;
}

/*
 * At module exit, after every device is gone.  A softirq freeing one of
 * the pools' skbs may have decided to put its page straight into the
 * pool's cache (page_pool_napi_local()): no pool is destroyed before
 * every such softirq is over, as the stack does for a NAPI's pool
 * (page_pool_disable_direct_recycling(), then a grace period, since a
 * section with bottom halves off is an RCU reader).  A page still in an
 * skb in flight keeps its pool until it comes back (page_pool_destroy()).
 */
void mroce_txpool_exit(void)
{
	struct page_pool *pool;
	int cpu;

	for_each_possible_cpu(cpu) {
		pool = per_cpu(mroce_txpool, cpu);
		if (pool)
			page_pool_disable_direct_recycling(pool);
	}
	synchronize_net();
	for_each_possible_cpu(cpu) {
		page_pool_destroy(per_cpu(mroce_txpool, cpu));
		per_cpu(mroce_txpool, cpu) = NULL;
	}
}

/*
 * An skb with a head of size bytes (SKB_HEAD_ALIGN()ed, at most a page:
 * the packets of a path MTU of up to 2048 bytes) from this CPU's pool, or
 * NULL: not in bottom-half context, with interrupts off (a pool's page is
 * put back with them on), or the pool is out of memory.  The skb gives
 * its head back to the pool when it is freed.  A GSO batch that takes the
 * head as a fragment (mroce_batch_ref()) holds a page reference of its
 * own, and a page so shared goes back to the page allocator, not to the
 * pool.
 */
struct sk_buff *mroce_txpool_skb(unsigned int size)
{
	unsigned int truesize = size;
	struct page_pool *pool;
	struct sk_buff *skb;
	void *data;

	if (!in_softirq() || in_hardirq() || irqs_disabled() ||
	    size > PAGE_SIZE)
		return NULL;
	pool = this_cpu_read(mroce_txpool);
	if (!pool)
		return NULL;
	data = page_pool_dev_alloc_va(pool, &truesize);
	if (!data)
		return NULL;
	skb = build_skb(data, truesize);
	if (!skb) {
		page_pool_free_va(pool, data, true);
		return NULL;
	}
	skb_mark_for_recycle(skb);
	return skb;
}
