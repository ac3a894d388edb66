// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mpi_check: what an MPI job moves, checked (test_ecosystem.sh).  Rank 0
 * and rank 1 ping-pong messages of 8 B to 1 MiB, each byte a function of
 * its offset, size and round, the answer a different function; then every
 * rank takes part in an allreduce whose sums are known.  Prints
 * "rank N: ok" or what went wrong; exits 0 only if every byte was right.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pattern.h"

#define ROUNDS	20
#define NSUM	1024

static int pingpong(int rank, int size)
{
	unsigned char *b = malloc(size);
	int bad = 0;

	if (!b)
		return 1;
	/* Every round runs, also after a wrong one: the ranks stay in step. */
	for (int r = 0; r < ROUNDS; r++) {
		int off;

		if (rank == 0) {
			pattern_fill(b, size, r, 0);
			MPI_Send(b, size, MPI_BYTE, 1, r, MPI_COMM_WORLD);
			MPI_Recv(b, size, MPI_BYTE, 1, r, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			off = pattern_check(b, size, r, 1);
		} else {
			MPI_Recv(b, size, MPI_BYTE, 0, r, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			off = pattern_check(b, size, r, 0);
			pattern_fill(b, size, r, 1);
			MPI_Send(b, size, MPI_BYTE, 0, r, MPI_COMM_WORLD);
		}
		if (off >= 0 && !bad) {
			printf("rank %d: %d-byte message of round %d wrong at offset %d\n",
			       rank, size, r, off);
			bad = 1;
		}
	}
	free(b);
	return bad;
}

static int allreduce(int rank, int n)
{
	static long v[NSUM], s[NSUM];

	for (int i = 0; i < NSUM; i++)
		v[i] = (long)(rank + 1) * i;
	MPI_Allreduce(v, s, NSUM, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < NSUM; i++) {
		if (s[i] != (long)i * n * (n + 1) / 2) {
			printf("rank %d: allreduce sum %d is %ld, expected %ld\n",
			       rank, i, s[i], (long)i * n * (n + 1) / 2);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 8, 4096, 65536, 1 << 20 };
	int rank, n, bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (n < 2) {
		printf("rank %d: needs 2 ranks, has %d\n", rank, n);
		bad = 1;
	}
	for (unsigned int i = 0; n >= 2 && i < sizeof(sizes) / sizeof(*sizes); i++)
		if (rank < 2)
			bad |= pingpong(rank, sizes[i]);
	/* Every rank takes part, also after a failed ping-pong. */
	bad |= allreduce(rank, n);
	printf("rank %d: %s\n", rank, bad ? "FAILED" : "ok");
	MPI_Finalize();
	return bad;
}
