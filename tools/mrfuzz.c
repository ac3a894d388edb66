// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mrfuzz: send malformed MetaRoCE packets at a device (hostile input test).
 *
 *   mrfuzz -t TARGET_IP [-c COUNT] [-s SEED] [-p PORT] [-f CORPUS] [-S SRC_IP]
 *
 * Each packet is one of:
 *   - random bytes of random length (mostly caught by length and CRC checks);
 *   - a random but well-framed packet: Ver 1, a defined or undefined Type,
 *     HdrLen and Payload Length consistent with the UDP length, random
 *     fields, valid CRC32C (reaches type, header and connection checks);
 *   - a mutation of a corpus packet (bit flips, interesting values in 8,
 *     16 and 32-bit fields, truncation, extension, Type/HdrLen/Payload
 *     Length changes), usually with the lengths made consistent again and
 *     the CRC32C recomputed, so that it passes the integrity check and
 *     reaches the parsing behind it.
 *
 * CORPUS holds one packet per line: a class letter, a space and the UDP
 * payload in hex.  Class F packets belong to a connection the fuzzer may
 * disturb (its own); mutations keep their DCID and Token.  Class L packets
 * belong to live traffic that must keep working: whenever their mutation
 * gets a valid CRC32C, the Token is changed too, so they never carry valid
 * credentials.
 *
 * Prints the number of packets of each kind and the rate, and the next PSN
 * of the fuzzer's own connection (to continue it in another run).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXPKT		2048
#define MAXCORPUS	4096
#define NSOCK		16
#define BATCH		64

struct seed {
	unsigned char b[MAXPKT];
	int len;
	int live;
};

static struct seed corpus[MAXCORPUS];
static int ncorpus, nown;		/* class F seeds come first */
static uint32_t own_psn;		/* next PSN on our own connection */
static int own_psn_set;
static uint64_t rng_state;
static uint32_t crc_table[256];

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static unsigned int rn(unsigned int n)
{
	return n ? (unsigned int)(rnd() % n) : 0;
}

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78 : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc32c(const unsigned char *p, int n)
{
	uint32_t c = 0xFFFFFFFF;

	while (n--)
		c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return ~c;
}

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

/* Append the CRC32C trailer over p[0..n). */
static int seal(unsigned char *p, int n)
{
	put32(p + n, crc32c(p, n));
	return n + 4;
}

/* Make HdrLen/Payload Length fit the length n of headers+payload (no MAC). */
static void fix_lengths(unsigned char *p, int n)
{
	int hdr = p[4] * 4;

	p[2] &= ~0x02;		/* no MAC flag: nothing to authenticate */
	if (hdr < 32 || hdr > n) {
		hdr = n & ~3;
		if (hdr < 32)
			hdr = 32;
		p[4] = hdr / 4;
	}
	put16(p + 6, n - hdr > 0 ? n - hdr : 0);
}

static const uint8_t types[] = {
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b,
	0x20, 0x21, 0x22, 0x23, 0x24, 0x28, 0x29, 0x2a, 0x2b, 0x30,
	0x00, 0x0c, 0x1f, 0x25, 0x2c, 0x31, 0xff,
};
static const uint8_t hdrlens[] = {
	14, 15, 15, 17, 18, 17, 14, 22, 22, 16, 16,
	21, 14, 12, 25, 9, 28, 28, 10, 12, 12,
	8, 8, 8, 8, 8, 8, 8,
};
static const uint32_t interesting32[] = {
	0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0xfff, 0x1000, 0xffff, 0x10000,
	0x7fffffff, 0x80000000, 0x80000001, 0xfffffffe, 0xffffffff, 0x00ffffff,
};

static int gen_random(unsigned char *p)
{
	int n = rn(200);

	for (int i = 0; i < n; i++)
		p[i] = rnd();
	if (n >= 1 && rn(2))
		p[0] = 0x10;	/* get past the version check sometimes */
	return n;
}

/* A well-framed packet with a random body and a valid CRC. */
static int gen_framed(unsigned char *p)
{
	int t = rn(sizeof(types)), hdr, plen, n;

	hdr = hdrlens[t] * 4;
	if (rn(8) == 0)
		hdr = 32 + 4 * rn(40);
	plen = rn(4) ? 0 : rn(1100);
	n = hdr + plen;
	for (int i = 0; i < n; i++)
		p[i] = rnd();
	p[0] = 0x10;
	p[1] = types[t];
	p[2] &= ~0x02;
	p[4] = hdr / 4;
	put16(p + 6, plen);
	if (rn(2))
		put32(p + 8, 0);	/* DCID 0: CONNECT/pre-handshake paths */
	if (types[t] == 0x20)
		p[48] = rn(4) ? (unsigned int)(hdr - 84) / 16 : rn(256);	/* Num SR */
	if (types[t] == 0x24)
		p[32] = rn(4) ? (unsigned int)(hdr - 36) / 12 : rn(256);	/* Num Entries */
	if (types[t] == 0x28 || types[t] == 0x29) {
		p[32] = rn(4) ? 0x11 : rnd();
		p[33] = rn(4) ? (unsigned int)(hdr - 96) / 16 : rn(256);	/* Num Addrs */
	}
	return seal(p, n);
}

static void mutate_one(unsigned char *p, int *np, int live)
{
	int n = *np, off, k;

	if (n < 4)
		return;
	switch (rn(11)) {
	case 0:	/* bit flip */
		off = rn(n);
		p[off] ^= 1 << rn(8);
		break;
	case 1:	/* random byte */
		p[rn(n)] = rnd();
		break;
	case 2:	/* interesting 32-bit value at an aligned offset */
		off = rn(n / 4) * 4;
		put32(p + off, interesting32[rn(sizeof(interesting32) / 4)]);
		break;
	case 3:	/* small delta on a 32-bit field (PSN, PLW, SSN, lengths) */
		off = rn(n / 4) * 4;
		k = (int)rn(513) - 256;
		put32(p + off, ((uint32_t)p[off] << 24 | p[off + 1] << 16 |
				p[off + 2] << 8 | p[off + 3]) + k);
		break;
	case 4:	/* Type */
		p[1] = rn(4) ? types[rn(sizeof(types))] : rnd();
		break;
	case 5:	/* HdrLen */
		p[4] = rn(2) ? (unsigned int)(p[4] + rn(9) - 4) : rn(256);
		break;
	case 6:	/* Payload Length */
		put16(p + 6, rn(2) ? rn(65536) : (unsigned int)(p[6] << 8 | p[7]) + rn(9) - 4);
		break;
	case 7:	/* truncate */
		*np = rn(n);
		break;
	case 8:	/* extend */
		k = rn(256);
		if (n + k > MAXPKT - 8)
			k = MAXPKT - 8 - n;
		for (int i = 0; i < k; i++)
			p[n + i] = rnd();
		*np = n + k;
		break;
	case 9:	/* flags */
		p[2] = rnd();
		p[3] = rnd();
		break;
	default: /* a byte of the extension headers */
		if (n > 32)
			p[32 + rn(n - 32)] = rnd();
		break;
	}
	(void)live;
}

static int gen_mutant(unsigned char *p, unsigned int *valid)
{
	/* Our own connection's seeds half of the time: they go deepest. */
	const struct seed *s = nown && (nown == ncorpus || rn(2)) ?
			       &corpus[rn(nown)] :
			       &corpus[nown + rn(ncorpus - nown)];
	int n = s->len - 4, muts = 1 + rn(6);	/* without the old trailer */
	unsigned char dcid[4], token[8];

	memcpy(p, s->b, s->len);
	if (!s->live && p[1] >= 0x01 && p[1] <= 0x1f) {
		/*
		 * A fresh PSN, PLW a little below: new at path level, so the
		 * mutation reaches the stream layer instead of being a
		 * path duplicate.
		 */
		put32(p + 16, own_psn);
		put32(p + 20, own_psn - rn(8));
		own_psn++;
	}
	memcpy(dcid, p + 8, 4);
	memcpy(token, p + 24, 8);
	for (int i = 0; i < muts; i++)
		mutate_one(p, &n, s->live);
	if (n < 36 || rn(10) == 0) {
		/* Keep the damage, stale or no trailer. */
		if (n > 4 && rn(2))
			return n;
		return n < 0 ? 0 : n;
	}
	if (rn(5))
		fix_lengths(p, n);
	if (!s->live && rn(4)) {
		/* Keep the credentials of our own connection. */
		memcpy(p + 8, dcid, 4);
		memcpy(p + 24, token, 8);
	}
	if (s->live) {
		/* Never valid credentials for live traffic. */
		p[24 + rn(8)] ^= 1 + rn(255);
	}
	(*valid)++;
	return seal(p, n);
}

static int load_corpus(const char *path)
{
	char line[2 * MAXPKT + 16];
	FILE *f = fopen(path, "r");

	if (!f) {
		perror(path);
		return -1;
	}
	while (ncorpus < MAXCORPUS && fgets(line, sizeof(line), f)) {
		struct seed *s = &corpus[ncorpus];
		char *h = line + 2;
		int n = 0;

		if (line[0] != 'F' && line[0] != 'L')
			continue;
		s->live = line[0] == 'L';
		while (h[0] && h[1] && h[0] != '\n' && n < MAXPKT - 300) {
			unsigned int b;

			if (sscanf(h, "%2x", &b) != 1)
				break;
			s->b[n++] = b;
			h += 2;
		}
		if (n >= 36) {
			s->len = n;
			if (!s->live && ncorpus > nown) {
				/* Keep class F first. */
				struct seed tmp = corpus[nown];

				corpus[nown] = *s;
				*s = tmp;
			}
			if (!corpus[nown].live) {
				const unsigned char *b = corpus[nown].b;
				uint32_t psn = (uint32_t)b[16] << 24 | b[17] << 16 |
					       b[18] << 8 | b[19];

				if (b[1] >= 0x01 && b[1] <= 0x1f &&
				    (!own_psn_set || (int32_t)(psn - own_psn) > 0)) {
					own_psn = psn;
					own_psn_set = 1;
				}
				nown++;
			}
			ncorpus++;
		}
	}
	fclose(f);
	own_psn += 1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *target = NULL, *src = NULL, *corpus_file = NULL;
	unsigned long count = 100000, sent = 0, kinds[3] = {}, errors = 0;
	unsigned int port = 4793, valid = 0;
	static unsigned char bufs[BATCH][MAXPKT];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_in dst = { .sin_family = AF_INET };
	struct timespec t0, t1;
	int socks[NSOCK], opt;
	double secs;

	rng_state = 0x9E3779B97F4A7C15ULL;
	while ((opt = getopt(argc, argv, "t:c:s:p:f:S:")) != -1) {
		switch (opt) {
		case 't': target = optarg; break;
		case 'c': count = strtoul(optarg, NULL, 0); break;
		case 's': rng_state ^= strtoull(optarg, NULL, 0) * 0x9E3779B97F4A7C15ULL; break;
		case 'p': port = strtoul(optarg, NULL, 0); break;
		case 'f': corpus_file = optarg; break;
		case 'S': src = optarg; break;
		default:
			fprintf(stderr, "usage: %s -t TARGET_IP [-c COUNT] [-s SEED] [-p PORT] [-f CORPUS] [-S SRC_IP]\n",
				argv[0]);
			return 2;
		}
	}
	if (!target || inet_pton(AF_INET, target, &dst.sin_addr) != 1) {
		fprintf(stderr, "mrfuzz: -t TARGET_IP (IPv4) is required\n");
		return 2;
	}
	if (!rng_state)
		rng_state = 1;
	dst.sin_port = htons(port);
	crc_init();
	if (corpus_file && load_corpus(corpus_file))
		return 1;

	for (int i = 0; i < NSOCK; i++) {
		struct sockaddr_in sa = { .sin_family = AF_INET };
		int buf = 4 << 20;

		socks[i] = socket(AF_INET, SOCK_DGRAM, 0);
		if (socks[i] < 0) {
			perror("socket");
			return 1;
		}
		setsockopt(socks[i], SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
		if (src && inet_pton(AF_INET, src, &sa.sin_addr) != 1) {
			fprintf(stderr, "mrfuzz: bad -S address\n");
			return 2;
		}
		/* Ports of the datagram range and others: any source is allowed. */
		if (bind(socks[i], (struct sockaddr *)&sa, sizeof(sa))) {
			perror("bind");
			return 1;
		}
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (sent < count) {
		int nb = count - sent < BATCH ? count - sent : BATCH, done;
		int s = socks[rn(NSOCK)];

		for (int i = 0; i < nb; i++) {
			unsigned int r = rn(100), len, kind;

			if (r < 10 || (!ncorpus && r < 30))
				kind = 0, len = gen_random(bufs[i]);
			else if (r < 30 || !ncorpus)
				kind = 1, len = gen_framed(bufs[i]);
			else
				kind = 2, len = gen_mutant(bufs[i], &valid);
			kinds[kind]++;
			iov[i].iov_base = bufs[i];
			iov[i].iov_len = len;
			memset(&msgs[i], 0, sizeof(msgs[i]));
			msgs[i].msg_hdr.msg_name = &dst;
			msgs[i].msg_hdr.msg_namelen = sizeof(dst);
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
		}
		done = sendmmsg(s, msgs, nb, 0);
		if (done < 0) {
			if (errno != ENOBUFS && errno != EAGAIN && errno != ECONNREFUSED) {
				perror("sendmmsg");
				return 1;
			}
			errors++;
			usleep(100);
			continue;
		}
		sent += done;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("sent %lu packets in %.1f s (%.0f/s): random %lu, framed %lu, mutated %lu (%u with a recomputed CRC32C), %lu send retries\n",
	       sent, secs, sent / secs, kinds[0], kinds[1], kinds[2], valid,
	       errors);
	if (own_psn_set)
		printf("next own PSN %u\n", own_psn);
	return 0;
}
