/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The byte pattern of the ping-pong checkers (mpi_check.c, ucp_check.c):
 * message bytes as a function of offset, size, round and direction.
 */
#ifndef MROCE_PROGS_PATTERN_H
#define MROCE_PROGS_PATTERN_H

#include <stddef.h>
#include <stdint.h>

/*
 * A byte that depends on its whole offset (not on the offset modulo 256),
 * so that a block placed at the wrong offset or written twice is caught;
 * answer tells the two directions apart.
 */
static inline unsigned char pattern(size_t off, size_t size, int round,
				    int answer)
{
	uint32_t x = (uint32_t)off * 2654435761u + (uint32_t)size * 40503u +
		     (uint32_t)round * 977u + (uint32_t)answer * 131u;

	x ^= x >> 15;
	x *= 2246822519u;
	x ^= x >> 13;
	return (unsigned char)(x >> 24);
}

static inline void pattern_fill(unsigned char *b, size_t size, int round,
				int answer)
{
	for (size_t j = 0; j < size; j++)
		b[j] = pattern(j, size, round, answer);
}

/* The first offset of b that does not hold the pattern, or -1. */
static inline long pattern_check(const unsigned char *b, size_t size,
				 int round, int answer)
{
	for (size_t j = 0; j < size; j++)
		if (b[j] != pattern(j, size, round, answer))
			return (long)j;
	return -1;
}

#endif
