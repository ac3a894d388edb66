/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The packet CRC (CRC32C, spec 4.6): one implementation, chosen at module
 * load by measuring the candidates on this CPU (crc.c).
 */
#ifndef MROCE_CRC_H
#define MROCE_CRC_H

#include <linux/static_call.h>
#include <linux/types.h>

/* CRC32C of len bytes at p, continuing crc (no pre- or post-inversion). */
u32 mroce_crc_sb8(u32 crc, const u8 *p, size_t len);
DECLARE_STATIC_CALL(mroce_crc32c, mroce_crc_sb8);

/* The packet CRC of len bytes at p (MRC-ENC-016): the inverted CRC32C. */
static inline u32 mroce_crc(const void *p, size_t len)
{
	return ~static_call(mroce_crc32c)(~0U, p, len);
}

/* The same over the two parts of a packet split in two (a received batch). */
static inline u32 mroce_crc2(const void *p, size_t len, const void *q,
			     size_t qlen)
{
	return ~static_call(mroce_crc32c)(static_call(mroce_crc32c)(~0U, p, len),
					  q, qlen);
}

int mroce_crc_init(void);

#endif
