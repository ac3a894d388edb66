// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CRC32C of every packet sent and received (spec 4.6, MRC-ENC-016).
 *
 * The fastest implementation depends on the machine: on x86 the crc32
 * instruction is far ahead, but an emulator that runs it bit by bit (QEMU
 * TCG) makes a table-driven CRC five times faster.  So, as lib/raid6 and
 * the xor code do, the module measures its candidates at load on a
 * packet-sized buffer and takes the fastest; each candidate must first
 * give the known answers (RFC 3720 B.4 and the "123456789" check value).
 * The crc32c_impl parameter forces one; reading it tells the choice.
 *
 *   lib   the kernel's crc32c() (the crypto layer's best: on x86,
 *         crc32c-intel, with PCLMUL folding for long buffers)
 *   insn  the crc32 instruction, 8 bytes at a time (x86 with SSE4.2)
 *   sb8   slice-by-8 tables, 8 KiB, any CPU
 */
#include <linux/crc32c.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/static_call.h>
#include <linux/unaligned.h>
#ifdef CONFIG_X86_64
#include <asm/cpufeature.h>
#endif

#include "crc.h"

#define MROCE_CRC32C_POLY	0x82f63b78	/* reflected Castagnoli */
#define MROCE_CRC_BENCH_LEN	1092		/* a 1 KiB segment's packet */
#define MROCE_CRC_BENCH_RUNS	5
#define MROCE_CRC_BENCH_ITERS	32

static char mroce_crc_impl[8] = "auto";
module_param_string(crc32c_impl, mroce_crc_impl, sizeof(mroce_crc_impl),
		    0444);
MODULE_PARM_DESC(crc32c_impl,
		 "Packet CRC32C implementation: auto (measure at load), lib, insn, sb8; reads the choice");

static u32 mroce_crc_tab[8][256];

u32 mroce_crc_sb8(u32 crc, const u8 *p, size_t len)
{
	const u32 (*t)[256] = mroce_crc_tab;
	u64 v;

	for (; len >= 8; p += 8, len -= 8) {
		v = get_unaligned_le64(p) ^ crc;
		crc = t[7][v & 0xff] ^ t[6][(v >> 8) & 0xff] ^
		      t[5][(v >> 16) & 0xff] ^ t[4][(v >> 24) & 0xff] ^
		      t[3][(v >> 32) & 0xff] ^ t[2][(v >> 40) & 0xff] ^
		      t[1][(v >> 48) & 0xff] ^ t[0][v >> 56];
	}
	while (len--)
		crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

DEFINE_STATIC_CALL(mroce_crc32c, mroce_crc_sb8);

static u32 mroce_crc_lib(u32 crc, const u8 *p, size_t len)
{
	return crc32c(crc, p, len);
}

#ifdef CONFIG_X86_64
static u32 mroce_crc_insn(u32 crc, const u8 *p, size_t len)
{
	u64 c = crc;

	for (; len >= 8; p += 8, len -= 8)
		asm("crc32q %1, %0" : "+r" (c) : "rm" (get_unaligned((const u64 *)p)));
	crc = c;
	while (len--)
		asm("crc32b %1, %0" : "+r" (crc) : "rm" (*p++));
	return crc;
}

static bool mroce_crc_insn_ok(void)
{
	return boot_cpu_has(X86_FEATURE_XMM4_2);
}
#else
#define mroce_crc_insn NULL
static bool mroce_crc_insn_ok(void)
{
	return false;
}
#endif

struct mroce_crc_impl {
	const char *name;
	u32 (*fn)(u32 crc, const u8 *p, size_t len);
	bool (*usable)(void);
};

static const struct mroce_crc_impl mroce_crc_impls[] = {
	{ "lib", mroce_crc_lib, NULL },
	{ "insn", mroce_crc_insn, mroce_crc_insn_ok },
	{ "sb8", mroce_crc_sb8, NULL },
};

/* The definition: one byte into crc, bit by bit. */
static u32 mroce_crc_bitwise(u32 crc, u8 b)
{
	int k;

	crc ^= b;
	for (k = 0; k < 8; k++)
		crc = crc & 1 ? (crc >> 1) ^ MROCE_CRC32C_POLY : crc >> 1;
	return crc;
}

static void mroce_crc_tab_init(void)
{
	int i, k;

	for (i = 0; i < 256; i++)
		mroce_crc_tab[0][i] = mroce_crc_bitwise(0, i);
	for (i = 0; i < 256; i++)
		for (k = 1; k < 8; k++)
			mroce_crc_tab[k][i] = (mroce_crc_tab[k - 1][i] >> 8) ^
				mroce_crc_tab[0][mroce_crc_tab[k - 1][i] & 0xff];
}

/*
 * The known answers: "123456789" (the CRC catalogue's check value) and
 * the four 32-byte patterns of RFC 3720 B.4; then every length up to 64
 * at every alignment against the bitwise definition, so that the head and
 * tail loops are covered too.  buf holds MROCE_CRC_BENCH_LEN + 8 bytes.
 */
static bool mroce_crc_vectors_ok(const struct mroce_crc_impl *c, u8 *buf)
{
	static const u32 rfc3720[4] = {
		0x8a9136aa, 0x62a8ab43, 0x46dd794e, 0x113fdb5c
	};
	u32 want, got, off, len;
	int i, k;

	if (~c->fn(~0U, (const u8 *)"123456789", 9) != 0xe3069283)
		return false;
	for (k = 0; k < 4; k++) {
		for (i = 0; i < 32; i++)
			buf[i] = k == 0 ? 0 : k == 1 ? 0xff : k == 2 ? i : 31 - i;
		if (~c->fn(~0U, buf, 32) != rfc3720[k])
			return false;
	}
	for (i = 0; i < 72; i++)
		buf[i] = i * 37 + 11;
	for (off = 0; off < 8; off++) {
		for (len = 0; len <= 64; len++) {
			want = ~0U;
			for (i = 0; i < len; i++)
				want = mroce_crc_bitwise(want, buf[off + i]);
			got = c->fn(~0U, buf + off, len);
			if (got != want)
				return false;
		}
	}
	return true;
}

/* Nanoseconds per packet-sized buffer: the best of a few runs. */
static u64 mroce_crc_bench(const struct mroce_crc_impl *c, u8 *buf)
{
	u64 best = U64_MAX, t;
	u32 sum = 0;
	int r, i;

	for (r = 0; r < MROCE_CRC_BENCH_RUNS; r++) {
		t = ktime_get_ns();
		for (i = 0; i < MROCE_CRC_BENCH_ITERS; i++)
			sum += c->fn(sum, buf, MROCE_CRC_BENCH_LEN);
		t = ktime_get_ns() - t;
		best = min(best, t / MROCE_CRC_BENCH_ITERS);
		cond_resched();
	}
	/* Keep the compiler from dropping the loop. */
	buf[0] ^= sum & 1;
	return best;
}

int mroce_crc_init(void)
{
	const struct mroce_crc_impl *c, *pick = NULL;
	bool any = !strcmp(mroce_crc_impl, "auto");
	u64 ns, best = U64_MAX;
	char report[96] = "";
	size_t n = 0;
	int i;
	u8 *buf;

	mroce_crc_tab_init();
	buf = kmalloc(MROCE_CRC_BENCH_LEN + 8, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(mroce_crc_impls); i++) {
		c = &mroce_crc_impls[i];
		if (!any && strcmp(mroce_crc_impl, c->name))
			continue;
		if (!c->fn || (c->usable && !c->usable())) {
			n += scnprintf(report + n, sizeof(report) - n,
				       " %s unavailable", c->name);
			continue;
		}
		if (!mroce_crc_vectors_ok(c, buf)) {
			pr_err("metaroce: crc32c %s gives wrong answers: not used\n",
			       c->name);
			continue;
		}
		ns = mroce_crc_bench(c, buf);
		n += scnprintf(report + n, sizeof(report) - n, " %s %llu ns",
			       c->name, ns);
		if (ns < best) {
			best = ns;
			pick = c;
		}
	}
	kfree(buf);
	if (!pick) {
		pr_err("metaroce: crc32c_impl=%s: no usable implementation\n",
		       mroce_crc_impl);
		return -EINVAL;
	}
	static_call_update(mroce_crc32c, pick->fn);
	strscpy(mroce_crc_impl, pick->name, sizeof(mroce_crc_impl));
	pr_info("metaroce: crc32c vectors ok; per %u B:%s; using %s\n",
		MROCE_CRC_BENCH_LEN, report, pick->name);
	return 0;
}
