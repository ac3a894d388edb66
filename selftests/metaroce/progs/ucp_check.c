// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ucp_check: UCX's UCP layer moving checked data (test_ecosystem.sh,
 * test_ecosystem_2vm.sh).  ucx_perftest measures but never looks at the
 * bytes; this ping-pongs messages of 8 B to 1 MiB (odd sizes among them)
 * through UCP's tag-matching or stream API, each byte a function of its
 * offset, size and round, the answer a different function, and checks
 * every byte on both sides.
 *
 *   ucp_check tag|stream [-p PORT] [-r ROUNDS] [SERVER]
 *
 * Without SERVER it is the server: it listens on TCP PORT (13500) for one
 * client.  The two exchange their UCP worker addresses over that TCP
 * connection, as ucx_perftest does; the transports and devices are UCX's
 * choice, set as usual (UCX_TLS, UCX_NET_DEVICES).  Prints one line,
 * "ucp_check API: ok, N messages, B bytes checked", and exits 0; prints
 * what went wrong and exits 1.  Build: gcc ucp_check.c -lucp -lucs.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include "pattern.h"

#define TIMEOUT_S	120
#define MAX_SIZE	(1 << 20)
#define TAG		0x6d726f6365ULL	/* "mroce" */

#define FAIL(...) do {							\
	fprintf(stderr, "ucp_check: line %d: ", __LINE__);		\
	fprintf(stderr, __VA_ARGS__);					\
	fprintf(stderr, "\n");						\
	exit(1);							\
} while (0)
#define CHECK(cond, ...) do { if (!(cond)) FAIL(__VA_ARGS__); } while (0)

static const size_t sizes[] = { 8, 100, 4095, 4096, 4097, 65536, 65537,
				MAX_SIZE };

struct peer {
	ucp_context_h ctx;
	ucp_worker_h worker;
	ucp_ep_h ep;
	int sock;
	int stream;
};

static void check(const unsigned char *b, size_t size, int round, int answer)
{
	long j = pattern_check(b, size, round, answer);

	CHECK(j < 0, "%zu-byte message of round %d: byte %ld is 0x%02x, not 0x%02x",
	      size, round, j, b[j], pattern(j, size, round, answer));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

enum wait_kind { W_OP, W_STREAM_RECV, W_TAG_RECV };

/*
 * Progress until req completes; its status (UCS_OK for NULL).  A receive
 * also gives the length it took.
 */
static ucs_status_t wait_req(struct peer *p, void *req, enum wait_kind kind,
			     size_t *length)
{
	double end = now_s() + TIMEOUT_S;
	ucp_tag_recv_info_t info;
	ucs_status_t st;

	if (!req)
		return UCS_OK;
	if (UCS_PTR_IS_ERR(req))
		return UCS_PTR_STATUS(req);
	for (;;) {
		if (kind == W_STREAM_RECV) {
			st = ucp_stream_recv_request_test(req, length);
		} else if (kind == W_TAG_RECV) {
			st = ucp_tag_recv_request_test(req, &info);
			*length = info.length;
		} else {
			st = ucp_request_check_status(req);
		}
		if (st != UCS_INPROGRESS)
			break;
		ucp_worker_progress(p->worker);
		if (now_s() > end) {
			ucp_request_cancel(p->worker, req);
			FAIL("no completion after %d s", TIMEOUT_S);
		}
	}
	ucp_request_free(req);
	return st;
}

static void send_msg(struct peer *p, const void *buf, size_t size)
{
	ucp_request_param_t prm = { .op_attr_mask = 0 };
	void *req;

	if (p->stream)
		req = ucp_stream_send_nbx(p->ep, buf, size, &prm);
	else
		req = ucp_tag_send_nbx(p->ep, buf, size, TAG, &prm);
	CHECK(wait_req(p, req, W_OP, NULL) == UCS_OK,
	      "send of %zu bytes failed", size);
}

static void recv_msg(struct peer *p, void *buf, size_t size)
{
	ucp_request_param_t prm = { .op_attr_mask = 0 };
	size_t got = size;
	ucs_status_t st;
	void *req;

	if (p->stream) {
		prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
		prm.flags = UCP_STREAM_RECV_FLAG_WAITALL;
		req = ucp_stream_recv_nbx(p->ep, buf, size, &got, &prm);
		st = wait_req(p, req, W_STREAM_RECV, &got);
	} else {
		req = ucp_tag_recv_nbx(p->worker, buf, size, TAG, ~0ULL, &prm);
		st = wait_req(p, req, W_TAG_RECV, &got);
	}
	CHECK(st == UCS_OK, "receive of %zu bytes failed: %s", size,
	      ucs_status_string(st));
	CHECK(got == size, "received %zu bytes, not %zu", got, size);
}

static void xfer(int sock, void *buf, size_t len, int out)
{
	unsigned char *b = buf;
	ssize_t n;

	while (len) {
		n = out ? write(sock, b, len) : read(sock, b, len);
		CHECK(n > 0, "out-of-band %s failed", out ? "write" : "read");
		b += n;
		len -= n;
	}
}

static int tcp_connect(const char *server, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	double end = now_s() + 60;
	int s, one = 1;

	CHECK(inet_pton(AF_INET, server, &a.sin_addr) == 1, "bad address %s",
	      server);
	for (;;) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		CHECK(s >= 0, "socket");
		if (!connect(s, (struct sockaddr *)&a, sizeof(a)))
			break;
		close(s);
		CHECK(now_s() < end, "no server at %s:%d", server, port);
		usleep(200000);
	}
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return s;
}

static int tcp_accept(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_ANY) };
	int l, s, one = 1;

	l = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(l >= 0, "socket");
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	CHECK(!bind(l, (struct sockaddr *)&a, sizeof(a)) && !listen(l, 1),
	      "cannot listen on port %d", port);
	s = accept(l, NULL, NULL);
	CHECK(s >= 0, "accept");
	close(l);
	return s;
}

/* UCP up, worker addresses exchanged over p->sock, endpoint to the peer. */
static void setup(struct peer *p)
{
	ucp_params_t params = {
		.field_mask = UCP_PARAM_FIELD_FEATURES,
		.features = p->stream ? UCP_FEATURE_STREAM : UCP_FEATURE_TAG,
	};
	ucp_worker_params_t wp = {
		.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
		.thread_mode = UCS_THREAD_MODE_SINGLE,
	};
	ucp_ep_params_t ep = { .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS };
	ucp_address_t *mine;
	size_t len, plen;
	ucp_config_t *cfg;
	uint64_t n;
	void *theirs;

	CHECK(ucp_config_read(NULL, NULL, &cfg) == UCS_OK, "ucp_config_read");
	CHECK(ucp_init(&params, cfg, &p->ctx) == UCS_OK, "ucp_init");
	ucp_config_release(cfg);
	CHECK(ucp_worker_create(p->ctx, &wp, &p->worker) == UCS_OK,
	      "ucp_worker_create");
	CHECK(ucp_worker_get_address(p->worker, &mine, &len) == UCS_OK,
	      "ucp_worker_get_address");
	n = len;
	xfer(p->sock, &n, sizeof(n), 1);
	xfer(p->sock, mine, len, 1);
	xfer(p->sock, &n, sizeof(n), 0);
	CHECK(n && n < (1 << 20), "peer address of %llu bytes",
	      (unsigned long long)n);
	plen = n;
	theirs = malloc(plen);
	CHECK(theirs, "malloc");
	xfer(p->sock, theirs, plen, 0);
	ucp_worker_release_address(p->worker, mine);
	ep.address = theirs;
	CHECK(ucp_ep_create(p->worker, &ep, &p->ep) == UCS_OK, "ucp_ep_create");
	free(theirs);
}

/*
 * The last message arrived whole, so nothing is in flight either way: once
 * both sides say so over the TCP connection, the endpoint closes (forced:
 * no flush handshake with a peer that may already be gone) and UCP goes.
 */
static void teardown(struct peer *p)
{
	ucp_request_param_t prm = { .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
				    .flags = UCP_EP_CLOSE_FLAG_FORCE };
	char c = 0;

	xfer(p->sock, &c, 1, 1);
	xfer(p->sock, &c, 1, 0);
	wait_req(p, ucp_ep_close_nbx(p->ep, &prm), W_OP, NULL);
	ucp_worker_destroy(p->worker);
	ucp_cleanup(p->ctx);
	close(p->sock);
}

int main(int argc, char **argv)
{
	struct peer p = { 0 };
	const char *server = NULL;
	int port = 13500, rounds = 10, opt, r;
	unsigned long long msgs = 0, bytes = 0;
	unsigned char *buf;

	if (argc < 2 || (strcmp(argv[1], "tag") && strcmp(argv[1], "stream"))) {
		fprintf(stderr, "usage: ucp_check tag|stream [-p PORT] [-r ROUNDS] [SERVER]\n");
		return 2;
	}
	p.stream = !strcmp(argv[1], "stream");
	optind = 2;
	while ((opt = getopt(argc, argv, "p:r:")) != -1) {
		if (opt == 'p')
			port = atoi(optarg);
		else if (opt == 'r')
			rounds = atoi(optarg);
		else
			return 2;
	}
	if (optind < argc)
		server = argv[optind];
	buf = malloc(MAX_SIZE);
	CHECK(buf, "malloc");
	p.sock = server ? tcp_connect(server, port) : tcp_accept(port);
	setup(&p);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (r = 0; r < rounds; r++) {
			size_t sz = sizes[i];

			if (server) {
				pattern_fill(buf, sz, r, 0);
				send_msg(&p, buf, sz);
				memset(buf, 0, sz);
				recv_msg(&p, buf, sz);
				check(buf, sz, r, 1);
			} else {
				memset(buf, 0, sz);
				recv_msg(&p, buf, sz);
				check(buf, sz, r, 0);
				pattern_fill(buf, sz, r, 1);
				send_msg(&p, buf, sz);
			}
			msgs += 2;
			bytes += 2 * sz;
		}
	}
	teardown(&p);
	printf("ucp_check %s: ok, %llu messages, %llu bytes checked\n",
	       argv[1], msgs, bytes);
	free(buf);
	return 0;
}
