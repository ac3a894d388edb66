/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Packet buffers that are recycled, not zeroed again: one page pool per
 * CPU for the heads of the packets we build in bottom-half context.
 */
#ifndef MROCE_TXPOOL_H
#define MROCE_TXPOOL_H

#include <linux/skbuff.h>

int mroce_txpool_init(void);
void mroce_txpool_exit(void);
struct sk_buff *mroce_txpool_skb(unsigned int size);

#endif /* MROCE_TXPOOL_H */
